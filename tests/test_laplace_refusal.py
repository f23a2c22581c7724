"""The up-front refusal of Laplace ε(δ) queries in the band where the exact evaluator's search takes seconds
(``mechanisms.LAPLACE_SLOW_BAND``): a typed error naming ``eps0``, raised before any evaluation; outside the
band the query is answered, and δ(ε) queries inside it stay answered and certified.

Oracle for the answered δ queries: the local Laplace mechanism's hockey-stick divergence
:math:`1 - e^{(\\varepsilon - \\varepsilon_0)/2}` of the pair (0, 1) (the shuffled output is a post-processing of the
differing user's report, so the true δ is at most this; the certified lower bound must not exceed it).
"""

from __future__ import annotations

import math

import pytest

import shuffleamp as sa
from shuffleamp import exact as X
from shuffleamp import mechanisms as M
from shuffleamp.errors import ResourceLimitError
from shuffleamp.mechanisms import Laplace


@pytest.mark.parametrize("eps0,n", [(20.0, 10 ** 5), (22.5, 10 ** 6), (25.0, 10 ** 8), (30.0, 10 ** 4),
                                    (50.0, 10 ** 3), (17.5, 10 ** 5)])
def test_refused_up_front_naming_eps0(eps0, n, monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("an evaluation ran before the refusal")
    monkeypatch.setattr(X, "_profile_kernel", no_work)
    monkeypatch.setattr(M, "_laplace_families", no_work)
    with pytest.raises(ResourceLimitError) as info:
        sa.epsilon(Laplace(eps0), n, 1e-6)
    assert info.value.parameter == "eps0"
    assert info.value.resource == "time"
    assert "eps0" in str(info.value)


@pytest.mark.parametrize("eps0,n", [(20.0, 10 ** 4), (20.0, 10 ** 6), (17.5, 3 * 10 ** 5), (25.0, 10 ** 9),
                                    (15.0, 10 ** 5)])
def test_outside_the_band_answered(eps0, n):
    r = sa.epsilon(Laplace(eps0), n, 1e-6)
    assert 0 < r.lower <= r.upper <= eps0


@pytest.mark.parametrize("eps0,n,eps", [(22.5, 10 ** 6, 20.0), (25.0, 10 ** 7, 21.0)])
def test_delta_queries_in_the_band_answered(eps0, n, eps):
    r = sa.delta(Laplace(eps0), n, eps)
    local = -math.expm1((eps - eps0) / 2)
    assert 0 <= r.lower <= r.upper <= 1
    assert r.lower <= local * (1 + 1e-9)


def test_refusal_of_the_cli_is_json(capsys):
    from shuffleamp import cli
    code = cli.main(["epsilon", "--mechanism", "laplace", "--eps0", "22.5", "--n", "1000000", "--delta", "1e-6",
                     "--json"])
    out = capsys.readouterr().out
    assert code != 0
    assert '"eps0"' in out
