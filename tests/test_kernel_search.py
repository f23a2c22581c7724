"""The compiled ε(δ) search (``kernels.epsilon_search`` via ``search.search_families``).

Checked against its definition by re-evaluations of the certified δ at and just below the returned points
(``exact.delta_exact_family``: the answer is certified and within the search tolerance of the root), and
against the brute-force divergence of ``tests/oracle.py`` (no GPARV theory) for small n.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import shuffleamp as sa
from shuffleamp import bounds as B
from shuffleamp import exact as X
from shuffleamp import search as S
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse, MatrixMechanism

import oracle
from decomposition_side import both_engines

EPS_RTOL = 1e-7


def _search(mech, n, delta):
    """sa.epsilon on the decomposition search (for binary RR the exact count law runs beside it in full, so
    that the search's own answer is recorded)."""
    return both_engines("epsilon", mech, n, delta)


def _upper_max(mech, n, eps):
    """Certified upper δ (max over the upper families) at eps, re-evaluated one family at a time."""
    return max(X.delta_exact_family(f, n, eps, "upper").delta for f in B._families(mech, "optimal", "upper"))


def _lower_max(mech, n, eps):
    return max(X.delta_exact_family(f, n, eps, "lower").delta for f in B._families(mech, "optimal", "lower"))


def _mech(kind, eps0, k):
    if kind == "krr":
        return KRR(eps0, k)
    if kind == "oue":
        return OUE(eps0, k)
    if kind == "blh":
        return BLH(eps0)
    if kind == "rappor":
        return RAPPOR(eps0, k)
    return HadamardResponse(eps0, 8)


def _check_certified(mech, n, delta, r):
    """The upper ε is certified: its own certified δ <= target, or the chord of two certified values is."""
    info = r.settings["grid"]["upper"]
    if r.settings["upper_engine"] != "decomposition":      # binary RR: the exact count law won (its own tests)
        return
    up = r.upper
    chord = info.get("chord")
    if chord is None:
        assert up >= mech.eps0 or _upper_max(mech, n, up) <= delta
        return
    e_b, e_o = chord["epsilon_infeasible"], chord["epsilon_feasible"]
    assert e_b <= up <= e_o
    # (at eps0 the certified value may be a tiny positive bound rather than 0: re-evaluated like any point)
    v_b = _upper_max(mech, n, e_b)
    v_o = _upper_max(mech, n, e_o)
    assert v_b == pytest.approx(chord["delta_infeasible"], rel=1e-12, abs=1e-300)
    assert v_o == pytest.approx(chord["delta_feasible"], rel=1e-12, abs=1e-300)
    assert v_o <= delta < v_b
    x_b, x_o, x = math.exp(e_b), math.exp(e_o), math.exp(up)
    # δ* is convex in e^ε: below the chord of its certified values, which is <= target at the answer
    assert v_b + (v_o - v_b) * (x - x_b) / (x_o - x_b) <= delta * (1 + 1e-12)


def _check_tight(mech, n, delta, r, rel):
    """The upper ε is within ``rel`` of the root of the certified δ: just below it the certified δ exceeds the
    target (the search did not stop early on a conservative point)."""
    if r.settings["upper_engine"] != "decomposition" or r.upper >= mech.eps0:
        return
    below = r.upper * (1 - rel) - 1e-12 * mech.eps0
    assert below <= 0 or _upper_max(mech, n, below) > delta


CASES = [(KRR(1.0, 10), 10**8, 1e-8), (KRR(4.0, 100), 10**5, 1e-8), (OUE(0.5, 8), 10**8, 1e-8),
         (BLH(2.0), 10**6, 1e-6), (RAPPOR(1.0, 4), 10**9, 1e-10), (KRR(0.3, 2), 50, 1e-3),
         (KRR(2.0, 5), 12, 1e-4), (OUE(1.0, 4), 3000, 1e-8)]


@pytest.mark.parametrize("mech,n,delta", CASES)
def test_kernel_search_certified_and_tight(mech, n, delta):
    k = _search(mech, n, delta)
    assert 0.0 <= k.lower <= k.upper <= mech.eps0
    _check_certified(mech, n, delta, k)
    cost = float(k.settings["grid"]["upper"].get("N", 0) or 0)
    _check_tight(mech, n, delta, k, B.SOFT_GAP if cost > B.EXPENSIVE_NODES else 3 * EPS_RTOL)
    if k.lower > 0 and k.settings["lower_engine"] == "decomposition" and "secant" not in k.settings["grid"]["lower"]:
        assert _lower_max(mech, n, k.lower) >= delta * (1 - 1e-9)
    assert {"upper", "lower", "upper_evaluations", "lower_evaluations"} <= set(k.settings["grid"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["krr", "oue", "blh", "rappor", "hr"]), eps0=st.floats(0.1, 6.0),
       k=st.integers(2, 12), n=st.one_of(st.integers(2, 8), st.integers(10**5, 10**9)),
       log_delta=st.floats(-12.0, -2.0))
def test_kernel_search_properties(kind, eps0, k, n, log_delta):
    mech = _mech(kind, eps0, k if kind != "oue" else max(k, 2))
    delta = 10.0 ** log_delta
    kr = _search(mech, n, delta)
    assert 0.0 <= kr.lower <= kr.upper <= mech.eps0
    # the search stops within eps_rtol, or within the documented SOFT_GAP once an evaluation cost more
    # than EXPENSIVE_NODES (e.g. binomial-mixture sums of ~6e5 steps at n = 1e5)
    cost = float((kr.settings["grid"].get("upper") or {}).get("N", 0) or 0)
    _check_tight(mech, n, delta, kr, B.SOFT_GAP if cost > B.EXPENSIVE_NODES else 3 * EPS_RTOL)
    _check_certified(mech, n, delta, kr)
    if kr.lower > 0 and kr.settings["lower_engine"] == "decomposition":
        # certified lower: some concrete dataset's divergence is >= the target at the lower ε
        assert _lower_max(mech, n, kr.lower) >= delta * (1 - 1e-9) or "secant" in kr.settings["grid"]["lower"]


@pytest.mark.parametrize("mech,n,delta", [(KRR(1.0, 3), 4, 1e-3), (KRR(2.0, 3), 5, 1e-4), (OUE(1.0, 3), 3, 1e-2),
                                          (MatrixMechanism([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]]),
                                           4, 1e-3)])
def test_kernel_search_against_brute_force(mech, n, delta):
    """Independent oracle (histogram laws of every neighbouring dataset pair): true δ(upper) <= target, and the
    lower ε is one where a concrete dataset pair's divergence reaches the target."""
    r = sa.epsilon(mech, n, delta)
    P = np.asarray(mech.matrix())
    assert oracle.worst_dataset_divergence(P, n, r.upper) <= delta * (1 + 1e-9)
    if 0 < r.lower < r.upper:
        assert oracle.worst_dataset_divergence(P, n, r.lower) >= delta * (1 - 1e-9)


def test_kernel_search_status_and_switch(monkeypatch):
    mech, n, delta = KRR(1.0, 10), 10**6, 1e-8
    up_f, lo_f = B._families(mech, "optimal", "upper"), B._families(mech, "optimal", "lower")
    r = S.epsilon_search(up_f, lo_f, n, delta, mech.eps0, EPS_RTOL, B.SOFT_GAP, B.EXPENSIVE_NODES)
    assert r["status"] == 0 and r["upper_kind"] in (1, 2)
    # every evaluated point is the compiled evaluator's value
    for e, v in zip(r["u_eps"], r["u_value"]):
        assert v == _upper_max(mech, n, float(e))
    # a "not handled" answer runs the Python search (seeded with the points): certified, and the same result as
    # the compiled search within the search tolerance
    kernel = sa.epsilon(mech, n, delta)
    calls = []
    real = S.epsilon_search

    def not_handled(*a, **kw):
        out = real(*a, **kw)
        calls.append(out)
        return dict(out, status=3)
    monkeypatch.setattr(S, "epsilon_search", not_handled)
    seeded = sa.epsilon(mech, n, delta)
    assert calls
    _check_certified(mech, n, delta, seeded)
    assert seeded.upper == pytest.approx(kernel.upper, rel=3 * EPS_RTOL)
    assert seeded.lower == pytest.approx(kernel.lower, rel=3 * EPS_RTOL)


def test_kernel_search_not_zero_at_eps0_is_not_handled():
    """A family whose certified δ at eps_hi exceeds the target (not pure at eps_hi) is left to the Python search."""
    mech = KRR(1.0, 10)
    up_f = B._families(mech, "optimal", "upper")
    r = S.epsilon_search(up_f, [], 1000, 1e-6, 0.02 * mech.eps0, EPS_RTOL, B.SOFT_GAP, B.EXPENSIVE_NODES)
    assert r["status"] == 1


def test_family_cache_is_per_value_and_bounded():
    """Families are cached per immutable mechanism value (equal frozen dataclasses share them), returned as
    fresh lists, and the cache stays bounded."""
    B._FAMILY_CACHE.clear()
    a = B._cached_families(KRR(1.0, 10), "upper")
    b = B._cached_families(KRR(1.0, 10), "upper")
    assert a is not b and len(a) == len(b) and all(x is y for x, y in zip(a, b))
    assert B._cached_families(KRR(1.5, 10), "upper")[0].a.tolist() != a[0].a.tolist()
    for i in range(B.FAMILY_CACHE_SIZE + 5):
        B._cached_families(KRR(1.0 + 0.001 * i, 3), "lower")
    assert len(B._FAMILY_CACHE) <= B.FAMILY_CACHE_SIZE


def test_estimate_root_matches_python_estimator():
    """The compiled root search of the saddle-point estimate (kernels.estimate_root, Illinois regula falsi on the
    packed families) finds the root brentq finds on bounds.estimator (the same estimate through the GPARV objects)."""
    from scipy.optimize import brentq
    for mech, n, delta in [(KRR(1.0, 10), 10**6, 1e-8), (OUE(0.5, 8), 300, 1e-6), (BLH(2.0), 10**9, 1e-10)]:
        fams = B._families(mech, "optimal", "upper")
        g = S.estimate_root(fams, n, delta, mech.eps0 * (1 - 1e-12))
        est = B.estimator(fams, n)
        ref = brentq(lambda e: math.log(max(est(e), 1e-300)) - math.log(delta), 0.0, mech.eps0 * (1 - 1e-12),
                     xtol=1e-12 * mech.eps0)
        assert g == pytest.approx(ref, rel=1e-6)


def test_kernel_search_answer_zero():
    """δ(0) already below the target (huge n, large δ): ε = 0 is evaluated first and is the answer (both sides)."""
    mech, n, delta = KRR(1.0, 10), 10**9, 1e-2
    k = _search(mech, n, delta)
    assert k.upper == 0.0 and k.lower == 0.0
    assert k.settings["grid"]["upper_evaluations"] <= 2
    assert _upper_max(mech, n, 0.0) <= delta


@pytest.mark.parametrize("mech,n,delta", [(KRR(2.95, 4), 10471, 1.3e-6), (KRR(1.75, 25), 814796, 1e-11),
                                          (OUE(0.5, 8), 10**8, 1e-8), (BLH(2.0), 10**6, 1e-6)])
def test_kernel_search_unverified_chord_root(mech, n, delta):
    """Without the direct check of a converged chord root (``verify=False``, ``bounds.KERNEL_VERIFY_CHORD``) the
    kernel returns the same upper number with at most as many evaluations; a chord answer is certified by
    re-evaluating both chord ends (convexity of δ* in e^ε), an evaluated answer by its own certified δ."""
    up_f, lo_f = B._families(mech, "optimal", "upper"), B._families(mech, "optimal", "lower")
    args = (up_f, lo_f, n, delta, mech.eps0, EPS_RTOL, B.SOFT_GAP, B.EXPENSIVE_NODES)
    rv, ru = S.epsilon_search(*args, verify=True), S.epsilon_search(*args, verify=False)
    assert rv["status"] == ru["status"] == 0
    assert ru["upper"] == rv["upper"]
    assert len(ru["u_eps"]) <= len(rv["u_eps"])
    if ru["upper_kind"] == 2:
        e_b, e_o, v_b, v_o, _ = ru["chord"]
        assert v_b == _upper_max(mech, n, e_b) and v_o == _upper_max(mech, n, e_o)
        x_b, x_o, x = math.exp(e_b), math.exp(e_o), math.exp(ru["upper"])
        assert v_o <= delta < v_b and e_b <= ru["upper"] <= e_o
        assert v_b + (v_o - v_b) * (x - x_b) / (x_o - x_b) <= delta * (1 + 1e-12)
    else:
        assert _upper_max(mech, n, ru["upper"]) <= delta
    # the certified interval from the default search contains the brute-force-free truth of the verified one
    r = sa.epsilon(mech, n, delta)
    assert r.lower <= rv["upper"] and r.upper == pytest.approx(rv["upper"], rel=3 * EPS_RTOL)


def test_convexity_lower_root_is_certified():
    """``kernels.convexity_lower`` (the lower convexity extension of both searches): at the returned ε the line
    through the upper value at x_p and the certified lower value at x_b (x = e^ε) is still above the target, so
    a δ convex in x, below the upper value at x_p and above the lower one at x_b, exceeds the target there."""
    from shuffleamp._ext import kernels
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(200):
        e_p, e_b = sorted(rng.uniform(0.0, 3.0, 2))
        if e_b - e_p < 1e-6:
            continue
        target = 10.0 ** rng.uniform(-12, -2)
        L_b = target * (1.0 + rng.uniform(1e-6, 5.0))
        U_p = L_b * (1.0 + rng.uniform(1e-6, 50.0))
        eps_up = e_b + rng.uniform(0.0, 2.0)
        x_p, x_b = math.exp(e_p), math.exp(e_b)
        e_l = kernels.convexity_lower(x_p, U_p, x_b, L_b, target, eps_up)
        assert e_b * (1 - 1e-15) <= e_l <= eps_up
        x_l = math.exp(e_l)
        line = L_b + (L_b - U_p) / (x_b - x_p) * (x_l - x_b)
        assert line >= target * (1 - 1e-12), (e_p, e_b, e_l, line, target)
        checked += 1
    assert checked > 150


def test_near_hi_walk_points():
    """The walk towards ε0 (``kernels.near_hi_walk``): increasing points in (0, ε0) whose distances to e^ε0 in
    x = e^ε shrink by 8 from 2 % of e^ε0 down to about the estimated root's; none when the root is far."""
    from shuffleamp._ext import kernels
    eps_hi = 2.0
    E = math.exp(eps_hi)
    assert kernels.near_hi_walk(eps_hi, 1.0) == []
    g = math.log(E - 1e-4 * E)
    w = kernels.near_hi_walk(eps_hi, g)
    assert len(w) >= 2 and all(0.0 < a < b < eps_hi for a, b in zip(w, w[1:]))
    gaps = [E - math.exp(e) for e in w]
    assert gaps[0] == pytest.approx(0.02 * E, rel=1e-12)
    assert all(b == pytest.approx(a / 8.0, rel=1e-9) for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] > E - math.exp(g) and gaps[-1] / 8.0 <= E - math.exp(g)


def _kernel_search(up_f, lo_f, n, target, eps_hi, skip):
    """``kernels.epsilon_search`` with the arguments of ``search.epsilon_search`` and the given ``skip`` rule
    (``skip=0``: every dataset evaluated at every point, no dataset searched alone first)."""
    from shuffleamp._ext import kernels
    from shuffleamp.decomposition import pack
    ua, ub, uc, ubeta, uoff = pack(up_f)
    la, lb, lc, lbeta, loff = pack(lo_f)
    K = max(f.a.size for f in list(up_f) + list(lo_f))
    return kernels.epsilon_search(
        ua, ub, uc, ubeta, uoff, la, lb, lc, lbeta, loff, float(n), float(target), float(eps_hi), EPS_RTOL,
        X._enum_ok(int(n), K, X.ENUMERATE_MAX), float(X.DEFAULT_RTOL), X._XG, X._WG, float(X.MAX_WORK),
        float(X.TAIL_WORK), float(X.T0_FACTOR), float(X.THETA_RANGE[0]), float(X.THETA_RANGE[1]),
        float(X.CENTRAL_WIDTHS), float(X.TAIL_CONST), 10.0 * X.MAX_WORK, B.SOFT_GAP, B.EXPENSIVE_NODES, skip=skip,
        screen_rtol=S.SCREEN_RTOL, lead_min_n=S.LEAD_MIN_N)


@pytest.mark.parametrize("mech, n, delta", [
    (sa.joint(HadamardResponse(0.49, 16), BLH(0.49, 6), KRR(0.49, 404)), 9, 3.96e-12),
    (sa.joint(OUE(0.28, 10), BLH(0.28)), 38, 7.7e-7),
    (RAPPOR(1.5, 6), 60, 1e-8),
    (sa.joint(KRR(1.0, 30), OUE(0.7, 5)), 3000, 1e-9),
    (BLH(1.0), 10**4, 1e-6),
    (BLH(4.0), 10**3, 1e-5),
    (RAPPOR(1.0, 64), 10**4, 1e-6),
    (OUE(1.0, 64), 10**5, 1e-7),
    (BLH(4.0), 10**7, 1e-9),
    (RAPPOR(4.0, 64), 10**9, 1e-11),
])
def test_lower_datasets_skipped_by_their_bound_give_the_same_search(mech, n, delta):
    """A lower-bound dataset whose certified bound (from earlier points, or after the search of the dataset with
    the largest estimate alone, from one point to its left) is below the lower maximum and the target is not
    evaluated: the lower search takes the same steps (values, answer, convexity extension) as with every dataset
    evaluated, and fewer evaluations are made."""
    up_f = B._families(mech, "optimal", "upper")
    lo_f = B._families(mech, "optimal", "lower")
    a = _kernel_search(up_f, lo_f, n, delta, mech.eps0, 1)
    b = _kernel_search(up_f, lo_f, n, delta, mech.eps0, 0)
    assert a["status"] == b["status"] == 0
    assert (a["upper"], a["lower"], a["lower_kind"], a["lower_index"]) == \
        (b["upper"], b["lower"], b["lower_kind"], b["lower_index"])
    assert a["secant"] == b["secant"] or (np.isnan(a["secant"]).all() and np.isnan(b["secant"]).all())
    np.testing.assert_array_equal(a["l_eps"], b["l_eps"])
    np.testing.assert_array_equal(a["l_value"], b["l_value"])
    evaluated = (a["l_status"] != 20)
    assert (a["l_L"][evaluated] == b["l_L"][evaluated]).all()
    assert (a["l_L"][~evaluated] == 0.0).all() and (b["l_L"][~evaluated] <= delta).all()
    assert (~evaluated).sum() > 0          # not vacuous: datasets were skipped in every case here


def test_lower_search_of_the_lead_dataset_alone_and_its_fallback():
    """Both branches of the lower search over several datasets: the lead dataset's search certified to be the
    search over all of them (one search; BLH, where the dataset with the others at x_1^1 leads), and a lead not
    certified (RAPPOR with d = 4: its first point lies far left of the root, where the other datasets exceed the
    target too), where the search over all of them runs again: the same number, steps and values as the search
    that evaluates every dataset at every point."""
    for mech, n, delta, searches in [(BLH(1.0), 10**5, 1e-7, 1), (RAPPOR(1.0, 4), 3000, 1e-9, 2)]:
        up_f = B._families(mech, "optimal", "upper")
        lo_f = B._families(mech, "optimal", "lower")
        a = _kernel_search(up_f, lo_f, n, delta, mech.eps0, 1)
        b = _kernel_search(up_f, lo_f, n, delta, mech.eps0, 0)
        assert a["lower_lead"] >= 0 and a["lower_searches"] == searches
        assert b["lower_lead"] == -1 and b["lower_searches"] == 1
        assert (a["status"], a["lower"], a["lower_kind"]) == (0, b["lower"], b["lower_kind"])
        np.testing.assert_array_equal(a["l_eps"], b["l_eps"])
        np.testing.assert_array_equal(a["l_value"], b["l_value"])
