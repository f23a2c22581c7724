"""Per-call Python time outside the compiled search for cheap ``epsilon`` calls, two source trees side by side.

For each mechanism shape, ``--calls`` fresh mechanisms (distinct eps0, so no family-cache hit) are evaluated
with ``sa.epsilon(m, n, delta)``; the time inside ``kernels.epsilon_search`` is subtracted (the rest is Python:
validation, families, orchestration, result) and the time of ``bounds._families`` (upper + lower) is reported
separately.  The trees alternate ``--rounds`` times (one subprocess each); the best value per tree is kept.

Usage::

    python bench/bench_python_part.py --src before=/path/to/main/src --src after=src
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time

SHAPES = ["krr", "blh", "rappor", "oue", "hr64", "hr1024", "parallel", "subsample"]


def _worker(src: str, calls: int) -> None:
    sys.path.insert(0, src)
    import warnings
    warnings.simplefilter("ignore")
    import shuffleamp as sa
    from shuffleamp import bounds
    from shuffleamp._ext import kernels
    from shuffleamp.compose import parallel, subsample
    from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse
    make = {"krr": lambda e: KRR(e, 10), "blh": lambda e: BLH(e, 20), "rappor": lambda e: RAPPOR(e, 20),
            "oue": lambda e: OUE(e, 20), "hr64": lambda e: HadamardResponse(e, 64),
            "hr1024": lambda e: HadamardResponse(e, 1024),
            "parallel": lambda e: parallel([(0.5, KRR(e, 10)), (0.5, KRR(2.0, 10))]),
            "subsample": lambda e: subsample(BLH(e, 10), 0.3)}
    orig, acc = kernels.epsilon_search, [0.0]

    def timed(*a, **k):
        t = time.perf_counter()
        r = orig(*a, **k)
        acc[0] += time.perf_counter() - t
        return r
    kernels.epsilon_search = timed
    sa.epsilon(KRR(1.0, 3), 1000, 1e-6)                       # imports paid here
    out = {}
    for name in SHAPES:
        py = fam = math.inf
        for i in range(calls):
            e = 1.3 + 1e-7 * i
            m = make[name](e)
            bounds._FAMILY_CACHE.clear()
            acc[0] = 0.0
            t = time.perf_counter()
            sa.epsilon(m, 10 ** 6, 1e-8)
            py = min(py, time.perf_counter() - t - acc[0])
            m = make[name](e + 0.5e-7)
            bounds._FAMILY_CACHE.clear()
            t = time.perf_counter()
            bounds._families(m, "optimal", "upper")
            bounds._families(m, "optimal", "lower")
            fam = min(fam, time.perf_counter() - t)
        out[name] = (py * 1e6, fam * 1e6)
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--src", action="append", default=[], help="label=path of a src tree (repeatable)")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if a.worker:
        _worker(a.worker, a.calls)
        return
    trees = [s.split("=", 1) for s in (a.src or ["this=src"])]
    best = {lab: {} for lab, _ in trees}
    for _ in range(a.rounds):
        for lab, path in trees:
            res = json.loads(subprocess.run([sys.executable, __file__, "--worker", path, "--calls", str(a.calls)],
                                            capture_output=True, text=True, check=True).stdout)
            for k, (py, fam) in res.items():
                p0, f0 = best[lab].get(k, (math.inf, math.inf))
                best[lab][k] = (min(p0, py), min(f0, fam))
    print("Python time outside kernels.epsilon_search per call / of which bounds._families (upper + lower), "
          f"µs, best of {a.calls} calls x {a.rounds} rounds, n = 1e6, delta = 1e-8\n")
    print("| shape | " + " | ".join(f"{lab}: python / families" for lab, _ in trees) + " |")
    print("|---" * (len(trees) + 1) + "|")
    for k in SHAPES:
        print(f"| {k} | " + " | ".join(f"{best[lab][k][0]:.0f} / {best[lab][k][1]:.0f}" for lab, _ in trees) + " |")


if __name__ == "__main__":
    main()
