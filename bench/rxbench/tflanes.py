"""TensorFlow for the benchmark: loading it (one thread), and the tf.function and TFLite lanes.

TensorFlow is optional: `load()` imports it once and sets one intra-op and one inter-op thread
before any op runs; when the import fails the TensorFlow workloads are reported skipped with the
reason (`bench.json` says so), the rest of the run goes on.

- `tf_function`: `tf.function` of the eager function with a fixed input signature for the cell
  (the cell's tensor shapes; its int arguments such as `rounds` are closed over, so the trace
  unrolls the Python loop), traced before timing. The timed call passes the cell's tensors.
- `tflite`: that tf.function's concrete function converted by `tf.lite.TFLiteConverter`
  (default optimizations, float32), loaded in `tf.lite.Interpreter(num_threads=1)` (its default
  XNNPACK delegate for CPU). The timed call is `set_tensor` per input (numpy copies of the cell's
  tensors made once), `invoke`, `get_tensor` of the output.
"""

from __future__ import annotations

import os
import re
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

_STATE: dict[str, Any] = {}


def load(threads: int = 1) -> tuple[Any, str]:
    """`(tensorflow module, "")`, or `(None, why not)`; threads are set on the first call."""
    if "tf" in _STATE:
        return _STATE["tf"], _STATE["reason"]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        # Triton (torch.compile's) imported after TensorFlow crashes the process (both carry
        # LLVM); imported first, both work. So it goes first whenever it is installed.
        import triton.runtime  # noqa: F401
    except Exception:
        pass
    try:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        _STATE.update(tf=tf, reason="")
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        _STATE.update(tf=None, reason=f"`import tensorflow` failed: {type(exc).__name__}: {first}")
    return _STATE["tf"], _STATE["reason"]


def split_args(args: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """`(tensors, ints)`: the workloads put all tensors before the int arguments."""
    tensors = [a for a in args if hasattr(a, "numpy")]
    rest = list(args[len(tensors):])
    if any(hasattr(a, "numpy") for a in rest):
        raise ValueError("the workload's tensor arguments must come before its int arguments")
    return tensors, rest


@dataclass
class TfFunctionLane:
    """A traced tf.function for one cell."""

    fn: Any
    tensors: list[Any]
    seconds: float
    note: str

    def call(self, *args: Any) -> Any:
        """The parity call: the full argument list, ints ignored (closed over)."""
        return self.fn(*args[: len(self.tensors)])


def tf_function(eager_fn: Callable[..., Any], args: Sequence[Any]) -> TfFunctionLane:
    """`tf.function` of `eager_fn` with this cell's input signature, traced once."""
    tf, reason = load()
    if tf is None:
        raise RuntimeError(reason)
    tensors, ints = split_args(args)
    signature = [tf.TensorSpec(t.shape, t.dtype, name=f"arg{i}") for i, t in enumerate(tensors)]

    def closed(*t: Any) -> Any:
        return eager_fn(*t, *ints)

    start = time.perf_counter()
    fn = tf.function(closed, input_signature=signature)
    fn.get_concrete_function()
    fn(*tensors)
    unrolled = f"; Python loops unrolled for the cell's ints {ints}" if ints else ""
    return TfFunctionLane(fn, tensors, time.perf_counter() - start,
                          f"tf.function(input_signature=<cell shapes>){unrolled}")


@dataclass
class TfliteLane:
    """A converted model in an interpreter, for one cell."""

    interpreter: Any
    #: Interpreter input index of each tensor argument, in argument order.
    inputs: list[int]
    output: int
    seconds: float
    note: str

    def run(self, arrays: Sequence[Any]) -> Any:
        """set_tensor per input, invoke, get_tensor (the timed call)."""
        it = self.interpreter
        for index, array in zip(self.inputs, arrays):
            it.set_tensor(index, array)
        it.invoke()
        return it.get_tensor(self.output)

    def call(self, *args: Any) -> Any:
        """The parity call: the full argument list (tensors converted), a numpy array out."""
        tensors, _ = split_args(args)
        return self.run([t.numpy() for t in tensors])


_ARG = re.compile(r"arg(\d+)")


def tflite(lane: TfFunctionLane, threads: int = 1) -> TfliteLane:
    """Convert the tf.function's concrete function and load it with `threads` threads."""
    tf, reason = load()
    if tf is None:
        raise RuntimeError(reason)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tf.lite.Interpreter's deprecation notice
        converter = tf.lite.TFLiteConverter.from_concrete_functions(
            [lane.fn.get_concrete_function()], lane.fn)
        model = converter.convert()
        interpreter = tf.lite.Interpreter(model_content=model, num_threads=threads)
    interpreter.allocate_tensors()
    inputs: dict[int, int] = {}
    for d in interpreter.get_input_details():
        m = _ARG.search(d["name"])
        if m is None:
            raise RuntimeError(f"TFLite input {d['name']!r} does not name its argument")
        inputs[int(m.group(1))] = d["index"]
    outputs = interpreter.get_output_details()
    if sorted(inputs) != list(range(len(lane.tensors))) or len(outputs) != 1:
        raise RuntimeError(f"converted model has inputs {sorted(inputs)} and {len(outputs)} "
                           f"outputs; expected {len(lane.tensors)} inputs and one output")
    return TfliteLane(interpreter, [inputs[i] for i in range(len(lane.tensors))],
                      outputs[0]["index"], time.perf_counter() - start,
                      f"TFLiteConverter.from_concrete_functions, Interpreter(num_threads={threads})")
