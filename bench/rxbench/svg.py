"""The latency plot: one panel per workload, cells along x, µs per call on a log y axis.

Each lane is a coloured line of medians with interquartile whiskers; native is the thick line,
the floor the dashed black one. Lanes that were not timed are listed under their panel. Plain
SVG, no plotting library; hovering a point shows its numbers.
"""

from __future__ import annotations

import math
from html import escape

from .model import LANE_TITLES, LANES, STATUS_SHORT, TIMED, RunResult, WorkloadResult
from .report import boundaries, format_us, settings_line

COLORS = {
    "native": "#D55E00",
    "native_free": "#882255",
    "floor": "#000000",
    "eager": "#0072B2",
    "inference_mode": "#56B4E9",
    "jit": "#009E73",
    "compile": "#CC79A7",
    "tf_function": "#7B3294",
    "tflite": "#B8860B",
    "onnxruntime": "#E69F00",
    "numpy": "#8C564B",
    "fallback": "#999999",
}
DASHES = {"floor": "6 4", "fallback": "2 3", "native_free": "8 3"}

WIDTH = 980
MARGIN_LEFT = 78
MARGIN_RIGHT = 24
PANEL_HEIGHT = 300
PLOT_TOP = 44
PLOT_BOTTOM = 70
HEADER = 100
MAX_SPREAD = 66


def log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks covering `[lo, hi]` (both > 0)."""
    if lo <= 0 or hi <= 0 or hi < lo:
        raise ValueError("log_ticks needs 0 < lo <= hi")
    ticks = []
    for exp in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0**exp
            if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9):
                ticks.append(v)
    return ticks


def axis_range(values: list[float]) -> tuple[float, float]:
    """A log axis range around `values` (µs), snapped outward to 1-2-5 steps."""
    positive = [v for v in values if v > 0]
    if not positive:
        return 1.0, 10.0
    lo, hi = min(positive), max(positive)

    def down(v: float) -> float:
        e = 10.0 ** math.floor(math.log10(v))
        return max(m * e for m in (1, 2, 5) if m * e <= v * (1 + 1e-9))

    def up(v: float) -> float:
        e = 10.0 ** math.floor(math.log10(v))
        return min(m * e for m in (1, 2, 5, 10) if m * e >= v * (1 - 1e-9))

    lo, hi = down(lo), up(hi)
    if hi / lo < 10:
        hi = lo * 10
    return lo, hi


def tick_label(us: float) -> str:
    """`500 µs`, `2 ms`, `0.5 µs`."""
    if us >= 1000:
        return f"{us / 1000:g} ms"
    return f"{us:g} µs"


def _panel(w: WorkloadResult, top: float) -> list[str]:
    out: list[str] = []
    x0, x1 = MARGIN_LEFT, WIDTH - MARGIN_RIGHT
    y0, y1 = top + PLOT_TOP, top + PANEL_HEIGHT - PLOT_BOTTOM
    out.append(f'<text x="{x0}" y="{top + 18}" class="title">{escape(w.title)}</text>')
    out.append(f'<text x="{x0}" y="{top + 34}" class="sub">'
               f'{escape(w.function)} · route {escape(w.route)}</text>')
    if w.skipped:
        out.append(f'<text x="{x0}" y="{top + PLOT_TOP + 20}" class="note">'
                   f'skipped: {escape(w.skipped)}</text>')
        return out

    values = []
    for c in w.cells:
        for lr in c.lanes.values():
            if lr.status == TIMED and lr.median_ns:
                values += [v / 1000 for v in (lr.median_ns, lr.q1_ns, lr.q3_ns) if v]
    lo, hi = axis_range(values)
    span = math.log10(hi) - math.log10(lo)

    def y(us: float) -> float:
        return y1 - (math.log10(max(us, lo)) - math.log10(lo)) / span * (y1 - y0)

    out.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" class="frame"/>')
    for t in log_ticks(lo, hi):
        yy = y(t)
        major = abs(math.log10(t) - round(math.log10(t))) < 1e-9
        out.append(f'<line x1="{x0}" x2="{x1}" y1="{yy:.1f}" y2="{yy:.1f}" '
                   f'class="{"grid major" if major else "grid"}"/>')
        out.append(f'<text x="{x0 - 6}" y="{yy + 4:.1f}" class="tick" text-anchor="end">'
                   f'{escape(tick_label(t))}</text>')
    out.append(f'<text transform="translate({x0 - 62},{(y0 + y1) / 2:.1f}) rotate(-90)" '
               f'class="axis" text-anchor="middle">per call (log)</text>')

    n = max(len(w.cells), 1)
    band = (x1 - x0) / n
    lanes = [lane for lane in LANES if any(c.lanes.get(lane) and c.lanes[lane].status == TIMED
                                           for c in w.cells)]
    spread = min(band * 0.5, MAX_SPREAD)

    def x(ci: int, lane: str) -> float:
        center = x0 + band * (ci + 0.5)
        if len(lanes) < 2:
            return center
        return center - spread / 2 + spread * lanes.index(lane) / (len(lanes) - 1)

    for ci, c in enumerate(w.cells):
        cx = x0 + band * (ci + 0.5)
        if ci:
            out.append(f'<line x1="{x0 + band * ci:.1f}" x2="{x0 + band * ci:.1f}" y1="{y0}" '
                       f'y2="{y1}" class="sep"/>')
        out.append(f'<text x="{cx:.1f}" y="{y1 + 17}" class="cell" text-anchor="middle">'
                   f'{escape(c.label)}</text>')
        eager = c.lanes.get("eager")
        if eager is not None and eager.ratio is not None:
            out.append(f'<text x="{cx:.1f}" y="{y1 + 32}" class="ratio" text-anchor="middle">'
                       f'eager ÷ native ×{eager.ratio.value:.2f}</text>')

    # Native last, so it is drawn on top.
    for lane in sorted(lanes, key=lambda name: name == "native"):
        color = COLORS[lane]
        width = 3 if lane == "native" else 1.6
        radius = 5 if lane == "native" else 3.5
        dash = f' stroke-dasharray="{DASHES[lane]}"' if lane in DASHES else ""
        run: list[tuple[float, float]] = []
        runs = [run]
        marks: list[str] = []
        for ci, c in enumerate(w.cells):
            lr = c.lanes.get(lane)
            if lr is None or lr.status != TIMED or not lr.median_ns:
                run = []
                runs.append(run)
                continue
            px, py = x(ci, lane), y(lr.median_ns / 1000)
            run.append((px, py))
            tip = f"{LANE_TITLES[lane]} · {c.label}: {format_us(lr.median_ns)} µs"
            if lr.q1_ns and lr.q3_ns:
                marks.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{y(lr.q1_ns / 1000):.1f}" '
                             f'y2="{y(lr.q3_ns / 1000):.1f}" stroke="{color}" stroke-width="1.4"/>')
                tip += f" (IQR {format_us(lr.q1_ns)}–{format_us(lr.q3_ns)})"
            if lr.ratio is not None:
                tip += f"; ×{lr.ratio.value:.2f} vs native [{lr.ratio.lo:.2f}, {lr.ratio.hi:.2f}]"
            marks.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{radius}" fill="{color}" '
                         f'stroke="#fff" stroke-width="0.8"><title>{escape(tip)}</title></circle>')
        for seg in runs:
            if len(seg) > 1:
                pts = " ".join(f"{px:.1f},{py:.1f}" for px, py in seg)
                out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" '
                           f'stroke-width="{width}"{dash} stroke-linejoin="round"/>')
        out += marks

    missing = []
    for lane in LANES:
        statuses = {c.lanes[lane].status for c in w.cells
                    if lane in c.lanes and c.lanes[lane].status != TIMED}
        if statuses:
            text = "/".join(sorted(STATUS_SHORT.get(s, s) for s in statuses))
            missing.append(f"{LANE_TITLES[lane]}: {text}")
    if missing:
        out.append(f'<text x="{x0}" y="{y1 + 52}" class="note">not timed in some or all cells — '
                   f'{escape("; ".join(missing))}</text>')
    return out


def wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap at `; ` and spaces."""
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def render_svg(run: RunResult) -> str:
    """The whole plot as an SVG document."""
    legend_rows = _legend(run.lanes() or LANES)
    header = HEADER + 20 * (len(legend_rows) - 1)
    footer = boundary_lines(run)
    height = header + PANEL_HEIGHT * max(len(run.workloads), 1) + 10 + 16 * len(footer)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif">',
        "<style>"
        ".title{font-size:15px;font-weight:bold;fill:#222}"
        ".sub{font-size:11px;fill:#666}.tick{font-size:11px;fill:#444}"
        ".axis{font-size:12px;fill:#444}.cell{font-size:11.5px;fill:#222}"
        ".note{font-size:11px;fill:#8a3b00}.ratio{font-size:11px;fill:#D55E00}.legend{font-size:12.5px;fill:#222}"
        ".frame{fill:#fcfcfc;stroke:#bbb}.grid{stroke:#e4e4e4}.grid.major{stroke:#c8c8c8}"
        ".sep{stroke:#eee}"
        "</style>",
        f'<rect width="{WIDTH}" height="{height}" fill="#fff"/>',
        f'<text x="{MARGIN_LEFT}" y="24" class="title">rextio bench — latency per call '
        f'(median; whiskers: interquartile range over rounds; lower is better)</text>',
    ]
    for i, line in enumerate(wrap(settings_line(run), 150)):
        out.append(f'<text x="{MARGIN_LEFT}" y="{42 + 14 * i}" class="sub">{escape(line)}</text>')
    for row, entries in enumerate(legend_rows):
        out += _legend_row(entries, 80 + 20 * row)
    for i, w in enumerate(run.workloads):
        out += _panel(w, header + i * PANEL_HEIGHT)
    base = header + PANEL_HEIGHT * max(len(run.workloads), 1)
    for i, line in enumerate(footer):
        out.append(f'<text x="{MARGIN_LEFT}" y="{base + 12 + 16 * i}" class="axis">'
                   f'{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def boundary_lines(run: RunResult) -> list[str]:
    """One line per framework whose boundary was measured (below the panels)."""
    out = []
    for b in boundaries(run):
        if "native_us" in b:
            out.append(f"Boundary, {b.get('framework', 'torch')} (7 tensors in, 1 out, batch 1): "
                       f"native {b['native_us']} µs per call, of which the arguments "
                       f"{b.get('args_only_us', '?')} µs; eager {b['eager_us']} µs; an empty "
                       f"Python call {b['python_call_us']} µs")
    return out


def _legend_width(lane: str) -> float:
    return 40 + 7.2 * len(LANE_TITLES[lane]) + 14


def _legend(lanes: tuple[str, ...]) -> list[list[str]]:
    """The legend's lanes split into rows that fit the width."""
    rows: list[list[str]] = [[]]
    used = 0.0
    for lane in lanes:
        w = _legend_width(lane)
        if rows[-1] and MARGIN_LEFT + used + w > WIDTH - MARGIN_RIGHT:
            rows.append([])
            used = 0.0
        rows[-1].append(lane)
        used += w
    return rows


def _legend_row(lanes: list[str], y: float) -> list[str]:
    out = []
    lx = MARGIN_LEFT
    for lane in lanes:
        color = COLORS[lane]
        dash = f' stroke-dasharray="{DASHES[lane]}"' if lane in DASHES else ""
        width = 3 if lane == "native" else 1.8
        out.append(f'<line x1="{lx}" x2="{lx + 26}" y1="{y}" y2="{y}" stroke="{color}" '
                   f'stroke-width="{width}"{dash}/>')
        out.append(f'<circle cx="{lx + 13}" cy="{y}" r="{4 if lane == "native" else 3}" '
                   f'fill="{color}"/>')
        label = LANE_TITLES[lane]
        out.append(f'<text x="{lx + 32}" y="{y + 4}" class="legend">{escape(label)}</text>')
        lx += _legend_width(lane)
    return out
