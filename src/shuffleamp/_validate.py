"""The single place where user input is checked.

Every public entry point runs its arguments through these functions, which
reject NaN, infinities, wrong ranges and malformed matrices with a
:class:`~shuffleamp.errors.ParameterError` naming the parameter.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import NotLDPError, ParameterError

#: Relative tolerance used when checking that rows of a matrix sum to one.
ROW_SUM_RTOL = 1e-9


#: Largest count (n, k, d, ...) accepted, whether given as a Python int, a numpy integer or a float.
MAX_COUNT = 2 ** 62


def _not_a_number(value) -> str | None:
    """Why ``value`` (a scalar) is not a number, or None: None, strings, bytes and bools are refused
    (numpy would silently turn ``"1"`` into 1.0, ``None`` into NaN and ``True`` into 1.0)."""
    if value is None:
        return "must be a number, got None"
    if isinstance(value, (str, bytes)):
        return f"must be a number, got the string {value!r}"
    if isinstance(value, (bool, np.bool_)):
        return f"must be a number, got the boolean {value!r}"
    return None


def _as_float_array(name: str, value) -> np.ndarray:
    why = _not_a_number(value)
    if why is None and not isinstance(value, numbers.Number):
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError) as exc:
            raise ParameterError(name, f"must be a real number or array of real numbers, got {value!r}") from exc
        if raw.dtype.kind in "USb":
            what = "booleans" if raw.dtype.kind == "b" else "strings"
            why = f"must be a number or array of numbers, got an array of {what}"
        elif raw.dtype.kind == "O":
            why = next((w for w in map(_not_a_number, raw.ravel()) if w is not None), None)
    if why is not None:
        raise ParameterError(name, why)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ParameterError(name, f"must be a real number or array of real numbers, got {value!r}") from exc
    if arr.size == 0:
        raise ParameterError(name, "must not be empty")
    if np.isnan(arr).any():
        raise ParameterError(name, "must not be NaN")
    return arr


def budget_limits(max_seconds, max_memory_gb) -> tuple[float, float]:
    """``max_seconds`` and ``max_memory_gb`` of a public call: scalars > 0 (``inf`` for no limit).

    Returns
    -------
    (float, float)
        The validated pair.

    Raises
    ------
    ParameterError
        Naming ``max_seconds`` or ``max_memory_gb`` (NaN, <= 0, not a real scalar).
    """
    max_seconds = real("max_seconds", max_seconds, lo=0.0, lo_open=True, allow_inf=True)
    max_memory_gb = real("max_memory_gb", max_memory_gb, lo=0.0, lo_open=True, allow_inf=True)
    for name, value in (("max_seconds", max_seconds), ("max_memory_gb", max_memory_gb)):
        if not isinstance(value, float):
            raise ParameterError(name, "must be a scalar")
    return max_seconds, max_memory_gb


def real(name: str, value, *, lo=None, hi=None, lo_open=False, hi_open=False, allow_inf=False):
    """Check a real scalar or array against an interval.

    Parameters
    ----------
    name : str
        The user-facing parameter name, used in the error message.
    value : float or array_like of float
        The value to check (any shape; must not be empty).
    lo, hi : float, optional
        Lower / upper end of the allowed interval; None means unbounded.
    lo_open, hi_open : bool, default False
        Whether the corresponding end is excluded.
    allow_inf : bool, default False
        Accept ``±inf`` (still subject to ``lo``/``hi``).

    Returns
    -------
    float or numpy.ndarray
        A Python float for a scalar input, else a float64 array of the input's shape.

    Raises
    ------
    ParameterError
        Naming ``name``, if ``value`` is None, a string, a boolean, not real, empty, NaN,
        infinite (unless ``allow_inf``) or outside the interval.
    """
    if isinstance(value, float) or type(value) is int:
        # a Python (or numpy) float or a plain int: the same checks and messages without numpy arrays
        try:
            x = float(value)
        except OverflowError:
            x = None                     # an int beyond float range: the array path reports it
        if x is not None:
            if x != x:
                raise ParameterError(name, "must not be NaN")
            if not allow_inf and math.isinf(x):
                raise ParameterError(name, "must be finite")
            if lo is not None and (x <= lo if lo_open else x < lo):
                raise ParameterError(name, f"must be {'>' if lo_open else '>='} {lo}, got {x!r}")
            if hi is not None and (x >= hi if hi_open else x > hi):
                raise ParameterError(name, f"must be {'<' if hi_open else '<='} {hi}, got {x!r}")
            return x
    arr = _as_float_array(name, value)
    if not allow_inf and np.isinf(arr).any():
        raise ParameterError(name, "must be finite")
    if lo is not None:
        bad = arr <= lo if lo_open else arr < lo
        if bad.any():
            raise ParameterError(name, f"must be {'>' if lo_open else '>='} {lo}, got {arr[bad].flat[0].item()!r}")
    if hi is not None:
        bad = arr >= hi if hi_open else arr > hi
        if bad.any():
            raise ParameterError(name, f"must be {'<' if hi_open else '<='} {hi}, got {arr[bad].flat[0].item()!r}")
    return float(arr) if arr.ndim == 0 else arr


def eps0(value, name: str = "eps0"):
    """Check the local privacy parameter ε0 (nats): finite and > 0.

    Parameters
    ----------
    value : float or array_like of float
        ε0 in nats.
    name : str, default "eps0"
        The user-facing parameter name.

    Returns
    -------
    float or numpy.ndarray
        As :func:`real`.

    Raises
    ------
    ParameterError
        Naming ``name``, if ``value`` is not a finite real > 0.
    """
    return real(name, value, lo=0.0, lo_open=True)


#: Largest ε0 (nats) of a mechanism whose amplification is computed (see :func:`mechanism_eps0`).
EPS0_MAX = 150.0


def mechanism_eps0(value, name: str = "eps0", *, what: str | None = None) -> float:
    r"""Check the ε0 of a mechanism: a finite scalar in ``(0, EPS0_MAX]`` nats.

    The evaluators work in float64 with GPARV atoms up to :math:`e^{\varepsilon_0}(1 + e^\varepsilon)
    \le 2e^{2\varepsilon_0}` and their second moments times n (up to :math:`2^{62}`), which stay finite
    for :math:`\varepsilon_0 \le (709 - 44)/4 \approx 166`; :data:`EPS0_MAX` = 150 nats keeps a margin.
    (Above about 30 nats shuffling amplifies little for any practical n, and ε0 is its own sound
    answer: the shuffled mechanism is ε0-DP.)

    Parameters
    ----------
    value : float
        ε0 in nats.
    name : str, default "eps0"
        The user-facing parameter name.
    what : str, optional
        What has this ε0 when it is not the user's own value (e.g. "the matrix is", "the joint
        composition (sum of the components' eps0) is"); used in the message.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        Naming ``name``: not a finite real scalar > 0, or above :data:`EPS0_MAX`.
    """
    v = eps0(value, name)
    if not isinstance(v, float):
        raise ParameterError(name, "must be a scalar")
    if v > EPS0_MAX:
        head = f"{what} {v:.6g}-LDP" if what else f"must be <= {EPS0_MAX:g} nats, got {v!r}"
        raise ParameterError(name, f"{head}; the supported range is 0 < eps0 <= {EPS0_MAX:g} nats "
                                   "(larger eps0 overflows the float64 evaluators; the shuffled "
                                   "mechanism is eps0-DP in any case)")
    return v


def epsilon(value, name: str = "epsilon"):
    """Check the central privacy parameter ε (nats): finite and >= 0.

    Parameters
    ----------
    value : float or array_like of float
        ε in nats.
    name : str, default "epsilon"
        The user-facing parameter name.

    Returns
    -------
    float or numpy.ndarray
        As :func:`real`.

    Raises
    ------
    ParameterError
        Naming ``name``, if ``value`` is not a finite real >= 0.
    """
    return real(name, value, lo=0.0)


def delta(value, name: str = "delta"):
    """Check a δ strictly inside (0, 1).

    Parameters
    ----------
    value : float or array_like of float
        δ (a probability).
    name : str, default "delta"
        The user-facing parameter name.

    Returns
    -------
    float or numpy.ndarray
        As :func:`real`.

    Raises
    ------
    ParameterError
        Naming ``name``, if ``value`` is not in the open interval (0, 1).
    """
    return real(name, value, lo=0.0, hi=1.0, lo_open=True, hi_open=True)


def probability(value, name: str, *, open_lo=False, open_hi=False):
    """Check a probability in [0, 1] (ends optionally open).

    Parameters
    ----------
    value : float or array_like of float
        The probability.
    name : str
        The user-facing parameter name.
    open_lo, open_hi : bool, default False
        Exclude 0 / 1 respectively.

    Returns
    -------
    float or numpy.ndarray
        As :func:`real`.

    Raises
    ------
    ParameterError
        Naming ``name``, if ``value`` is outside the interval.
    """
    return real(name, value, lo=0.0, hi=1.0, lo_open=open_lo, hi_open=open_hi)


def count(value, name: str = "n", *, minimum: int = 1):
    """Check an integer count (number of users, domain size, ...) >= ``minimum``.

    Accepts Python/numpy integers and integral floats (``1e8``).

    Parameters
    ----------
    value : int, float or array_like
        The count; floats must be integral and finite; at most ``2**62`` (:data:`MAX_COUNT`),
        whether given as an int or a float.
    name : str, default "n"
        The user-facing parameter name.
    minimum : int, default 1
        Smallest allowed value.

    Returns
    -------
    int or numpy.ndarray
        A Python int for a scalar input, else an int64 array of the input's shape.

    Raises
    ------
    ParameterError
        Naming ``name``, if ``value`` is a bool, not integral, not finite,
        below ``minimum`` or above ``2**62``.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ParameterError(name, f"must be an integer, got {value!r}")
    if isinstance(value, numbers.Integral):
        if value < minimum:
            raise ParameterError(name, f"must be an integer >= {minimum}, got {value}")
        if value > MAX_COUNT:
            raise ParameterError(name, f"must be <= 2**62 = {MAX_COUNT}, got {value}")
        return int(value)
    arr = _as_float_array(name, value)
    if np.isinf(arr).any():
        raise ParameterError(name, "must be finite")
    if (arr != np.round(arr)).any():
        raise ParameterError(name, f"must be an integer, got {arr[arr != np.round(arr)].flat[0].item()!r}")
    if (arr < minimum).any():
        raise ParameterError(name, f"must be an integer >= {minimum}, got {arr[arr < minimum].flat[0].item()!r}")
    if (arr > MAX_COUNT).any():
        raise ParameterError(name, f"must be <= 2**62 = {MAX_COUNT}, got {arr[arr > MAX_COUNT].flat[0].item():.17g}")
    out = arr.astype(np.int64)
    return int(out) if out.ndim == 0 else out


def stochastic_matrix(value, name: str = "matrix") -> np.ndarray:
    """Check a row-stochastic matrix ``P[x, y]`` (rows are inputs, columns outputs).

    Parameters
    ----------
    value : array_like of float, shape (k, m)
        The matrix; ``k >= 2`` inputs, ``m >= 1`` outputs, non-negative finite
        entries, each row summing to 1 within ``ROW_SUM_RTOL * max(1, m)``.
    name : str, default "matrix"
        The user-facing parameter name.

    Returns
    -------
    numpy.ndarray
        Read-only float64 array of shape (k, m), rows renormalised to sum to 1.

    Raises
    ------
    ParameterError
        Naming ``name``, if the matrix has the wrong shape, a non-finite or
        negative entry, or a row that does not sum to 1.
    """
    P = _as_float_array(name, value)
    if P.ndim != 2:
        raise ParameterError(name, f"must be 2-dimensional (inputs x outputs), got shape {P.shape}")
    if P.shape[0] < 2:
        raise ParameterError(name, "needs at least 2 rows (inputs)")
    if P.shape[1] < 1:
        raise ParameterError(name, "needs at least 1 column (output)")
    if not np.isfinite(P).all():
        raise ParameterError(name, "entries must be finite")
    if (P < 0).any():
        r, c = np.argwhere(P < 0)[0]
        raise ParameterError(name, f"entry [{r}, {c}] is negative ({P[r, c]!r})")
    sums = P.sum(axis=1)
    bad = np.abs(sums - 1.0) > ROW_SUM_RTOL * max(1, P.shape[1])
    if bad.any():
        r = int(np.argmax(bad))
        raise ParameterError(name, f"row {r} sums to {sums[r]!r}, not 1 (matrix is not row-stochastic)")
    P = P / sums[:, None]
    P.setflags(write=False)
    return P


def ldp_level(P: np.ndarray, name: str = "matrix") -> float:
    r"""The smallest ε0 such that the matrix randomizer is ε0-LDP (pure), in nats.

    :math:`\varepsilon_0 = \max_y \max_{x, x'} \log(P[x, y] / P[x', y])` over the
    outputs ``y`` with some positive mass.

    Parameters
    ----------
    P : numpy.ndarray, shape (k, m), float64
        A row-stochastic matrix, as returned by :func:`stochastic_matrix`.
    name : str, default "matrix"
        The user-facing parameter name.

    Returns
    -------
    float
        ε0 in nats (>= 0).

    Raises
    ------
    NotLDPError
        Naming ``name``, if some output has zero probability under one input
        and positive probability under another (no finite ε0 exists).
    """
    cols = P[:, P.max(axis=0) > 0]
    lo = cols.min(axis=0)
    hi = cols.max(axis=0)
    if (lo <= 0).any():
        j = int(np.argmax(lo <= 0))
        raise NotLDPError(name, f"output column {j} has probability 0 for some input and > 0 for another: "
                                "not ε0-LDP for any finite ε0")
    return float(np.max(np.log(hi) - np.log(lo)))


def check_ldp(P: np.ndarray, eps0_claimed: float, name: str = "matrix", rtol: float = 1e-9) -> float:
    """Check that ``P`` is ``eps0_claimed``-LDP.

    Parameters
    ----------
    P : numpy.ndarray, shape (k, m), float64
        A row-stochastic matrix.
    eps0_claimed : float
        The claimed ε0 in nats.
    name : str, default "matrix"
        The user-facing name of the matrix.
    rtol : float, default 1e-9
        Relative slack allowed on ``eps0_claimed`` (plus an absolute 1e-12).

    Returns
    -------
    float
        The actual (tight) ε0 of ``P`` in nats, as :func:`ldp_level`.

    Raises
    ------
    NotLDPError
        Naming ``name`` if no finite ε0 exists, or naming ``eps0`` if the
        actual ε0 exceeds ``eps0_claimed``.
    """
    actual = ldp_level(P, name)
    if actual > eps0_claimed * (1 + rtol) + 1e-12:
        raise NotLDPError("eps0", f"the randomizer is only {actual:.6g}-LDP, not {eps0_claimed:.6g}-LDP")
    return actual


def mechanism(value, name: str = "mechanism"):
    """Check that ``value`` is a shuffleamp mechanism (duck-typed: decompositions and ``eps0``).

    Parameters
    ----------
    value : object
        What the user passed as the mechanism.
    name : str
        Parameter name used in the error message.

    Returns
    -------
    object
        ``value`` unchanged.

    Raises
    ------
    ParameterError
        ``value`` has no ``upper_decompositions`` or no ``eps0``.
    """
    if not hasattr(value, "upper_decompositions") or not hasattr(value, "eps0"):
        raise ParameterError(name, f"must be a shuffleamp mechanism, got {type(value).__name__}")
    return value


def choice(value, name: str, options):
    """Check that ``value`` is one of ``options``.

    Parameters
    ----------
    value : object
        The user's value.
    name : str
        The user-facing parameter name.
    options : collection
        The allowed values (sortable, for the message).

    Returns
    -------
    object
        ``value`` unchanged.

    Raises
    ------
    ParameterError
        Naming ``name``, if ``value`` is not in ``options``.
    """
    if value not in options:
        raise ParameterError(name, f"must be one of {sorted(options)}, got {value!r}")
    return value


def finite_result(name: str, value: float) -> float:
    """Guard used before returning a number to the user: never NaN, never negative, never inf silently.

    Parameters
    ----------
    name : str
        What the number is (for the internal-error message).
    value : float
        The number about to be returned.

    Returns
    -------
    float
        ``value`` unchanged.

    Raises
    ------
    ArithmeticError
        If ``value`` is NaN, negative or infinite (an internal error, not bad input).
    """
    if math.isnan(value) or value < 0 or math.isinf(value):
        raise ArithmeticError(f"internal error: {name} evaluated to {value!r}")
    return value


# ---------------------------------------------------------------------------- numbers from text
#: Words read as None by :func:`parse_number` where the parameter accepts None (``d`` of the asymptotic
#: BLH / RAPPOR / OUE).
NONE_WORDS = ("none", "null", "asymptotic")


def parse_number(text, name: str, *, none: bool = False):
    """Read one number from text: the one parser of the command line, plan component specs and sweeps.

    Rules (the same everywhere):

    * surrounding white space is ignored; an empty text is an error;
    * an integer literal (``1000``, ``-3``, ``1_000_000``: underscores between digits, as in Python
      and TOML) is returned as an ``int``;
    * any other real literal (``0.5``, ``1e6``, ``1_000.5``, ``inf``, ``-Infinity``) is returned as a
      ``float``; integral floats such as ``1e6`` are accepted wherever an integer is (the range
      checks of this module decide, naming the parameter);
    * ``nan`` is always an error (never a silent NaN);
    * ``none``, ``null`` and ``asymptotic`` (any case) are None where ``none=True``, else an error.

    Plan files are typed documents: their numbers are TOML / JSON numbers (a string where a number is
    expected is an error naming the field); the text inside them that is a specification (a component
    ``"krr:k=10:eps0=0.5"``, a group ``"1000:krr:..."``) is read by these rules.

    Parameters
    ----------
    text : str
        The user's text (one value, not a list).
    name : str
        The user-facing parameter name, used in the error message.
    none : bool, default False
        Whether the parameter accepts None (see :data:`NONE_WORDS`).

    Returns
    -------
    int or float or None

    Raises
    ------
    ParameterError
        Naming ``name``: not a string, empty, NaN, ``none`` where None is not accepted, or not a number.
    """
    if not isinstance(text, str):
        raise ParameterError(name, f"expected text holding a number, got {type(text).__name__}")
    t = text.strip()
    if not t:
        raise ParameterError(name, "empty value; expected a number")
    low = t.lower()
    if low in NONE_WORDS:
        if none:
            return None
        raise ParameterError(name, f"expected a number, got {t!r} (only parameters with an asymptotic or "
                                   "absent value accept none)")
    try:
        return int(t)
    except ValueError:
        pass
    try:
        x = float(t)
    except ValueError:
        raise ParameterError(name, f"expected a number, got {t!r}") from None
    if math.isnan(x):
        raise ParameterError(name, f"must be a finite number or inf, not NaN (got {t!r})")
    return x


# ---------------------------------------------------------------------------- parameter declarations
class _Required:
    """Sentinel default of a required :class:`Parameter`."""

    def __repr__(self) -> str:
        return "REQUIRED"


#: Default of a :class:`Parameter` that must be given.
REQUIRED = _Required()

#: Kinds of :class:`Parameter` and what they hold.
PARAMETER_KINDS = {
    "int": "an integer",
    "real": "a real number",
    "text": "text",
    "matrix": "a matrix (array of rows, or the path of a CSV file)",
    "list": "a list",
}


class Parameter:
    """Declaration of one constructor parameter of a mechanism: name, kind, range, unit, default, doc.

    A mechanism class lists its parameters once (``Mechanism.param_specs``); the registry
    (:func:`shuffleamp.mechanisms.make`), the command line (``--param NAME=VALUE``), plan files and
    sweeps read the declaration: which names exist, how text is read (:meth:`parse`), the range
    check (:meth:`check`), whether a value is required, and the help text (:meth:`describe`).

    Parameters
    ----------
    name : str
        Keyword of the mechanism's constructor (and of plans, ``--param``, sweeps).
    kind : {"int", "real", "text", "matrix", "list"}
        What the value is (``list``: the components, weights or distances of a composed mechanism).
    minimum, maximum : float, optional
        Range of an ``int`` or ``real`` value (inclusive unless ``open_minimum`` / ``open_maximum``).
    open_minimum, open_maximum : bool, default False
        Exclude the corresponding end.
    unit : str, default ""
        Unit of the value (``"nats"`` for ε0), for help texts.
    default : object, default REQUIRED
        The value used when the parameter is not given; :data:`REQUIRED` (the default) makes the
        parameter required: leaving it out is an error naming it, never a silent default.
        A default of None means "absent" (e.g. ``d=None``: the asymptotic bound) and lets the
        parameter accept ``none`` from text.
    doc : str, default ""
        One line saying what the parameter is.
    check_value : callable, optional
        ``check_value(value, name) -> value``: the range check to use instead of the generic one
        (e.g. :func:`mechanism_eps0`).

    Examples
    --------
    >>> from shuffleamp.mechanisms import Parameter
    >>> Parameter("k", "int", minimum=2, doc="number of categories").describe()
    'k: number of categories (an integer >= 2; required)'
    """

    __slots__ = ("name", "kind", "minimum", "maximum", "open_minimum", "open_maximum", "unit", "default", "doc",
                 "check_value")

    def __init__(self, name: str, kind: str = "real", *, minimum=None, maximum=None, open_minimum: bool = False,
                 open_maximum: bool = False, unit: str = "", default=REQUIRED, doc: str = "", check_value=None):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"Parameter name must be an identifier, got {name!r}")
        if kind not in PARAMETER_KINDS:
            raise ValueError(f"Parameter kind must be one of {sorted(PARAMETER_KINDS)}, got {kind!r}")
        self.name, self.kind = name, kind
        self.minimum, self.maximum = minimum, maximum
        self.open_minimum, self.open_maximum = open_minimum, open_maximum
        self.unit, self.default, self.doc = unit, default, doc
        self.check_value = check_value

    @property
    def required(self) -> bool:
        """True if the parameter has no default (leaving it out is an error)."""
        return self.default is REQUIRED

    @property
    def numeric(self) -> bool:
        """True for ``int`` and ``real`` parameters (these may be swept and listed in plans)."""
        return self.kind in ("int", "real")

    def _range_text(self) -> str:
        lo, hi = self.minimum, self.maximum
        if self.kind == "int" and hi is None and lo is not None:
            return f" >= {lo:g}" if not self.open_minimum else f" > {lo:g}"
        if lo is not None and hi is not None:
            return f" in {'(' if self.open_minimum else '['}{lo:g}, {hi:g}{')' if self.open_maximum else ']'}"
        if lo is not None:
            return f" {'>' if self.open_minimum else '>='} {lo:g}"
        if hi is not None:
            return f" {'<' if self.open_maximum else '<='} {hi:g}"
        return ""

    @property
    def what(self) -> str:
        """The kind, range and unit in words, e.g. ``"an integer >= 2"``, ``"a real number in (0, 150] nats"``."""
        return PARAMETER_KINDS[self.kind] + self._range_text() + (f" {self.unit}" if self.unit else "")

    def describe(self) -> str:
        """One-line help: ``name: doc (kind and range, unit; required or default)``.

        Returns
        -------
        str
        """
        what = self.what
        if self.required:
            tail = "required"
        elif self.default is None:
            tail = "optional"
        else:
            tail = f"default {self.default!r}"
        return f"{self.name}: {self.doc + ' ' if self.doc else ''}({what}; {tail})"

    def missing(self, mechanism: str, hint: str = "") -> ParameterError:
        """The error for this required parameter left out of mechanism ``mechanism`` (never a silent default).

        Parameters
        ----------
        mechanism : str
            The mechanism's name.
        hint : str, optional
            How to give the value where it is given (e.g. ``"give --param s=VALUE"``).

        Returns
        -------
        ParameterError
            Naming the parameter, with its doc, kind and range (the caller raises it).
        """
        what = (self.doc + ": " if self.doc else "") + self.what
        return ParameterError(self.name, f"required for mechanism {mechanism!r} ({what})" + (f"; {hint}" if hint else ""))

    def parse(self, text):
        """Read the parameter's value from text (the command line's ``--param``, component specs, sweeps).

        Numbers follow :func:`parse_number`; ``text`` and ``matrix`` values (a CSV path) are kept as
        the stripped text.

        Parameters
        ----------
        text : str

        Returns
        -------
        int or float or str or None

        Raises
        ------
        ParameterError
            Naming the parameter.
        """
        if self.numeric:
            return parse_number(text, self.name, none=self.default is None)
        if not isinstance(text, str) or not text.strip():
            raise ParameterError(self.name, f"expected {PARAMETER_KINDS[self.kind]}, got {text!r}")
        return text.strip()

    def check(self, value):
        """Check a value against the declaration (kind and range), naming the parameter.

        Parameters
        ----------
        value : object
            The value (already a number for numeric kinds; see :meth:`parse` for text).

        Returns
        -------
        object
            The value (an ``int`` for ``int`` parameters given as integral floats).

        Raises
        ------
        ParameterError
            Naming the parameter: None where the parameter has no None default, a string or a
            boolean for a numeric kind, a value outside the range.
        """
        if value is None and self.default is None:
            return None
        if self.check_value is not None:
            return self.check_value(value, self.name)
        if self.kind == "int":
            v = count(value, self.name, minimum=-MAX_COUNT if self.minimum is None else int(self.minimum))
            if not isinstance(v, int):
                raise ParameterError(self.name, "must be a scalar")
            if self.maximum is not None and v > self.maximum:
                raise ParameterError(self.name, f"must be an integer <= {self.maximum:g}, got {v}")
            return v
        if self.kind == "real":
            v = real(self.name, value, lo=self.minimum, hi=self.maximum, lo_open=self.open_minimum,
                     hi_open=self.open_maximum)
            if not isinstance(v, float):
                raise ParameterError(self.name, "must be a scalar")
            return v
        if value is None:
            raise ParameterError(self.name, "required, got None")
        return value

    def __repr__(self) -> str:
        return f"Parameter({self.describe()!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Parameter) and all(getattr(self, s) == getattr(other, s) for s in self.__slots__)

    def __hash__(self) -> int:
        return hash((self.name, self.kind))
