"""Command-line interface: ``shuffleamp {epsilon,delta,report,compare}``.

Examples
--------
::

    shuffleamp epsilon --mechanism krr --k 10 --eps0 1.0 --n 1000000 --delta 1e-8 --json
    shuffleamp delta --mechanism rappor --d 128 --eps0 2 --n 1e6 --epsilon 0.5
    shuffleamp epsilon --mechanism matrix --matrix P.csv --n 10000 --delta 1e-6
    shuffleamp epsilon --mechanism joint --component krr:k=10:eps0=0.5 --component krr:k=10:eps0=0.5 \
        --n 1e5 --delta 1e-6
    shuffleamp epsilon --mechanism parallel --component 0.5:krr:k=10:eps0=1 --component 0.5:blh:eps0=1 \
        --n 1e5 --delta 1e-6
    shuffleamp epsilon --mechanism subsample --component krr:k=10:eps0=1 --q 0.1 --n 1e5 --delta 1e-6
    shuffleamp report               # the plan shipped with the package
    shuffleamp report plan.toml --json
    shuffleamp epsilon --mechanism krr --k 10 --eps0 1 --n 1e5 --delta 1e-6 --method blanket-bennett
    shuffleamp compare --mechanism krr --k 10 --eps0 1 --n 100000 --delta 1e-6 [--json]

Exit status: 0 on success, 2 on bad input (``error: <message>`` on stderr, no
traceback), 1 on any other deliberate failure (e.g. a resource limit).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

from ._registry import DEFAULT_EVALUATOR, EVALUATORS, METHODS
from .errors import ShuffleampError

__all__ = ["main", "build_parser"]

#: Help of ``--rtol`` (every subcommand that takes it).
RTOL_HELP = ("target relative accuracy of the discretised engines (evaluator fft|spectral|auto; default: 1e-3); "
             "the exact evaluator, the default, reports its own certified error as delta_error")
#: ``--method`` choices of ``report`` (sound methods defined for every plan row).
REPORT_METHODS = ("optimal", "clone")
#: Shown instead of "certified" for ``sound=False`` results.
UNSOUND_LABEL = "UNSOUND (comparison only)"

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


def _number(text: str) -> int | float:
    """argparse type for counts: accepts ``1000000``, ``1_000_000`` and ``1e6``.

    Range and integrality are checked later by :mod:`shuffleamp._validate`.
    """
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _real(text: str) -> float:
    """argparse type for reals (NaN/inf are let through and rejected by validation, naming the parameter)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a real number, got {text!r}") from None


def _add_mechanism_args(p: argparse.ArgumentParser) -> None:
    from .config import COMPOSED
    from .mechanisms import MECHANISMS

    g = p.add_argument_group("mechanism")
    g.add_argument("--mechanism", required=True, choices=tuple(MECHANISMS) + COMPOSED + ("population",),
                   help="local randomizer; joint / parallel / subsample compose the --component specs; "
                        "population: users in --group groups with different randomizers (per-group bounds)")
    g.add_argument("--eps0", type=_real, help="local ε0 in nats (optional for --mechanism matrix)")
    g.add_argument("--k", type=_number, help="number of categories (krr)")
    g.add_argument("--d", type=_number,
                   help="domain size (blh, rappor, oue, hr; omit for blh/rappor/oue = asymptotic bound)")
    g.add_argument("--matrix", metavar="FILE.csv", help="CSV of the randomizer matrix, rows = inputs (matrix)")
    g.add_argument("--component", action="append", metavar="SPEC",
                   help="component of a composed mechanism, repeatable: NAME:key=value:... for joint and "
                        "subsample (e.g. krr:k=10:eps0=0.5), WEIGHT:NAME:key=value:... for parallel "
                        "(e.g. 0.5:blh:eps0=1; weights sum to 1)")
    g.add_argument("--q", type=_real, help="sampling probability in (0, 1] (subsample)")
    g.add_argument("--group", action="append", metavar="COUNT:NAME:key=value...",
                   help="group of a population, repeatable: COUNT users running NAME (e.g. "
                        "60000000:krr:k=10:eps0=0.5); n is their total (--n may be omitted)")


def _add_common_args(p: argparse.ArgumentParser, methods: Sequence[str] | None = METHODS) -> None:
    g = p.add_argument_group("accounting")
    if methods is not None:
        extra = ("; comparison methods (upper value only, labelled with their validity): "
                 + ", ".join(m for m in methods if m != "optimal")
                 + " -- variation-ratio and gdp are UNSOUND (comparison only)") if len(methods) > 2 else \
            " or clone (FMT22 standard clone, upper only)"
        g.add_argument("--method", choices=methods, default="optimal",
                       help="optimal (default: certified tight upper and lower bounds)" + extra)
    g.add_argument("--rtol", type=_real, default=1e-3, help=RTOL_HELP)
    g.add_argument("--evaluator", choices=EVALUATORS, default=DEFAULT_EVALUATOR,
                   help="how the certified bound is evaluated: exact (default: Bromwich integral or exact "
                        "enumeration, no discretisation, certified error bound reported as delta_error; "
                        "Laplace through its closed-form MGF), fft (discretised engine, inverse FFT over the "
                        "window), spectral (discretised engine, pruned Parseval sums) or auto (spectral or fft)")
    g.add_argument("--json", action="store_true", help="print a JSON object instead of a summary")


def _schedule(text: str) -> list[float]:
    """argparse type for ``--schedule``: comma-separated ε0 values (validated later, naming ``schedule``)."""
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _add_rounds_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("repetition")
    g.add_argument("--rounds", type=_number, default=1,
                   help="number of shuffled rounds one user takes part in (default 1); with R > 1 the "
                        "answer is the certified total over R rounds (composed privacy loss distributions)")
    g.add_argument("--schedule", type=_schedule, metavar="E1,E2,...",
                   help="gradual release of k-RR (--mechanism krr): the non-decreasing eps0 of the successive "
                        "releases; the answer covers the whole schedule (as private as one round at the last "
                        "eps0); replaces --eps0")


def _add_planning_args(p: argparse.ArgumentParser):
    """Mechanism and target arguments shared by the planning subcommands ``eps0`` and ``n``;
    returns the "target" group for the subcommand's own search arguments."""
    _add_mechanism_args(p)
    g = p.add_argument_group("target")
    g.add_argument("--target-epsilon", type=_real, required=True, help="target central epsilon (nats)")
    g.add_argument("--delta", type=_real, required=True, help="target delta in (0, 1)")
    g.add_argument("--rtol", type=_real, default=1e-3, help=RTOL_HELP)
    g.add_argument("--json", action="store_true", help="print a JSON object instead of a summary")
    return g


def build_parser() -> argparse.ArgumentParser:
    """Build the ``shuffleamp`` argument parser.

    Returns
    -------
    argparse.ArgumentParser
    """
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="shuffleamp",
        description="Privacy amplification by shuffling: central (ε, δ) of n shuffled ε0-LDP reports.",
    )
    parser.add_argument("--version", action="version", version=f"shuffleamp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{epsilon,delta,report,compare,rounds,eps0,n}")

    p = sub.add_parser("epsilon", help="central ε for a given δ",
                       description="Bounds on the central ε of the shuffled mechanism at a given δ.")
    _add_mechanism_args(p)
    g = p.add_argument_group("population")
    g.add_argument("--n", type=_number, help="number of users (e.g. 1000000 or 1e6); required except with --group")
    g.add_argument("--delta", type=_real, required=True, help="target δ in (0, 1)")
    _add_rounds_args(p)
    _add_common_args(p)
    p.set_defaults(func=_cmd_bound, quantity="epsilon")

    p = sub.add_parser("delta", help="central δ for a given ε",
                       description="Bounds on the central δ of the shuffled mechanism at a given ε.")
    _add_mechanism_args(p)
    g = p.add_argument_group("population")
    g.add_argument("--n", type=_number, help="number of users (e.g. 1000000 or 1e6); required except with --group")
    g.add_argument("--epsilon", type=_real, required=True, help="central ε in nats (>= 0)")
    _add_rounds_args(p)
    _add_common_args(p)
    p.set_defaults(func=_cmd_bound, quantity="delta")

    p = sub.add_parser("report", help="table of shuffled ε for every collection of a plan, with totals",
                       description="Evaluate a TOML/JSON plan of collections ([[collection]] tables with "
                                   "name, mechanism, eps0, n, delta, optional k/d/matrix, rounds or schedule, "
                                   "and comment; an optional [budget] table with epsilon and delta): the "
                                   "per-round epsilon, each collection's total over its rounds, and the grand "
                                   "total for a user in every collection, checked against the budget. "
                                   "Without PLAN the plan shipped with the package is used.")
    p.add_argument("plan", nargs="?", metavar="PLAN", help="plan file (.toml or .json)")
    _add_common_args(p, REPORT_METHODS)
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("compare", help="every method side by side, with validity and run time",
                       description="Run every method (optimal and the comparison baselines) on one setting and "
                                   "print each value with its kind, soundness, validity regime and run time. "
                                   "Methods outside their validity regime are listed with the reason.")
    _add_mechanism_args(p)
    g = p.add_argument_group("population")
    g.add_argument("--n", type=_number, required=True, help="number of users (e.g. 1000000 or 1e6)")
    x = g.add_mutually_exclusive_group(required=True)
    x.add_argument("--delta", type=_real, help="target δ in (0, 1): compare ε")
    x.add_argument("--epsilon", type=_real, help="central ε in nats: compare δ")
    _add_common_args(p, None)
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser("rounds", help="largest number of rounds that fits a total (epsilon, delta) budget",
                       description="Budget accounting: the largest number R of shuffled rounds whose certified "
                                   "total (composed privacy loss distributions) meets the target (epsilon, delta).")
    g = _add_planning_args(p)
    g.add_argument("--n", type=_number, required=True, help="number of users per round")
    g.add_argument("--max-rounds", type=_number, default=10**6, help="search ceiling for R (default 1e6)")
    p.set_defaults(func=_cmd_rounds)

    p = sub.add_parser("eps0", help="largest eps0 meeting a target (epsilon, delta) for n users",
                       description="Planning: the largest local eps0 whose certified shuffled upper bound meets "
                                   "the target (epsilon, delta) for n users (conservative end of the bracket).")
    g = _add_planning_args(p)
    g.add_argument("--n", type=_number, required=True, help="number of users")
    g.add_argument("--eps0-max", type=_real, default=20.0, help="search ceiling for eps0 (default 20)")
    p.set_defaults(func=_cmd_planning, quantity="eps0")

    p = sub.add_parser("n", help="smallest n meeting a target (epsilon, delta) at a given eps0",
                       description="Planning: the smallest number of users for which the certified shuffled "
                                   "upper bound meets the target (conservative end of the bracket).")
    g = _add_planning_args(p)
    g.add_argument("--n-max", type=_number, default=10**12, help="search ceiling for n (default 1e12)")
    p.set_defaults(func=_cmd_planning, quantity="n")
    return parser


def _cmd_planning(args: argparse.Namespace) -> int:
    """``eps0`` / ``n`` planning subcommands (:mod:`shuffleamp.planning`)."""
    from . import planning

    if args.quantity == "eps0":
        from .config import COMPOSED
        from .errors import ParameterError
        if args.mechanism in COMPOSED or args.mechanism == "matrix":
            raise ParameterError("mechanism", f"{args.mechanism!r}: eps0 is not a single free parameter, "
                                 "so the eps0 planning query cannot vary it (use the Python API with a factory)")
        if args.eps0 is None:
            args.eps0 = 1.0          # placeholder: the search varies eps0
        mech = _mechanism_from_args(args)
        res = planning.max_eps0(mech, args.n, args.target_epsilon, args.delta, eps0_max=args.eps0_max,
                                rtol=args.rtol)
    else:
        mech = _mechanism_from_args(args)
        res = planning.min_n(mech, args.target_epsilon, args.delta, n_max=args.n_max, rtol=args.rtol)
    out = res.to_dict()
    if args.json:
        print(json.dumps(out))
    else:
        what = "largest eps0" if args.quantity == "eps0" else "smallest n"
        print(f"{what}: {res.value} (certified: delta_upper = {res.delta_at_value:.3g} <= {res.delta} at "
              f"epsilon = {res.target_epsilon}); next infeasible candidate: {res.infeasible_bound}")
    return 0


def _cmd_rounds(args: argparse.Namespace) -> int:
    """``rounds``: the largest number of rounds within a total budget (:func:`shuffleamp.accounting.max_rounds`)."""
    from . import __version__, _validate
    from .accounting import compose_rounds, max_rounds

    mech = _mechanism_from_args(args)
    n = _validate.count(args.n, "n")
    eps = _validate.real("target_epsilon", args.target_epsilon, lo=0.0, lo_open=True)
    delta = _validate.delta(args.delta)
    limit = _validate.count(args.max_rounds, "max_rounds")
    R = max_rounds(mech, n, eps, delta, limit=limit)
    at = compose_rounds([(mech, n, R)], delta=delta, lower=False).upper if R >= 1 else None
    doc = {"version": __version__, "command": "rounds", "mechanism": mech.describe(), "eps0": mech.eps0, "n": n,
           "target_epsilon": eps, "delta": delta, "max_rounds": limit, "rounds": R, "epsilon_upper_at_rounds": at}
    if args.json:
        print(json.dumps(doc, indent=2))
    elif R == 0:
        print(f"largest number of rounds: 0 (not even one round meets epsilon = {eps} at delta = {delta})")
    else:
        print(f"largest number of rounds: {R} (certified: total epsilon (upper) = {at:.6g} <= {eps} at "
              f"delta = {delta}{'; the search ceiling --max-rounds was reached' if R == limit else ''})")
    return EXIT_OK


# --------------------------------------------------------------------------- commands


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
        release = GradualRelease(k=args.k if args.k is not None else 2, schedule=schedule)  # k checked by make()
        args.eps0 = release.schedule[-1]
    spec: dict[str, Any] = {"mechanism": args.mechanism}
    for key in ("eps0", "k", "d", "matrix", "q"):
        if getattr(args, key, None) is not None:
            spec[key] = getattr(args, key)
    comps = getattr(args, "component", None)
    if comps is not None:
        spec["components"] = list(comps)
    if args.mechanism in COMPOSED and not comps:
        raise ParameterError("component", f"--mechanism {args.mechanism} needs at least one --component SPEC")
    return mechanism_from_spec(spec)


def _fmt(x: Any, spec: str = ".6g") -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return format(x, spec)
    return str(x)


def _mechanism_label(args: argparse.Namespace) -> str:
    comps = getattr(args, "component", None)
    if comps:
        q = f", q={args.q}" if getattr(args, "q", None) is not None else ""
        return f"{args.mechanism} ({' + '.join(comps)}{q})"
    params = [f"{key}={getattr(args, key)}" for key in ("k", "d", "matrix") if getattr(args, key) is not None]
    return f"{args.mechanism} ({', '.join(params)})" if params else args.mechanism


def _summary(result, mech, args: argparse.Namespace) -> str:
    from . import __version__

    q = result.quantity
    given = "delta" if q == "epsilon" else "epsilon"
    lines = [
        f"shuffleamp {__version__}: shuffled {q} (method: {result.method})",
        f"  mechanism : {_mechanism_label(args)}, eps0 = {_fmt(mech.eps0)}",
        f"  n         : {result.n}",
        f"  {given:<10}: {_fmt(getattr(result, given))}",
    ]
    if result.lower is None:
        lines.append(f"  {q:<10}: <= {_fmt(result.upper)}  (upper bound only)")
    else:
        lines.append(f"  {q:<10}: in [{_fmt(result.lower)}, {_fmt(result.upper)}]  (lower, upper)")
    if getattr(result, "kind", "upper") == "estimate":
        lines[-1] = f"  {q:<10}: ~ {_fmt(result.estimate)}  (estimate, not a bound)"
    if not getattr(result, "sound", True):
        lines.append(f"  status    : {UNSOUND_LABEL}")
    regime = (getattr(result, "settings", None) or {}).get("regime")
    if regime and result.method != "optimal":
        lines.append(f"  validity  : {regime}")
    return "\n".join(lines)


def _cmd_bound(args: argparse.Namespace) -> int:
    import shuffleamp

    from . import _validate

    mech = _mechanism_from_args(args)
    rounds = _validate.count(args.rounds, "rounds")
    if rounds > 1 and args.method != "optimal":
        from .errors import ParameterError
        raise ParameterError("method", "the total over --rounds is computed for the optimal bound only")
    if args.quantity == "epsilon":
        result = shuffleamp.epsilon(mech, args.n, args.delta, method=args.method, rtol=args.rtol,
                                    **_evaluator_kw(args))
    else:
        result = shuffleamp.delta(mech, args.n, args.epsilon, method=args.method, rtol=args.rtol,
                                  **_evaluator_kw(args))
    doc = result.to_dict()
    total = None
    if rounds > 1:
        from .accounting import compose_rounds

        given = {"delta": result.delta} if args.quantity == "epsilon" else {"epsilon": result.epsilon}
        total = compose_rounds([(mech, result.n, rounds)], **given)
        q = args.quantity
        doc["per_round"] = {f"{q}_upper": doc[f"{q}_upper"], f"{q}_lower": doc[f"{q}_lower"]}
        doc[f"{q}_upper"], doc[f"{q}_lower"] = total.upper, total.lower
        doc["accounting"] = total.to_dict()
    doc["rounds"] = rounds
    if args.schedule is not None:
        doc["schedule"] = list(args.schedule)
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(_summary(result, mech, args))
        if total is not None:
            q = args.quantity
            print(f"  total over {rounds} rounds: {q} (upper, certified) = {_fmt(total.upper)}, "
                  f"{q} (lower) = {_fmt(total.lower)}  [{total.lower_method}]")
        if args.schedule is not None:
            print(f"  schedule  : {', '.join(format(e, 'g') for e in args.schedule)} (gradual release: the "
                  "whole schedule is as private as one shuffled round at its last eps0)")
    return EXIT_OK


def _evaluator_kw(args) -> dict:
    """``evaluator=`` for the optimal method (the comparison baselines have their own evaluators)."""
    return {"evaluator": args.evaluator} if args.method == "optimal" else {}


def _compare_rows(mech, n, quantity: str, given: float, rtol: float, evaluator: str = DEFAULT_EVALUATOR) -> list[dict]:
    """Run every method; one dict per method (plus the optimal method's certified lower bound)."""
    import time

    import shuffleamp
    from . import baselines
    from .errors import OutOfRegimeError, ParameterError

    fn = shuffleamp.epsilon if quantity == "epsilon" else shuffleamp.delta
    rows = []
    for method in METHODS:
        info = baselines.METHOD_INFO[method]
        row: dict[str, Any] = {"method": method, "status": "ok", quantity: None, "kind": info.kind,
                               "sound": info.sound, "seconds": None, "regime": baselines.regime(method, mech),
                               "source": info.source, "reason": None}
        t0 = time.perf_counter()
        try:
            r = fn(mech, n, given, method=method, rtol=rtol, evaluator=evaluator)
        except OutOfRegimeError as exc:
            row.update(status="out_of_regime", reason=_error_text(exc), seconds=time.perf_counter() - t0)
            rows.append(row)
            continue
        except ParameterError:
            raise
        except ShuffleampError as exc:   # e.g. a resource limit: report it, keep going
            row.update(status="error", reason=_error_text(exc), seconds=time.perf_counter() - t0)
            rows.append(row)
            continue
        row.update(seconds=time.perf_counter() - t0, kind=r.kind, sound=r.sound, regime=r.settings.get("regime"))
        row[quantity] = r.value
        rows.append(row)
        if method == "optimal" and r.lower is not None:
            rows.append({"method": "optimal (lower)", "status": "ok", quantity: r.lower, "kind": "lower",
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
    evaluator = getattr(args, "evaluator", DEFAULT_EVALUATOR)
    rows = _compare_rows(mech, n, quantity, given, rtol, evaluator)
    if args.json:
        doc = {"version": __version__, "command": "compare", "quantity": quantity,
               "inputs": {"mechanism": mech.describe(), "eps0": mech.eps0, "n": n, given_name: given, "rtol": rtol,
                          "evaluator": evaluator},
               "methods": rows}
        print(json.dumps(doc, indent=2))
        return EXIT_OK
    print(f"shuffleamp {__version__}: shuffled {quantity} by every method")
    print(f"  mechanism : {_mechanism_label(args)}, eps0 = {_fmt(mech.eps0)}")
    print(f"  n         : {n}")
    print(f"  {given_name:<10}: {_fmt(given)}")
    print()
    head = ("method", quantity, "kind", "soundness", "time s")
    table = []
    for r in rows:
        if r["status"] != "ok":
            continue
        snd = "certified" if r["sound"] else UNSOUND_LABEL
        val = _fmt(r[quantity]) if r["kind"] != "estimate" else "~" + _fmt(r[quantity])
        table.append((r["method"], val, r["kind"], snd, "-" if r["seconds"] is None else f"{r['seconds']:.3f}"))
    widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    print("  ".join("-" * w for w in widths))
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)).rstrip())
    skipped = [r for r in rows if r["status"] != "ok"]
    if skipped:
        print()
        print("not applicable here:")
        for r in skipped:
            what = "out of regime" if r["status"] == "out_of_regime" else "failed"
            reason = r["reason"] or ""
            if reason.startswith(r["method"] + ": "):
                reason = reason[len(r["method"]) + 2:]
            print(f"  {r['method']}: {what} -- {reason}")
    print()
    print("validity:")
    for r in rows:
        if r["method"] != "optimal (lower)":
            print(f"  {r['method']}: {r['regime']}")
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from . import __version__
    from .config import evaluate_plan, format_table, load_plan, plan_total

    rows = load_plan(args.plan)
    results = evaluate_plan(rows, method=args.method, rtol=args.rtol)
    total = plan_total(rows, budget=rows.budget) if args.method == "optimal" else None
    source = args.plan if args.plan is not None else "<default plan>"
    if args.json:
        doc = {"version": __version__, "plan": source, "method": args.method, "rtol": args.rtol,
               "budget": rows.budget, "collections": results, "total": total}
        print(json.dumps(doc, indent=2))
    else:
        print(f"shuffleamp {__version__}: shuffled epsilon for plan {source} (method: {args.method}; "
              "epsilon in nats, per round and in total)")
        print()
        print(format_table(rows, results, total))
    return EXIT_OK


# --------------------------------------------------------------------------- entry point


def _error_text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    notes = getattr(exc, "__notes__", None) or ()
    return " ".join([text, *(f"({note})" for note in notes)])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``shuffleamp`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 2 on bad input (the message is printed to
        stderr as ``error: <message>``), 1 on other deliberate failures.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and argparse usage errors
        code = exc.code
        return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_USAGE)
    if args.command is None:
        parser.print_usage(sys.stderr)
        print("error: a command is required (epsilon, delta, report, compare, rounds, eps0 or n)", file=sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except ShuffleampError as exc:
        print(f"error: {_error_text(exc)}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ValueError) else EXIT_FAILURE
    except BrokenPipeError:  # e.g. `shuffleamp report | head`
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
