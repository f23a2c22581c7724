"""The closed-form MGF of the Laplace GPARVs' continuous parts against mpmath quadrature of their densities.

Regression: at eps0 = 30 the factor e^{zE} of the closed form overflowed (RuntimeWarning
and inf * 0 = NaN) although the MGF itself is in range; the scaled form multiplies the prefactors and the
scale in one exponential.
"""
import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from shuffleamp.mechanisms import inv_sqrt_mgf, laplace_lower_gparv, laplace_upper_gparv


def _quad_mgf(part, z, eps0):
    """mpmath quadrature of the density times e^{zs} over [lo, hi], split at the breaks and log-spaced."""
    mp.mp.dps = 30
    zz = mp.mpc(z.real, z.imag)
    edges = sorted({part.lo, *part.breaks, part.hi})
    total = mp.mpf(0)
    for a, b in zip(edges[:-1], edges[1:]):
        # density has w^{-3/2} shapes over ranges ~e^{eps0}: split geometrically from the narrow end
        pts = [a] + [a + (b - a) * 10.0 ** (-k) for k in range(int(eps0 / 2.3) + 2, 0, -1)] + [b]
        pts = sorted(set(pts))
        for u, v in zip(pts[:-1], pts[1:]):
            if v <= u:
                continue
            total += mp.quad(lambda s: mp.mpf(float(part.density(np.array([float(s)]))[0])) * mp.exp(zz * s),
                             [u, v])
    return complex(total)


@pytest.mark.parametrize("make", [laplace_upper_gparv, laplace_lower_gparv])
@pytest.mark.parametrize("eps0, epsilon, z", [
    (1.0, 0.3, 0.7 + 0.0j),
    (5.0, 2.0, 0.05 + 0.01j),
    (30.0, 7.0, 6.85e-11 + 0.0j),        # z * e^{30} ~ 734: e^{zE} alone overflows, M(z) does not
    (30.0, 7.0, 6.85e-11 + 2e-13j),
])
def test_mgf_matches_quadrature(make, eps0, epsilon, z):
    part = make(eps0, epsilon).continuous
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M, dM = part.mgf(np.array([z]))
    M = complex(M[0])
    # dM = E[s e^{zs}] may itself leave the double range (|s| up to e^{eps0}): then inf, never NaN
    assert not np.isnan(dM).any()
    ref = _quad_mgf(part, z, eps0)
    assert math.isfinite(M.real) and math.isfinite(M.imag)
    assert abs(M - ref) <= 1e-8 * abs(ref) + 1e-300


def test_inv_sqrt_mgf_plain_and_scaled_agree():
    c = np.array([0.3 + 0.2j, -1.5 + 4.0j, 2.0 - 1.0j])
    I, J = inv_sqrt_mgf(c, 0.5, 3.0)
    for ck, Ik, Jk in zip(c, I, J):
        mp.mp.dps = 30
        cc = mp.mpc(ck.real, ck.imag)
        Iref = complex(mp.quad(lambda w: mp.exp(cc * w) * w ** mp.mpf(-1.5), [0.5, 3.0]))
        Jref = complex(mp.quad(lambda w: mp.exp(cc * w) * w ** mp.mpf(-0.5), [0.5, 3.0]))
        assert abs(Ik - Iref) <= 1e-12 * abs(Iref)
        assert abs(Jk - Jref) <= 1e-12 * abs(Jref)
