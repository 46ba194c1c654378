"""Parity and speed of the natively built TensorFlow scoring kernels against eager TensorFlow
and tf.function (one thread each).

Run with `cargo xtask demo`, or by hand after `rextio build examples/tf_scoring`:

    REXTIO_NATIVE_MODE=native \
    PYTHONPATH=examples/tf_scoring/.rextio/build/python \
    .venv/bin/python examples/tf_scoring/demo.py

Exits 1 if a function is not bound natively or if any result differs from eager.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD_PYTHON = HERE / ".rextio" / "build" / "python"
SOURCE = HERE / "src" / "tf_scoring" / "kernels.py"

os.environ.setdefault("REXTIO_NATIVE_MODE", "native")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402  (tensorflow must be imported before the native module)

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def inputs(batch: int, rng: np.random.Generator):
    f, h, c = 32, 32, 8
    arr = lambda *s: tf.constant(rng.standard_normal(s).astype(np.float32))  # noqa: E731
    return (arr(batch, f), arr(f), tf.abs(arr(f)) + 0.5, arr(f, h) / 6, arr(h), arr(h, c) / 6, arr(c), 4)


def per_call_us(fn, args, calls: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter_ns() - start) / calls / 1000.0


def main() -> int:
    if importlib.util.find_spec("tf_scoring") is None:
        sys.path.insert(0, str(BUILD_PYTHON))
    native = importlib.import_module("tf_scoring.kernels")
    eager = load("tf_scoring_eager_kernels", SOURCE)
    print(f"tensorflow {tf.__version__}, one thread, REXTIO_NATIVE_MODE={os.environ['REXTIO_NATIVE_MODE']}")
    failed = False
    for name in ("probabilities", "classify"):
        route = "native" if type(getattr(native, name)).__name__ == "builtin_function_or_method" else "fallback"
        print(f"route {name}: {route}")
        failed |= route != "native"
    rng = np.random.default_rng(0)
    header = f"{'batch':<6} {'parity':<14} {'native µs':>10} {'eager µs':>10} {'tf.function µs':>15} {'eager/native':>13} {'tf.function/native':>19}"
    print()
    print(header)
    print("-" * len(header))
    for batch in (1, 16, 128):
        args = inputs(batch, rng)
        probs_n, probs_e = native.probabilities(*args).numpy(), eager.probabilities(*args).numpy()
        labels_n, labels_e = native.classify(*args), eager.classify(*args)
        ok = (np.allclose(probs_n, probs_e, rtol=1e-5, atol=1e-6) and labels_n.dtype == labels_e.dtype
              and np.array_equal(labels_n.numpy(), labels_e.numpy()))
        if not ok:
            failed = True
            print(f"{batch:<6} FAIL")
            continue
        graph = tf.function(eager.classify)
        lanes = {"native": native.classify, "eager": eager.classify, "tf.function": graph}
        for fn in lanes.values():
            per_call_us(fn, args, 30)
        times = {k: [] for k in lanes}
        for r in range(15):
            order = list(lanes.items())
            if r % 2:
                order.reverse()
            for k, fn in order:
                times[k].append(per_call_us(fn, args, 40))
        med = {k: statistics.median(v) for k, v in times.items()}
        diff = float(np.abs(probs_n - probs_e).max())
        print(f"{batch:<6} {'ok ' + format(diff, '.1e'):<14} {med['native']:>10.1f} {med['eager']:>10.1f} "
              f"{med['tf.function']:>15.1f} {med['eager'] / med['native']:>12.2f}x {med['tf.function'] / med['native']:>18.2f}x")
    print()
    if failed:
        print("demo: FAILED (a function is not native or parity failed)")
        return 1
    print("demo: ok (TensorFlow functions native, labels identical, probabilities within rtol=1e-5 atol=1e-6)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
