"""Tables of a run: latency medians, ratios to native with their intervals, compile times, and
each workload's targets (`Workload.targets`) met or missed.

The same rows render as aligned text (stdout) and as GitHub markdown (`bench.md`, README).
"""

from __future__ import annotations

from collections.abc import Sequence

from .model import (
    LANE_DESCRIPTIONS,
    LANE_TITLES,
    LANES,
    NOT_NATIVE,
    STATUS_SHORT,
    TIMED,
    CellResult,
    LaneResult,
    Ratio,
    RunResult,
    WorkloadResult,
)

#: The key of the module-over-free-function target (`workloads.MODULE_OVER_FREE`).
MODULE_OVER_FREE = "module/free"


def format_us(ns: float | None) -> str:
    """Nanoseconds as microseconds with three significant digits, never in exponent form."""
    if ns is None:
        return "—"
    us = ns / 1000.0
    # Thresholds apply to the rounded value, so 99.97 prints as 100, not 100.0.
    if round(us, 2) < 10:
        return f"{us:.2f}"
    if round(us, 1) < 100:
        return f"{us:.1f}"
    return f"{us:,.0f}"


def format_ratio(value: float) -> str:
    """A ratio with two decimals below 10, one above."""
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def latency_cell(lr: LaneResult | None) -> str:
    """A latency table entry: the median in µs, or the lane's status."""
    if lr is None:
        return "—"
    if lr.status == TIMED:
        return format_us(lr.median_ns)
    return STATUS_SHORT.get(lr.status, lr.status)


def ratio_cell(lr: LaneResult | None, native: LaneResult | None) -> str:
    """A ratio table entry: `value [lo–hi]`, or why there is none."""
    if lr is None:
        return "—"
    if lr.status != TIMED:
        return STATUS_SHORT.get(lr.status, lr.status)
    if native is None or native.status != TIMED or lr.ratio is None:
        if native is not None and native.status == NOT_NATIVE:
            return "n/a (not native)"
        return "n/a (native not timed)"
    r = lr.ratio
    return f"{format_ratio(r.value)} [{format_ratio(r.lo)}–{format_ratio(r.hi)}]"


def latency_rows(run: RunResult) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the latency table (median µs per call)."""
    lanes = run.lanes()
    header = ["workload", "cell", *(LANE_TITLES[lane] for lane in lanes)]
    rows = []
    for w in run.workloads:
        for c in w.cells:
            rows.append([w.name, c.label, *(latency_cell(c.lanes.get(lane)) for lane in lanes)])
    return header, rows


def ratio_rows(run: RunResult) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the ratio table (other / native, 95% interval)."""
    others = tuple(lane for lane in run.lanes() if lane != "native")
    header = ["workload", "cell", *(LANE_TITLES[lane] for lane in others)]
    rows = []
    for w in run.workloads:
        for c in w.cells:
            native = c.lanes.get("native")
            rows.append([w.name, c.label,
                         *(ratio_cell(c.lanes.get(lane), native) for lane in others)])
    return header, rows


#: Lanes whose build time (`compile_s`) the build-time table shows, with its column title.
BUILD_TIME_LANES: dict[str, str] = {
    "compile": "torch.compile s",
    "onnxruntime": "ONNX export+session s",
    "tf_function": "tf.function trace s",
    "tflite": "TFLite convert s",
}


def compile_rows(run: RunResult) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the lanes' build times (torch.compile's first call, ONNX export and
    session, tf.function tracing, TFLite conversion; seconds); only columns that have a value."""
    cols = [lane for lane in BUILD_TIME_LANES
            if any(c.lanes.get(lane) is not None and c.lanes[lane].compile_s is not None
                   for w in run.workloads for c in w.cells)]
    header = ["workload", "cell", *(BUILD_TIME_LANES[lane] for lane in cols)]
    rows = []
    for w in run.workloads:
        for c in w.cells:
            values = []
            for lane in cols:
                lr = c.lanes.get(lane)
                values.append(f"{lr.compile_s:.2f}" if lr is not None and lr.compile_s is not None
                              else "—")
            if any(v != "—" for v in values):
                rows.append([w.name, c.label, *values])
    return header, rows


def target_met(op: str, value: float, bound: float) -> bool:
    """Whether a measured ratio `value` satisfies `op bound` (`>=`, `>`, `<=`)."""
    if op == ">=":
        return value >= bound
    if op == ">":
        return value > bound
    if op == "<=":
        return value <= bound
    raise ValueError(f"unknown target op {op!r}")


def target_verdict(op: str, ratio: Ratio, bound: float) -> str:
    """`met` when the whole 95% interval meets the bound, `borderline` when only the median
    does, `MISSED` when the median does not."""
    if not target_met(op, ratio.value, bound):
        return "MISSED"
    if target_met(op, ratio.lo, bound) and target_met(op, ratio.hi, bound):
        return "met"
    return "borderline"


def target_bound(target: dict, batch: int) -> float | None:
    """A recorded target's bound at `batch` (batch 0: every batch), or None."""
    table = {int(b): float(v) for b, v in target.get("values", [])}
    return table.get(batch, table.get(0))


def module_over_free(cell: CellResult) -> Ratio | None:
    """The module's native median over the free-function twin's, with its interval: the
    inverse of the `native_free` lane's ratio (free / module), bounds swapped."""
    lr = cell.lanes.get("native_free")
    if lr is None or lr.status != TIMED or lr.ratio is None or lr.ratio.value <= 0:
        return None
    r = lr.ratio
    inv = (lambda x: 1.0 / x if x > 0 else float("inf"))
    return Ratio(value=inv(r.value), lo=inv(r.hi), hi=inv(r.lo))


def target_ratio(cell: CellResult, key: str) -> tuple[Ratio | None, str]:
    """The measured ratio a target `key` is checked on, or None with the reason."""
    native = cell.lanes.get("native")
    if key == MODULE_OVER_FREE:
        r = module_over_free(cell)
        if r is not None:
            return r, ""
        lr = cell.lanes.get("native_free")
        if native is None or native.status != TIMED:
            return None, f"native {STATUS_SHORT.get(native.status, native.status) if native else '—'}"
        if lr is None:
            return None, "—"
        return None, f"native free fns {STATUS_SHORT.get(lr.status, lr.status)}"
    lr = cell.lanes.get(key)
    if lr is None:
        return None, "—"
    if lr.status != TIMED:
        return None, STATUS_SHORT.get(lr.status, lr.status)
    if lr.ratio is None:
        return None, ratio_cell(lr, native)
    return lr.ratio, ""


def target_title(key: str) -> str:
    """A target's column title: `inference_mode / native`, `module / free`."""
    if key == MODULE_OVER_FREE:
        return "module / free fns"
    return f"{LANE_TITLES.get(key, key)} / native"


def target_rows(w: WorkloadResult) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a workload's target table: native medians, then each target's
    ratio with its interval, its bound and whether the median ratio meets it."""
    keys = list(w.targets)
    header = ["workload", "cell", "native µs", *(
        ["native free fns µs"] if MODULE_OVER_FREE in keys else []), *(
        target_title(k) for k in keys)]
    rows = []
    for c in w.cells:
        row = [w.name, c.label, latency_cell(c.lanes.get("native"))]
        if MODULE_OVER_FREE in keys:
            row.append(latency_cell(c.lanes.get("native_free")))
        for key in keys:
            target = w.targets[key]
            bound = target_bound(target, c.batch)
            ratio, why = target_ratio(c, key)
            if ratio is None:
                row.append(why)
                continue
            text = f"{format_ratio(ratio.value)} [{format_ratio(ratio.lo)}–{format_ratio(ratio.hi)}]"
            if bound is not None:
                op = target.get("op", ">=")
                text += f" {target_verdict(op, ratio, bound)} ({op} {bound:g})"
            row.append(text)
        rows.append(row)
    return header, rows


def notes(run: RunResult) -> list[str]:
    """Why lanes were not timed, one line per workload, lane and reason (cells merged)."""
    lines = [f"{w.name} · whole workload · skipped: {w.skipped}" for w in run.workloads if w.skipped]
    seen: dict[tuple[str, str, str, str], list[str]] = {}
    for w in run.workloads:
        for c in w.cells:
            for lane in LANES:
                lr = c.lanes.get(lane)
                if lr is None or lr.status == TIMED:
                    continue
                key = (w.name, lane, lr.status, lr.reason)
                seen.setdefault(key, []).append(c.label)
    for (workload, lane, status, reason), cells in seen.items():
        total = next((len(w.cells) for w in run.workloads if w.name == workload), 0)
        where = "all cells" if len(cells) == total else ", ".join(cells)
        text = f"{workload} · {LANE_TITLES[lane]} · {STATUS_SHORT.get(status, status)} ({where})"
        lines.append(f"{text}: {reason}" if reason else text)
    return lines


def align(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """An aligned text table: first two columns left-aligned, the rest right-aligned."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [str(c).ljust(widths[i]) if i < 2 else str(c).rjust(widths[i])
                 for i, c in enumerate(cells)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub markdown table (numeric columns right-aligned)."""
    def esc(cell: str) -> str:
        return str(cell).replace("|", "\\|")

    out = ["| " + " | ".join(esc(h) for h in header) + " |",
           "|" + "|".join(":---" if i < 2 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def settings_line(run: RunResult) -> str:
    """One line with the settings and environment a reader needs to judge the numbers."""
    m = run.meta
    parts = [f"torch {m.get('torch', '?')}"]
    for key, name in (("onnxruntime", "onnxruntime"), ("numpy", "numpy"), ("tensorflow", "tensorflow")):
        if m.get(key):
            parts.append(f"{name} {m[key]}")
    parts += [
        f"{m.get('threads', '?')} torch thread(s)",
        "quick" if m.get("quick") else "full",
        f"{m.get('rounds', '?')} rounds, blocks of ≈{m.get('block_ms', '?')} ms, lanes shuffled per round",
        f"bootstrap {m.get('resamples', '?')} resamples (seed {m.get('seed', '?')})",
        f"{m.get('cpus', '?')} CPUs",
    ]
    load = m.get("loadavg_start")
    if load is not None:
        parts.append(f"load avg {load:.2f} at start")
    return "; ".join(parts)


def boundaries(run: RunResult) -> list[dict]:
    """The boundary records of a run (one per framework; a single record in older runs)."""
    b = run.meta.get("boundary")
    if isinstance(b, dict):
        return [b]
    return [r for r in (b or []) if isinstance(r, dict)]


def boundary_rows(run: RunResult) -> tuple[list[str], list[list[str]]]:
    """One row per framework whose boundary was measured."""
    header = ["framework", "function", "native", "target", "eager", "empty Python call",
              "arguments only", "allocation"]
    rows = []
    for b in boundaries(run):
        if "native_us" not in b:
            rows.append([b.get("framework", "torch"), b.get("error", "?"), "—", "—", "—", "—",
                         "—", "—"])
            continue
        alloc = b.get("alloc_us", b.get("empty_like_us"))
        alloc_name = b.get("alloc_name") or ("torch.empty_like" if "empty_like_us" in b else "")
        rows.append([
            b.get("framework", "torch"), b["function"], f"{b['native_us']}",
            f"≤ {b['target_us']}" if b.get("target_us") is not None else "—",
            f"{b['eager_us']}", f"{b['python_call_us']}", f"{b.get('args_only_us', '—')}",
            f"{alloc} ({alloc_name})" if alloc is not None else "—",
        ])
    return header, rows


def _sections(run: RunResult, table) -> list[tuple[str, str]]:
    rounds = run.meta.get("rounds", "?")
    out = [
        (f"Median latency per call (µs, median of {rounds} rounds)", table(*latency_rows(run))),
        ("Ratio other / native (> 1: native is faster), median with 95% bootstrap interval",
         table(*ratio_rows(run))),
    ]
    ch, cr = compile_rows(run)
    if cr:
        out.append(("Build time of the compiled lanes (s; torch.compile: first call, Inductor's "
                    "on-disk caches as found)", table(ch, cr)))
    for w in run.workloads:
        if w.targets and w.cells:
            out.append((f"Targets of {w.name}: ratio other / native (module / free fns: the "
                        "module's native median over the free-function twin's), median with 95% "
                        "bootstrap interval; met: the whole interval meets the target, borderline: only the "
                        "median does, MISSED: the median does not", table(*target_rows(w))))
    return out


def render_text(run: RunResult) -> str:
    """The report for stdout."""
    lines = [f"rextio bench: {settings_line(run)}"]
    for title, body in _sections(run, align):
        lines += ["", title, body]
    bh, br = boundary_rows(run)
    if br:
        lines += ["", "Boundary (one-op function, seven tensors in, one out, batch 1; µs per call)",
                  align(bh, br)]
    extra = notes(run)
    if extra:
        lines += ["", "Not timed:"] + [f"  - {n}" for n in extra]
    return "\n".join(lines) + "\n"


def render_markdown(run: RunResult, command: str = "cargo xtask bench") -> str:
    """The report as markdown (`target/bench/bench.md`, pasted into the README)."""
    lines = [f"Command: `{command}` — {settings_line(run)}."]
    for title, body in _sections(run, markdown):
        lines += ["", f"**{title}**", "", body]
    t = run.meta.get("gil_threads")
    bh, br = boundary_rows(run)
    if br:
        lines += ["", "**Boundary** (a native one-op function: seven tensors in, one out, batch 1; "
                  "µs per call, median): the whole call, eager, an empty Python function taking "
                  "the same arguments, the seven arguments alone (the first one returned), and "
                  "one allocation of the output from Python where the framework has one that "
                  "is not an op", "", markdown(bh, br)]
    if t:
        lines += ["", f"**Threads** ({t['function']}): {t['calls_per_s_1_thread']} calls/s from "
                  f"one Python thread, {t['calls_per_s_2_threads']} from two ({t['scaling']}x)."]
    extra = notes(run)
    if extra:
        lines += ["", "Not timed:", ""] + [f"- {n}" for n in extra]
    lines += ["", "Lanes:", ""]
    lines += [f"- **{LANE_TITLES[lane]}**: {LANE_DESCRIPTIONS[lane]}" for lane in run.lanes()]
    built = sorted({(w.name, lr.lane, lr.note) for w in run.workloads for c in w.cells
                    for lr in c.lanes.values() if lr.note})
    if built:
        lines += ["", "How lanes were built:", ""]
        lines += [f"- {name} · {LANE_TITLES[lane]}: {note}" for name, lane, note in built]
    return "\n".join(lines) + "\n"
