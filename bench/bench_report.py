"""`shuffleamp report` on the shipped default plan (the README's first command): wall and CPU time of fresh
processes, source trees side by side, and whether their outputs are identical.

Writes ``bench/results_report.md``.  Run from the repository root (about a minute per tree on an idle 2-core
machine)::

    python bench/bench_report.py                                   # this checkout's src
    python bench/bench_report.py --src 407a4d0=/tmp/old/src --src 5e1c2aa=src   # label each tree by its commit

Each repeat runs ``python -m shuffleamp.cli report`` and ``... report --json`` once per tree, the trees
alternating, after one warm-up run per tree (the file cache and the bytecode cache, which lives in a temporary
directory: the trees stay as they are, and every timed run starts as an installed package does, from cached
bytecode).  The table gives the median and range of the wall time, the median CPU time (user + system of the
process and its threads: less sensitive to other work on the shared machine than the wall time) and the
1-minute load average before each run.  Every run's text and JSON output must be byte-identical to the first
tree's (the report prints no timings); the script says so, or exits with status 1 naming the first difference.
A second table splits one process's CPU time into the imports, the collections and the grand total.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import machine  # noqa: E402  (the runner's one description of the machine)
COMMANDS = {"text": ["report"], "json": ["report", "--json"]}


def load() -> float:
    return os.getloadavg()[0]


def run(src: str, args: list, pycache: str) -> tuple[float, float, float, bytes]:
    """(wall s, CPU s, load before, stdout) of one fresh ``python -m shuffleamp.cli`` process on ``src``."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src), PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    la = load()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "shuffleamp.cli", *args], env=env, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 3, 4):          # 3 / 4: the plan's verdict (exceeded / undecided)
        raise SystemExit(f"report failed on tree {src!r}:\n{out.stderr.decode()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), la, out.stdout


#: One process per tree: CPU time of the imports, of the collections (evaluate_plan: per-round ε and each
#: collection's total) and of the grand total (plan_total), and the certified profile points the accountant
#: evaluated (calls of the exact profile evaluator from shuffleamp.accounting, ε by ε).
PHASES = """
import json, time
import numpy as np
t0 = time.process_time()
import shuffleamp.plans as P, shuffleamp.accounting as A
t1 = time.process_time()
out = {"import": t1 - t0, "evaluate_plan": 0.0, "plan_total": 0.0, "points": 0}
for name in ("evaluate_plan", "plan_total"):
    f = getattr(P, name)
    def g(*a, f=f, name=name, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            out[name] += time.process_time() - t
    setattr(P, name, g)
prof = A.delta_exact_profile
def count(f, n, eps, *a, **k):
    out["points"] += int(np.size(eps))
    return prof(f, n, eps, *a, **k)
A.delta_exact_profile = count
P.report(None, progress=False)
print(json.dumps(out))
"""


def phases(src: str, pycache: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src), PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, "-c", PHASES], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def first_difference(a: bytes, b: bytes) -> str:
    for i, (la, lb) in enumerate(zip(a.decode().splitlines(), b.decode().splitlines()), start=1):
        if la != lb:
            return f"line {i}: {la!r} != {lb!r}"
    return "one output is longer"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable; label it "
                                                               "by its commit)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(HERE / "results_report.md"))
    args = ap.parse_args(argv)
    trees = [s.split("=", 1) for s in (args.src or [f"this={HERE.parent / 'src'}"])]
    times = {label: {k: [] for k in COMMANDS} for label, _ in trees}
    outputs: dict = {}
    mismatch = []
    with tempfile.TemporaryDirectory() as tmp:
        caches = {label: os.path.join(tmp, str(i)) for i, (label, _) in enumerate(trees)}
        for label, src in trees:                              # warm-up: file and bytecode caches
            run(src, COMMANDS["text"], caches[label])
        for _ in range(args.repeats):
            for label, src in trees:
                for kind, cmd in COMMANDS.items():
                    wall, cpu, la, out = run(src, cmd, caches[label])
                    times[label][kind].append((wall, cpu, la))
                    ref = outputs.setdefault(kind, (label, out))
                    if out != ref[1]:
                        why = first_difference(ref[1], out)
                        mismatch.append(f"{kind}: tree {label} differs from tree {ref[0]} ({why})")
                    print(f"{label:>12} {kind:4} wall {wall:6.2f} s  CPU {cpu:6.2f} s  load {la:.2f}", flush=True)
        split = {label: [phases(src, caches[label]) for _ in range(3)] for label, src in trees}
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cmd = "python bench/bench_report.py " + " ".join(f"--src {label}=<tree of {label}>" for label, _ in trees)
    lines = ["# `shuffleamp report` on the default plan", "",
             f"Machine: {machine()}; load average {load():.2f} when the run ended (the machine is shared: each row "
             "gives the 1-minute load average before its runs; CPU time is the steadier comparison).",
             f"Command: `{cmd}` ({now}), {args.repeats} repeats per tree and command, trees alternating, after one "
             "warm-up run each; bytecode cached as in an installed package.", "",
             "| tree | command | median wall s | wall range s | median CPU s (user + sys) | load before runs |",
             "|---|---|---|---|---|---|"]
    for label, _ in trees:
        for kind, cmdargs in COMMANDS.items():
            rows = times[label][kind]
            walls, cpus, loads = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
            lines.append(f"| {label} | `shuffleamp {' '.join(cmdargs)}` | {statistics.median(walls):.2f} | "
                         f"{min(walls):.2f} .. {max(walls):.2f} | {statistics.median(cpus):.2f} | "
                         f"{min(loads):.2f} .. {max(loads):.2f} |")
    if len(trees) > 1:
        base = trees[0][0]
        lines += ["", "| tree | median wall / " + base + " | median CPU / " + base + " |", "|---|---|---|"]
        for label, _ in trees[1:]:
            for kind in COMMANDS:
                w = statistics.median(r[0] for r in times[label][kind]) / statistics.median(
                    r[0] for r in times[base][kind])
                c = statistics.median(r[1] for r in times[label][kind]) / statistics.median(
                    r[1] for r in times[base][kind])
                lines.append(f"| {label} ({kind}) | {w:.2f} | {c:.2f} |")
    lines += ["", "Where the CPU goes, in one process per tree (`plans.report(None)`, median of 3 processes): the "
              "imports, the collections (`evaluate_plan`: per-round ε and each collection's total), the grand total "
              "(`plan_total`), and the certified profile points the accountant evaluated.", "",
              "| tree | imports CPU s | collections CPU s | grand total CPU s | profile points evaluated |",
              "|---|---|---|---|---|"]
    for label, _ in trees:
        runs = split[label]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        lines.append(f"| {label} | {med['import']:.2f} | {med['evaluate_plan']:.2f} | {med['plan_total']:.2f} | "
                     f"{int(med['points'])} |")
    lines += ["", "Outputs: " + ("every run's text and JSON output is byte-identical to the first tree's."
                                 if not mismatch else "DIFFERENT: " + "; ".join(sorted(set(mismatch))))]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if mismatch else 0


if __name__ == "__main__":
    sys.exit(main())
