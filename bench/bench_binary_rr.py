"""Binary randomized response, single round: the default answer against the exact worst case, side by side
with another source tree (e.g. the code before a change), writing ``bench/results_binary_rr.md``.

Each source tree runs in its own worker process (``--src name=path``); every cell is sent to each worker in
turn (same machine load).  Per cell and tree:

* ``default``: ``shuffleamp.epsilon(KRR(eps0, 2), n, delta)`` (the default method);
* ``standalone``: ``exact_count.epsilon_binary_rr(eps0, n, delta)`` with its default arguments;
* ``delta``: ``shuffleamp.delta(KRR(eps0, 2), n, eps)`` at ``eps`` = 0.9 x the default's lower ε.

Before each timed call the worker makes one call at another delta (imports, FFT plans) and clears the count
law caches (``exact_count._law`` and ``_search``), so the time is that of a new (eps0, n, delta).  For
n <= 2000 the exact worst case over every dataset is computed here independently (scipy binomials over
every m, both orderings, brentq), and the table gives each side's relative distance to it.

Usage::

    python bench/bench_binary_rr.py --src before=/path/to/old/src --src after=src \
        --describe "before=commit 6b09ab8, its kernels built from its _ext" --describe "after=this tree"
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))  # independent oracles

NS = [10**3, 10**4, 10**5, 10**6, 10**7, 10**8, 10**9]
EPS0 = 1.0
DELTA = 1e-6
EXTRA = [(0.25, 10**3), (0.25, 10**6), (4.0, 10**3), (4.0, 10**6)]     # other eps0 (default only)

WORKER = r"""
import json, sys, time
import shuffleamp as sa
from shuffleamp import exact_count as ec
from shuffleamp.mechanisms import KRR
sa.epsilon(KRR(1.0, 2), 1000, 1e-8)
def clear():
    ec._law.cache_clear()
    if hasattr(ec._search, "cache_clear"):
        ec._search.cache_clear()
for line in sys.stdin:
    kind, eps0, n, x = json.loads(line)
    m = KRR(eps0, 2)
    try:
        if kind == "standalone":
            ec.epsilon_binary_rr(eps0, n, x * 3.0)
            clear()
            t = time.perf_counter()
            r = ec.epsilon_binary_rr(eps0, n, x)
        elif kind == "default":
            sa.epsilon(m, n, x * 3.0)
            clear()
            t = time.perf_counter()
            r = sa.epsilon(m, n, x)
        else:
            sa.delta(m, n, x * 1.1)
            clear()
            t = time.perf_counter()
            r = sa.delta(m, n, x)
        ms = 1e3 * (time.perf_counter() - t)
        print(json.dumps({"ms": ms, "upper": float(r.upper), "lower": float(r.lower)}), flush=True)
    except Exception as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
"""


def _truth(eps0: float, n: int, delta: float) -> float:
    """Exact worst-case ε(δ) over every dataset (n <= 2000): the tests' independent count laws for every m,
    both orderings, and a root search."""
    from scipy.optimize import brentq

    from exact_oracles import binary_rr_count_laws
    P0, P1 = binary_rr_count_laws(eps0, n)

    def worst(eps):
        e = math.exp(eps)
        return max(np.maximum(P0 - e * P1, 0).sum(axis=1).max(), np.maximum(P1 - e * P0, 0).sum(axis=1).max())

    return brentq(lambda e: worst(e) - delta, 0.0, eps0, xtol=1e-17, rtol=1e-15)


def _fmt(r, truth=None):
    if r is None:
        return "—", "—", "—", "—"
    if "error" in r:
        return r["error"][:40], "", "", ""
    rel = (r["upper"] - r["lower"]) / r["lower"] if r["lower"] > 0 else math.inf
    return f"{r['upper']:.10g}", f"{r['lower']:.10g}", f"{rel:.1e}", f"{r['ms']:.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", action="append", required=True, help="name=path of a source tree (first: before)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results_binary_rr.md"))
    ap.add_argument("--max-n-standalone", type=int, default=10**9)
    ap.add_argument("--describe", action="append", default=[], help="name=text: what a source tree is")
    args = ap.parse_args()
    workers = {}
    for spec in args.src:
        name, path = spec.split("=", 1)
        env = dict(os.environ, PYTHONPATH=os.path.abspath(path))
        workers[name] = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, env=env)

    def ask(name, *cell):
        w = workers[name]
        w.stdin.write(json.dumps(cell) + "\n")
        w.stdin.flush()
        return json.loads(w.stdout.readline())

    names = list(workers)
    rows = []
    for n in NS:
        truth = _truth(EPS0, n, DELTA) if n <= 2000 else None
        row = {"n": n, "truth": truth}
        for name in names:
            row[name, "default"] = ask(name, "default", EPS0, n, DELTA)
            row[name, "standalone"] = (ask(name, "standalone", EPS0, n, DELTA) if n <= args.max_n_standalone
                                       else None)
            lo = row[name, "default"].get("lower")
            row[name, "delta"] = ask(name, "delta", EPS0, n, 0.9 * lo) if lo else None
        rows.append(row)
        print(n, {k: v for k, v in row.items() if k != "n"}, flush=True)
    extra = []
    for eps0, n in EXTRA:
        extra.append((eps0, n, _truth(eps0, n, DELTA) if n <= 2000 else None,
                      {name: ask(name, "default", eps0, n, DELTA) for name in names}))
    for w in workers.values():
        w.stdin.close()
        w.wait()

    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    out = [
        "# Binary randomized response, single round: default answer vs the exact worst case",
        "",
        f"Generated by `python bench/bench_binary_rr.py {' '.join('--src ' + s for s in args.src)}"
        f"{' --max-n-standalone %d' % args.max_n_standalone if args.max_n_standalone < 10**9 else ''}"
        f"{''.join(' --describe %r' % d for d in args.describe)}` on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()} "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; load average at the end "
        f"{', '.join(f'{x:.1f}' for x in load)} (the machine was shared: times are wall clock of one cold "
        "call and vary by about 2x with the load).",
        "",
        f"eps0 = {EPS0:g}, delta = {DELTA:g}. `default`: `shuffleamp.epsilon(KRR(eps0, 2), n, delta)`; "
        "`standalone`: `exact_count.epsilon_binary_rr(eps0, n, delta)` (default arguments); `delta`: "
        "`shuffleamp.delta` at 0.9 x the default's lower ε. `rel` = (upper - lower) / lower, which bounds "
        "each side's distance to the exact worst case; `exact` is that worst case computed independently "
        "(every dataset, scipy binomials) where n <= 2000.",
        "",
    ]
    described = dict(d.split("=", 1) for d in args.describe)
    for name in names:
        out += [f"## {name}" + (f": {described[name]}" if name in described else ""), "",
                "| n | exact | default upper | default lower | rel | ms | standalone upper | standalone lower "
                "| rel | ms | delta(eps) upper | delta lower | rel | ms |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for row in rows:
            t = f"{row['truth']:.13g}" if row["truth"] is not None else "—"
            cells = _fmt(row[name, "default"]) + _fmt(row[name, "standalone"]) + _fmt(row[name, "delta"])
            out.append(f"| {row['n']:.0e} | {t} | " + " | ".join(cells) + " |")
        out.append("")
    out += ["## Other eps0 (default only)", "",
            "| eps0 | n | exact | " + " | ".join(f"{nm} upper | {nm} lower | {nm} rel | {nm} ms" for nm in names)
            + " |", "|---|---|---|" + "---|---|---|---|" * len(names)]
    for eps0, n, truth, res in extra:
        t = f"{truth:.13g}" if truth is not None else "—"
        out.append(f"| {eps0:g} | {n:.0e} | {t} | " + " | ".join(" | ".join(_fmt(res[nm])) for nm in names) + " |")
    out.append("")
    with open(args.out, "w") as fh:
        fh.write("\n".join(out))
    print("wrote", args.out)


if __name__ == "__main__":
    main()
