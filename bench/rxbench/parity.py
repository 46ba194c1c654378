"""The parity gate: a lane is timed only after its result matches the eager reference.

Floating results must match within `rtol`/`atol` (float32 tolerances; NaNs must match NaNs),
integer and boolean results exactly; dtype and shape must be identical, and the lane must not
have written to its inputs (native code runs some kernels in place on temporaries).
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
        raise TypeError(f"the reference result must be a torch.Tensor, got {type(ref).__name__}")
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


def check(
    fn: Callable[..., Any],
    args: Sequence[Any],
    ref: Any,
    *,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> Verdict:
    """Call `fn(*args)` once and compare with `ref`; an exception or a written input fails."""
    import torch

    before = [a.detach().clone() if isinstance(a, torch.Tensor) else None for a in args]
    try:
        out = fn(*args)
    except Exception as exc:  # any failure of the lane is a verdict, never a crash of the run
        return Verdict(False, f"raised {type(exc).__name__}: {first_line(str(exc))}")
    for index, (arg, saved) in enumerate(zip(args, before)):
        if saved is not None and not torch.equal(arg.detach(), saved):
            return Verdict(False, f"wrote to input argument {index}")
    return compare(out, ref, rtol=rtol, atol=atol)


def first_line(text: str, limit: int = 160) -> str:
    """The first non-empty line of `text`, cut to `limit` characters."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""
