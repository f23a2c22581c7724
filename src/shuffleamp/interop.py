r"""Shuffled rounds inside Google's ``dp_accounting``: a ``DpEvent`` and a shuffle-aware PLD accountant.

Teams that run shuffled telemetry also run DP-SGD, counts and other releases on the same users
and account them with ``dp_accounting`` (its ``DpEvent`` objects and ``PLDAccountant``).  This
module lets one accountant take both:

- :class:`ShuffledRoundEvent` ``(mechanism, n)``: one shuffled round of any shuffleamp mechanism,
  composition or population, as a ``dp_accounting.DpEvent`` (it round-trips through
  ``to_named_tuple`` / ``from_named_tuple``).
- :class:`PLDAccountant`: a subclass of ``dp_accounting.pld.PLDAccountant`` that composes
  :class:`ShuffledRoundEvent` alone, inside ``SelfComposedDpEvent`` and inside
  ``ComposedDpEvent``, with every event the parent supports, under the **replace-one**
  neighbouring relation only.  ``get_epsilon`` / ``get_delta`` are the parent's (the certified
  upper bound); :meth:`PLDAccountant.get_epsilon_lower` / :meth:`PLDAccountant.get_delta_lower`
  give the certified lower bound kept beside it, and :meth:`PLDAccountant.bracket` both.
- ``dp_accounting.mechanism_calibration.calibrate_dp_mechanism`` works with it (see the example
  of :class:`PLDAccountant`).

Needs ``dp_accounting`` (the ``dp`` extra: ``pip install 'shuffleamp[dp]'``).

What is certified
-----------------
**Upper.**  A shuffled round enters as its certified pessimistic connect-the-dots PLD
(:func:`shuffleamp.to_pld`): its hockey-stick curve is at least the round's optimal bound at
every ε, i.e. the PLD is a dominating pair of the round (Su, Cheng, Wang, "Decomposition-Based
Optimal Bounds for Privacy Amplification via Shuffling", IEEE S&P 2026, Theorems 12–13;
Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the Dots", PETS 2022).  Composing
dominating pairs bounds the adaptive composition (Dong, Roth, Su, "Gaussian Differential
Privacy", JRSS-B 2022, Theorem 3.2), which is what ``dp_accounting``'s ``compose`` /
``self_compose`` compute; the other events enter through the parent's own pessimistic PLDs.
``dp_accounting``'s FFT round-off is not charged (an estimate, as everywhere in shuffleamp).

**Lower.**  A shuffled round enters as the optimistic PLD of a concrete neighbouring pair (the
count statistic of a Theorem-14 pair, the exact pair for binary randomized response, a
population's score pair; :mod:`shuffleamp.accounting`, argument E); a ``dp_accounting``
mechanism (Gaussian, randomized response, Poisson-subsampled Gaussian) as its optimistic PLD.
Why the composition of optimistic PLDs of the parts is a lower bound, and why leaving a part out
keeps it one, is argued in :mod:`shuffleamp._extras`.  The lower PLD lives on the grid
``value_discretization_interval / lower_refine`` (rounding losses down costs up to one step per
composed part); ``dp_accounting`` may drop or alias up to its ``tail_mass_truncation`` t per
composition, so 2t per composition is subtracted from the lower δ (``lower_error``).

**Neighbouring relation.**  Shuffle bounds are for replace-one neighbours; the accountant is
built with ``NeighboringRelation.REPLACE_ONE`` (anything else is refused), so every parent PLD
is the replace-one one (Gaussian: sensitivity doubled).  Events the parent supports only under
add/remove (Laplace, discrete Laplace, mixtures of Gaussians, Poisson-subsampled Laplace) are
therefore refused, as the parent refuses them under replace-one.

**One fix of the parent.**  ``dp_accounting`` 0.6.0 composes a ``RandomizedResponseDpEvent``
once whatever its count (``SelfComposedDpEvent(rr, 10)`` gives the ε of one round); this
accountant composes it ``count`` times.

**Private state.**  ``dp_accounting``'s ``PLDAccountant`` keeps its composed PLD in the private
attribute ``_pld`` and its ``_maybe_compose`` is a closed chain of type checks (the maintainers
will not add specialised events, google/differential-privacy#212 on GitHub).  The accountant touches
that attribute (and reads its non-private flag ``_contains_non_dp_event``) in exactly one place,
``_parent_pld`` of its base class (:class:`shuffleamp._extras.ReplaceOneAccountant`, which also
builds the events of :func:`shuffleamp.compose_rounds`' ``extra_plds``), checked at construction;
:data:`CHECKED_DP_ACCOUNTING_VERSIONS` lists the versions whose source it was read against (a
test pins them).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

try:
    import attr
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import NeighboringRelation
except ImportError as _exc:      # pragma: no cover - dp_accounting is installed with the 'dp' extra
    raise ImportError("shuffleamp.interop needs Google's dp_accounting; install the 'dp' extra: "
                      "pip install 'shuffleamp[dp]'") from _exc

from . import _validate
from ._extras import CHECKED_DP_ACCOUNTING_VERSIONS, TAIL_MASS_TRUNCATION, ReplaceOneAccountant, UnsupportedEventError
from .accounting import (DEFAULT_POINTS, DEFAULT_TAIL_DELTA, LOWER_REFINE, AccountingResult, _check_mechanism,
                         _lower_plds, _Round, to_pld)
from .errors import ParameterError

__all__ = ["ShuffledRoundEvent", "PLDAccountant", "UnsupportedEventError", "CHECKED_DP_ACCOUNTING_VERSIONS",
           "LOWER_REFINE", "ROUND_CACHE_SIZE"]


# ---------------------------------------------------------------------------- the event
@attr.s(frozen=True, slots=True, auto_attribs=True)
class ShuffledRoundEvent(dp_event.DpEvent):
    """One shuffled round: ``n`` users each apply ``mechanism`` and a shuffler permutes the reports.

    The central privacy of the round, under replace-one neighbours, is accounted by
    :class:`PLDAccountant` with shuffleamp's certified bound (Su, Cheng, Wang, IEEE S&P 2026,
    Theorem 13).  Compose R rounds as ``SelfComposedDpEvent(ShuffledRoundEvent(m, n), R)``.

    Parameters
    ----------
    mechanism : Mechanism or Population
        A randomizer from :mod:`shuffleamp.mechanisms`, a composition of them
        (:func:`shuffleamp.joint`, ...), or a population (:func:`shuffleamp.population`).
    n : int, optional
        Number of users in the round (>= 1).  For a population None (its total is used) or its
        total.

    Raises
    ------
    ParameterError
        ``mechanism`` not a shuffleamp mechanism or population, bad ``n``.

    Examples
    --------
    >>> import dp_accounting
    >>> from shuffleamp.mechanisms import KRR
    >>> from shuffleamp.interop import ShuffledRoundEvent
    >>> e = ShuffledRoundEvent(KRR(1.0, 10), 10**6)
    >>> dp_accounting.DpEvent.from_named_tuple(e.to_named_tuple()) == e
    True
    """

    mechanism: Any
    n: Any = None

    def __attrs_post_init__(self):
        _, n = _check_mechanism(self.mechanism, self.n)
        object.__setattr__(self, "n", int(n))

    def describe(self) -> dict:
        """``{"mechanism": ..., "n": ...}`` with the mechanism's own description."""
        return {"mechanism": self.mechanism.describe(), "n": self.n}


# ---------------------------------------------------------------------------- the accountant
#: Shuffled-round PLDs kept across accountants (``calibrate_dp_mechanism`` builds a fresh accountant
#: per evaluation): the most recent ones, keyed by (mechanism, n, grid step, points, tail_delta).
ROUND_CACHE_SIZE = 8
_ROUND_CACHE: OrderedDict = OrderedDict()
_ROUND_LOCK = threading.Lock()


def _round_pld(mechanism, n: int, d: float, points: int, tail_delta: float):
    """:func:`shuffleamp.to_pld` of one round, from a small LRU cache (PLD objects are never mutated:
    ``compose`` and ``self_compose`` return new ones)."""
    key = (mechanism, n, d, points, tail_delta)
    try:
        hash(key)
    except TypeError:                               # an unhashable mechanism: no caching
        return to_pld(mechanism, n, value_discretization_interval=d, points=points, tail_delta=tail_delta)
    with _ROUND_LOCK:
        if key in _ROUND_CACHE:
            _ROUND_CACHE.move_to_end(key)
            return _ROUND_CACHE[key]
    pld = to_pld(mechanism, n, value_discretization_interval=d, points=points, tail_delta=tail_delta)
    with _ROUND_LOCK:
        _ROUND_CACHE[key] = pld
        while len(_ROUND_CACHE) > ROUND_CACHE_SIZE:
            _ROUND_CACHE.popitem(last=False)
    return pld


class PLDAccountant(ReplaceOneAccountant):
    r"""``dp_accounting``'s PLD accountant that also composes shuffled rounds (replace-one only).

    Parameters
    ----------
    neighboring_relation : dp_accounting.NeighboringRelation or str
        Must be ``REPLACE_ONE`` (the default; shuffle bounds are for replace-one neighbours).
    value_discretization_interval : float
        Grid step (nats) of every PLD, as in the parent (default 1e-4).  Shuffled rounds are
        exported on it (for 365 rounds of 10-RR, ε0 = 1, n = 1e6, 1e-4 gives ε(1e-8) within
        0.2 % of :func:`shuffleamp.compose_rounds` on its own finer grid).
    points : int
        Profile evaluations per side of a shuffled round's PLD (see :func:`shuffleamp.to_pld`).
    tail_delta : float
        Where a shuffled round's PLD grid ends (see :func:`shuffleamp.to_pld`).
    lower : bool
        Keep the certified lower bound (default True).  It is built on the first lower query
        (:meth:`get_epsilon_lower`, :meth:`bracket`), not by ``compose``.
    lower_refine : int
        The lower PLD's grid is ``value_discretization_interval / lower_refine`` (default
        :data:`LOWER_REFINE`, as :func:`shuffleamp.compose_rounds`): rounding losses down costs
        up to one grid step per composed round, and a finer grid costs time (a DP-SGD run of 1000
        Poisson-subsampled Gaussian steps: about 1.8 s at refinement 1, 15 s at 8; see
        ``bench/results_interop.md``).

    Raises
    ------
    ParameterError
        ``neighboring_relation`` not replace-one, bad ``value_discretization_interval``,
        ``points`` or ``tail_delta``.

    Notes
    -----
    ``compose`` raises :class:`UnsupportedEventError` (parameter ``"event"``) for an event it cannot
    account, naming the offending sub-event; ``supports`` returns False for it.  The PLDs of the
    last :data:`ROUND_CACHE_SIZE` distinct rounds are cached across accountants, so composing the
    same round again (or calibrating the number of rounds) costs one composition.

    Examples
    --------
    A year of shuffled telemetry and a DP-SGD run on the same users:

    >>> import dp_accounting
    >>> from shuffleamp.mechanisms import KRR
    >>> from shuffleamp.interop import PLDAccountant, ShuffledRoundEvent
    >>> year = dp_accounting.SelfComposedDpEvent(ShuffledRoundEvent(KRR(1.0, 10), 10**6), 365)
    >>> sgd = dp_accounting.SelfComposedDpEvent(
    ...     dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 1000)
    >>> acc = PLDAccountant().compose(year).compose(sgd)     # doctest: +SKIP
    >>> acc.bracket(delta=1e-8)                               # doctest: +SKIP
    AccountingResult(epsilon: upper=3.88016, lower=3.87315, delta=1e-08, rounds=[krr×365], ...)

    The largest ε0 for a 365-round budget of ε = 1 at δ = 1e-8:

    >>> from dp_accounting.mechanism_calibration import calibrate_dp_mechanism, ExplicitBracketInterval
    >>> calibrate_dp_mechanism(                                   # doctest: +SKIP
    ...     PLDAccountant,
    ...     lambda e0: dp_accounting.SelfComposedDpEvent(ShuffledRoundEvent(KRR(e0, 10), 10**6), 365),
    ...     target_epsilon=1.0, target_delta=1e-8,
    ...     bracket_interval=ExplicitBracketInterval(0.1, 8.0), tol=1e-3)
    4.131...
    """

    def __init__(self, neighboring_relation=NeighboringRelation.REPLACE_ONE,
                 value_discretization_interval: float = 1e-4, *, points: int = DEFAULT_POINTS,
                 tail_delta: float = DEFAULT_TAIL_DELTA, lower: bool = True, lower_refine: int = LOWER_REFINE):
        self._points = _validate.count(points, "points", minimum=2)
        self._tail_delta = _validate.real("tail_delta", tail_delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        super().__init__(neighboring_relation, value_discretization_interval, lower=lower,
                         lower_refine=lower_refine)
        self._rounds: list = []

    def bracket(self, *, epsilon: float | None = None, delta: float | None = None) -> AccountingResult:
        """Upper (the parent's ``get_epsilon`` / ``get_delta``) and lower bound of the total.

        Parameters
        ----------
        epsilon, delta : float
            Exactly one: the target ε (answer: total δ) or the target δ (answer: total ε).

        Returns
        -------
        AccountingResult
            ``rounds`` lists the shuffled rounds composed (``(mechanism, n, R)``).

        Raises
        ------
        ParameterError
            Both or neither target given, or a target out of range.
        """
        if (epsilon is None) == (delta is None):
            raise ParameterError("epsilon", "give exactly one of epsilon (to get the total delta) and delta")
        if delta is not None:
            q, up, lo = "epsilon", float(self.get_epsilon(delta)), self.get_epsilon_lower(delta)
        else:
            q, up, lo = "delta", min(float(self.get_delta(epsilon)), 1.0), self.get_delta_lower(epsilon)
        left = f"; left out: {', '.join(self.lower_left_out)}" if self.lower_left_out else ""
        how = ("the largest of: the composed optimistic PLDs of concrete pairs (shuffled rounds) and of "
               "dp_accounting mechanisms, each part alone, each shuffled round's single-round lower bound" + left
               if self._keep_lower else "none")
        notes = ("upper: dp_accounting.PLDAccountant (replace-one) with shuffled rounds as certified pessimistic "
                 "connect-the-dots PLDs (FFT round-off not charged)",
                 f"lower: {how}; dp_accounting truncation {self.lower_error:.3g} in delta subtracted")
        return AccountingResult(q, up, min(lo, up), epsilon, delta, tuple(self._rounds),
                                "dp_accounting PLD accountant (replace-one) with shuffleamp rounds", how, self._d,
                                self.lower_error, notes)

    # -- shuffled rounds ----------------------------------------------------------------------------------
    def _maybe_compose(self, event, count: int, do_compose: bool):
        if isinstance(event, ShuffledRoundEvent):
            if do_compose:
                up = _round_pld(event.mechanism, event.n, self._d, self._points, self._tail_delta)
                if count > 1:
                    up = up.self_compose(count, tail_mass_truncation=TAIL_MASS_TRUNCATION)
                self._parent_pld(up)
                self._rounds.append((event.mechanism.describe(), event.n, count))
                self._compose_lower(event, count)
            return None
        return super()._maybe_compose(event, count, do_compose)

    def _lower_part(self, event, count: int, dl: float):
        if not isinstance(event, ShuffledRoundEvent):
            return super()._lower_part(event, count, dl)
        cands = _lower_plds(_Round.make(event.mechanism, event.n, self._tail_delta), self._d, self._points, dl)
        # any concrete pair gives a valid lower bound; keep the one with the largest total variation
        lo = max(cands, key=lambda c: c[0].get_delta_for_epsilon(0.0))[0] if cands else None
        own = 0
        if lo is not None and count > 1:
            lo = lo.self_compose(count, tail_mass_truncation=TAIL_MASS_TRUNCATION)
            own = 1
        return lo, own, f"shuffled round of {event.mechanism.describe().get('mechanism')}"

    def _single_lower(self, *, epsilon=None, delta=None) -> float:
        """The certified single-round lower bound of each distinct shuffled round (Su, Cheng, Wang,
        Theorem 14): one round alone bounds the total, and this is tighter than its count-statistic
        PLD."""
        from .bounds import delta as _delta_bound
        from .bounds import epsilon as _epsilon_bound
        seen, v = [], 0.0
        for event, _ in self._lower_parts:
            if not isinstance(event, ShuffledRoundEvent) or any(event.mechanism is m and event.n == n
                                                                for m, n in seen):
                continue
            seen.append((event.mechanism, event.n))
            r = (_epsilon_bound(event.mechanism, event.n, delta) if delta is not None
                 else _delta_bound(event.mechanism, event.n, epsilon))
            v = max(v, float(r.lower or 0.0))
        return v
