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
"""

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
