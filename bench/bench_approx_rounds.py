"""(ε0, δ0)-LDP rounds in the accountant: totals, brackets, the users kept and the compose time.

For each case, ``shuffleamp.compose_rounds([(ApproximateLDP(eps0, delta0), n, R)], ...)`` with its defaults (the
reduction's clone pair mixed with infinite-loss atoms, the users kept m chosen for the target; accounting
module docstring, argument I) and, beside it, the former form of the same reduction with the same m: the pure
clone pair at ε0' with m users composed R times and R·β_m added to δ (the ε at δ − R β_m).  The former
accountant kept all n users and raised ParameterError when R·n·δ0 >= δ.

Usage::

    python bench/bench_approx_rounds.py --out bench/results_approx_rounds.md      # about a minute
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import re
import time

import shuffleamp as sa

CASES = [  # (eps0, delta0, n, R, target kind, target)
    (1.0, 0.0, 10 ** 5, 10, "delta", 1e-6),
    (1.0, 1e-9, 10 ** 5, 10, "delta", 1e-6),
    (1.0, 1e-12, 10 ** 6, 365, "delta", 1e-8),
    (0.5, 1e-10, 10 ** 8, 100, "delta", 1e-7),
    (1.0, 1e-9, 10 ** 5, 10, "epsilon", 1.0),
]


def _kept(res) -> int | None:
    for note in res.notes:
        m = re.search(r"keeps (\d+) of", note)
        if m:
            return int(m.group(1))
    return None


def _additive(eps0, delta0, m, R, kind, target) -> float | str:
    """The same reduction with m users kept, its bad events charged additively: R beta_m added to delta."""
    stand_in = sa.ApproximateLDP(eps0, delta0).at_n(m)
    beta = stand_in.delta_charge
    pure = sa.ApproximateLDP(stand_in.eps0_pure, 0.0)
    if kind == "delta":
        if R * beta >= target:
            return "n/a (R β ≥ δ)"
        return sa.compose_rounds([(pure, m, R)], delta=target - R * beta * (1 + 1e-12), lower=False).upper
    return min(1.0, sa.compose_rounds([(pure, m, R)], epsilon=target, lower=False).upper + R * beta)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    sa.compose_rounds([(sa.ApproximateLDP(1.0, 0.0), 100, 2)], delta=1e-3)       # warm-up (imports, kernels)
    rows = []
    for eps0, delta0, n, R, kind, target in CASES:
        kw = {kind: target}
        load = os.getloadavg()[0]
        t = time.perf_counter()
        res = sa.compose_rounds([(sa.ApproximateLDP(eps0, delta0), n, R)], **kw)
        wall = time.perf_counter() - t
        m = _kept(res) or n
        add = _additive(eps0, delta0, m, R, kind, target) if delta0 > 0 else "—"
        rows.append((eps0, delta0, n, R, kind, target, res, m, add, wall, load))
    lines = ["# (ε0, δ0)-LDP rounds: totals and compose time (bench/bench_approx_rounds.py)", "",
             f"Command: `python bench/bench_approx_rounds.py --out bench/results_approx_rounds.md`, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
             f"shuffleamp {sa.__version__}; shared with other jobs (load average beside each time).", "",
             "`upper`/`lower`: `compose_rounds` defaults (certified; the reduction's clone pair mixed with "
             "infinite-loss atoms, m users kept).  `additive R β_m`: the same reduction and m with R β_m added to "
             "δ instead (the former accountant's form, which kept all n users: it raised ParameterError on every "
             "δ0 > 0 row below).", "",
             "| ε0 | δ0 | n | R | target | upper | lower | ratio | users kept m | additive R β_m | time s | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for eps0, delta0, n, R, kind, target, res, m, add, wall, load in rows:
        tgt = f"δ = {target:g}" if kind == "delta" else f"ε = {target:g}"
        a = f"{add:.6g}" if isinstance(add, float) else add
        lines.append(f"| {eps0:g} | {delta0:g} | {n:.0e} | {R} | {tgt} | {res.upper:.6g} | {res.lower:.6g} | "
                     f"{res.ratio:.4g} | {m} | {a} | {wall:.2f} | {load:.1f} |")
    lines += ["", "With δ0 > 0 the reduction's infinity mass min(m, d − 1) δ0 per round forces m ≪ n users kept "
              "(R m δ0 < δ), so the upper is far above the lower: that is the reduction's limit "
              "(`limited_by` says so), not the composition's."]
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
