"""Helpers for the end-to-end checks: load the eager original, compare results like eager."""

import importlib.util
import os
import sys

import torch

RTOL = 1e-5
ATOL = 1e-6


def load_eager(module: str, name: str = None):
    """Import the original source of `module` (dotted) from the fixture copy, under a new name."""
    src = os.environ["REXTIO_FIXTURE_SRC"]
    path = os.path.join(src, *module.split(".")) + ".py"
    alias = name or ("eager_" + module.replace(".", "_"))
    spec = importlib.util.spec_from_file_location(alias, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[alias] = mod
    spec.loader.exec_module(mod)
    return mod


def is_native(fn) -> bool:
    return type(fn).__name__ == "builtin_function_or_method"


def assert_same(native, eager, what=""):
    """Same type, dtype, shape; values close (NaN where eager has NaN); no grad."""
    if isinstance(eager, torch.Tensor):
        assert isinstance(native, torch.Tensor), f"{what}: native returned {type(native)}"
        assert native.dtype == eager.dtype, f"{what}: dtype {native.dtype} != {eager.dtype}"
        assert native.shape == eager.shape, f"{what}: shape {tuple(native.shape)} != {tuple(eager.shape)}"
        assert native.device == eager.device, f"{what}: device"
        assert not native.requires_grad, f"{what}: native output requires grad"
        assert torch.equal(torch.isnan(native), torch.isnan(eager)), f"{what}: NaN mask differs"
        assert torch.allclose(native, eager, rtol=RTOL, atol=ATOL, equal_nan=True), (
            f"{what}: max abs diff {(native - eager).abs().max().item()}"
        )
    else:
        assert type(native) is type(eager), f"{what}: type {type(native)} != {type(eager)}"
        assert native == eager, f"{what}: {native!r} != {eager!r}"


def raises(exc_type, fn, *args, match=None, **kwargs):
    """Call fn and return the exception, asserting its type (and message substring)."""
    try:
        fn(*args, **kwargs)
    except exc_type as e:  # noqa: PERF203
        if match is not None:
            assert match in str(e), f"message {str(e)!r} lacks {match!r}"
        return e
    raise AssertionError(f"{getattr(fn, '__name__', fn)} did not raise {exc_type.__name__}")


def same_outcome(native_fn, eager_fn, *args, what=""):
    """Both return equal results, or both raise the same exception type."""
    try:
        expected = eager_fn(*args)
    except Exception as e:  # noqa: BLE001
        got = raises(type(e), native_fn, *args)
        return got
    got = native_fn(*args)
    assert_same(got, expected, what)
    return got
