"""Drive rxtf_check (the runtime test extension) against eager TensorFlow 2.21.0.

Run by tests/tf_runtime.rs with the extension's directory on PYTHONPATH. Exits 0 when every
check passed; prints one line per check.
"""

import gc
import os
import subprocess
import sys
import weakref

import numpy as np
import tensorflow as tf

import rxtf_check as rx

FAILED = []


def check(name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - report every failure, keep going
        FAILED.append(name)
        print(f"FAIL {name}: {type(e).__name__}: {e}")
    else:
        print(f"ok   {name}")


def same(native, eager):
    assert type(native) is type(eager), (type(native), type(eager))
    assert native.dtype == eager.dtype, (native.dtype, eager.dtype)
    assert native.shape == eager.shape, (native.shape, eager.shape)
    assert native.device == eager.device, (native.device, eager.device)
    a, b = native.numpy(), eager.numpy()
    np.testing.assert_array_equal(a, b)  # NaN positions must match too
    if a.dtype.kind == "f":
        assert (np.signbit(a) == np.signbit(b)).all(), "signed zeros differ"


def raises(exc, text, fn):
    try:
        fn()
    except exc as e:
        assert text in str(e), f"{text!r} not in {str(e)!r}"
        return
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"expected {exc.__name__}({text!r}), got {type(e).__name__}: {e}")
    raise AssertionError(f"expected {exc.__name__}({text!r}), nothing raised")


rng = np.random.default_rng(0)
special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, -1.5], dtype=np.float32)
x2n = rng.standard_normal((6, 5)).astype(np.float32) * 3
x2n.flat[: special.size] = special
X2 = tf.constant(x2n)
X1 = tf.constant(np.concatenate([special[:3], rng.standard_normal(2).astype(np.float32)]))
Y2 = tf.constant(rng.standard_normal((6, 5)).astype(np.float32))
Y1 = tf.constant(rng.standard_normal(5).astype(np.float32))
F2 = tf.constant(rng.standard_normal((6, 5)).astype(np.float32))  # finite, for argmax
W = tf.constant(rng.standard_normal((5, 4)).astype(np.float32))
B = tf.constant(rng.standard_normal(4).astype(np.float32))
R1 = tf.constant(rng.standard_normal((1, 5)).astype(np.float32))

UNARY = {
    "relu": tf.nn.relu,
    "sigmoid": tf.nn.sigmoid,
    "tanh": tf.nn.tanh,
    "abs": tf.abs,
    "negative": tf.negative,
    "square": tf.square,
    "exp": tf.exp,
    "log": tf.math.log,
    "sqrt": tf.math.sqrt,
}
for op, ref in UNARY.items():
    for rank, x in ((2, X2), (1, X1)):
        check(f"{op} rank {rank}", lambda op=op, ref=ref, rank=rank, x=x: same(rx.unary(op, x, rank), ref(x)))

check("softmax rank 1 (default axis)", lambda: same(rx.unary("softmax_axis0", Y1, 1), tf.nn.softmax(Y1)))
check("softmax rank 2 axis=1", lambda: same(rx.unary("softmax_axis1", X2, 2), tf.nn.softmax(X2, axis=1)))
check("transpose", lambda: same(rx.unary("transpose", X2, 2), tf.transpose(X2)))
for red, ref in (("reduce_mean", tf.reduce_mean), ("reduce_sum", tf.reduce_sum)):
    for axis in (0, 1):
        for keep in (False, True):
            name = f"{red}_axis{axis}" + ("_keepdims" if keep else "")
            check(name, lambda name=name, ref=ref, axis=axis, keep=keep: same(rx.unary(name, X2, 2), ref(X2, axis=axis, keepdims=keep)))
for axis in (0, 1):
    check(f"argmax axis {axis}", lambda axis=axis: same(rx.unary(f"argmax_axis{axis}", F2, 2), tf.argmax(F2, axis=axis)))

BINARY = {"add": tf.add, "sub": tf.subtract, "mul": tf.multiply, "div": tf.divide}
PAIRS = ((X2, 2, Y2, 2), (X1, 1, Y1, 1), (X2, 2, Y1, 1), (Y1, 1, X2, 2))
for op, ref in BINARY.items():
    for a, ra, b, rb in PAIRS:
        check(f"{op} {ra}/{rb}", lambda op=op, ref=ref, a=a, ra=ra, b=b, rb=rb: same(rx.binary(op, a, ra, b, rb), ref(a, b)))
check("operator / matches tf.divide", lambda: same(rx.binary("div", X2, 2, Y1, 1), X2 / Y1))
for op, ref in (("maximum", tf.maximum), ("minimum", tf.minimum)):
    check(f"{op} 2/2", lambda op=op, ref=ref: same(rx.binary(op, X2, 2, Y2, 2), ref(X2, Y2)))
    check(f"{op} 1/1", lambda op=op, ref=ref: same(rx.binary(op, X1, 1, Y1, 1), ref(X1, Y1)))
    check(f"{op} same-rank broadcast", lambda op=op, ref=ref: same(rx.binary(op, X2, 2, R1, 2), ref(X2, R1)))
check("matmul", lambda: same(rx.binary("matmul", Y2, 2, W, 2), tf.matmul(Y2, W)))
check("bias_add", lambda: same(rx.binary("bias_add", Y2, 2, Y1, 1), tf.nn.bias_add(Y2, Y1)))


def scoring_ref(x, w, b, rounds):
    h = tf.nn.bias_add(tf.matmul(x, w), b)
    for i in range(rounds):
        h = tf.nn.relu(h) if i % 2 == 0 else tf.nn.tanh(h)
        h = h + b
    p = tf.nn.softmax(h, axis=1)
    return p, tf.argmax(p, axis=1)


def scoring():
    for batch in (1, 16, 128):
        x = tf.constant(rng.standard_normal((batch, 5)).astype(np.float32))
        p, labels = rx.scoring(x, W, B, 4)
        rp, rl = scoring_ref(x, W, B, 4)
        same(p, rp)
        same(labels, rl)


check("scoring chain (resident intermediates)", scoring)
check("int64 boundary round trip", lambda: same(rx.echo_i64(tf.argmax(F2, axis=1)), tf.argmax(F2, axis=1)))


def twice():
    a, b = rx.twice(X2)
    same(a, tf.nn.relu(X2))
    same(b, tf.nn.relu(X2))


check("shared owner materialized twice", twice)

# --- boundary rejections: the boundary's messages ---
check("float64 rejected", lambda: raises(ValueError, "rextio-tensorflow: expected a float32 tensor", lambda: rx.unary("relu", tf.constant([[1.0]], dtype=tf.float64), 2)))
check("rank-1 at a rank-2 boundary", lambda: raises(ValueError, "rextio-tensorflow: expected rank-2 tensor, got rank 1", lambda: rx.unary("relu", Y1, 2)))
check("rank-2 at a rank-1 boundary", lambda: raises(ValueError, "rextio-tensorflow: expected rank-1 tensor, got rank 2", lambda: rx.unary("relu", X2, 1)))
check("tf.Variable rejected", lambda: raises(TypeError, "rextio-tensorflow: expected a TensorFlow EagerTensor", lambda: rx.unary("relu", tf.Variable(x2n), 2)))
check("numpy rejected", lambda: raises(TypeError, "rextio-tensorflow: expected a TensorFlow EagerTensor", lambda: rx.unary("relu", x2n, 2)))
check("python list rejected", lambda: raises(TypeError, "rextio-tensorflow: expected a TensorFlow EagerTensor", lambda: rx.unary("relu", [[1.0]], 2)))
check("int32 at the int64 boundary", lambda: raises(ValueError, "rextio-tensorflow: expected an int64 tensor", lambda: rx.echo_i64(tf.constant([1, 2], dtype=tf.int32))))
check("float at the int64 boundary", lambda: raises(ValueError, "rextio-tensorflow: expected an int64 tensor", lambda: rx.echo_i64(Y1)))

# --- TensorFlow errors become Python exceptions ---
check("matmul shape error", lambda: raises(RuntimeError, "rextio-tensorflow: MatMul failed (INVALID_ARGUMENT)", lambda: rx.binary("matmul", X2, 2, X2, 2)))
check("bias_add shape error", lambda: raises(RuntimeError, "rextio-tensorflow: BiasAdd failed", lambda: rx.binary("bias_add", X2, 2, B, 1)))
check("add broadcast error", lambda: raises(RuntimeError, "rextio-tensorflow: AddV2 failed", lambda: rx.binary("add", X2, 2, B, 1)))
check("maximum broadcast error", lambda: raises(RuntimeError, "rextio-tensorflow: Maximum failed", lambda: rx.binary("maximum", X2, 2, tf.zeros((2, 5)), 2)))


def non_mutation():
    before = [t.numpy().copy() for t in (X2, Y2, Y1)]
    rx.binary("add", X2, 2, Y1, 1)
    rx.unary("relu", X2, 2)
    rx.scoring(Y2, W, B, 3)
    for t, b in zip((X2, Y2, Y1), before):
        np.testing.assert_array_equal(t.numpy(), b)


check("inputs are never mutated", non_mutation)


def lifetime():
    x = tf.constant(rng.standard_normal((3, 5)).astype(np.float32))
    want = tf.nn.relu(x).numpy()
    r = rx.unary("relu", x, 2)
    del x
    gc.collect()
    np.testing.assert_array_equal(r.numpy(), want)
    # Results are independent EagerTensors that work in eager ops.
    same(r + 1.0, tf.constant(want) + 1.0)


check("outputs outlive inputs", lifetime)


def gradient_tape():
    x = tf.constant(x2n)
    with tf.GradientTape() as g:
        g.watch(x)
        y = rx.unary("relu", x, 2)
    assert g.gradient(y, x) is None  # native ops are never recorded (inference only)


check("no tape recording", gradient_tape)


def one_tensorflow():
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libtensorflow_cc.so" in line}
    assert len(paths) == 1, paths
    root, profile, loaded = rx.info()
    assert loaded and profile in ("linux-x86_64", "linux-aarch64"), (root, profile, loaded)
    assert os.path.realpath(os.path.dirname(tf.__file__)) == root, (root, tf.__file__)
    assert paths.pop().startswith(root), "the mapped TensorFlow is not the imported wheel"


check("exactly one TensorFlow is mapped: the imported wheel's", one_tensorflow)


def no_leak():
    import resource

    x = tf.constant(rng.standard_normal((32, 32)).astype(np.float32))
    for _ in range(2000):
        rx.binary("matmul", x, 2, x, 2)
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(20000):
        rx.binary("matmul", x, 2, x, 2)
        rx.scoring(x[:, :5], W, B, 2)
    gc.collect()
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 50_000, f"max RSS grew by {grown_kb} KiB over 40000 calls"


check("no handle leak over 40000 calls", no_leak)


def tracked_input(shape):
    """A float32 CPU input whose buffer is a numpy array's (shared through DLPack, checked), and a
    weak reference to that array: it lives exactly as long as some tensor handle still references
    the buffer, whatever the allocator then does with the memory (TensorFlow's keeps freed large
    buffers resident on some hosts, so resident size says nothing about references)."""
    n = int(np.prod(shape))
    buf = np.empty(n + 16, np.float32)
    off = (-buf.ctypes.data % 64) // 4
    a = buf[off : off + n].reshape(shape)
    a[...] = rng.standard_normal(shape).astype(np.float32)
    x = tf.experimental.dlpack.from_dlpack(a.__dlpack__())
    assert x.device.endswith("CPU:0"), x.device
    a.flat[0] = 1234.5
    assert float(tf.reshape(x, [-1])[0]) == 1234.5, "DLPack copied the buffer: nothing to observe"
    return x, weakref.ref(a)


def released(call, shape):
    x, alive = tracked_input(shape)
    call(x)
    del x
    gc.collect()
    return alive() is None


KEPT = []


def inputs_released():
    for name, call in (
        ("after an op", lambda x: rx.unary("relu", x, 2)),
        ("after a failed op", lambda x: raises(RuntimeError, "MatMul failed", lambda: rx.binary("matmul", x, 2, X2, 2))),
        ("after a pipeline", lambda x: rx.scoring(x, tf.ones((2048, 2)), tf.ones(2), 3)),
    ):
        assert released(lambda x: None, (64, 2048)), f"{name}: the input outlives a call that does nothing"
        assert released(call, (64, 2048)), f"{name}: the input's buffer is still referenced after the call returned and the caller dropped it"
    # The observation sees references no Python object shows: one more handle on the buffer (what
    # a runtime that kept an input's TFE handle would hold) keeps it alive, and is reported.
    leaky = lambda x: (KEPT.append(tf.identity(x)), rx.unary("relu", x, 2))  # noqa: E731
    assert not released(leaky, (64, 2048)), "a handle kept on the input's buffer went unnoticed"
    KEPT.clear()


check("no input is kept alive after a call returns", inputs_released)


def subprocess_case(code, expect_ok, text):
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    out = r.stdout + r.stderr
    if expect_ok:
        assert r.returncode == 0, out[-2000:]
    else:
        assert r.returncode != 0, out[-2000:]
    assert text in out, out[-2000:]


check(
    "an asynchronous eager executor is refused, the synchronous one works again",
    lambda: subprocess_case(
        "import tensorflow as tf, rxtf_check as rx\n"
        "x = tf.constant([[1.0, -1.0]])\n"
        "rx.unary('relu', x, 2)\n"
        "tf.config.experimental.set_synchronous_execution(False)\n"
        "try:\n"
        "    rx.unary('relu', x, 2)\n"
        "except RuntimeError as e:\n"
        "    print('REFUSED', e)\n"
        "tf.config.experimental.set_synchronous_execution(True)\n"
        "print('AGAIN', rx.unary('relu', x, 2).numpy().tolist())\n",
        True,
        "REFUSED rextio-tensorflow: the Python eager context is asynchronous",
    ),
)
check(
    "a reset eager context is borrowed afresh",
    lambda: subprocess_case(
        "import tensorflow as tf, rxtf_check as rx\n"
        "from tensorflow.python.eager import context\n"
        "print(rx.unary('relu', tf.constant([[1.0, -1.0]]), 2).numpy().tolist())\n"
        "context._reset_context()\n"
        "y = tf.constant([[-2.0, 3.0]])\n"
        "print('AFTER', rx.unary('relu', y, 2).numpy().tolist(), rx.scoring(y, tf.ones((2, 2)), tf.ones(2), 2)[1].numpy().tolist())\n",
        True,
        "AFTER [[0.0, 3.0]] [0]",
    ),
)

check(
    "ops name their device when the context has more than one",
    lambda: subprocess_case(
        "import numpy as np, tensorflow as tf\n"
        "cpu = tf.config.list_physical_devices('CPU')[0]\n"
        "tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)\n"
        "import rxtf_check as rx\n"
        "x = tf.constant(np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32))\n"
        "w = tf.constant(np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32))\n"
        "b = tf.constant(np.random.default_rng(3).standard_normal(5).astype(np.float32))\n"
        "p, labels = rx.scoring(x, w, b, 3)\n"
        "h = tf.nn.bias_add(tf.matmul(x, w), b)\n"
        "for i in range(3):\n"
        "    h = (tf.nn.relu(h) if i % 2 == 0 else tf.nn.tanh(h)) + b\n"
        "rp = tf.nn.softmax(h, axis=1)\n"
        "assert p.device == rp.device and p.device.endswith('CPU:0'), (p.device, rp.device)\n"
        "assert (p.numpy() == rp.numpy()).all() and (labels.numpy() == tf.argmax(rp, axis=1).numpy()).all()\n"
        "with tf.device('CPU:1'):\n"
        "    y = tf.constant([[1.0, -1.0]])\n"
        "try:\n"
        "    rx.unary('relu', y, 2)\n"
        "except ValueError as e:\n"
        "    print('CPU1', e)\n"
        "print('DEVICES', len(tf.config.list_logical_devices('CPU')))\n",
        True,
        "CPU1 rextio-tensorflow: expected a CPU tensor\nDEVICES 2",
    ),
)


def other_threads():
    import threading

    errors, results = [], []

    def work():
        try:
            for _ in range(50):
                results.append(rx.scoring(Y2, W, B, 3))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    rp, rl = scoring_ref(Y2, W, B, 3)
    for p, labels in results:
        same(p, rp)
        same(labels, rl)


check("native calls from several Python threads", other_threads)
check(
    "import without importing tensorflow first",
    lambda: subprocess_case("import rxtf_check, tensorflow as tf; print(rxtf_check.unary('relu', tf.constant([[1.0]]), 2).numpy())", True, "[[1.]]"),
)
check(
    "tf.__version__ mismatch fails the import (ImportError)",
    lambda: subprocess_case(
        "import tensorflow as tf\ntf.__version__ = '2.20.0'\ntry:\n    import rxtf_check\nexcept ImportError as e:\n    print('IMPORTERROR', e)\n    raise\n",
        False,
        "IMPORTERROR rextio-tensorflow: TensorFlow version mismatch: expected tensorflow 2.21.0",
    ),
)

print(f"{len(FAILED)} failed" if FAILED else "all checks passed")
sys.exit(1 if FAILED else 0)
