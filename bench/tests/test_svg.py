import xml.etree.ElementTree as ET

import pytest

from rxbench import svg
from rxbench.model import LANE_TITLES, RunResult
from sample import sample_run

NS = "{http://www.w3.org/2000/svg}"


def texts(root):
    return ["".join(t.itertext()) for t in root.iter(f"{NS}text")]


def test_plot_is_valid_svg_with_a_panel_per_workload_and_a_legend():
    doc = svg.render_svg(sample_run())
    root = ET.fromstring(doc)
    all_text = texts(root)
    assert "Phase A: <linear> & co" in all_text and "Scoring" in all_text
    for lane in sample_run().lanes():
        assert LANE_TITLES[lane] in all_text
    assert any(t.startswith("eager ÷ native ×2.00") for t in all_text)
    assert any("not native (fallback)" in t for t in all_text)
    lines = [p for p in root.iter(f"{NS}polyline")]
    native = [p for p in lines if p.get("stroke") == svg.COLORS["native"]]
    assert len(native) == 1 and len(native[0].get("points").split()) == 2
    tips = ["".join(t.itertext()) for t in root.iter(f"{NS}title")]
    assert any(t.startswith("native · b=1 32→32: 10.0 µs") for t in tips)


def test_native_is_drawn_last_and_lower_latency_is_lower_on_the_page():
    root = ET.fromstring(svg.render_svg(sample_run()))
    circles = [c for c in root.iter(f"{NS}circle") if c.find(f"{NS}title") is not None]
    first_panel = [c for c in circles if "b=1 32→32" in c.find(f"{NS}title").text]
    by_lane = {c.find(f"{NS}title").text.split(" · ")[0]: float(c.get("cy")) for c in first_panel}
    assert by_lane["floor"] > by_lane["native"] > by_lane["eager"]
    panel = [c.find(f"{NS}title").text.split(" · ")[0] for c in circles
             if c.find(f"{NS}title").text.split(" · ")[1].startswith(("b=1 32", "b=8 64"))]
    assert panel[-2:] == ["native", "native"] and "native" not in panel[:-2]


def test_empty_run_still_renders():
    root = ET.fromstring(svg.render_svg(RunResult(meta={})))
    assert root.tag == f"{NS}svg"


def test_log_ticks_and_axis_range():
    assert svg.log_ticks(1, 100) == [1, 2, 5, 10, 20, 50, 100]
    assert svg.log_ticks(3, 40) == [5, 10, 20]
    with pytest.raises(ValueError):
        svg.log_ticks(0, 1)
    assert svg.axis_range([12.0, 340.0]) == (10.0, 500.0)
    assert svg.axis_range([3.0, 4.0]) == (2.0, 20.0)
    assert svg.axis_range([]) == (1.0, 10.0)
    assert svg.tick_label(2000) == "2 ms" and svg.tick_label(0.5) == "0.5 µs"


def test_wrap():
    assert svg.wrap("aa bb cc dd", 5) == ["aa bb", "cc dd"]


def test_new_lanes_have_colors_the_legend_wraps_and_a_skipped_workload_says_so():
    from test_report import run_with_new_lanes

    run = run_with_new_lanes()
    root = ET.fromstring(svg.render_svg(run))
    all_text = texts(root)
    for lane in run.lanes():
        assert lane in svg.COLORS and LANE_TITLES[lane] in all_text
    assert len(svg._legend(run.lanes())) >= 2
    assert any(t.startswith("skipped: `import tensorflow` failed") for t in all_text)
    legend_ys = {float(t.get("y")) for t in root.iter(f"{NS}text") if t.get("class") == "legend"}
    assert len(legend_ys) == len(svg._legend(run.lanes()))


def test_plot_names_each_measured_boundary_below_the_panels():
    run = sample_run()
    plain = ET.fromstring(svg.render_svg(run))
    run.meta["boundary"] = [
        {"framework": "torch", "function": "f", "native_us": 0.9, "eager_us": 2.5,
         "python_call_us": 0.05, "args_only_us": 0.4, "target_us": 1.0},
        {"framework": "tensorflow", "function": "g", "native_us": 2.1, "eager_us": 9.0,
         "python_call_us": 0.05, "args_only_us": 1.2, "target_us": None},
    ]
    root = ET.fromstring(svg.render_svg(run))
    lines = [t for t in texts(root) if t.startswith("Boundary, ")]
    assert [line.split(" ")[1] for line in lines] == ["torch", "tensorflow"]
    assert "native 2.1 µs per call, of which the arguments 1.2 µs" in lines[1]
    assert float(root.get("height")) > float(plain.get("height"))
