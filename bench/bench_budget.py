"""Budget workflow timings: command-line start-up side by side, the three-collection year (report, the
largest histogram eps0, the total over days) and its plot.

Writes ``bench/results_budget.md`` and ``bench/plan_year.png``.  Run from the repository root:

    python bench/bench_budget.py            # about 2 minutes on an idle 2-core machine
    python bench/bench_budget.py --setup    # the README's two set-up commands (about 10 minutes)

``--setup`` copies the committed tree (``git archive HEAD``) to a temporary directory, makes a fresh
virtual environment and times the README's two install commands there one after the other, each with
pip's isolated build; it writes ``bench/results_budget_setup.md``.

Start-up: ``shuffleamp --version`` and ``shuffleamp epsilon --mechanism krr --k 10 --eps0 1 --n 1e6 --delta 1e-8``
are run alternately as fresh processes (``python -m shuffleamp.cli``, so a launcher script's own start-up is
not counted), ``REPEATS`` times each; the table gives the median wall time of each and their ratio.
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPEATS = 7
VERSION = [sys.executable, "-m", "shuffleamp.cli", "--version"]
EPSILON = [sys.executable, "-m", "shuffleamp.cli", "epsilon", "--mechanism", "krr", "--k", "10", "--eps0", "1",
           "--n", "1e6", "--delta", "1e-8"]


def _wall(cmd) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the child process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def startup() -> dict:
    _wall(VERSION), _wall(EPSILON)                   # warm the file cache
    v, e = [], []
    for _ in range(REPEATS):
        v.append(_wall(VERSION))
        e.append(_wall(EPSILON))
    med = {k: statistics.median(x[i] for x in runs) for k, runs in (("v", v), ("e", e)) for i in (0,)}
    cpu = {k: statistics.median(x[1] for x in runs) for k, runs in (("v", v), ("e", e))}
    return {"version": med["v"], "epsilon": med["e"], "ratio": med["e"] / med["v"],
            "version_cpu": cpu["v"], "epsilon_cpu": cpu["e"], "ratio_cpu": cpu["e"] / cpu["v"],
            "v_all": [x[0] for x in v], "e_all": [x[0] for x in e]}


def year() -> dict:
    import shuffleamp as sa
    from shuffleamp.config import parse_plan
    from shuffleamp.plans import plan_max, report, total_over_days
    import tomllib

    text = resources.files("shuffleamp").joinpath("data/example_year.toml").read_text(encoding="utf-8")
    plan = parse_plan(tomllib.loads(text))
    out = {}
    t = time.perf_counter()
    rep = report(plan, progress=False)
    out["report_s"] = time.perf_counter() - t
    out["total"] = rep["total"]
    out["collections"] = [(c["name"], c["total"]["epsilon_upper"], c["total"]["epsilon_lower"]) for c in rep["collections"]]
    t = time.perf_counter()
    q = plan_max(plan, "histogram", "eps0", progress=False)
    out["eps0_s"] = time.perf_counter() - t
    out["eps0"] = q
    t = time.perf_counter()
    curve = total_over_days(plan, progress=False)
    out["days_s"] = time.perf_counter() - t
    out["days"] = len(curve["days"])
    sa.plot_plan(plan, HERE / "plan_year.png", curve=curve, title="three daily collections over a year")
    return out


def setup_commands() -> None:
    import shutil
    import tempfile

    root = HERE.parent
    tmp = Path(tempfile.mkdtemp(prefix="shuffleamp-setup-"))
    try:
        src = tmp / "src"
        src.mkdir()
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=root, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
        subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True)
        py = str(tmp / "venv" / "bin" / "python")
        rows = []
        for cmd in ([py, "-m", "pip", "install", "-v", "."], [py, "-m", "pip", "install", "-v", ".[test]"]):
            t = time.perf_counter()
            done = subprocess.run(cmd, cwd=src, capture_output=True, text=True)
            wall = time.perf_counter() - t
            log = done.stdout + done.stderr
            compiled = log.count("building 'shuffleamp._ext.")
            reused = log.count("reusing the compiled shuffleamp._ext.")
            rows.append((" ".join(["python", *cmd[1:]]), wall, done.returncode, compiled, reused))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = os.getloadavg()
    lines = ["# Set-up: the README's two install commands", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, load "
             f"average {load[0]:.1f} at the end. Command: `python bench/bench_budget.py --setup` "
             f"({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC); a fresh venv and a fresh copy of the tree, the "
             "two commands one after the other (pip's download cache may be warm).", "",
             "| command | wall s | exit | kernels compiled | kernels reused |", "|---|---|---|---|---|",
             *(f"| `{c}` | {w:.0f} | {rc} | {n} | {r} |" for c, w, rc, n, r in rows), ""]
    (HERE / "results_budget_setup.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


def main() -> None:
    if "--setup" in sys.argv[1:]:
        setup_commands()
        return
    s = startup()
    y = year()
    load = os.getloadavg()
    lines = [
        "# Budget workflow: start-up and the three-collection year",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {load[0]:.1f} when the run ended (other work shares the cores: compare the rows "
        "of one run, not runs).",
        f"Command: `python bench/bench_budget.py` ({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC).",
        "",
        "## Start-up, side by side",
        "",
        f"Fresh processes run alternately, {REPEATS} times each; median wall time and median CPU time (user + "
        "system of the process, less sensitive to other work on the machine). Target: one `epsilon` call at "
        "most 1.5 × `--version`.",
        "",
        "| command | median wall s | median CPU s | all wall times s |",
        "|---|---|---|---|",
        f"| `shuffleamp --version` | {s['version']:.3f} | {s['version_cpu']:.3f} | "
        f"{', '.join(f'{x:.2f}' for x in s['v_all'])} |",
        f"| `shuffleamp epsilon --mechanism krr --k 10 --eps0 1 --n 1e6 --delta 1e-8` | {s['epsilon']:.3f} | "
        f"{s['epsilon_cpu']:.3f} | {', '.join(f'{x:.2f}' for x in s['e_all'])} |",
        f"| ratio epsilon / version | **{s['ratio']:.2f}** | **{s['ratio_cpu']:.2f}** | |",
        "",
        "## The three-collection year (`shuffleamp plan-template --example year`)",
        "",
        "| step | wall s | result |",
        "|---|---|---|",
        f"| `report` (3 collections × 365 rounds, per-round ε, totals, grand total with its lower bound) | "
        f"{y['report_s']:.1f} | grand total ε ∈ [{y['total']['epsilon_lower']:.4f}, {y['total']['epsilon_upper']:.4f}] "
        f"at δ = {y['total']['delta']:g}, verdict {y['total']['verdict']} |",
        f"| `eps0 --plan … --collection histogram` | {y['eps0_s']:.1f} | eps0 = {y['eps0'].value:.6f}, "
        f"eps0_infeasible = {y['eps0'].infeasible:.6f} ({y['eps0'].evaluations} grand totals) |",
        f"| `report --plot` (total over {y['days']} days) | {y['days_s']:.1f} | `bench/plan_year.png` |",
        "",
        "Each collection's total at the same δ (the grand total is at least each of them):",
        "",
        "| collection | total upper | total lower |",
        "|---|---|---|",
        *(f"| {n} | {u:.4f} | {lo:.4f} |" for n, u, lo in y["collections"]),
        "",
    ]
    (HERE / "results_budget.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
