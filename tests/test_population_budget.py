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
