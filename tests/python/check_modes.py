"""REXTIO_NATIVE_MODE behaviour, run in a fresh interpreter per mode."""

import os
import subprocess
import sys

CODE = "from phasea import kernels; print(type(kernels.inference).__name__); print(sorted(kernels.__rextio_fallback__))"


def run(mode):
    env = dict(os.environ)
    if mode is None:
        env.pop("REXTIO_NATIVE_MODE", None)
    else:
        env["REXTIO_NATIVE_MODE"] = mode
    return subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True)


r = run("fallback")
assert r.returncode == 0 and r.stdout.splitlines()[0] == "function", r
r = run("native")
assert r.returncode == 0 and r.stdout.splitlines()[0] == "builtin_function_or_method", r
r = run(None)
assert r.returncode == 0 and r.stdout.splitlines()[0] == "builtin_function_or_method", r
assert r.stdout.splitlines()[1] == "['inference']", r
# Set but empty (as shells and container specs leave it) is the default, auto.
r = run("")
assert r.returncode == 0 and r.stdout.splitlines()[0] == "builtin_function_or_method", r
r = run("turbo")
assert r.returncode != 0 and "REXTIO_NATIVE_MODE" in r.stderr and "ValueError" in r.stderr, r
assert "'auto', 'native' or 'fallback'" in r.stderr and "'turbo'" in r.stderr, r.stderr

# Without the extension: auto warns and runs the Python bodies, native refuses to start.
import glob  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

built = next(p for p in sys.path if os.path.isdir(os.path.join(p, "phasea")))
with tempfile.TemporaryDirectory() as tmp:
    shutil.copytree(os.path.join(built, "phasea"), os.path.join(tmp, "phasea"))
    assert not glob.glob(os.path.join(tmp, "*.so"))
    env = dict(os.environ, PYTHONPATH=tmp, PYTHONWARNINGS="always")
    env.pop("REXTIO_NATIVE_MODE", None)
    r = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.splitlines()[0] == "function", r
    assert "RuntimeWarning" in r.stderr and "unavailable" in r.stderr, r.stderr
    env["REXTIO_NATIVE_MODE"] = "native"
    r = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "REXTIO_NATIVE_MODE=native" in r.stderr and "ImportError" in r.stderr, r.stderr

# The Python body stays available and agrees with the native function.
import torch  # noqa: E402
from phasea import kernels  # noqa: E402
from rxcheck import assert_same  # noqa: E402

x, w, b = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5)
assert_same(kernels.inference(x, w, b), kernels.__rextio_fallback__["inference"](x, w, b), "fallback body")
print("modes ok")
