"""The budget workflow over a plan: the report with its verdict, scenarios, plan-level inverse queries and
the total over days.

One δ per plan
--------------
A plan's ``[budget]`` δ is the δ of every total: each collection's total over its rounds and the grand
total for a user who takes part in every collection and round (:func:`shuffleamp.config.plan_delta`). A
collection's own ``delta`` is the δ of its per-round ε column only.  The grand total is never below a
collection's total at the same δ (:func:`shuffleamp.config.plan_total`).

Scenarios
---------
A list-valued field (``eps0 = [5.5, 5.6]``) makes the plan stand for one scenario per combination of
the lists; each scenario is evaluated on its own, with its own totals and verdict, never charged together.

Plan-level inverse queries
--------------------------
:func:`plan_max` searches one collection's ``eps0`` (largest), ``rounds`` (largest) or ``n``
(smallest) such that the plan's certified grand total (upper) stays within the budget, everything else
fixed, through the one conservative root search :func:`shuffleamp._numerics.inverse_monotone`. The
answer is a value at which the grand total was evaluated and found within the budget, so it is certified
on its own; the first infeasible value (``*_infeasible``) was evaluated and found above it.  The
feasibility test is exactly the report's: the upper bound of :func:`shuffleamp.config.plan_total` with the
collections' totals as floors.

References
----------
P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414), Theorems 13–14; V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar,
P. Manurangsi, "Connect the Dots: Tighter Discrete Approximations of Privacy Loss Distributions", PETS
2022 (composition over rounds).
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any, Sequence

from . import _reuse, _validate
from ._numerics import inverse_monotone
from .config import Plan, evaluate_plan, load_plan, plan_delta, plan_total
from .errors import OutOfRegimeError, ParameterError, PlanError
from .sweep import progress_bar

__all__ = ["PlanQueryResult", "plan_max", "report", "total_over_days", "PARAMETERS", "worst_verdict"]

#: Parameters :func:`plan_max` searches, and the direction of each answer.
PARAMETERS = {"eps0": "largest", "rounds": "largest", "n": "smallest"}
#: Default search ceilings of :func:`plan_max`.
LIMITS = {"eps0": 20.0, "rounds": 10**6, "n": 10**12}
#: Verdicts from the best to the worst (the worst scenario decides the exit status).
_ORDER = ("holds", "undecided", "exceeded")


def _as_plan(plan) -> Plan:
    if isinstance(plan, (str, os.PathLike)) or plan is None:
        return load_plan(plan)
    if not isinstance(plan, Plan):
        if isinstance(plan, (list, tuple)) and plan and all(hasattr(r, "build") for r in plan):
            return Plan(plan)
        raise ParameterError("plan", f"must be a plan (shuffleamp.config.load_plan) or a plan file, got "
                                     f"{type(plan).__name__}")
    return plan


def worst_verdict(verdicts) -> str | None:
    """The worst of several verdicts (``"exceeded"`` > ``"undecided"`` > ``"holds"``); None if all are None."""
    vs = [v for v in verdicts if v is not None]
    return max(vs, key=_ORDER.index) if vs else None


def _evaluate_one(plan: Plan, method: str, rtol: float, tick) -> dict:
    with _reuse.scope():          # the grand total reuses the certified profiles the collections' totals computed
        results = evaluate_plan(plan, method=method, rtol=rtol, progress=tick)
        total = plan_total(plan, results=results) if method == "optimal" else None
    tick()
    return {"collections": results, "total": total}


def report(plan, *, method: str = "optimal", rtol: float = 1e-3, progress: bool | None = None) -> dict:
    """Evaluate a plan: every collection per round and in total, the grand total and its verdict.

    Parameters
    ----------
    plan : Plan or path-like or None
        A plan (:func:`shuffleamp.config.load_plan`) or a plan file; None is the plan shipped with the package.
    method : {"optimal", "clone"}
        Method of the per-round ε (totals need ``"optimal"``).
    rtol : float
        Accuracy of the discretised engines.
    progress : bool or None
        A tqdm bar on stderr: None (default) on a terminal only, True always, False never.

    Returns
    -------
    dict
        ``delta`` (the plan's δ: of every total), ``budget``, ``collections`` (:func:`evaluate_plan`),
        ``total`` (:func:`plan_total`), ``verdict`` (``"holds"``, ``"exceeded"``, ``"undecided"`` or
        None without a budget; ``"undecided"`` also when the budget was not checked, e.g. with
        ``method="clone"``) and ``scenarios``: None, or one ``{"index", "values", "collections", "total",
        "holds", "verdict"}`` per scenario (then ``collections`` and ``total`` are None and ``verdict``
        is the worst scenario's).

    Raises
    ------
    PlanError
        A malformed plan; ShuffleampError from an evaluation, with a note naming the row.
    """
    plan = _as_plan(plan)
    plans = [sc.plan for sc in plan.scenarios] if plan.scenarios else [plan]
    units = sum(len(p) + 1 for p in plans)
    with progress_bar(units, progress=progress, desc="report", unit="step") as bar:
        def tick():
            bar.update(1)
        evaluated = [_evaluate_one(p, method, rtol, tick) for p in plans]

    def check(ev):
        if plan.budget is None:
            return None
        return ev["total"]["verdict"] if ev["total"] is not None else "undecided"

    out = {"delta": plan_delta(plan), "budget": plan.budget, "collections": None, "total": None,
           "verdict": None, "scenarios": None}
    if plan.scenarios:
        out["scenarios"] = [{"index": sc.index, "values": dict(sc.values), "collections": ev["collections"],
                             "total": ev["total"], "holds": None if ev["total"] is None else ev["total"]["holds"],
                             "verdict": check(ev)} for sc, ev in zip(plan.scenarios, evaluated)]
        out["verdict"] = worst_verdict(s["verdict"] for s in out["scenarios"])
    else:
        out.update(evaluated[0])
        out["verdict"] = check(evaluated[0])
    return out


# --------------------------------------------------------------------------- plan-level inverse queries


@dataclasses.dataclass(frozen=True)
class PlanQueryResult:
    """Answer of :func:`plan_max`.

    Attributes
    ----------
    parameter : {"eps0", "rounds", "n"}
    collection : str
    value : float or int
        The answer: the largest ``eps0`` / ``rounds`` or the smallest ``n`` at which the plan's certified
        grand total (upper) was evaluated and is within the budget.
    infeasible : float or int or None
        The nearest evaluated value past the answer whose grand total exceeds the budget (None if the
        search ceiling itself fits: then ``ceiling_reached``).
    total : dict
        :func:`shuffleamp.config.plan_total` of the plan at the answer (upper, lower, δ, verdict).
    budget : dict
    evaluations : int
        Number of grand totals evaluated by the search.
    ceiling_reached : bool
    """

    parameter: str
    collection: str
    value: Any
    infeasible: Any
    total: dict
    budget: dict
    evaluations: int
    ceiling_reached: bool

    def to_dict(self) -> dict:
        """JSON-ready dict: the answer under ``eps0`` / ``rounds`` / ``n`` with ``<parameter>_infeasible``."""
        p = self.parameter
        return {"quantity": p, "collection": self.collection, p: self.value, f"{p}_infeasible": self.infeasible,
                "direction": PARAMETERS[p], "total": self.total, "budget": self.budget,
                "delta": self.budget["delta"], "evaluations": self.evaluations,
                "ceiling_reached": self.ceiling_reached,
                "guarantee": f"certified: the plan's grand total (upper) at {p} = {self.value} is <= the budget "
                             f"epsilon at the budget delta",
                "units": {"epsilon": "nats", "eps0": "nats"}}

    def __repr__(self):
        return (f"PlanQueryResult({self.parameter}={self.value!r} for {self.collection!r}, "
                f"{self.parameter}_infeasible={self.infeasible!r}, total_upper={self.total['epsilon_upper']:.6g})")


def _collection(plan: Plan, name) -> tuple[int, Any]:
    if not isinstance(name, str):
        raise ParameterError("collection", f"must be a collection name (string), got {name!r}")
    for i, r in enumerate(plan):
        if r.name == name:
            return i, r
    raise ParameterError("collection", f"unknown collection {name!r}; the plan has: "
                                       f"{', '.join(repr(r.name) for r in plan)}")


def _variant(r, parameter: str, value):
    if parameter == "eps0":
        return dataclasses.replace(r, eps0=float(value))
    if parameter == "rounds":
        return dataclasses.replace(r, rounds=int(value))
    return dataclasses.replace(r, n=int(value))


def _check_parameter(r, parameter: str) -> None:
    if parameter not in PARAMETERS:
        raise ParameterError("parameter", f"must be one of {', '.join(PARAMETERS)}, got {parameter!r}")
    if parameter == "eps0" and (r.eps0 is None or r.components is not None or r.groups is not None
                                or r.mechanism == "matrix"):
        raise ParameterError("parameter", f"collection {r.name!r} ({r.describe_mechanism()}) has no eps0 of its "
                                          "own to vary (matrix, composed and population mechanisms fix it)")
    if parameter == "eps0" and r.schedule is not None:
        raise ParameterError("parameter", f"collection {r.name!r} is a gradual-release schedule; edit its "
                                          "schedule instead of searching eps0")
    if parameter == "rounds" and r.schedule is not None:
        raise ParameterError("parameter", f"collection {r.name!r} is a gradual-release schedule (no rounds)")
    if parameter == "n" and r.groups is not None:
        raise ParameterError("parameter", f"collection {r.name!r} is a population (its n is the sum of its "
                                          "group counts)")


def plan_max(plan, collection: str, parameter: str, *, limit=None, rel_tol: float = 1e-4,
             progress: bool | None = None) -> PlanQueryResult:
    r"""The extreme value of one collection's parameter such that the plan's certified grand total fits its budget.

    ``eps0`` and ``rounds`` give the largest value, ``n`` the smallest, with every other field of the plan
    fixed.  Each candidate is judged by the report's own check: the certified upper bound of the grand total
    (:func:`shuffleamp.config.plan_total`, with the collections' totals at the plan's δ as floors) is <= the
    budget's ε.  The search is :func:`shuffleamp._numerics.inverse_monotone` (log-scale bisection for
    ``eps0``, exact integer search for ``rounds`` and ``n``); each evaluated candidate is cached for the
    query.

    Parameters
    ----------
    plan : Plan or path-like
        A plan with a ``[budget]`` table and no list-valued fields.
    collection : str
        Name of the collection whose parameter is searched.
    parameter : {"eps0", "rounds", "n"}
        The parameter searched.
    limit : float or int, optional
        Search ceiling: ``eps0`` at most 20 nats by default, ``rounds`` 10⁶, ``n`` 10¹² (returned, with
        ``ceiling_reached``, if it fits).
    rel_tol : float, default 1e-4
        ``eps0`` only: relative width of the final bracket (the answer and ``eps0_infeasible`` are within
        this factor of each other).
    progress : bool or None
        A tqdm bar on stderr (None: on a terminal only).

    Returns
    -------
    PlanQueryResult
        The answer, the first infeasible value, and the grand total at the answer (with its lower bound
        and verdict).

    Raises
    ------
    ParameterError
        ``'collection'`` (unknown name), ``'parameter'`` (not a number of that collection, e.g. ``eps0`` of
        a matrix), ``'budget'`` (the plan has no budget), ``'plan'`` (a plan with scenarios), ``'limit'``.
    OutOfRegimeError
        No value fits: the rest of the plan alone exceeds the budget (``eps0`` down to 1e-6 nats, one round,
        or ``n`` up to the limit).
    """
    plan = _as_plan(plan)
    if plan.budget is None:
        raise PlanError("a plan-level query needs a [budget] table (epsilon, delta) to search against",
                        field="budget", source=plan.source)
    if plan.scenarios:
        keys = sorted({k for sc in plan.scenarios for k in sc.values})
        raise ParameterError("plan", f"has {len(plan.scenarios)} scenarios (list-valued fields "
                                     f"{', '.join(keys)}); a plan-level query searches one plan: give one value "
                                     "per field")
    index, row = _collection(plan, collection)
    _check_parameter(row, parameter)
    rel_tol = _validate.real("rel_tol", rel_tol, lo=1e-9, hi=0.5)
    if parameter == "eps0":
        ceiling = _validate.real("limit", LIMITS["eps0"] if limit is None else limit, lo=0.0, lo_open=True,
                                 hi=_validate.EPS0_MAX)
    else:
        ceiling = _validate.count(LIMITS[parameter] if limit is None else limit, "limit")
    budget = plan.budget
    d = float(budget["delta"])
    eps = float(budget["epsilon"])
    fixed = [r for i, r in enumerate(plan) if i != index]
    fixed_totals = None
    cache: dict = {}

    # one evaluation scope for the whole search: the collections that do not change keep their certified
    # profile points from one probe to the next (the same numbers, computed once)
    with _reuse.scope():
        with progress_bar(None, progress=progress, desc=f"{parameter} for {row.name!r}", unit="total") as bar:
            def rows_at(x) -> Plan:
                rows = Plan(list(plan[:index]) + [_variant(row, parameter, x)] + list(plan[index + 1:]))
                rows.budget, rows.source = budget, plan.source
                return rows

            def upper(x):
                # the report's grand-total upper bound: the composed total, floored by every collection's total
                # (plan_total); the floors are evaluated only where they can change the verdict
                nonlocal fixed_totals
                if x not in cache:
                    rows = rows_at(x)
                    value = plan_total(rows, lower=False)["epsilon_upper"]
                    if value <= eps:
                        if fixed_totals is None:       # the other collections' totals: evaluated once per query
                            fixed_totals = evaluate_plan(fixed, delta=d, lower_totals=False)
                        own = evaluate_plan([rows[index]], delta=d, lower_totals=False)
                        value = max([value] + [t["total"]["epsilon_upper"] for t in fixed_totals + own])
                    cache[x] = value
                    bar.update(1)
                return cache[x], None

            x0 = getattr(row, parameter)
            if parameter == "eps0":
                if upper(x0)[0] <= eps:
                    lo, hi = x0, min(2.0 * x0, ceiling)
                else:
                    hi, lo = x0, x0 / 2.0
                    while upper(lo)[0] > eps:
                        if lo <= 1e-6:
                            raise OutOfRegimeError(f"no eps0 >= 1e-6 nats of collection {row.name!r} fits the budget: "
                                                   "the rest of the plan alone exceeds it")
                        hi, lo = lo, max(lo / 4.0, 1e-6)
                # the total is smooth in eps0: brentq on log(total) shrinks the bracket before the bisection
                br = inverse_monotone(upper, eps, lo, hi, increasing=True, side="upper", rel_tol=rel_tol,
                                      scale="linear", accelerate=True, expand=True, limit=ceiling)
            elif parameter == "rounds":
                if upper(1)[0] > eps:
                    raise OutOfRegimeError(f"not even one round of collection {row.name!r} fits the budget")
                br = inverse_monotone(upper, eps, 1, min(max(2, x0), ceiling), increasing=True, side="upper",
                                      scale="integer", expand=True, limit=ceiling)
            else:
                if upper(x0)[0] <= eps:
                    hi, lo = x0, max(1, x0 // 4)
                    while lo > 1 and upper(lo)[0] <= eps:
                        hi, lo = lo, max(1, lo // 4)
                    if upper(lo)[0] <= eps:                     # lo == 1 fits
                        hi = lo
                else:
                    lo, hi = x0, min(4 * x0, ceiling)
                br = inverse_monotone(upper, eps, lo, hi, increasing=False, side="upper", scale="integer",
                                      expand=True, expand_factor=4, limit=ceiling)
                if br.feasible is None:
                    raise OutOfRegimeError(f"even n = {ceiling} users in collection {row.name!r} do not bring the "
                                           "plan within its budget")
        value = br.feasible
        if parameter != "eps0":
            value = int(value)
        infeasible = br.infeasible
        if infeasible is not None and parameter != "eps0":
            infeasible = int(infeasible)
        rows = rows_at(value)
        total = plan_total(rows, results=evaluate_plan(rows))
    return PlanQueryResult(parameter, row.name, value, infeasible, total, dict(budget), len(cache),
                           infeasible is None and parameter != "n" and value == ceiling)


# --------------------------------------------------------------------------- the total over days


def _at_day(r, day: int):
    """Collection ``r`` as it stands after ``day`` days (one round a day; a schedule releases one value a day)."""
    if r.schedule is not None:
        t = min(day, len(r.schedule))
        return dataclasses.replace(r, schedule=r.schedule[:t], eps0=r.schedule[t - 1])
    return dataclasses.replace(r, rounds=min(day, r.rounds))


def _length(r) -> int:
    return len(r.schedule) if r.schedule is not None else r.rounds


def day_grid(plan: Sequence, points: int = 24) -> list[int]:
    """Days at which the total is evaluated: 1, every collection's last day, the plan's last day and about
    ``points`` log-spaced days in between (the total only changes at integers)."""
    last = max(_length(r) for r in plan)
    days = {1, last, *(_length(r) for r in plan)}
    if last > 1:
        days |= {int(round(math.exp(i * math.log(last) / (points - 1)))) for i in range(points)}
    return sorted(d for d in days if 1 <= d <= last)


def total_over_days(plan, *, days: Sequence[int] | None = None, points: int = 24,
                    progress: bool | None = None) -> dict:
    """The plan's grand total ε and each collection's contribution against the day, at the plan's δ.

    Day t counts min(t, rounds) rounds of each collection (one shuffled round a day; a gradual-release
    schedule has released its first t values, as private as one round at the t-th).

    Parameters
    ----------
    plan : Plan or path-like
        A plan without list-valued fields.
    days : sequence of int, optional
        Days to evaluate (default :func:`day_grid`).
    points : int, default 24
        Number of log-spaced days of the default grid.
    progress : bool or None
        A tqdm bar on stderr (None: on a terminal only).

    Returns
    -------
    dict
        ``days`` (list of int), ``delta``, ``budget``, ``upper`` and ``lower`` (certified grand total per day,
        nats), ``collections``: ``{name: list of certified upper totals (nats) per day}``, ``units``.

    Raises
    ------
    ParameterError
        ``'plan'`` for a plan with scenarios, ``'days'`` for days outside 1 … the plan's last day.
    """
    plan = _as_plan(plan)
    if plan.scenarios:
        raise ParameterError("plan", f"has {len(plan.scenarios)} scenarios; draw the total over days of one "
                                     "scenario (scenario.plan)")
    points = _validate.count(points, "points", minimum=2)
    last = max(_length(r) for r in plan)
    if days is None:
        days = day_grid(plan, points)
    else:
        days = sorted({_validate.count(t, "days") for t in days})
        if days[-1] > last:
            raise ParameterError("days", f"must lie in 1 ... {last} (the plan's last day), got {days[-1]}")
    d = plan_delta(plan)
    upper, lower = [], []
    per = {r.name: [] for r in plan}
    with progress_bar(len(days), progress=progress, desc="total over days", unit="day") as bar:
        for t in days:
            rows = Plan(_at_day(r, t) for r in plan)
            rows.budget, rows.source = plan.budget, plan.source
            results = evaluate_plan(rows, delta=d, lower_totals=False, per_round=False)
            for r, res in zip(rows, results):
                per[r.name].append(res["total"]["epsilon_upper"])
            tot = plan_total(rows, delta=d, results=results)
            upper.append(tot["epsilon_upper"])
            lower.append(tot["epsilon_lower"])
            bar.update(1)
    return {"days": list(days), "delta": d, "budget": plan.budget, "upper": upper, "lower": lower,
            "collections": per, "units": {"epsilon": "nats", "day": "one shuffled round of every collection"}}
