"""Gaussian populations: the cross-blanket upper bound and the sub-population minimum.

Oracles (independent of the library): the stop-loss transform of the target's variable L w.r.t. a wider group's
blanket by numerical quadrature (scipy.integrate.quad over the output line), and the n = 2 shuffled divergence by
numerical integration over the output plane (tests/test_gaussian_population_oracle.py).
"""

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

import shuffleamp as sa
from shuffleamp.gaussian import population_cross_law

from test_gaussian_population_oracle import worst_case


def _stop_loss(st, sh, D, eps, k):
    """E[(L - k)_+] under Y ~ ω_h: ∫ (φ_t(y) − e^ε φ_t(y − Δ) − k ω_h(y))_+ dy by quadrature."""
    gh = 2 * norm.sf(D / (2 * sh))
    e = math.exp(eps)

    def f(y):
        om = min(norm.pdf(y, 0, sh), norm.pdf(y, D, sh)) / gh
        return max(norm.pdf(y, 0, st) - e * norm.pdf(y, D, st) - k * om, 0.0)
    lo, hi = -12 * sh, D + 12 * sh
    pts = list(np.linspace(lo, hi, 17))
    return sum(quad(f, a, b, limit=200)[0] for a, b in zip(pts[:-1], pts[1:]))


@pytest.mark.parametrize("st,sh,eps", [(0.5, 1.0, 0.3),
                                       pytest.param(0.5, 0.6, 1.0, marks=pytest.mark.slow),
                                       pytest.param(0.3, 2.0, 0.1, marks=pytest.mark.slow)])
def test_cross_law_dominates_in_convex_order(st, sh, eps):
    """Equal means and every stop-loss value at least the exact one (convex order), and not much above it."""
    vals, mass = population_cross_law(st, sh, 1.0, eps)
    assert abs(mass.sum() - 1.0) < 1e-9
    exact_mean = norm.cdf(0.0) * 0 + (1.0 - math.exp(eps))        # ∫ (R_0 − e^ε R_Δ) dy
    assert float(vals @ mass) >= exact_mean - 1e-9
    assert float(vals @ mass) <= exact_mean + 1e-6
    for k in (-1.0, 0.0, 1.0):
        spread = float(np.maximum(vals - k, 0.0) @ mass)
        truth = _stop_loss(st, sh, 1.0, eps, k)
        assert spread >= truth * (1 - 1e-7) - 1e-12, (k, spread, truth)
        assert spread <= truth * 1.05 + 1e-6, (k, spread, truth)


@pytest.mark.parametrize("st,sh,eps", [(0.5, 1.0, 1.0),
                                       pytest.param(0.5, 1.5, 1.0, marks=pytest.mark.slow),
                                       pytest.param(0.7, 1.0, 0.5, marks=pytest.mark.slow)])
def test_cross_upper_n2_above_integrated_truth(st, sh, eps):
    """n = 2 (a narrow target and one wider user): the upper stays above the integrated worst case (inputs on a
    grid of [0, Δ]) and, with the cross blanket, within 15 % of it in δ (the target's own blanket: 30-50 % above)."""
    pop = sa.population([(sa.Gaussian(sigma=st, sensitivity=1.0), 1), (sa.Gaussian(sigma=sh, sensitivity=1.0), 1)])
    r = sa.delta(pop, epsilon=eps).groups[0]
    truth = worst_case(eps, st, [sh], 1.0, 0.01, 9.0, 5)
    assert truth * (1 - 1e-3) <= r.upper <= truth * 1.15, (r.upper, truth)
    assert "cross blanket" in r.settings.get("how", "")


def test_two_sigma_population_regression():
    """5000 users at σ = 0.5 and 5000 at σ = 1 (Δ = 1, δ = 1e-6): the σ = 0.5 target's upper ε was 2.096 with its
    own blanket; the σ = 1 blanket gives 0.102 (lower 0.0632)."""
    G = sa.Gaussian
    r = sa.epsilon(sa.population([(G(sigma=0.5, sensitivity=1.0), 5000), (G(sigma=1.0, sensitivity=1.0), 5000)]),
                   delta=1e-6)
    g0 = r.groups[0]
    assert g0.lower <= g0.upper <= 0.11
    assert g0.lower >= 0.06
    assert r.upper <= 0.11


def test_shared_mechanism_population_is_the_mechanism():
    """A population whose groups all run one mechanism answers exactly as that mechanism at n."""
    G = sa.Gaussian(sigma=1.0, sensitivity=1.0)
    ref = sa.epsilon(G, n=4000, delta=1e-6)
    for groups in ([(G, 1000), (G, 3000)],):
        r = sa.epsilon(sa.population(groups), delta=1e-6)
        for gr in r.groups:
            assert gr.upper <= ref.upper * (1 + 1e-12)
            assert gr.lower >= ref.lower * (1 - 1e-12)


def test_group_alone_bound_enters_the_minimum():
    """The target's own group alone is a certified sub-population: no group's upper exceeds it."""
    G = sa.Gaussian
    pop = sa.population([(G(sigma=0.5, sensitivity=1.0), 100), (G(sigma=1.0, sensitivity=1.0), 100)])
    r = sa.epsilon(pop, delta=1e-5)
    for gr, s in zip(r.groups, (0.5, 1.0)):
        alone = sa.epsilon(G(sigma=s, sensitivity=1.0), n=100, delta=1e-5)
        assert gr.upper <= alone.upper * (1 + 1e-12)
        assert gr.lower <= gr.upper


def test_krr_of_different_k_refused_with_advice():
    """k-RR groups of different k (a symbol of one alphabet may be one of the other): a typed error naming
    ``groups`` that says why and what to do."""
    from shuffleamp.errors import ParameterError
    from shuffleamp.mechanisms import KRR
    with pytest.raises(ParameterError) as e:
        sa.population([(KRR(eps0=1.0, k=4), 100), (KRR(eps0=1.0, k=8), 100)])
    assert e.value.parameter == "groups"
    assert "one population per k" in str(e.value)


def test_mixed_output_spaces_answer_as_their_own_populations():
    """Gaussian groups next to k-RR groups: every group's bracket is its own output space's population's (module
    docstring, "Mixed output spaces"), single round and totals."""
    from shuffleamp.mechanisms import KRR
    gs = [(sa.Gaussian(sigma=0.5, sensitivity=1.0), 2000), (sa.Gaussian(sigma=1.0, sensitivity=1.0), 2000)]
    ks = [(KRR(eps0=1.0, k=4), 1000), (KRR(eps0=2.0, k=4), 1000)]
    mixed = sa.population([gs[0], ks[0], gs[1], ks[1]])
    assert mixed.kind == "mixed" and mixed.n == 6000
    r = sa.epsilon(mixed, delta=1e-6)
    rg, rk = sa.epsilon(sa.population(gs), delta=1e-6), sa.epsilon(sa.population(ks), delta=1e-6)
    for i, ref in ((0, rg.groups[0]), (1, rk.groups[0]), (2, rg.groups[1]), (3, rk.groups[1])):
        assert r.groups[i].index == i
        assert r.groups[i].upper == ref.upper and r.groups[i].lower == ref.lower


@pytest.mark.slow
def test_mixed_output_spaces_total():
    """The accountant on a mixed population: one round's total is the single round's bracket (slow: the k-RR
    population's own accounting takes about 17 s here)."""
    from shuffleamp.mechanisms import KRR
    mixed = sa.population([(sa.Gaussian(sigma=0.5, sensitivity=1.0), 2000), (KRR(eps0=1.0, k=4), 1000),
                           (sa.Gaussian(sigma=1.0, sensitivity=1.0), 2000), (KRR(eps0=2.0, k=4), 1000)])
    r = sa.epsilon(mixed, delta=1e-6)
    tot = sa.compose_rounds([(mixed, None, 1)], delta=1e-6, max_seconds=100)
    assert tot.lower <= tot.upper == pytest.approx(r.upper, rel=1e-9)


def test_cross_bound_monotone_fixed_case():
    """Fast subset of the hypothesis test below: σ = 0.5 under the σ = 1 blanket, 300 wider users."""
    from shuffleamp import personalized as P
    gh = np.array([2 * norm.sf(0.5)])
    vals = [population_cross_law(0.5, 1.0, 1.0, e, 0.25, 7.0) for e in (0.1, 0.3)]
    d = [P._delta_law(v, m, gh, np.array([n]), 1e-8)[0] for v, m in vals for n in (300.0, 600.0)]
    assert d[1] <= d[0] and d[2] <= d[0] and d[3] <= d[2] and d[3] <= d[1]


@pytest.mark.slow
def test_cross_bound_monotone():
    """Hypothesis: the cross-blanket δ is non-increasing in ε and in the number of wider users (more blanket draws:
    a post-processing)."""
    from hypothesis import given, settings, strategies as st_
    from shuffleamp import personalized as P

    @settings(max_examples=5, deadline=None)
    @given(st_.floats(0.3, 0.8), st_.floats(1.1, 2.5), st_.integers(100, 2000), st_.floats(0.0, 1.5))
    def check(st, ratio, n, eps):
        sh = st * ratio
        gh = np.array([2 * norm.sf(0.5 / sh)])
        v0, m0 = population_cross_law(st, sh, 1.0, eps, 0.25, 7.0)        # the small-n cells of the population
        v1, m1 = population_cross_law(st, sh, 1.0, eps + 0.2, 0.25, 7.0)
        d0 = P._delta_law(v0, m0, gh, np.array([float(n)]), 1e-8)[0]
        d1 = P._delta_law(v1, m1, gh, np.array([float(n)]), 1e-8)[0]
        d2 = P._delta_law(v0, m0, gh, np.array([float(2 * n)]), 1e-8)[0]
        assert d1 <= d0 * (1 + 1e-9) + 1e-15
        assert d2 <= d0 * (1 + 1e-9) + 1e-15
    check()


@pytest.mark.parametrize("groups,up0,lo0,worst", [(((0.5, 9000), (1.0, 1000)), 0.25, 0.10, 0.25),
                                                 (((0.5, 5000), (0.6, 5000)), 0.22, 0.11, 0.89)])
def test_other_two_sigma_regressions(groups, up0, lo0, worst):
    """δ = 1e-6: the σ = 0.5 target's upper was 1.99 (next to 1000 users of σ = 1) and 1.98 (next to 5000 of σ = 0.6)
    with its own blanket; the cross blankets give 0.243 and 0.215 (lowers 0.110 and 0.119)."""
    r = sa.epsilon(sa.population([(sa.Gaussian(sigma=s, sensitivity=1.0), c) for s, c in groups]), delta=1e-6)
    g0 = r.groups[0]
    assert lo0 <= g0.lower <= g0.upper <= up0
    assert r.upper <= worst
