"""rextio-torch certification checks, run by `cargo xtask certify` on the built project.

For every function of the certification module: native route, parity with eager on random
and special values (values, NaN/inf masks, signed zero, dtype, shape), the grad contract,
input non-mutation, output lifetime, boundary rejects with their exact messages, and
matching exceptions on incompatible shapes. Writes one JSON result per function, keyed by its
qualified name (`module.function`). Exit status: 0 when every function passed, 1 when some
failed (the result file says which), anything else when the checker itself broke.

usage: check.py RESULT_JSON PROJECT_SRC [MODULE [SKIP,SKIP...]]
(MODULE defaults to the certification module `rxcert.kernels`; SKIP names functions that are
expected to stay on Python and are not checked.)
"""

import inspect
import os
import sys

import rextio_certify  # the host's shared checker driver, on PYTHONPATH
import torch

RTOL, ATOL = 1e-5, 1e-6
SPECIALS = [float("-inf"), -3.0, -1.0, -0.0, 0.0, 1.0, 3.0, float("inf"), float("nan")]
INTS = [0, 1, 3, -2]
FLOATS = [0.5, -2.0, 0.0]
N = 4


def kind(annotation):
    name = getattr(annotation, "__name__", str(annotation))
    return {"TensorF32Cpu2D": "M", "TensorF32Cpu1D": "V", "TensorI64Cpu1D": "L", "TensorBoolCpu2D": "BM", "TensorBoolCpu1D": "BV", "int": "int", "float": "float", "bool": "bool"}[name]


TENSOR_KINDS = ("M", "V", "BM", "BV")
RANK = {"M": 2, "V": 1, "BM": 2, "BV": 1}


def random_inputs(kinds, seed, n=N):
    g = torch.Generator().manual_seed(seed)
    out = []
    for k in kinds:
        if k == "M":
            out.append(torch.randn(n, n, generator=g))
        elif k == "V":
            out.append(torch.randn(n, generator=g))
        elif k == "BM":
            out.append(torch.randn(n, n, generator=g) > 0)
        elif k == "BV":
            out.append(torch.randn(n, generator=g) > 0)
        else:
            out.append(None)
    return out


def special_inputs(kinds):
    """Special values for functions whose parameters are all tensors of one rank."""
    values = rextio_certify.special_values(kinds, SPECIALS)
    return None if values is None else [torch.tensor(v) for v in values]


def tensors_of(value):
    """The tensors in a result (a tensor, or a tuple of results)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, tuple):
        return [t for v in value for t in tensors_of(v)]
    return []


def compare(native, eager):
    """None when equal in the certified sense, else a reason. Tuples (including eager's named
    tuples and torch.Size) compare element by element; ints must be exact Python ints."""
    if isinstance(eager, tuple):
        if not isinstance(native, tuple) or len(native) != len(eager):
            return f"native returned {type(native).__name__} of length {len(native) if isinstance(native, tuple) else '-'}, eager a tuple of {len(eager)}"
        for i, (n, e) in enumerate(zip(native, eager)):
            why = compare(n, e)
            if why:
                return f"element {i}: {why}"
        return None
    if isinstance(eager, int) and not isinstance(eager, bool):
        if type(native) is not int:
            return f"native returned {type(native).__name__}, eager int"
        return None if native == eager else f"ints differ: {native} vs {eager}"
    if not isinstance(native, torch.Tensor):
        return f"native returned {type(native).__name__}"
    if native.dtype != eager.dtype or native.shape != eager.shape or native.device != eager.device:
        return f"dtype/shape/device {native.dtype}/{tuple(native.shape)}/{native.device} vs {eager.dtype}/{tuple(eager.shape)}/{eager.device}"
    if native.requires_grad:
        return "native output requires grad"
    if not eager.is_floating_point():
        return None if torch.equal(native, eager) else "integer values differ"
    return rextio_certify.compare_floats(native.flatten().tolist(), eager.flatten().tolist(), RTOL, ATOL)


def check_function(name, native, eager, kinds, qualname):
    rec = rextio_certify.Record()
    fail, count, counts = rec.fail, rec.count, rec.counts
    outcome = rextio_certify.outcome

    if type(native).__name__ != "builtin_function_or_method":
        return {"passed": False, "counts": {}, "failures": ["function is not native"]}
    tensor_idx = [i for i, k in enumerate(kinds) if k in TENSOR_KINDS]
    cases = [rextio_certify.merge(random_inputs(kinds, seed), sc) for seed in range(3) for sc in rextio_certify.scalar_combos(kinds, INTS, FLOATS)]
    special = special_inputs(kinds)
    if special is not None:
        cases.append(special)
        counts["special_values"] = 1

    def parity(args, where=""):
        e_kind, e_val = outcome(eager, [a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        n_kind, n_val = outcome(native, args)
        count("parity")
        if e_kind != n_kind:
            fail(f"eager {e_kind} {e_val if e_kind == 'raise' else ''} vs native {n_kind} {n_val if n_kind == 'raise' else ''} for scalars {[a for a in args if not isinstance(a, torch.Tensor)]}{where}")
        elif e_kind == "raise" and type(e_val) is not type(n_val):
            fail(f"eager raised {type(e_val).__name__}, native {type(n_val).__name__}{where}")
        elif e_kind == "ok":
            why = compare(n_val, e_val)
            if why:
                fail(f"parity: {why} (scalars {[a for a in args if not isinstance(a, torch.Tensor)]}){where}")

    for args in cases:
        parity(args)
    if special is not None and torch.backends.mkldnn.is_available():
        # Eager takes another path for some ops with oneDNN switched off (see the runtime's
        # eager_host evidence): native must follow it within the same process.
        with torch.backends.mkldnn.flags(enabled=False):
            parity(special, " with oneDNN off")
        counts["special_values_onednn_off"] = 1
    base = cases[0]
    # Grad contract.
    grad_args = [a.clone().requires_grad_() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in base]
    kind_, val = outcome(native, grad_args)
    if kind_ == "ok":
        if any(t.requires_grad or t.grad_fn is not None for t in tensors_of(val)):
            fail("output requires grad")
        if not torch.is_grad_enabled():
            fail("grad mode not restored")
        with torch.no_grad():
            native(*base)
            if torch.is_grad_enabled():
                fail("grad mode changed under no_grad")
        count("grad")
    # Non-mutation.
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in base]
    copies = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    versions = [a._version if isinstance(a, torch.Tensor) else None for a in args]
    outcome(native, args)
    for a, c, v in zip(args, copies, versions):
        if isinstance(a, torch.Tensor) and (not torch.equal(torch.nan_to_num(a), torch.nan_to_num(c)) or a._version != v):
            fail("an input was mutated")
    count("non_mutation")
    # Output lifetime.
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in base]
    e_kind, expected = outcome(eager, [a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    if e_kind == "ok":
        rextio_certify.check_lifetime(rec, native, args, expected, compare)
    # Boundary rejects on the first tensor parameter.
    if tensor_idx:
        i = tensor_idx[0]
        rank = RANK[kinds[i]]
        is_bool = kinds[i] in ("BM", "BV")

        pname = list(inspect.signature(eager).parameters)[i]

        def expect(exc, message, value, given):
            rextio_certify.expect_boundary(rec, native, base, i, pname, qualname, exc, message, value, given)

        expect(TypeError, "rextio-torch: expected a torch.Tensor", [[1.0]], "a list")
        if is_bool:
            expect(ValueError, "rextio-torch: expected a bool tensor", base[i].float(), f"a rank-{rank} torch.float32 Tensor")
        else:
            expect(ValueError, "rextio-torch: expected a float32 tensor", base[i].double(), f"a rank-{rank} torch.float64 Tensor")
        expect(ValueError, f"rextio-torch: expected rank-{rank} tensor, got rank {3 - rank}", base[i].reshape(-1) if rank == 2 else base[i].reshape(1, -1), f"a rank-{3 - rank} torch.")
        count("boundary")
        # Incompatible shapes: same exception type as eager, or the same result.
        args = list(base)
        args[i] = torch.randn(N, N + 1) if rank == 2 else torch.randn(N + 1)
        if is_bool:
            args[i] = args[i] > 0
        e_kind, e_val = outcome(eager, args)
        n_kind, n_val = outcome(native, args)
        if e_kind != n_kind or (e_kind == "raise" and type(e_val) is not type(n_val)):
            fail(f"incompatible shapes: eager {e_kind} {e_val if e_kind == 'raise' else ''}, native {n_kind} {n_val if n_kind == 'raise' else ''}")
        elif e_kind == "ok" and compare(n_val, e_val):
            fail(f"incompatible shapes: {compare(n_val, e_val)}")
        count("shape_errors")
    # A scalar of the wrong type: the conversion's own message, then where and what.
    rextio_certify.check_scalar_boundary(rec, native, eager, base, kinds, qualname)
    return rec.result()


def eager_host():
    """What eager does on this host where its answers depend on the host: the CPU capability
    ATen dispatches to, whether oneDNN is there, and exact GELU's answers on the inputs eager's
    paths disagree on, on each path (oneDNN for a contiguous tensor of more than one element,
    torch's own kernel for one element or with oneDNN off). Native GELU follows the path eager
    takes; this records what that path answered here."""
    disputed = [-0.0, -9.76, float("inf"), float("-inf")]
    as_text = lambda t: [repr(v) for v in t.tolist()]  # noqa: E731
    gelu = {"own_kernel": as_text(torch.cat([torch.nn.functional.gelu(torch.tensor([v])) for v in disputed]))}
    if torch.backends.mkldnn.is_available():
        gelu["onednn"] = as_text(torch.nn.functional.gelu(torch.tensor(disputed * 8))[: len(disputed)])
        with torch.backends.mkldnn.flags(enabled=False):
            gelu["onednn_off"] = as_text(torch.nn.functional.gelu(torch.tensor(disputed * 8))[: len(disputed)])
    return {
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "onednn": torch.backends.mkldnn.is_available(),
        "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA", ""),
        "gelu_inputs": [repr(v) for v in disputed],
        "gelu": gelu,
    }


def runtime():
    return {"torch": torch.__version__, "python": sys.version.split()[0], "tch": "=0.26.0", "eager_host": eager_host()}


if __name__ == "__main__":
    torch.set_num_threads(1)
    rextio_certify.run(check_function, kind, runtime, "rxcert.kernels")
