"""Mutation check: does a 1 % under-estimate of a certified upper bound make a CI test fail?

For every (family, regime, kind) it runs the CI tests (``-m "not slow"``) with ``tests/mutation_plugin.py``
injecting ``upper * 0.99`` into that family's bounds (single-round ε, single-round δ, or the total of
``compose_rounds``; n < 10^4 or n >= 10^4), stops at the first failure (``-x``), and reports which test caught
the mutation.  A mutation no test catches is a hole in the suite.

Usage (from the repository root)::

    PYTHONPATH=src python tests/mutation_check.py                      # every mutation, the default test files
    PYTHONPATH=src python tests/mutation_check.py --only krr:large:epsilon,blh:small:delta
    PYTHONPATH=src python tests/mutation_check.py --independent        # the family's own independent tests
    PYTHONPATH=src python tests/mutation_check.py --all-tests          # the whole CI suite per mutation (slow)
    PYTHONPATH=src python tests/mutation_check.py --out tests/mutation_results.md

Without ``--all-tests`` it runs the test files listed in ``FILES`` (the ones that compare numbers with
independent computations), so "not caught" means "not caught by those files"; ``--all-tests`` settles it.

A failing test counts as a catch only if it fails again when rerun alone under the mutation and passes when
rerun without it: a test that fails anyway or only sometimes (for instance a time budget exceeded on a loaded
machine) is deselected and the run goes on (``--no-verify`` counts every failure).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FAMILIES = ["krr2", "krr", "blh", "rappor", "oue", "hr", "laplace", "matrix", "joint", "parallel", "subsample",
            "population", "gaussian", "approx-ldp"]
REGIMES = ["small", "large"]
KINDS = ["epsilon", "delta", "total"]
#: Test files whose every test compares the library's numbers with computations sharing no code with it
#: (tests/exact_oracles.py, tests/laplace_oracles.py, tests/oracle.py, scipy, mpmath).
INDEPENDENT = ["test_bounds_independent.py", "test_laplace_independent.py", "test_binary_rr_worst_case.py",
               "test_gaussian_blanket_oracle.py", "test_gaussian_large_n_oracle.py",
               "test_approximate_ldp_clone_oracle.py", "test_approximate_ldp_total_oracle.py"]
#: With ``--independent``: per family, the ``-k`` expression selecting the tests that name it (their ids or
#: names), so that each mutation runs a handful of tests instead of whole files; ``--no-focus`` runs all.
FOCUS = {"krr2": "binary", "krr": "krr10 or krr50", "blh": "blh", "rappor": "rappor", "oue": "oue",
         "hr": "hr", "laplace": "laplace", "matrix": "matrix", "joint": "joint", "parallel": "parallel",
         "subsample": "subsample", "population": "population", "gaussian": "gaussian", "approx-ldp": "approx"}
#: The test files run per mutation, most discriminating first (-x stops at the first failure).
FILES = INDEPENDENT + ["test_reference.py", "test_exact_count.py", "test_laplace_convex.py", "test_accounting.py",
                       "test_population.py", "test_oracle.py", "test_exact.py", "test_compose.py",
                       "test_properties.py", "test_gaussian.py", "test_gaussian_lower.py",
                       "test_gaussian_population_oracle.py", "test_gaussian_accounting.py", "test_approximate_ldp.py",
                       "test_approximate_ldp_rounds.py"]


def _pytest(spec: str | None, args: list, timeout: float):
    """pytest with the mutation ``spec`` injected (None: no mutation); (output, return code) or None on timeout."""
    env = dict(os.environ)
    env.pop("SHUFFLEAMP_MUTATION", None)
    if spec is not None:
        env["SHUFFLEAMP_MUTATION"] = spec
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(HERE), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "pytest", "-p", "mutation_plugin", "-m", "not slow", "-x", "-q",
           "-p", "no:cacheprovider", *args]
    try:
        out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return out.stdout + out.stderr, out.returncode


def run_one(spec: str, files: list, timeout: float, focus: str = "", verify: bool = True) -> tuple[str, str, float]:
    """Run ``files`` under mutation ``spec``.  A failing test counts as a catch only if (``verify``) it fails
    again when run alone under the mutation and passes without it: a test that fails anyway or only sometimes (a
    time budget on a loaded machine, a broken test) catches nothing, so the run goes on without it
    (``--deselect``) until a verified catch or the end."""
    t0 = time.time()
    deselect: list = []
    while True:
        res = _pytest(spec, [*(["-k", focus] if focus else []), *deselect, *files], timeout)
        if res is None:
            return "timeout", "", time.time() - t0
        text, code = res
        m = re.search(r"^FAILED (\S+)", text, re.M)
        if not m:
            break
        test = m.group(1)
        if not verify:
            return "caught", test, time.time() - t0
        again = _pytest(spec, [test], timeout)     # the failure repeats alone under the mutation ...
        base = _pytest(None, [test], timeout)      # ... and the test passes without it
        if again is not None and again[1] != 0 and base is not None and base[1] == 0:
            return "caught", test, time.time() - t0
        deselect += ["--deselect", test]            # a failure not due to the mutation: not a catch
    unverified = "; ".join(deselect[1::2])
    if code == 0:
        return "NOT CAUGHT", (f"(failing without the mutation too: {unverified})" if unverified else ""), \
            time.time() - t0
    m = re.search(r"^ERROR (\S+)", text, re.M)
    return "error", (m.group(1) if m else text[-300:]), time.time() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated FAMILY:REGIME:KIND")
    ap.add_argument("--all-tests", action="store_true", help="the whole CI suite per mutation")
    ap.add_argument("--files", default="", help="comma-separated test files instead of FILES")
    ap.add_argument("--independent", action="store_true",
                    help="only the INDEPENDENT files, and in them only the family's own tests (FOCUS)")
    ap.add_argument("--no-focus", action="store_true", help="with --independent: every test of those files")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--no-verify", action="store_true",
                    help="count any failing test as a catch (default: only one that passes without the mutation)")
    ap.add_argument("--out", default=None, help="write a markdown table here")
    a = ap.parse_args(argv)
    specs = [s for s in a.only.split(",") if s] or [f"{f}:{r}:{k}" for k in KINDS for f in FAMILIES for r in REGIMES]
    chosen = [f for f in a.files.split(",") if f] or (INDEPENDENT if a.independent else FILES)
    files = ["tests"] if a.all_tests else [f"tests/{f}" for f in chosen if (HERE / f).exists()]
    rows = []
    for spec in specs:
        focus = FOCUS.get(spec.split(":")[0], "") if a.independent and not a.no_focus else ""
        status, where, dt = run_one(spec, files, a.timeout, focus, verify=not a.no_verify)
        kind = ("independent" if where.split("::")[0].split("/")[-1] in INDEPENDENT else "other") if where else "--"
        rows.append((spec, status, where, kind, dt))
        print(f"{spec:<28} {status:<11} {dt:6.0f} s  {kind:<11} {where}", flush=True)
    lines = ["| mutation (family:regime:kind) | result | first failing test | check | seconds |",
             "|---|---|---|---|---|"]
    lines += [f"| {s} | {st} | {w} | {k} | {dt:.0f} |" for s, st, w, k, dt in rows]
    if a.out:
        Path(a.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    missed = [r for r in rows if r[1] != "caught"]
    print(f"{len(rows) - len(missed)} of {len(rows)} mutations caught")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
