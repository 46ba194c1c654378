"""Run the rextio benchmark: every lane of every workload, parity-gated, interleaved, in one run.

Normally started by `cargo xtask bench [--quick] [--threads N]`, which first builds the three
projects with `rextio build` under `target/bench/projects/`, builds the floor extension
(`bench/floor`) and records both in `target/bench/builds.json`. By hand, after that:

    .venv/bin/python bench/run.py --out target/bench --quick

A project that `builds.json` does not list but whose workload names its sources
(`Workload.source_dir`: `bench/projects/modules`, the `module-mlp` workload) is copied under
`--projects` and built here with `rextio build`, as xtask builds the others (`--no-build` times
what is there). Only the nn.Module workload, for example:

    .venv/bin/python bench/run.py --out target/bench/modules --projects target/bench/projects \
        --workloads module-mlp --quick

Writes `bench.json` (every sample), `bench.md` (the tables) and `bench.svg` (the plot) under
`--out`, and prints the tables. Exits 1 when a native lane is wrong or could not be loaded, or a
project failed to build; a function the compiler left in Python is reported as
"not native (fallback)" and never timed as native.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _early_threads(argv: list[str]) -> str:
    """`--threads N` read before numpy loads (OpenBLAS sizes its pool when it loads)."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "1"


# The numpy lane's BLAS gets the same thread count as every other lane.
os.environ.setdefault("OPENBLAS_NUM_THREADS", _early_threads(sys.argv[1:]))

from rxbench import (  # noqa: E402
    boundary, jitsrc, modules, onnxlane, parity, report, schedule, stats, svg, tflanes, twins,
)
from rxbench.model import (  # noqa: E402
    FRAMEWORK_LANES,
    LANES,
    MODULE_LANES,
    NOT_NATIVE,
    SKIPPED,
    TIMED,
    UNAVAILABLE,
    WRONG,
    CellResult,
    LaneResult,
    RunResult,
    WorkloadResult,
)
from rxbench.workloads import Cell, Workload, by_name  # noqa: E402

import torch  # noqa: E402  (before any native extension)

FLOOR_MODULE = "_rextio_bench_floor"
#: The TensorFlow workloads' floor extension (`bench/floor_tf`), keyed `floor_tf` in builds.json.
FLOOR_TF_MODULE = "_rextio_bench_floor_tf"

QUICK = {"rounds": 31, "block_ms": 3.0, "warmup_ms": 20.0, "resamples": 1000}
FULL = {"rounds": 41, "block_ms": 8.0, "warmup_ms": 100.0, "resamples": 2000}


def log(message: str) -> None:
    """Progress to stderr (stdout carries the report)."""
    print(f"bench: {message}", file=sys.stderr, flush=True)


def short(exc: BaseException) -> str:
    """`Type: first line of the message`."""
    return f"{type(exc).__name__}: {parity.first_line(str(exc))}"


@dataclass
class Project:
    """What the harness knows about one built project and its modules."""

    workload: Workload
    root: Path
    route: str = "unknown"
    native_reason: str = ""
    native_status: str = UNAVAILABLE
    wrapper: ModuleType | None = None
    wrapper_reason: str = ""
    eager: ModuleType | None = None
    jit_fn: Any = None
    jit_reason: str = ""
    aux_eager: dict[str, Callable[..., Any]] = field(default_factory=dict)
    #: Module workloads: the native free-function twin's status and why (like `native_*`).
    free_status: str = UNAVAILABLE
    free_reason: str = ""
    #: Module workloads: the models of every lane, made on the first cell (`module_models`).
    models: "Models | None" = None


@dataclass
class Models:
    """A module workload's models, one set per run: the same weights in every lane."""

    #: The class from the project's source: the eager, inference_mode, jit, compile and ORT lanes.
    eager: Any
    #: The built package's class holding the same weights (None: see `Project.native_reason`).
    native: Any = None
    #: The free twin's weight arguments (`modules.free_args`): the built model's own tensors when
    #: there is one, so that the native and native_free lanes read the same memory (the eager
    #: lanes' tensors would reach the twin's timed blocks warm from the eager lanes' blocks, and
    #: the module/free ratio would measure the cache as well as the module form).
    free_args: tuple[Any, ...] = ()
    #: `__rextio_method_stats__` of the built module (None without one).
    stats: Callable[[], Any] | None = None
    jit: Any = None
    jit_note: str = ""
    jit_reason: str = ""


def route_of(build_report: dict[str, Any], qualname: str) -> tuple[str, str]:
    """The route of `qualname` in a `build.json`/`check.json` and, for a fallback, why."""
    for module in build_report.get("modules", []):
        for fn in module.get("functions", []):
            if fn.get("qualname") == qualname:
                route = fn.get("route", "unknown")
                errors = [d for d in fn.get("diagnostics", []) if d.get("severity") == "error"]
                why = "; ".join(f"{d.get('code')} {d.get('message')} (line {d.get('line')})"
                                for d in errors[:2])
                return route, why
    return "missing", f"{qualname} is not in the build report"


def import_wrapper(python_dir: Path, module: str, mode: str) -> ModuleType:
    """Import the built wrapper `module` with `REXTIO_NATIVE_MODE=mode`."""
    if str(python_dir) not in sys.path:
        sys.path.insert(0, str(python_dir))
    previous = os.environ.get("REXTIO_NATIVE_MODE")
    os.environ["REXTIO_NATIVE_MODE"] = mode
    try:
        sys.modules.pop(module, None)
        return importlib.import_module(module)
    finally:
        if previous is None:
            os.environ.pop("REXTIO_NATIVE_MODE", None)
        else:
            os.environ["REXTIO_NATIVE_MODE"] = previous


def import_file(path: Path, name: str) -> ModuleType:
    """Import a source file under a private module name."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def is_native(fn: Any) -> bool:
    """Whether a wrapper attribute is the native builtin (not a Python function)."""
    return type(fn).__name__ == "builtin_function_or_method"


def open_project(w: Workload, projects: Path, builds: dict[str, Any], jit_dir: Path) -> Project:
    """Load a workload's eager source, TorchScript copy and built wrapper, and decide whether
    its native lane is really native."""
    p = Project(workload=w, root=projects / w.project)
    source = p.root / w.source
    p.eager = import_file(source, f"rxbench_eager_{ident(w.name)}")
    p.aux_eager = {name: getattr(p.eager, name) for name, _ in w.aux}

    if w.framework != "torch":
        p.jit_reason = "TorchScript applies to torch workloads only"
    elif w.model:
        pass  # scripted from the model instance, on the first cell (`module_models`)
    else:
        try:
            jit_module = jitsrc.load_module(source, jit_dir, f"rxbench_jit_{ident(w.name)}")
            with warnings.catch_warnings():
                # torch 2.13 deprecates TorchScript; it is still a lane people ship with.
                warnings.simplefilter("ignore", DeprecationWarning)
                p.jit_fn = torch.jit.script(getattr(jit_module, w.function))
        except Exception as exc:  # TorchScript may refuse a construct: the lane is unavailable
            p.jit_reason = f"torch.jit.script failed: {short(exc)}"

    record = builds.get("projects", {}).get(w.project)
    build_json = p.root / ".rextio" / "reports" / "build.json"
    if record is not None and not record.get("ok", False):
        p.native_reason = f"`rextio build` failed: {record.get('error', '?')}"
        p.wrapper_reason = p.free_reason = p.native_reason
        return p
    if not build_json.is_file():
        p.native_reason = f"no build report at {build_json}; run `cargo xtask bench`"
        p.wrapper_reason = p.free_reason = p.native_reason
        return p
    build_report = json.loads(build_json.read_text(encoding="utf-8"))
    p.route, why = route_of(build_report, w.qualname)
    cargo_ok = build_report.get("cargo", {}).get("status") == "ok"
    claimed = p.route.startswith("native-plugin:")
    if not claimed:
        p.native_status, p.native_reason = NOT_NATIVE, f"route {p.route}: {why}"
    elif not cargo_ok:
        p.native_reason = f"cargo build of the generated crate: {build_report.get('cargo')}"
    free_claimed = False
    if w.free:
        free_route, free_why = route_of(build_report, w.free_qualname)
        free_claimed = free_route.startswith("native-plugin:")
        if not free_claimed:
            p.free_status, p.free_reason = NOT_NATIVE, f"route {free_route}: {free_why}"
        elif not cargo_ok:
            p.free_reason = p.native_reason or (
                f"cargo build of the generated crate: {build_report.get('cargo')}")

    python_dir = p.root / ".rextio" / "build" / "python"
    mode = "native" if (claimed or free_claimed) and cargo_ok else "fallback"
    try:
        p.wrapper = import_wrapper(python_dir, w.module, mode)
    except Exception as exc:
        p.wrapper_reason = f"importing the built {w.module} failed: {short(exc)}"
        if claimed and cargo_ok:
            p.native_reason = p.wrapper_reason
        if free_claimed and cargo_ok:
            p.free_reason = p.wrapper_reason
        return p
    if free_claimed and cargo_ok:
        if is_native(getattr(p.wrapper, w.free, None)):
            p.free_status, p.free_reason = TIMED, ""
        else:
            p.free_status = NOT_NATIVE
            p.free_reason = "the build claims it native, but the wrapper binds a Python function"
    if claimed and cargo_ok:
        if w.model:
            p.native_status, p.native_reason = method_is_native(p.wrapper, w)
        elif is_native(getattr(p.wrapper, w.function, None)):
            p.native_status, p.native_reason = TIMED, ""
        else:
            p.native_status = NOT_NATIVE
            p.native_reason = "the build claims it native, but the wrapper binds a Python function"
    return p


def ident(name: str) -> str:
    """A workload name as part of a Python module name (`module-mlp` -> `module_mlp`)."""
    return name.replace("-", "_")


def method_is_native(wrapper: ModuleType, w: Workload) -> tuple[str, str]:
    """Whether the built module compiled `w.model`'s method: `(TIMED, "")` when its
    `__rextio_method_stats__()` has the method, else `(NOT_NATIVE, why)`. Whether each call
    really runs the native body is checked on the counters around every call (`run_cell`)."""
    stats = getattr(wrapper, "__rextio_method_stats__", None)
    if stats is None:
        return NOT_NATIVE, "the build claims it native, but the wrapper has no __rextio_method_stats__"
    if w.qualname not in stats():
        return NOT_NATIVE, f"the build claims it native, but {w.qualname} is not in __rextio_method_stats__()"
    if getattr(getattr(wrapper, w.model, None), w.function, None) is None:
        return NOT_NATIVE, f"the built module has no {w.model}.{w.function}"
    return TIMED, ""


@dataclass
class Candidate:
    """A lane ready for the parity gate: the call to check and the block to time."""

    call: Callable[..., Any]
    block: schedule.Block
    aux: list[tuple[Callable[..., Any], Callable[..., Any]]] = field(default_factory=list)
    compile_s: float | None = None
    note: str = ""
    #: The built method's path counters (`modules.path_counts`), read around the parity call
    #: and the timed blocks: a lane whose calls ran the original is not native.
    counters: Callable[[], dict[str, int]] | None = None


@dataclass
class Options:
    """Run settings."""

    quick: bool
    rounds: int
    block_ms: float
    warmup_ms: float
    resamples: int
    seed: int
    lanes: tuple[str, ...]
    compile_subset: bool
    #: Threads of every lane's framework (torch intra-op, ORT intra-op, OpenBLAS, TensorFlow).
    threads: int = 1


def numpy_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The cell's arguments with every torch tensor as a numpy view of the same memory."""
    return tuple(a.detach().numpy() if isinstance(a, torch.Tensor) else a for a in args)


def numpy_lane(twin: Callable[..., Any]) -> Callable[..., Any]:
    """The numpy twin as a parity call: torch tensors in (as views), a torch tensor out."""
    import numpy as np

    def call(*args: Any) -> Any:
        return torch.from_numpy(np.asarray(twin(*numpy_args(args))))

    call.__name__ = getattr(twin, "__name__", "twin")
    return call


def ort_unavailable() -> str:
    """Why the ONNX Runtime lane cannot run here, or "" when it can."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except Exception as exc:
        return (f"{short(exc)}; `cargo xtask bench` installs bench/requirements.txt into .venv")
    return ""


def candidates(
    p: Project, cell: Cell, args: tuple[Any, ...], floor: ModuleType | None, floor_reason: str,
    opts: Options,
) -> tuple[dict[str, Candidate], dict[str, LaneResult]]:
    """Build every lane of one cell; lanes that cannot run get their final result here."""
    w = p.workload
    if w.model:
        return module_candidates(p, cell, args, opts)
    ready: dict[str, Candidate] = {}
    done: dict[str, LaneResult] = {}
    assert p.eager is not None
    eager_fn = getattr(p.eager, w.function)

    applicable = FRAMEWORK_LANES.get(w.framework, LANES)
    for lane in (lane for lane in opts.lanes if lane in applicable):
        try:
            if lane == "native":
                if p.native_status != TIMED or p.wrapper is None:
                    done[lane] = LaneResult(lane, p.native_status, p.native_reason)
                    continue
                fn = getattr(p.wrapper, w.function)
                aux = [(getattr(p.wrapper, a), p.aux_eager[a]) for a, _ in w.aux]
                ready[lane] = Candidate(fn, schedule.python_block(fn, args), aux)
            elif lane == "floor":
                if floor is None:
                    done[lane] = LaneResult(lane, UNAVAILABLE, floor_reason)
                    continue
                fn, loop = getattr(floor, w.floor), getattr(floor, f"{w.floor}_loop")
                aux = [(getattr(floor, f), p.aux_eager[a]) for a, f in w.aux]
                ready[lane] = Candidate(fn, lambda k, loop=loop: loop(*args, k), aux)
            elif lane == "eager":
                ready[lane] = Candidate(eager_fn, schedule.python_block(eager_fn, args))
            elif lane == "inference_mode":
                def under_inference(*a: Any, _fn: Any = eager_fn) -> Any:
                    with torch.inference_mode():
                        return _fn(*a)
                block = schedule.python_block(eager_fn, args, context=torch.inference_mode)
                ready[lane] = Candidate(under_inference, block)
            elif lane == "jit":
                if p.jit_fn is None:
                    done[lane] = LaneResult(lane, UNAVAILABLE, p.jit_reason)
                    continue
                ready[lane] = Candidate(p.jit_fn, schedule.python_block(p.jit_fn, args))
            elif lane == "compile":
                got = compile_lane(eager_fn, args, cell, opts)
                if isinstance(got, LaneResult):
                    done[lane] = got
                    continue
                ready[lane] = got
            elif lane == "fallback":
                if p.wrapper is None:
                    done[lane] = LaneResult(lane, UNAVAILABLE, p.wrapper_reason)
                    continue
                table = getattr(p.wrapper, "__rextio_fallback__", None)
                fn = table[w.function] if table and w.function in table else getattr(p.wrapper, w.function)
                if is_native(fn):
                    done[lane] = LaneResult(lane, UNAVAILABLE,
                                            "the wrapper keeps no Python body (__rextio_fallback__)")
                    continue
                ready[lane] = Candidate(fn, schedule.python_block(fn, args))
            elif lane == "onnxruntime":
                got = ort_lane(eager_fn, args, opts)
                if isinstance(got, LaneResult):
                    done[lane] = got
                    continue
                ready[lane] = got
            elif lane == "tf_function":
                tf_lane = tflanes.tf_function(eager_fn, args)
                ready[lane] = Candidate(tf_lane.call,
                                        schedule.python_block(tf_lane.fn, tf_lane.tensors),
                                        compile_s=tf_lane.seconds, note=tf_lane.note)
            elif lane == "tflite":
                lite = tflanes.tflite(tflanes.tf_function(eager_fn, args), threads=opts.threads)
                arrays = [t.numpy() for t in tflanes.split_args(args)[0]]
                ready[lane] = Candidate(lite.call, schedule.python_block(lite.run, (arrays,)),
                                        compile_s=lite.seconds, note=lite.note)
            elif lane == "numpy":
                if not w.twin:
                    done[lane] = LaneResult(lane, UNAVAILABLE, "the workload has no numpy twin")
                    continue
                twin = getattr(twins, w.twin)
                ready[lane] = Candidate(numpy_lane(twin),
                                        schedule.python_block(twin, numpy_args(args)))
        except Exception as exc:  # a lane that cannot be built is reported, the run goes on
            done[lane] = LaneResult(lane, UNAVAILABLE, f"could not set up the lane: {short(exc)}")
    return ready, done


def compile_lane(fn: Callable[..., Any], args: tuple[Any, ...], cell: Cell, opts: Options,
                 inference_mode: bool = False) -> Candidate | LaneResult:
    """The torch.compile lane of `fn` (a function or a model), warm, its first call timed as the
    compile time; `inference_mode`: compiled and timed under `torch.inference_mode()`."""
    if opts.compile_subset and not cell.compile_subset:
        return LaneResult("compile", SKIPPED,
                          "--compile-subset: torch.compile only on the first cell of each workload")
    torch._dynamo.reset()
    compiled = torch.compile(fn, dynamic=False)
    start = time.perf_counter()
    if inference_mode:
        with torch.inference_mode():
            compiled(*args)
    else:
        compiled(*args)
    compile_s = time.perf_counter() - start
    if inference_mode:
        return Candidate(inference(compiled),
                         schedule.python_block(compiled, args, context=torch.inference_mode),
                         compile_s=compile_s)
    return Candidate(compiled, schedule.python_block(compiled, args), compile_s=compile_s)


def ort_lane(fn: Callable[..., Any], args: tuple[Any, ...], opts: Options) -> Candidate | LaneResult:
    """The ONNX Runtime lane of `fn` (a function or a model) exported with `torch.onnx.export`."""
    missing = ort_unavailable()
    if missing:
        return LaneResult("onnxruntime", UNAVAILABLE, missing)
    lane = onnxlane.build(fn, args, threads=opts.threads)
    block = schedule.python_block(lane.session.run, ([lane.output_name], lane.feed(args)))
    return Candidate(lane.call, block, compile_s=lane.seconds, note=lane.note)


def inference(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` called under `torch.inference_mode()` (a lane's parity call)."""
    def call(*a: Any) -> Any:
        with torch.inference_mode():
            return fn(*a)

    call.__name__ = getattr(fn, "__name__", type(fn).__name__)
    return call


def module_models(p: Project, opts: Options, jit_dir: Path) -> Models:
    """The module workload's models (once per run): the eager class with seeded, perturbed
    weights, the built class and the TorchScript model holding the same weights."""
    if p.models is not None:
        return p.models
    w = p.workload
    assert p.eager is not None
    eager = modules.make_model(getattr(p.eager, w.model), opts.seed)
    m = Models(eager=eager, free_args=modules.free_args(eager))
    if p.wrapper is not None and (p.native_status == TIMED or p.free_status == TIMED):
        try:
            m.native = modules.same_weights(getattr(p.wrapper, w.model), eager)
            m.free_args = modules.free_args(m.native)
            m.stats = getattr(p.wrapper, "__rextio_method_stats__", None)
        except Exception as exc:
            p.native_status = UNAVAILABLE
            p.native_reason = f"could not load the weights into the built {w.model}: {short(exc)}"
    try:
        sample = w.make_inputs(w.cells[0], opts.seed * 1000)
        m.jit, m.jit_note = modules.script_model(
            eager, w.model, p.root / w.source, jit_dir, f"rxbench_jit_{ident(w.name)}", sample)
    except Exception as exc:  # TorchScript may refuse the model: the lane is unavailable
        m.jit_reason = short(exc)
    p.models = m
    return m


def module_candidates(
    p: Project, cell: Cell, args: tuple[Any, ...], opts: Options,
) -> tuple[dict[str, Candidate], dict[str, LaneResult]]:
    """The lanes of one cell of a module workload: the model called as `model(x)`."""
    w = p.workload
    m = p.models
    assert m is not None, "module_models runs before the module workload's first cell"
    ready: dict[str, Candidate] = {}
    done: dict[str, LaneResult] = {}
    im = torch.inference_mode
    for lane in (lane for lane in opts.lanes if lane in MODULE_LANES):
        try:
            if lane == "native":
                if p.native_status != TIMED or m.native is None:
                    done[lane] = LaneResult(lane, p.native_status, p.native_reason)
                    continue
                stats, qualname = m.stats, w.qualname
                ready[lane] = Candidate(
                    inference(m.native), schedule.python_block(m.native, args, context=im),
                    counters=lambda: modules.path_counts(stats, qualname),
                    note="model(x) of the built package's class, timed block under "
                         "torch.inference_mode(); every call checked native on "
                         "__rextio_method_stats__()")
            elif lane == "native_free":
                if p.free_status != TIMED or p.wrapper is None:
                    done[lane] = LaneResult(lane, p.free_status, p.free_reason)
                    continue
                free = getattr(p.wrapper, w.free)
                free_args = (*args, *m.free_args)
                ready[lane] = Candidate(
                    inference(lambda *a, _f=free: _f(*a, *m.free_args)),
                    schedule.python_block(free, free_args, context=im),
                    note=f"{w.free}(x, *model.state_dict().values()) of the built package "
                         f"({len(free_args)} tensor arguments), under torch.inference_mode()")
            elif lane == "eager":
                ready[lane] = Candidate(
                    m.eager, schedule.python_block(m.eager, args),
                    note="model(x) in default grad mode, no grad context: the parameters "
                         "require grad, so autograd records every call")
            elif lane == "inference_mode":
                ready[lane] = Candidate(inference(m.eager),
                                        schedule.python_block(m.eager, args, context=im),
                                        note="model(x), timed block under torch.inference_mode()")
            elif lane == "jit":
                if m.jit is None:
                    done[lane] = LaneResult(lane, UNAVAILABLE, m.jit_reason)
                    continue
                ready[lane] = Candidate(inference(m.jit),
                                        schedule.python_block(m.jit, args, context=im),
                                        note=m.jit_note + "; called under torch.inference_mode()")
            elif lane == "compile":
                got = compile_lane(m.eager, args, cell, opts, inference_mode=True)
                if isinstance(got, LaneResult):
                    done[lane] = got
                    continue
                got.note = ("torch.compile(model, dynamic=False), compiled and timed under "
                            "torch.inference_mode()")
                ready[lane] = got
            elif lane == "onnxruntime":
                got = ort_lane(m.eager, args, opts)
                if isinstance(got, LaneResult):
                    done[lane] = got
                    continue
                got.note += " of the model (weights as initializers)"
                ready[lane] = got
        except Exception as exc:  # a lane that cannot be built is reported, the run goes on
            done[lane] = LaneResult(lane, UNAVAILABLE, f"could not set up the lane: {short(exc)}")
    return ready, done


def run_cell(p: Project, index: int, cell: Cell, floor: ModuleType | None, floor_reason: str,
             opts: Options, jit_dir: Path | None = None) -> CellResult:
    """Parity-gate, warm up and time every lane of one cell."""
    w = p.workload
    args = w.make_inputs(cell, opts.seed * 1000 + index)
    assert p.eager is not None
    if w.model:
        models = module_models(p, opts, jit_dir or p.root / ".rextio" / "bench-jit")
        ref = models.eager(*args)
    else:
        ref = getattr(p.eager, w.function)(*args)
    ready, done = candidates(p, cell, args, floor, floor_reason, opts)

    gated: dict[str, Candidate] = {}
    for lane, cand in ready.items():
        before = cand.counters() if cand.counters else {}
        verdict = parity.check(cand.call, args, ref, rtol=w.rtol, atol=w.atol)
        for aux_fn, aux_ref in cand.aux:
            if not verdict.ok:
                break
            extra = parity.check(aux_fn, args, aux_ref(*args), rtol=w.rtol, atol=w.atol)
            if not extra.ok:
                verdict = parity.Verdict(False, f"{getattr(aux_fn, '__name__', 'aux')}: {extra.detail}")
        if cand.counters is not None and verdict.ok:
            why = modules.not_native_reason(modules.delta(before, cand.counters()), 1)
            if why:
                done[lane] = LaneResult(lane, NOT_NATIVE, f"parity call: {why}", note=cand.note)
                continue
        if verdict.ok and (w.rtol, w.atol) != (parity.RTOL, parity.ATOL):
            verdict.detail += f" (rtol={w.rtol:g}, atol={w.atol:g})"
        if verdict.ok:
            gated[lane] = cand
            done[lane] = LaneResult(lane, TIMED, parity=verdict.detail, compile_s=cand.compile_s,
                                    note=cand.note)
        else:
            done[lane] = LaneResult(lane, WRONG, verdict.detail, compile_s=cand.compile_s,
                                    note=cand.note)

    k = 0
    if gated:
        warm_ns = opts.warmup_ms * 1e6
        blocks: dict[str, schedule.Block] = {}
        counted: dict[str, tuple[modules.CountingBlock, dict[str, int]]] = {}
        for lane, c in gated.items():
            if c.counters is not None:
                cb = modules.CountingBlock(c.block)
                counted[lane] = (cb, c.counters())
                blocks[lane] = cb
            else:
                blocks[lane] = c.block
        estimates = {lane: schedule.warm_up(block, min_calls=10, min_ns=int(warm_ns))
                     for lane, block in blocks.items()}
        k = schedule.calls_per_block(max(estimates.values()), opts.block_ms * 1e6)
        samples, _orders = schedule.interleaved_rounds(blocks, k=k, rounds=opts.rounds,
                                                       seed=opts.seed + index)
        for lane, (cb, before) in counted.items():
            why = modules.not_native_reason(modules.delta(before, gated[lane].counters()), cb.calls)
            if why:
                # Never a native number for calls that ran the original.
                del samples[lane]
                done[lane] = LaneResult(lane, NOT_NATIVE, f"timed calls: {why}",
                                        note=gated[lane].note)
            else:
                done[lane].parity += f"; {cb.calls} calls timed, all native"
        for lane, xs in samples.items():
            lr = done[lane]
            lr.per_call_ns = [round(x, 1) for x in xs]
            lr.median_ns = stats.median(xs)
            lr.q1_ns = stats.percentile(xs, 0.25)
            lr.q3_ns = stats.percentile(xs, 0.75)
        if "native" in samples:
            for lane, xs in samples.items():
                if lane != "native":
                    done[lane].ratio = stats.bootstrap_ratio(
                        samples["native"], xs, resamples=opts.resamples, seed=opts.seed)

    lanes = {lane: done[lane] for lane in LANES if lane in done}
    parts = []
    for lane, lr in lanes.items():
        if lr.status == TIMED:
            text = f"{lane} {report.format_us(lr.median_ns)}µs"
            if lr.ratio is not None:
                text += f" ×{lr.ratio.value:.2f}"
        else:
            text = f"{lane} {lr.status}"
        parts.append(text)
    log(f"{w.name} {cell.label}: k={k} | " + ", ".join(parts))
    return CellResult(label=cell.label, params=dict(cell.params), calls_per_block=k, lanes=lanes)


#: Entries never copied into (nor removed from) a project copy (as xtask's `sync_dir`).
SYNC_SKIPPED = (".rextio", "dist", "__pycache__", ".pytest_cache")


def sync_dir(src: Path, dst: Path) -> None:
    """Make `dst` a copy of `src` as `cargo xtask bench` does: files rewritten only when their
    content differs (unchanged sources keep their times), entries `src` lacks removed, build
    outputs (`SYNC_SKIPPED`) left alone on both sides."""
    import shutil

    dst.mkdir(parents=True, exist_ok=True)
    names = set()
    for entry in sorted(src.iterdir()):
        if entry.name in SYNC_SKIPPED:
            continue
        names.add(entry.name)
        target = dst / entry.name
        if entry.is_dir():
            if target.is_file() or target.is_symlink():
                target.unlink()
            sync_dir(entry, target)
            continue
        if target.is_dir():
            shutil.rmtree(target)
        data = entry.read_bytes()
        if not target.is_file() or target.read_bytes() != data:
            target.write_bytes(data)
    for entry in dst.iterdir():
        if entry.name not in names and entry.name not in SYNC_SKIPPED:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()


def rextio_build_command(project_dir: Path) -> list[str]:
    """`rextio build DIR` as xtask runs it (`cargo run -p rextio-host --bin rextio`)."""
    cargo = os.environ.get("CARGO", "cargo")
    return [cargo, "run", "--quiet", "-p", "rextio-host", "--bin", "rextio", "--", "build",
            str(project_dir)]


def built_for_other_python(project_dir: Path) -> str:
    """Why the built extension is not for this interpreter ("" when it is, or when nothing
    native was built), as xtask checks it."""
    report_path = project_dir / ".rextio" / "reports" / "build.json"
    try:
        data = json.loads(report_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"cannot read {report_path}: {short(exc)}"
    chosen = ((data.get("python") or {}).get("chosen") or {}).get("executable")
    if not chosen:
        return ""
    if os.path.abspath(chosen) != os.path.abspath(sys.executable):
        return f"`rextio build` chose {chosen}, but the bench runs {sys.executable}"
    return ""


def build_missing_projects(
    workloads: tuple[Workload, ...], projects: Path, builds: dict[str, Any],
    runner: Callable[[list[str]], tuple[int, str]] | None = None,
) -> list[str]:
    """Copy and `rextio build` the projects of `workloads` that have a `source_dir` and that
    `builds.json` does not list (xtask builds a fixed set of projects; the others are built
    here, the same way), recording each step in `builds["projects"]`. Returns the names built.

    `runner(argv) -> (exit status, output)` runs the build (tests pass a fake)."""
    def run_command(argv: list[str]) -> tuple[int, str]:
        import subprocess

        done = subprocess.run(argv, cwd=HERE.parent, capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr

    runner = runner or run_command
    recorded = builds.setdefault("projects", {})
    built: list[str] = []
    for w in workloads:
        if not w.source_dir or w.project in recorded or w.project in built:
            continue
        dest = projects / w.project
        log(f"{w.name}: `rextio build {dest}` (not in builds.json)")
        started = time.perf_counter()
        error = None
        try:
            sync_dir(HERE.parent / w.source_dir, dest)
            code, output = runner(rextio_build_command(dest))
            if code != 0:
                print(output, file=sys.stderr)
                last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()),
                            "no message")
                error = f"`rextio build {dest}` exited with {code}: {last}"
            else:
                error = built_for_other_python(dest) or None
        except Exception as exc:
            error = f"`rextio build {dest}` could not run: {short(exc)}"
        recorded[w.project] = {"ok": error is None, "skipped": False,
                               "seconds": round(time.perf_counter() - started, 2), "error": error,
                               "by": "bench/run.py"}
        if error:
            log(f"{w.name}: building {w.project} failed: {error}")
        built.append(w.project)
    return built


def load_floor(path: Path | None, module: str = FLOOR_MODULE) -> tuple[ModuleType | None, str]:
    """Import a floor extension (`module`), or say why not."""
    if path is None:
        return None, "no floor extension given (--floor)"
    if path.is_dir():
        found = [f for f in sorted(path.glob(f"{module}*.so"))
                 if f.name.split(".")[0] == module]
        if not found:
            return None, f"no {module}*.so in {path}; `cargo xtask bench` builds it"
        path = found[0]
    if not path.is_file():
        return None, f"floor extension {path} does not exist; `cargo xtask bench` builds it"
    try:
        return import_file(path, module), ""
    except Exception as exc:
        return None, f"importing {path} failed: {short(exc)}"


def tf_floor(path: Path, builds: dict[str, Any]) -> tuple[ModuleType | None, str]:
    """The TensorFlow floor extension (after tensorflow is imported), or why not."""
    if path.is_file():
        path = path.parent
    record = builds.get("floor_tf")
    if record is not None and not record.get("ok", False):
        return None, f"building bench/floor_tf failed: {record.get('error', '?')}"
    return load_floor(path, FLOOR_TF_MODULE)


def package_versions() -> dict[str, str | None]:
    """Versions of the other lanes' packages (None when not importable)."""
    import numpy

    out: dict[str, str | None] = {"numpy": numpy.__version__}
    for name in ("onnxruntime", "onnx"):
        try:
            out[name] = importlib.import_module(name).__version__
        except Exception:
            out[name] = None
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Run the rextio benchmark (see the module doc).")
    parser.add_argument("--out", type=Path, required=True, help="output directory (target/bench)")
    parser.add_argument("--projects", type=Path, help="built projects (default: OUT/projects)")
    parser.add_argument("--floor", type=Path, help="floor extension .so or its directory (default: OUT)")
    parser.add_argument("--builds", type=Path, help="build record from xtask (default: OUT/builds.json)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, shorter blocks")
    parser.add_argument("--rounds", type=int, help="timing rounds per cell")
    parser.add_argument("--block-ms", type=float, help="target duration of one timed block")
    parser.add_argument("--warmup-ms", type=float, help="minimum warm-up time per lane and cell")
    parser.add_argument("--resamples", type=int, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="seed of inputs, lane order, bootstrap")
    parser.add_argument("--workloads", nargs="*", help="subset of workloads (default: all)")
    parser.add_argument("--lanes", nargs="*", choices=LANES, help="subset of lanes (default: all)")
    parser.add_argument("--compile-subset", action="store_true",
                        help="run torch.compile only on the first cell of each workload (faster)")
    parser.add_argument("--command", default=None, help="the command line to print in the report")
    parser.add_argument("--no-build", action="store_true",
                        help="never build a project builds.json does not list (bench/projects/"
                             "modules): time what is under --projects as it is")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    defaults = QUICK if a.quick else FULL
    lanes = tuple(lane for lane in LANES if not a.lanes or lane in a.lanes)
    opts = Options(
        quick=a.quick,
        rounds=a.rounds or defaults["rounds"],
        block_ms=a.block_ms or defaults["block_ms"],
        warmup_ms=a.warmup_ms if a.warmup_ms is not None else defaults["warmup_ms"],
        resamples=a.resamples or defaults["resamples"],
        seed=a.seed,
        lanes=lanes,
        compile_subset=a.compile_subset,
        threads=a.threads,
    )
    if a.threads < 1:
        log("--threads must be at least 1")
        return 2
    out: Path = a.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    projects = (a.projects or out / "projects").resolve()
    builds_path = a.builds or out / "builds.json"
    builds = json.loads(builds_path.read_text(encoding="utf-8")) if builds_path.is_file() else {}
    command = a.command or "cargo xtask bench" + (" --quick" if a.quick else "") + (
        f" --threads {a.threads}" if a.threads != 1 else "")

    torch.set_num_threads(a.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    started = time.perf_counter()
    meta: dict[str, Any] = {
        "command": command,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        **package_versions(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "threads": torch.get_num_threads(),
        "quick": opts.quick,
        "rounds": opts.rounds,
        "block_ms": opts.block_ms,
        "warmup_ms": opts.warmup_ms,
        "resamples": opts.resamples,
        "seed": opts.seed,
        "lanes": list(lanes),
        "loadavg_start": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "builds": builds,
    }
    log(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), "
        f"{'quick' if opts.quick else 'full'}: {opts.rounds} rounds, blocks ≈{opts.block_ms} ms")

    if not a.no_build:
        build_missing_projects(by_name(a.workloads), projects, builds)

    floor_build = builds.get("floor")
    if floor_build is not None and not floor_build.get("ok", False):
        # A failed build may have left an older extension behind: never time a stale floor.
        floor, floor_reason = None, f"building bench/floor failed: {floor_build.get('error', '?')}"
    else:
        floor, floor_reason = load_floor(a.floor or out)
    if floor is None and "floor" in lanes:
        log(f"floor lane unavailable: {floor_reason}")
    floors = {"torch": (floor, floor_reason)}

    run = RunResult(meta=meta)
    failures: list[str] = []
    meta["tensorflow"] = None
    tf_reason = ""
    # The workloads run in canonical order, torch first. TensorFlow is imported only when its
    # first workload comes: importing Triton (torch.compile) after TensorFlow crashes the
    # process (both carry LLVM), the other order works.
    for w in by_name(a.workloads):
        if w.framework == "tensorflow" and "tensorflow" not in floors and not tf_reason:
            tf, tf_reason = tflanes.load(a.threads)
            if tf is None:
                log(f"note: skipping the TensorFlow workloads: {tf_reason}")
            else:
                meta["tensorflow"] = tf.__version__
                log(f"tensorflow {tf.__version__}, 1 inter-op and {a.threads} intra-op thread(s)")
                floors["tensorflow"] = tf_floor(a.floor or out, builds)
                if floors["tensorflow"][0] is None and "floor" in lanes:
                    log(f"TensorFlow floor lane unavailable: {floors['tensorflow'][1]}")
        if w.framework == "tensorflow" and meta["tensorflow"] is None:
            run.workloads.append(WorkloadResult(name=w.name, title=w.title, function=w.qualname,
                                                route="not built", framework=w.framework,
                                                skipped=tf_reason))
            continue
        floor, floor_reason = floors.get(w.framework, (None, f"no floor for {w.framework}"))
        p = open_project(w, projects, builds, out / "jit")
        log(f"{w.name}: {w.qualname} route {p.route}"
            + (f" — native lane: {p.native_status} ({p.native_reason})" if p.native_reason else ""))
        wr = WorkloadResult(name=w.name, title=w.title, function=w.qualname, route=p.route,
                            framework=w.framework,
                            targets={t.key: t.to_dict() for t in w.targets})
        for index, cell in enumerate(w.cells):
            wr.cells.append(run_cell(p, index, cell, floor, floor_reason, opts, out / "jit"))
        for c in wr.cells:
            for lane in ("native", "native_free"):
                lr = c.lanes.get(lane)
                if lr is not None and lr.status in (WRONG, UNAVAILABLE):
                    failures.append(f"{w.name} {c.label}: {lane} {lr.status}: {lr.reason}")
        run.workloads.append(wr)

    # The boundary's cost per call of each framework, and GIL release, on the scoring projects'
    # native builds.
    meta["boundary"] = []
    for name, framework in (("scoring", "torch"), ("tf_scoring", "tensorflow")):
        w = next((w for w in by_name(a.workloads) if w.name == name), None)
        if w is None or (framework == "tensorflow" and tf_reason):
            continue
        p = open_project(w, projects, builds, out / "jit")
        if p.native_status != TIMED or p.wrapper is None:
            continue
        b = boundary.measure_boundary(boundary.PROBES[framework], p.wrapper, p.eager, opts.quick)
        meta["boundary"].append(b)
        log(f"boundary ({framework}): {b.get('function', '')}: native {b.get('native_us')} "
            f"µs/call, eager {b.get('eager_us')} µs, empty Python call "
            f"{b.get('python_call_us')} µs" + (f" — {b['error']}" if "error" in b else ""))
        if framework == "torch":
            meta["gil_threads"] = boundary.measure_threads(p.wrapper, 128, opts.quick)
            t = meta["gil_threads"]
            log(f"threads: {t['function']}: {t['calls_per_s_1_thread']} calls/s on 1 thread, "
                f"{t['calls_per_s_2_threads']} on 2 ({t['scaling']}x)")

    meta["loadavg_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    meta["duration_s"] = round(time.perf_counter() - started, 1)

    (out / "bench.json").write_text(json.dumps(run.to_dict(), indent=1, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    (out / "bench.md").write_text(report.render_markdown(run, command), encoding="utf-8")
    (out / "bench.svg").write_text(svg.render_svg(run), encoding="utf-8")
    print(report.render_text(run), end="", flush=True)
    log(f"wrote {out / 'bench.json'}, {out / 'bench.md'}, {out / 'bench.svg'} "
        f"({meta['duration_s']} s)")
    if failures:
        for f in failures:
            log(f"FAILED: {f}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
