"""`nn.Module` workloads: the models every lane calls, the free twin's arguments, the native-path
counters and the TorchScript lane.

One model per workload and run: the eager class (from the project's source) is built with a
seeded init and then every float entry of its state is moved (so the gate is not sigmoid(0),
the scale not 1, LayerNorm's affine not the identity), and put in eval mode. The built class
gets the same weights with `load_state_dict`. Both keep `requires_grad=True` parameters, as a
user's model does: the native method runs its native body only where no grad is recorded
(`torch.inference_mode()`), and the eager lane without a grad context records autograd.

The built package counts, per method, how often the native body ran and why the original ran
instead (`__rextio_method_stats__()`); the harness reads those counters around the parity call
and around the timed blocks, and never reports a native number for calls that ran the original.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from . import jitsrc

#: The key of the native body's count in `__rextio_method_stats__()[qualname]`.
NATIVE_KEY = "native"


def perturb(model: Any, seed: int, std: float = 0.2) -> None:
    """Add seeded noise to every float entry of `model`'s state (parameters and buffers)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for t in model.state_dict().values():
            if t.is_floating_point():
                t.add_(torch.randn(t.shape, generator=g) * std)


def make_model(cls: type, seed: int) -> Any:
    """`cls()` with a seeded init, perturbed state, in eval mode."""
    import torch

    torch.manual_seed(seed)
    model = cls()
    perturb(model, seed + 1)
    return model.eval()


def same_weights(cls: type, source: Any) -> Any:
    """`cls()` holding `source`'s state (strict `load_state_dict`), in eval mode."""
    model = cls()
    model.load_state_dict(source.state_dict())
    return model.eval()


def free_args(model: Any) -> tuple[Any, ...]:
    """The free-function twin's weight arguments: `model.state_dict()`'s tensors in order
    (detached: the twin is timed as inference on given tensors)."""
    return tuple(t.detach() for t in model.state_dict().values())


def path_counts(stats: Callable[[], Mapping[str, Mapping[str, int]]] | None,
                qualname: str) -> dict[str, int]:
    """`{"native": n, "<reason>": n}` of `qualname` from a built module's
    `__rextio_method_stats__` (empty when the module has none)."""
    if stats is None:
        return {}
    return {str(k): int(v) for k, v in dict(stats()).get(qualname, {}).items()}


def delta(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    """The counters that moved, and by how much."""
    keys = sorted(set(before) | set(after))
    moved = {k: int(after.get(k, 0)) - int(before.get(k, 0)) for k in keys}
    return {k: v for k, v in moved.items() if v}


def not_native_reason(moved: Mapping[str, int], calls: int) -> str:
    """Why `calls` calls of a native lane did not all run the native body ("" when they did):
    the counters must show exactly `calls` native runs and nothing else."""
    native = int(moved.get(NATIVE_KEY, 0))
    others = {k: v for k, v in moved.items() if k != NATIVE_KEY}
    if native == calls and not others:
        return ""
    if others:
        why = "; ".join(f"{v}× {k}" for k, v in sorted(others.items(), key=lambda kv: -kv[1]))
        return f"{calls - native} of {calls} calls ran the original Python method: {why}"
    return f"the native counter moved by {native} for {calls} calls"


class CountingBlock:
    """A timing block that also counts the calls it made (warm-up and rounds)."""

    def __init__(self, block: Callable[[int], int]) -> None:
        self.block = block
        self.calls = 0

    def __call__(self, k: int) -> int:
        self.calls += k
        return self.block(k)


def script_model(eager: Any, cls_name: str, source: Path, jit_dir: Path, module_name: str,
                 example: tuple[Any, ...]) -> tuple[Any, str]:
    """The TorchScript lane's model and a note saying how it was made.

    `torch.jit.script(eager)` first. TorchScript reads the marker annotations
    (`TensorF32Cpu2D`) as class types and refuses the model; then the same class from a copy of
    the source with the markers rewritten to `torch.Tensor` (`jitsrc`, as the function
    workloads' jit lane), holding `eager`'s weights, is scripted; `torch.jit.trace(eager,
    example)` is the last resort. Raises when all three fail.
    """
    import torch

    errors: list[str] = []
    with warnings.catch_warnings():
        # torch 2.13 deprecates TorchScript; it is still a lane people ship with.
        warnings.simplefilter("ignore")
        try:
            return torch.jit.script(eager), "torch.jit.script(model)"
        except Exception as exc:
            errors.append(f"torch.jit.script(model) failed: {_first(exc)}")
        try:
            copy = jitsrc.load_module(source, jit_dir, module_name)
            twin = same_weights(getattr(copy, cls_name), eager)
            scripted = torch.jit.script(twin)
            return scripted, (f"{errors[0]}; scripted the same class from a copy whose marker "
                              "annotations are rewritten to torch.Tensor (rxbench/jitsrc.py), "
                              "same weights")
        except Exception as exc:
            errors.append(f"scripting the rewritten copy failed: {_first(exc)}")
        try:
            traced = torch.jit.trace(eager, example, check_trace=False)
            return traced, "; ".join(errors) + "; torch.jit.trace(model, x) instead"
        except Exception as exc:
            errors.append(f"torch.jit.trace failed: {_first(exc)}")
    raise RuntimeError("; ".join(errors))


def _first(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    # TorchScript's messages start with the callee's schema; the reason is the "Expected" line.
    text = next((line for line in lines if line.startswith("Expected")), lines[0] if lines else "")
    # Addresses differ per process: keep the note stable across runs.
    text = re.sub(r" \(of Python compilation unit at: 0x[0-9a-fA-F]+\)", "", text)
    if len(text) > 160:
        text = text[:159] + "…"
    return f"{type(exc).__name__}: {text}"
