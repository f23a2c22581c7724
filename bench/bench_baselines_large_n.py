"""Time of ε(δ) for every method at huge n (issue 15, item 8: `compare ... --n 1e12` ran > 60 s).

Each call runs in a fresh worker process with a time limit, so a method that does not finish is
reported as "> limit" instead of blocking the run.  Run it against two source trees side by side:

    python bench/bench_baselines_large_n.py --src /path/to/old/src --src src --out bench/results_fuzz_baselines.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CODE = r"""
import json, sys, time
import shuffleamp as sa
from shuffleamp.mechanisms import KRR
method, n = sys.argv[1], int(float(sys.argv[2]))
sa.epsilon(KRR(1.0, 10), 1000, 1e-8)            # warm the lazy imports
t = time.perf_counter()
try:
    r = sa.epsilon(KRR(1.0, 10), n, 1e-8, method=method)
    v = r.upper if r.upper is not None else r.estimate
    out = {"value": v}
except Exception as e:
    out = {"error": type(e).__name__}
out["seconds"] = time.perf_counter() - t
print(json.dumps(out))
"""


def run(src: str, method: str, n: float, limit: float) -> dict:
    env = dict(os.environ, PYTHONPATH=src, OMP_NUM_THREADS="1")
    t = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", CODE, method, repr(n)], env=env, capture_output=True,
                           text=True, timeout=limit)
        return json.loads(p.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"timeout": limit, "seconds": time.perf_counter() - t}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", action="append", required=True, help="a source tree (PYTHONPATH); repeatable")
    ap.add_argument("--n", action="append", type=float, default=None)
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    ns = a.n or [1e8, 1e10, 1e12]
    sys.path.insert(0, a.src[-1])
    from shuffleamp._registry import METHODS
    rows = []
    for m in METHODS:
        for n in ns:
            cells = []
            for src in a.src:
                r = run(src, m, n, a.limit)
                if "timeout" in r:
                    cells.append(f"> {a.limit:g} s (killed)")
                elif "error" in r:
                    cells.append(f"{r['error']} ({r['seconds']:.3f} s)")
                else:
                    cells.append(f"{r['seconds']:.3f} s (ε = {r['value']:.4g})")
            rows.append(f"| {m} | {n:.0e} | " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    head = ("| method | n | " + " | ".join(a.src) + " |\n|---|---|" + "---|" * len(a.src))
    text = (f"k-RR (k = 10, ε0 = 1), δ = 1e-8, ε(δ) by every method; one fresh process per call, "
            f"limit {a.limit:g} s.\n\n{head}\n" + "\n".join(rows) + "\n")
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
