"""Configuration: mechanisms from plain specifications, and plan files.

Every mechanism built from data (command line, plan rows, component tables) goes through
:func:`mechanism_from_spec`; composed specifications are validated once, in :func:`from_config`.

Plan files
----------
A plan is a list of data collections whose shuffled privacy is reported together.

A plan is a TOML (read with :mod:`tomllib`) or JSON document holding an array of
*collections*.  In TOML each collection is one ``[[collection]]`` table::

    [[collection]]
    name = "emoji usage"
    mechanism = "krr"       # krr, blh, rappor, oue, hr, laplace, matrix
    k = 10                  # the parameters the mechanism declares: k, d, matrix, or a plugin's own
    eps0 = 4.0              # local ε0 of the randomizer, in nats
    n = 1_000_000           # number of users whose reports are shuffled together
    delta = 1e-8            # δ of the per-round ε (default: the [budget] δ)
    rounds = 365            # shuffled rounds one user takes part in (default 1)
    comment = "what this row models"   # optional

    [budget]                # optional: the total one user may spend
    epsilon = 1.0           # nats
    delta = 1e-9            # the δ of every total (each collection's and the grand total)

The fields a mechanism takes are the parameters it declares (``Mechanism.param_specs``): a mechanism
registered by a plugin (entry-point group ``shuffleamp.mechanisms``) takes its own fields in plans
too (e.g. ``mechanism = "ksubset"``, ``k = 5``, ``s = 2``); a required one left out is an error naming it.

A JSON plan is either ``{"collection": [ {...}, ... ], "budget": {...}}`` or a bare list of row objects.
The schema (every key, type, unit and default) is in the documentation's "Plan files" page.

One δ per plan: the ``[budget]`` δ (without a budget, the smallest row δ; :func:`plan_delta`) is the δ of
every total; a row's ``delta`` is the δ of its per-round ε only.

``eps0``, ``n``, ``delta``, ``k``, ``d``, ``q``, ``rounds`` and the other numeric parameters a mechanism
declares may be lists: the plan then stands for one
*scenario* per combination of the lists over every row (a product, the last field varying fastest),
each a plan of its own (:class:`Scenario`, ``Plan.scenarios``) evaluated separately, never charged to
one budget together; e.g. ``eps0 = [1, 2, 4]`` and ``n = [1000, 1_000_000]`` give six scenarios with
values ``{"emoji usage.eps0": 1, "emoji usage.n": 1000}``, ....  More than :data:`MAX_SCENARIOS` are
refused (a PlanError naming the list-valued keys and the count).

``matrix`` is either the path of a CSV file (rows are inputs; a relative path is
resolved against the directory of the plan file) or an inline array of rows.
``eps0`` may be omitted for ``mechanism = "matrix"`` (the matrix's tight ε0 is used).

Composed randomizers (:mod:`shuffleamp.compose`) use ``mechanism = "joint"``,
``"parallel"`` or ``"subsample"`` and a ``components`` array of mechanism tables (each with
its own ``eps0``; no row-level ``eps0``, ``k``, ``d`` or ``matrix``)::

    [[collection]]
    name = "two answers in one report"
    mechanism = "joint"
    components = [{mechanism = "krr", k = 10, eps0 = 0.5},
                  {mechanism = "krr", k = 10, eps0 = 0.5}]
    n = 100_000
    delta = 1e-8

    [[collection]]
    name = "one of two questions"
    mechanism = "parallel"       # weights: a 'weight' per component, or weights = [0.5, 0.5]
    components = [{weight = 0.5, mechanism = "krr", k = 10, eps0 = 1.0},
                  {weight = 0.5, mechanism = "blh", eps0 = 1.0}]
    n = 100_000
    delta = 1e-8

    [[collection]]
    name = "10% sample"
    mechanism = "subsample"
    q = 0.1
    components = [{mechanism = "krr", k = 10, eps0 = 1.0}]
    n = 100_000
    delta = 1e-8

A personalized population (users with different randomizers, :func:`shuffleamp.population`)
uses ``mechanism = "population"`` and a ``groups`` array; each group is a mechanism table with
its ``count`` of users, or with a ``fraction`` of the row's ``n`` (fractions must add up to 1)::

    [[collection]]
    name = "opt-in levels"
    mechanism = "population"
    delta = 1e-9
    groups = [{count = 60_000_000, mechanism = "krr", k = 10, eps0 = 0.5},
              {count = 40_000_000, mechanism = "krr", k = 10, eps0 = 2.0}]
    # or: n = 100_000_000 and {fraction = 0.6, ...}, {fraction = 0.4, ...}

The report gives the worst group's ε on the row and one line per group.

A bad component is reported with its 1-based index and field, e.g.
``plan row 2 ('x'): field 'components': component 2: field 'k': must be an integer >= 2, got 1``.

Every value is checked when the plan is loaded, by :mod:`shuffleamp._validate` and
:func:`shuffleamp.mechanisms.make`; a problem raises :class:`PlanError`, whose message
names the row (1-based index and name) and the field, for example
``plan row 3 ('emoji'): field 'eps0': must be > 0.0, got -1.0``.
"""

from __future__ import annotations

import itertools
import json
import math
import numbers
import os
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from . import _reuse, _validate
from ._registry import COMPOSED
from .errors import ComponentError, ParameterError, PlanError, ShuffleampError
from .results import decimal_text

__all__ = ["Collection", "Plan", "Scenario", "plan_total", "plan_delta", "verdict", "format_scenarios", "MAX_SCENARIOS", "PlanError", "ComponentError", "DEFAULT_PLAN", "COMPOSED", "load_plan", "parse_plan",
           "evaluate_plan", "format_table", "mechanism_from_spec", "parse_component_spec", "from_config",
           "population_from_specs", "population_from_tables"]

#: Names of the composed mechanisms (CLI ``--mechanism`` and plan ``mechanism`` values).
#: Fields of a simple mechanism that a composed specification must not have (they go in each component).
_SIMPLE_FIELDS = ("eps0", "k", "d", "matrix")

#: Resource name (inside the ``shuffleamp`` package) of the plan used when none is given.
DEFAULT_PLAN = "data/default_plan.toml"

_REQUIRED = ("name", "mechanism", "n")
_MECH_PARAMS = ("k", "d", "matrix")
_COMPOSED_PARAMS = ("components", "weights", "q")
_KNOWN = ("name", "mechanism", "eps0", "n", "delta", *_MECH_PARAMS, *_COMPOSED_PARAMS, "groups", "rounds", "schedule",
          "comment")
#: Fields of the optional top-level ``[budget]`` table.
_BUDGET_FIELDS = ("epsilon", "delta")


@dataclass(frozen=True)
class Collection:
    """One validated row of a plan.

    Attributes
    ----------
    row : int
        1-based position of the row in its plan.
    name : str
        Label of the collection (unique within the plan).
    mechanism : str
        Mechanism name, a key of :data:`shuffleamp.mechanisms.MECHANISMS`.
    eps0 : float or None
        Local ε0 (nats); None only for ``mechanism = "matrix"`` (use the matrix's tight ε0).
    n : int
        Number of shuffled users.
    delta : float
        Target δ in (0, 1).
    k, d : int or None
        Mechanism parameters (``k`` for k-RR, ``d`` the domain size; None if not given).
    matrix : str or tuple of tuple of float or None
        CSV path (already resolved against the plan's directory) or inline matrix rows.
    comment : str
        Free text saying what the row models.
    components, weights, q
        Composed mechanisms only: component tables, parallel weights, sampling probability.
    rounds : int
        Number of shuffled rounds of this collection one user takes part in (default 1).
    schedule : tuple of float or None
        Gradual release of k-RR (``mechanism = "krr"`` only): the non-decreasing ε0 of the
        successive releases; the collection's mechanism is k-RR at the last one.
    groups : tuple of dict or None
        ``mechanism = "population"`` only: the group tables, each with its ``count`` (resolved from
        ``fraction`` at load time) and mechanism fields.
    other_params : tuple of (str, object)
        The row's values of the other parameters its mechanism declares (``Mechanism.param_specs``,
        e.g. ``s`` of a plugin's k-subset mechanism), checked against the declaration.
    """

    row: int
    name: str
    mechanism: str
    eps0: float | None
    n: int
    delta: float
    k: int | None = None
    d: int | None = None
    matrix: str | tuple[tuple[float, ...], ...] | None = None
    comment: str = ""
    components: tuple | None = None
    weights: tuple[float, ...] | None = None
    q: float | None = None
    rounds: int = 1
    schedule: tuple[float, ...] | None = None
    groups: tuple | None = None
    other_params: tuple = ()

    def params(self) -> dict[str, Any]:
        """Mechanism parameters that were given, in a stable order.

        Returns
        -------
        dict
            Subset of ``k``, ``d``, ``matrix`` (the inline matrix as a tuple of rows), then the other
            parameters the mechanism declares (``other_params``), in the row's order.
        """
        out = {key: getattr(self, key) for key in _MECH_PARAMS if getattr(self, key) is not None}
        out.update(self.other_params)
        return out

    def describe_mechanism(self) -> str:
        """Short human-readable mechanism label, e.g. ``"rappor (d=128)"``.

        Returns
        -------
        str
        """
        if self.components is not None:
            return _describe_composed(self.mechanism, self.components, self.weights, self.q)
        if self.groups is not None:
            kinds = sorted({str(g.get("mechanism")) for g in self.groups})
            return f"population ({len(self.groups)} groups: {', '.join(kinds)})"
        bits = []
        for key, value in self.params().items():
            if key == "matrix" and not isinstance(value, str):
                value = f"{len(value)}x{len(value[0])} inline"
            bits.append(f"{key}={value}")
        return f"{self.mechanism} ({', '.join(bits)})" if bits else self.mechanism

    def build(self):
        """Construct the mechanism with :func:`shuffleamp.mechanisms.make`.

        Returns
        -------
        Mechanism

        Raises
        ------
        PlanError
            If the mechanism rejects its parameters (the field is the parameter it names).
        """
        import numpy as np

        if self.groups is not None:
            try:
                return population_from_tables(self.groups)
            except ComponentError as exc:
                raise PlanError(str(exc), row=self.row, name=self.name, field="groups") from exc
            except ParameterError as exc:
                raise PlanError(exc.detail, row=self.row, name=self.name, field="groups") from exc
        if self.components is not None:
            try:
                return from_config(self.mechanism, components=list(self.components),
                                   weights=None if self.weights is None else list(self.weights), q=self.q)
            except ComponentError as exc:
                raise PlanError(str(exc), row=self.row, name=self.name, field="components") from exc
            except ParameterError as exc:
                raise PlanError(exc.detail, row=self.row, name=self.name, field=exc.parameter) from exc
        kwargs = {}
        for key, value in self.params().items():
            kwargs[key] = np.array(value, dtype=np.float64) if key == "matrix" and not isinstance(value, str) else value
        if self.eps0 is not None:
            kwargs["eps0"] = self.eps0
        try:
            return mechanism_from_spec({"mechanism": self.mechanism, **kwargs})
        except ParameterError as exc:
            raise PlanError(exc.detail, row=self.row, name=self.name, field=exc.parameter) from exc


class Plan(list):
    """The validated rows of a plan (a list of :class:`Collection`) and its optional budget.

    Attributes
    ----------
    budget : dict or None
        ``{"epsilon": float, "delta": float}`` from the plan's ``[budget]`` table: the total (ε, δ)
        one user may spend over all collections; None if the plan has none.
    source : str or None
        Where the plan came from (file name or ``"<default plan>"``).
    """

    budget: dict | None = None
    source: str | None = None
    #: None for a plan without list-valued fields; else every :class:`Scenario`, in order.
    scenarios: tuple | None = None

    @property
    def delta(self) -> float:
        """The plan's δ: the δ of every total (each collection's and the grand total).

        The ``[budget]`` table's ``delta`` when the plan has one, else the smallest collection ``delta``.
        """
        return plan_delta(self)


@dataclass(frozen=True)
class Scenario:
    """One combination of the values of a plan's list-valued fields.

    Attributes
    ----------
    index : int
        1-based position among the plan's scenarios.
    values : dict
        ``{"<collection>.<field>": value}`` for every list-valued field, e.g. ``{"histogram.eps0": 5.5}``.
    plan : Plan
        The plan with these values (collections keep their names; same budget).
    """

    index: int
    values: dict
    plan: "Plan"

    def label(self) -> str:
        """``"histogram.eps0=5.5, flag.n=1000"``."""
        return ", ".join(f"{k}={_value_text(v)}" for k, v in self.values.items())


# --------------------------------------------------------------------------- specifications
def mechanism_from_spec(spec: Mapping):
    """Build any mechanism from a plain specification (the one entry point for data-defined mechanisms).

    Parameters
    ----------
    spec : mapping
        ``{"mechanism": name, **parameters}``.  Simple mechanisms take the parameters of
        :func:`shuffleamp.mechanisms.make` (``eps0``, ``k``, ``d``, ``matrix``); composed ones
        (``"joint"``, ``"parallel"``, ``"subsample"``) take ``components`` (tables, or
        ``[WEIGHT:]NAME:key=value`` strings as on the command line), ``weights``, ``q``, ``distances``.

    Returns
    -------
    Mechanism

    Raises
    ------
    ParameterError
        Unknown mechanism, a parameter the mechanism does not take (named), or a bad value;
        :class:`~shuffleamp.errors.ComponentError` naming the component and field.
    """
    from . import gaussian  # noqa: F401  (registers the randomizers beyond pure LDP)
    from .mechanisms import make, registry

    MECHANISMS = registry()
    if not isinstance(spec, Mapping):
        raise ParameterError("mechanism", f"must be a table of fields, got {type(spec).__name__}")
    params = dict(spec)
    name = params.pop("mechanism", None)
    if not isinstance(name, str) or not name.strip():
        raise ParameterError("mechanism", f"missing or not a string (got {name!r})")
    key = name.strip().lower()
    from .compose import COMPOSED_CLASSES

    composed_fields = tuple(dict.fromkeys(p.name for c in COMPOSED_CLASSES.values() for p in c.param_specs))
    if key in COMPOSED:
        for f in _SIMPLE_FIELDS:
            if params.get(f) is not None:
                raise ParameterError(f, f"not used by mechanism {key!r}; give it inside each component "
                                        "(e.g. krr:k=10:eps0=0.5)")
        for f in params:
            if f not in composed_fields:
                own = ", ".join(p.name for p in COMPOSED_CLASSES[key].param_specs)
                raise ParameterError(f, f"not a field of mechanism {key!r} (it takes {own}; a component's own "
                                        "parameters go inside each component)")
        comps = params.pop("components", None)
        if isinstance(comps, (list, tuple)):
            comps = [_spec_dict(c, i, weighted=key == "parallel") if isinstance(c, str) else c
                     for i, c in enumerate(comps, start=1)]
        return from_config(key, components=comps, **params)
    for f in composed_fields:
        if params.get(f) is not None:
            raise ParameterError(f, "only used by mechanism 'joint', 'parallel' or 'subsample' "
                                    f"(only for composed mechanisms, not {key!r})")
    if key not in MECHANISMS:
        raise ParameterError("mechanism", f"unknown mechanism {name!r}; expected one of "
                                          f"{sorted(set(MECHANISMS) | set(COMPOSED))}")
    for k, v in params.items():
        if isinstance(v, bool):
            raise ParameterError(k, f"must be a number, got {v!r}")
    return make(key, **params)


def _declaration(mechanism: Any) -> dict:
    """``{name: Parameter}`` declared by the registered mechanism ``mechanism`` (empty if unknown or composed)."""
    from . import gaussian  # noqa: F401  (registers the randomizers beyond pure LDP)
    from .mechanisms import registry

    if not isinstance(mechanism, str):
        return {}
    cls = registry().get(mechanism.strip().lower())
    return {} if cls is None else {p.name: p for p in cls.param_specs}


def _spec_value(text: str, name: str, declared: Mapping | None = None):
    """A ``key=value`` value of a component spec: read by the mechanism's declaration when it declares
    ``name`` (:meth:`~shuffleamp._validate.Parameter.parse`), else by
    :func:`~shuffleamp._validate.parse_number` (``none`` is None), text that is no number kept as text."""
    decl = (declared or {}).get(name)
    if decl is not None:
        return decl.parse(text)
    try:
        return _validate.parse_number(text, name, none=True)
    except ParameterError as exc:
        if "expected a number" in exc.reason:
            return text.strip()
        raise


def _spec_dict(text: str, index: int, *, weighted: bool = False) -> dict:
    """``[WEIGHT:]NAME[:key=value]...`` as a component table (``weight`` included when ``weighted``)."""
    parts = [p.strip() for p in str(text).split(":")]
    out: dict = {}
    if weighted:
        if len(parts) < 2:
            raise ComponentError(index, "weight", f"expected WEIGHT:NAME[:key=value...], got {text!r}")
        try:
            out["weight"] = float(parts[0])
        except ValueError:
            raise ComponentError(index, "weight", f"must be a number, got {parts[0]!r} "
                                                  "(parallel components are WEIGHT:NAME:key=value...)") from None
        parts = parts[1:]
    out["mechanism"] = parts[0]
    declared = _declaration(parts[0])
    for p in parts[1:]:
        if not p:
            continue
        if "=" not in p:
            raise ComponentError(index, "spec", f"expected key=value, got {p!r}")
        k, v = p.split("=", 1)
        try:
            out[k.strip()] = _spec_value(v, k.strip(), declared)
        except ParameterError as exc:
            raise ComponentError.wrap(index, exc) from exc
    return out


def parse_component_spec(text: str, index: int, *, weighted: bool = False):
    """Parse a CLI component specification ``[WEIGHT:]NAME[:key=value]...``.

    Parameters
    ----------
    text : str
        E.g. ``"krr:k=10:eps0=0.5"`` or, with ``weighted=True``, ``"0.5:krr:k=10:eps0=1"``.
        ``d=none`` (or omitting ``d``) selects the asymptotic BLH / RAPPOR / OUE.
    index : int
        1-based component index (for error messages).
    weighted : bool
        The first field is the weight (parallel composition).

    Returns
    -------
    Mechanism or (float, Mechanism)

    Raises
    ------
    ComponentError
        ``component i: field 'f': reason``.
    """
    spec = _spec_dict(text, index, weighted=weighted)
    weight = spec.pop("weight", None)
    mech = _make_component(index, spec)
    return (weight, mech) if weighted else mech


def _make_component(index: int, spec: Mapping):
    if not isinstance(spec, Mapping):
        raise ComponentError(index, "mechanism", f"must be a table of fields, got {type(spec).__name__}")
    try:
        return mechanism_from_spec(spec)
    except ParameterError as exc:
        raise ComponentError.wrap(index, exc) from exc


def population_from_tables(groups, *, field: str = "groups"):
    """Build a population (:func:`shuffleamp.population`) from group tables.

    Parameters
    ----------
    groups : sequence of mapping
        ``{"count": n_g, "mechanism": name, **parameters}`` (the mechanism fields as in
        :func:`mechanism_from_spec`).
    field : str
        Name of the user's field in error messages (``"groups"`` in plans, ``"--group"`` on the
        command line).

    Returns
    -------
    shuffleamp.personalized.Population

    Raises
    ------
    ComponentError
        ``component i: field 'f': reason`` for a bad group (1-based index), e.g. a missing or
        non-integer ``count`` or a bad mechanism parameter.
    ParameterError
        Naming ``field``: no groups, or groups without a common output space / blanket.
    """
    from .personalized import population

    if not isinstance(groups, (list, tuple)) or not groups:
        raise ParameterError(field, "must contain at least one group")
    pairs = []
    for i, g in enumerate(groups, start=1):
        if not isinstance(g, Mapping):
            raise ComponentError(i, "group", f"must be a table of fields, got {type(g).__name__}")
        spec = dict(g)
        if "count" not in spec:
            raise ComponentError(i, "count", "missing (the group's number of users)")
        count = spec.pop("count")
        if isinstance(count, bool) or not isinstance(count, numbers.Real):
            raise ComponentError(i, "count", f"must be an integer >= 1, got {count!r}")
        try:
            count = _validate.count(count, "count")
        except ParameterError as exc:
            raise ComponentError.wrap(i, exc) from exc
        pairs.append((_make_component(i, spec), count))
    try:
        return population(pairs)
    except ParameterError as exc:
        if exc.parameter == "groups":
            raise ParameterError(field, exc.detail) from exc
        raise


def population_from_specs(specs, *, field: str = "--group"):
    """Build a population from command-line group specifications ``COUNT:NAME[:key=value]...``.

    Parameters
    ----------
    specs : sequence of str
        E.g. ``["60000000:krr:k=10:eps0=0.5", "40000000:krr:k=10:eps0=2"]``.
    field : str
        Option name used in error messages.

    Returns
    -------
    shuffleamp.personalized.Population

    Raises
    ------
    ParameterError
        Naming ``field`` (``--group``): no groups, a malformed specification or count, a bad mechanism
        parameter (the message names the group and the parameter), groups without a common output
        space.
    """
    if isinstance(specs, str) or not specs:
        raise ParameterError(field, "give at least one group as COUNT:NAME:key=value (e.g. 60000000:krr:k=10:eps0=0.5)")
    tables = []
    for i, text in enumerate(specs, start=1):
        parts = [p.strip() for p in str(text).split(":")]
        if len(parts) < 2 or not parts[1]:
            raise ParameterError(field, f"group {i}: expected COUNT:NAME[:key=value...], got {text!r}")
        try:
            count = _validate.parse_number(parts[0], "count")
        except ParameterError:
            count = None
        if isinstance(count, float) and count.is_integer():
            count = int(count)
        if not isinstance(count, int) or count < 1:
            raise ParameterError(field, f"group {i}: COUNT must be an integer >= 1, got {parts[0]!r}")
        try:
            spec = _spec_dict(":".join(parts[1:]), i)
        except ComponentError as exc:
            raise ParameterError(field, f"group {i}: {exc}") from exc
        tables.append({"count": count, **spec})
    try:
        return population_from_tables(tables, field=field)
    except ComponentError as exc:
        raise ParameterError(field, str(exc).replace("component ", "group ", 1)) from exc


def from_config(mechanism: str, *, components, weights=None, q=None, distances=None):
    """Build a composed mechanism from plain data (plan rows, JSON).

    Parameters
    ----------
    mechanism : {"joint", "parallel", "subsample"}
    components : list of dict
        Component tables ``{"mechanism": "krr", "k": 10, "eps0": 0.5}``; for ``parallel`` each
        may carry a ``"weight"`` (alternatively give ``weights``). Nested composed tables are allowed.
    weights : list of float, optional
        Parallel weights (instead of per-component ``weight``).
    q : float, optional
        Sampling probability (required for ``subsample``, which takes exactly one component).
    distances : int or list of int, optional
        Joint only: allowed Hamming distances.

    Returns
    -------
    Mechanism

    Raises
    ------
    ParameterError
        ``'components'``, ``'weights'``, ``'q'``; :class:`ComponentError` naming the component and field.
    """
    from .compose import Joint, Parallel, Subsample

    kind = _validate.choice(str(mechanism).strip().lower(), "mechanism", set(COMPOSED))
    if isinstance(components, Mapping) or not isinstance(components, (list, tuple)):
        raise ParameterError("components", "must be a list of component tables")
    if not components:
        raise ParameterError("components", "must not be empty")
    if kind != "parallel" and weights is not None:
        raise ParameterError("weights", f"only for mechanism 'parallel', not {kind!r}")
    if kind != "subsample" and q is not None:
        raise ParameterError("q", f"only used by mechanism 'subsample' (only for subsample, not {kind!r})")
    if kind != "joint" and distances is not None:
        raise ParameterError("distances", f"only for mechanism 'joint', not {kind!r}")
    specs = []
    per_weights = []
    for i, c in enumerate(components, start=1):
        if not isinstance(c, Mapping):
            raise ComponentError(i, "mechanism", f"must be a table of fields, got {type(c).__name__}")
        c = dict(c)
        w = c.pop("weight", None)
        if w is not None and kind != "parallel":
            raise ComponentError(i, "weight", f"only for mechanism 'parallel', not {kind!r}")
        per_weights.append(w)
        specs.append(c)
    mechs = [_make_component(i, s) for i, s in enumerate(specs, start=1)]
    if kind == "joint":
        return Joint(mechs, distances=distances)
    if kind == "subsample":
        if len(mechs) != 1:
            raise ParameterError("components", f"subsample takes exactly one component, got {len(mechs)}")
        if q is None:
            raise ParameterError("q", "required for mechanism 'subsample'")
        if isinstance(q, bool):
            raise ParameterError("q", f"must be a number, got {q!r}")
        return Subsample(mechs[0], q)
    # parallel
    given = [w is not None for w in per_weights]
    if weights is not None:
        if any(given):
            raise ParameterError("weights", "give either 'weights' or a 'weight' per component, not both")
        if not isinstance(weights, (list, tuple)) or len(weights) != len(mechs):
            raise ParameterError("weights", f"must be a list of {len(mechs)} numbers (one per component)")
        ws = list(weights)
    else:
        missing = [i for i, g in enumerate(given, start=1) if not g]
        if missing:
            raise ComponentError(missing[0], "weight", "missing (parallel components need a weight)")
        ws = per_weights
    for i, w in enumerate(ws, start=1):
        if isinstance(w, bool) or not isinstance(w, (int, float)):
            raise ComponentError(i, "weight", f"must be a number, got {w!r}")
    return Parallel(list(zip(ws, mechs)))


# --------------------------------------------------------------------------- reading


def _read_document(path: str | os.PathLike | None) -> tuple[Any, str, Path | None]:
    """Return (parsed document, source label, directory for relative matrix paths)."""
    if path is None:
        text = resources.files("shuffleamp").joinpath(DEFAULT_PLAN).read_text(encoding="utf-8")
        try:
            return tomllib.loads(text), "<default plan>", None
        except tomllib.TOMLDecodeError as exc:  # pragma: no cover - the shipped plan is tested
            raise PlanError(f"invalid TOML: {exc}", source="<default plan>") from exc
    p = Path(path)
    source = str(p)
    suffix = p.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise PlanError(f"unsupported plan format {p.suffix or '(no extension)'!r}; use .toml or .json",
                        source=source)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise PlanError(f"cannot read file: {exc.strerror or exc}", source=source) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlanError(f"not UTF-8 text: {exc}", source=source) from exc
    try:
        doc = tomllib.loads(text) if suffix == ".toml" else json.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"invalid TOML: {exc}", source=source) from exc
    except json.JSONDecodeError as exc:
        raise PlanError(f"invalid JSON: {exc}", source=source) from exc
    return doc, source, p.parent


def _rows_of(doc: Any, source: str | None) -> list:
    if isinstance(doc, list):
        rows = doc
    elif isinstance(doc, Mapping):
        extra = sorted(set(doc) - {"collection", "budget"})
        if extra:
            raise PlanError(f"unknown top-level key {extra[0]!r}; expected [[collection]] tables and an "
                            "optional [budget] table", source=source)
        if "collection" not in doc:
            raise PlanError("no [[collection]] tables", source=source)
        rows = doc["collection"]
        if not isinstance(rows, list):
            raise PlanError("'collection' must be an array of tables ([[collection]])", source=source)
    else:
        raise PlanError("must be a table with [[collection]] entries or a list of rows", source=source)
    if not rows:
        raise PlanError("has no collections", source=source)
    return rows


def _number(value: Any, *, row: int, name: str | None, field: str):
    """Reject non-numbers (strings, booleans, tables) before range checks by :mod:`_validate`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        kind = type(value).__name__
        raise PlanError(f"must be a number, got {value!r} ({kind})", row=row, name=name, field=field)
    return value


def _checked(check, value, *, row: int, name: str | None, field: str, **kw):
    try:
        return check(value, field, **kw)
    except ParameterError as exc:
        raise PlanError(exc.detail, row=row, name=name, field=field) from exc


def _parse_budget(doc: Any, source: str | None) -> dict | None:
    """The optional top-level ``[budget]`` table: total ``epsilon`` (nats, > 0) and ``delta`` in (0, 1)."""
    if not isinstance(doc, Mapping) or "budget" not in doc:
        return None
    b = doc["budget"]
    if not isinstance(b, Mapping):
        raise PlanError(f"field 'budget': must be a table with epsilon and delta, got {type(b).__name__}",
                        source=source)
    unknown = sorted(set(b) - set(_BUDGET_FIELDS))
    if unknown:
        raise PlanError(f"field 'budget.{unknown[0]}': unknown (allowed: epsilon, delta)", source=source)
    out = {}
    for key, check in (("epsilon", lambda v, f: _validate.real(f, v, lo=0.0, lo_open=True)),
                       ("delta", lambda v, f: _validate.delta(v, f))):
        if key not in b:
            raise PlanError(f"field 'budget.{key}': missing (required)", source=source)
        v = b[key]
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise PlanError(f"field 'budget.{key}': must be a number, got {v!r}", source=source)
        try:
            out[key] = check(v, f"budget.{key}")
        except ParameterError as exc:
            raise PlanError(f"field 'budget.{key}': {exc.detail}", source=source) from exc
    return out


def _row_delta(entry: Mapping, default_delta: float | None, ctx: dict) -> float:
    """A row's ``delta`` (the δ of its per-round ε), defaulting to the plan's ``[budget]`` δ."""
    if "delta" not in entry:
        if default_delta is None:
            raise PlanError("missing (required when the plan has no [budget] table whose delta it defaults to)",
                            field="delta", **ctx)
        return default_delta
    return _checked(_validate.delta, _number(entry["delta"], field="delta", **ctx), field="delta", **ctx)


def _parse_rounds(entry: Mapping, mech: str, ctx: dict) -> tuple[int, tuple[float, ...] | None]:
    """``rounds`` (integer >= 1, default 1) and ``schedule`` (k-RR gradual release) of a row."""
    rounds = 1
    if "rounds" in entry:
        rounds = _checked(_validate.count, _number(entry["rounds"], field="rounds", **ctx), field="rounds", **ctx)
    schedule = None
    if "schedule" in entry:
        if "rounds" in entry:
            raise PlanError("give either 'rounds' or 'schedule', not both", field="schedule", **ctx)
        if mech != "krr":
            raise PlanError(f"only for mechanism 'krr' (gradual release of k-RR), not {mech!r}",
                            field="schedule", **ctx)
        from .gradual import GradualRelease

        v = entry["schedule"]
        if not isinstance(v, list) or not v:
            raise PlanError("must be a non-empty array of eps0 values", field="schedule", **ctx)
        for x in v:
            _number(x, field="schedule", **ctx)
        try:
            schedule = tuple(GradualRelease(k=2, schedule=[float(x) for x in v]).schedule)
        except ParameterError as exc:
            raise PlanError(exc.detail, field="schedule", **ctx) from exc
    return rounds, schedule


def _parse_row(entry: Any, row: int, base: Path | None, default_delta: float | None = None) -> Collection:
    if not isinstance(entry, Mapping):
        raise PlanError(f"must be a table of fields, got {type(entry).__name__}", row=row)
    raw_name = entry.get("name")
    name = raw_name if isinstance(raw_name, str) and raw_name.strip() else None
    ctx = {"row": row, "name": name}

    declared = _declaration(entry.get("mechanism"))
    unknown = [key for key in entry if key not in _KNOWN and key not in declared]
    if unknown:
        own = [p for p in declared if p not in _KNOWN]
        raise PlanError(f"unknown field (allowed: {', '.join((*_KNOWN, *own))})", field=str(unknown[0]), **ctx)
    if isinstance(entry.get("mechanism"), str) and entry["mechanism"].strip().lower() == "population":
        if name is None:
            raise PlanError(f"must be a non-empty string, got {raw_name!r}", field="name", **ctx)
        return _parse_population_row(entry, row, name, ctx, default_delta)
    if "groups" in entry:
        raise PlanError("only for mechanism 'population'", field="groups", **ctx)
    for key in _REQUIRED:
        if key not in entry:
            raise PlanError("missing (required)", field=key, **ctx)
    delta = _row_delta(entry, default_delta, ctx)
    if name is None:
        raise PlanError(f"must be a non-empty string, got {raw_name!r}", field="name", **ctx)

    mech = entry["mechanism"]
    if not isinstance(mech, str):
        raise PlanError(f"must be a string, got {mech!r}", field="mechanism", **ctx)
    from .mechanisms import registry

    MECHANISMS = registry()
    mech = mech.strip().lower()
    _checked(_validate.choice, mech, field="mechanism", options=tuple(MECHANISMS) + COMPOSED + ("population",), **ctx)
    if mech in COMPOSED:
        return _parse_composed_row(entry, row, name, mech, base, ctx, default_delta)
    for key in _COMPOSED_PARAMS:
        if key in entry:
            raise PlanError(f"only for mechanism 'joint', 'parallel' or 'subsample', not {mech!r}", field=key,
                            **ctx)

    rounds, schedule = _parse_rounds(entry, mech, ctx)
    eps0 = None  # optional for "matrix"; mechanisms.make reports it missing for the others
    if "eps0" in entry:
        eps0 = _checked(_validate.eps0, _number(entry["eps0"], field="eps0", **ctx), field="eps0", **ctx)
    if schedule is not None:
        if eps0 is not None and eps0 != schedule[-1]:
            raise PlanError(f"must equal the last schedule value {schedule[-1]!r} (or be left out), got {eps0!r}",
                            field="eps0", **ctx)
        eps0 = schedule[-1]
    n = _checked(_validate.count, _number(entry["n"], field="n", **ctx), field="n", **ctx)

    k = d = None
    if "k" in entry:
        k = _checked(_validate.count, _number(entry["k"], field="k", **ctx), field="k", **ctx)
    if "d" in entry:
        d = _checked(_validate.count, _number(entry["d"], field="d", **ctx), field="d", **ctx)

    matrix = None
    if "matrix" in entry:
        m = entry["matrix"]
        if isinstance(m, str):
            mp = Path(m).expanduser()
            if not mp.is_absolute() and base is not None:
                mp = base / mp
            matrix = str(mp)
        elif isinstance(m, list):
            P = _checked(_validate.stochastic_matrix, m, field="matrix", **ctx)
            matrix = tuple(tuple(float(x) for x in r) for r in P)
        else:
            raise PlanError(f"must be a CSV path or an array of rows, got {type(m).__name__}", field="matrix",
                            **ctx)

    other = []                     # the other parameters the mechanism declares, checked by the declaration
    for key, decl in declared.items():
        if key in _KNOWN or key not in entry:
            continue
        value = entry[key]
        if decl.numeric:
            value = _number(value, field=key, **ctx)
        other.append((key, _checked(lambda v, f, decl=decl: decl.check(v), value, field=key, **ctx)))

    comment = entry.get("comment", "")
    if not isinstance(comment, str):
        raise PlanError(f"must be a string, got {comment!r}", field="comment", **ctx)
    return Collection(row=row, name=name, mechanism=mech, eps0=eps0, n=n, delta=delta,
                      k=k, d=d, matrix=matrix, comment=comment.strip(), rounds=rounds, schedule=schedule,
                      other_params=tuple(other))


def _parse_population_row(entry: Mapping, row: int, name: str, ctx: dict,
                          default_delta: float | None = None) -> Collection:
    """A ``mechanism = "population"`` row: ``groups`` with ``count`` each, or ``fraction`` each and ``n``."""
    for key in ("eps0", *_MECH_PARAMS, *_COMPOSED_PARAMS, "schedule"):
        if key in entry:
            raise PlanError("not used by mechanism 'population'; give it inside each group table", field=key, **ctx)
    delta = _row_delta(entry, default_delta, ctx)
    groups = entry.get("groups")
    if not isinstance(groups, list) or not groups:
        raise PlanError("must be a non-empty array of group tables (count or fraction, mechanism, ...)",
                        field="groups", **ctx)
    for i, g in enumerate(groups, start=1):
        if not isinstance(g, Mapping):
            raise PlanError(f"group {i}: must be a table of fields, got {type(g).__name__}", field="groups", **ctx)
    has_frac = ["fraction" in g for g in groups]
    has_count = ["count" in g for g in groups]
    if any(has_frac) and (any(has_count) or not all(has_frac)):
        raise PlanError("give every group a 'count', or every group a 'fraction' (with the row's n)",
                        field="groups", **ctx)
    n = None
    if "n" in entry:
        n = _checked(_validate.count, _number(entry["n"], field="n", **ctx), field="n", **ctx)
    tables = [dict(g) for g in groups]
    if all(has_frac):
        if n is None:
            raise PlanError("missing (required when the groups give fractions)", field="n", **ctx)
        fr = []
        for i, g in enumerate(tables, start=1):
            f = g.pop("fraction")
            if isinstance(f, bool) or not isinstance(f, numbers.Real) or not 0.0 < f <= 1.0:
                raise PlanError(f"group {i}: field 'fraction': must be a number in (0, 1], got {f!r}",
                                field="groups", **ctx)
            fr.append(float(f))
        from .personalized import _fractions_to_counts
        try:
            counts = _fractions_to_counts(fr, n)
        except ParameterError as exc:
            raise PlanError(exc.detail, field="groups", **ctx) from exc
        for g, c in zip(tables, counts):
            g["count"] = c
    else:
        for i, g in enumerate(tables, start=1):
            c = g.get("count")
            if isinstance(c, bool) or not isinstance(c, numbers.Real):
                raise PlanError(f"group {i}: field 'count': must be an integer >= 1, got {c!r}", field="groups", **ctx)
            try:
                g["count"] = _validate.count(c, "count")
            except ParameterError as exc:
                raise PlanError(f"group {i}: field 'count': {exc.detail}", field="groups", **ctx) from exc
        total = sum(g["count"] for g in tables)
        if n is not None and n != total:
            raise PlanError(f"must equal the sum of the group counts ({total}), got {n}", field="n", **ctx)
        n = total
    comment = entry.get("comment", "")
    if not isinstance(comment, str):
        raise PlanError(f"must be a string, got {comment!r}", field="comment", **ctx)
    rounds, _ = _parse_rounds(entry, "population", ctx)
    return Collection(row=row, name=name, mechanism="population", eps0=None, n=n, delta=delta,
                      comment=comment.strip(), rounds=rounds, groups=tuple(tables))


def _resolve_component_paths(comp: Any, base: Path | None) -> Any:
    """Copy of a component table with relative ``matrix`` CSV paths resolved against the plan's directory."""
    if not isinstance(comp, Mapping):
        return comp
    out = dict(comp)
    m = out.get("matrix")
    if isinstance(m, str):
        mp = Path(m).expanduser()
        if not mp.is_absolute() and base is not None:
            mp = base / mp
        out["matrix"] = str(mp)
    if isinstance(out.get("components"), list):
        out["components"] = [_resolve_component_paths(c, base) for c in out["components"]]
    return out


def _parse_composed_row(entry: Mapping, row: int, name: str, mech: str, base: Path | None, ctx: dict,
                        default_delta: float | None = None) -> Collection:
    """A ``joint`` / ``parallel`` / ``subsample`` row: structure only (the components are checked by build())."""
    for key in ("eps0", *_MECH_PARAMS):
        if key in entry:
            raise PlanError(f"not used by mechanism {mech!r}; give it inside each component table", field=key,
                            **ctx)
    if "components" not in entry:
        raise PlanError(f"missing (required for mechanism {mech!r})", field="components", **ctx)
    comps = entry["components"]
    if not isinstance(comps, list) or not comps:
        raise PlanError("must be a non-empty array of mechanism tables", field="components", **ctx)
    for i, c in enumerate(comps, start=1):
        if not isinstance(c, Mapping):
            raise PlanError(f"component {i}: must be a table of fields, got {type(c).__name__}",
                            field="components", **ctx)
    n = _checked(_validate.count, _number(entry["n"], field="n", **ctx), field="n", **ctx)
    delta = _row_delta(entry, default_delta, ctx)
    weights = None
    if "weights" in entry:
        if mech != "parallel":
            raise PlanError(f"only for mechanism 'parallel', not {mech!r}", field="weights", **ctx)
        w = entry["weights"]
        if not isinstance(w, list):
            raise PlanError(f"must be an array of numbers, got {type(w).__name__}", field="weights", **ctx)
        weights = tuple(_number(x, field="weights", **ctx) for x in w)
    q = None
    if "q" in entry:
        if mech != "subsample":
            raise PlanError(f"only for mechanism 'subsample', not {mech!r}", field="q", **ctx)
        q = _checked(lambda v, f: _validate.real(f, v, lo=0.0, hi=1.0, lo_open=True),
                     _number(entry["q"], field="q", **ctx), field="q", **ctx)
    elif mech == "subsample":
        raise PlanError("missing (required for mechanism 'subsample')", field="q", **ctx)
    comment = entry.get("comment", "")
    if not isinstance(comment, str):
        raise PlanError(f"must be a string, got {comment!r}", field="comment", **ctx)
    rounds, _ = _parse_rounds(entry, mech, ctx)
    return Collection(row=row, name=name, mechanism=mech, eps0=None, n=n, delta=delta, comment=comment.strip(),
                      components=tuple(_resolve_component_paths(c, base) for c in comps), weights=weights, q=q,
                      rounds=rounds)


def _describe_composed(mech: str, comps, weights, q) -> str:
    def one(c):
        if not isinstance(c, Mapping):
            return "?"
        inner = c.get("mechanism", "?")
        if isinstance(c.get("components"), list):
            return _describe_composed(str(inner), c["components"], c.get("weights"), c.get("q"))
        bits = []
        for k, v in c.items():
            if k in ("mechanism", "weight"):
                continue
            if k == "matrix" and not isinstance(v, str):
                v = "inline"
            bits.append(f"{k}={v}")
        text = f"{inner} {' '.join(bits)}".strip()
        w = c.get("weight")
        return f"{w:g}*{text}" if isinstance(w, (int, float)) and not isinstance(w, bool) else text

    parts = [one(c) for c in comps]
    if weights is not None:
        parts = [f"{w:g}*{p}" for w, p in zip(weights, parts)]
    head = f"q={q:g}: " if q is not None else ""
    return f"{mech} ({head}{' + '.join(parts)})"


#: Row fields that may hold a list of values: the plan then stands for one scenario per combination.
_LIST_FIELDS = ("eps0", "n", "delta", "k", "d", "q", "rounds")
#: Default largest number of scenarios a plan may expand into (parameter ``max_scenarios``).
MAX_SCENARIOS = 64


def _value_text(v) -> str:
    return format(v, "g") if isinstance(v, float) else str(v)


def _list_fields(entry: Mapping) -> tuple[str, ...]:
    """The fields of a row that may hold a list: :data:`_LIST_FIELDS` and every other numeric parameter
    its mechanism declares."""
    own = [p.name for p in _declaration(entry.get("mechanism")).values() if p.numeric and p.name not in _LIST_FIELDS]
    return (*_LIST_FIELDS, *own)


def _row_variants(entry: Any, row: int) -> list[tuple[dict, Any]]:
    """``[(values, entry)]``: one entry per combination of the row's list-valued fields (product, in field
    order, the last varying fastest); ``values`` maps each list field to its value in that entry."""
    if not isinstance(entry, Mapping):
        return [({}, entry)]
    axes = [(f, entry[f]) for f in _list_fields(entry) if isinstance(entry.get(f), list)]
    if not axes:
        return [({}, entry)]
    raw_name = entry.get("name")
    name = raw_name.strip() if isinstance(raw_name, str) and raw_name.strip() else None
    for f, values in axes:
        if not values:
            raise PlanError("an empty list has no values", row=row, name=name, field=f)
    out = []
    for combo in itertools.product(*(v for _, v in axes)):
        e = dict(entry)
        e.update(zip((f for f, _ in axes), combo))
        out.append((dict(zip((f for f, _ in axes), combo)), e))
    return out


def _scenario_count(variants: Sequence[list], entries: Sequence, max_scenarios: int) -> int:
    """The number of scenarios (product of the rows' variant counts); a PlanError naming the list-valued
    keys when it exceeds ``max_scenarios``."""
    count = math.prod(len(v) for v in variants)
    if count <= max_scenarios:
        return count
    keys = []
    for i, (var, entry) in enumerate(zip(variants, entries), start=1):
        if len(var) > 1:
            name = entry.get("name") if isinstance(entry, Mapping) else None
            keys += [(i, name, f, len(entry[f])) for f in _list_fields(entry) if isinstance(entry.get(f), list)]
    row, name, field, _ = keys[0]
    listed = " x ".join(f"{nm or f'row {r}'}.{f} ({k} values)" for r, nm, f, k in keys)
    raise PlanError(f"the list-valued fields {listed} expand into {count} scenarios, more than the limit of "
                    f"{max_scenarios} (max_scenarios; --max-scenarios on the command line); shorten the lists or "
                    "evaluate them in several plans", row=row, name=name if isinstance(name, str) else None,
                    field=field)


def parse_plan(doc: Any, *, source: str | None = None, base_dir: str | os.PathLike | None = None,
               check_mechanisms: bool = True, max_scenarios: int = MAX_SCENARIOS) -> Plan:
    """Validate an already-parsed plan document.

    Parameters
    ----------
    doc : dict or list
        ``{"collection": [row, ...], "budget": {...}}`` (as read from TOML/JSON) or a bare list of rows.
    source : str, optional
        Label used in file-level error messages.
    base_dir : path-like, optional
        Directory against which relative ``matrix`` CSV paths are resolved.
    check_mechanisms : bool, default True
        Also construct every row's mechanism with :func:`shuffleamp.mechanisms.make`
        so that mechanism-specific errors (missing ``k``, ``d`` not a power of two, a
        matrix that is not ``eps0``-LDP, ...) surface at load time.
    max_scenarios : int, default :data:`MAX_SCENARIOS`
        Largest number of scenarios the plan's list-valued fields may expand into.

    Returns
    -------
    Plan
        Rows in plan order (a list of :class:`Collection`), with the plan's ``budget``.  When fields
        are lists, ``scenarios`` holds one :class:`Scenario` per combination (each a plan evaluated on
        its own) and the rows are those of the first scenario.

    Raises
    ------
    PlanError
        On the first malformed row (the message names the row and the field), or a scenario grid
        larger than ``max_scenarios`` (naming the list-valued fields and the count).
    """
    base = Path(base_dir) if base_dir is not None else None
    max_scenarios = _validate.count(max_scenarios, "max_scenarios")
    budget = _parse_budget(doc, source)
    default_delta = budget["delta"] if budget is not None else None
    entries = _rows_of(doc, source)
    variants = [_row_variants(entry, i) for i, entry in enumerate(entries, start=1)]
    count = _scenario_count(variants, entries, max_scenarios)
    parsed = [[(vals, _parse_row(e, i, base, default_delta)) for vals, e in var]
              for i, var in enumerate(variants, start=1)]
    seen: dict[str, int] = {}
    for var in parsed:
        r = var[0][1]
        if r.name in seen:
            raise PlanError(f"duplicate name (already used by row {seen[r.name]})", row=r.row, name=r.name,
                            field="name")
        seen[r.name] = r.row
    if check_mechanisms:
        for var in parsed:
            for _, r in var:
                r.build()

    def make(rows) -> Plan:
        plan = Plan(rows)
        plan.budget, plan.source = budget, source
        return plan

    out = make(var[0][1] for var in parsed)
    if count > 1:
        scenarios = []
        for index, combo in enumerate(itertools.product(*parsed), start=1):
            values = {f"{r.name}.{f}": v for vals, r in combo for f, v in vals.items()}
            scenarios.append(Scenario(index, values, make(r for _, r in combo)))
        out.scenarios = tuple(scenarios)
    return out


def load_plan(path: str | os.PathLike | None = None, *, check_mechanisms: bool = True,
              max_scenarios: int = MAX_SCENARIOS) -> Plan:
    """Read and validate a plan file.

    Parameters
    ----------
    path : path-like or None
        A ``.toml`` or ``.json`` plan.  None loads the plan shipped with the package
        (``shuffleamp/data/default_plan.toml``).
    check_mechanisms : bool, default True
        Also construct each row's mechanism (see :func:`parse_plan`).  Nothing is
        evaluated: loading is cheap even for rows with very large ``n``.
    max_scenarios : int, default :data:`MAX_SCENARIOS`
        See :func:`parse_plan`.

    Returns
    -------
    Plan
        Validated rows in plan order, with ``budget`` and ``scenarios`` (see :func:`parse_plan`).

    Raises
    ------
    PlanError
        If the file cannot be read or parsed, or a row is malformed (the message
        names the row, by 1-based index and name, and the field).
    """
    doc, source, base = _read_document(path)
    return parse_plan(doc, source=source, base_dir=base, check_mechanisms=check_mechanisms,
                      max_scenarios=max_scenarios)


# --------------------------------------------------------------------------- evaluating


def plan_delta(rows: Sequence[Collection], delta: float | None = None) -> float:
    """The δ of every total of a plan: ``delta`` if given, else the plan's ``[budget]`` δ, else the
    smallest collection δ.

    Parameters
    ----------
    rows : Plan or sequence of Collection
    delta : float, optional
        An explicit δ in (0, 1).

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        A bad ``delta``.
    """
    if delta is not None:
        return _validate.delta(delta)
    budget = getattr(rows, "budget", None)
    if budget is not None:
        return float(budget["delta"])
    return min(r.delta for r in rows)


def evaluate_plan(rows: Iterable[Collection], *, method: str = "optimal", rtol: float = 1e-3,
                  totals: bool = True, delta: float | None = None, progress=None, lower_totals: bool = True,
                  per_round: bool = True) -> list[dict]:
    """Compute the shuffled central ε of every collection of a plan, per round and in total.

    Parameters
    ----------
    rows : Plan or iterable of Collection
        Rows as returned by :func:`load_plan`.
    method : {"optimal", "clone"}, default "optimal"
        Passed to :func:`shuffleamp.epsilon`.
    rtol : float, default 1e-3
        Passed to :func:`shuffleamp.epsilon`.
    totals : bool, default True
        With ``method="optimal"``, also the certified total over each collection's ``rounds``
        (composed by :func:`shuffleamp.accounting.compose_rounds`), and for a gradual-release
        ``schedule`` the total of fresh k-RR rounds at the same ε0 values, for comparison.
    delta : float, optional
        δ of the totals; default :func:`plan_delta` (the plan's ``[budget]`` δ, else the smallest
        collection δ).  Each collection's own ``delta`` is the δ of its per-round ε only.
    progress : callable, optional
        Called with no argument after each collection (for a progress bar).
    lower_totals : bool, default True
        Also the certified lower bound of each collection's total over several rounds (else 0).
    per_round : bool, default True
        Also the per-round ε at the collection's own δ (else each row has ``name``, ``rounds`` and ``total``).

    Returns
    -------
    list of dict
        One JSON-serialisable dict per row, in plan order: ``name``, ``comment`` and
        the inputs (``mechanism``, ``eps0``, ``n``, ``delta``: the δ of the per-round ε) followed by every
        key of :meth:`BoundResult.to_dict` (``epsilon_upper``, ``epsilon_lower``, ``method``,
        ``version``, ...) for one round, then ``rounds`` (and ``schedule``) and, when computed,
        ``total`` (``epsilon_upper``, ``epsilon_lower``, ``delta``: the plan's δ, ``rounds``, ``basis`` and,
        for a schedule, ``fresh_rounds``: the accountant's total of fresh rounds).

    Raises
    ------
    PlanError
        If a row's parameters are rejected during evaluation.
    ShuffleampError
        Other failures (e.g. a resource limit) propagate with a note naming the row.
    """
    rows = rows if isinstance(rows, Sequence) else list(rows)
    d_total = plan_delta(rows, delta) if totals and method == "optimal" else None
    with _reuse.scope():          # the rows' certified profiles at the same ε are computed once
        return _evaluate_rows(rows, method, rtol, d_total, progress, lower_totals, per_round)


def _evaluate_rows(rows, method, rtol, d_total, progress, lower_totals, per_round) -> list[dict]:
    """:func:`evaluate_plan` of validated arguments (``d_total``: the δ of the totals, or None for none)."""
    import shuffleamp

    out = []
    for r in rows:
        mech = r.build()
        try:
            result = shuffleamp.epsilon(mech, r.n, r.delta, method=method, rtol=rtol) if per_round else None
            total = _collection_total(r, mech, result, d_total, lower_totals) if d_total is not None else None
            if not per_round:
                out.append({"name": r.name, "rounds": r.rounds, "total": total})
                continue
        except ParameterError as exc:
            if exc.parameter in ("method", "rtol"):
                raise
            raise PlanError(exc.detail, row=r.row, name=r.name, field=exc.parameter) from exc
        except ShuffleampError as exc:
            exc.add_note(f"in plan row {r.row} ({r.name!r})")
            raise
        data = result.to_dict()
        row = {"name": r.name, "comment": r.comment}
        for key in ("mechanism", "eps0", "n", "delta", "epsilon_upper", "epsilon_lower", "method"):
            if key in data:
                row[key] = data.pop(key)
        row.update(data)
        row["rounds"] = r.rounds
        if r.schedule is not None:
            row["schedule"] = list(r.schedule)
        if total is not None:
            row["total"] = total
        out.append(row)
        if progress is not None:
            progress()
    return out


def _collection_total(r: Collection, mech, result, delta: float, lower: bool = True) -> dict:
    """Certified total of one collection over its rounds (or its gradual-release schedule), at ``delta``
    (``result``: its per-round :func:`shuffleamp.epsilon` at ``r.delta``, or None)."""
    import shuffleamp
    from .accounting import compose_rounds

    def one_round():
        if delta == r.delta and result is not None:
            return result
        return shuffleamp.epsilon(mech, r.n, delta)

    if r.schedule is not None:
        from .mechanisms import KRR

        fresh = compose_rounds([(KRR(e, r.k), r.n, 1) for e in r.schedule], delta=delta, lower=lower)
        last = one_round()
        return {"epsilon_upper": last.upper, "epsilon_lower": last.lower, "delta": delta, "rounds": len(r.schedule),
                "basis": "gradual release: the whole schedule is as private as one shuffled round at its "
                         "last eps0 (Pan 2024, Lemma 3.1)",
                "fresh_rounds": {"epsilon_upper": fresh.upper, "epsilon_lower": fresh.lower, "delta": delta}}
    if r.rounds == 1:
        one = one_round()
        return {"epsilon_upper": one.upper, "epsilon_lower": one.lower, "delta": delta, "rounds": 1,
                "basis": "one round"}
    acc = compose_rounds([(mech, r.n, r.rounds)], delta=delta, lower=lower)
    return {"epsilon_upper": acc.upper, "epsilon_lower": acc.lower, "delta": delta, "rounds": r.rounds,
            "ratio": acc.to_dict()["ratio"], "limited_by": acc.limited_by,
            "basis": f"{r.rounds} rounds composed ({acc.method}; lower: {acc.lower_method})"}


def plan_total(rows: Sequence[Collection], *, budget: Mapping | None = None, delta: float | None = None,
               results: Sequence[Mapping] | None = None, lower: bool = True) -> dict:
    """Certified grand total over all collections of a plan, for a user who takes part in all of them.

    Every collection contributes its rounds (a gradual-release schedule counts as one round at its
    last ε0); all of them are composed by :func:`shuffleamp.accounting.compose_rounds`.

    The grand total is never below a collection's total at the same δ: a collection's output is a
    post-processing (a marginal) of the whole plan's output, so its true total is at most the grand
    total's.  Each collection's certified lower bound in ``results`` is therefore a certified lower
    bound of the grand total, and the larger of two certified upper bounds is still one; both are
    applied (``floors`` names the collections whose totals raised a bound).

    Parameters
    ----------
    rows : Plan or sequence of Collection
        The plan's rows.
    budget : mapping, optional
        ``{"epsilon": E, "delta": D}``: the total budget; the total ε is computed at ``D`` and
        compared with ``E``.  Default: the plan's own ``budget``.
    delta : float, optional
        δ of the total when there is no budget (default: :func:`plan_delta`).
    results : sequence of dict, optional
        :func:`evaluate_plan` of the same rows (their ``total`` at the same δ bound the grand total from below).
    lower : bool, default True
        Also compute the certified lower bound (else ``epsilon_lower`` is 0 unless a collection gives one).

    Returns
    -------
    dict
        ``epsilon_upper``, ``epsilon_lower`` (nats), ``delta``, ``budget`` (or None), ``holds``
        (True if the certified upper total is within the budget's ε, False if not, None without a
        budget), ``verdict`` (``"holds"``, ``"exceeded"``: the certified lower total is above the
        budget's ε or the upper is and the lower does not decide, see :func:`verdict`; None without a
        budget), ``lower_method``, ``floors`` and the accountant's ``rounds``.

    Raises
    ------
    ParameterError
        A bad ``delta``.
    """
    from .accounting import compose_rounds

    if budget is None:
        budget = getattr(rows, "budget", None)
    d = float(budget["delta"]) if budget is not None else plan_delta(rows, delta)
    parts = [(r.build(), r.n, 1 if r.schedule is not None else r.rounds) for r in rows]
    with _reuse.scope():          # within a plan's evaluation, the profiles its collections' totals computed
        acc = compose_rounds(parts, delta=d, lower=lower)
    out = acc.to_dict()
    floors = []
    for res in results or ():
        t = res.get("total") or {}
        if t.get("delta") != d:
            continue
        if t.get("epsilon_upper") is not None and t["epsilon_upper"] > out["epsilon_upper"]:
            out["epsilon_upper"] = float(t["epsilon_upper"])
            floors.append(f"upper: {res.get('name')}")
        if t.get("epsilon_lower") is not None and t["epsilon_lower"] > out["epsilon_lower"]:
            out["epsilon_lower"] = float(t["epsilon_lower"])
            floors.append(f"lower: {res.get('name')}")
    out["epsilon_lower"] = min(out["epsilon_lower"], out["epsilon_upper"])
    out["floors"] = floors
    out["budget"] = dict(budget) if budget is not None else None
    out["holds"] = (out["epsilon_upper"] <= budget["epsilon"]) if budget is not None else None
    out["verdict"] = verdict(out["epsilon_upper"], out["epsilon_lower"] if lower or floors else None, budget)
    return out


#: Verdicts of a total against a budget (see :func:`verdict`).
VERDICTS = ("holds", "exceeded", "undecided")


def verdict(upper: float, lower: float | None, budget: Mapping | None) -> str | None:
    """The budget check of a certified total bracket ``[lower, upper]`` (nats).

    Parameters
    ----------
    upper, lower : float
        Certified upper and lower bounds of the total ε at the budget's δ (``lower`` None: not computed).
    budget : mapping or None
        ``{"epsilon": E, "delta": D}``.

    Returns
    -------
    {"holds", "exceeded", "undecided"} or None
        ``"holds"``: the certified upper bound is <= E (the budget is met, certified); ``"exceeded"``:
        the certified lower bound is > E (the budget is certainly exceeded); ``"undecided"``: the upper
        bound exceeds E but the lower bound does not (or was not computed), so the true total may lie on
        either side.  None without a budget.
    """
    if budget is None:
        return None
    if upper <= budget["epsilon"]:
        return "holds"
    if lower is not None and lower > budget["epsilon"]:
        return "exceeded"
    return "undecided"


def _ratio_cell(total: Mapping) -> str:
    """upper / lower of a total, rounded up (``-`` without a total, ``inf`` without a lower bound)."""
    up, lo = total.get("epsilon_upper"), total.get("epsilon_lower")
    if up is None or lo is None:
        return "-"
    if not lo > 0:
        return "inf"
    return f"{math.ceil(up / lo * 1e4) / 1e4:.4f}"


def _fmt_float(x: float | None, spec: str = ".4g", rounding: str | None = None) -> str:
    """A table cell; bounds are rounded outwards (``rounding="up"`` for an upper bound, ``"down"`` for a
    lower bound) by the command line's formatter, so that a printed bound is still a bound."""
    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    if rounding is not None and isinstance(x, numbers.Real) and not isinstance(x, bool):
        return decimal_text(float(x), int(spec.strip(".g")), rounding)
    return format(x, spec)


def format_table(rows: Sequence[Collection], results: Sequence[Mapping[str, Any]], total: Mapping | None = None) -> str:
    """Render evaluated plan rows as a fixed-width text table, with totals.

    Parameters
    ----------
    rows : sequence of Collection
        The plan rows.
    results : sequence of dict
        The matching output of :func:`evaluate_plan`.
    total : dict, optional
        The output of :func:`plan_total`, printed below the table with the budget check.

    Returns
    -------
    str
        Table with columns name, mechanism, eps0, n, delta, rounds, the per-round ε bounds
        (``eps_upper``, ``eps_lower``), the collection's total (``total_upper``, ``total_lower``),
        the total's bracket ``ratio`` (upper / lower, rounded up) and comment; all ε in nats.  A population row gives its worst group's values, followed by
        one line per group (``group i``, the worst one marked).
    """
    header = ("name", "mechanism", "eps0", "n", "delta", "rounds", "eps_upper", "eps_lower",
              "total_upper", "total_lower", "ratio", "comment")
    lines = []
    for r, res in zip(rows, results):
        eps0 = res.get("eps0", r.eps0)
        tot = res.get("total") or {}
        rounds = f"sched {len(r.schedule)}" if r.schedule is not None else str(r.rounds)
        lines.append((r.name, r.describe_mechanism(), _fmt_float(eps0), str(r.n), _fmt_float(r.delta, ".3g"), rounds,
                      _fmt_float(res.get("epsilon_upper"), rounding="up"),
                      _fmt_float(res.get("epsilon_lower"), rounding="down"),
                      _fmt_float(tot.get("epsilon_upper"), rounding="up"),
                      _fmt_float(tot.get("epsilon_lower"), rounding="down"), _ratio_cell(tot), r.comment))
        groups = res.get("groups") or []
        for g in groups:          # a population: the row above is the worst group; one line per group
            worst = " (worst)" if g.get("group") == res.get("worst_group") else ""
            mech = g.get("mechanism") or {}
            label = ", ".join(f"{k}={v}" for k, v in mech.items() if k not in ("mechanism", "eps0"))
            lines.append((f"  group {g.get('group')}{worst}", f"{mech.get('mechanism', '?')} ({label})" if label
                          else str(mech.get("mechanism", "?")), _fmt_float(g.get("eps0")), str(g.get("n")),
                          _fmt_float(r.delta, ".3g"), "", _fmt_float(g.get("epsilon_upper"), rounding="up"),
                          _fmt_float(g.get("epsilon_lower"), rounding="down"), "", "", "", ""))
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header[:-1])]
    numeric = {2, 3, 4, 5, 6, 7, 8, 9, 10}

    def render(cells):
        out = []
        for i, cell in enumerate(cells[:-1]):
            out.append(cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i]))
        out.append(cells[-1])
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths) + "  " + "-" * len("comment")
    text = [render(header), rule, *(render(line) for line in lines)]
    fresh = [(r.name, res["total"]["fresh_rounds"]) for r, res in zip(rows, results)
             if (res.get("total") or {}).get("fresh_rounds")]
    for name, f in fresh:
        text.append(f"gradual release {name!r}: schedule total above; the same eps0 values as fresh k-RR rounds "
                    f"would total epsilon in [{_fmt_float(f['epsilon_lower'], rounding='down')}, {_fmt_float(f['epsilon_upper'], rounding='up')}]")
    deltas = {(res.get("total") or {}).get("delta") for res in results} - {None}
    if deltas:
        text.append("")
        text.append("delta: the delta of the per-round epsilon (eps_upper, eps_lower); every total (total_upper, "
                    f"total_lower and the grand total) is at the plan's delta = {', '.join(f'{d:.3g}' for d in sorted(deltas))}"
                    + (" (the [budget] delta)" if total is not None and total.get("budget") else ""))
    if total is not None:
        text.append("")
        text.append(f"grand total (one user in every collection and round), delta = {total['delta']:.3g}: "
                    f"epsilon (upper, certified) = {_fmt_float(total['epsilon_upper'], rounding='up')}, "
                    f"epsilon (lower) = {_fmt_float(total['epsilon_lower'], rounding='down')} nats"
                    + (f", upper/lower = {_ratio_cell(total)} (limited by {total['limited_by']})"
                       if total.get("limited_by") else ""))
        b = total.get("budget")
        if b is not None:
            text.append(f"budget: epsilon = {_fmt_float(b['epsilon'])}, delta = {b['delta']:.3g} -> "
                        f"{VERDICT_TEXT[total.get('verdict') or ('holds' if total['holds'] else 'undecided')]}")
    return "\n".join(text)


#: How the table prints each verdict.
VERDICT_TEXT = {"holds": "holds (certified)",
                "exceeded": "EXCEEDED (certified: even the lower bound is above the budget)",
                "undecided": "NOT CERTIFIED (the upper bound exceeds the budget, the lower bound does not: "
                             "undecided)"}


def format_scenarios(scenarios: Sequence[Scenario], totals: Sequence[Mapping]) -> str:
    """The scenario table: one line per scenario with its values, grand total and verdict.

    Parameters
    ----------
    scenarios : sequence of Scenario
        ``plan.scenarios``.
    totals : sequence of dict
        :func:`plan_total` of each scenario's plan.

    Returns
    -------
    str
        Columns ``scenario``, one per list-valued field (``<collection>.<field>``), ``total_upper``,
        ``total_lower`` (nats, at ``delta``), ``delta`` and ``verdict``.
    """
    keys = list(scenarios[0].values) if scenarios else []
    header = ("scenario", *keys, "total_upper", "total_lower", "delta", "verdict")
    lines = []
    for sc, t in zip(scenarios, totals):
        lines.append((str(sc.index), *(_value_text(sc.values[k]) for k in keys),
                      _fmt_float(t["epsilon_upper"], rounding="up"), _fmt_float(t["epsilon_lower"], rounding="down"),
                      f"{t['delta']:.3g}", t.get("verdict") or "-"))
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    out = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip()
           for line in [header, tuple("-" * w for w in widths), *lines]]
    return "\n".join(out)
