"""Run the TensorFlow CUDA lane for real on GPU:0 and write evidence (support_claim=false).

Called by `cargo xtask certify --cuda` with the built project and the host's checker library
(`rextio_certify`) on PYTHONPATH. Checks: the function is the native extension; parity with
eager TensorFlow on directly created inputs and on inputs produced by GPU ops
(transposed/sliced: TensorFlow tensors are always dense, so this is the closest analogue of
non-contiguous inputs); outputs float32 rank 1 on GPU:0; inputs recorded by a GradientTape are
refused; boundary rejections. Transfers are checked by device placement only: the evidence
says `runtime_transfer_profiled=false` and `kernel_activity_verified=false`, as the evidence's
closed schema requires. Exit status as `rextio_certify.CudaLane` says.
"""

import rextio_certify

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"


def check(lane, _args):
    import numpy as np
    import tensorflow as tf

    if not tf.config.list_physical_devices("GPU"):
        lane.fail("no CUDA device: TensorFlow sees no GPU (install tensorflow[and-cuda]==2.21.0 on this host)")
    from rxcudatf import lanes

    native = lane.native(lanes.head, "lanes.head")

    def eager(x, w, b):
        return tf.reduce_mean(tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b)), axis=1)

    rng = np.random.default_rng(0)
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
                lane.fail(f"{name}: input is on {t.device}")
        want = eager(x, w, b)
        got = native(x, w, b)
        if got.device != GPU0 or got.dtype != tf.float32 or got.shape.rank != 1:
            lane.fail(f"{name}: output is {got.dtype} rank {got.shape.rank} on {got.device}")
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
        lane.parity(name, np.abs(got.numpy() - want.numpy()).max())

    x, w, b = direct
    with tf.GradientTape() as tape:
        tape.watch(x)
        try:
            native(x, w, b)
        except ValueError as e:
            if "inference-only" not in str(e):
                lane.fail(f"tape: {e!r}")
        else:
            lane.fail("inputs recorded by a GradientTape were accepted")
    lane.passed("tape_refused")

    with tf.device("/CPU:0"):
        cpu_x = tf.identity(x)
    lane.rejections(
        native,
        {
            "cpu": ((cpu_x, w, b), "rextio-tensorflow: expected a GPU:0 tensor"),
            "rank": ((b, w, b), "rextio-tensorflow: expected rank-2 tensor, got rank 1"),
        },
    )
    return {
        "tensorflow_version": tf.__version__,
        "kernel_activity_verified": False,
        "runtime_transfer_profiled": False,
    }


if __name__ == "__main__":
    rextio_certify.CudaLane("rextio-tensorflow", "tensorflow-cuda-e3", "cuda-tensorflow-tfe-linux-x86_64").run(check)
