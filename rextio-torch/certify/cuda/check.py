"""Run the CUDA E2 slice for real on cuda:0 and write evidence (support_claim=false).

Called by `cargo xtask certify --cuda` with the built project on PYTHONPATH. Checks, each
recorded in the evidence: the function is the native extension; parity with eager PyTorch on
contiguous and non-contiguous inputs; outputs float32 rank 1 on cuda:0 without grad; no
host/device copies and CUDA kernel activity (torch.profiler); CUDA graph capture on a
non-default stream and replay with new inputs; boundary rejections with the exact messages.
"""

import argparse
import datetime
import json
import sys


def fail(msg):
    sys.exit(f"rextio-torch CUDA certification: {msg}")


def main():
    ap = argparse.ArgumentParser()
    for a in ("--project", "--evidence", "--plugin", "--device-name", "--sm"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        fail("no CUDA device: torch.cuda.is_available() is False (install the CUDA torch wheel)")
    from rxcudatorch import lanes

    native = lanes.head
    if type(native).__name__ != "builtin_function_or_method":
        fail(f"lanes.head is not the native extension function ({type(native).__name__})")
    dev = torch.device("cuda:0")

    def eager(x, w, b):
        return ((x @ w) + b).relu().mean(dim=1)

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
    checks = {}
    for name, (x, w, b) in cases.items():
        if name == "non_contiguous" and (x.is_contiguous() or w.is_contiguous() or b.is_contiguous()):
            fail("the non-contiguous case is contiguous")
        snapshot = [t.clone() for t in (x, w, b)]
        with torch.no_grad():
            want = eager(x, w, b)
        got = native(x, w, b)
        if got.device != dev or got.dtype != torch.float32 or got.dim() != 1 or got.requires_grad:
            fail(f"{name}: output is {got.dtype} rank {got.dim()} on {got.device}")
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        for before, after in zip(snapshot, (x, w, b)):
            if not torch.equal(before, after):
                fail(f"{name}: an input was mutated")
        checks[f"parity_{name}"] = {
            "ok": True,
            "max_abs_diff": float((got - want).abs().max().item()),
        }

    # No host/device transfers, and CUDA kernels ran.
    x, w, b = cases["contiguous"]
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        native(x, w, b)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events()]
    transfers = [n for n in names if "Memcpy HtoD" in n or "Memcpy DtoH" in n or n in ("aten::_to_copy", "aten::to")]
    if transfers:
        fail(f"host/device transfers observed: {sorted(set(transfers))}")
    cuda_kernels = [e.name for e in prof.events() if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
    checks["no_transfers"] = {"ok": True, "profiled_events": len(names)}
    checks["kernel_activity"] = {"ok": bool(cuda_kernels), "cuda_events": len(cuda_kernels)}
    if not cuda_kernels:
        fail("no CUDA kernel activity observed")

    # CUDA graph: capture on a non-default stream, replay with new inputs.
    sx, sw, sb = (t.clone() for t in cases["contiguous"])
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
    checks["cuda_graph_replay"] = {"ok": True, "replays": 2, "stream": "non-default"}

    # Boundary rejections with the exact messages.
    rejects = {
        "cpu": ((x.cpu(), w, b), "rextio-torch: expected a cuda:0 tensor"),
        "float64": ((x.double(), w, b), "rextio-torch: expected a float32 tensor"),
        "rank": ((x[0], w, b), "rextio-torch: expected rank-2 tensor, got rank 1"),
        "not_a_tensor": (([[1.0]], w, b), "rextio-torch: expected a torch.Tensor"),
    }
    for name, (inputs, message) in rejects.items():
        try:
            native(*inputs)
        except (ValueError, TypeError) as e:
            # The boundary's message, then where and what (argument, position, function, given).
            if not str(e).startswith(message + " (argument "):
                fail(f"boundary {name}: {e!r}, expected {message!r} then the argument")
        else:
            fail(f"boundary {name}: accepted")
    checks["boundary_rejections"] = {"ok": True, "cases": sorted(rejects)}

    evidence = {
        "schema": "rextio-cuda-evidence/1",
        "lane": "torch-cuda-e2",
        "plugin": args.plugin,
        "capability": "cuda-libtorch-linux-x86_64",
        "device_name": args.device_name,
        "sm": args.sm,
        "torch_version": torch.__version__,
        "torch_cuda_version": torch.version.cuda,
        "checks": checks,
        "support_claim": False,
        "certification_ready": False,
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
    }
    with open(args.evidence, "w") as f:
        json.dump(evidence, f, indent=2)
    print(f"torch CUDA E2 ok: evidence in {args.evidence} (support_claim=false)")


if __name__ == "__main__":
    main()
