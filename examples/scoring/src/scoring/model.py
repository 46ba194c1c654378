"""The scoring computation as PyTorch users write models: an `nn.Module` class. `rextio build`
compiles its typed methods; `__init__` stays Python, and `model(x)` runs natively under
`torch.inference_mode()` (see docs/modules.md)."""

import torch
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D
from torch import nn


class Block(nn.Module):
    """A residual block: LayerNorm, Linear, GELU, added to its input."""

    def __init__(self, width: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)
        self.act = nn.GELU()

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return x + self.act(self.fc(self.norm(x)))


class Scorer(nn.Module):
    def __init__(self, features: int, width: int, depth: int = 2):
        super().__init__()
        self.inp = nn.Linear(features, width)
        self.blocks = nn.ModuleList([Block(width) for _ in range(depth)])

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu1D:
        h = torch.relu(self.inp(x))
        for block in self.blocks:
            h = block(h)
        return h.mean(dim=1, keepdim=False)
