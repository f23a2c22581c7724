"""Throughput of concurrent ``shuffleamp.epsilon`` / ``delta`` calls on 1, 2 and 4 threads.

A service answers many budget queries at once, from a thread pool.  The compiled kernels release the GIL, so
on the 2-core machine two threads can approach twice the throughput of one; the Python parts (validation,
families, orchestration) hold it.  A fixed, seeded batch of calls (every finite mechanism family, Laplace,
compositions; n from 1e3 to 1e9; δ from 1e-12 to 1e-4) is run once to warm the family cache, then timed on
each thread count (best of ``--reps``); the answers of every thread count are checked equal to the serial
ones.  ``OMP_NUM_THREADS=1`` and one FFT worker, so the only parallelism is the pool's.

Usage::

    python bench/run.py threads         # or: PYTHONPATH=src python bench/bench_threads.py --out bench/results_threads.md
"""

from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402

import shuffleamp as sa  # noqa: E402
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse, Laplace, MatrixMechanism  # noqa: E402


def heavy_batch(seed: int = 5, size: int = 60) -> list:
    """Calls at moderate n with many-atom laws (more of their time in the compiled evaluators)."""
    rng = random.Random(seed)
    mechs = [KRR(4.0, 100), HadamardResponse(2.0, 64), OUE(0.5, 8), BLH(2.0), RAPPOR(1.0, 4)]
    return [("epsilon", rng.choice(mechs), rng.randint(200, 3000), 10 ** rng.uniform(-10, -6)) for _ in range(size)]


def batch(seed: int = 3, size: int = 400) -> list:
    rng = random.Random(seed)
    P = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5]])
    mechs = [KRR(1.0, 2), KRR(1.0, 10), KRR(3.0, 50), BLH(1.0), RAPPOR(2.0, 8), OUE(1.0, 16),
             HadamardResponse(2.0, 16), MatrixMechanism(P), Laplace(1.0),
             sa.joint(KRR(0.5, 3), KRR(0.5, 4)), sa.subsample(KRR(2.0, 10), 0.3)]
    calls = []
    for _ in range(size):
        m = rng.choice(mechs)
        n = int(10 ** rng.uniform(3, 9))
        if rng.random() < 0.5:
            calls.append(("epsilon", m, n, 10 ** rng.uniform(-12, -4)))
        else:
            calls.append(("delta", m, n, rng.uniform(0.01, 0.5) * m.eps0))
    return calls


def one(call):
    kind, m, n, x = call
    r = sa.epsilon(m, n, x) if kind == "epsilon" else sa.delta(m, n, x)
    return r.upper, r.lower


def timed(calls, threads: int):
    t0 = time.perf_counter()
    if threads == 1:
        out = [one(c) for c in calls]
    else:
        with ThreadPoolExecutor(threads) as pool:
            out = list(pool.map(one, calls))
    return time.perf_counter() - t0, out


#: Compiled entry points whose work runs without the GIL (``with nogil`` / ``prange`` inside).
NOGIL_KERNELS = {"kernels": ("epsilon_search", "profile_bromwich", "small_n_positive_part", "mixture_positive_part",
                             "estimate_root", "log_saddle_estimate", "log_estimates", "chernoff_log_theta",
                             "cf_at", "cf_power_inplace", "tilted_cf_power", "positive_part_sums", "bromwich_nodes",
                             "panel_nodes", "cf_modulus_bound", "saddle_point", "tilted_moments", "tilted_weights",
                             "discretize_atoms", "discretize_cells"),
                 "count": ("binom_window", "chernoff_window")}


def gil_free_share(calls) -> tuple[float, float, int]:
    """Share of the serial wall time spent inside the GIL-free kernels (every call), the same share among the
    calls of 1-4 ms, and their number: the entry points of :data:`NOGIL_KERNELS` are wrapped by timers for the
    measurement (the package reads them as module attributes at call time) and restored after it."""
    from shuffleamp._ext import count, kernels
    mods = {"kernels": kernels, "count": count}
    inside = [0.0]
    saved = []

    def wrap(f):
        def w(*args, **kw):
            t = time.perf_counter()
            try:
                return f(*args, **kw)
            finally:
                inside[0] += time.perf_counter() - t
        return w
    for mod, names in NOGIL_KERNELS.items():
        for name in names:
            f = getattr(mods[mod], name)
            saved.append((mods[mod], name, f))
            setattr(mods[mod], name, wrap(f))
    try:
        rec = []
        for c in calls:
            inside[0] = 0.0
            t = time.perf_counter()
            one(c)
            rec.append((time.perf_counter() - t, inside[0]))
    finally:
        for mod, name, f in saved:
            setattr(mod, name, f)
    typ = [(t, i) for t, i in rec if 1e-3 <= t <= 4e-3]
    share = sum(i for _, i in rec) / sum(t for t, _ in rec)
    share_typ = sum(i for _, i in typ) / max(sum(t for t, _ in typ), 1e-300)
    return share, share_typ, len(typ)


def measure_control(counts, reps: int, size: int = 400, products: int = 40) -> list:
    """The machine's parallelism for GIL-free work at the time of the run: ``products`` matrix products
    (numpy, single-threaded BLAS: OMP_NUM_THREADS=1) shared by 1, 2, 4 threads, best of ``reps`` interleaved
    rounds: (threads, seconds).  A speed-up near 1 here means the other jobs leave one core free."""
    m = np.random.default_rng(0).random((size, size))

    def work(k):
        for _ in range(k):
            m @ m
    best = {t: float("inf") for t in counts}
    for _ in range(reps):
        for t in counts:
            t0 = time.perf_counter()
            with ThreadPoolExecutor(t) as pool:
                list(pool.map(work, [products // t] * t))
            best[t] = min(best[t], time.perf_counter() - t0)
    return [(t, best[t]) for t in counts]


def amdahl(share: float, threads: int = 2) -> float:
    """Largest speed-up on ``threads`` cores when only ``share`` of the time runs without the GIL."""
    return 1.0 / ((1.0 - share) + share / threads)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", default="1,2,4")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    load = os.getloadavg()[0]

    def measure(calls):
        serial = [one(c) for c in calls]              # warm-up: family caches, FFT plans, imports
        counts = [int(x) for x in a.threads.split(",")]
        best = {t: float("inf") for t in counts}
        same = {t: True for t in counts}
        for _ in range(a.reps):                       # thread counts interleaved: each sees the same load
            for t in counts:
                dt, out = timed(calls, t)
                best[t] = min(best[t], dt)
                same[t] &= out == serial
        return [(t, best[t], same[t]) for t in counts]

    calls = batch(size=a.calls)
    control = measure_control([int(x) for x in a.threads.split(",")], a.reps)
    rows = measure(calls)
    heavy = heavy_batch()
    rows_heavy = measure(heavy)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = ["# Threads: throughput of concurrent calls", "",
             f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform()}; "
             f"commit {commit}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before the run "
             f"{load:.1f} (other jobs share the cores: speed-ups are only meaningful near 0).",
             f"Command: `python bench/run.py threads` (`bench_threads.py --calls {a.calls} --reps {a.reps}`).", "",
             f"{len(calls)} mixed calls (k-RR k = 2, 10, 50; BLH; RAPPOR; OUE; HR; a 3x3 matrix; Laplace; joint; "
             "subsampled; n in 1e3..1e9; epsilon(delta) and delta(epsilon)), family cache warm, best of "
             f"{a.reps} rounds (thread counts interleaved within a round); OMP_NUM_THREADS=1.", "",
             "| threads | seconds | calls/s | speed-up | answers equal to serial |", "|---|---|---|---|---|"]
    for t, dt, same in rows:
        lines.append(f"| {t} | {dt:.3f} | {len(calls) / dt:.0f} | {rows[0][1] / dt:.2f}x | {'yes' if same else 'NO'} |")
    lines += ["", f"Moderate-n batch: {len(heavy)} epsilon(delta) calls at n = 200..3000 (KRR(4, 100), HR(2, 64), "
              "OUE(0.5, 8), BLH(2), RAPPOR(1, 4); delta 1e-10..1e-6), more of the time inside the compiled evaluators.",
              "", "| threads | seconds | calls/s | speed-up | answers equal to serial |", "|---|---|---|---|---|"]
    for t, dt, same in rows_heavy:
        lines.append(f"| {t} | {dt:.3f} | {len(heavy) / dt:.1f} | {rows_heavy[0][1] / dt:.2f}x | "
                     f"{'yes' if same else 'NO'} |")
    lines += ["", "Control, measured in the same run: GIL-free work (numpy matrix products, single-threaded BLAS) "
              "split over the same thread counts. Its speed-up is the parallelism the machine offered during the "
              "run; the calls' speed-up cannot exceed it.", "", "| threads | seconds | speed-up |", "|---|---|---|"]
    for t, dt in control:
        lines.append(f"| {t} | {dt:.3f} | {control[0][1] / dt:.2f}x |")
    lines += ["", "Where the GIL is held (serial run, every call timed; the kernels listed in `NOGIL_KERNELS` release "
              "it, everything else -- validation, family construction, the ε search's Python orchestration, the "
              "Python evaluators of Laplace and of binary RR's count projections -- holds it). The speed-up on 2 "
              "cores cannot exceed Amdahl's limit 1 / ((1 - s) + s / 2) for a GIL-free share s.", "",
              "| batch | GIL-free share (all calls) | limit on 2 cores | calls of 1-4 ms | their GIL-free share | "
              "their limit |", "|---|---|---|---|---|---|"]
    for label, cs in (("mixed", calls), ("moderate n", heavy)):
        sh, sh_t, k = gil_free_share(cs)
        lines.append(f"| {label} | {100 * sh:.0f} % | {amdahl(sh):.2f}x | {k} | {100 * sh_t:.0f} % | "
                     f"{amdahl(sh_t):.2f}x |")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0 if all(r[2] for r in rows + rows_heavy) else 1


if __name__ == "__main__":
    sys.exit(main())
