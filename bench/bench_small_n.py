"""Many-atom laws at small and moderate n: named cases of the latency suite, trees side by side.

Usage::

    OMP_NUM_THREADS=1 python bench/bench_small_n.py --src before=/path/to/old/src --src after=src \
        [--ids 783,1022,...] [--reps 3] [--out bench/results_small_n.md]

Every case is one ``sa.epsilon(mechanism, n, delta)`` of ``bench_latency.make_suite(2000)`` (a fresh
``build(spec)`` per call, as the latency suite does), run in one persistent worker per tree after a warm-up
call; the cases are sent to each tree's worker in turn so that both see the same machine load.  Reported:
the median of ``--reps`` calls and the certified upper / lower epsilon of each tree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
#: the slow small-n cases of issue 15 (two suite timeouts first)
DEFAULT_IDS = [783, 1022, 873, 1947, 761, 923, 629, 741, 1649, 172, 673, 1050]

WORKER = r"""
import json, sys, time, statistics
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
from bench_latency import make_suite, build
import shuffleamp as sa
specs = {s["id"]: s for s in make_suite(2000)}
w = specs[923]
sa.epsilon(build(w), w["n"], w["delta"])
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    i, reps = json.loads(line)
    s = specs[i]
    ts, out = [], None
    for _ in range(reps):
        m = build(s)
        t = time.perf_counter()
        try:
            r = sa.epsilon(m, s["n"], s["delta"])
            out = {"upper": r.upper, "lower": r.lower}
        except Exception as e:          # a refusal is a result too
            out = {"error": type(e).__name__ + ": " + str(e)[:80]}
        ts.append(time.perf_counter() - t)
    out["ms"] = 1e3 * statistics.median(ts)
    print(json.dumps(out), flush=True)
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", action="append", required=True, help="label=path of a src tree (repeatable)")
    ap.add_argument("--ids", default=",".join(map(str, DEFAULT_IDS)))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    trees = [s.split("=", 1) for s in a.src]
    ids = [int(x) for x in a.ids.split(",") if x]
    sys.path.insert(0, HERE)
    from bench_latency import make_suite
    specs = {s["id"]: s for s in make_suite(2000)}
    workers = {}
    for label, path in trees:
        p = subprocess.Popen([sys.executable, "-c", WORKER, os.path.abspath(path), HERE], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        json.loads(p.stdout.readline())
        workers[label] = p
    rows = []
    t0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for i in ids:
        res = {}
        for label, p in workers.items():
            p.stdin.write(json.dumps([i, a.reps]) + "\n")
            p.stdin.flush()
            res[label] = json.loads(p.stdout.readline())
        s = specs[i]
        desc = {k: v for k, v in s.items() if k not in ("id", "seed", "delta", "n")}
        rows.append((i, s["n"], s["delta"], json.dumps(desc)[:70], res))
        print(i, s["n"], {k: round(v["ms"], 1) for k, v in res.items()}, flush=True)
    for p in workers.values():
        p.stdin.close()
        p.wait()
    labels = [t[0] for t in trees]
    lines = [f"# Many-atom laws at small n (bench/bench_small_n.py)", "",
             f"Run {t0}, {os.cpu_count()} cores (shared), OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')}, "
             f"median of {a.reps} calls after a warm-up; trees: " + ", ".join(f"`{l}` = {p}" for l, p in trees), "",
             "| id | n | delta | case | " + " | ".join(f"{l} ms" for l in labels) + " | "
             + " | ".join(f"{l} upper / lower" for l in labels) + " |",
             "|---|---|---|---|" + "---|" * (2 * len(labels))]
    for i, n, d, desc, res in rows:
        ms = " | ".join("%.1f" % res[l]["ms"] for l in labels)
        ul = " | ".join(("%.10g / %.10g" % (res[l]["upper"], res[l]["lower"])) if "upper" in res[l]
                        else res[l]["error"] for l in labels)
        lines.append(f"| {i} | {n} | {d:.3g} | `{desc}` | {ms} | {ul} |")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
