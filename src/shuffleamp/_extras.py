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
under ``REPLACE_ONE`` on the caller's grid, through :class:`shuffleamp.interop.PLDAccountant`:
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
from dp_accounting.pld import privacy_loss_distribution as _pld
from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution
from dp_accounting.privacy_accountant import NeighboringRelation

from .errors import ParameterError

REPLACE_ONE = NeighboringRelation.REPLACE_ONE
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
            from .interop import PLDAccountant, UnsupportedEventError
            probe = PLDAccountant(value_discretization_interval=1.0, lower=False)
            for i, e in enumerate(out.events):
                try:
                    probe.check_event(e)
                except UnsupportedEventError as exc:
                    raise ParameterError("extra_plds", f"entry {i}: {exc.reason}") from exc
        return out

    def __bool__(self):
        return bool(self.plds or self.events)

    def _accountant(self, d: float, lower: bool, lower_refine: int = 1):
        from .interop import PLDAccountant
        acc = PLDAccountant(value_discretization_interval=d, lower=lower, lower_refine=lower_refine)
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

    def lower_part(self, d: float):
        """(optimistic PLD of the events on the grid ``d / LOWER_REFINE`` or None, δ charged for its
        truncations, what was left out).  The events' lower bound alone is also a lower bound of
        the total (composition never decreases it); :func:`lower_epsilon` / :func:`lower_delta`
        read it."""
        left = ["extra PLD"] * len(self.plds)
        if not self.events:
            return None, 0.0, tuple(left)
        from .accounting import LOWER_REFINE
        acc = self._accountant(d, lower=True, lower_refine=LOWER_REFINE)
        pld, err = acc.lower_privacy_loss_distribution()
        return pld, err, tuple(left) + tuple(acc.lower_left_out)
