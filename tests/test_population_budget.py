"""Populations answer within the call's budget or are refused with a typed error naming what to change.

``max_seconds`` / ``max_memory_gb`` of ``shuffleamp.epsilon`` / ``delta`` apply to populations too (the budget of
the whole call, up-front cost model and the check between groups); populations of many groups are refused up
front when the cost model exceeds it, naming ``groups``.
"""

from __future__ import annotations

import time

import pytest

import shuffleamp as sa
from shuffleamp.errors import ParameterError, ResourceLimitError
from shuffleamp import personalized as P
from shuffleamp.mechanisms import KRR


def _pop(groups, k=10, n_g=5000):
    return sa.population([(KRR(float(0.05 + (i + 0.5) * 0.95 / groups), k), n_g) for i in range(groups)])


def test_thousand_groups_refused_up_front():
    pop = _pop(1000)
    t = time.monotonic()
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(pop, delta=1e-5)
    assert e.value.parameter == "groups"
    assert time.monotonic() - t < 5.0               # up front: no group is evaluated


def test_max_seconds_applies_to_populations():
    """A budget below the cost model's estimate of 100 groups refuses up front; the message names groups."""
    pop = _pop(100)
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(pop, delta=1e-5, max_seconds=0.2)
    assert e.value.parameter == "groups" and "max_seconds=0.2" in str(e.value)
    with pytest.raises(ResourceLimitError) as e:
        sa.delta(pop, epsilon=0.01, max_seconds=0.05)
    assert e.value.parameter == "groups"


@pytest.mark.parametrize("kw", [{"max_seconds": -1.0}, {"max_seconds": float("nan")}, {"max_memory_gb": 0.0}])
def test_population_budget_parameters_validated(kw):
    with pytest.raises(ParameterError) as e:
        sa.epsilon(_pop(2, n_g=100), delta=1e-5, **kw)
    assert e.value.parameter == next(iter(kw))


def test_huge_groups_typed_refusal():
    """Groups of 1e18 users: a typed refusal naming what to change, not an OverflowError."""
    pop = sa.population([(KRR(0.5, 10), 10**18), (KRR(2.0, 10), 10**18)])
    with pytest.raises(ResourceLimitError):
        sa.epsilon(pop, delta=1e-8)


def _no_group_evaluated(monkeypatch):
    """Make any group's evaluation fail the test: a refusal must come before it (up front, by the estimate)."""
    def boom(*a, **k):
        raise AssertionError("a group was evaluated before the refusal")
    monkeypatch.setattr(P, "_delta_target", boom)
    monkeypatch.setattr(P, "_delta_lower", boom)


def test_population_estimate_does_not_depend_on_machine_load(monkeypatch):
    """The up-front estimate is CPU work, the same on an idle and on a loaded machine (a refusal is reproducible);
    100 binary-RR groups (about 4 s of CPU) fit the default budget either way, and the wall-clock deadline between
    groups is what stops a call on a loaded machine."""
    import os
    pop = _pop(100, k=2)
    for load in (0.1, 8.0, 64.0):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        P._check_cost(pop, "epsilon")               # no refusal from the model, whatever the load


def test_population_tiny_budget_refused_before_any_group(monkeypatch):
    """A budget below the CPU estimate refuses up front, before any group is evaluated, naming ``groups`` and the
    budget in the message."""
    pop = _pop(100, k=2)
    _no_group_evaluated(monkeypatch)
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(pop, delta=1e-5, max_seconds=0.5)
    assert e.value.parameter == "groups" and e.value.resource == "time" and "max_seconds=0.5" in str(e.value)


def test_population_deadline_stops_between_groups(monkeypatch):
    """On a (simulated) loaded machine the estimate fits but the wall clock runs out: the deadline between groups
    stops the call with a typed error naming ``groups``."""
    import itertools
    clock = itertools.count(0.0, 1.0)                # every reading of the clock is one second later
    monkeypatch.setattr(P.time, "monotonic", lambda: float(next(clock)))
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(_pop(5, n_g=200), delta=1e-5, max_seconds=3.0)
    assert e.value.parameter == "groups" and e.value.resource == "time"


def test_gaussian_groups_refused_up_front(monkeypatch):
    """Gaussian groups at large Δ/σ (their rungs' integrals grow with it): three groups at Δ/σ = 5 .. 8 of 1e4 users
    took 16 s of CPU; refused before any group, naming ``groups``."""
    pop = sa.population([(sa.Gaussian(sigma=s), 10 ** 4) for s in (0.125, 0.16, 0.2)])
    _no_group_evaluated(monkeypatch)
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(pop, delta=1e-9)
    assert e.value.parameter == "groups" and "sigma" in str(e.value)
