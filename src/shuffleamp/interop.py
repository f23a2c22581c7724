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
will not add specialised events, google/differential-privacy issue 212).  This module touches
that attribute (and reads its non-private flag ``_contains_non_dp_event``) in exactly one place
(:meth:`PLDAccountant._parent_pld`), checked at construction;
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
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.pld import privacy_loss_distribution as _pld
    from dp_accounting.privacy_accountant import NeighboringRelation
    from dp_accounting.privacy_accountant import UnsupportedEventError as _DpUnsupportedEventError
except ImportError as _exc:      # pragma: no cover - dp_accounting is installed with the 'dp' extra
    raise ImportError("shuffleamp.interop needs Google's dp_accounting; install the 'dp' extra: "
                      "pip install 'shuffleamp[dp]'") from _exc

from . import _extras, _validate
from .accounting import (DEFAULT_POINTS, DEFAULT_TAIL_DELTA, LOWER_REFINE, TAIL_MASS_TRUNCATION, AccountingResult,
                         _check_mechanism, _lower_pld, to_pld)
from .errors import ParameterError

__all__ = ["ShuffledRoundEvent", "PLDAccountant", "UnsupportedEventError", "CHECKED_DP_ACCOUNTING_VERSIONS",
           "LOWER_REFINE"]

#: ``dp_accounting`` versions whose ``PLDAccountant`` source this module was checked against.
CHECKED_DP_ACCOUNTING_VERSIONS = ("0.6.0",)


class UnsupportedEventError(ParameterError, _DpUnsupportedEventError):
    """An event (or a sub-event of a composition) this accountant cannot compose.

    A :class:`shuffleamp.ParameterError` naming the argument (``"event"``) and a
    ``dp_accounting.UnsupportedEventError``, so code written for either catches it.
    """


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


class PLDAccountant(pld_privacy_accountant.PLDAccountant):
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
        _extras.require_replace_one(neighboring_relation, "neighboring_relation", "the accountant",
                                    "use NeighboringRelation.REPLACE_ONE (the default)")
        d = _validate.real("value_discretization_interval", value_discretization_interval, lo=0.0, lo_open=True)
        self._points = _validate.count(points, "points", minimum=2)
        self._tail_delta = _validate.real("tail_delta", tail_delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        super().__init__(NeighboringRelation.REPLACE_ONE, d)
        self._parent_pld()                        # fails early if the parent's state is not as checked
        self._d = d
        self._keep_lower = bool(lower)
        self._lower_refine = _validate.count(lower_refine, "lower_refine")
        self._lower_parts: list = []
        self._lower_cache = None
        self._rounds: list = []

    # -- the one place that touches the parent's private state (dp_accounting 0.6.0) --------------
    def _parent_pld(self, compose_with=None, *, with_flag: bool = False):
        """The parent's composed PLD (attribute ``_pld``), after composing ``compose_with`` into it;
        with ``with_flag``, also whether a non-private event was composed (``_contains_non_dp_event``)."""
        current = getattr(self, "_pld", None)
        flag = getattr(self, "_contains_non_dp_event", None)
        if not isinstance(current, _pld.PrivacyLossDistribution) or not isinstance(flag, bool):
            import importlib.metadata as md
            raise RuntimeError("shuffleamp.interop.PLDAccountant relies on dp_accounting's PLDAccountant keeping "
                               "its PLD in '_pld' and its non-private flag in '_contains_non_dp_event'; this "
                               f"dp_accounting ({md.version('dp-accounting')}) does not. Checked versions: "
                               f"{', '.join(CHECKED_DP_ACCOUNTING_VERSIONS)}")
        if compose_with is not None:
            self._pld = current = current.compose(compose_with, tail_mass_truncation=TAIL_MASS_TRUNCATION)
        return (current, flag) if with_flag else current

    # -- public ---------------------------------------------------------------------------------------
    @property
    def value_discretization_interval(self) -> float:
        """Grid step (nats) of the upper PLD; the lower PLD uses this / :data:`LOWER_REFINE`."""
        return self._d

    def privacy_loss_distribution(self):
        """The composed pessimistic PLD (what ``get_epsilon`` / ``get_delta`` read), tagged replace-one,
        or None if a non-private event (``NonPrivateDpEvent``, zero noise) was composed: no PLD bounds it."""
        pld, non_private = self._parent_pld(with_flag=True)
        return None if non_private else _extras.tag(pld)

    def lower_privacy_loss_distribution(self):
        """(composed optimistic PLD, δ to subtract for ``dp_accounting``'s truncations), or (None, 0).

        Built on the first call after a composition (the lower PLD's grid is finer than the upper's,
        so it costs more: ``compose`` and ``get_epsilon`` do not pay for it).
        """
        if not self._keep_lower:
            return None, 0.0
        return self._lower()[0], self.lower_error

    @property
    def lower_error(self) -> float:
        """δ subtracted from the optimistic composition: 2 ``tail_mass_truncation`` per composition."""
        return 2.0 * TAIL_MASS_TRUNCATION * self._lower()[1] if self._keep_lower else 0.0

    @property
    def lower_left_out(self) -> tuple:
        """Names of the composed parts without an optimistic PLD (left out of the lower bound)."""
        return self._lower()[2] if self._keep_lower else ()

    def check_event(self, event) -> None:
        """Raise :class:`UnsupportedEventError` if ``event`` cannot be composed (it is not composed)."""
        if not isinstance(event, dp_event.DpEvent):
            raise ParameterError("event", f"must be a dp_accounting DpEvent, got {type(event).__name__}")
        err = self._maybe_compose(event, 0, False)
        if err is not None:
            raise UnsupportedEventError("event", f"{err.error_message} (sub-event {err.invalid_event!r})")

    def compose(self, event, count: int = 1):
        """Compose ``event`` ``count`` times (see ``dp_accounting.PrivacyAccountant.compose``).

        Raises
        ------
        UnsupportedEventError
            ``event`` or one of its sub-events cannot be accounted here (parameter ``"event"``).
        ParameterError
            ``count`` not an integer >= 1.
        """
        count = _validate.count(count, "count")
        self.check_event(event)
        return super().compose(event, count)

    def get_epsilon_lower(self, target_delta: float) -> float:
        """Certified lower bound on the total ε at ``target_delta`` (0 if lower bounds are off).

        The largest of the composed optimistic PLD's ε, each composed part's alone (composition
        never decreases the total; the part alone escapes the composed rounding-down of the others)
        and the certified single-round lower bound of each shuffled round
        (:func:`shuffleamp.epsilon`).
        """
        target_delta = _validate.delta(target_delta, "target_delta")
        if not self._keep_lower:
            return 0.0
        v = max([_extras.lower_epsilon(p, e, target_delta) for p, e in self._lower()[3]], default=0.0)
        from .bounds import epsilon as _single
        for m, n in self._single_rounds():
            v = max(v, float(_single(m, n, target_delta).lower or 0.0))
        return min(v, float(self.get_epsilon(target_delta)))

    def get_delta_lower(self, target_epsilon: float) -> float:
        """Certified lower bound on the total δ at ``target_epsilon`` (0 if lower bounds are off);
        the larger of the composition's and each part's alone, as :meth:`get_epsilon_lower`."""
        target_epsilon = _validate.epsilon(target_epsilon, "target_epsilon")
        if not self._keep_lower:
            return 0.0
        v = max([_extras.lower_delta(p, e, target_epsilon) for p, e in self._lower()[3]], default=0.0)
        from .bounds import delta as _single
        for m, n in self._single_rounds():
            v = max(v, float(_single(m, n, target_epsilon).lower or 0.0))
        return min(v, float(self.get_delta(target_epsilon)))

    def _single_rounds(self) -> list:
        """The distinct (mechanism, n) of the composed shuffled rounds: one round alone is a lower
        bound of the total, and its certified single-round lower bound (Su, Cheng, Wang, Theorem 14)
        is tighter than its count-statistic PLD."""
        out = []
        for event, _ in self._lower_parts:
            if isinstance(event, ShuffledRoundEvent) and not any(event.mechanism is m and event.n == n
                                                                 for m, n in out):
                out.append((event.mechanism, event.n))
        return out

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

    # -- composition ------------------------------------------------------------------------------------
    def _maybe_compose(self, event, count: int, do_compose: bool):
        if isinstance(event, ShuffledRoundEvent):
            if do_compose:
                self._compose_round(event, count)
            return None
        if isinstance(event, (dp_event.SelfComposedDpEvent, dp_event.ComposedDpEvent)):
            return super()._maybe_compose(event, count, do_compose)     # recurses through this method
        if isinstance(event, dp_event.RandomizedResponseDpEvent) and do_compose and count > 1:
            # the parent composes it once whatever the count (dp_accounting 0.6.0)
            if event.num_buckets > 1 and event.noise_parameter > 0:
                one = _pld.from_randomized_response(event.noise_parameter, event.num_buckets,
                                                    value_discretization_interval=self._d,
                                                    neighboring_relation=NeighboringRelation.REPLACE_ONE)
                self._parent_pld(one.self_compose(count, tail_mass_truncation=TAIL_MASS_TRUNCATION))
                self._compose_lower(event, count)
                return None
        result = super()._maybe_compose(event, count, do_compose)
        if result is None and do_compose:
            self._compose_lower(event, count)
        return result

    def _compose_round(self, event: ShuffledRoundEvent, count: int) -> None:
        up = _round_pld(event.mechanism, event.n, self._d, self._points, self._tail_delta)
        if count > 1:
            up = up.self_compose(count, tail_mass_truncation=TAIL_MASS_TRUNCATION)
        self._parent_pld(up)
        self._rounds.append((event.mechanism.describe(), event.n, count))
        self._compose_lower(event, count)

    def _compose_lower(self, event, count: int) -> None:
        """Record a part of the lower bound; it is built on the first lower query (:meth:`_lower`)."""
        if self._keep_lower and not isinstance(event, (dp_event.NoOpDpEvent, dp_event.NonPrivateDpEvent)):
            self._lower_parts.append((event, count))
            self._lower_cache = None

    def _lower(self):
        """(composed optimistic PLD, number of compositions, parts left out, [(PLD, charged δ)] of the
        composition and of every part alone), built once per state."""
        if self._lower_cache is not None:
            return self._lower_cache
        dl = self._d / self._lower_refine
        total = None
        calls, left, alone = 0, [], []
        for event, count in self._lower_parts:
            if isinstance(event, ShuffledRoundEvent):
                lo, _ = _lower_pld(event.mechanism, event.n, dl)
                own = 0
                if lo is not None and count > 1:
                    lo = lo.self_compose(count, tail_mass_truncation=TAIL_MASS_TRUNCATION)
                    own = 1
                name = f"shuffled round of {event.mechanism.describe().get('mechanism')}"
            else:
                lo = _extras.optimistic_event_pld(event, count, dl)
                own = int(count > 1 and not isinstance(event, dp_event.GaussianDpEvent))
                name = type(event).__name__
            if lo is None:
                left.append(name)
                continue
            alone.append((lo, 2.0 * TAIL_MASS_TRUNCATION * own))
            calls += own
            if total is None:
                total = lo
            else:
                total = total.compose(lo, tail_mass_truncation=TAIL_MASS_TRUNCATION)
                calls += 1
        if total is None:
            total = _pld.identity(dl, pessimistic_estimate=False)
        alone.append((total, 2.0 * TAIL_MASS_TRUNCATION * calls))
        self._lower_cache = (total, calls, tuple(left), alone)
        return self._lower_cache
