"""The batched privacy profile (:func:`shuffleamp.exact.delta_exact_profile`) against the per-ε evaluator.

``delta_exact_profile(dec, n, eps, mode)[i]`` must be what ``delta_exact(dec.gparv(eps[i]), n, mode).delta``
returns: the compiled loop follows the same steps, so the two agree up to the summation order of a few
dot products (measured ~1e-15 relative); the tests allow 1e-9.
"""

from __future__ import annotations

import numpy as np
import pytest

from shuffleamp import exact as X
from shuffleamp._ext import kernels
from shuffleamp.bounds import _families
from shuffleamp.errors import ParameterError
from shuffleamp.mechanisms import BLH, KRR, OUE, Laplace

REL = 1e-9        # agreement with the per-epsilon evaluator
LOOSE = 1e-6      # an upper bound may never be looser than this (relative) either

MECHS = {
    "2rr": KRR(1.0, 2),
    "10rr": KRR(1.0, 10),
    "blh": BLH(1.0),
    "oue": OUE(1.0, 16),
}
NS = [10, 1000, 10**5, 10**8]


def _epsilons(dec, n, eps0):
    """25 values uniform on [0, eps0) and 25 where the upper profile is between 1e-12 and 1e-2."""
    uniform = np.linspace(0.0, eps0, 25, endpoint=False)
    fine = np.linspace(0.0, eps0, 161)[:-1]
    d = X.delta_exact_profile(dec, n, fine, "upper")
    band = fine[(d >= 1e-12) & (d <= 1e-2)]
    if band.size:
        band = np.linspace(band.min(), band.max(), 25)
    else:
        band = np.linspace(0.0, fine[np.argmax(d < 1e-12)] if (d < 1e-12).any() else eps0, 25)
    return np.concatenate([uniform, band])


def _reference(dec, n, eps, mode):
    return np.array([X.delta_exact(dec.gparv(float(e)), n, mode).delta for e in eps])


def _check(got, ref, mode):
    ref_scale = np.maximum(np.abs(ref), 1e-300)
    assert np.all(np.abs(got - ref) <= REL * ref_scale + 1e-320), \
        f"max rel diff {np.max(np.abs(got - ref) / ref_scale):.3g}"
    if mode == "upper":
        assert np.all(got >= ref * (1 - REL))
        assert np.all(got <= ref * (1 + LOOSE) + 1e-320)


@pytest.mark.parametrize("which", ["upper", "lower"])
@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("name", list(MECHS))
def test_profile_equals_per_epsilon(name, n, which):
    mech = MECHS[name]
    fams = _families(mech, "optimal", which)
    assert fams
    for dec in fams:
        eps = _epsilons(dec, n, mech.eps0)
        both = X.delta_exact_profile(dec, n, eps, "both")
        for k, mode in enumerate(("upper", "lower")):
            got = X.delta_exact_profile(dec, n, eps, mode)
            assert got.dtype == np.float64 and got.shape == eps.shape
            np.testing.assert_array_equal(both[k], got)
            _check(got, _reference(dec, n, eps, mode), mode)


def test_profile_nontrivial_range():
    """The band of interest really is evaluated by the integral (not only by the cheap bounds)."""
    dec = MECHS["10rr"].upper_decompositions()[0]
    eps = np.linspace(0.0, 0.003, 200)
    m = dec.a.size
    out = kernels.profile_bromwich(
        np.ascontiguousarray(dec.a), np.ascontiguousarray(dec.b), np.ascontiguousarray(dec.c), dec.beta,
        1e8, eps, np.zeros(m + 2, dtype=np.uint8), X.DEFAULT_RTOL, X._XG, X._WG, X.MAX_WORK, X.TAIL_WORK,
        X.T0_FACTOR, X.THETA_RANGE[0], X.THETA_RANGE[1], X.CENTRAL_WIDTHS, X.TAIL_CONST)
    up, lo, status = out[0], out[1], out[2]
    assert (status == 0).sum() > 100
    assert np.all(lo <= up)
    assert np.all(np.diff(up) <= 0)          # delta is non-increasing in eps


def test_profile_negative_and_shapes():
    dec = MECHS["blh"].upper_decompositions()[0]
    eps = np.array([[-0.9, -0.3, -1e-3], [0.0, 0.2, 0.9]])
    for n in (10, 10**4):
        for mode in ("upper", "lower"):
            got = X.delta_exact_profile(dec, n, eps, mode)
            assert got.shape == eps.shape
            _check(got.ravel(), _reference(dec, n, eps.ravel(), mode), mode)
    assert X.delta_exact_profile(dec, 100, np.array([]), "upper").shape == (0,)
    assert X.delta_exact_profile(dec, 100, 0.1, "both").shape == (2,)


def test_profile_other_families_fall_back():
    """Families with a continuous part are evaluated one by one: identical numbers."""
    mech = Laplace(1.0)
    dec = _families(mech, "optimal", "upper")[0]
    eps = np.array([0.05, 0.2, 0.5])
    for mode in ("upper", "lower"):
        np.testing.assert_array_equal(X.delta_exact_profile(dec, 1000, eps, mode), _reference(dec, 1000, eps, mode))


def test_profile_options_and_errors():
    dec = MECHS["10rr"].upper_decompositions()[0]
    eps = np.linspace(0.0, 0.5, 7)
    for kw in ({"rtol": 1e-8}, {"enumerate_max": 0}):
        got = X.delta_exact_profile(dec, 30, eps, "upper", **kw)
        ref = np.array([X.delta_exact(dec.gparv(e), 30, "upper", **kw).delta for e in eps])
        _check(got, ref, "upper")
    # n = 100: laws with 4 atoms are enumerated, laws with 5 atoms integrated (OUE has both)
    for dec in _families(MECHS["oue"], "optimal", "upper"):
        eps = np.linspace(0.0, 0.9, 10)
        for mode in ("upper", "lower"):
            _check(X.delta_exact_profile(dec, 100, eps, mode), _reference(dec, 100, eps, mode), mode)
    with pytest.raises(ParameterError):
        X.delta_exact_profile(dec, 100, eps, "sideways")
    with pytest.raises(ParameterError):
        X.delta_exact_profile(dec, 0, eps, "upper")
    with pytest.raises(ParameterError):        # as delta_exact(dec.gparv(inf)): atoms not finite
        X.delta_exact_profile(dec, 100, np.array([0.1, np.inf]), "upper")
