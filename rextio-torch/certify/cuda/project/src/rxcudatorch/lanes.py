"""The build-only CUDA E2 slice, exactly: rank2 @ rank2 + rank1 -> relu -> mean(dim=1) on cuda:0."""

from rextio_torch.types import TensorF32Cuda0_1D, TensorF32Cuda0_2D


def head(x: TensorF32Cuda0_2D, w: TensorF32Cuda0_2D, b: TensorF32Cuda0_1D) -> TensorF32Cuda0_1D:
    h = x @ w
    h = h + b
    h = h.relu()
    return h.mean(dim=1)
