"""Annotation markers understood by the rextio-torch backend.

They prove dtype, device and rank only; at run time, values stay
ordinary ``torch.Tensor`` objects.
This module imports neither torch nor rextio.

Generated from the marker table in `rextio-torch/src/types.rs`: edit the table, not this file.
"""

__all__ = [
    "TensorF32Cpu1D",
    "TensorF32Cpu2D",
    "TensorI64Cpu1D",
    "TensorBoolCpu1D",
    "TensorBoolCpu2D",
    "TensorF32Cuda0_1D",
    "TensorF32Cuda0_2D",
]


class _TensorMarker:
    """Base of the marker classes; never instantiated."""

    dtype = ""
    device = ""
    rank = 0

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"{cls.__name__} is an annotation marker, not a tensor constructor")


class TensorF32Cpu1D(_TensorMarker):
    """A float32 tensor of rank 1 on ``cpu``.

    Type key ``rextio-torch/tensor-f32-cpu-1d``.
    """

    dtype = "float32"
    device = "cpu"
    rank = 1


class TensorF32Cpu2D(_TensorMarker):
    """A float32 tensor of rank 2 on ``cpu``.

    Type key ``rextio-torch/tensor-f32-cpu-2d``.
    """

    dtype = "float32"
    device = "cpu"
    rank = 2


class TensorI64Cpu1D(_TensorMarker):
    """An int64 tensor of rank 1 on ``cpu``, the classification result.

    Type key ``rextio-torch/tensor-i64-cpu-1d``.
    """

    dtype = "int64"
    device = "cpu"
    rank = 1


class TensorBoolCpu1D(_TensorMarker):
    """A bool tensor of rank 1 on ``cpu``, a comparison result.

    Type key ``rextio-torch/tensor-bool-cpu-1d``.
    """

    dtype = "bool"
    device = "cpu"
    rank = 1


class TensorBoolCpu2D(_TensorMarker):
    """A bool tensor of rank 2 on ``cpu``, a comparison result.

    Type key ``rextio-torch/tensor-bool-cpu-2d``.
    """

    dtype = "bool"
    device = "cpu"
    rank = 2


class TensorF32Cuda0_1D(_TensorMarker):
    """A float32 tensor of rank 1 on ``cuda:0``, the build-only CUDA lane.

    Type key ``rextio-torch/tensor-f32-cuda0-1d``.
    Lowered only with the ``rextio-device-cuda`` authorisation of
    ``cuda-libtorch-linux-x86_64``; never moved between host and device.
    """

    dtype = "float32"
    device = "cuda:0"
    rank = 1


class TensorF32Cuda0_2D(_TensorMarker):
    """A float32 tensor of rank 2 on ``cuda:0``, the build-only CUDA lane.

    Type key ``rextio-torch/tensor-f32-cuda0-2d``.
    Lowered only with the ``rextio-device-cuda`` authorisation of
    ``cuda-libtorch-linux-x86_64``; never moved between host and device.
    """

    dtype = "float32"
    device = "cuda:0"
    rank = 2


def __getattr__(name):
    # A misspelled annotation fails like any missing module attribute, never silently.
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
