"""rextio-torch certification project: every native rule of the plugin, exercised by
`cargo xtask certify` through certify/check.py. Functions with one tensor parameter are also
run on special values ([-inf, -3, -1, -0, 0, 1, 3, inf, nan])."""

import torch
import torch.nn.functional as F
from rextio_torch.types import TensorBoolCpu1D as BV, TensorBoolCpu2D as BM
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


def augmented(a: M, b: M, u: V, k: float) -> M:
    # `h op= v` updates `h` in place in eager; `h` holds a tensor only this function sees.
    h = a * b
    h += b
    h -= u
    h *= k
    h /= b * b + 1.0
    v = u + u
    v += u
    v -= 2
    return h + v


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


def gelu_tanh(x: V) -> V:
    return F.gelu(x, approximate="tanh")


def gelu_tanh_rows(x: M) -> M:
    return F.gelu(x, approximate="tanh") + x


def unary_abs(x: V) -> V:
    return torch.abs(x)


def method_abs(x: M) -> M:
    return x.abs()


def unary_neg(x: V) -> V:
    return torch.neg(x)


def method_neg(x: M) -> M:
    return x.neg()


def neg_operator(x: M) -> M:
    return -x


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


def unary_erf(x: V) -> V:
    return torch.erf(x)


def method_erf(x: M) -> M:
    return x.erf()


def owned_erf(x: M) -> M:
    # erf of a temporary: in place on the per-op path, one fused program otherwise.
    return (x * 0.7071067811865476).erf() + 1.0


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


# Negative and keyword dims, normalised statically.


def negative_dims(x: M, v: V) -> M:
    rows = x.softmax(dim=-1) + torch.softmax(x, -2) + F.softmax(x, dim=-1)
    return rows + x.mean(dim=-1, keepdim=True) + torch.sum(x, -2) + F.softmax(v, -1).sum(-1, keepdim=True)


def argmax_negative(x: M) -> L:
    return x.argmax(dim=-1)


def argmax_negative_rank1(v: V) -> L:
    return torch.argmax(v, -1, keepdim=True)


# amax / amin / max(dim).


def amax_amin(x: M) -> M:
    return x.amax(-1, keepdim=True) + torch.amin(x, 0) - torch.amax(x, dim=-2)


def amax_rank1(v: V) -> V:
    return v.amax(dim=0, keepdim=True) - torch.amin(v, -1, keepdim=True)


def max_values(x: M) -> V:
    values, indices = x.max(dim=1)
    return values


def max_indices(x: M) -> L:
    values, indices = torch.max(x, -1)
    return indices


def max_tuple(x: M) -> tuple[V, L]:
    return x.max(0)


def max_rank1(v: V) -> tuple[V, L]:
    return v.max(-1, keepdim=True)


# Activations with parameters, log_softmax.


def log_softmax_forms(x: M) -> M:
    return x.log_softmax(dim=-1) + torch.log_softmax(x, 0) + F.log_softmax(x, 1, dtype=None)


def log_softmax_rank1(v: V) -> V:
    return F.log_softmax(v, dim=0)


def act_silu(x: M) -> M:
    return F.silu(x)


def act_leaky_relu(x: V) -> V:
    return F.leaky_relu(x) + F.leaky_relu(x, 0.01)


def act_leaky_relu_literal(x: M) -> M:
    return F.leaky_relu(x, negative_slope=0.2)


def act_leaky_relu_param(x: M, slope: float) -> M:
    return F.leaky_relu(x, slope, inplace=False)


def act_elu(x: M) -> M:
    return F.elu(x) + F.elu(x, alpha=1.0)


def act_softplus(x: V) -> V:
    return F.softplus(x) + F.softplus(x, beta=1, threshold=20)


def act_elu_alpha(x: M, alpha: float) -> M:
    return F.elu(x, 0.5) + F.elu(x, alpha=alpha) + F.elu(x, alpha=2)


def act_softplus_params(x: V) -> V:
    return F.softplus(x, beta=2.0) + F.softplus(x, 0.5, 5.0) + F.softplus(x, threshold=1)


def act_hardtanh(x: M) -> M:
    return F.hardtanh(x)


def act_hardtanh_bounds(x: V) -> V:
    return F.hardtanh(x, -0.0, 3)


def act_hardtanh_keywords(x: M) -> M:
    return F.hardtanh(x, max_val=0.5, min_val=-2.5, inplace=False)


def act_relu6(x: V) -> V:
    return F.relu6(x)


def act_relu6_matrix(x: M) -> M:
    return F.relu6(x, inplace=False)


# layer_norm over the last dim (normalized_shape: a one-element tuple of int).


def layer_norm_affine(x: M, w: V, b: V) -> M:
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def batch_norm_affine(x: M, mean: V, var: V, w: V, b: V) -> M:
    return F.batch_norm(x, mean, var * var, w, b, training=False, eps=1e-3)


def batch_norm_plain(x: M, mean: V, var: V, momentum: float) -> M:
    return F.batch_norm(x, mean, var) + F.batch_norm(x, mean, var, None, None, False, momentum)


def layer_norm_plain(x: M, eps: float) -> M:
    return F.layer_norm(x, (4,), eps=eps) + F.layer_norm(x, (x.size(1),), weight=None, bias=None)


# clamp family, maximum / minimum, *_like.


def clamp_forms(x: M, lo: float, hi: float) -> M:
    both = torch.clamp(x, min=lo, max=hi) + x.clamp(-0.5, 0.5) + torch.clip(x, -1, 1)
    return both + x.clamp(lo) + x.clamp(max=hi) + x.clamp(None, 1)


def clamp_special(x: V) -> V:
    return x.clamp(-1.0, 1.0)


def clamp_min_max(x: M, v: V, n: int) -> M:
    return torch.clamp_min(x, 0.0) + x.clamp_max(1.0) + torch.clamp_max(v, n) - v.clamp_min(-1)


def maximum_minimum(a: M, b: M, u: V) -> M:
    return torch.maximum(a, b) + torch.minimum(a, u) + a.maximum(u) - u.minimum(a)


def maximum_special(a: V, b: V) -> V:
    return torch.maximum(a, b) - torch.minimum(a, b)


def like_forms(x: M, v: V, k: float, n: int) -> M:
    return torch.zeros_like(x) + torch.ones_like(x) * 2.0 + torch.full_like(x, k) + torch.full_like(v, n) + torch.full_like(x, 0.5)


# Comparisons (bool results) and where.


def compare_gt(a: M, b: M) -> BM:
    return a > b


def compare_broadcast(a: M, u: V) -> BM:
    return u <= a


def compare_scalar(v: V, k: float) -> BV:
    return v >= k


def compare_special(a: V, b: V) -> BV:
    return a != b


def compare_all(a: M, b: M, u: V, k: float) -> M:
    same = torch.where(a > b, 1.0, 0.0) + torch.where(a < b, 2.0, 0.0) + torch.where(a >= b, 4.0, 0.0)
    same = same + torch.where(a <= b, 8.0, 0.0) + torch.where(a == a, 16.0, 0.0) + torch.where(a != b, 32.0, 0.0)
    bcast = torch.where(a > u, 1.0, 0.0) + torch.where(u < a, 2.0, 0.0) + torch.where(a >= u, 4.0, 0.0)
    bcast = bcast + torch.where(u <= a, 8.0, 0.0) + torch.where(a == u, 16.0, 0.0) + torch.where(u != a, 32.0, 0.0)
    scal = torch.where(a > k, 1.0, 0.0) + torch.where(k < a, 2.0, 0.0) + torch.where(a >= 0, 4.0, 0.0)
    scal = scal + torch.where(0.5 <= a, 8.0, 0.0) + torch.where(a == k, 16.0, 0.0) + torch.where(1 != a, 32.0, 0.0)
    return same + bcast * 64.0 + scal * 4096.0


def where_forms(mask: BM, a: M, u: V, k: float) -> M:
    return torch.where(mask, a, u) + torch.where(mask, k, a) + torch.where(mask, u, 0) + torch.where(mask, 1.0, k)


def where_from_compare(a: M, b: M) -> M:
    return torch.where(a > b, a, b) + torch.where(a < 0.0, 0.0, a)


# Views (materialised), shapes as ints.


def transpose_forms(x: M) -> M:
    views = x.t() + x.T + x.transpose(0, 1) + torch.transpose(x, -1, -2) + torch.t(x)
    return views + x.t().relu() + x.T * 2.0


def transpose_rank1(v: V) -> V:
    return v.t() + torch.transpose(v, 0, -1)


def unsqueeze_forms(v: V) -> M:
    return v.unsqueeze(0) + v.unsqueeze(-1) + torch.unsqueeze(v, 1)


def flatten_rows(x: M) -> V:
    return x.flatten() + torch.flatten(x, 0, -1) * 0.5


def flatten_same(x: M, v: V) -> M:
    return x.flatten(1) + torch.flatten(x, start_dim=-1) + x.flatten(0, 0) + v.flatten()


def shape_ints(x: M, v: V) -> int:
    return x.size(0) * 1000 + x.size(dim=-1) * 100 + x.dim() * 10 + v.numel() + len(x) + x.ndim + len(v) + x.numel()


def shape_tuple(x: M) -> tuple[int, int]:
    return x.shape


def size_tuple(v: V) -> tuple[int]:
    return v.size()


def shape_scale(x: M) -> M:
    return x * x.size(1) + len(x)


def bool_shapes(m: BM) -> int:
    return m.size(-1) + len(m) + m.numel() + m.dim()


# Joining: lists and tuples written in the call, a tuple local; sizes checked as eager checks them.


def cat_rows(a: M, b: M) -> M:
    return torch.cat([a, b])


def cat_columns(a: M, b: M, c: M) -> M:
    return torch.cat((a, b.relu(), c), 1)


def cat_last_dim(a: M, b: M) -> M:
    return torch.cat([a * 2.0, b], dim=-1)


def cat_forms(a: M, b: M) -> M:
    pair = (a, b)
    return torch.concat(pair, dim=-2) + torch.cat([torch.cat([b], 1), a], 0)


@torch.no_grad()
def decorated_no_grad(x: M) -> M:
    return x.relu() * 2.0


@torch.inference_mode
def decorated_inference_mode(x: M) -> M:
    return x.tanh()


def act_dropout(x: V) -> V:
    # The deterministic forms: out of training mode the input itself (whatever p), p = 0 keeps
    # it and p = 1 zeroes it (NaN and inf times zero) without drawing from the generator.
    return F.dropout(x, training=False) + F.dropout(x, 0.0) + F.dropout(x, p=1, training=True) + F.dropout(x, 0.9, False, False)


def act_dropout_params(x: M, p: float, training: bool) -> M:
    # p a float value: checked as eager checks it (-2.0 raises ValueError on both sides).
    return F.dropout(x, p, training=False) + F.dropout(x, 0.0, training)
