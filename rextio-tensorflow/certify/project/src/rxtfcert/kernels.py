"""rextio-tensorflow certification project: every native rule of the plugin, exercised by
`cargo xtask certify` through certify/check.py. Each function names the rules it covers;
functions whose tensor parameters all have one rank are also run on special values
([-inf, -3, -1, -0, 0, 1, 3, inf, nan]). Only forms the plugin claims appear here."""

import tensorflow as tf
from rextio_tensorflow.types import TensorF32Cpu1D as V, TensorF32Cpu2D as M, TensorI64Cpu1D as L


# rextio-tensorflow/matmul-f32-cpu-2d
def matmul(a: M, b: M) -> M:
    return tf.matmul(a, b)


def linalg_matmul(a: M, b: M) -> M:
    return tf.linalg.matmul(a, b)


# rextio-tensorflow/{relu,sigmoid,tanh,elu}-f32-cpu-{1,2}d
def relu_2d(x: M) -> M:
    return tf.nn.relu(x)


def relu_1d(v: V) -> V:
    return tf.nn.relu(v)


def sigmoid_2d(x: M) -> M:
    return tf.nn.sigmoid(x)


def sigmoid_1d(v: V) -> V:
    return tf.nn.sigmoid(v)


def tanh_2d(x: M) -> M:
    return tf.nn.tanh(x)


def tanh_1d(v: V) -> V:
    return tf.nn.tanh(v)


def elu_2d(x: M) -> M:
    return tf.nn.elu(x)


def elu_1d(v: V) -> V:
    return tf.nn.elu(v)


# rextio-tensorflow/{abs,negative,square,exp,log,sqrt}-f32-cpu
def abs_2d(x: M) -> M:
    return tf.abs(x)


def abs_1d(v: V) -> V:
    return tf.abs(v)


def negative_2d(x: M) -> M:
    return tf.negative(x)


def negative_1d(v: V) -> V:
    return tf.negative(v)


def neg_operator_2d(x: M) -> M:
    return -x


def neg_operator_1d(v: V) -> V:
    return -v


def sqrt_top_level_2d(x: M) -> M:
    return tf.sqrt(x)


def abs_math_1d(v: V) -> V:
    return tf.math.abs(v)


def square_2d(x: M) -> M:
    return tf.square(x)


def square_1d(v: V) -> V:
    return tf.square(v)


def exp_2d(x: M) -> M:
    return tf.exp(x)


def exp_1d(v: V) -> V:
    return tf.exp(v)


def log_2d(x: M) -> M:
    return tf.math.log(x)


def log_1d(v: V) -> V:
    return tf.math.log(v)


def sqrt_2d(x: M) -> M:
    return tf.math.sqrt(x)


def sqrt_1d(v: V) -> V:
    return tf.math.sqrt(v)


# rextio-tensorflow/{add,sub,mul,div}-call-f32-cpu: both spellings, the whole rank matrix
def add_call(a: M, b: M) -> M:
    return tf.math.add(tf.add(a, b), b)


def add_call_1d(u: V, w: V) -> V:
    return tf.math.add(tf.add(u, w), w)


def add_call_mixed(a: M, u: V) -> M:
    return tf.add(tf.add(a, u), tf.math.add(u, a))


def subtract_call(a: M, b: M) -> M:
    return tf.math.subtract(tf.subtract(a, b), b)


def subtract_call_1d(u: V, w: V) -> V:
    return tf.math.subtract(tf.subtract(u, w), w)


def subtract_call_mixed(a: M, u: V) -> M:
    return tf.subtract(tf.subtract(a, u), tf.math.subtract(u, a))


def multiply_call(a: M, b: M) -> M:
    return tf.math.multiply(tf.multiply(a, b), b)


def multiply_call_1d(u: V, w: V) -> V:
    return tf.math.multiply(tf.multiply(u, w), w)


def multiply_call_mixed(a: M, u: V) -> M:
    return tf.multiply(tf.multiply(a, u), tf.math.multiply(u, a))


def divide_call(a: M, b: M) -> M:
    return tf.math.divide(tf.divide(a, b), b)


def divide_call_1d(u: V, w: V) -> V:
    return tf.math.divide(tf.divide(u, w), w)


def divide_call_mixed(a: M, u: V) -> M:
    return tf.divide(tf.divide(a, u), tf.math.divide(u, a))


# rextio-tensorflow/{add,sub,mul,div}-binop-f32-cpu
def add_binop(a: M, b: M) -> M:
    return a + b


def add_binop_1d(u: V, w: V) -> V:
    return u + w


def add_binop_mixed(a: M, u: V) -> M:
    return (a + u) + (u + a)


def subtract_binop(a: M, b: M) -> M:
    return a - b


def subtract_binop_1d(u: V, w: V) -> V:
    return u - w


def subtract_binop_mixed(a: M, u: V) -> M:
    return (a - u) - (u - a)


def multiply_binop(a: M, b: M) -> M:
    return a * b


def multiply_binop_1d(u: V, w: V) -> V:
    return u * w


def multiply_binop_mixed(a: M, u: V) -> M:
    return (a * u) * (u * a)


def divide_binop(a: M, b: M) -> M:
    return a / b


def divide_binop_1d(u: V, w: V) -> V:
    return u / w


def divide_binop_mixed(a: M, u: V) -> M:
    return (a / u) / (u / a)


# rextio-tensorflow/{maximum,minimum}-call-f32-cpu (same ranks only)
def maximum_2d(a: M, b: M) -> M:
    return tf.maximum(a, b)


def maximum_1d(u: V, w: V) -> V:
    return tf.maximum(u, w)


def minimum_2d(a: M, b: M) -> M:
    return tf.minimum(a, b)


def minimum_1d(u: V, w: V) -> V:
    return tf.minimum(u, w)


# rextio-tensorflow/reduce-{mean,sum}-axis1-f32-cpu-2d
def reduce_mean_axis1(x: M) -> V:
    return tf.reduce_mean(x, axis=1) + tf.math.reduce_mean(x, 1) + tf.reduce_mean(x, axis=1, keepdims=False)


def reduce_sum_axis1(x: M) -> V:
    return tf.reduce_sum(x, axis=1) + tf.math.reduce_sum(x, 1) + tf.reduce_sum(x, axis=1, keepdims=False)


# rextio-tensorflow/reduce-{mean,sum}-literal-axis-f32-cpu-2d
def reduce_mean_axis0(x: M) -> V:
    return tf.reduce_mean(x, axis=0) + tf.math.reduce_mean(x, 0, keepdims=False)


def reduce_mean_keepdims(x: M) -> M:
    return tf.reduce_mean(x, 0, keepdims=True) + tf.math.reduce_mean(x, axis=1, keepdims=True)


def reduce_sum_axis0(x: M) -> V:
    return tf.reduce_sum(x, axis=0) + tf.math.reduce_sum(x, 0, keepdims=False)


def reduce_sum_keepdims(x: M) -> M:
    return tf.reduce_sum(x, 0, keepdims=True) + tf.math.reduce_sum(x, axis=1, keepdims=True)


# rextio-tensorflow/softmax-axis0-f32-cpu-1d and softmax-axis1-f32-cpu-2d
def softmax_1d(v: V) -> V:
    return tf.nn.softmax(v) + tf.nn.softmax(v, axis=0) + tf.nn.softmax(v, 0)


def softmax_2d(x: M) -> M:
    return tf.nn.softmax(x, axis=1) + tf.nn.softmax(x, 1)


# rextio-tensorflow/argmax-axis{0,1}-i64-cpu-2d
def argmax_axis1(x: M) -> L:
    return tf.argmax(x, axis=1)


def argmax_axis1_positional(x: M) -> L:
    return tf.argmax(x, 1)


def argmax_axis0(x: M) -> L:
    return tf.argmax(x, axis=0)


def argmax_axis0_positional(x: M) -> L:
    return tf.argmax(x, 0)


# rextio-tensorflow/transpose-f32-cpu-2d
def transpose(x: M) -> M:
    return tf.transpose(x)


# rextio-tensorflow/bias-add-nhwc-f32-cpu-2d
def bias_add(x: M, b: V) -> M:
    return tf.nn.bias_add(x, b) + tf.nn.bias_add(x, b, data_format="NHWC")


# The bench's scoring pipeline: claimed sites inside scalar control flow (every rule it uses
# above), int64 labels out.
def scoring(x: M, mean: V, scale: V, w1: M, b1: V, w2: M, b2: V, rounds: int) -> L:
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


def scoring_probabilities(x: M, mean: V, scale: V, w1: M, b1: V, w2: M, b2: V, rounds: int) -> M:
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


# The int64 boundary in both directions: a TensorI64Cpu1D parameter (checked first, with the
# int64 messages) and result, chosen by scalar control flow.
def labels_or_argmax(labels: L, x: M, pick: int) -> L:
    predicted = tf.argmax(x, axis=1)
    if pick > 0:
        return predicted
    return labels
