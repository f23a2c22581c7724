"""Binary randomized response, single round: the default answer against the exact worst case, writing
``bench/results_binary_rr.md``.

For every eps0 in {0.5, 1, 2}, n = 1e3 .. 1e9 and delta in {1e-6, 1e-8}:

* ``epsilon``: ``shuffleamp.epsilon(KRR(eps0, 2), n, delta)`` (the default method): its upper and lower ε,
  ``rel`` = upper / lower - 1 (which bounds each side's relative distance to the exact worst case), the
  time of a cold call (the count-law caches of :mod:`shuffleamp.exact_count` cleared before it) and of the
  same call again (caches warm), and the 1-minute load average of the machine when the cell ran;
* ``delta check``: ``shuffleamp.delta`` at the returned upper ε is at most delta (the two queries agree);
* ``exact``: the worst case over every dataset computed independently (scipy binomials over every m, both
  orderings, brentq) where n <= 2000.

A second source tree can be compared on the eps0 = 1 columns (delta = 1e-6 and 1e-8) (``--src before=PATH``,
e.g. a ``git archive`` of an older commit with its count kernel built); each tree runs in its own worker process.

Usage::

    python bench/bench_binary_rr.py --src after=src [--src before=/path/to/old/src --describe "before=..."]
    python bench/run.py binary-rr-default [-- --src before=/path/to/old/src --describe "before=..."]
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))  # independent oracles

NS = [10**3, 10**4, 3 * 10**4, 10**5, 3 * 10**5, 10**6, 10**7, 10**8, 10**9]
EPS0S = [0.5, 1.0, 2.0]
DELTAS = [1e-6, 1e-8]
COMPARE = ((1.0, 1e-6), (1.0, 1e-8))          # the columns compared with another source tree

WORKER = r"""
import json, os, sys, time
import shuffleamp as sa
from shuffleamp import exact_count as ec
from shuffleamp.mechanisms import KRR
sa.epsilon(KRR(1.0, 2), 1000, 1e-8)
def clear():
    for name in ("_law", "_search", "_point", "_phase_base", "_phase_remainder", "_phase_rows",
                 "_tilted_remainder", "_tilt_grid"):
        fn = getattr(ec, name, None)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()
for line in sys.stdin:
    eps0, n, delta, check = json.loads(line)
    m = KRR(eps0, 2)
    try:
        sa.epsilon(m, n, delta * 3.0)          # imports, FFT plans, kernels' first calls
        clear()
        load = os.getloadavg()[0]
        t = time.perf_counter()
        c = time.process_time()
        r = sa.epsilon(m, n, delta)
        cold = 1e3 * (time.perf_counter() - t)
        cpu = 1e3 * (time.process_time() - c)
        t = time.perf_counter()
        r = sa.epsilon(m, n, delta)
        warm = 1e3 * (time.perf_counter() - t)
        out = {"cold": cold, "cpu": cpu, "warm": warm, "upper": float(r.upper), "lower": float(r.lower),
               "load": load}
        if check:
            d = sa.delta(m, n, float(r.upper))
            out["check"] = bool(d.upper <= delta)
        print(json.dumps(out), flush=True)
    except Exception as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
"""


READING = """\
* Every cell is within 1e-6 relative on ε.  How the default gets there (module notes of
  `shuffleamp.exact_count`, facts 4, 7 and 9): up to n = 2e4 the certified search over blocks of datasets
  (exact at n <= 1e4 where it converges); from n = 2e4 the phase-comparison bound (fact 7), which compares
  every dataset with a base dataset through a shift-and-skew stencil and charges a Fourier remainder, with 2
  bases (m = 0 and N, one binomial each) at large n and up to 64 where their laws are cheap, and the block
  search beside it where that bracket is wider than 1e-6 (n p0 p1 <= 2e5); from n = 2e5, where the remainder
  of fact 7 is above 1e-5 delta or its bracket wider than 1e-6, the same comparison with a tilted remainder
  (Cauchy's formula on the circle |z| = e^-λ, λ the saddle point of the threshold) and blocks split near their
  base (fact 9: the remainder of a block grows like the square of its distance from the base, the values
  only linearly, and the worst datasets sit at or next to a base).
* The cells fact 9 closes: delta = 1e-8 from n = 3e5 (were 4.2e-6 .. 5.7e-4 with fact 7 alone: 3e5, 1e6,
  1e7, 1e8 at every eps0 but 0.5 at 1e8), and eps0 = 2, delta = 1e-6 at n = 1e6 and 1e7 (were 1.3e-6, 9.0e-6);
  compare the `before` columns at eps0 = 1.  At delta = 1e-8 the hockey stick at the threshold is a
  difference of terms 1e4 .. 1e5 times larger than delta (alpha f(c) and beta F(c - 1)), so the tilt alone
  gains little; the split blocks do the work.
* The cells that fact 7 already brought within 1e-6 keep its answer and cost (e.g. eps0 = 1, delta = 1e-6,
  n = 1e7: 9.2e-7; eps0 = 2, delta = 1e-8, n = 1e9: 6.9e-7; fact 9 takes these to about 3e-8 at twice the
  cost).  What limits a fact-9 bracket is the lattice offset (the bound takes the worst offset w in [0, 1] at
  the threshold, the lower a concrete dataset next to the base) and, at n = 3e5, the remainder of the blocks
  far from every base.  Between n = 3e4 and 1e5 the block search converges as before.
* Times: wall clock of one call on a machine shared with other jobs (the load column: 7 .. 8 on 2 cores
  during this run, so a CPU-bound call takes about 3.5 .. 4 times its idle time), and the CPU time of the same
  call, which is close to the idle machine's wall clock.  At n = 1e8 a cold call takes 14 .. 30 ms of CPU
  (30 .. 90 ms wall; the cells where fact 7 suffices 14 .. 23 ms, fact 9 25 .. 30 ms; no dataset in the middle
  of the range is evaluated there).  `warm` repeats the same call (the count-law answers are memoised).  A
  cold cell whose datasets include one in the middle of a large range pays an FFT product there, and the first
  one in a process imports pyFFTW (about a second).
"""


def _truth(eps0: float, n: int, delta: float) -> float:
    """Exact worst-case ε(δ) over every dataset (n <= 2000): the tests' independent count laws for every m,
    both orderings, and a root search."""
    from scipy.optimize import brentq

    from exact_oracles import binary_rr_count_laws
    P0, P1 = binary_rr_count_laws(eps0, n)

    def worst(eps):
        e = math.exp(eps)
        return max(np.maximum(P0 - e * P1, 0).sum(axis=1).max(), np.maximum(P1 - e * P0, 0).sum(axis=1).max())

    return brentq(lambda e: worst(e) - delta, 0.0, eps0, xtol=1e-17, rtol=1e-15)


def _rel(r):
    return r["upper"] / r["lower"] - 1 if r.get("lower", 0) > 0 else math.inf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", action="append", required=True, help="name=path of a source tree (first: the main one)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results_binary_rr.md"))
    ap.add_argument("--describe", action="append", default=[], help="name=text: what a source tree is")
    args = ap.parse_args()
    workers = {}
    for spec in args.src:
        name, path = spec.split("=", 1)
        env = dict(os.environ, PYTHONPATH=os.path.abspath(path))
        workers[name] = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, env=env)
    names = list(workers)
    main_name = names[0]

    def ask(name, *cell):
        w = workers[name]
        w.stdin.write(json.dumps(cell) + "\n")
        w.stdin.flush()
        return json.loads(w.stdout.readline())

    rows = []
    for eps0 in EPS0S:
        for delta in DELTAS:
            for n in NS:
                truth = _truth(eps0, n, delta) if n <= 2000 else None
                res = {main_name: ask(main_name, eps0, n, delta, True)}
                if (eps0, delta) in COMPARE:
                    for other in names[1:]:
                        res[other] = ask(other, eps0, n, delta, False)
                rows.append((eps0, delta, n, truth, res))
                print(eps0, delta, n, truth, res, flush=True)
    for w in workers.values():
        w.stdin.close()
        w.wait()

    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    described = dict(d.split("=", 1) for d in args.describe)
    cmd = "python bench/bench_binary_rr.py " + " ".join("--src " + s for s in args.src) \
        + "".join(" --describe %r" % d for d in args.describe)
    out = [
        "# Binary randomized response, single round: default answer vs the exact worst case",
        "",
        f"Generated by `{cmd}` (suite `binary-rr-default` of `bench/run.py`) on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()} "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; load average at the end "
        f"{', '.join(f'{x:.1f}' for x in load)}.  The machine was shared with other jobs: the `load` column is "
        "the 1-minute load average when the cell ran (on 2 cores; at load L a CPU-bound call takes roughly "
        "L/2 times its idle time).",
        "",
        "`epsilon`: `shuffleamp.epsilon(KRR(eps0, 2), n, delta)` (the default method); `rel` = upper / lower - 1, "
        "which bounds each side's relative distance to the exact worst case; `cold ms`: the count-law caches "
        "cleared before the call; `cold cpu ms`: the CPU time of that call (this process; closer to the "
        "idle machine's wall clock when others load it); `warm ms`: the same call again; `δ(ε_up) ≤ δ`: "
        "`shuffleamp.delta` at the returned upper ε certifies at most the target δ; `exact`: the worst case "
        "over every dataset, computed independently (every m, scipy binomials), where n <= 2000.",
        "",
    ]
    for eps0 in EPS0S:
        for delta in DELTAS:
            out += [f"## eps0 = {eps0:g}, delta = {delta:g}", "",
                    "| n | exact | upper | lower | rel | cold ms | cold cpu ms | warm ms | load | δ(ε_up) ≤ δ |",
                    "|---|---|---|---|---|---|---|---|---|---|"]
            for e0, d, n, truth, res in rows:
                if (e0, d) != (eps0, delta):
                    continue
                r = res[main_name]
                t = f"{truth:.13g}" if truth is not None else "—"
                if "error" in r:
                    out.append(f"| {n:.0e} | {t} | {r['error'][:60]} | | | | | | | |")
                    continue
                out.append(f"| {n:.0e} | {t} | {r['upper']:.12g} | {r['lower']:.12g} | {_rel(r):.1e} | "
                           f"{r['cold']:.0f} | {r['cpu']:.0f} | {r['warm']:.0f} | {r['load']:.1f} | "
                           f"{'yes' if r.get('check') else 'NO'} |")
            out.append("")
    for e0, d in (COMPARE if len(names) > 1 else ()):
        out += [f"## Against other trees (eps0 = {e0:g}, delta = {d:g})", ""]
        for nm in names:
            out.append(f"* `{nm}`: {described.get(nm, 'see the command line')}")
        out += ["", "| n | " + " | ".join(f"{nm} upper | {nm} lower | {nm} rel | {nm} cold ms | {nm} cpu ms"
                                          for nm in names) + " |",
                "|---|" + "---|---|---|---|---|" * len(names)]
        for e0_, d_, n, truth, res in rows:
            if (e0_, d_) != (e0, d):
                continue
            cells = []
            for nm in names:
                r = res.get(nm, {})
                if "upper" in r:
                    cells.append(f"{r['upper']:.10g} | {r['lower']:.10g} | {_rel(r):.1e} | {r['cold']:.0f} | "
                                 f"{r.get('cpu', float('nan')):.0f}")
                else:
                    cells.append(f"{r.get('error', '—')[:40]} | | | |")
            out.append(f"| {n:.0e} | " + " | ".join(cells) + " |")
        out.append("")
    out += ["## Reading the tables", "", READING, ""]
    with open(args.out, "w") as fh:
        fh.write("\n".join(out))
    print("wrote", args.out)


if __name__ == "__main__":
    main()
