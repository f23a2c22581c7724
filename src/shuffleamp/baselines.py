r"""Comparison methods ("baselines"), each labelled with its validity.

Every method is selectable with ``method=`` in :func:`shuffleamp.epsilon` / :func:`shuffleamp.delta`
and ``--method`` on the command line; ``"optimal"`` (the Su–Cheng–Wang optimal decomposition bound,
:mod:`shuffleamp.bounds`) stays the default.  Each :class:`~shuffleamp.bounds.BoundResult` carries

* ``sound`` -- True only for certified (or published, proven) upper bounds;
* ``kind`` -- ``"upper"`` (a bound, possibly with ``sound=False`` if its proof is known to be
  broken) or ``"estimate"`` (a heuristic; the value is in ``estimate``, ``upper`` is None);
* ``settings["regime"]`` -- the validity regime in words, and ``settings["source"]``.

A method asked for a value outside its validity regime raises
:class:`~shuffleamp.errors.OutOfRegimeError`; nothing here returns NaN.

Methods (formulas: ``shared/reference/baselines.md``; digests ``seed000``, ``seed002``, ``seed004``)
--------------------------------------------------------------------------------------------------

``clone``
    Feldman–McMillan–Talwar (FOCS 2021) numerical bound: the **exact** hockey-stick divergence of
    the standard-clone reduction pair, both directions, via its three-atom GPARV (seed000 digest
    §2.1): :math:`2E(E-e^\varepsilon)/(E+1)` and :math:`2E(1-Ee^\varepsilon)/(E+1)` w.p.
    :math:`1/(2E)` each, 0 otherwise.  Evaluated by :func:`shuffleamp._ext.kernels.exact_three_atom`
    (O(√n) closed-form binomial sums); the binomial mass outside the summation window is charged
    to δ at the largest possible value (the kernel's ``hi``).  Sound for every ε0-LDP randomizer.
``clone-closed-form``
    FMT'21 Theorem closed form (baselines.md §2), in the more conservative of each published variant:
    the validity condition with :math:`\log(4/\delta)` (stricter than the paper's
    :math:`\log(2/\delta)`) and the public code's factor :math:`(1-e^{-\varepsilon_0})/(1+e^{-\varepsilon_0-e_1})`
    (larger than the theorem's :math:`(E-1)/(E+1)`).
``stronger-clone``
    Corrected Feldman–McMillan–Talwar (FMT23b) four-point general-clone decomposition (seed000
    digest §2.3) where its (p, q) are known: k-RR with :math:`p = 1/(E+k-1)`, :math:`q = (k-2)p`
    (digest §2.7 Example 4.1).  Evaluated with the certified FFT engine.  Other mechanisms raise
    :class:`OutOfRegimeError`.
``blanket-hoeffding``, ``blanket-bennett``
    Balle–Bell–Gascón–Nissim (CRYPTO 2019) computable privacy-blanket bounds (baselines.md §3),
    with k-RR- and Laplace-specific constants, generic ε0-LDP constants otherwise.  Valid for
    :math:`0 < \varepsilon < \varepsilon_0`.
``erlingsson``
    Erlingsson et al. (SODA 2019): :math:`\varepsilon = 12\varepsilon_0\sqrt{\log(1/\delta)/n}`,
    valid only for :math:`\varepsilon_0 \le 1/2`, :math:`n \ge 1000`, :math:`\delta \le 0.01`,
    :math:`\varepsilon \le \varepsilon_0` (baselines.md §1).
``variation-ratio``
    Wang et al. (PVLDB 2024) Algorithm 1 with the (p, β, q) of their Table 2 (seed004 digest §5,
    §7).  **Unsound** (``sound=False``): it rests on the flawed Lemma 4.5 (digest §14.2) and is
    violated by 4-ary RR (digest §14.3).  Comparison only.
``gdp``
    Chen–Cao–Ge (AAAI 2024) μ-GDP accountant (seed002 digest §0, Fact 3):
    :math:`\mu = \sqrt{2/(\sum_i q_i - \max_i q_i)}`, :math:`q_i = (1-\delta_i)/(1+e^{\varepsilon_i})`.
    An asymptotic **estimate** (``kind="estimate"``, ``sound=False``); personalized budgets via
    :func:`gdp_delta` / :func:`gdp_epsilon`.

ε(δ) of the numerical baselines uses the conservative end of a bracketing root search
(:func:`shuffleamp.bounds._solve_eps`): the returned ε is one at which the method's δ was
evaluated and found <= the target.  Closed forms are evaluated directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy.special import betainc, log_ndtr
from scipy.stats import binom

from . import _validate
from ._ext import binomial
from .errors import OutOfRegimeError, ParameterError, ResourceLimitError, ShuffleampError

__all__ = [
    "MethodInfo", "METHOD_INFO", "METHODS", "method_info", "regime", "check_applicable",
    "clone_delta", "clone_closed_form_epsilon", "clone_closed_form_delta", "clone_closed_form_min_delta",
    "stronger_clone_decomposition",
    "BlanketConstants", "blanket_constants", "hoeffding_delta", "bennett_delta",
    "erlingsson_epsilon", "erlingsson_delta",
    "VRParams", "vr_params", "vr_delta", "vr_delta_thm48", "vr_algorithm1",
    "gdp_mu", "gdp_delta_mu", "gdp_epsilon_mu", "gdp_delta", "gdp_epsilon",
]


# ============================================================================ registry
@dataclass(frozen=True)
class MethodInfo:
    """Static description of a method.

    Attributes
    ----------
    name : str
        The ``method=`` value.
    sound : bool
        True if the method's value is a proven (certified) upper bound inside its regime.
    kind : {"upper", "estimate"}
        ``"upper"``: a (claimed) upper bound, returned in ``BoundResult.upper``;
        ``"estimate"``: a heuristic, returned in ``BoundResult.estimate``.
    source : str
        Paper, theorem / equation and digest section.
    regime : str
        Generic validity regime (see :func:`regime` for the mechanism-specific text).
    """

    name: str
    sound: bool
    kind: str
    source: str
    regime: str


METHOD_INFO: dict[str, MethodInfo] = {m.name: m for m in (
    MethodInfo("optimal", True, "upper",
               "Su–Cheng–Wang, optimal blanket / general-clone decomposition (seed000 digest Thm 13, 14)",
               "any pure ε0-LDP randomizer of the catalogue; certified upper and lower bounds"),
    MethodInfo("clone", True, "upper",
               "Feldman–McMillan–Talwar FOCS 2021, standard clone, exact pair divergence "
               "(baselines.md §2; seed000 digest §2.1)",
               "any ε0-LDP randomizer (generic), any n >= 1"),
    MethodInfo("clone-closed-form", True, "upper",
               "Feldman–McMillan–Talwar FOCS 2021 closed form (baselines.md §2; seed002 digest §7.10)",
               "eps0 <= log(n / (16 log(4/δ))) (the stricter log(4/δ) form of the condition); generic"),
    MethodInfo("stronger-clone", True, "upper",
               "Feldman–McMillan–Talwar FMT23b corrected four-point decomposition (seed000 digest §2.3, "
               "§2.7 Example 4.1)",
               "k-RR only (the only mechanism with known (p, q)); any n >= 1"),
    MethodInfo("blanket-hoeffding", True, "upper",
               "Balle–Bell–Gascón–Nissim CRYPTO 2019, privacy blanket + Hoeffding (baselines.md §3)",
               "0 < ε < eps0; k-RR / Laplace specific constants, generic ε0-LDP constants otherwise"),
    MethodInfo("blanket-bennett", True, "upper",
               "Balle–Bell–Gascón–Nissim CRYPTO 2019, privacy blanket + Bennett (baselines.md §3)",
               "0 < ε < eps0; k-RR / Laplace specific constants, generic ε0-LDP constants otherwise"),
    MethodInfo("erlingsson", True, "upper",
               "Erlingsson–Feldman–Mironov–Raghunathan–Talwar–Thakurta SODA 2019 (baselines.md §1)",
               "eps0 <= 1/2, n >= 1000, δ <= 0.01 and ε <= eps0"),
    MethodInfo("variation-ratio", False, "upper",
               "Wang et al. PVLDB 2024, Algorithm 1 / Theorem 4.8 with Table 2 (p, β, q) (seed004 digest §5, §7)",
               "UNSOUND: relies on the flawed Lemma 4.5 (FMT23a post-processing, seed004 digest §14.2); "
               "violated by 4-ary RR (digest §14.3). Comparison only"),
    MethodInfo("gdp", False, "estimate",
               "Chen–Cao–Ge AAAI 2024 μ-GDP (seed002 digest §0, Thm 2, Fact 3)",
               "asymptotic heuristic (n → ∞; the C/sqrt(n-1) Berry–Esseen slack is dropped; "
               "seed002 digest §9); not a bound"),
)}

#: Method names in display order.
METHODS: tuple[str, ...] = tuple(METHOD_INFO)


def method_info(method: str) -> MethodInfo:
    """The :class:`MethodInfo` of ``method``.

    Raises
    ------
    ParameterError
        ``'method'`` if unknown.
    """
    _validate.choice(method, "method", set(METHOD_INFO))
    return METHOD_INFO[method]


# ============================================================================ helpers
def _E(eps0: float) -> float:
    return math.exp(eps0)


def _finite(method: str, name: str, value: float) -> float:
    if not math.isfinite(value):
        raise OutOfRegimeError(f"{method}: {name} is not finite ({value!r}) for these parameters "
                               "(numerically outside the formula's range)")
    return value


def _three_atom(v1: float, p1: float, v2: float, p2: float, v3: float, n: int) -> tuple[float, float]:
    """Exact (lo, hi) of (1/n) E[(G_1+...+G_n)_+] for a three-atom G (third atom mass 1-p1-p2)."""
    lo, hi = binomial.exact_three_atom(float(v1), float(p1), float(v2), float(p2), float(v3), int(n))
    return float(lo), float(hi)


class _AtomFamily:
    """Minimal GPARV family (``.gparv(eps)``) from an atom function; used for root-search estimates."""

    def __init__(self, fn: Callable[[float], tuple[np.ndarray, np.ndarray]], label: str = ""):
        self._fn = fn
        self.label = label

    def gparv(self, eps: float):
        from .gparv import Gparv

        v, p = self._fn(eps)
        return Gparv(v, p)


# ============================================================================ clone (FMT22, exact)
def _clone_atoms(eps0: float, eps: float, swapped: bool = False):
    """Standard-clone 3-atom GPARV (seed000 digest §2.1): values and masses, largest first."""
    E = _E(eps0)
    e = math.exp(eps)
    a = (E / (E + 1), 1 / (E + 1))
    b = (1 / (E + 1), E / (E + 1))
    if swapped:
        a, b = b, a
    c = 1 / (2 * E)
    v = [(a[0] - e * b[0]) / c, (a[1] - e * b[1]) / c]
    order = sorted(range(2), key=lambda j: -v[j])
    return [v[j] for j in order], [c, c]


def clone_delta(eps0: float, n: int, epsilon: float) -> tuple[float, float]:
    r"""Exact δ of the FMT22 standard-clone pair at ε: ``(lo, hi)``, maximum over both directions.

    :math:`C \sim \mathrm{Bin}(n-1, 1/E)`, :math:`A \sim \mathrm{Bin}(C, 1/2)`,
    :math:`\Delta \sim \mathrm{Bern}(E/(E+1))`, :math:`P_0 = (A+\Delta, C-A+1-\Delta)`,
    :math:`P_1 = (A+1-\Delta, C-A+\Delta)` (baselines.md §2), evaluated as
    :math:`\tfrac1n E[(\sum_{i\le n} G_i)_+]` of the equivalent three-atom GPARV (seed000 digest
    §2.1, checked there against direct enumeration) with
    :func:`~shuffleamp._ext.kernels.exact_three_atom`.

    Parameters
    ----------
    eps0 : float
        Local ε0 (nats), > 0.
    n : int
        Number of users, >= 1.
    epsilon : float
        Central ε (nats), >= 0.

    Returns
    -------
    (lo, hi) : tuple of float
        ``lo``: the exact sum over the O(√n) summation window (a lower bound);
        ``hi``: ``lo`` plus the binomial mass outside the window times the largest possible value
        of the positive part (a certified upper bound).  ``hi - lo`` is below 1e-40 in practice.

    Notes
    -----
    The swapped pair (``D(P_1 || P_0)``) has the same GPARV law (the two atoms trade places); both
    are evaluated anyway and the maximum is returned.
    """
    eps0 = _validate.eps0(eps0)
    n = _validate.count(n, "n")
    epsilon = _validate.epsilon(epsilon)
    best = (0.0, 0.0)
    for sw in (False, True):
        (v1, v2), (p1, p2) = _clone_atoms(eps0, epsilon, sw)
        lo, hi = _three_atom(v1, p1, v2, p2, 0.0, n)
        best = (max(best[0], lo), max(best[1], hi))
    return best


# ============================================================================ clone closed form
def _fmt_check(eps0: float, n: int, delta: float) -> None:
    arg = n / (16.0 * math.log(4.0 / delta))
    if arg <= 1.0 or eps0 > math.log(arg):
        lim = math.log(arg) if arg > 0 else -math.inf
        raise OutOfRegimeError(
            f"clone-closed-form: needs eps0 <= log(n / (16 log(4/δ))) = {lim:.6g} (stricter log(4/δ) form of "
            f"the FMT'21 condition), got eps0={eps0:g}, n={n}, δ={delta:g}")


def clone_closed_form_epsilon(eps0: float, n: int, delta: float, *, form: str = "code",
                              check: bool = True) -> float:
    r"""FMT'21 closed-form ε (baselines.md §2).

    With :math:`A_1 = 8\sqrt{E\log(4/\delta)/n}`, :math:`C_1 = 8E/n`, :math:`e_1 = \log(1+A_1+C_1)`:

    * ``form="code"`` (default; the public implementation, apple/ml-shuffling-amplification):
      :math:`\varepsilon = \log(1 + \frac{1-e^{-\varepsilon_0}}{1+e^{-\varepsilon_0-e_1}}(A_1+C_1))`;
    * ``form="paper"`` (the theorem): factor :math:`(E-1)/(E+1)`, never larger than the code's.

    The default is the more conservative (larger) of the two.

    Parameters
    ----------
    eps0, n, delta
        Local ε0 (nats), users, target δ in (0, 1).
    form : {"code", "paper"}
        Which published factor.
    check : bool
        Enforce the validity condition (default).  ``False`` is for reproducing published tables only.

    Raises
    ------
    OutOfRegimeError
        If ``eps0 > log(n / (16 log(4/δ)))``.  The paper states ``log(2/δ)``, the public code
        ``log(4/δ)`` (its issue #1); the stricter ``log(4/δ)`` is enforced.
    """
    eps0 = _validate.eps0(eps0)
    n = _validate.count(n, "n")
    delta = _validate.delta(delta)
    _validate.choice(form, "form", {"code", "paper"})
    if check:
        _fmt_check(eps0, n, delta)
    E = _E(eps0)
    A1 = 8.0 * math.sqrt(E * math.log(4.0 / delta) / n)
    C1 = 8.0 * E / n
    if form == "code":
        e1 = math.log1p(A1 + C1)
        factor = -math.expm1(-eps0) / (1.0 + math.exp(-eps0 - e1))
    else:
        factor = math.tanh(eps0 / 2.0)          # (E-1)/(E+1)
    return _finite("clone-closed-form", "epsilon", math.log1p(factor * (A1 + C1)))


def clone_closed_form_min_delta(eps0: float, n: int) -> float:
    """Smallest δ at which the (log(4/δ)) validity condition of the FMT'21 closed form holds."""
    return 4.0 * math.exp(-n / (16.0 * _E(eps0)))


def clone_closed_form_delta(eps0: float, n: int, epsilon: float) -> tuple[float, dict]:
    r"""δ at which the FMT'21 closed form certifies ε: a conservative inversion of
    :func:`clone_closed_form_epsilon` (``form="code"``).

    The closed form ε(δ) is decreasing in δ; a bisection on log δ returns a δ at which ε(δ) <= ε was
    evaluated (the right end of the final bracket, relative width 1e-10).

    Returns
    -------
    (delta, info) : (float, dict)

    Raises
    ------
    OutOfRegimeError
        If no δ < 1 gives ε(δ) <= ε, or the validity condition fails for every δ < 1.
    """
    eps0 = _validate.eps0(eps0)
    n = _validate.count(n, "n")
    epsilon = _validate.epsilon(epsilon)
    d_min = clone_closed_form_min_delta(eps0, n)
    d_max = 1.0 - 1e-12
    if d_min >= d_max:
        raise OutOfRegimeError(f"clone-closed-form: eps0={eps0:g} > log(n / (16 log(4/δ))) for every δ < 1 (n={n})")

    def g(t):  # t = log δ
        return clone_closed_form_epsilon(eps0, n, math.exp(t), check=False)

    lo_t, hi_t = math.log(max(d_min, 1e-300)), math.log(d_max)
    if g(hi_t) > epsilon:
        raise OutOfRegimeError(f"clone-closed-form: ε={epsilon:g} is below the closed form's ε for every δ < 1 "
                               f"(eps0={eps0:g}, n={n})")
    if d_min > 0 and g(lo_t) <= epsilon:
        return d_min, {"limited_by": "validity condition (δ >= 4 exp(-n / (16 e^eps0)))"}
    while hi_t - lo_t > 1e-10 * max(1.0, abs(hi_t)):
        mid = 0.5 * (lo_t + hi_t)
        if g(mid) <= epsilon:
            hi_t = mid
        else:
            lo_t = mid
    return math.exp(hi_t), {"inversion": "bisection on log δ, right end"}


# ============================================================================ stronger clone (FMT23b)
def stronger_clone_decomposition(mechanism):
    r"""Corrected FMT23b four-point decomposition as a :class:`~shuffleamp.gparv.Decomposition`.

    Known only for k-RR (seed000 digest §2.7 Example 4.1, "also the decomposition used in the
    corrected stronger clone FMT23b"): :math:`p = 1/(E+k-1)`, :math:`q = (k-2)p`,

    * :math:`R(x_1^0) = Ep\,Q^0 + p\,Q^1 + (1-p-Ep)\,\mathcal Q_1`,
    * :math:`R(x_1^1) = p\,Q^0 + Ep\,Q^1 + (1-p-Ep)\,\mathcal Q_1`,
    * :math:`R(x_i) = p\,Q^0 + p\,Q^1 + q\,\mathcal Q_1 + (1-2p-q)\,Q_i`,

    with :math:`1-p-Ep = (k-2)p = q` (digest §2.3 GC form: a = (Ep, p, 1−p−Ep), b = (p, Ep, 1−p−Ep),
    c = (p, p, q)).  For k = 2 the third component is empty.

    Raises
    ------
    OutOfRegimeError
        For any mechanism other than k-RR (its (p, q) are not known; FMT23b gives no efficient rule).
    """
    from .gparv import Decomposition

    if getattr(mechanism, "name", None) != "krr":
        raise OutOfRegimeError(
            f"stronger-clone: the corrected FMT23b four-point decomposition's (p, q) are only known for k-RR; "
            f"not available for mechanism {getattr(mechanism, 'name', type(mechanism).__name__)!r}")
    E = _E(mechanism.eps0)
    k = mechanism.k
    p = 1.0 / (E + k - 1)
    if k == 2:
        a, b, c = [E * p, p], [p, E * p], [p, p]
    else:
        q = (k - 2) * p
        a, b, c = [E * p, p, q], [p, E * p, q], [p, p, q]
    return Decomposition(a, b, c, 1.0 - sum(c), label=f"stronger clone (FMT23b) {k}-RR")


# ============================================================================ privacy blanket (BBGN19)
@dataclass(frozen=True)
class BlanketConstants:
    r"""Mechanism constants of the privacy-blanket bounds at one ε (baselines.md §3).

    Attributes
    ----------
    gamma_lb : float
        Lower bound on the blanket mass γ.
    b_plus : float
        :math:`b_+ = \max L`.
    b : float
        Range :math:`\max L - \min L`.
    c : float
        :math:`c = E[L^2]` (baselines.md calls it the variance; every formula there equals the second
        moment, which is what the Bennett inequality for :math:`L \le b_+` needs).
    a : float
        :math:`e^\varepsilon - 1 = -E[L]`.
    label : str
        ``"k-RR specific"``, ``"Laplace specific"`` or ``"generic ε0-LDP"``.
    """

    gamma_lb: float
    b_plus: float
    b: float
    c: float
    a: float
    label: str


def blanket_constants(mechanism, epsilon: float, constants: str = "auto") -> BlanketConstants:
    r"""Constants (γ_lb, b₊, b, c) of Balle et al. 2019 (baselines.md §3) for ``mechanism`` at ε.

    * k-RR: :math:`\gamma = k/(E+k-1)`, :math:`b_+ = \gamma(1-e^\varepsilon) + (1-\gamma)k`,
      :math:`b = (1-\gamma)k(e^\varepsilon+1)`,
      :math:`c = \gamma(2-\gamma)(e^\varepsilon-1)^2 + (1-\gamma)^2 k(e^{2\varepsilon}+1)`.
    * Laplace on [0, 1]: :math:`\gamma = e^{-\varepsilon_0/2}`,
      :math:`b_+ = e^{\varepsilon_0/2}(1-e^{\varepsilon-\varepsilon_0})`,
      :math:`b = (e^\varepsilon+1)(e^{\varepsilon_0/2}-e^{-\varepsilon_0/2})`,
      :math:`c = \frac{e^{2\varepsilon}+1}{3}(2e^{\varepsilon_0/2}+e^{-\varepsilon_0})
      - 2e^\varepsilon(2e^{-\varepsilon_0/2}-e^{-\varepsilon_0})`.
    * generic ε0-LDP: :math:`\gamma \in [e^{-\varepsilon_0}, 1]`,
      :math:`b_+ = \gamma_{ub}E(1-e^{\varepsilon-2\varepsilon_0})`,
      :math:`b = \gamma_{ub}(e^\varepsilon+1)(E-1/E)`,
      :math:`c = \gamma_{ub}(E(e^{2\varepsilon}+1) - 2\gamma_{lb}e^{\varepsilon-2\varepsilon_0})`.

    Parameters
    ----------
    mechanism : Mechanism
    epsilon : float
        Central ε in (0, eps0).
    constants : {"auto", "krr", "laplace", "generic"}
        ``"auto"``: specific constants for k-RR and Laplace, generic otherwise.
    """
    _validate.choice(constants, "constants", {"auto", "krr", "laplace", "generic"})
    name = getattr(mechanism, "name", "")
    if constants == "auto":
        constants = name if name in ("krr", "laplace") else "generic"
    if constants in ("krr", "laplace") and name != constants:
        raise ParameterError("constants", f"{constants!r} constants need a {constants} mechanism, got {name!r}")
    eps0 = mechanism.eps0
    E = _E(eps0)
    e = math.exp(epsilon)
    a = math.expm1(epsilon)
    if constants == "krr":
        k = mechanism.k
        g = k / (E + k - 1)
        bp = g * (1 - e) + (1 - g) * k
        b = (1 - g) * k * (e + 1)
        c = g * (2 - g) * a * a + (1 - g) ** 2 * k * (e * e + 1)
        return BlanketConstants(g, bp, b, c, a, "k-RR specific")
    if constants == "laplace":
        g = math.exp(-eps0 / 2)
        t = math.exp(eps0 / 2)
        bp = t * (-math.expm1(epsilon - eps0))
        b = (e + 1) * (t - 1 / t)
        c = (e * e + 1) / 3 * (2 * t + math.exp(-eps0)) - 2 * e * (2 / t - math.exp(-eps0))
        return BlanketConstants(g, bp, b, c, a, "Laplace specific")
    glb, gub = math.exp(-eps0), 1.0
    bp = gub * E * (-math.expm1(epsilon - 2 * eps0))
    b = gub * (e + 1) * (E - 1 / E)
    c = gub * (E * (e * e + 1) - 2 * glb * math.exp(epsilon - 2 * eps0))
    return BlanketConstants(glb, bp, b, c, a, "generic ε0-LDP")


def _blanket_check(method: str, eps0: float, epsilon: float) -> None:
    if not (0.0 < epsilon < eps0):
        raise OutOfRegimeError(f"{method}: valid only for 0 < ε < eps0 = {eps0:g}, got ε={epsilon:g}")


def hoeffding_delta(mechanism, n: int, epsilon: float, constants: str = "auto") -> float:
    r"""Privacy blanket + Hoeffding (Balle et al. 2019; baselines.md §3):

    .. math::

        \delta(\varepsilon) = \frac{1}{\gamma_{lb} n}\,\frac{b^2}{4a}\,
        \big(1 - \gamma_{lb}(1 - e^{-2a^2/b^2})\big)^n,\qquad a = e^\varepsilon - 1.

    (From :math:`E[(\sum_{i\le m} L_i)_+] \le \frac{b^2}{4a}e^{-2ma^2/b^2}` and the binomial MGF of
    :math:`M \sim \mathrm{Bin}(n, \gamma)`, seed000 digest Lemma 3.)  Clipped at 1.

    Raises
    ------
    OutOfRegimeError
        Unless 0 < ε < eps0.
    """
    n = _validate.count(n, "n")
    epsilon = _validate.epsilon(epsilon)
    _blanket_check("blanket-hoeffding", mechanism.eps0, epsilon)
    k = blanket_constants(mechanism, epsilon, constants)
    g, a, b = k.gamma_lb, k.a, k.b
    logd = (-math.log(g * n) + 2 * math.log(b) - math.log(4 * a)
            + n * math.log1p(g * math.expm1(-2 * a * a / (b * b))))
    return min(1.0, math.exp(_finite("blanket-hoeffding", "log delta", logd)))


def _phi(u: float) -> float:
    """(1+u) log(1+u) - u, accurate for small u."""
    if u < 1e-4:
        return u * u / 2 - u ** 3 / 6 + u ** 4 / 12
    return (1 + u) * math.log1p(u) - u


def bennett_delta(mechanism, n: int, epsilon: float, constants: str = "auto") -> float:
    r"""Privacy blanket + Bennett (Balle et al. 2019; baselines.md §3):

    .. math::

        \delta(\varepsilon) = \frac{1}{\gamma_{lb} n}\sum_{m\ge1}\mathrm{Bin}(m; n, \gamma_{lb})\,
        \frac{e^{-m\alpha\phi(\beta)}}{\eta\log(1+\beta)},\quad
        \alpha = c/b_+^2,\ \beta = a b_+/c,\ \eta = 1/b_+,\ \phi(u) = (1+u)\log(1+u) - u.

    The binomial expectation is evaluated **exactly**: it is a binomial generating function,
    :math:`\sum_{m\ge1}\mathrm{Bin}(m;n,\gamma)x^m = (1-\gamma+\gamma x)^n - (1-\gamma)^n` with
    :math:`x = e^{-\alpha\phi(\beta)}`, so no truncation (and no dropped mass) is needed; the tests
    check it against a direct windowed sum.  Clipped at 1.

    Raises
    ------
    OutOfRegimeError
        Unless 0 < ε < eps0.
    """
    n = _validate.count(n, "n")
    epsilon = _validate.epsilon(epsilon)
    _blanket_check("blanket-bennett", mechanism.eps0, epsilon)
    k = blanket_constants(mechanism, epsilon, constants)
    g, a, bp, c = k.gamma_lb, k.a, k.b_plus, k.c
    if not (bp > 0 and c > 0):
        raise OutOfRegimeError(f"blanket-bennett: constants out of range (b+={bp!r}, c={c!r})")
    alpha = c / (bp * bp)
    beta = a * bp / c
    s = alpha * _phi(beta)
    L1 = n * math.log1p(g * math.expm1(-s))                    # log (1 - γ(1 - x))^n
    L0 = n * math.log1p(-g) if g < 1.0 else -math.inf          # log (1 - γ)^n
    S = math.exp(L1) * -math.expm1(L0 - L1) if L1 > -math.inf else 0.0
    val = S * bp / (math.log1p(beta) * g * n)
    return min(1.0, _finite("blanket-bennett", "delta", val))


# ============================================================================ Erlingsson et al. 2019
def _efm_check(eps0: float, n: int, delta: float, epsilon: float) -> None:
    bad = []
    if eps0 > 0.5:
        bad.append(f"eps0={eps0:g} > 1/2")
    if n < 1000:
        bad.append(f"n={n} < 1000")
    if delta > 0.01:
        bad.append(f"δ={delta:.3g} > 0.01")
    if epsilon > eps0:
        bad.append(f"ε={epsilon:.6g} > eps0={eps0:g}")
    if bad:
        raise OutOfRegimeError("erlingsson: valid only for eps0 <= 1/2, n >= 1000, δ <= 0.01 and ε <= eps0; "
                               + ", ".join(bad))


def erlingsson_epsilon(eps0: float, n: int, delta: float) -> float:
    r""":math:`\varepsilon = 12\varepsilon_0\sqrt{\log(1/\delta)/n}` (EFMRTT'19; baselines.md §1).

    Raises
    ------
    OutOfRegimeError
        Outside eps0 <= 1/2, n >= 1000, δ <= 0.01, ε <= eps0 (the public code returns NaN there).
    """
    eps0 = _validate.eps0(eps0)
    n = _validate.count(n, "n")
    delta = _validate.delta(delta)
    eps = 12.0 * eps0 * math.sqrt(math.log(1.0 / delta) / n)
    _efm_check(eps0, n, delta, eps)
    return eps


def erlingsson_delta(eps0: float, n: int, epsilon: float) -> float:
    r""":math:`\delta(\varepsilon) = \exp(-n(\varepsilon/(12\varepsilon_0))^2)` (EFMRTT'19; baselines.md §1).

    Raises
    ------
    OutOfRegimeError
        Outside eps0 <= 1/2, n >= 1000, δ <= 0.01, ε <= eps0.
    """
    eps0 = _validate.eps0(eps0)
    n = _validate.count(n, "n")
    epsilon = _validate.epsilon(epsilon)
    d = math.exp(-n * (epsilon / (12.0 * eps0)) ** 2)
    _efm_check(eps0, n, d, epsilon)
    return d


# ============================================================================ variation ratio (WPL+24)
@dataclass(frozen=True)
class VRParams:
    r"""Variation-ratio parameters (seed004 digest §2): ``p > 1``, ``0 <= beta <= (p-1)/(p+1)``, ``q >= 1``.

    Attributes
    ----------
    p, beta, q : float
    source : str
        Which table row they come from.
    """

    p: float
    beta: float
    q: float
    source: str = ""

    def __post_init__(self):
        if not (self.p > 1 and math.isfinite(self.p)):
            raise ParameterError("p", f"must be finite and > 1, got {self.p!r}")
        if not (0.0 <= self.beta <= (self.p - 1) / (self.p + 1) * (1 + 1e-12)):
            raise ParameterError("beta", f"must be in [0, (p-1)/(p+1)], got {self.beta!r}")
        if not (self.q >= 1 and math.isfinite(self.q)):
            raise ParameterError("q", f"must be finite and >= 1, got {self.q!r}")

    @property
    def alpha(self) -> float:
        """α = β/(p − 1)."""
        return self.beta / (self.p - 1)

    @property
    def r(self) -> float:
        """r = αp/q (clone probability 2r)."""
        return self.alpha * self.p / self.q


def vr_params(mechanism) -> VRParams:
    r"""(p, β, q) of WPL+24 Table 2 for a catalogue mechanism (p = q = e^{ε0}; seed004 digest §7).

    * k-RR: GRR on k options, :math:`\beta = (E-1)/(E+k-1)`;
    * BLH: local hash with length l = 2, :math:`\beta = (E-1)/(E+1)` (the table value; the exact TV
      with the hash in the output is half of it, digest §7 "OLH collision remark");
    * RAPPOR: "binary RR on d options", :math:`\beta = (e^{\varepsilon_0/2}-1)/(e^{\varepsilon_0/2}+1)`;
    * OUE: :math:`\beta = (E-1)/(2(E+1))` (not in the paper; derived in the digest, §7);
    * HR (order d, output set of size d/2): Hadamard response (K = d, s = d/2, B = 1),
      :math:`\beta = \frac{s(E-1)/2}{sE+K-s} = (E-1)/(2(E+1))`;
    * Laplace: :math:`\beta = 1 - e^{-\varepsilon_0/2}`;
    * matrix: :math:`\beta` = the largest pairwise total variation of the rows (exact).
    """
    eps0 = mechanism.eps0
    E = _E(eps0)
    name = mechanism.name
    if name == "krr":
        return VRParams(E, math.expm1(eps0) / (E + mechanism.k - 1), E, f"Table 2 GRR, d={mechanism.k}")
    if name == "blh":
        return VRParams(E, math.tanh(eps0 / 2), E, "Table 2 local hash, l=2")
    if name == "rappor":
        return VRParams(E, math.tanh(eps0 / 4), E, "Table 2 binary RR (RAPPOR)")
    if name == "oue":
        return VRParams(E, math.tanh(eps0 / 2) / 2, E, "OUE (derived, seed004 digest §7)")
    if name == "hr":
        return VRParams(E, math.tanh(eps0 / 2) / 2, E, "Table 2 Hadamard response (K=d, s=d/2, B=1)")
    if name == "laplace":
        return VRParams(E, -math.expm1(-eps0 / 2), E, "Table 2 Laplace for [0,1]")
    if name == "matrix":
        P = mechanism.matrix()
        D, Y = P.shape
        if D * D * Y > 2 ** 28:
            raise ResourceLimitError(f"variation-ratio: pairwise total variation of a {D}x{Y} matrix "
                                     "exceeds the budget")
        tv = max(float(0.5 * np.abs(P[i] - P[i + 1:]).sum(axis=1).max()) for i in range(D - 1))
        return VRParams(E, min(tv, math.tanh(eps0 / 2)), E, "max pairwise TV of the matrix rows")
    return VRParams(E, math.tanh(eps0 / 2), E, "Table 2 general mechanisms")


def _vr_atoms(prm: VRParams, eps: float):
    r"""Three-atom GPARV of the VR pair (Theorem 12 with A₀ = (pα, α, lead), A₁ = (α, pα, lead),
    A₂ = (r, r, 1−2r); the third symbol is the implied count n − a − b)."""
    p, al, r = prm.p, prm.alpha, prm.r
    e = math.exp(eps)
    lead = max(0.0, 1.0 - al - p * al)
    v1 = (p * al - e * al) / r
    v2 = (al - e * p * al) / r
    v3 = lead * (1.0 - e) / (1.0 - 2.0 * r) if lead > 0 else 0.0
    return v1, r, v2, r, v3


def vr_delta(epsilon: float, n: int, prm: VRParams) -> tuple[float, float]:
    r""":math:`D_{e^\varepsilon}(P^q_{p,\beta}\|Q^q_{p,\beta})` of the variation-ratio pair (Theorem 4.7).

    The pair counts (a, b) = (#symbol 1, #symbol 2) of one victim sample plus n − 1 samples of
    (r, r, 1 − 2r); since a + b + #symbol 3 = n, it is a histogram pair of Theorem 12 (seed000 digest §3)
    with GPARV :math:`(p\alpha - e^\varepsilon\alpha)/r` and :math:`(\alpha - e^\varepsilon p\alpha)/r`
    w.p. r each and :math:`(1-\alpha-p\alpha)(1-e^\varepsilon)/(1-2r)` w.p. 1 − 2r.  Evaluated
    exactly by :func:`~shuffleamp._ext.kernels.exact_three_atom`; equals Theorem 4.8
    (:func:`vr_delta_thm48`; checked in the tests).  By the coordinate-swap symmetry
    D(Q‖P) = D(P‖Q) (seed004 digest §3 notes).

    Returns
    -------
    (lo, hi) : tuple of float
        Window sum and window sum plus dropped mass charged (see :func:`clone_delta`).
    """
    n = _validate.count(n, "n")
    if prm.beta <= 0.0 or epsilon >= math.log(prm.p):
        return 0.0, 0.0
    v1, p1, v2, p2, v3 = _vr_atoms(prm, epsilon)
    if v1 < v2:
        v1, p1, v2, p2 = v2, p2, v1, p1
    return _three_atom(v1, p1, v2, p2, v3, n)


def vr_delta_thm48(epsilon: float, n: int, prm: VRParams, window: float = 40.0) -> float:
    r"""Theorem 4.8 of WPL+24 as printed (typos fixed per seed004 digest §3, §5.4): reference implementation.

    .. math::

        \delta = E_{c\sim\mathrm{Bin}(n-1,2r)}\big[(p-e^\varepsilon)\alpha\,T(\lceil low_{c+1}-1\rceil, c)
        + (1-pe^\varepsilon)\alpha\,T(\lceil low_{c+1}\rceil, c)
        + (1-e^\varepsilon)(1-\alpha-p\alpha)\,T(\lceil low_c\rceil, c)\big],

    :math:`T(k, c) = P[\mathrm{Bin}(c, 1/2) \ge k]` (``betainc``),
    :math:`low_c = ((e^\varepsilon p-1)\alpha c + (e^\varepsilon-1)f_c)/(\alpha(e^\varepsilon+1)(p-1))`,
    :math:`f_c = (1-\alpha-\alpha p)(n-c)r/(1-2r)`.  The c-sum is truncated to ``window`` standard
    deviations (no charge; the O(√n) kernel :func:`vr_delta` is the production evaluator).
    """
    p, al, r = prm.p, prm.alpha, prm.r
    if prm.beta <= 0:
        return 0.0
    e = math.exp(epsilon)
    m = n - 1
    pc = 2 * r
    mu, sd = m * pc, math.sqrt(max(m * pc * (1 - pc), 0.0))
    c = np.arange(max(0, int(math.floor(mu - window * sd))), min(m, int(math.ceil(mu + window * sd))) + 1,
                  dtype=np.float64)
    wc = binom.pmf(c, m, pc)
    lead = max(0.0, 1 - al - al * p)

    def f(cc):
        return lead * (n - cc) * r / (1 - 2 * r) if lead > 0 else np.zeros_like(cc)

    def low(cc):
        return ((e * p - 1) * al * cc + (e - 1) * f(cc)) / (al * (e + 1) * (p - 1))

    def tail(k, cc):
        k = np.asarray(k, dtype=np.float64)
        kk = np.clip(k, 1.0, np.maximum(cc, 1.0))
        val = betainc(kk, np.maximum(cc - kk + 1, 1e-300), 0.5)
        return np.where(k <= 0, 1.0, np.where(k > cc, 0.0, val))

    term = ((p - e) * al * tail(np.ceil(low(c + 1) - 1), c)
            + (1 - p * e) * al * tail(np.ceil(low(c + 1)), c)
            + (1 - e) * lead * tail(np.ceil(low(c)), c))
    return max(0.0, math.fsum((wc * term).tolist()))


def vr_algorithm1(delta: float, n: int, prm: VRParams, T: int = 20,
                  delta_fn: Callable[[float], float] | None = None) -> float:
    r"""Algorithm 1 of WPL+24 as published: T bisection steps on [0, log p], returns ε_H.

    ``if Delta(ε_t) > δ: ε_L ← ε_t else ε_H ← ε_t`` (seed004 digest §5.2).  The result lies on the
    grid log p · k / 2^T.  ``delta_fn`` defaults to the exact pair divergence (:func:`vr_delta`, hi).
    Used to reproduce Table 5; the ``variation-ratio`` method itself uses a finer bracketing search.
    """
    fn = delta_fn or (lambda e: vr_delta(e, n, prm)[1])
    eL, eH = 0.0, math.log(prm.p)
    for _ in range(int(T)):
        et = 0.5 * (eL + eH)
        if fn(et) > delta:
            eL = et
        else:
            eH = et
    return eH


# ============================================================================ μ-GDP (CCG24)
def _gdp_q(eps_list, delta_list):
    eps = np.atleast_1d(_validate.real("eps_list", eps_list, lo=0.0))
    if eps.ndim != 1:
        raise ParameterError("eps_list", "must be a 1-D list of per-user ε_i")
    if delta_list is None:
        dl = np.zeros_like(eps)
    else:
        dl = np.atleast_1d(_validate.real("delta_list", delta_list, lo=0.0, hi=1.0, hi_open=True))
        if dl.shape != eps.shape:
            raise ParameterError("delta_list", f"must have the same length as eps_list ({eps.size}), got {dl.size}")
    if eps.size < 2:
        raise ParameterError("eps_list", "needs at least 2 users (μ uses Σ q_i − max q_i)")
    return (1.0 - dl) * np.exp(-np.logaddexp(0.0, eps))


def gdp_mu(eps_list, delta_list=None) -> float:
    r""":math:`\mu = \sqrt{2/(\sum_i q_i - \max_i q_i)}`, :math:`q_i = (1-\delta_i)/(1+e^{\varepsilon_i})`
    (seed002 digest §0, Theorem 2).  An asymptotic heuristic, not a certified bound.

    Parameters
    ----------
    eps_list : array_like of float
        Per-user local ε_i >= 0 (nats), at least 2 users.
    delta_list : array_like of float, optional
        Per-user local δ_i in [0, 1); default 0.

    Raises
    ------
    ParameterError
        Invalid lists.
    OutOfRegimeError
        If Σ q − max q = 0 (μ infinite).
    """
    q = _gdp_q(eps_list, delta_list)
    den = float(math.fsum(q.tolist()) - q.max())
    if not den > 0:
        raise OutOfRegimeError("gdp: Σ q_i − max q_i = 0 (μ is infinite)")
    return math.sqrt(2.0 / den)


def _gdp_mu_uniform(eps0: float, n: int, delta0: float = 0.0) -> float:
    q = (1.0 - delta0) * math.exp(-float(np.logaddexp(0.0, eps0)))
    if n < 2:
        raise OutOfRegimeError("gdp: needs n >= 2 (μ uses Σ q_i − max q_i)")
    return math.sqrt(2.0 / ((n - 1) * q))


def gdp_delta_mu(mu: float, epsilon: float) -> float:
    r"""δ(ε) of μ-GDP: :math:`\Phi(-\varepsilon/\mu+\mu/2) - e^\varepsilon\Phi(-\varepsilon/\mu-\mu/2)`
    (seed002 digest Fact 3), in log space for small values."""
    mu = _validate.real("mu", mu, lo=0.0, lo_open=True)
    epsilon = _validate.epsilon(epsilon)
    la = float(log_ndtr(-epsilon / mu + mu / 2))
    lb = epsilon + float(log_ndtr(-epsilon / mu - mu / 2))
    if lb >= la:
        return 0.0
    return max(0.0, math.exp(la) * -math.expm1(lb - la))


def gdp_epsilon_mu(mu: float, delta: float) -> float:
    """ε at which :func:`gdp_delta_mu` equals δ (right end of a bisection bracket, relative width 1e-12).

    Returns 0 if δ >= δ(0) = 2Φ(μ/2) − 1.
    """
    mu = _validate.real("mu", mu, lo=0.0, lo_open=True)
    delta = _validate.delta(delta)
    if gdp_delta_mu(mu, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, max(1.0, mu)
    while gdp_delta_mu(mu, hi) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            raise OutOfRegimeError("gdp: ε search diverged")
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if gdp_delta_mu(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def _gdp_result(quantity: str, mu: float, value: float, n: int, epsilon, delta, eps_arr, dl) -> Any:
    from .bounds import BoundResult

    info = METHOD_INFO["gdp"]
    desc = {"mechanism": "personalized-ldp", "eps0": float(np.max(eps_arr)), "users": int(eps_arr.size),
            "eps_min": float(np.min(eps_arr)), "eps_max": float(np.max(eps_arr)),
            "delta_max": float(np.max(dl)) if dl is not None else 0.0}
    settings = {"evaluator": "closed form (GDP)", "mu": mu, "regime": info.regime, "source": info.source}
    return BoundResult(quantity, None, None, "gdp", n, epsilon, delta, desc, settings, sound=False,
                       kind="estimate", estimate=value)


def gdp_delta(eps_list, delta_list, epsilon: float):
    r"""μ-GDP estimate of the shuffled δ at ε for personalized local budgets (ε_i, δ_i).

    Parameters
    ----------
    eps_list : array_like of float
        Per-user ε_i >= 0 (nats); n = len(eps_list) >= 2.
    delta_list : array_like of float or None
        Per-user δ_i in [0, 1), or None for 0.
    epsilon : float
        Central ε >= 0.

    Returns
    -------
    BoundResult
        ``kind="estimate"``, ``sound=False``; the value is in ``estimate`` (``upper`` is None);
        ``settings["mu"]`` is μ.

    Notes
    -----
    Seed002 digest §0 and §9: asymptotic (the proved statement has an unspecified C/sqrt(n−1) slack),
    the δ_i handling is known to be wrong, and the decomposition is the flawed stronger clone.
    Never a certified bound.
    """
    mu = gdp_mu(eps_list, delta_list)
    epsilon = _validate.epsilon(epsilon)
    eps_arr = np.atleast_1d(np.asarray(eps_list, dtype=np.float64))
    dl = None if delta_list is None else np.atleast_1d(np.asarray(delta_list, dtype=np.float64))
    return _gdp_result("delta", mu, gdp_delta_mu(mu, epsilon), int(eps_arr.size), epsilon, None, eps_arr, dl)


def gdp_epsilon(eps_list, delta_list, delta: float):
    """μ-GDP estimate of the shuffled ε at δ for personalized budgets; see :func:`gdp_delta`."""
    mu = gdp_mu(eps_list, delta_list)
    delta = _validate.delta(delta)
    eps_arr = np.atleast_1d(np.asarray(eps_list, dtype=np.float64))
    dl = None if delta_list is None else np.atleast_1d(np.asarray(delta_list, dtype=np.float64))
    return _gdp_result("epsilon", mu, gdp_epsilon_mu(mu, delta), int(eps_arr.size), None, delta, eps_arr, dl)


# ============================================================================ regime / applicability
def regime(method: str, mechanism=None) -> str:
    """Validity regime of ``method`` (mechanism-specific where it matters), as shown in results and the CLI."""
    info = method_info(method)
    name = getattr(mechanism, "name", None)
    if method in ("blanket-hoeffding", "blanket-bennett") and mechanism is not None:
        lab = {"krr": "k-RR specific", "laplace": "Laplace specific"}.get(name, "generic ε0-LDP")
        return f"0 < ε < eps0; {lab} constants (γ, b+, b, c of Balle et al. 2019)"
    if method == "variation-ratio" and mechanism is not None:
        try:
            src = vr_params(mechanism).source
        except ShuffleampError:
            src = "?"
        return info.regime + f"; (p, β, q) from {src}"
    if method == "gdp" and mechanism is not None:
        return info.regime + "; homogeneous budgets eps0 for all n users (mechanism type ignored)"
    return info.regime


def check_applicable(method: str, mechanism) -> None:
    """Raise :class:`OutOfRegimeError` if ``method`` is not defined for ``mechanism`` at all."""
    method_info(method)
    if method == "stronger-clone":
        stronger_clone_decomposition(mechanism)


# ============================================================================ API back ends
def _estimator_for(families, n):
    from .bounds import _estimator

    return _estimator(families, n)


def _point_delta(method: str, mech, n: int, eps: float, ctx: dict) -> tuple[float, dict]:
    """(value, info) of ``method`` at one (n, ε): certified-upper (or estimate) δ."""
    eps0 = mech.eps0
    if method == "clone":
        lo, hi = clone_delta(eps0, n, eps)
        return min(hi, 1.0), {"exact_window_sum": lo, "charged": hi - lo}
    if method == "clone-closed-form":
        d, info = clone_closed_form_delta(eps0, n, eps)
        return d, info
    if method == "stronger-clone":
        from .bounds import _delta_point

        dec = ctx["stronger"]
        val, info = _delta_point([dec, dec.swapped()], n, eps, "spread", ctx["rtol"], ctx["max_grid"],
                                 ctx["evaluator"])
        return min(val, 1.0), info
    if method == "blanket-hoeffding":
        return hoeffding_delta(mech, n, eps), {}
    if method == "blanket-bennett":
        return bennett_delta(mech, n, eps), {}
    if method == "erlingsson":
        return erlingsson_delta(eps0, n, eps), {}
    if method == "variation-ratio":
        lo, hi = vr_delta(eps, n, ctx["vr"])
        return min(hi, 1.0), {"exact_window_sum": lo, "charged": hi - lo}
    if method == "gdp":
        mu = _gdp_mu_uniform(eps0, n)
        return gdp_delta_mu(mu, eps), {"mu": mu}
    raise ParameterError("method", f"unknown method {method!r}")  # pragma: no cover


def _search(fn, target: float, eps_hi: float, rel_tol: float, estimate=None) -> tuple[float, Any, int]:
    """Conservative (right) end of the bracketing root search of :func:`shuffleamp.bounds._solve_eps`."""
    from .bounds import _solve_eps

    return _solve_eps(fn, target, eps_hi, "upper", rel_tol, estimate)


def _point_epsilon(method: str, mech, n: int, delta: float, ctx: dict) -> tuple[float, dict]:
    """(value, info) of ``method`` at one (n, δ)."""
    eps0 = mech.eps0
    xtol = ctx["eps_rtol"]
    if method == "clone-closed-form":
        return clone_closed_form_epsilon(eps0, n, delta), {"form": "code factor, log(4/δ) condition"}
    if method == "erlingsson":
        return erlingsson_epsilon(eps0, n, delta), {}
    if method == "gdp":
        mu = _gdp_mu_uniform(eps0, n)
        return gdp_epsilon_mu(mu, delta), {"mu": mu}
    if method == "clone":
        fam = _AtomFamily(lambda e: (np.array(_clone_atoms(eps0, e)[0] + [0.0]),
                                     np.array([1 / (2 * _E(eps0))] * 2 + [1 - 1 / _E(eps0)])))
        eps, info, cnt = _search(lambda e: _point_delta("clone", mech, n, e, ctx), delta, eps0, xtol,
                                 _estimator_for([fam], n))
    elif method == "variation-ratio":
        prm = ctx["vr"]

        def atoms(e):
            v1, p1, v2, p2, v3 = _vr_atoms(prm, e)
            return np.array([v1, v2, v3]), np.array([p1, p2, 1 - p1 - p2])

        eps, info, cnt = _search(lambda e: _point_delta("variation-ratio", mech, n, e, ctx), delta,
                                 math.log(prm.p), xtol, _estimator_for([_AtomFamily(atoms)], n))
    elif method == "stronger-clone":
        dec = ctx["stronger"]
        eps, info, cnt = _search(lambda e: _point_delta("stronger-clone", mech, n, e, ctx), delta, eps0, xtol,
                                 _estimator_for([dec, dec.swapped()], n))
    elif method in ("blanket-hoeffding", "blanket-bennett"):
        fn_d = hoeffding_delta if method == "blanket-hoeffding" else bennett_delta

        def fn(e):
            if e >= eps0:          # trivial: shuffling is post-processing of ε0-LDP reports
                return 0.0, {"trivial": "ε >= eps0"}
            if e <= 0.0:
                return 1.0, {}
            return fn_d(mech, n, e), {}

        eps, info, cnt = _search(fn, delta, eps0, xtol, lambda e: fn(e)[0])
        info = dict(info or {})
        if eps >= eps0:
            info["capped_at_eps0"] = True
    else:  # pragma: no cover
        raise ParameterError("method", f"unknown method {method!r}")
    info = dict(info or {})
    info["evaluations"] = cnt
    return eps, info


def _context(method: str, mech, rtol: float, max_grid: int, eps_rtol: float, evaluator: str) -> dict:
    ctx = {"rtol": rtol, "max_grid": max_grid, "eps_rtol": eps_rtol, "evaluator": evaluator}
    if method == "stronger-clone":
        ctx["stronger"] = stronger_clone_decomposition(mech)
    if method == "variation-ratio":
        ctx["vr"] = vr_params(mech)
    return ctx


def _settings(method: str, mech, ctx: dict, evals) -> dict:
    info = METHOD_INFO[method]
    s = {"regime": regime(method, mech), "source": info.source}
    ev = {"clone": "exact three-atom binomial sums (kernels.exact_three_atom), dropped mass charged",
          "clone-closed-form": "closed form",
          "stronger-clone": "certified FFT engine (spread rounding)",
          "blanket-hoeffding": "closed form", "blanket-bennett": "closed form (binomial generating function)",
          "erlingsson": "closed form", "variation-ratio": "exact three-atom binomial sums (= Theorem 4.8)",
          "gdp": "closed form (Gaussian trade-off)"}[method]
    s["evaluator"] = ev
    if method in ("blanket-hoeffding", "blanket-bennett"):
        s["constants"] = {"krr": "k-RR specific", "laplace": "Laplace specific"}.get(mech.name, "generic ε0-LDP")
    if method == "variation-ratio":
        prm = ctx["vr"]
        s["vr_params"] = {"p": prm.p, "beta": prm.beta, "q": prm.q, "source": prm.source}
    if method == "stronger-clone":
        s["rtol"] = ctx["rtol"]
    if method == "clone-closed-form":
        s["variant"] = ("public-code factor (1-e^-eps0)/(1+e^(-eps0-e1)) and log(4/δ) validity condition: "
                        "the more conservative of the published variants")
    s["points"] = evals
    return s


def _run(quantity: str, method: str, mechanism, n, other, *, rtol: float, max_grid: int,
         evaluator: str = "auto", eps_rtol: float = 1e-6):
    """Back end of :func:`shuffleamp.delta` / :func:`shuffleamp.epsilon` for every method except "optimal".

    Inputs are already validated by :mod:`shuffleamp.bounds`.  Raises :class:`OutOfRegimeError`
    (with a note naming the point for array inputs) if any point is outside the method's regime.
    """
    from .bounds import BoundResult, _broadcast

    info = METHOD_INFO[method]
    ctx = _context(method, mechanism, rtol, max_grid, eps_rtol, evaluator)
    scalar, nb, ob = _broadcast(n, other)
    vals = np.empty(nb.shape)
    evals = []
    point = _point_epsilon if quantity == "epsilon" else _point_delta
    for i in np.ndindex(nb.shape):
        ni, oi = int(nb[i]), float(ob[i])
        try:
            v, inf = point(method, mechanism, ni, oi, ctx)
        except OutOfRegimeError as exc:
            if not scalar:
                exc.add_note(f"at n={ni}, {'delta' if quantity == 'epsilon' else 'epsilon'}={oi:g}")
            raise
        _validate.finite_result(f"{method} {quantity}", float(v))
        vals[i] = v
        evals.append(inf)
    value = float(vals) if scalar else vals
    settings = _settings(method, mechanism, ctx, evals[0] if scalar else evals)
    eps_arg = None if quantity == "epsilon" else other
    delta_arg = other if quantity == "epsilon" else None
    if info.kind == "estimate":
        return BoundResult(quantity, None, None, method, n, eps_arg, delta_arg, mechanism.describe(), settings,
                           sound=info.sound, kind=info.kind, estimate=value)
    return BoundResult(quantity, value, None, method, n, eps_arg, delta_arg, mechanism.describe(), settings,
                       sound=info.sound, kind=info.kind)
