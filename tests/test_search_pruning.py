"""Fewer certified evaluations in the ε search of many-family mechanisms (matrices, joint compositions).

``kernels.epsilon_search`` skips, at an upper point, every family whose certified bound from its earlier
points (δ non-increasing in ε; slope in x = e^ε at most Σb / s) is below the largest value evaluated there;
``bounds._lower_subset`` runs the lower search on the one or two lower-bound datasets with the largest
estimate.  Checked: the slope bound against certified evaluations, the skipped search against the full one
(same certified upper), and both answers against the brute-force divergence of ``tests/oracle.py``.
"""

import functools
import math

import numpy as np
import pytest

import shuffleamp as sa
from shuffleamp import bounds as B
from shuffleamp import exact as X
from shuffleamp import search as S
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse, MatrixMechanism

import oracle


def _random_matrix(k, m, eps0, seed):
    rng = np.random.default_rng(seed)
    P = np.exp(rng.uniform(0.0, eps0, size=(k, m)))
    return P / P.sum(axis=1, keepdims=True)


JOINTS = [(sa.joint(OUE(0.3, 3), RAPPOR(0.3, 2)), 60, 1e-5),
          (sa.joint(BLH(0.2), HadamardResponse(0.2, 8), KRR(0.2, 5)), 40, 1e-6),
          (sa.joint(KRR(0.5, 3), OUE(0.5, 2), KRR(0.5, 2)), 30, 1e-4),
          (MatrixMechanism(_random_matrix(6, 5, 0.8, seed=2)), 25, 1e-6)]


@pytest.mark.parametrize("mech,n", [(sa.joint(KRR(0.5, 3), OUE(0.5, 2), KRR(0.5, 2)), 7),
                                    (sa.joint(OUE(0.3, 3), RAPPOR(0.3, 2)), 60),
                                    (MatrixMechanism(_random_matrix(4, 5, 1.5, seed=5)), 12)])
def test_slope_bound_of_a_family(mech, n):
    """δ_f(ε1) <= U_f(ε2) + (e^ε2 - e^ε1) Σb / (Σc + β) for ε1 < ε2 (the bound behind the skip), with
    certified lower / upper evaluations on both sides."""
    for f in B._families(mech, "optimal", "upper"):
        sb = float(np.sum(f.b)) / (float(np.sum(f.c)) + float(f.beta))
        for e2 in (0.3 * mech.eps0, 0.7 * mech.eps0):
            up2 = X.delta_exact_family(f, n, e2, "upper").delta
            for h in (1e-6, 1e-3, 0.2):
                e1 = e2 * (1 - h)
                lo1 = X.delta_exact_family(f, n, e1, "lower").delta
                assert lo1 <= up2 + (math.exp(e2) - math.exp(e1)) * sb


def _search(mech, n, delta, skip):
    up_f = B._families(mech, "optimal", "upper")
    eps_hi = float(mech.eps0)
    orig = S.kernels.epsilon_search
    try:
        S.kernels.epsilon_search = functools.partial(orig, skip=skip)
        return S.epsilon_search(up_f, [], n, delta, eps_hi, 1e-7, B.SOFT_GAP, B.EXPENSIVE_NODES)
    finally:
        S.kernels.epsilon_search = orig


@pytest.mark.parametrize("mech,n,delta", JOINTS)
def test_skipped_families_give_the_same_certified_upper(mech, n, delta):
    """Same certified upper with and without the skip rule (history and Chernoff bounds)."""
    full = _search(mech, n, delta, 0)
    fast = _search(mech, n, delta, 1)
    assert full["status"] == fast["status"] == 0
    assert (full["u_status"] != 20).all()
    assert fast["upper"] == pytest.approx(full["upper"], rel=1e-12)
    m = min(len(full["u_eps"]), len(fast["u_eps"]))
    np.testing.assert_allclose(fast["u_eps"][:m], full["u_eps"][:m], rtol=1e-12)
    np.testing.assert_allclose(fast["u_value"][:m], full["u_value"][:m], rtol=1e-12)
    # a skipped family holds its certified bound, below the maximum at that point, and never a larger value
    # than its own evaluation would (certified upper of the same divergence)
    sk = fast["u_status"] == 20
    assert (fast["u_U"][sk] >= 0).all()
    assert (fast["u_U"] <= fast["u_value"][:, None]).all()
    assert fast["work"] <= full["work"]
    # the bound held by a skipped family is certified: above that family's certified lower δ there
    up_f = B._families(mech, "optimal", "upper")
    for i, f in zip(*np.nonzero(sk)):
        lo = X.delta_exact_family(up_f[f], n, float(fast["u_eps"][i]), "lower").delta
        assert fast["u_U"][i, f] >= lo


@pytest.mark.parametrize("mech,n,delta", [(sa.joint(KRR(0.8, 3), KRR(0.8, 2)), 4, 1e-3),
                                          (sa.joint(KRR(0.5, 2), KRR(0.7, 2), KRR(0.6, 2)), 3, 1e-2),
                                          (MatrixMechanism(_random_matrix(6, 4, 1.0, seed=1)), 4, 1e-3),
                                          (MatrixMechanism(_random_matrix(5, 3, 2.0, seed=7)), 5, 1e-4)])
def test_pruned_search_against_brute_force(mech, n, delta):
    """Independent oracle (every neighbouring dataset pair): true δ(upper) <= target, and a concrete pair's
    divergence reaches the target at the lower ε."""
    r = sa.epsilon(mech, n, delta)
    P = np.asarray(mech.matrix())
    assert 0.0 <= r.lower <= r.upper <= mech.eps0
    assert oracle.worst_dataset_divergence(P, n, r.upper) <= delta * (1 + 1e-9)
    if 0 < r.lower < r.upper:
        assert oracle.worst_dataset_divergence(P, n, r.lower) >= delta * (1 - 1e-9)


@pytest.mark.parametrize("mech,n,delta", JOINTS)
def test_lower_subset_is_a_certified_lower_bound(mech, n, delta):
    lo_f = B._families(mech, "optimal", "lower")
    r = sa.epsilon(mech, n, delta)
    assert 0.0 <= r.lower <= r.upper
    sub = B._lower_subset(lo_f, n, delta, mech.eps0, r.upper)
    keep = B.LOWER_KEEP if n >= B.LOWER_SMALL_N else B.LOWER_KEEP_SMALL
    assert 1 <= len(sub) <= keep
    if len(lo_f) > keep:
        g = r.settings["grid"]
        used = g["lower_families"]["used"] if "lower_families" in g else g["lazy_families"]["lower"]
        assert used <= keep
    if r.lower > 0 and "secant" not in r.settings["grid"]["lower"]:
        # some concrete dataset's certified divergence is above the target at the lower ε
        assert max(X.delta_exact_family(f, n, r.lower, "lower").delta for f in lo_f) >= delta * (1 - 1e-9)
    old = B.LOWER_KEEP
    try:
        B.LOWER_KEEP = None
        r_all = sa.epsilon(mech, n, delta)
    finally:
        B.LOWER_KEEP = old
    assert r_all.upper == r.upper
    # the intervals of both runs contain the true ε*
    assert r.lower <= r_all.upper and r_all.lower <= r.upper


@pytest.mark.parametrize("mech,n,delta", [(sa.joint(BLH(0.2), HadamardResponse(0.2, 8), KRR(0.2, 5)), 40, 1e-6),
                                          (MatrixMechanism(_random_matrix(16, 2, 0.37, seed=3)), 243, 2.4e-6),
                                          (MatrixMechanism(_random_matrix(8, 5, 2.0, seed=4)), 11, 4.6e-7),
                                          (sa.joint(BLH(0.0565), HadamardResponse(0.0565, 64),
                                                    HadamardResponse(0.0565, 64)), 4, 2.2e-9)])
def test_lower_subset_ranks_by_estimate(mech, n, delta):
    """The kept datasets include the one whose certified lower δ is largest near the lower ε of the search
    over every dataset (the ranking is placed at the lower-bound datasets' own estimated root, which can be
    far below the upper root)."""
    lo_f = B._families(mech, "optimal", "lower")
    old = B.LOWER_KEEP
    try:
        B.LOWER_KEEP = None
        r_all = sa.epsilon(mech, n, delta)
    finally:
        B.LOWER_KEEP = old
    sub = B._lower_subset(lo_f, n, delta, mech.eps0, r_all.upper)
    assert 1 <= len(sub) <= (B.LOWER_KEEP if n >= B.LOWER_SMALL_N else B.LOWER_KEEP_SMALL)
    eps = r_all.lower
    vals = [X.delta_exact_family(f, n, eps, "lower").delta for f in lo_f]
    best = max(X.delta_exact_family(f, n, eps, "lower").delta for f in sub)
    assert best >= 0.5 * max(vals)
    # and the lower ε of the pruned search stays a certified lower bound close to the full search's
    r = sa.epsilon(mech, n, delta)
    assert r.lower <= r.upper == pytest.approx(r_all.upper, rel=1e-12)
    assert r.lower >= 0.9 * r_all.lower


def test_lazy_subset_missing_the_maximum_is_certified_over_every_family(monkeypatch):
    """The lazy maximum searches on an estimated subset; when the subset misses the dominating family, the
    certification over every family (``_certify_max``) catches it and the search is repeated."""
    m, n, delta = MatrixMechanism(_random_matrix(8, 6, 1.0, seed=1)), 300, 1e-6
    up_f = B._families(m, "optimal", "upper")
    assert len(up_f) > B.LAZY_FAMILIES
    ref = sa.epsilon(m, n, delta)
    e_s = 0.5 * m.eps0
    worst = min(up_f, key=lambda f: X.delta_exact_family(f, n, e_s, "upper").delta)
    monkeypatch.setattr(B, "_upper_subset", lambda *a: (e_s, [worst]))
    r = sa.epsilon(m, n, delta)
    assert r.upper == pytest.approx(ref.upper, rel=1e-6)
    assert sa.delta(m, n, r.upper).upper <= delta * (1 + 1e-9)       # every family at the answer
    assert r.settings["grid"]["lazy_families"]["upper"] > 1           # the dominating families were added
    assert r.lower <= r.upper
