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
    assert data["schema"] == 1
    assert RunResult.from_dict(data) == run


def test_lane_results_validate_lane_and_status():
    with pytest.raises(ValueError):
        LaneResult("turbo", "timed")
    with pytest.raises(ValueError):
        LaneResult("native", "fast")
