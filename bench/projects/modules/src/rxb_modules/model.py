"""An MLP classifier with LayerNorm, GELU, residual blocks in a ModuleList and a Sequential head.

The `module-mlp` workload of `cargo xtask bench` (features 20, width 48, two residual blocks of
hidden 96, a gate, 5 classes): `Classifier.forward` is timed as `model(x)`.

`classify` is the same pipeline written as free functions that take every weight as an
argument (`residual` and `gated` are its pieces). The bench times it next to the module, so the
report can say what the module form costs over the free-function form. The argument order is
`Classifier.state_dict()`'s order, after `x`.
"""

import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D
from torch import nn


class ResidualBlock(nn.Module):
    """LayerNorm -> Linear(width, hidden) -> GELU -> Linear(hidden, width), added to the input."""

    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, hidden)
        self.act = nn.GELU()
        self.down = nn.Linear(hidden, width)

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        h = self.act(self.up(self.norm(x)))
        return x + self.down(h)


class Gate(nn.Module):
    """A learned per-feature gate (a Parameter) and a fixed per-feature scale (a buffer)."""

    def __init__(self, width: int):
        super().__init__()
        self.gate = nn.Parameter(torch.zeros(width))
        self.register_buffer("scale", torch.ones(width))

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return x * torch.sigmoid(self.gate) * self.scale


class Classifier(nn.Module):
    """Linear(features, width) -> residual blocks -> gate -> Linear, Tanh, Linear(width, classes)."""

    def __init__(self, features: int = 20, width: int = 48, hidden: int = 96, classes: int = 5,
                 depth: int = 2):
        super().__init__()
        self.inp = nn.Linear(features, width)
        self.blocks = nn.ModuleList([ResidualBlock(width, hidden) for _ in range(depth)])
        self.gate = Gate(width)
        self.head = nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, classes))

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        h = self.gate(h)
        return self.head(h)


def residual(
    x: TensorF32Cpu2D,
    norm_w: TensorF32Cpu1D,
    norm_b: TensorF32Cpu1D,
    up_w: TensorF32Cpu2D,
    up_b: TensorF32Cpu1D,
    down_w: TensorF32Cpu2D,
    down_b: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    """`ResidualBlock.forward` with its weights as arguments."""
    h = F.layer_norm(x, (x.shape[-1],), norm_w, norm_b, 1e-5)
    h = F.gelu(F.linear(h, up_w, up_b))
    return x + F.linear(h, down_w, down_b)


def gated(x: TensorF32Cpu2D, gate: TensorF32Cpu1D, scale: TensorF32Cpu1D) -> TensorF32Cpu2D:
    """`Gate.forward` with its parameter and buffer as arguments."""
    return x * torch.sigmoid(gate) * scale


def classify(
    x: TensorF32Cpu2D,
    inp_w: TensorF32Cpu2D,
    inp_b: TensorF32Cpu1D,
    n0_w: TensorF32Cpu1D,
    n0_b: TensorF32Cpu1D,
    u0_w: TensorF32Cpu2D,
    u0_b: TensorF32Cpu1D,
    d0_w: TensorF32Cpu2D,
    d0_b: TensorF32Cpu1D,
    n1_w: TensorF32Cpu1D,
    n1_b: TensorF32Cpu1D,
    u1_w: TensorF32Cpu2D,
    u1_b: TensorF32Cpu1D,
    d1_w: TensorF32Cpu2D,
    d1_b: TensorF32Cpu1D,
    gate: TensorF32Cpu1D,
    scale: TensorF32Cpu1D,
    h0_w: TensorF32Cpu2D,
    h0_b: TensorF32Cpu1D,
    h2_w: TensorF32Cpu2D,
    h2_b: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    """`Classifier.forward` (depth 2) as free functions, every weight an argument."""
    h = F.linear(x, inp_w, inp_b)
    h = residual(h, n0_w, n0_b, u0_w, u0_b, d0_w, d0_b)
    h = residual(h, n1_w, n1_b, u1_w, u1_b, d1_w, d1_b)
    h = gated(h, gate, scale)
    h = torch.tanh(F.linear(h, h0_w, h0_b))
    return F.linear(h, h2_w, h2_b)
