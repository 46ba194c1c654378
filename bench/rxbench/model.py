"""Result records of a benchmark run and their JSON form."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: Lanes in report order; `native` is the reference of every ratio.
LANES: tuple[str, ...] = (
    "native", "native_free", "floor", "eager", "inference_mode", "jit", "compile", "tf_function",
    "tflite", "onnxruntime", "numpy", "fallback",
)

#: The lanes of each framework's workloads (a subset of `LANES`, in its order).
FRAMEWORK_LANES: dict[str, tuple[str, ...]] = {
    "torch": ("native", "floor", "eager", "inference_mode", "jit", "compile", "onnxruntime",
              "numpy", "fallback"),
    "tensorflow": ("native", "floor", "eager", "tf_function", "tflite", "fallback"),
}

#: The lanes of an `nn.Module` workload (`Workload.model` set): the model called as `model(x)`
#: in each form, and the native free-function twin of its forward.
MODULE_LANES: tuple[str, ...] = (
    "native", "native_free", "eager", "inference_mode", "jit", "compile", "onnxruntime",
)

#: Column titles of the lanes.
LANE_TITLES: dict[str, str] = {
    "native": "native",
    "native_free": "native free fns",
    "floor": "floor",
    "eager": "eager",
    "inference_mode": "inference_mode",
    "jit": "jit.script",
    "compile": "torch.compile",
    "tf_function": "tf.function",
    "tflite": "TFLite",
    "onnxruntime": "ONNX Runtime",
    "numpy": "numpy",
    "fallback": "fallback",
}

#: One-line descriptions of the lanes (report legend).
LANE_DESCRIPTIONS: dict[str, str] = {
    "native": "the rextio-built function (a native builtin) called from Python; for an nn.Module "
              "workload, model(x) of the built package's class under torch.inference_mode(), "
              "each call checked native on __rextio_method_stats__() (the other lanes call the "
              "eager model; see How lanes were built)",
    "native_free": "(nn.Module workloads) the native free-function twin of the model's forward, "
                   "every weight an argument (the module's detached state_dict), timed block "
                   "under torch.inference_mode(); its ratio is free / module",
    "floor": "the same op sequence called from Rust (libtorch, or TFE ops for TensorFlow), no "
             "Python boundary per call",
    "eager": "the original Python function (torch: default grad mode; TensorFlow: eager)",
    "inference_mode": "the original Python function, timed block under torch.inference_mode()",
    "jit": "torch.jit.script of the function (marker annotations rewritten to torch.Tensor)",
    "compile": "torch.compile(function, dynamic=False), warm; compile time reported separately",
    "tf_function": "tf.function of the function with a fixed input signature per cell, warm",
    "tflite": "tf.lite.TFLiteConverter of that tf.function, Interpreter(num_threads=1): "
              "set_tensor, invoke, get_tensor",
    "onnxruntime": "torch.onnx.export of the function (Python loops unrolled for the cell), "
                   "InferenceSession with 1 intra-op and 1 inter-op thread, CPU provider; "
                   "timed: session.run on numpy views of the inputs",
    "numpy": "a hand-written numpy twin of the function (rxbench/twins.py, float32), on numpy "
             "views of the inputs",
    "fallback": "the Python body kept in the built wrapper (__rextio_fallback__)",
}

TIMED = "timed"
WRONG = "wrong"
UNAVAILABLE = "unavailable"
NOT_NATIVE = "not native"
SKIPPED = "skipped"

#: Every status a lane can end in; only `timed` lanes have samples.
STATUSES: tuple[str, ...] = (TIMED, WRONG, UNAVAILABLE, NOT_NATIVE, SKIPPED)

#: Short forms for table cells.
STATUS_SHORT: dict[str, str] = {
    WRONG: "WRONG",
    UNAVAILABLE: "unavailable",
    NOT_NATIVE: "not native (fallback)",
    SKIPPED: "skipped",
}


@dataclass
class Ratio:
    """`median(other) / median(native)` with a bootstrap interval (> 1: native is faster)."""

    value: float
    lo: float
    hi: float


@dataclass
class LaneResult:
    """One lane in one cell: its status and, when timed, its samples and statistics."""

    lane: str
    status: str
    reason: str = ""
    parity: str = ""
    per_call_ns: list[float] = field(default_factory=list)
    median_ns: float | None = None
    q1_ns: float | None = None
    q3_ns: float | None = None
    ratio: Ratio | None = None
    compile_s: float | None = None
    #: How the lane was built (exporter, converter), when that matters for reading it.
    note: str = ""

    def __post_init__(self) -> None:
        if self.lane not in LANES:
            raise ValueError(f"unknown lane {self.lane!r}; expected one of {LANES}")
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}; expected one of {STATUSES}")


@dataclass
class CellResult:
    """One shape of a workload with every lane's result."""

    label: str
    params: dict[str, int]
    calls_per_block: int = 0
    lanes: dict[str, LaneResult] = field(default_factory=dict)

    @property
    def batch(self) -> int:
        """The batch size of the cell."""
        return int(self.params.get("batch", 0))


@dataclass
class WorkloadResult:
    """A workload (one function of one rextio project) over its cells."""

    name: str
    title: str
    function: str
    route: str
    cells: list[CellResult] = field(default_factory=list)
    #: `torch` or `tensorflow`: which lanes apply (`FRAMEWORK_LANES`).
    framework: str = "torch"
    #: Why the workload was not run (e.g. TensorFlow is not installed); empty when it ran.
    skipped: str = ""
    #: The workload's performance targets (`Workload.targets`), recorded with the run so the
    #: report can show each one met or missed; empty for workloads without targets.
    targets: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunResult:
    """A whole run: settings and environment (`meta`) and the workloads."""

    meta: dict[str, Any]
    workloads: list[WorkloadResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (`target/bench/bench.json`)."""
        return {"schema": 2, **asdict(self)}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> "RunResult":
        """Inverse of `to_dict`."""
        workloads = []
        for w in data["workloads"]:
            cells = []
            for c in w["cells"]:
                lanes = {}
                for name, lr in c["lanes"].items():
                    ratio = lr.get("ratio")
                    lanes[name] = LaneResult(**{**lr, "ratio": Ratio(**ratio) if ratio else None})
                cells.append(CellResult(label=c["label"], params=dict(c["params"]),
                                        calls_per_block=c.get("calls_per_block", 0), lanes=lanes))
            workloads.append(WorkloadResult(name=w["name"], title=w["title"], function=w["function"],
                                            route=w.get("route", ""), cells=cells,
                                            framework=w.get("framework", "torch"),
                                            skipped=w.get("skipped", ""),
                                            targets=dict(w.get("targets", {}))))
        return RunResult(meta=dict(data.get("meta", {})), workloads=workloads)

    def lanes(self) -> tuple[str, ...]:
        """The lanes any cell of the run has, in report order (the table's columns)."""
        present = {lane for w in self.workloads for c in w.cells for lane in c.lanes}
        return tuple(lane for lane in LANES if lane in present)
