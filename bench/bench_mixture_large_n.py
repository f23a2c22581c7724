"""Latency of ``shuffleamp.epsilon`` on the latency-suite cases whose laws have a dominant atom at large n
(k-RR and subsampled mechanisms, n ~ 1e4..2e7): before/after side by side in one run.

Each source tree runs in its own worker process; every case is sent to each worker in turn (same load),
timed ``--repeat`` times (a fresh ``build(spec)`` each time, as ``bench_latency.py`` does) and the minimum
is reported, with the certified upper/lower epsilon of both trees.

Usage::

    python bench/bench_mixture_large_n.py --src before=/work/before/src --src after=src \\
        --out bench/results_mixture_large_n.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

IDS = [1898, 1633, 248, 1852, 647, 1123, 1580, 542, 588,
       1416, 32, 623, 1093, 950, 118, 70, 1021, 1911]

_WORKER = r"""
import sys, json, time
sys.path.insert(0, SRC); sys.path.insert(0, BENCH)
from bench_latency import make_suite, build
import shuffleamp as sa
specs = {s["id"]: s for s in make_suite(2000)}
s0 = specs[IDS[0]]; sa.epsilon(build(s0), s0["n"], s0["delta"])   # imports
for line in sys.stdin:
    i, rep = json.loads(line)
    s = specs[i]; ts = []
    for _ in range(rep):
        m = build(s); t = time.perf_counter(); r = sa.epsilon(m, s["n"], s["delta"]); ts.append(time.perf_counter() - t)
    print(json.dumps({"id": i, "seconds": min(ts), "upper": r.upper, "lower": r.lower}), flush=True)
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ids", default=None, help="comma-separated suite ids (default: the listed cases)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    srcs = [x.split("=", 1) for x in (a.src or [f"this={os.path.join(here, '..', 'src')}"])]
    ids = [int(x) for x in a.ids.split(",")] if a.ids else IDS
    sys.path.insert(0, here)
    from bench_latency import make_suite
    specs = {s["id"]: s for s in make_suite(2000)}
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = {}
    for lab, path in srcs:
        code = f"SRC={os.path.abspath(path)!r}; BENCH={here!r}; IDS={ids!r}\n" + _WORKER
        procs[lab] = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, env=env)
    rows = []
    for i in ids:
        rec = {}
        for lab, p in procs.items():
            p.stdin.write(json.dumps([i, a.repeat]) + "\n")
            p.stdin.flush()
            rec[lab] = json.loads(p.stdout.readline())
        rows.append((i, rec))
        print(i, {k: "%.1f ms" % (1e3 * v["seconds"]) for k, v in rec.items()}, flush=True)
    for p in procs.values():
        p.stdin.close()
        p.wait()
    labs = list(procs)
    lines = ["| id | kind | n | " + " | ".join(f"{l} ms" for l in labs) + " | " +
             " | ".join(f"{l} eps upper / lower" for l in labs) + " |",
             "|---|---|---|" + "---|" * (2 * len(labs))]
    for i, rec in rows:
        s = specs[i]
        lines.append(f"| {i} | {s['kind']} | {s['n']} | " + " | ".join("%.1f" % (1e3 * rec[l]["seconds"]) for l in labs)
                     + " | " + " | ".join("%.10g / %.10g" % (rec[l]["upper"], rec[l]["lower"]) for l in labs) + " |")
    txt = "\n".join(lines)
    print(txt)
    if a.out:
        with open(a.out, "w") as f:
            f.write(txt + "\n")


if __name__ == "__main__":
    main()
