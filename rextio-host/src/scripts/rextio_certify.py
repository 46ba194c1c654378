"""The certification checkers' shared driver (written by rextio next to every checker it runs).

A plugin's `certify/check.py` defines how one function is checked; `run` does the rest the same
way for every plugin:

    usage: check.py RESULT_JSON PROJECT_SRC [MODULE [SKIP,SKIP...]]

It loads MODULE's source from PROJECT_SRC as the eager reference, imports the built MODULE as the
native one, checks every function defined there (except SKIP) with
`check_function(name, native, eager, kinds, qualname)`, and writes
`{"runtime": runtime(), "functions": {"MODULE.name": {"passed": bool, ...}}}` to RESULT_JSON.

The exit status is the host's contract: 0 when every function passed, 1 when some failed (the
result says which), 2 when the checker itself broke (an exception outside a function's check,
a missing argument), so a broken checker is never read as failed rules.

A build-only CUDA lane's `check.py` uses `CudaLane` instead: its arguments, the native-function
check, boundary rejections and the evidence file, under the same exit-status contract.
"""

import argparse
import datetime
import gc
import importlib
import importlib.util
import inspect
import itertools
import json
import math
import os
import sys
import traceback

SCALAR_KINDS = ("int", "float", "bool")


class Record:
    """One function's failures, check counts and skipped checks, as a result entry."""

    def __init__(self):
        self.failures, self.counts, self.skipped = [], {}, []

    def fail(self, what):
        self.failures.append(what)

    def count(self, key):
        self.counts[key] = self.counts.get(key, 0) + 1

    def result(self):
        out = {"passed": not self.failures, "counts": self.counts, "failures": self.failures}
        if self.skipped:
            out["skipped"] = self.skipped
        return out


def scalar_combos(kinds, ints, floats):
    """Every combination of the sample scalars for the scalar parameters (None for the others)."""
    pools = [ints if k == "int" else floats if k == "float" else [True, False] if k == "bool" else [None] for k in kinds]
    return list(itertools.product(*pools))


def merge(tensors, scalars):
    """One argument list from a tensor list and a scalar combination (None marks the other)."""
    return [t if t is not None else s for t, s in zip(tensors, scalars)]


def special_values(kinds, specials):
    """For functions whose parameters are all matrices ("M", 3x3) or all vectors ("V"), the
    special values rolled by one per parameter, as nested lists; None otherwise."""
    if not kinds or any(k not in ("M", "V") for k in kinds) or len(set(kinds)) != 1:
        return None
    out = []
    for i, k in enumerate(kinds):
        shift = i % len(specials)
        rolled = specials[-shift:] + specials[:-shift] if shift else list(specials)
        out.append([rolled[r * 3:r * 3 + 3] for r in range(3)] if k == "M" else rolled)
    return out


def compare_floats(native, eager, rtol, atol):
    """None when two float sequences of one length agree in the certified sense, else why: the
    same NaNs, the same infinities of the same sign, the same sign on every zero of `eager`, and
    the finite values within `atol + rtol * |eager|` of each other. Both are flat sequences of
    Python floats (a checker turns its framework's tensors into them), so every plugin judges
    special values by this one definition."""
    if len(native) != len(eager):
        return f"{len(native)} values vs {len(eager)}"
    pairs = list(zip(native, eager))
    if any(math.isnan(a) != math.isnan(b) for a, b in pairs):
        return "NaN masks differ"
    if any(math.isinf(a) != math.isinf(b) or (math.isinf(b) and a != b) for a, b in pairs):
        return "infinity masks differ"
    if any(b == 0 and math.copysign(1.0, a) != math.copysign(1.0, b) for a, b in pairs):
        return "signed zeros differ"
    finite = [(a, b) for a, b in pairs if math.isfinite(b)]
    if any(not abs(a - b) <= atol + rtol * abs(b) for a, b in finite):
        return f"values differ (max abs diff {max(abs(a - b) for a, b in finite)})"
    return None


def describe(e):
    return f"{type(e).__name__}: {str(e)[:160]}"


def outcome(fn, args):
    """("ok", value) or ("raise", exception)."""
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001
        return ("raise", e)


def expect_boundary(rec, native, base, i, pname, qualname, exc, message, value, given):
    """Calling `native` with argument `i` replaced by `value` raises `exc` whose text is the
    boundary's `message`, then where (parameter, position, function) and what was given."""
    where = f"{message} (argument '{pname}' at position {i} of {qualname}, got "
    args = list(base)
    args[i] = value
    try:
        native(*args)
    except exc as e:
        text = str(e)
        if not (text.startswith(where) and text.endswith(")") and given in text[len(where):]):
            rec.fail(f"boundary message {text!r} is not {where!r}...{given!r}...')'")
    except Exception as e:  # noqa: BLE001
        rec.fail(f"boundary raised {describe(e)}, expected {exc.__name__}")
    else:
        rec.fail(f"boundary accepted a bad value, expected {exc.__name__}({message!r})")


def check_scalar_boundary(rec, native, eager, base, kinds, qualname):
    """A str for the first scalar parameter: a TypeError ending with where and what."""
    scalar_idx = [j for j, k in enumerate(kinds) if k in SCALAR_KINDS]
    if not scalar_idx:
        return
    j = scalar_idx[0]
    sname = list(inspect.signature(eager).parameters)[j]
    args = list(base)
    args[j] = "x"
    tail = f" (argument '{sname}' at position {j} of {qualname}, got a str)"
    try:
        native(*args)
    except TypeError as e:
        if not str(e).endswith(tail):
            rec.fail(f"scalar boundary message {str(e)!r} does not end with {tail!r}")
    except Exception as e:  # noqa: BLE001
        rec.fail(f"scalar boundary raised {type(e).__name__}, expected TypeError")
    else:
        rec.fail("scalar boundary accepted a str")
    rec.count("scalar_boundary")


def check_lifetime(rec, native, args, expected, compare):
    """The result of `native(*args)` still equals `expected` once the arguments are gone."""
    out = native(*args)
    del args[:]
    gc.collect()
    why = compare(out, expected)
    if why:
        rec.fail(f"lifetime: {why}")
    rec.count("lifetime")


def _checked(check_function, kind, native_mod, eager_mod, module, skip):
    results = {}
    for name, eager in inspect.getmembers(eager_mod, inspect.isfunction):
        if eager.__module__ != eager_mod.__name__ or name in skip:
            continue
        qualname = f"{module}.{name}"
        try:
            kinds = [kind(p.annotation) for p in inspect.signature(eager).parameters.values()]
            results[qualname] = check_function(name, getattr(native_mod, name), eager, kinds, qualname)
        except Exception:  # noqa: BLE001 - a function whose check raised failed, with why
            results[qualname] = {"passed": False, "counts": {}, "failures": [traceback.format_exc()]}
    return results


def _main(check_function, kind, runtime, default_module, native, argv):
    if len(argv) < 2:
        raise SystemExit("usage: check.py RESULT_JSON PROJECT_SRC [MODULE [SKIP,SKIP...]]")
    out_path, src = argv[0], argv[1]
    module = argv[2] if len(argv) > 2 else default_module
    skip = set(filter(None, argv[3].split(","))) if len(argv) > 3 else set()
    spec = importlib.util.spec_from_file_location("certify_eager", os.path.join(src, *module.split(".")) + ".py")
    eager_mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(eager_mod)
    native_mod = native(module, eager_mod)
    results = _checked(check_function, kind, native_mod, eager_mod, module, skip)
    with open(out_path, "w") as f:
        json.dump({"runtime": runtime(), "functions": results}, f, indent=2)
    bad = [n for n, r in results.items() if not r["passed"]]
    for n in bad:
        print(f"FAIL {n}: {results[n]['failures'][:3]}", file=sys.stderr)
    print(f"{len(results) - len(bad)} passed, {len(bad)} failed")
    return 1 if bad else 0


def run(check_function, kind, runtime, default_module, native=None, argv=None):
    """Check every function and exit with the host's status (see the module doc).

    `kind(annotation)` names a parameter's kind for `check_function`; `runtime()` returns the
    versions recorded with the result; `native(module, eager_module)` returns the module to
    check (default: import the built `module`).
    """
    native = native or (lambda module, _eager: importlib.import_module(module))
    try:
        code = _main(check_function, kind, runtime, default_module, native, sys.argv[1:] if argv is None else argv)
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
        sys.exit(2 if e.code not in (0, 1) else e.code)
    except BaseException:  # noqa: BLE001 - the checker itself broke: neither 0 nor 1
        traceback.print_exc()
        sys.exit(2)
    sys.exit(code)


class LaneFailure(Exception):
    """A CUDA lane's check failed (exit status 1)."""


class CudaLane:
    """One build-only CUDA lane's evidence run, the same for every plugin.

    `cargo xtask certify --cuda` runs the lane's `check.py` with --project, --evidence,
    --plugin, --device-name and --sm. The checker calls `CudaLane(who, lane, capability).run(check)`;
    `check(lane, args)` runs the lane's own checks (recording them with `lane.passed`,
    `lane.parity` and `lane.rejections`, failing with `lane.fail`) and returns the framework's
    version fields and any other evidence fields. The evidence (`rextio-cuda-evidence/1`) never
    claims support. Exit status, as for `run`: 0 when the lane passed and its evidence is
    written, 1 when a check failed (an `AssertionError` from a framework's comparison counts as
    one), 2 when the checker itself broke.
    """

    def __init__(self, who, lane, capability):
        self.who, self.lane, self.capability = who, lane, capability
        self.checks = {}

    def fail(self, message):
        raise LaneFailure(message)

    def native(self, fn, name):
        """`fn`, after checking that it is the native extension's function."""
        if type(fn).__name__ != "builtin_function_or_method":
            self.fail(f"{name} is not the native extension function ({type(fn).__name__})")
        return fn

    def passed(self, check, **facts):
        self.checks[check] = {"ok": True, **facts}

    def parity(self, case, max_abs_diff):
        self.passed(f"parity_{case}", max_abs_diff=float(max_abs_diff))

    def rejections(self, native, rejects):
        """Each `rejects[name] = (inputs, message)` makes `native(*inputs)` raise a ValueError or
        TypeError whose text is the boundary's `message`, then where and what was given."""
        for name, (inputs, message) in rejects.items():
            try:
                native(*inputs)
            except (ValueError, TypeError) as e:
                if not str(e).startswith(message + " (argument "):
                    self.fail(f"boundary {name}: {e!r}, expected {message!r} then the argument")
            else:
                self.fail(f"boundary {name}: accepted")
        self.passed("boundary_rejections", cases=sorted(rejects))

    def evidence(self, args, fields):
        return {
            "schema": "rextio-cuda-evidence/1",
            "lane": self.lane,
            "plugin": args.plugin,
            "capability": self.capability,
            "device_name": args.device_name,
            "sm": args.sm,
            **fields,
            "checks": self.checks,
            "support_claim": False,
            "certification_ready": False,
            "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        }

    def run(self, check, argv=None):
        parser = argparse.ArgumentParser()
        for a in ("--project", "--evidence", "--plugin", "--device-name", "--sm"):
            parser.add_argument(a, required=True)
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
        try:
            fields = check(self, args)
            with open(args.evidence, "w") as f:
                json.dump(self.evidence(args, fields), f, indent=2)
        except (LaneFailure, AssertionError) as e:
            print(f"{self.who} CUDA certification: {e}", file=sys.stderr)
            sys.exit(1)
        except BaseException:  # noqa: BLE001 - the checker itself broke: neither 0 nor 1
            traceback.print_exc()
            sys.exit(2)
        print(f"{self.who} {self.lane} ok: evidence in {args.evidence} (support_claim=false)")
        sys.exit(0)
