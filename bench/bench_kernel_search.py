"""Per-call time of ``shuffleamp.epsilon`` with the compiled ε search, side by side with another source tree.

A fixed set: every finite mechanism (k-RR, OUE, BLH, RAPPOR, HR, a 3x3 matrix) at n = 1e2 … 1e9 (one per
decade) and δ = 1e-8, default evaluator (upper and lower).  One persistent worker per source tree; every case
is sent to each worker in turn (same machine load), ``--repeat`` times, and the median per case is kept.
Reports per tree: per-case ms, number of certified evaluations (upper + lower), the median and p99 over the
set, and the largest relative difference of the answers between the trees.

Usage::

    python bench/bench_kernel_search.py --src before=/work/before/src --src after=src \\
        --out bench/results_kernel_search.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

MECHS = [("krr", {"eps0": 1.0, "k": 10}), ("krr", {"eps0": 4.0, "k": 100}), ("oue", {"eps0": 0.5, "d": 8}),
         ("blh", {"eps0": 2.0}), ("rappor", {"eps0": 1.0, "d": 4}), ("hr", {"eps0": 1.0, "d": 8}),
         ("matrix", {"matrix": [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]]})]
NS = [10 ** k for k in range(2, 10)]
DELTA = 1e-8

WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import shuffleamp as sa
from shuffleamp import mechanisms as M
def build(name, p):
    if name == "matrix":
        return M.MatrixMechanism(p["matrix"])
    return M.make(name, **p)
for line in sys.stdin:
    c = json.loads(line)
    m = build(c["name"], c["params"])
    t = time.perf_counter()
    r = sa.epsilon(m, c["n"], c["delta"])
    dt = time.perf_counter() - t
    g = r.settings["grid"]
    ev = (g.get("upper_evaluations") or 0) + (g.get("lower_evaluations") or 0)
    print(json.dumps({"ms": dt * 1e3, "upper": r.upper, "lower": r.lower, "evals": ev}), flush=True)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", action="append", required=True, help="label=path/to/src (repeatable)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    trees = [s.split("=", 1) for s in args.src]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    workers = {lab: subprocess.Popen([sys.executable, "-c", WORKER, path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env) for lab, path in trees}
    cases = [(name, p, n) for name, p in MECHS for n in NS]
    rows = []
    t0 = time.time()
    for name, p, n in cases:
        res = {}
        for rep in range(args.repeat + 1):            # first round: warm-up (families built, caches filled)
            for lab, _ in trees:
                w = workers[lab]
                w.stdin.write(json.dumps({"name": name, "params": p, "n": n, "delta": DELTA}) + "\n")
                w.stdin.flush()
                out = json.loads(w.stdout.readline())
                if rep > 0:
                    res.setdefault(lab, []).append(out)
        rows.append((name, p, n, res))
        print(name, p, n, {lab: round(sorted(o["ms"] for o in v)[len(v) // 2], 2) for lab, v in res.items()},
              flush=True)
    for w in workers.values():
        w.stdin.close()
        w.wait()
    labels = [lab for lab, _ in trees]

    def med(v):
        return sorted(o["ms"] for o in v)[len(v) // 2]

    def pct(xs, q):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))]

    lines = ["# Compiled ε search (issue 15): per-call time side by side", "",
             f"`python bench/bench_kernel_search.py {' '.join('--src ' + s for s in args.src)} --repeat {args.repeat}`, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(t0))}, {platform.machine()}, OMP_NUM_THREADS=1, "
             f"δ = {DELTA:g}; median of {args.repeat} calls per case after one warm-up call; each case is sent to "
             "every tree in turn (same load).", "",
             "| mechanism | n | " + " | ".join(f"{lab} ms" for lab in labels) + " | "
             + " | ".join(f"{lab} evals" for lab in labels) + " | upper rel diff | lower rel diff |",
             "|---|---|" + "---|" * (2 * len(labels) + 2)]
    per = {lab: [] for lab in labels}
    worst = [0.0, 0.0]
    for name, p, n, res in rows:
        ms = [med(res[lab]) for lab in labels]
        for lab, x in zip(labels, ms):
            per[lab].append(x)
        ev = [res[lab][0]["evals"] for lab in labels]
        a, b = res[labels[0]][0], res[labels[-1]][0]
        du = abs(b["upper"] / a["upper"] - 1) if a["upper"] else abs(b["upper"])
        dl = abs(b["lower"] / a["lower"] - 1) if a["lower"] else abs(b["lower"])
        worst = [max(worst[0], du), max(worst[1], dl)]
        desc = name + "(" + ", ".join(f"{k}={v}" for k, v in p.items() if k != "matrix") + ")"
        lines.append(f"| {desc} | {n:.0e} | " + " | ".join(f"{x:.2f}" for x in ms) + " | "
                     + " | ".join(str(e) for e in ev) + f" | {du:.1e} | {dl:.1e} |")
    lines += ["", "| tree | median ms | p99 ms | max ms | median ms, n >= 1e5 |", "|---|---|---|---|---|"]
    for lab in labels:
        big = [x for (_, _, n, _), x in zip(rows, per[lab]) if n >= 10 ** 5]
        lines.append(f"| {lab} | {pct(per[lab], 0.5):.2f} | {pct(per[lab], 0.99):.1f} | {max(per[lab]):.1f} | "
                     f"{pct(big, 0.5):.2f} |")
    lines += ["", f"Largest relative difference between the first and last tree: upper {worst[0]:.1e}, "
              f"lower {worst[1]:.1e}."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
