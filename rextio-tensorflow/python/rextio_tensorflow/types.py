"""Annotation markers understood by the rextio-tensorflow backend.

They prove dtype, device and rank only; runtime values stay ordinary TensorFlow EagerTensors
(``tf.Tensor``) on ``CPU:0``. This module imports neither tensorflow nor rextio.
"""

__all__ = ["TensorF32Cpu1D", "TensorF32Cpu2D", "TensorI64Cpu1D", "TensorF32Gpu0_1D", "TensorF32Gpu0_2D"]


class _TensorMarker:
    """Base of the marker classes; never instantiated."""

    dtype = "float32"
    device = "CPU:0"
    rank = 0

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"{cls.__name__} is an annotation marker, not a tensor constructor")


class TensorF32Cpu1D(_TensorMarker):
    """A float32 CPU tensor of rank 1 (``rextio-tensorflow/tensor-f32-cpu-1d``)."""

    rank = 1


class TensorF32Cpu2D(_TensorMarker):
    """A float32 CPU tensor of rank 2 (``rextio-tensorflow/tensor-f32-cpu-2d``)."""

    rank = 2


class TensorI64Cpu1D(_TensorMarker):
    """An int64 CPU tensor of rank 1, the default ``tf.argmax`` result (``rextio-tensorflow/tensor-i64-cpu-1d``)."""

    dtype = "int64"
    rank = 1


class TensorF32Gpu0_1D(_TensorMarker):
    """A float32 rank-1 tensor already resident on the eager context's ``GPU:0``
    (``rextio-tensorflow/tensor-f32-gpu0-1d``; build-only CUDA lane, lowered only with the
    ``rextio-device-cuda`` authorisation of ``cuda-tensorflow-tfe-linux-x86_64``)."""

    device = "GPU:0"
    rank = 1


class TensorF32Gpu0_2D(_TensorMarker):
    """A float32 rank-2 tensor already resident on the eager context's ``GPU:0``
    (``rextio-tensorflow/tensor-f32-gpu0-2d``; build-only CUDA lane, lowered only with the
    ``rextio-device-cuda`` authorisation of ``cuda-tensorflow-tfe-linux-x86_64``)."""

    device = "GPU:0"
    rank = 2


def __getattr__(name):
    # A misspelled annotation fails like any missing module attribute, never silently.
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
