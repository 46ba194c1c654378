"""Phase A in TensorFlow: `tf.matmul -> tf.nn.bias_add -> tf.nn.relu -> tf.reduce_mean(axis=1)`.

A workload of `cargo xtask bench`: the TensorFlow twin of `tests/fixtures/phase_a` (`w` is
`(in, out)`, as `tf.matmul(x, w)` wants it).
"""

import tensorflow as tf
from rextio_tensorflow.types import TensorF32Cpu1D, TensorF32Cpu2D


def inference(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    hidden = tf.nn.bias_add(tf.matmul(x, w), b)
    return tf.reduce_mean(tf.nn.relu(hidden), axis=1)
