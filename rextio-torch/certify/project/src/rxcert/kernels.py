"""rextio-torch certification project: every native rule of the plugin, exercised by
`cargo xtask certify` through certify/check.py. Functions with one tensor parameter are also
run on special values ([-inf, -3, -1, -0, 0, 1, 3, inf, nan])."""

import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D as V, TensorF32Cpu2D as M, TensorI64Cpu1D as L


def control_flow(x: M, weight: M, bias: V, depth: int, phase: int) -> V:
    hidden = x
    for layer in range(depth):
        if (layer + phase) % 2 == 0:
            even = hidden @ weight + bias
            hidden = even.relu()
        else:
            odd = hidden @ weight + bias
            hidden = odd.sigmoid()
    return hidden.mean(dim=1, keepdim=False)


def expanded_surface(x: M, weight: M, offset: V) -> V:
    hidden = torch.matmul(x, weight)
    hidden = hidden.tanh()
    hidden = hidden + hidden
    hidden = hidden.matmul(weight)
    reduced = hidden.sum(dim=1, keepdim=False)
    reduced = reduced + offset
    return reduced.relu().sigmoid().tanh()


def phase_a(x: M, weight: M, bias: V) -> V:
    return F.linear(x, weight, bias).relu().mean(dim=1, keepdim=False)


def cpu_surface_followup(x: M, weight: M, bias: V, divisor: V) -> M:
    hidden = torch.nn.functional.linear(x, weight, bias=None)
    activated = torch.relu(hidden)
    shifted = torch.sigmoid(activated) - bias
    scaled = shifted / divisor
    totals = torch.sum(scaled, 0, keepdim=True)
    averaged = torch.mean(totals, 1, keepdim=True)
    probabilities = torch.softmax(averaged, 1)
    return torch.tanh(probabilities)


def linear_forms(x: M, w: M, b: V) -> M:
    return F.linear(x, w) + F.linear(x, w, None) + F.linear(x, w, b) + F.linear(x, weight=w, bias=b)


def activations(x: M, v: V) -> M:
    a = x.relu() + x.sigmoid() * x.tanh()
    r = v.relu() - v.sigmoid() + v.tanh()
    f = torch.relu(x) + torch.sigmoid(x) - torch.tanh(r)
    return a + f + F.relu(x) * F.relu(r, inplace=False)


def multiply_special(a: V, b: V) -> V:
    return a * b


def arithmetic(a: M, b: M, u: V, w: V) -> M:
    same = (a + b) * (a - b) / (b * b + 1.0)
    vec = (u + w) * (u - w) / (w * w + 2.0)
    mixed = (a + u) - (u - a) + (a * w) * (w * a) + (a / w) + (u / (b * b + 1.0))
    func = torch.add(a, u) + torch.sub(u, a) + torch.mul(a, b) + torch.div(a, w) + torch.div(vec, w)
    return same + mixed + func + torch.add(vec, w)


def scalar_ops(x: M, v: V, k: float, n: int) -> M:
    left = (x + 1.5) * k - n / 2 + (x / n) * (x - 0.25)
    right = (2 - x) + 3.0 * x + (1.0 / (x * x + 1.0)) + n * x
    vec = 0.5 + v - k
    return left - right + vec * 2 + v / 3


def matmul_mixed(a: M, u: V) -> V:
    return (a @ u) + (u @ a) + torch.matmul(a, u) + torch.matmul(u, a) + a.matmul(u) + u.matmul(a)


def reductions(x: M, v: V) -> M:
    rows = x.sum(0, keepdim=True) + x.mean(dim=1, keepdim=True)
    cols = torch.mean(x, 0) + torch.sum(x, dim=1) + x.sum(dim=1, keepdim=False) + x.mean(dim=0)
    vec = v.sum(dim=0, keepdim=True) + torch.mean(v, 0, keepdim=True)
    return rows + cols + vec


def softmax_forms(x: M) -> M:
    return x.softmax(dim=1) + x.softmax(0) + torch.softmax(x, 1) + F.softmax(x, dim=0) + F.softmax(x, 1, dtype=None)


def softmax_rank1(v: V) -> V:
    return v.softmax(dim=0) + torch.softmax(v, 0) + F.softmax(v, dim=0)


def classify(x: M, w: M, b: V) -> L:
    return F.linear(x, w, b).softmax(dim=1).argmax(dim=1)


def classify_dim0(x: M) -> L:
    return torch.argmax(x, 0)


def classify_keepdim(x: M) -> L:
    return x.argmax(dim=1, keepdim=False)


def classify_rank1(v: V) -> L:
    return v.argmax(dim=0, keepdim=True)


def classify_rank1_fn(v: V) -> L:
    return torch.argmax(v, 0, keepdim=True)


def gelu_default(x: V) -> V:
    return F.gelu(x)


def gelu_explicit(x: M) -> M:
    return F.gelu(x, approximate="none")


def unary_abs(x: V) -> V:
    return torch.abs(x)


def method_abs(x: M) -> M:
    return x.abs()


def unary_neg(x: V) -> V:
    return torch.neg(x)


def method_neg(x: M) -> M:
    return x.neg()


def unary_negative(x: V) -> V:
    return torch.negative(x)


def method_negative(x: M) -> M:
    return x.negative()


def unary_square(x: V) -> V:
    return torch.square(x)


def method_square(x: M) -> M:
    return x.square()


def unary_exp(x: V) -> V:
    return torch.exp(x)


def method_exp(x: M) -> M:
    return x.exp()


def unary_log(x: V) -> V:
    return torch.log(x)


def method_log(x: M) -> M:
    return x.log()


def unary_sqrt(x: V) -> V:
    return torch.sqrt(x)


def method_sqrt(x: M) -> M:
    return x.sqrt()


def act_relu(x: V) -> V:
    return x.relu()


def act_fn_relu(x: M) -> M:
    return torch.relu(x)


def act_sigmoid(x: V) -> V:
    return x.sigmoid()


def act_fn_sigmoid(x: M) -> M:
    return torch.sigmoid(x)


def act_tanh(x: V) -> V:
    return x.tanh()


def act_fn_tanh(x: M) -> M:
    return torch.tanh(x)
