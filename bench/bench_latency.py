"""Tail latency of ``shuffleamp.epsilon`` over a fixed, seeded random suite shaped like the audit's.

Every case is one ``sa.epsilon(mechanism, n, delta)`` call with the default evaluator (upper and
lower).  The suite draws every mechanism (k-RR, BLH, RAPPOR, OUE, HR, Laplace, random matrices up
to 64x64, joint / parallel / subsampled compositions), n log-uniform in [2, 1e9], eps0
log-uniform in [0.05, 10] and delta log-uniform in [1e-12, 1e-2], from one seed.

Each call runs in a worker subprocess (memory-capped with RLIMIT_AS) so that a hang is recorded as
a timeout and an out-of-memory as an error, not a stuck benchmark.  Several source trees can be
measured side by side in one run (``--src before=/path/to/old/src --src after=src``): every case
is sent to each tree's worker in turn, so both see the same machine load.

Usage::

    python bench/bench_latency.py --quick                      # 300 cases, this tree
    python bench/bench_latency.py --src before=/tmp/old/src --src after=src \\
        --out bench/results_latency.md

Outcomes: ``ok`` (timed), ``refused`` (a typed ``ResourceLimitError``, timed), ``error`` (any other
exception, or the worker died, e.g. out of memory), ``timeout`` (killed after ``--timeout`` s).
The percentiles are over ok and refused calls; a timeout counts as ``--timeout`` seconds in them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import select
import subprocess
import sys
import time

SUITE_SEED = 20261123
NDEC = [(2, 10), (10, 1e2), (1e2, 1e3), (1e3, 1e4), (1e4, 1e5), (1e5, 1e6), (1e6, 1e7), (1e7, 1e8), (1e8, 1e9 + 1)]


# ---------------------------------------------------------------------------- the suite
def _lu(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def _component(rng, eps0, kind=None):
    kind = kind or rng.choice(["krr", "blh", "rappor", "oue", "hr"])
    if kind == "krr":
        return {"kind": "krr", "eps0": eps0, "k": int(round(_lu(rng, 2, 1000)))}
    if kind == "hr":
        return {"kind": "hr", "eps0": eps0, "d": 2 ** rng.randint(2, 10)}
    return {"kind": kind, "eps0": eps0, "d": rng.choice([None, rng.randint(2, 12)])}


def make_suite(cases: int, seed: int = SUITE_SEED) -> list[dict]:
    """The fixed suite: a list of JSON-serialisable case specs."""
    rng = random.Random(seed)
    kinds = ["krr", "blh", "rappor", "oue", "hr", "laplace", "matrix", "joint", "parallel", "subsample"]
    weights = [2, 1, 1, 1, 1, 1.5, 1.5, 1, 1, 1]
    out = []
    for i in range(cases):
        kind = rng.choices(kinds, weights)[0]
        eps0 = _lu(rng, 0.05, 10.0)
        if kind in ("krr", "blh", "rappor", "oue", "hr"):
            spec = _component(rng, eps0, kind)
        elif kind == "laplace":
            spec = {"kind": "laplace", "eps0": eps0}
        elif kind == "matrix":
            D = int(round(_lu(rng, 2, 64)))
            Y = int(round(_lu(rng, 2, 64)))
            spec = {"kind": "matrix", "eps0": eps0, "D": D, "Y": Y, "seed": rng.randrange(2 ** 31)}
        elif kind == "joint":
            m = rng.randint(2, 3)
            spec = {"kind": "joint", "components": [_component(rng, eps0 / m) for _ in range(m)]}
        elif kind == "parallel":
            k = rng.randint(2, 50)
            w = rng.uniform(0.05, 0.95)
            spec = {"kind": "parallel", "weights": [w, 1 - w],
                    "components": [{"kind": "krr", "eps0": eps0, "k": k},
                                   {"kind": "krr", "eps0": _lu(rng, 0.05, 10.0), "k": k}]}
        else:
            spec = {"kind": "subsample", "q": _lu(rng, 0.01, 1.0), "component": _component(rng, eps0)}
        spec["n"] = int(round(_lu(rng, 2, 1e9)))
        spec["delta"] = _lu(rng, 1e-12, 1e-2)
        spec["id"] = i
        out.append(spec)
    return out


def build(spec):
    """Mechanism of a case spec (imports the package under test)."""
    from shuffleamp import compose, mechanisms as M
    import numpy as np
    k = spec["kind"]
    if k == "krr":
        return M.KRR(spec["eps0"], spec["k"])
    if k == "blh":
        return M.BLH(spec["eps0"], spec["d"])
    if k == "rappor":
        return M.RAPPOR(spec["eps0"], spec["d"])
    if k == "oue":
        return M.OUE(spec["eps0"], spec["d"])
    if k == "hr":
        return M.HadamardResponse(spec["eps0"], spec["d"])
    if k == "laplace":
        return M.Laplace(spec["eps0"])
    if k == "matrix":
        g = np.random.default_rng(spec["seed"])
        U = g.random((spec["D"], spec["Y"]))
        P = np.exp(0.5 * spec["eps0"] * U)          # column ratios <= e^{eps0/2}, row sums within e^{eps0/2}
        P /= P.sum(axis=1, keepdims=True)
        return M.MatrixMechanism(P)
    if k == "joint":
        return compose.joint(*[build(c) for c in spec["components"]])
    if k == "parallel":
        return compose.parallel(list(zip(spec["weights"], [build(c) for c in spec["components"]])))
    if k == "subsample":
        return compose.subsample(build(spec["component"]), spec["q"])
    raise ValueError(k)


# ---------------------------------------------------------------------------- worker
def worker(mem_gb: float):
    import resource
    lim = int(mem_gb * 2 ** 30)
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    import warnings
    warnings.simplefilter("ignore")
    import shuffleamp as sa
    from shuffleamp.errors import ResourceLimitError
    from shuffleamp.mechanisms import KRR
    # warm the lazy imports of a long-running service: the exact evaluator, the exact count law of binary
    # RR and the FFT backend (importing pyFFTW costs ~0.4 s once per process)
    sa.epsilon(KRR(1.0, 10), 1000, 1e-6)
    sa.epsilon(KRR(1.0, 2), 10 ** 6, 1e-6)
    from shuffleamp import fft_engine
    fft_engine.backend_name()
    out = sys.stdout
    out.write(json.dumps({"ready": sa.__file__}) + "\n")
    out.flush()
    for line in sys.stdin:
        spec = json.loads(line)
        rec = {"id": spec["id"]}
        try:
            mech = build(spec)
            t0 = time.perf_counter()
            try:
                r = sa.epsilon(mech, spec["n"], spec["delta"])
                rec.update(outcome="ok", upper=r.upper, lower=r.lower)
            except ResourceLimitError as e:
                rec.update(outcome="refused", message=str(e)[:200])
            rec["seconds"] = time.perf_counter() - t0
        except MemoryError as e:
            rec.update(outcome="error", message=f"MemoryError {e}"[:200])
        except Exception as e:  # noqa: BLE001 - the bench records everything
            rec.update(outcome="error", message=f"{type(e).__name__}: {e}"[:200])
        out.write(json.dumps(rec) + "\n")
        out.flush()


class Worker:
    def __init__(self, label, src, mem_gb):
        self.label, self.src, self.mem_gb = label, os.path.abspath(src), mem_gb
        self.proc = None

    def start(self):
        env = dict(os.environ, PYTHONPATH=self.src, OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", "--mem-gb",
                                      str(self.mem_gb)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        ready = self._read(300.0)
        if ready is None or "ready" not in ready:
            raise RuntimeError(f"worker {self.label} did not start")
        self.module = ready["ready"]

    def _read(self, timeout):
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not r:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else {"dead": True}

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, spec, timeout):
        if self.proc is None:
            self.start()
        try:
            self.proc.stdin.write(json.dumps(spec) + "\n")
            self.proc.stdin.flush()
            rec = self._read(timeout)
        except BrokenPipeError:
            rec = {"dead": True}
        if rec is None:
            self.stop()
            return {"id": spec["id"], "outcome": "timeout", "seconds": timeout}
        if rec.get("dead"):
            self.stop()
            return {"id": spec["id"], "outcome": "error", "message": "worker died (out of memory?)",
                    "seconds": math.nan}
        return rec


# ---------------------------------------------------------------------------- tables
def _pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return math.nan
    i = min(len(xs) - 1, max(0, int(math.ceil(q * len(xs))) - 1))
    return xs[i]


def _ms(x):
    if not math.isfinite(x):
        return "–"
    return f"{1e3 * x:.1f}" if x < 10 else f"{1e3 * x:.0f}"


def _group_rows(recs_by_label, specs, key, order):
    labels = list(recs_by_label)
    rows = []
    for g in order:
        ids = [s["id"] for s in specs if key(s) == g]
        if not ids:
            continue
        cells = []
        for lab in labels:
            rs = [recs_by_label[lab][i] for i in ids if i in recs_by_label[lab]]
            t = [r["seconds"] for r in rs if r["outcome"] in ("ok", "refused", "timeout")]
            to = sum(r["outcome"] == "timeout" for r in rs)
            ref = sum(r["outcome"] == "refused" for r in rs)
            er = sum(r["outcome"] == "error" for r in rs)
            cells.append(f"{_ms(_pct(t, .5))} / {_ms(_pct(t, .95))} / {_ms(_pct(t, .99))} / {_ms(max(t, default=math.nan))}"
                         f" | {to}/{ref}/{er}")
        rows.append(f"| {g} | {len(ids)} | " + " | ".join(cells) + " |")
    return rows


#: (group, selector, statistic, limit in seconds): the latency targets
TARGETS = [("finite mechanisms", lambda s: s["kind"] != "laplace", "median", 0.002),
           ("finite mechanisms", lambda s: s["kind"] != "laplace", "p99", 0.050),
           ("finite mechanisms", lambda s: s["kind"] != "laplace", "max", 1.0),
           ("Laplace", lambda s: s["kind"] == "laplace", "max", 2.0),
           ("matrices (all are <= 64x64)", lambda s: s["kind"] == "matrix", "max", 1.0)]


def _targets(specs, recs_by_label):
    labels = list(recs_by_label)
    out = ["| target | limit | " + " | ".join(f"{lab}" for lab in labels) + " |",
           "|---|---|" + "---|" * len(labels)]
    for name, sel, stat, lim in TARGETS:
        cells = []
        for lab in labels:
            rs = [recs_by_label[lab][s["id"]] for s in specs if sel(s) and s["id"] in recs_by_label[lab]]
            t = [r["seconds"] for r in rs if r["outcome"] in ("ok", "refused", "timeout")]
            bad = sum(r["outcome"] in ("error",) for r in rs)
            v = {"median": _pct(t, .5), "p99": _pct(t, .99), "max": max(t, default=math.nan)}[stat]
            ok = v <= lim and not bad
            cells.append(f"{_ms(v)} ms {'met' if ok else '**not met**'}")
        out.append(f"| {name}: {stat} | {1e3 * lim:g} ms | " + " | ".join(cells) + " |")
    return "\n".join(out)


def ndec(s):
    n = s["n"]
    for lo, hi in NDEC:
        if lo <= n < hi:
            return f"[{lo:.0e}, {min(hi, 1e9):.0e})"
    return "?"


def mech_group(s):
    return s["kind"]


def report(specs, recs_by_label, args, started, finished):
    labels = list(recs_by_label)
    head = "| group | cases | " + " | ".join(f"{lab}: median / p95 / p99 / max ms | {lab}: timeout/refused/error"
                                           for lab in labels) + " |"
    sep = "|---|---|" + "---|---|" * len(labels)
    lines = ["# Tail latency of `shuffleamp.epsilon` (bench/bench_latency.py)\n",
             f"Run {started} – {finished} UTC on {platform.machine()}, {os.cpu_count()} cores "
             f"(shared with other jobs; load average {getattr(args, 'load', '?')}), OMP_NUM_THREADS=1, one worker "
             f"per source tree, memory cap "
             f"{args.mem_gb} GB, timeout {args.timeout} s. Suite: {len(specs)} cases, seed {args.seed}. "
             "Trees: " + ", ".join(f"`{lab}` = {w}" for lab, w in args.trees.items()) + ".\n",
             "Each cell: one `sa.epsilon(mechanism, n, delta)` (upper and lower, default evaluator). "
             "Percentiles over timed calls; a timeout counts as the timeout. `refused` = typed "
             "ResourceLimitError; `error` = anything else (or the worker died).\n",
             "## By mechanism\n", head, sep]
    order = ["krr", "blh", "rappor", "oue", "hr", "laplace", "matrix", "joint", "parallel", "subsample"]
    lines += _group_rows(recs_by_label, specs, mech_group, order)
    lines += _group_rows(recs_by_label, specs, lambda s: "**all**", ["**all**"])
    lines += _group_rows(recs_by_label, specs, lambda s: "finite" if s["kind"] != "laplace" else "",
                         ["finite"])
    lines += ["", "## Targets\n", _targets(specs, recs_by_label)]
    lines += ["", "## By n decade\n", head, sep]
    lines += _group_rows(recs_by_label, specs, ndec, [ndec({"n": lo}) for lo, _ in NDEC])
    # slowest cases
    lines += ["", "## Slowest cases (per tree)\n"]
    byid = {s["id"]: s for s in specs}
    for lab in labels:
        rs = sorted(recs_by_label[lab].values(), key=lambda r: -(r.get("seconds") or 0)
                    if math.isfinite(r.get("seconds") or 0) else -1e9)
        lines.append(f"**{lab}**\n")
        for r in rs[:8]:
            s = dict(byid[r["id"]])
            s.pop("id")
            lines.append(f"- {r['outcome']} {_ms(r.get('seconds', math.nan))} ms: `{json.dumps(s)}`"
                         + (f" — {r['message']}" if r.get("message") else ""))
        errs = [r for r in recs_by_label[lab].values() if r["outcome"] == "error"]
        if errs:
            lines.append(f"\nerrors ({len(errs)}): " + "; ".join(
                f"id {r['id']}: {r.get('message', '')[:100]}" for r in errs[:10]))
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="300 cases")
    ap.add_argument("--seed", type=int, default=SUITE_SEED)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per call")
    ap.add_argument("--mem-gb", type=float, default=4.0, help="address-space cap of a worker")
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable)")
    ap.add_argument("--kinds", default=None, help="comma-separated mechanism kinds to keep")
    ap.add_argument("--out", default=None, help="markdown report")
    ap.add_argument("--jsonl", default=None, help="raw records")
    ap.add_argument("--prior", action="append", default=[],
                    help="label=path.jsonl: records of an earlier run of the same suite, shown side by side")
    ap.add_argument("--no-run", action="store_true", help="only build the report from --prior records")
    ap.add_argument("--resume", default=None,
                    help="path.jsonl of an interrupted run of the same tree: its non-error records are kept")
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.mem_gb)
    here = os.path.dirname(os.path.abspath(__file__))
    srcs = args.src or [f"this={os.path.join(here, '..', 'src')}"]
    args.trees = dict(s.split("=", 1) for s in srcs)
    specs = make_suite(300 if args.quick else args.cases, args.seed)
    if args.kinds:
        keep = set(args.kinds.split(","))
        specs = [s for s in specs if s["kind"] in keep]
    recs = {}
    for spec_ in args.prior:
        lab, path = spec_.split("=", 1)
        recs[lab] = {}
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                recs[lab][r["id"]] = r
        args.trees[lab] = f"records {os.path.basename(path)}"
    if args.no_run:
        specs = [s for s in specs if all(s["id"] in r for r in recs.values())]
        for lab in list(args.trees):
            if lab not in recs:
                del args.trees[lab]
        text = report(specs, recs, args, "(recorded)", "(recorded)")
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        print(text)
        return
    workers = [Worker(lab, path, args.mem_gb) for lab, path in args.trees.items() if lab not in recs]
    recs.update({w.label: {} for w in workers})
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    load_start = os.getloadavg()[0]
    raw = open(args.jsonl, "w") if args.jsonl else None
    t_start = time.time()
    kept = {}
    if args.resume:
        with open(args.resume) as f:
            for line in f:
                r = json.loads(line)
                if r["outcome"] != "error":
                    kept[(r.get("tree"), r["id"])] = r
    for j, spec in enumerate(specs):
        for w in workers:
            r = kept.get((w.label, spec["id"]))
            if r is None:
                r = w.run(spec, args.timeout)
            else:
                r = {k: v for k, v in r.items() if k != "tree"}
            recs[w.label][spec["id"]] = r
            if raw:
                raw.write(json.dumps({"tree": w.label, **r}) + "\n")
                raw.flush()
        if (j + 1) % 100 == 0:
            print(f"{j + 1}/{len(specs)} cases, {time.time() - t_start:.0f} s", file=sys.stderr, flush=True)
    for w in workers:
        w.stop()
    finished = time.strftime("%H:%M", time.gmtime())
    args.load = f"{load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    text = report(specs, recs, args, started, finished)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
