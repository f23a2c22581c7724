"""k-RR beyond k = 2 (investigation): how far is the decomposition bound from the exact divergence of
the worst dataset pair found, for k = 3, 4 at small / moderate n?

For every dataset "user 1 holds 0 or 1, the others hold (n_0, n_1, ..., n_{k-1}) of each value" (all
compositions for k = 3; for k = 4 the others' values restricted to {0, 1, 2, 3} with n_3 on a coarse
grid) the exact law of the output histogram is built from cached group laws (the histogram of g users
with input x, by repeated convolution) and 2-D / 3-D FFT convolutions; the hockey-stick divergence is
taken in both orderings at ε = the decomposition ε(δ).  For the worst dataset, its exact ε(δ) is found
by bisection.  Float64 throughout (an estimate for this study, not a certified number).

Run: PYTHONPATH=src OMP_NUM_THREADS=1 python bench/bench_exact_count_k3.py  (appends nothing; prints
the markdown table, pasted into bench/results_exact_count.md)
"""
import itertools
import math
import time

import numpy as np
from scipy.signal import fftconvolve

import shuffleamp
from shuffleamp.mechanisms import KRR

DELTA = 1e-3


def group_laws(k, eps0, n):
    """laws[x][g]: histogram law (array over the first k-1 counts) of g users with input x."""
    E = math.exp(eps0)
    p = np.full(k, 1.0 / (E + k - 1))
    shape = (n + 1,) * (k - 1)
    laws = []
    for x in range(k):
        px = p.copy()
        px[x] = E / (E + k - 1)
        cur = np.zeros(shape)
        cur[(0,) * (k - 1)] = 1.0
        out = [cur]
        for _ in range(n):
            nxt = px[k - 1] * cur                       # last output is implied by the others
            for y in range(k - 1):
                sl_to = tuple(slice(1, None) if i == y else slice(None) for i in range(k - 1))
                sl_from = tuple(slice(0, -1) if i == y else slice(None) for i in range(k - 1))
                nxt[sl_to] += px[y] * cur[sl_from]
            cur = nxt
            out.append(cur)
        laws.append(out)
    return laws


def conv(a, b):
    z = fftconvolve(a, b)[tuple(slice(0, s) for s in a.shape)]
    return np.maximum(z, 0.0)


def divergence(P, Q, eps):
    e = math.exp(eps)
    return max(float(np.maximum(P - e * Q, 0).sum()), float(np.maximum(Q - e * P, 0).sum()))


def dataset_pair(laws, counts):
    k = len(counts)
    rest = None
    for x in range(k):
        if counts[x]:
            rest = laws[x][counts[x]] if rest is None else conv(rest, laws[x][counts[x]])
    P0 = laws[0][1] if rest is None else conv(rest, laws[0][1])
    P1 = laws[1][1] if rest is None else conv(rest, laws[1][1])
    return P0, P1


def eps_of(P0, P1, delta, hi):
    lo = 0.0
    if divergence(P0, P1, 0.0) <= delta:
        return 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if divergence(P0, P1, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def study(k, eps0, n, grid_step=1):
    t0 = time.perf_counter()
    b = shuffleamp.epsilon(KRR(eps0, k), n, DELTA)
    laws = group_laws(k, eps0, n)
    N = n - 1
    best, arg = -1.0, None
    for comp in itertools.product(range(0, N + 1, grid_step), repeat=k - 1):
        last = N - sum(comp)
        if last < 0:
            continue
        counts = list(comp) + [last]
        P0, P1 = dataset_pair(laws, counts)
        v = divergence(P0, P1, b.upper)
        if v > best:
            best, arg = v, counts
    P0, P1 = dataset_pair(laws, arg)
    e_worst = eps_of(P0, P1, DELTA, eps0)
    clump = [0, n - 1] + [0] * (k - 2) if k == 2 else [0, 0, n - 1] + [0] * (k - 3)
    P0, P1 = dataset_pair(laws, clump)
    e_clump = eps_of(P0, P1, DELTA, eps0)
    return dict(k=k, eps0=eps0, n=n, decomp_upper=b.upper, decomp_lower=b.lower, worst_counts=arg,
                delta_worst_at_decomp_eps=best, eps_worst=e_worst, eps_others2=e_clump,
                seconds=time.perf_counter() - t0)


def main():
    rows = []
    for k, eps0, n, step in [(3, 1.0, 10, 1), (3, 1.0, 30, 1), (3, 1.0, 100, 3), (3, 2.0, 30, 1), (3, 2.0, 100, 3),
                             (4, 1.0, 12, 1), (4, 1.0, 30, 3), (4, 2.0, 20, 2)]:
        r = study(k, eps0, n, step)
        rows.append(r)
        print(r, flush=True)
    print()
    print("| k | ε0 | n | decomp upper ε | decomp lower ε | worst dataset found (others' counts per value) | "
          "its exact ε | dataset 'others 2' exact ε | exact / decomp upper | time (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['k']} | {r['eps0']:g} | {r['n']} | {r['decomp_upper']:.5g} | {r['decomp_lower']:.5g} | "
              f"{tuple(r['worst_counts'])} | {r['eps_worst']:.5g} | {r['eps_others2']:.5g} | "
              f"{r['eps_worst'] / r['decomp_upper']:.3f} | {r['seconds']:.1f} |")


if __name__ == "__main__":
    main()
