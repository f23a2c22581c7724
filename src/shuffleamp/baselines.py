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

Methods (references at the end of this docstring)
-------------------------------------------------

``clone``
    Feldman–McMillan–Talwar (FOCS 2021) numerical bound: the **exact** hockey-stick divergence of
    the standard-clone reduction pair, both directions, via its three-atom GPARV (derived here as a
    general-clone decomposition, [SCW]_ Definition 7): :math:`2E(E-e^\varepsilon)/(E+1)` and :math:`2E(1-Ee^\varepsilon)/(E+1)` w.p.
    :math:`1/(2E)` each, 0 otherwise.  Evaluated by :func:`shuffleamp._ext.binomial.exact_three_atom`
    (O(√n) closed-form binomial sums); the binomial mass outside the summation window is charged
    to δ at the largest possible value (the kernel's ``hi``).  Sound for every ε0-LDP randomizer.
``clone-closed-form``
    FMT'21 closed-form theorem [FMT21]_, in the more conservative of each published variant:
    the validity condition with :math:`\log(4/\delta)` (stricter than the paper's
    :math:`\log(2/\delta)`) and the public code's factor :math:`(1-e^{-\varepsilon_0})/(1+e^{-\varepsilon_0-e_1})`
    (larger than the theorem's :math:`(E-1)/(E+1)`).
``stronger-clone``
    Corrected Feldman–McMillan–Talwar [FMT23]_ four-point general-clone decomposition where its (p, q) are known: k-RR with :math:`p = 1/(E+k-1)`, :math:`q = (k-2)p`
    (the k-RR optimal decomposition, [SCW]_ Example 4.1).  Evaluated with the certified FFT engine.  Other mechanisms raise
    :class:`OutOfRegimeError`.
``blanket-hoeffding``, ``blanket-bennett``
    Balle–Bell–Gascón–Nissim (CRYPTO 2019) computable privacy-blanket bounds [BBGN19]_,
    with k-RR- and Laplace-specific constants, generic ε0-LDP constants otherwise.  Valid for
    :math:`0 < \varepsilon < \varepsilon_0`.
``erlingsson``
    Erlingsson et al. (SODA 2019): :math:`\varepsilon = 12\varepsilon_0\sqrt{\log(1/\delta)/n}`,
    valid only for :math:`\varepsilon_0 \le 1/2`, :math:`n \ge 1000`, :math:`\delta \le 0.01`,
    :math:`\varepsilon \le \varepsilon_0` [EFMRTT19]_.
``variation-ratio``
    Wang et al. (PVLDB 2024) Algorithm 1 with the (p, β, q) of their Table 2 [WANG24]_.  **Unsound** (``sound=False``): it rests on Lemma 4.5, whose proof is broken ([SCW]_), and is
    violated by 4-ary RR.  Comparison only.
``gdp``
    Chen–Cao–Ge (AAAI 2024) μ-GDP accountant [CCG24]_ (Theorem 2):
    :math:`\mu = \sqrt{2/(\sum_i q_i - \max_i q_i)}`, :math:`q_i = (1-\delta_i)/(1+e^{\varepsilon_i})`.
    An asymptotic **estimate** (``kind="estimate"``, ``sound=False``); personalized budgets via
    :func:`gdp_delta` / :func:`gdp_epsilon`.

Shuffle-index asymptotics (functions, not a ``method=``): :func:`shuffle_index_band` gives the
leading-order ε(δ) band of the Gaussian and k-RR randomizers from their upper (blanket) and lower
(single-input dataset) shuffle indices, after Takagi–Liew [TL26]_ (closed forms derived in
:func:`shuffle_index`).  An asymptotic **estimate** (``kind="estimate"``, ``sound=False``), for comparison
with the certified bracket.

ε(δ) of the numerical baselines uses the conservative end of a bracketing root search
(:func:`shuffleamp.search.solve_epsilon`): the returned ε is one at which the method's δ was
evaluated and found <= the target.  Closed forms are evaluated directly.

References
----------
.. [SCW] P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
   Shuffling", IEEE S&P 2026 (arXiv:2504.07414).
.. [FMT21] V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones", FOCS 2021.
.. [FMT23] V. Feldman, A. McMillan, K. Talwar, "Stronger Privacy Amplification by Shuffling for Rényi and
   Approximate Differential Privacy", SODA 2023.
.. [BBGN19] B. Balle, J. Bell, A. Gascón, K. Nissim, "The Privacy Blanket of the Shuffle Model", CRYPTO 2019.
.. [EFMRTT19] Ú. Erlingsson, V. Feldman, I. Mironov, A. Raghunathan, K. Talwar, A. Thakurta,
   "Amplification by Shuffling", SODA 2019.
.. [WANG24] Wang et al., "Privacy Amplification via Shuffling: Unified, Simplified, and Tightened",
   PVLDB 17(8), 2024.
.. [CCG24] E. Chen, Y. Cao, Y. Ge, "A Generalized Shuffle Framework for Privacy Amplification",
   AAAI 2024 (arXiv:2312.14388).
.. [TL26] S. Takagi, S. P. Liew, "Analysis of Shuffling Beyond Pure Local Differential Privacy",
   arXiv:2601.19154 (2026).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import betainc, erfcx, log_ndtr  # loaded with the kernels anyway

from . import _validate
from ._ext import binomial
from ._numerics import inverse_monotone
from ._registry import EXACT_COUNT_INFO, METHODS, OPTIMAL_INFO, Method, Settings
from .decomposition import Decomposition, clone_decomposition
from .evaluate import estimator, max_delta
from .gaussian import blanket_chi2
from .errors import OutOfRegimeError, ParameterError, ResourceLimitError, ShuffleampError
from .results import BoundResult, MethodInfo
from .search import solve_epsilon

__all__ = [
    "MethodInfo", "METHOD_INFO", "METHODS", "BASELINE_METHODS", "method_info", "regime", "check_applicable",
    "clone_delta", "clone_closed_form_epsilon", "clone_closed_form_delta", "clone_closed_form_min_delta",
    "stronger_clone_decomposition",
    "BlanketConstants", "blanket_constants", "hoeffding_delta", "bennett_delta",
    "erlingsson_epsilon", "erlingsson_delta",
    "VRParams", "vr_params", "vr_decomposition", "vr_delta", "vr_delta_thm48", "vr_algorithm1",
    "gdp_mu", "gdp_delta_mu", "gdp_epsilon_mu", "gdp_delta", "gdp_epsilon",
    "ShuffleIndex", "shuffle_index", "shuffle_index_delta", "shuffle_index_epsilon", "shuffle_index_band",
]

FMT21 = ("Feldman, McMillan, Talwar, Hiding Among the Clones: A Simple and Nearly Optimal Analysis of "
         "Privacy Amplification by Shuffling, FOCS 2021")
FMT23 = ("Feldman, McMillan, Talwar, Stronger Privacy Amplification by Shuffling for Rényi and Approximate "
         "Differential Privacy, SODA 2023")
BBGN19 = "Balle, Bell, Gascón, Nissim, The Privacy Blanket of the Shuffle Model, CRYPTO 2019"
EFMRTT19 = ("Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta, Amplification by Shuffling, "
            "SODA 2019")
WANG24 = ("Wang et al., Privacy Amplification via Shuffling: Unified, Simplified, and Tightened, "
          "PVLDB 17(8) 2024")
CCG24 = "Chen, Cao, Ge, A Generalized Shuffle Framework for Privacy Amplification, AAAI 2024 (arXiv:2312.14388)"
SCW = ("Su, Cheng, Wang, Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling, "
       "IEEE S&P 2026 (arXiv:2504.07414)")


# ============================================================================ helpers
def _E(eps0: float) -> float:
    return math.exp(eps0)


def _finite(method: str, name: str, value: float) -> float:
    if not math.isfinite(value):
        raise OutOfRegimeError(f"{method}: {name} is not finite ({value!r}) for these parameters "
                               "(numerically outside the formula's range)")
    return value


#: Window sums of :func:`~shuffleamp._ext.binomial.exact_three_atom` (about 1.5 µs a term, one term per
#: value of the outer binomial within 14 standard deviations, i.e. O(√n)) are used by the ``clone`` and
#: ``variation-ratio`` methods up to this many terms; beyond it (n ≳ 10^8) those methods evaluate the
#: same three-atom GPARV with the certified evaluator of the optimal method (O(1) in n).
THREE_ATOM_WINDOW_TERMS = 2 ** 17
#: :func:`clone_delta` / :func:`vr_delta` refuse (ResourceLimitError naming n) a window sum above this
#: many terms (about 6 s); the methods never reach it.
THREE_ATOM_MAX_TERMS = 2 ** 22


def _window_terms(dec: Decomposition, n: int, epsilon: float) -> int:
    """Number of terms of the exact_three_atom window sum of :func:`_three_atom` (``binomial.window_terms``)."""
    g = dec.gparv(epsilon)
    p = g.probs[g.probs > 0]
    pc = float(p[0] + p[1]) if p.size >= 2 else 0.0
    return int(binomial.window_terms(int(n), min(max(pc, 0.0), 1.0)))


def _three_atom(dec: Decomposition, epsilon: float, n: int) -> tuple[float, float]:
    """Exact (lo, hi) of (1/n) E[(G_1+...+G_n)_+] for the GPARV of a two-plus-one-atom decomposition.

    The decomposition's first two components (equal blanket mass) give the two leading atoms
    (larger first); the rest of the law (third component or residual) is the third atom.
    Raises :class:`~shuffleamp.errors.ResourceLimitError` (naming ``n``) when the O(√n) window sum
    would exceed :data:`THREE_ATOM_MAX_TERMS` terms.
    """
    terms = _window_terms(dec, n, epsilon)
    if terms > THREE_ATOM_MAX_TERMS:
        raise ResourceLimitError(f"the exact three-atom binomial sum at n = {n} needs {terms} terms "
                                 f"(> {THREE_ATOM_MAX_TERMS}); use a smaller n or the clone / variation-ratio "
                                 "methods, which switch to the certified evaluator at large n",
                                 parameter="n", resource="time")
    g = dec.gparv(epsilon)
    keep = g.probs > 0
    v, p = g.values[keep], g.probs[keep]
    (v1, p1), (v2, p2) = sorted(zip(v[:2].tolist(), p[:2].tolist()), key=lambda t: -t[0])
    v3 = float(v[2]) if v.size > 2 else 0.0
    lo, hi = binomial.exact_three_atom(float(v1), float(p1), float(v2), float(p2), v3, int(n))
    return float(lo), float(hi)


# ============================================================================ clone (FMT22, exact)
def clone_delta(eps0: float, n: int, epsilon: float) -> tuple[float, float]:
    r"""Exact δ of the FMT22 standard-clone pair at ε: ``(lo, hi)``, maximum over both directions.

    :math:`C \sim \mathrm{Bin}(n-1, 1/E)`, :math:`A \sim \mathrm{Bin}(C, 1/2)`,
    :math:`\Delta \sim \mathrm{Bern}(E/(E+1))`, :math:`P_0 = (A+\Delta, C-A+1-\Delta)`,
    :math:`P_1 = (A+1-\Delta, C-A+\Delta)` (Feldman, McMillan, Talwar, FOCS 2021), evaluated as
    :math:`\tfrac1n E[(\sum_{i\le n} G_i)_+]` of the equivalent three-atom GPARV of the standard clone's decomposition
    (Su, Cheng, Wang, IEEE S&P 2026, Theorem 12; checked in the tests against direct enumeration) with
    :func:`~shuffleamp._ext.binomial.exact_three_atom`.

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
    dec = clone_decomposition(eps0)
    best = (0.0, 0.0)
    for d in (dec, dec.swapped()):
        lo, hi = _three_atom(d, epsilon, n)
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
    r"""Closed-form ε of Feldman, McMillan, Talwar (FOCS 2021).

    With :math:`A_1 = 8\sqrt{E\log(4/\delta)/n}`, :math:`C_1 = 8E/n`, :math:`e_1 = \log(1+A_1+C_1)`:

    * ``form="code"`` (default; the public implementation, apple/ml-shuffling-amplification):
      :math:`\varepsilon = \log(1 + \frac{1-e^{-\varepsilon_0}}{1+e^{-\varepsilon_0-e_1}}(A_1+C_1))`;
    * ``form="paper"`` (the theorem): factor :math:`(E-1)/(E+1)`, never larger than the code's.

    The default is the more conservative (larger) of the two.

    Parameters
    ----------
    eps0 : float
        Local ε0 (nats), > 0.
    n : int
        Number of users, >= 1.
    delta : float
        Target δ in (0, 1).
    form : {"code", "paper"}
        Which published factor.
    check : bool
        Enforce the validity condition (default).  ``False`` is for reproducing published tables only.

    Returns
    -------
    float
        Central ε in nats (>= 0).

    Raises
    ------
    ParameterError
        Naming ``eps0``, ``n``, ``delta`` or ``form`` for invalid input.
    OutOfRegimeError
        If ``eps0 > log(n / (16 log(4/δ)))``.  The paper states ``log(2/δ)``, the public code
        ``log(4/δ)`` (apple/ml-shuffling-amplification); the stricter ``log(4/δ)`` is enforced.

    References
    ----------
    V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal
    Analysis of Privacy Amplification by Shuffling", FOCS 2021 (arXiv:2012.12803), Theorem 3.1.
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
    r"""Smallest δ at which the (log(4/δ)) validity condition of the FMT'21 closed form holds.

    :math:`\delta_{\min} = 4\exp(-n/(16 e^{\varepsilon_0}))`, i.e. the δ solving
    :math:`\varepsilon_0 = \log(n / (16\log(4/\delta)))`.

    Parameters
    ----------
    eps0 : float
        Local ε0 (nats), > 0 (not validated here; callers validate).
    n : int
        Number of users, >= 1.

    Returns
    -------
    float
        δ_min in (0, 4]; values >= 1 mean the condition fails for every δ < 1.

    References
    ----------
    V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones", FOCS 2021, Theorem 3.1.
    """
    return 4.0 * math.exp(-n / (16.0 * _E(eps0)))


def clone_closed_form_delta(eps0: float, n: int, epsilon: float) -> tuple[float, dict]:
    """δ at which the FMT'21 closed form certifies ε: a conservative inversion of
    :func:`clone_closed_form_epsilon` (``form="code"``).

    The closed form ε(δ) is decreasing in δ; a bisection on log δ returns a δ at which ε(δ) <= ε was
    evaluated (the right end of the final bracket, relative width 1e-10).

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
    (delta, info) : (float, dict)
        δ in (0, 1) and a dict saying how it was found (``"inversion"`` or ``"limited_by"``).

    Raises
    ------
    ParameterError
        Naming ``eps0``, ``n`` or ``epsilon`` for invalid input.
    OutOfRegimeError
        If no δ < 1 gives ε(δ) <= ε, or the validity condition fails for every δ < 1.

    References
    ----------
    V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones", FOCS 2021, Theorem 3.1.
    """
    eps0 = _validate.eps0(eps0)
    n = _validate.count(n, "n")
    epsilon = _validate.epsilon(epsilon)
    d_min = clone_closed_form_min_delta(eps0, n)
    d_max = 1.0 - 1e-12
    if d_min >= d_max:
        raise OutOfRegimeError(f"clone-closed-form: eps0={eps0:g} > log(n / (16 log(4/δ))) for every δ < 1 (n={n})")

    def g(t):  # t = log δ
        return clone_closed_form_epsilon(eps0, n, math.exp(t), check=False), None

    lo_t, hi_t = math.log(max(d_min, 1e-300)), math.log(d_max)
    if g(hi_t)[0] > epsilon:
        raise OutOfRegimeError(f"clone-closed-form: ε={epsilon:g} is below the closed form's ε for every δ < 1 "
                               f"(eps0={eps0:g}, n={n})")
    if d_min > 0 and g(lo_t)[0] <= epsilon:
        return d_min, {"limited_by": "validity condition (δ >= 4 exp(-n / (16 e^eps0)))"}
    br = inverse_monotone(g, epsilon, lo_t, hi_t, rel_tol=0.0, abs_tol=1e-10 * max(1.0, abs(hi_t)))
    return math.exp(br.feasible), {"inversion": "bisection on log δ, right end"}


# ============================================================================ stronger clone (FMT23b)
def stronger_clone_decomposition(mechanism) -> Decomposition:
    r"""Corrected four-point general-clone decomposition of Feldman, McMillan, Talwar (SODA 2023).

    Known only for k-RR, where it is the optimal (blanket) decomposition of Su, Cheng, Wang
    (IEEE S&P 2026, Example 4.1): :math:`p = 1/(E+k-1)`, :math:`q = (k-2)p`,
    a = (Ep, p, q), b = (p, Ep, q), c = (p, p, q).  Provided by the mechanism
    (``mechanism.stronger_clone_decomposition()``).

    Parameters
    ----------
    mechanism : Mechanism

    Returns
    -------
    Decomposition

    Raises
    ------
    OutOfRegimeError
        For any mechanism other than k-RR (its (p, q) are not known; the paper gives no efficient rule).
    """
    dec = mechanism.stronger_clone_decomposition()
    if dec is None:
        raise OutOfRegimeError(
            f"stronger-clone: the corrected FMT23b four-point decomposition's (p, q) are only known for k-RR; "
            f"not available for mechanism {getattr(mechanism, 'name', type(mechanism).__name__)!r}")
    return dec


# ============================================================================ privacy blanket (BBGN19)
@dataclass(frozen=True)
class BlanketConstants:
    r"""Mechanism constants of the privacy-blanket bounds at one ε (Balle, Bell, Gascón, Nissim, CRYPTO 2019).

    Attributes
    ----------
    gamma_lb : float
        Lower bound on the blanket mass γ.
    b_plus : float
        :math:`b_+ = \max L`.
    b : float
        Range :math:`\max L - \min L`.
    c : float
        :math:`c = E[L^2]` (called the variance in the paper's notation; every formula equals the second
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
    r"""Constants (γ_lb, b₊, b, c) of Balle, Bell, Gascón, Nissim (CRYPTO 2019) for ``mechanism`` at ε.

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
        The local randomizer (its ``eps0``; ``k`` and ``gamma`` for k-RR, ``gamma`` for Laplace).
    epsilon : float
        Central ε in (0, eps0), nats (not validated here; the callers check the regime).
    constants : {"auto", "krr", "laplace", "generic"}
        ``"auto"``: specific constants for k-RR and Laplace, generic otherwise.

    Returns
    -------
    BlanketConstants

    Raises
    ------
    ParameterError
        Naming ``constants`` if it is not one of the choices, or asks for k-RR / Laplace
        constants of another mechanism.

    References
    ----------
    B. Balle, J. Bell, A. Gascón, K. Nissim, "The Privacy Blanket of the Shuffle Model",
    CRYPTO 2019, Section 3 (blanket decomposition and the constants of Theorem 3.1).
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
        g = mechanism.gamma
        bp = g * (1 - e) + (1 - g) * k
        b = (1 - g) * k * (e + 1)
        c = g * (2 - g) * a * a + (1 - g) ** 2 * k * (e * e + 1)
        return BlanketConstants(g, bp, b, c, a, "k-RR specific")
    if constants == "laplace":
        g = mechanism.gamma
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
    r"""Privacy blanket + Hoeffding (Balle, Bell, Gascón, Nissim, CRYPTO 2019, Theorem 3.1):

    .. math::

        \delta(\varepsilon) = \frac{1}{\gamma_{lb} n}\,\frac{b^2}{4a}\,
        \big(1 - \gamma_{lb}(1 - e^{-2a^2/b^2})\big)^n,\qquad a = e^\varepsilon - 1.

    (From :math:`E[(\sum_{i\le m} L_i)_+] \le \frac{b^2}{4a}e^{-2ma^2/b^2}` and the binomial MGF of
    :math:`M \sim \mathrm{Bin}(n, \gamma)`, Su, Cheng, Wang, IEEE S&P 2026.)  Clipped at 1.

    Parameters
    ----------
    mechanism : Mechanism
        The ε0-LDP local randomizer.
    n : int
        Number of users, >= 1.
    epsilon : float
        Central ε (nats), in (0, eps0).
    constants : {"auto", "krr", "laplace", "generic"}
        Which constants; see :func:`blanket_constants`.

    Returns
    -------
    float
        δ in [0, 1] (an upper bound).

    Raises
    ------
    ParameterError
        Naming ``n``, ``epsilon`` or ``constants`` for invalid input.
    OutOfRegimeError
        Unless 0 < ε < eps0.

    References
    ----------
    B. Balle, J. Bell, A. Gascón, K. Nissim, "The Privacy Blanket of the Shuffle Model", CRYPTO 2019,
    Theorem 3.1.
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
    r"""Privacy blanket + Bennett (Balle, Bell, Gascón, Nissim, CRYPTO 2019, Theorem 3.1):

    .. math::

        \delta(\varepsilon) = \frac{1}{\gamma_{lb} n}\sum_{m\ge1}\mathrm{Bin}(m; n, \gamma_{lb})\,
        \frac{e^{-m\alpha\phi(\beta)}}{\eta\log(1+\beta)},\quad
        \alpha = c/b_+^2,\ \beta = a b_+/c,\ \eta = 1/b_+,\ \phi(u) = (1+u)\log(1+u) - u.

    The binomial expectation is evaluated **exactly**: it is a binomial generating function,
    :math:`\sum_{m\ge1}\mathrm{Bin}(m;n,\gamma)x^m = (1-\gamma+\gamma x)^n - (1-\gamma)^n` with
    :math:`x = e^{-\alpha\phi(\beta)}`, so no truncation (and no dropped mass) is needed; the tests
    check it against a direct windowed sum.  Clipped at 1.

    Parameters
    ----------
    mechanism : Mechanism
        The ε0-LDP local randomizer.
    n : int
        Number of users, >= 1.
    epsilon : float
        Central ε (nats), in (0, eps0).
    constants : {"auto", "krr", "laplace", "generic"}
        Which constants; see :func:`blanket_constants`.

    Returns
    -------
    float
        δ in [0, 1] (an upper bound).

    Raises
    ------
    ParameterError
        Naming ``n``, ``epsilon`` or ``constants`` for invalid input.
    OutOfRegimeError
        Unless 0 < ε < eps0, or if the constants give b₊ <= 0 or c <= 0.

    References
    ----------
    B. Balle, J. Bell, A. Gascón, K. Nissim, "The Privacy Blanket of the Shuffle Model", CRYPTO 2019,
    Theorem 3.1.
    """
    n = _validate.count(n, "n")
    epsilon = _validate.epsilon(epsilon)
    _blanket_check("blanket-bennett", mechanism.eps0, epsilon)
    k = blanket_constants(mechanism, epsilon, constants)
    g, a, bp, c = k.gamma_lb, k.a, k.b_plus, k.c
    if not (bp > 0 and c > 0):
        raise OutOfRegimeError(f"blanket-bennett: constants out of range (b+={float(bp):.6g}, c={float(c):.6g})")
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
    r""":math:`\varepsilon = 12\varepsilon_0\sqrt{\log(1/\delta)/n}` (Erlingsson et al., SODA 2019).

    Parameters
    ----------
    eps0 : float
        Local ε0 (nats), in (0, 1/2].
    n : int
        Number of users, >= 1000.
    delta : float
        Target δ in (0, 0.01].

    Returns
    -------
    float
        Central ε in nats.

    Raises
    ------
    ParameterError
        Naming ``eps0``, ``n`` or ``delta`` for invalid input.
    OutOfRegimeError
        Outside eps0 <= 1/2, n >= 1000, δ <= 0.01, ε <= eps0 (the public code returns NaN there).

    References
    ----------
    Ú. Erlingsson, V. Feldman, I. Mironov, A. Raghunathan, K. Talwar, A. Thakurta,
    "Amplification by Shuffling: From Local to Central Differential Privacy via Anonymity",
    SODA 2019 (arXiv:1811.12469), the amplification-by-shuffling theorem.
    """
    eps0 = _validate.eps0(eps0)
    n = _validate.count(n, "n")
    delta = _validate.delta(delta)
    eps = 12.0 * eps0 * math.sqrt(math.log(1.0 / delta) / n)
    _efm_check(eps0, n, delta, eps)
    return eps


def erlingsson_delta(eps0: float, n: int, epsilon: float) -> float:
    r""":math:`\delta(\varepsilon) = \exp(-n(\varepsilon/(12\varepsilon_0))^2)` (Erlingsson et al., SODA 2019).

    The inverse of :func:`erlingsson_epsilon` in δ.

    Parameters
    ----------
    eps0 : float
        Local ε0 (nats), in (0, 1/2].
    n : int
        Number of users, >= 1000.
    epsilon : float
        Central ε (nats), in [0, eps0].

    Returns
    -------
    float
        δ in (0, 0.01].

    Raises
    ------
    ParameterError
        Naming ``eps0``, ``n`` or ``epsilon`` for invalid input.
    OutOfRegimeError
        Outside eps0 <= 1/2, n >= 1000, δ <= 0.01, ε <= eps0.

    References
    ----------
    Ú. Erlingsson et al., "Amplification by Shuffling", SODA 2019 (arXiv:1811.12469).
    """
    eps0 = _validate.eps0(eps0)
    n = _validate.count(n, "n")
    epsilon = _validate.epsilon(epsilon)
    _efm_check(eps0, n, 0.0, epsilon)      # the regime first: (ε/12ε0)^2 overflows at huge ε
    d = math.exp(-n * (epsilon / (12.0 * eps0)) ** 2)
    _efm_check(eps0, n, d, epsilon)
    return d


# ============================================================================ variation ratio (WPL+24)
@dataclass(frozen=True)
class VRParams:
    r"""Variation-ratio parameters (Wang et al., PVLDB 2024, Definition 4.1): ``p > 1``, ``0 <= beta <= (p-1)/(p+1)``, ``q >= 1``.

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
    r"""(p, β, q) of Wang et al. (PVLDB 2024) Table 2 for a mechanism: p = q = e^{ε0}, β from the mechanism.

    β is ``mechanism.variation_ratio_beta()``: k-RR :math:`(E-1)/(E+k-1)`; BLH (local hash, l = 2)
    :math:`(E-1)/(E+1)`; RAPPOR :math:`(e^{\varepsilon_0/2}-1)/(e^{\varepsilon_0/2}+1)`; OUE and HR
    :math:`(E-1)/(2(E+1))`; Laplace :math:`1 - e^{-\varepsilon_0/2}`; matrix: the largest pairwise
    total variation of the rows.

    Parameters
    ----------
    mechanism : Mechanism

    Returns
    -------
    VRParams
    """
    E = _E(mechanism.eps0)
    beta, source = mechanism.variation_ratio_beta()
    return VRParams(E, beta, E, source)


def vr_decomposition(prm: VRParams) -> Decomposition:
    r"""The variation-ratio pair as a general-clone decomposition (derived here).

    One victim sample with :math:`A_0 = (p\alpha, \alpha, 1-\alpha-p\alpha)` or
    :math:`A_1 = (\alpha, p\alpha, 1-\alpha-p\alpha)` and n − 1 samples of :math:`(r, r, 1-2r)`
    (Wang et al., PVLDB 2024, Theorem 4.7) form a histogram pair of Su, Cheng, Wang (IEEE S&P 2026,
    Theorem 12): a = A₀, b = A₁, c = (r, r, 1 − 2r), β = 0.

    Parameters
    ----------
    prm : VRParams

    Returns
    -------
    Decomposition
    """
    p, al, r = prm.p, prm.alpha, prm.r
    lead = max(0.0, 1.0 - al - p * al)
    return Decomposition([p * al, al, lead], [al, p * al, lead], [r, r, 1.0 - 2.0 * r], 0.0,
                         label="variation-ratio pair")


def vr_delta(epsilon: float, n: int, prm: VRParams) -> tuple[float, float]:
    r""":math:`D_{e^\varepsilon}(P^q_{p,\beta}\|Q^q_{p,\beta})` of the variation-ratio pair (Theorem 4.7).

    The pair counts (a, b) = (#symbol 1, #symbol 2) of one victim sample plus n − 1 samples of
    (r, r, 1 − 2r); since a + b + #symbol 3 = n, it is a histogram pair of Theorem 12 of Su, Cheng, Wang (IEEE S&P 2026)
    with GPARV :math:`(p\alpha - e^\varepsilon\alpha)/r` and :math:`(\alpha - e^\varepsilon p\alpha)/r`
    w.p. r each and :math:`(1-\alpha-p\alpha)(1-e^\varepsilon)/(1-2r)` w.p. 1 − 2r.  Evaluated
    exactly by :func:`~shuffleamp._ext.binomial.exact_three_atom`; equals Theorem 4.8
    (:func:`vr_delta_thm48`; checked in the tests).  By the coordinate-swap symmetry
    D(Q‖P) = D(P‖Q) (derived here: swapping the first two symbols exchanges P and Q).

    Parameters
    ----------
    epsilon : float
        Central ε (nats), >= 0 (not validated here); 0 is returned for ε >= log p.
    n : int
        Number of users, >= 1.
    prm : VRParams
        Variation-ratio parameters (p, β, q).

    Returns
    -------
    (lo, hi) : tuple of float
        Window sum and window sum plus dropped mass charged (see :func:`clone_delta`).

    Raises
    ------
    ParameterError
        Naming ``n`` if it is not an integer >= 1.

    References
    ----------
    S. Wang, Y. Peng, J. Li, Z. Wen, et al., "Privacy Amplification via Shuffling: Unified, Simplified,
    and Tightened", PVLDB 17(8) 2024, Theorem 4.7; P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal
    Bounds for Privacy Amplification via Shuffling", IEEE S&P 2026, Theorem 12.
    """
    n = _validate.count(n, "n")
    if prm.beta <= 0.0 or epsilon >= math.log(prm.p):
        return 0.0, 0.0
    return _three_atom(vr_decomposition(prm), epsilon, n)


def vr_delta_thm48(epsilon: float, n: int, prm: VRParams, window: float = 40.0) -> float:
    r"""Theorem 4.8 of Wang et al. (PVLDB 2024) as printed (with its typographical errors corrected: derived here): reference implementation.

    .. math::

        \delta = E_{c\sim\mathrm{Bin}(n-1,2r)}\big[(p-e^\varepsilon)\alpha\,T(\lceil low_{c+1}-1\rceil, c)
        + (1-pe^\varepsilon)\alpha\,T(\lceil low_{c+1}\rceil, c)
        + (1-e^\varepsilon)(1-\alpha-p\alpha)\,T(\lceil low_c\rceil, c)\big],

    :math:`T(k, c) = P[\mathrm{Bin}(c, 1/2) \ge k]` (``betainc``),
    :math:`low_c = ((e^\varepsilon p-1)\alpha c + (e^\varepsilon-1)f_c)/(\alpha(e^\varepsilon+1)(p-1))`,
    :math:`f_c = (1-\alpha-\alpha p)(n-c)r/(1-2r)`.  The c-sum is truncated to ``window`` standard
    deviations (no charge; the O(√n) kernel :func:`vr_delta` is the production evaluator).

    Parameters
    ----------
    epsilon : float
        Central ε (nats), >= 0 (not validated).
    n : int
        Number of users, >= 1 (not validated).
    prm : VRParams
        Variation-ratio parameters (p, β, q).
    window : float, default 40.0
        Half-width of the c-sum in standard deviations of Bin(n − 1, 2r).

    Returns
    -------
    float
        δ >= 0 (not certified: the truncated tail is not charged).

    References
    ----------
    S. Wang et al., "Privacy Amplification via Shuffling: Unified, Simplified, and Tightened",
    PVLDB 17(8) 2024, Theorem 4.8.
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
    from scipy.stats import binom

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
    """Algorithm 1 of Wang et al. (PVLDB 2024) as published: T bisection steps on [0, log p], returns ε_H.

    ``if Delta(ε_t) > δ: ε_L ← ε_t else ε_H ← ε_t`` (Wang et al., PVLDB 2024, Algorithm 1).  The result lies on the
    grid log p · k / 2^T.  ``delta_fn`` defaults to the exact pair divergence (:func:`vr_delta`, hi).
    Used to reproduce Table 5; the ``variation-ratio`` method itself uses a finer bracketing search.

    Parameters
    ----------
    delta : float
        Target δ in (0, 1) (not validated).
    n : int
        Number of users, >= 1.
    prm : VRParams
        Variation-ratio parameters (p, β, q).
    T : int, default 20
        Number of bisection steps.
    delta_fn : callable, optional
        ``delta_fn(epsilon) -> float``, a δ(ε) decreasing in ε; default the ``hi`` of :func:`vr_delta`.

    Returns
    -------
    float
        ε_H in nats, in [0, log p].

    References
    ----------
    S. Wang et al., "Privacy Amplification via Shuffling: Unified, Simplified, and Tightened",
    PVLDB 17(8) 2024, Algorithm 1.
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
def gdp_q(eps_list, delta_list):
    """Per-user clone probabilities q_i = (1 − δ_i)/(1 + e^{ε_i}) of the μ-GDP estimate.

    Parameters
    ----------
    eps_list : array_like of float, shape (N,)
        Per-user ε_i (nats, >= 0); at least 2 users.
    delta_list : array_like of float, shape (N,), optional
        Per-user δ_i in [0, 1); None means all 0.

    Returns
    -------
    ndarray of float64, shape (N,)

    Raises
    ------
    ParameterError
        ``eps_list`` / ``delta_list`` malformed.

    References
    ----------
    Chen, Cao, Ge, "A Generalized Shuffle Framework for Privacy Amplification", AAAI 2024
    (arXiv:2312.14388), Theorem 2.
    """
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
    (Chen, Cao, Ge, AAAI 2024, Theorem 2).  An asymptotic heuristic, not a certified bound.

    Parameters
    ----------
    eps_list : array_like of float
        Per-user local ε_i >= 0 (nats), at least 2 users.
    delta_list : array_like of float, optional
        Per-user local δ_i in [0, 1); default 0.

    Returns
    -------
    float
        μ > 0.

    Raises
    ------
    ParameterError
        Naming ``eps_list`` or ``delta_list`` for invalid lists.
    OutOfRegimeError
        If Σ q − max q = 0 (μ infinite).

    References
    ----------
    E. Chen, Y. Cao, Y. Ge, "A Generalized Shuffle Framework for Privacy Amplification: Strengthening
    Privacy Guarantees and Enhancing Utility", AAAI 2024 (arXiv:2312.14388), Theorem 2.
    """
    q = gdp_q(eps_list, delta_list)
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
    r"""δ(ε) of μ-GDP: :math:`\Phi(-\varepsilon/\mu+\mu/2) - e^\varepsilon\Phi(-\varepsilon/\mu-\mu/2)`,
    in log space for small values.

    Parameters
    ----------
    mu : float
        GDP parameter μ > 0.
    epsilon : float
        Central ε (nats), >= 0.

    Returns
    -------
    float
        δ in [0, 1).

    Raises
    ------
    ParameterError
        Naming ``mu`` or ``epsilon`` for invalid input.

    References
    ----------
    J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS-B 2022, Corollary 2.13.
    """
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

    Parameters
    ----------
    mu : float
        GDP parameter μ > 0.
    delta : float
        Target δ in (0, 1).

    Returns
    -------
    float
        ε in nats, >= 0.

    Raises
    ------
    ParameterError
        Naming ``mu`` or ``delta`` for invalid input.
    OutOfRegimeError
        If the ε search diverges (ε > 1e6).

    References
    ----------
    J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS-B 2022, Corollary 2.13.
    """
    mu = _validate.real("mu", mu, lo=0.0, lo_open=True)
    delta = _validate.delta(delta)
    if gdp_delta_mu(mu, 0.0) <= delta:
        return 0.0
    br = inverse_monotone(lambda e: (gdp_delta_mu(mu, e), None), delta, 0.0, max(1.0, mu), rel_tol=1e-12,
                          abs_tol=1e-12 * max(1.0, mu), expand=True, limit=2e6)
    if br.feasible is None or br.feasible > 1e6:
        raise OutOfRegimeError("gdp: ε search diverged")
    return br.feasible


def _gdp_result(quantity: str, mu: float, value: float, n: int, epsilon, delta, eps_arr, dl) -> BoundResult:
    info = GDP_INFO
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
    Chen, Cao, Ge (AAAI 2024): asymptotic (the proved statement has an unspecified C/sqrt(n−1) slack),
    the δ_i handling is known to be wrong, and the decomposition is the flawed stronger clone.
    Never a certified bound.
    """
    mu = gdp_mu(eps_list, delta_list)
    epsilon = _validate.epsilon(epsilon)
    eps_arr = np.atleast_1d(np.asarray(eps_list, dtype=np.float64))
    dl = None if delta_list is None else np.atleast_1d(np.asarray(delta_list, dtype=np.float64))
    return _gdp_result("delta", mu, gdp_delta_mu(mu, epsilon), int(eps_arr.size), epsilon, None, eps_arr, dl)


def gdp_epsilon(eps_list, delta_list, delta: float):
    """μ-GDP estimate of the shuffled ε at δ for personalized budgets; see :func:`gdp_delta`.

    Parameters
    ----------
    eps_list : array_like of float
        Per-user ε_i >= 0 (nats); n = len(eps_list) >= 2.
    delta_list : array_like of float or None
        Per-user δ_i in [0, 1), or None for 0.
    delta : float
        Target central δ in (0, 1).

    Returns
    -------
    BoundResult
        ``kind="estimate"``, ``sound=False``; the ε is in ``estimate`` (``upper`` is None);
        ``settings["mu"]`` is μ.

    Raises
    ------
    ParameterError
        Naming ``eps_list``, ``delta_list`` or ``delta`` for invalid input.
    OutOfRegimeError
        If μ is infinite or the ε search diverges.

    References
    ----------
    E. Chen, Y. Cao, Y. Ge, "A Generalized Shuffle Framework for Privacy Amplification", AAAI 2024
    (arXiv:2312.14388), Theorem 2; J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy",
    JRSS-B 2022, Corollary 2.13.
    """
    mu = gdp_mu(eps_list, delta_list)
    delta = _validate.delta(delta)
    eps_arr = np.atleast_1d(np.asarray(eps_list, dtype=np.float64))
    dl = None if delta_list is None else np.atleast_1d(np.asarray(delta_list, dtype=np.float64))
    return _gdp_result("epsilon", mu, gdp_epsilon_mu(mu, delta), int(eps_arr.size), None, delta, eps_arr, dl)


# ============================================================================ registry entries
_BLANKET_LABEL = {"krr": "k-RR specific", "laplace": "Laplace specific"}


def _blanket_label(mechanism) -> str:
    return _BLANKET_LABEL.get(getattr(mechanism, "name", None), "generic ε0-LDP")


def _exact_sum_info(lo: float, hi: float) -> dict:
    return {"exact_window_sum": lo, "charged": hi - lo, "delta_error": hi - lo}


def _search_info(ctx: Settings, fn, target: float, eps_hi: float, estimate) -> tuple[float, None, dict]:
    """Conservative ε of a decreasing certified δ (the ε search, :func:`shuffleamp.search.solve_epsilon`)."""
    eps, info, cnt = solve_epsilon(fn, target, eps_hi, "upper", ctx.eps_rtol, estimate)
    info = dict(info or {})
    info["evaluations"] = cnt
    return eps, None, info


def _large_n_delta(dec: Decomposition, n: int, eps: float, ctx: Settings):
    """Certified upper δ of the three-atom GPARV of ``dec`` (both orientations) by the optimal method's
    evaluator (:func:`shuffleamp.evaluate.max_delta`): the same quantity as the window sum, O(1) in n."""
    val, info = max_delta([dec, dec.swapped()], n, eps, "spread", ctx.rtol, ctx.max_grid, ctx.evaluator)
    info = dict(info or {})
    info["large_n"] = (f"window sum would need {_window_terms(dec, n, eps)} > {THREE_ATOM_WINDOW_TERMS} terms: "
                       "the same GPARV by the certified evaluator")
    return min(val, 1.0), None, info


# ---- clone
def _clone_delta(mech, n, eps, ctx):
    dec = clone_decomposition(mech.eps0)
    if _window_terms(dec, n, eps) > THREE_ATOM_WINDOW_TERMS:
        return _large_n_delta(dec, n, eps, ctx)
    lo, hi = clone_delta(mech.eps0, n, eps)
    return min(hi, 1.0), None, _exact_sum_info(lo, hi)


def _clone_epsilon(mech, n, delta, ctx):
    return _search_info(ctx, lambda e: _clone_delta(mech, n, e, ctx)[::2], delta, mech.eps0,
                        estimator([clone_decomposition(mech.eps0)], n))


# ---- clone closed form
def _ccf_delta(mech, n, eps, ctx):
    d, info = clone_closed_form_delta(mech.eps0, n, eps)
    return d, None, info


def _ccf_epsilon(mech, n, delta, ctx):
    return clone_closed_form_epsilon(mech.eps0, n, delta), None, {"form": "code factor, log(4/δ) condition"}


# ---- stronger clone
def _sc_prepare(mech, ctx: Settings) -> Settings:
    dec = stronger_clone_decomposition(mech)
    return ctx.with_(stronger=(dec, dec.swapped()))


def _sc_delta(mech, n, eps, ctx):
    val, info = max_delta(ctx.stronger, n, eps, "spread", ctx.rtol, ctx.max_grid, ctx.evaluator)
    return min(val, 1.0), None, info


def _sc_epsilon(mech, n, delta, ctx):
    return _search_info(ctx, lambda e: _sc_delta(mech, n, e, ctx)[::2], delta, mech.eps0,
                        estimator(ctx.stronger, n))


# ---- privacy blanket
def _blanket(fn_d):
    def point_delta(mech, n, eps, ctx):
        return fn_d(mech, n, eps), None, {}

    def point_epsilon(mech, n, delta, ctx):
        eps0 = mech.eps0

        def fn(e):
            if e >= eps0:          # trivial: shuffling is post-processing of ε0-LDP reports
                return 0.0, {"trivial": "ε >= eps0"}
            if e <= 0.0:
                return 1.0, {}
            return fn_d(mech, n, e), {}

        eps, _, info = _search_info(ctx, fn, delta, eps0, lambda e: fn(e)[0])
        if eps >= eps0:
            info["capped_at_eps0"] = True
        return eps, None, info
    return point_delta, point_epsilon


# ---- Erlingsson et al.
def _efm_delta(mech, n, eps, ctx):
    return erlingsson_delta(mech.eps0, n, eps), None, {}


def _efm_epsilon(mech, n, delta, ctx):
    return erlingsson_epsilon(mech.eps0, n, delta), None, {}


# ---- variation ratio
def _vr_prepare(mech, ctx: Settings) -> Settings:
    return ctx.with_(vr=vr_params(mech))


def _vr_delta(mech, n, eps, ctx):
    prm = ctx.vr
    if prm.beta > 0.0 and eps < math.log(prm.p):
        dec = vr_decomposition(prm)
        if _window_terms(dec, n, eps) > THREE_ATOM_WINDOW_TERMS:
            return _large_n_delta(dec, n, eps, ctx)
    lo, hi = vr_delta(eps, n, prm)
    return min(hi, 1.0), None, _exact_sum_info(lo, hi)


def _vr_epsilon(mech, n, delta, ctx):
    prm = ctx.vr
    return _search_info(ctx, lambda e: _vr_delta(mech, n, e, ctx)[::2], delta, math.log(prm.p),
                        estimator([vr_decomposition(prm)], n))


# ---- μ-GDP
def _gdp_delta(mech, n, eps, ctx):
    mu = _gdp_mu_uniform(mech.eps0, n)
    return gdp_delta_mu(mu, eps), None, {"mu": mu}


def _gdp_epsilon(mech, n, delta, ctx):
    mu = _gdp_mu_uniform(mech.eps0, n)
    return gdp_epsilon_mu(mu, delta), None, {"mu": mu}


def _settings_with(evaluator: str, extra: Callable | None = None):
    """``Method.settings`` of a comparison method: regime, source, evaluator text, method extras, points."""
    def settings(mech, ctx, evals):
        m = _BY_NAME[ctx.method]
        s = {"regime": m.regime(mech), "source": m.source, "evaluator": evaluator}
        if extra is not None:
            s.update(extra(mech, ctx))
        s["points"] = evals
        return s
    return settings


def _name_prepare(name: str, then: Callable | None = None):
    def prepare(mech, ctx: Settings) -> Settings:
        ctx = ctx.with_(method=name)
        return ctx if then is None else then(mech, ctx)
    return prepare


def _vr_regime(mech) -> str:
    try:
        src = vr_params(mech).source
    except ShuffleampError:
        src = "?"
    return VR_INFO.regime + f"; (p, β, q) from {src}"


def _blanket_regime(mech) -> str:
    return f"0 < ε < eps0; {_blanket_label(mech)} constants (γ, b+, b, c of Balle et al. 2019)"


_BLANKET_REGIME = "0 < ε < eps0; k-RR / Laplace specific constants, generic ε0-LDP constants otherwise"
VR_INFO = MethodInfo("variation-ratio", False, "upper",
                     f"{WANG24}, Algorithm 1 / Theorem 4.8 with the (p, β, q) of Table 2",
                     f"UNSOUND: relies on a post-processing lemma (Lemma 4.5) whose proof is broken ({SCW}); "
                     "violated by 4-ary RR. Comparison only")
GDP_INFO = MethodInfo("gdp", False, "estimate", f"{CCG24}, μ-GDP, Theorem 2",
                      "asymptotic heuristic (n → ∞; the C/sqrt(n-1) Berry–Esseen slack is dropped); not a bound")
_hoeffding = _blanket(hoeffding_delta)
_bennett = _blanket(bennett_delta)

#: The comparison methods, in display order (``"optimal"`` is registered by :mod:`shuffleamp.bounds`).
BASELINE_METHODS: tuple[Method, ...] = (
    Method(MethodInfo("clone", True, "upper", f"{FMT21}, standard clone, exact pair divergence",
                      "any ε0-LDP randomizer (generic), any n >= 1"),
           _clone_delta, _clone_epsilon, _name_prepare("clone"),
           _settings_with("exact three-atom binomial sums (binomial.exact_three_atom), dropped mass charged; "
                          "the certified evaluator of the same GPARV at large n (THREE_ATOM_WINDOW_TERMS)")),
    Method(MethodInfo("clone-closed-form", True, "upper", f"{FMT21}, closed-form theorem (public-code factor)",
                      "eps0 <= log(n / (16 log(4/δ))) (the stricter log(4/δ) form of the condition); generic"),
           _ccf_delta, _ccf_epsilon, _name_prepare("clone-closed-form"),
           _settings_with("closed form", lambda mech, ctx: {"variant": (
               "public-code factor (1-e^-eps0)/(1+e^(-eps0-e1)) and log(4/δ) validity condition: "
               "the more conservative of the published variants")})),
    Method(MethodInfo("stronger-clone", True, "upper",
                      f"{FMT23}, corrected four-point decomposition (= the k-RR optimal decomposition of {SCW})",
                      "k-RR only (the only mechanism with known (p, q)); any n >= 1"),
           _sc_delta, _sc_epsilon, _name_prepare("stronger-clone", _sc_prepare),
           _settings_with("certified FFT engine (spread rounding)", lambda mech, ctx: {"rtol": ctx.rtol})),
    Method(MethodInfo("blanket-hoeffding", True, "upper", f"{BBGN19}, privacy blanket + Hoeffding, Theorem 3.1",
                      _BLANKET_REGIME),
           *_hoeffding, _name_prepare("blanket-hoeffding"),
           _settings_with("closed form", lambda mech, ctx: {"constants": _blanket_label(mech)}), _blanket_regime),
    Method(MethodInfo("blanket-bennett", True, "upper", f"{BBGN19}, privacy blanket + Bennett, Theorem 3.1",
                      _BLANKET_REGIME),
           *_bennett, _name_prepare("blanket-bennett"),
           _settings_with("closed form (binomial generating function)",
                          lambda mech, ctx: {"constants": _blanket_label(mech)}), _blanket_regime),
    Method(MethodInfo("erlingsson", True, "upper", f"{EFMRTT19}, Theorem 7.1",
                      "eps0 <= 1/2, n >= 1000, δ <= 0.01 and ε <= eps0"),
           _efm_delta, _efm_epsilon, _name_prepare("erlingsson"), _settings_with("closed form")),
    Method(VR_INFO, _vr_delta, _vr_epsilon, _name_prepare("variation-ratio", _vr_prepare),
           _settings_with("exact three-atom binomial sums (= Theorem 4.8); the certified evaluator of the same "
                          "GPARV at large n (THREE_ATOM_WINDOW_TERMS)", lambda mech, ctx: {"vr_params": {
               "p": ctx.vr.p, "beta": ctx.vr.beta, "q": ctx.vr.q, "source": ctx.vr.source}}),
           _vr_regime),
    Method(GDP_INFO, _gdp_delta, _gdp_epsilon, _name_prepare("gdp"), _settings_with("closed form (Gaussian trade-off)"),
           lambda mech: GDP_INFO.regime + "; homogeneous budgets eps0 for all n users (mechanism type ignored)"),
)
_BY_NAME: dict[str, Method] = {m.name: m for m in BASELINE_METHODS}

#: Static description of every method (``"optimal"`` first), by name.
METHOD_INFO: dict[str, MethodInfo] = {OPTIMAL_INFO.name: OPTIMAL_INFO, EXACT_COUNT_INFO.name: EXACT_COUNT_INFO,
                                     **{m.name: m.info for m in BASELINE_METHODS}}


def method_info(method: str) -> MethodInfo:
    """The :class:`~shuffleamp.results.MethodInfo` of ``method``.

    Parameters
    ----------
    method : str
        A value of :data:`METHODS`.

    Returns
    -------
    MethodInfo

    Raises
    ------
    ParameterError
        ``'method'`` if unknown.
    """
    _validate.choice(method, "method", set(METHOD_INFO))
    return METHOD_INFO[method]


def regime(method: str, mechanism=None) -> str:
    """Validity regime of ``method`` (mechanism-specific where it matters), as shown in results and the CLI.

    Parameters
    ----------
    method : str
        A value of :data:`METHODS`.
    mechanism : Mechanism, optional

    Returns
    -------
    str

    Raises
    ------
    ParameterError
        ``'method'`` if unknown.
    """
    info = method_info(method)
    m = _BY_NAME.get(method)
    return m.regime(mechanism) if m is not None else info.regime


def check_applicable(method: str, mechanism) -> None:
    """Raise :class:`~shuffleamp.errors.OutOfRegimeError` if ``method`` is not defined for ``mechanism`` at all.

    Parameters
    ----------
    method : str
    mechanism : Mechanism

    Raises
    ------
    ParameterError
        ``'method'`` if unknown.
    OutOfRegimeError
        E.g. ``"stronger-clone"`` for anything but k-RR.
    """
    method_info(method)
    if method == "stronger-clone":
        stronger_clone_decomposition(mechanism)


# ============================================================================ shuffle-index asymptotics
#: Below this μ = Δ/σ the Gaussian upper index is integrated numerically (the closed form cancels).
_GAUSS_INDEX_QUAD_MU = 0.5
#: ψ(0) = φ(0): the largest value of the leading-term functional ψ(t) = φ(t) − tΦ(−t), t >= 0.
_PSI0 = 1.0 / math.sqrt(2.0 * math.pi)
TAKAGI_LIEW = ("Takagi, Liew, Analysis of Shuffling Beyond Pure Local Differential Privacy, "
               "arXiv:2601.19154 (2026)")


@dataclass(frozen=True)
class ShuffleIndex:
    r"""The two shuffle indices of a randomizer's worst neighbouring pair (see :func:`shuffle_index`).

    Attributes
    ----------
    upper : float
        :math:`\chi^2_{\rm up} = \int (R_{x_1} - R_{x_1'})^2 / \underline R`, the index of the blanket
        divergence (the upper end of the band), > 0.
    lower : float
        :math:`\chi^2_{\rm low} = \max_x \int (R_{x_1} - R_{x_1'})^2 / R_x`, the index of the best
        single-input dataset (the lower end of the band), ``0 < lower <= upper``.
    """

    upper: float
    lower: float

    @property
    def collapses(self) -> bool:
        """True when the band has zero width (``lower == upper`` to 1e-12 relative)."""
        return self.lower >= self.upper * (1.0 - 1e-12)


def _psi_log(t: float) -> float:
    r"""log ψ(t), ψ(t) = φ(t) − tΦ(−t) = φ(t)(1 − t·M(t)) with the Mills ratio M = Φ(−t)/φ(t) (t >= 0)."""
    mills = float(erfcx(t / math.sqrt(2.0))) * math.sqrt(math.pi / 2.0)
    return -0.5 * t * t - 0.5 * math.log(2.0 * math.pi) + math.log1p(-t * mills)


def _gaussian_upper_index(mu: float) -> float:
    r"""χ²_up of the Gaussian pair (0, Δ) in units of σ, μ = Δ/σ (see :func:`shuffle_index`)."""
    if mu < _GAUSS_INDEX_QUAD_MU:
        # 2 ∫_{μ/2}^∞ φ(y) (e^{μy − μ²/2} − 1)² dy: no cancellation at small μ
        def f(y):
            return math.exp(-0.5 * y * y) / math.sqrt(2.0 * math.pi) * math.expm1(mu * y - 0.5 * mu * mu) ** 2
        from scipy.integrate import quad

        val, _ = quad(f, mu / 2.0, mu / 2.0 + 40.0, epsabs=0.0, epsrel=1e-12, limit=200)
        return 2.0 * val
    if mu * mu > 700.0:
        raise OutOfRegimeError(f"shuffle index: exp(Δ²/σ²) overflows at Δ/σ = {mu:.4g}; use a larger sigma")
    return blanket_chi2(mu)


def shuffle_index(mechanism) -> ShuffleIndex:
    r"""Upper and lower shuffle indices of a Gaussian or k-RR randomizer (closed forms derived here).

    Takagi and Liew (arXiv:2601.19154) show that, asymptotically in n, the blanket divergence of
    Balle, Bell, Gascón, Nissim (CRYPTO 2019) depends on the local randomizer only through one scalar,
    monotonically (the *shuffle index* χ), and that applying the analysis to the upper and to a lower
    bound of the privacy profile gives a band of two indices.  The indices below are **our own
    derivation** of that leading term (their exact normalisation of χ could not be checked against
    their text); the derivation is in :func:`shuffle_index_delta`.

    * Blanket (upper) index: :math:`\chi^2_{\rm up} = \sup_{x_1, x_1'} \int (R_{x_1}(y) -
      R_{x_1'}(y))^2 / \underline R(y)\,dy`, :math:`\underline R = \inf_x R_x` the blanket density.
    * Single-input (lower) index: :math:`\chi^2_{\rm low} = \sup_{x_1, x_1', x} \int (R_{x_1} -
      R_{x_1'})^2 / R_x`: the other n − 1 users all hold x.  Since :math:`R_x \ge \underline R`,
      :math:`\chi^2_{\rm low} \le \chi^2_{\rm up}`, with equality iff some x has :math:`R_x = \underline R`
      wherever :math:`R_{x_1} \ne R_{x_1'}` (the band collapses).

    Closed forms (derived here):

    * **Gaussian** (inputs in an interval of length Δ, noise σ, μ = Δ/σ; worst pair (0, Δ)):
      :math:`\chi^2_{\rm up} = 2\,[e^{\mu^2}\Phi(3\mu/2) - 2\Phi(\mu/2) + \Phi(-\mu/2)]` (on
      :math:`y > \mu/2` the blanket is :math:`\varphi(y)` and :math:`\varphi(y-\mu)^2/\varphi(y) =
      e^{\mu^2}\varphi(y - 2\mu)`; the two halves are mirror images), and with the others at x,
      :math:`\int(\varphi - \varphi(\cdot-\mu))^2/\varphi(\cdot - x) = e^{x^2} + e^{(\mu-x)^2} - 2e^{x(x-\mu)}`,
      convex in x (its second derivative is at least
      :math:`[(2+4x^2) + (2+4(\mu-x)^2) - 2(2+(2x-\mu)^2)]\,e^{x(x-\mu)} \ge 0`), so the maximum is at
      x = 0 (or Δ): :math:`\chi^2_{\rm low} = e^{\mu^2} - 1`, the χ²-divergence of N(μ, 1) from
      N(0, 1).  Both are :math:`\mu^2 + O(\mu^4)`: the band narrows as σ grows but never collapses.
    * **k-RR** (:math:`E = e^{\varepsilon_0}`): the blanket is :math:`1/(E+k-1)` on every output and
      :math:`\chi^2_{\rm up} = 2(E-1)^2/(E+k-1)`.  For k ≥ 3 a third input attains the blanket on both
      outputs where the pair differs: :math:`\chi^2_{\rm low} = \chi^2_{\rm up}` (the band collapses,
      as Takagi–Liew state for k-RR with k ≥ 3); for k = 2, :math:`\chi^2_{\rm low} = (E-1)^2/E`.

    Parameters
    ----------
    mechanism : Mechanism
        ``Gaussian(sigma, sensitivity)`` or ``KRR(eps0, k)``.

    Returns
    -------
    ShuffleIndex
        ``upper`` and ``lower`` (dimensionless, > 0).

    Raises
    ------
    OutOfRegimeError
        For other mechanisms, or when exp(Δ²/σ²) overflows (Δ/σ > 26; naming ``sigma``).

    References
    ----------
    S. Takagi, S. P. Liew, "Analysis of Shuffling Beyond Pure Local Differential Privacy",
    arXiv:2601.19154 (2026): the shuffle index and the band (abstract; theorem numbers not checked).
    B. Balle, J. Bell, A. Gascón, K. Nissim, "The Privacy Blanket of the Shuffle Model", CRYPTO 2019.
    """
    name = getattr(mechanism, "name", None)
    if name == "gaussian":
        mu = float(mechanism.sensitivity) / float(mechanism.sigma)
        return ShuffleIndex(_gaussian_upper_index(mu), math.expm1(mu * mu))
    if name == "krr":
        E, k = math.exp(mechanism.eps0), int(mechanism.k)
        up = 2.0 * math.expm1(mechanism.eps0) ** 2 / (E + k - 1)
        low = up if k >= 3 else math.expm1(mechanism.eps0) ** 2 / E
        return ShuffleIndex(up, min(low, up))
    raise OutOfRegimeError(f"shuffle index: closed forms are derived for the Gaussian and k-RR randomizers only, "
                           f"not {name!r}")


def shuffle_index_delta(index: float, n: int, epsilon: float) -> float:
    r"""Leading-order δ(ε) of a blanket-type divergence with shuffle index ``index`` (an estimate).

    .. math::

        \delta(\varepsilon) \approx \sqrt{\chi^2/n}\;\psi\big(\varepsilon\sqrt{n/\chi^2}\big),\qquad
        \psi(t) = \varphi(t) - t\,\Phi(-t).

    **Derivation** (ours; Takagi–Liew's Gaussian-limit statement of the blanket divergence).  With
    :math:`M \sim \mathrm{Bin}(n, \gamma)`, :math:`Y_i \sim \underline R/\gamma` and
    :math:`l_\varepsilon = \gamma (R_{x_1} - e^\varepsilon R_{x_1'})/\underline R`, the blanket divergence is
    :math:`\frac{1}{n\gamma} E[(S)_+]`, :math:`S = \sum_{i \le M} l_\varepsilon(Y_i)` (this is also the
    library's Gaussian upper bound functional, Su–Cheng–Wang Theorem 12, with :math:`G = l_\varepsilon/\gamma`
    w.p. γ).  Then :math:`E S = n\gamma(1 - e^\varepsilon) \approx -n\gamma\varepsilon` and
    :math:`\mathrm{Var}\,S = n\gamma E[l^2] - n\gamma^2(1-e^\varepsilon)^2 \approx n\gamma^2\chi^2_{\rm up}`
    as ε → 0; a normal S gives :math:`\frac{1}{n\gamma}E S_+ = \sqrt{\chi^2/n}\,\psi(t)`, t = ε√(n/χ²):
    γ cancels, so the leading term depends on the randomizer only through χ², and it increases with χ²
    (:math:`\frac{d}{ds}[s\,\psi(c/s)] = \varphi(c/s) > 0`).  For the dataset whose other users all hold x
    the shuffled divergence is exactly :math:`\frac1n E[(\sum_{i\le n} (R_{x_1} - e^\varepsilon R_{x_1'})/R_x\,(Y_i))_+]`,
    :math:`Y_i \sim R_x` (the likelihood ratio of the shuffled reports is the mean of the n per-report
    ratios), the same form with γ = 1 and index :math:`\chi^2_x`.  The normal approximation neglects the
    skewness of :math:`l_\varepsilon` (heavy right tail for the Gaussian): it is an asymptotic
    **estimate** (``sound=False``), accurate when ε√n is moderate and n is large.

    Parameters
    ----------
    index : float
        Shuffle index χ² (> 0), e.g. ``shuffle_index(mech).upper``.
    n : int
        Number of users, >= 1.
    epsilon : float
        Central ε (nats), >= 0.

    Returns
    -------
    float
        δ estimate in [0, φ(0)·√(χ²/n)].

    Raises
    ------
    ParameterError
        Naming ``index``, ``n`` or ``epsilon``.

    References
    ----------
    S. Takagi, S. P. Liew, arXiv:2601.19154 (2026); B. Balle, J. Bell, A. Gascón, K. Nissim, CRYPTO 2019.
    """
    index = _validate.real("index", index, lo=0.0, lo_open=True)
    n = _validate.count(n)
    epsilon = _validate.epsilon(epsilon)
    scale = math.sqrt(index / n)
    t = epsilon / scale
    return scale * math.exp(_psi_log(t)) if t < 1e8 else 0.0


def shuffle_index_epsilon(index: float, n: int, delta: float) -> float:
    r"""ε at which :func:`shuffle_index_delta` equals δ (an estimate; relative tolerance 1e-12).

    Parameters
    ----------
    index : float
        Shuffle index χ² (> 0).
    n : int
        Number of users, >= 1.
    delta : float
        Target δ in (0, 1).

    Returns
    -------
    float
        ε in nats, >= 0; 0 when δ >= φ(0)·√(χ²/n).

    Raises
    ------
    ParameterError
        Naming ``index``, ``n`` or ``delta``.

    References
    ----------
    S. Takagi, S. P. Liew, arXiv:2601.19154 (2026).
    """
    index = _validate.real("index", index, lo=0.0, lo_open=True)
    n = _validate.count(n)
    delta = _validate.delta(delta)
    ratio = delta * math.sqrt(n / index)          # ψ(t) at the answer
    if ratio >= _PSI0:
        return 0.0
    br = inverse_monotone(lambda s: (math.exp(_psi_log(s)), None), ratio, 0.0, 1.0, rel_tol=1e-12,
                          expand=True, limit=1e8, accelerate=True)
    if br.feasible is None:
        raise OutOfRegimeError("shuffle index: ε search diverged")
    t = br.feasible
    return t * math.sqrt(index / n)


def shuffle_index_band(mechanism, n, delta: float) -> BoundResult:
    r"""Takagi–Liew-type asymptotic ε(δ) band of a Gaussian or k-RR randomizer: an estimate, never a bound.

    ``estimate`` is the ε of the blanket (upper) index, the asymptotic value of the blanket divergence's
    ε; ``settings["band"]`` is ``(ε of the lower index, ε of the upper index)``, the asymptotic band in
    which the true shuffled ε lies for large n (its lower end is the asymptote of a concrete dataset's
    exact divergence; the library's certified ``lower`` converges to it when that dataset is the one its
    lower bound uses).  See :func:`shuffle_index` and :func:`shuffle_index_delta` for the formulas.

    Parameters
    ----------
    mechanism : Mechanism
        ``Gaussian`` or ``KRR``.
    n : int
        Number of users, >= 1.
    delta : float
        Target δ in (0, 1).

    Returns
    -------
    BoundResult
        ``kind="estimate"``, ``sound=False``, ``method="shuffle-index"``; ``settings`` holds
        ``index_upper``, ``index_lower``, ``band``, ``regime`` and ``source``.

    Raises
    ------
    ParameterError
        Naming ``n`` or ``delta``.
    OutOfRegimeError
        For mechanisms without a derived index (see :func:`shuffle_index`).

    References
    ----------
    S. Takagi, S. P. Liew, "Analysis of Shuffling Beyond Pure Local Differential Privacy",
    arXiv:2601.19154 (2026).
    """
    n = _validate.count(n)
    delta = _validate.delta(delta)
    idx = shuffle_index(mechanism)
    hi = shuffle_index_epsilon(idx.upper, n, delta)
    lo = shuffle_index_epsilon(idx.lower, n, delta)
    settings = {"evaluator": "closed form (leading normal term)", "index_upper": idx.upper,
                "index_lower": idx.lower, "band": (lo, hi),
                "regime": "asymptotic (n -> infinity, eps*sqrt(n) moderate); not a bound",
                "source": TAKAGI_LIEW}
    return BoundResult("epsilon", None, None, "shuffle-index", n, None, delta, mechanism.describe(), settings,
                       sound=False, kind="estimate", estimate=hi)
