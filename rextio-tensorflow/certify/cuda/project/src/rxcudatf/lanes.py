"""The build-only CUDA E3 lane, exactly: matmul -> bias_add -> relu -> reduce_mean(axis=1) on GPU:0."""

import tensorflow as tf
from rextio_tensorflow.types import TensorF32Gpu0_1D, TensorF32Gpu0_2D


def head(x: TensorF32Gpu0_2D, w: TensorF32Gpu0_2D, b: TensorF32Gpu0_1D) -> TensorF32Gpu0_1D:
    h = tf.matmul(x, w)
    h = tf.nn.bias_add(h, b)
    h = tf.nn.relu(h)
    return tf.reduce_mean(h, axis=1)
