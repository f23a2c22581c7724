"""Batched privacy profile: δ at 10^4 ε for one GPARV family in one call, against the per-ε loop.

``shuffleamp.exact.delta_exact_profile`` (one compiled nogil loop over ε) versus the Python loop
``[delta_exact(dec.gparv(e), n, mode).delta for e in eps]`` that it replaces, measured side by side
in one run, with the largest relative difference between the two.

Usage::

    python bench/bench_profile.py --out bench/results_profile.md
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from shuffleamp import exact
from shuffleamp._ext import kernels
from shuffleamp.mechanisms import BLH, KRR, OUE


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def band(dec, n, eps0, lo=1e-14, hi=1e-1):
    """[ε_a, ε_b] where the upper profile is between ``lo`` and ``hi`` (from a coarse grid)."""
    e = np.concatenate([[0.0], eps0 * np.logspace(-8, 0, 2001)])
    d = exact.delta_exact_profile(dec, n, e, "upper")
    inside = e[(d >= lo) & (d <= hi)]
    return float(inside.min()), float(inside.max())


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--points", type=int, default=10_000)
    ap.add_argument("--loop-points", type=int, default=1_000,
                    help="ε values timed with the per-ε Python loop (its time is scaled to --points)")
    args = ap.parse_args(argv)
    m, m_loop = args.points, args.loop_points
    lines = [
        "# Batched privacy profile (`exact.delta_exact_profile`)\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores; OpenMP threads available to the "
        f"profile loop: {kernels.num_threads(1e12)} (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}).",
        f"{m} ε values evenly spaced over the band where the upper profile is between 1e-14 and 0.1 "
        "(that is, where a privacy-loss distribution needs it). The per-ε loop "
        f"`[delta_exact(dec.gparv(e), n, mode).delta for e in eps]` is timed on {m_loop} of those values "
        f"(every {m // m_loop}-th) and scaled to {m}. "
        "'max rel diff' compares the two on those values, both modes.\n",
        "| mechanism | n | ε band | profile upper s | profile lower s | profile both s | "
        "loop upper+lower s (scaled) | ms per ε per mode: profile / loop | speedup (both vs loop) | max rel diff |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    cases = [("10-RR", KRR(1.0, 10), 10**8), ("10-RR", KRR(1.0, 10), 10**6), ("BLH", BLH(1.0), 10**8),
             ("OUE(16)", OUE(1.0, 16), 10**8), ("10-RR", KRR(1.0, 10), 10**4)]
    for name, mech, n in cases:
        dec = mech.upper_decompositions()[0]
        a, b = band(dec, n, mech.eps0)
        eps = np.linspace(a, b, m)
        exact.delta_exact_profile(dec, n, eps[:100], "both")           # warm-up
        up, t_up = timed(lambda: exact.delta_exact_profile(dec, n, eps, "upper"))
        lo, t_lo = timed(lambda: exact.delta_exact_profile(dec, n, eps, "lower"))
        both, t_both = timed(lambda: exact.delta_exact_profile(dec, n, eps, "both"))
        sub = eps[:: m // m_loop]
        ref_up, s_up = timed(lambda: np.array([exact.delta_exact(dec.gparv(e), n, "upper").delta for e in sub]))
        ref_lo, s_lo = timed(lambda: np.array([exact.delta_exact(dec.gparv(e), n, "lower").delta for e in sub]))
        scale = m / sub.size
        t_loop = (s_up + s_lo) * scale
        diffs = []
        for got, ref in ((up[:: m // m_loop], ref_up), (lo[:: m // m_loop], ref_lo)):
            pos = ref > 0
            diffs.append(float(np.max(np.abs(got[pos] - ref[pos]) / ref[pos])) if pos.any() else 0.0)
            diffs.append(float(np.max(np.abs(got[~pos] - ref[~pos]))) if (~pos).any() else 0.0)
        assert np.array_equal(both[0], up) and np.array_equal(both[1], lo)
        lines.append(
            f"| {name} | {n:.0e} | [{a:.3g}, {b:.3g}] | {t_up:.3f} | {t_lo:.3f} | {t_both:.3f} | {t_loop:.2f} | "
            f"{1e3 * (t_up + t_lo) / (2 * m):.4f} / {1e3 * t_loop / (2 * m):.4f} | {t_loop / t_both:.0f}x | "
            f"{max(diffs):.1e} |")
        print(lines[-1], flush=True)
    lines.append("\nTarget (10^4 ε at n = 10^8, upper + lower): ≤ 1 s, i.e. ≈ 0.05 ms per ε per mode.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
