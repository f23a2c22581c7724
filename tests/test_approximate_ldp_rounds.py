"""(eps0, delta0)-LDP rounds in the accountant: the clone pair mixed with infinite-loss atoms (accounting,
argument I), against exact R-fold compositions of enumerated class members, the pure limit, monotonicity,
the former additive charge, PLD interop, errors and the CLI."""
import json
import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpl

import oracle
import shuffleamp as sa
from shuffleamp import accounting as acc
from shuffleamp.errors import ParameterError
from shuffleamp.mechanisms import KRR

from test_approximate_ldp import _krr_members, _ldp_delta, _random_member, _reveal_member, _rr_member


# ----------------------------------------------------------------------------- exact R-fold totals
def _exact_total(M, X0, X1, R: int, eps: float) -> float:
    """Exact δ of R rounds of the shuffled pair of datasets X0, X1 under the matrix M (both orderings)."""
    p, q = oracle.on_common_alphabet(oracle.histogram_law(M, X0, lump=False), oracle.histogram_law(M, X1, lump=False))
    return max(oracle.composed_delta_exact(p, q, R, eps), oracle.composed_delta_exact(q, p, R, eps))


def _members(eps0: float, delta0: float):
    """The class members behind the lower bound, each with its Theorem-14 dataset pair ``(M, x0, x1, others)``:
    binary RR and 3-RR at their eps1, and the randomizers revealing their input w.p. delta0 on top of binary RR
    (others on a fresh input reporting like x1) and of 3-RR (others on a fresh input reporting like 2)."""
    e1 = math.log(math.exp(eps0) + delta0) - math.log1p(-delta0)
    plain3, reveal3 = _krr_members(eps0, delta0)
    out = [(_rr_member(e1, 2), 0, 1, 1), (plain3, 0, 1, 2), (_reveal_member(eps0, delta0), 0, 1, 2),
           (reveal3, 0, 1, 4)]
    for M, *_ in out:
        assert _ldp_delta(M, eps0) <= delta0 * (1 + 1e-12)
    return out


def _members_total(eps0, delta0, n, R, eps) -> float:
    return max(_exact_total(M, [a] + [o] * (n - 1), [b] + [o] * (n - 1), R, eps)
               for M, a, b, o in _members(eps0, delta0))


@pytest.mark.parametrize("eps0,delta0,n,R", [(1.0, 0.02, 3, 3), (0.5, 0.05, 4, 2), (1.0, 0.01, 6, 2),
                                             (2.0, 0.005, 6, 3),
                                             pytest.param(1.0, 0.02, 5, 4, marks=pytest.mark.slow)])
def test_total_brackets_the_exact_composition_of_members(eps0, delta0, n, R):
    """lower <= exact R-fold total of the concrete members the lower uses <= upper (delta at eps)."""
    a = sa.ApproximateLDP(eps0, delta0)
    for eps in (0.1 * R * eps0, 0.4 * R * eps0, 0.8 * R * eps0):
        truth = _members_total(eps0, delta0, n, R, eps)
        r = sa.compose_rounds([(a, n, R)], epsilon=eps)
        assert r.lower <= truth * (1 + 1e-9) + 1e-15, (eps, r.lower, truth)
        assert truth <= r.upper * (1 + 1e-9) + 1e-15, (eps, truth, r.upper)
        assert r.lower >= -math.expm1(R * math.log1p(-delta0)) * (1 - 1e-9)     # the revealed inputs


@pytest.mark.parametrize("eps0,delta0,n,R,delta", [(1.0, 0.01, 4, 3, 0.1), (0.7, 0.002, 6, 2, 0.02)])
def test_epsilon_total_brackets_the_members(eps0, delta0, n, R, delta):
    """The members' exact total is <= delta at the upper epsilon and > delta at the lower epsilon."""
    r = sa.compose_rounds([(sa.ApproximateLDP(eps0, delta0), n, R)], delta=delta)
    assert 0.0 < r.lower <= r.upper < math.inf
    assert _members_total(eps0, delta0, n, R, r.upper) <= delta * (1 + 1e-9)
    assert _members_total(eps0, delta0, n, R, r.lower) >= delta * (1 - 1e-9)


def test_upper_above_random_members_on_every_dataset():
    """Random (eps0, delta0)-LDP matrices on 3 inputs, every neighbouring dataset of n = 3 users, R = 3 rounds of
    the same dataset: the exact total is below the certified upper of the class on a 3-input domain."""
    rng = np.random.default_rng(11)
    eps0, delta0, n, R = 0.8, 0.03, 3, 3
    a = sa.ApproximateLDP(eps0, delta0, domain=3)
    mats = [_random_member(rng, eps0, delta0, 3, 4) for _ in range(2)]
    for eps in (0.2, 0.8):
        up = sa.compose_rounds([(a, n, R)], epsilon=eps).upper
        for M in mats:
            for x0, x1, o1, o2 in ((x0, x1, o1, o2) for x0 in range(3) for x1 in range(3) if x0 != x1
                                   for o1 in range(3) for o2 in range(o1, 3)):
                t = _exact_total(M, [x0, o1, o2], [x1, o1, o2], R, eps)
                assert t <= up * (1 + 1e-9) + 1e-15, (eps, x0, x1, o1, o2, t, up)


# ----------------------------------------------------------------------------- limits and monotonicity
@pytest.mark.parametrize("eps0,n,R", [(1.0, 10 ** 5, 5), pytest.param(0.5, 10 ** 6, 20, marks=pytest.mark.slow)])
def test_delta0_to_zero_is_the_pure_clone_total(eps0, n, R):
    """delta0 = 1e-18: the totals are the pure eps0 clone totals up to the discretisation (the infinity mass
    1 - (1 - n delta0)^R is at most 2e-11, 2e-5 of the delta compared here)."""
    pure, tiny = sa.ApproximateLDP(eps0, 0.0), sa.ApproximateLDP(eps0, 1e-18)
    p, t = sa.compose_rounds([(pure, n, R)], delta=1e-6), sa.compose_rounds([(tiny, n, R)], delta=1e-6)
    assert t.upper == pytest.approx(p.upper, rel=1e-3) and t.lower == pytest.approx(p.lower, rel=1e-3)
    assert t.upper >= p.upper * (1 - 1e-3)
    e = p.upper
    pd, td = sa.compose_rounds([(pure, n, R)], epsilon=e), sa.compose_rounds([(tiny, n, R)], epsilon=e)
    assert td.upper == pytest.approx(pd.upper, rel=1e-3) and td.lower <= td.upper


def test_monotone_in_delta0_and_rounds():
    n = 10 ** 6
    ups = [sa.compose_rounds([(sa.ApproximateLDP(1.0, d0), n, 5)], delta=1e-5, lower=False).upper
           for d0 in (0.0, 1e-13, 1e-11)]
    assert all(a <= b for a, b in zip(ups, ups[1:])), ups
    tot = [sa.compose_rounds([(sa.ApproximateLDP(1.0, 1e-12), n, R)], delta=1e-5) for R in (1, 4)]
    assert all(r.lower <= r.upper for r in tot)
    assert all(a.upper <= b.upper for a, b in zip(tot, tot[1:])), [r.upper for r in tot]
    assert all(a.lower <= b.lower * (1 + 1e-9) for a, b in zip(tot, tot[1:])), [r.lower for r in tot]


def _single(cls, n, m, d):
    """The PLD of the reduction's pair with m users kept alone (clone at eps0'(beta_m), infinity mass beta_m)."""
    rt = acc._Round.make(cls, n, acc.DEFAULT_TAIL_DELTA, users=m)
    return acc._upper_pld(rt, d, acc.DEFAULT_POINTS), rt


def test_one_users_kept_value_is_never_looser_than_charging_r_beta():
    """With m users kept, the pair's R-fold total is at most the pure clone pair's at eps0' plus R beta (the former
    additive charge): 1 - (1 - beta)^R + (1 - beta)^R delta_C <= R beta + delta_C, on the same grid."""
    cls = sa.ApproximateLDP(1.0, 1e-9)
    n, R, d = 10 ** 5, 10, 1e-4
    stand_in = cls.at_n(n)
    beta = stand_in.delta_charge
    mix = _single(cls, n, n, d)[0].self_compose(R)
    pure = acc.to_pld(sa.ApproximateLDP(stand_in.eps0_pure, 0.0), n, value_discretization_interval=d).self_compose(R)
    for eps in (0.0, 0.05, 0.2, 0.5):
        m, p = mix.get_delta_for_epsilon(eps), pure.get_delta_for_epsilon(eps)
        assert m <= p + R * beta
        assert m >= -math.expm1(R * math.log1p(-beta)) * (1 - 1e-12)


def test_the_class_profile_is_the_minimum_over_users_kept():
    """The exported profile is <= every single users-kept value's certified profile, pointwise, and its floor is
    delta0 (one user kept); far below the all-users pair's infinity mass n delta0."""
    cls, n = sa.ApproximateLDP(1.0, 1e-9), 10 ** 5
    fam = acc._ApproxFamily([(cls, n)], acc.DEFAULT_TAIL_DELTA)
    eps = np.array([0.0, 0.003, 0.01, 0.03, 0.1, 0.3, 0.7, 1.0, 1.5])
    mins = fam.minimum(eps)
    for m in (n, 1000, 30, 1):
        rt = acc._Round.make(cls, n, acc.DEFAULT_TAIL_DELTA, users=m)
        single = rt.inf_mass + (1 - rt.inf_mass) * rt.upper_profile(eps)
        assert np.all(mins <= single * (1 + 1e-12) + 1e-300), m
    assert fam.floor == pytest.approx(1e-9, rel=1e-12) and mins[-1] == pytest.approx(1e-9, rel=1e-6)
    p = sa.to_pld(cls, n)
    assert p._pmf_remove._infinity_mass <= 1e-9 + 2e-15


def test_the_class_total_is_below_the_best_single_users_kept_value():
    """Garbling: the total of the minimum's pair is below that of the best single m tried (same grid, R = 10)."""
    cls, n, R, delta = sa.ApproximateLDP(1.0, 1e-9), 10 ** 5, 10, 1e-6
    tot = sa.compose_rounds([(cls, n, R)], delta=delta, lower=False)
    d = tot.value_discretization_interval
    singles = []
    for m in (97, 50, 195):                  # R m delta0 < delta: the single pairs with a finite total
        p = _single(cls, n, m, d)[0].self_compose(R)
        singles.append(p.get_epsilon_for_delta(delta))
    assert tot.upper < min(singles), (tot.upper, singles)


# ----------------------------------------------------------------------------- PLD interop
def test_to_pld_of_the_class_composes_with_dp_accounting():
    d = 1e-3
    p = sa.to_pld(sa.ApproximateLDP(1.0, 1e-9), 10 ** 5, value_discretization_interval=d)
    eps = [0.0, 0.01, 0.1, 1.0, 3.0]
    dp = np.asarray(p.get_delta_for_epsilon(eps))
    assert np.all(dp >= 1e-9) and dp[-1] <= 1e-9 * (1 + 1e-5)           # the infinity atoms (delta0), nothing else
    g = dpl.from_gaussian_mechanism(2.0, value_discretization_interval=d, pessimistic_estimate=True)
    both = p.compose(g)
    db = np.asarray(both.get_delta_for_epsilon(eps))
    assert np.all(db >= dp * (1 - 1e-9)) and np.all(db >= np.asarray(g.get_delta_for_epsilon(eps)) * (1 - 1e-9))


def test_errors():
    a = sa.ApproximateLDP(1.0, 1e-9)
    with pytest.raises(ParameterError) as e:               # 1 - (1 - delta0)^R above delta: no finite epsilon
        sa.compose_rounds([(a, 10 ** 5, 10)], delta=5e-9)
    assert e.value.parameter == "delta"
    with pytest.raises(ParameterError) as e:               # with another round type too
        sa.compose_rounds([(a, 10 ** 5, 10), (KRR(1.0, 2), 10 ** 5, 3)], delta=9.9e-9)
    assert e.value.parameter == "delta"
    p = sa.to_pld(sa.ApproximateLDP(1.0, 0.6), 10)        # n delta0 >= 1: only one user kept gives a pair
    assert p.get_delta_for_epsilon(5.0) == pytest.approx(0.6, rel=1e-9)


def test_cli_rounds(capsys):
    from shuffleamp.cli import main
    assert main(["epsilon", "--mechanism", "approx-ldp", "--eps0", "1", "--delta0", "1e-9", "--n", "1e5",
                 "--delta", "1e-6", "--rounds", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["result"]
    assert 0 < out["epsilon_lower"] <= out["epsilon_upper"] < math.inf
    assert main(["epsilon", "--mechanism", "approx-ldp", "--eps0", "1", "--delta0", "1e-9", "--n", "1e5",
                 "--delta", "5e-9", "--rounds", "10", "--json"]) != 0
    err = json.loads(capsys.readouterr().out)
    assert "delta" in json.dumps(err)


def test_population_of_one_group_is_the_class():
    """A population with one (eps0, delta0)-LDP group: the same minimum over the users kept as the class alone."""
    cls = sa.ApproximateLDP(1.0, 1e-9)
    alone = sa.compose_rounds([(cls, 10 ** 5, 10)], delta=1e-6, lower=False)
    pop = sa.compose_rounds([(sa.population([(cls, 10 ** 5)]), None, 10)], delta=1e-6)
    assert pop.upper == pytest.approx(alone.upper, rel=1e-12) and pop.lower <= pop.upper


def test_population_total_above_enumerated_members():
    """Two (eps_g, delta_g)-LDP groups of random members on a shared output space, every dataset of n = 2 + 2
    users, R = 2 rounds: the exact total of a target of either group is below the population's certified upper."""
    rng = np.random.default_rng(5)
    params, counts, R = [(0.8, 0.02), (1.5, 0.05)], [2, 2], 2
    mats = [_random_member(rng, e, d, 3, 4) for e, d in params]
    pop = sa.population([(sa.ApproximateLDP(e, d, domain=3), c) for (e, d), c in zip(params, counts)])
    for eps in (0.3, 1.2):
        up = sa.compose_rounds([(pop, None, R)], epsilon=eps).upper
        worst = 0.0
        for g in range(2):
            others = [mats[i] for i, c in enumerate(counts) for _ in range(c - (1 if i == g else 0))]
            for x0 in range(3):
                for x1 in range(3):
                    if x0 == x1:
                        continue
                    for xs in np.ndindex(*(3,) * len(others)):
                        rows = [M[x] for M, x in zip(others, xs)]
                        a = oracle.heterogeneous_histogram_law([mats[g][x0]] + rows)
                        b = oracle.heterogeneous_histogram_law([mats[g][x1]] + rows)
                        keys = sorted(set(a) | set(b))
                        p = np.array([a.get(k, 0.0) for k in keys])
                        q = np.array([b.get(k, 0.0) for k in keys])
                        worst = max(worst, oracle.composed_delta_exact(p, q, R, eps),
                                    oracle.composed_delta_exact(q, p, R, eps))
        assert worst <= up * (1 + 1e-9) + 1e-15, (eps, worst, up)


def test_population_delta_below_the_revealed_mass_is_refused():
    pop = sa.population([(sa.ApproximateLDP(1.0, 1e-9), 1000), (sa.ApproximateLDP(0.5, 1e-7), 100)])
    with pytest.raises(ParameterError) as e:               # 1 - (1 - 1e-7)^5 ~ 5e-7
        sa.compose_rounds([(pop, None, 5)], delta=4e-7)
    assert e.value.parameter == "delta"


def test_privacy_profile_is_the_minimum_over_users_kept():
    """One round's certified profile (both signs of eps) is above the exact divergence of the lower's members at
    n = 4, and at n = 1e5 never above the reduction with all users kept (beta_n + (1 - beta_n) U_n)."""
    eps = np.array([-0.6, -0.1, 0.0, 0.2, 0.7, 1.5])
    up, lo = sa.privacy_profile(sa.ApproximateLDP(1.0, 0.02), 4, eps)
    truth = np.array([_members_total(1.0, 0.02, 4, 1, float(e)) for e in eps])
    assert np.all(lo <= truth * (1 + 1e-9) + 1e-15) and np.all(truth <= up * (1 + 1e-9) + 1e-15)
    cls, n = sa.ApproximateLDP(1.0, 1e-9), 10 ** 5
    up, _ = sa.privacy_profile(cls, n, eps[2:])
    rt = acc._Round.make(cls, n, acc.DEFAULT_TAIL_DELTA, users=n)
    alln = rt.inf_mass + (1 - rt.inf_mass) * rt.upper_profile(eps[2:])
    assert np.all(up <= alln * (1 + 1e-12)) and up[-1] < 1e-4


def test_sweep_in_a_fresh_process():
    """sa.sweep of approx-ldp without touching sa.ApproximateLDP first (the registry loads the built-in module)."""
    import subprocess
    import sys
    code = ("import shuffleamp as sa; t = sa.sweep('approx-ldp', eps0=[1.0], delta0=[1e-9], n=[1000], delta=1e-5); "
            "r = t.rows[0] if hasattr(t, 'rows') else t.iloc[0]; print(float(r['epsilon_upper']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert 0 < float(out.stdout.strip().splitlines()[-1]) < math.inf
