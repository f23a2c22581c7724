"""Benchmark of the budget accountant (shuffleamp.accounting); writes bench/results_accounting.md.

Run: PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_accounting.py

Naive alternatives, computed from the certified single-round upper bound ``shuffleamp.epsilon``:

* basic composition: R * eps1(delta / R);
* optimal composition of a per-round (eps1, delta1) (Kairouz, Oh, Viswanath, "The Composition
  Theorem for Differential Privacy", ICML 2015 / IEEE T-IT 2017, Theorem 3.3, in its exact
  hockey-stick form): an (eps1, delta1)-DP mechanism is dominated by the pair
  ((1-delta1) RR_eps1 + delta1 flag); its R-fold product has
  delta(eps) = 1 - (1-delta1)^R (1 - D_R(eps)), D_R(eps) = sum_j C(R,j) (e^{j eps1} - e^eps e^{(R-j) eps1})_+
  / (1+e^eps1)^R.  The per-round delta1 is optimised on a log grid.
"""

from __future__ import annotations

import math
import platform
import time
from pathlib import Path

import numpy as np
from scipy.special import gammaln

import shuffleamp as sa
from shuffleamp import accounting as acc
from shuffleamp.mechanisms import KRR

OUT = Path(__file__).with_name("results_accounting.md")


def kov_delta(eps1, delta1, R, eps):
    j = np.arange(R + 1)
    logc = gammaln(R + 1) - gammaln(j + 1) - gammaln(R - j + 1) - R * np.logaddexp(0.0, eps1)
    a = logc + j * eps1
    b = logc + eps + (R - j) * eps1
    terms = np.where(a > b, np.exp(a) * -np.expm1(np.minimum(b - a, 0.0)), 0.0)
    D = float(terms.sum())
    return 1.0 - (1.0 - delta1) ** R * (1.0 - D)


def kov_epsilon(eps1, delta1, R, delta):
    if kov_delta(eps1, delta1, R, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, R * eps1
    if kov_delta(eps1, delta1, R, hi) > delta:
        return math.inf
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if kov_delta(eps1, delta1, R, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def naive(mech, n, R, delta, grid=14):
    basic = R * sa.epsilon(mech, n, delta / R).upper
    best = math.inf
    for f in np.geomspace(1e-3, 0.999, grid):
        d1 = f * delta / R
        e1 = sa.epsilon(mech, n, d1).upper
        best = min(best, kov_epsilon(e1, d1, R, delta))
    return best, basic


def timed(fn, *a, **k):
    t = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t


def main():
    lines = ["# Budget accountant benchmark (`bench/bench_accounting.py`)", "",
             f"Machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
             "2 cores; one run (`python bench/run.py accounting`), wall-clock times.", ""]

    # 1. profile cost per epsilon at n = 1e8
    m10 = KRR(1.0, 10)
    for N in (200, 10_000):
        eps = np.linspace(-2e-3, 2e-3, N)
        _, t = timed(acc.privacy_profile, m10, 10**8, eps)
        lines.append(f"- privacy_profile, 10-RR eps0=1, n=1e8, {N} eps values in [-2e-3, 2e-3]: {t:.2f} s "
                     f"({1e3 * t / N:.3f} ms per eps, upper and lower; batched exact.delta_exact_profile)")
    lines.append("")

    # 2. 365 rounds of 10-RR end to end
    r, t = timed(acc.compose_rounds, [(m10, 10**8, 365)], delta=1e-8)
    lines += ["## 365 rounds of 10-RR, eps0 = 1, n = 1e8, delta = 1e-8 (upper and lower, end to end)", "",
              f"- total eps: upper {r.upper:.6g}, lower {r.lower:.6g} ({r.lower_method}); {t:.2f} s "
              f"(target <= 2 s); grid step {r.value_discretization_interval:.3g}", ""]
    _, tu = timed(acc.compose_rounds, [(m10, 10**8, 365)], delta=1e-8, lower=False)
    lines.append(f"- upper only: {tu:.2f} s")
    lines.append("")

    # 3. table against naive alternatives
    rows = [("binary RR", KRR(1.0, 2), 10**4, 100, 1e-6), ("binary RR", KRR(1.0, 2), 10**4, 10, 1e-6),
            ("10-RR", m10, 10**6, 365, 1e-8), ("10-RR", m10, 10**8, 365, 1e-8)]
    lines += ["## Totals against naive composition of per-round (eps, delta)", "",
              "| mechanism | n | rounds | delta | ours upper | ours lower (method) | optimal composition (KOV) "
              "| basic | time ours |", "|---|---|---|---|---|---|---|---|---|"]
    for name, m, n, R, d in rows:
        res, t = timed(acc.compose_rounds, [(m, n, R)], delta=d)
        kov, basic = naive(m, n, R, d)
        lines.append(f"| {name} eps0={m.eps0:g} | {n:.0e} | {R} | {d:g} | {res.upper:.4g} | {res.lower:.4g} "
                     f"({res.lower_method}) | {kov:.4g} | {basic:.4g} | {t:.2f} s |")
    lines += ["", "Anchor: binary RR, eps0 = 1, n = 1e4, delta = 1e-6, 100 rounds: optimal composition of "
              "per-round (eps, delta) about 2.70, basic 5.64.", ""]

    # 4. the default plan's report with totals (per-collection totals and the grand total)
    from shuffleamp.config import evaluate_plan, load_plan, plan_total

    def report():
        rows_ = load_plan(None)
        evaluate_plan(rows_)
        return plan_total(rows_, budget=rows_.budget)

    tot, t = timed(report)
    lines += ["## Default plan: `shuffleamp report` with totals", "",
              f"- 9 collections (8 with rounds up to 365, one gradual-release schedule), per-round, per-collection "
              f"and grand totals: {t:.2f} s (target <= 5 s; plus about 1.3 s of imports for the command line); "
              f"grand total eps in [{tot['epsilon_lower']:.4g}, {tot['epsilon_upper']:.4g}] at delta = "
              f"{tot['delta']:g}, budget holds: {tot['holds']}", ""]

    # 5. grid convergence
    lines += ["## Grid convergence (binary RR, n = 1e4, 100 rounds, delta = 1e-6)", "",
              "| points | grid step | upper | lower | time |", "|---|---|---|---|---|"]
    for p in (250, 1000, 4000):
        res, t = timed(acc.compose_rounds, [(KRR(1.0, 2), 10**4, 100)], delta=1e-6, points=p)
        lines.append(f"| {p} | {res.value_discretization_interval:.3g} | {res.upper:.7g} | {res.lower:.7g} | "
                     f"{t:.2f} s |")
    lines.append("")
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
