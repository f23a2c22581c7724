"""Per-round brackets (certified upper, certified lower, ratio) by mechanism, ε0 and n, and which side is
loose where every dataset can be enumerated.

Part 1: the default plan's collections (src/shuffleamp/data/default_plan.toml) at their own n and δ, and
each mechanism over a small grid of ε0 and n.  Part 2: brute force over every neighbouring dataset pair
(tests/oracle.py: extended-precision histogram laws, no decomposition) for d = 3 at n <= 8, δ at fixed ε:
lower / truth and truth / upper.

Run: PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_brackets.py > bench/results_brackets.md
"""
import datetime
import os
import platform
import sys
import time
from pathlib import Path

import shuffleamp as sa
from shuffleamp import exact_count
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import oracle as O  # noqa: E402

PLAN = [  # (name, mechanism, n, delta): the default plan's per-round points
    ("settings toggle", KRR(0.5, 2), 10_000, 1e-6),
    ("emoji usage", KRR(4.0, 10), 1_000_000, 1e-8),
    ("health data type", KRR(2.0, 32), 100_000, 1e-7),
    ("browser homepage", RAPPOR(eps0=2.0, d=128), 10_000_000, 1e-9),
    ("autoplay domain", RAPPOR(eps0=1.0), 100_000_000, 1e-10),
    ("keyboard word frequency", OUE(eps0=8.0, d=1024), 100_000_000, 1e-10),
    ("app crash class", BLH(eps0=3.0), 1_000_000, 1e-8),
    ("url domain", BLH(eps0=1.5, d=65536), 10_000_000, 1e-9),
]

GRID = [("BLH (d = None)", lambda e: BLH(eps0=e)), ("RAPPOR (d = 128)", lambda e: RAPPOR(eps0=e, d=128)),
        ("OUE (d = 1024)", lambda e: OUE(eps0=e, d=1024))]


def row(m, n, delta):
    t = time.perf_counter()
    r = sa.epsilon(m, n, delta)
    return r.upper, r.lower, time.perf_counter() - t


def main():
    print("# Per-round brackets: certified upper and lower ε by mechanism, ε0 and n\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other jobs (load average "
          f"{os.getloadavg()[0]:.1f}); Python {platform.python_version()}; shuffleamp {sa.__version__}; "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.\n")
    print("Command: `PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_brackets.py > bench/results_brackets.md`\n")
    print("## The default plan's collections (one round each)\n")
    print("| collection | mechanism | ε0 | n | δ | upper ε | lower ε | upper/lower | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, m, n, delta in PLAN:
        up, lo, s = row(m, n, delta)
        print(f"| {name} | {m.name} d={getattr(m, 'd', getattr(m, 'k', ''))} | {m.eps0:g} | {n:.0e} | {delta:g} | "
              f"{up:.6g} | {lo:.6g} | {up / lo:.4f} | {s:.2f} |")
    print("\n## BLH, RAPPOR and OUE over ε0 and n (δ = 1e-8)\n")
    print("| mechanism | ε0 | n | upper ε | lower ε | upper/lower |")
    print("|---|---|---|---|---|---|")
    for name, make in GRID:
        for e in (0.5, 1.5, 3.0, 6.0):
            for n in (10**5, 10**6, 10**7, 10**8):
                up, lo, _ = row(make(e), n, 1e-8)
                print(f"| {name} | {e:g} | {n:.0e} | {up:.6g} | {lo:.6g} | {up / lo:.4f} |")
    print("\n## A binary-RR population\n")
    print("20 groups of 5000 users, ε0 at the midpoints of U[0.05, 1], δ = 1e-5: the worst group's bracket.  "
          "Reference: everyone at the largest ε0 with the exact count law, `exact_count.epsilon_binary_rr`.\n")
    pop = sa.population([(KRR(float(0.05 + (i + 0.5) * 0.95 / 20), 2), 5000) for i in range(20)])
    t = time.perf_counter()
    r = sa.epsilon(pop, delta=1e-5)
    s = time.perf_counter() - t
    w = r.groups[r.worst]
    ref = exact_count.epsilon_binary_rr(pop.eps0_max, pop.n, 1e-5)
    print("| upper ε | lower ε | upper/lower | personalized upper alone | everyone at max (exact count) | s |")
    print("|---|---|---|---|---|---|")
    print(f"| {r.upper:.6g} | {r.lower:.6g} | {r.upper / r.lower:.4f} | "
          f"{w.settings.get('personalized_upper', w.upper):.6g} | [{ref.lower:.6g}, {ref.upper:.6g}] | {s:.1f} |")
    print(f"\nUpper from: {w.settings.get('upper_source')}; lower from: {w.settings.get('lower')}.")
    print("\n## Which side is loose: every dataset enumerated (d = 3, δ at ε fixed)\n")
    print("truth = max over every neighbouring dataset pair of the shuffled divergence (tests/oracle.py); "
          "lower and upper are `shuffleamp.delta`.\n")
    print("| mechanism | ε0 | n | ε | lower | truth | upper | lower/truth | truth/upper |")
    print("|---|---|---|---|---|---|---|---|---|")
    lo_ratio, up_ratio = [], []
    for m in (BLH(eps0=3.0, d=3), BLH(eps0=1.0, d=3), RAPPOR(eps0=2.0, d=3), OUE(eps0=2.0, d=3)):
        for n in (4, 6, 8):
            for eps in (0.1, 0.5):
                truth = O.worst_dataset_divergence(m.matrix(), n, eps, max_pairs=100_000)
                r = sa.delta(m, n, eps)
                lo_ratio.append(r.lower / truth)
                up_ratio.append(truth / r.upper)
                print(f"| {m.name} | {m.eps0:g} | {n} | {eps:g} | {r.lower:.6g} | {truth:.6g} | {r.upper:.6g} | "
                      f"{r.lower / truth:.4f} | {truth / r.upper:.4f} |")
    print(f"\nOver these {len(lo_ratio)} cases lower/truth is {min(lo_ratio):.4f} to {max(lo_ratio):.4f} and truth/upper "
          f"{min(up_ratio):.4f} to {max(up_ratio):.4f} (median {sorted(up_ratio)[len(up_ratio) // 2]:.4f}): where every "
          "dataset can be enumerated, the loose side is the upper bound (the decomposition), and it loosens as n "
          "grows.  At the default plan's n no enumeration is possible; the lower bounds there are the exact "
          "divergences of the same datasets, and they sit on the Gaussian limit of the worst dataset's "
          "information while the upper sits on the blanket-only one (results_bit_datasets.md): the BLH and "
          "RAPPOR brackets above are the decomposition upper's.")


if __name__ == "__main__":
    main()
