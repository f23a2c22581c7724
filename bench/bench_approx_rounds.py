"""(ε0, δ0)-LDP rounds in the accountant: totals, brackets and the compose time.

For each case, ``shuffleamp.compose_rounds([(ApproximateLDP(eps0, delta0), n, R)], ...)`` with its defaults (the
pointwise minimum over the users kept m of the reduction's clone pairs with infinite-loss atoms; accounting
module docstring, argument I) and, beside it, two single users-kept values m (the best of the octave grid
m = n, n/2, ..., 1, at the target): the pair with infinite-loss atoms composed R times, and the same pure clone
pair at ε0'(β_m) composed R times with R·β_m added to δ.  The former accountant used the latter with m = n only
and raised ParameterError when R·n·δ0 >= δ.

Usage::

    python bench/bench_approx_rounds.py --out bench/results_approx_rounds.md      # about a minute
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time

import shuffleamp as sa
from shuffleamp import accounting as acc

CASES = [  # (eps0, delta0, n, R, target kind, target)
    (1.0, 0.0, 10 ** 5, 10, "delta", 1e-6),
    (1.0, 1e-9, 10 ** 5, 10, "delta", 1e-6),
    (1.0, 1e-12, 10 ** 6, 365, "delta", 1e-8),
    (0.5, 1e-10, 10 ** 8, 100, "delta", 1e-7),
    (1.0, 1e-9, 10 ** 5, 10, "epsilon", 1.0),
]


def _single_m(eps0, delta0, n, R, kind, target):
    """(best m, its total with infinite-loss atoms, its total with R beta_m added) over the octave grid."""
    cls = sa.ApproximateLDP(eps0, delta0)
    best = (None, math.inf, math.inf)
    for m in acc._users_grid(n):
        stand_in = cls.at_n(m)
        beta = stand_in.delta_charge
        if kind == "delta" and acc._inf_total(beta, R) >= target:
            continue
        rt = acc._Round.make(cls, n, acc.DEFAULT_TAIL_DELTA, users=m)
        d = acc._interval(None, [rt], acc.DEFAULT_POINTS)
        tot, _, ro = acc._compose_all([(acc._upper_pld(rt, d, acc.DEFAULT_POINTS), R)])
        v = (acc._certified_epsilon(tot, target, ro, 0.0, d, "upper") if kind == "delta"
             else acc._delta_bounds(tot, target, ro)[0])
        if v < best[1]:
            pure = sa.ApproximateLDP(stand_in.eps0_pure, 0.0)
            if kind == "delta":
                add = (sa.compose_rounds([(pure, m, R)], delta=target - R * beta * (1 + 1e-12), lower=False).upper
                       if R * beta < target else math.inf)
            else:
                add = sa.compose_rounds([(pure, m, R)], epsilon=target, lower=False).upper + R * beta
            best = (m, v, add)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    sa.compose_rounds([(sa.ApproximateLDP(1.0, 0.0), 100, 2)], delta=1e-3)       # warm-up (imports, kernels)
    rows = []
    for eps0, delta0, n, R, kind, target in CASES:
        kw = {kind: target}
        load = os.getloadavg()[0]
        t, c = time.perf_counter(), time.process_time()
        res = sa.compose_rounds([(sa.ApproximateLDP(eps0, delta0), n, R)], **kw)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        single = _single_m(eps0, delta0, n, R, kind, target) if delta0 > 0 else (n, math.nan, math.nan)
        rows.append((eps0, delta0, n, R, kind, target, res, single, wall, cpu, load))
    lines = ["# (ε0, δ0)-LDP rounds: totals and compose time (bench/bench_approx_rounds.py)", "",
             f"Command: `python bench/bench_approx_rounds.py --out bench/results_approx_rounds.md`, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
             f"shuffleamp {sa.__version__}; shared with other jobs (load average beside each time; CPU s is this "
             "process's).", "",
             "`upper`/`lower`: `compose_rounds` defaults (certified).  `single m`: the best users-kept value of the "
             "octave grid alone, its pair with infinite-loss atoms (`atoms`) and the same clone pair with R β_m "
             "added to δ (`+R β_m`).  The former accountant used `+R β_m` with m = n only: it raised "
             "ParameterError on every δ0 > 0 row below (R n δ0 ≥ δ), except the δ query (ε = 1: 1e-3 + ...).", "",
             "| ε0 | δ0 | n | R | target | upper | lower | ratio | single m | atoms | +R β_m | wall s | CPU s | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for eps0, delta0, n, R, kind, target, res, (m, at, add), wall, cpu, load in rows:
        tgt = f"δ = {target:g}" if kind == "delta" else f"ε = {target:g}"
        lines.append(f"| {eps0:g} | {delta0:g} | {n:.0e} | {R} | {tgt} | {res.upper:.6g} | {res.lower:.6g} | "
                     f"{res.ratio:.4g} | {m} | {at:.6g} | {add:.6g} | {wall:.2f} | {cpu:.2f} | {load:.1f} |")
    lines += ["", "With δ0 > 0 each single m pays an infinity mass min(m, d − 1) δ0 per round, which forces m ≪ n; "
              "the minimum over m moves that mass to finite losses (fewer users kept at larger ε), so the total is "
              "far below any single m's.  The remaining gap to the lower bound is the reduction's (`limited_by`)."]
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
