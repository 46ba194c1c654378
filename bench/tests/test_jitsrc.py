import ast
import importlib.util
import textwrap
from pathlib import Path

import pytest
import torch

from rxbench import jitsrc
from rxbench.workloads import WORKLOADS, Cell

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {
    "phase_a": ROOT / "tests/fixtures/phase_a",
    "phase_b": ROOT / "tests/fixtures/control_flow",
    "scoring": ROOT / "bench/projects/scoring",
}


def annotations(source: str) -> dict[str, list[str]]:
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = [ast.unparse(a.annotation) for a in node.args.args if a.annotation]
            out[node.name].append(ast.unparse(node.returns) if node.returns else "")
    return out


def test_every_marker_spelling_becomes_torch_tensor():
    src = textwrap.dedent('''
        """Doc."""
        from __future__ import annotations
        import rextio_torch.types
        import rextio_torch.types as rt
        from rextio_torch.types import TensorF32Cpu2D, TensorF32Cpu1D as V
        import torch.nn.functional as F

        def f(x: TensorF32Cpu2D, b: V, y: rt.TensorF32Cpu2D, n: int) -> rextio_torch.types.TensorI64Cpu1D:
            return F.linear(x, y, b).argmax(dim=1)

        def g(x: "TensorF32Cpu2D") -> float:
            return 1.0
    ''')
    out = jitsrc.torchscript_source(src)
    ann = annotations(out)
    assert ann["f"] == ["torch.Tensor", "torch.Tensor", "torch.Tensor", "int", "torch.Tensor"]
    assert ann["g"] == ["torch.Tensor", "float"]
    assert "__future__" not in out and "rextio_torch" not in out
    tree = ast.parse(out)
    assert ast.get_docstring(tree) == "Doc."
    assert any(isinstance(s, ast.Import) and s.names[0].name == "torch" for s in tree.body)


def test_other_imports_and_bodies_are_kept():
    src = "import os, rextio_torch.types\nimport numpy as np\n\ndef f(x: int) -> int:\n    return x + 1\n"
    out = jitsrc.torchscript_source(src)
    assert "import os" in out and "import numpy as np" in out
    assert "return x + 1" in out


@pytest.mark.parametrize("workload", [w for w in WORKLOADS if w.framework == "torch" and not w.model],
                         ids=lambda w: w.name)
def test_each_workload_scripts_and_matches_eager(workload, tmp_path):
    source = SOURCES[workload.name] / workload.source
    jit_module = jitsrc.load_module(source, tmp_path, f"jitsrc_test_{workload.name}")
    scripted = torch.jit.script(getattr(jit_module, workload.function))
    spec = importlib.util.spec_from_file_location(f"jitsrc_eager_{workload.name}", source)
    eager = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(eager)
    cell: Cell = workload.cells[0]
    args = workload.make_inputs(cell, 0)
    out, ref = scripted(*args), getattr(eager, workload.function)(*args)
    assert out.dtype == ref.dtype and torch.allclose(out.float(), ref.float(), rtol=1e-5, atol=1e-6)
