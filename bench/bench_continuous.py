"""Continuous randomizers beside k-RR: latency of one certified ε(δ), and seed002's experiment settings.

Part 1 (latency): ``sa.epsilon(mechanism, n, delta)`` (upper and lower, default evaluator) for k-RR (k = 10),
Laplace and the Gaussian randomizer (Δ = 1) over one seeded random sample, in one process and one run (warm-up
calls per randomizer first, :func:`warm_up`: imports, compiled kernels and the FFT backend, one-time costs of a
process): case i draws n log-uniform in [2, 1e9], δ log-uniform in [1e-12, 1e-3]
and one quantile q, and each randomizer's privacy parameter is that quantile of its log-uniform range (k-RR
and Laplace ε0 in [0.1, 10]; Gaussian Δ/σ in [0.05, 8], the largest accepted); every randomizer sees the same
(n, δ).  Then the n = 1e8 points: three privacy levels each (ε0 = 0.5, 2, 8; σ = 8, 2, 0.5) at δ = 1e-6, 1e-10.
Targets for Laplace and Gaussian: median <= 10 ms and max <= 200 ms over the sample, <= 50 ms at n = 1e8.

Part 2 (Chen, Cao, Ge, "A Generalized Shuffle Framework for Privacy Amplification", AAAI 2024): certified
upper and lower ε beside the paper's μ-GDP value (``baselines.gdp_epsilon``, labelled sound=False) for
its personalized binary randomized response (n = 10^4, conservative / moderate / liberal users) and its
Gaussian SGD setting (m = 100 clients, δ_j = 1e-5, the paper's σ_j = Δ·sqrt(2 ln(1.25/δ_j))/ε_j, so
Δ/σ_j = ε_j / sqrt(2 ln(1.25e5)); per epoch at central δ = 1e-5 and over T = 50 epochs).

Several source trees can be measured side by side in one run (``--src before=/path/to/old/src --src after=src``):
each tree runs in its own worker process and every case is sent to each worker in turn, so both see the same
machine load (one row per randomizer and tree; part 2 then runs on this tree only).

Usage::

    python bench/bench_continuous.py --out bench/results_continuous.md            # 100 cases per randomizer
    python bench/bench_continuous.py --cases 300 --out bench/results_continuous.md
    python bench/bench_continuous.py --src before=/tmp/old/src --src after=src --only Gaussian --no-seed002
    python bench/bench_continuous.py --seed 20261127 --seed 1 --out bench/results_continuous.md   # two samples
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

if "--worker" not in sys.argv:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import shuffleamp as sa  # noqa: E402
from shuffleamp import baselines  # noqa: E402
from shuffleamp.errors import ResourceLimitError  # noqa: E402
from shuffleamp.mechanisms import KRR, Laplace  # noqa: E402

SEED = 20261127
N_RANGE = (2, 10 ** 9)
DELTA_RANGE = (1e-12, 1e-3)
EPS0_RANGE = (0.1, 10.0)
MU_RANGE = (0.05, 8.0)
RANDOMIZERS = {
    "k-RR (k=10)": lambda q: KRR(_logq(EPS0_RANGE, q), 10),
    "Laplace": lambda q: Laplace(_logq(EPS0_RANGE, q)),
    "Gaussian (Δ = 1)": lambda q: sa.Gaussian(sigma=1.0 / _logq(MU_RANGE, q), sensitivity=1.0),
}
AT_1E8 = {
    "k-RR (k=10)": [KRR(0.5, 10), KRR(2.0, 10), KRR(8.0, 10)],
    "Laplace": [Laplace(0.5), Laplace(2.0), Laplace(8.0)],
    "Gaussian (Δ = 1)": [sa.Gaussian(sigma=8.0), sa.Gaussian(sigma=2.0), sa.Gaussian(sigma=0.5)],
}


def _logq(rng, q):
    return float(math.exp(math.log(rng[0]) + q * (math.log(rng[1]) - math.log(rng[0]))))


def sample(cases: int, seed: int = SEED):
    """The seeded sample: (n, δ, q) per case."""
    g = np.random.default_rng(seed)
    n = np.exp(g.uniform(math.log(N_RANGE[0]), math.log(N_RANGE[1]), cases)).round().astype(np.int64)
    d = np.exp(g.uniform(math.log(DELTA_RANGE[0]), math.log(DELTA_RANGE[1]), cases))
    q = g.uniform(0.0, 1.0, cases)
    return [(max(int(a), 2), float(b), float(c)) for a, b, c in zip(n, d, q)]


def _one(m, n, d):
    """(wall ms, CPU ms of this process, (status, upper/lower))."""
    t, c = time.perf_counter(), time.process_time()
    try:
        r = sa.epsilon(m, n, d)
        gap = r.upper / r.lower if r.lower > 0 else (1.0 if r.upper == 0 else math.inf)
        assert r.lower <= r.upper
        out = ("ok", gap)
    except ResourceLimitError as e:
        out = (f"refused ({e.parameter})", None)
    return (time.perf_counter() - t) * 1e3, (time.process_time() - c) * 1e3, out


def _pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(p / 100 * len(xs)) - 1))]


def warm_up():
    """One call per randomizer, and one that the certified FFT engine answers (its backend's import, about 0.2 - 1 s
    once per process, would otherwise land on the first case that needs it)."""
    for make in RANDOMIZERS.values():
        sa.epsilon(make(0.5), 1000, 1e-6)
    sa.delta(sa.Gaussian(sigma=1.0), 10, 1.0, evaluator="fft")


def _case(name, q=None, k=None, n=None, d=None):
    """One case in this process: the randomizer ``name`` at quantile q (or the k-th n = 1e8 point)."""
    m = RANDOMIZERS[name](q) if k is None else AT_1E8[name][k]
    dt, dc, (status, gap) = _one(m, n, d)
    return {"ms": dt, "cpu": dc, "status": status, "gap": gap, "what": f"{m.describe()} n={n} δ={d:.2g}"}


def worker():
    """Answer cases sent as JSON lines on stdin (``--src``): one JSON line per case on stdout."""
    warm_up()
    print(json.dumps({"ready": sa.__file__}), flush=True)
    for line in sys.stdin:
        print(json.dumps(_case(**json.loads(line))), flush=True)


class _Tree:
    """A worker process running one source tree."""

    def __init__(self, label, src):
        env = dict(os.environ, PYTHONPATH=os.path.abspath(src), OMP_NUM_THREADS="1")
        self.label = label
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
        self.module = json.loads(self.proc.stdout.readline())["ready"]

    def __call__(self, **case):
        self.proc.stdin.write(json.dumps(case) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def latency(cases: int, trees=None, only=None, seed: int = SEED):
    """Rows of the latency table: one per randomizer (and per tree with ``trees``, a dict label -> _Tree)."""
    pts = sample(cases, seed)
    runners = trees or {None: lambda **case: _case(**case)}
    if trees is None:
        warm_up()
    rows = []
    for name in RANDOMIZERS:
        if only and only not in name:
            continue
        res = {lab: [] for lab in runners}
        at8 = {lab: [] for lab in runners}
        for n, d, q in pts:
            for lab, run in runners.items():
                res[lab].append(run(name=name, q=q, n=n, d=d))
        for k in range(len(AT_1E8[name])):
            for d in (1e-6, 1e-10):
                for lab, run in runners.items():
                    r = run(name=name, k=k, n=10 ** 8, d=d)
                    at8[lab].append((r["ms"], r["cpu"]))
        for lab in runners:
            rs = res[lab]
            times, cpus = [r["ms"] for r in rs], [r["cpu"] for r in rs]
            gaps = [r["gap"] for r in rs if r["gap"] is not None]
            refused = {}
            for r in rs:
                if r["gap"] is None:
                    refused[r["status"]] = refused.get(r["status"], 0) + 1
            worst = max(rs, key=lambda r: r["ms"])["what"]
            rows.append(dict(name=name if lab is None else f"{name} [{lab}]", cases=len(times),
                             median=statistics.median(times), p90=_pct(times, 90),
                             cpu_median=statistics.median(cpus), cpu_p99=_pct(cpus, 99), cpu_max=max(cpus),
                             p99=_pct(times, 99), max=max(times), worst=worst,
                             at8_median=statistics.median(x[0] for x in at8[lab]),
                             at8_max=max(x[0] for x in at8[lab]), at8_cpu_max=max(x[1] for x in at8[lab]),
                             gap_median=statistics.median(gaps) if gaps else math.nan,
                             gap_max=max(gaps) if gaps else math.nan,
                             refused=", ".join(f"{v} {k}" for k, v in sorted(refused.items())) or "0"))
    return rows


def gspa_gaussian_mu(eps):
    return math.sqrt(eps / math.sqrt(2 * math.log(1.25e5)))


def seed002():
    out = []
    # personalized binary randomized response (Algorithm 2): n = 10^4, f_c, f_m, f_l = 0.54, 0.37, 0.09
    n = 10 ** 4
    fr = [(0.54, 0.1), (0.37, 0.5), (0.09, 1.0)]
    counts = [round(f * n) for f, _ in fr]
    pop = sa.population([(KRR(e, 2), c) for (_, e), c in zip(fr, counts)])
    eps_list = np.concatenate([[e] * c for (_, e), c in zip(fr, counts)])
    for delta in (1e-4, 1e-6):
        t = time.perf_counter()
        r = sa.epsilon(pop, delta=delta)
        dt = time.perf_counter() - t
        g = baselines.gdp_epsilon(eps_list, None, delta)
        out.append(("binary RR, 54/37/9 % at ε0 = 0.1/0.5/1, n = 10^4", delta, 1, r.upper, r.lower, g.estimate, dt))
    # Gaussian SGD (Algorithm 3, Table 3): m = 100 clients, δ_j = 1e-5, Δ/σ_j = ε_j / sqrt(2 ln(1.25e5))
    c = math.sqrt(2 * math.log(1.25e5))
    m = 100
    for label, eps_groups in (("Constant ε_j = 0.5", [(0.5, 100)]),
                              ("Mixed constant: 50 % 0.5, 50 % 0.01", [(0.5, 50), (0.01, 50)])):
        mechs = [(sa.Gaussian(sigma=c / e, sensitivity=1.0), k) for e, k in eps_groups]
        eps_list = np.concatenate([[e] * k for e, k in eps_groups])
        dl = np.full(m, 1e-5)
        delta = 1e-5
        t = time.perf_counter()
        if len(mechs) == 1:
            r = sa.epsilon(mechs[0][0], m, delta)
            up, lo = r.upper, r.lower
            try:
                tot = sa.compose_rounds([(mechs[0][0], m, 50)], delta=delta)
                tot_up, tot_lo = tot.upper, tot.lower
            except ResourceLimitError as e:        # the default 10 s budget is wall clock: a loaded machine
                tot_up = tot_lo = f"refused ({e.resource}, load {os.getloadavg()[0]:.1f})"
        else:
            r = sa.epsilon(sa.population(mechs), delta=delta)
            up, lo = r.upper, r.lower
            tot_up = tot_lo = None
        dt = time.perf_counter() - t
        g = baselines.gdp_epsilon(eps_list, dl, delta)
        mu = baselines.gdp_mu(eps_list, dl)
        g50 = baselines.gdp_epsilon_mu(math.sqrt(50) * mu, delta)
        out.append((f"Gaussian SGD, m = 100, {label}", delta, 1, up, lo, g.estimate, dt))
        if tot_up is not None:
            out.append((f"Gaussian SGD, m = 100, {label}", delta, 50, tot_up, tot_lo, g50, None))
        if len(mechs) == 1:
            # the same users as a one-group population (the population path must reach the single round)
            t = time.perf_counter()
            rp = sa.epsilon(sa.population(mechs), delta=delta)
            out.append((f"Gaussian SGD, m = 100, {label}, as a population", delta, 1, rp.upper, rp.lower, g.estimate,
                        time.perf_counter() - t))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None)
    ap.add_argument("--cases", type=int, default=100, help="cases of the seeded sample (per randomizer)")
    ap.add_argument("--no-seed002", action="store_true", help="skip part 2 (Chen-Cao-Ge settings)")
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable): side by side")
    ap.add_argument("--only", default=None, help="only the randomizers whose name contains this")
    ap.add_argument("--seed", type=int, action="append", default=None,
                    help=f"seed of the sample (repeatable: one table per seed; default {SEED})")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker()
    t0 = time.time()
    load0 = os.getloadavg()
    trees = {lab: _Tree(lab, path) for lab, path in (x.split("=", 1) for x in args.src)} or None
    seeds = args.seed or [SEED]
    try:
        lat = {s: latency(args.cases, trees, args.only, s) for s in seeds}
    finally:
        for t in (trees or {}).values():
            t.close()
    load1 = os.getloadavg()
    s2 = [] if args.no_seed002 else seed002()
    cmd = "python bench/bench_continuous.py" + (f" --cases {args.cases}" if args.cases != 100 else "") + \
        "".join(f" --src {x}" for x in args.src) + (f" --only {args.only}" if args.only else "") + \
        "".join(f" --seed {s}" for s in (args.seed or [])) + (" --no-seed002" if args.no_seed002 else "") + \
        (f" --out {args.out}" if args.out else "")
    lines = ["# Continuous randomizers beside k-RR", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared with other jobs), Python "
             f"{platform.python_version()}; load average {load0[0]:.1f} at the start, {load1[0]:.1f} after part 1; "
             f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; run time {time.time() - t0:.0f} s.",
             f"Command: `{cmd}` (or `python bench/run.py continuous`)", "",
             "## Latency of one certified ε(δ) (upper and lower)", ""]
    for seed, rows in lat.items():
        lines += [f"Seeded sample (seed {seed}, {args.cases} cases, the same (n, δ) for every randomizer): n log-uniform "
                  "in [2, 1e9], δ log-uniform in [1e-12, 1e-3]; ε0 log-uniform in [0.1, 10] (k-RR, Laplace), Δ/σ in "
                  "[0.05, 8] (Gaussian, Δ = 1), one quantile per case.  At n = 1e8: ε0 = 0.5, 2, 8 / σ = 8, 2, 0.5 at "
                  "δ = 1e-6, 1e-10.  Targets (Laplace, Gaussian): median <= 10 ms, max <= 200 ms, <= 50 ms at "
                  "n = 1e8.  Wall-clock times on a shared, loaded machine: compare rows of one run, not runs; the CPU "
                  "time of the process (single-threaded kernels) depends less on the load.", "",
                  "| randomizer | cases | median (ms) | p90 (ms) | p99 (ms) | max (ms) | CPU median / p99 / max (ms) | "
                  "n = 1e8 median / max (CPU max) (ms) | upper/lower median / max | refused | slowest case |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['name']} | {r['cases']} | {r['median']:.1f} | {r['p90']:.1f} | {r['p99']:.0f} | "
                         f"{r['max']:.0f} | {r['cpu_median']:.1f} / {r['cpu_p99']:.0f} / {r['cpu_max']:.0f} | "
                         f"{r['at8_median']:.1f} / {r['at8_max']:.1f} ({r['at8_cpu_max']:.1f}) | "
                         f"{r['gap_median']:.3g} / {r['gap_max']:.3g} | {r['refused']} | {r['worst']} |")
        lines.append("")
    lines.pop()
    if s2:
        lines += ["", "## Chen–Cao–Ge (AAAI 2024) settings: certified bounds beside the μ-GDP value", "",
                  "μ-GDP: the paper's Theorem 2 value (asymptotic, not certified: `sound=False`).  The certified "
                  "numbers are this library's upper and lower bounds (users' budgets attached to users, replace-one).",
                  "",
                  "| setting | central δ | epochs | ε upper (certified) | ε lower (certified) | μ-GDP ε (not a bound) | time (s) |",
                  "|---|---|---|---|---|---|---|"]
        for label, d, T, up, lo, g, dt in s2:
            up, lo = (f"{x:.4g}" if isinstance(x, float) else str(x) for x in (up, lo))
            lines.append(f"| {label} | {d:g} | {T} | {up} | {lo} | {g:.4g} | "
                         f"{'' if dt is None else f'{dt:.2f}'} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
