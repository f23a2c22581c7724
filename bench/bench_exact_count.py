"""Exact shuffled ε of binary randomized response (shuffleamp.exact_count) against the
decomposition upper bound and the previous lower bound, δ = 1e-6, plus the composed total.

Run: PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_exact_count.py
     -> bench/results_exact_count.md, .json, .png

Columns (one run, side by side):
* exact: ``epsilon_binary_rr`` with the default budget of the bounds layer (the initial evaluations:
  exact datasets m = 0..4, N-4..N, N/2 and the mirror-symmetric blocks), cold caches;
* default: ``shuffleamp.epsilon(KRR(eps0, 2), n, delta)`` (exact count law + decomposition, min / max);
* decomp upper: the optimal decomposition bound (Su-Cheng-Wang Theorem 13) alone, computed beside the default
  (which skips it when the count law is tighter);
* previous lower: the Theorem-14 dataset "others all 1" in its documented ordering only (the lower
  bound before this change), by the same certified root search.
"""
import json
import os
import time

import numpy as np

import shuffleamp
from shuffleamp import bounds
from shuffleamp import exact_count as ec
from shuffleamp.mechanisms import KRR

HERE = os.path.dirname(os.path.abspath(__file__))
DELTA = 1e-6
EPS0S = [0.5, 1.0, 2.0, 4.0]
NS = [10**k for k in range(2, 10)]


def previous_lower(mech, n, delta):
    fams = list(mech.lower_decompositions())        # documented ordering only (no swap)
    lo, _, _ = bounds.solve_epsilon(
        lambda e: bounds.max_delta(fams, n, e, bounds.LOWER_MODE, bounds.DEFAULT_RTOL_LOWER),
        delta, float(mech.eps0), "lower", 1e-7, bounds.estimator(fams, n))
    return lo


def decomposition_bound(mech, n, delta):
    """(upper, lower) ε of the optimal decomposition bound alone (Su-Cheng-Wang Theorem 13 over the upper
    families, the Theorem-14 datasets in both orderings): the default skips it when the count law is tighter."""
    up = bounds._families(mech, "optimal", "upper")
    lo = bounds._families(mech, "optimal", "lower")
    u, _, _ = bounds.solve_epsilon(lambda e: bounds.max_delta(up, n, e), delta, float(mech.eps0), "upper", 1e-7,
                                   bounds.estimator(up, n))
    low, _, _ = bounds.solve_epsilon(
        lambda e: bounds.max_delta(lo, n, e, bounds.LOWER_MODE, bounds.DEFAULT_RTOL_LOWER),
        delta, float(mech.eps0), "lower", 1e-7, bounds.estimator(lo, n))
    return u, low


def main():
    shuffleamp.epsilon(KRR(1.0, 2), 1000, DELTA)     # warm up lazy imports and FFT plans
    rows = []
    for e0 in EPS0S:
        for n in NS:
            mech = KRR(e0, 2)
            ec._law.cache_clear()
            t, c = time.perf_counter(), time.process_time()
            r = ec.epsilon_binary_rr(e0, n, DELTA, max_pairs=ec.DEFAULT_BOUNDS_PAIRS)
            te, ce = time.perf_counter() - t, time.process_time() - c
            ec._law.cache_clear()
            t, c = time.perf_counter(), time.process_time()
            d = shuffleamp.epsilon(mech, n, DELTA)
            td, cd = time.perf_counter() - t, time.process_time() - c
            dec_upper, dec_lower = decomposition_bound(mech, n, DELTA)
            prev = previous_lower(mech, n, DELTA)
            rows.append(dict(eps0=e0, n=n, exact_lower=r.lower, exact_upper=r.upper, worst_m=int(r.worst_m),
                             pairs=r.settings["pairs_evaluated"], t_exact=te, cpu_exact=ce, cpu_default=cd,
                             default_lower=d.lower, default_upper=d.upper, t_default=td,
                             upper_engine=d.settings["upper_engine"], lower_engine=d.settings["lower_engine"],
                             decomp_upper=dec_upper, decomp_lower=dec_lower, previous_lower=prev))
            print(rows[-1], flush=True)
    # composition: 365 rounds of binary RR at n = 1e8 (exact profile vs decomposition profile)
    from shuffleamp import accounting as acc
    comp = []
    for e0, n, R in [(1.0, 10**4, 10), (1.0, 10**6, 100), (1.0, 10**8, 365), (0.5, 10**8, 365)]:
        t = time.perf_counter()
        x = acc.binary_rr_rounds(e0, n, R, delta=DELTA)
        tx = time.perf_counter() - t
        t = time.perf_counter()
        c = acc.compose_rounds([(KRR(e0, 2), n, R)], delta=DELTA)
        tc = time.perf_counter() - t
        comp.append(dict(eps0=e0, n=n, R=R, exact_upper=x.upper, exact_lower=x.lower, t_exact=tx,
                         decomp_upper=c.upper, decomp_lower=c.lower, t_decomp=tc))
        print(comp[-1], flush=True)
    with open(os.path.join(HERE, "results_exact_count.json"), "w") as fh:
        json.dump({"single_round": rows, "rounds": comp}, fh, indent=1)
    load = os.getloadavg()[0]
    lines = ["# Exact shuffled ε of binary randomized response", "",
             f"δ = {DELTA:g}, one run (`bench/bench_exact_count.py`), machine load average {load:.1f} on 2 cores "
             "(`t` = wall clock under that load; `cpu` = CPU time of the process, single-threaded, closer to an "
             "unloaded wall time). `exact` = `epsilon_binary_rr` with the default budget "
             "(initial evaluations only, cold caches): a certified bracket [lower, upper] of the true worst case over "
             "all datasets. `default` = `shuffleamp.epsilon(KRR(eps0, 2))`, which now runs the exact count law "
             "next to the decomposition (upper = min, lower = max). `decomp upper` = the optimal decomposition "
             "bound; `previous lower` = the lower bound before this change (dataset 'others all 1', documented "
             "ordering only). `gap` = 1 − default upper / decomp upper; `bracket` = exact upper / exact lower − 1.", "",
             "| ε0 | n | exact lower | exact upper | bracket | worst m | pairs | t exact (s) | cpu exact (s) | "
             "default lower | default upper | t default (s) | cpu default (s) | decomp upper | previous lower | gap |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        gap = 1 - r["default_upper"] / r["decomp_upper"]
        br = r["exact_upper"] / r["exact_lower"] - 1 if r["exact_lower"] > 0 else float("inf")
        lines.append(f"| {r['eps0']:g} | 1e{int(np.log10(r['n']))} | {r['exact_lower']:.6g} | {r['exact_upper']:.6g} | "
                     f"{br:.2%} | {r['worst_m']} | {r['pairs']} | {r['t_exact']:.3f} | {r['cpu_exact']:.3f} | "
                     f"{r['default_lower']:.6g} | {r['default_upper']:.6g} | {r['t_default']:.3f} | "
                     f"{r['cpu_default']:.3f} | {r['decomp_upper']:.6g} | "
                     f"{r['previous_lower']:.6g} | {gap:.3f} |")
    lines += ["", "## Composition: R rounds, total ε at δ = 1e-6", "",
              "`exact profile` = `accounting.binary_rr_rounds` (pessimistic PLD of the certified exact profile, "
              "max over every dataset pair; lower = exact total of the concrete pair 'others all 1'); "
              "`default` = `accounting.compose_rounds([(KRR(eps0, 2), n, R)])`, which for binary RR composes the same "
              "exact-count profile (so the two agree; the times differ by the path).", "",
              "| ε0 | n | R | exact-profile upper | exact-pair lower | t (s) | default upper | "
              "default lower | t (s) |", "|---|---|---|---|---|---|---|---|---|"]
    for c in comp:
        lines.append(f"| {c['eps0']:g} | 1e{int(np.log10(c['n']))} | {c['R']} | {c['exact_upper']:.6g} | "
                     f"{c['exact_lower']:.6g} | {c['t_exact']:.2f} | {c['decomp_upper']:.6g} | "
                     f"{c['decomp_lower']:.6g} | {c['t_decomp']:.2f} |")
    lines += ["", "![exact vs decomposition](results_exact_count.png)", ""]
    with open(os.path.join(HERE, "results_exact_count.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    for e0, c in zip(EPS0S, ["C0", "C1", "C2", "C3"]):
        rs = [r for r in rows if r["eps0"] == e0]
        ns = [r["n"] for r in rs]
        ax[0].loglog(ns, [r["default_upper"] for r in rs], "-o", color=c, ms=3, label=f"exact upper ε0={e0:g}")
        ax[0].loglog(ns, [r["decomp_upper"] for r in rs], "--", color=c, label=f"decomp upper ε0={e0:g}")
        ax[0].loglog(ns, [max(r["previous_lower"], 1e-12) for r in rs], ":", color=c)
        ax[1].semilogx(ns, [r["default_upper"] / r["decomp_upper"] for r in rs], "-o", color=c, ms=3,
                       label=f"ε0={e0:g}")
        ax[1].semilogx(ns, [r["default_lower"] / r["decomp_upper"] for r in rs], "-", color=c, alpha=0.5)
        ax[1].semilogx(ns, [r["previous_lower"] / r["decomp_upper"] for r in rs], ":", color=c)
    ax[0].set_xlabel("n"); ax[0].set_ylabel("ε (δ = 1e-6)"); ax[0].legend(fontsize=6)
    ax[0].set_title("exact upper (solid), decomposition upper (dashed), previous lower (dotted)", fontsize=8)
    ax[1].set_xlabel("n"); ax[1].set_ylabel("ratio to decomposition upper"); ax[1].legend(fontsize=7)
    ax[1].set_title("exact upper (dots), exact lower (solid), previous lower (dotted)", fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "results_exact_count.png"), dpi=110)


if __name__ == "__main__":
    main()
