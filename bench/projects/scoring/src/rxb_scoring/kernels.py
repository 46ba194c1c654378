"""Small-batch scoring: normalize -> linear -> relu/tanh rounds -> linear -> softmax -> argmax.

The workload of `cargo xtask bench` (features 32, hidden 32, classes 8, 4 rounds). `classify`
is the timed function; `probabilities` is the same pipeline without the argmax, so the harness
can check the probabilities before it trusts exact labels.
"""

import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


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
    hidden = F.linear(normalized, w1, b1)
    for step in range(rounds):
        if step % 2 == 0:
            hidden = hidden.relu()
        else:
            hidden = hidden.tanh()
    logits = F.linear(hidden, w2, b2)
    return torch.softmax(logits, dim=1)


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
    hidden = F.linear(normalized, w1, b1)
    for step in range(rounds):
        if step % 2 == 0:
            hidden = hidden.relu()
        else:
            hidden = hidden.tanh()
    logits = F.linear(hidden, w2, b2)
    probs = torch.softmax(logits, dim=1)
    return torch.argmax(probs, dim=1)


def boundary(
    x: TensorF32Cpu2D,
    mean: TensorF32Cpu1D,
    scale: TensorF32Cpu1D,
    w1: TensorF32Cpu2D,
    b1: TensorF32Cpu1D,
    w2: TensorF32Cpu2D,
    b2: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    """Seven tensor arguments, one op, one output: what the bench reports as the native
    boundary's cost per call (argument checks, the op, allocating and wrapping the output)."""
    return x.relu()


def boundary_args(
    x: TensorF32Cpu2D,
    mean: TensorF32Cpu1D,
    scale: TensorF32Cpu1D,
    w1: TensorF32Cpu2D,
    b1: TensorF32Cpu1D,
    w2: TensorF32Cpu2D,
    b2: TensorF32Cpu1D,
) -> TensorF32Cpu2D:
    """`boundary` without its output: the seven arguments checked and `x` returned as it came
    (the same object), so the bench can split the boundary's cost into arguments and output.
    (`x.dim()` is there because a function using no plugin operation stays Python.)"""
    if x.dim() != 2:
        return x
    return x
