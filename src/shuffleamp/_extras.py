r"""Other mechanisms composed next to shuffled rounds: neighbouring relations and ``dp_accounting`` events.

Shuffle bounds are for **replace-one** neighbours (one user's input replaced by another).  A
privacy loss distribution (PLD) of another mechanism may only be composed with them if it is a
dominating pair for the same relation: a PLD built under add/remove-one (``dp_accounting``'s
default) bounds pairs of datasets of *different* sizes, and a replace-one pair is two such steps
(remove, then add), which the add/remove PLD does not bound (for a Gaussian the replace-one
sensitivity is twice the add/remove one: composing the add/remove PLD under-states the total).
There is no sound PLD-level conversion that ``dp_accounting`` provides (a replace is a *group*
of two add/remove steps, not their composition), so such PLDs are refused.

``dp_accounting`` 0.6.0 does not record the relation in a ``PrivacyLossDistribution``; this
module reads an attribute ``neighboring_relation`` where one is present (shuffleamp sets it on
the PLDs it builds, :func:`tag`), and otherwise asks for it explicitly.

Mechanisms given as ``dp_accounting`` events (:class:`dp_accounting.DpEvent`) are built here
under ``REPLACE_ONE`` on the caller's grid by :class:`ReplaceOneAccountant` (``dp_accounting``'s
own accountant, which :class:`shuffleamp.interop.PLDAccountant` extends with shuffled rounds):
pessimistic PLDs for the upper bound, optimistic ones (:func:`optimistic_event_pld`) for the lower
bound.

**Why an optimistic PLD of a part keeps the lower bound of a composition valid.**  The δ of a
composition at ε is :math:`E_{P}[(1 - e^{\varepsilon - \sum_i L_i})_+]` (plus the infinity mass),
with :math:`L_i` the independent privacy losses of the parts under the first distribution of each
part's pair.  ``dp_accounting``'s optimistic construction rounds every loss *down* to the grid and
drops (never adds) tail mass; each term of the expectation is non-decreasing in every
:math:`L_i`, so the composed optimistic δ is at most the δ of the composed concrete pairs, itself
at most the true total of the composition on one neighbouring pair of datasets that realises
each part's concrete pair (a user whose record feeds every mechanism; the standard setting of a
composition).  Leaving a part out is also valid: the adversary may ignore its output.  For the
Gaussian family the concrete pair is the dominating pair itself (the worst case is attained).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as _pld
from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution
from dp_accounting.privacy_accountant import NeighboringRelation
from dp_accounting.privacy_accountant import UnsupportedEventError as _DpUnsupportedEventError

from . import _validate
from .errors import ParameterError

REPLACE_ONE = NeighboringRelation.REPLACE_ONE
#: ``tail_mass_truncation`` of every composition here (the value of
#: ``shuffleamp.accounting.TAIL_MASS_TRUNCATION``; a test checks they agree).
TAIL_MASS_TRUNCATION = 1e-15
#: ``dp_accounting`` versions whose ``PLDAccountant`` source the accountants here were checked against.
CHECKED_DP_ACCOUNTING_VERSIONS = ("0.6.0",)
#: Attribute holding the relation a PLD was built under (set by :func:`tag`).
RELATION_ATTRIBUTE = "neighboring_relation"
_NAMES = {"replace_one": NeighboringRelation.REPLACE_ONE, "replace-one": NeighboringRelation.REPLACE_ONE,
          "add_or_remove_one": NeighboringRelation.ADD_OR_REMOVE_ONE,
          "add-or-remove-one": NeighboringRelation.ADD_OR_REMOVE_ONE,
          "add_remove": NeighboringRelation.ADD_OR_REMOVE_ONE, "add/remove": NeighboringRelation.ADD_OR_REMOVE_ONE,
          "replace_special": NeighboringRelation.REPLACE_SPECIAL,
          "replace-special": NeighboringRelation.REPLACE_SPECIAL}


def relation(value, parameter: str = "neighboring_relation") -> NeighboringRelation:
    """A ``dp_accounting.NeighboringRelation`` from the enum itself or its name (``"replace_one"``, ...).

    Raises
    ------
    ParameterError
        Naming ``parameter`` for anything else.
    """
    if isinstance(value, NeighboringRelation):
        return value
    if isinstance(value, str) and value.strip().lower() in _NAMES:
        return _NAMES[value.strip().lower()]
    raise ParameterError(parameter, "must be a dp_accounting.NeighboringRelation or one of 'replace_one', "
                                    f"'add_or_remove_one', 'replace_special', got {value!r}")


_PLD_HINT = ("rebuild it with neighboring_relation=REPLACE_ONE (dp_accounting's Gaussian and randomized-response "
             "PLDs support it), or pass the dp_accounting event instead")


def require_replace_one(value, parameter: str, what: str, hint: str = _PLD_HINT) -> NeighboringRelation:
    """The relation ``value`` if it is ``REPLACE_ONE``; otherwise a :class:`ParameterError` naming ``parameter``."""
    rel = relation(value, parameter)
    if rel is not REPLACE_ONE:
        raise ParameterError(parameter, f"{what} is under {rel.name}; shuffle bounds are for replace-one "
                                        f"neighbours and no sound conversion exists: {hint}")
    return rel


def tag(pld: PrivacyLossDistribution, rel: NeighboringRelation = REPLACE_ONE) -> PrivacyLossDistribution:
    """Record on ``pld`` the neighbouring relation it was built under (returns ``pld``)."""
    try:
        setattr(pld, RELATION_ATTRIBUTE, rel)
    except AttributeError:       # a PLD class with __slots__: the relation must then be given explicitly
        pass
    return pld


def pld_relation(pld) -> NeighboringRelation | None:
    """The relation recorded on ``pld`` (:func:`tag`, or a ``dp_accounting`` that records it), or None."""
    rel = getattr(pld, RELATION_ATTRIBUTE, None)
    if rel is None:
        return None
    return relation(rel, "extra_plds")


def lower_epsilon(pld, err: float, delta: float) -> float:
    """Lower bound on ε at ``delta`` from an optimistic PLD whose δ may be ``err`` too high (0 if none)."""
    v = float(pld.get_epsilon_for_delta(min(delta + err, 1.0)))
    return max(v, 0.0) if math.isfinite(v) else 0.0


def lower_delta(pld, err: float, epsilon: float) -> float:
    """Lower bound on δ at ``epsilon`` from an optimistic PLD whose δ may be ``err`` too high."""
    return max(float(pld.get_delta_for_epsilon(epsilon)) - err, 0.0)


# ---------------------------------------------------------------------------- optimistic event PLDs
def optimistic_event_pld(event, count: int, d: float) -> PrivacyLossDistribution | None:
    """Optimistic replace-one PLD of a ``dp_accounting`` leaf event composed ``count`` times, or None.

    Mirrors the pessimistic construction of ``dp_accounting.pld.PLDAccountant`` (0.6.0) with
    ``pessimistic_estimate=False`` (losses rounded down, truncated tails dropped): Gaussian (noise
    ``noise_multiplier / sqrt(count)``, as the parent), randomized response and Poisson-subsampled
    Gaussian.  Events without such a construction (truncated subsampled Gaussian, a mechanism
    with zero noise, no-op) give None: they are left out of the lower bound, which stays valid.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        A leaf event (not a composition).
    count : int
        Number of compositions (>= 1).
    d : float
        Grid step of the lower PLD (nats).

    Returns
    -------
    PrivacyLossDistribution or None
    """
    if isinstance(event, dp_event.GaussianDpEvent):
        if event.noise_multiplier <= 0:
            return None
        return _pld.from_gaussian_mechanism(event.noise_multiplier / math.sqrt(count), pessimistic_estimate=False,
                                            value_discretization_interval=d, use_connect_dots=False,
                                            neighboring_relation=REPLACE_ONE)
    if isinstance(event, dp_event.RandomizedResponseDpEvent):
        if event.num_buckets == 1 or event.noise_parameter <= 0:
            return None
        one = _pld.from_randomized_response(event.noise_parameter, event.num_buckets, pessimistic_estimate=False,
                                            value_discretization_interval=d, neighboring_relation=REPLACE_ONE)
        return one if count == 1 else one.self_compose(count)
    if (isinstance(event, dp_event.PoissonSampledDpEvent) and isinstance(event.event, dp_event.GaussianDpEvent)
            and event.sampling_probability > 0 and event.event.noise_multiplier > 0):
        one = _pld.from_gaussian_mechanism(event.event.noise_multiplier, pessimistic_estimate=False,
                                           value_discretization_interval=d, use_connect_dots=False,
                                           sampling_prob=event.sampling_probability,
                                           neighboring_relation=REPLACE_ONE)
        return one if count == 1 else one.self_compose(count)
    return None


# ---------------------------------------------------------------------------- the replace-one accountant
class UnsupportedEventError(ParameterError, _DpUnsupportedEventError):
    """An event (or a sub-event of a composition) the accountant cannot compose.

    A :class:`shuffleamp.ParameterError` naming the argument (``"event"``) and a
    ``dp_accounting.UnsupportedEventError``, so code written for either catches it.
    """


class ReplaceOneAccountant(pld_privacy_accountant.PLDAccountant):
    """``dp_accounting``'s PLD accountant under replace-one, with a certified lower bound beside it.

    The base of :class:`shuffleamp.interop.PLDAccountant` (which adds shuffled rounds); on its own
    it builds the ``dp_accounting`` events of :func:`shuffleamp.compose_rounds`' ``extra_plds``.
    ``get_epsilon`` / ``get_delta`` are the parent's.  It composes ``RandomizedResponseDpEvent``
    ``count`` times (``dp_accounting`` 0.6.0 composes it once), and keeps the parts of the lower
    bound (module docstring), built on the first lower query on the grid
    ``value_discretization_interval / lower_refine``.

    The parent keeps its PLD in the private attribute ``_pld`` and its non-private flag in
    ``_contains_non_dp_event``; :meth:`_parent_pld` is the one place that touches them
    (:data:`CHECKED_DP_ACCOUNTING_VERSIONS`; a test pins them).
    """

    def __init__(self, neighboring_relation=REPLACE_ONE, value_discretization_interval: float = 1e-4, *,
                 lower: bool = True, lower_refine: int = 1):
        require_replace_one(neighboring_relation, "neighboring_relation", "the accountant",
                            "use NeighboringRelation.REPLACE_ONE (the default)")
        d = _validate.real("value_discretization_interval", value_discretization_interval, lo=0.0, lo_open=True)
        super().__init__(REPLACE_ONE, d)
        self._parent_pld()                        # fails early if the parent's state is not as checked
        self._d = d
        self._keep_lower = bool(lower)
        self._lower_refine = _validate.count(lower_refine, "lower_refine")
        self._lower_parts: list = []
        self._lower_cache = None

    # -- the one place that touches the parent's private state (dp_accounting 0.6.0) --------------
    def _parent_pld(self, compose_with=None, *, with_flag: bool = False):
        """The parent's composed PLD (attribute ``_pld``), after composing ``compose_with`` into it;
        with ``with_flag``, also whether a non-private event was composed (``_contains_non_dp_event``)."""
        current = getattr(self, "_pld", None)
        flag = getattr(self, "_contains_non_dp_event", None)
        if not isinstance(current, _pld.PrivacyLossDistribution) or not isinstance(flag, bool):
            import importlib.metadata as md
            raise RuntimeError("shuffleamp's PLD accountant relies on dp_accounting's PLDAccountant keeping "
                               "its PLD in '_pld' and its non-private flag in '_contains_non_dp_event'; this "
                               f"dp_accounting ({md.version('dp-accounting')}) does not. Checked versions: "
                               f"{', '.join(CHECKED_DP_ACCOUNTING_VERSIONS)}")
        if compose_with is not None:
            self._pld = current = current.compose(compose_with, tail_mass_truncation=TAIL_MASS_TRUNCATION)
        return (current, flag) if with_flag else current

    # -- public ---------------------------------------------------------------------------------------
    @property
    def value_discretization_interval(self) -> float:
        """Grid step (nats) of the upper PLD; the lower PLD uses this / ``lower_refine``."""
        return self._d

    def privacy_loss_distribution(self):
        """The composed pessimistic PLD (what ``get_epsilon`` / ``get_delta`` read), tagged replace-one,
        or None if a non-private event (``NonPrivateDpEvent``, zero noise) was composed: no PLD bounds it."""
        pld, non_private = self._parent_pld(with_flag=True)
        return None if non_private else tag(pld)

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
        and any further single-part lower bound a subclass knows (:meth:`_single_lower`).
        """
        target_delta = _validate.delta(target_delta, "target_delta")
        if not self._keep_lower:
            return 0.0
        v = max([lower_epsilon(p, e, target_delta) for p, e in self._lower()[3]], default=0.0)
        v = max(v, self._single_lower(delta=target_delta))
        return min(v, float(self.get_epsilon(target_delta)))

    def get_delta_lower(self, target_epsilon: float) -> float:
        """Certified lower bound on the total δ at ``target_epsilon`` (0 if lower bounds are off);
        the largest of the same candidates as :meth:`get_epsilon_lower`."""
        target_epsilon = _validate.epsilon(target_epsilon, "target_epsilon")
        if not self._keep_lower:
            return 0.0
        v = max([lower_delta(p, e, target_epsilon) for p, e in self._lower()[3]], default=0.0)
        v = max(v, self._single_lower(epsilon=target_epsilon))
        return min(v, float(self.get_delta(target_epsilon)))

    # -- hooks for subclasses ---------------------------------------------------------------------------
    def _single_lower(self, *, epsilon=None, delta=None) -> float:
        """A further lower bound of the total ε (given ``delta``) or δ (given ``epsilon``); 0 here."""
        return 0.0

    def _lower_part(self, event, count: int, dl: float):
        """(optimistic PLD or None, number of self-compositions inside it, name) of one recorded part."""
        lo = optimistic_event_pld(event, count, dl)
        own = int(count > 1 and not isinstance(event, dp_event.GaussianDpEvent))
        return lo, own, type(event).__name__

    # -- composition ------------------------------------------------------------------------------------
    def _maybe_compose(self, event, count: int, do_compose: bool):
        if isinstance(event, (dp_event.SelfComposedDpEvent, dp_event.ComposedDpEvent)):
            return super()._maybe_compose(event, count, do_compose)     # recurses through this method
        if isinstance(event, dp_event.RandomizedResponseDpEvent) and do_compose and count > 1:
            # the parent composes it once whatever the count (dp_accounting 0.6.0)
            if event.num_buckets > 1 and event.noise_parameter > 0:
                one = _pld.from_randomized_response(event.noise_parameter, event.num_buckets,
                                                    value_discretization_interval=self._d,
                                                    neighboring_relation=REPLACE_ONE)
                self._parent_pld(one.self_compose(count, tail_mass_truncation=TAIL_MASS_TRUNCATION))
                self._compose_lower(event, count)
                return None
        result = super()._maybe_compose(event, count, do_compose)
        if result is None and do_compose:
            self._compose_lower(event, count)
        return result

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
            lo, own, name = self._lower_part(event, count, dl)
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


# ---------------------------------------------------------------------------- extras of compose_rounds
@dataclass
class Extras:
    """The checked ``extra_plds`` of :func:`shuffleamp.compose_rounds`: replace-one PLDs and events.

    Attributes
    ----------
    plds : list of PrivacyLossDistribution
        Pessimistic replace-one PLDs (upper bound only: they have no optimistic counterpart).
    events : list of dp_accounting.DpEvent
        Events, built here under ``REPLACE_ONE`` (upper and lower).
    """

    plds: list = field(default_factory=list)
    events: list = field(default_factory=list)

    @classmethod
    def check(cls, extra_plds, neighboring_relation=None) -> Extras:
        """Check the relation of every extra (module docstring); typed errors name ``extra_plds``.

        A PLD's relation is the one it records, else ``neighboring_relation``; a PLD with neither,
        one under another relation, relations that differ between PLDs, or a recorded relation
        contradicting ``neighboring_relation`` are refused.  Events need no relation (they are
        built under replace-one); an event that cannot be accounted under replace-one is refused.
        """
        if extra_plds is None:
            return cls()
        if isinstance(extra_plds, (PrivacyLossDistribution, dp_event.DpEvent)):
            extra_plds = [extra_plds]
        try:
            items = list(extra_plds)
        except TypeError as exc:
            raise ParameterError("extra_plds", "must be a sequence of dp_accounting PrivacyLossDistribution "
                                               f"or DpEvent objects, got {extra_plds!r}") from exc
        given = None if neighboring_relation is None else relation(neighboring_relation)
        out, seen = cls(), {}
        for i, item in enumerate(items):
            if isinstance(item, dp_event.DpEvent):
                out.events.append(item)
                continue
            if not isinstance(item, PrivacyLossDistribution):
                raise ParameterError("extra_plds", f"entry {i} must be a dp_accounting PrivacyLossDistribution or "
                                                   f"DpEvent, got {type(item).__name__}")
            rec = pld_relation(item)
            if rec is not None and given is not None and rec is not given:
                raise ParameterError("neighboring_relation", f"is {given.name} but extra_plds entry {i} records "
                                                             f"{rec.name}: mixed neighbouring relations")
            rel = rec if rec is not None else given
            if rel is None:
                raise ParameterError("extra_plds", f"entry {i}: dp_accounting does not record the neighbouring "
                                                   "relation of a PrivacyLossDistribution (its default is "
                                                   "add/remove-one, which shuffle bounds cannot be composed "
                                                   "with); build it with neighboring_relation=REPLACE_ONE and "
                                                   "pass neighboring_relation='replace_one', or pass the "
                                                   "dp_accounting event instead")
            seen.setdefault(rel, i)
            if len(seen) > 1:
                (ra, ia), (rb, ib) = list(seen.items())[:2]
                raise ParameterError("extra_plds", f"mixed neighbouring relations: entry {ia} is {ra.name}, "
                                                   f"entry {ib} is {rb.name}")
            require_replace_one(rel, "extra_plds", f"entry {i}")
            out.plds.append(item)
        if out.events:
            probe = ReplaceOneAccountant(value_discretization_interval=1.0, lower=False)
            for i, e in enumerate(out.events):
                try:
                    probe.check_event(e)
                except UnsupportedEventError as exc:
                    raise ParameterError("extra_plds", f"entry {i}: {exc.reason}") from exc
        return out

    def __bool__(self):
        return bool(self.plds or self.events)

    def _accountant(self, d: float, lower: bool, lower_refine: int = 1):
        acc = ReplaceOneAccountant(value_discretization_interval=d, lower=lower, lower_refine=lower_refine)
        for e in self.events:
            acc.compose(e)
        return acc

    def upper_plds(self, d: float) -> list:
        """The pessimistic PLDs to compose into the upper bound (events built on the grid ``d``)."""
        out = list(self.plds)
        if self.events:
            pld = self._accountant(d, lower=False).privacy_loss_distribution()
            if pld is None:
                raise ParameterError("extra_plds", "contains a non-private event (NonPrivateDpEvent or zero noise): "
                                                   "no finite total exists")
            out.append(pld)
        return out

    def lower_part(self, d: float, lower_refine: int):
        """(optimistic PLD of the events on the grid ``d / lower_refine`` or None, δ charged for its
        truncations, what was left out).  The events' lower bound alone is also a lower bound of
        the total (composition never decreases it); :func:`lower_epsilon` / :func:`lower_delta`
        read it."""
        left = ["extra PLD"] * len(self.plds)
        if not self.events:
            return None, 0.0, tuple(left)
        acc = self._accountant(d, lower=True, lower_refine=lower_refine)
        pld, err = acc.lower_privacy_loss_distribution()
        return pld, err, tuple(left) + tuple(acc.lower_left_out)
