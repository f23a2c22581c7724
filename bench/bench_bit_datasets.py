"""Which side of the BLH / RAPPOR / OUE bracket is loose: every dataset at small n, and the large-n constants.

Part 1: for each (mechanism, ε0) of the default plan (src/shuffleamp/data/default_plan.toml) and of the
realistic year (RAPPOR ε0 = 4, d = 1024), brute force over every neighbouring dataset pair up to symmetry
(tests/bit_oracle.py: the reports reduced to the bits at the dataset's values, histogram laws in extended
precision, no decomposition) at small n, δ at fixed ε: the worst dataset, the truth, and shuffleamp's
certified lower and upper.  The number of distinct "third" values (inputs other than the target's two) is
capped where the histogram space would be too large: every dataset at n = 4 (up to 3 third values), all
but the one with four distinct third values at n = 5, up to 2 third values at n = 7, up to 1 at n = 12.

Part 2: the large-n constants.  The log-likelihood ratio of a concrete pair at large n is asymptotically
normal with variance I/n (tests/bit_oracle.py: information_constant); I is convex in the others' weights, so
the worst dataset at large n puts all others at one value.  The certified lower and upper at the plan's n
and δ next to the Gaussian ε of the worst vertex's constant and of the decomposition's blanket-only
constant I_blanket.

Run: PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_bit_datasets.py > bench/results_bit_datasets.md
"""
import datetime
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import shuffleamp as sa
from shuffleamp.mechanisms import BLH, OUE, RAPPOR

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import bit_oracle as B  # noqa: E402

CASES = [  # (label, oracle name, library mechanism, plan n, plan δ)
    ("BLH ε0=3 (app crash class)", "blh", BLH(eps0=3.0), 1_000_000, 1e-8),
    ("BLH ε0=1.5 d=65536 (url domain)", "blh", BLH(eps0=1.5, d=65536), 10_000_000, 1e-9),
    ("RAPPOR ε0=2 d=128 (browser homepage)", "rappor", RAPPOR(eps0=2.0, d=128), 10_000_000, 1e-9),
    ("RAPPOR ε0=1 (autoplay domain)", "rappor", RAPPOR(eps0=1.0), 100_000_000, 1e-10),
    ("RAPPOR ε0=4 d=1024 (realistic year)", "rappor", RAPPOR(eps0=4.0, d=1024), 2_000_000, 1e-9),
    ("OUE ε0=8 d=1024 (keyboard)", "oue", OUE(eps0=8.0, d=1024), 100_000_000, 1e-10),
]
SMALL = [(4, 3), (5, 3), (7, 2), (12, 1)]      # (n, max third values)
EPS = (0.02, 0.1, 0.5)


def small_n():
    print("## Every dataset at small n (δ at fixed ε)\n")
    print("Dataset labels: the other n - 1 users' inputs (x0, x1 = the target's two values; 'third a+b' = a "
          "users at one third value and b at another).  lower and upper are `shuffleamp.delta` of the "
          "mechanism; the library's lower-bound datasets are 'n-1 at x1' and 'third n-1' (both orderings); "
          "'worst other dataset' is the worst of the rest.\n")
    print("| mechanism | n | third values ≤ | datasets | ε | worst dataset | truth δ | worst other dataset (δ) | "
          "lower | upper | lower/truth | truth/upper | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    lo_r, up_r, others = [], [], []
    for label, name, mech, _, _ in CASES:
        for n, mt in SMALL:
            t = time.perf_counter()
            res = B.worst_datasets(name, mech.eps0, n, EPS, max_third=mt)
            s = time.perf_counter() - t
            for e in EPS:
                rows = res[e]
                (truth, best) = rows[0]
                library = {(0, n - 1, ()), (0, 0, (n - 1,))}
                second, arg2 = next(r for r in rows if r[1] not in library)
                others.append(second / truth)
                r = sa.delta(mech, n, e)
                lo_r.append(r.lower / truth)
                up_r.append(truth / r.upper)
                print(f"| {label} | {n} | {mt} | {len(rows)} | {e:g} | {B.describe(*best)} | {truth:.6g} | "
                      f"{B.describe(*arg2)} ({second:.4g}) | {r.lower:.6g} | {r.upper:.6g} | "
                      f"{r.lower / truth:.4f} | {truth / r.upper:.4f} | {s:.1f} |")
            sys.stdout.flush()
    print(f"\nOver these {len(lo_r)} cases lower/truth is {min(lo_r):.4f} to {max(lo_r):.4f}; truth/upper is "
          f"{min(up_r):.4f} to {max(up_r):.4f} (median {float(np.median(up_r)):.4f}); the worst dataset other than "
          f"the library's two reaches {min(others):.3f} to {max(others):.3f} of the truth.\n")


def large_n():
    print("## Large n: information constants and the bracket they imply\n")
    print("I(x2) = Σ_y (R(x0)(y) − R(x1)(y))² / R(x2)(y) with all others at x2 (a third value, or x1); "
          "'best mixture' is the largest I over 2000 random weightings of the others over {x0, x1, 2 third "
          "values} (seeded), which by convexity never exceeds the best single value; I_blanket = Σ_y (R(x0) − "
          "R(x1))² / min_x R(x)(y) (d → ∞), the information of a pair whose other users are blanket-only.  "
          "G(I) = ε at the plan's δ of the Gaussian profile with μ = sqrt(I / n) (the large-n limit; an "
          "approximation, not a bound).  The certified lower sits on G(worst I) and the certified upper on "
          "G(I_blanket): the bracket is the upper's blanket-only information.\n")
    print("| mechanism | I(third) | I(x1) | best mixture | I_blanket | n | δ | lower ε | G(worst I) | "
          "lower/G | upper ε | G(I_blanket) | upper/G | upper/lower |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(1)
    for label, name, mech, n, delta in CASES:
        third = B.information_constant(name, mech.eps0, [0, 0, 1])
        same = B.information_constant(name, mech.eps0, [0, 1])
        mix = max(B.information_constant(name, mech.eps0, w) for w in rng.dirichlet(np.ones(4) * 0.7, 2000))
        blank = B.blanket_information_constant(name, mech.eps0)
        g_lo, g_up = B.gaussian_epsilon(max(third, same), n, delta), B.gaussian_epsilon(blank, n, delta)
        r = sa.epsilon(mech, n, delta)
        print(f"| {label} | {third:.6g} | {same:.6g} | {mix:.6g} | {blank:.6g} | {n:.0e} | {delta:g} | "
              f"{r.lower:.6g} | {g_lo:.6g} | {r.lower / g_lo:.4f} | {r.upper:.6g} | {g_up:.6g} | "
              f"{r.upper / g_up:.4f} | {r.upper / r.lower:.4f} |")
        sys.stdout.flush()


def main():
    print("# BLH, RAPPOR and OUE: which side of the per-round bracket is loose\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other jobs (load average "
          f"{os.getloadavg()[0]:.1f} at the start); Python {platform.python_version()}; shuffleamp "
          f"{sa.__version__}; {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.\n")
    print("Command: `PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_bit_datasets.py > "
          "bench/results_bit_datasets.md` (or `python bench/run.py bit-datasets`)\n")
    t = time.perf_counter()
    small_n()
    large_n()
    print(f"\nTotal {time.perf_counter() - t:.0f} s (load average {os.getloadavg()[0]:.1f} at the end).")


if __name__ == "__main__":
    main()
