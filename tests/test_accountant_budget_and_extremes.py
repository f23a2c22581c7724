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
