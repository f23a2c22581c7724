"""Matrix mechanisms and joint compositions, side by side over source trees (issue 15, items 6-7).

Cases (every one a ``sa.epsilon(mechanism, n, delta)`` call in a worker subprocess of
``bench_latency.py``, memory-capped, with a timeout; each case is sent to every tree in turn so
that all trees see the same machine load):

* the slow matrix and joint reproducers of the latency suite;
* random matrices (the suite's construction, D and Y log-uniform in 2..64, one seed) at
  n = 10, 1e3, 1e5, 1e8, delta = 1e-8;
* the refusals: 2 x 100000 at n = 1e3 and 500 x 500 at n = 1e5 (time to the ResourceLimitError).

Usage::

    python bench/bench_matrix.py --src before=/work/before/src --src after=src --out bench/results_matrix.md
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_latency import Worker, make_suite  # noqa: E402

REPRO_IDS = [172, 307, 336, 237, 314, 673, 741, 590, 665, 407, 742, 726, 359, 761]


def cases(n_random: int, seed: int = 7) -> list[dict]:
    suite = {s["id"]: s for s in make_suite(2000)}
    out = []
    for i in REPRO_IDS:
        s = dict(suite[i])
        s["group"] = f"reproducer ({s['kind']})"
        out.append(s)
    rng = random.Random(seed)
    k = 10_000
    for _ in range(n_random):
        D = int(round(math.exp(rng.uniform(math.log(2), math.log(64)))))
        Y = int(round(math.exp(rng.uniform(math.log(2), math.log(64)))))
        eps0 = math.exp(rng.uniform(math.log(0.05), math.log(10.0)))
        mseed = rng.randrange(2 ** 31)
        for n in (10, 1000, 10 ** 5, 10 ** 8):
            out.append({"kind": "matrix", "eps0": eps0, "D": D, "Y": Y, "seed": mseed, "n": n, "delta": 1e-8,
                        "id": k, "group": f"random n={n:.0e}"})
            k += 1
    out.append({"kind": "matrix", "eps0": 2.0, "D": 2, "Y": 100_000, "seed": 1, "n": 1000, "delta": 1e-8,
                "id": k, "group": "refusal 2x100000"})
    out.append({"kind": "matrix", "eps0": 2.0, "D": 500, "Y": 500, "seed": 1, "n": 10 ** 5, "delta": 1e-8,
                "id": k + 1, "group": "refusal 500x500"})
    return out


def _ms(x):
    return "–" if not math.isfinite(x) else (f"{1e3 * x:.1f}" if x < 10 else f"{1e3 * x:.0f}")


def _pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return math.nan
    return xs[min(len(xs) - 1, max(0, int(math.ceil(q * len(xs))) - 1))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable)")
    ap.add_argument("--random", type=int, default=8, help="random matrices (each at 4 values of n)")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--mem-gb", type=float, default=6.0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    trees = dict(s.split("=", 1) for s in (args.src or [f"this={os.path.join(here, '..', 'src')}"]))
    workers = {lab: Worker(lab, path, args.mem_gb) for lab, path in trees.items()}
    specs = cases(args.random)
    started = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")
    recs = {lab: {} for lab in trees}
    try:
        for s in specs:
            spec = {k: v for k, v in s.items() if k != "group"}
            for lab, w in workers.items():
                r = w.run(spec, args.timeout)
                recs[lab][s["id"]] = r
            print(s["group"], s.get("D"), s.get("Y"), s["n"],
                  {lab: (recs[lab][s["id"]]["outcome"], round(recs[lab][s["id"]].get("seconds", math.nan), 3))
                   for lab in trees}, flush=True)
    finally:
        for w in workers.values():
            w.stop()
    finished = datetime.datetime.utcnow().strftime("%H:%M")
    labels = list(trees)
    lines = ["# Matrix mechanisms and joint compositions (bench/bench_matrix.py)\n",
             f"Run {started} – {finished} UTC on {platform.machine()}, {os.cpu_count()} cores shared with other "
             f"jobs (not idle: compare columns, not absolute values), OMP_NUM_THREADS=1, timeout {args.timeout} s. "
             "Trees: " + ", ".join(f"`{lab}` = {p}" for lab, p in trees.items()) + ".\n",
             "## Every case (seconds; `refused` = typed ResourceLimitError)\n",
             "| group | case | n | delta | " + " | ".join(labels) + " | " +
             " | ".join(f"{lab} upper / lower" for lab in labels) + " |",
             "|---|---|---|---|" + "---|" * (2 * len(labels))]
    for s in specs:
        desc = (f"{s['D']}x{s['Y']} eps0={s['eps0']:.4g}" if s["kind"] == "matrix" else
                " x ".join(f"{c['kind']}({c['eps0']:.4g},{c.get('k') or c.get('d')})" for c in s["components"]))
        cells, vals = [], []
        for lab in labels:
            r = recs[lab][s["id"]]
            cells.append(f"{r['outcome']} {r.get('seconds', math.nan):.3f}")
            vals.append(f"{r['upper']:.6g} / {r['lower']:.6g}" if r["outcome"] == "ok" else "–")
        lines.append(f"| {s['group']} | {desc} | {s['n']:.3g} | {s['delta']:.3g} | " + " | ".join(cells) + " | "
                     + " | ".join(vals) + " |")
    lines += ["", "## Summary by group (median / max seconds)\n",
              "| group | cases | " + " | ".join(labels) + " |", "|---|---|" + "---|" * len(labels)]
    groups = []
    for s in specs:
        if s["group"] not in groups:
            groups.append(s["group"])
    for g in groups + ["**all matrix**"]:
        ids = [s["id"] for s in specs if (s["group"] == g or (g == "**all matrix**" and s["kind"] == "matrix"))]
        cells = []
        for lab in labels:
            t = [recs[lab][i].get("seconds", math.nan) for i in ids]
            t = [x for x in t if math.isfinite(x)]
            cells.append(f"{_pct(t, .5):.3f} / {max(t, default=math.nan):.3f}")
        lines.append(f"| {g} | {len(ids)} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
