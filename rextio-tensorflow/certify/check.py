"""rextio-tensorflow certification checks, run by `cargo xtask certify` on the built project.

For every function of the certification module: native route (a builtin, not the Python body),
parity with eager TensorFlow on random and special values (values, NaN/inf masks, signed zero,
dtype, shape, device CPU:0), repeated calls, input non-mutation, output lifetime, no gradient-
tape recording, boundary rejects with their exact messages, and TensorFlow errors on
incompatible shapes surfacing as `rextio-tensorflow:` exceptions with the same status code.
Writes one JSON result per function, keyed by its qualified name (`module.function`). Exit
status: 0 when every function passed, 1 when some failed (the result file says which), anything
else when the checker itself broke.

usage: check.py RESULT_JSON PROJECT_SRC [MODULE [SKIP,SKIP...]]
(MODULE defaults to the certification module `rxtfcert.kernels`; SKIP names functions that are
expected to stay on Python and are not checked.)

With REXTIO_CERTIFY_SELF_TEST=1 the "native" module is the eager source itself: every eager
comparison runs, the route and boundary checks are reported as skipped. This checks the checker
and the kernels without a native build.
"""

import importlib
import inspect
import os
import platform
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import rextio_certify  # noqa: E402 - the host's shared checker driver, on PYTHONPATH
import tensorflow as tf  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

RTOL, ATOL = 1e-5, 1e-6
SPECIALS = [float("-inf"), -3.0, -1.0, -0.0, 0.0, 1.0, 3.0, float("inf"), float("nan")]
INTS = [0, 1, 3, -2]
FLOATS = [0.5, -2.0, 0.0]
N = 4
REPEATS = 20
PREFIX = "rextio-tensorflow: "
SELF_TEST = os.environ.get("REXTIO_CERTIFY_SELF_TEST") == "1"
CODE_NAMES = {
    1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED", 5: "NOT_FOUND",
    6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION",
    10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED", 13: "INTERNAL", 14: "UNAVAILABLE",
    15: "DATA_LOSS", 16: "UNAUTHENTICATED",
}


def kind(annotation):
    name = getattr(annotation, "__name__", str(annotation))
    return {"TensorF32Cpu2D": "M", "TensorF32Cpu1D": "V", "TensorI64Cpu1D": "L", "int": "int", "float": "float", "bool": "bool"}[name]


def is_tensor(v):
    return isinstance(v, tf.Tensor)


def random_inputs(kinds, seed, n=N):
    rng = np.random.default_rng(seed)
    out = []
    for k in kinds:
        if k == "M":
            out.append(tf.constant(rng.standard_normal((n, n)).astype(np.float32)))
        elif k == "V":
            out.append(tf.constant(rng.standard_normal(n).astype(np.float32)))
        elif k == "L":
            out.append(tf.constant(rng.integers(-5, 5, size=n), dtype=tf.int64))
        else:
            out.append(None)
    return out


def special_inputs(kinds):
    """Special values for functions whose parameters are all float tensors of one rank."""
    values = rextio_certify.special_values(kinds, SPECIALS)
    return None if values is None else [tf.constant(np.array(v, dtype=np.float32)) for v in values]


def copy(v):
    """An independent EagerTensor with the same contents (never the same object)."""
    return tf.constant(v.numpy()) if is_tensor(v) else v


def compare(native, eager):
    """None when equal in the certified sense, else a reason."""
    if not is_tensor(native):
        return f"native returned {type(native).__name__}"
    if type(native) is not type(eager):
        return f"native returned {type(native).__name__}, eager {type(eager).__name__}"
    if native.dtype != eager.dtype or native.shape != eager.shape or native.device != eager.device:
        return f"dtype/shape/device {native.dtype.name}/{native.shape}/{native.device} vs {eager.dtype.name}/{eager.shape}/{eager.device}"
    if not native.device.endswith("/device:CPU:0"):
        return f"native output on {native.device}, expected CPU:0"
    a, b = native.numpy(), eager.numpy()
    if not eager.dtype.is_floating:
        return None if np.array_equal(a, b) else "integer values differ"
    return rextio_certify.compare_floats(a.ravel().tolist(), b.ravel().tolist(), RTOL, ATOL)


def same_failure(eager_exc, native_exc):
    """None when the native exception is the fail-closed image of the eager one, else why."""
    if SELF_TEST:
        return None if type(eager_exc) is type(native_exc) else f"{type(eager_exc).__name__} vs {type(native_exc).__name__}"
    text = str(native_exc)
    if not text.startswith(PREFIX):
        return f"native raised {type(native_exc).__name__} without the {PREFIX!r} prefix: {text[:200]}"
    if isinstance(eager_exc, tf.errors.OpError):
        code = CODE_NAMES.get(eager_exc.error_code, "UNKNOWN_CODE")
        if not isinstance(native_exc, RuntimeError) or f"({code})" not in text:
            return f"eager raised {code}, native {type(native_exc).__name__}: {text[:200]}"
    return None


def numpy_of(args):
    return [a.numpy().copy() if is_tensor(a) else None for a in args]


def check_function(name, native, eager, kinds, qualname):
    rec = rextio_certify.Record()
    fail, count, counts, skipped = rec.fail, rec.count, rec.counts, rec.skipped
    outcome, describe = rextio_certify.outcome, rextio_certify.describe

    if SELF_TEST:
        skipped.append("route")
    elif type(native).__name__ != "builtin_function_or_method":
        return {"passed": False, "counts": {}, "failures": ["function is not native"]}
    else:
        count("route")
    tensor_idx = [i for i, k in enumerate(kinds) if k in ("M", "V", "L")]
    cases = [rextio_certify.merge(random_inputs(kinds, seed), sc) for seed in range(3) for sc in rextio_certify.scalar_combos(kinds, INTS, FLOATS)]
    special = special_inputs(kinds)
    if special is not None:
        cases.append(special)
        counts["special_values"] = 1
    for args in cases:
        e_kind, e_val = outcome(eager, [copy(a) for a in args])
        n_kind, n_val = outcome(native, args)
        count("parity")
        scalars = [a for a in args if not is_tensor(a)]
        if e_kind != n_kind:
            fail(f"eager {e_kind} vs native {n_kind} ({describe(e_val) if e_kind == 'raise' else describe(n_val)}) for scalars {scalars}")
        elif e_kind == "raise":
            why = same_failure(e_val, n_val)
            if why:
                fail(f"errors differ: {why}")
        else:
            why = compare(n_val, e_val)
            if why:
                fail(f"parity: {why} (scalars {scalars})")
    base = cases[0]
    e_kind, expected = outcome(eager, [copy(a) for a in base])
    if e_kind == "ok":
        # Repeated calls on the same inputs give the same result every time.
        outs = [outcome(native, base) for _ in range(REPEATS)]
        bad = [compare(v, expected) if k == "ok" else describe(v) for k, v in outs]
        bad = [b for b in bad if b]
        if bad:
            fail(f"repeated calls: {bad[0]}")
        count("repeated")
        # No gradient-tape recording (inference only).
        args = [copy(a) for a in base]
        watched = [a for a in args if is_tensor(a) and a.dtype.is_floating]
        with tf.GradientTape(persistent=True) as tape:
            for a in watched:
                tape.watch(a)
            kind_, val = outcome(native, args)
        if kind_ == "ok" and val.dtype.is_floating and watched:
            grads = tape.gradient(val, watched)
            if any(g is not None for g in grads) and not SELF_TEST:
                fail("native output is recorded on a GradientTape")
            count("tape")
        del tape
    # Non-mutation.
    args = [copy(a) for a in base]
    before = numpy_of(args)
    outcome(native, args)
    for a, b in zip(args, before):
        if is_tensor(a) and not np.array_equal(a.numpy(), b, equal_nan=a.dtype.is_floating):
            fail("an input was mutated")
    count("non_mutation")
    # Output lifetime: the result outlives its inputs.
    if e_kind == "ok":
        rextio_certify.check_lifetime(rec, native, [copy(a) for a in base], expected, compare)
    # Boundary rejects on the first tensor parameter, with the boundary's exact messages.
    if tensor_idx and SELF_TEST:
        skipped.append("boundary")
    elif tensor_idx:
        i = tensor_idx[0]
        k = kinds[i]
        rank = 2 if k == "M" else 1

        pname = list(inspect.signature(eager).parameters)[i]

        def expect(exc, message, value, given):
            rextio_certify.expect_boundary(rec, native, base, i, pname, qualname, exc, message, value, given)

        eager_type = PREFIX + "expected a TensorFlow EagerTensor"
        expect(TypeError, eager_type, [[1.0]], "a list")
        expect(TypeError, eager_type, base[i].numpy(), f"a rank-{rank} {'int64' if k == 'L' else 'float32'} ndarray")
        expect(TypeError, eager_type, tf.Variable(base[i]), "Variable")
        if k == "L":
            expect(ValueError, PREFIX + "expected an int64 tensor", tf.cast(base[i], tf.int32), f"a rank-{rank} int32 EagerTensor")
            expect(ValueError, PREFIX + "expected an int64 tensor", tf.cast(base[i], tf.float32), f"a rank-{rank} float32 EagerTensor")
        else:
            expect(ValueError, PREFIX + "expected a float32 tensor", tf.cast(base[i], tf.float64), f"a rank-{rank} float64 EagerTensor")
            expect(ValueError, PREFIX + "expected a float32 tensor", tf.cast(base[i], tf.int64), f"a rank-{rank} int64 EagerTensor")
        wrong = tf.reshape(base[i], [-1]) if rank == 2 else tf.reshape(base[i], [1, -1])
        expect(ValueError, PREFIX + f"expected rank-{rank} tensor, got rank {3 - rank}", wrong, f"a rank-{3 - rank} ")
        expect(ValueError, PREFIX + f"expected rank-{rank} tensor, got rank 0", base[i][0, 0] if rank == 2 else base[i][0], "a rank-0 ")
        count("boundary")
    # A scalar of the wrong type: the conversion's own message, then where and what.
    if not SELF_TEST:
        rextio_certify.check_scalar_boundary(rec, native, eager, base, kinds, qualname)
    if tensor_idx:
        i = tensor_idx[0]
        rank = 2 if kinds[i] == "M" else 1
        # Incompatible shapes: the same outcome as eager (fail-closed with the same status code).
        if kinds[i] in ("M", "V"):
            args = list(base)
            rng = np.random.default_rng(99)
            args[i] = tf.constant(rng.standard_normal((N, N + 1) if rank == 2 else N + 1).astype(np.float32))
            e_kind, e_val = outcome(eager, [copy(a) for a in args])
            n_kind, n_val = outcome(native, args)
            if e_kind != n_kind:
                fail(f"incompatible shapes: eager {e_kind} vs native {n_kind} ({describe(e_val) if e_kind == 'raise' else describe(n_val)})")
            elif e_kind == "raise":
                why = same_failure(e_val, n_val)
                if why:
                    fail(f"incompatible shapes: {why}")
            elif compare(n_val, e_val):
                fail(f"incompatible shapes: {compare(n_val, e_val)}")
            count("shape_errors")
    return rec.result()


def runtime():
    return {
        "tensorflow": tf.__version__,
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "machine": platform.machine(),
        "numpy": np.__version__,
        "self_test": SELF_TEST,
    }


def native(module, eager_mod):
    return eager_mod if SELF_TEST else importlib.import_module(module)


if __name__ == "__main__":
    rextio_certify.run(check_function, kind, runtime, "rxtfcert.kernels", native)
