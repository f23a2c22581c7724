"""(eps0, delta0)-LDP randomizers, alone and as population groups: brute force on tiny n, reductions,
monotonicity, the local profile, the revealing lower-bound randomizer, errors, CLI, plans, accounting."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import shuffleamp as sa
from shuffleamp.errors import ParameterError
from shuffleamp.mechanisms import KRR

from oracle import heterogeneous_divergence as _divergence


# ----------------------------------------------------------------------------- concrete members of the class
def _ldp_delta(R: np.ndarray, eps0: float) -> float:
    """Smallest δ for which the matrix R (rows: inputs) is (eps0, δ)-LDP."""
    E = math.exp(eps0)
    return max(float(np.maximum(R[a] - E * R[b], 0.0).sum()) for a in range(len(R)) for b in range(len(R)))


def _random_member(rng, eps0: float, delta0: float, D: int, Y: int) -> np.ndarray:
    """A random (eps0, delta0)-LDP matrix: δ0 times arbitrary rows plus (1 − δ0) times a random pure
    eps0-LDP matrix (column weights times multipliers in [1, e^{eps0/2}], rows normalised: every column
    ratio stays within e^{eps0})."""
    c = rng.uniform(0.2, 1.0, Y)
    B = c * rng.uniform(1.0, math.exp(eps0 / 2), (D, Y))
    B /= B.sum(axis=1, keepdims=True)
    A = rng.dirichlet(np.full(Y, 0.3), D)
    return delta0 * A + (1 - delta0) * B


def _reveal_member(eps0: float, delta0: float) -> np.ndarray:
    """The revealing randomizer of the lower bound on 4 inputs (x0, x1, x2, x3): outputs 0/1 (binary RR at
    eps0, inputs x2 and x3 reporting like x1 and x0) and one symbol r_x per input."""
    E = math.exp(eps0)
    rr = {0: [E / (E + 1), 1 / (E + 1)], 1: [1 / (E + 1), E / (E + 1)]}
    R = np.zeros((4, 6))
    for x, b in ((0, 0), (1, 1), (2, 1), (3, 0)):
        R[x, :2] = (1 - delta0) * np.array(rr[b])
        R[x, 2 + x] = delta0
    return R


def _rr_member(eps1: float, D: int = 2) -> np.ndarray:
    E = math.exp(eps1)
    R = np.full((D, 2), 0.0)
    for x in range(D):
        R[x] = [E / (E + 1), 1 / (E + 1)] if x % 2 == 0 else [1 / (E + 1), E / (E + 1)]
    return R


def _krr_members(eps0: float, delta0: float):
    """3-RR at eps1 = log((e^eps0 + 2 delta0)/(1 − delta0)) on 3 inputs, and the randomizer that reveals its input
    with probability delta0 on top of 3-RR at eps0, on 5 inputs (a0, a1, a2 and fresh inputs reporting like
    a1 and a2): outputs 0..2 (3-RR) and one symbol per input."""
    def krr(e):
        E = math.exp(e)
        return (np.full((3, 3), 1.0) + (E - 1) * np.eye(3)) / (E + 2)
    plain = krr(math.log(math.exp(eps0) + 2 * delta0) - math.log1p(-delta0))
    B = krr(eps0)
    reveal = np.zeros((5, 8))
    for x, b in ((0, 0), (1, 1), (2, 2), (3, 1), (4, 2)):
        reveal[x, :3] = (1 - delta0) * B[b]
        reveal[x, 3 + x] = delta0
    return plain, reveal


def _common_truth(M, n, eps, const) -> float:
    """Max over the datasets 'target x0 vs x1, the other n − 1 users of the group at one common input' (both
    directions) of the exact divergence; two users of another group output a constant."""
    best = 0.0
    for x0, x1 in itertools.permutations(range(len(M)), 2):
        for x2 in range(len(M)):
            rows = [M[x2]] * (n - 1) + [const[0]] * 2
            best = max(best, _divergence([M[x0]] + rows, [M[x1]] + rows, eps))
    return best


def _worst_truth(mats, counts, g, eps) -> float:
    """Enumerated worst case for a target of group g: every ordered input pair of the target, every input of
    every other user (exact shuffled histogram laws, both directions), groups' matrices on one output space."""
    best = 0.0
    D = [len(M) for M in mats]
    others = [(i, M) for i, (M, c) in enumerate(zip(mats, counts)) for _ in range(c - (1 if i == g else 0))]
    for x0, x1 in itertools.permutations(range(D[g]), 2):
        for xs in itertools.product(*[range(D[i]) for i, _ in others]):
            rows = [M[x] for (_, M), x in zip(others, xs)]
            best = max(best, _divergence([mats[g][x0]] + rows, [mats[g][x1]] + rows, eps))
    return best


def _pad(M: np.ndarray, Y: int, at: int = 0) -> np.ndarray:
    out = np.zeros((len(M), Y))
    out[:, at:at + M.shape[1]] = M
    return out


def _group_upper(pop, g, eps):
    return sa.delta(pop, epsilon=eps).groups[g]


# ----------------------------------------------------------------------------- brute force, tiny n
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_population_upper_above_enumerated_members(seed):
    """Random (eps_i, delta_i)-LDP members of each group on a shared output space (they overlap), n <= 4:
    the enumerated worst case over every dataset is below each group's certified upper."""
    rng = np.random.default_rng(seed)
    params = [(0.8, 0.02), (1.5, 0.05)]
    counts = [2, 2] if seed != 2 else [3, 1]
    mats = [_random_member(rng, e, d, 3, 4) for e, d in params]
    for M, (e, d) in zip(mats, params):
        assert _ldp_delta(M, e) <= d * (1 + 1e-12)
    pop = sa.population([(sa.ApproximateLDP(e, d, domain=3), c) for (e, d), c in zip(params, counts)])
    for eps in (0.0, 0.3, 1.0):
        res = sa.delta(pop, epsilon=eps)
        for g in range(2):
            truth = _worst_truth(mats, counts, g, eps)
            assert truth <= res.groups[g].upper * (1 + 1e-9) + 1e-15, (g, eps, truth, res.groups[g].upper)


@pytest.mark.parametrize("eps0,delta0,n", [(1.0, 0.03, 3), (0.5, 0.01, 4), (2.0, 0.002, 2)])
def test_lower_below_its_own_members_truth(eps0, delta0, n):
    """The lower bound is the divergence of concrete class members (the other group constant): the enumerated
    divergence of those members (binary RR and 3-RR at their eps1, the revealing randomizers) is at least the
    lower, and at most the certified upper."""
    e1 = math.log(math.exp(eps0) + delta0) - math.log1p(-delta0)
    reveal, rr = _reveal_member(eps0, delta0), _rr_member(e1, 4)
    assert _ldp_delta(reveal, eps0) <= delta0 * (1 + 1e-12) and _ldp_delta(rr, eps0) <= delta0 * (1 + 1e-12)
    plain3, reveal3 = _krr_members(eps0, delta0)
    assert _ldp_delta(plain3, eps0) <= delta0 * (1 + 1e-12) and _ldp_delta(reveal3, eps0) <= delta0 * (1 + 1e-12)
    Y = 9                                              # the other group's constant output is symbol 8
    const = np.zeros((1, Y))
    const[0, 8] = 1.0
    pop = sa.population([(sa.ApproximateLDP(eps0, delta0), n), (sa.ApproximateLDP(0.3, 0.0), 2)])
    for eps in (0.0, 0.2, 0.7):
        g0 = _group_upper(pop, 0, eps)
        # binary members: every dataset; 3-RR members: the Theorem-14 datasets the lower bound uses
        truth = max([_worst_truth([_pad(M, Y), const], [n, 2], 0, eps) for M in (reveal, rr)]
                    + [_common_truth(_pad(M, Y), n, eps, const) for M in (plain3, reveal3)])
        assert g0.lower <= truth * (1 + 1e-9) + 1e-15
        assert truth <= g0.upper * (1 + 1e-9)


@pytest.mark.parametrize("eps0,delta0,n", [(1.0, 0.03, 3), (0.5, 0.01, 3), (2.0, 0.002, 2)])
def test_homogeneous_lower_below_its_binary_members_truth(eps0, delta0, n):
    """The single-class lower (which also takes binary randomized response's own bound over every dataset for its
    binary members) is at most the largest enumerated worst case (every dataset) of its members, and the upper
    is above each."""
    e1 = math.log(math.exp(eps0) + delta0) - math.log1p(-delta0)
    plain3, reveal3 = _krr_members(eps0, delta0)
    for eps in (0.0, 0.2, 0.7):
        r = sa.delta(sa.ApproximateLDP(eps0, delta0), n, eps)
        truth = max(_worst_truth([M], [n], 0, eps)
                    for M in (_reveal_member(eps0, delta0), _rr_member(e1, 4), plain3, reveal3))
        assert r.lower <= truth * (1 + 1e-9) + 1e-15
        assert truth <= r.upper * (1 + 1e-9)


def test_lower_is_the_best_of_its_binary_members_bounds():
    """n = 50, (eps0, delta0) = (0.5, 1e-3): the revealing member on binary RR is the best member here; the class
    lower is at least its certified lower (binary RR's bound at (delta - delta0)/(1 - delta0))."""
    eps0, delta0, n, target = 0.5, 1e-3, 50, 1e-2
    member = sa.epsilon(KRR(eps0, 2), n, (target - delta0) / (1 - delta0) * (1 + 1e-12)).lower
    r = sa.epsilon(sa.ApproximateLDP(eps0, delta0), n, target)
    assert member * (1 - 1e-9) <= r.lower <= r.upper


def test_no_amplification_across_groups_is_the_truth():
    """Group 0 (one user, binary RR at eps0 = 2) among many users of another group that output a constant:
    the truth is the local profile, and so are the certified upper and lower (the bracket is closed)."""
    E = math.exp(2.0)
    rr = _pad(_rr_member(2.0), 3)
    const = np.zeros((2, 3))
    const[:, 2] = 1.0
    pop = sa.population([(sa.ApproximateLDP(2.0, 0.0), 1), (sa.ApproximateLDP(0.5, 0.0), 3)])
    for eps in (0.0, 0.5, 1.5):
        g0 = _group_upper(pop, 0, eps)
        truth = _worst_truth([rr, const], [1, 3], 0, eps)
        assert truth == pytest.approx((E - math.exp(eps)) / (E + 1), rel=1e-12)
        assert g0.lower <= truth * (1 + 1e-9) and truth <= g0.upper <= truth * (1 + 1e-9)


def test_homogeneous_upper_above_enumerated_members():
    """sa.ApproximateLDP at tiny n against random (eps0, delta0)-LDP matrices (every dataset enumerated)."""
    rng = np.random.default_rng(7)
    for eps0, d0, n in ((1.0, 0.02, 3), (0.6, 0.05, 4)):
        M = _random_member(rng, eps0, d0, 3, 3)
        a = sa.ApproximateLDP(eps0, d0, domain=3)
        for eps in (0.0, 0.4):
            truth = _worst_truth([M], [n], 0, eps)
            r = sa.delta(a, n, eps)
            assert r.lower <= r.upper and truth <= r.upper * (1 + 1e-9)


def test_fewer_users_never_hurt_the_truth():
    """The worst case over datasets is non-increasing in n (the step behind keeping m <= n users): enumerated."""
    rng = np.random.default_rng(3)
    M = _random_member(rng, 1.0, 0.05, 3, 3)
    for eps in (0.0, 0.3):
        t = [_worst_truth([M], [n], 0, eps) for n in (1, 2, 3, 4)]
        assert all(a >= b - 1e-15 for a, b in zip(t, t[1:]))


def test_keeping_fewer_users_beats_the_local_profile():
    """n = 1e8, delta0 = 1e-14, delta = 1e-6: the charge n delta0 equals delta, yet keeping fewer users certifies
    amplification far below the local eps0 (homogeneous and as one group)."""
    a = sa.ApproximateLDP(1.0, 1e-14)
    r = sa.epsilon(a, 10 ** 8, 1e-6)
    p = sa.epsilon(sa.population([(a, 10 ** 8)]), delta=1e-6).groups[0]
    assert r.lower <= r.upper < 0.01 and p.upper == pytest.approx(r.upper, rel=1e-6)
    assert r.settings.get("users_kept", 10 ** 8) < 10 ** 8 or p.settings["users_kept"] < 10 ** 8


# ----------------------------------------------------------------------------- reductions
def test_zero_delta_is_the_pure_class_bound():
    """delta_i = 0: each group's upper is the standard clone with its own n_g users (the pure eps_g-LDP class)."""
    groups = [(0.5, 3000), (1.2, 500), (2.0, 50)]
    pop = sa.population([(sa.ApproximateLDP(e, 0.0), n) for e, n in groups])
    for eps in (0.05, 0.3):
        res = sa.delta(pop, epsilon=eps)
        for (e, n), r in zip(groups, res.groups):
            clone = sa.delta(KRR(e, 2), n, eps, method="clone").upper
            assert r.upper == pytest.approx(clone, rel=1e-6)
            assert r.lower <= r.upper


@pytest.mark.parametrize("d0", [0.0, 1e-9, 1e-6])
def test_one_group_is_the_homogeneous_bound(d0):
    a = sa.ApproximateLDP(1.0, d0)
    n = 2000
    pop = sa.population([(a, n)])
    for eps in (0.05, 0.12):
        h, p = sa.delta(a, n, eps), sa.delta(pop, epsilon=eps).groups[0]
        assert p.upper == pytest.approx(h.upper, rel=1e-6)
        # the population's lower evaluates more binary-RR datasets (mixed ones) than the homogeneous one
        assert h.lower * (1 - 1e-3) <= p.lower <= p.upper
    h, p = sa.epsilon(a, n, 1e-4), sa.epsilon(pop, delta=1e-4).groups[0]
    assert p.upper == pytest.approx(h.upper, rel=1e-5)
    assert h.lower * (1 - 1e-3) <= p.lower <= p.upper


def test_other_groups_do_not_change_a_group():
    base = sa.population([(sa.ApproximateLDP(0.7, 1e-8), 800)])
    more = sa.population([(sa.ApproximateLDP(0.7, 1e-8), 800), (sa.ApproximateLDP(0.1, 1e-3), 10 ** 5)])
    assert sa.delta(more, epsilon=0.2).groups[0].upper == sa.delta(base, epsilon=0.2).groups[0].upper


@settings(max_examples=8, deadline=None)
@given(st.floats(0.2, 2.0), st.integers(1, 400), st.floats(0.0, 1e-4), st.floats(0.0, 1e-4),
       st.floats(0.0, 1.0))
def test_upper_monotone_in_delta(eps0, n, d_a, d_b, eps):
    lo_d, hi_d = sorted((d_a, d_b))
    u = [sa.delta(sa.population([(sa.ApproximateLDP(eps0, d), n), (sa.ApproximateLDP(1.0, 1e-6), 5)]),
                  epsilon=eps).groups[0] for d in (lo_d, hi_d)]
    assert u[0].upper <= u[1].upper * (1 + 1e-12) + 1e-300
    assert u[0].lower <= u[0].upper and u[1].lower <= u[1].upper
    # epsilon at delta: the same users-kept scan, up to the search's bracket (relative 1e-7)
    e = [sa.epsilon(sa.population([(sa.ApproximateLDP(eps0, d), n), (sa.ApproximateLDP(1.0, 1e-6), 5)]),
                    delta=1e-3).groups[0] for d in (lo_d, hi_d)]
    assert e[0].upper <= e[1].upper * (1 + 1e-6) and e[0].lower <= e[0].upper and e[1].lower <= e[1].upper


# ----------------------------------------------------------------------------- the local profile and the lower
@pytest.mark.parametrize("eps0,d0", [(0.5, 1e-3), (2.0, 0.05), (1.0, 0.0)])
def test_local_profile_is_the_canonical_pair(eps0, d0):
    """The local profile equals the hockey-stick divergence of the canonical 4-output (eps0, delta0) pair
    (computed here from its table), and at n = 1 the certified bracket is that value."""
    E = math.exp(eps0)
    P = np.array([d0, (1 - d0) * E / (E + 1), (1 - d0) / (E + 1), 0.0])
    Q = P[::-1]
    from shuffleamp.gaussian import approx_local_delta, approx_local_epsilon
    for eps in (0.0, 0.3, eps0, eps0 + 1):
        ref = float(np.maximum(P - math.exp(eps) * Q, 0).sum())      # table arithmetic: 1e-15 absolute
        v = approx_local_delta(eps0, d0, eps)
        assert ref - 1e-15 <= v <= ref * (1 + 1e-12) + 1e-15
        r = sa.delta(sa.ApproximateLDP(eps0, d0), 1, eps)
        assert r.lower <= ref * (1 + 1e-9) + 1e-15 and ref - 1e-15 <= r.upper
        assert r.upper <= ref * (1 + 1e-9) + 1e-15 and r.lower >= ref * (1 - 1e-9) - 1e-15
    for delta in (d0, d0 + 1e-3, 0.2):
        e = approx_local_epsilon(eps0, d0, delta)
        assert approx_local_delta(eps0, d0, e) <= delta and 0.0 <= e <= eps0


def test_delta_below_delta0_is_refused():
    pop = sa.population([(sa.ApproximateLDP(1.0, 1e-6), 100), (sa.ApproximateLDP(0.5, 1e-9), 100)])
    with pytest.raises(ParameterError) as e:
        sa.epsilon(pop, delta=1e-7)
    assert e.value.parameter == "delta"
    with pytest.raises(ParameterError) as e:
        sa.epsilon(sa.ApproximateLDP(1.0, 1e-6), 100, 1e-7)
    assert e.value.parameter == "delta"


def test_gdp_comparison_value_uses_delta_i():
    """method="gdp" on (eps_i, delta_i) groups: the μ-GDP estimate with q_i = (1 − δ_i)/(1 + e^{ε_i}), per user."""
    from shuffleamp import baselines
    pop = sa.population([(sa.ApproximateLDP(0.5, 1e-3), 60), (sa.ApproximateLDP(1.0, 0.2), 40)])
    r = sa.epsilon(pop, delta=1e-4, method="gdp")
    ref = baselines.gdp_epsilon([0.5] * 60 + [1.0] * 40, [1e-3] * 60 + [0.2] * 40, 1e-4).estimate
    assert r.estimate == pytest.approx(ref, rel=1e-9) and not r.sound


def test_mixed_groups_are_refused():
    with pytest.raises(ParameterError) as e:
        sa.population([(sa.ApproximateLDP(1.0, 1e-6), 100), (KRR(1.0, 2), 100)])
    assert e.value.parameter == "groups"


@pytest.mark.parametrize("d0", [-1e-3, 1.0, float("nan"), "x"])
def test_bad_delta0_in_a_group(d0):
    with pytest.raises(ParameterError) as e:
        sa.population([(sa.ApproximateLDP(1.0, d0), 100)])
    assert e.value.parameter == "delta0"


# ----------------------------------------------------------------------------- CLI, plans, accounting
def test_cli_population_of_approx_groups(capsys):
    import json
    from shuffleamp.cli import main
    assert main(["epsilon", "--mechanism", "population", "--group", "100:approx-ldp:eps0=0.5:delta0=1e-6",
                 "--group", "300:approx-ldp:eps0=1:delta0=1e-7", "--delta", "1e-3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["result"]
    assert 0 <= out["epsilon_lower"] <= out["epsilon_upper"] <= 1.0
    assert main(["epsilon", "--mechanism", "population", "--group", "100:approx-ldp:eps0=0.5:delta0=1e-6",
                 "--delta", "1e-8", "--json"]) != 0
    err = json.loads(capsys.readouterr().out)["error"]
    assert err["parameter"] == "delta"


def test_plan_groups():
    from shuffleamp.config import population_from_tables
    pop = population_from_tables([{"count": 100, "mechanism": "approx-ldp", "eps0": 0.5, "delta0": 1e-7},
                                  {"count": 50, "mechanism": "approx-ldp", "eps0": 1.0, "delta0": 0.0}])
    assert pop.kind == "approx" and pop.n == 150


def test_population_rounds_bound_every_group():
    groups = [(sa.ApproximateLDP(0.5, 1e-9), 1000), (sa.ApproximateLDP(1.0, 1e-10), 3000)]
    pop = sa.population(groups)
    one = sa.epsilon(pop, delta=1e-5)
    tot = sa.compose_rounds([(pop, None, 5)], delta=1e-5)
    assert tot.lower <= tot.upper and one.upper <= tot.upper
    d = sa.compose_rounds([(pop, None, 5)], epsilon=0.3)
    assert d.lower <= d.upper and d.upper >= -math.expm1(5 * math.log1p(-1e-9))     # the revealing member
    for m, n in groups:                      # the population's total bounds every group's own total
        assert sa.compose_rounds([(m, n, 5)], delta=1e-5).upper <= tot.upper * (1 + 1e-9)
