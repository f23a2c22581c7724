"""Continuous randomizers beside k-RR: latency of one certified ε(δ), and seed002's experiment settings.

Part 1 (latency): ``sa.epsilon(mechanism, n, delta)`` (upper and lower, default evaluator) for k-RR (k = 10),
Laplace and the Gaussian randomizer over n = 2 … 1e9, three privacy levels each and two δ, in one process
and one run (a warm-up call per mechanism first).  Targets for Laplace and Gaussian: median <= 10 ms,
max <= 200 ms over the grid, <= 50 ms at n = 1e8.

Part 2 (Chen, Cao, Ge, "A Generalized Shuffle Framework for Privacy Amplification", AAAI 2024): certified
upper and lower ε beside the paper's μ-GDP value (``baselines.gdp_epsilon``, labelled sound=False) for
its personalized binary randomized response (n = 10^4, conservative / moderate / liberal users) and its
Gaussian SGD setting (m = 100 clients, δ_j = 1e-5, the paper's σ_j = Δ·sqrt(2 ln(1.25/δ_j))/ε_j, so
Δ/σ_j = ε_j / sqrt(2 ln(1.25e5)); per epoch at central δ = 1e-5 and over T = 50 epochs).

Usage::

    python bench/bench_continuous.py --out bench/results_continuous.md
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import shuffleamp as sa  # noqa: E402
from shuffleamp import baselines  # noqa: E402
from shuffleamp.mechanisms import KRR, Laplace  # noqa: E402

NS = [2, 5, 20, 100, 1000, 10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7, 10 ** 8, 10 ** 9]
DELTAS = [1e-6, 1e-10]
MECHS = {
    "k-RR (k=10)": [KRR(0.5, 10), KRR(2.0, 10), KRR(8.0, 10)],
    "Laplace": [Laplace(0.5), Laplace(2.0), Laplace(8.0)],
    "Gaussian": [sa.Gaussian(sigma=8.0), sa.Gaussian(sigma=2.0), sa.Gaussian(sigma=0.5)],
}


def latency():
    rows, per = {}, []
    for name, mechs in MECHS.items():
        sa.epsilon(mechs[0], 1000, 1e-6)                      # warm-up (imports, kernels)
        times, at_1e8, worst = [], [], (0.0, None)
        for m in mechs:
            mine, gaps = [], []
            for n in NS:
                for d in DELTAS:
                    t = time.perf_counter()
                    r = sa.epsilon(m, n, d)
                    dt = (time.perf_counter() - t) * 1e3
                    assert r.lower <= r.upper
                    times.append(dt)
                    mine.append(dt)
                    gaps.append(r.upper / r.lower if r.lower > 0 else math.inf)
                    if n == 10 ** 8:
                        at_1e8.append(dt)
                    if dt > worst[0]:
                        worst = (dt, f"{m.describe()} n={n:g} δ={d:g}")
            per.append((name, m.describe(), statistics.median(mine), max(mine), statistics.median(gaps), max(gaps)))
        rows[name] = (statistics.median(times), max(times), max(at_1e8), len(times), worst[1])
    return rows, per


def gspa_gaussian_mu(eps):
    return math.sqrt(eps / math.sqrt(2 * math.log(1.25e5)))


def seed002():
    out = []
    # personalized binary randomized response (Algorithm 2): n = 10^4, f_c, f_m, f_l = 0.54, 0.37, 0.09
    n = 10 ** 4
    fr = [(0.54, 0.1), (0.37, 0.5), (0.09, 1.0)]
    counts = [round(f * n) for f, _ in fr]
    pop = sa.population([(KRR(e, 2), c) for (_, e), c in zip(fr, counts)])
    eps_list = np.concatenate([[e] * c for (_, e), c in zip(fr, counts)])
    for delta in (1e-4, 1e-6):
        t = time.perf_counter()
        r = sa.epsilon(pop, delta=delta)
        dt = time.perf_counter() - t
        g = baselines.gdp_epsilon(eps_list, None, delta)
        out.append(("binary RR, 54/37/9 % at ε0 = 0.1/0.5/1, n = 10^4", delta, 1, r.upper, r.lower, g.estimate, dt))
    # Gaussian SGD (Algorithm 3, Table 3): m = 100 clients, δ_j = 1e-5, Δ/σ_j = ε_j / sqrt(2 ln(1.25e5))
    c = math.sqrt(2 * math.log(1.25e5))
    m = 100
    for label, eps_groups in (("Constant ε_j = 0.5", [(0.5, 100)]),
                              ("Mixed constant: 50 % 0.5, 50 % 0.01", [(0.5, 50), (0.01, 50)])):
        mechs = [(sa.Gaussian(sigma=c / e, sensitivity=1.0), k) for e, k in eps_groups]
        eps_list = np.concatenate([[e] * k for e, k in eps_groups])
        dl = np.full(m, 1e-5)
        delta = 1e-5
        t = time.perf_counter()
        if len(mechs) == 1:
            r = sa.epsilon(mechs[0][0], m, delta)
            up, lo = r.upper, r.lower
            tot = sa.compose_rounds([(mechs[0][0], m, 50)], delta=delta)
            tot_up, tot_lo = tot.upper, tot.lower
        else:
            r = sa.epsilon(sa.population(mechs), delta=delta)
            up, lo = r.upper, r.lower
            tot_up = tot_lo = None
        dt = time.perf_counter() - t
        g = baselines.gdp_epsilon(eps_list, dl, delta)
        mu = baselines.gdp_mu(eps_list, dl)
        g50 = baselines.gdp_epsilon_mu(math.sqrt(50) * mu, delta)
        out.append((f"Gaussian SGD, m = 100, {label}", delta, 1, up, lo, g.estimate, dt))
        if tot_up is not None:
            out.append((f"Gaussian SGD, m = 100, {label}", delta, 50, tot_up, tot_lo, g50, None))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    t0 = time.time()
    lat, per = latency()
    s2 = seed002()
    lines = ["# Continuous randomizers beside k-RR", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}; "
             f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; run time {time.time() - t0:.0f} s.",
             "Command: `python bench/bench_continuous.py --out bench/results_continuous.md`", "",
             "## Latency of one certified ε(δ) (upper and lower)", "",
             f"Grid: n in {{{', '.join(f'{x:g}' for x in NS)}}} x δ in {{1e-6, 1e-10}} x three privacy levels "
             "(k-RR and Laplace ε0 = 0.5, 2, 8; Gaussian Δ = 1, σ = 8, 2, 0.5).  Targets (Laplace, Gaussian): "
             "median <= 10 ms, max <= 200 ms, <= 50 ms at n = 1e8.", "",
             "| randomizer | cases | median (ms) | max (ms) | max at n = 1e8 (ms) | slowest case |",
             "|---|---|---|---|---|---|"]
    for name, (med, mx, m8, cnt, worst) in lat.items():
        lines.append(f"| {name} | {cnt} | {med:.1f} | {mx:.0f} | {m8:.1f} | {worst} |")
    lines += ["", "Per privacy level (upper/lower: ratio of the certified ε bounds, median and max over the grid):", "",
              "| randomizer | parameters | median (ms) | max (ms) | upper/lower median | upper/lower max |",
              "|---|---|---|---|---|---|"]
    for name, desc, med, mx, g_med, g_max in per:
        lines.append(f"| {name} | {desc} | {med:.1f} | {mx:.0f} | {g_med:.3g} | {g_max:.3g} |")
    lines += ["", "## Chen–Cao–Ge (AAAI 2024) settings: certified bounds beside the μ-GDP value", "",
              "μ-GDP: the paper's Theorem 2 value (asymptotic, not certified: `sound=False`).  The certified "
              "numbers are this library's upper and lower bounds (users' budgets attached to users, replace-one).",
              "",
              "| setting | central δ | epochs | ε upper (certified) | ε lower (certified) | μ-GDP ε (not a bound) | time (s) |",
              "|---|---|---|---|---|---|---|"]
    for label, d, T, up, lo, g, dt in s2:
        lines.append(f"| {label} | {d:g} | {T} | {up:.4g} | {lo:.4g} | {g:.4g} | "
                     f"{'' if dt is None else f'{dt:.2f}'} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
