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
        rows = []
        for t in (int(x) for x in a.threads.split(",")):
            best, same = float("inf"), True
            for _ in range(a.reps):
                dt, out = timed(calls, t)
                best = min(best, dt)
                same &= out == serial
            rows.append((t, best, same))
        return rows

    calls = batch(size=a.calls)
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
             f"{a.reps}; OMP_NUM_THREADS=1.", "",
             "| threads | seconds | calls/s | speed-up | answers equal to serial |", "|---|---|---|---|---|"]
    for t, dt, same in rows:
        lines.append(f"| {t} | {dt:.3f} | {len(calls) / dt:.0f} | {rows[0][1] / dt:.2f}x | {'yes' if same else 'NO'} |")
    lines += ["", f"Moderate-n batch: {len(heavy)} epsilon(delta) calls at n = 200..3000 (KRR(4, 100), HR(2, 64), "
              "OUE(0.5, 8), BLH(2), RAPPOR(1, 4); delta 1e-10..1e-6), more of the time inside the compiled evaluators.",
              "", "| threads | seconds | calls/s | speed-up | answers equal to serial |", "|---|---|---|---|---|"]
    for t, dt, same in rows_heavy:
        lines.append(f"| {t} | {dt:.3f} | {len(heavy) / dt:.1f} | {rows_heavy[0][1] / dt:.2f}x | "
                     f"{'yes' if same else 'NO'} |")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0 if all(r[2] for r in rows + rows_heavy) else 1


if __name__ == "__main__":
    sys.exit(main())
