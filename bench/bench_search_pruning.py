"""Many-family mechanisms (matrices, joint compositions) at n < 1e4: time and answers of chosen suite cases.

The cases are ids of the fixed latency suite (``bench_latency.make_suite``).  Each source tree runs in its
own persistent worker subprocess (``--src label=path``, repeatable); every case is sent to each worker in
turn (same machine load), each worker times ``sa.epsilon(build(spec), n, delta)`` ``--reps`` times with a
fresh mechanism object each call (as the latency suite does) after one warm-up call, and reports the
fastest, with the upper and lower ε and the certified evaluation counts of the search.

Usage::

    OMP_NUM_THREADS=1 python bench/bench_search_pruning.py --src before=/path/to/main/src --src after=src \\
        --out bench/results_search_pruning.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# the examples of the task and the slowest matrix / joint cases at n < 1e4 of the suite on main
DEFAULT_IDS = [873, 761, 606, 1863, 1975, 1947, 1581, 407, 1713, 826, 1431, 1847, 172, 619, 982, 1007]

WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
from bench_latency import make_suite, build
import shuffleamp as sa
specs = {s["id"]: s for s in make_suite(2000)}
for line in sys.stdin:
    i, reps = json.loads(line)
    s = specs[i]
    sa.epsilon(build(s), s["n"], s["delta"])
    ts = []
    for _ in range(reps):
        m = build(s)
        t = time.perf_counter()
        r = sa.epsilon(m, s["n"], s["delta"])
        ts.append(time.perf_counter() - t)
    g = r.settings.get("grid") or {}
    print(json.dumps({"id": i, "ms": 1e3 * min(ts), "upper": r.upper, "lower": r.lower,
                      "evals": [g.get("upper_evaluations"), g.get("lower_evaluations")]}), flush=True)
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable)")
    ap.add_argument("--ids", default=",".join(map(str, DEFAULT_IDS)), help="comma-separated suite ids")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=None, help="markdown report")
    a = ap.parse_args(argv)
    srcs = [s.split("=", 1) for s in a.src] or [["this", os.path.join(HERE, "..", "src")]]
    ids = [int(x) for x in a.ids.split(",")]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    workers = {lab: subprocess.Popen([sys.executable, "-c", WORKER, path, HERE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env) for lab, path in srcs}
    sys.path.insert(0, HERE)
    from bench_latency import make_suite
    specs = {s["id"]: s for s in make_suite(2000)}
    rows = []
    t0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        for i in ids:
            res = {}
            for lab, w in workers.items():
                w.stdin.write(json.dumps([i, a.reps]) + "\n")
                w.stdin.flush()
                res[lab] = json.loads(w.stdout.readline())
            rows.append((i, res))
            s = specs[i]
            print(i, s["kind"], s["n"], "  ".join("%s %.1f ms" % (lab, r["ms"]) for lab, r in res.items()),
                  flush=True)
    finally:
        for w in workers.values():
            w.stdin.close()
            w.wait()
    labs = [lab for lab, _ in srcs]
    lines = [f"# Many-family ε search at n < 1e4 (bench/bench_search_pruning.py)", "",
             f"Run {t0} on {platform.machine()}, {os.cpu_count()} cores (shared), OMP_NUM_THREADS=1; "
             f"fastest of {a.reps} calls after a warm-up, trees side by side: "
             + ", ".join(f"`{lab}` = {p}" for lab, p in srcs) + ".", "",
             "| id | case | n | " + " | ".join(f"{lab} ms" for lab in labs) + " | "
             + " | ".join(f"{lab} upper / lower (evals u+l)" for lab in labs) + " |",
             "|---|---|---|" + "---|" * (2 * len(labs))]
    for i, res in rows:
        s = specs[i]
        desc = s["kind"] + (f" {s['D']}x{s['Y']}" if s["kind"] == "matrix" else
                            " " + "+".join(c["kind"] for c in s.get("components", [])))
        lines.append(f"| {i} | {desc} | {s['n']} | " + " | ".join("%.1f" % res[lab]["ms"] for lab in labs) + " | "
                     + " | ".join("%.10g / %.10g (%s+%s)" % (res[lab]["upper"], res[lab]["lower"],
                                                             *res[lab]["evals"]) for lab in labs) + " |")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
