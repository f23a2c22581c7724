"""Against the reference implementations: the same quantity computed by shuffleamp and by the public code
of each paper, row by row, with both run times.

The reference numbers were produced by running each paper's public implementation (CSV files
``bench/data/anchor_values.csv``, ε(δ), and ``bench/data/anchor_delta_values.csv``, δ(ε); columns
implementation, method, mechanism, k, eps0, n, delta or eps, upper, lower, seconds (of the reference code on
this machine type), notes; ``--anchors DIR`` reads them from elsewhere):

* Su, Cheng, Wang, "Decomposition-based optimal bounds for privacy amplification via shuffling"
  (IEEE S&P 2026), FFT accountant -> shuffleamp's default (optimal) method, the same mechanism; their
  ``generic`` rows (the general ε0-LDP decomposition) -> ``stronger-clone`` of binary RR;
* Feldman, McMillan, Talwar, "Hiding among the clones" (FOCS 2021), closed form and numerical ->
  ``clone-closed-form`` / ``clone``;
* Balle, Bell, Gascón, Nissim, "The privacy blanket of the shuffle model" (CRYPTO 2019), Hoeffding and
  Bennett for k-RR -> ``blanket-hoeffding`` / ``blanket-bennett``; Erlingsson et al. (SODA 2019) ->
  ``erlingsson``;
* Feldman, McMillan, Talwar, "Stronger privacy amplification by shuffling" (SODA 2023), as implemented by
  Wang et al. and as a tight PLD (dp-bayes) -> ``stronger-clone``;
* Wang et al., "Privacy amplification via shuffling: unified, simplified, and tightened" (variation ratio,
  VLDB 2024) for k-RR -> ``variation-ratio`` (a baseline, ``sound=False``).

Rows whose method has no shuffleamp counterpart for that mechanism (the generic blanket and generic
variation-ratio parameters) are counted as not compared.  Per group: rows compared, the median and largest
relative difference of the upper value (``ours / theirs - 1``), and the median run time of each side.

Usage::

    python bench/run.py reference            # --quick: every third row
    PYTHONPATH=src python bench/bench_reference.py [--quick] [--out bench/results_reference.md]
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import shuffleamp as sa
from shuffleamp.errors import ShuffleampError
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, Laplace

DEFAULT_ANCHORS = Path(__file__).resolve().parent / "data"

_METHOD = {("su-decomp", "FFT"): "optimal", ("su-decomp", "FFT get_delta"): "optimal",
           ("apple-FMT21", "closedform"): "clone-closed-form", ("apple-FMT21", "numerical"): "clone",
           ("apple-FMT21", "deltacomp"): "clone",
           ("balle-blanket", "hoeffding"): "blanket-hoeffding", ("balle-blanket", "bennett"): "blanket-bennett",
           ("balle-blanket", "EFMRTT19"): "erlingsson",
           ("dpbayes-PLD", "PLD"): "stronger-clone",
           ("wangsw-VR", "stronger-clone"): "stronger-clone", ("wangsw-VR", "stronger-clone Delta"): "stronger-clone",
           ("wangsw-VR", "variation-ratio"): "variation-ratio",
           ("wangsw-VR", "variation-ratio Delta"): "variation-ratio"}
#: Methods whose generic-ε0 form is a function of ε0 alone (evaluated on binary RR at that ε0).
_GENERIC_OK = {"clone-closed-form", "clone", "erlingsson", "stronger-clone"}


def mapping(row: dict):
    """(mechanism, method) of shuffleamp for a reference row, or None when there is no counterpart."""
    method = _METHOD.get((row["implementation"], row["method"]))
    if method is None:
        return None
    e0, mech = float(row["eps0"]), row["mechanism"]
    if mech == "generic":
        if row["implementation"] == "su-decomp":
            method = "stronger-clone"
        if method not in _GENERIC_OK:
            return None
        return KRR(e0, 2), method
    build = {"krr": lambda: KRR(e0, int(row["k"])), "blh": lambda: BLH(e0), "oue": lambda: OUE(e0),
             "rappor": lambda: RAPPOR(e0), "laplace": lambda: Laplace(e0)}.get(mech)
    return None if build is None else (build(), method)


def evaluate(row: dict, quantity: str):
    """(ours upper, seconds) or (None, reason)."""
    mm = mapping(row)
    if mm is None:
        return None, "no counterpart"
    mech, method = mm
    n = int(float(row["n"]))
    t0 = time.perf_counter()
    try:
        if quantity == "epsilon":
            r = sa.epsilon(mech, n, float(row["delta"]), method=method)
        else:
            r = sa.delta(mech, n, float(row["eps"]), method=method)
    except ShuffleampError as exc:
        return None, type(exc).__name__
    return r.upper, time.perf_counter() - t0


def _num(x: str):
    try:
        v = float(x)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def table(rows: list, quantity: str) -> list:
    key_up = "eps_upper" if quantity == "epsilon" else "delta_upper"
    groups: dict = {}
    for row in rows:
        theirs = _num(row[key_up])
        g = groups.setdefault((row["implementation"], row["method"], row["mechanism"], row["k"]),
                              {"rows": 0, "rel": [], "t_ours": [], "t_theirs": [], "skip": {}})
        g["rows"] += 1
        if theirs is None or theirs <= 0:
            g["skip"]["no reference value"] = g["skip"].get("no reference value", 0) + 1
            continue
        ours, t = evaluate(row, quantity)
        if ours is None:
            g["skip"][t] = g["skip"].get(t, 0) + 1
            continue
        g["rel"].append(ours / theirs - 1.0)
        g["t_ours"].append(t)
        if _num(row["seconds"]) is not None:
            g["t_theirs"].append(float(row["seconds"]))
    out = [f"| implementation | method | mechanism | rows | compared | median ours/theirs - 1 | "
           "min .. max ours/theirs - 1 | median s (theirs) | median s (ours) | not compared |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for (impl, meth, mech, k), g in groups.items():
        name = f"{mech} k={k}" if k else mech
        rel = g["rel"]
        med = f"{statistics.median(rel):+.2e}" if rel else "-"
        rng = f"{min(rel):+.2e} .. {max(rel):+.2e}" if rel else "-"
        tt = f"{statistics.median(g['t_theirs']):.3g}" if g["t_theirs"] else "-"
        to = f"{statistics.median(g['t_ours']):.3g}" if g["t_ours"] else "-"
        skip = "; ".join(f"{v} {k_}" for k_, v in g["skip"].items()) or ""
        out.append(f"| {impl} | {meth} | {name} | {g['rows']} | {len(rel)} | {med} | {rng} | {tt} | {to} | {skip} |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--anchors", default=str(DEFAULT_ANCHORS), help="folder with anchor_values.csv")
    ap.add_argument("--quick", action="store_true", help="every third row")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    folder = Path(a.anchors)
    if not (folder / "anchor_values.csv").exists():
        print(f"reference suite skipped: {folder / 'anchor_values.csv'} not found (--anchors DIR)")
        return 0
    sa.epsilon(KRR(1.0, 2), 100, 1e-6)                  # imports and first-use set-up outside the timings
    step = 3 if a.quick else 1
    eps_rows = list(csv.DictReader(open(folder / "anchor_values.csv", encoding="utf-8")))[::step]
    dl_rows = list(csv.DictReader(open(folder / "anchor_delta_values.csv", encoding="utf-8")))[::step]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    t0 = time.perf_counter()
    lines = ["# Against the reference implementations", "",
             f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform()}; commit "
             f"{commit}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average {os.getloadavg()[0]:.1f}.",
             f"Command: `python bench/run.py reference{' --full' if not a.quick else ''}`"
             f"{' (every third row)' if a.quick else ''}.", "",
             "Upper value of shuffleamp's counterpart method against the reference code's, row by row "
             "(ours/theirs - 1: negative means ours is smaller). The references' times were measured on this "
             "machine type by their own code (Python or a CPU shim of their GPU code).", "",
             "## ε(δ)", ""]
    lines += table(eps_rows, "epsilon")
    lines += ["", "## δ(ε)", ""]
    lines += table(dl_rows, "delta")
    lines += ["", f"Wall time of this run: {time.perf_counter() - t0:.1f} s."]
    text = "\n".join(lines) + "\n"
    if a.out:
        Path(a.out).write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
