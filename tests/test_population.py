"""Personalized populations: brute force, reductions, monotonicity, ordering of bounds."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis_budget import examples
from scipy.stats import binom

import shuffleamp as sa
from shuffleamp import personalized as P
from shuffleamp.errors import ParameterError
from shuffleamp.mechanisms import KRR, MatrixMechanism

from oracle import heterogeneous_divergence as _divergence
from oracle import heterogeneous_histogram_law as _histogram_law


# ----------------------------------------------------------------------------- brute force
#: compose_rounds' time budget in these tests: generous (they test values, not the budget; a loaded
#: machine's wall clock can be several times the CPU time)
TOTAL_SECONDS = 300.0


def _enumerated_max(mats, counts, g, eps, x0s=None):
    """Max divergence over concrete datasets: target of group g changes x0 -> x1, all others hold
    one common value each per group (every combination), for small n."""
    D = mats[0].shape[0]
    best = 0.0
    pairs = [(a, b) for a in range(D) for b in range(D) if a != b] if x0s is None else x0s
    for x0, x1 in pairs:
        for combo in itertools.product(range(D), repeat=len(mats)):
            others = []
            for i, (M, c) in enumerate(zip(mats, counts)):
                others += [M[combo[i]]] * (c - (1 if i == g else 0))
            best = max(best, _divergence([mats[g][x0]] + others, [mats[g][x1]] + others, eps))
    return best


def _enumerated_max_binary(mats, counts, g, eps):
    """Max divergence over *every* binary dataset (each other user 0 or 1) and both orderings."""
    others = [M for i, (M, c) in enumerate(zip(mats, counts)) for _ in range(c - (1 if i == g else 0))]
    best = 0.0
    for bits in itertools.product((0, 1), repeat=len(others)):
        rows = [M[b] for M, b in zip(others, bits)]
        for x0, x1 in ((0, 1), (1, 0)):
            best = max(best, _divergence([mats[g][x0]] + rows, [mats[g][x1]] + rows, eps))
    return best


@pytest.mark.parametrize("eps0s,counts,k", [((0.5, 2.0), (2, 3), 3), ((1.0, 3.0), (3, 3), 4),
                                            ((0.3, 1.5, 2.5), (2, 2, 2), 3), ((1.0, 2.0), (4, 3), 2)])
def test_upper_dominates_enumeration_krr(eps0s, counts, k):
    pop = P.population([(KRR(eps0=e, k=k), c) for e, c in zip(eps0s, counts)])
    mats = [KRR(eps0=e, k=k).matrix() for e in eps0s]
    for g in range(len(eps0s)):
        for eps in (0.0, 0.2, 0.6):
            true = (_enumerated_max_binary(mats, counts, g, eps) if k == 2
                    else _enumerated_max(mats, counts, g, eps, x0s=[(0, 1)]))
            r = P.delta(pop, eps)
            assert r.groups[g].upper >= true * (1 - 1e-12) - 1e-15
            assert r.groups[g].lower <= true * (1 + 1e-9) + 1e-15


def test_lower_exact_dataset_krr_matches_enumeration():
    k, eps0s, counts = 3, (0.5, 2.0), (3, 3)
    pop = P.population([(KRR(eps0=e, k=k), c) for e, c in zip(eps0s, counts)])
    mats = [KRR(eps0=e, k=k).matrix() for e in eps0s]
    for g in (0, 1):
        for eps in (0.0, 0.3):
            others = []
            for i, (M, c) in enumerate(zip(mats, counts)):
                others += [M[2]] * (c - (1 if i == g else 0))
            true = _divergence([mats[g][0]] + others, [mats[g][1]] + others, eps)
            lo = P._delta_lower_krr_exact(pop, g, eps)
            assert lo == pytest.approx(true, rel=1e-9, abs=1e-15)


def test_upper_dominates_enumeration_matrices():
    A = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])
    B = np.array([[0.4, 0.35, 0.25], [0.3, 0.4, 0.3], [0.3, 0.3, 0.4]])
    pop = P.population([(MatrixMechanism(A), 3), (MatrixMechanism(B), 3)])
    for g in (0, 1):
        for eps in (0.0, 0.2, 0.5):
            true = _enumerated_max([A, B], (3, 3), g, eps)
            assert P.delta(pop, eps).groups[g].upper >= true * (1 - 1e-12) - 1e-15


def _score_pair_rows(pop, g, sc):
    """Rows (target x0, target x1, others) of the concrete dataset behind a score lower bound."""
    import re
    if pop.kind == "krr":
        k = pop.k
        mats = [gr.mechanism.matrix() for gr in pop.groups]
        other = 1 if k == 2 else 2
        ins = [other] * len(mats)
        x0, x1 = 0, 1
    else:
        mats = [gr.mechanism.matrix() for gr in pop.groups]
        m = re.match(r"x0=(\d+), x1=(\d+), others at inputs \(([\d, ]+)\)", sc.label)
        x0, x1 = int(m.group(1)), int(m.group(2))
        ins = [int(c) for c in m.group(3).split(",")]
    others = []
    for i, gr in enumerate(pop.groups):
        others += [mats[i][ins[i]]] * (gr.n - (1 if i == g else 0))
    return [mats[g][x0]] + others, [mats[g][x1]] + others


@pytest.mark.parametrize("case", ["krr3", "krr2", "krr5", "matrix"])
def test_lower_below_concrete_divergence_below_upper(case):
    """Brute force (n <= 8): every score lower bound <= the exact divergence of its concrete dataset
    pair (multinomial enumeration of the full histogram) <= the certified upper bound."""
    if case == "matrix":
        A = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])
        B = np.array([[0.4, 0.35, 0.25], [0.3, 0.4, 0.3], [0.3, 0.3, 0.4]])
        pop = P.population([(MatrixMechanism(A), 4), (MatrixMechanism(B), 4)])
    else:
        k, eps0s, counts = {"krr3": (3, (0.5, 2.0), (3, 4)), "krr2": (2, (1.0, 2.5), (4, 4)),
                            "krr5": (5, (0.3, 1.5, 3.0), (2, 3, 3))}[case]
        pop = P.population([(KRR(eps0=e, k=k), c) for e, c in zip(eps0s, counts)])
    for g in range(len(pop.groups)):
        law_list = [(sc, P._score_law(sc)) for sc in P._scores(pop, g)]
        for eps in (0.0, 0.15, 0.5):
            up = P.delta(pop, eps).groups[g].upper
            for sc, law in law_list:
                r0, r1 = _score_pair_rows(pop, g, sc)
                true = _divergence(r0, r1, eps)
                lo = P._score_delta(sc, law, eps)
                assert 0.0 < lo <= true * (1 + 1e-12) + 1e-15 or (eps > 0 and lo <= true)
                assert true <= up * (1 + 1e-12) + 1e-15
                if case == "krr2":            # k = 2: the count of 0s is the whole histogram
                    assert lo == pytest.approx(true, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("n", [10**6, 10**8])
def test_lower_available_at_large_n(n):
    """The certified lower bound exists at every n (never silently 0) and is close to the upper."""
    c = [int(0.6 * n), int(0.3 * n)]
    c.append(n - sum(c))
    pop = P.population([(KRR(eps0=e, k=10), m) for e, m in zip((0.5, 2.0, 4.0), c)])
    r = P.epsilon(pop, 1e-9)
    for gr in r.groups:
        assert 0.0 < gr.lower <= gr.upper
        assert gr.lower >= 0.99 * gr.upper


def test_lower_matrix_population_large_n():
    A = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])
    B = np.array([[0.4, 0.35, 0.25], [0.3, 0.4, 0.3], [0.3, 0.3, 0.4]])
    pop = P.population([(MatrixMechanism(A), 3 * 10**6), (MatrixMechanism(B), 10**6)])
    r = P.epsilon(pop, 1e-9)
    for gr in r.groups:
        assert 0.0 < gr.lower <= gr.upper


# ----------------------------------------------------------------------------- reductions
def test_size_bias_identity():
    n, gam = 37, 0.31
    m = np.arange(1, n + 1)
    lhs = binom.pmf(m, n, gam) * m / (gam * n)
    rhs = binom.pmf(m - 1, n - 1, gam)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)


@pytest.mark.parametrize("n,eps", [(50, 0.3), (10**4, 0.05), (10**6, 0.01)])
def test_one_group_equals_homogeneous(n, eps):
    m = KRR(eps0=1.5, k=6)
    ref = sa.delta(m, n, eps).upper
    assert P.delta(P.population([(m, n)]), eps).groups[0].upper == pytest.approx(ref, rel=1e-9)
    # equal groups: same value
    two = P.population([(m, n // 2), (KRR(eps0=1.5, k=6), n - n // 2)])
    r = P.delta(two, eps)
    for gr in r.groups:
        assert gr.upper == pytest.approx(ref, rel=1e-9)


def test_evaluators_agree():
    """Gauss-Laguerre rule vs Poisson-binomial direct mixture, where both apply."""
    pop = P.population([(KRR(eps0=0.5, k=5), 1000), (KRR(eps0=2.0, k=5), 500)])
    gam, N = P._others(pop, 0)
    vals, mass = P._target_laws(pop, 0, 0.1)[0]
    rule, info = P._delta_law(vals, mass, gam, N, 1e-6)
    assert info["how"] == "rule"
    old = P.DIRECT_MAX
    try:
        P.DIRECT_MAX = 10**6
        mix = P._Mixture(gam, N)
        direct = sum(pm * sa.exact.delta_exact(sa.gparv.Gparv(vals, mass), int(m) + 1).delta
                     for m, pm in zip(mix.ms, mix.pmf)) if mix.how == "direct" else None
    finally:
        P.DIRECT_MAX = old
    if direct is not None:
        assert rule == pytest.approx(direct, rel=1e-4)


# ----------------------------------------------------------------------------- monotonicity (hypothesis)
@settings(max_examples=examples(20), deadline=None)
@given(st.floats(0.2, 3.0), st.floats(0.2, 3.0), st.floats(0.05, 1.0), st.integers(20000, 10**6))
def test_raising_other_eps0_never_lowers(e_t, e_o, bump, n):
    base = P.population([(KRR(eps0=e_t, k=5), n), (KRR(eps0=e_o, k=5), n)])
    up = P.population([(KRR(eps0=e_t, k=5), n), (KRR(eps0=e_o + bump, k=5), n)])
    a = P.epsilon(base, 1e-6).groups[0].upper
    b = P.epsilon(up, 1e-6).groups[0].upper
    assert b >= a * (1 - 1e-6)


@settings(max_examples=examples(20), deadline=None)
@given(st.floats(0.2, 3.0), st.floats(0.2, 3.0), st.integers(20000, 10**6), st.integers(1, 10**5))
def test_adding_users_never_raises(e_t, e_o, n, extra):
    base = P.population([(KRR(eps0=e_t, k=5), n), (KRR(eps0=e_o, k=5), n)])
    more = P.population([(KRR(eps0=e_t, k=5), n), (KRR(eps0=e_o, k=5), n + extra)])
    a = P.epsilon(base, 1e-6).groups[0].upper
    b = P.epsilon(more, 1e-6).groups[0].upper
    assert b <= a * (1 + 1e-6)


# ----------------------------------------------------------------------------- ordering of bounds
@pytest.mark.parametrize("n", [3000, 10**5])
def test_lower_upper_max_ordering(n):
    pop = P.population([(KRR(eps0=0.5, k=10), int(0.6 * n)), (KRR(eps0=2.0, k=10), int(0.3 * n)),
                        (KRR(eps0=4.0, k=10), n - int(0.6 * n) - int(0.3 * n))])
    r = P.epsilon(pop, 1e-8)
    mx = P.everyone_at_max(pop, 1e-8).upper
    assert mx == pytest.approx(sa.epsilon(KRR(eps0=4.0, k=10), n, 1e-8).upper, rel=1e-6)
    for gr in r.groups:
        assert gr.lower is not None and gr.lower <= gr.upper <= mx * (1 + 1e-9)
    assert r.upper == max(gr.upper for gr in r.groups)
    d = r.to_dict()
    assert len(d["groups"]) == 3 and d["epsilon_upper"] == r.upper
    gdp = sa.epsilon(pop, delta=1e-8, method="gdp")
    assert gdp.sound is False and gdp.kind == "estimate" and math.isfinite(gdp.estimate)


# ----------------------------------------------------------------------------- bad input
def test_bad_input():
    with pytest.raises(ParameterError) as e:
        P.population([])
    assert e.value.parameter == "groups" if hasattr(e.value, "parameter") else True
    with pytest.raises(ParameterError, match="n_g"):
        P.population([(KRR(eps0=1.0, k=3), 0)])
    with pytest.raises(ParameterError, match="groups"):
        P.population([(KRR(eps0=1.0, k=3), 5), (KRR(eps0=1.0, k=4), 5)])
    with pytest.raises(ParameterError, match="groups"):
        P.population([(MatrixMechanism(np.eye(2) * 0.5 + 0.25), 5),
                      (MatrixMechanism(np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])), 5)])
    with pytest.raises(ParameterError, match="groups"):      # no common blanket
        P.population([(MatrixMechanism(np.array([[0.6, 0.4, 0.0], [0.4, 0.6, 0.0]])), 5),
                      (MatrixMechanism(np.array([[0.5, 0.3, 0.2], [0.3, 0.5, 0.2]])), 5)])
    with pytest.raises(ParameterError, match="population"):
        P.delta("x", 0.1)


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(st.floats(0.2, 3.0), st.floats(0.2, 3.0), st.floats(0.05, 1.0), st.integers(200, 5000))
def test_raising_other_eps0_never_lowers_small_n(e_t, e_o, bump, n):
    base = P.population([(KRR(eps0=e_t, k=5), n), (KRR(eps0=e_o, k=5), n)])
    up = P.population([(KRR(eps0=e_t, k=5), n), (KRR(eps0=e_o + bump, k=5), n)])
    assert P.epsilon(up, 1e-6).groups[0].upper >= P.epsilon(base, 1e-6).groups[0].upper * (1 - 1e-6)


# ----------------------------------------------------------------------------- accountant
def test_accountant_profile_is_max_over_groups():
    from shuffleamp.accounting import privacy_profile
    pop = sa.population([(KRR(eps0=0.5, k=10), 600000), (KRR(eps0=2.0, k=10), 400000)])
    eps = np.array([0.0, 0.002, 0.005, 0.02])
    up, lo = privacy_profile(pop, None, eps)
    per = [P.delta(pop, float(e)) for e in eps]
    np.testing.assert_allclose(up, [max(g.upper for g in r.groups) for r in per], rtol=1e-12)
    assert np.all(lo <= up) and np.all(lo[:3] > 0)
    # negative ε: the identity D_{e^-e}(P||Q) = 1 - e^-e + e^-e D_{e^e}(Q||P) with a swap-closed family
    upn, lon = privacy_profile(pop, None, -eps)
    np.testing.assert_allclose(upn, np.minimum(-np.expm1(-eps) + np.exp(-eps) * up, 1.0), rtol=1e-9)
    assert np.all(lon <= upn)
    with pytest.raises(ParameterError, match="n"):
        privacy_profile(pop, 17, eps)


def test_accountant_population_brute_force_two_rounds():
    """Two rounds of a tiny population: the certified total δ >= the enumerated 2-fold divergence of
    the Theorem-14 datasets of every group, and the composed lower bound <= the upper bound."""
    from shuffleamp.accounting import compose_rounds
    k, eps0s, counts = 3, (0.5, 2.0), (2, 2)
    pop = sa.population([(KRR(eps0=e, k=k), c) for e, c in zip(eps0s, counts)])
    mats = [KRR(eps0=e, k=k).matrix() for e in eps0s]
    eps = 0.3
    r = compose_rounds([(pop, None, 2)], epsilon=eps, max_seconds=TOTAL_SECONDS)
    for g in range(2):
        others = []
        for i, (M, c) in enumerate(zip(mats, counts)):
            others += [M[2]] * (c - (1 if i == g else 0))
        a, b = _histogram_law([mats[g][0]] + others), _histogram_law([mats[g][1]] + others)
        e = math.exp(eps)
        two = sum(max(pa * pa2 - e * b.get(h, 0.0) * b.get(h2, 0.0), 0.0)
                  for h, pa in a.items() for h2, pa2 in a.items())
        assert two <= r.upper * (1 + 1e-9)
    assert 0.0 <= r.lower <= r.upper


def test_accountant_one_group_matches_mechanism():
    from shuffleamp.accounting import compose_rounds
    m = KRR(eps0=1.0, k=10)
    hom = compose_rounds([(m, 10**5, 5)], delta=1e-8, max_seconds=TOTAL_SECONDS)
    pop = compose_rounds([(sa.population([(m, 10**5)]), None, 5)], delta=1e-8, max_seconds=TOTAL_SECONDS)
    assert pop.lower <= hom.upper and hom.lower <= pop.upper
    assert pop.upper == pytest.approx(hom.upper, rel=0.01)


# ----------------------------------------------------------------------------- plans and group specs
_PLAN = """
[[collection]]
name = "mixed"
mechanism = "population"
n = 100_000
delta = 1e-8
groups = [{fraction = 0.6, mechanism = "krr", k = 10, eps0 = 0.5},
          {fraction = 0.4, mechanism = "krr", k = 10, eps0 = 2.0}]
"""


def test_plan_population_row_report():
    import tomllib
    from shuffleamp import config as C
    rows = C.parse_plan(tomllib.loads(_PLAN))
    assert rows[0].n == 100_000 and [g["count"] for g in rows[0].groups] == [60_000, 40_000]
    res = C.evaluate_plan(rows)
    direct = sa.epsilon(sa.population([(KRR(eps0=0.5, k=10), 60_000), (KRR(eps0=2.0, k=10), 40_000)]), delta=1e-8)
    assert res[0]["epsilon_upper"] == direct.upper and len(res[0]["groups"]) == 2
    table = C.format_table(rows, res, C.plan_total(rows))
    assert "group 1 (worst)" in table and "population (2 groups: krr)" in table


@pytest.mark.parametrize("groups,n,field", [
    ('[{fraction = 0.6, mechanism = "krr", k = 10, eps0 = 0.5}, {fraction = 0.3, mechanism = "krr", k = 10, eps0 = 2.0}]',
     "n = 1000", "groups"),                                           # fractions do not add up
    ('[{fraction = 0.6, mechanism = "krr", k = 10, eps0 = 0.5}, {count = 5, mechanism = "krr", k = 10, eps0 = 2.0}]',
     "n = 1000", "groups"),                                           # mixed count / fraction
    ('[{count = 0, mechanism = "krr", k = 10, eps0 = 0.5}]', "", "groups"),      # n_g < 1
    ('[]', "", "groups"),                                                          # empty
    ('[{count = 5, mechanism = "krr", k = 10, eps0 = 0.5}, {count = 5, mechanism = "krr", k = 4, eps0 = 0.5}]',
     "", "groups"),                                                   # no common output space
    ('[{count = 5, mechanism = "krr", k = 10, eps0 = 0.5}]', "n = 6", "n"),         # n inconsistent
    ('[{fraction = 0.5, mechanism = "krr", k = 10, eps0 = 0.5}, {fraction = 0.5, mechanism = "krr", k = 10, eps0 = 1}]',
     "", "n"),                                                        # fractions without n
])
def test_plan_population_bad_input(groups, n, field):
    import tomllib
    from shuffleamp import config as C
    from shuffleamp.errors import PlanError
    doc = tomllib.loads(f'[[collection]]\nname = "x"\nmechanism = "population"\ndelta = 1e-8\n{n}\ngroups = {groups}\n')
    with pytest.raises(PlanError) as e:
        C.parse_plan(doc)
    assert e.value.field == field


def test_population_from_specs():
    from shuffleamp.config import population_from_specs
    pop = population_from_specs(["60000000:krr:k=10:eps0=0.5", "40000000:krr:k=10:eps0=2"])
    assert pop.n == 10**8 and [g.n for g in pop.groups] == [60_000_000, 40_000_000]
    for bad in ([], ["x:krr:k=10:eps0=1"], ["10:krr:k=1:eps0=1"], ["10:krr:k=10:eps0=1", "5:krr:k=5:eps0=1"],
                ["0:krr:k=10:eps0=1"], ["10"]):
        with pytest.raises(ParameterError) as e:
            population_from_specs(bad)
        assert e.value.parameter == "--group"


def test_api_n_and_fractions():
    pop = sa.population([(KRR(eps0=0.5, k=10), 0.6), (KRR(eps0=2.0, k=10), 0.4)], n=1000)
    assert [g.n for g in pop.groups] == [600, 400]
    with pytest.raises(ParameterError, match="groups"):
        sa.population([(KRR(eps0=0.5, k=10), 0.6), (KRR(eps0=2.0, k=10), 0.3)], n=1000)
    with pytest.raises(ParameterError) as e:
        sa.epsilon(pop, 999, 1e-6)
    assert e.value.parameter == "n"
    with pytest.raises(ParameterError) as e:
        sa.epsilon(KRR(eps0=1.0, k=3), delta=1e-6)
    assert e.value.parameter == "n"
    with pytest.raises(ParameterError) as e:
        sa.epsilon(pop, delta=1e-6, method="clone")
    assert e.value.parameter == "method"
    r = sa.epsilon(pop, 1000, 1e-6)
    assert r.upper == sa.epsilon(pop, delta=1e-6).upper
    assert "PopulationResult" in repr(r) and len(repr(r).splitlines()) <= 10


# ----------------------------------------------------------------------------- command line
def test_cli_population_json(capsys):
    import json
    from shuffleamp.cli import main
    rc = main(["epsilon", "--mechanism", "population", "--group", "60000:krr:k=10:eps0=0.5",
               "--group", "40000:krr:k=10:eps0=2", "--delta", "1e-8", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)["result"]
    pop = sa.population([(KRR(eps0=0.5, k=10), 60000), (KRR(eps0=2.0, k=10), 40000)])
    r = sa.epsilon(pop, delta=1e-8)
    assert d["epsilon_upper"] == r.upper and d["epsilon_lower"] == r.lower and d["n"] == 100000
    assert [g["n"] for g in d["groups"]] == [60000, 40000] and [g["eps0"] for g in d["groups"]] == [0.5, 2.0]
    for g, gr in zip(d["groups"], r.groups):
        assert g["epsilon_upper"] == gr.upper and g["epsilon_lower"] == gr.lower
        assert g["mechanism"]["mechanism"] == "krr"


@pytest.mark.parametrize("argv", [
    ["--group", "0:krr:k=10:eps0=0.5"],                       # n_g < 1
    [],                                                       # no group
    ["--group", "10:krr:k=10:eps0=0.5", "--group", "10:krr:k=3:eps0=1"],   # no common output space
    ["--group", "10:krr:k=10:eps0=0.5", "--n", "11"],         # n inconsistent
])
def test_cli_population_bad_input(argv, capsys):
    from shuffleamp.cli import main
    rc = main(["epsilon", "--mechanism", "population", "--delta", "1e-8", *argv])
    assert rc != 0
    err = capsys.readouterr().err
    assert "--group" in err or "n:" in err


@settings(max_examples=examples(20), deadline=None)
@given(st.lists(st.floats(0.2, 4.0), min_size=2, max_size=3), st.integers(10**4, 10**6))
def test_ordering_lower_upper_everyone_at_max(eps0s, n):
    """lower <= certified upper <= everyone-at-max-ε0 for every group (hypothesis)."""
    pop = sa.population([(KRR(eps0=e, k=6), n) for e in eps0s])
    r = sa.epsilon(pop, delta=1e-8)
    mx = P.everyone_at_max(pop, 1e-8)
    assert mx.sound and mx.method == "everyone-at-max"
    for gr in r.groups:
        assert 0.0 < gr.lower <= gr.upper <= mx.upper * (1 + 1e-9)
    gdp = sa.epsilon(pop, delta=1e-8, method="gdp")
    assert gdp.sound is False and gdp.upper is None and "errata" in gdp.settings


def test_equal_matrix_groups_equal_single_group():
    """Two identical matrix groups give the one-group value (Theorem 13) to 1e-9."""
    A = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])
    one = P.delta(P.population([(MatrixMechanism(A), 20000)]), 0.05).groups[0].upper
    two = P.delta(P.population([(MatrixMechanism(A), 12000), (MatrixMechanism(A), 8000)]), 0.05)
    for gr in two.groups:
        assert gr.upper == pytest.approx(one, rel=1e-9)


@pytest.mark.parametrize("argv", [["compare", "--delta", "1e-6", "--n", "10"],
                                  ["eps0", "--target-epsilon", "0.1", "--delta", "1e-6", "--n", "10"]])
def test_cli_population_other_commands_refused(argv, capsys):
    from shuffleamp.cli import main
    rc = main([*argv, "--mechanism", "population", "--group", "6:krr:k=10:eps0=0.5", "--group", "4:krr:k=10:eps0=2"])
    err = capsys.readouterr().err
    assert rc == 2 and "population" in err and "invalid choice" in err   # only epsilon / delta take a population


def test_population_array_target_refused():
    pop = sa.population([(KRR(eps0=0.5, k=10), 600), (KRR(eps0=2.0, k=10), 400)])
    with pytest.raises(ParameterError) as e:
        sa.epsilon(pop, delta=[1e-6, 1e-7])
    assert e.value.parameter == "delta"
