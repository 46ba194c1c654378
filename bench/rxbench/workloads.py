"""The benchmark's workloads: which function of which rextio project, its cells and inputs.

Each workload is one function of a real rextio project that `cargo xtask bench` builds with the
product (`rextio build`) under `target/bench/projects/<project>/`:

- Phase A: `F.linear -> .relu() -> .mean(dim=1)` (`tests/fixtures/phase_a`);
- Phase B: the weight-tied deep MLP with runtime `for`/`if` (`tests/fixtures/control_flow`);
- scoring: normalize -> linear -> relu/tanh rounds -> linear -> softmax -> argmax
  (`bench/projects/scoring`);
- module-mlp: an `nn.Module` classifier (LayerNorm, GELU, residual blocks in a ModuleList, a
  Parameter/buffer gate, a Sequential head) called as `model(x)`, next to its free-function twin
  (`bench/projects/modules`; `bench/run.py` builds it when `cargo xtask bench` did not);
- TensorFlow (optional: skipped when `import tensorflow` fails): Phase A as
  `tf.matmul -> tf.nn.bias_add -> tf.nn.relu -> tf.reduce_mean(axis=1)`
  (`bench/projects/tf_phase_a`) and the scoring pipeline (`bench/projects/tf_scoring`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Cell:
    """One shape of a workload; `params` always has `batch`."""

    label: str
    params: dict[str, int]
    #: Whether the torch.compile lane runs on this cell under `run.py --compile-subset`.
    compile_subset: bool = False

    @property
    def batch(self) -> int:
        """The batch size."""
        return self.params["batch"]


@dataclass(frozen=True)
class Target:
    """A performance target of a workload, checked against its measured ratios.

    `key` is a lane, whose target is on `other / native` (the ratio tables' value: how many
    times faster native is), or `"module/free"`: the module's native median over the native
    free-function twin's (what the module form costs). `values` are `(batch, bound)` pairs;
    batch 0 applies to every batch without its own pair.
    """

    key: str
    #: `">="`, `">"` or `"<="`: how the measured ratio must compare with the bound.
    op: str
    values: tuple[tuple[int, float], ...]

    def __post_init__(self) -> None:
        if self.op not in TARGET_OPS:
            raise ValueError(f"unknown target op {self.op!r}; expected one of {TARGET_OPS}")

    def bound(self, batch: int) -> float | None:
        """The bound at `batch`, or None when the target says nothing about it."""
        table = dict(self.values)
        return table.get(batch, table.get(0))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (`WorkloadResult.targets[key]`)."""
        return {"op": self.op, "values": [[b, v] for b, v in self.values]}


#: How a target compares the measured ratio with its bound.
TARGET_OPS: tuple[str, ...] = (">=", ">", "<=")

#: The key of the module-over-free-function target (`Target.key`).
MODULE_OVER_FREE = "module/free"


@dataclass(frozen=True)
class Workload:
    """A function of a built rextio project, with its floor twin and its cells."""

    name: str
    title: str
    #: Directory name of the project under the projects directory.
    project: str
    #: Source file of the module, relative to the project root.
    source: str
    #: Dotted module name in the built package.
    module: str
    #: The timed function.
    function: str
    #: Base name of the floor lane's functions (`<floor>` and `<floor>_loop`).
    floor: str
    cells: tuple[Cell, ...]
    make_inputs: Callable[[Cell, int], tuple[Any, ...]]
    #: Extra (function, floor function) pairs the native and floor lanes must also match.
    aux: tuple[tuple[str, str], ...] = field(default=())
    #: The function's hand-written numpy twin in `rxbench.twins` (torch workloads; "" for none).
    twin: str = ""
    #: `torch` or `tensorflow`: which lanes apply (`model.FRAMEWORK_LANES`).
    framework: str = "torch"
    #: An `nn.Module` workload: the class in `module` whose `function` (its method, `forward`)
    #: is timed as `model(x)`; its lanes are `model.MODULE_LANES`. "" for a function workload.
    model: str = ""
    #: The native free-function twin of the model's forward in `module` (module workloads):
    #: called as `free(x, *model.state_dict().values())`.
    free: str = ""
    #: The project's sources under the workspace root, for `bench/run.py` to copy and build
    #: when `builds.json` does not list the project ("" for the projects xtask builds).
    source_dir: str = ""
    #: Parity tolerances of every lane against eager (whole models sum in other orders).
    rtol: float = 1e-5
    atol: float = 1e-6
    #: Performance targets the report checks (`Target`).
    targets: tuple[Target, ...] = field(default=())

    @property
    def qualname(self) -> str:
        """The function's (or the model method's) qualified name in `check.json`."""
        if self.model:
            return f"{self.module}.{self.model}.{self.function}"
        return f"{self.module}.{self.function}"

    @property
    def free_qualname(self) -> str:
        """The free-function twin's qualified name ("" when there is none)."""
        return f"{self.module}.{self.free}" if self.free else ""


def _generator(seed: int) -> Any:
    import torch

    g = torch.Generator()
    g.manual_seed(seed)
    return g


def phase_a_inputs(cell: Cell, seed: int) -> tuple[Any, ...]:
    """`(x, weight, bias)` for `F.linear(x, weight, bias)`."""
    import torch

    g = _generator(seed)
    b, n_in, n_out = cell.params["batch"], cell.params["in"], cell.params["out"]
    x = torch.randn(b, n_in, generator=g)
    weight = torch.randn(n_out, n_in, generator=g) / n_in**0.5
    bias = torch.randn(n_out, generator=g) * 0.1
    return (x, weight, bias)


def phase_b_inputs(cell: Cell, seed: int) -> tuple[Any, ...]:
    """`(x, weight, bias, depth, phase)` with a square, weight-tied layer."""
    import torch

    g = _generator(seed)
    b, width = cell.params["batch"], cell.params["width"]
    x = torch.randn(b, width, generator=g)
    weight = torch.randn(width, width, generator=g) / width**0.5
    bias = torch.randn(width, generator=g) * 0.1
    return (x, weight, bias, cell.params["depth"], cell.params["phase"])


SCORING_FEATURES = 32
SCORING_HIDDEN = 32
SCORING_CLASSES = 8
SCORING_ROUNDS = 4


def scoring_inputs(cell: Cell, seed: int) -> tuple[Any, ...]:
    """`(x, mean, scale, w1, b1, w2, b2, rounds)` for the scoring pipeline."""
    import torch

    g = _generator(seed)
    b, f, h, c = cell.params["batch"], SCORING_FEATURES, SCORING_HIDDEN, SCORING_CLASSES
    x = torch.randn(b, f, generator=g) * 2.0 + 0.5
    mean = torch.randn(f, generator=g) * 0.5 + 0.5
    scale = torch.rand(f, generator=g) * 1.5 + 0.5
    w1 = torch.randn(h, f, generator=g) / f**0.5
    b1 = torch.randn(h, generator=g) * 0.1
    w2 = torch.randn(c, h, generator=g) / h**0.5
    b2 = torch.randn(c, generator=g) * 0.1
    return (x, mean, scale, w1, b1, w2, b2, SCORING_ROUNDS)


MODULE_FEATURES = 20
MODULE_WIDTH = 48
MODULE_HIDDEN = 96
MODULE_CLASSES = 5
MODULE_DEPTH = 2


def module_inputs(cell: Cell, seed: int) -> tuple[Any, ...]:
    """`(x,)` for `model(x)`: `(batch, MODULE_FEATURES)` float32."""
    import torch

    g = _generator(seed)
    return (torch.randn(cell.params["batch"], MODULE_FEATURES, generator=g) * 1.5,)


def _tf_constants(arrays: list[Any]) -> list[Any]:
    import tensorflow as tf

    return [tf.constant(a) for a in arrays]


def tf_phase_a_inputs(cell: Cell, seed: int) -> tuple[Any, ...]:
    """`(x, w, b)` as EagerTensors for `tf.matmul(x, w)` (`w` is `(in, out)`)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    b, n_in, n_out = cell.params["batch"], cell.params["in"], cell.params["out"]
    x = rng.standard_normal((b, n_in), dtype=np.float32)
    w = rng.standard_normal((n_in, n_out), dtype=np.float32) / np.float32(n_in**0.5)
    bias = rng.standard_normal(n_out, dtype=np.float32) * np.float32(0.1)
    return tuple(_tf_constants([x, w, bias]))


def tf_scoring_inputs(cell: Cell, seed: int) -> tuple[Any, ...]:
    """`(x, mean, scale, w1, b1, w2, b2, rounds)` as EagerTensors (weights `(in, out)`)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    b, f, h, c = cell.params["batch"], SCORING_FEATURES, SCORING_HIDDEN, SCORING_CLASSES
    f32 = np.float32
    x = rng.standard_normal((b, f), dtype=f32) * f32(2.0) + f32(0.5)
    mean = rng.standard_normal(f, dtype=f32) * f32(0.5) + f32(0.5)
    scale = rng.random(f, dtype=f32) * f32(1.5) + f32(0.5)
    w1 = rng.standard_normal((f, h), dtype=f32) / f32(f**0.5)
    b1 = rng.standard_normal(h, dtype=f32) * f32(0.1)
    w2 = rng.standard_normal((h, c), dtype=f32) / f32(h**0.5)
    b2 = rng.standard_normal(c, dtype=f32) * f32(0.1)
    return (*_tf_constants([x, mean, scale, w1, b1, w2, b2]), SCORING_ROUNDS)


def _phase_a_cell(batch: int, n_in: int, n_out: int, compile_subset: bool = False) -> Cell:
    return Cell(f"b={batch} {n_in}→{n_out}", {"batch": batch, "in": n_in, "out": n_out},
                compile_subset)


def _phase_b_cell(batch: int, width: int, depth: int, phase: int, compile_subset: bool = False) -> Cell:
    return Cell(f"b={batch} w={width} d={depth} p={phase}",
                {"batch": batch, "width": width, "depth": depth, "phase": phase}, compile_subset)


WORKLOADS: tuple[Workload, ...] = (
    Workload(
        name="phase_a",
        title="Phase A: F.linear → relu → mean(dim=1)",
        project="phase_a",
        source="src/phasea/kernels.py",
        module="phasea.kernels",
        function="inference",
        floor="phase_a",
        twin="phase_a",
        make_inputs=phase_a_inputs,
        cells=(
            _phase_a_cell(1, 32, 32, compile_subset=True),
            _phase_a_cell(1, 128, 64),
            _phase_a_cell(8, 64, 64),
            _phase_a_cell(16, 128, 64),
            _phase_a_cell(64, 128, 64),
            _phase_a_cell(256, 256, 128),
        ),
    ),
    Workload(
        name="phase_b",
        title="Phase B: weight-tied deep MLP, runtime for/if",
        project="control_flow",
        source="src/cflow/kernels.py",
        module="cflow.kernels",
        function="inference",
        floor="phase_b",
        twin="phase_b",
        make_inputs=phase_b_inputs,
        cells=(
            _phase_b_cell(1, 16, 4, 0, compile_subset=True),
            _phase_b_cell(1, 32, 8, 1),
            _phase_b_cell(4, 32, 16, 0),
            _phase_b_cell(8, 64, 16, 1),
            _phase_b_cell(32, 128, 8, 0),
            _phase_b_cell(64, 128, 16, 1),
        ),
    ),
    Workload(
        name="scoring",
        title="Scoring: normalize → linear → 4× relu/tanh → linear → softmax → argmax",
        project="scoring",
        source="src/rxb_scoring/kernels.py",
        module="rxb_scoring.kernels",
        function="classify",
        floor="scoring",
        twin="scoring",
        make_inputs=scoring_inputs,
        aux=(("probabilities", "scoring_probabilities"),),
        cells=(
            Cell("b=1", {"batch": 1}, compile_subset=True),
            Cell("b=16", {"batch": 16}),
            Cell("b=128", {"batch": 128}),
        ),
    ),
    Workload(
        name="module-mlp",
        title="nn.Module MLP: Linear → 2× residual(LayerNorm → Linear → GELU → Linear) → gate → "
              "Sequential(Linear, Tanh, Linear), as model(x)",
        project="modules",
        source="src/rxb_modules/model.py",
        module="rxb_modules.model",
        model="Classifier",
        function="forward",
        free="classify",
        floor="",
        source_dir="bench/projects/modules",
        make_inputs=module_inputs,
        rtol=1e-4,
        atol=1e-5,
        targets=(
            Target("inference_mode", ">=", ((1, 25.0), (16, 10.0), (128, 4.0))),
            Target("onnxruntime", ">", ((0, 1.0),)),
            Target("compile", ">", ((0, 1.0),)),
            Target(MODULE_OVER_FREE, "<=", ((0, 1.3),)),
        ),
        cells=(
            Cell("b=1", {"batch": 1}, compile_subset=True),
            Cell("b=16", {"batch": 16}),
            Cell("b=128", {"batch": 128}),
        ),
    ),
    Workload(
        name="tf_phase_a",
        title="TF Phase A: tf.matmul → bias_add → relu → reduce_mean(axis=1)",
        project="tf_phase_a",
        source="src/rxb_tf_phase_a/kernels.py",
        module="rxb_tf_phase_a.kernels",
        function="inference",
        floor="tf_phase_a",
        framework="tensorflow",
        make_inputs=tf_phase_a_inputs,
        cells=(
            _phase_a_cell(1, 32, 32, compile_subset=True),
            _phase_a_cell(16, 128, 64),
            _phase_a_cell(256, 256, 128),
        ),
        # Faster than TFLite below batch 256 (at 256 one GEMM dominates both).
        targets=(Target("tflite", ">", ((1, 1.0), (16, 1.0))),),
    ),
    Workload(
        name="tf_scoring",
        title="TF scoring: normalize → dense → 4× relu/tanh → dense → softmax → argmax",
        project="tf_scoring",
        source="src/rxb_tf_scoring/kernels.py",
        module="rxb_tf_scoring.kernels",
        function="classify",
        floor="tf_scoring",
        framework="tensorflow",
        make_inputs=tf_scoring_inputs,
        aux=(("probabilities", "tf_scoring_probabilities"),),
        cells=(
            Cell("b=1", {"batch": 1}, compile_subset=True),
            Cell("b=16", {"batch": 16}),
            Cell("b=128", {"batch": 128}),
        ),
        targets=(
            Target("tflite", ">", ((0, 1.0),)),
            Target("eager", ">=", ((1, 20.0),)),
        ),
    ),
)


def by_name(names: list[str] | None) -> tuple[Workload, ...]:
    """The named workloads in their canonical order (all when `names` is empty)."""
    if not names:
        return WORKLOADS
    known = {w.name: w for w in WORKLOADS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown workload(s) {unknown}; known: {sorted(known)}")
    return tuple(w for w in WORKLOADS if w.name in names)
