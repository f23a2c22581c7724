"""Calls that ran out of memory, overflowed or ran for minutes: each is now refused up front with a
ResourceLimitError naming the user parameter to change, or answers."""
import numpy as np
import pytest

import shuffleamp as sa
from shuffleamp import _numerics
from shuffleamp import accounting
from shuffleamp.errors import ResourceLimitError
from shuffleamp.gradual import GradualRelease
from shuffleamp.mechanisms import KRR


def test_compose_a_billion_rounds_refused():
    """Was an untyped numpy memory error (82 GiB).  At the default tail_delta the grid's tail mass (1e9 x 1e-15)
    exceeds delta, so the composition theorems answer without a PLD; with a finer tail the composition is refused."""
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds([(KRR(1.0, 10), 10**6, 10**9)], delta=1e-8, tail_delta=1e-20)
    assert e.value.parameter == "rounds" and e.value.resource == "memory"
    r = sa.compose_rounds([(KRR(1.0, 10), 10**6, 10**9)], delta=1e-8)
    assert 0.0 < r.lower <= r.upper < 10**9 and "composition theorems" in r.limited_by


def test_population_of_huge_groups_refused():
    """Was an untyped OverflowError."""
    pop = sa.population([(KRR(0.5, 10), 10**18), (KRR(2.0, 10), 10**18)])
    for call in (lambda: sa.epsilon(pop, delta=1e-8), lambda: sa.delta(pop, epsilon=0.1)):
        with pytest.raises(ResourceLimitError) as e:
            call()
        assert e.value.parameter == "groups"


def test_max_rounds_huge_epsilon_by_basic_composition():
    """Was 23.5 s / 1.3 GB: every R <= epsilon / eps0 fits by basic composition, so none is composed."""
    assert sa.max_rounds(KRR(1.0, 10), 10**6, epsilon=1e6, delta=1e-8) == 10**6
    assert sa.max_rounds(KRR(1.0, 10), 10**6, epsilon=5.0, delta=1e-8, limit=5) == 5


def test_max_rounds_basic_start_agrees_with_search():
    """The basic-composition start changes no answer: the largest R is the same as a search from R = 1."""
    m, n, eps, d = KRR(2.0, 4), 2000, 2.5, 1e-6
    R = sa.max_rounds(m, n, epsilon=eps, delta=d, limit=64)
    assert R >= 1                                             # eps / eps0 = 1.25: one round fits by itself
    assert sa.compose_rounds([(m, n, R)], delta=d, lower=False).upper <= eps
    if R < 64:
        assert sa.compose_rounds([(m, n, R + 1)], delta=d, lower=False).upper > eps


def test_population_of_many_groups_refused():
    """1000 groups: was over 30 s without a ResourceLimitError; refused up front."""
    pop = sa.population([(KRR(float(e), 10), 10**4) for e in np.linspace(0.1, 2.0, 1000)])
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(pop, delta=1e-8)
    assert e.value.parameter == "groups" and "fewer groups" in str(e.value)


def test_population_deadline_between_groups(monkeypatch):
    """Where the up-front model admits a population (here: set to cost nothing) but the machine is slower,
    the evaluation stops between groups with a typed error naming ``groups``."""
    from shuffleamp import personalized
    monkeypatch.setattr(personalized, "POP_TARGET_SECONDS", 0.0)
    monkeypatch.setattr(personalized, "POP_GROUP_SECONDS", 0.0)
    pop = sa.population([(KRR(float(e), 10), 10**4) for e in np.linspace(0.1, 2.0, 100)])
    with _numerics.budget(max_seconds=0.3):
        with pytest.raises(ResourceLimitError) as e:
            sa.epsilon(pop, delta=1e-8)
    assert e.value.parameter == "groups"


def test_many_round_types_refused():
    rounds = [(KRR(float(e), 10), 10**5, 10) for e in np.linspace(0.5, 2.0, 50)]
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds(rounds, delta=1e-8)
    assert e.value.parameter == "rounds"


def test_fine_discretization_refused():
    """Was 705 MB and over 30 s."""
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds([(KRR(1.0, 10), 10**5, 10)], delta=1e-8, value_discretization_interval=1e-9)
    assert e.value.parameter == "value_discretization_interval" and "raise" in str(e.value)


def test_gradual_fresh_rounds_long_schedule():
    """1e5 distinct values: refused (was over 30 s); 1e5 values with 2 distinct: answered, each once."""
    with pytest.raises(ResourceLimitError) as e:
        GradualRelease(k=4, schedule=np.linspace(0.1, 2.0, 10**5)).fresh_rounds_epsilon(10**5, 1e-8)
    assert e.value.parameter == "schedule"
    g = GradualRelease(k=4, schedule=np.repeat([0.5, 1.0], 50_000))
    one = [sa.epsilon(KRR(e, 4), 10**5, 1e-8 / 10**5).upper for e in (0.5, 1.0)]
    assert g.fresh_rounds_epsilon(10**5, 1e-8) == pytest.approx(50_000 * sum(one), rel=1e-12)


def test_binary_rr_many_rounds_refused():
    with pytest.raises(ResourceLimitError) as e:
        accounting.binary_rr_rounds(1.0, 10**4, 10**6, delta=1e-6)
    assert e.value.parameter == "rounds"


def test_refusal_respects_installed_budget():
    """The cost model uses the enclosing budget: a larger max_memory_gb admits what the default refuses."""
    with pytest.raises(ResourceLimitError):
        _numerics.check_pld_points(3e7, "x", "rounds")
    with _numerics.budget(max_seconds=1e3, max_memory_gb=64):
        _numerics.check_pld_points(3e7, "x", "rounds")


def test_population_totals_refused_up_front():
    """A 20-group population composed over rounds: was over 2 minutes; refused naming ``rounds``."""
    pop = sa.population([(KRR(float(e), 2), 5000) for e in np.linspace(0.1, 1.0, 20)])
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds([(pop, None, 10)], delta=1e-5)
    assert e.value.parameter == "rounds" and "fewer groups" in str(e.value)


def test_fine_discretization_refused_before_any_pld(monkeypatch):
    """A grid step of 1e-9 at n = 1e6 (about 1e7 points per distribution) was refused only after building the
    upper PLD and bounding its composition (about 5 s of CPU), naming ``rounds``; the estimate refuses it before
    any PLD is built, naming ``value_discretization_interval``."""
    from shuffleamp import accounting

    def boom(*a, **k):
        raise AssertionError("a PLD was built before the refusal")
    monkeypatch.setattr(accounting, "_upper_pld", boom)
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds([(KRR(1.0, 10), 10**6, 10)], delta=1e-8, value_discretization_interval=1e-9)
    assert e.value.parameter == "value_discretization_interval" and "raise" in str(e.value)
