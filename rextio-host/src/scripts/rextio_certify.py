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

import importlib
import importlib.util
import inspect
import json
import os
import sys
import traceback


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
