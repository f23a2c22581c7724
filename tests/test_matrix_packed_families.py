"""Matrix families as packed arrays: ``MatrixMechanism._upper_packed`` /
``_lower_packed`` and ``bounds._with_swaps_packed`` give a ``PackedFamilies`` whose entries, order, law keys
and packed kernel layout are those of the list path (``_with_swaps`` of per-pair / per-triple
decompositions), and whose ε / δ answers are bit-identical to it.

No test asserts a duration.  Oracles: ``primary_decomposition(P, x0, x1).simplified()`` per pair and
``lower_decomposition(P, x0, x1, x2).simplified()`` per triple (the unbatched constructions), their
``swapped()``, the generic ``bounds._with_swaps`` list path over those objects, ``decomposition.pack`` of
the materialised list, and the list path of the evaluator (the packed path switched off).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffleamp as sa
from shuffleamp import bounds as B
from shuffleamp import families as F
from shuffleamp import exact_count as EC
from shuffleamp._registry import Settings
from shuffleamp.decomposition import (Decomposition, PackedFamilies, chernoff_bounds, law_key, lower_decomposition,
                                      pack, primary_decomposition)
from shuffleamp.mechanisms import KRR, MatrixMechanism


def _random_matrix(D, Y, eps0, seed=0):
    g = np.random.default_rng(seed)
    P = np.exp(0.5 * eps0 * g.random((D, Y)))
    return P / P.sum(axis=1, keepdims=True)


def _matrices():
    P = _random_matrix(6, 4, 2.0, 3)
    return [
        _random_matrix(9, 5, 3.0, 1),
        _random_matrix(14, 3, 1.0, 2),
        _random_matrix(8, 70, 2.0, 5),                  # Y > 64: the numpy merge path
        np.vstack([P, P[[1, 0, 2]]]),                   # repeated rows: duplicate laws dropped
        KRR(1.0, 7).matrix(),                           # every pair alike, self-symmetric swaps
        np.hstack([P, np.zeros((6, 2))]),               # zero columns
    ]


def _list_path(m):
    """The generic path: per-pair decompositions (unbatched), swaps and de-duplication by law key."""
    P = m.matrix()
    decs = []
    for x0, x1 in m._upper_pairs:
        d = primary_decomposition(P, x0, x1).simplified()
        decs.append(Decomposition(d.a, d.b, d.c, d.beta, label=f"pair ({x0}, {x1})"))
    return B._with_swaps(decs)


@pytest.mark.parametrize("P", _matrices())
def test_packed_families_equal_list_path(P):
    m = MatrixMechanism(P)
    fams = B._families(m, "optimal", "upper")
    ref = _list_path(m)
    assert isinstance(fams, PackedFamilies)
    assert len(fams) == len(ref)
    for f, r in zip(fams, ref):
        assert type(f) is Decomposition
        assert f.label == r.label
        assert f.beta == r.beta
        for x, y in ((f.a, r.a), (f.b, r.b), (f.c, r.c)):
            assert x.tobytes() == y.tobytes()
        assert law_key(f) == law_key(r)
    # no two entries with the same law, and every ordered pair's law is represented
    keys = [law_key(f) for f in fams]
    assert len(set(keys)) == len(keys)
    D = P.shape[0]
    for x0 in range(D):
        for x1 in range(D):
            if x0 != x1:
                d = primary_decomposition(m.matrix(), x0, x1)
                assert law_key(Decomposition(d.a, d.b, d.c, d.beta)) in set(keys)
    # the packed layout is pack() of the materialised list, bit for bit
    mat = pack(list(fams))
    direct = pack(fams)                                   # the PackedFamilies shortcut: writable copies
    assert all(x.tobytes() == y.tobytes() and x.flags.writeable for x, y in zip(direct, mat))
    ch = chernoff_bounds(fams, 1000, 0.3)
    assert ch.tobytes() == chernoff_bounds(list(fams), 1000, 0.3).tobytes()
    for x, y in zip(fams.pack(), mat):
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        assert not x.flags.writeable
    assert fams.max_atoms == max(f.a.size for f in fams)
    assert B._packed(fams) is B._packed(fams)              # cached by the bounds code, not on the list
    assert all(x.tobytes() == y.tobytes() for x, y in zip(B._packed(fams), mat))


@pytest.mark.parametrize("P", [_random_matrix(9, 5, 3.0, 1), _random_matrix(8, 70, 2.0, 5), _matrices()[3],
                               KRR(1.0, 7).matrix()])
def test_lower_packed_families_equal_list_path(P):
    """Theorem-14 datasets: the packed lower families are the list path over per-triple decompositions."""
    m = MatrixMechanism(P)
    fams = B._families(m, "optimal", "lower")
    decs = []
    for x0, x1, x2 in m._lower_triples:
        d = lower_decomposition(m.matrix(), x0, x1, x2).simplified()
        decs.append(Decomposition(d.a, d.b, d.c, d.beta, label=f"dataset ({x0}|{x1}; others {x2})"))
    ref = B._with_swaps(decs)
    assert len(fams) == len(ref) > 0
    assert isinstance(fams, PackedFamilies)
    for f, r in zip(fams, ref):
        assert f.label == r.label and f.beta == r.beta == 0.0
        for x, y in ((f.a, r.a), (f.b, r.b), (f.c, r.c)):
            assert x.tobytes() == y.tobytes()
        assert law_key(f) == law_key(r)
    if isinstance(fams, PackedFamilies):
        assert all(x.tobytes() == y.tobytes() for x, y in zip(fams.pack(), pack(list(fams))))
    assert [f.label for f in m.lower_decompositions()] == [r.label for r in decs]


def test_packed_families_sequence_semantics():
    m = MatrixMechanism(_random_matrix(7, 4, 2.0, 11))
    fams = B._families(m, "optimal", "upper")
    n = len(fams)
    assert n > B.LAZY_FAMILIES
    assert fams[-1] is fams[n - 1] and fams[0] is fams[0]          # built once: identities are stable
    assert fams[2:5] == [fams[2], fams[3], fams[4]]
    with pytest.raises(IndexError):
        fams[n]
    sw = [i for i in range(n) if fams.swapped[i]]
    assert sw
    for i in sw:
        d = fams[i]
        assert d.label.endswith(" (swapped)")
        base = d.__dict__["_swap_of"]
        assert d.a is base.b and d.b is base.a
        assert law_key(base.swapped()) == law_key(d)
    # the cache hands out the same read-only object
    B._FAMILY_CACHE.clear()
    a = B._cached_families(m, "upper")
    assert B._cached_families(m, "upper") is a


def test_few_families_stay_a_list():
    m = MatrixMechanism(_random_matrix(3, 3, 1.0, 4))            # at most 6 families
    B._FAMILY_CACHE.clear()
    fams = B._cached_families(m, "upper")
    assert type(fams) is list and len(fams) <= B.LAZY_FAMILIES
    ref = _list_path(m)
    assert [law_key(f) for f in fams] == [law_key(r) for r in ref]


@pytest.mark.parametrize("shape,n,delta", [((20, 6), 10**6, 1e-6), ((16, 3), 3000, 1e-5), ((12, 9), 300, 1e-4),
                                           ((25, 4), 10**8, 1e-9)])
def test_answers_bit_identical_to_list_path(shape, n, delta, monkeypatch):
    P = _random_matrix(*shape, 2.0, sum(shape))
    B._FAMILY_CACHE.clear()
    r1 = sa.epsilon(MatrixMechanism(P), n, delta)
    d1 = sa.delta(MatrixMechanism(P), n, 0.5 * r1.upper)
    def list_families(mechanism, method, which):          # the generic list path (objects, _with_swaps)
        return B._with_swaps(list(mechanism.upper_decompositions() if which == "upper"
                                  else mechanism.lower_decompositions()))
    monkeypatch.setattr(F, "_families", list_families)
    monkeypatch.setattr(B, "_families", list_families)
    B._FAMILY_CACHE.clear()
    assert isinstance(B._families(MatrixMechanism(P), "optimal", "upper"), list)
    assert isinstance(B._families(MatrixMechanism(P), "optimal", "lower"), list)
    r2 = sa.epsilon(MatrixMechanism(P), n, delta)
    d2 = sa.delta(MatrixMechanism(P), n, 0.5 * r1.upper)
    B._FAMILY_CACHE.clear()
    assert (r1.upper, r1.lower) == (r2.upper, r2.lower)
    assert (d1.upper, d1.lower) == (d2.upper, d2.lower)
    assert r1.upper >= r1.lower >= 0.0


def test_projection_skips_only_swapped_duplicates():
    """A dataset's swap projects to (beta, alpha, gamma): the same value, evaluated once."""
    m = MatrixMechanism(_random_matrix(30, 3, 1.0, 6))
    lf = B._families(m, "optimal", "lower")
    n, x = 1000, 1e-6
    ctx = Settings(B.DEFAULT_RTOL, B.DEFAULT_RTOL_LOWER, B.DEFAULT_MAX_GRID, "exact", math.inf, math.inf,
                   lower_families=lf)
    got = B._projection_lower(ctx, n, x, True)
    sets = sorted(ctx.memo["projection_sets"], key=lambda t: -B._projection_score(t[0], t[1], t[2], n))
    best, lab = 0.0, None
    for al, be, ga, label in sets[:B.PROJECTION_EVALS]:               # every projection evaluated
        lo = EC.projection_pair_bounds(al, be, ga, n, x, True)[1]
        assert lo == EC.projection_pair_bounds(be, al, ga, n, x, True)[1]
        if lo > best:
            best, lab = lo, f"count projection of {label}"
    assert got == (best, lab)
    assert best > 0.0
