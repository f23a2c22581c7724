"""The accountant's Gaussian round at small n (accounting module, argument J): its rungs evaluated by the certified FFT
engine where the blanket draws are few, its grid ended at a share of the target δ, and its up-front cost estimate.

Oracles (none from the accountant's own profile):
* the single-round certified lower δ of :func:`shuffleamp.delta` (quantised concrete pairs, certified lower
  evaluators: a different code path), which the certified upper profile can never be below;
* the local Gaussian mechanism's divergence (Balle, Wang, ICML 2018, Theorem 8) from scipy's normal CDF, which the
  profile is never above;
* the Bromwich evaluation of the same truncated laws (the evaluator the accountant used before at every n), which
  the FFT engine's certified values must match to 1 % where the Bromwich error bound is small;
* brackets of the totals measured with the Bromwich evaluator at every n (407a4d0), which the answers must contain
  in their overlap and not loosen by more than 1 % (slow).
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

import shuffleamp as sa
from shuffleamp import accounting as A
from shuffleamp import exact
from shuffleamp.errors import ResourceLimitError

#: generous budget where a test checks values, not the budget (a loaded machine's wall clock)
TOTAL_SECONDS = 300.0


def _local_oracle(mu, eps):
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def _no_rung_evaluated(monkeypatch):
    """Make any profile evaluation of a Gaussian rung fail the test: a refusal must come before it."""
    def boom(*a, **k):
        raise AssertionError("a rung was evaluated before the refusal")
    monkeypatch.setattr(A._GaussianFamily, "_rung_values", boom)
    monkeypatch.setattr(A._GaussianFamily, "values", boom)


@pytest.mark.parametrize("sigma,n", [(1.0, 10), (0.5, 30)])
def test_fft_profile_between_the_single_round_lower_and_the_local_profile(sigma, n):
    """n γ <= 40: the rungs go through the FFT engine; the certified profile is >= the single round's certified
    lower δ (a lower bound on the truth) and <= the local Gaussian profile, at every ε tried."""
    g = sa.Gaussian(sigma=sigma, sensitivity=1.0)
    fam = A._GaussianFamily(g.at_n(n), n, A.DEFAULT_TAIL_DELTA)
    assert fam.fft
    eps = np.array([0.25, 1.0, 2.5])
    up, _ = sa.privacy_profile(g, n, eps, max_seconds=TOTAL_SECONDS)
    for e, u in zip(eps, up):
        assert sa.delta(g, n, float(e)).lower <= u <= _local_oracle(1.0 / sigma, e) * (1 + 1e-9) + 1e-15


def test_fft_rungs_match_the_bromwich_values_where_those_are_accurate():
    """Δ/σ = 1, n = 10: the rungs whose charge is 1e-4 .. 1e-3 of δ (those the profile evaluates there) have FFT values
    at most 1 % above their Bromwich upper values wherever the Bromwich error bound is below 1 % (the FFT engine's
    spread discretisation: measured 0.1 - 0.3 % above; deeper rungs, with wider laws on the same grid size, up to 2 %
    at these ε), and never below their certified lower values."""
    n = 10
    fam = A._GaussianFamily(sa.Gaussian(sigma=1.0, sensitivity=1.0).at_n(n), n, A.DEFAULT_TAIL_DELTA)
    eps = np.array([0.2, 0.6, 1.2])
    checked = 0
    for _, _, _, decs in fam.rungs[1:3]:          # the rungs the profile uses at these ε (charge 1e-4 .. 1e-3 of δ)
        f = decs[0]
        fft = fam._rung_values(f, eps)
        up, lo = exact.delta_exact_profile(f, n, eps, mode="both")
        assert (fft >= lo * (1 - 1e-12)).all()
        rel = (up - lo) / up
        ok = rel <= 1e-2
        assert (fft[ok] <= up[ok] * 1.01).all() and (fft[ok] >= lo[ok] * (1 - 1e-12)).all()
        assert (np.abs(fft[ok] / up[ok] - 1.0) <= 0.01 + rel[ok]).all()
        checked += int(ok.sum())
    assert checked >= 4


def test_small_budget_refused_up_front_naming_max_seconds(monkeypatch):
    """A budget below the estimate is refused before any profile point, naming ``max_seconds`` and what else to change."""
    _no_rung_evaluated(monkeypatch)
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds([(sa.Gaussian(sigma=1.0, sensitivity=1.0), 30, 10)], delta=1e-6, max_seconds=0.3)
    assert e.value.parameter == "max_seconds" and e.value.resource == "time"
    assert "sigma" in str(e.value) and "max_seconds" in str(e.value)


def test_costly_round_refused_up_front_with_the_default_budget(monkeypatch):
    """Δ/σ = 4, n = 1000, 10 rounds: about 13 s of CPU (its deep rungs' Bromwich integrals, 21 ms per ε), above the
    default 10 s budget: refused before any profile point, naming ``max_seconds``."""
    _no_rung_evaluated(monkeypatch)
    with pytest.raises(ResourceLimitError) as e:
        sa.compose_rounds([(sa.Gaussian(sigma=0.25, sensitivity=1.0), 1000, 10)], delta=1e-6)
    assert e.value.parameter == "max_seconds"


def test_estimate_is_deterministic_and_grows_with_the_grid():
    """The estimate is CPU work from the model (no clock, no load): the same twice; more profile points cost more."""
    fam = A._GaussianFamily(sa.Gaussian(sigma=1.0, sensitivity=1.0).at_n(30), 30, 1e-10)
    a = A._gaussian_round_seconds(fam, 256, 10, True)
    assert a == A._gaussian_round_seconds(fam, 256, 10, True)
    assert A._gaussian_round_seconds(fam, 64, 10, True) < a          # 64 of the 128 points it would use
    assert A._gaussian_round_seconds(fam, 256, 10, False) < a


#: (sigma, n, rounds): the total's bracket at δ = 1e-6 measured with the Bromwich evaluator at every n and the grid
#: ending at tail_delta = 1e-15 (407a4d0, max_seconds=inf)
MEASURED = {(1.0, 100, 10): (1.788, 2.487), (2.0, 10, 10): (2.317, 2.876), (1.0, 10, 10): (6.4428, 8.6901),
            (0.5, 10, 10): (27.8416, 37.4481), (1.0, 30, 10): (3.5313, 4.8223), (0.5, 100, 10): (12.2583, 16.1333)}


@pytest.mark.slow
@pytest.mark.parametrize("cell", sorted(MEASURED))
def test_totals_keep_the_measured_bracket(cell):
    """The previously late cells answer within the default budget's estimate; the bracket overlaps the measured one
    and its upper is at most 1 % above the measured upper (the FFT engine is usually tighter at small n)."""
    sigma, n, R = cell
    lo0, up0 = MEASURED[cell]
    tot = sa.compose_rounds([(sa.Gaussian(sigma=sigma, sensitivity=1.0), n, R)], delta=1e-6,
                            max_seconds=TOTAL_SECONDS)
    assert 0.0 < tot.lower <= tot.upper
    assert tot.lower <= up0 and lo0 <= tot.upper              # both are certified brackets of the same truth
    assert tot.upper <= up0 * 1.01
    assert tot.lower >= lo0 * 0.99
