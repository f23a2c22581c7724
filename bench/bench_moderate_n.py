"""Moderate-n latency of ``sa.epsilon(mech, n, 1e-8)``: two source trees side by side in one run.

Each tree runs in its own worker subprocess (``sys.path`` pointing at its ``src``); every case is sent
to each worker in turn, so both see the same machine load.  Per case the median of ``--repeat`` calls
(a fresh mechanism object each time) is reported, with the upper and lower bounds of both trees.

Usage::

    OMP_NUM_THREADS=1 python bench/bench_moderate_n.py --src before=/work/before/src --src after=src \\
        --out bench/results_moderate_n.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

MECHS = [("KRR(1,10)", "krr", {"eps0": 1.0, "k": 10}), ("KRR(4,100)", "krr", {"eps0": 4.0, "k": 100}),
         ("OUE(0.5,8)", "oue", {"eps0": 0.5, "d": 8}), ("BLH(2)", "blh", {"eps0": 2.0}),
         ("RAPPOR(0.2,4)", "rappor", {"eps0": 0.2, "d": 4}), ("HR(1.5,64)", "hr", {"eps0": 1.5, "d": 64})]
NS = [5, 20, 60, 200, 600, 2000, 6000, 20000]
DELTA = 1e-8

WORKER = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import shuffleamp as sa
from shuffleamp import mechanisms as M
for line in sys.stdin:
    kind, params, n, delta, repeat = json.loads(line)
    ts, r = [], None
    for _ in range(repeat):
        mech = M.make(kind, **params)
        t0 = time.perf_counter()
        r = sa.epsilon(mech, n, delta)
        ts.append(time.perf_counter() - t0)
    print(json.dumps([statistics.median(ts) * 1e3, r.upper, r.lower]), flush=True)
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", action="append", required=True, help="label=/path/to/src (repeatable)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    trees = [s.split("=", 1) for s in args.src]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    workers = {lab: subprocess.Popen([sys.executable, "-c", WORKER, os.path.abspath(path)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env) for lab, path in trees}
    rows = []
    t_start = time.time()
    for name, kind, params in MECHS:
        for n in NS:
            res = {}
            for lab, w in workers.items():
                w.stdin.write(json.dumps([kind, params, n, DELTA, args.repeat]) + "\n")
                w.stdin.flush()
                res[lab] = json.loads(w.stdout.readline())
            rows.append((name, n, res))
            print(name, n, "  ".join(f"{lab}: {r[0]:8.1f} ms [{r[2]:.6g}, {r[1]:.6g}]" for lab, r in res.items()),
                  flush=True)
    for w in workers.values():
        w.stdin.close()
        w.wait()
    labs = [lab for lab, _ in trees]
    lines = [f"# Moderate-n latency: `sa.epsilon(mech, n, {DELTA:g})`", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(t_start))}, {platform.machine()}, "
             f"OMP_NUM_THREADS={env['OMP_NUM_THREADS']}, median of {args.repeat} calls (fresh mechanism each), "
             f"trees side by side in one run: " + ", ".join(f"{lab} = `{p}`" for lab, p in trees) + ".", "",
             "| mechanism | n | " + " | ".join(f"{lab} ms" for lab in labs) + " | "
             + " | ".join(f"{lab} [lower, upper]" for lab in labs) + " |",
             "|---|---:|" + "---:|" * len(labs) + "---|" * len(labs)]
    for name, n, res in rows:
        lines.append(f"| {name} | {n} | " + " | ".join(f"{res[lab][0]:.1f}" for lab in labs) + " | "
                     + " | ".join(f"[{res[lab][2]:.8g}, {res[lab][1]:.8g}]" for lab in labs) + " |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
