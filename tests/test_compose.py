"""Tests of composed randomizers (shuffleamp.compose): joint, parallel, subsample.

* Decompositions: the product (joint) and mixture (parallel, subsample) decompositions have the same
  GPARV laws as the blanket decompositions computed directly from the composed matrix (Kronecker product;
  block matrix with outputs (i, y); an extra ⊥ column). Every input pair of the composed matrix is
  covered by a case.
* Brute force: exact shuffled output laws of small composed mechanisms (tests/oracle.py, no GPARV
  theory) at n = 2..4: ``delta(...).upper`` >= worst neighbouring dataset >= ``delta(...).lower``;
  the joint Theorem-14 product GPARV equals the oracle divergence of its dataset.
* Hamming distance: the all-coordinates-differ case is the worst at bound level and for the true divergence
  on small configurations (the full study is ``bench/bench_compose.py --hamming``).
* Hypothesis properties, CLI and plan handling, validation errors.

[SCW] P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414).
"""

from __future__ import annotations

import itertools
import json
import math
import time

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import shuffleamp
from shuffleamp import bounds, compose, config, decomposition
from shuffleamp.cli import main
from shuffleamp.compose import Joint, Parallel, Subsample
from shuffleamp.decomposition import (Decomposition, MixtureFamily, lower_decomposition,
                                      primary_decomposition)
from shuffleamp.errors import ComponentError, ParameterError
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse, Laplace, MatrixMechanism
from shuffleamp.config import PlanError, evaluate_plan, load_plan, parse_plan

from exact_oracles import gparv_bruteforce

import oracle as O

TIE = 1e-15


def _random_ldp_matrix(seed: int, D: int, Y: int, eps0: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    U = np.exp(rng.uniform(0.0, eps0 / 2, size=(D, Y)))
    return U / U.sum(axis=1, keepdims=True)


def law(dec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(r0, r1, c) of the simplified decomposition plus the residual, sorted (GPARV law at every ε)."""
    s = dec.simplified()
    r0, r1 = s.ratios
    order = np.lexsort((np.round(np.log(r1), 9), np.round(np.log(r0), 9)))
    return np.append(r0[order], s.beta), np.append(r1[order], -1.0), np.append(s.c[order], s.beta)


def assert_same_law(d1, d2):
    a, b = law(d1), law(d2)
    assert a[0].shape == b[0].shape, (d1.label, d2.label, a, b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-13)


def same_law(d1, d2) -> bool:
    try:
        assert_same_law(d1, d2)
        return True
    except AssertionError:
        return False


def bf(dec, n, eps) -> float:
    g = dec.gparv(eps)
    return float(gparv_bruteforce(g.values, g.probs, n))


def exact_upper(mech, n, eps) -> float:
    """Exact optimal bound: max over cases and orientations of (1/n)E[(sum G)_+] by enumeration."""
    return max(bf(f, n, eps) for d in mech.upper_decompositions() for f in (d, d.swapped()))


# --------------------------------------------------------------------------- joint decompositions
JOINTS = {
    "krr3xkrr3": lambda: compose.joint(KRR(0.5, 3), KRR(0.5, 3)),
    "krr3xkrr4": lambda: compose.joint(KRR(0.7, 3), KRR(0.4, 4)),
    "krr2xblh3": lambda: compose.joint(KRR(1.0, 2), BLH(0.6, 3)),
    "rappor3xoue3": lambda: compose.joint(RAPPOR(0.8, 3), OUE(0.5, 3)),
    "hr4xkrr3": lambda: compose.joint(HadamardResponse(0.9, 4), KRR(0.3, 3)),
    "matrixxkrr3": lambda: compose.joint(MatrixMechanism(_random_ldp_matrix(7, 3, 4, 1.2)), KRR(0.5, 3)),
    "krr3^3": lambda: compose.joint(KRR(0.3, 3), KRR(0.3, 3), KRR(0.3, 3)),
}


@pytest.mark.parametrize("name", sorted(JOINTS))
def test_joint_cases_equal_all_pairs_of_kronecker_matrix(name):
    """The set of case laws (and swaps) equals the set of blanket laws of all input pairs of the Kronecker matrix."""
    J = JOINTS[name]()
    P = J.matrix()
    T = P.shape[0]
    cases = J.upper_decompositions()
    case_laws = cases + [c.swapped() for c in cases]
    pair_laws, seen = [], set()
    for x0, x1 in itertools.permutations(range(T), 2):
        dec = primary_decomposition(P, x0, x1)
        key = tuple(np.round(np.concatenate(law(dec)), 8))
        if key not in seen and not any(same_law(dec, p) for p in pair_laws):
            pair_laws.append(dec)
        seen.add(key)
    for dec in pair_laws:
        assert any(same_law(dec, c) for c in case_laws), dec.label
    for c in case_laws:
        assert any(same_law(c, p) for p in pair_laws), c.label
    assert J.gamma == pytest.approx(P.min(axis=0).sum(), rel=1e-12)
    assert J.eps0 == pytest.approx(sum(c.eps0 for c in J.components))


@pytest.mark.parametrize("name", ["krr3xkrr4", "rappor3xoue3", "krr3^3"])
def test_joint_named_cases_match_their_pairs(name):
    """Each case's label names the differing subset; it equals the blanket decomposition of that pair."""
    J = JOINTS[name]()
    P = J.matrix()
    dims = [c.matrix().shape[0] for c in J.components]
    m = len(dims)
    for case in J.upper_decompositions():
        differ = case.label.split("differ {")[1].split("}")[0]
        idx = [int(i) - 1 for i in differ.split(",")]
        x1 = tuple(1 if i in idx else 0 for i in range(m))
        dec = primary_decomposition(P, 0, int(np.ravel_multi_index(x1, dims)))
        assert_same_law(dec, case)
    assert_same_law(J.decomposition("primary"), J.decomposition("simplified"))


def test_joint_example_4_2_and_closed_form_recipe():
    """Digest §2.8: the d = m multinomial recipe and the agree/differ product for d < m (2-joint 4-RR)."""
    k, e0 = 4, 1.4
    ec = e0 / 2
    J = compose.joint(KRR(ec, k), KRR(ec, k))
    Ec = math.exp(ec)
    p = 1 / (Ec + k - 1)
    q, r = 0.0, (k - 2) * p
    # d = m: atoms E^{n1+n3} - e E^{n2+n3} with multinomial masses
    a, b, c = [], [], []
    for n1, n2, n3, n4 in itertools.product(range(3), repeat=4):
        if n1 + n2 + n3 + n4 != 2:
            continue
        mass = math.factorial(2) / (math.factorial(n1) * math.factorial(n2) * math.factorial(n3)
                                    * math.factorial(n4)) * p ** n1 * p ** n2 * q ** n3 * r ** n4
        if mass == 0:
            continue
        c.append(mass)
        a.append(mass * Ec ** (n1 + n3))
        b.append(mass * Ec ** (n2 + n3))
    full = Decomposition(a, b, c)
    # d = 1: (k-RR pair) x (u, u) with s_E = p, s_1 = (k-1) p
    same = Decomposition([Ec * p, (k - 1) * p], [Ec * p, (k - 1) * p], [p, (k - 1) * p])
    one = decomposition.product_decomposition([KRR(ec, k).decomposition(), same])
    got = {case.label.split(":")[0]: case for case in J.upper_decompositions()}
    assert_same_law(got["joint hamming 2/2"], full)
    assert_same_law(got["joint hamming 1/2"], one)


@pytest.mark.parametrize("mech", [KRR(0.8, 5), BLH(0.8, 4), RAPPOR(0.8, 4), OUE(0.8, 4), HadamardResponse(0.8, 8),
                                  MatrixMechanism(_random_ldp_matrix(3, 3, 5, 1.0))],
                         ids=["krr", "blh", "rappor", "oue", "hr", "matrix"])
def test_same_decomposition_matches_matrix(mech):
    """(u, u) decompositions (R(u), R(u), inf_x R(x)) for every input u are covered, and nothing else."""
    P = mech.matrix()
    got = compose._same_decompositions(mech)
    want = []
    for u in range(P.shape[0]):
        d = Decomposition(P[u], P[u], P.min(axis=0))
        if not any(same_law(d, w) for w in want):
            want.append(d)
    assert len(got) == len(want)
    for w in want:
        assert any(same_law(w, g) for g in got)
    for g in got:
        r0, r1 = g.simplified().ratios
        np.testing.assert_allclose(r0, r1, rtol=1e-12)


def test_pqr_same_closed_form():
    """Extreme-property closed form (every ratio in {1/E, 1, E}): s_E = p + q with ratio E, s_1 = p + r with ratio 1."""
    m = RAPPOR(1.1, 5)
    E = math.exp(m.eps0)
    p, q, r = m._pqr(False)
    (g,) = compose._same_decompositions(m)
    want = Decomposition([E * (p + q), p + r], [E * (p + q), p + r], [p + q, p + r])
    assert_same_law(g, want)


def test_joint_lower_product_matches_matrix_and_oracle():
    """Joint Theorem-14 decompositions equal lower_decomposition of the Kronecker matrix, and are exact."""
    J = compose.joint(KRR(0.7, 3), KRR(0.5, 4))
    P = J.matrix()
    dims = [3, 4]
    idx = lambda *t: int(np.ravel_multi_index(t, dims))  # noqa: E731
    lows = {d.label.split(" [")[0].split(":")[0]: d for d in J.lower_decompositions()}
    full = lower_decomposition(P, idx(0, 0), idx(1, 1), idx(2, 2))
    assert_same_law(lows["joint lower hamming 2/2"], full)
    part = lower_decomposition(P, idx(0, 2), idx(1, 2), idx(2, 2))
    assert any(same_law(part, d) for d in J.lower_decompositions())
    for n in (2, 3, 4):
        for eps in (0.05, 0.4, 0.9):
            X0, X1 = O.clump_datasets(idx(0, 0), idx(1, 1), idx(2, 2), n)
            exact = O.directed_divergence(P, X0, X1, eps)
            assert bf(full, n, eps) == pytest.approx(exact, rel=1e-10, abs=1e-15)


def test_joint_of_one_and_10_way_structure():
    m = KRR(0.9, 6)
    J = compose.joint(m)
    assert len(J.upper_decompositions()) == 1
    assert_same_law(J.upper_decompositions()[0], m.decomposition())
    assert_same_law(J.lower_decompositions()[0], m.lower_decompositions()[0])
    r1 = shuffleamp.epsilon(m, 5000, 1e-6)
    r2 = shuffleamp.epsilon(J, 5000, 1e-6)
    assert r1.upper == pytest.approx(r2.upper, rel=1e-9)
    # 10-way products of 5-atom pieces: identical (10 Hamming cases) and heterogeneous (d = 10 only)
    # (their construction time is measured in bench/bench_compose.py, not asserted here)
    J10 = compose.joint(*[RAPPOR(0.3) for _ in range(10)])
    ups = J10.upper_decompositions()
    H10 = compose.joint(*[BLH(0.3, d) for d in range(3, 13)], distances=10)
    hs = H10.upper_decompositions()
    assert len(ups) == 10 and len(hs) == 1
    assert all(len(d.c) <= 11 * 11 for d in ups + hs)   # r0 = E^i, r1 = E^j, i + j <= ... : at most 11 x 11
    assert ups[0].gamma == pytest.approx(RAPPOR(0.3).gamma ** 10, rel=1e-12)


def test_joint_identical_groups_and_hetero_subsets():
    """Identical components: one case per Hamming distance; heterogeneous: one per non-empty subset."""
    assert len(compose.joint(*[KRR(0.2, 5)] * 4).upper_decompositions()) == 4
    assert len(compose.joint(KRR(0.2, 5), KRR(0.3, 5), KRR(0.4, 5)).upper_decompositions()) == 7
    J = compose.joint(KRR(0.2, 5), KRR(0.2, 5), BLH(0.3, 4))
    labels = [d.label for d in J.upper_decompositions()]
    assert len(labels) == 5   # (#differing among the 2 identical) x (BLH differs or not) minus all-agree
    assert compose.joint(*[KRR(0.2, 5)] * 4, distances=[4]).upper_decompositions()[0].label.startswith(
        "joint hamming 4/4")


def test_worst_case_reported_in_settings():
    J = compose.joint(KRR(0.5, 10), KRR(0.5, 10), KRR(0.5, 10))
    r = shuffleamp.epsilon(J, 10**4, 1e-6)
    assert r.settings["grid"]["upper"]["pair"].startswith("joint hamming 3/3")
    cases = bounds.case_deltas(J, 10**4, r.upper)
    assert cases[0]["label"].startswith("joint hamming 3/3")
    assert [c["label"].split(":")[0] for c in cases] == [f"joint hamming {d}/3" for d in (3, 2, 1)]
    json.dumps(r.to_dict())


# --------------------------------------------------------------------------- parallel / subsample decompositions
def test_parallel_mixture_matches_block_matrix():
    m1, m2 = KRR(1.0, 4), BLH(0.7, 4)
    Pm = compose.parallel([(0.3, m1), (0.7, m2)])
    P = Pm.matrix()
    assert P.shape == (4, 4 + 32)
    np.testing.assert_allclose(P, np.concatenate([0.3 * m1.matrix(), 0.7 * m2.matrix()], axis=1))
    (up,) = Pm.upper_decompositions()
    for x0, x1 in itertools.permutations(range(4), 2):
        assert_same_law(primary_decomposition(P, x0, x1), up)
    assert Pm.gamma == pytest.approx(P.min(axis=0).sum(), rel=1e-12)
    assert Pm.eps0 == 1.0
    (lo,) = Pm.lower_decompositions()
    assert_same_law(lower_decomposition(P, 0, 1, 2), lo)
    # GPARV = weight-mixture of the components' GPARVs
    g = up.gparv(0.3)
    g1, g2 = m1.decomposition().gparv(0.3), m2.decomposition().gparv(0.3)
    vals = np.concatenate([g1.values, g2.values])
    probs = np.concatenate([0.3 * g1.probs, 0.7 * g2.probs])
    for v in np.unique(np.round(vals, 12)):
        assert g.probs[np.isclose(g.values, v, atol=1e-12)].sum() == pytest.approx(
            probs[np.isclose(vals, v, atol=1e-12)].sum(), rel=1e-10)


def test_subsample_matches_bottom_column():
    m = KRR(1.3, 4)
    q = 0.35
    S = compose.subsample(m, q)
    P = S.matrix()
    want = np.concatenate([q * m.matrix(), np.full((4, 1), 1 - q)], axis=1)
    np.testing.assert_allclose(P, want, rtol=1e-14)
    (up,) = S.upper_decompositions()
    assert_same_law(primary_decomposition(P, 0, 1), up)
    (lo,) = S.lower_decompositions()
    assert_same_law(lower_decomposition(P, 0, 1, 2), lo)
    # G_sub = G_R w.p. q, 1 - e^eps w.p. 1 - q (Poisson subsampling as a mixture, [SCW] Example 4.4)
    eps = 0.4
    g = up.gparv(eps)
    mass_bottom = g.probs[np.isclose(g.values, 1 - math.exp(eps))].sum()
    g_r = m.decomposition().gparv(eps)
    assert mass_bottom == pytest.approx(1 - q + q * g_r.probs[np.isclose(g_r.values, 1 - math.exp(eps))].sum())
    assert S.describe() == {"mechanism": "subsample", "eps0": 1.3, "q": q, "components": [m.describe()]}
    assert S.gamma == pytest.approx(q * m.gamma + 1 - q)


def test_subsample_q1_and_parallel_identical_equal_component():
    m = BLH(2.0)
    base = shuffleamp.delta(m, 3000, 0.5)
    for mech in (compose.subsample(m, 1.0), compose.parallel([(0.4, m), (0.6, m)])):
        r = shuffleamp.delta(mech, 3000, 0.5)
        assert r.upper == pytest.approx(base.upper, rel=1e-9)
        assert r.lower == pytest.approx(base.lower, rel=1e-9)


def test_parallel_with_laplace_mixture_family():
    """Continuous components are mixed at the GPARV level (MixtureFamily)."""
    L = Laplace(1.0)
    same = compose.parallel([(0.5, L), (0.5, L)])
    (fam,) = same.upper_decompositions()
    assert isinstance(fam, MixtureFamily)
    mixed = compose.parallel([(0.3, L), (0.7, KRR(1.0, 2))])
    for eps in (0.1, 0.5):
        for f in (fam, mixed.upper_decompositions()[0], mixed.lower_decompositions()[0]):
            g = f.gparv(eps)
            assert g.mean() == pytest.approx(1 - math.exp(eps), abs=1e-6)   # Property 2 (E[G] = 1 - e^eps)
    c = mixed.upper_decompositions()[0].gparv(0.3).continuous
    ref = L.upper_decompositions()[0].gparv(0.3).continuous
    s_grid = np.linspace(c.lo - 1, c.hi + 1, 41)
    np.testing.assert_allclose(c.cdf(s_grid), 0.3 * ref.cdf(s_grid), atol=1e-15)
    np.testing.assert_allclose(c.icdf(s_grid), 0.3 * (ref.icdf(np.clip(s_grid, ref.lo, ref.hi))
                                                      + ref.mass * np.maximum(s_grid - ref.hi, 0)), atol=1e-13)
    # the mixture of L with itself is L's continuous family: the same certified values through the dispatch
    from shuffleamp.evaluate import LOWER_MODE, max_delta
    b = shuffleamp.delta(same, 300, 0.1)
    up, _ = max_delta([f for d in L.upper_decompositions() for f in (d, d.swapped())], 300, 0.1, "spread")
    lo, _ = max_delta([f for d in L.lower_decompositions() for f in (d, d.swapped())], 300, 0.1, LOWER_MODE,
                      rtol=1e-4)
    assert b.upper == pytest.approx(up, rel=1e-9)
    assert b.lower >= lo * (1 - 1e-9)
    # L alone is evaluated on finite decompositions (another certified discretisation): the brackets meet
    a = shuffleamp.delta(L, 300, 0.1)
    assert a.lower <= b.upper and b.lower <= a.upper


@pytest.mark.slow
def test_parallel_with_laplace_bounds():
    L = Laplace(1.0)
    mixed = compose.parallel([(0.5, L), (0.5, KRR(1.0, 2))])
    r = shuffleamp.epsilon(mixed, 300, 1e-3)
    assert 0 < r.lower <= r.upper <= 1.0
    sub = compose.subsample(L, 0.2)
    r2 = shuffleamp.epsilon(sub, 300, 1e-3)
    assert 0 < r2.lower <= r2.upper < shuffleamp.epsilon(L, 300, 1e-3).upper


def test_parallel_nonsymmetric_matrix_components_use_block_matrix():
    A = MatrixMechanism(_random_ldp_matrix(11, 3, 3, 1.0))
    B = MatrixMechanism(_random_ldp_matrix(12, 3, 4, 1.0))
    Pm = compose.parallel([(0.5, A), (0.5, B)])
    P = Pm.matrix()
    ref = MatrixMechanism(P)
    ups = Pm.upper_decompositions()
    assert len(ups) == len(ref.upper_decompositions())
    for x0, x1 in itertools.permutations(range(3), 2):
        dec = primary_decomposition(P, x0, x1)
        assert any(same_law(dec, u) or same_law(dec, u.swapped()) for u in ups)


def test_parallel_lower_only_mixes_common_datasets():
    # HR rows and k-RR on 3 inputs: HR's (1 | 2; 3) dataset is mutually distinct, matching k-RR's
    Pm = compose.parallel([(0.5, HadamardResponse(1.0, 4)), (0.5, KRR(1.0, 3))])
    P = Pm.matrix()
    (lo,) = Pm.lower_decompositions()
    assert_same_law(lower_decomposition(P, 0, 1, 2), lo)
    # 2-element domain: k-RR (x2 = x1) with Laplace (x2 = x1) is compatible
    assert compose.parallel([(0.5, KRR(1.0, 2)), (0.5, Laplace(1.0))]).lower_decompositions()
    # a joint (opaque dataset) only mixes with ⊥
    J = compose.joint(KRR(0.5, 3), KRR(0.5, 3))
    assert compose.subsample(J, 0.5).lower_decompositions()
    assert compose._combine_patterns([("type", "distinct"), ("type", "x2=x1")]) is None
    assert compose._combine_patterns([("triple", (0, 1, 1)), ("type", "distinct")]) is None
    assert compose._combine_patterns([("triple", (0, 1, 2)), ("type", "distinct"), ("any",)]) == ("triple", (0, 1, 2))


def test_subsample_of_joint_matches_matrix():
    J = compose.joint(KRR(0.5, 3), KRR(0.5, 3))
    S = compose.subsample(J, 0.4)
    P = S.matrix()
    cases = S.upper_decompositions()
    assert len(cases) == 2
    for x0, x1 in itertools.permutations(range(9), 2):
        dec = primary_decomposition(P, x0, x1)
        assert any(same_law(dec, c) for c in cases)


# --------------------------------------------------------------------------- brute force (oracle)
SMALL = {
    "joint krr3 x krr3": lambda: compose.joint(KRR(0.6, 3), KRR(0.6, 3)),
    "joint krr2 x krr3": lambda: compose.joint(KRR(1.0, 2), KRR(0.5, 3)),
    "joint blh2 x krr2": lambda: compose.joint(BLH(0.8, 2), KRR(0.8, 2)),
    "parallel krr3 + rappor3": lambda: compose.parallel([(0.5, KRR(1.0, 3)), (0.5, RAPPOR(1.0, 3))]),
    "subsample krr3": lambda: compose.subsample(KRR(1.5, 3), 0.3),
    "subsample joint": lambda: compose.subsample(compose.joint(KRR(0.5, 3), KRR(0.5, 3)), 0.5),
}


BIG = {"joint krr3 x krr3", "joint krr2 x krr3", "subsample joint"}   # 6-9 inputs: n = 3 is slow


@pytest.mark.parametrize("name", sorted(SMALL))
@pytest.mark.parametrize("n", [2, 3, pytest.param(4, marks=pytest.mark.slow)])
def test_bruteforce_sandwich(name, n):
    if n == 3 and name in BIG:
        pytest.skip("covered by test_bruteforce_sandwich_big_n3 (slow)")
    mech = SMALL[name]()
    P = mech.matrix()
    for frac in (0.05, 0.3, 0.7):
        eps = frac * mech.eps0
        worst = O.worst_dataset_divergence(P, n, eps, max_pairs=60_000)
        r = shuffleamp.delta(mech, n, eps)
        assert r.upper >= worst - TIE, (eps, r.upper, worst)
        assert r.upper >= exact_upper(mech, n, eps) - 1e-12
        assert r.lower is not None and r.lower <= worst + TIE, (eps, r.lower, worst)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BIG))
def test_bruteforce_sandwich_big_n3(name):
    mech = SMALL[name]()
    P = mech.matrix()
    for frac in (0.05, 0.3, 0.7):
        eps = frac * mech.eps0
        worst = O.worst_dataset_divergence(P, 3, eps, max_pairs=60_000)
        r = shuffleamp.delta(mech, 3, eps)
        assert r.lower - TIE <= worst <= r.upper + TIE


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SMALL))
def test_bruteforce_sandwich_n5(name):
    mech = SMALL[name]()
    P = mech.matrix()
    for frac in (0.1, 0.5):
        eps = frac * mech.eps0
        worst = O.worst_dataset_divergence(P, 5, eps, max_pairs=200_000)
        r = shuffleamp.delta(mech, 5, eps)
        assert r.lower - TIE <= worst <= r.upper + TIE


# --------------------------------------------------------------------------- Hamming distance
def _true_by_distance(k, m, eps_c, n, eps):
    J = compose.joint(*[KRR(eps_c, k) for _ in range(m)])
    P = J.matrix()
    T = P.shape[0]
    a = math.exp(eps)
    best = {}
    for d in range(1, m + 1):   # x0 = (0..0), x1 = d leading ones (k-RR symmetries, exchangeable coordinates)
        x1 = int(np.ravel_multi_index(tuple([1] * d + [0] * (m - d)), [k] * m))
        for rest in itertools.combinations_with_replacement(range(T), n - 1):
            X0, X1 = (0,) + rest, (x1,) + rest
            Pl = O.lump_equal_columns(P, list(X0) + list(X1))
            l0, l1 = O.histogram_law(Pl, X0, lump=False), O.histogram_law(Pl, X1, lump=False)
            best[d] = max(best.get(d, 0.0), O.hockey_stick(l0, l1, a), O.hockey_stick(l1, l0, a))
    return best


@pytest.mark.parametrize("k,m,eps_c,n", [(3, 2, 0.5, 3), (4, 2, 1.0, 3), (2, 3, 1.0, 3)])
def test_all_differ_is_worst_true_divergence(k, m, eps_c, n):
    for frac in (0.05, 0.3):
        eps = frac * m * eps_c
        best = _true_by_distance(k, m, eps_c, n, eps)
        assert all(best[d] < best[m] for d in range(1, m)), best


@pytest.mark.parametrize("k", [3, 10])
@pytest.mark.parametrize("m", [2, 3])
def test_all_differ_is_worst_bound(k, m):
    J = compose.joint(*[KRR(0.7, k) for _ in range(m)])
    decs = {int(d.label.split("hamming ")[1].split("/")[0]): d for d in J.upper_decompositions()}
    for n in (2, 4):
        for frac in np.linspace(0.02, 0.9, 8):
            eps = frac * J.eps0
            vals = [max(bf(decs[d], n, eps), bf(decs[d].swapped(), n, eps)) for d in range(1, m + 1)]
            assert all(vals[i] <= vals[i + 1] + 1e-14 for i in range(m - 1)), vals


@pytest.mark.slow
def test_all_differ_is_worst_true_divergence_wider():
    for k, m, eps_c, ns in [(3, 2, 1.0, (4, 5)), (4, 2, 0.5, (4,)), (3, 3, 0.5, (2, 3)), (2, 3, 2.0, (4,))]:
        for n in ns:
            for frac in (0.05, 0.2, 0.5):
                best = _true_by_distance(k, m, eps_c, n, frac * m * eps_c)
                top = max(best.values())
                assert best[m] >= top - TIE, best


# --------------------------------------------------------------------------- properties
_krr = st.builds(lambda e, k: KRR(e, k), st.floats(0.1, 2.0), st.integers(2, 6))


def _no_tie(eps, eps0s):
    """Skip ε equal to a sum of component ε0's: some GPARV atom is then 0 up to rounding (e.g. 3e-16), a
    degenerate input on which the engine currently stalls (reported; not a composition issue)."""
    sums = {0.0}
    for e in eps0s:
        sums |= {x + e for x in sums}
    assume(all(abs(eps - x) > 1e-9 * max(1.0, x) for x in sums))


@settings(max_examples=20, deadline=None)
@given(comps=st.lists(_krr, min_size=1, max_size=3), n=st.integers(2, 3000), frac=st.floats(0.02, 0.9))
def test_prop_joint_upper_ge_lower(comps, n, frac):
    J = compose.joint(*comps)
    _no_tie(frac * J.eps0, [c.eps0 for c in comps])
    r = shuffleamp.delta(J, n, frac * J.eps0)
    assert 0 <= r.lower <= r.upper <= 1


@settings(max_examples=20, deadline=None)
@given(m=_krr, q=st.floats(0.01, 1.0), w=st.floats(0.0, 1.0), n=st.integers(2, 3000), frac=st.floats(0.02, 0.9))
def test_prop_parallel_subsample_upper_ge_lower(m, q, w, n, frac):
    other = KRR(m.eps0 / 2, m.k)
    _no_tie(frac * m.eps0, [m.eps0, other.eps0])
    for mech in (compose.subsample(m, q), compose.parallel([(w, m), (1 - w, other)])):
        r = shuffleamp.delta(mech, n, frac * mech.eps0)
        assert r.lower is not None and 0 <= r.lower <= r.upper <= 1


@settings(max_examples=20, deadline=None)
@given(m=st.integers(1, 4), k=st.integers(2, 12), eps0=st.floats(0.2, 4.0), n=st.integers(2, 1000),
       frac=st.floats(0.02, 0.3))
def test_prop_joint_monotone_in_n(m, k, eps0, n, frac):
    """At fixed total ε0 and ε, the joint δ is non-increasing in n.

    (1/n)E[(S_n)_+] is non-increasing in n: S_{n+1} = (1/n) sum_i S_{n+1}^{(-i)} and convexity. The certified
    lower bound at 4n never exceeds the certified upper bound at n; the upper bounds themselves are monotone up
    to their relative accuracy (rtol = 1e-3).
    """
    J = compose.joint(*[KRR(eps0 / m, k) for _ in range(m)])
    eps = frac * eps0
    _no_tie(eps, [c.eps0 for c in J.components])
    a = shuffleamp.delta(J, n, eps)
    b = shuffleamp.delta(J, 4 * n, eps)
    assert b.lower <= a.upper + TIE
    assert b.upper <= a.upper * (1 + 2e-3) + 1e-15


# --------------------------------------------------------------------------- validation
def test_validation_errors():
    with pytest.raises(ParameterError, match="weights"):
        compose.parallel([(0.5, KRR(1, 3)), (0.4, KRR(1, 3))])
    with pytest.raises(ParameterError, match="weights"):
        compose.parallel([(-0.5, KRR(1, 3)), (1.5, KRR(1, 3))])
    with pytest.raises(ParameterError) as ei:
        compose.parallel([(0.5, KRR(1, 10)), (0.5, KRR(1, 5))])
    assert isinstance(ei.value, ComponentError) and "component 2" in str(ei.value)
    with pytest.raises(ComponentError, match="component 2: field 'mechanism'"):
        compose.parallel([(0.5, KRR(1, 4)), (0.5, "blh")])
    for q in (0.0, 1.5, float("nan"), -0.1):
        with pytest.raises(ParameterError) as ei:
            compose.subsample(KRR(1, 3), q)
        assert ei.value.parameter == "q"
    with pytest.raises(ComponentError, match="continuous"):
        compose.joint(KRR(1, 3), Laplace(1.0))
    with pytest.raises(ParameterError, match="components"):
        compose.joint()
    with pytest.raises(ParameterError, match="distances"):
        compose.joint(KRR(1, 3), KRR(1, 3), distances=3)
    with pytest.raises(ComponentError, match="component 2: field 'k': must be an integer >= 2"):
        config.parse_component_spec("krr:k=1:eps0=1", 2)
    with pytest.raises(ComponentError, match="component 1: field 'weight'"):
        config.parse_component_spec("krr:k=3:eps0=1", 1, weighted=True)
    with pytest.raises(ComponentError, match="component 3: field 'spec'"):
        config.parse_component_spec("krr:k3", 3)
    with pytest.raises(ComponentError, match="component 1: field 'mechanism'"):
        config.parse_component_spec("nope:eps0=1", 1)
    with pytest.raises(ComponentError, match="component 1: field 'eps0'"):
        config.parse_component_spec("blh:eps0=-1", 1)


def test_spec_parsing_and_equality():
    assert config.parse_component_spec("krr:k=10:eps0=0.5", 1) == KRR(0.5, 10)
    w, m = config.parse_component_spec("0.25:blh:eps0=1:d=none", 1, weighted=True)
    assert w == 0.25 and m == BLH(1.0)
    a = compose.joint(KRR(0.5, 10), KRR(0.5, 10))
    b = config.from_config("joint", components=[{"mechanism": "krr", "k": 10, "eps0": 0.5}] * 2)
    assert a == b and hash(a) == hash(b)
    p = config.from_config("parallel", components=[{"mechanism": "krr", "k": 10, "eps0": 1}, {"mechanism": "blh",
                                                                                            "eps0": 1}],
                            weights=[0.5, 0.5])
    assert isinstance(p, Parallel) and p.weights == (0.5, 0.5)
    s = config.from_config("subsample", components=[{"mechanism": "krr", "k": 10, "eps0": 1}], q=0.1)
    assert isinstance(s, Subsample) and s.q == 0.1
    nested = config.from_config("subsample", q=0.5, components=[
        {"mechanism": "joint", "components": [{"mechanism": "krr", "k": 3, "eps0": 0.5}] * 2}])
    assert isinstance(nested.mechanism, Joint)
    with pytest.raises(ComponentError, match="component 1: field 'components'.*component 2: field 'k'"):
        config.from_config("subsample", q=0.5, components=[
            {"mechanism": "joint", "components": [{"mechanism": "krr", "k": 3, "eps0": 0.5},
                                                  {"mechanism": "krr", "k": 1, "eps0": 0.5}]}])
    with pytest.raises(ComponentError, match="component 2: field 'weight': missing"):
        config.from_config("parallel", components=[{"mechanism": "krr", "k": 3, "eps0": 1, "weight": 1.0},
                                                    {"mechanism": "krr", "k": 3, "eps0": 1}])


# --------------------------------------------------------------------------- CLI and plans
JOINT_ARGS = ["--mechanism", "joint", "--component", "krr:k=10:eps0=0.5", "--component", "krr:k=10:eps0=0.5"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_joint_parallel_subsample(capsys):
    code, out, err = run(capsys, "epsilon", *JOINT_ARGS, "--n", "20000", "--delta", "1e-6", "--json")
    assert code == 0, err
    d = json.loads(out)["result"]
    assert d["mechanism"]["mechanism"] == "joint" and d["eps0"] == 1.0
    assert d["settings"]["grid"]["upper"]["pair"].startswith("joint hamming 2/2")
    api = shuffleamp.epsilon(compose.joint(KRR(0.5, 10), KRR(0.5, 10)), 20000, 1e-6)
    assert d["epsilon_upper"] == pytest.approx(api.upper, rel=1e-12)
    code, out, err = run(capsys, "delta", "--mechanism", "parallel", "--component", "0.5:krr:k=10:eps0=1",
                         "--component", "0.5:blh:eps0=1", "--n", "1e4", "--epsilon", "0.05")
    assert code == 0, err
    assert "parallel (0.5:krr:k=10:eps0=1 + 0.5:blh:eps0=1)" in out
    code, out, err = run(capsys, "epsilon", "--mechanism", "subsample", "--component", "krr:k=10:eps0=1",
                         "--q", "0.1", "--n", "1e4", "--delta", "1e-6", "--json")
    assert code == 0, err
    assert json.loads(out)["result"]["mechanism"]["q"] == 0.1


@pytest.mark.parametrize("argv,message", [
    (["--mechanism", "joint", "--component", "krr:k=10:eps0=0.5", "--component", "krr:k=1:eps0=0.5"],
     "component 2: field 'k': must be an integer >= 2"),
    (["--mechanism", "parallel", "--component", "0.5:krr:k=10:eps0=1", "--component", "0.4:blh:eps0=1"],
     "weights: must sum to 1"),
    (["--mechanism", "parallel", "--component", "krr:k=10:eps0=1"], "component 1: field 'weight'"),
    (["--mechanism", "subsample", "--component", "krr:k=10:eps0=1"], "q:"),
    (["--mechanism", "subsample", "--component", "krr:k=10:eps0=1", "--q", "0"], "q: must be > 0"),
    (["--mechanism", "joint"], "--component"),
    (["--mechanism", "joint", "--component", "krr:k=10:eps0=1", "--eps0", "1"], "eps0"),
    (["--mechanism", "krr", "--k", "10", "--eps0", "1", "--component", "krr:k=3:eps0=1"], "component"),
    (["--mechanism", "joint", "--component", "krr:k=10:eps0=1", "--q", "0.5"], "q: only used by"),
])
def test_cli_bad_components(capsys, argv, message):
    code, out, err = run(capsys, "epsilon", *argv, "--n", "1000", "--delta", "1e-6")
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and message in err, err
    assert "Traceback" not in err


def test_cli_help_mentions_components(capsys):
    code, out, _ = run(capsys, "epsilon", "--help")
    assert code == 0
    assert "--component" in out and "WEIGHT:NAME" in out and "--q" in out


PLAN = """
[[collection]]
name = "two answers"
mechanism = "joint"
components = [{mechanism = "krr", k = 10, eps0 = 0.5}, {mechanism = "krr", k = 10, eps0 = 0.5}]
n = 5_000
delta = 1e-6

[[collection]]
name = "one of two"
mechanism = "parallel"
components = [{weight = 0.5, mechanism = "krr", k = 10, eps0 = 1.0}, {weight = 0.5, mechanism = "blh", eps0 = 1.0}]
n = 5_000
delta = 1e-6

[[collection]]
name = "weights list"
mechanism = "parallel"
weights = [0.5, 0.5]
components = [{mechanism = "krr", k = 10, eps0 = 1.0}, {mechanism = "blh", eps0 = 1.0}]
n = 5_000
delta = 1e-6

[[collection]]
name = "sample"
mechanism = "subsample"
q = 0.1
components = [{mechanism = "krr", k = 10, eps0 = 1.0}]
n = 5_000
delta = 1e-6
"""


def test_plan_composed_rows(tmp_path, capsys):
    p = tmp_path / "plan.toml"
    p.write_text(PLAN)
    rows = load_plan(p)
    assert [r.mechanism for r in rows] == ["joint", "parallel", "parallel", "subsample"]
    res = evaluate_plan(rows)
    assert res[1]["epsilon_upper"] == pytest.approx(res[2]["epsilon_upper"], rel=1e-12)
    api = shuffleamp.epsilon(compose.subsample(KRR(1.0, 10), 0.1), 5000, 1e-6)
    assert res[3]["epsilon_upper"] == pytest.approx(api.upper, rel=1e-12)
    code, out, err = run(capsys, "report", str(p))
    assert code == 0, err
    assert "joint (krr k=10 eps0=0.5 + krr k=10 eps0=0.5)" in out
    assert "subsample (q=0.1: krr k=10 eps0=1.0)" in out


@pytest.mark.parametrize("row,field,message", [
    ({"mechanism": "joint", "components": [{"mechanism": "krr", "k": 10, "eps0": 0.5},
                                           {"mechanism": "krr", "k": 1, "eps0": 0.5}]},
     "components", "component 2: field 'k': must be an integer >= 2"),
    ({"mechanism": "joint", "components": []}, "components", "non-empty"),
    ({"mechanism": "joint"}, "components", "missing"),
    ({"mechanism": "joint", "eps0": 1.0, "components": [{"mechanism": "krr", "k": 3, "eps0": 1}]}, "eps0", ""),
    ({"mechanism": "subsample", "components": [{"mechanism": "krr", "k": 3, "eps0": 1}]}, "q", "missing"),
    ({"mechanism": "subsample", "q": 2, "components": [{"mechanism": "krr", "k": 3, "eps0": 1}]}, "q", "<= 1"),
    ({"mechanism": "parallel", "components": [{"weight": 0.5, "mechanism": "krr", "k": 3, "eps0": 1},
                                              {"weight": 0.2, "mechanism": "krr", "k": 3, "eps0": 1}]},
     "weights", "sum to 1"),
    ({"mechanism": "krr", "k": 3, "eps0": 1, "q": 0.5}, "q", "only for"),
    ({"mechanism": "joint", "components": [3]}, "components", "component 1"),
])
def test_plan_bad_composed_rows(row, field, message):
    doc = {"collection": [{"name": "x", "n": 100, "delta": 1e-6, **row}]}
    with pytest.raises(PlanError) as ei:
        parse_plan(doc)
    assert ei.value.field == field
    assert message in str(ei.value)
    assert str(ei.value).startswith("plan row 1 ('x'): field")
