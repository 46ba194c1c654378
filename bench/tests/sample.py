"""A synthetic run with every lane status, for the report and plot tests."""

from rxbench.model import (
    NOT_NATIVE, SKIPPED, TIMED, UNAVAILABLE, WRONG, CellResult, LaneResult, Ratio, RunResult,
    WorkloadResult,
)


def timed(lane, us, ratio=None):
    ns = us * 1000
    return LaneResult(lane, TIMED, parity="max |diff| 0.0e+00", per_call_ns=[ns * 0.9, ns, ns * 1.2],
                      median_ns=ns, q1_ns=ns * 0.95, q3_ns=ns * 1.1,
                      ratio=Ratio(*ratio) if ratio else None)


def sample_run() -> RunResult:
    a_cells = []
    for label, batch, scale in (("b=1 32→32", 1, 1.0), ("b=8 64→64", 8, 3.0)):
        lanes = {
            "native": timed("native", 10 * scale),
            "floor": timed("floor", 6 * scale, (0.6, 0.55, 0.65)),
            "eager": timed("eager", 20 * scale, (2.0, 1.9, 2.1)),
            "inference_mode": timed("inference_mode", 18 * scale, (1.8, 1.7, 1.95)),
            "jit": LaneResult("jit", WRONG, "max |diff| 0.5 > rtol=1e-05, atol=1e-06"),
            "compile": (timed("compile", 1234.5, (123.45, 100.0, 150.0)) if batch == 1 else
                        LaneResult("compile", SKIPPED, "--quick runs torch.compile only on the first cell")),
            "fallback": timed("fallback", 21 * scale, (2.1, 2.0, 2.2)),
        }
        if batch == 1:
            lanes["compile"].compile_s = 4.56
        a_cells.append(CellResult(label, {"batch": batch, "in": 32, "out": 32}, 100, lanes))
    s_lanes = {
        "native": LaneResult("native", NOT_NATIVE, "route fallback-python: RXTP-TORCH-010 `-` <x> & y"),
        "floor": timed("floor", 7),
        "eager": timed("eager", 30),
        "inference_mode": timed("inference_mode", 28),
        "jit": LaneResult("jit", UNAVAILABLE, "torch.jit.script failed: boom"),
        "compile": timed("compile", 90),
        "fallback": timed("fallback", 31),
    }
    return RunResult(
        meta={"torch": "2.13.0", "threads": 1, "quick": True, "rounds": 3, "block_ms": 2.0,
              "resamples": 100, "seed": 0, "cpus": 2, "loadavg_start": 1.5},
        workloads=[
            WorkloadResult("phase_a", "Phase A: <linear> & co", "phasea.kernels.inference",
                           "native-plugin:rextio-torch", a_cells),
            WorkloadResult("scoring", "Scoring", "rxb_scoring.kernels.classify", "fallback-python",
                           [CellResult("b=1", {"batch": 1}, 50, s_lanes)]),
        ],
    )
