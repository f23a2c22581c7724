"""The certified Gaussian and k-RR brackets beside the shuffle-index asymptotics (after Takagi–Liew).

Takagi, Liew, "Analysis of Shuffling Beyond Pure Local Differential Privacy" (arXiv:2601.19154) show that the
blanket divergence depends asymptotically on the randomizer through one scalar, the shuffle index, and that
an upper and a lower index give a band for the shuffled ε.  ``baselines.shuffle_index_band`` evaluates the
leading term √(χ²/n)·ψ(ε√(n/χ²)), ψ(t) = φ(t) − tΦ(−t), with the closed-form indices derived in
``baselines.shuffle_index`` (upper: the blanket's; lower: the best single-input dataset's).  This script puts
that band beside the certified [lower, upper] of ``sa.epsilon`` for

* the Gaussian randomizer (sensitivity 1) at σ = 0.5, 1, 2, 5, 10, n = 1e3 … 1e8, δ = 1e-6, 1e-8;
* k-RR at ε0 = 0.5, 1, 2, 4, k = 2, 3, 10, n = 1e4, 1e6, 1e8, δ = 1e-8 (the band collapses for k >= 3).

Usage::

    python bench/bench_takagi_liew.py --out bench/results_takagi_liew.md
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import shuffleamp as sa  # noqa: E402
from shuffleamp import baselines  # noqa: E402
from shuffleamp.mechanisms import KRR  # noqa: E402

SIGMAS = (0.5, 1.0, 2.0, 5.0, 10.0)
NS = (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7, 10 ** 8)
DELTAS = (1e-6, 1e-8)
KRR_CASES = [(e0, k) for e0 in (0.5, 1.0, 2.0, 4.0) for k in (2, 3, 10)]
KRR_NS = (10 ** 4, 10 ** 6, 10 ** 8)


def _row(mech, n, delta):
    t = time.perf_counter()
    r = sa.epsilon(mech, n=n, delta=delta)
    dt = time.perf_counter() - t
    lo, hi = baselines.shuffle_index_band(mech, n, delta).settings["band"]
    return r.lower, r.upper, lo, hi, dt


def _fmt_ratio(a, b):
    return f"{a / b:.3f}" if b > 0 else "–"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    t0 = time.time()
    gauss = []
    for sigma in SIGMAS:
        mech = sa.Gaussian(sigma=sigma, sensitivity=1.0)
        idx = baselines.shuffle_index(mech)
        for n in NS:
            for delta in DELTAS:
                gauss.append((sigma, idx, n, delta, *_row(mech, n, delta)))
    krr = []
    for e0, k in KRR_CASES:
        mech = KRR(e0, k)
        idx = baselines.shuffle_index(mech)
        for n in KRR_NS:
            krr.append((e0, k, idx, n, 1e-8, *_row(mech, n, 1e-8)))
    lines = ["# Certified brackets beside the shuffle-index asymptotics (Takagi–Liew)", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared with other jobs: load average about "
             f"{os.getloadavg()[0]:.0f}), Python {platform.python_version()}; date "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; run time {time.time() - t0:.0f} s.",
             "Command: `python bench/bench_takagi_liew.py --out bench/results_takagi_liew.md`", "",
             "Takagi, Liew, \"Analysis of Shuffling Beyond Pure Local Differential Privacy\" (arXiv:2601.19154): "
             "the blanket divergence (Balle, Bell, Gascón, Nissim, CRYPTO 2019) depends asymptotically on the "
             "randomizer only through a scalar, the shuffle index; an upper and a lower index give a band for "
             "the shuffled ε, which collapses for k-RR with k >= 3.  The asymptotic columns are the leading "
             "term δ ≈ √(χ²/n)·ψ(ε√(n/χ²)), ψ(t) = φ(t) − tΦ(−t), inverted at δ, with the indices of "
             "`baselines.shuffle_index` (closed forms derived in its docstring: upper = ∫(R_x − R_x')²/R_min "
             "over the blanket density R_min, lower = max over inputs z of ∫(R_x − R_x')²/R_z, the dataset "
             "whose other users all hold z).  \"TL ε\" columns: that leading term's ε; they are estimates "
             "(`sound=False`), not bounds.  The certified columns are `sa.epsilon` (nats).  Only the paper's "
             "abstract and third-party summaries were available to us, so its exact normalisation of χ, its "
             "theorem numbers and any published numbers could not be checked or reproduced; no published "
             "value appears below.", "",
             "## Gaussian randomizer, sensitivity 1", "",
             "χ²_up = 2[e^{μ²}Φ(3μ/2) − 2Φ(μ/2) + Φ(−μ/2)], χ²_low = e^{μ²} − 1, μ = 1/σ.  "
             "\"upper / TL up\" near 1 means the certified upper is at the blanket divergence's asymptote; "
             "\"lower / TL low\" near 1 means the certified lower is at the asymptote of the dataset whose "
             "other users all hold the differing user's first input.", "",
             "| σ | χ²_up | χ²_low | n | δ | ε lower (certified) | ε upper (certified) | TL ε (χ²_low) "
             "| TL ε (χ²_up) | upper / TL up | lower / TL low | upper / lower | time (s) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for sigma, idx, n, delta, lo_c, up_c, lo_t, hi_t, dt in gauss:
        lines.append(f"| {sigma:g} | {idx.upper:.4g} | {idx.lower:.4g} | {n:.0e} | {delta:g} | {lo_c:.4g} | "
                     f"{up_c:.4g} | {lo_t:.4g} | {hi_t:.4g} | {_fmt_ratio(up_c, hi_t)} | {_fmt_ratio(lo_c, lo_t)} "
                     f"| {_fmt_ratio(up_c, lo_c)} | {dt:.3f} |")
    lines += ["", "## k-RR, δ = 1e-8", "",
              "χ²_up = 2(e^{ε0} − 1)²/(e^{ε0} + k − 1); χ²_low = χ²_up for k >= 3 (a third input attains the "
              "blanket where the pair differs), (e^{ε0} − 1)²/e^{ε0} for k = 2.", "",
              "| ε0 | k | χ²_up | χ²_low | n | ε lower (certified) | ε upper (certified) | TL ε (χ²_low) "
              "| TL ε (χ²_up) | upper / TL up | lower / TL low | time (s) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e0, k, idx, n, delta, lo_c, up_c, lo_t, hi_t, dt in krr:
        lines.append(f"| {e0:g} | {k} | {idx.upper:.4g} | {idx.lower:.4g} | {n:.0e} | {lo_c:.4g} | {up_c:.4g} | "
                     f"{lo_t:.4g} | {hi_t:.4g} | {_fmt_ratio(up_c, hi_t)} | {_fmt_ratio(lo_c, lo_t)} | {dt:.3f} |")
    lines += ["", "## What the comparison shows", "", *_summary(gauss, krr), ""]
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


def _summary(gauss, krr):
    def span(vals):
        return f"{min(vals):.3f}–{max(vals):.3f}"

    big = [g for g in gauss if g[0] >= 2.0 and g[2] >= 10 ** 5]
    s1 = [g for g in gauss if g[0] == 1.0 and g[2] >= 10 ** 7]
    small = [g for g in gauss if g[0] == 0.5]
    k3 = [r for r in krr if r[1] >= 3 and r[3] >= 10 ** 6]
    k2 = [r for r in krr if r[1] == 2 and r[3] >= 10 ** 6]
    return [
        f"* Gaussian, σ >= 2 and n >= 1e5: certified upper / TL ε(χ²_up) = {span([g[5] / g[7] for g in big])}, "
        f"certified lower / TL ε(χ²_low) = {span([g[4] / g[6] for g in big])}.  The certified bracket sits on "
        "the asymptotic band's two ends: its width (upper / lower "
        f"{span([g[5] / g[4] for g in big])}) is the band's own width, √(χ²_up/χ²_low) asymptotically, not "
        "numerical slack.",
        f"* Gaussian, σ = 1, n >= 1e7: upper / TL up = {span([g[5] / g[7] for g in s1])}, lower / TL low = "
        f"{span([g[4] / g[6] for g in s1])}" + (
            ": the certified lower (threshold-count post-processing) is below the lower index's asymptote.  "
            "That asymptote is the normal limit of the exact divergence of the dataset whose other users all "
            "hold the differing user's first input; its per-report variable is bounded above (skewed left), so "
            "the limit is approached from below, but with skewness 6.2 at Δ/σ = 1 the correction at n >= 1e7 "
            "is a few percent: that dataset's exact divergence would raise the lower bound by about the "
            "inverse of the factor above."
            if max(g[4] / g[6] for g in s1) < 0.95 else ": both ends at the band."),
        f"* Gaussian, σ = 0.5 (Δ/σ = 2): upper / TL up = {span([g[5] / g[7] for g in small])} over n = 1e3 … 1e8: "
        "the privacy-amplification variable's heavy right tail (log-normal) makes the normal leading term far "
        "too optimistic except at the largest n; the asymptotic value is not a usable bound there.",
        f"* k-RR, k >= 3, n >= 1e6: the band collapses (χ²_low = χ²_up) and the certified bracket equals it: "
        f"upper / TL = {span([r[6] / r[8] for r in k3])}, lower / TL = {span([r[5] / r[7] for r in k3])}.",
        f"* k-RR, k = 2, n >= 1e6: the certified bracket is at the lower index (lower / TL low = "
        f"{span([r[5] / r[7] for r in k2])}) and the blanket (upper) index is loose: certified upper / TL ε(χ²_up) "
        f"= {span([r[6] / r[8] for r in k2])}; the library's optimal decomposition is tighter than the blanket "
        "divergence here.",
    ]


if __name__ == "__main__":
    main()
