"""Exact shuffled ε of binary randomized response (shuffleamp.exact_count) against the
decomposition upper bound and the dataset lower bound of shuffleamp.epsilon (δ = 1e-6).

Run: PYTHONPATH=src python bench/bench_exact_count.py  -> bench/results_exact_count.md (+ .png)
"""
import json
import os
import sys
import time

import numpy as np

import shuffleamp
from shuffleamp.exact_count import epsilon_binary_rr
from shuffleamp.mechanisms import KRR

HERE = os.path.dirname(os.path.abspath(__file__))
DELTA = 1e-6
EPS0S = [0.5, 1.0, 2.0, 4.0]
NS = [10**k for k in range(2, 10)]
MAX_PAIRS = int(os.environ.get("MAX_PAIRS", "64"))


def main():
    rows = []
    for e0 in EPS0S:
        for n in NS:
            t = time.perf_counter()
            b = shuffleamp.epsilon(KRR(e0, 2), n, DELTA)
            tb = time.perf_counter() - t
            t = time.perf_counter()
            fast = epsilon_binary_rr(e0, n, DELTA, max_pairs=8)
            tf = time.perf_counter() - t
            t = time.perf_counter()
            r = epsilon_binary_rr(e0, n, DELTA, max_pairs=MAX_PAIRS)
            te = time.perf_counter() - t
            rows.append(dict(eps0=e0, n=n, exact_lower=r.lower, exact_upper=r.upper, worst_m=r.worst_m,
                             converged=r.converged, pairs=r.settings["pairs_evaluated"], t_exact=te,
                             fast_lower=fast.lower, fast_upper=fast.upper, t_fast=tf,
                             decomp_upper=b.upper, decomp_lower=b.lower, t_decomp=tb))
            print(rows[-1], flush=True)
    with open(os.path.join(HERE, "results_exact_count.json"), "w") as fh:
        json.dump(rows, fh, indent=1)
    lines = ["# Exact shuffled ε of binary randomized response", "",
             f"δ = {DELTA:g}. `exact` = `epsilon_binary_rr` (certified bracket [lower, upper] of the true "
             f"worst case over all datasets, max_pairs = {MAX_PAIRS}); `budget 8` = the same with "
             "max_pairs = 8 (m = 0..4, N/2, N and one block split). `decomp` = `shuffleamp.epsilon(KRR(eps0, 2))` "
             "(optimal decomposition upper bound; lower = exact divergence of the dataset 'others all 1'). "
             "`gap` = 1 − exact.upper / decomp.upper. Times in seconds on a shared 2-core machine.", "",
             "| ε0 | n | exact lower | exact upper | worst m | complete | pairs | t exact | budget-8 upper | t budget-8 | decomp lower | decomp upper | gap | t decomp |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        gap = 1 - r["exact_upper"] / r["decomp_upper"] if r["decomp_upper"] else float("nan")
        lines.append(f"| {r['eps0']:g} | 1e{int(np.log10(r['n']))} | {r['exact_lower']:.6g} | {r['exact_upper']:.6g} | "
                     f"{r['worst_m']} | {r['converged']} | {r['pairs']} | {r['t_exact']:.3f} | {r['fast_upper']:.6g} | "
                     f"{r['t_fast']:.3f} | {r['decomp_lower']:.6g} | {r['decomp_upper']:.6g} | {gap:.3f} | {r['t_decomp']:.3f} |")
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
        ax[0].loglog(ns, [r["exact_upper"] for r in rs], "-o", color=c, label=f"exact ε0={e0:g}")
        ax[0].loglog(ns, [r["decomp_upper"] for r in rs], "--", color=c, label=f"decomp upper ε0={e0:g}")
        ax[0].loglog(ns, [max(r["decomp_lower"], 1e-12) for r in rs], ":", color=c)
        ax[1].semilogx(ns, [r["exact_upper"] / r["decomp_upper"] for r in rs], "-o", color=c, label=f"ε0={e0:g}")
        ax[1].semilogx(ns, [r["decomp_lower"] / r["decomp_upper"] for r in rs], ":", color=c)
    ax[0].set_xlabel("n"); ax[0].set_ylabel("ε (δ = 1e-6)"); ax[0].legend(fontsize=7)
    ax[0].set_title("exact (solid), decomposition upper (dashed), dataset lower (dotted)", fontsize=8)
    ax[1].set_xlabel("n"); ax[1].set_ylabel("ratio to decomposition upper"); ax[1].legend(fontsize=7)
    ax[1].set_title("exact / decomp upper (solid), dataset lower / decomp upper (dotted)", fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "results_exact_count.png"), dpi=110)


if __name__ == "__main__":
    sys.exit(main())
