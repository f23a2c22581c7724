"""Totals over rounds of the Laplace randomizer: wall and CPU time of ``compose_rounds``, writing
``bench/results_laplace_totals.md``.

``shuffleamp.compose_rounds([(Laplace(1.0), n, R)], delta=1e-6)`` (upper and lower) for n = 3, 30, 1e3, 1e6 and
R = 1, 365, each call in a fresh worker process (cold caches, imports excluded) with a time limit; the upper and
lower total ε, the wall time and the CPU time of the call, and the 1-minute load average when it started.  Source
trees can be put side by side (``--src before=PATH --src after=src``).

Usage::

    python bench/bench_laplace_totals.py --src after=src [--src before=/path/to/old/src]
    python bench/run.py laplace-totals [-- --src before=/path/to/old/src]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

NS = [3, 30, 10**3, 10**6]
ROUNDS = [1, 365]
EPS0 = 1.0
DELTA = 1e-6

WORKER = r"""
import json, os, sys, time
n, R, eps0, delta = json.loads(sys.argv[1])
import shuffleamp as sa
from shuffleamp.mechanisms import Laplace
load = os.getloadavg()[0]
w, c = time.perf_counter(), time.process_time()
try:
    r = sa.compose_rounds([(Laplace(eps0), n, R)], delta=delta)
    out = {"upper": float(r.upper), "lower": float(r.lower)}
except Exception as exc:
    out = {"error": type(exc).__name__ + ": " + str(exc)[:80]}
out.update(wall=time.perf_counter() - w, cpu=time.process_time() - c, load=load)
print(json.dumps(out))
"""


def run(src: str, n: int, R: int, limit: float) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
    try:
        p = subprocess.run([sys.executable, "-c", WORKER, json.dumps([n, R, EPS0, DELTA])], env=env,
                           capture_output=True, text=True, timeout=limit)
        return json.loads(p.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"timeout": limit, "load": os.getloadavg()[0]}
    except (IndexError, ValueError):
        return {"error": "worker failed"}


def cell(r: dict) -> str:
    if "timeout" in r:
        return f"> {r['timeout']:.0f} s (stopped) | | | {r['load']:.1f}"
    if "error" in r:
        return f"{r['wall']:.2f} s, {r['error']} | {r['cpu']:.2f} | | {r['load']:.1f}" if "wall" in r \
            else f"{r['error']} | | |"
    return f"{r['wall']:.2f} | {r['cpu']:.2f} | [{r['lower']:.6g}, {r['upper']:.6g}] | {r['load']:.1f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", action="append", default=None, help="label=PATH of a source tree (repeatable)")
    ap.add_argument("--limit", type=float, default=150.0, help="seconds per call before it is stopped")
    ap.add_argument("--out", default="bench/results_laplace_totals.md")
    args = ap.parse_args(argv)
    srcs = [s.split("=", 1) for s in (args.src or ["after=src"])]
    start = datetime.datetime.now(datetime.timezone.utc)
    load0 = os.getloadavg()[0]
    rows = []
    for label, path in srcs:
        for n in NS:
            for R in ROUNDS:
                r = run(path, n, R, args.limit)
                rows.append(f"| {label} | {n:g} | {R} | {cell(r)} |")
                print(rows[-1], flush=True)
    lines = ["# Totals over rounds of the Laplace randomizer", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared with other jobs), Python "
             f"{platform.python_version()}; load average {load0:.1f} at the start; date {start:%Y-%m-%d %H:%M} UTC.",
             "Command: `python bench/bench_laplace_totals.py " + " ".join(f"--src {a}={b}" for a, b in srcs)
             + f" --limit {args.limit:g}` (or `python bench/run.py laplace-totals`)", "",
             f"`compose_rounds([(Laplace({EPS0:g}), n, R)], delta={DELTA:g})` (upper and lower), one fresh process per "
             "call (imports excluded).  Wall-clock times on a shared, loaded machine (load in the last column); the "
             "CPU time of the process depends less on the load.", "",
             "| source | n | rounds R | wall (s) | CPU (s) | total ε [lower, upper] | load |",
             "|---|---|---|---|---|---|---|", *rows, ""]
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines))


if __name__ == "__main__":
    main()
