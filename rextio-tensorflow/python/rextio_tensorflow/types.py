"""Annotation markers understood by the rextio-tensorflow backend.

They prove dtype, device and rank only; at run time, values stay
ordinary TensorFlow EagerTensors (``tf.Tensor``).
This module imports neither tensorflow nor rextio.

Generated from the marker table in `rextio-tensorflow/src/types.rs`: edit the table, not this file.
"""

__all__ = [
    "TensorF32Cpu1D",
    "TensorF32Cpu2D",
    "TensorI64Cpu1D",
    "TensorF32Gpu0_1D",
    "TensorF32Gpu0_2D",
]


class _TensorMarker:
    """Base of the marker classes; never instantiated."""

    dtype = ""
    device = ""
    rank = 0

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"{cls.__name__} is an annotation marker, not a tensor constructor")


class TensorF32Cpu1D(_TensorMarker):
    """A float32 tensor of rank 1 on ``CPU:0``.

    Type key ``rextio-tensorflow/tensor-f32-cpu-1d``.
    """

    dtype = "float32"
    device = "CPU:0"
    rank = 1


class TensorF32Cpu2D(_TensorMarker):
    """A float32 tensor of rank 2 on ``CPU:0``.

    Type key ``rextio-tensorflow/tensor-f32-cpu-2d``.
    """

    dtype = "float32"
    device = "CPU:0"
    rank = 2


class TensorI64Cpu1D(_TensorMarker):
    """An int64 tensor of rank 1 on ``CPU:0``, the default ``tf.argmax`` result.

    Type key ``rextio-tensorflow/tensor-i64-cpu-1d``.
    """

    dtype = "int64"
    device = "CPU:0"
    rank = 1


class TensorF32Gpu0_1D(_TensorMarker):
    """A float32 tensor of rank 1 on ``GPU:0``, the build-only CUDA lane.

    Type key ``rextio-tensorflow/tensor-f32-gpu0-1d``.
    Lowered only with the ``rextio-device-cuda`` authorisation of
    ``cuda-tensorflow-tfe-linux-x86_64``; never moved between host and device.
    """

    dtype = "float32"
    device = "GPU:0"
    rank = 1


class TensorF32Gpu0_2D(_TensorMarker):
    """A float32 tensor of rank 2 on ``GPU:0``, the build-only CUDA lane.

    Type key ``rextio-tensorflow/tensor-f32-gpu0-2d``.
    Lowered only with the ``rextio-device-cuda`` authorisation of
    ``cuda-tensorflow-tfe-linux-x86_64``; never moved between host and device.
    """

    dtype = "float32"
    device = "GPU:0"
    rank = 2


def __getattr__(name):
    # A misspelled annotation fails like any missing module attribute, never silently.
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
