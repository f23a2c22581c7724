"""Python time of many-family matrix mechanisms (issue 15, p99): per-phase breakdown and GC pauses.

For each source tree (``--src label=path``, each measured in its own subprocess, trees alternated
``--rounds`` times; per case and phase the minimum over all rounds and ``--reps`` calls):

* **breakdown** of one ``sa.epsilon(mechanism, n, delta)`` of suite cases (``bench_latency.make_suite``
  ids): ``families`` (``bounds._cached_families``, upper and lower: pair merges, law keys, swaps,
  de-duplication; the family cache is cleared before each call), ``chernoff`` (``bounds._chernoff_bounds``:
  the compiled Chernoff screen and its packing), ``projection`` (``bounds._projection_lower``),
  ``log_est`` (``bounds._log_estimates``: compiled saddle-point ranking), ``kernel_search``
  (``exact.epsilon_search``) and ``total``;
* **gc**: the 271 suite matrices run in one process in suite order (as one ``bench_latency`` worker),
  with the number and duration of full (generation-2) garbage collections, the cases they landed in,
  and the number of GC-tracked objects at the end.

Usage::

    python bench/bench_matrix_python.py --src before=/work/b7/src --src after=src \\
        --out bench/results_matrix_python_raw.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
IDS = [496, 645, 751, 1133, 1829, 1430, 155, 1046, 1152, 1567, 314, 336, 606, 237]
PHASES = ["total", "families", "chernoff", "projection", "log_est", "kernel_search"]

_WORKER = r'''
import gc, json, sys, time
src, mode, ids, reps = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")], int(sys.argv[4])
sys.path.insert(0, src); sys.path.insert(0, HERE)
from bench_latency import make_suite, build
import numpy as np
import shuffleamp as sa
from shuffleamp import bounds as B, exact as EX
suite = make_suite(2000)
specs = {s["id"]: s for s in suite}
sa.epsilon(sa.mechanisms.MatrixMechanism(np.array([[.5, .3, .2], [.2, .5, .3], [.3, .2, .5]])), 1000, 1e-6)
if mode == "breakdown":
    T = {}
    def wrap(mod, name, label):
        f = getattr(mod, name)
        def g(*a, **k):
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                T[label] = T.get(label, 0.0) + time.perf_counter() - t
        setattr(mod, name, g)
    for mod, name, label in ((B, "_cached_families", "families"), (B, "_chernoff_bounds", "chernoff"),
                             (B, "_projection_lower", "projection"), (B, "_log_estimates", "log_est"),
                             (EX, "epsilon_search", "kernel_search")):
        wrap(mod, name, label)
    out = {}
    for i in ids:
        s, best = specs[i], {}
        for _ in range(reps):
            T.clear(); B._FAMILY_CACHE.clear(); m = build(s)
            t = time.perf_counter(); r = sa.epsilon(m, s["n"], s["delta"]); T["total"] = time.perf_counter() - t
            for k, v in T.items():
                best[k] = min(best.get(k, 1e9), v)
        out[i] = best
    print(json.dumps(out))
else:
    pauses, t0 = [], [0.0]
    def cb(phase, info):
        if info["generation"] == 2:
            if phase == "start":
                t0[0] = time.perf_counter()
            else:
                pauses.append(time.perf_counter() - t0[0])
    gc.callbacks.append(cb)
    hits = []
    for s in suite:
        if s["kind"] != "matrix":
            continue
        pauses.clear()
        t = time.perf_counter(); sa.epsilon(build(s), s["n"], s["delta"]); dt = time.perf_counter() - t
        if pauses:
            hits.append([s["id"], dt, sum(pauses)])
    print(json.dumps({"hits": hits, "tracked": len(gc.get_objects())}))
'''.replace("HERE", repr(HERE))


def _run(src, mode, ids, reps):
    out = subprocess.run([sys.executable, "-c", _WORKER, src, mode, ",".join(map(str, ids)), str(reps)],
                         capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"), check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", action="append", required=True, help="label=path of a src tree (repeatable)")
    ap.add_argument("--ids", default=",".join(map(str, IDS)))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    trees = [s.split("=", 1) for s in a.src]
    ids = [int(x) for x in a.ids.split(",")]
    best = {lab: {} for lab, _ in trees}
    gcs = {}
    for _ in range(a.rounds):
        for lab, path in trees:
            r = _run(path, "breakdown", ids, a.reps)
            for i, ph in r.items():
                cur = best[lab].setdefault(int(i), {})
                for k, v in ph.items():
                    cur[k] = min(cur.get(k, 1e9), v)
    for lab, path in trees:
        gcs[lab] = _run(path, "gc", ids, 1)
    lines = ["| id | D x Y | n | " + " | ".join(f"{p} ({' / '.join(l for l, _ in trees)})" for p in PHASES) + " |",
             "|---" * (3 + len(PHASES)) + "|"]
    sys.path.insert(0, HERE)
    from bench_latency import make_suite
    specs = {s["id"]: s for s in make_suite(2000)}
    for i in ids:
        s = specs[i]
        cells = [" / ".join(f"{1e3 * best[lab][i].get(p, 0.0):.1f}" for lab, _ in trees) for p in PHASES]
        lines.append(f"| {i} | {s['D']}x{s['Y']} | {s['n']} | " + " | ".join(cells) + " |")
    lines += ["", "| tree | full collections over the 271 matrices | their total ms | cases (id: ms) "
              "| tracked objects at end |", "|---|---|---|---|---|"]
    for lab, _ in trees:
        g = gcs[lab]
        cases = ", ".join(f"{i}: {1e3 * p:.0f}" for i, _, p in g["hits"])
        total = 1e3 * sum(h[2] for h in g["hits"])
        lines.append(f"| {lab} | {len(g['hits'])} | {total:.0f} | {cases} | {g['tracked']} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
