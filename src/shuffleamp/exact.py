r"""Exact evaluation of :math:`\delta = \tfrac1n E[(G_1+\dots+G_n)_+]` without discretisation.

Method (issue 3; seed000 digest Theorems 12–13 for what is evaluated)
--------------------------------------------------------------------
For a GPARV :math:`G` with finitely many atoms and any :math:`\theta > 0` (Bromwich inversion
of :math:`s \mapsto s_+`, whose two-sided Laplace transform is :math:`1/z^2`):

.. math::

    E[S_+] = \frac{1}{2\pi}\int_{-\infty}^{\infty} \frac{M_G(\theta+it)^n}{(\theta+it)^2}\,dt
           = \frac{e^{nK(\theta)}}{\pi} \int_0^\infty \operatorname{Re} g(t)\,dt,\qquad
    g(t) = \frac{\psi(t)^n e^{itn\mu}}{(\theta+it)^2},

where :math:`K = \log M_G`, :math:`\psi(t) = E_\theta[e^{it(G-\mu)}]` is the characteristic
function of :math:`G - \mu` under the law tilted by :math:`e^{\theta G}` and :math:`\mu` its
mean.  :math:`\theta` is the saddle point of :math:`nK(\theta) - 2\log\theta`, which makes
:math:`g` a bell of width about :math:`(n\sigma_\theta^2 + 2/\theta^2)^{-1/2}`; :math:`\psi^n` is
``exp(n log1p(psi - 1))`` with the principal logarithm, exact for integer ``n``, so the cost
does not grow with ``n``.

Error bound (``Evaluation.charged``, added to upper bounds, subtracted from lower bounds)
-------------------------------------------------------------------------------------------
* **Quadrature** (rigorous): Gauss–Legendre panels of ``GL_NODES`` nodes.  On the Bernstein
  ellipse of a panel, :math:`|M(\theta - \tau + it)| \le M(\theta - \tau)`, so
  :math:`|g| \le e^{n(K(\theta\mp\beta) - K(\theta))}/|z|^2`, and Trefethen's bound
  :math:`\tfrac{64}{15} h M \rho^{-2m}/(\rho^2-1)` applies per panel.
* **Skipped frequencies** (rigorous): cells where
  :math:`\max|\psi| \le |\psi(c)| + |\psi'(c)|h + \sigma_\theta^2h^2/2` makes
  :math:`\max|g|` negligible are charged ``width * max|g|`` and not integrated.
* **Tail** :math:`t > T` (rigorous): integrating by parts,
  :math:`|\int_T^\infty e^{itS}(\theta+it)^{-2}dt| \le \min(1/T,\, 2/(T^2|S|))`; the small-ball
  probabilities of the tilted sum are bounded by the Fejér-kernel inequality
  :math:`P(|S|\le u) \le 2.17534\,u\int_0^{1/u}|\psi|^n`, giving
  :math:`|\text{tail}| \le 4.3507\,T^{-2}\int_0^{T/2} A(w)\,dw/w`,
  :math:`A(w) = \int_0^w |\psi|^n`, with :math:`A` bounded from the same cell bounds.
* **Rounding**: a first-order running bound on the rounding error of :math:`\psi`, its
  logarithm, the phase and :math:`nK(\theta)` (evaluated in ``log1p/expm1`` form so that
  :math:`nK` keeps its accuracy at :math:`n = 10^9`).  This part is an *estimate* of
  first-order propagation, not interval arithmetic.

Small ``n``: when the multinomial count vectors number at most ``ENUMERATE_MAX`` the sum is
enumerated exactly (:func:`shuffleamp._ext.kernels.multinomial_positive_part`) instead; there
:math:`|\psi|` returns near 1 at many frequencies and enumeration is cheaper.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial.legendre import leggauss

from ._ext import kernels
from .engine import Evaluation
from .errors import ResourceLimitError
from .gparv import Gparv

#: Gauss–Legendre nodes per panel.
GL_NODES = 20
_XG, _WG = leggauss(GL_NODES)
#: Default relative accuracy target of the integral (the certified error is reported, not assumed).
DEFAULT_RTOL = 1e-7
#: Enumerate the multinomial sum exactly when it has at most this many count vectors.
ENUMERATE_MAX = 1_000_000
#: Refuse (ResourceLimitError) beyond this many atom x frequency evaluations.
MAX_WORK = 4e8
#: Stop widening the integration range [0, T] beyond this many atom x frequency evaluations.
TAIL_WORK = 5e5
#: First integration range T = theta * sqrt(T0_FACTOR / rtol), widened 4x while the tail bound is too large.
T0_FACTOR = 16.0
#: Central panels cover [0, CENTRAL_WIDTHS * s0].
CENTRAL_WIDTHS = 16.0
#: Constant of the Fejér small-ball inequality: 2 / sinc(1/2)^2.
FEJER = 2.0 / (2.0 * math.sin(0.5)) ** 2
#: Tail-bound constant 2 * FEJER (with r = 2/T).
TAIL_CONST = 2.0 * FEJER
UPPER_MODES = ("spread", "ceil", "upper")
LOWER_MODES = ("floor", "spread_lower", "lower")
_DBL_EPS = float(np.finfo(np.float64).eps)


def delta_exact(gparv: Gparv, n: int, mode: str = "upper", rtol: float = DEFAULT_RTOL,
                enumerate_max: int = ENUMERATE_MAX) -> Evaluation:
    r"""Exact :math:`\tfrac1n E[(\sum_{i\le n} G_i)_+]` for a finite-support GPARV, with an error bound.

    Parameters
    ----------
    gparv : Gparv
        Law of G; atoms only (a continuous part raises ``NotImplementedError``).
    n : int
        Number of i.i.d. copies (users), >= 1.
    mode : {"upper", "lower"} (or the engine's "spread"/"ceil" resp. "floor"/"spread_lower")
        Whether the error bound is added (certified upper bound) or subtracted (certified
        lower bound; floored at 0).
    rtol : float
        Target relative size of the error bound (drives the tail cut-off ``T`` and the
        skipping threshold).  The achieved bound is returned in ``charged``.
    enumerate_max : int
        Enumerate the multinomial sum when it has at most this many terms (0 disables).

    Returns
    -------
    Evaluation
        ``delta`` (certified, see module docstring), ``charged`` (the error bound in δ units),
        ``eta`` (the tilt θ), ``N`` (number of integrand evaluations), ``evaluator``
        ("exact" or "enumeration").

    Raises
    ------
    ResourceLimitError
        The integration would need more than ``MAX_WORK`` atom-frequency evaluations.
    """
    upper = mode in UPPER_MODES
    if not upper and mode not in LOWER_MODES:
        raise ValueError(f"unknown mode {mode!r}")
    if gparv.continuous is not None and gparv.continuous.mass > 0:
        raise NotImplementedError("the exact evaluator handles finite-support GPARVs")
    v = np.ascontiguousarray(gparv.values, dtype=np.float64)
    p = np.ascontiguousarray(gparv.probs, dtype=np.float64)
    p = p / p.sum()
    value, err, nodes, theta, how = _positive_part(v, p, int(n), rtol, enumerate_max)
    d = value + err if upper else max(value - err, 0.0)
    if upper and d <= 0.0 and float(v.max()) > 0.0:
        d = float(np.nextafter(0.0, 1.0))       # true value positive but below the float range
    return Evaluation(min(d, 1.0) if upper else d, "upper" if upper else "lower", 0.0, nodes, theta, (0, 0),
                      err, False, how)


def _positive_part(v: np.ndarray, p: np.ndarray, n: int, rtol: float, enumerate_max: int):
    """(value, error bound, node count, theta, how) of E[S_+]/n for atoms v, masses p (sum 1)."""
    vmax, vmin = float(v.max()), float(v.min())
    if vmax <= 0.0:
        return 0.0, 0.0, 0, 0.0, "exact"
    if vmin >= 0.0:                       # S >= 0: E[S_+]/n = E[G]
        m = float(p @ v)
        return m, 4.0 * _DBL_EPS * v.size * m, 0, 0.0, "exact"
    k = v.size
    if enumerate_max and math.comb(n + k - 1, k - 1) <= enumerate_max:
        tot, pos = kernels.multinomial_positive_part(v, p, n)
        # leaf weights: log-weight error (n |log p| + log n!) eps; partial sums: n max|v| eps each
        lw_err = 8.0 * _DBL_EPS * (n * float(np.max(np.abs(np.log(p)))) + math.lgamma(n + 1.0) + k)
        s_err = 2.0 * _DBL_EPS * n * float(np.max(np.abs(v))) * (k + 1)
        err = tot * math.expm1(lw_err) + s_err * pos
        return tot / n, err / n, 0, 0.0, "enumeration"
    return _bromwich(v, p, n, rtol)


def _bromwich(v, p, n, rtol):
    theta, mu, s2 = kernels.saddle_point(v, p, float(n))
    lw = np.log(p)
    z = lw + theta * v
    q = np.exp(z - z.max())
    q /= q.sum()
    d = v - mu
    nmu = n * mu
    L1 = float(q @ np.abs(d))
    s2 = float(q @ (d * d))
    Kth = kernels.log_mgf(v, p, theta)
    nK = n * Kth
    # s_+ <= e^{theta s} / (e theta): delta <= e^{nK(theta)} / (e theta n).  Below the double range
    # (a positive atom of denormal mass, say) this certified Chernoff bound is the answer.
    log_chernoff = nK - 1.0 - math.log(theta * n)
    if log_chernoff < -700.0:
        return 0.0, max(math.exp(log_chernoff), float(np.nextafter(0.0, 1.0))), 0, theta, "chernoff"
    s0 = 1.0 / math.sqrt(n * s2 + 2.0 / theta ** 2)
    beta = min(0.5 * theta, s0)
    log_ell = n * max(kernels.log_mgf(v, p, theta - beta) - Kth, kernels.log_mgf(v, p, theta + beta) - Kth)
    # rounding of n K(theta): K to ~ (k + 4) eps relative to sum p |expm1(theta v)| (log1p form)
    nK_err = n * (v.size + 4) * _DBL_EPS * (float(p @ np.abs(np.expm1(np.minimum(theta * v, 700.0)))) + abs(Kth))
    hp = beta                                      # panel half-width: Bernstein rho = 1 + sqrt 2
    work = [0]
    k = v.size

    def panels(a, b):
        c = 0.5 * (a + b)
        h = 0.5 * (b - a)
        t = np.ascontiguousarray((c[:, None] + h[:, None] * _XG[None, :]).ravel())
        m = t.size
        work[0] += m
        gr, ag, rel = np.empty(m), np.empty(m), np.empty(m)
        kernels.bromwich_nodes(q, d, float(n), nmu, theta, t, gr, ag, rel)
        W = (h[:, None] * _WG[None, :]).ravel()
        rB = beta / h + np.sqrt(1.0 + (beta / h) ** 2)
        reach = 0.5 * h * (rB + 1.0 / rB)
        tmin = np.maximum(0.0, np.abs(c) - reach)
        log_gl = (log_ell - np.log((theta - beta) ** 2 + tmin ** 2) + np.log((64.0 / 15.0) * h)
                  - 2 * GL_NODES * np.log(rB) - np.log(rB ** 2 - 1.0))
        gl = float(np.sum(np.exp(np.minimum(log_gl, 700.0))))
        return float(W @ gr), gl * (1.0 + 1e-9), float(W @ (ag * rel))

    def rho_bound(a, b):
        c = np.ascontiguousarray(0.5 * (a + b))
        out = np.empty(c.size)
        work[0] += c.size
        kernels.cf_modulus_bound(q, d, s2, c, np.ascontiguousarray(0.5 * (b - a)), out)
        return out

    nc = max(1, int(math.ceil(CENTRAL_WIDTHS * s0 / (2.0 * hp))))
    edges = 2.0 * hp * np.arange(nc + 1)
    total, glsum, rosum = panels(edges[:-1], edges[1:])
    scale_I = max(abs(total), 1e-300)
    tau = rtol * scale_I
    seg_a, seg_b, seg_m = [edges[:-1]], [edges[1:]], [(edges[1:] - edges[:-1]) * rho_bound(edges[:-1], edges[1:]) ** n]
    A_c = float(np.sum(seg_m[0]))
    pruned = 0.0
    T_done = float(edges[-1])
    T = max(theta * math.sqrt(T0_FACTOR / rtol), 2.0 * T_done)
    w0 = 0.5 / max(L1, 1e-300)
    while True:
        a = T_done + w0 * np.arange(int(math.ceil((T - T_done) / w0)))
        b = np.minimum(a + w0, T)
        while a.size:
            if work[0] * k > MAX_WORK:
                raise ResourceLimitError(
                    f"exact evaluator: more than {MAX_WORK:.0e} atom-frequency evaluations "
                    f"(n={n}, {k} atoms); use evaluator='fft'")
            r = rho_bound(a, b)
            rn = r ** n
            bound = (b - a) * rn / (theta * theta + a * a)
            # skip a cell when it is negligible both for the integral and for A(w) of the tail bound
            ok = (bound <= 0.25 * tau * (b - a) / T) & (rn <= 0.01 * A_c / T)
            seg_a.append(a[ok]); seg_b.append(b[ok]); seg_m.append((b[ok] - a[ok]) * rn[ok])
            pruned += float(bound[ok].sum())
            a, b, rn = a[~ok], b[~ok], rn[~ok]
            small = (b - a) <= 2.0 * hp * (1.0 + 1e-9)
            if small.any():
                seg_a.append(a[small]); seg_b.append(b[small]); seg_m.append((b[small] - a[small]) * rn[small])
                val, gl, ro = panels(a[small], b[small])
                total += val
                glsum += gl
                rosum += ro
            a, b = a[~small], b[~small]
            if a.size:
                wn = (b - a) / 8.0
                a = (a[:, None] + wn[:, None] * np.arange(8.0)[None, :]).ravel()
                b = a + np.repeat(wn, 8)
        T_done = T
        tail = _tail_bound(np.concatenate(seg_a), np.concatenate(seg_b), np.concatenate(seg_m), T)
        # |psi|^n near 1 at many frequencies (small n) makes the tail decay like 1/T only:
        # stop widening once the work budget is spent and report the larger error bound
        if tail <= 0.25 * tau or work[0] * k > TAIL_WORK:
            break
        T *= 4.0
    err_I = glsum + rosum + pruned + tail
    scale = math.exp(nK - math.log(math.pi * n))
    value = total * scale
    err = err_I * scale + abs(value) * math.expm1(nK_err)
    chernoff = math.exp(log_chernoff)
    if not (value + err <= chernoff):     # badly scaled integrand: the Chernoff bound is better
        return 0.0, chernoff, work[0], theta, "chernoff"
    return max(value, 0.0), err + max(-value, 0.0), work[0], theta, "exact"


def _tail_bound(a, b, m, T):
    r"""Bound on :math:`|\int_T^\infty \mathrm{Re}\,g|` from segment bounds m_i >= int_{a_i}^{b_i} |psi|^n.

    :math:`4.3507\,T^{-2}\int_0^{T/2} A(w)\,dw/w` with :math:`A(w) \le \sum_{a_i < w} m_i`
    (cumulative including the segment containing w) and :math:`A(w) \le w` on the first segment.
    """
    order = np.argsort(a, kind="stable")
    a, b, m = a[order], b[order], m[order]
    keep = a < 0.5 * T
    a, b, m = a[keep], np.minimum(b[keep], 0.5 * T), m[keep]
    A = np.cumsum(m)
    first = a <= 0.0
    logs = np.log(np.where(first, 1.0, b) / np.where(first, 1.0, a))
    integral = float(np.sum(np.where(first, b - a, A * logs)))
    return TAIL_CONST / T ** 2 * integral * (1.0 + 1e-9)
