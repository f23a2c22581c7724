"""Large-n benchmark: ε(δ = 0.01/n) per call for every mechanism at n = 1e3 … 1e9, a 100-point
ε-versus-n curve, and the default (exact, Bromwich) evaluator against the discretised engines and
independent exact O(√n) sums (2-RR), all measured in one run.

Usage::

    python bench/bench_exact.py --out bench/results_exact.md
    python bench/bench_exact.py --src before=/path/to/old/src --src after=src --out bench/results_exact_side_by_side.md

With ``--src`` (repeatable) only the per-call tables run, side by side: every call is sent to one worker per
source tree in turn (the latency suite's workers, ``bench_latency.py``), so that all trees see the same machine
load; each cell gives the wall time of one call per tree and whether the certified numbers are the same.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
import tracemalloc

import numpy as np
from scipy.optimize import brentq

import shuffleamp as sa
from shuffleamp._ext import binomial
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse, Laplace


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def peak_mib(fn):
    """Peak traced memory (numpy and Python allocations) of a second, untimed call."""
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def exact_eps_2rr(eps0, n, delta, guess):
    dec = KRR(eps0, 2).upper_decompositions()[0]

    def f(e):
        g = dec.gparv(e)
        v, p = g.values[::-1], g.probs[::-1]
        return math.log(max(binomial.exact_three_atom(v[0], p[0], v[1], p[1], v[2], n)[1], 1e-300)) - math.log(delta)
    return brentq(f, guess * 0.95, min(guess * 1.05, eps0 * (1 - 1e-12)), xtol=1e-16, rtol=1e-13)


#: The per-call table's mechanisms (bench_latency case specs without n and delta).
def _call_specs(eps0):
    return [{"kind": "krr", "eps0": eps0, "k": 10}, {"kind": "blh", "eps0": eps0, "d": None},
            {"kind": "rappor", "eps0": eps0, "d": 64}, {"kind": "oue", "eps0": eps0, "d": 64},
            {"kind": "hr", "eps0": eps0, "d": 64}, {"kind": "laplace", "eps0": eps0}]


def side_by_side(trees: dict, timeout: float = 60.0, repeats: int = 3) -> str:
    """The per-call tables of every source tree in ``trees`` (label -> src path), measured in one run: each call
    ``repeats`` times per tree, interleaved, the fastest kept (the first builds the mechanism's families, the
    others find them cached, as a service calling the same mechanism again does)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_latency as BL
    workers = [BL.Worker(lab, path, 4.0) for lab, path in trees.items()]
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    load0 = os.getloadavg()[0]
    ns = [10**k for k in range(3, 10)]
    labels = list(trees)
    out = []
    totals = {lab: [] for lab in labels}
    for eps0 in (1.0, 4.0):
        out.append(f"\n### ε(δ = 0.01/n) per call, upper + certified lower, default evaluator (ε0 = {eps0:g})\n")
        out.append("Cell: wall time of one `epsilon` call per tree (" + " / ".join(labels) + ", ms; the fastest of "
                   f"{repeats} interleaved calls); `=` when every tree returned the same upper and lower to the last "
                   "bit, else the trees' (upper, lower).\n")
        out.append("| mechanism | " + " | ".join(f"n=1e{int(math.log10(n))}" for n in ns) + " |")
        out.append("|---|" + "---|" * len(ns))
        for spec0 in _call_specs(eps0):
            cells = []
            for n in ns:
                spec = dict(spec0, n=n, delta=0.01 / n, id=0)
                runs = [[w.run(spec, timeout) for w in workers] for _ in range(repeats)]
                recs = runs[0]
                best = [min(run[i].get("seconds", math.nan) for run in runs) for i in range(len(workers))]
                for lab, b in zip(labels, best):
                    totals[lab].append(b)
                t = " / ".join(f"{1e3 * b:.1f}" for b in best)
                vals = [(r.get("upper"), r.get("lower")) for r in recs]
                same = all(v == vals[0] for v in vals) and all(r["outcome"] == "ok" for r in recs)
                cells.append(t + (" =" if same else " (" + "; ".join(f"{r['outcome']} {v[0]!r}, {v[1]!r}"
                                                                     for r, v in zip(recs, vals)) + ")"))
                print(spec0["kind"], eps0, n, cells[-1], flush=True)
            out.append(f"| {spec0['kind']} | " + " | ".join(cells) + " |")
    for w in workers:
        w.stop()
    summary = ["", "### Sum over the calls\n", "| tree | calls | total s | median ms |", "|---|---|---|---|"]
    for lab in labels:
        xs = sorted(totals[lab])
        summary.append(f"| {lab} | {len(xs)} | {sum(xs):.2f} | {1e3 * xs[len(xs) // 2]:.1f} |")
    head = (f"# Large n side by side (bench/bench_exact.py --src)\n\nRun {started} – "
            f"{time.strftime('%H:%M', time.gmtime())} UTC on {platform.machine()}, {os.cpu_count()} cores (shared "
            f"with other jobs; load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end), "
            f"OMP_NUM_THREADS=1, one worker per source tree (warmed up). Trees: "
            + ", ".join(f"`{lab}` = {path}" for lab, path in trees.items()) + ".\n")
    return head + "\n".join(out + summary) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable): per-call "
                    "tables only, side by side")
    args = ap.parse_args(argv)
    if args.src:
        text = side_by_side(dict(s.split("=", 1) for s in args.src))
        if args.out:
            with open(args.out, "w") as fh:
                fh.write(text)
        print(text)
        return
    lines = []
    # warm-up: the package loads its numerical modules on first use; time calls, not imports
    sa.epsilon(KRR(1.0, 2), 100, 1e-6)
    ns = [10**k for k in range(3, 10)]
    for eps0 in (1.0, 4.0):
        mechs = [KRR(eps0, 10), BLH(eps0), RAPPOR(eps0, 64), OUE(eps0, 64), HadamardResponse(eps0, 64),
                 Laplace(eps0)]
        lines.append(f"\n### ε(δ = 0.01/n) per call, upper + certified lower, default evaluator `exact` (ε0 = {eps0:g})\n")
        lines.append("Cell: wall time of one `epsilon` call / peak traced memory of a second call; ε upper and lower.\n")
        lines.append("| mechanism | " + " | ".join(f"n=1e{int(math.log10(n))}" for n in ns) + " |")
        lines.append("|---|" + "---|" * len(ns))
        for m in mechs:
            cells = []
            for n in ns:
                r, dt = timed(lambda: sa.epsilon(m, n, 0.01 / n))
                mib = peak_mib(lambda: sa.epsilon(m, n, 0.01 / n))
                how = r.settings["grid"]["upper"].get("evaluator")
                tag = "" if how in ("exact", "enumeration") else f", {how}"
                cells.append(f"{dt * 1000:.0f} ms / {mib:.1f} MiB (ε={r.upper:.6g}, lo {r.lower:.6g}{tag})")
                print(m.describe()["mechanism"], eps0, n, r.upper, r.lower, f"{dt:.3f}s {mib:.1f}MiB", flush=True)
            lines.append(f"| {m.describe()['mechanism']} | " + " | ".join(cells) + " |")
    # 100-point curves
    m = KRR(1.0, 10)
    lines.append("\n### 100-point ε-versus-n curves (10-RR, ε0 = 1, δ = 1e-8, upper + certified lower)\n")
    lines.append("| n range | evaluator | points | total s | ms per point |")
    lines.append("|---|---|---|---|---|")
    for lo_e, hi_e in ((3, 9), (5, 9)):
        grid = np.unique(np.round(np.logspace(lo_e, hi_e, 100)).astype(np.int64))
        for ev in ("exact", "spectral"):
            r, dt_curve = timed(lambda: sa.epsilon(m, grid, 1e-8, evaluator=ev))
            lines.append(f"| 1e{lo_e} … 1e{hi_e} | {ev} | {len(grid)} | {dt_curve:.2f} | {1000 * dt_curve / len(grid):.0f} |")
            print(lines[-1], flush=True)
    # exact vs default vs FFT vs clone (2-RR, where an independent O(sqrt n) exact oracle exists)
    lines.append("\n### Default `exact` vs spectral vs FFT path vs standard clone vs exact O(√n) sums (2-RR, δ = 1e-8)\n")
    lines.append("ε columns: upper ε and its relative error against the oracle ε; s columns: wall time of one "
                 "`epsilon` call (upper + lower); ×: time relative to the default.\n")
    lines.append("| ε0 | n | oracle ε | exact ε (rel. err) | exact s | spectral ε (rel. err) | spectral s (×) | FFT-path ε (rel. err) | FFT s (×) | clone ε (×oracle) | clone s | oracle s |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for eps0 in (1.0, 4.0):
        m = KRR(eps0, 2)
        for n in (10**3, 10**5, 10**7, 10**8, 10**9):
            r, dt = timed(lambda: sa.epsilon(m, n, 1e-8))
            rs, dts = timed(lambda: sa.epsilon(m, n, 1e-8, evaluator="spectral"))
            rf, dtf = timed(lambda: sa.epsilon(m, n, 1e-8, evaluator="fft")) if n <= 10**8 else (None, None)
            rc, dtc = timed(lambda: sa.epsilon(m, n, 1e-8, method="clone"))
            ex, dte = timed(lambda: exact_eps_2rr(eps0, n, 1e-8, r.upper))
            fcol = "—" if rf is None else f"{rf.upper:.8g} ({rf.upper / ex - 1:+.1e})"
            fs = "—" if dtf is None else f"{dtf:.2f} ({dtf / dt:.0f}×)"
            lines.append(f"| {eps0:g} | {n:.0e} | {ex:.10g} | {r.upper:.10g} ({r.upper / ex - 1:+.1e}) | {dt:.3f} | "
                         f"{rs.upper:.8g} ({rs.upper / ex - 1:+.1e}) | {dts:.2f} ({dts / dt:.0f}×) | "
                         f"{fcol} | {fs} | {rc.upper:.4g} ({rc.upper / ex:.2f}) | {dtc:.2f} | {dte:.1f} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
