"""The accountant's Gaussian round type: its up-front cost estimate against the measured time, and its bracket.

For each cell (sigma, n, rounds, delta) it prints the estimate of ``accounting._gaussian_round_seconds`` (CPU
seconds, the model the up-front refusal uses), the measured CPU and wall time of
``compose_rounds([(Gaussian(sigma, 1), n, rounds)], delta=delta)`` (budget ``--max-seconds``, default inf, so that
every cell is measured), their ratio, the bracket and where the time went (upper profile, lower bound, the rest);
a few cells at an ε target (the total δ) too.

Run: PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_gaussian_rounds.py --out bench/results_gaussian_rounds.md
(``--full``: every sigma in 0.25 .. 4, n in 2 .. 1e7, rounds 1, 10, 365 and delta 1e-6, 1e-9.)
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import time

import shuffleamp as sa
from shuffleamp import accounting as A
from shuffleamp.errors import ResourceLimitError

SIGMAS = (0.25, 0.5, 1.0, 2.0, 4.0)
NS = (2, 10, 30, 100, 300, 1000, 10 ** 5, 10 ** 7)


def cells(full: bool) -> list:
    if full:
        return [(s, n, R, d) for d in (1e-6, 1e-9) for R in (1, 10, 365) for s in SIGMAS for n in NS]
    out = [(s, n, 10, 1e-6) for s in SIGMAS for n in NS]
    out += [(s, n, R, d) for R in (1, 365) for d in (1e-6, 1e-9) for s in (0.5, 1.0, 2.0) for n in (10, 100, 10 ** 5)]
    # ε targets (the total δ at ε): the grid ends at the default tail_delta
    out += [(s, n, 10, ("epsilon", e)) for s, n, e in ((0.5, 10 ** 7, 0.5), (0.5, 10 ** 5, 0.5), (1.0, 100, 3.0),
                                                      (1.0, 10, 8.0))]
    return out


class Split:
    """CPU seconds spent in the upper PLD and in the lower bound (wrappers around the accountant's functions)."""

    def __init__(self):
        self.t = {}
        for name in ("_upper_pld", "_total_lower"):
            fn = getattr(A, name)
            setattr(A, name, self._wrap(name, fn))

    def _wrap(self, name, fn):
        def w(*a, **k):
            c = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                self.t[name] = self.t.get(name, 0.0) + time.process_time() - c
        return w


def estimate(sigma: float, n: int, R: int, delta, points: int = A.DEFAULT_POINTS) -> float:
    at = sa.Gaussian(sigma=sigma, sensitivity=1.0).at_n(n)
    tail = (A.DEFAULT_TAIL_DELTA if isinstance(delta, tuple) else
            max(A.DEFAULT_TAIL_DELTA, A.GAUSSIAN_TAIL_SHARE * delta / R))
    return A._gaussian_round_seconds(A._GaussianFamily(at, n, tail), points, R, True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="bench/results_gaussian_rounds.md")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--max-seconds", type=float, default=float("inf"))
    args = ap.parse_args()
    split = Split()
    sa.epsilon(sa.Gaussian(sigma=1.0, sensitivity=1.0), n=100, delta=1e-6)      # imports and plans, not timed
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    load0 = os.getloadavg()[0]
    rows, ratios = [], []
    for s, n, R, d in cells(args.full):
        est = estimate(s, n, R, d)
        split.t.clear()
        t, c = time.perf_counter(), time.process_time()
        try:
            target = {"epsilon": d[1]} if isinstance(d, tuple) else {"delta": d}
            r = sa.compose_rounds([(sa.Gaussian(sigma=s, sensitivity=1.0), n, R)], max_seconds=args.max_seconds,
                                  **target)
            out = f"[{r.lower:.5g}, {r.upper:.5g}]"
        except ResourceLimitError as e:
            out = f"refused ({e.parameter})"
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        up, lo = split.t.get("_upper_pld", 0.0), split.t.get("_total_lower", 0.0)
        ratio = est / max(cpu, 1e-3)
        ratios.append(ratio)
        what = f"eps = {d[1]:g}" if isinstance(d, tuple) else f"{d:g}"
        rows.append(f"| {s:g} | {n:.0e} | {R} | {what} | {out} | {est:.2f} | {cpu:.2f} | {ratio:.2f} | {wall:.2f} | "
                    f"{up:.2f} | {lo:.2f} | {cpu - up - lo:.2f} | {os.getloadavg()[0]:.1f} |")
        print(rows[-1], flush=True)
    load1 = os.getloadavg()[0]
    within = sum(0.5 <= x <= 2.0 for x in ratios)
    with open(args.out, "w") as f:
        f.write("# The accountant's Gaussian round: up-front cost estimate against measured time\n\n")
        f.write(f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other jobs (load average "
                f"{load0:.1f} at the start, {load1:.1f} at the end); Python {platform.python_version()}; "
                f"shuffleamp {sa.__version__} at commit {commit}; "
                f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.\n\n")
        f.write("Command: `PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_gaussian_rounds.py --out "
                f"bench/results_gaussian_rounds.md{' --full' if args.full else ''}`\n\n")
        f.write("`compose_rounds([(Gaussian(sigma, sensitivity=1), n, rounds)], delta=delta)` with "
                f"max_seconds={args.max_seconds:g}.  *estimate*: `accounting._gaussian_round_seconds` (CPU seconds; "
                "the up-front refusal compares it with the time left of max_seconds, default 10 s); *CPU*: process "
                "time of the call; *wall*: its wall clock (longer than CPU on the loaded machine; the rungs' Bromwich "
                "integrals use two threads); *upper*, *lower*: CPU seconds in the upper PLD (profile and "
                "connect-the-dots) and in the lower bound; *rest*: set-up, support-edge search, compositions, the "
                "single round.\n\n")
        f.write(f"Estimate within [0.5, 2] x CPU in {within} of {len(ratios)} cells "
                f"(ratio min {min(ratios):.2f}, max {max(ratios):.2f}).\n\n")
        f.write("| sigma | n | rounds | delta (or the epsilon target) | bracket of epsilon (of delta at an epsilon target) | estimate s | CPU s | estimate / CPU | wall s | "
                "upper s | lower s | rest s | load |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
