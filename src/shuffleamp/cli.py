"""Command-line interface: ``shuffleamp {epsilon,delta,report,compare,rounds,eps0,n,plan-template}``.

Examples
--------
::

    shuffleamp epsilon --mechanism krr --k 10 --eps0 1.0 --n 1000000 --delta 1e-8 --json
    shuffleamp delta --mechanism rappor --d 128 --eps0 2 --n 1e6 --epsilon 0.5
    shuffleamp epsilon --mechanism matrix --matrix P.csv --n 10000 --delta 1e-6
    shuffleamp epsilon --mechanism ksubset --param k=5 --param s=2 --eps0 1 --n 1e4 --delta 1e-6  # a plugin
    shuffleamp epsilon --mechanism joint --component krr:k=10:eps0=0.5 --component krr:k=10:eps0=0.5 \
        --n 1e5 --delta 1e-6
    shuffleamp epsilon --mechanism parallel --component 0.5:krr:k=10:eps0=1,0.5:blh:eps0=1 \
        --n 1e5 --delta 1e-6
    shuffleamp epsilon --mechanism subsample --component krr:k=10:eps0=1 --q 0.1 --n 1e5 --delta 1e-6
    shuffleamp report               # the plan shipped with the package
    shuffleamp report plan.toml --json
    shuffleamp plan-template > plan.toml && shuffleamp report --plan plan.toml
    shuffleamp epsilon --mechanism krr --k 10 --eps0 1 --n 1e5 --delta 1e-6 --method blanket-bennett
    shuffleamp compare --mechanism krr --k 10 --eps0 1 --n 100000 --delta 1e-6 [--json]

Options
-------
Each subcommand accepts only the options it uses; any other option is a usage error naming it.
``--param NAME=VALUE`` (repeatable) gives any parameter the mechanism declares (``Mechanism.param_specs``,
including those of plugin mechanisms registered through the ``shuffleamp.mechanisms`` entry point),
next to the named flags ``--k``, ``--d``, ``--matrix``; a required parameter left out is an error
naming it. Numbers follow :func:`shuffleamp._validate.parse_number` (``1_000``, ``1e6``, ``inf``).
A scalar option (``--n``, ``--eps0``, ...) takes one value and may be given once. The list options
``--component`` and ``--schedule`` take several values, repeated (``--component A --component B``)
or comma-separated (``--component A,B``), in order.

Output
------
Text output names the guarantee of every number (``ε (upper, certified) = ... nats``,
``ε (lower) = ...``); printed bounds are rounded outwards (an upper bound up, a lower bound down).
With ``--json`` every subcommand prints one JSON document on stdout with the same top-level keys
(:func:`shuffleamp.results.envelope`): ``schema_version``, ``version``, ``command``, ``inputs``
(every parameter as parsed, defaults included), ``result`` and ``error``.  On failure ``result`` is
null and ``error`` is ``{"type", "parameter", "message"}``; the JSON still goes to stdout.

Exit status: 0 on success; 2 on bad input (a usage error or a rejected value: ``error: <message>``
on stderr, or the JSON error document); 1 on any other deliberate failure (e.g. a resource limit);
70 on an internal error (a bug: a short message asking to report it, never a traceback; set
``SHUFFLEAMP_TRACEBACK=1`` to see it); 130 when interrupted.  ``report`` on a plan with a ``[budget]``
gates on the verdict: 0 when the certified upper total is within the budget, 3 when even the certified
lower total exceeds it (:data:`EXIT_BUDGET_EXCEEDED`), 4 when the upper exceeds it and the lower does not
(:data:`EXIT_BUDGET_UNDECIDED`); with scenarios, the worst scenario's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any, Sequence

from ._registry import DEFAULT_EVALUATOR, EVALUATORS, METHODS
from .errors import ShuffleampError

__all__ = ["main", "build_parser", "PLAN_TEMPLATE"]

#: Help of ``--rtol`` (every subcommand that takes it).
RTOL_HELP = ("target relative accuracy of the discretised engines (evaluator fft|spectral|auto; default: 1e-3); "
             "the exact evaluator, the default, reports its own certified error as delta_error")
#: ``--method`` choices of ``report`` (sound methods defined for every plan row).
REPORT_METHODS = ("optimal", "clone")
#: Shown instead of "certified" for ``sound=False`` results.
UNSOUND_LABEL = "UNSOUND (comparison only)"
#: δ values below this are printed as ``< 1e-300 (<bound>)``: they are at or below the double range.
TINY_DELTA = 1e-300
#: Plan file printed by ``shuffleamp plan-template`` (package data, valid for ``report --plan``).
PLAN_TEMPLATE = "data/plan_template.toml"
#: Example plans printed by ``shuffleamp plan-template --example NAME`` (package data).
PLAN_EXAMPLES = {"year": "data/example_year.toml"}

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 70      # EX_SOFTWARE of sysexits.h
EXIT_INTERRUPTED = 130
#: ``report`` with a [budget]: the certified lower total is above the budget's epsilon (certainly exceeded).
EXIT_BUDGET_EXCEEDED = 3
#: ``report`` with a [budget]: the certified upper total is above the budget, the lower is not (undecided).
EXIT_BUDGET_UNDECIDED = 4
#: Exit status of ``report`` for each verdict of the budget check.
VERDICT_EXIT = {None: EXIT_OK, "holds": EXIT_OK, "exceeded": EXIT_BUDGET_EXCEEDED,
                "undecided": EXIT_BUDGET_UNDECIDED}

#: Where to report an internal error.
REPORT_HINT = ("this is a bug in shuffleamp; please report it with the command line you ran "
               "(set SHUFFLEAMP_TRACEBACK=1 to print the traceback)")

#: Names of the evaluators that can produce a number (``settings["grid"]``) in plain words.
EVALUATOR_LABELS = {
    "exact": "exact evaluator",
    "enumeration": "exact enumeration",
    "binomial-mixture": "exact binomial-mixture sums",
    "chernoff": "Chernoff bound",
    "trivial": "trivial bound",
    "none": "exact: no privacy loss above epsilon",
    "fft": "FFT engine",
    "spectral": "spectral engine",
}


# --------------------------------------------------------------------------- argument parsing


class _UsageError(Exception):
    """An argument error (raised by :class:`_Parser` instead of exiting)."""

    def __init__(self, message: str, usage: str):
        super().__init__(message)
        self.usage = usage
        self.parameter = _option_parameter(message)


def _option_parameter(message: str) -> str | None:
    """The user's parameter named by an argparse message (``argument --n: ...`` -> ``n``)."""
    import re

    m = re.match(r"argument (--?[\w-]+)", message) or re.search(r"arguments?: (--?[\w-]+)", message)
    if m is None:
        m = re.search(r"the following arguments are required: (--?[\w-]+|\w+)", message)
    return m.group(1).lstrip("-").replace("-", "_") if m else None


class _Parser(argparse.ArgumentParser):
    """ArgumentParser that raises :class:`_UsageError` and never abbreviates long options
    (``--eps0`` must not silently mean ``--eps0-max``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401 - argparse hook
        raise _UsageError(message, self.format_usage())


class _Once(argparse.Action):
    """Store a scalar option; giving it twice is a usage error (not "the last one wins")."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_given", set())
        if self.dest in seen:
            raise argparse.ArgumentError(self, "given more than once; it takes one value")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


class _Extend(argparse.Action):
    """List option: values from repeated flags and comma-separated lists are concatenated in order."""

    def __call__(self, parser, namespace, values, option_string=None):
        current = list(getattr(namespace, self.dest, None) or [])
        setattr(namespace, self.dest, current + list(values))


def _scalar_text(text: str) -> str:
    if "," in text:
        raise argparse.ArgumentTypeError(
            f"takes one value, got the list {text!r} (for a grid of values use `shuffleamp sweep`)")
    return text


def _parsed(text: str) -> int | float:
    """One number by :func:`shuffleamp._validate.parse_number` (the rules of component specs and sweeps);
    unreadable text is an argparse type error (argparse names the option). ``nan`` becomes NaN, which the
    option's range check refuses naming the parameter (an input error, not a usage error)."""
    from ._validate import parse_number
    from .errors import ParameterError

    try:
        return parse_number(text, "value")
    except ParameterError as exc:
        if text.strip().lower() == "nan":      # refused by the option's range check, naming the parameter
            return math.nan
        raise argparse.ArgumentTypeError(exc.detail) from None


def _number(text: str) -> int | float:
    """argparse type for counts: accepts ``1000000``, ``1_000_000`` and ``1e6``
    (:func:`shuffleamp._validate.parse_number`).

    Range and integrality are checked later by :mod:`shuffleamp._validate`.
    """
    return _parsed(_scalar_text(text))


def _real(text: str) -> float:
    """argparse type for reals (:func:`shuffleamp._validate.parse_number`; ``inf`` and ``nan`` are let
    through and rejected by validation where they are out of range, naming the parameter)."""
    return float(_parsed(_scalar_text(text)))


def _reals(text: str) -> list[float]:
    """argparse type of a list option of reals: comma-separated numbers (validated later)."""
    return [float(_parsed(x)) for x in text.split(",") if x.strip()]


def _param_item(text: str) -> str:
    """argparse type of ``--param NAME=VALUE`` (the value is read by the mechanism's declaration later)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not name.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE (e.g. s=2), got {text!r}")
    return f"{name.strip()}={value.strip()}"


def _specs(text: str) -> list[str]:
    """argparse type of ``--component``: one or more comma-separated component specs."""
    return [x.strip() for x in text.split(",") if x.strip()]


def _add_budget_args(p: argparse.ArgumentParser) -> None:
    """``--max-seconds`` / ``--max-memory-gb``: the up-front cost model's budget (see :func:`shuffleamp.epsilon`)."""
    g = p.add_argument_group("resources")
    g.add_argument("--max-seconds", type=_real, default=10.0, action=_Once,
                   help="refuse (exit 1, ResourceLimitError) work estimated above this many seconds (default 10)")
    g.add_argument("--max-memory-gb", type=_real, default=2.0, action=_Once,
                   help="refuse work estimated above this much memory in GB (default 2)")


def _add_mechanism_args(p: argparse.ArgumentParser, *, planning_eps0: bool = False,
                        population: bool = False) -> None:
    """Mechanism options. With ``planning_eps0`` (the ``eps0`` query) there is no ``--eps0`` and only the
    simple mechanisms whose eps0 is a free parameter (no matrix, no composition). With ``population``
    (``epsilon`` and ``delta``) ``--mechanism population`` and ``--group`` are accepted too."""
    from . import gaussian  # noqa: F401  (registers the randomizers beyond pure LDP)
    from .config import COMPOSED
    from .mechanisms import registry

    MECHANISMS = registry()
    g = p.add_argument_group("mechanism")
    if planning_eps0:
        searchable = tuple(m for m, cls in MECHANISMS.items()      # the randomizers whose eps0 is a parameter
                           if m != "matrix" and any(p.name == "eps0" for p in cls.param_specs))
        g.add_argument("--mechanism", required=True, action=_Once, choices=searchable,
                       help="local randomizer (the query varies its eps0; the Gaussian randomizer has none)")
        g.add_argument("--k", type=_number, action=_Once, help="number of categories (krr)")
        g.add_argument("--d", type=_number, action=_Once,
                       help="domain size (blh, rappor, oue, hr; omit for blh/rappor/oue = asymptotic bound)")
        _add_param_arg(g, MECHANISMS)
        return
    g.add_argument("--mechanism", required=True, action=_Once,
                   choices=tuple(MECHANISMS) + COMPOSED + (("population",) if population else ()),
                   help="local randomizer; joint / parallel / subsample compose the --component specs"
                        + ("; population: users in --group groups with different randomizers (per-group "
                           "bounds)" if population else ""))
    g.add_argument("--eps0", type=_real, action=_Once, help="local ε0 in nats (optional for --mechanism matrix)")
    g.add_argument("--k", type=_number, action=_Once, help="number of categories (krr)")
    g.add_argument("--d", type=_number, action=_Once,
                   help="domain size (blh, rappor, oue, hr; omit for blh/rappor/oue = asymptotic bound)")
    g.add_argument("--matrix", metavar="FILE.csv", action=_Once,
                   help="CSV of the randomizer matrix, rows = inputs (matrix)")
    g.add_argument("--component", action=_Extend, type=_specs, metavar="SPEC[,SPEC...]",
                   help="component(s) of a composed mechanism, repeatable or comma-separated: NAME:key=value:... "
                        "for joint and subsample (e.g. krr:k=10:eps0=0.5), WEIGHT:NAME:key=value:... for parallel "
                        "(e.g. 0.5:blh:eps0=1; weights sum to 1)")
    g.add_argument("--q", type=_real, action=_Once, help="sampling probability in (0, 1] (subsample)")
    g.add_argument("--sigma", type=_real, action=_Once, help="noise standard deviation (gaussian)")
    g.add_argument("--sensitivity", type=_real, action=_Once,
                   help="length of the input interval (gaussian; default 1)")
    g.add_argument("--delta0", type=_real, action=_Once,
                   help="local delta0 in [0, 1) (approx-ldp; default 0, the pure eps0-LDP worst case)")
    g.add_argument("--domain", type=_number, action=_Once,
                   help="input-domain size (approx-ldp; omit for any domain: the charge is n * delta0)")
    _add_param_arg(g, MECHANISMS)
    if population:
        g.add_argument("--group", action="append", metavar="COUNT:NAME:key=value...",
                       help="group of a population, repeatable: COUNT users running NAME (e.g. "
                            "60000000:krr:k=10:eps0=0.5); n is their total (--n may be omitted)")


def _param_help(mechanisms: dict) -> str:
    """The parameters every mechanism declares, for ``--param``'s help."""
    parts = []
    for name, cls in mechanisms.items():
        own = [p.name for p in cls.param_specs if p.name != "eps0"]
        if own:
            parts.append(f"{name}: {', '.join(own)}")
    return "; ".join(parts)


def _add_param_arg(g, mechanisms: dict, *, values: bool = False) -> None:
    """``--param NAME=VALUE`` (repeatable): any parameter the mechanism declares, named flags included."""
    g.add_argument("--param", action="append", type=_param_item, metavar="NAME=VALUE" + ("S" if values else ""),
                   help="a parameter the mechanism declares, repeatable (e.g. --param k=5 --param s=2)"
                        + ("; VALUES as for the other grid options" if values else "")
                        + "; declared: " + _param_help(mechanisms))


def _add_common_args(p: argparse.ArgumentParser, methods: Sequence[str] | None = METHODS, *,
                     evaluator: bool = True) -> None:
    g = p.add_argument_group("accounting")
    if methods is not None:
        extra = ("; comparison methods (upper value only, labelled with their validity): "
                 + ", ".join(m for m in methods if m != "optimal")
                 + " -- variation-ratio and gdp are UNSOUND (comparison only)") if len(methods) > 2 else \
            " or clone (FMT22 standard clone, upper only)"
        g.add_argument("--method", choices=methods, default="optimal", action=_Once,
                       help="optimal (default: certified tight upper and lower bounds)" + extra)
    g.add_argument("--rtol", type=_real, default=1e-3, action=_Once, help=RTOL_HELP)
    if evaluator:
        g.add_argument("--evaluator", choices=EVALUATORS, default=DEFAULT_EVALUATOR, action=_Once,
                       help="how the certified bound is evaluated: exact (default: Bromwich integral or exact "
                            "enumeration, no discretisation, certified error bound reported as delta_error; "
                            "Laplace through its closed-form MGF), fft (discretised engine, inverse FFT over the "
                            "window), spectral (discretised engine, pruned Parseval sums) or auto (spectral or fft)")
    _add_json(g)


def _add_json(g) -> None:
    g.add_argument("--json", action="store_true",
                   help="print one JSON document (schema: schema_version, version, command, inputs, result, error)")


def _add_rounds_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("repetition")
    g.add_argument("--rounds", type=_number, default=1, action=_Once,
                   help="number of shuffled rounds one user takes part in (default 1); with R > 1 the "
                        "answer is the certified total over R rounds (composed privacy loss distributions)")
    g.add_argument("--schedule", type=_reals, action=_Extend, metavar="E1,E2,...",
                   help="gradual release of k-RR (--mechanism krr): the non-decreasing eps0 of the successive "
                        "releases (comma-separated or repeated); the answer covers the whole schedule (as "
                        "private as one round at the last eps0); replaces --eps0")


def _add_target_args(p: argparse.ArgumentParser, *, rtol: bool = True):
    """Target arguments of the planning subcommands (``rounds``, ``eps0``, ``n``); returns the group."""
    g = p.add_argument_group("target")
    g.add_argument("--target-epsilon", type=_real, required=True, action=_Once, help="target central epsilon (nats)")
    g.add_argument("--delta", type=_real, required=True, action=_Once, help="target delta in (0, 1)")
    if rtol:
        g.add_argument("--rtol", type=_real, default=1e-3, action=_Once, help=RTOL_HELP)
    _add_json(g)
    return g


def _add_report_args(p: argparse.ArgumentParser) -> None:
    """``report``'s own options: progress and the scenario limit."""
    from .config import MAX_SCENARIOS

    g = p.add_argument_group("report")
    g.add_argument("--quiet", action="store_true", help="no progress bar (it appears on a terminal only, after 1 s)")
    g.add_argument("--max-scenarios", type=_number, default=MAX_SCENARIOS, action=_Once,
                   help=f"refuse a plan whose list-valued fields expand into more scenarios (default {MAX_SCENARIOS})")


def _register_plan_queries(sub) -> None:
    """``eps0`` / ``rounds`` / ``n`` with ``--plan PLAN --collection NAME``: the plan-level inverse queries
    (:func:`shuffleamp.plans.plan_max`). Without ``--plan`` the single-mechanism query runs as before."""
    for name in PLAN_QUERY_OPTIONS:
        p = sub.choices[name]
        g = p.add_argument_group("plan-level query (instead of the mechanism and target options)")
        g.add_argument("--plan", dest="query_plan", metavar="PLAN", action=_Once,
                       help=f"plan file with a [budget]: the {'smallest' if name == 'n' else 'largest'} {name} of "
                            "--collection for which the plan's certified grand total stays within the budget")
        g.add_argument("--collection", metavar="NAME", action=_Once, help="the plan collection whose " + name +
                       " is searched (with --plan)")
        g.add_argument("--quiet", action="store_true", help="no progress bar (with --plan)")
        required = []
        for action in p._actions:                  # required only without --plan (checked by _cmd_plan_query)
            if action.required:
                action.required = False
                required.append(action)
        p.set_defaults(func=_cmd_plan_query, _plan_required=tuple(
            (a.dest, a.option_strings[0]) for a in required))


#: Subcommands that also answer plan-level queries, and the ceiling option each one reuses.
PLAN_QUERY_OPTIONS = {"eps0": "eps0_max", "rounds": "max_rounds", "n": "n_max"}


def build_parser() -> argparse.ArgumentParser:
    """Build the ``shuffleamp`` argument parser.

    Each subcommand has its own options; an option a subcommand does not use is rejected. The
    parser raises an internal usage exception instead of exiting (:func:`main` reports it).

    Returns
    -------
    argparse.ArgumentParser
        The parser (``parse_args`` returns a namespace whose ``func`` runs the subcommand).
    """
    from . import __version__

    parser = _Parser(
        prog="shuffleamp",
        description="Privacy amplification by shuffling: central (ε, δ) of n shuffled ε0-LDP reports "
                    "(ε in nats).",
    )
    parser.add_argument("--version", action="version", version=f"shuffleamp {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser,
                                metavar="{epsilon,delta,report,compare,rounds,eps0,n,sweep,plot,plan-template}")

    p = sub.add_parser("epsilon", help="central ε for a given δ",
                       description="Bounds on the central ε (nats) of the shuffled mechanism at a given δ.")
    _add_mechanism_args(p, population=True)
    g = p.add_argument_group("population")
    g.add_argument("--n", type=_number, action=_Once,
                   help="number of users (e.g. 1000000 or 1e6); required except with --group")
    g.add_argument("--delta", type=_real, required=True, action=_Once, help="target δ in (0, 1)")
    _add_rounds_args(p)
    _add_common_args(p)
    _add_budget_args(p)
    p.set_defaults(func=_cmd_bound, quantity="epsilon")

    p = sub.add_parser("delta", help="central δ for a given ε",
                       description="Bounds on the central δ of the shuffled mechanism at a given ε (nats).")
    _add_mechanism_args(p, population=True)
    g = p.add_argument_group("population")
    g.add_argument("--n", type=_number, action=_Once,
                   help="number of users (e.g. 1000000 or 1e6); required except with --group")
    g.add_argument("--epsilon", type=_real, required=True, action=_Once, help="central ε in nats (>= 0)")
    _add_rounds_args(p)
    _add_common_args(p)
    _add_budget_args(p)
    p.set_defaults(func=_cmd_bound, quantity="delta")

    p = sub.add_parser("report", help="table of shuffled ε for every collection of a plan, with totals",
                       description="Evaluate a TOML/JSON plan of collections ([[collection]] tables with "
                                   "name, mechanism, eps0, n, delta, optional k/d/matrix, rounds or schedule, "
                                   "and comment; an optional [budget] table with epsilon and delta): the "
                                   "per-round epsilon, each collection's total over its rounds, and the grand "
                                   "total for a user in every collection, checked against the budget; every "
                                   "total is at the [budget] delta. List-valued fields are scenarios, each "
                                   "evaluated on its own. Exit status: 0 budget holds (certified), 3 exceeded "
                                   "(even the lower total is above it), 4 undecided (the upper total is above "
                                   "it, the lower is not). "
                                   "Without a plan the plan shipped with the package is used; "
                                   "`shuffleamp plan-template` prints a commented starting plan.")
    p.add_argument("plan", nargs="?", metavar="PLAN", help="plan file (.toml or .json)")
    p.add_argument("--plan", dest="plan_option", metavar="PLAN", action=_Once,
                   help="plan file (.toml or .json), the same as the positional PLAN")
    _add_common_args(p, REPORT_METHODS, evaluator=False)
    _add_report_args(p)
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("compare", help="every method side by side, with validity and run time",
                       description="Run every method (optimal and the comparison baselines) on one setting and "
                                   "print each value with its guarantee, validity regime and run time. "
                                   "Methods outside their validity regime are listed with the reason.")
    _add_mechanism_args(p)
    g = p.add_argument_group("population")
    g.add_argument("--n", type=_number, required=True, action=_Once, help="number of users (e.g. 1000000 or 1e6)")
    x = g.add_mutually_exclusive_group(required=True)
    x.add_argument("--delta", type=_real, action=_Once, help="target δ in (0, 1): compare ε")
    x.add_argument("--epsilon", type=_real, action=_Once, help="central ε in nats: compare δ")
    _add_common_args(p, None)
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("rounds", help="largest number of rounds that fits a total (epsilon, delta) budget",
                       description="Budget accounting: the largest number R of shuffled rounds whose certified "
                                   "total (composed privacy loss distributions) meets the target (epsilon, delta).")
    _add_mechanism_args(p)
    g = _add_target_args(p, rtol=False)
    g.add_argument("--n", type=_number, required=True, action=_Once, help="number of users per round")
    g.add_argument("--max-rounds", type=_number, default=10**6, action=_Once,
                   help="search ceiling for R (default 1e6)")
    _add_budget_args(p)
    p.set_defaults(func=_cmd_rounds)

    p = sub.add_parser("eps0", help="largest eps0 meeting a target (epsilon, delta) for n users",
                       description="Planning: the largest local eps0 whose certified shuffled upper bound meets "
                                   "the target (epsilon, delta) for n users (conservative end of the bracket).")
    _add_mechanism_args(p, planning_eps0=True)
    g = _add_target_args(p)
    g.add_argument("--n", type=_number, required=True, action=_Once, help="number of users")
    g.add_argument("--eps0-max", type=_real, default=20.0, action=_Once, help="search ceiling for eps0 (default 20)")
    p.set_defaults(func=_cmd_planning, quantity="eps0")

    p = sub.add_parser("n", help="smallest n meeting a target (epsilon, delta) at a given eps0",
                       description="Planning: the smallest number of users for which the certified shuffled "
                                   "upper bound meets the target (conservative end of the bracket).")
    _add_mechanism_args(p)
    g = _add_target_args(p)
    g.add_argument("--n-max", type=_number, default=10**12, action=_Once, help="search ceiling for n (default 1e12)")
    p.set_defaults(func=_cmd_planning, quantity="n")

    p = sub.add_parser("plan-template", help="print a commented starting plan for `shuffleamp report`",
                       description="Print a commented TOML plan (every field explained) to stdout; edit it and "
                                   "run `shuffleamp report --plan FILE`.")
    p.add_argument("--example", choices=tuple(PLAN_EXAMPLES), action=_Once,
                   help="print a worked example plan instead (year: three daily collections over 365 days "
                        "against a budget)")
    p.set_defaults(func=_cmd_plan_template)
    _register_sweep_commands(sub)
    _register_plan_queries(sub)
    parser.subcommands = dict(sub.choices)
    return parser


# --------------------------------------------------------------------------- formatting


from .results import decimal_text as _decimal_text  # noqa: E402  (one formatter: cli and the report table)


def _num(x: Any, digits: int = 6, rounding: str | None = None) -> str:
    """A number as plain text: no numpy reprs; bounds rounded outwards with ``rounding``."""
    if x is None:
        return "-"
    if type(x).__module__ == "numpy":
        x = x.tolist() if hasattr(x, "tolist") else x
    if isinstance(x, list):
        return "[" + ", ".join(_num(v, digits, rounding) for v in x) + "]"
    if isinstance(x, bool) or isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return _decimal_text(x, digits, rounding)
    return str(x)


def _pair_digits(upper: Any, lower: Any) -> int:
    """Significant digits (6 to 12) at which an outward-rounded upper and lower bound print differently."""
    if not isinstance(upper, float) or not isinstance(lower, float) or upper == lower:
        return 6
    for digits in range(6, 13):
        if _num(upper, digits, "up") != _num(lower, digits, "down"):
            return digits
    return 12


def _delta_text(value: Any, evaluator: Any, rounding: str, digits: int = 6) -> str:
    """A δ for print: values below :data:`TINY_DELTA` as ``< 1e-300 (<bound>)``, exact zeros named."""
    if isinstance(value, list):
        evs = evaluator if isinstance(evaluator, list) else [evaluator] * len(value)
        return "[" + ", ".join(_delta_text(v, e, rounding, digits) for v, e in zip(value, evs)) + "]"
    if not isinstance(value, (int, float)) or value is None:
        return _num(value)
    if value == 0 and evaluator in ("none", "trivial"):
        return "0 (exact)"
    if rounding == "up" and value < TINY_DELTA:
        return f"< {TINY_DELTA:g} ({EVALUATOR_LABELS.get(evaluator, evaluator or 'bound')})"
    if rounding == "down" and value < TINY_DELTA:
        return f"0 (below {TINY_DELTA:g}; not resolved)"
    return _num(float(value), digits, rounding)


def _u(text: str) -> str:
    """``text`` transliterated to ASCII when stdout cannot encode it (e.g. a C locale without UTF-8)."""
    enc = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(enc)
        return text
    except (UnicodeEncodeError, LookupError):
        for a, b in (("ε", "eps"), ("δ", "delta"), ("≤", "<="), ("≥", ">="), ("×", "x"), ("μ", "mu"), ("—", "--")):
            text = text.replace(a, b)
        return text.encode("ascii", "replace").decode("ascii")


def _print(text: str = "") -> None:
    print(_u(text))


def _mechanism_label(args: argparse.Namespace) -> str:
    comps = getattr(args, "component", None)
    given = _param_values(args)
    if comps:
        q = getattr(args, "q", None)
        q = given.get("q") if q is None else q
        q = f", q={_num(q)}" if q is not None else ""
        return f"{args.mechanism} ({' + '.join(comps)}{q})"
    params = [f"{key}={_num(getattr(args, key))}" for key in ("k", "d", "matrix", "sigma", "sensitivity", "delta0", "domain")
              if getattr(args, key, None) is not None]
    params += [f"{key}={_num(value)}" for key, value in given.items()]
    return f"{args.mechanism} ({', '.join(params)})" if params else args.mechanism


def _bound_lines(q: str, upper: Any, lower: Any, *, sound: bool = True, up_ev: Any = None, lo_ev: Any = None,
                 label_upper: str | None = None) -> list[str]:
    """``ε (upper, certified) = ... nats`` / ``ε (lower) = ...`` lines (δ likewise, unitless)."""
    sym = "ε" if q == "epsilon" else "δ"
    unit = " nats" if q == "epsilon" else ""
    up_label = label_upper or ("upper, certified" if sound else f"upper, {UNSOUND_LABEL}")
    rows = [(f"{sym} ({up_label})", upper, "up", up_ev)]
    if lower is not None:
        rows.append((f"{sym} (lower)", lower, "down", lo_ev))
    width = max(len(r[0]) for r in rows)
    digits = _pair_digits(upper, lower)
    out = []
    for name, value, rounding, ev in rows:
        text = _delta_text(value, ev, rounding, digits) if q == "delta" else _num(value, digits, rounding)
        sep = " " if text.startswith("<") else " = "
        out.append(f"  {name.ljust(width)}{sep}{text}{unit if value is not None else ''}")
    return out


def _summary(result, mech, args: argparse.Namespace) -> list[str]:
    from . import __version__

    q = result.quantity
    given = "delta" if q == "epsilon" else "epsilon"
    lines = [
        f"shuffleamp {__version__}: central {q} of the shuffled reports (method: {result.method})",
        f"  mechanism : {_mechanism_label(args)}"
        + (f", eps0 = {_num(mech.eps0)} nats" if "eps0" in mech.describe() else ""),
        f"  n         : {_num(result.n)}",
        f"  {given:<10}: {_num(getattr(result, given))}{' nats' if given == 'epsilon' else ''}",
    ]
    if result.kind == "estimate":
        lines.append(f"  {'ε' if q == 'epsilon' else 'δ'} (estimate, not a bound) ~ {_num(result.estimate)}"
                     f"{' nats' if q == 'epsilon' else ''}")
    else:
        lines += _bound_lines(q, result.upper, result.lower, sound=result.sound,
                              up_ev=result.evaluator_of("upper"), lo_ev=result.evaluator_of("lower"))
        if result.lower is None:
            lines.append("  (upper bound only: this method has no lower bound)")
    ev = result.settings.get("evaluator")
    if result.method == "optimal":
        used = result.evaluator_of("upper")
        used = sorted(set(used)) if isinstance(used, list) else [used]
        via = "" if used == [ev] else f" (the upper bound by: {', '.join(EVALUATOR_LABELS.get(u, u) for u in used)})"
        err = result.error
        err = max(err) if isinstance(err, list) else err
        err_text = f"< {TINY_DELTA:g}" if err is not None and err < TINY_DELTA else f"≤ {_num(err, 3, 'up')}"
        lines.append(f"  evaluator : {ev}{via}; certified δ error {err_text}, included in the bounds" if err is not None
                     else f"  evaluator : {ev}{via}; numerical error bands included in the bounds")
    elif ev:
        lines.append(f"  evaluator : {ev}")
    if not result.sound:
        lines.append(f"  status    : {UNSOUND_LABEL}")
    regime = (result.settings or {}).get("regime")
    if regime and result.method != "optimal":
        lines.append(f"  validity  : {regime}")
    return lines


# --------------------------------------------------------------------------- commands


def _inputs(args: argparse.Namespace) -> dict:
    """Every parameter of the command as parsed (defaults filled in): the JSON ``inputs``."""
    out = {}
    for key, value in vars(args).items():
        if key.startswith("_") or key in ("func", "command", "json", "quantity"):
            continue
        if isinstance(value, float) and value.is_integer() and key in ("n", "k", "d", "rounds", "max_rounds", "n_max"):
            value = int(value)
        out[key] = value
    return out


def _emit(args: argparse.Namespace, result: Any) -> None:
    """Print the JSON document of a successful command."""
    from .results import envelope

    print(json.dumps(envelope(args.command, _inputs(args), result), indent=2))


#: The mechanism parameters that have a named option (``--eps0``, ``--sigma``, ...) next to ``--param NAME=VALUE``.
NAMED_MECHANISM_FLAGS = ("eps0", "k", "d", "matrix", "q", "sigma", "sensitivity", "delta0", "domain")


def _mechanism_from_args(args: argparse.Namespace):
    """The mechanism of the command line's mechanism arguments, through :func:`shuffleamp.config.mechanism_from_spec`."""
    from .config import COMPOSED, mechanism_from_spec, population_from_specs
    from .errors import ParameterError

    if args.mechanism == "population" or getattr(args, "group", None):
        if args.mechanism != "population":
            raise ParameterError("--group", f"only for --mechanism population, not {args.mechanism!r}")
        if getattr(args, "command", None) not in ("epsilon", "delta"):
            raise ParameterError("mechanism", "population is supported by the epsilon and delta commands "
                                              "(and by plans in report)")
        return population_from_specs(args.group or [])
    schedule = getattr(args, "schedule", None)
    if schedule is not None:
        from .gradual import GradualRelease

        if args.mechanism != "krr":
            raise ParameterError("schedule", f"gradual release is defined for --mechanism krr, not {args.mechanism!r}")
        if args.eps0 is not None:
            raise ParameterError("eps0", "not used with --schedule (the schedule gives every eps0)")
        if getattr(args, "rounds", 1) != 1:
            raise ParameterError("rounds", "give either --rounds or --schedule, not both")
        k = _param_values(args).get("k", args.k)
        release = GradualRelease(k=k if k is not None else 2, schedule=schedule)  # k checked by make()
        args.eps0 = release.schedule[-1]
    spec: dict[str, Any] = {"mechanism": args.mechanism}
    for key in NAMED_MECHANISM_FLAGS:
        if getattr(args, key, None) is not None:
            spec[key] = getattr(args, key)
    for key, value in _param_values(args).items():
        if key in spec:
            raise ParameterError(key, f"given twice (--{key} and --param {key}=...)")
        spec[key] = value
    _require_declared(args.mechanism, spec, named=[k for k in NAMED_MECHANISM_FLAGS if hasattr(args, k)])
    comps = getattr(args, "component", None)
    if comps is not None:
        spec["components"] = list(comps)
    if args.mechanism in COMPOSED and not comps:
        raise ParameterError("component", f"--mechanism {args.mechanism} needs at least one --component SPEC")
    return mechanism_from_spec(spec)


def _mechanism_declaration(name: str, *, composed: bool = False):
    """The declared parameters of mechanism ``name`` ({name: Parameter}); for a composed one (joint,
    parallel, subsample) its numeric fields when ``composed``, else None."""
    from .config import COMPOSED
    from .mechanisms import registry

    if name in COMPOSED:
        if not composed:
            return None
        from .compose import COMPOSED_CLASSES

        return {p.name: p for p in COMPOSED_CLASSES[name].param_specs if p.numeric}
    cls = registry().get(name)
    return None if cls is None else {p.name: p for p in cls.param_specs}


def _param_values(args: argparse.Namespace) -> dict:
    """``--param NAME=VALUE`` items read by the mechanism's declaration (:meth:`Parameter.parse`)."""
    from .errors import ParameterError

    items = getattr(args, "param", None) or []
    if not items:
        return {}
    cached = getattr(args, "_param_values", None)
    if cached is not None:
        return cached
    declared = _mechanism_declaration(args.mechanism, composed=True) or {}
    out: dict[str, Any] = {}
    for item in items:
        key, _, text = item.partition("=")
        if key in out:
            raise ParameterError(key, f"given twice (--param {key}=...)")
        spec = declared.get(key)
        if spec is None:
            raise ParameterError(key, f"not a parameter of mechanism {args.mechanism!r}; it declares: "
                                      + ("; ".join(p.describe() for p in declared.values()) or "none (give "
                                         "--component SPEC)"))
        out[key] = spec.parse(text)
    args._param_values = out
    return out


def _require_declared(mechanism: str, spec: dict, named=NAMED_MECHANISM_FLAGS) -> None:
    """A required parameter left out is an error naming it and how to give it (never a silent default); ``named``:
    the parameters with a named option in this subcommand."""
    declared = _mechanism_declaration(mechanism)
    for p in (declared or {}).values():
        if p.required and p.name not in spec:
            flag = f"--{p.name} VALUE or --param {p.name}=VALUE" if p.name in named else f"--param {p.name}=VALUE"
            raise p.missing(mechanism, f"give {flag}")


def _cmd_planning(args: argparse.Namespace) -> int:
    """``eps0`` / ``n`` planning subcommands (:mod:`shuffleamp.planning`)."""
    from . import planning

    if args.quantity == "eps0":
        args.eps0 = 1.0          # placeholder: the search varies eps0 (not an option of this subcommand)
        mech = _mechanism_from_args(args)
        del args.eps0
        res = planning.max_eps0(mech, args.n, args.target_epsilon, args.delta, eps0_max=args.eps0_max,
                                rtol=args.rtol)
    else:
        mech = _mechanism_from_args(args)
        res = planning.min_n(mech, args.target_epsilon, args.delta, n_max=args.n_max, rtol=args.rtol)
    if args.json:
        _emit(args, res.to_dict())
        return EXIT_OK
    what = "largest eps0" if args.quantity == "eps0" else "smallest n"
    value = _num(res.value, 10, "down") if args.quantity == "eps0" else _num(res.value)
    unit = " nats" if args.quantity == "eps0" else ""
    _print(f"{what}: {value}{unit} (certified: delta_upper = {_below(res.delta_at_value, res.delta)} ≤ "
           f"{_num(res.delta)} at epsilon = {_num(res.target_epsilon)} nats); next infeasible candidate: "
           f"{_num(res.infeasible_bound, 10, 'up') if args.quantity == 'eps0' else _num(res.infeasible_bound)}")
    return EXIT_OK


def _cmd_plan_query(args: argparse.Namespace) -> int:
    """``eps0`` / ``rounds`` / ``n``: the plan-level query with ``--plan``, else the single-mechanism one."""
    from .errors import ParameterError

    plan = args.query_plan
    if plan is None:
        if args.collection is not None:
            raise ParameterError("collection", "only with --plan PLAN")
        missing = [(dest, opt) for dest, opt in args._plan_required if getattr(args, dest, None) is None]
        if missing:
            raise ParameterError(missing[0][0], f"required: {', '.join(opt for _, opt in missing)} (or --plan PLAN "
                                                "--collection NAME for a plan-level query)")
        for key in ("query_plan", "collection", "quiet", "_plan_required"):
            vars(args).pop(key, None)
        return _SINGLE_QUERIES[args.command](args)
    if args.collection is None:
        raise ParameterError("collection", "required with --plan (the collection whose "
                                           f"{args.command} is searched)")
    ceiling = PLAN_QUERY_OPTIONS[args.command]
    given = sorted(dest for dest in getattr(args, "_given", set())
                   if dest not in ("query_plan", "collection", ceiling))
    if given:
        raise ParameterError(given[0], f"not used with --plan (the plan fixes every other parameter; --{given[0].replace('_', '-')} "
                                       "belongs to the single-mechanism query)")
    from .plans import plan_max

    res = plan_max(plan, args.collection, args.command, limit=getattr(args, ceiling),
                   progress=False if args.quiet else None)
    if args.json:
        _emit(argparse.Namespace(command=args.command, plan=plan, collection=args.collection,
                                 **{ceiling: getattr(args, ceiling)}), res.to_dict())
        return EXIT_OK
    p = args.command
    what = {"eps0": "largest eps0", "rounds": "largest number of rounds", "n": "smallest n"}[p]
    value = _num(res.value, 10, "down") + " nats" if p == "eps0" else str(res.value)
    t = res.total
    b = res.budget
    nxt = (_num(res.infeasible, 10, "up") if p == "eps0" else str(res.infeasible)) if res.infeasible is not None \
        else "none up to the search ceiling"
    _print(f"{what} of collection {res.collection!r}: {value} (certified: the plan's grand total ε (upper) = "
           f"{_below(t['epsilon_upper'], b['epsilon'])} ≤ {_num(b['epsilon'])} nats at delta = {_num(b['delta'])}; "
           f"lower = {_num(t['epsilon_lower'], 6, 'down')}); first infeasible {p}: {nxt}")
    return EXIT_OK


def _below(value: float, limit: float) -> str:
    """``value`` rounded up with the fewest digits (>= 4) that still print it below ``limit`` when it is."""
    for digits in range(4, 18):
        text = _num(value, digits, "up")
        if value >= limit or float(text) < limit:
            return text
    return repr(value)


def _cmd_rounds(args: argparse.Namespace) -> int:
    """``rounds``: the largest number of rounds within a total budget (:func:`shuffleamp.accounting.max_rounds`)."""
    from . import _validate
    from .accounting import compose_rounds, max_rounds

    mech = _mechanism_from_args(args)
    n = _validate.count(args.n, "n")
    eps = _validate.real("target_epsilon", args.target_epsilon, lo=0.0, lo_open=True)
    delta = _validate.delta(args.delta)
    limit = _validate.count(args.max_rounds, "max_rounds")
    budget = {"max_seconds": args.max_seconds, "max_memory_gb": args.max_memory_gb}
    R = max_rounds(mech, n, eps, delta, limit=limit, **budget)
    # the certificate of the answer: R rounds of a pure eps0-LDP randomizer are (R eps0, 0)-DP (basic
    # composition), which max_rounds uses without composing; else the composed total at R itself
    described = mech.describe()
    local = described.get("eps0")
    at, how = None, None
    if R >= 1 and local is not None and not described.get("delta0") and R * float(local) <= eps:
        at, how = R * float(local), "basic composition (R x eps0)"
    elif R >= 1:
        at, how = (compose_rounds([(mech, n, R)], delta=delta, lower=False, **budget).upper,
                   "composition of the rounds")
    if args.json:
        _emit(args, {"quantity": "rounds", "rounds": R, "epsilon_upper_at_rounds": at, "certified_by": how,
                     "guarantee": "certified: the total epsilon (upper) over this many rounds is <= target_epsilon",
                     "ceiling_reached": R == limit, "mechanism": described, "eps0": local, "n": n,
                     "target_epsilon": eps, "delta": delta, "max_rounds": limit,
                     "units": {"epsilon": "nats", "eps0": "nats"}})
    elif R == 0:
        _print(f"largest number of rounds: 0 (not even one round meets epsilon = {_num(eps)} nats at "
               f"delta = {_num(delta)})")
    else:
        basic = how.startswith("basic")
        _print(f"largest number of rounds: {R} (certified: total ε (upper) = {_below(at, eps)} ≤ {_num(eps)} nats at "
               f"delta = {_num(delta)}{f', by {how}' if basic else ''}"
               f"{'; the search ceiling --max-rounds was reached' if R == limit else ''})")
    return EXIT_OK


def _cmd_bound(args: argparse.Namespace) -> int:
    import shuffleamp

    from . import _validate

    mech = _mechanism_from_args(args)
    if args.mechanism == "population":
        return _cmd_population(args, mech)
    if args.n is None:
        from .errors import ParameterError
        raise ParameterError("n", "is required (--n N), except for --mechanism population with --group")
    rounds = _validate.count(args.rounds, "rounds")
    if rounds > 1 and args.method != "optimal":
        from .errors import ParameterError
        raise ParameterError("method", "the total over --rounds is computed for the optimal bound only")
    from .sweep import busy              # elapsed-time indicator on a terminal once the work lasts > 1 s

    with busy(args.quantity):
        budget = {"max_seconds": args.max_seconds, "max_memory_gb": args.max_memory_gb}
        if args.quantity == "epsilon":
            result = shuffleamp.epsilon(mech, args.n, args.delta, method=args.method, rtol=args.rtol,
                                        evaluator=args.evaluator, **budget)
        else:
            result = shuffleamp.delta(mech, args.n, args.epsilon, method=args.method, rtol=args.rtol,
                                      evaluator=args.evaluator, **budget)
    doc = result.to_dict()
    total = None
    q = args.quantity
    if rounds > 1:
        from .accounting import compose_rounds

        given = {"delta": result.delta} if q == "epsilon" else {"epsilon": result.epsilon}
        with busy(f"total over {rounds} rounds"):
            total = compose_rounds([(mech, result.n, rounds)], **given, **budget)
        doc["per_round"] = {f"{q}_upper": doc[f"{q}_upper"], f"{q}_lower": doc[f"{q}_lower"],
                            "bounds": doc["bounds"]}
        doc[f"{q}_upper"], doc[f"{q}_lower"] = total.upper, total.lower
        doc["bounds"] = {"upper": {"value": total.upper, "guarantee": "certified upper bound",
                                   "evaluator": total.method, "delta_error": None},
                         "lower": None if total.lower is None else
                         {"value": total.lower, "guarantee": "certified lower bound",
                          "evaluator": total.lower_method, "delta_error": None}}
        doc["accounting"] = total.to_dict()
    doc["rounds"] = rounds
    if args.schedule is not None:
        doc["schedule"] = list(args.schedule)
    if args.json:
        _emit(args, doc)
        return EXIT_OK
    for line in _summary(result, mech, args):
        _print(line)
    if total is not None:
        _print(f"  total over {rounds} rounds ({total.lower_method} for the lower bound):")
        for line in _bound_lines(q, total.upper, total.lower):
            _print("  " + line)
        import math
        ratio = "inf" if not math.isfinite(total.ratio) else f"{math.ceil(total.ratio * 1e4) / 1e4:.4f}"
        _print(f"    upper/lower: {ratio} (limited by {total.limited_by})")
    if args.schedule is not None:
        _print(f"  schedule  : {', '.join(_num(e) for e in args.schedule)} (gradual release: the "
               "whole schedule is as private as one shuffled round at its last eps0)")
    return EXIT_OK


def _group_label(described: dict) -> str:
    """A population group's randomizer from its ``describe()``: ``krr (k=10), eps0 = 0.5``,
    ``gaussian (sigma=1, sensitivity=1)`` (no eps0: not an LDP parameter of that randomizer)."""
    skip = ("mechanism", "eps0", "eps0_tight", "sha256", "shape")
    params = [f"{key}={_num(value)}" for key, value in described.items()
              if key not in skip and value is not None and not isinstance(value, (dict, list))]
    text = described.get("mechanism", "?") + (f" ({', '.join(params)})" if params else "")
    eps0 = described.get("eps0")
    return text + (f", eps0 = {_num(eps0)}" if eps0 is not None else "")


def _cmd_population(args: argparse.Namespace, pop) -> int:
    """``epsilon`` / ``delta`` for ``--mechanism population``: one bound per group and the worst group's."""
    import shuffleamp

    from .errors import ParameterError

    for name in (*NAMED_MECHANISM_FLAGS, "schedule", "param"):
        if getattr(args, name, None) is not None:
            raise ParameterError(name, "is given per group (--group COUNT:NAME:key=value...), not for the population")
    if getattr(args, "component", None):
        raise ParameterError("component", "is not used by --mechanism population (give --group)")
    from . import _validate

    rounds = _validate.count(1 if args.rounds is None else args.rounds, "rounds")
    if args.method != "optimal" or args.evaluator != DEFAULT_EVALUATOR:
        raise ParameterError("method", "a population has the optimal method with the exact evaluator only")
    if args.n is not None and int(args.n) != pop.n:
        raise ParameterError("n", f"must equal the total of the groups ({pop.n}), got {int(args.n)}")
    q = args.quantity
    budget = {"max_seconds": args.max_seconds, "max_memory_gb": args.max_memory_gb}
    if q == "epsilon":
        result = shuffleamp.epsilon(pop, delta=args.delta, **budget)
    else:
        result = shuffleamp.delta(pop, epsilon=args.epsilon, **budget)
    doc = result.to_dict()
    doc.pop("version", None)
    doc["units"] = {"epsilon": "nats", "eps0": "nats"}
    total = None
    if rounds > 1:      # every user of every group, over the rounds: the accountant's pointwise maximum over groups
        from .accounting import compose_rounds
        from .sweep import busy

        given_q = {"delta": args.delta} if q == "epsilon" else {"epsilon": args.epsilon}
        with busy(f"total over {rounds} rounds"):
            total = compose_rounds([(pop, None, rounds)], **given_q, **budget)
        doc["total"] = {f"{q}_upper": total.upper, f"{q}_lower": total.lower, "rounds": rounds,
                        "guarantee": "certified upper bound for every user of every group; lower bound of a "
                                     "concrete neighbouring pair", "accounting": total.to_dict()}
    doc["rounds"] = rounds
    if args.json:
        _emit(args, doc)
        return EXIT_OK
    given = f"delta = {_num(args.delta)}" if q == "epsilon" else f"epsilon = {_num(args.epsilon)} nats"
    _print(f"personalized shuffle model: {len(result.groups)} groups, n = {pop.n}, {given} "
           f"(each user's guarantee against changing only that user's input)")
    for gr in result.groups:
        _print(f"  group {gr.index}: {_group_label(gr.mechanism)}, n = {gr.n}")
        for line in _bound_lines(q, gr.upper, gr.lower):
            _print("  " + line)
    _print(f"  worst group ({result.worst}):")
    for line in _bound_lines(q, result.upper, result.lower):
        _print("  " + line)
    if total is not None:
        import math

        _print(f"  total over {rounds} rounds, every user of every group ({total.lower_method} for the lower "
               "bound):")
        for line in _bound_lines(q, total.upper, total.lower):
            _print("  " + line)
        ratio = "inf" if not math.isfinite(total.ratio) else f"{math.ceil(total.ratio * 1e4) / 1e4:.4f}"
        _print(f"    upper/lower: {ratio} (limited by {total.limited_by})")
    return EXIT_OK


def _compare_rows(mech, n, quantity: str, given: float, rtol: float, evaluator: str = DEFAULT_EVALUATOR) -> list[dict]:
    """Run every method; one dict per method (plus the optimal method's certified lower bound)."""
    import time

    import shuffleamp
    from . import baselines
    from .errors import OutOfRegimeError, ParameterError
    from .results import error_info, guarantee

    fn = shuffleamp.epsilon if quantity == "epsilon" else shuffleamp.delta
    rows = []
    for method in METHODS:
        info = baselines.METHOD_INFO[method]
        side = "estimate" if info.kind == "estimate" else "upper"
        row: dict[str, Any] = {"method": method, "status": "ok", quantity: None, "kind": side,
                               "guarantee": guarantee(side, sound=info.sound), "evaluator": None,
                               "sound": info.sound, "seconds": None, "regime": baselines.regime(method, mech),
                               "source": info.source, "reason": None}
        t0 = time.perf_counter()
        try:
            r = fn(mech, n, given, method=method, rtol=rtol, evaluator=evaluator)
        except OutOfRegimeError as exc:
            row.update(status="out_of_regime", reason=error_info(exc)["message"], seconds=time.perf_counter() - t0)
            rows.append(row)
            continue
        except ParameterError:
            raise
        except ShuffleampError as exc:   # e.g. a resource limit: report it, keep going
            row.update(status="error", reason=error_info(exc)["message"], seconds=time.perf_counter() - t0)
            rows.append(row)
            continue
        side = "estimate" if r.kind == "estimate" else "upper"
        row.update(seconds=time.perf_counter() - t0, kind=side, guarantee=guarantee(side, sound=r.sound),
                   sound=r.sound, regime=r.settings.get("regime"),
                   evaluator=r.evaluator_of("upper") if r.kind != "estimate" else r.settings.get("evaluator"))
        row[quantity] = r.value
        rows.append(row)
        if method == "optimal" and r.lower is not None:
            rows.append({"method": "optimal (lower)", "status": "ok", quantity: r.lower, "kind": "lower",
                         "guarantee": guarantee("lower"), "evaluator": r.evaluator_of("lower"),
                         "sound": True, "seconds": None, "regime": "certified lower bound: exact divergence of a "
                         "concrete neighbouring dataset (same run as optimal)", "source": info.source, "reason": None})
    return rows


def _cmd_compare(args: argparse.Namespace) -> int:
    from . import __version__, _validate

    mech = _mechanism_from_args(args)
    n = _validate.count(args.n, "n")
    if args.delta is not None:
        quantity, given_name, given = "epsilon", "delta", _validate.delta(args.delta)
    else:
        quantity, given_name, given = "delta", "epsilon", _validate.epsilon(args.epsilon)
    rtol = _validate.real("rtol", args.rtol, lo=1e-9, hi=0.5)
    rows = _compare_rows(mech, n, quantity, given, rtol, args.evaluator)
    if args.json:
        described = mech.describe()
        _emit(args, {"quantity": quantity, "mechanism": described, "eps0": described.get("eps0"), "n": n,
                     given_name: given, "units": {"epsilon": "nats", "eps0": "nats"}, "methods": rows})
        return EXIT_OK
    _print(f"shuffleamp {__version__}: shuffled {quantity} by every method" + (" (nats)" if quantity == "epsilon" else ""))
    _print(f"  mechanism : {_mechanism_label(args)}"
           + (f", eps0 = {_num(mech.eps0)} nats" if "eps0" in mech.describe() else ""))
    _print(f"  n         : {n}")
    _print(f"  {given_name:<10}: {_num(given)}")
    _print()
    head = ("method", quantity, "guarantee", "time s")
    table = []
    for r in rows:
        if r["status"] != "ok":
            continue
        rounding = {"upper": "up", "lower": "down"}.get(r["kind"])
        if quantity == "delta":
            val = _delta_text(r[quantity], r["evaluator"], rounding or "up")
        else:
            val = _num(r[quantity], 6, rounding)
        if r["kind"] == "estimate":
            val = "~" + val
        table.append((r["method"], val, r["guarantee"], "-" if r["seconds"] is None else f"{r['seconds']:.3f}"))
    widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h) for i, h in enumerate(head)]
    _print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    _print("  ".join("-" * w for w in widths))
    for t in table:
        _print("  ".join(c.ljust(w) for c, w in zip(t, widths)).rstrip())
    skipped = [r for r in rows if r["status"] != "ok"]
    if skipped:
        _print()
        _print("not applicable here:")
        for r in skipped:
            what = "out of regime" if r["status"] == "out_of_regime" else "failed"
            reason = r["reason"] or ""
            if reason.startswith(r["method"] + ": "):
                reason = reason[len(r["method"]) + 2:]
            _print(f"  {r['method']}: {what} -- {reason}")
    _print()
    _print("validity:")
    for r in rows:
        if r["method"] != "optimal (lower)":
            _print(f"  {r['method']}: {r['regime']}")
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    """``report``: the plan's table (or scenario table), its grand total and the budget check; the exit status
    gates on the verdict (:data:`VERDICT_EXIT`)."""
    from . import __version__
    from .config import VERDICT_TEXT, format_scenarios, format_table, load_plan
    from .errors import ParameterError
    from .plans import report

    if args.plan is not None and args.plan_option is not None:
        raise ParameterError("plan", "give the plan once (either PLAN or --plan PLAN)")
    plan = args.plan if args.plan is not None else args.plan_option
    args.plan = plan                 # one "plan" in the JSON inputs, however it was given
    del args.plan_option
    rows = load_plan(plan, max_scenarios=args.max_scenarios)
    if getattr(args, "plot", None) and rows.scenarios:
        raise ParameterError("plot", f"the plan has {len(rows.scenarios)} scenarios; --plot draws one plan "
                                     "(give one value per field)")
    doc = report(rows, method=args.method, rtol=args.rtol, progress=False if args.quiet else None)
    source = plan if plan is not None else "<default plan>"
    curve = None
    if getattr(args, "plot", None):
        curve = _plot_report(args, rows, source)
    if args.json:
        result = {"plan": source, "method": args.method, **doc, "units": {"epsilon": "nats", "eps0": "nats"}}
        if curve is not None:
            result["total_over_days"] = curve
        _emit(args, result)
    else:
        _print(f"shuffleamp {__version__}: shuffled epsilon for plan {source} (method: {args.method}; "
               "epsilon in nats, per round and in total)")
        _print()
        if doc["scenarios"] is None:
            _print(format_table(rows, doc["collections"], doc["total"]))
        else:
            b = rows.budget
            _print(f"{len(doc['scenarios'])} scenarios (list-valued fields), each evaluated on its own; grand total "
                   f"per scenario at delta = {doc['delta']:.3g}"
                   + (f", budget epsilon = {_num(b['epsilon'])}" if b else ""))
            _print()
            _print(format_scenarios(rows.scenarios, [s["total"] for s in doc["scenarios"]])
                   if args.method == "optimal" else "(totals need --method optimal)")
        if rows.budget is not None and doc["verdict"] != "holds":
            if args.method != "optimal":
                _print(f"budget: not checked with --method {args.method} (totals need --method optimal) -> "
                       "undecided")
            elif doc["scenarios"] is not None:
                _print(f"budget: worst scenario -> {VERDICT_TEXT[doc['verdict']]}")
    return VERDICT_EXIT[doc["verdict"]]


def _cmd_plan_template(args: argparse.Namespace) -> int:
    from importlib import resources

    name = PLAN_EXAMPLES[args.example] if getattr(args, "example", None) else PLAN_TEMPLATE
    sys.stdout.write(_u(resources.files("shuffleamp").joinpath(name).read_text(encoding="utf-8")))
    return EXIT_OK


# --------------------------------------------------------------------------- sweep, plot, report --plot
#: Values of the sweep / plot arguments: repeated options and comma lists are joined; ranges START:STOP:log|lin:COUNT.
SWEEP_VALUES_HELP = "a value, a comma list (1,2,4) or a range START:STOP:log:COUNT / START:STOP:lin:COUNT"


def _add_sweep_args(p: argparse.ArgumentParser) -> None:
    """Arguments of ``sweep`` and ``plot``: every value may be a list or a range (parsed by
    :func:`shuffleamp.sweep.parse_values`); a repeated option adds values."""
    from .mechanisms import registry

    g = p.add_argument_group("grid (" + SWEEP_VALUES_HELP + "; repeat an option to add values)")
    g.add_argument("--mechanism", action="append", required=True, metavar="NAME[,NAME...]",
                   help=", ".join(registry()) + ", or joint / parallel / subsample with --component")
    g.add_argument("--eps0", action="append", metavar="VALUES", help="local eps0 in nats")
    g.add_argument("--k", action="append", metavar="VALUES", help="number of categories (krr)")
    g.add_argument("--d", action="append", metavar="VALUES",
                   help="domain size (blh, rappor, oue, hr; 'none' = asymptotic blh/rappor/oue)")
    g.add_argument("--q", action="append", metavar="VALUES", help="sampling probability (subsample)")
    g.add_argument("--sigma", action="append", metavar="VALUES", help="noise standard deviation (gaussian)")
    g.add_argument("--sensitivity", action="append", metavar="VALUES",
                   help="length of the input interval (gaussian; default 1)")
    g.add_argument("--delta0", action="append", metavar="VALUES",
                   help="local delta0 in [0, 1) (approx-ldp; default 0, the pure eps0-LDP worst case)")
    g.add_argument("--domain", action="append", metavar="VALUES",
                   help="input-domain size (approx-ldp; default: any domain)")
    g.add_argument("--matrix", metavar="FILE.csv", help="CSV of the randomizer matrix (matrix)")
    g.add_argument("--component", action="append", metavar="SPEC",
                   help="component of a composed mechanism, as for 'shuffleamp epsilon'")
    _add_param_arg(g, registry(), values=True)
    g.add_argument("--n", action="append", required=True, metavar="VALUES", help="number of users, e.g. 1e3:1e8:log:20")
    x = g.add_mutually_exclusive_group(required=True)
    x.add_argument("--delta", action="append", metavar="VALUES", help="target delta in (0, 1): compute epsilon")
    x.add_argument("--epsilon", action="append", metavar="VALUES", help="target epsilon (nats): compute delta")
    g.add_argument("--method", action="append", metavar="NAMES",
                   help="optimal (default) and/or comparison methods, e.g. optimal,clone")
    g.add_argument("--evaluator", action="append", metavar="NAMES", help="exact (default), fft, spectral, auto")
    g.add_argument("--rtol", type=_real, default=1e-3, help=RTOL_HELP)
    r = p.add_argument_group("run")
    r.add_argument("--scheduler", default=None, metavar="serial|dask|tcp://HOST:8786",
                   help="serial (default), dask (a local Dask cluster, one worker per core) or the address of a "
                        "running Dask scheduler (pip install 'shuffleamp[dask]')")
    r.add_argument("--quiet", action="store_true", help="no progress bar")


def _register_sweep_commands(sub) -> None:
    """The ``sweep`` and ``plot`` subcommands, and ``report --plot``."""
    p = sub.add_parser("sweep", help="certified epsilon (or delta) over a grid of parameters, as a table",
                       description="Evaluate the certified shuffled epsilon (given --delta) or delta (given "
                                   "--epsilon) at every point of the product of the given values, one row per "
                                   "point (epsilon in nats). Example: shuffleamp sweep --mechanism krr --k 10 "
                                   "--eps0 1,2 --n 1e3:1e6:log:4 --delta 1e-8 --format csv")
    _add_sweep_args(p)
    p.add_argument("--format", choices=("table", "csv", "json"), default=None,
                   help="output format (default: from the -o suffix .csv / .json, else table)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the table to FILE instead of stdout")
    p.add_argument("--json", action="store_true",
                   help="same as --format json: one JSON document (schema_version, version, command, inputs, "
                        "result with columns and rows, error); under --json errors are JSON too")
    p.add_argument("--details", action="store_true",
                   help="add the columns method, sound, evaluator and delta_error (certified error of the upper delta)")
    p.add_argument("--keep-going", action="store_true",
                   help="record a failing point (e.g. a method out of its regime) in an 'error' column and go on")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser("plot", help="plot epsilon versus n, eps0 or rounds (PNG, SVG or PDF)",
                       description="Draw the certified shuffled epsilon (upper and lower bound as a band, nats) "
                                   "against n (log scale), eps0 or the number of rounds, for one or several "
                                   "mechanisms and methods. Example: shuffleamp plot --mechanism krr,blh,rappor "
                                   "--k 10 --eps0 1 --n 1e3:1e8:log:20 --delta 1e-8 -o curve.png")
    _add_sweep_args(p)
    p.add_argument("--rounds", action="append", metavar="VALUES",
                   help="numbers of rounds for --x rounds (e.g. 1:365:log:12): the certified total over R rounds")
    p.add_argument("--x", choices=("n", "eps0", "rounds"), default=None,
                   help="horizontal axis (default: the swept one among n, eps0, rounds)")
    p.add_argument("--title", help="figure title")
    p.add_argument("-o", "--output", required=True, metavar="FILE.png|.svg|.pdf", help="output file")
    p.set_defaults(func=_cmd_plot)

    report = sub.choices.get("report")
    if report is not None:
        report.add_argument("--plot", metavar="FILE.png|.svg|.pdf",
                            help="also draw the plan (per-round and total epsilon of every collection) to FILE")


def _sweep_kwargs(args: argparse.Namespace) -> dict:
    """Keyword arguments of :func:`shuffleamp.sweep.sweep` from the command line (lists joined by commas)."""
    from .errors import ParameterError

    def joined(name):
        v = getattr(args, name, None)
        return None if v is None else ",".join(v)

    kw: dict[str, Any] = {"mechanism": joined("mechanism"), "n": joined("n"), "rtol": args.rtol}
    for name in ("eps0", "k", "d", "q", "sigma", "sensitivity", "delta0", "domain", "delta", "epsilon", "method",
                 "evaluator"):
        v = joined(name)
        if v is not None:
            kw[name] = v
    for item in getattr(args, "param", None) or []:       # --param NAME=VALUES: any declared parameter
        name, _, values = item.partition("=")
        if name in ("mechanism", "n", "delta", "epsilon", "method", "evaluator", "matrix", "components"):
            raise ParameterError(name, f"give --{name}, not --param {name}=...")
        if name in kw and name not in getattr(args, "_param_names", ()):
            raise ParameterError(name, f"given twice (--{name} and --param {name}=...)")
        kw[name] = values if name not in kw else kw[name] + "," + values
        args._param_names = getattr(args, "_param_names", ()) + (name,)
    if args.matrix is not None:
        kw["matrix"] = args.matrix
    if args.component:
        kw["components"] = list(args.component)
    kw["scheduler"] = args.scheduler
    kw["progress"] = False if args.quiet else None
    if args.scheduler is not None and args.scheduler not in ("serial", "dask") and "://" not in args.scheduler:
        raise ParameterError("scheduler", f"must be serial, dask or an address tcp://host:port, got {args.scheduler!r}")
    return kw


def _cmd_sweep(args: argparse.Namespace) -> int:
    """``sweep``: the table of :func:`shuffleamp.sweep.sweep` as text, CSV or JSON."""
    from .sweep import format_text, sweep, to_csv, to_records

    fmt = "json" if args.json else args.format
    if fmt is None:
        suffix = os.path.splitext(args.output or "")[1].lower()
        fmt = {".csv": "csv", ".json": "json"}.get(suffix, "table")
    kw = _sweep_kwargs(args)
    table = sweep(**kw, details=args.details, errors="record" if args.keep_going else "raise", as_frame=False)
    if fmt == "csv":
        text = to_csv(table)
    elif fmt == "json":
        from .results import envelope

        rec = to_records(table)
        inputs = {k: v for k, v in kw.items() if k not in ("progress",)}
        inputs.update(details=args.details, keep_going=args.keep_going, output=args.output)
        doc = envelope("sweep", inputs, {"columns": rec.columns, "rows": [dict(r) for r in rec]})
        text = json.dumps(doc, indent=2) + "\n"
    else:
        text = format_text(table) + "\n"
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        except OSError as exc:
            from .errors import ParameterError
            raise ParameterError("output", f"cannot write {args.output!r}: {exc.strerror or exc}") from None
        print(f"wrote {len(table)} rows to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _cmd_plot(args: argparse.Namespace) -> int:
    """``plot``: :func:`shuffleamp.plot.plot` to a PNG / SVG / PDF file."""
    from .plot import plot

    kw = _sweep_kwargs(args)
    if args.rounds:
        kw["rounds"] = ",".join(args.rounds)
    plot(args.output, x=args.x, title=args.title, **kw)
    print(f"wrote {args.output}", file=sys.stderr)
    return EXIT_OK


def _plot_report(args: argparse.Namespace, rows, source: str) -> dict:
    """``report --plot FILE``: the plan's total over days (:func:`shuffleamp.plans.total_over_days`) drawn by
    :func:`shuffleamp.plot.plot_plan`; returns the curve's data."""
    from .plans import total_over_days
    from .plot import _check_path, plot_plan

    _check_path(args.plot)              # a bad file name fails before the work
    curve = total_over_days(rows, progress=False if args.quiet else None)
    plot_plan(rows, args.plot, curve=curve, title=f"plan {source}")
    print(f"wrote {args.plot}", file=sys.stderr)
    return curve


#: The single-mechanism queries behind ``eps0`` / ``rounds`` / ``n`` without ``--plan``.
_SINGLE_QUERIES = {"eps0": _cmd_planning, "n": _cmd_planning, "rounds": _cmd_rounds}


# --------------------------------------------------------------------------- entry point


def _error_text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    notes = getattr(exc, "__notes__", None) or ()
    return " ".join([text, *(f"({note})" for note in notes)])


def _wants_json(argv: Sequence[str]) -> bool:
    return "--json" in argv


def _command_of(argv: Sequence[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


def _fail(argv: Sequence[str], args: argparse.Namespace | None, exc: BaseException, code: int, *,
          kind: str | None = None, text: str | None = None, usage: str | None = None) -> int:
    """Report a failure: a JSON error document on stdout under ``--json``, else ``error: ...`` on stderr."""
    from .results import envelope, error_info

    info = error_info(exc, kind=kind)
    if text is not None:
        info["message"] = text
    if _wants_json(argv):
        inputs = _inputs(args) if args is not None else {"argv": list(argv)}
        command = getattr(args, "command", None) or _command_of(argv)
        try:
            print(json.dumps(envelope(command, inputs, None, error=info), indent=2))
        except (TypeError, ValueError):      # inputs not serialisable: fall back to the raw arguments
            print(json.dumps(envelope(command, {"argv": list(argv)}, None, error=info), indent=2))
    else:
        if usage:
            sys.stderr.write(usage)
        print(_u(f"error: {info['message']}"), file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``shuffleamp`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success; 2 on bad input (``error: <message>`` on stderr, or under
        ``--json`` a JSON document on stdout whose ``error`` has ``type``, ``parameter`` and
        ``message``); 1 on other deliberate failures (e.g. a resource limit); 70 on an internal
        error (a short message asking to report it; no traceback); 130 when interrupted; ``report``
        with a budget: 3 when it is exceeded, 4 when undecided (:data:`VERDICT_EXIT`).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = None
    try:
        parser = build_parser()
        try:
            args, extra = parser.parse_known_args(argv)
            if extra:
                sub = parser.subcommands.get(getattr(args, "command", None) or "", parser)
                unknown = next((a for a in extra if a.startswith("-")), extra[0])
                where = f"`shuffleamp {args.command}`" if args.command else "`shuffleamp`"
                exc = _UsageError(f"unrecognized arguments: {' '.join(extra)} ({unknown} is not an option of "
                                  f"{where}; see `{where.strip('`')} --help`)", sub.format_usage())
                exc.parameter = unknown.lstrip("-").replace("-", "_") if unknown.startswith("-") else None
                raise exc
        except _UsageError as exc:
            return _fail(argv, None, exc, EXIT_USAGE, kind="UsageError", usage=exc.usage)
        except SystemExit as exc:  # --help and --version
            code = exc.code
            return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_USAGE)
        if args.command is None:
            exc = _UsageError("a command is required (epsilon, delta, report, compare, rounds, eps0, n or "
                              "plan-template)", parser.format_usage())
            return _fail(argv, None, exc, EXIT_USAGE, kind="UsageError", usage=exc.usage)
        return args.func(args)
    except ShuffleampError as exc:
        return _fail(argv, args, exc, EXIT_USAGE if isinstance(exc, ValueError) else EXIT_FAILURE)
    except BrokenPipeError:  # e.g. `shuffleamp report | head`
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError as exc:
        return _fail(argv, args, exc, EXIT_FAILURE, kind="MemoryError",
                     text="out of memory (the computation needs more memory than is available; "
                          "use a smaller problem or raise the resource limits)")
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        if os.environ.get("SHUFFLEAMP_TRACEBACK"):
            import traceback

            traceback.print_exc()
        return _fail(argv, args, exc, EXIT_INTERNAL, kind="InternalError",
                     text=f"internal error ({type(exc).__name__}: {_error_text(exc)}); {REPORT_HINT}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
