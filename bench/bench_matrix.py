"""Matrix mechanisms and joint compositions, side by side over source trees (issue 15, items 6-7).

Cases (every one a ``sa.epsilon(mechanism, n, delta)`` call in a worker subprocess of
``bench_latency.py``, memory-capped, with a timeout; each case is sent to every tree in turn so
that all trees see the same machine load):

* the slow matrix and joint reproducers of the latency suite;
* random matrices (the suite's construction, D and Y log-uniform in 2..64, one seed) at
  n = 10, 1e3, 1e5, 1e8, delta = 1e-8;
* the refusals: 2 x 100000 at n = 1e3 and 500 x 500 at n = 1e5 (time to the ResourceLimitError).

Usage::

    python bench/bench_matrix.py --src before=/work/before/src --src after=src --out bench/results_matrix.md

``--prep`` measures the preparation of the GPARV families instead (in-process, no time budget): for each
case of :func:`prep_cases` (simple mechanisms, parallel / subsample / joint compositions and matrices of
the latency suite) and each tree, on fresh mechanism objects (no cache hit), the minimum over ``--reps``
repetitions of the CPU time of ``bounds._families`` (upper and lower) and of one whole ``sa.epsilon``
call with the time inside the compiled ε search (``exact.epsilon_search``) split off; the trees run in
two worker processes that receive every case in turn (same machine load), and the report checks that the
families' law keys and the certified (upper, lower) are identical::

    python bench/bench_matrix.py --prep --src before=/work/before/src --src after=src --out /tmp/prep.md
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_latency import Worker, make_suite  # noqa: E402

REPRO_IDS = [172, 307, 336, 237, 314, 673, 741, 590, 665, 407, 742, 726, 359, 761]


def cases(n_random: int, seed: int = 7) -> list[dict]:
    suite = {s["id"]: s for s in make_suite(2000)}
    out = []
    for i in REPRO_IDS:
        s = dict(suite[i])
        s["group"] = f"reproducer ({s['kind']})"
        out.append(s)
    rng = random.Random(seed)
    k = 10_000
    for _ in range(n_random):
        D = int(round(math.exp(rng.uniform(math.log(2), math.log(64)))))
        Y = int(round(math.exp(rng.uniform(math.log(2), math.log(64)))))
        eps0 = math.exp(rng.uniform(math.log(0.05), math.log(10.0)))
        mseed = rng.randrange(2 ** 31)
        for n in (10, 1000, 10 ** 5, 10 ** 8):
            out.append({"kind": "matrix", "eps0": eps0, "D": D, "Y": Y, "seed": mseed, "n": n, "delta": 1e-8,
                        "id": k, "group": f"random n={n:.0e}"})
            k += 1
    out.append({"kind": "matrix", "eps0": 2.0, "D": 2, "Y": 100_000, "seed": 1, "n": 1000, "delta": 1e-8,
                "id": k, "group": "refusal 2x100000"})
    out.append({"kind": "matrix", "eps0": 2.0, "D": 500, "Y": 500, "seed": 1, "n": 10 ** 5, "delta": 1e-8,
                "id": k + 1, "group": "refusal 500x500"})
    return out


PREP_SUITE_IDS = [1836, 1887, 541, 122, 1583, 1096]


def prep_cases() -> list[dict]:
    """Family-construction cases: fresh simple mechanisms, compositions, and suite matrices / joints."""
    suite = {s["id"]: s for s in make_suite(2000)}
    out = [
        {"kind": "krr", "eps0": 1.3, "k": 10, "n": 10 ** 6, "delta": 1e-8},
        {"kind": "krr", "eps0": 0.4, "k": 700, "n": 10 ** 5, "delta": 1e-8},
        {"kind": "blh", "eps0": 1.1, "d": None, "n": 10 ** 6, "delta": 1e-8},
        {"kind": "rappor", "eps0": 2.0, "d": 5, "n": 10 ** 6, "delta": 1e-8},
        {"kind": "oue", "eps0": 0.7, "d": 9, "n": 10 ** 6, "delta": 1e-8},
        {"kind": "hr", "eps0": 1.5, "d": 64, "n": 10 ** 6, "delta": 1e-8},
        {"kind": "parallel", "weights": [0.3, 0.7], "n": 10 ** 6, "delta": 1e-8,
         "components": [{"kind": "krr", "eps0": 1.0, "k": 12}, {"kind": "krr", "eps0": 2.5, "k": 12}]},
        {"kind": "subsample", "q": 0.1, "component": {"kind": "rappor", "eps0": 1.5, "d": 5}, "n": 10 ** 6,
         "delta": 1e-8},
        {"kind": "subsample", "q": 0.05, "component": {"kind": "hr", "eps0": 2.0, "d": 16}, "n": 10 ** 6,
         "delta": 1e-8},
    ]
    for i, s in enumerate(out):
        s["id"] = -1 - i
    for i in PREP_SUITE_IDS:
        out.append(dict(suite[i]))
    return out


def _prep_describe(s) -> str:
    if s["kind"] == "matrix":
        return f"suite {s['id']}: matrix {s['D']}x{s['Y']}"
    if s["kind"] == "joint":
        return f"suite {s['id']}: joint " + " x ".join(f"{c['kind']}({c.get('k') or c.get('d')})"
                                                        for c in s["components"])
    if s["kind"] == "parallel":
        return "parallel " + " + ".join(f"{w:g} krr(eps0={c['eps0']:g}, k={c['k']})"
                                        for w, c in zip(s["weights"], s["components"]))
    if s["kind"] == "subsample":
        c = s["component"]
        return f"subsample q={s['q']:g} of {c['kind']}(eps0={c['eps0']:g}, {c.get('k') or c.get('d')})"
    return f"{s['kind']}(eps0={s['eps0']:g}, {s.get('k') or s.get('d')})"


def prep_worker(reps: int):
    """Worker of ``--prep``: one JSON case per stdin line, one JSON record per stdout line."""
    import hashlib
    import json
    import time
    import warnings
    warnings.simplefilter("ignore")
    from bench_latency import build
    import shuffleamp as sa
    from shuffleamp import bounds, decomposition, exact
    acc = [0.0]
    orig = exact.epsilon_search

    def timed(*a, **k):
        t = time.process_time()
        try:
            return orig(*a, **k)
        finally:
            acc[0] += time.process_time() - t
    exact.epsilon_search = timed
    s0 = make_suite(2000)[0]
    sa.epsilon(build(s0), s0["n"], s0["delta"])                 # imports, first-call costs
    print(json.dumps({"ready": sa.__file__}), flush=True)
    for line in sys.stdin:
        spec = json.loads(line)
        fam, tot, ker = math.inf, math.inf, math.inf
        for _ in range(reps):
            m = build(spec)
            t = time.process_time()
            up = bounds._families(m, "optimal", "upper")
            lo = bounds._families(m, "optimal", "lower")
            fam = min(fam, time.process_time() - t)
        keys = hashlib.sha256(repr([decomposition.law_key(f) for f in up + lo]).encode()).hexdigest()[:12]
        for _ in range(reps):
            bounds._FAMILY_CACHE.clear()
            m = build(spec)
            acc[0] = 0.0
            t = time.process_time()
            r = sa.epsilon(m, spec["n"], spec["delta"])
            dt = time.process_time() - t
            if dt < tot:
                tot, ker = dt, acc[0]
        print(json.dumps({"id": spec["id"], "families": fam, "total": tot, "kernel": ker, "keys": keys,
                          "families_count": [len(up), len(lo)], "upper": r.upper, "lower": r.lower}), flush=True)


def prep_main(args, trees):
    import json
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    procs = {}
    for lab, path in trees.items():
        env = dict(os.environ, PYTHONPATH=os.path.abspath(path) + os.pathsep + here, OMP_NUM_THREADS="1")
        procs[lab] = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--prep-worker", "--reps",
                                       str(args.reps)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                      text=True, bufsize=1)
        json.loads(procs[lab].stdout.readline())
    specs = prep_cases()
    started = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")
    recs = {lab: {} for lab in trees}
    try:
        for s in specs:
            for lab, p in procs.items():
                p.stdin.write(json.dumps(s) + "\n")
                p.stdin.flush()
                recs[lab][s["id"]] = json.loads(p.stdout.readline())
            print(_prep_describe(s), {lab: round(recs[lab][s["id"]]["total"] * 1e3, 2) for lab in trees}, flush=True)
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
    labels = list(trees)
    lines = ["## Family preparation (`bench_matrix.py --prep`)\n",
             f"Run {started} UTC on {platform.machine()}, {os.cpu_count()} cores shared with other jobs, "
             f"OMP_NUM_THREADS=1; CPU time (process_time), minimum of {args.reps} repetitions on fresh mechanism "
             "objects, the trees in two workers that receive every case in turn. Trees: "
             + ", ".join(f"`{lab}` = {p}" for lab, p in trees.items()) + ". `families` = `bounds._families` upper + "
             "lower; `total` = one `sa.epsilon(mechanism, n, delta)`; `kernel` = its time in the compiled ε "
             "search; `same` = identical family law keys and identical certified (upper, lower) in every tree.\n",
             "| case | n | " + " | ".join(f"{lab}: families / total / kernel ms" for lab in labels) + " | same |",
             "|---|---|" + "---|" * len(labels) + "---|"]
    for s in specs:
        rs = [recs[lab][s["id"]] for lab in labels]
        same = all((r["keys"], r["upper"], r["lower"]) == (rs[0]["keys"], rs[0]["upper"], rs[0]["lower"]) for r in rs)
        cells = [f"{1e3 * r['families']:.3f} / {1e3 * r['total']:.2f} / {1e3 * r['kernel']:.2f}" for r in rs]
        lines.append(f"| {_prep_describe(s)} | {s['n']:.3g} | " + " | ".join(cells) + f" | {'yes' if same else '**no**'} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


def _ms(x):
    return "–" if not math.isfinite(x) else (f"{1e3 * x:.1f}" if x < 10 else f"{1e3 * x:.0f}")


def _pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return math.nan
    return xs[min(len(xs) - 1, max(0, int(math.ceil(q * len(xs))) - 1))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable)")
    ap.add_argument("--random", type=int, default=8, help="random matrices (each at 4 values of n)")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--mem-gb", type=float, default=6.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--prep", action="store_true", help="time the family preparation (see the module docstring)")
    ap.add_argument("--prep-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--reps", type=int, default=7, help="--prep: repetitions per case (minimum reported)")
    args = ap.parse_args(argv)
    if args.prep_worker:
        return prep_worker(args.reps)
    here = os.path.dirname(os.path.abspath(__file__))
    trees = dict(s.split("=", 1) for s in (args.src or [f"this={os.path.join(here, '..', 'src')}"]))
    if args.prep:
        return prep_main(args, trees)
    workers = {lab: Worker(lab, path, args.mem_gb) for lab, path in trees.items()}
    specs = cases(args.random)
    started = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")
    recs = {lab: {} for lab in trees}
    try:
        for s in specs:
            spec = {k: v for k, v in s.items() if k != "group"}
            for lab, w in workers.items():
                r = w.run(spec, args.timeout)
                recs[lab][s["id"]] = r
            print(s["group"], s.get("D"), s.get("Y"), s["n"],
                  {lab: (recs[lab][s["id"]]["outcome"], round(recs[lab][s["id"]].get("seconds", math.nan), 3))
                   for lab in trees}, flush=True)
    finally:
        for w in workers.values():
            w.stop()
    finished = datetime.datetime.utcnow().strftime("%H:%M")
    labels = list(trees)
    lines = ["# Matrix mechanisms and joint compositions (bench/bench_matrix.py)\n",
             f"Run {started} – {finished} UTC on {platform.machine()}, {os.cpu_count()} cores shared with other "
             f"jobs (not idle: compare columns, not absolute values), OMP_NUM_THREADS=1, timeout {args.timeout} s. "
             "Trees: " + ", ".join(f"`{lab}` = {p}" for lab, p in trees.items()) + ".\n",
             "## Every case (seconds; `refused` = typed ResourceLimitError)\n",
             "| group | case | n | delta | " + " | ".join(labels) + " | " +
             " | ".join(f"{lab} upper / lower" for lab in labels) + " |",
             "|---|---|---|---|" + "---|" * (2 * len(labels))]
    for s in specs:
        desc = (f"{s['D']}x{s['Y']} eps0={s['eps0']:.4g}" if s["kind"] == "matrix" else
                " x ".join(f"{c['kind']}({c['eps0']:.4g},{c.get('k') or c.get('d')})" for c in s["components"]))
        cells, vals = [], []
        for lab in labels:
            r = recs[lab][s["id"]]
            cells.append(f"{r['outcome']} {r.get('seconds', math.nan):.3f}")
            vals.append(f"{r['upper']:.6g} / {r['lower']:.6g}" if r["outcome"] == "ok" else "–")
        lines.append(f"| {s['group']} | {desc} | {s['n']:.3g} | {s['delta']:.3g} | " + " | ".join(cells) + " | "
                     + " | ".join(vals) + " |")
    lines += ["", "## Summary by group (median / max seconds)\n",
              "| group | cases | " + " | ".join(labels) + " |", "|---|---|" + "---|" * len(labels)]
    groups = []
    for s in specs:
        if s["group"] not in groups:
            groups.append(s["group"])
    for g in groups + ["**all matrix**"]:
        ids = [s["id"] for s in specs if (s["group"] == g or (g == "**all matrix**" and s["kind"] == "matrix"))]
        cells = []
        for lab in labels:
            t = [recs[lab][i].get("seconds", math.nan) for i in ids]
            t = [x for x in t if math.isfinite(x)]
            cells.append(f"{_pct(t, .5):.3f} / {max(t, default=math.nan):.3f}")
        lines.append(f"| {g} | {len(ids)} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
