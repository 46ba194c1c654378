"""Small-batch scoring in TensorFlow: normalize -> dense -> relu/tanh rounds -> dense -> softmax
-> argmax.

A workload of `cargo xtask bench` (features 32, hidden 32, classes 8, 4 rounds), the TensorFlow
twin of `bench/projects/scoring` (weights are `(in, out)`, as `tf.matmul(x, w)` wants them).
`classify` is the timed function; `probabilities` is the same pipeline without the argmax, so
the harness can check the probabilities before it trusts exact labels. `boundary` and
`boundary_args` measure the native boundary's cost per call (seven EagerTensors in, one out).
"""

import tensorflow as tf
from rextio_tensorflow.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def probabilities(
    x: TensorF32Cpu2D,
    mean: TensorF32Cpu1D,
    scale: TensorF32Cpu1D,
    w1: TensorF32Cpu2D,
    b1: TensorF32Cpu1D,
    w2: TensorF32Cpu2D,
    b2: TensorF32Cpu1D,
    rounds: int,
) -> TensorF32Cpu2D:
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


def classify(
    x: TensorF32Cpu2D,
    mean: TensorF32Cpu1D,
    scale: TensorF32Cpu1D,
    w1: TensorF32Cpu2D,
    b1: TensorF32Cpu1D,
    w2: TensorF32Cpu2D,
    b2: TensorF32Cpu1D,
    rounds: int,
) -> TensorI64Cpu1D:
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


def boundary(
    x: TensorF32Cpu2D,
    mean: TensorF32Cpu1D,
    scale: TensorF32Cpu1D,
    w1: TensorF32Cpu2D,
    b1: TensorF32Cpu1D,
    w2: TensorF32Cpu2D,
    b2: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    """Seven EagerTensor arguments, one op, one output: what the bench reports as the native
    boundary's cost per call for TensorFlow (argument checks, the op, allocating the output and
    handing it back as an EagerTensor)."""
    return tf.nn.relu(x)


def boundary_args(
    x: TensorF32Cpu2D,
    mean: TensorF32Cpu1D,
    scale: TensorF32Cpu1D,
    w1: TensorF32Cpu2D,
    b1: TensorF32Cpu1D,
    w2: TensorF32Cpu2D,
    b2: TensorF32Cpu1D,
    relu: bool,
) -> TensorF32Cpu2D:
    """`boundary` without its output: called with `relu=False`, the seven arguments are checked
    and `x` comes back as it came (the same object), so the bench can split the boundary's cost
    into arguments and output. (The `relu` branch is there because a function using no plugin
    operation stays Python.)"""
    if relu:
        return tf.nn.relu(x)
    return x
