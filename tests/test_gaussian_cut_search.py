"""The ε search of the Gaussian randomizer's truncation cuts: compiled within the call's budget, sound against
independent oracles, and no up-front refusal of cuts the exact evaluator enumerates (n = 2, 3).

Oracles (independent of the library's evaluators):

* the divergence of the shuffled Gaussian pair at n = 2 by numerical integration over the output space
  (``test_gaussian.shuffled_divergence``, two grid steps for its error): at the certified upper ε it is at most
  δ, at the certified lower ε at least δ;
* the local Gaussian mechanism's ε (Balle-Wang, ``test_gaussian.analytic_gaussian_epsilon``): never below the
  central upper bound.
"""

from __future__ import annotations

import pytest

import shuffleamp as sa
from shuffleamp import gaussian as G
from shuffleamp import search as S
from test_gaussian import analytic_gaussian_epsilon, shuffled_divergence


def _python_points(monkeypatch):
    """Record the ε of every point the Python ε search evaluates (the compiled search evaluates none there)."""
    seen = []
    inner = S.max_delta

    def counted(families, n, eps, *args, **kw):
        seen.append(eps)
        return inner(families, n, eps, *args, **kw)
    monkeypatch.setattr(S, "max_delta", counted)
    return seen


def test_cut_search_runs_compiled_and_agrees_with_the_python_search(monkeypatch):
    """At the default rate the compiled search of this cut stops after its first points and hands over to the
    Python search; at the cut's rate it finishes compiled.  Both answers are certified (the δ query at the upper
    ε is within the target) and agree within the search's tolerance."""
    g, n, delta = sa.Gaussian(sigma=1 / 3.0), 3000, 1e-6
    seen = _python_points(monkeypatch)
    monkeypatch.setattr(G, "CUT_SEARCH_RATE", 1e-3)          # allowance: the floor of 1e5 evaluations
    slow = sa.epsilon(g, n, delta)
    assert len(seen) > 0
    seen.clear()
    monkeypatch.setattr(G, "CUT_SEARCH_RATE", 2e8)
    fast = sa.epsilon(g, n, delta)
    assert seen == []
    assert abs(fast.upper - slow.upper) <= S.SOFT_GAP * slow.upper
    assert fast.lower == slow.lower
    for r in (slow, fast):
        assert 0 <= r.lower <= r.upper <= analytic_gaussian_epsilon(g.mu, delta) * (1 + 1e-9)
        assert sa.delta(g, n, r.upper).upper <= delta * (1 + 1e-6)


@pytest.mark.parametrize("mu,delta", [(1.0, 1e-3), (2.5, 1e-5), (4.0, 1e-6)])
def test_epsilon_at_n2_against_numerical_integration(mu, delta):
    """The certified ε bracket of an ε query at n = 2 holds for the exact divergence of the shuffled pair."""
    g = sa.Gaussian(sigma=1.0, sensitivity=mu)
    r = sa.epsilon(g, 2, delta)
    assert 0 <= r.lower <= r.upper <= analytic_gaussian_epsilon(mu, delta) * (1 + 1e-9)
    h, half = 0.02, 9.0
    up = shuffled_divergence(mu, r.upper, 0.0, mu, [mu], h, half)
    up2 = shuffled_divergence(mu, r.upper, 0.0, mu, [mu], h / 2, half)
    err = 10 * abs(up - up2) + 1e-12
    assert up2 - err <= delta
    if r.lower > 0:
        lo = shuffled_divergence(mu, r.lower, 0.0, mu, [mu], h / 2, half)
        assert lo + err >= delta * (1 - 1e-6)


@pytest.mark.parametrize("mu,n,delta", [(6.0, 2, 1e-10), (8.0, 2, 1e-3), (7.0, 3, 1e-6), (8.0, 3, 1e-12)])
def test_enumerated_cuts_are_answered_not_refused(mu, n, delta):
    """Wide cuts at n = 2, 3 (their laws are enumerated, no Bromwich integral) are answered: a certified
    bracket below the local Gaussian mechanism's ε, consistent with the δ query at its upper end."""
    g = sa.Gaussian(sigma=1.0 / mu)
    r = sa.epsilon(g, n, delta)
    assert 0 < r.lower <= r.upper <= analytic_gaussian_epsilon(mu, delta) * (1 + 1e-9)
    assert sa.delta(g, n, r.upper).upper <= delta * (1 + 1e-6)


def test_enumerated_cut_at_n2_against_numerical_integration():
    mu, delta = 6.0, 1e-10
    r = sa.epsilon(sa.Gaussian(sigma=1.0 / mu), 2, delta)
    h, half = 0.02, 9.0
    up = shuffled_divergence(mu, r.upper, 0.0, mu, [mu], h, half)
    up2 = shuffled_divergence(mu, r.upper, 0.0, mu, [mu], h / 2, half)
    assert up2 - 10 * abs(up - up2) - 1e-15 <= delta
    lo = shuffled_divergence(mu, r.lower, 0.0, mu, [mu], h / 2, half)
    assert lo + 10 * abs(up - up2) + 1e-15 >= delta * (1 - 1e-6)
