"""The compiled ε search's coarse placement (``search.COARSE_RTOL``) on heavy Gaussian truncation cuts.

The coarse evaluations only place the next trial point; the answer must be an ε whose certified δ, evaluated
again here at the default tolerance by the evaluator itself (not by the search), is within the target, and it
may not be looser than the search without the coarse placement beyond the search's stated tolerance
(``SOFT_GAP`` on expensive evaluations).

Oracles (independent of the library's evaluators):

* the divergence of the shuffled Gaussian pair at n = 2 by numerical integration over the output space
  (``test_gaussian.shuffled_divergence``, two grid steps for its error): at the certified upper ε it is at most
  δ (the placement forced on for every point: at n = 2 the cut's law is enumerated);
* the local Gaussian mechanism's ε (Balle-Wang, ``test_gaussian.analytic_gaussian_epsilon``): never below the
  central upper bound.
"""

from __future__ import annotations

import math

import pytest

import shuffleamp as sa
from shuffleamp import exact as E
from shuffleamp import gaussian as G
from shuffleamp import search as S
from shuffleamp.evaluate import max_delta
from test_gaussian import analytic_gaussian_epsilon, shuffled_divergence


def _record(monkeypatch):
    """Capture every call of the compiled search: (upper families, n, target, kernel record)."""
    calls = []
    inner = S.epsilon_search

    def rec(up_f, lo_f, n, target, *args, **kw):
        r = inner(up_f, lo_f, n, target, *args, **kw)
        calls.append((list(up_f), n, target, r))
        return r
    monkeypatch.setattr(S, "epsilon_search", rec)
    return calls


def test_heavy_cut_answer_certified_at_the_default_tolerance(monkeypatch):
    """Δ/σ ≈ 4.5, n = 4626, δ = 1.1e-9: the cut's trial points cost ~1e6 integrand nodes each.  The coarse
    placement runs, its answer is an evaluated ε whose certified δ at the default tolerance is <= the cut's
    target, and it is no looser than the search without it (beyond SOFT_GAP); the lower bound is unchanged."""
    g, n, delta = sa.Gaussian(sigma=0.223, sensitivity=1.0), 4626, 1.1e-9
    # the truncation ladder on its heavy cut (by default the big-jump bound answers there instead)
    monkeypatch.setattr(G, "BIG_JUMP_MIN_LOG_RATIO", math.inf)
    calls = _record(monkeypatch)
    r = sa.epsilon(g, n, delta)
    heavy = [c for c in calls if len(c[3]["c_eps"]) > 0]
    assert heavy, "the coarse placement did not run on the heavy cut"
    up_f, n_, target, k = heavy[0]
    assert k["status"] == 0 and k["upper_kind"] == 1
    assert r.upper <= k["upper"] * (1 + 1e-12)
    # the final point was evaluated at the default tolerance inside the search ...
    assert k["u_value"][k["upper_index"]] <= target
    # ... and the evaluator, called on its own at the default tolerance, certifies it again
    again, _ = max_delta(up_f, n_, float(k["upper"]), "spread", E.DEFAULT_RTOL, 2 ** 22, "exact")
    assert again <= target
    assert 0 < r.lower <= r.upper <= analytic_gaussian_epsilon(g.mu, delta) * (1 + 1e-9)

    monkeypatch.setattr(S, "COARSE_RTOL", 0.0)
    calls.clear()
    off = sa.epsilon(g, n, delta)
    assert all(len(c[3]["c_eps"]) == 0 for c in calls)
    assert r.upper <= off.upper * (1 + S.SOFT_GAP)
    assert r.lower == off.lower


@pytest.mark.parametrize("mu,delta", [(2.5, 1e-5), (4.5, 1e-7)])
def test_forced_coarse_placement_at_n2_against_numerical_integration(monkeypatch, mu, delta):
    """The placement forced on every search (no cost or size threshold): at n = 2 the certified upper ε still bounds
    the exact divergence of the shuffled pair (numerical integration), and lies below the local mechanism's ε."""
    monkeypatch.setattr(S, "COARSE_MIN_NODES", -1.0)
    monkeypatch.setattr(S, "COARSE_MIN_ATOMS", 0)
    calls = _record(monkeypatch)
    g = sa.Gaussian(sigma=1.0, sensitivity=mu)
    r = sa.epsilon(g, 2, delta)
    assert any(len(c[3]["c_eps"]) > 0 for c in calls)
    assert 0 <= r.lower <= r.upper <= analytic_gaussian_epsilon(mu, delta) * (1 + 1e-9)
    h, half = 0.02, 9.0
    up = shuffled_divergence(mu, r.upper, 0.0, mu, [mu], h, half)
    up2 = shuffled_divergence(mu, r.upper, 0.0, mu, [mu], h / 2, half)
    assert up2 - 10 * abs(up - up2) - 1e-15 <= delta
