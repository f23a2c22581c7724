"""Concurrent calls give exactly the serial answers and raise nothing.

A production service (or Dask's threaded scheduler) calls ``epsilon`` / ``delta`` from many threads at once,
and the compiled kernels release the GIL, so calls really overlap.  The mixed batch below covers every
mechanism family (k-RR with k = 2 and k >= 3, BLH, RAPPOR, OUE, Hadamard response, Laplace, a matrix, joint,
parallel and subsampled compositions) at small and large n, with more distinct mechanisms than the family
cache holds, so lookups, insertions and evictions of the shared caches race; a second batch covers the
randomizers beyond pure LDP (Gaussian, (eps0, delta0)-LDP) and populations (k-RR, (eps0, delta0)-LDP and
Gaussian groups), whose per-object caches are filled lazily by whichever thread comes first.  It runs once serially and then
on 16 threads in a shuffled order, repeatedly; every (upper, lower, method) must be bit-identical to the serial
one and no call may raise.  Nothing here flips a module global.
"""

from __future__ import annotations

import random
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import shuffleamp as sa
from shuffleamp import bounds
from shuffleamp._lru import LRUCache
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse, Laplace, MatrixMechanism

THREADS = 16
# Sixteen threads share two cores, so one call's wall time is many times its CPU time: the per-call time
# budget is raised so that a busy machine cannot turn a budget refusal into a test failure (the results
# compared are the same under any budget that lets the call finish).
CALL_SECONDS = 600.0


def _mechanisms(rng: random.Random, per_family: int) -> list:
    """``per_family`` seeded instances of every family (distinct parameters, so distinct cache keys)."""
    out = []
    for i in range(per_family):
        e = round(rng.uniform(0.3, 2.5), 3)
        out += [KRR(e, 2), KRR(e, rng.randint(3, 40)), BLH(e), RAPPOR(e, rng.randint(2, 6)),
                OUE(e, rng.randint(2, 6)), HadamardResponse(e, rng.choice([4, 8, 16])),
                sa.subsample(KRR(e, rng.randint(2, 6)), round(rng.uniform(0.1, 0.9), 3)),
                sa.joint(KRR(e / 2, 3), KRR(e / 2, rng.randint(2, 4))),
                sa.parallel([(0.5, KRR(e, 3)), (0.5, OUE(e, 3))])]
        P = np.array([[rng.uniform(0.5, 2.0) for _ in range(3)] for _ in range(3)])
        out.append(MatrixMechanism(P / P.sum(axis=1, keepdims=True)))
        if i % 4 == 0:                          # Laplace is the slowest family: fewer instances
            out.append(Laplace(e))
    return out


def _calls(seed: int, per_family: int, repeats: int) -> list:
    rng = random.Random(seed)
    calls = []
    for m in _mechanisms(rng, per_family):
        for n in (rng.randint(100, 1000), 10 ** rng.randint(5, 8)):
            calls.append(("epsilon", m, n, 10.0 ** -rng.randint(4, 12)))
            calls.append(("delta", m, n, round(rng.uniform(0.05, 1.0), 3)))
    return calls * repeats


def _beyond_pure_calls(seed: int) -> list:
    """Gaussian and (eps0, delta0)-LDP randomizers alone and as population groups, at small and large n.  The
    objects are built here and shared by the threads (each caches its own decompositions on first use)."""
    rng = random.Random(seed)
    calls = []
    for sigma in (1.0, 2.0, 4.0):
        g = sa.Gaussian(sigma=round(sigma * rng.uniform(0.9, 1.1), 3))
        for n in (rng.randint(200, 1000), 10 ** rng.randint(5, 8)):
            calls.append(("epsilon", g, n, 10.0 ** -rng.randint(5, 9)))
        calls.append(("delta", g, 10 ** 5, round(rng.uniform(0.005, 0.05), 4)))
    for eps0, delta0 in ((0.5, 1e-9), (1.0, 1e-8), (2.0, 0.0)):
        a = sa.ApproximateLDP(eps0, delta0)
        for n in (rng.randint(200, 1000), 10 ** rng.randint(5, 8)):
            calls.append(("epsilon", a, n, 1e-6))
            calls.append(("delta", a, n, round(rng.uniform(0.1, 1.0), 3)))
    pops = [sa.population([(KRR(0.5, 10), 3000), (KRR(2.0, 10), 2000)]),
            sa.population([(sa.ApproximateLDP(1.0, 1e-9), 3000), (sa.ApproximateLDP(2.0, 1e-10), 3000)]),
            sa.population([(sa.Gaussian(sigma=1.0), 3000), (sa.Gaussian(sigma=2.0), 3000)])]
    for p in pops:
        calls.append(("epsilon", p, None, 1e-6))
        calls.append(("delta", p, None, 0.5))
    return calls


def _run(call):
    kind, m, n, x = call
    r = (sa.epsilon(m, n, x, max_seconds=CALL_SECONDS) if kind == "epsilon"
         else sa.delta(m, n, x, max_seconds=CALL_SECONDS))
    return (r.upper, r.lower, r.method)


def _check(seed: int, per_family: int, repeats: int, rounds: int) -> int:
    calls = _calls(seed, per_family, repeats)
    serial = [_run(c) for c in calls]
    checked = 0
    for r in range(rounds):
        order = list(range(len(calls)))
        random.Random(seed + r).shuffle(order)
        with ThreadPoolExecutor(THREADS) as pool:
            got = list(pool.map(lambda i: (i, _run(calls[i])), order))     # re-raises any exception
        for i, res in got:
            assert res == serial[i], (calls[i], res, serial[i])
            checked += 1
    return checked


def test_family_cache_under_contention():
    """16 threads look up and insert the families of 400 distinct mechanisms (three times the cache size) with
    the interpreter switching threads every microsecond: no exception (an unlocked evict-the-oldest raised
    KeyError here within a fraction of a second), the cache stays within its bound, and a hit returns the
    families built serially."""
    mechs = [KRR(0.5 + i * 1e-3, 3 + i % 5) for i in range(400)]
    expected = {m: [d.law_key() for d in bounds._families(m, "optimal", "upper")] for m in mechs[:20]}

    def work(j):
        for m in mechs[j::THREADS]:
            bounds._cached_families(m, "upper")
            bounds._cached_families(m, "lower")
        return len(bounds._FAMILY_CACHE)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(10):
            with ThreadPoolExecutor(THREADS) as pool:
                sizes = list(pool.map(work, range(THREADS)))
            assert max(sizes) <= bounds.FAMILY_CACHE_SIZE
    finally:
        sys.setswitchinterval(old)
    for m, keys in expected.items():
        assert [d.law_key() for d in bounds._cached_families(m, "upper")] == keys


def test_lru_cache_bound_and_order():
    """The lock-guarded LRU keeps the most recently used entries and never more than its bound."""
    c = LRUCache(3)
    for i in range(5):
        c.put(i, str(i))
    assert len(c) == 3 and 0 not in c and 1 not in c
    assert c.get(2) == "2"          # 2 becomes the most recently used
    c.put(5, "5")
    assert 3 not in c and 2 in c and c.get(5) == "5" and c.get(99, "x") == "x"


def test_distinct_mechanisms_exceed_the_family_cache():
    """The batch evicts: more distinct mechanisms than the family cache holds (two entries each)."""
    assert 2 * len(_mechanisms(random.Random(1), 7)) > bounds.FAMILY_CACHE_SIZE


def test_concurrent_calls_equal_serial_results():
    """About 600 mixed calls (each twice, shuffled) on 16 threads, every answer identical to the serial run."""
    checked = _check(seed=1, per_family=7, repeats=2, rounds=1)
    assert checked >= 500


def test_concurrent_calls_beyond_pure_ldp_and_populations():
    """Gaussian, (eps0, delta0)-LDP and population calls, built fresh (empty per-object caches) and shared by
    16 threads: identical to a serial run on equal, separately built objects."""
    serial_calls = _beyond_pure_calls(seed=3)
    serial = [_run(c) for c in serial_calls]
    fresh = _beyond_pure_calls(seed=3)              # equal objects, caches empty: the threads race to fill them
    assert [c[1] for c in fresh] == [c[1] for c in serial_calls]
    order = list(range(len(fresh))) * 2
    random.Random(3).shuffle(order)
    with ThreadPoolExecutor(THREADS) as pool:
        got = list(pool.map(lambda i: (i, _run(fresh[i])), order))
    for i, res in got:
        assert res == serial[i], (fresh[i], res, serial[i])
    assert len(got) == 2 * len(fresh) >= 50


@pytest.mark.slow
def test_concurrent_calls_equal_serial_results_large():
    """A larger batch (about 6,000 calls per round, four rounds) on 16 threads."""
    checked = _check(seed=7, per_family=30, repeats=5, rounds=4)
    assert checked >= 20000
