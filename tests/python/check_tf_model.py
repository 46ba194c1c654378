"""TensorFlow model: parity with eager TF (values, NaN/inf masks, signed zero, dtype, shape,
device), boundary rejects with the backend's documented messages, inputs unchanged, output lifetime."""

import gc

import numpy as np
import tensorflow as tf

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

from rxcheck import is_native, load_eager, raises  # noqa: E402
from tfmodel import net  # noqa: E402

eager = load_eager("tfmodel.net")
NATIVE = ["encode", "score", "label", "stats", "flipped", "vector", "activate", "rectify", "head",
          "pick", "pair"]
PYTHON = ["typed_argmax", "transposed_matmul", "softmax_axis0", "method_style"]
for name in NATIVE:
    assert is_native(getattr(net, name)), f"{name} is not native"
for name in PYTHON:
    assert not is_native(getattr(net, name)), f"{name} should stay on Python"

rng = np.random.default_rng(7)


def t(*shape, special=False):
    a = rng.standard_normal(shape).astype(np.float32)
    if special and a.size >= 4:
        flat = a.reshape(-1)
        flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return tf.constant(a)


def same(native, expected, what):
    assert isinstance(native, type(expected)), f"{what}: {type(native)} != {type(expected)}"
    assert native.dtype == expected.dtype, f"{what}: dtype {native.dtype} != {expected.dtype}"
    assert native.shape == expected.shape, f"{what}: shape {native.shape} != {expected.shape}"
    assert native.device == expected.device, f"{what}: device {native.device} != {expected.device}"
    n, e = native.numpy(), expected.numpy()
    if n.dtype.kind == "f":
        assert np.array_equal(np.isnan(n), np.isnan(e)), f"{what}: NaN mask"
        assert np.array_equal(np.isinf(n) & (n > 0), np.isinf(e) & (e > 0)), f"{what}: +inf mask"
        assert np.array_equal(np.isinf(n) & (n < 0), np.isinf(e) & (e < 0)), f"{what}: -inf mask"
        zero = (e == 0) & ~np.isnan(e)
        assert np.array_equal(np.signbit(n[zero]), np.signbit(e[zero])), f"{what}: signed zero"
        ok = np.isclose(n, e, rtol=1e-5, atol=1e-6, equal_nan=True)
        assert ok.all(), f"{what}: max diff {np.nanmax(np.abs(n - e))}"
    else:
        assert np.array_equal(n, e), f"{what}: values"


for batch in (1, 5, 64):
    for special in (False, True):
        x, w, b = t(batch, 12, special=special), t(12, 12), t(12)
        for depth in (0, 1, 4, 7):
            same(net.encode(x, w, b, depth), eager.encode(x, w, b, depth), f"encode b={batch} d={depth}")
        scale = tf.abs(t(12)) + 0.5
        same(net.score(x, w, b, scale), eager.score(x, w, b, scale), f"score b={batch}")
        w8, b8 = t(12, 8), t(8)
        same(net.label(x, w8, b8), eager.label(x, w8, b8), f"label b={batch}")
        same(net.stats(x), eager.stats(x), f"stats b={batch}")
        y = t(12, batch, special=special)
        same(net.flipped(x, y), eager.flipped(x, y), f"flipped b={batch}")
    v, u = t(batch), t(batch)
    same(net.vector(v, u), eager.vector(v, u), f"vector b={batch}")

# Specials straight into the elementwise ops: NaN, ±inf, signed zeros, denormals (TensorFlow reads
# and writes them as zero) and values whose results underflow; in the vector body and the tail.
EDGE = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, 1e-39, -3e-39, 1e-20, -88.0, 88.0, 100.0, -100.0, 0.5, -2.0]
for n in (1, 3, 16, 40):
    a = np.resize(np.array(EDGE, np.float32), (n, 16))
    b = np.roll(a, 5, axis=1) * np.float32(0.5)
    x, y = tf.constant(a), tf.constant(b)
    same(net.activate(x, y), eager.activate(x, y), f"activate n={n}")
    same(net.activate(y, x), eager.activate(y, x), f"activate swapped n={n}")
    same(net.rectify(x, y), eager.rectify(x, y), f"rectify n={n}")
    # Softmax and argmax: finite rows, then rows holding NaN or ±inf (TensorFlow's own rules).
    f = tf.constant(rng.standard_normal((n, 6)).astype(np.float32))
    for got, want, k in zip(net.head(f), eager.head(f), "pi"):
        same(got, want, f"head[{k}] n={n}")
    for got, want, k in zip(net.head(x), eager.head(x), "pi"):
        same(got, want, f"head[{k}] specials n={n}")
    # Rows mixing finite values with one NaN, +inf or -inf.
    m = rng.standard_normal((n, 6)).astype(np.float32)
    m[0, 1], m[-1, 2], m[n // 2, 3] = np.nan, np.inf, -np.inf
    for got, want, k in zip(net.head(tf.constant(m)), eager.head(tf.constant(m)), "pi"):
        same(got, want, f"head[{k}] mixed n={n}")

# Inputs are unchanged, outputs outlive them, repeated calls agree.
x, w, b = t(3, 12), t(12, 12), t(12)
before = [a.numpy().copy() for a in (x, w, b)]
first = net.encode(x, w, b, 3)
for _ in range(50):
    same(net.encode(x, w, b, 3), first, "repeat")
for a, c in zip((x, w, b), before):
    assert np.array_equal(a.numpy(), c, equal_nan=True), "input mutated"
expected = eager.encode(x, w, b, 3).numpy()
del x, w, b
gc.collect()
assert np.allclose(first.numpy(), expected, rtol=1e-5, atol=1e-6)

# An argument returned unchanged is the caller's EagerTensor itself (as in Python), also inside a
# tuple, and stays valid after the call; computed results are new tensors.
x, y = t(4, 12, special=True), t(4, 12)
assert net.pick(x, y, True) is y, "a returned argument is a new object"
same(net.pick(x, y, False), eager.pick(x, y, False), "pick")
kept, relu = net.pair(x)
assert kept is x and relu is not x, "pair"
same(relu, eager.pair(x)[1], "pair[1]")
want = x.numpy().copy()
del x
gc.collect()
assert np.array_equal(kept.numpy(), want, equal_nan=True), "a returned argument changed"

# Boundary rejects with the boundary's messages.
x, w, b = t(2, 12), t(12, 12), t(12)
raises(TypeError, net.encode, x.numpy(), w, b, 1, match="expected a TensorFlow EagerTensor")
raises(ValueError, net.encode, tf.cast(x, tf.float64), w, b, 1, match="float32")
raises(ValueError, net.encode, b, w, b, 1, match="rank")
raises(TypeError, net.encode, tf.Variable(x), w, b, 1, match="expected a TensorFlow EagerTensor")
# The boundary's message, then the argument, its position, the function and what was given.
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
e = raises(ValueError, net.encode, tf.cast(x, tf.float64), w, b, 1)
assert str(e) == f"rextio-tensorflow: expected a float32 tensor (argument 'x' at position 0 of tfmodel.net.encode, got a rank-2 float64 EagerTensor on {CPU0})", str(e)
e = raises(ValueError, net.encode, x, w, x, 1)
assert str(e) == f"rextio-tensorflow: expected rank-1 tensor, got rank 2 (argument 'b' at position 2 of tfmodel.net.encode, got a rank-2 float32 EagerTensor on {CPU0})", str(e)
e = raises(TypeError, net.encode, x, w, b, "one")
assert str(e) == "'str' object cannot be interpreted as an integer (argument 'depth' at position 3 of tfmodel.net.encode, got a str)", str(e)
# Shape errors from TensorFlow arrive as exceptions, as in eager.
try:
    eager.encode(x, t(7, 3), b, 1)
except Exception as e:  # noqa: BLE001
    eager_type = type(e)
else:
    raise AssertionError("eager accepted mismatched shapes")
raises(Exception, net.encode, x, t(7, 3), b, 1)

# A tensor met again is checked against what its first conversion read, and a new tensor at a
# dead one's address (CPython reuses freed memory at once) is read afresh: shapes, ranks and
# values always follow the tensor actually passed.
for i in range(300):
    n, m = int(rng.integers(1, 9)), int(rng.integers(1, 40))
    x = t(n, m, special=bool(i % 2))
    same(net.activate(x, x), eager.activate(x, x), f"fresh tensor {i} ({n}x{m})")
    if i % 3 == 0:
        v = t(m)
        e = raises(ValueError, net.activate, v, v)
        assert "expected rank-2 tensor, got rank 1" in str(e), str(e)
    del x
w = t(12, 12)
for i in range(20):
    x = t(i + 1, 12)
    same(net.encode(x, w, b, 2), eager.encode(x, w, b, 2), f"same weights, call {i}")

# Inside tf.function a compiled function receives graph tensors: it runs its original, so the
# traced graph holds TensorFlow's operations and answers new inputs as eager does; called
# eagerly afterwards, the functions are native as before.
we, be, ws, bs = t(12, 12), t(12), t(12, 7), t(7)
sc = tf.constant(rng.uniform(0.5, 2.0, 7).astype(np.float32))


@tf.function(input_signature=[tf.TensorSpec([None, 12], tf.float32)])
def served(x):
    return net.score(net.encode(x, we, be, 2), ws, bs, sc)


ops = {op.type for op in served.get_concrete_function().graph.get_operations()}
assert {"MatMul", "BiasAdd", "Relu", "Tanh", "Softmax"} <= ops, f"tf.function traced {sorted(ops)}"
for n in (1, 5, 3):
    x = t(n, 12, special=n == 3)
    same(served(x), eager.score(eager.encode(x, we, be, 2), ws, bs, sc), f"tf.function, batch {n}")
    same(net.score(x, ws, bs, sc), eager.score(x, ws, bs, sc), f"native after tf.function, batch {n}")
assert is_native(net.score) and is_native(net.encode)

# Devices by exact full name (last: this replaces the eager context). Once a remote task is
# connected, this process's CPU:0 still works, and the worker's CPU:0 is not it.
server = tf.distribute.Server.create_local_server()
tf.config.experimental_connect_to_host(server.target, job_name="worker")
x = t(3, 12, special=True)
same(net.stats(x), eager.stats(x), "stats after a remote task joined")
same(net.activate(x, x), eager.activate(x, x), "activate after a remote task joined")
REMOTE_CPU0 = "/job:worker/replica:0/task:0/device:CPU:0"
with tf.device(REMOTE_CPU0):
    remote = tf.identity(x)
assert remote.device == REMOTE_CPU0, remote.device
e = raises(ValueError, net.stats, remote)
assert str(e).startswith("rextio-tensorflow: expected a CPU tensor (argument 'x'"), str(e)

print("tf_model ok")
