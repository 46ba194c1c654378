"""The parity gate: a lane is timed only after its result matches the eager reference.

Floating results must match within `rtol`/`atol` (float32 tolerances; NaNs must match NaNs),
integer and boolean results exactly; dtype and shape must be identical, and the lane must not
have written to its inputs (native code runs some kernels in place on temporaries).

A torch reference is compared with torch (the lane must return a `torch.Tensor`); any other
reference (a TensorFlow EagerTensor, a numpy array) is compared as numpy arrays (the lane must
return an EagerTensor or a numpy array; TFLite returns numpy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

RTOL = 1e-5
ATOL = 1e-6


@dataclass
class Verdict:
    """The gate's answer: `ok`, and a short detail (max difference, or what went wrong)."""

    ok: bool
    detail: str


def compare(out: Any, ref: Any, *, rtol: float = RTOL, atol: float = ATOL) -> Verdict:
    """Compare a lane's result with the reference result."""
    import torch

    if not isinstance(ref, torch.Tensor):
        return compare_arrays(out, ref, rtol=rtol, atol=atol)
    if not isinstance(out, torch.Tensor):
        return Verdict(False, f"returned {type(out).__name__}, expected a torch.Tensor")
    if out.dtype != ref.dtype:
        return Verdict(False, f"dtype {out.dtype}, expected {ref.dtype}")
    if tuple(out.shape) != tuple(ref.shape):
        return Verdict(False, f"shape {tuple(out.shape)}, expected {tuple(ref.shape)}")
    if out.device != ref.device:
        return Verdict(False, f"device {out.device}, expected {ref.device}")
    out_d, ref_d = out.detach(), ref.detach()
    if ref_d.is_floating_point() or ref_d.is_complex():
        if out_d.numel() == 0:
            return Verdict(True, "empty")
        if not torch.allclose(out_d, ref_d, rtol=rtol, atol=atol, equal_nan=True):
            diff = (out_d - ref_d).abs().nan_to_num(nan=float("inf")).max().item()
            return Verdict(False, f"max |diff| {diff:.3g} > rtol={rtol:g}, atol={atol:g}")
        both = torch.isfinite(out_d) & torch.isfinite(ref_d)
        diff = (out_d[both] - ref_d[both]).abs().max().item() if bool(both.any()) else 0.0
        return Verdict(True, f"max |diff| {diff:.1e}")
    if not torch.equal(out_d, ref_d):
        mismatched = int((out_d != ref_d).sum().item())
        return Verdict(False, f"{mismatched} of {out_d.numel()} values differ (exact match required)")
    return Verdict(True, "exact")


def as_array(value: Any) -> Any:
    """A numpy array of a numpy array or an EagerTensor-like value (`.numpy()`), else None."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "numpy") and not isinstance(value, type):
        try:
            arr = value.numpy()
        except Exception:
            return None
        return arr if isinstance(arr, np.ndarray) else np.asarray(arr)
    return None


def compare_arrays(out: Any, ref: Any, *, rtol: float = RTOL, atol: float = ATOL) -> Verdict:
    """`compare` for non-torch references, on numpy arrays."""
    import numpy as np

    ref_a = as_array(ref)
    if ref_a is None:
        raise TypeError(f"the reference result must be a tensor or array, got {type(ref).__name__}")
    out_a = as_array(out)
    if out_a is None:
        return Verdict(False, f"returned {type(out).__name__}, expected a tensor or numpy array")
    if out_a.dtype != ref_a.dtype:
        return Verdict(False, f"dtype {out_a.dtype}, expected {ref_a.dtype}")
    if out_a.shape != ref_a.shape:
        return Verdict(False, f"shape {out_a.shape}, expected {ref_a.shape}")
    if np.issubdtype(ref_a.dtype, np.inexact):
        if out_a.size == 0:
            return Verdict(True, "empty")
        if not np.allclose(out_a, ref_a, rtol=rtol, atol=atol, equal_nan=True):
            diff = np.nan_to_num(np.abs(out_a - ref_a), nan=np.inf).max()
            return Verdict(False, f"max |diff| {diff:.3g} > rtol={rtol:g}, atol={atol:g}")
        both = np.isfinite(out_a) & np.isfinite(ref_a)
        diff = float(np.abs(out_a[both] - ref_a[both]).max()) if both.any() else 0.0
        return Verdict(True, f"max |diff| {diff:.1e}")
    if not np.array_equal(out_a, ref_a):
        mismatched = int((out_a != ref_a).sum())
        return Verdict(False, f"{mismatched} of {out_a.size} values differ (exact match required)")
    return Verdict(True, "exact")


def _snapshot(arg: Any) -> Any:
    """A copy of a tensor argument's values (torch, numpy or EagerTensor), else None."""
    import numpy as np
    import torch

    if isinstance(arg, torch.Tensor):
        return arg.detach().clone()
    arr = as_array(arg)
    return None if arr is None else np.array(arr, copy=True)


def _unchanged(arg: Any, saved: Any) -> bool:
    import numpy as np
    import torch

    if isinstance(saved, torch.Tensor):
        return torch.equal(arg.detach(), saved)
    return bool(np.array_equal(as_array(arg), saved, equal_nan=np.issubdtype(saved.dtype, np.inexact)))


def check(
    fn: Callable[..., Any],
    args: Sequence[Any],
    ref: Any,
    *,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> Verdict:
    """Call `fn(*args)` once and compare with `ref`; an exception or a written input fails."""
    before = [_snapshot(a) for a in args]
    try:
        out = fn(*args)
    except Exception as exc:  # any failure of the lane is a verdict, never a crash of the run
        return Verdict(False, f"raised {type(exc).__name__}: {first_line(str(exc))}")
    for index, (arg, saved) in enumerate(zip(args, before)):
        if saved is not None and not _unchanged(arg, saved):
            return Verdict(False, f"wrote to input argument {index}")
    return compare(out, ref, rtol=rtol, atol=atol)


def first_line(text: str, limit: int = 160) -> str:
    """The first non-empty line of `text`, cut to `limit` characters."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""
