"""Bromwich integrand nodes formed by rotation (``kernels.panel_nodes``: the node values ``_panels`` integrates,
anchor e^{i c d_j} times cached offset tables) against an independent mpmath evaluation at the exact
Gauss–Legendre nodes."""

import mpmath as mp
import numpy as np
import pytest

from shuffleamp import exact as X
from shuffleamp._ext import kernels


def _law(rng, k):
    q = rng.random(k) + 1e-3
    q /= q.sum()
    d = rng.normal(size=k) * rng.choice([0.05, 1.0, 8.0])
    d -= q @ d                      # centred, as the kernel holds them
    return np.ascontiguousarray(q), np.ascontiguousarray(d)


def _one_panel(q, d, n, nmu, theta, c, h, h_before=None):
    """``kernels.panel_nodes`` of the panel [c - h, c + h] (after one panel of half-width ``h_before``, whose
    offset table it may reuse); returns its node values and the panel's centre and half-width as the kernel
    forms them."""
    pa, pb = [c - h], [c + h]
    if h_before is not None:
        pa, pb = [c - 10.0 * h - h_before] + pa, [c - 10.0 * h + h_before] + pb
    pa, pb = np.array(pa), np.array(pb)
    gr, ag, rel = kernels.panel_nodes(q, d, float(n), float(nmu), float(theta), pa, pb, X._XG)
    G = X._XG.size
    return gr[-G:], ag[-G:], rel[-G:], 0.5 * (pa[-1] + pb[-1]), 0.5 * (pb[-1] - pa[-1])


def _g_exact(q, d, n, nmu, theta, t):
    """g(t) = psi(t)^n e^{i t n mu} / (theta + i t)^2 in 60-digit arithmetic (t an mpf)."""
    with mp.workdps(60):
        psi = mp.fsum(mp.mpf(float(qj)) * mp.expj(t * mp.mpf(float(dj))) for qj, dj in zip(q, d))
        return psi ** int(n) * mp.expj(t * mp.mpf(nmu)) / (mp.mpf(theta) + 1j * t) ** 2


@pytest.mark.parametrize("k", [2, 3, 4, 7, 16, 64])
@pytest.mark.parametrize("n", [2, 37, 1000, 10**6, 10**9])
def test_rotated_nodes_within_charged_rounding(k, n):
    rng = np.random.default_rng(1000 * k + n % 997)
    for _ in range(3):
        q, d = _law(rng, k)
        theta = float(rng.choice([1e-3, 0.3, 2.0]))
        nmu = float(rng.normal()) * n * 1e-3
        dmax = float(np.max(np.abs(d)))
        # away from t = 0, and (the small-n rule of ``_panels``) close to it
        c = float(rng.uniform(8.0, 3000.0) / dmax) if _ % 2 == 0 or n > 1000 else float(rng.uniform(0.0, 8.0) / dmax)
        h = float(rng.uniform(0.01, 2.0) / dmax)
        gr, ag, rel, c, h = _one_panel(q, d, n, nmu, theta, c, h)
        assert np.all(np.isfinite(rel)) and np.all(rel >= 0)
        for j, x in enumerate(X._XG):
            t = mp.mpf(c) + mp.mpf(h) * mp.mpf(float(x))          # the exact node
            g = _g_exact(q, d, n, nmu, theta, t)
            bound = float(ag[j]) * float(rel[j]) + 1e-300
            assert abs(float(gr[j]) - float(mp.re(g))) <= bound, (j, gr[j], float(mp.re(g)), bound)
            assert abs(float(ag[j]) - float(abs(g))) <= bound + 1e-15 * float(abs(g))


@pytest.mark.parametrize("k", [3, 16, 64])
@pytest.mark.parametrize("n", [10, 10**4, 10**9])
def test_reused_offset_table_within_charged_rounding(k, n):
    """A panel whose half-width is within 1e-9 of a kept one reuses that offset table, corrected by
    e^{i (h - h_s) x_g d_j} (``_panels``' near-slot path): still within the charged bound at the exact nodes."""
    rng = np.random.default_rng(77 * k + n % 991)
    for rel_dh in (1e-16, -3e-13, 9e-10):
        q, d = _law(rng, k)
        dmax = float(np.max(np.abs(d)))
        c = float(rng.uniform(8.0, 500.0) / dmax)
        h = float(rng.uniform(0.05, 2.0) / dmax)
        gr, ag, rel, c, h = _one_panel(q, d, n, 0.0, 0.5, c, h)
        hs = h * (1.0 + rel_dh)
        gr, ag, rel, c, h = _one_panel(q, d, n, 0.0, 0.5, c, h, h_before=hs)
        for j, x in enumerate(X._XG):
            g = _g_exact(q, d, n, 0.0, 0.5, mp.mpf(c) + mp.mpf(h) * mp.mpf(float(x)))
            assert abs(float(gr[j]) - float(mp.re(g))) <= float(ag[j]) * float(rel[j]) + 1e-300


def test_rotated_nodes_match_direct_nodes():
    """The rotation and the half-angle form (``bromwich_nodes``) agree within both charged bounds."""
    rng = np.random.default_rng(7)
    for k in (3, 9, 40):
        q, d = _law(rng, k)
        gr1, ag1, rel1, c, h = _one_panel(q, d, 500, 3.0, 0.4, 50.0 / np.max(np.abs(d)), 0.7)
        t = np.ascontiguousarray(c + h * X._XG)
        gr0, ag0, rel0 = np.empty(t.size), np.empty(t.size), np.empty(t.size)
        kernels.bromwich_nodes(q, d, 500.0, 3.0, 0.4, t, gr0, ag0, rel0)
        # t differs from the exact node by <= 1 ulp: charge |g'| |dt| through a generous factor
        slack = ag0 * rel0 + ag1 * rel1 + 1e-12 * ag0
        assert np.all(np.abs(gr0 - gr1) <= slack)


def test_gauss_legendre_nodes_antisymmetric():
    """``_panels`` mirrors offsets only for exactly antisymmetric nodes (it checks, and falls back)."""
    x = X._XG
    assert np.array_equal(x[::-1], -x)


def test_panel_nodes_direct_where_rotation_is_not_used():
    """Near t = 0 at large n (the rotation's charge would not be negligible) the panel nodes are the
    half-angle form itself: equal bit for bit to ``bromwich_nodes`` at t = c + h x_g."""
    rng = np.random.default_rng(11)
    q, d = _law(rng, 5)
    dmax = float(np.max(np.abs(d)))
    pa = np.ascontiguousarray(np.linspace(0.0, 4.0 / dmax, 6)[:-1])
    pb = np.ascontiguousarray(pa + (pa[1] - pa[0]))
    n = 10**9
    gr, ag, rel = kernels.panel_nodes(q, d, float(n), 0.0, 1e-4, pa, pb, X._XG)
    c, h = 0.5 * (pa + pb), 0.5 * (pb - pa)
    t = np.ascontiguousarray((c[:, None] + h[:, None] * X._XG[None, :]).ravel())
    g0, a0, r0 = np.empty(t.size), np.empty(t.size), np.empty(t.size)
    kernels.bromwich_nodes(q, d, float(n), 0.0, 1e-4, t, g0, a0, r0)
    assert np.array_equal(gr, g0) and np.array_equal(ag, a0) and np.array_equal(rel, r0)


def test_panel_nodes_reuse_tables_within_charged_rounding():
    """Consecutive panels of (nearly) equal widths reuse offset tables: every node still within its charge."""
    rng = np.random.default_rng(12)
    q, d = _law(rng, 6)
    dmax = float(np.max(np.abs(d)))
    w = 0.3 / dmax
    pa = np.ascontiguousarray(20.0 / dmax + w * np.arange(8))
    pb = np.ascontiguousarray(pa + w)
    n = 300
    gr, ag, rel = kernels.panel_nodes(q, d, float(n), 0.7, 0.2, pa, pb, X._XG)
    G = X._XG.size
    for i in (0, 3, 7):
        c, h = 0.5 * (pa[i] + pb[i]), 0.5 * (pb[i] - pa[i])
        for j in (0, 9, 19):
            g = _g_exact(q, d, n, 0.7, 0.2, mp.mpf(c) + mp.mpf(h) * mp.mpf(float(X._XG[j])))
            assert abs(gr[i * G + j] - float(mp.re(g))) <= ag[i * G + j] * rel[i * G + j] + 1e-300
