"""Annotation markers understood by the rextio-torch backend.

They prove dtype, device and rank only; runtime values stay ordinary ``torch.Tensor`` objects.
This module imports neither torch nor rextio.
"""

__all__ = ["TensorF32Cpu1D", "TensorF32Cpu2D", "TensorI64Cpu1D", "TensorBoolCpu1D", "TensorBoolCpu2D",
           "TensorF32Cuda0_1D", "TensorF32Cuda0_2D"]


class _TensorMarker:
    """Base of the marker classes; never instantiated."""

    dtype = "float32"
    device = "cpu"
    rank = 0

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"{cls.__name__} is an annotation marker, not a tensor constructor")


class TensorF32Cpu1D(_TensorMarker):
    """A float32 CPU tensor of rank 1 (``rextio-torch/tensor-f32-cpu-1d``)."""

    rank = 1


class TensorF32Cpu2D(_TensorMarker):
    """A float32 CPU tensor of rank 2 (``rextio-torch/tensor-f32-cpu-2d``)."""

    rank = 2


class TensorI64Cpu1D(_TensorMarker):
    """An int64 CPU tensor of rank 1, the classification result (``rextio-torch/tensor-i64-cpu-1d``)."""

    dtype = "int64"
    rank = 1


class TensorBoolCpu1D(_TensorMarker):
    """A bool CPU tensor of rank 1, a comparison result (``rextio-torch/tensor-bool-cpu-1d``)."""

    dtype = "bool"
    rank = 1


class TensorBoolCpu2D(_TensorMarker):
    """A bool CPU tensor of rank 2, a comparison result (``rextio-torch/tensor-bool-cpu-2d``)."""

    dtype = "bool"
    rank = 2


class TensorF32Cuda0_1D(_TensorMarker):
    """A float32 tensor of rank 1 already resident on ``cuda:0`` (``rextio-torch/tensor-f32-cuda0-1d``).

    Build-only CUDA lane: lowered only with the ``rextio-device-cuda`` authorisation of
    ``cuda-libtorch-linux-x86_64``; never moved between host and device.
    """

    device = "cuda:0"
    rank = 1


class TensorF32Cuda0_2D(_TensorMarker):
    """A float32 tensor of rank 2 already resident on ``cuda:0`` (``rextio-torch/tensor-f32-cuda0-2d``).

    Build-only CUDA lane: lowered only with the ``rextio-device-cuda`` authorisation of
    ``cuda-libtorch-linux-x86_64``; never moved between host and device.
    """

    device = "cuda:0"
    rank = 2
