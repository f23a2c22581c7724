"""Resource limits: the constants of the up-front cost model, measured, and the time to answer or refuse of
the calls that used to run out of memory, overflow or run for minutes.

Part 1 measures what the cost model (shuffleamp._numerics.PLD_POINT_SECONDS / PLD_POINT_BYTES,
personalized.POP_TARGET_SECONDS / POP_GROUP_SECONDS, accounting.ROUND_TYPE_SECONDS,
gradual.FRESH_ROUND_SECONDS) assumes; part 2 runs each reported call once.

Run: PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_limits.py > bench/results_limits.md
"""
import datetime
import os
import platform
import resource
import time

import numpy as np
from dp_accounting.pld import common, pld_pmf

import shuffleamp as sa
from shuffleamp import _numerics, accounting, personalized
from shuffleamp import gradual
from shuffleamp.errors import ResourceLimitError
from shuffleamp.gradual import GradualRelease
from shuffleamp.mechanisms import KRR


def clock(fn):
    t, c = time.perf_counter(), time.process_time()
    try:
        out = fn()
    except ResourceLimitError as e:
        out = f"ResourceLimitError(parameter={e.parameter!r})"
    return time.perf_counter() - t, time.process_time() - c, out


def main():
    print("# Resource limits: cost model and refusals\n")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other jobs (load average "
          f"{os.getloadavg()[0]:.1f}); Python {platform.python_version()}; shuffleamp {sa.__version__}; "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.\n")
    print("Command: `PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_limits.py > bench/results_limits.md`\n")
    print("Default budget: max_seconds = 10, max_memory_gb = 2.  CPU = process time (one core); the wall clock "
          "of a loaded machine is longer.\n")

    print("## 1. Cost model\n")
    print("| quantity | measured | model constant |")
    print("|---|---|---|")
    rng = np.random.default_rng(0)
    x = rng.random(2001)
    x /= x.sum()
    R = 20_000
    a, b = common.compute_self_convolve_bounds(x, R, 1e-15)
    pts = b - a + 1
    wall, cpu, (lo, probs) = clock(lambda: common.self_convolve(x, R, 1e-15))
    pmf = pld_pmf.DensePLDPmf(1e-4, lo, np.asarray(probs), 0.0, True)
    w2, c2, _ = clock(lambda: pmf.get_epsilon_for_delta(1e-8))
    print(f"| dp_accounting self-composition, CPU s per point ({pts:.3g} points) | {cpu / pts:.2e} | |")
    print(f"| get_epsilon_for_delta, CPU s per point | {c2 / pts:.2e} | |")
    print(f"| sum, CPU s per point | {(cpu + c2) / pts:.2e} | PLD_POINT_SECONDS = {_numerics.PLD_POINT_SECONDS:g} |")
    print(f"| peak RSS of this process so far (MB) | {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} "
          f"| PLD_POINT_BYTES = {_numerics.PLD_POINT_BYTES:g} (72 B/point measured at 8e7 points) |")
    for G in (10, 25, 50):
        pop = sa.population([(KRR(float(e), 10), 10_000) for e in np.linspace(0.1, 2.0, G)])
        wall, cpu, _ = clock(lambda: sa.epsilon(pop, delta=1e-8))
        model = G * (personalized.POP_TARGET_SECONDS + personalized.POP_GROUP_SECONDS * G)
        print(f"| population of {G} 10-RR groups (n_g = 1e4), ε(δ): wall / CPU s | {wall:.2f} / {cpu:.2f} | "
              f"model {model:.2f} s |")
    types = [(KRR(float(e), 10), 10**5, 10) for e in np.linspace(0.5, 2.0, 10)]
    wall, cpu, _ = clock(lambda: sa.compose_rounds(types, delta=1e-8))
    print(f"| compose_rounds, 10 round types: wall / CPU s per type | {wall / 10:.2f} / {cpu / 10:.2f} | "
          f"ROUND_TYPE_SECONDS = {accounting.ROUND_TYPE_SECONDS:g} |")
    g = GradualRelease(k=4, schedule=np.linspace(0.1, 2.0, 50))
    wall, cpu, _ = clock(lambda: g.fresh_rounds_epsilon(10**5, 1e-8))
    print(f"| fresh_rounds_epsilon, CPU s per distinct value | {cpu / 50:.3f} | "
          f"FRESH_ROUND_SECONDS = {gradual.FRESH_ROUND_SECONDS:g} |")

    print("\n## 2. The reported calls\n")
    print("| call | before | now: wall / CPU s | result |")
    print("|---|---|---|---|")
    calls = [
        ("compose_rounds([(KRR(1, 10), 1e6, 1e9)], delta=1e-8)", "numpy MemoryError (82 GiB)",
         lambda: sa.compose_rounds([(KRR(1.0, 10), 10**6, 10**9)], delta=1e-8)),
        ("epsilon(population 2 x 1e18 users, k = 10), delta=1e-8", "OverflowError",
         lambda: sa.epsilon(sa.population([(KRR(0.5, 10), 10**18), (KRR(2.0, 10), 10**18)]), delta=1e-8)),
        ("max_rounds(KRR(1, 10), 1e6, epsilon=1e6, delta=1e-8)", "23.5 s, 1.3 GB",
         lambda: sa.max_rounds(KRR(1.0, 10), 10**6, epsilon=1e6, delta=1e-8)),
        ("max_rounds(KRR(1, 10), 1e6, epsilon=0.3, delta=1e-8)", "",
         lambda: sa.max_rounds(KRR(1.0, 10), 10**6, epsilon=0.3, delta=1e-8)),
        ("epsilon(population of 100 10-RR groups)", "> 30 s",
         lambda: sa.epsilon(sa.population([(KRR(float(e), 10), 10**4) for e in np.linspace(0.1, 2, 100)]),
                            delta=1e-8)),
        ("epsilon(population of 1000 10-RR groups)", "> 30 s",
         lambda: sa.epsilon(sa.population([(KRR(float(e), 10), 10**4) for e in np.linspace(0.1, 2, 1000)]),
                            delta=1e-8)),
        ("compose_rounds(50 round types)", "> 30 s",
         lambda: sa.compose_rounds([(KRR(float(e), 10), 10**5, 10) for e in np.linspace(0.5, 2, 50)], delta=1e-8)),
        ("compose_rounds(..., value_discretization_interval=1e-9)", "705 MB, > 30 s",
         lambda: sa.compose_rounds([(KRR(1.0, 10), 10**5, 10)], delta=1e-8, value_discretization_interval=1e-9)),
        ("GradualRelease(k=4, 1e5 distinct values).fresh_rounds_epsilon", "> 30 s",
         lambda: GradualRelease(k=4, schedule=np.linspace(0.1, 2, 10**5)).fresh_rounds_epsilon(10**5, 1e-8)),
        ("binary_rr_rounds(1.0, 1e4, 1e6, delta=1e-6)", "> 30 s, 2.5 GB",
         lambda: accounting.binary_rr_rounds(1.0, 10**4, 10**6, delta=1e-6)),
    ]
    for name, before, fn in calls:
        wall, cpu, out = clock(fn)
        res = out if isinstance(out, str) else (repr(out) if isinstance(out, int) else
                                                f"upper {getattr(out, 'upper', out):.6g}")
        print(f"| `{name}` | {before} | {wall:.2f} / {cpu:.2f} | {res} |")


if __name__ == "__main__":
    main()
