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
            "population"]
REGIMES = ["small", "large"]
KINDS = ["epsilon", "delta", "total"]
#: Test files whose every test compares the library's numbers with computations sharing no code with it
#: (tests/exact_oracles.py, tests/laplace_oracles.py, tests/oracle.py, scipy, mpmath).
INDEPENDENT = ["test_bounds_independent.py", "test_laplace_independent.py", "test_binary_rr_worst_case.py"]
#: With ``--independent``: per family, the ``-k`` expression selecting the tests that name it (their ids or
#: names), so that each mutation runs a handful of tests instead of whole files; ``--no-focus`` runs all.
FOCUS = {"krr2": "binary", "krr": "krr10 or krr50", "blh": "blh", "rappor": "rappor", "oue": "oue",
         "hr": "hr", "laplace": "laplace", "matrix": "matrix", "joint": "joint", "parallel": "parallel",
         "subsample": "subsample", "population": "population"}
#: The test files run per mutation, most discriminating first (-x stops at the first failure).
FILES = INDEPENDENT + ["test_reference.py", "test_exact_count.py", "test_laplace_convex.py", "test_accounting.py",
                       "test_population.py", "test_oracle.py", "test_exact.py", "test_compose.py",
                       "test_properties.py"]


def run_one(spec: str, files: list, timeout: float, focus: str = "") -> tuple[str, str, float]:
    env = dict(os.environ)
    env["SHUFFLEAMP_MUTATION"] = spec
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(HERE), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "pytest", "-p", "mutation_plugin", "-m", "not slow", "-x", "-q",
           "-p", "no:cacheprovider", *(["-k", focus] if focus else []), *files]
    t0 = time.time()
    try:
        out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", "", time.time() - t0
    text = out.stdout + out.stderr
    m = re.search(r"^FAILED (\S+)", text, re.M)
    if m:
        return "caught", m.group(1), time.time() - t0
    if out.returncode == 0:
        return "NOT CAUGHT", "", time.time() - t0
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
    ap.add_argument("--out", default=None, help="write a markdown table here")
    a = ap.parse_args(argv)
    specs = [s for s in a.only.split(",") if s] or [f"{f}:{r}:{k}" for k in KINDS for f in FAMILIES for r in REGIMES]
    chosen = [f for f in a.files.split(",") if f] or (INDEPENDENT if a.independent else FILES)
    files = ["tests"] if a.all_tests else [f"tests/{f}" for f in chosen if (HERE / f).exists()]
    rows = []
    for spec in specs:
        focus = FOCUS.get(spec.split(":")[0], "") if a.independent and not a.no_focus else ""
        status, where, dt = run_one(spec, files, a.timeout, focus)
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
