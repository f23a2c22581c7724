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


def test_binary_rr_groups_refused_up_front_under_load(monkeypatch):
    """100 binary-RR groups take about 4 s of CPU; on a machine loaded 4x (1-minute load 8 on 2 cores) that is
    more than the default 10 s of wall clock: refused by the estimate, before any group, naming ``groups``."""
    import os
    pop = _pop(100, k=2)
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    _no_group_evaluated(monkeypatch)
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(pop, delta=1e-5)
    assert e.value.parameter == "groups" and e.value.resource == "time"


def test_binary_rr_groups_estimate_fits_an_idle_machine(monkeypatch):
    """The same population's estimate fits the default budget on an idle machine (no refusal from the model)."""
    import os
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.1, 0.1))
    P._check_cost(_pop(100, k=2), "epsilon")


def test_gaussian_groups_refused_up_front(monkeypatch):
    """Gaussian groups at large Δ/σ (their rungs' integrals grow with it): three groups at Δ/σ = 5 .. 8 of 1e4 users
    took 16 s of CPU; refused before any group, naming ``groups``, even on an idle machine."""
    import os
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.1, 0.1))
    pop = sa.population([(sa.Gaussian(sigma=s), 10 ** 4) for s in (0.125, 0.16, 0.2)])
    _no_group_evaluated(monkeypatch)
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(pop, delta=1e-9)
    assert e.value.parameter == "groups" and "sigma" in str(e.value)
