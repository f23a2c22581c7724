"""Command-line interface: ``shuffleamp {epsilon,delta,report}``.

Examples
--------
::

    shuffleamp epsilon --mechanism krr --k 10 --eps0 1.0 --n 1000000 --delta 1e-8 --json
    shuffleamp delta --mechanism rappor --d 128 --eps0 2 --n 1e6 --epsilon 0.5
    shuffleamp epsilon --mechanism matrix --matrix P.csv --n 10000 --delta 1e-6
    shuffleamp report               # the plan shipped with the package
    shuffleamp report plan.toml --json

Exit status: 0 on success, 2 on bad input (``error: <message>`` on stderr, no
traceback), 1 on any other deliberate failure (e.g. a resource limit).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

from .errors import ShuffleampError

__all__ = ["main", "build_parser"]

METHODS = ("optimal", "clone")

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
    from .mechanisms import MECHANISMS

    g = p.add_argument_group("mechanism")
    g.add_argument("--mechanism", required=True, choices=tuple(MECHANISMS), help="local randomizer")
    g.add_argument("--eps0", type=_real, help="local ε0 in nats (optional for --mechanism matrix)")
    g.add_argument("--k", type=_number, help="number of categories (krr)")
    g.add_argument("--d", type=_number,
                   help="domain size (blh, rappor, oue, hr; omit for blh/rappor/oue = asymptotic bound)")
    g.add_argument("--matrix", metavar="FILE.csv", help="CSV of the randomizer matrix, rows = inputs (matrix)")


def _add_common_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("accounting")
    g.add_argument("--method", choices=METHODS, default="optimal",
                   help="optimal (tight upper and lower) or clone (FMT22 standard clone, upper only); "
                        "default: optimal")
    g.add_argument("--rtol", type=_real, default=1e-3, help="target relative accuracy (default: 1e-3)")
    g.add_argument("--json", action="store_true", help="print a JSON object instead of a summary")


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
    sub = parser.add_subparsers(dest="command", metavar="{epsilon,delta,report}")

    p = sub.add_parser("epsilon", help="central ε for a given δ",
                       description="Bounds on the central ε of the shuffled mechanism at a given δ.")
    _add_mechanism_args(p)
    g = p.add_argument_group("population")
    g.add_argument("--n", type=_number, required=True, help="number of users (e.g. 1000000 or 1e6)")
    g.add_argument("--delta", type=_real, required=True, help="target δ in (0, 1)")
    _add_common_args(p)
    p.set_defaults(func=_cmd_bound, quantity="epsilon")

    p = sub.add_parser("delta", help="central δ for a given ε",
                       description="Bounds on the central δ of the shuffled mechanism at a given ε.")
    _add_mechanism_args(p)
    g = p.add_argument_group("population")
    g.add_argument("--n", type=_number, required=True, help="number of users (e.g. 1000000 or 1e6)")
    g.add_argument("--epsilon", type=_real, required=True, help="central ε in nats (>= 0)")
    _add_common_args(p)
    p.set_defaults(func=_cmd_bound, quantity="delta")

    p = sub.add_parser("report", help="table of shuffled ε for every collection of a plan",
                       description="Evaluate a TOML/JSON plan of collections ([[collection]] tables with "
                                   "name, mechanism, eps0, n, delta, optional k/d/matrix and comment). "
                                   "Without PLAN the plan shipped with the package is used.")
    p.add_argument("plan", nargs="?", metavar="PLAN", help="plan file (.toml or .json)")
    _add_common_args(p)
    p.set_defaults(func=_cmd_report)
    return parser


# --------------------------------------------------------------------------- commands


def _mechanism_from_args(args: argparse.Namespace):
    from . import mechanisms

    params: dict[str, Any] = {}
    for key in ("k", "d", "matrix"):
        value = getattr(args, key)
        if value is not None:
            params[key] = value
    if args.eps0 is not None:
        params["eps0"] = args.eps0
    return mechanisms.make(args.mechanism, **params)


def _fmt(x: Any, spec: str = ".6g") -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return format(x, spec)
    return str(x)


def _mechanism_label(args: argparse.Namespace) -> str:
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
    if not getattr(result, "sound", True):
        lines.append("  note      : this value is an estimate, not a certified bound")
    return "\n".join(lines)


def _cmd_bound(args: argparse.Namespace) -> int:
    import shuffleamp

    mech = _mechanism_from_args(args)
    if args.quantity == "epsilon":
        result = shuffleamp.epsilon(mech, args.n, args.delta, method=args.method, rtol=args.rtol)
    else:
        result = shuffleamp.delta(mech, args.n, args.epsilon, method=args.method, rtol=args.rtol)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(_summary(result, mech, args))
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from . import __version__
    from .plans import evaluate_plan, format_table, load_plan

    rows = load_plan(args.plan)
    results = evaluate_plan(rows, method=args.method, rtol=args.rtol)
    source = args.plan if args.plan is not None else "<default plan>"
    if args.json:
        doc = {"version": __version__, "plan": source, "method": args.method, "rtol": args.rtol,
               "collections": results}
        print(json.dumps(doc, indent=2))
    else:
        print(f"shuffleamp {__version__}: shuffled epsilon for plan {source} (method: {args.method})")
        print()
        print(format_table(rows, results))
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
        print("error: a command is required (epsilon, delta or report)", file=sys.stderr)
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
