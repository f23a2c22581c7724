"""Sweeps: certified shuffled ε (or δ) over a product grid of parameters, as a tidy table.

:func:`sweep` takes every parameter -- the mechanism name and its parameters (``k``, ``d``,
``q``, ...), ``eps0``, ``n``, the target ``delta`` (or ``epsilon``), ``method`` and ``evaluator``
-- as a scalar, a list, or a range string, expands them as a Cartesian product in a fixed order,
evaluates every point with :func:`shuffleamp.epsilon` / :func:`shuffleamp.delta` (the same
certified computation as a single call, point by point), and returns one row per point::

    >>> import shuffleamp as sa
    >>> t = sa.sweep(mechanism="krr", k=10, eps0=[1, 2], n="1e3:1e6:log:4", delta=1e-8)  # doctest: +SKIP
    >>> t.columns.tolist()                                                                # doctest: +SKIP
    ['mechanism', 'k', 'eps0', 'n', 'delta', 'epsilon_upper', 'epsilon_lower']

Values and ranges (:func:`parse_values`, shared with the command line) are comma lists
(``"1,2,4"``) and ranges ``START:STOP:log:COUNT`` (geometric) or ``START:STOP:lin:COUNT``
(arithmetic), both ends included: ``"1e3:1e6:log:4"`` is 1000, 10000, 100000, 1000000.

The points run serially in this process (``scheduler=None`` or ``"serial"``) or on Dask
(``scheduler="dask"`` starts a local cluster; ``"tcp://host:8786"`` connects to a running
one; a ``distributed.Client`` is used as it is).  The points are cut into chunks so that the
per-task overhead is amortised; the results are identical to the serial ones (same rows in the
same order, the same numbers), because every point is the same deterministic computation.

What is certified: each row's ``epsilon_upper`` (``delta_upper``) is the certified upper bound
of :func:`shuffleamp.epsilon` (:func:`shuffleamp.delta`) for the optimal method, and
``epsilon_lower`` its certified lower bound (the exact divergence of a concrete neighbouring
dataset, Su, Cheng, Wang, IEEE S&P 2026, Theorems 13 and 14).  Comparison methods give an upper
value only, labelled by the ``sound`` column.

References
----------
P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
Shuffling", IEEE S&P 2026 (arXiv:2504.07414), Theorems 13 and 14.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import os
import sys
import types
from typing import Any, Iterable, Mapping, Sequence

from ._registry import COMPOSED, DEFAULT_EVALUATOR, EVALUATORS, METHODS
from ._validate import parse_number
from .errors import ParameterError, ResourceLimitError, ShuffleampError

__all__ = ["sweep", "parse_values", "expand_grid", "Records", "to_csv", "to_json", "to_records", "format_text",
           "progress_bar", "busy", "MAX_POINTS", "INTEGER_PARAMETERS"]

#: Parameters other than a mechanism's whose values are integers (range values are rounded, then
#: de-duplicated); a mechanism parameter is an integer when a mechanism declares it so
#: (``Parameter(kind="int")``, e.g. ``k``, ``d``).
INTEGER_PARAMETERS = frozenset({"n", "rounds"})
#: Parameters taken as they are (never expanded: a list is one value); a mechanism's non-numeric
#: declared parameters (e.g. ``matrix``) too.
FIXED_PARAMETERS = frozenset({"matrix", "components", "weights", "distances"})
#: Text parameters (comma lists only, no ranges).
TEXT_PARAMETERS = frozenset({"mechanism", "method", "evaluator"})
#: Largest number of grid points :func:`sweep` accepts.
MAX_POINTS = 10**7
#: Seconds of work after which the progress bar appears (``tqdm(delay=...)``).
PROGRESS_DELAY = 1.0
#: Target number of points per Dask task (amortises the per-task overhead of a few milliseconds).
CHUNK_POINTS = 256


# --------------------------------------------------------------------------- values and ranges
def _declared(name: str) -> list:
    """The declarations (:class:`~shuffleamp._validate.Parameter`) of ``name`` by the registered mechanisms."""
    from . import gaussian  # noqa: F401  (registers the randomizers beyond pure LDP)
    from .mechanisms import registry

    return [p for cls in registry().values() for p in cls.param_specs if p.name == name]


def _is_integer(name: str) -> bool:
    decl = _declared(name)
    return name in INTEGER_PARAMETERS or (bool(decl) and all(p.kind == "int" for p in decl))


def _number(text: str, name: str) -> int | float | None:
    """One value by :func:`shuffleamp._validate.parse_number` (``none`` is None here: the mechanism or the
    range check then accepts or refuses it, naming the parameter)."""
    if not text.strip():
        raise ParameterError(name, "empty value in the list")
    try:
        return parse_number(text, name, none=True)
    except ParameterError as exc:
        if "expected a number" in exc.reason:
            raise ParameterError(name, f"expected a number, a comma list or a range START:STOP:log|lin:COUNT, "
                                       f"got {text.strip()!r}") from None
        raise


def _range(text: str, name: str) -> list[float]:
    parts = [p.strip() for p in text.split(":")]
    if len(parts) != 4:
        raise ParameterError(name, f"a range is START:STOP:log:COUNT or START:STOP:lin:COUNT, got {text.strip()!r}")
    start, stop = _number(parts[0], name), _number(parts[1], name)
    scale = parts[2].lower()
    if start is None or stop is None:
        raise ParameterError(name, f"range ends must be numbers, got {text.strip()!r}")
    if not (math.isfinite(start) and math.isfinite(stop)):
        raise ParameterError(name, f"range ends must be finite, got {text.strip()!r}")
    if scale not in ("log", "lin"):
        raise ParameterError(name, f"range scale must be 'log' or 'lin', got {parts[2]!r}")
    try:
        count = int(parts[3])
    except ValueError:
        raise ParameterError(name, f"range COUNT must be an integer >= 1, got {parts[3]!r}") from None
    if count < 1 or (count == 1 and start != stop):
        raise ParameterError(name, f"range COUNT must be >= 2 (or 1 when START == STOP), got {count}")
    if count > MAX_POINTS:
        raise ResourceLimitError(f"{name}: range of {count} values exceeds the sweep limit of {MAX_POINTS} points",
                                 parameter=name, resource="memory")
    if scale == "log":
        if start <= 0 or stop <= 0:
            raise ParameterError(name, f"a log range needs START > 0 and STOP > 0, got {text.strip()!r}")
        a, b = math.log10(start), math.log10(stop)
        vals = [10.0 ** (a + (b - a) * i / (count - 1)) for i in range(count)] if count > 1 else [float(start)]
    else:
        vals = [start + (stop - start) * i / (count - 1) for i in range(count)] if count > 1 else [float(start)]
    vals[0], vals[-1] = float(start), float(stop)      # both ends exactly as written
    return vals


def _flatten(value: Any, name: str) -> list:
    if isinstance(value, str):
        out: list = []
        for piece in value.split(","):
            if name in TEXT_PARAMETERS:
                p = piece.strip()
                if not p:
                    raise ParameterError(name, f"empty value in the list {value!r}")
                out.append(p.lower() if name == "mechanism" else p)
            elif ":" in piece:
                out.extend(_range(piece, name))
            else:
                out.append(_number(piece, name))
        return out
    if isinstance(value, Mapping):
        raise ParameterError(name, f"must be a value or a list of values, got a {type(value).__name__}")
    if isinstance(value, (list, tuple, range)) or (hasattr(value, "__iter__") and hasattr(value, "__len__")
                                                    and getattr(value, "ndim", 1) != 0
                                                    and not hasattr(value, "upper_decompositions")):
        out = []
        for v in value:
            out.extend(_flatten(v, name) if isinstance(v, str) else [_scalar(v, name)])
        return out
    return [_scalar(value, name)]


def _scalar(v: Any, name: str):
    if isinstance(v, bool):
        raise ParameterError(name, f"must be a number, got {v!r}")
    if hasattr(v, "item") and callable(v.item) and getattr(v, "ndim", 0) == 0:   # numpy scalar
        v = v.item()
    if isinstance(v, (list, tuple)):
        raise ParameterError(name, "nested lists are not allowed")
    return v


def parse_values(value: Any, name: str) -> list:
    """The list of values of one sweep parameter (shared by :func:`sweep` and the command line).

    Parameters
    ----------
    value : scalar, sequence or str
        A number, a list / tuple / array of numbers, or a string: a comma list (``"1,2,4"``),
        a range ``START:STOP:log:COUNT`` (geometric, e.g. ``"1e3:1e6:log:4"`` = 1000, 10000,
        100000, 1000000) or ``START:STOP:lin:COUNT`` (arithmetic), or a comma list mixing them.
        Both ends of a range are included exactly as written.  For ``mechanism``, ``method`` and
        ``evaluator`` a string is a comma list of names.  ``none`` stands for None (e.g. ``d`` of
        the asymptotic BLH / RAPPOR / OUE).
    name : str
        The parameter's name (used in error messages; ``n``, ``rounds`` and the parameters the
        mechanisms declare as integers (``k``, ``d``, ...) are integers: range values are rounded to
        the nearest integer and duplicates dropped, integral numbers such as ``1e6`` become ints).
        Numbers follow :func:`shuffleamp._validate.parse_number`.

    Returns
    -------
    list
        The values in the order given (duplicates kept, except those created by rounding a
        range of an integer parameter).

    Raises
    ------
    ParameterError
        Naming ``name``: an empty list, text that is not a number, a malformed range (wrong
        number of fields, scale other than ``log``/``lin``, COUNT < 2, a log range through 0),
        a boolean, a nested list.
    ResourceLimitError
        A range with more than :data:`MAX_POINTS` values.
    """
    if name in FIXED_PARAMETERS or any(not p.numeric for p in _declared(name)):
        return [value]
    from_range = isinstance(value, str) and ":" in value and name not in TEXT_PARAMETERS
    vals = _flatten(value, name)
    if not vals:
        raise ParameterError(name, "no values given")
    if _is_integer(name):
        out, seen = [], set()
        for v in vals:
            if isinstance(v, float) and math.isfinite(v) and (from_range or v == round(v)):
                v = int(round(v))
            if from_range:
                if v in seen:
                    continue
                seen.add(v)
            out.append(v)
        return out
    return [float(v) if isinstance(v, int) and name in ("eps0", "delta", "epsilon", "q") else v for v in vals]


# --------------------------------------------------------------------------- the grid
def _mechanism_class(name: str):
    from . import gaussian  # noqa: F401  (registers the randomizers beyond pure LDP)
    from .mechanisms import registry

    MECHANISMS = registry()

    if name in COMPOSED:
        return None
    if name not in MECHANISMS:
        raise ParameterError("mechanism", f"unknown mechanism {name!r}; expected one of "
                                          f"{sorted(set(MECHANISMS) | set(COMPOSED))}")
    return MECHANISMS[name]


def _accepted(name: str) -> tuple[str, ...]:
    """Parameters (other than eps0) that mechanism ``name`` takes."""
    if name in COMPOSED:
        from .compose import COMPOSED_CLASSES

        return tuple(p.name for p in COMPOSED_CLASSES[name].param_specs)
    return tuple(_mechanism_class(name).parameters)


def _takes_eps0(m) -> bool:
    """Whether a sweep's ``eps0`` values apply to mechanism ``m`` (a name: it declares eps0; composed mechanisms
    take theirs inside each component, the Gaussian randomizer has none; a mechanism object: always)."""
    if not isinstance(m, str):
        return True
    cls = _mechanism_class(m)
    return cls is not None and any(p.name == "eps0" for p in cls.param_specs)


def expand_grid(mechanism: Any = "krr", *, eps0: Any = None, n: Any, delta: Any = None, epsilon: Any = None,
                method: Any = "optimal", evaluator: Any = DEFAULT_EVALUATOR, **params) -> tuple[list[dict], list[str]]:
    """The points of a sweep, in order, without evaluating them.

    Parameters
    ----------
    mechanism, eps0, n, delta, epsilon, method, evaluator, **params
        As for :func:`sweep`.

    Returns
    -------
    (list of dict, list of str)
        The points (each a dict of the row's input columns plus the keys ``_spec`` -- the
        mechanism specification -- ``method`` and ``evaluator``) in product order, and the input
        columns in table order.  The order is mechanism, then its parameters in the order given,
        ``eps0``, ``n``, ``delta`` (or ``epsilon``), ``method``, ``evaluator``; the last one varies
        fastest.  A parameter applies to the mechanisms that take it (``k`` to ``krr`` in a
        ``krr,blh`` sweep); its column is empty for the others.

    Raises
    ------
    ParameterError
        Both or neither of ``delta`` and ``epsilon``; a parameter no listed mechanism takes;
        ``eps0`` for a composed mechanism; an unknown mechanism, method or evaluator; a bad
        value (see :func:`parse_values`).
    ResourceLimitError
        More than :data:`MAX_POINTS` points.
    """
    from . import _validate

    if (delta is None) == (epsilon is None):
        raise ParameterError("delta", "give exactly one of delta (the sweep computes epsilon) and epsilon "
                                      "(the sweep computes delta)")
    target = "delta" if delta is not None else "epsilon"
    if n is None:
        raise ParameterError("n", "required")
    # mechanisms: names, or mechanism objects used as they are
    mech_values = [mechanism] if hasattr(mechanism, "upper_decompositions") else (
        list(mechanism) if isinstance(mechanism, (list, tuple)) else None)
    if mech_values is None:
        mech_values = parse_values(mechanism, "mechanism")
    mechs: list = []
    for m in mech_values:
        if hasattr(m, "upper_decompositions"):
            mechs.append(_validate.mechanism(m))
        elif isinstance(m, str) and m.strip():
            key = m.strip().lower()
            _mechanism_class(key)
            mechs.append(key)
        else:
            raise ParameterError("mechanism", f"must be a mechanism name or a shuffleamp mechanism, got {m!r}")

    axes_params = {}
    for key, value in params.items():
        if value is None:
            continue
        if key in ("eps0", "n", "delta", "epsilon", "method", "evaluator", "mechanism"):
            raise ParameterError(key, "given twice")
        axes_params[key] = parse_values(value, key)
    for key in axes_params:
        if not any(isinstance(m, str) and key in _accepted(m) for m in mechs):
            names = sorted({m for m in mechs if isinstance(m, str)}) or ["<mechanism object>"]
            raise ParameterError(key, f"not a parameter of mechanism {', '.join(names)}")
    for m in mechs:                    # a required parameter left out is an error naming it
        if isinstance(m, str) and m not in COMPOSED:
            for p in _mechanism_class(m).param_specs:
                if p.required and p.name not in axes_params and not (p.name == "eps0" and eps0 is not None):
                    raise p.missing(m)
    eps0_values = None if eps0 is None else [_validate.eps0(v) for v in parse_values(eps0, "eps0")]
    if eps0_values is not None and not any(_takes_eps0(m) for m in mechs):
        raise ParameterError("eps0", f"not used by mechanism {mechs[0]!r}; "
                                     + ("give it inside each component" if mechs[0] in COMPOSED else
                                        "it declares: " + "; ".join(p.describe()
                                                                    for p in _mechanism_class(mechs[0]).param_specs)))
    n_values = [_validate.count(v, "n") for v in parse_values(n, "n")]
    if target == "delta":
        t_values = [_validate.delta(v) for v in parse_values(delta, "delta")]
    else:
        t_values = [_validate.epsilon(v) for v in parse_values(epsilon, "epsilon")]
    methods = [_validate.choice(v, "method", set(METHODS)) for v in parse_values(method, "method")]
    evaluators = [_validate.choice(v, "evaluator", set(EVALUATORS)) for v in parse_values(evaluator, "evaluator")]

    counts = []
    for m in mechs:
        c = len(n_values) * len(t_values) * len(methods) * len(evaluators)
        if isinstance(m, str):
            for key, vals in axes_params.items():
                if key in _accepted(m):
                    c *= len(vals)
        if eps0_values is not None and _takes_eps0(m):
            c *= len(eps0_values)
        counts.append(c)
    total = sum(counts)
    if total > MAX_POINTS:
        raise ResourceLimitError(f"the sweep has {total} points, more than the limit of {MAX_POINTS}; "
                                 "sweep fewer values", parameter="n", resource="memory")

    param_cols = [k for k in axes_params if k not in FIXED_PARAMETERS]
    columns = ["mechanism", *param_cols, "eps0", "n", target]
    points: list[dict] = []
    for m in mechs:
        if isinstance(m, str):
            keys = [k for k in axes_params if k in _accepted(m)]
            e_vals = eps0_values if (eps0_values is not None and _takes_eps0(m)) else [None]
        else:
            keys = []
            e_vals = [None] if eps0_values is None else eps0_values
        for combo in itertools.product(*(axes_params[k] for k in keys), e_vals, n_values, t_values, methods,
                                       evaluators):
            pvals = dict(zip(keys, combo[:len(keys)]))
            e0, nn, tt, meth, ev = combo[len(keys):]
            if isinstance(m, str):
                spec = {"mechanism": m, **pvals}
                if e0 is not None:
                    spec["eps0"] = e0
                name = m
            else:
                spec = m if e0 is None else ("with_eps0", m, e0)
                name = getattr(m, "name", None) or m.describe().get("mechanism", type(m).__name__)
                e0 = float(m.eps0) if e0 is None else e0
            row = {"mechanism": name}
            for k in param_cols:
                row[k] = pvals.get(k)
            row.update(eps0=e0, n=nn)
            row[target] = tt
            points.append({"_spec": spec, "_row": row, "method": meth, "evaluator": ev})
    return points, columns


# --------------------------------------------------------------------------- evaluation
def _spec_key(spec) -> Any:
    if isinstance(spec, Mapping):
        return ("spec",) + tuple(sorted((k, repr(v)) for k, v in spec.items()))
    if isinstance(spec, tuple):
        return ("with", id(spec[1]), spec[2])
    return ("obj", id(spec))


def _build(spec):
    if isinstance(spec, Mapping):
        from .config import mechanism_from_spec

        return mechanism_from_spec(spec)
    if isinstance(spec, tuple):
        return spec[1].with_eps0(spec[2])
    return spec


def _run_point(p: Mapping, mech, target: str, rtol: float, errors: str) -> dict:
    from .bounds import delta as _delta
    from .bounds import epsilon as _epsilon

    row = p["_row"]
    meth, ev = p["method"], p["evaluator"]
    out: dict[str, Any] = {}
    q = "epsilon" if target == "delta" else "delta"
    try:
        fn = _epsilon if q == "epsilon" else _delta
        r = fn(mech, row["n"], row[target], method=meth, rtol=rtol, evaluator=ev)
    except ShuffleampError as exc:
        if errors == "raise" or isinstance(exc, ParameterError):
            note = ", ".join(f"{k}={row[k]}" for k in row if row[k] is not None)
            exc.add_note(f"at sweep point {note}, method={meth}, evaluator={ev}")
            raise
        text = str(exc)
        return {f"{q}_upper": None, f"{q}_lower": None, "sound": None, "delta_error": None,
                "evaluator_used": None, "error": f"{type(exc).__name__}: {text}"}
    out[f"{q}_upper"] = None if r.upper is None else float(r.upper)
    out[f"{q}_lower"] = None if r.lower is None else float(r.lower)
    if r.kind == "estimate":
        out[f"{q}_estimate"] = float(r.estimate)
    out["sound"] = bool(r.sound)
    err = r.error
    out["delta_error"] = None if err is None else float(err)
    out["error"] = None
    return out


def _run_chunk(points: Sequence[Mapping], target: str, rtol: float, errors: str) -> list[dict]:
    """Evaluate a chunk of points (one Dask task, or the whole serial run); mechanisms built once per chunk."""
    cache: dict = {}
    out = []
    for p in points:
        key = _spec_key(p["_spec"])
        mech = cache.get(key)
        if mech is None:
            mech = cache[key] = _build(p["_spec"])
        out.append(_run_point(p, mech, target, rtol, errors))
    return out


def _run_chunk_remote(points: Sequence[Mapping], target: str, rtol: float, errors: str):
    """:func:`_run_chunk` on a Dask worker: an error comes back as its class and state (``ParameterError``
    and friends take keyword arguments, which plain exception pickling loses) and is re-raised here."""
    try:
        return _run_chunk(points, target, rtol, errors)
    except ShuffleampError as exc:
        return _RemoteError(type(exc), exc.args, dict(exc.__dict__))


class _RemoteError:
    def __init__(self, cls, args, state):
        self.cls, self.args, self.state = cls, args, state

    def rebuild(self) -> BaseException:
        exc = self.cls.__new__(self.cls)
        exc.args = self.args
        exc.__dict__.update(self.state)
        return exc


def progress_bar(total: int, *, progress: bool | None = None, desc: str = "sweep", unit: str = "point"):
    """A tqdm progress bar on stderr, or a silent stand-in.

    Parameters
    ----------
    total : int
        Number of units of work.
    progress : bool or None
        None (default): a bar when stderr is a terminal, shown only once the work has run for
        :data:`PROGRESS_DELAY` seconds (so short work stays silent).  True: always (also when
        stderr is not a terminal, still after the delay).  False: never.
    desc, unit : str
        Label and unit of the bar.

    Returns
    -------
    object
        A ``tqdm`` instance, or an object with the same ``update`` / ``close`` methods and
        context-manager protocol that does nothing (``progress=False``, not a terminal, or tqdm
        not installed).
    """
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    if progress:
        try:
            from tqdm import tqdm
        except ImportError:  # pragma: no cover - tqdm is a dependency
            progress = False
        else:
            return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, delay=PROGRESS_DELAY,
                        dynamic_ncols=True, leave=False)
    return _Silent()


class busy:
    """Context manager: an elapsed-time indicator (tqdm, stderr) for one long computation without steps.

    Shown like :func:`progress_bar`: on a terminal (or with ``progress=True``), only once the work has
    lasted :data:`PROGRESS_DELAY` seconds; refreshed by a daemon thread every half second, so the
    computation itself is not touched.  Light to import (no numpy), so the command line can use it.

    Parameters
    ----------
    desc : str
        What is running (e.g. ``"epsilon"``).
    progress : bool or None
        As for :func:`progress_bar`.
    """

    def __init__(self, desc: str = "working", *, progress: bool | None = None):
        self.desc = desc
        self.progress = progress
        self._bar = None
        self._stop = None
        self._thread = None

    def __enter__(self):
        import threading

        bar = progress_bar(0, progress=self.progress, desc=self.desc, unit="s")
        if isinstance(bar, _Silent):
            return self
        bar.total = None
        bar.bar_format = "{desc}: {elapsed} elapsed"
        self._bar, self._stop = bar, threading.Event()

        def tick():
            while not self._stop.wait(0.5):
                bar.update(0)            # redraws once the delay has passed (tqdm's own rule)

        self._thread = threading.Thread(target=tick, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._stop is not None:
            self._stop.set()
            self._thread.join()
            self._bar.close()
        return False


class _Silent:
    def update(self, k=1):
        return None

    def close(self):
        return None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _chunks(count: int, nchunks: int) -> list[list[int]]:
    """Strided chunks (point i goes to chunk i mod nchunks): expensive corners of a grid are spread out."""
    nchunks = max(1, min(count, nchunks))
    return [list(range(j, count, nchunks)) for j in range(nchunks)]


def _run_serial(points, target, rtol, errors, bar) -> list[dict]:
    cache: dict = {}
    out = []
    for p in points:
        key = _spec_key(p["_spec"])
        mech = cache.get(key)
        if mech is None:
            mech = cache[key] = _build(p["_spec"])
        out.append(_run_point(p, mech, target, rtol, errors))
        bar.update(1)
    return out


def _dask_client(scheduler):
    """(client, cleanup) for ``scheduler``: "dask" starts a LocalCluster, an address connects, a Client is kept."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ParameterError("scheduler", "needs dask.distributed: pip install 'shuffleamp[dask]'") from None
    if isinstance(scheduler, Client):
        return scheduler, lambda: None
    if scheduler == "dask":
        import logging

        cluster = LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.ERROR)
        client = Client(cluster)

        def cleanup():
            client.close()
            cluster.close()
        return client, cleanup
    try:
        client = Client(scheduler, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise ParameterError("scheduler", f"cannot connect to the Dask scheduler at {scheduler!r}: {exc}") from None
    return client, client.close


def _run_dask(points, target, rtol, errors, scheduler, chunk_size, bar) -> list[dict]:
    from dask.distributed import as_completed

    client, cleanup = _dask_client(scheduler)
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        if chunk_size is None:
            nchunks = max(4 * workers, math.ceil(len(points) / CHUNK_POINTS))
        else:
            nchunks = math.ceil(len(points) / chunk_size)
        chunks = _chunks(len(points), nchunks)
        futures = {}
        for idx in chunks:
            fut = client.submit(_run_chunk_remote, [points[i] for i in idx], target, rtol, errors, pure=False)
            futures[fut] = idx
        out: list = [None] * len(points)
        for fut in as_completed(futures):
            rows = fut.result()          # re-raises a worker's unexpected exception here
            if isinstance(rows, _RemoteError):
                for other in futures:
                    other.cancel()
                raise rows.rebuild()
            for i, r in zip(futures[fut], rows):
                out[i] = r
            bar.update(len(rows))
        return out
    finally:
        cleanup()


def _is_dask(scheduler) -> bool:
    if scheduler is None or scheduler == "serial":
        return False
    if scheduler == "dask" or (isinstance(scheduler, str) and "://" in scheduler):
        return True
    if type(scheduler).__name__ == "Client" and type(scheduler).__module__.startswith("distributed"):
        return True
    raise ParameterError("scheduler", "must be None, 'serial', 'dask', a scheduler address such as "
                                      f"'tcp://host:8786' or a distributed.Client, got {scheduler!r}")


def sweep(mechanism: Any = "krr", *, eps0: Any = None, n: Any, delta: Any = None, epsilon: Any = None,
          method: Any = "optimal", evaluator: Any = DEFAULT_EVALUATOR, rtol: float = 1e-3,
          scheduler: Any = None, progress: bool | None = None, errors: str = "raise", details: bool = False,
          chunk_size: int | None = None, as_frame: bool | None = None, **params):
    """Certified shuffled ε (or δ) over a product grid of parameters, as a tidy table.

    Parameters
    ----------
    mechanism : str, list of str, or Mechanism
        Mechanism name(s) (``"krr"``, ``"blh"``, ``"rappor"``, ``"oue"``, ``"hr"``, ``"laplace"``,
        ``"matrix"``, or composed ``"joint"``/``"parallel"``/``"subsample"`` with ``components``),
        a comma list ``"krr,blh"``, or a mechanism object (used as it is; with ``eps0`` given,
        rebuilt at each ε0).
    eps0 : float, list or str, optional
        Local ε0 in nats (> 0).  Required for named simple mechanisms other than ``"matrix"``.
    n : int, list or str
        Number of shuffled users (>= 1), e.g. ``[10**4, 10**6]`` or ``"1e3:1e8:log:20"``.
    delta : float, list or str, optional
        Target δ in (0, 1): the sweep computes ε (columns ``epsilon_upper``, ``epsilon_lower``).
    epsilon : float, list or str, optional
        Target central ε in nats (>= 0): the sweep computes δ (``delta_upper``, ``delta_lower``).
        Give exactly one of ``delta`` and ``epsilon``.
    method : str or list of str
        ``"optimal"`` (default) or comparison methods (:data:`shuffleamp.bounds.METHODS`).
    evaluator : str or list of str
        ``"exact"`` (default), ``"fft"``, ``"spectral"`` or ``"auto"`` (see :func:`shuffleamp.delta`).
    rtol : float
        Passed to :func:`shuffleamp.epsilon` / :func:`shuffleamp.delta`.
    scheduler : None, "serial", "dask", str or distributed.Client
        Where the points run: None / ``"serial"`` in this process; ``"dask"`` on a
        ``dask.distributed.LocalCluster`` started for the sweep (one single-threaded worker
        process per core) and closed after it; an address ``"tcp://host:8786"`` on a running
        Dask cluster (whose workers have shuffleamp installed); a ``distributed.Client`` as it is.
    progress : bool or None
        Progress bar (tqdm, stderr): None (default) when stderr is a terminal and the work lasts
        more than about a second; True always (after the same delay); False never.
    errors : {"raise", "record"}
        ``"raise"`` (default): the first failing point raises, with a note naming the point.
        ``"record"``: a failing point (e.g. a comparison method outside its regime, a resource
        limit) gets empty values and its message in an ``error`` column.  Invalid parameter
        values always raise.
    details : bool
        Add the columns ``method``, ``sound``, ``evaluator`` and ``delta_error`` (the certified
        error bound of the upper δ evaluation at the answer).  ``method`` and ``sound`` are also
        added whenever a method other than ``"optimal"`` is swept, ``evaluator`` whenever it is not
        the default.
    chunk_size : int, optional
        Points per Dask task (default: about :data:`CHUNK_POINTS`, at least four tasks per worker).
    as_frame : bool or None
        None (default): a pandas DataFrame when pandas is installed, else :class:`Records`.
        True: a DataFrame (pandas required).  False: :class:`Records`.
    **params
        Mechanism parameters, each a scalar, a list or a range string: ``k`` (k-RR), ``d``
        (BLH / RAPPOR / OUE / HR; ``None`` = asymptotic), ``q`` (subsample), ``matrix``,
        ``components``, ``weights``, ``distances`` (taken as they are, not expanded).

    Returns
    -------
    pandas.DataFrame or Records
        One row per grid point, in product order (mechanism, its parameters in the order given,
        ``eps0``, ``n``, target, method, evaluator; the last varies fastest).  Columns:
        ``mechanism``, the mechanism parameters, ``eps0``, ``n``, ``delta`` (or ``epsilon``),
        ``epsilon_upper`` and ``epsilon_lower`` (or ``delta_upper`` and ``delta_lower``), ε in nats,
        then the optional columns above.  Write it with :func:`to_csv` / :func:`to_json`
        (the same output for both table types).

    Raises
    ------
    ParameterError
        Naming the parameter: both or neither of ``delta`` and ``epsilon``, a parameter no listed
        mechanism takes, a malformed list or range, an out-of-range value, an unknown mechanism,
        method, evaluator or scheduler, ``dask`` not installed.
    ResourceLimitError
        More than :data:`MAX_POINTS` points, or (``errors="raise"``) a point beyond the work budget.
    OutOfRegimeError
        (``errors="raise"``) a comparison method outside its validity regime.

    References
    ----------
    P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
    Shuffling", IEEE S&P 2026 (arXiv:2504.07414), Theorems 13 (upper) and 14 (lower bound).
    """
    from . import _validate

    errors = _validate.choice(errors, "errors", {"raise", "record"})
    if progress is not None and not isinstance(progress, bool):
        raise ParameterError("progress", f"must be True, False or None, got {progress!r}")
    rtol = _validate.real("rtol", rtol, lo=1e-9, hi=0.5)
    if chunk_size is not None:
        chunk_size = _validate.count(chunk_size, "chunk_size")
    use_dask = _is_dask(scheduler)
    points, columns = expand_grid(mechanism, eps0=eps0, n=n, delta=delta, epsilon=epsilon, method=method,
                                  evaluator=evaluator, **params)
    target = columns[-1]
    # every mechanism is built once here, so a bad parameter fails before any work; a matrix or composed
    # mechanism without a given eps0 shows its own (tight) eps0 in the eps0 column, a randomizer that has no
    # local eps0 (Gaussian) none: the eps0 it describes itself by, not an internal attribute
    built = {key: _build(spec) for key, spec in {_spec_key(p["_spec"]): p["_spec"] for p in points}.items()}
    for p in points:
        if p["_row"]["eps0"] is None:
            e0 = built[_spec_key(p["_spec"])].describe().get("eps0")
            p["_row"]["eps0"] = None if e0 is None else float(e0)
    with progress_bar(len(points), progress=progress) as bar:
        if use_dask:
            results = _run_dask(points, target, rtol, errors, scheduler, chunk_size, bar)
        else:
            results = _run_serial(points, target, rtol, errors, bar)
    q = "epsilon" if target == "delta" else "delta"
    out_cols = [*columns, f"{q}_upper", f"{q}_lower"]
    methods = {p["method"] for p in points}
    evaluators = {p["evaluator"] for p in points}
    if any(f"{q}_estimate" in r for r in results):
        out_cols.append(f"{q}_estimate")
    if details or methods != {"optimal"}:
        out_cols += ["method", "sound"]
    if details or evaluators != {DEFAULT_EVALUATOR}:
        out_cols.append("evaluator")
    if details:
        out_cols.append("delta_error")
    if any(r.get("error") for r in results):
        out_cols.append("error")
    rows = []
    for p, r in zip(points, results):
        row = dict(p["_row"])
        row.update(method=p["method"], evaluator=p["evaluator"])
        row.update(r)
        rows.append({c: row.get(c) for c in out_cols})
    return _table(rows, out_cols, as_frame)


# --------------------------------------------------------------------------- tables
class Records(list):
    """A sweep table without pandas: a list of row dicts with a fixed column order.

    Attributes
    ----------
    columns : list of str
        Column names, in order.
    """

    def __init__(self, rows: Iterable[Mapping] = (), columns: Sequence[str] | None = None):
        rows = [dict(r) for r in rows]
        super().__init__(rows)
        if columns is None:
            columns = list(rows[0]) if rows else []
        self.columns = list(columns)

    def to_csv(self, path_or_buf=None) -> str | None:
        """Write the table as CSV (see :func:`to_csv`).

        Parameters
        ----------
        path_or_buf : str, path-like, file object or None
            Where to write; None returns the text.

        Returns
        -------
        str or None
            The CSV text when ``path_or_buf`` is None.
        """
        return to_csv(self, path_or_buf)

    def to_json(self, path_or_buf=None) -> str | None:
        """Write the table as a JSON array of row objects (see :func:`to_json`).

        Parameters
        ----------
        path_or_buf : str, path-like, file object or None
            Where to write; None returns the text.

        Returns
        -------
        str or None
            The JSON text when ``path_or_buf`` is None.
        """
        return to_json(self, path_or_buf)

    def __repr__(self) -> str:
        return format_text(self)


def _table(rows: list[dict], columns: list[str], as_frame: bool | None):
    if as_frame is False:
        return Records(rows, columns)
    try:
        import pandas as pd
    except ImportError:
        if as_frame:
            raise ParameterError("as_frame", "needs pandas: pip install 'shuffleamp[pandas]'") from None
        return Records(rows, columns)
    df = pd.DataFrame.from_records(rows, columns=columns)
    for c in columns:
        if c in df and _is_integer(c):
            vals = [r.get(c) for r in rows]
            if all(v is None or isinstance(v, int) for v in vals):
                df[c] = pd.array(vals, dtype="Int64")
    return df


def to_records(table) -> Records:
    """A sweep table (DataFrame or :class:`Records`) as :class:`Records` with Python values.

    Parameters
    ----------
    table : pandas.DataFrame or Records or list of dict

    Returns
    -------
    Records
        Missing values (NaN, ``pd.NA``) become None; numpy scalars become Python numbers.
    """
    if isinstance(table, Records):
        return table
    if hasattr(table, "to_dict") and hasattr(table, "columns"):
        cols = [str(c) for c in table.columns]
        rows = []
        for rec in table.to_dict(orient="records"):
            row = {}
            for c in cols:
                v = rec[c]
                if hasattr(v, "item") and callable(v.item) and getattr(v, "ndim", 0) == 0:
                    v = v.item()
                if v is None or (isinstance(v, float) and math.isnan(v)) or type(v).__name__ in ("NAType", "NaTType"):
                    v = None
                row[c] = v
            rows.append(row)
        return Records(rows, cols)
    return Records(table)


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _write(text: str, path_or_buf) -> str | None:
    if path_or_buf is None:
        return text
    if hasattr(path_or_buf, "write"):
        path_or_buf.write(text)
        return None
    with open(path_or_buf, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return None


def to_csv(table, path_or_buf=None) -> str | None:
    """Write a sweep table as CSV: a header line and one line per row.

    Floats are written with all their digits (``repr``); a missing value is an empty cell.  The
    output is the same for a DataFrame and for :class:`Records`.

    Parameters
    ----------
    table : pandas.DataFrame or Records
    path_or_buf : str, path-like, file object or None
        Where to write; None returns the text.

    Returns
    -------
    str or None
        The CSV text when ``path_or_buf`` is None.
    """
    rec = to_records(table)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(rec.columns)
    for r in rec:
        w.writerow([_cell(r.get(c)) for c in rec.columns])
    return _write(buf.getvalue(), path_or_buf)


def to_json(table, path_or_buf=None, *, indent: int | None = None) -> str | None:
    """Write a sweep table as a JSON array of row objects (missing values are ``null``).

    Parameters
    ----------
    table : pandas.DataFrame or Records
    path_or_buf : str, path-like, file object or None
        Where to write; None returns the text.
    indent : int, optional
        Passed to :func:`json.dumps`.

    Returns
    -------
    str or None
        The JSON text when ``path_or_buf`` is None.
    """
    rec = to_records(table)
    return _write(json.dumps([{c: r.get(c) for c in rec.columns} for r in rec], indent=indent), path_or_buf)


def format_text(table, *, digits: int = 6) -> str:
    """A sweep table as fixed-width text (numbers with ``digits`` significant digits; ε in nats).

    Parameters
    ----------
    table : pandas.DataFrame or Records
    digits : int
        Significant digits of floats.

    Returns
    -------
    str
    """
    rec = to_records(table)
    cols = rec.columns

    def cell(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            return format(v, f".{digits}g")
        return str(v)

    body = [[cell(r.get(c)) for c in cols] for r in rec]
    widths = [max([len(c)] + [len(b[i]) for b in body]) for i, c in enumerate(cols)]
    text = ["  ".join(c.rjust(w) for c, w in zip(cols, widths)).rstrip(),
            "  ".join("-" * w for w in widths)]
    text += ["  ".join(v.rjust(w) for v, w in zip(b, widths)).rstrip() for b in body]
    return "\n".join(text)


class _CallableModule(types.ModuleType):
    """``shuffleamp.sweep`` is also the function: ``import shuffleamp.sweep`` before ``shuffleamp.sweep(...)``
    would otherwise leave the package attribute bound to the module."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
