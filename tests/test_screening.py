"""Certified screening of many families: the compiled Chernoff θ search and the batched maxima."""
import math

import mpmath
import numpy as np
import pytest

from shuffleamp.decomposition import Decomposition, chernoff_bounds, pack
from shuffleamp import joint
from shuffleamp.mechanisms import KRR, OUE, MatrixMechanism


def _random_matrix(D, Y, eps0, seed):
    g = np.random.default_rng(seed)
    L = g.uniform(0.0, eps0, size=(D, Y))
    P = np.exp(L)
    return P / P.sum(axis=1, keepdims=True)


def _families(m):
    return [f for d in m.upper_decompositions() for f in (d, d.swapped())] + m.lower_decompositions()


def test_chernoff_theta_flags_families_without_positive_atom():
    """kernels.chernoff_log_theta flags exactly the families whose GPARV has no positive atom (δ = 0, checked
    on the GPARV itself), and chernoff_bounds gives them 0 and the others a positive bound >= the exact δ
    (multinomial enumeration, tests/oracle.py)."""
    from oracle import gparv_positive_part
    from shuffleamp._ext import kernels
    m = MatrixMechanism(_random_matrix(7, 5, 4.0, 3))
    fams = _families(m)
    n = 5
    for q in (0.05, 0.5, 0.9):
        eps = q * m.eps0
        u, pos, st = kernels.chernoff_log_theta(*pack(fams), eps, float(n), 40)
        ch = chernoff_bounds(fams, n, eps)
        assert np.isfinite(u).all() and (np.abs(u) <= 40).all()
        for f, p, b, t, row in zip(fams, pos, ch, np.exp(u), st):
            g = f.gparv(eps)
            if p:       # K(θ) and the tilted mean against a direct (mpmath) evaluation, within its error bound
                w = [mpmath.mpf(float(q)) * mpmath.exp(mpmath.mpf(float(t)) * float(x))
                     for x, q in zip(g.values, g.probs)]
                S = mpmath.fsum(w)
                assert abs(float(mpmath.log(S)) - row[0]) <= row[5] + 1e-15
                mu = float(mpmath.fsum(wi * float(x) for wi, x in zip(w, g.values)) / S)
                assert abs(mu - row[1]) <= 1e-12 * (1 + row[4])
            assert bool(p) == bool(g.values.max() > 0)
            assert (b == 0.0) == (not p)
            assert b >= gparv_positive_part(g.values, g.probs, n) * (1 - 1e-12)


def test_chernoff_bounds_non_decomposition_gets_inf():
    class Other:
        pass
    d = Decomposition(np.array([0.7, 0.3]), np.array([0.2, 0.8]), np.array([0.2, 0.3]), 0.5)
    ch = chernoff_bounds([Other(), d], 10, 0.1)
    assert ch[0] == math.inf and 0.0 < ch[1] < math.inf


def test_packed_cache_matches_pack_and_is_read_only():
    """bounds._packed: the same arrays as decomposition.pack, read-only, and a different list (other ids) is
    packed afresh; the screening bounds through it equal the direct ones."""
    from shuffleamp import bounds
    m = MatrixMechanism(_random_matrix(5, 4, 2.0, 7))
    fams = _families(m)
    for sub in (fams, fams[::-1], fams[:3]):
        p, q = bounds._packed(sub), pack(sub)
        for x, y in zip(p, q):
            assert np.array_equal(x, y) and not x.flags.writeable
        assert bounds._packed(list(sub)) is p
        assert np.array_equal(bounds._chernoff_bounds(sub, 50, 0.3), chernoff_bounds(list(sub), 50, 0.3))


def test_chernoff_stop_keeps_bounds_certified_and_order_above_stop():
    """With ``stop`` the bounds stay certified (>= exact δ by enumeration) and every family whose converged
    bound exceeds ``stop`` gets exactly the converged bound (its search never stops early)."""
    from oracle import gparv_positive_part
    m = MatrixMechanism(_random_matrix(6, 5, 3.0, 5))
    fams = _families(m)
    n, eps = 6, 0.4 * m.eps0
    full = chernoff_bounds(fams, n, eps)
    stop = float(np.quantile(full[full > 0], 0.7))
    early = chernoff_bounds(fams, n, eps, stop=stop)
    for f, b0, b1 in zip(fams, full, early):
        g = f.gparv(eps)
        assert b1 >= gparv_positive_part(g.values, g.probs, n) * (1 - 1e-12)
        if b0 > stop * 1.01:        # above the early-stop margin (1e-6 relative in log)
            assert b1 == b0


def _reference_with_swaps(decs):
    from shuffleamp.decomposition import dedupe
    fams = []
    for d in decs:
        fams.append(d)
        s = d.swapped()
        if s is not d:
            fams.append(s)
    return dedupe(fams)


@pytest.mark.parametrize("make", [
    lambda: MatrixMechanism(_random_matrix(7, 5, 2.0, 1)),
    lambda: MatrixMechanism(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6], [0.6, 0.2, 0.2]])),
    lambda: KRR(1.0, 5),
    lambda: joint([KRR(0.5, 3), OUE(0.5, 4), KRR(0.5, 3)]),
])
def test_upper_families_with_swaps_equal_dedupe(make):
    """bounds._with_swaps (swaps built only when their law is new) gives the list of the plain
    'every family and its swap, de-duplicated by law key' (labels, arrays, β and keys, in order)."""
    from shuffleamp import bounds
    from shuffleamp.decomposition import law_key
    got = bounds._with_swaps(make().upper_decompositions())
    ref = _reference_with_swaps(make().upper_decompositions())
    assert [f.label for f in got] == [f.label for f in ref]
    assert [law_key(f) for f in got] == [law_key(f) for f in ref]
    for f, g in zip(got, ref):
        assert np.array_equal(f.a, g.a) and np.array_equal(f.b, g.b) and np.array_equal(f.c, g.c)
        assert f.beta == g.beta
