r"""Independent oracles for the shuffled Laplace mechanism on {0, 1}, written for the tests only.

Nothing here imports shuffleamp: the laws are derived below from the two densities
:math:`f_x(y) = \frac{\varepsilon_0}{2} e^{-\varepsilon_0 |y - x|}` (x in {0, 1}) and evaluated with numpy and
scipy only.

**Derivation.**  Let :math:`E = e^{\varepsilon_0}`.  On :math:`y < 0` both densities are proportional to
:math:`e^{\varepsilon_0 y}`, on :math:`y > 1` to :math:`e^{-\varepsilon_0 y}`, so the likelihood ratio
:math:`r(y) = f_0(y)/f_1(y)` is :math:`E` on :math:`y<0`, :math:`1/E` on :math:`y>1` and
:math:`e^{\varepsilon_0(1-2y)}` on [0, 1].  With the substitution :math:`\rho = r(y)` (or :math:`1/r(y)`),
:math:`f_1(y)\,dy = \frac{e^{-\varepsilon_0/2}}{4}\rho^{-3/2}d\rho` on [0, 1].

* *Blanket GPARV* (Su, Cheng, Wang, "Decomposition-based optimal bounds for privacy amplification via
  shuffling", IEEE S&P 2026, Theorems 12-13).  The blanket is :math:`\min(f_0, f_1)`, of mass
  :math:`\gamma = e^{-\varepsilon_0/2}`; :math:`G = (f_0 - e^\varepsilon f_1)/\min(f_0, f_1)` at
  :math:`Y \sim \min(f_0, f_1)` (mass γ), and 0 w.p. 1 - γ.  So G has the atoms 0 (mass 1 - γ),
  :math:`E - e^\varepsilon` (y < 0, mass :math:`e^{-\varepsilon_0}/2`), :math:`1 - Ee^\varepsilon`
  (y > 1, mass :math:`e^{-\varepsilon_0}/2`), and two continuous pieces over :math:`\rho \in [1, E]`
  with weight :math:`\frac{\gamma}{4}\rho^{-3/2}d\rho`: :math:`\rho - e^\varepsilon` (y in (0, 1/2)) and
  :math:`1 - e^\varepsilon\rho` (y in (1/2, 1)).  The bound is :math:`\frac1n E[(\sum_{i\le n} G_i)_+]`.
* *Concrete pair* (the dataset "user 1 holds 0 or 1, every other user holds 1", Theorem 14): the shuffled
  outputs' likelihood ratio is :math:`\frac1n\sum_i r(Y_i)` with :math:`Y_i \sim f_1` i.i.d., so its exact
  divergence is :math:`\frac1n E[(\sum_i (R_i - e^\varepsilon))_+]` (and :math:`\frac1n E[(\sum_i (1 -
  e^\varepsilon R_i))_+]` for the reverse direction), :math:`R = r(Y)`: atoms :math:`E` (mass
  :math:`e^{-\varepsilon_0}/2`) and :math:`1/E` (mass 1/2), continuous on :math:`[1/E, E]` with weight
  :math:`\frac{e^{-\varepsilon_0/2}}{4}\rho^{-3/2}d\rho`.  "Every other user holds 0" is its mirror image
  (:math:`y \mapsto 1 - y`), with the same values.

A law is a list of atoms and a list of *pieces* :math:`(\alpha, \beta, w, \rho_{lo}, \rho_{hi})`: the value
:math:`\alpha + \beta\rho` with weight :math:`w\rho^{-3/2}d\rho` on :math:`[\rho_{lo}, \rho_{hi}]` (cdf and
first moment in closed form).

Evaluators of :math:`\frac1n E[(\sum_{i \le n} G_i)_+]`:

* :func:`convex_bracket` (any n <= 3): each piece cut into cells; a cell replaced by its conditional mean
  gives a law smaller in convex order, by the two-point law on its end values with the same mean a larger
  one (:math:`x \mapsto (x + s)_+` is convex), so the exact sums over every combination of atoms
  (sorted cumulative sums) bracket the value: ``(lo, hi)``.
* :func:`positive_part_bromwich` (large n): :math:`E[S_+] = \frac1\pi\int_0^\infty \mathrm{Re}\,
  \frac{M(\theta+it)^n}{(\theta+it)^2}dt` for any θ > 0 (M the MGF, its pieces by Gauss-Legendre in ρ),
  θ minimising the Chernoff bound; ``scipy.integrate.quad`` over the central bump, the rest bounded by
  :math:`|M(\theta+it)/M(\theta)|^n \le q^n` (atoms' share plus the pieces' integration-by-parts bound
  :math:`(w(\rho_{lo}) + w(\rho_{hi}) + TV(w))/t`), charged to the returned error.
* :func:`hockey_stick_discretised` (any dataset, small n): outputs merged into cells (a post-processing,
  so a *lower* bound on the exact divergence of every dataset) and the shuffled histograms enumerated by
  ``tests/oracle.py``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.polynomial.legendre import leggauss
from scipy import integrate
from scipy.optimize import minimize_scalar


# ------------------------------------------------------------------ laws
def blanket_law(eps0: float, eps: float):
    """The blanket GPARV of Laplace on {0, 1} at central ``eps``: (atom values, atom masses, pieces)."""
    E, e = math.exp(eps0), math.exp(eps)
    g = math.exp(-eps0 / 2)
    tail = math.exp(-eps0) / 2
    atoms_v = np.array([0.0, E - e, 1.0 - E * e])
    atoms_p = np.array([1.0 - g, tail, tail])
    pieces = [(-e, 1.0, g / 4, 1.0, E), (1.0, -e, g / 4, 1.0, E)]
    return atoms_v, atoms_p, pieces


def pair_law(eps0: float, eps: float, reverse: bool = False):
    """The summand law of the concrete pair "user 1 holds 0 (or 1), every other user holds 1":
    R - e^eps (``reverse``: 1 - e^eps R), R the likelihood ratio f_0/f_1 at Y ~ f_1."""
    E, e = math.exp(eps0), math.exp(eps)
    w = math.exp(-eps0 / 2) / 4
    R = np.array([E, 1.0 / E])
    atoms_p = np.array([math.exp(-eps0) / 2, 0.5])
    if reverse:
        return 1.0 - e * R, atoms_p, [(1.0, -e, w, 1.0 / E, E)]
    return R - e, atoms_p, [(-e, 1.0, w, 1.0 / E, E)]


def law_mass(law) -> float:
    """Total mass of a law (1 up to rounding; a check of the derivation)."""
    _, p, pieces = law
    return float(p.sum()) + sum(2 * w * (lo ** -0.5 - hi ** -0.5) for _, _, w, lo, hi in pieces)


# ------------------------------------------------------------------ convex-order bracket, n <= 3
def cells(law, k: int, side: str):
    """A finite law from ``law``: each piece cut into ``k`` cells (uniform in log ρ); ``side="lo"``: a
    cell at its conditional mean (smaller in convex order), ``"hi"``: at its two end values with the same
    mean (larger in convex order)."""
    v, p, pieces = law
    vals, probs = [np.asarray(v, float)], [np.asarray(p, float)]
    for a, b, w, lo, hi in pieces:
        x = np.exp(np.linspace(math.log(lo), math.log(hi), k + 1))
        x[0], x[-1] = lo, hi
        s = x ** -0.5
        mass = 2 * w * (s[:-1] - s[1:])
        mean_rho = 2 * w * (1 / s[1:] - 1 / s[:-1]) / mass
        if side == "lo":
            vals.append(a + b * mean_rho)
            probs.append(mass)
        else:
            t = (mean_rho - x[:-1]) / (x[1:] - x[:-1])       # share of the upper end
            vals += [a + b * x[:-1], a + b * x[1:]]
            probs += [mass * (1 - t), mass * t]
    return np.concatenate(vals), np.concatenate(probs)


def _positive_part_sum(x, px, y, py):
    """E[(X + Y)_+] of independent finite X, Y (sorted cumulative sums)."""
    o = np.argsort(y)
    y, py = y[o], py[o]
    cm = np.cumsum((py * y)[::-1])[::-1]            # sum_{j >= i} p_j y_j
    cp = np.cumsum(py[::-1])[::-1]
    i = np.searchsorted(y, -x, side="right")          # y > -x
    inside = i < y.size
    ii = np.minimum(i, y.size - 1)
    return float(np.sum(np.where(inside, px * (x * cp[ii] + cm[ii]), 0.0)))


def positive_part_small(values, probs, n: int) -> float:
    r""":math:`\frac1n E[(\sum_{i \le n} G_i)_+]` of a finite law for n in {1, 2, 3}, exactly (float64)."""
    v = np.asarray(values, float)
    p = np.asarray(probs, float)
    if n == 1:
        return float(np.sum(p * np.maximum(v, 0.0)))
    if n == 2:
        return _positive_part_sum(v, p, v, p) / 2
    if n == 3:
        s = (v[:, None] + v[None, :]).ravel()
        ps = (p[:, None] * p[None, :]).ravel()
        return _positive_part_sum(v, p, s, ps) / 3
    raise ValueError("positive_part_small: n in {1, 2, 3}")


def convex_bracket(law, n: int, k: int | None = None) -> tuple[float, float]:
    r"""``(lo, hi)`` bracketing :math:`\frac1n E[(\sum_{i\le n} G_i)_+]` (n <= 3), by convex order."""
    k = k or {1: 20000, 2: 6000, 3: 300}[n]
    lo = positive_part_small(*cells(law, k, "lo"), n)
    hi = positive_part_small(*cells(law, k, "hi"), n)
    return lo, hi


# ------------------------------------------------------------------ lattice bracket, moderate n
def _lattice_pmf(values, probs, h: float, up: bool):
    """(offset, pmf) of a finite law with its values rounded to the lattice h Z (``up``: ceil, else floor)."""
    k = np.ceil(values / h - 1e-9) if up else np.floor(values / h + 1e-9)
    k = k.astype(np.int64)
    k0 = int(k.min())
    return k0, np.bincount(k - k0, weights=probs)


def _nfold(pmf, n: int):
    """The n-fold convolution of a pmf (FFT by repeated squaring; negatives from round-off clipped)."""
    from scipy.signal import fftconvolve
    out, base = np.array([1.0]), pmf
    while n:
        if n & 1:
            out = np.maximum(fftconvolve(out, base), 0.0)
        n >>= 1
        if n:
            base = np.maximum(fftconvolve(base, base), 0.0)
    return out


def lattice_bracket(law, n: int, k: int = 400, h: float = 2e-4) -> tuple[float, float]:
    r"""``(lo, hi)`` bracketing :math:`\frac1n E[(\sum_{i\le n} G_i)_+]` for moderate n (up to a few hundred).

    Each piece of ``law`` is cut into ``k`` cells (:func:`cells`: conditional means for ``lo``, smaller in
    convex order; mean-preserving end points for ``hi``, larger), then every value is rounded down (``lo``) or
    up (``hi``) to the lattice h Z (a usual-order decrease / increase), and the n-fold sum is convolved on the
    lattice; (x)_+ is convex and increasing, so both orders move E[(S)_+] the right way.  FFT round-off
    (about 1e-16 of the largest mass per point) is far below the bracket's width ~ h."""
    res = []
    for side in ("lo", "hi"):
        v, p = cells(law, k, side)
        k0, pmf = _lattice_pmf(v, p, h, side == "hi")
        s = _nfold(pmf, n)
        x = (np.arange(s.size) + n * k0) * h
        res.append(float(np.sum(s * np.maximum(x, 0.0))) / n)
    return res[0], res[1]


# ------------------------------------------------------------------ Bromwich integral, large n
@lru_cache(maxsize=16)
def _gauss_legendre(order: int):
    return leggauss(order)


def _mgf_scaled(law, z, shift, nodes=400):
    """M(z) e^{-z shift} for complex z (array): atoms exactly, pieces by Gauss-Legendre in log ρ."""
    v, p, pieces = law
    z = np.atleast_1d(np.asarray(z, complex))
    out = (p[None, :] * np.exp(z[:, None] * (v[None, :] - shift))).sum(axis=1)
    u, wu = _gauss_legendre(nodes)
    for a, b, w, lo, hi in pieces:
        l0, l1 = math.log(lo), math.log(hi)
        rho = np.exp(0.5 * (l1 - l0) * u + 0.5 * (l1 + l0))
        weight = 0.5 * (l1 - l0) * wu * w * rho ** -0.5          # w rho^{-3/2} d rho = w rho^{-1/2} d log rho
        out = out + (weight[None, :] * np.exp(z[:, None] * (a + b * rho[None, :] - shift))).sum(axis=1)
    return out


def _range(law):
    v, _, pieces = law
    ends = [a + b * r for a, b, _, lo, hi in pieces for r in (lo, hi)]
    return min([float(v.min())] + ends), max([float(v.max())] + ends)


def _composite_gl(f, a, b, panels, order=20):
    u, w = _gauss_legendre(order)
    edges = np.linspace(a, b, panels + 1)
    mid, half = 0.5 * (edges[1:] + edges[:-1]), 0.5 * np.diff(edges)
    t = (mid[:, None] + half[:, None] * u[None, :]).ravel()
    return float(np.sum(f(t) * (half[:, None] * w[None, :]).ravel()))


def positive_part_bromwich(law, n: int) -> tuple[float, float]:
    r""":math:`\frac1n E[(\sum_{i\le n} G_i)_+]` by the Bromwich integral: ``(value, error)``.

    :math:`E[S_+] = \frac{M(\theta)^n}{\pi}\int_0^\infty \mathrm{Re}\frac{R(t)^n}{(\theta+it)^2}dt`,
    :math:`R(t) = M(\theta+it)/M(\theta)`.  The central bump (up to where :math:`|R|^n` falls below 1e-40)
    by composite Gauss-Legendre (its error estimated by halving the panels); beyond T, where the bound
    :math:`|R(t)| \le q(t) = ` atoms' tilted share + :math:`(g(\rho_{lo}) + g(\rho_{hi}) + TV(g))/(|\beta| t)`
    (integration by parts, g the tilted piece weight) is below :math:`e^{-100/n}`,
    :math:`\int_T^\infty q^n/t^2 \le q(T)^n/T`; in between, R is Lipschitz with constant max |G|, which
    bounds :math:`|R|^n` on steps of length :math:`(1 - |R(t)|)/(2\max|G|)`.  The three are returned as
    ``error`` (the pieces' Gauss-Legendre sums are taken as exact: 200-4000 nodes for phases below 4000).
    Meant for n >= 100."""
    vmin, vmax = _range(law)
    if vmax <= 0:
        return 0.0, 0.0

    def logm(theta):
        return float(np.log(_mgf_scaled(law, theta, vmax).real[0])) + theta * vmax

    res = minimize_scalar(lambda lt: n * logm(math.exp(lt)) - lt, bounds=(-25.0, 6.0), method="bounded",
                          options={"xatol": 1e-10})
    theta = math.exp(res.x)
    m0 = _mgf_scaled(law, theta, vmax).real[0]
    scale = math.exp(n * (math.log(m0) + theta * vmax)) / (math.pi * n)

    # rigorous decay bound q(t) and the point T beyond which it makes the integral negligible
    v, p, pieces = law
    atoms = float(np.sum(p * np.exp(theta * (v - vmax)))) / m0
    tv = 0.0
    for a, b, w, lo, hi in pieces:
        rho = np.exp(np.linspace(math.log(lo), math.log(hi), 20001))
        g = w * rho ** -1.5 * np.exp(theta * (a + b * rho - vmax)) / m0
        tv += float(g[0] + g[-1] + np.abs(np.diff(g)).sum()) * 1.001 / abs(b)
    if atoms >= 1.0:
        raise ValueError("positive_part_bromwich: no continuous part to bound the tail")
    q_target = math.exp(-100.0 / n) if n >= 100 else None
    if q_target is None or q_target <= atoms:
        raise ValueError("positive_part_bromwich: n too small for the tail bound")
    T = tv / (q_target - atoms)
    nodes = int(min(4000, max(200, T * (vmax - vmin) + 100)))

    def ratio(t):
        t = np.atleast_1d(t)
        return _mgf_scaled(law, theta + 1j * t, vmax, nodes) / m0 * np.exp(1j * t * vmax)

    def integrand(t):
        return (np.exp(n * np.log(ratio(t))) / (theta + 1j * t) ** 2).real

    h = 1e-5
    var = -2.0 * math.log(abs(ratio(h)[0])) / h ** 2
    t1 = min(math.sqrt(2 * 92.1 / (n * max(var, 1e-300))), T)
    val = _composite_gl(integrand, 0.0, t1, 64)
    coarse = _composite_gl(integrand, 0.0, t1, 32)
    # middle, [t1, T]: R is Lipschitz with constant L = max |G|, so on a step of length
    # s = (1 - |R(t)|) / (2 L) from t, |R| <= u = (1 + |R(t)|) / 2 and the integrand <= u^n / t^2
    lip = max(abs(vmin), abs(vmax))
    middle, t = 0.0, t1
    while t < T:
        r = min(float(abs(ratio(t)[0])), 1.0)
        s = max((1.0 - r) / (2 * lip), 1e-12)
        middle += ((1.0 + r) / 2) ** n * min(s, T - t) / t ** 2
        t += s
    far = (atoms + tv / T) ** n / T
    return val * scale, (abs(val - coarse) + middle + far) * scale


# ------------------------------------------------------------------ exact divergence of any dataset, discretised
def discretised_matrix(eps0: float, cells_inside: int) -> np.ndarray:
    """2 x (cells + 2) matrix: the probabilities of y < 0, of ``cells_inside`` equal cells of [0, 1] and of
    y > 1 under f_0 (row 0) and f_1 (row 1).  The merged outputs are a post-processing of the Laplace
    output, so every shuffled divergence computed from it is a lower bound on the exact one."""
    x = np.linspace(0.0, 1.0, cells_inside + 1)
    rows = []
    for c in (0.0, 1.0):
        def cdf(y):
            y = np.asarray(y, float)
            return np.where(y < c, 0.5 * np.exp(eps0 * (y - c)), 1 - 0.5 * np.exp(-eps0 * (y - c)))
        F = cdf(x)
        rows.append(np.concatenate([[F[0]], np.diff(F), [1 - F[-1]]]))
    P = np.array(rows)
    return P / P.sum(axis=1, keepdims=True)


def local_hockey_stick(eps0: float, eps: float) -> float:
    """δ(ε) of Laplace on {0, 1} itself (no shuffling): 1 - e^{(ε - ε0)/2} for 0 <= ε <= ε0."""
    return max(0.0, -math.expm1((eps - eps0) / 2))
