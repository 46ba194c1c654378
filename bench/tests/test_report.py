import json

import pytest

from rxbench import report
from rxbench.model import LaneResult, RunResult
from sample import sample_run


def test_numbers_are_formatted_for_people():
    assert report.format_us(9_812) == "9.81"
    assert report.format_us(21_449) == "21.4"
    assert report.format_us(1_234_500) == "1,234"
    assert report.format_us(None) == "—"
    assert report.format_us(99_970) == "100" and report.format_us(9_997) == "10.0"
    assert report.format_ratio(2.345) == "2.35" and report.format_ratio(123.45) == "123.5"


def test_latency_table_shows_medians_and_statuses():
    header, rows = report.latency_rows(sample_run())
    assert header[:3] == ["workload", "cell", "native"] and len(header) == 9
    assert rows[0][:4] == ["phase_a", "b=1 32→32", "10.0", "6.00"]
    assert rows[0][header.index("jit.script")] == "WRONG"
    assert rows[1][header.index("torch.compile")] == "skipped"
    assert rows[2][header.index("native")] == "not native (fallback)"
    assert rows[2][header.index("jit.script")] == "unavailable"


def test_ratio_table_has_intervals_and_no_ratio_without_native():
    header, rows = report.ratio_rows(sample_run())
    assert "native" not in header and len(header) == 8
    assert rows[0][header.index("eager")] == "2.00 [1.90–2.10]"
    assert rows[0][header.index("torch.compile")] == "123.5 [100.0–150.0]"
    assert rows[0][header.index("jit.script")] == "WRONG"
    assert rows[2][header.index("eager")] == "n/a (not native)"


def test_compile_times_and_notes():
    _, rows = report.compile_rows(sample_run())
    assert rows == [["phase_a", "b=1 32→32", "4.56"]]
    notes = report.notes(sample_run())
    assert "phase_a · jit.script · WRONG (all cells): max |diff| 0.5 > rtol=1e-05, atol=1e-06" in notes
    assert any(n.startswith("phase_a · torch.compile · skipped (b=8 64→64)") for n in notes)
    assert any("scoring · native · not native (fallback) (all cells): route fallback-python" in n
               for n in notes)


def test_text_report_is_aligned():
    text = report.render_text(sample_run())
    lines = text.splitlines()
    assert lines[0].startswith("rextio bench: torch 2.13.0; 1 torch thread(s); quick; 3 rounds")
    table = lines[lines.index("Median latency per call (µs, median of 3 rounds)") + 1:][:5]
    assert len({len(line) for line in table[:2]}) == 1, "header and rule have the same width"
    assert "Not timed:" in text


def test_markdown_report_has_well_formed_tables():
    md = report.render_markdown(sample_run(), "cargo xtask bench --quick")
    assert md.startswith("Command: `cargo xtask bench --quick`")
    tables = [line for line in md.splitlines() if line.startswith("|")]
    widths = {line.count(" | ") for line in tables if not line.startswith("|:")}
    assert len(tables) == 2 + 3 + 2 + 3 + 2 + 1  # header+rule+rows per table
    assert widths == {8, 7, 2}
    assert "**native**:" in md


def test_json_round_trip():
    run = sample_run()
    data = json.loads(json.dumps(run.to_dict()))
    assert data["schema"] == 2
    assert RunResult.from_dict(data) == run


def test_lane_results_validate_lane_and_status():
    with pytest.raises(ValueError):
        LaneResult("turbo", "timed")
    with pytest.raises(ValueError):
        LaneResult("native", "fast")


def run_with_new_lanes():
    from rxbench.model import CellResult, WorkloadResult, WRONG
    from sample import timed

    run = sample_run()
    cell = run.workloads[0].cells[0]
    cell.lanes["onnxruntime"] = timed("onnxruntime", 7, (0.7, 0.6, 0.8))
    cell.lanes["onnxruntime"].compile_s = 0.03
    cell.lanes["onnxruntime"].note = "torch.onnx.export(dynamo=False, opset 17)"
    cell.lanes["numpy"] = LaneResult("numpy", WRONG, "max |diff| 0.1 > rtol=1e-05, atol=1e-06")
    run.workloads.append(WorkloadResult("tf_scoring", "TF scoring", "m.f", "", [],
                                        framework="tensorflow",
                                        skipped="`import tensorflow` failed: ModuleNotFoundError"))
    tf_lanes = {"native": timed("native", 20), "eager": timed("eager", 60, (3.0, 2.9, 3.1)),
                "tf_function": timed("tf_function", 80, (4.0, 3.8, 4.2)),
                "tflite": timed("tflite", 9, (0.45, 0.4, 0.5))}
    tf_lanes["tf_function"].compile_s = 0.5
    run.workloads.append(WorkloadResult("tf_phase_a", "TF phase A", "m.g", "native-plugin:rextio-tensorflow",
                                        [CellResult("b=1", {"batch": 1}, 10, tf_lanes)],
                                        framework="tensorflow"))
    return run


def test_new_lanes_get_columns_in_report_order_and_absent_lanes_a_dash():
    run = run_with_new_lanes()
    header, rows = report.latency_rows(run)
    assert header[2:] == ["native", "floor", "eager", "inference_mode", "jit.script",
                          "torch.compile", "tf.function", "TFLite", "ONNX Runtime", "numpy",
                          "fallback"]
    assert rows[0][header.index("ONNX Runtime")] == "7.00"
    assert rows[0][header.index("numpy")] == "WRONG"
    assert rows[0][header.index("tf.function")] == "—"
    tf = next(r for r in rows if r[0] == "tf_phase_a")
    assert tf[header.index("tf.function")] == "80.0" and tf[header.index("jit.script")] == "—"
    assert not any(r[0] == "tf_scoring" for r in rows), "a skipped workload has no cells"
    rh, rr = report.ratio_rows(run)
    assert rr[0][rh.index("ONNX Runtime")] == "0.70 [0.60–0.80]"
    tf = next(r for r in rr if r[0] == "tf_phase_a")
    assert tf[rh.index("tf.function")] == "4.00 [3.80–4.20]" and tf[rh.index("TFLite")] == "0.45 [0.40–0.50]"


def test_build_times_notes_and_skipped_workloads_are_reported():
    run = run_with_new_lanes()
    header, rows = report.compile_rows(run)
    assert header == ["workload", "cell", "torch.compile s", "ONNX export+session s",
                      "tf.function trace s"]
    assert rows[0] == ["phase_a", "b=1 32→32", "4.56", "0.03", "—"]
    assert rows[-1] == ["tf_phase_a", "b=1", "—", "—", "0.50"]
    notes = report.notes(run)
    assert notes[0] == "tf_scoring · whole workload · skipped: `import tensorflow` failed: ModuleNotFoundError"
    assert any(n.startswith("phase_a · numpy · WRONG (b=1 32→32): max |diff| 0.1") for n in notes)
    md = report.render_markdown(run)
    assert "- phase_a · ONNX Runtime: torch.onnx.export(dynamo=False, opset 17)" in md
    assert "- **TFLite**:" in md
    data = json.loads(json.dumps(run.to_dict()))
    assert data["workloads"][2]["skipped"].startswith("`import tensorflow`")
    assert RunResult.from_dict(data) == run


def test_settings_line_names_the_other_frameworks_versions():
    run = sample_run()
    run.meta.update(onnxruntime="1.31.1", numpy="2.4.6", tensorflow="2.21.0")
    line = report.settings_line(run)
    assert line.startswith("torch 2.13.0; onnxruntime 1.31.1; numpy 2.4.6; tensorflow 2.21.0; ")


def _with_boundaries(run: RunResult) -> RunResult:
    run.meta["boundary"] = [
        {"framework": "torch", "function": "rxb_scoring.kernels.boundary (7 tensors in)",
         "native_us": 0.9, "eager_us": 2.5, "python_call_us": 0.05, "args_only_us": 0.4,
         "alloc_us": 0.3, "alloc_name": "torch.empty_like", "target_us": 1.0},
        {"framework": "tensorflow", "function": "rxb_tf_scoring.kernels.boundary (7 tensors in)",
         "native_us": 2.1, "eager_us": 9.0, "python_call_us": 0.05, "args_only_us": 1.2,
         "alloc_us": None, "alloc_name": None, "target_us": None},
        {"framework": "tensorflow", "error": "not native in this build"},
    ]
    return run


def test_boundary_rows_one_per_framework_with_its_own_target_and_allocation():
    header, rows = report.boundary_rows(_with_boundaries(sample_run()))
    col = {name: i for i, name in enumerate(header)}
    torch_row, tf_row, broken = rows
    assert torch_row[col["framework"]] == "torch" and torch_row[col["target"]] == "≤ 1.0"
    assert torch_row[col["allocation"]] == "0.3 (torch.empty_like)"
    assert tf_row[col["native"]] == "2.1" and tf_row[col["arguments only"]] == "1.2"
    assert tf_row[col["target"]] == "—" and tf_row[col["allocation"]] == "—"
    assert broken[col["function"]] == "not native in this build"
    md = report.render_markdown(_with_boundaries(sample_run()))
    assert "| tensorflow | rxb_tf_scoring.kernels.boundary (7 tensors in) | 2.1 |" in md
    assert "rxb_tf_scoring.kernels.boundary" in report.render_text(_with_boundaries(sample_run()))


def test_boundary_of_an_older_run_is_one_torch_record():
    run = sample_run()
    run.meta["boundary"] = {"function": "f", "native_us": 1.5, "eager_us": 3.0,
                            "python_call_us": 0.1, "args_only_us": 0.7, "empty_like_us": 0.2,
                            "target_us": 1.0}
    _, rows = report.boundary_rows(run)
    assert rows[0][0] == "torch" and rows[0][-1] == "0.2 (torch.empty_like)"
