"""Tests of shuffleamp.mechanisms: closed forms vs brute-force decompositions of the matrix forms.

[SCW] P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from shuffleamp import _validate
from shuffleamp.errors import NotLDPError, ParameterError
from shuffleamp.decomposition import (Decomposition, clone_decomposition, dedupe, law_key,
                                      lower_decomposition, merge_by_ratio, primary_decomposition)
from shuffleamp.mechanisms import (BLH, KRR, MECHANISMS, OUE, RAPPOR, HadamardResponse, Laplace,
                                   LaplaceFamily, MatrixMechanism, Mechanism, make)

TOL = 1e-12

FINITE = (
    [KRR(1.0, k) for k in (3, 5, 10)] + [KRR(0.3, 2), KRR(4.0, 7)]
    + [BLH(1.0, d) for d in (3, 4, 5)] + [BLH(2.5, 2), BLH(0.2, 6)]
    + [RAPPOR(1.0, d) for d in (3, 5)] + [RAPPOR(3.0, 2), RAPPOR(0.5, 4)]
    + [OUE(1.0, d) for d in (3, 5)] + [OUE(2.0, 2), OUE(0.7, 4)]
    + [HadamardResponse(1.0, d) for d in (4, 8, 16)] + [HadamardResponse(3.0, 32)]
)
IDS = [f"{m.name}-{m.eps0}-{getattr(m, 'k', getattr(m, 'd', None))}" for m in FINITE]


def multiset(dec: Decomposition):
    """Sorted (r0, r1, c) triples of the components with positive blanket mass."""
    keep = dec.c > 1e-15
    r0, r1 = dec.a[keep] / dec.c[keep], dec.b[keep] / dec.c[keep]
    trip = np.stack([r0, r1, dec.c[keep]], axis=1)
    key = np.round(trip, 9)          # sort on rounded values so float noise cannot reorder
    return trip[np.lexsort(key.T[::-1])]


def assert_same_decomposition(d1: Decomposition, d2: Decomposition, tol=TOL):
    m1, m2 = multiset(d1.simplified()), multiset(d2.simplified())
    assert m1.shape == m2.shape, (m1, m2)
    np.testing.assert_allclose(m1, m2, rtol=tol, atol=tol)
    assert abs(d1.beta - d2.beta) <= tol


def law(g, tol=1e-9):
    """Atoms of a GPARV with values merged within ``tol`` (purely atomic laws only)."""
    v, p = np.asarray(g.values), np.asarray(g.probs)
    out_v, out_p = [], []
    for vi, pi in zip(v, p):
        if out_v and abs(vi - out_v[-1]) <= tol:
            out_p[-1] += pi
        else:
            out_v.append(vi)
            out_p.append(pi)
    return np.array(out_v), np.array(out_p)


def assert_same_law(d1, d2, epsilons=(0.0, 0.1, 0.7)):
    for eps in epsilons:
        v1, p1 = law(d1.gparv(eps))
        v2, p2 = law(d2.gparv(eps))
        assert v1.shape == v2.shape, (eps, v1, v2)
        np.testing.assert_allclose(v1, v2, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(p1, p2, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ Table 2 from the matrices
@pytest.mark.parametrize("mech", FINITE, ids=IDS)
def test_table2_matches_matrix(mech):
    P = mech.matrix()
    assert P.dtype == np.float64 and P.ndim == 2
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-14)
    brute = primary_decomposition(P, 0, 1).simplified()
    closed = mech.decomposition("simplified")
    assert_same_decomposition(brute, closed)
    assert abs(mech.gamma - P.min(axis=0).sum()) <= TOL
    assert abs(mech.gamma - closed.gamma) <= TOL
    # the primary form is the per-output blanket decomposition of the matrix
    assert_same_decomposition(mech.decomposition("primary"), brute)


@pytest.mark.parametrize("mech", FINITE, ids=IDS)
def test_matrix_eps0_is_tight(mech):
    assert _validate.ldp_level(mech.matrix()) == pytest.approx(mech.eps0, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("mech", FINITE, ids=IDS)
def test_input_symmetry(mech):
    """Every ordered pair has the same simplified decomposition, so one upper entry suffices."""
    P = mech.matrix()
    D = P.shape[0]
    ref = mech.decomposition("simplified")
    pairs = [(x0, x1) for x0 in range(D) for x1 in range(D) if x0 != x1]
    for x0, x1 in pairs[:: max(1, len(pairs) // 12)]:
        assert_same_decomposition(primary_decomposition(P, x0, x1), ref)
    ups = mech.upper_decompositions()
    assert len(ups) == 1
    assert_same_decomposition(ups[0], ref)


def test_table2_explicit_values():
    """Spot-check the printed Table-2 formulas of Su-Cheng-Wang (arXiv:2504.07414) and the corrected HR row."""
    e0 = 1.3
    E, t = math.exp(e0), math.exp(e0 / 2)
    D = 5

    def pqr(m):
        d = m.decomposition()
        r0, r1 = d.ratios
        get = lambda x, y: float(d.c[(np.abs(r0 - x) < 1e-9) & (np.abs(r1 - y) < 1e-9)].sum())
        return get(E, 1), get(1, E), get(E, E), get(1, 1)

    p, p2, q, r = pqr(BLH(e0, D))
    assert (p, p2) == pytest.approx((1 / (2 * (E + 1)),) * 2, abs=TOL)
    assert q == pytest.approx(1 / (2 * (E + 1)) - 1 / (2 ** (D - 1) * (E + 1)), abs=TOL)
    assert r == pytest.approx(1 / (2 * (E + 1)) + E / (2 ** (D - 1) * (E + 1)), abs=TOL)
    p, _, q, r = pqr(RAPPOR(e0, D))
    assert p == pytest.approx(1 / (t + 1) ** 2, abs=TOL)
    assert q == pytest.approx(1 / t / (t + 1) ** 2 - 1 / t / (t + 1) ** D, abs=TOL)
    assert r == pytest.approx(t / (t + 1) ** 2 + t / (t + 1) ** D, abs=TOL)
    p, _, q, r = pqr(OUE(e0, D))
    assert p == pytest.approx(1 / (2 * (E + 1)), abs=TOL)
    assert q == pytest.approx(1 / E / (2 * (E + 1)) - 1 / E / (2 * (E + 1) ** (D - 1)), abs=TOL)
    assert r == pytest.approx(E / (2 * (E + 1)) + 1 / (2 * (E + 1) ** (D - 1)), abs=TOL)
    d = 16
    p, _, q, r = pqr(HadamardResponse(e0, d))
    assert p == pytest.approx(1 / (2 * (E + 1)), abs=TOL)
    assert q == pytest.approx(1 / (2 * (E + 1)) - 2 / (d * (E + 1)), abs=TOL)
    assert r == pytest.approx(1 / (2 * (E + 1)) + 2 * E / (d * (E + 1)), abs=TOL)
    assert HadamardResponse(e0, d).gamma == pytest.approx(2 / (E + 1) + 2 * (E - 1) / (d * (E + 1)), abs=TOL)
    # the paper's uncorrected HR row (p = q = r) is NOT the exact finite-d decomposition
    assert abs(q - p) > 1e-3
    p, _, q, r = pqr(KRR(e0, 10))
    assert (p, q, r) == pytest.approx((1 / (E + 9), 0.0, 8 / (E + 9)), abs=TOL)


def test_property2_mean():
    """E[G] = 1 - e^eps for every upper decomposition ([SCW] §5.1, Property 2)."""
    for m in FINITE + [BLH(1.0), RAPPOR(1.0), OUE(1.0)]:
        for eps in (0.0, 0.5):
            g = m.upper_decompositions()[0].gparv(eps)
            assert float(np.dot(g.values, g.probs)) == pytest.approx(1 - math.exp(eps), abs=1e-12)


# ------------------------------------------------------------------ lower bounds (Theorem 14)
def _documented_rows(mech):
    """Matrix-row triples (x0, x1, x2) of the documented lower-bound datasets, in order."""
    if isinstance(mech, HadamardResponse):       # Hadamard rows (1 | 2; 3) and (1 | 2; 4)
        return [(0, 1, 2)] + ([(0, 1, 3)] if mech.d >= 8 else [])
    size = mech.k if isinstance(mech, KRR) else mech.d
    if size == 2:
        return [(0, 1, 1)]
    return [(0, 1, 2)] if isinstance(mech, KRR) else [(0, 1, 2), (0, 1, 1)]   # bit mechanisms: also others at x1


LOWER = FINITE + [HadamardResponse(0.8, 64)]


@pytest.mark.parametrize("mech", LOWER, ids=[f"{m.name}-{m.eps0}" for m in LOWER])
def test_lower_matches_matrix(mech):
    P = mech.matrix()
    lows = mech.lower_decompositions()
    rows = _documented_rows(mech)
    assert len(lows) == len(rows)
    for dec, (x0, x1, x2) in zip(lows, rows):
        assert dec.beta == 0.0
        direct = lower_decomposition(P, x0, x1, x2).simplified()
        assert_same_law(dec, direct)


@pytest.mark.parametrize("d", [8, 16, 64, 1024])
@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_hr_lower_closed_form_matches_matrix_path(d, eps0):
    m = HadamardResponse(eps0, d)
    closed, from_rows = m._lower_closed_form(), m.lower_decompositions()
    assert len(closed) == len(from_rows) == 2
    for c, r in zip(closed, from_rows):
        assert_same_law(c, r)
    # above the matrix threshold the closed form is used
    big = HadamardResponse(eps0, 2 ** 20).lower_decompositions()
    for c, b in zip(closed, big):
        assert_same_law(c, b)


def test_hr_lower_cases_differ():
    """x2 = x0 xor x1 and x2 independent give different laws (two distinct Theorem-14 datasets of HR)."""
    a, b = HadamardResponse(1.0, 8).lower_decompositions()
    assert law(a.gparv(0.2))[0].size != law(b.gparv(0.2))[0].size


def test_krr_lower_explicit():
    e0, eps, k = 1.0, 0.3, 6
    E, e = math.exp(e0), math.exp(eps)
    p = 1 / (E + k - 1)
    (dec,) = KRR(e0, k).lower_decompositions()
    v, pr = law(dec.gparv(eps))
    want = sorted([(E - e, p), (1 - E * e, p), ((1 - e) / E, E * p), (1 - e, (k - 3) * p)])
    np.testing.assert_allclose(v, [w[0] for w in want], atol=1e-12)
    np.testing.assert_allclose(pr, [w[1] for w in want], atol=1e-12)
    (dec2,) = KRR(e0, 2).lower_decompositions()
    v, pr = law(dec2.gparv(eps))
    np.testing.assert_allclose(v, [1 / E - e, E - e], atol=1e-12)
    np.testing.assert_allclose(pr, [E / (E + 1), 1 / (E + 1)], atol=1e-12)


@pytest.mark.parametrize("cls", [BLH, RAPPOR, OUE])
def test_bit_lower_independent_of_d(cls):
    """The bit-indicator lower law is the same for every d >= 3 and for d=None ([SCW] Theorem 14 datasets)."""
    ref = cls(1.2, None).lower_decompositions()
    assert len(ref) == 2                      # others at a third value; others at x1
    for d in (3, 7, 50):
        decs = cls(1.2, d).lower_decompositions()
        assert len(decs) == len(ref)
        for dec, r in zip(decs, ref):
            assert_same_law(dec, r)


# ------------------------------------------------------------------ asymptotic forms
@pytest.mark.parametrize("cls,ds", [(BLH, (4, 8, 16, 32, 64)), (RAPPOR, (4, 8, 16, 32, 64)),
                                    (OUE, (4, 8, 16, 32, 64)),
                                    (HadamardResponse, (8, 64, 1024, 2 ** 16, 2 ** 30))])
def test_exact_converges_to_table3(cls, ds):
    e0 = 0.8
    errs = []
    for d in ds:
        m = cls(e0, d)
        ex, asym = m.decomposition("simplified"), m.decomposition("asymptotic")
        n = ex.c.size
        assert asym.c.size == n
        errs.append(float(np.max(np.abs(multiset(ex)[:, 2] - multiset(asym)[:, 2]))))
    assert all(b < a for a, b in zip(errs, errs[1:])), errs
    assert errs[-1] < 1e-8


def test_asymptotic_values_table3():
    e0 = 1.1
    E, t = math.exp(e0), math.exp(e0 / 2)
    for m, (p, q, r) in [(BLH(e0), (1 / (2 * (E + 1)),) * 3),
                         (RAPPOR(e0), (1 / (t + 1) ** 2, 1 / (t * (t + 1) ** 2), t / (t + 1) ** 2)),
                         (OUE(e0), (1 / (2 * (E + 1)), 1 / (2 * E * (E + 1)), E / (2 * (E + 1)))),
                         (HadamardResponse(e0, 8), (1 / (2 * (E + 1)),) * 3)]:
        want = Decomposition.from_pqr(e0, p, q, r)
        assert_same_decomposition(m.decomposition("asymptotic"), want)
        if getattr(m, "d", 1) is None:
            assert_same_decomposition(m.decomposition("simplified"), want)
            assert m.gamma == pytest.approx(2 * p + q + r, abs=TOL)
    with pytest.raises(ParameterError) as ei:
        BLH(1.0).matrix()
    assert ei.value.parameter == "d"
    # k-RR has no domain limit: the asymptotic form is the exact one
    assert_same_decomposition(KRR(1.0, 5).decomposition("asymptotic"), KRR(1.0, 5).decomposition())


def test_huge_domains_are_finite():
    for m in (BLH(3.0, 10 ** 6), RAPPOR(3.0, 10 ** 6), OUE(3.0, 10 ** 6), HadamardResponse(3.0, 2 ** 40),
              KRR(50.0, 10 ** 9)):
        dec = m.decomposition()
        assert math.isfinite(m.gamma) and 0 < m.gamma <= 1
        assert np.isfinite(dec.c).all()


# ------------------------------------------------------------------ Laplace
def test_laplace():
    m = Laplace(1.5)
    assert m.gamma == pytest.approx(math.exp(-0.75))
    (u,) = m.upper_decompositions()
    (lo,) = m.lower_decompositions()
    assert isinstance(u, LaplaceFamily) and u.kind == "upper"
    assert isinstance(lo, LaplaceFamily) and lo.kind == "lower"
    for form in ("simplified", "primary", "asymptotic"):
        assert m.decomposition(form).kind == "upper"
    with pytest.raises(ParameterError) as ei:
        m.matrix()
    assert ei.value.parameter == "mechanism"
    assert json.loads(json.dumps(m.describe())) == {"mechanism": "laplace", "eps0": 1.5}


# ------------------------------------------------------------------ MatrixMechanism
def _random_ldp_matrix(rng, D, Y):
    P = rng.uniform(1.0, 3.0, size=(D, Y))
    return P / P.sum(axis=1, keepdims=True)


def test_matrix_mechanism_basics():
    rng = np.random.default_rng(1)
    P = _random_ldp_matrix(rng, 4, 6)
    m = MatrixMechanism(P)
    assert m.eps0 == pytest.approx(_validate.ldp_level(P))
    assert m.gamma == pytest.approx(P.min(axis=0).sum())
    assert m.matrix().shape == (4, 6)
    assert_same_decomposition(m.decomposition("primary", x0=2, x1=3), primary_decomposition(P, 2, 3))
    with pytest.raises(ParameterError) as ei:
        m.decomposition("asymptotic")
    assert ei.value.parameter == "form"
    # claimed eps0 larger than the tight one is accepted and kept
    m2 = MatrixMechanism(P, eps0=m.eps0 + 0.5)
    assert m2.eps0 == pytest.approx(m.eps0 + 0.5) and m2.eps0_tight == pytest.approx(m.eps0)
    desc = json.loads(json.dumps(m.describe()))
    assert desc["mechanism"] == "matrix" and desc["shape"] == [4, 6]


def test_matrix_upper_dedup_covers_all_pairs():
    rng = np.random.default_rng(2)
    for P in (_random_ldp_matrix(rng, 4, 5), KRR(1.0, 4).matrix(), BLH(1.0, 3).matrix()):
        m = MatrixMechanism(P)
        ups = m.upper_decompositions()
        D = P.shape[0]
        keys = [multiset(u.simplified()) for u in ups]
        for x0 in range(D):
            for x1 in range(D):
                if x0 == x1:
                    continue
                dec = primary_decomposition(P, x0, x1)
                cands = [multiset(dec.simplified()), multiset(dec.swapped().simplified())]
                assert any(k.shape == c.shape and np.allclose(k, c, atol=1e-12) for k in keys for c in cands)
    assert len(MatrixMechanism(KRR(1.0, 6).matrix()).upper_decompositions()) == 1
    assert len(MatrixMechanism(_random_ldp_matrix(rng, 4, 5)).upper_decompositions()) == 6


def test_matrix_lower_all_triples():
    P = KRR(1.0, 4).matrix()
    lows = MatrixMechanism(P).lower_decompositions()
    # datasets x2 = x0, x2 = x1 and x2 distinct (x2 = x0 included since the lower bound
    # covers every x2 = ... = xn dataset, see test_oracle.test_matrix_lower_covers_worst_clump)
    assert len(lows) == 3
    assert_same_law(lows[-1], KRR(1.0, 4).lower_decompositions()[0])
    rng = np.random.default_rng(3)
    P = _random_ldp_matrix(rng, 3, 4)
    lows = MatrixMechanism(P).lower_decompositions()
    assert len(lows) == 3 * 2 * 3      # all (x0, x1 != x0, x2)
    big = MatrixMechanism(_random_ldp_matrix(rng, 9, 5)).lower_decompositions()
    assert 0 < len(big) <= 64


def test_matrix_from_csv(tmp_path):
    P = KRR(0.9, 3).matrix()
    f = tmp_path / "m.csv"
    np.savetxt(f, P, delimiter=",")
    m = make("matrix", matrix=str(f))
    assert m.eps0 == pytest.approx(0.9)
    m = make("matrix", matrix=f, eps0=1.0)
    assert m.eps0 == 1.0
    with pytest.raises(ParameterError) as ei:
        make("matrix", matrix=str(tmp_path / "missing.csv"))
    assert ei.value.parameter == "matrix"


# ------------------------------------------------------------------ registry and describe
def test_make_registry():
    assert make("krr", eps0=1.0, k=10) == KRR(1.0, 10)
    assert make("blh", eps0=1, d=None) == BLH(1.0)
    assert make("rappor", eps0=2.0, d=8) == RAPPOR(2.0, 8)
    assert make("oue", eps0=2.0) == OUE(2.0, None)
    assert make("hr", eps0=1.0, d=64) == HadamardResponse(1.0, 64)
    assert make("laplace", eps0=0.5) == Laplace(0.5)
    assert isinstance(make("matrix", eps0=None, matrix=KRR(1.0, 3).matrix()), MatrixMechanism)
    assert make("KRR", eps0=1.0, k=3.0).k == 3
    for m in FINITE + [BLH(1.0), Laplace(1.0)]:
        assert isinstance(m, Mechanism)
        desc = json.loads(json.dumps(m.describe()))
        assert desc["mechanism"] == m.name and desc["eps0"] == m.eps0
        params = {k: v for k, v in desc.items() if k != "mechanism"}
        assert make(m.name, **params) == m


@pytest.mark.parametrize("call,param", [
    (lambda: make("nope", eps0=1.0), "mechanism"),
    (lambda: make(None), "mechanism"),
    (lambda: make("krr", eps0=1.0), "k"),
    (lambda: make("krr", k=3), "eps0"),
    (lambda: make("krr", eps0=1.0, k=3, d=4), "d"),
    (lambda: make("hr", eps0=1.0), "d"),
    (lambda: make("matrix"), "matrix"),
    (lambda: KRR(float("nan"), 3), "eps0"),
    (lambda: KRR(0.0, 3), "eps0"),
    (lambda: KRR(-1.0, 3), "eps0"),
    (lambda: KRR(float("inf"), 3), "eps0"),
    (lambda: KRR(1e4, 3), "eps0"),
    (lambda: KRR(1.0, 1), "k"),
    (lambda: KRR(1.0, 2.5), "k"),
    (lambda: BLH(float("nan"), 4), "eps0"),
    (lambda: BLH(1.0, 1), "d"),
    (lambda: RAPPOR(1.0, 0), "d"),
    (lambda: OUE(1.0, float("nan")), "d"),
    (lambda: HadamardResponse(1.0, 12), "d"),
    (lambda: HadamardResponse(1.0, 2), "d"),
    (lambda: HadamardResponse(1.0, 1000), "d"),
    (lambda: Laplace(-0.1), "eps0"),
    (lambda: MatrixMechanism([[0.5, 0.6], [0.5, 0.5]]), "matrix"),
    (lambda: MatrixMechanism([[0.5, 0.5]]), "matrix"),
    (lambda: MatrixMechanism([[1.0, 0.0], [0.5, 0.5]]), "matrix"),
    (lambda: MatrixMechanism([[np.nan, 1.0], [0.5, 0.5]]), "matrix"),
    (lambda: MatrixMechanism(KRR(1.0, 3).matrix(), eps0=0.5), "eps0"),
    (lambda: MatrixMechanism(KRR(1.0, 3).matrix(), eps0=float("nan")), "eps0"),
    (lambda: KRR(1.0, 3).decomposition("nope"), "form"),
    (lambda: BLH(1.0, 13).matrix(), "d"),
    (lambda: HadamardResponse(1.0, 4096).matrix(), "d"),
    (lambda: KRR(1.0, 4096).matrix(), "k"),
])
def test_bad_input(call, param):
    with pytest.raises(ParameterError) as ei:
        call()
    assert ei.value.parameter == param


def test_not_ldp_errors():
    with pytest.raises(NotLDPError) as ei:
        MatrixMechanism(KRR(1.0, 3).matrix(), eps0=0.9)
    assert ei.value.parameter == "eps0"
    with pytest.raises(NotLDPError) as ei:
        MatrixMechanism([[1.0, 0.0], [0.5, 0.5]])
    assert ei.value.parameter == "matrix"


def test_frozen():
    m = KRR(1.0, 3)
    with pytest.raises(Exception):
        m.eps0 = 2.0
    with pytest.raises(ValueError):
        m.matrix()[0, 0] = 1.0


# ------------------------------------------------------------------ sanity: lower <= upper
def _theorem12(g, n):
    """(1/n) E[(G_1 + ... + G_n)_+] by exact enumeration of the atoms ([SCW] Theorem 12)."""
    v, p = law(g)
    tot_v, tot_p = np.zeros(1), np.ones(1)
    for _ in range(n):
        tot_v = (tot_v[:, None] + v[None, :]).ravel()
        tot_p = (tot_p[:, None] * p[None, :]).ravel()
    return float(np.dot(np.maximum(tot_v, 0.0), tot_p)) / n


@pytest.mark.parametrize("mech", [KRR(1.0, 5), KRR(2.0, 2), BLH(1.0, 5), BLH(1.5), RAPPOR(1.0, 4),
                                  OUE(1.0, 6), HadamardResponse(1.0, 8), HadamardResponse(2.0, 4),
                                  MatrixMechanism(np.array([[.5, .3, .2], [.2, .5, .3], [.25, .25, .5]]))],
                         ids=lambda m: m.name)
def test_lower_below_upper(mech):
    for n, eps in ((3, 0.1), (4, 0.4)):
        ups = mech.upper_decompositions()
        up = max(_theorem12(d.gparv(eps), n) for u in ups for d in (u, u.swapped()))
        lo = max(_theorem12(d.gparv(eps), n) for d in mech.lower_decompositions())
        assert 0 < lo <= up + 1e-12


# ============================================================================ model interface
def test_decomposition_arrays_read_only():
    d = Decomposition([0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.25, 0.25, 0.0])
    for arr in (d.a, d.b, d.c):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 0.0
    s = KRR(1.0, 5).decomposition()
    assert not (s.a.flags.writeable or s.b.flags.writeable or s.c.flags.writeable)


def test_merge_by_ratio_is_the_simplification():
    rng = np.random.default_rng(5)
    P = _random_ldp_matrix(rng, 4, 9)
    dec = primary_decomposition(P, 0, 1)
    a, b, c = merge_by_ratio(dec.a, dec.b, dec.c)
    s = dec.simplified()
    assert np.array_equal(a, s.a) and np.array_equal(b, s.b) and np.array_equal(c, s.c)


def test_law_key_and_dedupe():
    d = KRR(1.0, 4).decomposition()
    prim = KRR(1.0, 4).decomposition("primary")
    assert law_key(d) == law_key(prim)
    assert law_key(d) == law_key(d.swapped())          # k-RR is input-symmetric
    asym = primary_decomposition(_random_ldp_matrix(np.random.default_rng(2), 3, 4), 0, 1)
    assert law_key(asym) != law_key(asym.swapped())
    lap = LaplaceFamily(1.0)
    assert law_key(lap) == law_key(LaplaceFamily(1.0)) != law_key(LaplaceFamily(1.0, "lower"))
    out = dedupe([d, prim, lap, LaplaceFamily(1.0), d.swapped(), asym, asym.swapped(), asym.simplified()])
    assert [id(f) for f in out] == [id(d), id(lap), id(asym), id(out[3])] and out[3].label.endswith("(swapped)")


def test_clone_decomposition():
    E = math.exp(0.8)
    d = clone_decomposition(0.8)
    assert np.array_equal(d.a, [E / (E + 1), 1 / (E + 1)])
    assert np.array_equal(d.b, [1 / (E + 1), E / (E + 1)])
    assert np.array_equal(d.c, [1 / (2 * E), 1 / (2 * E)])
    assert d.beta == 1 - 1 / E


@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_krr_stronger_clone_is_the_fmt23_four_point_decomposition(k):
    """The corrected FMT23 four-point decomposition of k-RR is its optimal decomposition (same law)."""
    eps0 = 0.9
    E = math.exp(eps0)
    p = 1.0 / (E + k - 1)
    q = (k - 2) * p
    a, b, c = [E * p, p, q], [p, E * p, q], [p, p, q]
    fmt23 = Decomposition(a, b, c, 1.0 - sum(c))
    got = KRR(eps0, k).stronger_clone_decomposition()
    assert law_key(got) == law_key(fmt23)
    for eps in (0.0, 0.3, 0.8):
        g1, g2 = got.gparv(eps), fmt23.gparv(eps)
        assert np.allclose(g1.values, g2.values, rtol=1e-13) and np.allclose(g1.probs, g2.probs, rtol=1e-13)
    assert BLH(1.0).stronger_clone_decomposition() is None


def test_registry_and_declared_parameters():
    # the built-in finite mechanisms first; randomizers beyond pure LDP ("gaussian", "approx-ldp")
    # register when shuffleamp.gaussian is imported
    assert list(MECHANISMS)[:7] == ["krr", "blh", "rappor", "oue", "hr", "laplace", "matrix"]
    assert MECHANISMS["krr"] is KRR and MECHANISMS["matrix"] is MatrixMechanism
    assert KRR.parameters == ("k",) and BLH.defaults == {"d": None}
    with pytest.raises(ParameterError) as ei:
        make("krr", k=3)
    assert ei.value.parameter == "eps0"


ALL = FINITE + [BLH(1.0), RAPPOR(0.5), OUE(2.0), Laplace(1.5)]


@pytest.mark.parametrize("mech", ALL, ids=[f"{m.name}-{m.eps0}-{getattr(m, 'k', getattr(m, 'd', None))}" for m in ALL])
def test_with_eps0_keeps_parameters(mech):
    m2 = mech.with_eps0(0.37)
    assert type(m2) is type(mech) and m2.eps0 == 0.37
    d1, d2 = mech.describe(), m2.describe()
    d1.pop("eps0"), d2.pop("eps0")
    assert d1 == d2
    with pytest.raises(ParameterError) as ei:
        mech.with_eps0(-1.0)
    assert ei.value.parameter == "eps0"


def test_with_eps0_refused_for_matrix_and_composed():
    from shuffleamp.compose import joint, subsample
    for m in (MatrixMechanism(KRR(1.0, 3).matrix()), joint(KRR(0.5, 3), KRR(0.5, 3)), subsample(KRR(1.0, 3), 0.5)):
        with pytest.raises(ParameterError) as ei:
            m.with_eps0(1.0)
        assert ei.value.parameter == "mechanism"
        assert f"{m.name!r}: its eps0 is not a free parameter, so max_eps0 cannot vary it" in str(ei.value)


def test_domain():
    assert KRR(1.0, 7).domain == 7
    assert BLH(1.0, 5).domain == 5 and BLH(1.0).domain is None and OUE(1.0, 3).domain == 3
    assert HadamardResponse(1.0, 8).domain == 7
    assert Laplace(1.0).domain == 2
    assert MatrixMechanism(KRR(1.0, 4).matrix()).domain == 4


def test_variation_ratio_beta():
    E = math.exp(1.2)
    assert KRR(1.2, 5).variation_ratio_beta() == (math.expm1(1.2) / (E + 4), "Table 2 GRR, d=5")
    assert BLH(1.2).variation_ratio_beta()[0] == math.tanh(0.6)
    assert RAPPOR(1.2).variation_ratio_beta()[0] == math.tanh(0.3)
    assert OUE(1.2).variation_ratio_beta()[0] == math.tanh(0.6) / 2
    assert HadamardResponse(1.2, 8).variation_ratio_beta()[0] == math.tanh(0.6) / 2
    assert Laplace(1.2).variation_ratio_beta()[0] == -math.expm1(-0.6)
    P = KRR(1.2, 4).matrix()
    beta, _ = MatrixMechanism(P).variation_ratio_beta()
    assert beta == pytest.approx(0.5 * np.abs(P[0] - P[1]).sum(), rel=1e-12)
    from shuffleamp.compose import joint
    assert joint(KRR(0.5, 3), KRR(0.7, 3)).variation_ratio_beta() == (math.tanh(0.6), "Table 2 general mechanisms")


def test_lower_cases_tag_the_lower_decompositions():
    for m in ALL + [MatrixMechanism(KRR(1.0, 4).matrix())]:
        cases = m.lower_cases()
        assert [law_key(f) for _, f in cases] == [law_key(f) for f in m.lower_decompositions()][:len(cases)]
        assert all(p[0] in ("type", "triple") for p, _ in cases)
    assert KRR(1.0, 2).lower_cases()[0][0] == ("type", "x2=x1")
    assert BLH(1.0).lower_cases()[0][0] == ("type", "distinct")


# ============================================================================ CONTRIBUTING.md example
def _contributing_example() -> str:
    import pathlib
    text = (pathlib.Path(__file__).resolve().parents[1] / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = text.split("<!-- example:begin -->", 1)[1].split("<!-- example:end -->", 1)[0]
    return block.split("```python", 1)[1].rsplit("```", 1)[0]


def test_contributing_example():
    """The worked example in CONTRIBUTING.md is one class that works everywhere (then unregistered)."""
    import shuffleamp
    from shuffleamp.compose import parallel

    ns: dict = {"__name__": "contributing_example"}
    try:
        exec(compile(_contributing_example(), "CONTRIBUTING.md", "exec", dont_inherit=True), ns)
        KSubset = ns["KSubset"]
        assert MECHANISMS["ksubset"] is KSubset
        m = KSubset(1.0, 5, 2)
        assert make("ksubset", eps0=1.0, k=5, s=2) == m
        assert m.with_eps0(2.0) == KSubset(2.0, 5, 2)
        ups = MatrixMechanism(m.matrix()).upper_decompositions()
        assert law_key(m.decomposition()) in {law_key(d) for u in ups for d in (u, u.swapped())}
        assert law_key(KSubset(1.0, 5, 1).decomposition()) == law_key(KRR(1.0, 5).decomposition())
        assert law_key(KSubset(1.0, 5, 1).lower_decompositions()[0]) == law_key(KRR(1.0, 5).lower_decompositions()[0])
        r = shuffleamp.delta(m, 200, 0.3)
        rm = shuffleamp.delta(MatrixMechanism(m.matrix()), 200, 0.3)
        assert r.upper == pytest.approx(rm.upper, rel=1e-9)
        assert r.lower is not None and r.lower <= r.upper
        mix = parallel([(0.5, m), (0.5, KRR(1.0, 5))])
        assert mix.lower_decompositions()
        with pytest.raises(ParameterError) as ei:
            KSubset(1.0, 5, 5)
        assert ei.value.parameter == "s"
    finally:
        MECHANISMS.pop("ksubset", None)


# ---------------------------------------------------------------------------- extremes
def _sorted_components(dec: Decomposition):
    """(log r0, log r1, c) rows of the simplified decomposition, sorted: comparable at any ε0."""
    s = dec.simplified()
    rows = np.stack([np.log(s.a / s.c), np.log(s.b / s.c), s.c], axis=1)
    key = np.round(rows[:, :2], 6)        # sort on rounded log ratios so float noise cannot reorder
    return rows[np.lexsort(key.T[::-1])]


@pytest.mark.parametrize("eps0", [20.0, 30.0, 40.0, 60.0, 100.0, 150.0])
@pytest.mark.parametrize("cls, d", [(BLH, 3), (BLH, 2), (RAPPOR, 3), (RAPPOR, 2), (OUE, 3), (OUE, 2)])
def test_bit_lower_large_eps0_matches_matrix(cls, d, eps0):
    """Regression: BLH(20) / RAPPOR(40, 5) raised ParameterError('a'): masses sum to 0.99999...
    (1 - E/(1+E) cancelled).  The closed-form Theorem-14 law equals the one read off the matrix rows
    (log ratios, masses to relative 1e-9) up to the documented ε0 limit."""
    m = cls(eps0, d)
    got = m.lower_decompositions()
    P = m.matrix()
    x2 = 1 if d == 2 else 2
    want = lower_decomposition(P, 0, 1, x2)
    g, w = _sorted_components(got[0]), _sorted_components(want)
    assert g.shape == w.shape
    np.testing.assert_allclose(g[:, :2], w[:, :2], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(g[:, 2], w[:, 2], rtol=1e-9, atol=0)
    for dec in got + m.upper_decompositions():
        assert abs(dec.a.sum() - 1) < 1e-12 and abs(dec.b.sum() - 1) < 1e-12


def test_bit_lower_asymptotic_large_eps0_builds():
    """d=None (the limit) and HR (closed form above the matrix size) at large ε0: valid laws."""
    for m in (BLH(20.0), RAPPOR(40.0), OUE(150.0), BLH(150.0), HadamardResponse(60.0, 2 ** 12)):
        for dec in m.lower_decompositions() + m.upper_decompositions():
            assert abs(dec.a.sum() - 1) < 1e-12 and abs(dec.b.sum() - 1) < 1e-12
            g = dec.gparv(m.eps0 * (1 - 1e-9))
            assert np.isfinite(g.values).all()


@pytest.mark.parametrize("build", [
    lambda e: KRR(e, 10), lambda e: BLH(e), lambda e: RAPPOR(e, 5), lambda e: OUE(e, 3),
    lambda e: HadamardResponse(e, 8), lambda e: Laplace(e)], ids=["krr", "blh", "rappor", "oue", "hr", "laplace"])
@pytest.mark.parametrize("eps0", [150.000001, 400.0, 700.0, 701.0, 1e6])
def test_eps0_above_supported_range_is_refused(build, eps0):
    """Regression: KRR / OUE / HR at ε0 = 400 and KRR / Laplace at 700 raised
    ParameterError('values'): GPARV atoms must be finite.  Now one honest limit, naming eps0."""
    with pytest.raises(ParameterError) as ei:
        build(eps0)
    assert ei.value.parameter == "eps0"
    assert "supported range is 0 < eps0 <= 150" in str(ei.value)


def test_eps0_limit_matrix_and_joint():
    with pytest.raises(ParameterError) as ei:          # tight ε0 = 690.8, beyond the supported range
        MatrixMechanism([[1 - 1e-300, 1e-300], [1e-300, 1 - 1e-300]])
    assert ei.value.parameter == "matrix" and "690.776-LDP" in str(ei.value)
    assert "supported range" in str(ei.value)
    e = 1e-60                                           # tight ε0 = 138.2: accepted
    assert MatrixMechanism([[1 - e, e], [e, 1 - e]]).eps0 == pytest.approx(-math.log(e), rel=1e-12)
    assert KRR(150.0, 3).eps0 == 150.0
    import shuffleamp as sa
    with pytest.raises(ParameterError) as ei:
        sa.joint(KRR(100.0, 3), KRR(60.0, 3))
    assert ei.value.parameter == "components" and "supported range" in str(ei.value)
    assert sa.joint(KRR(100.0, 3), KRR(50.0, 3)).eps0 == 150.0


def test_large_eps0_bounds_are_sound_and_finite():
    """ε0 near the limit: the bounds are finite, ordered, and never above ε0 (δ(ε0) = 0)."""
    import shuffleamp as sa
    for m in (KRR(150.0, 10), OUE(150.0), BLH(20.0, 5), RAPPOR(40.0, 5)):
        for n in (2, 1000):
            r = sa.epsilon(m, n, 1e-8)
            assert 0.0 <= r.lower <= r.upper <= m.eps0


@pytest.mark.parametrize("value, fragment", [
    (None, "must be a number, got None"), ("1", "got the string '1'"), (b"1", "got the string b'1'"),
    (True, "got the boolean True"), ([1.0, None], "got None"), (["1", "2"], "array of strings"),
    (float("nan"), "must not be NaN")])
def test_validate_rejects_non_numbers(value, fragment):
    """Regression: None said 'must not be NaN'; numeric strings ('1') were silently accepted."""
    with pytest.raises(ParameterError) as ei:
        _validate.real("x", value)
    assert ei.value.parameter == "x" and fragment in str(ei.value)


def test_mechanisms_reject_strings_and_none():
    for build, param in ((lambda: KRR("1", 10), "eps0"), (lambda: KRR(1.0, "10"), "k"),
                         (lambda: KRR(None, 10), "eps0"), (lambda: BLH(1.0, "5"), "d"),
                         (lambda: HadamardResponse(1.0, None), "d"), (lambda: Laplace("2"), "eps0"),
                         (lambda: MatrixMechanism([[0.5, "0.5"], [0.4, 0.6]]), "matrix"),
                         (lambda: KRR(1.0, True), "k")):
        with pytest.raises(ParameterError) as ei:
            build()
        assert ei.value.parameter == param


def test_count_limit_is_the_same_for_int_and_float():
    """Regression: an int n above 2^62 was accepted while the float was rejected."""
    assert _validate.count(2 ** 62) == 2 ** 62
    assert _validate.count(float(2 ** 62)) == 2 ** 62
    for v in (2 ** 62 + 1, 2 ** 63, 10 ** 30, float(2 ** 63), np.uint64(2 ** 63), np.array([5, 2 ** 63], dtype=object)):
        with pytest.raises(ParameterError) as ei:
            _validate.count(v, "n")
        assert ei.value.parameter == "n" and "2**62" in str(ei.value)
