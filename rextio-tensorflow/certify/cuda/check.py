"""Run the CUDA E3 lane for real on GPU:0 and write evidence (support_claim=false).

Called by `cargo xtask certify --cuda` with the built project on PYTHONPATH. Checks: the
function is the native extension; parity with eager TensorFlow on directly created inputs and
on inputs produced by GPU ops (transposed/sliced: TensorFlow tensors are always dense, so this
is the closest analogue of non-contiguous inputs); outputs float32 rank 1 on GPU:0; inputs
recorded by a GradientTape are refused; boundary rejections. Transfers are checked by device
placement only: the evidence says `runtime_transfer_profiled=false` and
`kernel_activity_verified=false`, as the evidence's closed schema requires.
"""

import argparse
import datetime
import json
import sys

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"


def fail(msg):
    sys.exit(f"rextio-tensorflow CUDA certification: {msg}")


def main():
    ap = argparse.ArgumentParser()
    for a in ("--project", "--evidence", "--plugin", "--device-name", "--sm"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()

    import numpy as np
    import tensorflow as tf

    if not tf.config.list_physical_devices("GPU"):
        fail("no CUDA device: TensorFlow sees no GPU (install tensorflow[and-cuda]==2.21.0 on this host)")
    from rxcudatf import lanes

    native = lanes.head
    if type(native).__name__ != "builtin_function_or_method":
        fail(f"lanes.head is not the native extension function ({type(native).__name__})")

    def eager(x, w, b):
        return tf.reduce_mean(tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b)), axis=1)

    rng = np.random.default_rng(0)
    checks = {}
    with tf.device("/GPU:0"):
        direct = tuple(tf.constant(rng.standard_normal(s).astype("float32")) for s in ((64, 32), (32, 16), (16,)))
        derived = (
            tf.transpose(tf.constant(rng.standard_normal((32, 64)).astype("float32"))),
            tf.transpose(tf.constant(rng.standard_normal((16, 32)).astype("float32"))),
            tf.constant(rng.standard_normal(32).astype("float32"))[::2],
        )
    for name, (x, w, b) in {"direct": direct, "derived_views": derived}.items():
        for t in (x, w, b):
            if t.device != GPU0:
                fail(f"{name}: input is on {t.device}")
        want = eager(x, w, b)
        got = native(x, w, b)
        if got.device != GPU0 or got.dtype != tf.float32 or got.shape.rank != 1:
            fail(f"{name}: output is {got.dtype} rank {got.shape.rank} on {got.device}")
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
        checks[f"parity_{name}"] = {"ok": True, "max_abs_diff": float(np.abs(got.numpy() - want.numpy()).max())}

    x, w, b = direct
    with tf.GradientTape() as tape:
        tape.watch(x)
        try:
            native(x, w, b)
        except ValueError as e:
            if "inference-only" not in str(e):
                fail(f"tape: {e!r}")
        else:
            fail("inputs recorded by a GradientTape were accepted")
    checks["tape_refused"] = {"ok": True}

    with tf.device("/CPU:0"):
        cpu_x = tf.identity(x)
    rejects = {
        "cpu": ((cpu_x, w, b), "rextio-tensorflow: expected a GPU:0 tensor"),
        "rank": ((b, w, b), "rextio-tensorflow: expected rank-2 tensor, got rank 1"),
    }
    for name, (inputs, message) in rejects.items():
        try:
            native(*inputs)
        except (ValueError, TypeError) as e:
            # The boundary's message, then where and what (argument, position, function, given).
            if not str(e).startswith(message + " (argument "):
                fail(f"boundary {name}: {e!r}, expected {message!r} then the argument")
        else:
            fail(f"boundary {name}: accepted")
    checks["boundary_rejections"] = {"ok": True, "cases": sorted(rejects)}

    evidence = {
        "schema": "rextio-cuda-evidence/1",
        "lane": "tensorflow-cuda-e3",
        "plugin": args.plugin,
        "capability": "cuda-tensorflow-tfe-linux-x86_64",
        "device_name": args.device_name,
        "sm": args.sm,
        "tensorflow_version": tf.__version__,
        "checks": checks,
        "kernel_activity_verified": False,
        "runtime_transfer_profiled": False,
        "support_claim": False,
        "certification_ready": False,
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    }
    with open(args.evidence, "w") as f:
        json.dump(evidence, f, indent=2)
    print(f"tensorflow CUDA E3 ok: evidence in {args.evidence} (support_claim=false)")


if __name__ == "__main__":
    main()
