"""Time the runtime on the bench's TensorFlow scoring pipeline: native vs eager vs tf.function.

Run by tests/tf_runtime.rs (`native_scoring_timing`, a release build of the test extension) with
the extension's directory on PYTHONPATH. One thread everywhere: TensorFlow's intra- and inter-op
pools are set to 1 before anything runs. Parity comes first (labels identical, probabilities
within 1e-6); a lane is timed only when it agrees. Lanes are interleaved round by round and the
table shows the median over rounds of the mean time per call.

usage: bench.py [--quick] [--json PATH] [--min-speedup X]
(`--min-speedup X` exits 1 when native is not at least X times faster than eager at batch 1.)
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np
import tensorflow as tf

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

import rxtf_check as rx  # noqa: E402 - after the thread settings, like the bench

FEATURES, HIDDEN, CLASSES, ROUNDS = 32, 32, 8, 4


def probabilities(x, mean, scale, w1, b1, w2, b2, rounds):
    centered = x - mean
    normalized = centered / scale
    hidden = tf.nn.bias_add(tf.matmul(normalized, w1), b1)
    for step in range(rounds):
        if step % 2 == 0:
            hidden = tf.nn.relu(hidden)
        else:
            hidden = tf.nn.tanh(hidden)
    logits = tf.matmul(hidden, w2) + b2
    return tf.nn.softmax(logits, axis=1)


def classify(x, mean, scale, w1, b1, w2, b2, rounds):
    centered = x - mean
    normalized = centered / scale
    hidden = tf.nn.bias_add(tf.matmul(normalized, w1), b1)
    for step in range(rounds):
        if step % 2 == 0:
            hidden = tf.nn.relu(hidden)
        else:
            hidden = tf.nn.tanh(hidden)
    logits = tf.matmul(hidden, w2) + b2
    probs = tf.nn.softmax(logits, axis=1)
    return tf.argmax(probs, axis=1)


def inputs(batch, seed):
    rng = np.random.default_rng(seed)

    def c(*shape):
        return tf.constant(rng.standard_normal(shape).astype(np.float32))

    scale = tf.constant((np.abs(rng.standard_normal(FEATURES)) + 0.5).astype(np.float32))
    return (c(batch, FEATURES), c(FEATURES), scale, c(FEATURES, HIDDEN), c(HIDDEN), c(HIDDEN, CLASSES), c(CLASSES))


def parity(lanes, batch):
    """None when every lane matches eager on three seeds, else the reason."""
    for seed in range(3):
        args = inputs(batch, seed)
        want_p = probabilities(*args, ROUNDS).numpy()
        want_l = classify(*args, ROUNDS)
        got_p = rx.scoring_probabilities(*args, ROUNDS)
        if got_p.dtype != tf.float32 or got_p.shape != want_p.shape or got_p.device != want_l.device:
            return f"native probabilities: {got_p.dtype} {got_p.shape} {got_p.device}"
        diff = float(np.max(np.abs(got_p.numpy() - want_p)))
        if not diff <= 1e-6:
            return f"native probabilities differ by {diff}"
        for name, fn in lanes.items():
            got = fn(*args, ROUNDS)
            if got.dtype != tf.int64 or got.shape != want_l.shape:
                return f"{name} labels: {got.dtype} {got.shape}"
            if not np.array_equal(got.numpy(), want_l.numpy()):
                return f"{name} labels differ"
    return None


def per_call(fn, args, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - t0) / calls * 1e6


def time_lanes(lanes, args, rounds, calls):
    samples = {name: [] for name in lanes}
    for fn in lanes.values():  # warm up (tf.function traces here)
        for _ in range(max(calls // 4, 5)):
            fn(*args)
    for r in range(rounds):
        order = list(lanes.items())
        order = order[r % len(order):] + order[: r % len(order)]
        for name, fn in order:
            samples[name].append(per_call(fn, args, calls))
    return {name: statistics.median(s) for name, s in samples.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--min-speedup", type=float)
    opts = ap.parse_args()
    rounds, calls = (5, 50) if opts.quick else (15, 200)

    graph = tf.function(classify)
    lanes = {"native": rx.scoring_labels, "eager": classify, "tf.function": graph}
    rows = []
    for batch in (1, 16, 128):
        why = parity(lanes, batch)
        if why:
            print(f"PARITY FAILED at batch {batch}: {why}")
            return 1
        args = inputs(batch, 7) + (ROUNDS,)
        med = time_lanes(lanes, args, rounds, calls)
        rows.append({"batch": batch, **{f"{k}_us": v for k, v in med.items()}})

    # Single ops, the cost per TFE op the pipeline is made of.
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    w = tf.constant(np.ones((3, 3), dtype=np.float32))
    ops = {
        "relu 2x3": ({"native": lambda a: rx.unary("relu", a, 2), "eager": tf.nn.relu}, (x,)),
        "matmul 2x3 @ 3x3": ({"native": lambda a, b: rx.binary("matmul", a, 2, b, 2), "eager": tf.matmul}, (x, w)),
    }
    op_rows = []
    for name, (fns, args) in ops.items():
        med = time_lanes(fns, args, rounds, calls * 2)
        op_rows.append({"op": name, **{f"{k}_us": v for k, v in med.items()}})

    print("scoring pipeline (features 32, hidden 32, classes 8, rounds 4), one thread, median us per call")
    print(f"{'batch':>5} {'native':>9} {'eager':>9} {'tf.function':>12} {'eager/native':>13} {'tf.function/native':>19}")
    for r in rows:
        n, e, g = r["native_us"], r["eager_us"], r["tf.function_us"]
        print(f"{r['batch']:>5} {n:>9.1f} {e:>9.1f} {g:>12.1f} {e / n:>12.1f}x {g / n:>18.1f}x")
    print(f"{'op':>18} {'native':>9} {'eager':>9}")
    for r in op_rows:
        print(f"{r['op']:>18} {r['native_us']:>9.1f} {r['eager_us']:>9.1f}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"pipeline": rows, "ops": op_rows, "tensorflow": tf.__version__}, f, indent=2)
    speedup = rows[0]["eager_us"] / rows[0]["native_us"]
    if opts.min_speedup is not None and speedup < opts.min_speedup:
        print(f"native is {speedup:.1f}x eager at batch 1, below the required {opts.min_speedup}x")
        return 1
    print("timing done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
