"""Cheap family construction: the fast paths give the same families as the reference (plain) construction.

The fast paths: the compiled merge by ratio (``kernels.merge_sorted``) and law key (``kernels.law_key_rows``)
behind ``merge_rows`` / ``law_keys`` / ``small_decomposition``, the leaner ``ratio_keys``, the stacked
validation of :class:`Decomposition` (``_set_clean``), the cached merge behind ``law_key`` /
``simplified`` / ``swapped``, shared read-only arrays in ``_trusted``, the prefix memo of
``product_decomposition`` and the batched swap keys of matrix lower triples.  The oracle is the old code
itself, copied here verbatim (``_old_*``): the families of every kind of mechanism (arrays, β and law
keys) and the certified ε must be identical, bit for bit, with and without the fast paths.

No test asserts a duration.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shuffleamp as sa
from shuffleamp import bounds, compose, decomposition as D, mechanisms as M
from shuffleamp.errors import NotLDPError, ParameterError


def _old_ratio_keys(num, den, rtol=D.RATIO_RTOL):
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        lr = np.log(np.maximum(num / den, 1e-300))
    return np.round(np.clip(lr, -800.0, 800.0) / rtol).astype(np.int64)


def _old_merge_rows(A, B, C, rtol=D.RATIO_RTOL, keys=None):
    """merge_rows as before (vectorised, per-array keys)."""
    m, k = A.shape
    K0, K1 = (_old_ratio_keys(A, C, rtol), _old_ratio_keys(B, C, rtol)) if keys is None else keys
    order = np.lexsort((K1, K0), axis=-1)
    K0 = np.take_along_axis(K0, order, axis=1)
    K1 = np.take_along_axis(K1, order, axis=1)
    new = np.ones((m, k), dtype=bool)
    if k > 1:
        new[:, 1:] = (K0[:, 1:] != K0[:, :-1]) | (K1[:, 1:] != K1[:, :-1])
    seg = np.cumsum(new.ravel()) - 1
    s = int(seg[-1]) + 1 if seg.size else 0
    a = np.bincount(seg, np.take_along_axis(A, order, axis=1).ravel(), s)
    b = np.bincount(seg, np.take_along_axis(B, order, axis=1).ravel(), s)
    c = np.bincount(seg, np.take_along_axis(C, order, axis=1).ravel(), s)
    row = np.repeat(np.arange(m, dtype=np.int64), new.sum(axis=1))
    first = new.ravel()
    return row, a, b, c, K0.ravel()[first], K1.ravel()[first]


def _old_law_keys(A, B, C, beta, digits=D.LAW_KEY_DIGITS, swapped=False, merged=None):
    """law_keys as before (vectorised)."""
    m = A.shape[0]
    row, a, b, c, k0, k1 = _old_merge_rows(A, B, C) if merged is None else merged
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        r0 = np.round(a / c, digits)
        r1 = np.round(b / c, digits)
    cr = np.round(c, digits)
    if swapped:
        r0, r1 = r1, r0
        order = np.lexsort((k0, k1, row))
        r0, r1, cr = r0[order], r1[order], cr[order]
    rows = np.empty((r0.size, 3))
    rows[:, 0], rows[:, 1], rows[:, 2] = r0, r1, cr
    rows += 0.0
    buf = rows.tobytes()
    bounds_ = np.searchsorted(row, np.arange(m + 1)) * 24
    betas = np.broadcast_to(np.round(np.asarray(beta, dtype=np.float64), digits), (m,)).tolist()
    bl = bounds_.tolist()
    return [(betas[i], buf[bl[i]:bl[i + 1]]) for i in range(m)]


def _old_decomposition(a, b, c, beta=None, label=""):
    """The per-array validation as before (the slow path, run on its own)."""
    d = object.__new__(D.Decomposition)
    for name, v in (("a", a), ("b", b), ("c", c), ("beta", beta), ("label", label)):
        object.__setattr__(d, name, v)
    d._validate_slow()
    return d


def _old_law_key(self, digits=D.LAW_KEY_DIGITS):
    if digits == D.LAW_KEY_DIGITS:
        k = self.__dict__.get("_law_key")
        if k is None:
            k = D.law_keys(self.a[None, :], self.b[None, :], self.c[None, :], self.beta)[0]
            object.__setattr__(self, "_law_key", k)
        return k
    return D.law_keys(self.a[None, :], self.b[None, :], self.c[None, :], self.beta, digits=digits)[0]


def _old_trusted(cls, a, b, c, beta, label="", key=None, swap_key=None, share=False):
    self = object.__new__(cls)
    for name, arr in (("a", a), ("b", b), ("c", c)):
        arr = np.array(arr, dtype=np.float64)
        arr.setflags(write=False)
        object.__setattr__(self, name, arr)
    object.__setattr__(self, "beta", float(beta))
    object.__setattr__(self, "label", label)
    if key is not None:
        object.__setattr__(self, "_law_key", key)
    if swap_key is not None:
        object.__setattr__(self, "_swap_key", swap_key)
    return self


def _old_swapped(self):
    return D.Decomposition._trusted(self.b, self.a, self.c, self.beta, label=self.label + " (swapped)",
                                    key=self.__dict__.get("_swap_key"), swap_key=self.__dict__.get("_law_key"))


def _old_simplified(self, rtol=D.RATIO_RTOL):
    a, b, c = D.merge_by_ratio(self.a, self.b, self.c, rtol)
    return D.Decomposition(a, b, c, self.beta, label=self.label)


def _old_product(factors, label="", memo=None):
    a = b = c = np.ones(1)
    for f in factors:
        s = f.simplified()
        a = np.multiply.outer(a, s.a).ravel()
        b = np.multiply.outer(b, s.b).ravel()
        c = np.multiply.outer(c, s.c).ravel()
        a, b, c = D.merge_by_ratio(a, b, c)
    return D.Decomposition(a, b, c, None, label=label)


def _old_lower_swap_keys(monkeypatch):
    """MatrixMechanism._lower_packed without the batched swap keys of the lower triples: a plain list of
    decompositions (their swap keys computed per family)."""
    orig = M.MatrixMechanism._lower_packed

    def lower(self):
        out = list(orig(self))
        for f in out:
            f.__dict__.pop("_swap_key", None)
        return out

    monkeypatch.setattr(M.MatrixMechanism, "_lower_packed", lower)


@pytest.fixture
def old_path(monkeypatch):
    """Run the old construction everywhere: vectorised merge / keys, per-array validation, no caches."""
    monkeypatch.setattr(D, "merge_rows", _old_merge_rows)
    monkeypatch.setattr(M, "merge_rows", _old_merge_rows)
    monkeypatch.setattr(D, "law_keys", _old_law_keys)
    monkeypatch.setattr(M, "law_keys", _old_law_keys)
    monkeypatch.setattr(M, "ratio_keys", _old_ratio_keys)

    def post_init(self):
        self._validate_slow()

    monkeypatch.setattr(D.Decomposition, "__post_init__", post_init)
    monkeypatch.setattr(D.Decomposition, "law_key", _old_law_key)
    monkeypatch.setattr(D.Decomposition, "_trusted", classmethod(_old_trusted))
    monkeypatch.setattr(D.Decomposition, "swapped", _old_swapped)
    monkeypatch.setattr(D.Decomposition, "simplified", _old_simplified)
    monkeypatch.setattr(D, "product_decomposition", _old_product)
    monkeypatch.setattr(compose, "product_decomposition", _old_product)
    _old_lower_swap_keys(monkeypatch)
    monkeypatch.setattr(compose.Silent, "_dec", lambda self: D.Decomposition([1.0], [1.0], [1.0], 0.0, label="⊥"))
    bounds._FAMILY_CACHE.clear()
    yield
    bounds._FAMILY_CACHE.clear()


def _batch(rng, m, k, ties):
    """m decompositions of k components; with ties, some columns are copies / multiples (equal ratios)."""
    A, B, C = rng.random((3, m, k)) ** 2 + 1e-3
    if ties and k > 1:
        j = rng.integers(0, k, size=k // 2)
        f = rng.choice([1.0, 0.5, 3.0], size=j.size)
        A[:, : j.size], B[:, : j.size], C[:, : j.size] = A[:, j] * f, B[:, j] * f, C[:, j] * f
    return A, B, C


def _same(x, y):
    assert len(x) == len(y)
    for u, v in zip(x, y):
        assert u.dtype == v.dtype
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("seed", range(6))
def test_merge_rows_equals_reference(seed):
    """The compiled merge (stable sort by the merge keys, sequential sums) equals the numpy reference (np.lexsort,
    np.bincount) bit for bit, for short rows (insertion sort) and long ones (merge sort)."""
    rng = np.random.default_rng(seed)
    for m, k in [(1, 1), (1, 4), (1, 9), (3, 5), (8, 8), (2, 0), (1, 64), (4, 16), (30, 7), (3, 65), (2, 100),
                 (2, 517)]:
        for ties in (False, True):
            A, B, C = _batch(rng, m, k, ties)
            fast = D.merge_rows(A, B, C)
            _same(fast, _old_merge_rows(A, B, C))
            if ties and k > 1:
                assert fast[1].size < m * k          # the ties were merged


@pytest.mark.parametrize("seed", range(6))
def test_law_keys_equal_reference(seed):
    """The compiled law key equals the numpy reference (np.round, lexsort for the swapped order) byte for byte."""
    rng = np.random.default_rng(100 + seed)
    for m, k in [(1, 1), (1, 5), (3, 4), (6, 7), (1, 40), (40, 9), (2, 300)]:
        for ties in (False, True):
            A, B, C = _batch(rng, m, k, ties)
            for beta in (0.0, 0.123456789012345, rng.random(m)):
                for swapped in (False, True):
                    for digits in (D.LAW_KEY_DIGITS, 6):
                        assert D.law_keys(A, B, C, beta, digits=digits, swapped=swapped) == \
                            _old_law_keys(A, B, C, beta, digits=digits, swapped=swapped)


def _key_round(v):
    """The law key's rounding of ``v`` (as β, and as the first ratio of a one-component row)."""
    from shuffleamp._ext import kernels
    z = np.zeros(1, dtype=np.int64)
    beta, buf = kernels.law_key_rows(z, np.array([v]), np.array([0.0]), np.array([1.0]), z, z, np.array([v]), 1,
                                     1e12, False)[0]
    return beta, np.frombuffer(buf)[0]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-300, 1e300), min_size=1, max_size=12),
       st.lists(st.floats(1e-300, 1e300), min_size=1, max_size=12))
def test_ratio_keys_and_rounding_as_before(num, den):
    k = min(len(num), len(den))
    x, y = np.array(num[:k]), np.array(den[:k])
    np.testing.assert_array_equal(D.ratio_keys(x, y), _old_ratio_keys(x, y))
    for v in (x / y).tolist() + num:
        want = np.round(np.array([v]), D.LAW_KEY_DIGITS)[0]
        assert _key_round(v) == (want, want)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_ratio_keys_edges_as_before():
    vals = np.array([0.0, 5e-324, 1e-300, 1e-200, 0.5, 1.0, 3.0, 1e200, 1e308, np.inf, np.nan])
    num, den = np.meshgrid(vals, vals)
    np.testing.assert_array_equal(D.ratio_keys(num, den), _old_ratio_keys(num, den))
    np.testing.assert_array_equal(D.ratio_keys(num, den, 1e-6), _old_ratio_keys(num, den, 1e-6))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_key_rounding_edges():
    for v in [0.0, -0.0, 0.5e-12, 1.5e-12, 2.5e-12, 4503599627370495.5e-12, 1e296, 1e300, math.inf, -2.5e-12]:
        want = np.round(np.array([v]), 12)[0]
        assert _key_round(v) == (want, want)


@pytest.mark.parametrize("case", [
    ([0.5, 0.5], [0.25, 0.75], [0.2, 0.3], None),
    ([0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.0], None),          # a dropped empty component
    ([0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.1], 0.4),           # c-only component kept
    ([0.5, 0.5 + 1e-17, -1e-16], [0.25, 0.75, 0.0], [0.2, 0.3, 0.0], None),  # tiny negative: slow path
    ([[0.1, 0.9]], [[0.9, 0.1]], [[0.1, 0.1]], 0.8),                       # 2-D input is ravelled
])
def test_decomposition_validation_as_before(case):
    a, b, c, beta = case
    new = D.Decomposition(a, b, c, beta, label="x")
    old = _old_decomposition(a, b, c, beta, label="x")
    for name in ("a", "b", "c"):
        u, v = getattr(new, name), getattr(old, name)
        np.testing.assert_array_equal(u, v)
        assert u.dtype == np.float64 and not u.flags.writeable
    assert new.beta == old.beta and type(new.beta) is type(old.beta)


@pytest.mark.parametrize("case, err, param", [
    (([0.5, 0.5], [0.5, 0.5], [0.5, np.nan]), ParameterError, "c"),
    (([0.5, 0.6], [0.5, 0.5], [0.2, 0.2]), ParameterError, "a"),
    (([0.5, 0.5], [0.5, 0.4], [0.2, 0.2]), ParameterError, "b"),
    (([0.5, 0.5], [0.5, 0.5], [0.7, 0.7]), ParameterError, "c"),
    (([0.5, 0.5], [0.5, 0.5], [0.5, -0.1]), ParameterError, "c"),
    (([0.5, 0.5], [0.5, 0.5], [0.5]), ParameterError, "decomposition"),
    (([0.5, 0.5], [0.5, 0.5], [0.5, 0.0]), NotLDPError, "decomposition"),
])
def test_decomposition_errors_as_before(case, err, param):
    with pytest.raises(err) as e:
        D.Decomposition(*case)
    assert e.value.parameter == param


def _mechanisms():
    out = [M.KRR(0.7, 10), M.KRR(3.1, 2), M.KRR(9.0, 700), M.BLH(0.4, None), M.BLH(2.5, 7), M.RAPPOR(1.2, None),
           M.RAPPOR(0.3, 5), M.OUE(1.9, None), M.OUE(0.6, 9), M.HadamardResponse(1.1, 16),
           M.HadamardResponse(4.2, 256)]
    out += [compose.parallel([(0.3, M.KRR(1.0, 12)), (0.7, M.KRR(2.5, 12))]),
            compose.subsample(M.BLH(1.4, 6), 0.2), compose.subsample(M.HadamardResponse(0.8, 8), 0.05),
            compose.joint(M.KRR(0.5, 5), M.RAPPOR(0.5, None)),
            compose.joint(M.BLH(0.3, None), M.HadamardResponse(0.3, 4), M.OUE(0.3, 3)),
            compose.joint(M.BLH(0.0331, 7), M.HadamardResponse(0.0331, 16), M.HadamardResponse(0.0331, 8)),
            compose.joint(M.KRR(0.9, 6), M.KRR(0.9, 6), M.RAPPOR(0.9, 4))]
    g = np.random.default_rng(5)
    for D_, Y in [(3, 4), (9, 4), (6, 11)]:
        P = np.exp(0.5 * 2.0 * g.random((D_, Y)))
        out.append(M.MatrixMechanism(P / P.sum(axis=1, keepdims=True)))
    return out


def _family_arrays(fams):
    out = []
    for f in fams:
        if isinstance(f, D.Decomposition):
            out.append((f.a.tobytes(), f.b.tobytes(), f.c.tobytes(), f.beta, D.law_key(f)))
        else:
            out.append((D.law_key(f),))
    return out


@pytest.mark.parametrize("index", range(len(_mechanisms())))
def test_families_and_epsilon_as_before(index, request):
    build = lambda: _mechanisms()[index]                       # noqa: E731  fresh objects, no caches
    bounds._FAMILY_CACHE.clear()
    new = {w: _family_arrays(bounds._families(build(), "optimal", w)) for w in ("upper", "lower")}
    n, delta = 1000, 1e-6
    r_new = sa.epsilon(build(), n, delta)
    request.getfixturevalue("old_path")
    old = {w: _family_arrays(bounds._families(build(), "optimal", w)) for w in ("upper", "lower")}
    r_old = sa.epsilon(build(), n, delta)
    assert new == old
    assert (r_new.upper, r_new.lower) == (r_old.upper, r_old.lower)


@pytest.mark.parametrize("seed", range(4))
def test_law_key_pair_and_lazy_swap_merge_as_before(seed):
    rng = np.random.default_rng(300 + seed)
    for k in (1, 2, 5, 12, 13, 30):
        A, B, C = _batch(rng, 1, k, ties=bool(seed % 2))
        a, b, c = A[0] / A[0].sum(), B[0] / B[0].sum(), C[0] / C[0].sum() * 0.7
        d = D.Decomposition(a, b, c)
        want = _old_law_keys(d.a[None], d.b[None], d.c[None], d.beta)[0]
        want_sw = _old_law_keys(d.a[None], d.b[None], d.c[None], d.beta, swapped=True)[0]
        assert d.law_key() == want                                  # computes the pair
        sw = d.swapped()
        assert sw.law_key() == want_sw
        _same(sw._merge(), _old_merge_rows(d.b[None], d.a[None], d.c[None]))    # derived lazily
        s2 = sw.simplified()
        old = _old_decomposition(*D.merge_by_ratio(d.b, d.a, d.c), d.beta)
        for name in ("a", "b", "c"):
            np.testing.assert_array_equal(getattr(s2, name), getattr(old, name))
        assert sw.swapped().law_key() == want


@pytest.mark.parametrize("build", [
    lambda: compose.joint(M.KRR(0.5, 5), M.RAPPOR(0.5, None)),
    lambda: compose.parallel([(0.4, M.KRR(1.0, 6)), (0.6, M.KRR(2.0, 6))]),
    lambda: compose.subsample(M.OUE(1.0, 4), 0.3),
])
def test_composed_families_cached_on_the_instance(build):
    m = build()
    r1 = sa.epsilon(m, 5000, 1e-7)
    cache = m.__dict__["_families_cache"]
    assert set(cache) == {"upper", "lower"}
    fams = {w: cache[w] for w in cache}
    r2 = sa.epsilon(m, 5000, 1e-7)
    assert all(m.__dict__["_families_cache"][w] is fams[w] for w in fams)      # not rebuilt
    r3 = sa.epsilon(build(), 5000, 1e-7)                                       # a fresh instance: same numbers
    assert (r1.upper, r1.lower) == (r2.upper, r2.lower) == (r3.upper, r3.lower)


def _small_case(rng, k, ties, zeros):
    """Masses of k components as Python floats (a, b sum to 1, c + beta = 1): ties give equal ratios, zeros
    empty or c-only components."""
    A, B, C = rng.random((3, k)) ** 2 + 1e-3
    if ties and k > 1:
        j = rng.integers(0, k, size=k // 2)
        f = rng.choice([1.0, 0.5, 3.0], size=j.size)
        A[: j.size], B[: j.size], C[: j.size] = A[j] * f, B[j] * f, C[j] * f
    if zeros and k > 2:
        A[0] = B[0] = C[0] = 0.0                  # an empty component (dropped)
        A[1] = B[1] = 0.0                         # a c-only component (kept)
    a, b = (A / A.sum()).tolist(), (B / B.sum()).tolist()
    c = (C / C.sum() * 0.7).tolist()
    return a, b, c, 1.0 - float(np.sum(C / C.sum() * 0.7))


@pytest.mark.parametrize("seed", range(4))
def test_small_decomposition_equals_numpy_constructor(seed):
    """Families built from Python floats (``small_decomposition``): the same arrays, β, law key and swapped law
    key as ``Decomposition(...)`` and ``.simplified()`` of the reference code, with ties (merged components),
    empty and c-only components."""
    rng = np.random.default_rng(700 + seed)
    for k in range(1, 18):
        for ties in (False, True):
            for zeros in (False, True):
                a, b, c, beta = _small_case(rng, k, ties, zeros)
                for simplify in (False, True):
                    new = D.small_decomposition(a, b, c, beta, label="x", simplify=simplify)
                    old = _old_decomposition(np.array(a), np.array(b), np.array(c), beta, label="x")
                    if simplify:
                        old = _old_simplified(old)
                    for name in ("a", "b", "c"):
                        u, v = getattr(new, name), getattr(old, name)
                        assert u.dtype == np.float64 and not u.flags.writeable
                        assert u.tobytes() == v.tobytes()
                    assert new.beta == old.beta and new.label == "x"
                    want = _old_law_keys(old.a[None], old.b[None], old.c[None], old.beta)[0]
                    want_sw = _old_law_keys(old.a[None], old.b[None], old.c[None], old.beta, swapped=True)[0]
                    assert new.law_key() == want
                    assert new.swapped().law_key() == want_sw
                    s_new, s_old = new.simplified(), _old_simplified(old)        # via the cached merge
                    for name in ("a", "b", "c"):
                        assert getattr(s_new, name).tobytes() == getattr(s_old, name).tobytes()
                    assert s_new.law_key() == _old_law_keys(s_old.a[None], s_old.b[None], s_old.c[None],
                                                            s_old.beta)[0]
                    assert s_new.swapped().law_key() == _old_law_keys(s_old.a[None], s_old.b[None], s_old.c[None],
                                                                      s_old.beta, swapped=True)[0]


@pytest.mark.parametrize("case, err, param", [
    (([0.5, 0.5], [0.5, 0.5], [0.5, np.nan], 0.0), ParameterError, "c"),
    (([0.5, 0.6], [0.5, 0.5], [0.2, 0.2], 0.6), ParameterError, "a"),
    (([0.5, 0.5], [0.5, 0.4], [0.2, 0.2], 0.6), ParameterError, "b"),
    (([0.5, 0.5], [0.5, 0.5], [0.7, 0.7], 0.0), ParameterError, "beta"),
    (([0.5, 0.5], [0.5, 0.5], [0.5, -0.1], 0.6), ParameterError, "c"),
    (([0.5, 0.5], [0.5, 0.5], [0.5], 0.5), ParameterError, "decomposition"),
    (([0.5, 0.5], [0.5, 0.5], [0.5, 0.0], 0.5), NotLDPError, "decomposition"),
])
def test_small_decomposition_errors_as_numpy_constructor(case, err, param):
    a, b, c, beta = case
    for simplify in (False, True):
        with pytest.raises(err) as e:
            D.small_decomposition(a, b, c, beta, simplify=simplify)
        assert e.value.parameter == param


@pytest.mark.parametrize("m", [M.KRR(0.7, 10), M.KRR(3.1, 3), M.KRR(2.0, 2), M.KRR(60.0, 50), M.BLH(0.4, None),
                               M.BLH(2.5, 2), M.RAPPOR(140.0, 9), M.OUE(0.05, 2), M.HadamardResponse(1.1, 2048)])
def test_closed_form_families_as_numpy_constructor(m, request):
    """The closed-form families (from_pqr, k-RR / bit / HR lower datasets) and those of the reference
    construction (numpy merge and keys, per-array validation): the same arrays, β, labels and law keys."""
    bounds._FAMILY_CACHE.clear()
    fams = {w: bounds._families(m, "optimal", w) for w in ("upper", "lower")}
    new = {w: (_family_arrays(fams[w]), [f.label for f in fams[w]]) for w in fams}
    request.getfixturevalue("old_path")
    old = {w: bounds._families(m, "optimal", w) for w in ("upper", "lower")}
    for w in fams:
        assert new[w] == (_family_arrays(old[w]), [f.label for f in old[w]])


@pytest.mark.parametrize("seed", range(3))
def test_small_mixture_as_numpy_mixture(seed, monkeypatch):
    """decomposition.mixture of few components: the same arrays, β and law keys as with the numpy reference merge
    (ties across parts merge; a denormal weight underflows some c to 0)."""
    rng = np.random.default_rng(900 + seed)
    for k1, k2 in [(1, 1), (2, 3), (4, 4), (3, 7), (8, 8), (9, 9)]:
        for w in (0.5, 0.3, 1e-310):
            f1 = D.small_decomposition(*_small_case(rng, k1, True, False), simplify=True)
            f2 = f1 if k1 == k2 and w == 0.5 else D.small_decomposition(*_small_case(rng, k2, False, False))
            parts = [(w, f1), (1.0 - w, f2)]
            new = D.mixture(parts, label="m")
            with monkeypatch.context() as mp:
                mp.setattr(D, "merge_rows", _old_merge_rows)
                old = D.mixture(parts, label="m")
            for name in ("a", "b", "c"):
                assert getattr(new, name).tobytes() == getattr(old, name).tobytes()
            assert new.beta == old.beta and new.label == "m"
            assert new.law_key() == _old_law_keys(old.a[None], old.b[None], old.c[None], old.beta)[0]
            assert new.swapped().law_key() == _old_law_keys(old.a[None], old.b[None], old.c[None], old.beta,
                                                            swapped=True)[0]


@pytest.mark.parametrize("eps0", [0.9, 1e-9, 1e-12, 149.0])
@pytest.mark.parametrize("d", [4, 8, 16, 64, 128, 1024])
def test_hr_matrix_lower_as_before(d, eps0):
    """HR's lower datasets from the matrix rows (d <= 1024): merged by the periodic column groups and keyed in
    plain Python, the same arrays, β, labels and law keys as ``Decomposition(rows...).simplified()`` (at
    eps0 = 1e-12 every column has the same merge keys: one group)."""
    m = M.HadamardResponse(eps0, d)
    new = m.lower_decompositions()
    x2s = [3] + ([4] if d >= 8 else [])
    rows = m._rows([1, 2] + x2s)
    rows = rows / rows.sum(axis=1, keepdims=True)
    old = [_old_simplified(_old_decomposition(rows[0], rows[1], rows[2 + i], 0.0)) for i in range(len(x2s))]
    assert len(new) == len(old)
    for f, g in zip(new, old):
        for name in ("a", "b", "c"):
            assert getattr(f, name).tobytes() == getattr(g, name).tobytes()
        assert f.beta == g.beta
        assert f.law_key() == _old_law_keys(g.a[None], g.b[None], g.c[None], g.beta)[0]
        assert f.swapped().law_key() == _old_law_keys(g.a[None], g.b[None], g.c[None], g.beta, swapped=True)[0]
    assert [f.label for f in new] == ["dataset (1 | 2; others 3 = 1 xor 2)",
                                      "dataset (1 | 2; others 4, independent)"][:len(x2s)]


def _extreme_mechanisms():
    return [M.KRR(1e-6, 2), M.KRR(149.0, 3), M.KRR(0.05, 10 ** 6), M.BLH(1e-5, 3), M.BLH(149.0, None),
            M.RAPPOR(1e-4, 2), M.RAPPOR(100.0, 40), M.OUE(149.0, 3), M.OUE(1e-6, None),
            M.HadamardResponse(149.0, 4), M.HadamardResponse(1e-6, 1024), M.HadamardResponse(30.0, 2048),
            compose.parallel([(1e-9, M.KRR(0.3, 5)), (1 - 1e-9, M.KRR(120.0, 5))]),
            compose.subsample(M.RAPPOR(2.0, 7), 1e-12), compose.subsample(M.KRR(1e-7, 2), 0.999)]


@pytest.mark.parametrize("index", range(len(_extreme_mechanisms())))
def test_families_at_extremes_as_before(index, request):
    """Extreme eps0, domains and weights: the families of the plain-Python path equal the old path's."""
    build = lambda: _extreme_mechanisms()[index]                # noqa: E731  fresh objects, no caches
    bounds._FAMILY_CACHE.clear()
    new = {w: _family_arrays(bounds._families(build(), "optimal", w)) for w in ("upper", "lower")}
    request.getfixturevalue("old_path")
    old = {w: _family_arrays(bounds._families(build(), "optimal", w)) for w in ("upper", "lower")}
    assert new == old
