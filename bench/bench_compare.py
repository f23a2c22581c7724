"""Comparison-methods benchmark: ε against n for every method, with run times from the same run.

For 10-RR, BLH, RAPPOR, OUE (large-domain limits) and Laplace on {0, 1}, at ε0 ∈ {0.1, 1, 4} and
n ∈ {10^3, …, 10^8} (δ = 1e-8 throughout), it calls ``shuffleamp.epsilon(..., method=m)`` for every
method of :data:`shuffleamp.baselines.METHODS` (plus the optimal method's certified lower bound)
and records ε and the wall time (``time.perf_counter`` around each call).  Methods outside their
validity regime are recorded as skipped with the reason.

Outputs:

* ``bench/results_compare.md``: one table per (mechanism, ε0): rows n, a column per method,
  cells ``ε (seconds)``; unsound methods are marked;
* ``bench/compare.png``: ε against n (log-log), one panel per (mechanism, ε0) (needs the
  ``bench`` extra: ``pip install ".[bench]"``);
* ``bench/results_compare.json``: the raw numbers and times.

Usage::

    python bench/bench_compare.py                  # full grid (about 15-25 minutes on 2 cores)
    python bench/bench_compare.py --quick          # n <= 1e5
    python bench/bench_compare.py --out-md bench/results_compare.md --out-png bench/compare.png

The optimal bound for the continuous Laplace mechanism is evaluated exactly (closed-form MGF; about
30 ms per call at any n).  ``--laplace-max-n`` (default 1e9) still allows skipping it above a given
n; it was needed while Laplace went through the binned FFT engine (minutes per call at 1e6).
"""

from __future__ import annotations

import argparse
import math
import platform
import resource
import sys
import time

import shuffleamp as sa
from shuffleamp import baselines, fft_engine
from shuffleamp.errors import OutOfRegimeError, ShuffleampError
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, Laplace

DELTA = 1e-8
EPS0S = (0.1, 1.0, 4.0)
MECHS = {
    "10-RR": lambda e0: KRR(e0, 10),
    "BLH": lambda e0: BLH(e0),
    "RAPPOR": lambda e0: RAPPOR(e0),
    "OUE": lambda e0: OUE(e0),
    "Laplace": lambda e0: Laplace(e0),
}
COLUMNS = list(baselines.METHODS[:1]) + ["optimal (lower)"] + list(baselines.METHODS[1:])


def run_cell(mech, n: int, laplace_max_n: int) -> dict:
    """Every method at one (mechanism, n): {column: {"eps", "s"} or {"skip": reason}}."""
    out: dict = {}
    for method in baselines.METHODS:
        if method == "optimal" and mech.name == "laplace" and n > laplace_max_n:
            out[method] = {"skip": f"not run: Laplace optimal above n={laplace_max_n:.0e} "
                                   "(minutes per call, GBs of memory)"}
            out["optimal (lower)"] = dict(out[method])
            continue
        t0 = time.perf_counter()
        try:
            r = sa.epsilon(mech, n, DELTA, method=method)
        except OutOfRegimeError as exc:
            out[method] = {"skip": "out of regime: " + str(exc).split(": ", 1)[-1]}
            continue
        except (ShuffleampError, MemoryError) as exc:
            out[method] = {"skip": f"failed: {type(exc).__name__}: {exc}"}
            continue
        dt = time.perf_counter() - t0
        out[method] = {"eps": r.value, "s": dt}
        if method == "optimal":
            out["optimal (lower)"] = {"eps": r.lower, "s": None}
    return out


def fmt_table(results: dict, ns) -> str:
    lines = []
    for (mname, e0), cells in results.items():
        lines.append(f"### {mname}, ε0 = {e0:g}  (δ = {DELTA:g})\n")
        head = ["n"] + [c + (" ⚠" if c in ("variation-ratio", "gdp") else "") for c in COLUMNS]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for n in ns:
            row = [f"{n:.0e}"]
            for c in COLUMNS:
                v = cells[n].get(c, {})
                if "eps" in v:
                    t = "" if v["s"] is None else f" ({v['s']:.2f} s)"
                    row.append(f"{v['eps']:.4g}{t}")
                else:
                    row.append("—")
            lines.append("| " + " | ".join(row) + " |")
        reasons: dict = {}
        for n in ns:
            for c, v in cells[n].items():
                if "skip" in v:
                    why = v["skip"]
                    for cut in ("; ", ", got", " = "):      # keep the rule, drop the per-point numbers
                        why = why.split(cut)[0]
                    reasons.setdefault(c, {}).setdefault(why, []).append(f"{n:.0e}")
        if reasons:
            lines.append("")
            for c in COLUMNS:
                for why, where in reasons.get(c, {}).items():
                    lines.append(f"* {c} (n = {', '.join(where)}): {why}")
        lines.append("")
    return "\n".join(lines)


def plot(results: dict, ns, path: str) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install '.[bench]'): no plot", file=sys.stderr)
        return False
    mnames = list(MECHS)
    fig, axes = plt.subplots(len(EPS0S), len(mnames), figsize=(4.2 * len(mnames), 3.4 * len(EPS0S)),
                             squeeze=False)
    # one fixed style per method, so colours mean the same thing in every panel
    palette = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:gray"]
    styles = {"optimal": dict(color="k", lw=2.2), "optimal (lower)": dict(color="k", lw=1, ls=":")}
    for c, col in zip([c for c in COLUMNS if c not in styles], palette):
        styles[c] = dict(color=col, ls="--" if c in ("variation-ratio", "gdp") else "-")
    for j, mname in enumerate(mnames):
        for i, e0 in enumerate(EPS0S):
            ax = axes[i][j]
            cells = results.get((mname, e0))
            if cells is None:
                ax.set_visible(False)
                continue
            for c in COLUMNS:
                xs = [n for n in ns if "eps" in cells[n].get(c, {}) and cells[n][c]["eps"] > 0]
                if not xs:
                    continue
                ys = [cells[n][c]["eps"] for n in xs]
                lab = c + (" (UNSOUND)" if c in ("variation-ratio", "gdp") else "")
                ax.plot(xs, ys, marker="o", ms=3, label=lab, **styles.get(c, {}))
            ax.axhline(e0, color="grey", lw=0.6, ls="-.")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{mname}, ε0 = {e0:g}", fontsize=10)
            ax.grid(True, which="major", lw=0.3)
            if i == len(EPS0S) - 1:
                ax.set_xlabel("n")
            if j == 0:
                ax.set_ylabel(f"ε at δ = {DELTA:g}")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=6, fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n <= 1e5 only")
    ap.add_argument("--out-md", default="bench/results_compare.md")
    ap.add_argument("--out-png", default="bench/compare.png")
    ap.add_argument("--out-json", default="bench/results_compare.json", help="raw numbers ('' to skip)")
    ap.add_argument("--laplace-max-n", type=float, default=1e9)
    ap.add_argument("--mem-gb", type=float, default=14.0,
                    help="address-space cap (MemoryError instead of the OOM killer)")
    args = ap.parse_args(argv)
    if args.mem_gb > 0:
        lim = int(args.mem_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    ns = [10**k for k in range(3, 6 if args.quick else 9)]
    results: dict = {}
    t_all = time.perf_counter()
    for mname, ctor in MECHS.items():
        for e0 in EPS0S:
            mech = ctor(e0)
            cells = {}
            for n in ns:
                cells[n] = run_cell(mech, n, int(args.laplace_max_n))
                summary = " ".join(f"{c}={v['eps']:.3g}" for c, v in cells[n].items() if "eps" in v)
                print(f"{mname:>8} eps0={e0:<4g} n={n:.0e} {summary}", flush=True)
            results[(mname, e0)] = cells
    total = time.perf_counter() - t_all
    header = (f"# Comparison methods: ε against n\n\n"
              f"Generated by `python bench/bench_compare.py` (total {total / 60:.1f} min). Machine: "
              f"{platform.machine()}, {platform.processor() or 'cpu'}, Python {sys.version.split()[0]}, "
              f"shuffleamp {sa.__version__}, FFT backend {fft_engine.backend_name()}.\n\n"
              f"Each cell is ε (nats) at δ = {DELTA:g} and the wall time of that call. ⚠ = UNSOUND, comparison "
              "only (variation-ratio: claimed upper bound with a broken proof; gdp: asymptotic estimate). "
              "\"optimal (lower)\" is the certified lower bound from the same run as \"optimal\". "
              "BLH / RAPPOR / OUE use their large-domain limits. — = not applicable (reasons below each table). "
              "Plot: [compare.png](compare.png).\n\n")
    text = header + fmt_table(results, ns)
    with open(args.out_md, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
    if args.out_json:
        import json
        raw = {"delta": DELTA, "ns": ns, "header": header,
               "results": [{"mechanism": m, "eps0": e0, "cells": {str(n): cells[n] for n in ns}}
                           for (m, e0), cells in results.items()]}
        with open(args.out_json, "w", encoding="utf-8") as fh:
            json.dump(raw, fh, indent=1)
    plotted = plot(results, ns, args.out_png)
    print(text)
    print(f"wrote {args.out_md}" + (f" and {args.out_png}" if plotted else ""))


if __name__ == "__main__":
    main()
