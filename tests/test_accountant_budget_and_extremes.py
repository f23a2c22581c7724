"""The accountant's configurable budget (``max_seconds`` / ``max_memory_gb``) and δ at ε far above every
local mechanism's range: a certified answer (0 or the smallest positive float), never an untyped error.

No timed assertions: a refusal is asserted through its type and the parameter it names, an answer through its
value (upper >= lower >= 0, finite; 0 exactly where the local randomizer is pure ε0-LDP with ε0 < ε).
"""

import math
import warnings

import numpy as np
import pytest

import shuffleamp as sa
from shuffleamp.errors import ParameterError, ResourceLimitError
from shuffleamp.mechanisms import KRR, Laplace

TINY = float(np.nextafter(0.0, 1.0))
HUGE_EPS = (600.0, 710.0, 1e4, 1e300)


# ---------------------------------------------------------------------------- the budget keywords
REFUSED = {
    "compose_rounds": lambda **b: sa.compose_rounds([(KRR(1.0, 10), 1000, 10)], delta=1e-6, **b),
    "compose_rounds_gaussian": lambda **b: sa.compose_rounds([(sa.Gaussian(sigma=1), 1000, 3)], delta=1e-6, **b),
    "max_rounds": lambda **b: sa.max_rounds(KRR(1.0, 10), 1000, epsilon=20.0, delta=1e-6, limit=30, **b),
    "to_pld": lambda **b: sa.to_pld(KRR(1.0, 10), 1000, **b),
    "binary_rr_rounds": lambda **b: sa.accounting.binary_rr_rounds(1.0, 1000, 10, delta=1e-6, **b),
    "max_eps0": lambda **b: sa.accounting.max_eps0(KRR(1.0, 10), 1000, 3, epsilon=1.0, delta=1e-6, **b),
    "privacy_profile_gaussian": lambda **b: sa.privacy_profile(sa.Gaussian(sigma=1), 1000, np.linspace(0, 2, 200),
                                                               **b),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_tiny_max_seconds_is_refused_naming_it(name):
    with pytest.raises(ResourceLimitError) as e:
        REFUSED[name](max_seconds=1e-3)
    assert "max_seconds" in str(e.value)


def test_the_same_call_answers_with_the_default_budget():
    r = REFUSED["compose_rounds"]()
    assert 0.0 < r.lower <= r.upper < math.inf
    assert 20 <= REFUSED["max_rounds"]() <= 30      # basic composition alone fits 20 rounds of eps0 = 1


def test_a_generous_budget_is_passed_through():
    r = sa.compose_rounds([(KRR(1.0, 10), 1000, 10)], delta=1e-6, max_seconds=600.0, max_memory_gb=8.0)
    assert 0.0 < r.lower <= r.upper < math.inf


def test_a_tiny_max_memory_gb_is_refused_naming_it():
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds([(KRR(1.0, 10), 1000, 10)], delta=1e-6, max_memory_gb=1e-9)
    assert "max_memory_gb" in str(e.value)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), "10", None, [1.0, 2.0]])
@pytest.mark.parametrize("key", ["max_seconds", "max_memory_gb"])
def test_bad_budget_values_name_the_parameter(key, bad):
    with pytest.raises(ParameterError) as e:
        sa.compose_rounds([(KRR(1.0, 10), 1000, 2)], delta=1e-6, **{key: bad})
    assert e.value.parameter == key


# ---------------------------------------------------------------------------- δ at ε above the local range
@pytest.mark.parametrize("eps", HUGE_EPS)
@pytest.mark.parametrize("sigma, n", [(1.0, 100), (0.5, 2), (0.13, 10**6), (3.0, 10**4)])
def test_gaussian_delta_at_huge_epsilon_is_certified_not_an_error(sigma, n, eps):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = sa.delta(sa.Gaussian(sigma=sigma), n=n, epsilon=eps)
    # the local Gaussian mechanism's δ at these ε is far below the smallest float: the certified upper is it
    assert r.lower == 0.0
    assert 0.0 < r.upper <= TINY


@pytest.mark.parametrize("eps", HUGE_EPS)
@pytest.mark.parametrize("mech", [KRR(1.0, 10), KRR(2.0, 2), Laplace(1.0)], ids=repr)
def test_pure_ldp_delta_at_huge_epsilon_is_zero(mech, eps):
    r = sa.delta(mech, n=100, epsilon=eps)
    assert r.upper == 0.0 and r.lower == 0.0


@pytest.mark.parametrize("eps", HUGE_EPS)
@pytest.mark.parametrize("groups", [[(KRR(0.5, 10), 50), (KRR(2.0, 10), 50)], [(KRR(0.5, 2), 50), (KRR(2.0, 2), 50)]],
                         ids=["krr10", "binary"])
def test_pure_ldp_population_delta_at_huge_epsilon_is_zero(groups, eps):
    r = sa.delta(sa.population(groups), epsilon=eps)
    assert r.upper == 0.0 and r.lower == 0.0


@pytest.mark.parametrize("eps", HUGE_EPS)
def test_gaussian_population_delta_at_huge_epsilon_is_certified(eps):
    r = sa.delta(sa.population([(sa.Gaussian(sigma=1), 50), (sa.Gaussian(sigma=2), 50)]), epsilon=eps)
    assert r.lower == 0.0
    assert 0.0 < r.upper <= TINY


def test_critical_cut_is_the_closed_form_and_finite_at_every_epsilon():
    from shuffleamp.gaussian import critical_cut
    for n in (1, 2, 100, 10**8):
        for e in (0.0, 1e-9, 0.5, 1.0, 1.5, 3.0, 50.0, 700.0):
            with np.errstate(over="ignore"):
                naive = -math.log1p(n * math.expm1(e)) / 0.7 if e < 700 else -(e + math.log(n)) / 0.7
            assert critical_cut(0.7, n, e) == pytest.approx(naive, rel=1e-12, abs=1e-12)
    for e in (710.0, 1e4, 1e300):
        assert math.isfinite(critical_cut(1e-9, 100, e)) and critical_cut(1e-9, 100, e) < 0


def test_local_gaussian_delta_underflows_to_zero_not_nan():
    from shuffleamp.gaussian import gaussian_delta
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        v = gaussian_delta(1.0, np.array([0.0, 1.0, 600.0, 1e300]))
    assert np.all(np.isfinite(v)) and v[2] == 0.0 and v[3] == 0.0 and not np.signbit(v[3])
    assert v[0] == pytest.approx(2 * 0.19146246127401312, rel=1e-12)      # 2 Φ(1/2) - 1 at ε = 0


# ---------------------------------------------------------------------------- the CLI's budget flags
@pytest.mark.parametrize("argv", [
    ["epsilon", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--rounds", "10"],
    ["rounds", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--n", "1000", "--target-epsilon", "20",
     "--delta", "1e-6", "--max-rounds", "30"],
    ["epsilon", "--mechanism", "population", "--group", "50:krr:k=10:eps0=0.5", "--group", "50:krr:k=10:eps0=2",
     "--delta", "1e-6", "--rounds", "2"],
], ids=["epsilon-rounds", "rounds", "population-rounds"])
def test_cli_max_seconds_reaches_the_accountant(capsys, argv):
    import json

    from shuffleamp.cli import main
    assert main([*argv, "--json"]) == 0
    capsys.readouterr()
    assert main([*argv, "--max-seconds", "1e-3", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"]["type"] == "ResourceLimitError" and "max_seconds" in doc["error"]["message"]


# ---------------------------------------------------------------------------- no silent inf from compose_rounds
def _no_pld(monkeypatch):
    """Make any privacy-loss-distribution evaluation of compose_rounds fail the test."""
    from shuffleamp import accounting

    def boom(*args, **kwargs):
        raise AssertionError("a round type was evaluated")
    monkeypatch.setattr(accounting._Round, "make", classmethod(boom))


def test_a_million_rounds_of_a_million_users_is_refused_before_composing(monkeypatch):
    """The composition's cost is estimated from the round's PLD (built in well under a second) and refused before
    ``dp_accounting`` composes it."""
    from shuffleamp import accounting

    def boom(*args, **kwargs):
        raise AssertionError("the rounds were composed")
    monkeypatch.setattr(accounting, "_compose_all", boom)
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds([(KRR(1.0, 10), 10**6, 10**6)], delta=1e-8)
    assert e.value.parameter == "rounds" and "max_seconds" in str(e.value)


def _local_gaussian_epsilon(mu, delta):
    """The Gaussian mechanism's exact ε(δ) (Balle–Wang), by scipy's root finder on the closed form."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def f(e):
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta
    return brentq(f, 0.0, 100.0, xtol=1e-12)


def test_delta_below_the_tail_mass_answers_by_composition_theorems_without_a_pld(monkeypatch):
    """δ = 1e-25 with 2 Gaussian rounds (their grid's tail mass is 2e-15): no PLD can answer (its infinity mass
    exceeds δ); the composed local Gaussian mechanisms (μ √2) do, up front, finite and certified."""
    _no_pld(monkeypatch)
    r = sa.compose_rounds([(sa.Gaussian(sigma=1), 100, 2)], delta=1e-25)
    exact = _local_gaussian_epsilon(math.sqrt(2.0), 1e-25)
    assert exact <= r.upper <= exact * (1 + 1e-9)
    assert 0.0 < r.lower <= r.upper          # the single round's certified lower ε at δ
    assert "composition theorems" in r.limited_by


@pytest.mark.parametrize("rounds, eps0", [([(KRR(1.0, 10), 1000, 3)], 1.0),
                                          ([(sa.population([(KRR(0.5, 10), 50), (KRR(2.0, 10), 50)]), None, 3)], 2.0)],
                         ids=["krr", "population"])
def test_pure_rounds_below_the_tail_mass_answer_by_basic_composition(monkeypatch, rounds, eps0):
    _no_pld(monkeypatch)
    r = sa.compose_rounds(rounds, delta=1e-20)
    assert r.upper <= 3 * eps0          # 3 rounds, each (eps0, 0)-DP (the largest eps0 of a population)
    assert 0.0 < r.lower <= r.upper


def test_an_infinite_composed_epsilon_falls_back_to_the_theorems(monkeypatch):
    """Where the composed PLD gives no finite ε (its infinity mass and round-off above δ), the composition
    theorems answer instead of a silent inf: advanced composition of the shuffled rounds' certified ε."""
    from shuffleamp import accounting
    monkeypatch.setattr(accounting, "_certified_epsilon", lambda *args, **kwargs: math.inf)
    R, delta = 50, 1e-6
    r = sa.compose_rounds([(KRR(1.0, 10), 10**4, R)], delta=delta)
    assert math.isfinite(r.upper) and "composition theorems" in r.limited_by
    # an independent check of the advanced-composition arithmetic at the single round's certified ε
    e1 = sa.epsilon(KRR(1.0, 10), 10**4, 0.5 * delta / R).upper
    adv = math.sqrt(2 * math.log(2 / delta) * R * e1 ** 2) + R * e1 * math.expm1(e1)
    assert r.upper == pytest.approx(min(adv, R * 1.0), rel=1e-9)
    assert r.lower <= r.upper


def test_an_infinite_composed_epsilon_without_a_theorem_is_a_typed_refusal(monkeypatch):
    from shuffleamp import accounting
    monkeypatch.setattr(accounting, "_certified_epsilon", lambda *args, **kwargs: math.inf)
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds([(sa.ApproximateLDP(1.0, 1e-9), 1000, 2)], delta=1e-6, lower=False)
    assert e.value.parameter == "tail_delta"


def test_max_rounds_of_the_gaussian_randomizer_answers_within_a_given_budget():
    """max_rounds takes the budget too (a generous one here: the answer, not the budget, is tested).  The returned R
    fits: the PLD of one round composed R times by dp_accounting directly has ε(δ) at most the target."""
    g = sa.Gaussian(sigma=1.0)
    R = sa.max_rounds(g, 10**4, epsilon=1.0, delta=1e-6, max_seconds=300.0)
    assert R >= 1
    assert sa.to_pld(g, 10**4, max_seconds=300.0).self_compose(R).get_epsilon_for_delta(1e-6) <= 1.0
