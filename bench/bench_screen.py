"""Certified Chernoff screening (``decomposition.chernoff_bounds``) of the matrix / joint latency-suite cases
with the most families: time per call and the bounds, for one or more source trees side by side.

Usage::

    python bench/bench_screen.py --src before=/path/to/old/src --src after=src [--repeat 3]

Each tree runs in its own subprocess (the trees alternate ``--repeat`` times; the minimum per case is kept)
on the same families (the suite's mechanisms, ``bounds._cached_families``), at 4 ε x 4 n per case; the
bounds of the trees are compared (largest |log ratio|).
"""
import argparse
import json
import os
import subprocess
import sys

CASES = [172, 1022, 606, 1836, 1947, 741, 1581, 1879, 1152, 1829, 336, 751]

_WORKER = r"""
import sys, time, json, numpy as np
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
from bench_latency import make_suite, build
from shuffleamp import bounds, decomposition as D
specs = {s["id"]: s for s in make_suite(2000)}
out = {}
for i in json.loads(sys.argv[3]):
    s = specs[i]; m = build(s)
    fams = bounds._cached_families(m, "upper")
    D.chernoff_bounds(fams, 10, 0.1)
    tt, vals = 0.0, []
    for q in (0.01, 0.1, 0.5, 1.0):
        eps = min(q, m.eps0 * 0.99)
        for n in (s["n"], 10, 1000, 10**6):
            t = time.perf_counter(); ch = D.chernoff_bounds(fams, n, eps); tt += time.perf_counter() - t
            vals += ch.tolist()
    out[i] = {"families": len(fams), "ms": tt * 1e3 / 16, "vals": vals}
print(json.dumps(out))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", action="append", required=True, help="label=path/to/src")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    trees = [s.split("=", 1) for s in args.src]
    res = {lab: {} for lab, _ in trees}
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for _ in range(args.repeat):
        for lab, path in trees:
            r = subprocess.run([sys.executable, "-c", _WORKER, os.path.abspath(path), here, json.dumps(CASES)],
                               capture_output=True, text=True, env=env, check=True)
            for k, v in json.loads(r.stdout).items():
                old = res[lab].get(k)
                if old is None or v["ms"] < old["ms"]:
                    res[lab][k] = v
    import numpy as np
    labs = [lab for lab, _ in trees]
    lines = ["| case | families | " + " | ".join(f"{lab} ms/call" for lab in labs) + " | max abs log ratio |",
             "|---|---|" + "---|" * len(labs) + "---|"]
    for k in map(str, CASES):
        a = np.array(res[labs[0]][k]["vals"])
        dev = 0.0
        for lab in labs[1:]:
            b = np.array(res[lab][k]["vals"])
            f = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
            assert ((a == 0) == (b == 0)).all() and (np.isinf(a) == np.isinf(b)).all()
            dev = max(dev, float(np.max(np.abs(np.log(b[f] / a[f])), initial=0.0)))
        lines.append(f"| {k} | {res[labs[0]][k]['families']} | "
                     + " | ".join(f"{res[lab][k]['ms']:.2f}" for lab in labs) + f" | {dev:.1e} |")
    tot = [sum(res[lab][k]["ms"] for k in map(str, CASES)) for lab in labs]
    lines.append(f"| total | | " + " | ".join(f"{t:.1f}" for t in tot) + " | |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
