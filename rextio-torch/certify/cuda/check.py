"""Run the torch CUDA lane for real on cuda:0 and write evidence (support_claim=false).

Called by `cargo xtask certify --cuda` with the built project and the host's checker library
(`rextio_certify`) on PYTHONPATH. Checks, each recorded in the evidence: the function is the
native extension; parity with eager PyTorch on contiguous and non-contiguous inputs; outputs
float32 rank 1 on cuda:0 without grad; no host/device copies and CUDA kernel activity
(torch.profiler); CUDA graph capture on a non-default stream and replay with new inputs;
boundary rejections with the exact messages. Exit status as `rextio_certify.CudaLane` says.
"""

import rextio_certify


def eager(x, w, b):
    return ((x @ w) + b).relu().mean(dim=1)


def parity(lane, native, torch, cases):
    dev = torch.device("cuda:0")
    for name, (x, w, b) in cases.items():
        if name == "non_contiguous" and (x.is_contiguous() or w.is_contiguous() or b.is_contiguous()):
            lane.fail("the non-contiguous case is contiguous")
        snapshot = [t.clone() for t in (x, w, b)]
        with torch.no_grad():
            want = eager(x, w, b)
        got = native(x, w, b)
        if got.device != dev or got.dtype != torch.float32 or got.dim() != 1 or got.requires_grad:
            lane.fail(f"{name}: output is {got.dtype} rank {got.dim()} on {got.device}")
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        for before, after in zip(snapshot, (x, w, b)):
            if not torch.equal(before, after):
                lane.fail(f"{name}: an input was mutated")
        lane.parity(name, (got - want).abs().max().item())


def profiled(lane, native, torch, x, w, b):
    """No host/device transfers, and CUDA kernels ran."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        native(x, w, b)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events()]
    transfers = [n for n in names if "Memcpy HtoD" in n or "Memcpy DtoH" in n or n in ("aten::_to_copy", "aten::to")]
    if transfers:
        lane.fail(f"host/device transfers observed: {sorted(set(transfers))}")
    cuda_kernels = [e.name for e in prof.events() if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
    lane.passed("no_transfers", profiled_events=len(names))
    if not cuda_kernels:
        lane.fail("no CUDA kernel activity observed")
    lane.passed("kernel_activity", cuda_events=len(cuda_kernels))


def graph_replay(lane, native, torch, inputs):
    """Capture on a non-default stream, replay with new inputs."""
    sx, sw, sb = (t.clone() for t in inputs)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            native(sx, sw, sb)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        static_out = native(sx, sw, sb)
    for _ in range(2):
        nx, nw, nb = torch.randn_like(sx), torch.randn_like(sw), torch.randn_like(sb)
        sx.copy_(nx)
        sw.copy_(nw)
        sb.copy_(nb)
        graph.replay()
        torch.cuda.synchronize()
        with torch.no_grad():
            torch.testing.assert_close(static_out, eager(nx, nw, nb), rtol=1e-5, atol=1e-5)
    lane.passed("cuda_graph_replay", replays=2, stream="non-default")


def check(lane, _args):
    import torch

    if not torch.cuda.is_available():
        lane.fail("no CUDA device: torch.cuda.is_available() is False (install the CUDA torch wheel)")
    from rxcudatorch import lanes

    native = lane.native(lanes.head, "lanes.head")
    dev = torch.device("cuda:0")
    torch.manual_seed(0)
    cases = {
        "contiguous": (
            torch.randn(64, 32, device=dev),
            torch.randn(32, 16, device=dev),
            torch.randn(16, device=dev),
        ),
        "non_contiguous": (
            torch.randn(32, 64, device=dev).t(),
            torch.randn(16, 32, device=dev).t(),
            torch.randn(32, device=dev)[::2],
        ),
    }
    parity(lane, native, torch, cases)
    x, w, b = cases["contiguous"]
    profiled(lane, native, torch, x, w, b)
    graph_replay(lane, native, torch, cases["contiguous"])
    lane.rejections(
        native,
        {
            "cpu": ((x.cpu(), w, b), "rextio-torch: expected a cuda:0 tensor"),
            "float64": ((x.double(), w, b), "rextio-torch: expected a float32 tensor"),
            "rank": ((x[0], w, b), "rextio-torch: expected rank-2 tensor, got rank 1"),
            "not_a_tensor": (([[1.0]], w, b), "rextio-torch: expected a torch.Tensor"),
        },
    )
    return {"torch_version": torch.__version__, "torch_cuda_version": torch.version.cuda}


if __name__ == "__main__":
    rextio_certify.CudaLane("rextio-torch", "torch-cuda-e2", "cuda-libtorch-linux-x86_64").run(check)
