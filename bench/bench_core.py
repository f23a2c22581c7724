"""Core benchmark: ε(δ) for 10-RR and BLH, side by side with baselines, in one run.

For each mechanism, ε0 ∈ {0.1, 1, 4} and n ∈ {10^3, …, 10^8} it records, for
``shuffleamp.epsilon`` (optimal upper + certified lower):

* wall time and peak traced memory (tracemalloc: numpy and pyFFTW buffers);
* ε upper and lower and the FFT lengths used;
* the standard-clone bound through the same engine (ratio to the optimal upper);
* the paper's Algorithm 7 as published (fixed grid l = (e^ε0 − 1)/1000, ceil rounding,
  full-support linear FFT convolution, 20-step bisection) where its grid fits in 2^26 points.

Usage::

    python bench/bench_core.py                 # full table (about 10-15 minutes on 2 cores)
    python bench/bench_core.py --quick         # n <= 1e5 only
    python bench/bench_core.py --out bench/results_core.md
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
import tracemalloc

import numpy as np
import scipy.fft

import shuffleamp as sa
from shuffleamp import fft_engine
from shuffleamp.mechanisms import BLH, KRR

NAIVE_MAX_GRID = 2**26


def measure(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, dt, peak


def naive_alg7_delta(gparv, n: int, l: float) -> float | None:
    """Algorithm 7 of the paper as printed: ceil rounding, full-support linear convolution."""
    v, p = gparv.values, gparv.probs
    idx = np.ceil(v / l).astype(np.int64)
    imin, imax = int(idx.min()), int(idx.max())
    L = n * (imax - imin) + 1
    if L > NAIVE_MAX_GRID:
        return None
    pmf = np.zeros(imax - imin + 1)
    np.add.at(pmf, idx - imin, p)
    N = scipy.fft.next_fast_len(L, real=True)
    S = scipy.fft.irfft(scipy.fft.rfft(pmf, N) ** n, N)[:L]
    S = np.maximum(S, 0)
    vals = (n * imin + np.arange(L)) * l
    pos = vals > 0
    return float(np.dot(vals[pos], S[pos]) / n)


def naive_alg7_epsilon(mech, n: int, delta: float, steps: int = 20):
    l = (math.exp(mech.eps0) - 1) / 1000
    dec = mech.upper_decompositions()[0]
    lo, hi = 0.0, mech.eps0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        d = naive_alg7_delta(dec.gparv(mid), n, l)
        if d is None:
            return None
        if d <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def row(mech, n, delta):
    r, dt, peak = measure(lambda: sa.epsilon(mech, n=n, delta=delta))
    g = r.settings["grid"]
    rf, dtf, peakf = measure(lambda: sa.epsilon(mech, n=n, delta=delta, evaluator="fft"))
    c, dtc, _ = measure(lambda: sa.epsilon(mech, n=n, delta=delta, method="clone"))
    naive = None
    dtn = None
    if n <= 10**4:
        naive, dtn, _ = measure(lambda: naive_alg7_epsilon(mech, n, delta))
    return {
        "mechanism": f"{mech.describe()['mechanism']}" + (f" k={mech.k}" if hasattr(mech, "k") else ""),
        "eps0": mech.eps0, "n": n, "delta": delta,
        "eps_upper": r.upper, "eps_lower": r.lower, "gap": (r.upper / r.lower - 1) if r.lower else float("inf"),
        "seconds": dt, "peak_MiB": peak / 2**20,
        "fft_eps_upper": rf.upper, "fft_seconds": dtf, "fft_peak_MiB": peakf / 2**20,
        "N_upper": g["upper"]["N"] if g["upper"] else 0,
        "N_lower": g["lower"]["N"] if g.get("lower") else 0,
        "evals": g["upper_evaluations"] + g.get("lower_evaluations", 0),
        "eps_clone": c.upper, "clone_ratio": c.upper / r.upper if r.upper else float("nan"), "clone_s": dtc,
        "eps_alg7": naive, "alg7_s": dtn,
    }


def fmt(rows) -> str:
    head = ("| mechanism | ε0 | n | δ | ε upper | ε lower | gap | time s | peak MiB | FFT-path s | FFT-path MiB "
            "| N upper | N lower | evals | clone ε (×opt) | clone s | Alg.7 ε | Alg.7 s | Alg.7 time ×ours |")
    sep = "|" + "---|" * 19
    lines = [head, sep]
    for r in rows:
        a7 = "—" if r["eps_alg7"] is None else f"{r['eps_alg7']:.5g}"
        a7s = "—" if r["alg7_s"] is None else f"{r['alg7_s']:.2f}"
        a7r = "—" if r["alg7_s"] is None or r["eps_alg7"] is None else f"{r['alg7_s'] / r['seconds']:.0f}"
        if r["alg7_s"] is not None and r["eps_alg7"] is None:
            a7, a7r = "grid > 2^26", "—"
        lines.append(
            f"| {r['mechanism']} | {r['eps0']:g} | {r['n']:.0e} | {r['delta']:.0e} | {r['eps_upper']:.6g} | "
            f"{r['eps_lower']:.6g} | {100 * r['gap']:.2f}% | {r['seconds']:.2f} | {r['peak_MiB']:.0f} | "
            f"{r['fft_seconds']:.2f} | {r['fft_peak_MiB']:.0f} | "
            f"{r['N_upper']} | {r['N_lower']} | {r['evals']} | {r['eps_clone']:.4g} ({r['clone_ratio']:.2f}) | "
            f"{r['clone_s']:.2f} | {a7} | {a7s} | {a7r} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    ns = [10**k for k in range(3, 6 if args.quick else 9)]
    rows = []
    for mech_cls in ("krr", "blh"):
        for eps0 in (0.1, 1.0, 4.0):
            mech = KRR(eps0, 10) if mech_cls == "krr" else BLH(eps0)
            for n in ns:
                delta = 1e-6 if n <= 10**4 else 1e-8
                r = row(mech, n, delta)
                rows.append(r)
                print(f"{r['mechanism']:>8} eps0={eps0:<4} n={n:.0e} up={r['eps_upper']:.6g} lo={r['eps_lower']:.6g} "
                      f"t={r['seconds']:.2f}s fft={r['fft_seconds']:.2f}s peak={r['peak_MiB']:.0f}MiB "
                      f"N={r['N_upper']}/{r['N_lower']} "
                      f"clone={r['eps_clone']:.4g} alg7={r['eps_alg7']} ({r['alg7_s']})", flush=True)
    header = (f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {sys.version.split()[0]}, "
              f"shuffleamp {sa.__version__}, FFT backend {fft_engine.backend_name()}.\n\n")
    table = fmt(rows)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(header + table + "\n")
    print(header + table)


if __name__ == "__main__":
    main()
