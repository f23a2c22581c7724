"""Laplace latency and tightness: every Laplace case of the fixed 2000-case suite plus the issue's reproducers.

Each case is one ``sa.epsilon(Laplace(eps0), n, delta)`` (upper and lower, default evaluator), run in
the memory-capped worker subprocesses of ``bench_latency.py`` so that a hang is a timeout.  Several
source trees are measured side by side in one run (``--src before=/path/src --src after=src``): each
case goes to every tree's worker in turn.  Records: time, upper, lower, outcome.

Usage::

    python bench/bench_laplace.py --src before=/work/before/src --src after=src \\
        --out bench/results_laplace.md --jsonl /tmp/laplace.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_latency import Worker, _ms, _pct, make_suite  # noqa: E402

#: The issue's and the brief's reproducers: (eps0, n, delta).
REPRODUCERS = [(1.7520280907085986, 105, 1.5334824858103428e-3), (0.22778029401697306, 178, 3.9092863372479814e-4),
               (0.35650201837120554, 134, 2.0745871356178815e-11), (0.14611515442124007, 78, 4.697046739170101e-5),
               (0.2197874749112497, 3, 2.8384578618040706e-11), (0.0514340625981438, 5, 2.3046305840322032e-10),
               (0.1287468330687857, 14, 2.1293673776257588e-12), (0.2897717975505763, 6, 2.363215868167434e-6),
               (0.3797646781549364, 153, 1.2961754035180036e-6), (0.06838647331378277, 241, 3.318965089790441e-6),
               (8.82632137152796, 5342, 2.710696898498061e-10), (1.0, 10, 1e-8), (1.0, 2, 1e-6), (5.0, 5, 1e-8),
               (15.0, 10 ** 6, 1e-8), (20.0, 10 ** 6, 1e-8), (30.0, 10 ** 6, 1e-8), (8.0, 1138, 1e-8),
               (150.0, 10 ** 6, 1e-8), (0.05, 2, 1e-12), (10.0, 10 ** 9, 1e-12)]


def cases(limit=None):
    suite = [s for s in make_suite(2000) if s["kind"] == "laplace"]
    if limit:
        suite = suite[:limit]
    out = [dict(s, group="suite") for s in suite]
    for i, (e0, n, d) in enumerate(REPRODUCERS):
        out.append({"kind": "laplace", "eps0": e0, "n": n, "delta": d, "id": 100000 + i, "group": "reproducer"})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable)")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--mem-gb", type=float, default=4.0)
    ap.add_argument("--limit", type=int, default=None, help="first LIMIT suite cases only")
    ap.add_argument("--out", default=None)
    ap.add_argument("--jsonl", default=None)
    args = ap.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    trees = dict(s.split("=", 1) for s in (args.src or [f"this={os.path.join(here, '..', 'src')}"]))
    workers = {lab: Worker(lab, src, args.mem_gb) for lab, src in trees.items()}
    specs = cases(args.limit)
    recs = {lab: {} for lab in trees}
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    jl = open(args.jsonl, "w") if args.jsonl else None
    try:
        for s in specs:
            for lab, w in workers.items():
                r = w.run({k: v for k, v in s.items() if k != "group"}, args.timeout)
                recs[lab][s["id"]] = r
                if jl:
                    jl.write(json.dumps(dict(r, tree=lab)) + "\n")
                    jl.flush()
    finally:
        for w in workers.values():
            w.stop()
    finished = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    text = report(specs, recs, trees, args, started, finished)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


def _summary(rs):
    t = [r["seconds"] for r in rs if r["outcome"] in ("ok", "refused", "timeout")]
    cnt = {o: sum(r["outcome"] == o for r in rs) for o in ("timeout", "refused", "error")}
    return (f"{_ms(_pct(t, .5))} / {_ms(_pct(t, .9))} / {_ms(_pct(t, .99))} / {_ms(max(t, default=math.nan))}",
            f"{cnt['timeout']}/{cnt['refused']}/{cnt['error']}")


def report(specs, recs, trees, args, started, finished):
    labs = list(trees)
    lines = ["# Laplace latency and tightness (bench/bench_laplace.py)\n",
             f"Run {started} – {finished} UTC on {platform.machine()}, {os.cpu_count()} cores (shared with other "
             f"jobs), OMP_NUM_THREADS=1, timeout {args.timeout} s, memory cap {args.mem_gb} GB. Trees: "
             + ", ".join(f"`{k}` = {v}" for k, v in trees.items()) + ".\n",
             "## Latency (median / p90 / p99 / max ms; timeout/refused/error)\n",
             "| group | cases | " + " | ".join(f"{l}: time | {l}: t/r/e" for l in labs) + " |",
             "|---|---|" + "---|---|" * len(labs)]
    for g in ("suite", "reproducer"):
        ids = [s["id"] for s in specs if s["group"] == g]
        cells = []
        for l in labs:
            cells += list(_summary([recs[l][i] for i in ids if i in recs[l]]))
        lines.append(f"| {g} | {len(ids)} | " + " | ".join(cells) + " |")
    if len(labs) == 2:
        a, b = labs
        lines += ["", f"## Answers: `{b}` against `{a}` (cases ok in both)\n",
                  "| side | cases changed (rel > 1e-12) | largest increase | largest decrease |", "|---|---|---|---|"]
        for side in ("upper", "lower"):
            rel = []
            for sp in specs:
                ra, rb = recs[a].get(sp["id"], {}), recs[b].get(sp["id"], {})
                if ra.get("outcome") == rb.get("outcome") == "ok" and ra.get(side) and rb.get(side) is not None:
                    rel.append((rb[side] - ra[side]) / ra[side])
            ch = [x for x in rel if abs(x) > 1e-12]
            lines.append(f"| {side} | {len(ch)} of {len(rel)} | {max(ch, default=0.0):+.3%} | {min(ch, default=0.0):+.3%} |")
    lines += ["", "## Per case (reproducers, then the 25 slowest suite cases of the first tree)\n",
              "| eps0 | n | delta | " + " | ".join(f"{l}: ms | {l}: upper | {l}: lower" for l in labs) + " |",
              "|---|---|---|" + "---|---|---|" * len(labs)]
    first = labs[0]
    slow = sorted([s for s in specs if s["group"] == "suite"],
                  key=lambda s: -(recs[first].get(s["id"], {}).get("seconds") or 0))[:25]
    for s in [s for s in specs if s["group"] == "reproducer"] + slow:
        row = [f"{s['eps0']:.5g}", str(s["n"]), f"{s['delta']:.3g}"]
        for l in labs:
            r = recs[l].get(s["id"], {})
            row += [_ms(r.get("seconds", math.nan)) + ("" if r.get("outcome") == "ok" else f" {r.get('outcome')}"),
                    f"{r['upper']:.6g}" if r.get("upper") is not None else "–",
                    f"{r['lower']:.6g}" if r.get("lower") is not None else "–"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
