"""The benchmark runner: every maintained suite by name, one command.

Usage (from the repository root)::

    python bench/run.py --list                      # the suites, their scripts and results files
    python bench/run.py latency large-n             # run suites (each writes bench/results_<...>.md)
    python bench/run.py all                         # every suite (tens of minutes: use an idle machine)
    python bench/run.py latency --full              # a suite's full size instead of its default size
    python bench/run.py latency -- --src before=/old/src --src after=src   # extra arguments to the script

Each suite is a script ``bench/bench_<topic>.py`` that writes its current results to ``bench/results_<...>.md``
(machine, command, date, table).  The runner starts it as a subprocess with ``PYTHONPATH`` pointing at this
checkout's ``src`` (unless ``PYTHONPATH`` is set) and ``OMP_NUM_THREADS=1`` unless the suite measures
threads, and records the command, the commit and the wall time of every run in ``bench/runs/runs.log``.
Raw run logs (``.jsonl``, ``.log``) go to ``bench/runs/``, which git ignores: they are regenerated, never
committed.

Adding a suite is one line in :data:`SUITES` (name, script, arguments, results file, one-line description);
a script ``bench/bench_<topic>.py`` that is not registered still runs as ``python bench/run.py <topic>``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RUNS = BENCH / "runs"


@dataclasses.dataclass(frozen=True)
class Suite:
    """A maintained benchmark.

    Attributes
    ----------
    script : str
        File name under ``bench/``.
    args : tuple of str
        Arguments of the default run (under about two minutes on the 2-core machine).
    results : str
        The results file it writes (under ``bench/``).
    about : str
        What it measures, one line.
    full : tuple of str or None
        Arguments of the full-size run (``--full``); None: the default run is the full one.
    threads : bool
        The suite measures threads: ``OMP_NUM_THREADS`` is left alone.
    stdout : bool
        The script prints its report: the runner writes its standard output to ``results``.
    full_results : str
        The results file of the full-size run, if it is not ``results``.
    """

    script: str
    args: tuple = ()
    results: str = ""
    about: str = ""
    full: tuple | None = None
    threads: bool = False
    stdout: bool = False
    full_results: str = ""


#: The registry: suite name -> Suite.  One line per suite.
SUITES: dict[str, Suite] = {
    "latency": Suite("bench_latency.py", ("--quick", "--out", "bench/results_latency_quick.md", "--jsonl", "bench/runs/latency_quick.jsonl"), "results_latency_quick.md", "tail latency of epsilon() over a fixed seeded random suite of every mechanism (300 cases; --full: 2000)", full=("--cases", "2000", "--out", "bench/results_latency.md", "--jsonl", "bench/runs/latency.jsonl"), full_results="results_latency.md"),
    "large-n": Suite("bench_exact.py", ("--out", "bench/results_exact.md"), "results_exact.md", "epsilon(delta = 0.01/n) of every mechanism at n = 1e3 .. 1e9, a 100-point curve, the evaluators side by side"),
    "core": Suite("bench_core.py", ("--out", "bench/results_core.md"), "results_core.md", "10-RR and BLH at n = 1e3 .. 1e8: time, peak memory, upper/lower, the clone baselines"),
    "reference": Suite("bench_reference.py", ("--quick", "--out", "bench/results_reference.md"), "results_reference.md", "against the reference implementations' numbers (Su et al. FFT, FMT clone, blanket, variation ratio, PLD)", full=("--out", "bench/results_reference.md")),
    "accounting": Suite("bench_accounting.py", (), "results_accounting.md", "the budget accountant: totals over rounds against basic and optimal composition"),
    "methods": Suite("bench_compare.py", ("--quick",), "results_compare.md", "epsilon against n for every method (optimal and baselines), with times", full=()),
    "compose": Suite("bench_compose.py", ("--out", "bench/results_compose.md"), "results_compose.md", "joint and parallel compositions"),
    "profile": Suite("bench_profile.py", ("--out", "bench/results_profile.md"), "results_profile.md", "the batched privacy profile (1e4 epsilons in one call) against the per-epsilon loop"),
    "binary-rr": Suite("bench_exact_count.py", (), "results_exact_count.md", "exact shuffled epsilon of binary randomized response against the decomposition bound"),
    "beyond-pure": Suite("bench_beyond_pure.py", ("--out", "bench/results_beyond_pure.md"), "results_beyond_pure.md", "(eps_i, delta_i)-LDP users: seed002's personalized setting with certified bounds beside mu-GDP"),
    "takagi-liew": Suite("bench_takagi_liew.py", ("--out", "bench/results_takagi_liew.md"), "results_takagi_liew.md", "Gaussian (sigma 0.5 .. 10, n = 1e3 .. 1e8) and k-RR certified brackets beside the shuffle-index asymptotic band after Takagi-Liew, with ratios"),
    "population": Suite("bench_population.py", (), "results_population.md", "personalized populations: per-group epsilon at n = 1e8", stdout=True),
    "gradual": Suite("bench_gradual.py", ("--out", "bench/results_gradual.md"), "results_gradual.md", "gradual release of k-RR (Pan's experiments) and its shuffled central epsilon"),
    "sweep": Suite("bench_sweep.py", ("--points", "2000"), "results_sweep.md", "a sweep serial and on a 2-worker Dask cluster, progress-bar cost", full=()),
    "totals": Suite("bench_totals.py", ("--out", "bench/results_totals.md"), "results_totals.md", "certified totals over rounds (upper, lower, ratio, round-off, what limits the bracket) and the default plan's grand total"),
    "binary-rr-default": Suite("bench_binary_rr.py", ("--src", "after=src"), "results_binary_rr.md", "the default single-round answer for binary RR against the exact worst case: bracket and cold/warm time, eps0 0.5/1/2, n = 1e3 .. 1e9, delta 1e-6/1e-8 (add -- --src before=PATH for a side-by-side column)"),
    "brackets": Suite("bench_brackets.py", (), "results_brackets.md", "per-round brackets by mechanism, eps0 and n, and which side is loose (brute force at small n)", stdout=True),
    "bit-datasets": Suite("bench_bit_datasets.py", (), "results_bit_datasets.md", "BLH, RAPPOR, OUE: every dataset at small n against the certified bracket, and the large-n information constants of the lower and upper", stdout=True),
    "limits": Suite("bench_limits.py", (), "results_limits.md", "the up-front cost model: each audited slow or oversized call answered or refused", stdout=True),
    "budget": Suite("bench_budget.py", (), "results_budget.md", "the plan workflow: start-up against --version, the year report, plan-level queries, the total-over-days plot"),
    "continuous": Suite("bench_continuous.py", ("--out", "bench/results_continuous.md"), "results_continuous.md", "Gaussian and Laplace latency beside k-RR over one seeded sample (median, p90, p99, max; n = 1e8 points), and Chen-Cao-Ge settings with certified bounds"),
    "gaussian-brackets": Suite("bench_gaussian_brackets.py", ("--out", "bench/results_gaussian_brackets.md"), "results_gaussian_brackets.md", "Gaussian brackets: single round (sigma 0.5/1/2, n = 2 .. 1e7) and totals, which side is loose (n = 2, 3 integration truth), the lower bound's datasets and quantisations (add -- --src before=PATH for a side-by-side column)"),
    "laplace-totals": Suite("bench_laplace_totals.py", ("--out", "bench/results_laplace_totals.md"), "results_laplace_totals.md", "compose_rounds of Laplace at n = 3, 30, 1e3, 1e6 with 1 and 365 rounds: wall and CPU time, upper and lower totals (add -- --src before=PATH for a side-by-side column)"),
    "interop": Suite("bench_interop.py", ("--out", "bench/results_interop.md"), "results_interop.md", "dp_accounting PLDAccountant with shuffled rounds against compose_rounds"),
    "approx-rounds": Suite("bench_approx_rounds.py", ("--out", "bench/results_approx_rounds.md"), "results_approx_rounds.md", "compose_rounds of ApproximateLDP (eps0, delta0): totals, brackets, users kept and time, beside the reduction with R beta added to delta"),
    "gaussian-rounds": Suite("bench_gaussian_rounds.py", ("--out", "bench/results_gaussian_rounds.md"), "results_gaussian_rounds.md", "the Gaussian round type in compose_rounds: up-front cost estimate against measured CPU and wall time, and the bracket (sigma 0.25 .. 4, n = 2 .. 1e7; --full: rounds 1, 10, 365 and delta 1e-6, 1e-9 everywhere)", full=("--full", "--out", "bench/results_gaussian_rounds.md")),
    "report": Suite("bench_report.py", (), "results_report.md", "`shuffleamp report` on the default plan: wall and CPU time of fresh processes, outputs compared byte for byte (add -- --src COMMIT=PATH --src COMMIT=src for trees side by side)", threads=True),
    "threads": Suite("bench_threads.py", ("--out", "bench/results_threads.md"), "results_threads.md", "throughput of concurrent epsilon() calls on 1, 2, 4 threads (the kernels release the GIL)", threads=True),
}


def _suite(name: str) -> Suite:
    if name in SUITES:
        return SUITES[name]
    script = f"bench_{name.replace('-', '_')}.py"
    if (BENCH / script).exists():
        return Suite(script, (), f"results_{name.replace('-', '_')}.md", "(unregistered script)")
    raise SystemExit(f"unknown suite {name!r}; known: {', '.join(SUITES)} (python bench/run.py --list)")


def _commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return out + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> str:
    """One line describing the machine (cores, memory, Python, platform)."""
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = f", {int(f.readline().split()[1]) / 2**20:.0f} GiB"
    except OSError:
        pass
    return f"{os.cpu_count()} cores{mem}, Python {platform.python_version()}, {platform.platform()}"


def run(name: str, full: bool = False, extra: tuple = (), dry: bool = False) -> int:
    """Run one suite as a subprocess; returns its exit code."""
    s = _suite(name)
    args = s.full if (full and s.full is not None) else s.args
    cmd = [sys.executable, str(BENCH / s.script), *args, *extra]
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(ROOT / "src"))
    if not s.threads:
        env.setdefault("OMP_NUM_THREADS", "1")
    shown = "python bench/" + " ".join([s.script, *args, *extra]) + (f" > bench/{s.results}" if s.stdout else "")
    print(f"== {name}: {shown}", flush=True)
    if dry:
        return 0
    RUNS.mkdir(exist_ok=True)
    t0 = time.time()
    if s.stdout:
        with open(BENCH / s.results, "w") as out:
            rc = subprocess.call(cmd, cwd=ROOT, env=env, stdout=out)
    else:
        rc = subprocess.call(cmd, cwd=ROOT, env=env)
    wall = time.time() - t0
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0))
    with open(RUNS / "runs.log", "a") as f:
        f.write(f"{stamp}\t{name}\t{_commit()}\trc={rc}\t{wall:.1f}s\t{shown}\t{machine()}\n")
    results = s.full_results if (full and s.full is not None and s.full_results) else s.results
    print(f"== {name}: exit {rc}, {wall:.1f} s, results: bench/{results}", flush=True)
    return rc


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description="Run named benchmark suites (see bench/README.md).")
    ap.add_argument("suites", nargs="*", help="suite names, or 'all'")
    ap.add_argument("--list", action="store_true", help="list the suites and exit")
    ap.add_argument("--full", action="store_true", help="full-size runs where a suite has one")
    ap.add_argument("--dry-run", action="store_true", help="print the commands only")
    a = ap.parse_args(argv)
    if a.list or not a.suites:
        width = max(map(len, SUITES))
        for name, s in SUITES.items():
            print(f"{name:<{width}}  {s.script:<24} -> {s.results:<26} {s.about}")
        return 0
    names = list(SUITES) if a.suites == ["all"] else a.suites
    for n in names:
        _suite(n)                          # unknown names fail before anything runs
    failed = [n for n in names if run(n, a.full, tuple(extra), a.dry_run) != 0]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
