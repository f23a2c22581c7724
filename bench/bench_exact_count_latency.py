"""Latency of ``shuffleamp.epsilon(KRR(eps0, 2), n, 1e-8)`` (binary RR, default method), before / after,
side by side in one run.

Each source tree runs in its own worker process (``--src name=path``); every cell is sent to each
worker in turn (same machine load).  Per cell: one warm-up call at another delta (imports, FFT plans),
then the per-call caches of the count law (``exact_count._law`` and, where present, ``_search``) are
cleared and the call is timed; the minimum over ``--repeat`` cold calls is reported, with the certified
upper and lower of each tree.

Usage::

    python bench/bench_exact_count_latency.py --src before=/work/before/src --src after=src \\
        --out bench/results_exact_count_latency.json
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

EPS0S = [0.1, 0.5, 1.0, 2.0, 4.0, 8.0]
NS = [10, 100, 1000, 10**4, 10**5, 10**6, 10**7, 10**8, 10**9]
DELTA = 1e-8

WORKER = r"""
import json, sys, time
import shuffleamp as sa
from shuffleamp import exact_count as ec
from shuffleamp.mechanisms import KRR
sa.epsilon(KRR(1.0, 2), 1000, 1e-8)
def clear():
    ec._law.cache_clear()
    if hasattr(ec._search, "cache_clear"):
        ec._search.cache_clear()
for line in sys.stdin:
    eps0, n, delta, repeat = json.loads(line)
    m = KRR(eps0, 2)
    sa.epsilon(m, n, delta * 3.0)
    ts = []
    for _ in range(repeat):
        clear()
        t = time.perf_counter()
        r = sa.epsilon(m, n, delta)
        ts.append(time.perf_counter() - t)
    print(json.dumps({"ms": 1e3 * min(ts), "upper": r.upper, "lower": r.lower,
                      "upper_engine": r.settings.get("upper_engine")}), flush=True)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", action="append", required=True, help="name=path of a source tree")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    workers = {}
    for spec in args.src:
        name, path = spec.split("=", 1)
        env = dict(os.environ, PYTHONPATH=os.path.abspath(path), OMP_NUM_THREADS="1")
        workers[name] = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, env=env)
    rows = []
    for eps0 in EPS0S:
        for n in NS:
            row = {"eps0": eps0, "n": n}
            for name, w in workers.items():
                w.stdin.write(json.dumps([eps0, n, DELTA, args.repeat]) + "\n")
                w.stdin.flush()
                row[name] = json.loads(w.stdout.readline())
            rows.append(row)
            print(json.dumps(row), flush=True)
    for w in workers.values():
        w.stdin.close()
        w.wait()
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
