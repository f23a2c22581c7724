"""Latency-suite cases whose laws have 6-7 atoms: the mixture-vs-integral dispatch, two trees side by side.

Each case (``bench_latency.make_suite(2000)`` ids) runs ``shuffleamp.epsilon`` in a fresh process per tree
(trees alternate case by case), CPU time (``time.process_time``, min of ``--reps``, robust to other load
on the machine), and reports both trees' certified upper/lower.

Usage::

    python bench/bench_mixture_cost_model.py --src before=/path/main/src --src after=src \\
        --out bench/results_mixture_cost_model.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

#: the simple-mechanism, parallel and subsample cases above 50 ms on main 732c4a2 (idle measurement)
IDS = [522, 1063, 900, 1451, 629, 1591, 97, 1302, 1169, 1123, 1580, 193, 1650, 1801, 1893, 1101, 1013, 740,
       1855, 55, 550, 463, 974, 1969, 1540, 357, 177, 334, 1723, 1793, 90, 178, 1421, 211, 1904, 627, 701,
       950, 1021, 504, 623]

_CASE = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
from bench_latency import make_suite, build
import shuffleamp as sa
specs = {s["id"]: s for s in make_suite(2000)}
sa.epsilon(build(specs[1]), specs[1]["n"], specs[1]["delta"])   # imports and first-call costs
s = specs[int(sys.argv[3])]
best = 1e9
for _ in range(int(sys.argv[4])):
    t = time.process_time(); r = sa.epsilon(build(s), s["n"], s["delta"]); best = min(best, time.process_time() - t)
print(json.dumps({"kind": s["kind"], "n": s["n"], "t": best, "upper": r.upper, "lower": r.lower}))
'''


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", action="append", required=True, help="label=path of a tree's src directory")
    ap.add_argument("--ids", default=",".join(map(str, IDS)))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    trees = [s.split("=", 1) for s in a.src]
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    rows, above = [], {lab: 0 for lab, _ in trees}
    for i in [int(x) for x in a.ids.split(",")]:
        res = {}
        for lab, src in trees:
            out = subprocess.run([sys.executable, "-c", _CASE, os.path.abspath(src), here, str(i), str(a.reps)],
                                 capture_output=True, text=True, env=env, check=True).stdout
            res[lab] = json.loads(out.strip().splitlines()[-1])
            above[lab] += res[lab]["t"] > 0.05
        r0 = res[trees[0][0]]
        rows.append(f"| {i} | {r0['kind']} | {r0['n']} | " + " | ".join(f"{res[l]['t'] * 1e3:.1f}" for l, _ in trees)
                    + " | " + " | ".join(f"{res[l]['upper']:.10g} / {res[l]['lower']:.10g}" for l, _ in trees) + " |")
        print(rows[-1], flush=True)
    labs = [l for l, _ in trees]
    text = ["| id | kind | n | " + " | ".join(f"{l} ms" for l in labs) + " | "
            + " | ".join(f"{l} upper / lower" for l in labs) + " |",
            "|---|---|---|" + "---|" * (2 * len(labs))] + rows
    text.append("")
    text.append("Cases above 50 ms (CPU time, min of %d): " % a.reps
                + ", ".join(f"{l} {above[l]}" for l in labs) + f" of {len(rows)}.")
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(text) + "\n")
    print("\n".join(text[-1:]))


if __name__ == "__main__":
    main()
