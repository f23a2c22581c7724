"""The exact binomial-mixture evaluator (``_ext/_mixture.pxi``, evaluator ``"binomial-mixture"``).

Oracles (independent of the kernels): the long-double brute-force enumeration of tests/oracle.py
(small n, 2-7 atoms, including the 4-7 atom laws of real mechanisms) and exact nested binomial sums
in mpmath (2-3 atoms at moderate n, including tail events delta ~ 1e-9).  Every check is
value - err <= truth <= value + err (certified interval), the oracle's own rounding aside
(ORACLE_REL).  Measured width (err / value) in these tests: <= 3e-10.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

from shuffleamp import exact as X
from shuffleamp._ext import kernels
from shuffleamp.mechanisms import KRR, OUE, HadamardResponse

import oracle as O

ORACLE_REL = 1e-13    # rounding of the long-double / mpmath oracles (float conversion of the sum)
RTOL = X.DEFAULT_RTOL


def _law(rng, k, scale=3.0):
    v = np.unique(np.round(rng.normal(size=k) * scale, 6))
    v[0] = -abs(v[0]) - 0.05
    v[-1] = abs(v[-1]) + 0.05
    v = np.unique(v)
    p = rng.dirichlet(np.ones(v.size))
    return v, p / p.sum()


def _mix(v, p, n, max_steps=1e9):
    ok, val, err, steps = kernels.mixture_positive_part(np.ascontiguousarray(v, dtype=float),
                                                        np.ascontiguousarray(p, dtype=float), float(n), RTOL,
                                                        max_steps)
    return ok, val, err


def _inside(val, err, truth):
    slack = ORACLE_REL * truth
    return val - err - slack <= truth <= val + err + slack


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6, 7])
def test_random_laws_vs_bruteforce(k):
    rng = np.random.default_rng(100 + k)
    for n in (2, 5, 11, 17) if k >= 6 else (2, 7, 16, 30):
        for _ in range(2):
            v, p = _law(rng, k)
            truth = O.gparv_positive_part(v, p, n)
            ok, val, err = _mix(v, p, n)
            assert ok
            assert _inside(val, err, truth), (k, n, val, err, truth)
            assert err <= 1e-9 * val + 1e-300


MECHS = [KRR(eps0=1.0, k=10), KRR(eps0=4.0, k=100), OUE(eps0=0.5, d=8), HadamardResponse(eps0=1.5, d=64)]


@pytest.mark.parametrize("mech", MECHS, ids=["krr10", "krr100", "oue8", "hr64"])
def test_mechanism_laws_vs_bruteforce(mech):
    """The upper and lower-bound GPARVs of real mechanisms (4-7 atoms) against brute force."""
    for fam in [mech.decomposition()] + list(mech.lower_decompositions()):
        for frac in (0.1, 0.4):
            g = fam.gparv(frac * mech.eps0)
            k = g.values.size
            if not (g.values[0] < 0 < g.values[-1]) or k > 7:
                continue
            n = 24 if k <= 5 else 12
            truth = O.gparv_positive_part(g.values, g.probs, n)
            ok, val, err = _mix(g.values, g.probs, n)
            assert ok and _inside(val, err, truth), (k, n, val, err, truth)


@pytest.mark.parametrize("v,p,n", [
    ([-1.0, 2.5], [0.8, 0.2], 400),                       # delta ~ 1e-9 region (a tail event)
    ([-0.3, 1.7], [0.93, 0.07], 1000),
    ([-2.0, -0.1, 3.0], [0.1, 0.75, 0.15], 150),
    ([-163.02, -2.0042, 51.594], [0.0065, 0.6380, 0.3555], 200),   # KRR(4,100)-like, no zero atom
    ([-1.0, 3.0], [0.97, 0.03], 1000),                    # delta ~ 1e-90: tilted windows far from the mode
])
def test_vs_mpmath_moderate_n(v, p, n):
    truth = O.positive_part_mp(v, p, n)
    ok, val, err = _mix(np.array(v), np.array(p) / sum(p), n)
    assert ok and _inside(val, err, truth), (val, err, truth)
    assert err <= 1e-8 * val


def test_declines_beyond_budget_and_out_of_scope():
    v, p = np.array([-1.0, -0.2, 0.0, 0.4, 1.0]), np.full(5, 0.2)
    assert not _mix(v, p, 3000, max_steps=10)[0]                  # step budget
    v8, p8 = np.linspace(-1, 1, 8), np.full(8, 1 / 8)
    assert not _mix(v8, p8, 50)[0]                                # more than 7 atoms
    assert not _mix(np.array([0.5, 1.0]), np.array([0.5, 0.5]), 50)[0]   # no negative atom


def test_profile_and_gparv_routes_take_the_mixture_and_hold_the_exact_sum():
    """KRR(4, 100) at n = 600: the compiled profile (a decomposition) and delta_exact (its GPARV) both take the
    mixture branch (status 5); the interval holds the independent exact sum of ``exact_oracles`` and overlaps
    the Bromwich integral's (enumeration and mixture disabled)."""
    import exact_oracles as E
    mech = KRR(eps0=4.0, k=100)
    dec = mech.decomposition()
    n = 600
    eps = np.array([0.8, 1.1, 1.4])
    up, lo, status, _, _ = X._profile_kernel(dec, n, eps, RTOL, X.ENUMERATE_MAX)
    assert list(status) == [5, 5, 5]
    for i, e in enumerate(eps):
        g = dec.gparv(float(e))
        u = X.delta_exact(g, n, "upper")
        l_ = X.delta_exact(g, n, "lower")
        assert u.evaluator == l_.evaluator == "binomial-mixture"
        assert u.delta == pytest.approx(up[i], rel=1e-12) and l_.delta == pytest.approx(lo[i], rel=1e-12)
        t_lo, t_hi = E.positive_part_exact(g.values, g.probs, n)
        assert lo[i] <= t_hi * (1 + ORACLE_REL) and t_lo * (1 - ORACLE_REL) <= up[i], (lo[i], up[i], t_lo, t_hi)
        bu = X.delta_exact(g, n, "upper", enumerate_max=0)
        bl = X.delta_exact(g, n, "lower", enumerate_max=0)
        assert bu.evaluator == "exact"
        assert lo[i] <= bu.delta and bl.delta <= up[i]
        assert up[i] - lo[i] <= 1e-9 * up[i]
    fam = X.delta_exact_family(dec, n, 1.1)
    assert fam.evaluator == "binomial-mixture"


@settings(max_examples=examples(30), deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(k=st.integers(2, 7), n=st.floats(1.0, 13.3).map(lambda x: int(2.0 ** x)), seed=st.integers(0, 2**31 - 1),
       scale=st.floats(0.05, 20.0))
def test_hypothesis_overlaps_bromwich(k, n, seed, scale):
    """Random laws and n (log-uniform in 2..1e4): when the mixture evaluates, upper >= lower >= 0, finite,
    and its interval overlaps the Bromwich integral's (both certified)."""
    rng = np.random.default_rng(seed)
    v, p = _law(rng, k, scale)
    ok, val, err = _mix(v, p, n, max_steps=3e5)
    assume(ok)          # declined examples do not count (no valid example at all: Unsatisfiable, not a pass)
    assert math.isfinite(val) and math.isfinite(err) and val >= 0.0 and err >= 0.0
    from shuffleamp.gparv import Gparv
    g = Gparv(v, p)
    bu = X.delta_exact(g, n, "upper", enumerate_max=0)
    bl = X.delta_exact(g, n, "lower", enumerate_max=0)
    # delta_exact clamps upper bounds at 1 (delta of a real GPARV is <= 1; these random laws may exceed it)
    assert min(val - err, 1.0) <= bu.delta and bl.delta <= val + err


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_random_three_atom_laws_vs_mpmath_n400(seed):
    """Exhaustive: random 3-atom laws at n = 400 against the exact mpmath nested binomial sums (the
    mixture declines only below the double range, where the Chernoff bound answers)."""
    rng = np.random.default_rng(700 + seed)
    v, p = _law(rng, 3, 2.0)
    truth = O.positive_part_mp(v, p, 400, dps=30)
    ok, val, err = _mix(v, p, 400)
    if not ok:
        assert truth < 1e-250
    else:
        assert _inside(val, err, truth), (v, p, val, err, truth)


@pytest.mark.slow
@pytest.mark.parametrize("k", [4, 5])
def test_random_laws_vs_bruteforce_n60(k):
    """Exhaustive: 4-5 atom laws at n = 60 (the regime the mixture takes from enumeration) vs brute force."""
    rng = np.random.default_rng(60 + k)
    for _ in range(2):
        v, p = _law(rng, k)
        n = 60 if k == 4 else 36
        truth = O.gparv_positive_part(v, p, n)
        ok, val, err = _mix(v, p, n)
        assert ok and _inside(val, err, truth), (k, val, err, truth)


# ----------------------------------------------------------------------------- large n (windowed buffers)
def _dominant_law(values, rest, n, neff, dom):
    """Atoms ``values``; the atom ``dom`` holds 1 - neff/n, the others share neff/n in the ratios ``rest``."""
    p = np.asarray(rest, dtype=float)
    p = p / p.sum() * (neff / n)
    return np.asarray(values, dtype=float), np.insert(p, dom, 1.0 - neff / n)


LARGE_N = [
    # 3 atoms, blanket at 0 (n(1 - c) = 50): tilted windows of ~1e2 counts at n = 1e6 and 1e9
    ([-1.0, 0.0, 1.3], [0.55, 0.45], 10**6, 50, 1, 220),
    ([-1.0, 0.0, 1.3], [0.55, 0.45], 10**9, 50, 1, 220),
    # 4 atoms shaped like k-RR's GPARV (dominant atom slightly below 0, blanket at 0): delta ~ 1e-12 and 1e-9
    ([-0.15, -2e-6, 0.0, 0.15], [0.4, 0.2, 0.4], 10**6, 12, 1, 60),
    ([-1.0, -1e-8, 0.0, 1.0], [0.45, 0.1, 0.45], 2 * 10**8, 12, 1, 60),
]


@pytest.mark.parametrize("v,rest,n,neff,dom,m_max", LARGE_N, ids=["3at-1e6", "3at-1e9", "krr4-1e6", "krr4-2e8"])
def test_large_n_vs_mpmath_dominant_atom(v, rest, n, neff, dom, m_max):
    """n up to 1e9 (the buffers hold the windows only; before, n > 2e5 was declined): the certified
    interval contains the exact mpmath sum over the users off the dominant atom (its tail bounded),
    and the production budget takes the mixture (a dominant atom: the integral would need many nodes)."""
    v, p = _dominant_law(v, rest, n, neff, dom)
    truth, tail = O.positive_part_dominant_mp(v, p, n, dom, m_max)
    assert tail <= 1e-14 * truth                  # the oracle is decisive at the level of the checks
    ok, val, err = _mix(v, p, n)
    assert ok
    slack = ORACLE_REL * truth
    assert val - err - slack <= truth and truth + tail <= val + err + slack, (val, err, truth, tail)
    assert err <= 1e-9 * val                     # the rounding charges stay bounded at large n
    okp, valp, errp, _ = kernels.mixture_positive_part(v, p, float(n), RTOL)     # production budget
    assert okp and valp == val and errp == err


def test_large_n_profile_kernel_takes_the_mixture_and_overlaps_bromwich():
    """k-RR(0.1354, 950) at n = 223654 (latency-suite case 1898, dominant atom): the compiled profile and
    delta_exact take the mixture (status 5) beyond the old n <= 2e5 limit; the certified intervals overlap
    the Bromwich integral's."""
    mech = KRR(eps0=0.13536285861763198, k=950)
    dec = mech.decomposition()
    n = 223654
    eps = np.array([3.0e-5, 3.845e-5])
    up, lo, status, _, nodes = X._profile_kernel(dec, n, eps, RTOL, X.ENUMERATE_MAX)
    assert list(status) == [5, 5]
    for i, e in enumerate(eps):
        g = dec.gparv(float(e))
        u = X.delta_exact(g, n, "upper")
        assert u.evaluator == "binomial-mixture" and u.delta == pytest.approx(up[i], rel=1e-12)
        bu = X.delta_exact(g, n, "upper", enumerate_max=0)
        bl = X.delta_exact(g, n, "lower", enumerate_max=0)
        assert bu.evaluator == "exact"
        assert lo[i] <= bu.delta and bl.delta <= up[i]
        assert up[i] - lo[i] <= 1e-9 * up[i]


@settings(max_examples=examples(10), deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(n=st.floats(5.0, 9.0).map(lambda x: int(10.0 ** x)), neff=st.floats(3.0, 12.0), seed=st.integers(0, 2**31 - 1),
       k=st.integers(3, 4))
def test_hypothesis_large_n_dominant_vs_mpmath(n, neff, seed, k):
    """Random 3-4 atom laws with a dominant atom at or slightly below 0, n in 1e5..1e9: the mixture's
    interval contains the mpmath sum (upper >= truth >= lower); its charges stay <= 1e-7 relative (mostly
    the truncation's eta x Chernoff bound, large against delta in tail events)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.05, 3.0)
    vals = sorted([-a * rng.uniform(0.5, 1.5), a * rng.uniform(0.5, 1.5)] + ([0.0] if k == 4 else []))
    vdom = -rng.uniform(0.0, 3.0) / n                     # the dominant atom: n |v_dom| ~ O(1)
    vals = sorted(vals + [vdom])
    dom = vals.index(vdom)
    rest = rng.dirichlet(np.ones(k - 1))
    v, p = _dominant_law(vals, rest, n, neff, dom)
    ok, val, err = _mix(v, p, n)
    assume(ok)                                            # below the double range: the Chernoff bound answers
    m_max = int(neff + 10.0 * math.sqrt(neff) + 30)
    truth, tail = O.positive_part_dominant_mp(v, p, n, dom, m_max)
    slack = ORACLE_REL * truth + 1e-300
    assert val - err - slack <= truth and truth + tail <= val + err + slack, (v, p, n, val, err, truth, tail)
    assert err <= 1e-7 * val


def test_strongly_tilted_law_overlaps_bromwich():
    """k-RR(2.792, 3) at n = 191 and eps = 2.656 (latency-suite case 1972, delta ~ 4e-10): the tilt puts
    nearly all of a pair's tilted mass on one atom.  The windows are built from the tilted log-odds (no
    1 - qt), so their rounding inflation stays small and the mixture evaluates (an intermediate version
    declined it and fell back to a 1.4e5-node integral); its interval overlaps the Bromwich integral's."""
    from shuffleamp.gparv import Gparv
    mech = KRR(eps0=2.792031101360514, k=3)
    g = mech.decomposition().gparv(2.656)
    v, p = np.ascontiguousarray(g.values, dtype=float), np.ascontiguousarray(g.probs, dtype=float)
    assert v.size == 4
    ok, val, err = _mix(v, p, 191)
    assert ok and err <= 1e-9 * val
    okp, valp, errp, _ = kernels.mixture_positive_part(v, p, 191.0, RTOL)        # the production budget
    assert okp and valp == val
    gg = Gparv(v, p)
    bu = X.delta_exact(gg, 191, "upper", enumerate_max=0)
    bl = X.delta_exact(gg, 191, "lower", enumerate_max=0)
    assert val - err <= bu.delta and bl.delta <= val + err


#: the 7-atom lower-bound law of OUE(eps0 = 0.3056047111385526, default d) at eps = 0.08891097701928813
#: (pair "dataset (0 | 1; others 2)", latency-suite case 1801, n = 45)
_OUE7_V = [-0.4836654601379005, -0.356305588935914, -0.1262198427892097, -0.09298335135939886,
           -0.06849876722207882, 0.19482347035443623, 0.264462265989292]
_OUE7_P = [0.12212626577653926, 0.12212626577653926, 0.08996770420539678, 0.2557474684469214,
           0.16577976424152466, 0.12212626577653926, 0.12212626577653926]


def test_seven_atom_cost_model_takes_mixture_and_overlaps_bromwich():
    """A 7-atom law whose a-priori step estimate (product of full outer windows, ~9e6) exceeds the
    production budget: the cost model (``_mix_dry``: the sign pruning replayed) predicts ~2e5 steps, so
    the production dispatch runs the mixture (kernel and Python paths alike); with the cost model off it
    declines as before.  Its interval holds the brute-force enumeration at small n and overlaps the
    Bromwich integral's at n = 45."""
    from shuffleamp.gparv import Gparv
    v, p = np.array(_OUE7_V), np.array(_OUE7_P)
    for n in (3, 6):
        truth = O.gparv_positive_part(v, p, n)
        ok, val, err, _ = kernels.mixture_positive_part(v, p, float(n), RTOL)
        assert ok and _inside(val, err, truth)
    n = 45
    ok, val, err, steps = kernels.mixture_positive_part(v, p, float(n), RTOL)
    assert ok and 0 < steps < 1e6 and err <= 1e-9 * val
    ok0, _, _, steps0 = kernels.mixture_positive_part(v, p, float(n), RTOL, trial_steps=0.0)
    assert not ok0 and -steps0 > 10 * steps                  # declined on the a-priori estimate
    g = Gparv(v, p)
    u = X.delta_exact(g, n, "upper")
    assert u.evaluator == "binomial-mixture"
    bu = X.delta_exact(g, n, "upper", enumerate_max=0)
    bl = X.delta_exact(g, n, "lower", enumerate_max=0)
    assert bu.evaluator == "exact"
    assert val - err <= bu.delta and bl.delta <= val + err


@pytest.mark.parametrize("seed", range(3))
def test_seven_atom_cost_model_decisions_are_certified(seed):
    """Perturbed copies of that law (values x 0.7..1.4 each, masses jittered) at n = 30..90 through the
    production dispatch: every evaluation the cost model accepts (declined on the a-priori estimate alone)
    has an interval that overlaps the Bromwich integral's; at least one such evaluation per seed."""
    from shuffleamp.gparv import Gparv
    rng = np.random.default_rng(700 + seed)
    taken = 0
    for _ in range(4):
        v = np.sort(np.array(_OUE7_V) * rng.uniform(0.7, 1.4, 7))
        p = np.array(_OUE7_P) * rng.uniform(0.7, 1.4, 7)
        p /= p.sum()
        n = int(rng.integers(30, 90))
        ok, val, err, _ = kernels.mixture_positive_part(v, p, float(n), RTOL)
        ok0 = kernels.mixture_positive_part(v, p, float(n), RTOL, trial_steps=0.0)[0]
        if not ok or ok0:
            continue
        taken += 1
        g = Gparv(v, p)
        bu = X.delta_exact(g, n, "upper", enumerate_max=0)
        bl = X.delta_exact(g, n, "lower", enumerate_max=0)
        assert val - err <= bu.delta and bl.delta <= val + err
    assert taken >= 1
