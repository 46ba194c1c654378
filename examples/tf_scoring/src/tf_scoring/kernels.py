"""Small-batch scoring in TensorFlow: normalize -> dense -> relu/tanh rounds -> dense -> softmax
-> argmax. Weights are `(in, out)`, as `tf.matmul(x, w)` wants them."""

import tensorflow as tf
from rextio_tensorflow.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def probabilities(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, scale: TensorF32Cpu1D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D, rounds: int) -> TensorF32Cpu2D:
    hidden = tf.nn.bias_add(tf.matmul((x - mean) / scale, w1), b1)
    for step in range(rounds):
        if step % 2 == 0:
            hidden = tf.nn.relu(hidden)
        else:
            hidden = tf.nn.tanh(hidden)
    return tf.nn.softmax(tf.matmul(hidden, w2) + b2, axis=1)


def classify(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, scale: TensorF32Cpu1D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, b2: TensorF32Cpu1D, rounds: int) -> TensorI64Cpu1D:
    return tf.argmax(probabilities(x, mean, scale, w1, b1, w2, b2, rounds), axis=1)
