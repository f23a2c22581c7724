"""Per-call latency of the latency suite's cheap cases, two source trees interleaved (best of repeats).

Complements ``bench_latency.py`` (one timed call per case) for the median target of issue 15: each case is
built fresh (no family cache hit) and timed ``--repeat`` times in a persistent worker per tree; the trees
alternate case by case, so both see the same machine load.  Cases can be restricted by kind and by the
latency recorded for them in an earlier ``bench_latency.py --jsonl`` run (``--prior FILE --tree LABEL
--lo S --hi S``).

Usage::

    python bench/bench_median.py --src before=/path/to/main/src --src after=src \\
        --kinds krr,blh,rappor,oue,hr,parallel,subsample --prior old.jsonl --tree after --lo 0.002 --hi 0.006
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _worker(src: str, repeat: int) -> None:
    sys.path.insert(0, src)
    sys.path.insert(0, HERE)
    from bench_latency import build, make_suite
    specs = {s["id"]: s for s in make_suite(2000)}
    import shuffleamp as sa
    from shuffleamp import bounds
    sa.epsilon(sa.mechanisms.KRR(1.0, 3), 1000, 1e-6)          # imports paid here
    for line in sys.stdin:
        s = specs[int(line)]
        best, r = math.inf, None
        for _ in range(repeat):
            # equal frozen mechanisms share the LRU family cache: cleared, so every repeat builds its families
            bounds._FAMILY_CACHE.clear()
            m = build(s)
            t = time.perf_counter()
            r = sa.epsilon(m, s["n"], s["delta"])
            best = min(best, time.perf_counter() - t)
        print(json.dumps([s["id"], best, r.upper, r.lower]), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable)")
    ap.add_argument("--kinds", default="krr,blh,rappor,oue,hr,parallel,subsample")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--prior", default=None, help="bench_latency.py --jsonl records selecting the cases")
    ap.add_argument("--tree", default="after", help="tree label of the prior records used")
    ap.add_argument("--lo", type=float, default=0.0, help="keep cases whose prior time is > lo seconds")
    ap.add_argument("--hi", type=float, default=math.inf, help="... and <= hi seconds")
    a = ap.parse_args()
    if a.worker:
        _worker(a.worker, a.repeat)
        return
    sys.path.insert(0, HERE)
    from bench_latency import make_suite
    kinds = set(a.kinds.split(","))
    ids = [s["id"] for s in make_suite(2000) if s["kind"] in kinds]
    if a.prior:
        rec = {}
        for line in open(a.prior):
            r = json.loads(line)
            if r["tree"] == a.tree:
                rec[r["id"]] = r
        ids = [i for i in ids if i in rec and rec[i]["outcome"] == "ok" and math.isfinite(rec[i]["upper"])
               and a.lo < rec[i]["seconds"] <= a.hi]
    trees = [t.split("=", 1) for t in (a.src or ["after=" + os.path.join(HERE, "..", "src")])]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    W = {lab: subprocess.Popen([sys.executable, __file__, "--worker", os.path.abspath(p), "--repeat", str(a.repeat)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env) for lab, p in trees}
    R = {lab: {} for lab, _ in trees}
    for i in ids:
        for lab, _ in trees:
            W[lab].stdin.write(f"{i}\n")
            W[lab].stdin.flush()
            R[lab][i] = json.loads(W[lab].stdout.readline())
    for w in W.values():
        w.stdin.close()
        w.wait()
    print(f"{len(ids)} cases, kinds {a.kinds}, best of {a.repeat}")
    print("| tree | <= 2 ms | median ms | sum ms |\n|---|---|---|---|")
    for lab, _ in trees:
        ts = sorted(v[1] for v in R[lab].values())
        med = ts[len(ts) // 2] * 1e3 if ts else math.nan
        print(f"| {lab} | {sum(t <= 0.002 for t in ts)} | {med:.3f} | {sum(ts) * 1e3:.1f} |")
    if len(trees) == 2 and ids:
        (l0, _), (l1, _) = trees
        print(f"median per-case time ratio {l1}/{l0}: "
              f"{statistics.median(R[l1][i][1] / R[l0][i][1] for i in ids):.3f}")
        ch = [i for i in ids if R[l1][i][2:] != R[l0][i][2:]]
        if ch:
            ru = max(abs(R[l1][i][2] - R[l0][i][2]) / abs(R[l0][i][2]) for i in ch if R[l0][i][2])
            rl = max((abs(R[l1][i][3] - R[l0][i][3]) / abs(R[l0][i][3]) for i in ch if R[l0][i][3]), default=0.0)
            print(f"changed numbers: {len(ch)} cases, max relative change upper {ru:.2e}, lower {rl:.2e}")


if __name__ == "__main__":
    main()
