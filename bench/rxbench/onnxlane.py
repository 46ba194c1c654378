"""The ONNX Runtime lane: a torch workload exported with `torch.onnx.export`, run by ORT.

`export` wraps the eager function in a module whose graph inputs are the cell's tensors; the
cell's int arguments (`rounds`, `depth`, `phase`) are closed over, so the exporter's trace
unrolls the Python `for`/`if` for exactly this cell (one graph per cell, like the static shapes
ORT is normally given). The TorchScript-trace exporter (`dynamo=False`) is tried first: it
exports these graphs in milliseconds; the dynamo exporter (`dynamo=True`, needs onnxscript) is
the fallback, 2-5 s per cell. `OrtLane.note` says which one built the lane. An `nn.Module`
(a module workload's model, tensor arguments only) is exported as it is, its weights as the
graph's initializers.

The session runs with one intra-op and one inter-op thread on the CPU execution provider. The
timed call is `session.run([output], feed)` with `feed` holding numpy views of the cell's
torch tensors (what an ORT user with numpy inputs pays); the parity call builds its feed from
the arguments it is given and returns a torch tensor.
"""

from __future__ import annotations

import io
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass
class OrtLane:
    """An exported, loaded session for one cell."""

    session: Any
    input_names: list[str]
    output_name: str
    #: The exporter and what it unrolled.
    note: str
    #: Export plus session creation, seconds.
    seconds: float

    def feed(self, args: Sequence[Any]) -> dict[str, Any]:
        """The session's inputs: numpy views of the tensor arguments, in order."""
        tensors = [a for a in args if hasattr(a, "numpy")]
        return {name: t.detach().numpy() for name, t in zip(self.input_names, tensors)}

    def call(self, *args: Any) -> Any:
        """Run on `args` (torch tensors and ints) and return a torch tensor (the parity call)."""
        import torch

        return torch.from_numpy(self.session.run([self.output_name], self.feed(args))[0])


def split_args(args: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """`(tensors, ints)`: the workloads put all tensors before the int arguments."""
    import torch

    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    rest = list(args[len(tensors):])
    if any(isinstance(a, torch.Tensor) for a in rest) or len(tensors) + len(rest) != len(args):
        raise ValueError("the workload's tensor arguments must come before its int arguments")
    return tensors, rest


def export_bytes(fn: Callable[..., Any], args: Sequence[Any]) -> tuple[bytes, str]:
    """The ONNX model of `fn` on `args` (ints closed over) and a note naming the exporter."""
    import torch

    tensors, ints = split_args(args)

    class Closed(torch.nn.Module):
        def forward(self, *t: Any) -> Any:
            return fn(*t, *ints)

    exported: Any = fn if isinstance(fn, torch.nn.Module) and not ints else Closed()

    unrolled = f"; Python loops unrolled for the cell's ints {ints}" if ints else ""
    errors = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            buf = io.BytesIO()
            torch.onnx.export(exported, tuple(tensors), buf, dynamo=False, opset_version=17)
            return buf.getvalue(), f"torch.onnx.export(dynamo=False, opset 17){unrolled}"
        except Exception as exc:  # the dynamo exporter is the fallback
            errors.append(f"dynamo=False: {type(exc).__name__}: {exc}".splitlines()[0])
        try:
            program = torch.onnx.export(exported, tuple(tensors), dynamo=True, optimize=True,
                                        verbose=False)
            return (program.model_proto.SerializeToString(),
                    f"torch.onnx.export(dynamo=True) after {errors[0]}{unrolled}")
        except Exception as exc:
            errors.append(f"dynamo=True: {type(exc).__name__}: {exc}".splitlines()[0])
    raise RuntimeError("torch.onnx.export failed: " + "; ".join(errors))


def session_options(threads: int = 1) -> Any:
    """ORT session options: `threads` intra-op threads, one inter-op thread, sequential."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return so


def build(fn: Callable[..., Any], args: Sequence[Any], threads: int = 1) -> OrtLane:
    """Export `fn` for this cell and open a CPU session."""
    import onnxruntime as ort

    start = time.perf_counter()
    model, note = export_bytes(fn, args)
    session = ort.InferenceSession(model, session_options(threads),
                                   providers=["CPUExecutionProvider"])
    inputs = [i.name for i in session.get_inputs()]
    outputs = [o.name for o in session.get_outputs()]
    tensors, _ = split_args(args)
    if len(inputs) != len(tensors) or len(outputs) != 1:
        raise RuntimeError(f"exported graph has inputs {inputs} and outputs {outputs}; expected "
                           f"{len(tensors)} inputs and one output")
    return OrtLane(session, inputs, outputs[0], note, time.perf_counter() - start)
