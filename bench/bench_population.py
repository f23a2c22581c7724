"""Benchmark of shuffleamp.personalized: timing of per-group ε(δ) at n = 1e8 (2 and 10 groups), populations of
many groups (20 and 100 groups of 5000 users, ε0 at the midpoints of U[0.05, 1], binary RR and 10-RR, δ = 1e-5),
the reference table for a mixed k-RR population (60% at ε0 = 0.5, 30% at 2, 10% at 4, k = 10) with the
everyone-at-max baseline and the μ-GDP estimate, and the accountant on a population.  One run.

Run: PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_population.py > bench/results_population.md
(``--many-groups`` / ``--gaussian`` / ``--gaussian-totals`` print the many-groups / Gaussian-groups / Gaussian and
(ε0, δ0) populations' single-round and totals table alone.)
"""
import os
import sys
import time

import numpy as np

import shuffleamp as sa
from shuffleamp import personalized as P
from shuffleamp.accounting import compose_rounds
from shuffleamp.mechanisms import KRR

DELTA = 1e-9


def timed(fn, reps=3, fresh=None, cpu=False):
    """Best wall time (and, with ``cpu``, best process CPU time) of ``reps`` calls (``fresh()`` rebuilds
    the input so no cache is reused)."""
    best, best_cpu, out = np.inf, np.inf, None
    for _ in range(reps):
        arg = fresh() if fresh is not None else None
        t, c = time.perf_counter(), time.process_time()
        out = fn(arg)
        best_cpu = min(best_cpu, time.process_time() - c)
        best = min(best, time.perf_counter() - t)
    return ((best, best_cpu) if cpu else best), out


def krr_pop(eps0s, counts):
    return sa.population([(KRR(eps0=float(e), k=10), int(c)) for e, c in zip(eps0s, counts)])


#: (groups, k) of the many-groups table: ε0 at the midpoints of U[0.05, 1], 5000 users per group, δ = 1e-5.
MANY_GROUPS = ((20, 2), (100, 2), (100, 10))


def many_groups_table():
    """ε(δ) of every group of populations of many groups (the worst group's bracket), process CPU and wall time,
    under a budget large enough not to refuse (the time is measured, not capped)."""
    from shuffleamp._numerics import budget
    print("| groups | k | n total | CPU s | wall s | load avg | worst-group ε upper | worst-group ε lower |")
    print("|---|---|---|---|---|---|---|---|")
    for G, k in MANY_GROUPS:
        eps0 = [0.05 + (i + 0.5) * 0.95 / G for i in range(G)]
        pop = sa.population([(KRR(eps0=float(e), k=k), 5000) for e in eps0])
        load = os.getloadavg()[0]
        with budget(1000.0):
            t, c = time.perf_counter(), time.process_time()
            r = sa.epsilon(pop, delta=1e-5, max_seconds=1000.0)
            c, t = time.process_time() - c, time.perf_counter() - t
        print(f"| {G} | {k} | {5000 * G:.0e} | {c:.2f} | {t:.2f} | {max(load, os.getloadavg()[0]):.1f} | "
              f"{r.upper:.8g} | {r.lower:.8g} |")


#: Gaussian populations (Δ = 1): (label, σ per group, users per group, δ).
GAUSSIAN_CASES = (
    ("σ = 9.7 (ε_j = 0.5 of Chen–Cao–Ge), one group", (9.7076,), 100, 1e-5),
    ("σ = 9.7 / 485 (ε_j = 0.5 / 0.01), 50 + 50", (9.7076, 485.38), 50, 1e-5),
    ("σ = 0.5 / 1", (0.5, 1.0), 1000, 1e-8),
    ("σ = 0.3 / 0.6", (0.3, 0.6), 10 ** 4, 1e-8),
    ("σ = 0.25 / 0.5", (0.25, 0.5), 10 ** 5, 1e-10),
    ("10 groups, σ from 0.5 to 2 (geometric)", tuple(np.geomspace(0.5, 2.0, 10)), 1000, 1e-6),
    ("3 groups, σ = 0.125, 0.16, 0.2", (0.125, 0.16, 0.2), 10 ** 4, 1e-9),
)


def gaussian_table():
    """Gaussian populations at the default budget: per group certified upper and lower ε, or the refusal."""
    from shuffleamp.errors import ResourceLimitError
    print("| population | users per group | δ | CPU s | wall s | load avg | per group: ε upper / ε lower |")
    print("|---|---|---|---|---|---|---|")
    for label, sig, n_g, d in GAUSSIAN_CASES:
        pop = sa.population([(sa.Gaussian(sigma=float(x), sensitivity=1.0), n_g) for x in sig])
        t, c = time.perf_counter(), time.process_time()
        try:
            r = sa.epsilon(pop, delta=d)
            res = "; ".join(f"{g.upper:.4g} / {g.lower:.4g}" for g in r.groups[:4]) + (" …" if len(sig) > 4 else "")
        except ResourceLimitError as e:
            res = f"refused up front ({e.parameter}, {e.resource})" if time.process_time() - c < 0.5 else \
                f"refused after work ({e.parameter}, {e.resource})"
        print(f"| {label} | {n_g:g} | {d:g} | {time.process_time() - c:.2f} | {time.perf_counter() - t:.2f} | "
              f"{os.getloadavg()[0]:.1f} | {res} |")


#: (label, groups [(σ, users)], δ) of the Gaussian single-round comparison (Δ = 1).
GAUSSIAN_ROUND_CASES = (
    ("σ = 0.5 / 1, 5000 + 5000", ((0.5, 5000), (1.0, 5000)), 1e-6),
    ("σ = 0.5 / 1, 9000 + 1000", ((0.5, 9000), (1.0, 1000)), 1e-6),
    ("σ = 0.5 / 0.6, 5000 + 5000", ((0.5, 5000), (0.6, 5000)), 1e-6),
    ("σ = 1, one group of 1e4", ((1.0, 10000),), 1e-6),
)
#: (label, groups, rounds) of the totals table (δ = 1e-6).
GAUSSIAN_TOTAL_CASES = (
    ("σ = 1, one group of 1e4", ((1.0, 10000),), (1, 10, 100)),
    ("σ = 0.5 / 1, 50 + 50", ((0.5, 50), (1.0, 50)), (1, 10)),
    ("σ = 0.5 / 1, 5000 + 5000", ((0.5, 5000), (1.0, 5000)), (1, 10, 100)),
    ("σ = 0.5 / 1, 5e5 + 5e5", ((0.5, 500000), (1.0, 500000)), (1, 10, 100)),
    ("σ = 0.5 / 0.7 / 1, 3000 + 3000 + 4000", ((0.5, 3000), (0.7, 3000), (1.0, 4000)), (1, 10)),
)


def _gpop(groups):
    return sa.population([(sa.Gaussian(sigma=float(s), sensitivity=1.0), int(c)) for s, c in groups])


def gaussian_totals_table():
    """Gaussian and (ε0, δ0)-LDP populations at the default budget: single-round brackets (worst group, and the
    narrowest group's), then totals over rounds with their ratio, CPU and wall time, or the refusal."""
    from shuffleamp.errors import ResourceLimitError
    A = sa.ApproximateLDP
    print("| population | δ | worst-group ε upper | ε lower (largest) | group 0 bracket | CPU s | wall s | load |")
    print("|---|---|---|---|---|---|---|---|")
    rows = [(label, _gpop(groups), d) for label, groups, d in GAUSSIAN_ROUND_CASES]
    rows.append(("(ε0, δ0) = (1, 1e-9) / (2, 1e-9), 5000 + 5000",
                 sa.population([(A(eps0=1.0, delta0=1e-9), 5000), (A(eps0=2.0, delta0=1e-9), 5000)]), 1e-6))
    for label, pop, d in rows:
        t, c = time.perf_counter(), time.process_time()
        try:
            r = sa.epsilon(pop, delta=d)
            g0 = r.groups[0]
            res = (f"{r.upper:.5g} | {max(g.lower for g in r.groups):.5g} | [{g0.lower:.5g}, {g0.upper:.5g}]")
        except ResourceLimitError as e:
            res = f"refused ({e.parameter}) | | "
        print(f"| {label} | {d:g} | {res} | {time.process_time() - c:.2f} | {time.perf_counter() - t:.2f} | "
              f"{os.getloadavg()[0]:.1f} |")
    print("\n| population | rounds | total ε upper | total ε lower | ratio | CPU s | wall s | load |")
    print("|---|---|---|---|---|---|---|---|")
    tot = [(label, lambda groups=groups: _gpop(groups), Rs) for label, groups, Rs in GAUSSIAN_TOTAL_CASES]
    tot.append(("(ε0, δ0) = (1, 1e-9) / (2, 1e-9), 5000 + 5000",
                lambda: sa.population([(A(eps0=1.0, delta0=1e-9), 5000), (A(eps0=2.0, delta0=1e-9), 5000)]), (1, 10)))
    for label, make, Rs in tot:
        for R in Rs:
            t, c = time.perf_counter(), time.process_time()
            try:
                r = compose_rounds([(make(), None, R)], delta=1e-6)
                res = f"{r.upper:.5g} | {r.lower:.5g} | {r.upper / r.lower:.3f}"
            except ResourceLimitError as e:
                res = f"refused ({e.parameter}: {str(e)[:60]}…) | | "
            print(f"| {label} | {R} | {res} | {time.process_time() - c:.2f} | {time.perf_counter() - t:.2f} | "
                  f"{os.getloadavg()[0]:.1f} |")


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown CPU"


def main():
    sa.epsilon(krr_pop([0.5, 2.0], [500, 500]), delta=DELTA)          # warm the lazy imports
    if "--many-groups" in sys.argv[1:]:
        many_groups_table()
        return
    if "--gaussian" in sys.argv[1:]:
        gaussian_table()
        return
    if "--gaussian-totals" in sys.argv[1:]:
        gaussian_totals_table()
        return
    print("# Personalized populations (k-RR, k = 10), δ = 1e-9\n")
    print(f"Command: `PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_population.py > "
          f"bench/results_population.md` ({time.strftime('%Y-%m-%d')}; {_cpu()}, {os.cpu_count()} cores).\n")
    print(f"Machine load average during the run: {os.getloadavg()[0]:.1f} (2 cores shared by other jobs).  "
          "Times are best of 5, fresh population each time so no cached law is reused; wall-clock is "
          "inflated by the load, process CPU time (single thread, OMP_NUM_THREADS=1) much less so.\n")
    print("## Timing: ε(δ) for every group, certified upper and lower, n = 1e8\n")
    print("| groups | n total | CPU ms | wall ms | CPU ms per group | worst-group ε upper | worst-group ε lower |")
    print("|---|---|---|---|---|---|---|")
    for G in (2, 10):
        eps0 = np.linspace(0.5, 4.0, G)
        n = 10**8
        counts = [n // G] * (G - 1) + [n - (n // G) * (G - 1)]
        (t, c), r = timed(lambda pop: sa.epsilon(pop, delta=DELTA), reps=5, fresh=lambda: krr_pop(eps0, counts),
                          cpu=True)
        print(f"| {G} | {n:.0e} | {1e3 * c:.1f} | {1e3 * t:.1f} | {1e3 * c / G:.1f} | {r.upper:.6g} | "
              f"{r.lower:.6g} |")
    print("\n## Many groups: 5000 users per group, ε0 at the midpoints of U[0.05, 1], δ = 1e-5\n")
    print("One run each (wall time under the load shown; the default budget max_seconds = 10 s is wall time).  "
          "The upper bound of every target is the compiled Bromwich integral of the mixture over blanket counts "
          "(`kernels.bromwich_population`); the lower bound and, for binary RR, everyone at the largest ε0 "
          "with the exact count law take most of the rest.\n")
    many_groups_table()
    print("\n## Mixed population: 60% at ε0 = 0.5, 30% at 2, 10% at 4\n")
    print("| n | group ε0 | certified ε upper | certified ε lower | everyone-at-max ε (sound) | saving | "
          "μ-GDP estimate (sound=False) |")
    print("|---|---|---|---|---|---|---|")
    for n in (10**6, 10**8):
        c = [int(0.6 * n), int(0.3 * n)]
        c.append(n - sum(c))
        pop = krr_pop((0.5, 2.0, 4.0), c)
        r = sa.epsilon(pop, delta=DELTA)
        mx = P.everyone_at_max(pop, DELTA).upper
        gdp = sa.epsilon(pop, delta=DELTA, method="gdp").estimate
        for gr in r.groups:
            print(f"| {n:.0e} | {gr.eps0} | {gr.upper:.6g} | {gr.lower:.6g} | {mx:.6g} | {mx / gr.upper:.1f}x | "
                  f"{gdp:.6g} |")
    print("\n## Gaussian groups (Δ = 1), default budget (10 s wall clock; the up-front estimate is CPU work, the running deadline covers a loaded machine)\n")
    print("Each target's upper is the minimum over truncation rungs of the heterogeneous blanket bound and of its "
          "homogeneous reduction, and the local Gaussian profile; the lower the threshold counts of the dataset "
          "(0 | Δ; others Δ) (and the quantised pairs of the single round when every user has one σ).  The "
          "brackets of different σ are wide on both sides (module docstring of `shuffleamp.personalized`, "
          "\"Gaussian groups\").\n")
    gaussian_table()
    print("\n## Accountant: 10 rounds of the 2-group population (60% at ε0 = 0.5, 40% at 2), total ε at δ = 1e-9\n")
    print("| n | total ε upper | total ε lower | seconds |")
    print("|---|---|---|---|")
    for n in (10**6, 10**8):
        c = [int(0.6 * n), n - int(0.6 * n)]
        t, acc = timed(lambda pop: compose_rounds([(pop, None, 10)], delta=DELTA), reps=1,
                       fresh=lambda: krr_pop((0.5, 2.0), c))
        print(f"| {n:.0e} | {acc.upper:.6g} | {acc.lower:.6g} | {t:.2f} |")
    print("\nCertified upper: the personalized blanket bound (Poisson-binomial blanket count, Bromwich "
          "integral with certified error).  Certified lower: exact divergence of the concrete pair "
          "(target 0 vs 1, every other user at 2) post-processed to #0 - #1, law by one FFT with charged "
          "rounding.  Everyone-at-max: the homogeneous optimal bound at the largest ε0 with the total n "
          "(sound).  μ-GDP (Chen-Cao-Ge, AAAI 2024): asymptotic estimate, sound=False, one value for the "
          "whole population (it ignores the target's own ε0).  The accountant composes the pointwise "
          "maximum of the groups' profiles (a bound for every user).")


if __name__ == "__main__":
    main()
