r"""Certified Rényi differential privacy (RDP) of one shuffled round, for RDP accountants.

:func:`rdp` returns, at each order α > 1, an upper bound on the Rényi divergence

.. math::

    D_\alpha(P\|Q) = \frac{1}{\alpha - 1}\log E_P\big[e^{(\alpha-1)L}\big],\qquad L = \log\frac{dP}{dQ},

of the round's dominating pair, hence on the round's RDP under replace-one neighbours, so RDP
accountants (Opacus, TensorFlow Privacy, ``dp_accounting.rdp``) can compose shuffled rounds.

Argument (derived here; tested against exact Rényi divergences in ``tests/test_renyi.py``)
-------------------------------------------------------------------------------------------

**1. Dominance implies Rényi dominance.**  The certified upper profile U of a round is the
privacy profile of a pair :math:`(P^*, Q^*)` that dominates every neighbouring pair of the
shuffled mechanism (:mod:`shuffleamp.accounting`, arguments A–C: Su, Cheng, Wang,
IEEE S&P 2026, Theorems 12–13).  A pair :math:`(P', Q')` whose hockey-stick curve is at least
U at every ε ∈ ℝ has a tradeoff function below that of :math:`(P^*, Q^*)` (the profile is
:math:`1 + f^*(-e^\varepsilon)` and conjugation reverses order), so by Blackwell's theorem
(Blackwell, "Equivalent Comparisons of Experiments", Ann. Math. Statist. 1953; for tradeoff
functions: Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, Section 2) the
dominated pair is a post-processing of :math:`(P', Q')` and, by the data-processing inequality
for Rényi divergences (van Erven and Harremoës, "Rényi Divergence and Kullback–Leibler
Divergence", IEEE Trans. Inf. Theory 2014, Theorem 9), :math:`D_\alpha(P^*\|Q^*) \le
D_\alpha(P'\|Q')`.  The families are swap-closed, so the dominating pair's tradeoff function is
symmetric and the reverse direction :math:`D_\alpha(Q^*\|P^*)` is the same number: one
direction suffices.

**2. The connect-the-dots pair, with no infinity mass.**  :math:`(P', Q')` is the
connect-the-dots pair (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022) of the certified
upper values on a grid, built as for :func:`shuffleamp.to_pld` (running minimum, mirror for
ε < 0, greatest convex minorant in :math:`x = e^\varepsilon`; :mod:`shuffleamp.accounting`,
argument D), with one change: instead of sending the mass beyond the grid's edge to an
infinity atom (which would make every :math:`D_\alpha` infinite), the grid continues from the
edge to :math:`\varepsilon_0` with :data:`TAIL_POINTS` certified evaluations and ends with the
point :math:`(e^{\varepsilon_0}, 0)`.  That last value is exact: shuffling is post-processing of
the users' ε0-LDP reports, so the shuffled mechanism is ε0-DP and :math:`U(\varepsilon_0) = 0`.
The interpolation stays above U (U is convex in x and below every point), so the pair still
dominates.  For binary randomized response the value at each grid point is the smaller of two
certified upper bounds of U: the decomposition bound and the exact count-law profile
(:func:`shuffleamp.exact_count.profile_binary_rr`, the maximum over every neighbouring dataset;
Cheu, Smith, Ullman, Zeber, Zhilyaev, EUROCRYPT 2019, for the count view), which is tighter near
ε = 0 while the decomposition bound is tighter in the far tail (the exact profile has a round-off
floor).  Its P-masses at the grid's losses :math:`\varepsilon_i` are
:math:`p_i = e^{\varepsilon_i}(s_{i+1} - s_i)`, with :math:`s_i` the slope of the piecewise-linear
curve on the segment ending at :math:`x_i` (:math:`s_{m+1} = 0`); its Q-masses are
:math:`p_i e^{-\varepsilon_i}` plus, possibly, an atom where P has no mass (it does not enter
:math:`E_P`).

**3. How discretisation is charged.**  Nothing is dropped: the discretisation error is the gap
between the connect-the-dots pair and the true pair, which by 1. can only raise the divergence.
The result is :math:`\frac{1}{\alpha-1}\log \sum_i p_i e^{(\alpha-1)\varepsilon_i}`, evaluated
with ``expm1`` / ``log1p`` near α = 1; a computed total P-mass short of 1 is placed at the
largest loss, and the result is raised by a relative 2e-9 for floating-point round-off (an
estimate of the round-off, like ``dp_accounting``'s uncharged FFT round-off).  Each value is also
capped by the two bounds every ε0-DP mechanism has: :math:`\varepsilon_0` and
:math:`\alpha\varepsilon_0^2/2` (Bun and Steinke, "Concentrated Differential Privacy", TCC 2016,
Proposition 3.3, since the round is ε0-DP).  The cap only acts at high orders, where the certified
profile's floor (its round-off charge, about 1e-16) dominates the tail.

Neighbouring relation: replace-one, as every shuffle bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _validate
from .accounting import (DEFAULT_POINTS, DEFAULT_TAIL_DELTA, MAX_GRID_STEPS, POPULATION_POINTS, _certified_profile,
                         _check_mechanism, _convex_minorant, _grid_options, _interval, _PopulationFamily, _Round)
from .errors import ParameterError, ResourceLimitError

__all__ = ["rdp", "RdpResult", "TAIL_POINTS"]

#: Certified profile evaluations between the grid's edge and ε0 (the tail that high orders see).
TAIL_POINTS = 64
_U = float(np.finfo(np.float64).eps)
#: Relative raise of every value for floating-point round-off in the masses and the sum.
ROUNDOFF_MARGIN = 2e-9


@dataclass(frozen=True)
class RdpResult:
    """Certified RDP of one shuffled round (from :func:`rdp`).

    Attributes
    ----------
    orders : ndarray of float64
        The orders α > 1, as given (flattened).
    rdp : ndarray of float64
        Upper bounds on the round's Rényi divergence at each order (nats), same shape.
    eps0 : float
        The local ε0 (the cap of every value).
    n : int
        Number of users.
    method : str
        How the values were computed.
    value_discretization_interval : float
        Grid step (nats) of the dominating pair.
    """

    orders: np.ndarray
    rdp: np.ndarray
    eps0: float
    n: int
    method: str
    value_discretization_interval: float

    def __repr__(self):
        k = min(3, self.orders.size)
        pairs = ", ".join(f"{a:g}: {r:.4g}" for a, r in zip(self.orders[:k], self.rdp[:k]))
        more = ", ..." if self.orders.size > k else ""
        return f"RdpResult(n={self.n}, eps0={self.eps0:g}, rdp={{{pairs}{more}}})"

    def to_dict(self) -> dict:
        """JSON-serialisable dict: ``orders``, ``rdp`` (lists), ``eps0``, ``n``, ``method``,
        ``value_discretization_interval``, ``neighboring_relation`` and the shuffleamp ``version``."""
        from . import __version__
        return {"orders": self.orders.tolist(), "rdp": self.rdp.tolist(), "eps0": float(self.eps0), "n": int(self.n),
                "method": self.method, "value_discretization_interval": float(self.value_discretization_interval),
                "neighboring_relation": "replace_one", "version": __version__}

    def epsilon(self, delta: float) -> float:
        """(ε, δ) from the RDP curve: ``dp_accounting``'s conversion (its ``compute_epsilon``).

        Parameters
        ----------
        delta : float
            Target δ in (0, 1).

        Returns
        -------
        float
            An ε (nats) such that the round is (ε, δ)-DP.
        """
        from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon
        delta = _validate.delta(delta)
        return float(compute_epsilon(self.orders, self.rdp, delta)[0])


def _orders(orders) -> np.ndarray:
    a = np.atleast_1d(np.asarray(_validate.real("orders", orders), dtype=np.float64)).ravel()
    if (a <= 1.0).any():
        raise ParameterError("orders", f"every order must be > 1, got {a[a <= 1.0][0]!r}")
    return a


def _eps0(mechanism) -> float:
    if getattr(mechanism, "delta0", 0) not in (0, 0.0, None):
        raise ParameterError("mechanism", "is not pure eps0-LDP (delta0 > 0): its shuffled privacy loss is "
                                          "unbounded and the certified RDP construction needs a pure eps0")
    return float(mechanism.eps0)


def _is_binary_rr(mechanism) -> bool:
    from .mechanisms import KRR
    return isinstance(mechanism, KRR) and int(mechanism.k) == 2


def _ctd_pair(rnd: _Round, d: float, points: int, eps0: float):
    """(losses ε_i, P-masses p_i) of the connect-the-dots pair extended to ε0 (module docstring, 2)."""
    if any(isinstance(f, _PopulationFamily) for f in rnd.fams):
        points = min(points, POPULATION_POINTS)
    K = math.ceil(rnd.edge / d)
    k_top = max(math.ceil(eps0 / d), K + 1)
    if k_top > MAX_GRID_STEPS:
        raise ResourceLimitError(f"the grid would need {k_top} steps of {d:g} up to eps0={eps0:g}; pass a "
                                 "larger value_discretization_interval", parameter="value_discretization_interval",
                                 resource="memory")
    ks = np.arange(K + 1) if K <= points else np.unique(np.round(np.linspace(0, K, points + 1)).astype(np.int64))
    tail = np.unique(np.round(np.linspace(K, k_top, TAIL_POINTS + 2)).astype(np.int64))
    ks = np.unique(np.concatenate([ks, tail]))
    ks = ks[ks < k_top]
    pos = _certified_profile(rnd.fams, rnd.n, ks * d, "upper")
    if _is_binary_rr(rnd.mechanism):                       # the exact count-law profile is tighter near 0
        from .exact_count import profile_binary_rr
        pos = np.minimum(pos, profile_binary_rr(eps0, rnd.n, ks * d)[0])
    pos = np.minimum.accumulate(pos)
    ks = np.append(ks, k_top)
    pos = np.append(pos, 0.0)                               # U(eps0) = 0: the round is eps0-DP
    kneg = -ks[:0:-1]
    neg = np.minimum(-np.expm1(kneg * d) + np.exp(kneg * d) * pos[:0:-1], 1.0) * (1 + 4 * _U)
    ints = np.concatenate([kneg, ks])
    dl = np.minimum.accumulate(np.minimum(np.concatenate([neg, pos]), 1.0))
    x = np.concatenate([[0.0], np.exp(ints * d)])
    y = np.clip(_convex_minorant(x, np.concatenate([[1.0], dl])), 0.0, 1.0)
    y[-1] = 0.0
    slopes = np.diff(y) / np.diff(x)                        # s_1 .. s_m (segment ending at x_i)
    nxt = np.append(slopes[1:], 0.0)                        # s_{i+1}, with s_{m+1} = 0
    losses = ints * d
    p = np.exp(losses) * np.maximum(nxt - slopes, 0.0)
    return losses, p


def _renyi_of_pair(losses: np.ndarray, p: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """(1/(α-1)) log Σ p_i e^{(α-1) ε_i}, conservative (module docstring, 3)."""
    keep = p > 0
    losses, p = losses[keep], p[keep]
    top = float(losses.max())
    short = max(1.0 - float(p.sum()), 0.0)                  # mass short of 1: put it at the largest loss
    excess = max(float(p.sum()) - 1.0, 0.0)
    out = np.empty(orders.size)
    for j, a in enumerate(orders):
        t = (a - 1.0) * losses
        if (a - 1.0) * top < 30.0:
            s = float(np.sum(p * np.expm1(t))) + short * math.expm1((a - 1.0) * top) + excess
            out[j] = math.log1p(max(s, 0.0)) / (a - 1.0)
        else:
            m = float(t.max())
            s = float(np.sum(p * np.exp(t - m))) + short * math.exp((a - 1.0) * top - m)
            out[j] = (m + math.log(s)) / (a - 1.0)
    return out * (1.0 + ROUNDOFF_MARGIN) + 1e-300


def rdp(mechanism, n=None, orders=(1.5, 2, 3, 4, 8, 16, 32, 64), *, value_discretization_interval=None,
        points: int = DEFAULT_POINTS, tail_delta: float = DEFAULT_TAIL_DELTA) -> RdpResult:
    r"""Certified RDP of one shuffled round: an upper bound on its Rényi divergence at each order.

    The Rényi divergence of a pair dominating the round (replace-one neighbours), computed from
    its certified connect-the-dots dominating pair extended to ε0 (module docstring): a certified
    upper bound on the round's RDP, for RDP accountants.

    Parameters
    ----------
    mechanism : Mechanism or Population
        A pure ε0-LDP randomizer from :mod:`shuffleamp.mechanisms`, a composition of them, or a
        population (:func:`shuffleamp.population`).
    n : int
        Number of users (>= 1); for a population None or its total.
    orders : float or array_like of float
        Rényi orders α > 1 (finite).
    value_discretization_interval : float, optional
        Grid step (nats); default the round's own scale (see :func:`shuffleamp.to_pld`).
    points : int
        Certified profile evaluations per side up to the grid's edge (>= 2).
    tail_delta : float
        Where the dense grid ends (see :func:`shuffleamp.to_pld`); beyond it
        :data:`TAIL_POINTS` certified evaluations reach ε0.

    Returns
    -------
    RdpResult
        ``rdp[i]`` bounds :math:`D_{\alpha_i}` (nats) for ``orders[i]``; ``.epsilon(delta)``
        converts to (ε, δ).

    Raises
    ------
    ParameterError
        ``orders`` NaN, infinite or <= 1 (parameter ``'orders'``); bad ``n``, ``mechanism``,
        ``points``, ``tail_delta`` or ``value_discretization_interval``; a mechanism that is not
        pure ε0-LDP.
    ResourceLimitError
        The grid up to ε0 would be too large (parameter ``value_discretization_interval``).

    References
    ----------
    Mironov, "Rényi Differential Privacy", CSF 2017 (the definition).  Su, Cheng, Wang, IEEE S&P
    2026, Theorems 12–13.  Doroshenko et al., PETS 2022.  Blackwell, Ann. Math. Statist. 1953
    (via Dong, Roth, Su, JRSS-B 2022, Section 2).  Bun, Steinke, TCC 2016, Proposition 3.3.
    """
    mechanism, n = _check_mechanism(mechanism, n)
    a = _orders(orders)
    points, tail_delta = _grid_options(points, tail_delta)
    eps0 = _eps0(mechanism)
    rnd = _Round.make(mechanism, n, tail_delta)
    d = _interval(value_discretization_interval, [rnd], points)
    losses, p = _ctd_pair(rnd, d, points, eps0)
    r = _renyi_of_pair(losses, p, a)
    r = np.minimum(r, np.minimum(eps0, a * eps0 * eps0 / 2.0))
    return RdpResult(a, r, eps0, n, "Rényi divergence of the certified connect-the-dots dominating pair "
                                     "(extended to eps0), capped by eps0 and alpha eps0^2 / 2", d)
