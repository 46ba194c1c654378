"""The logic of `cargo xtask bench`, kept free of timing side effects so it can be unit-tested.

- `model`: the result records (lanes, cells, workloads, run) and their JSON form;
- `stats`: medians, percentiles and the paired bootstrap interval of a latency ratio;
- `schedule`: warm-up, block-size calibration and interleaved rounds in shuffled lane order;
- `parity`: the gate every lane passes before it is timed;
- `jitsrc`: the TorchScript copy of a workload (marker annotations become `torch.Tensor`);
- `workloads`: the benchmark's workloads, their cells and inputs;
- `report`: the text and markdown tables; `svg`: the latency plot.

`bench/run.py` ties them together.
"""
