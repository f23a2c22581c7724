"""Time and memory budgets, up-front refusals, the compiled per-ε path,
the convex chord of the ε search and the lazy maximum over many families.

No test asserts a duration: each either expects a typed ResourceLimitError (raised before or while the
work runs, bounded by the call's own ``max_seconds``) or checks an answer against an independent
computation (brute-force enumeration in ``tests/oracle.py``, or a direct certified evaluation).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffleamp as sa
from shuffleamp import bounds, exact
from shuffleamp.bounds import _chernoff_bounds, _chord_bracket
from shuffleamp.errors import ParameterError, ResourceLimitError
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse, Laplace, MatrixMechanism

from oracle import gparv_positive_part


def _random_matrix(D, Y, eps0, seed=0):
    g = np.random.default_rng(seed)
    P = np.exp(0.5 * eps0 * g.random((D, Y)))
    return P / P.sum(axis=1, keepdims=True)


# ------------------------------------------------------------------ budget keywords
@pytest.mark.parametrize("kw,bad", [("max_seconds", 0.0), ("max_seconds", -1.0), ("max_seconds", float("nan")),
                                    ("max_memory_gb", 0.0), ("max_memory_gb", -2.0)])
def test_budget_keywords_validated(kw, bad):
    with pytest.raises(ParameterError) as e:
        sa.epsilon(KRR(1.0, 10), 1000, 1e-6, **{kw: bad})
    assert e.value.parameter == kw
    with pytest.raises(ParameterError):
        sa.delta(KRR(1.0, 10), 1000, 0.5, **{kw: bad})


def test_spent_time_budget_raises_typed_error():
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(KRR(1.0, 10), 10**4, 1e-8, max_seconds=1e-9)
    assert e.value.parameter == "max_seconds" and e.value.resource == "time"


def test_memory_budget_refuses_before_allocating():
    # the FFT window needs far more than 1 kB: refused before allocation, naming max_memory_gb
    with pytest.raises(ResourceLimitError) as e:
        sa.delta(KRR(1.0, 10), 10**6, 0.01, evaluator="fft", max_memory_gb=1e-6)
    assert e.value.parameter == "max_memory_gb" and e.value.resource == "memory"


def test_larger_budget_is_honoured():
    r = sa.epsilon(KRR(1.0, 10), 10**6, 1e-8, max_seconds=math.inf, max_memory_gb=64.0)
    assert r.upper == sa.epsilon(KRR(1.0, 10), 10**6, 1e-8).upper
    assert r.lower == sa.epsilon(KRR(1.0, 10), 10**6, 1e-8).lower


# ------------------------------------------------------------------ up-front refusals
def test_large_matrix_refused_up_front():
    m = MatrixMechanism(_random_matrix(300, 40, 1.0))
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(m, 10**5, 1e-8)
    assert e.value.parameter == "max_seconds"
    assert "300x40" in str(e.value)


def test_joint_of_twelve_distinct_krr_refused_up_front():
    m = sa.joint(*[KRR(0.1 + 0.037 * i, 10) for i in range(12)])
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(m, 10**5, 1e-8)
    assert e.value.parameter == "max_seconds"


def test_many_atom_matrix_refused_up_front():
    m = MatrixMechanism(_random_matrix(2, 100_000, 1.0))
    with pytest.raises(ResourceLimitError) as e:
        sa.epsilon(m, 10**5, 1e-8)
    assert e.value.parameter == "max_seconds"


# ------------------------------------------------------------------ compiled per-ε path equals delta_exact
@pytest.mark.parametrize("mech", [KRR(1.0, 10), BLH(2.0), RAPPOR(4.0, 5), OUE(0.5), HadamardResponse(1.0, 64)])
@pytest.mark.parametrize("n", [3, 40, 2000, 10**7])
def test_family_path_matches_delta_exact(mech, n):
    for f in bounds._families(mech, "optimal", "upper") + bounds._families(mech, "optimal", "lower"):
        for eps in (0.1 * mech.eps0, 0.6 * mech.eps0):
            for mode in ("upper", "lower"):
                a = exact.delta_exact_family(f, n, eps, mode)
                b = exact.delta_exact(f.gparv(eps), n, mode)
                assert a.delta == pytest.approx(b.delta, rel=1e-12, abs=1e-300)
                assert a.evaluator == b.evaluator or {a.evaluator, b.evaluator} <= {"exact", "chernoff"}


# ------------------------------------------------------------------ convexity in e^eps (the chord of the ε search)
@pytest.mark.parametrize("mech", [KRR(2.0, 3), BLH(1.0), RAPPOR(3.0, 4)])
@pytest.mark.parametrize("n", [4, 7])
def test_delta_convex_in_exp_eps_oracle(mech, n):
    """δ*(ε) = (1/n)E[(ΣG)_+] is convex in x = e^ε: checked on the independent enumeration oracle."""
    for f in bounds._families(mech, "optimal", "upper"):
        xs = np.exp(np.linspace(0.0, mech.eps0, 9))
        d = [gparv_positive_part(*(lambda g: (g.values, g.probs))(f.gparv(math.log(x))), n) for x in xs]
        for i in range(1, len(xs) - 1):
            chord = d[i - 1] + (d[i + 1] - d[i - 1]) * (xs[i] - xs[i - 1]) / (xs[i + 1] - xs[i - 1])
            assert d[i] <= chord * (1 + 1e-12) + 1e-18
        assert d[-1] == 0.0      # vanishes at eps0 (pure eps0-LDP)


def test_chord_root_is_certified():
    pts = {0.5: (1e-3, None), 0.9: (1e-7, None), 1.0: (0.0, None)}
    eps_c, eps_e, e_bad, e_ok = _chord_bracket(pts, 1e-6)
    assert (e_bad, e_ok) == (0.5, 0.9) and e_bad <= eps_e <= eps_c <= e_ok
    x_b, x_o, x_c = math.exp(0.5), math.exp(0.9), math.exp(eps_c)
    chord = 1e-3 + (1e-7 - 1e-3) * (x_c - x_b) / (x_o - x_b)
    assert chord <= 1e-6


@pytest.mark.parametrize("mech,n,target", [(KRR(2.0, 3), 6, 1e-3), (KRR(1.0, 5), 5, 1e-2), (BLH(1.5), 5, 1e-3)])
def test_epsilon_upper_sound_against_oracle(mech, n, target):
    """The ε answer (chord or evaluated) has a true optimal δ <= target (independent enumeration)."""
    r = sa.epsilon(mech, n, target)
    for f in bounds._families(mech, "optimal", "upper"):
        g = f.gparv(r.upper)
        assert gparv_positive_part(g.values, g.probs, n) <= target * (1 + 1e-9)
    # the lower answer is the exact divergence of the best documented dataset: at r.lower its δ reaches the target
    best = max(gparv_positive_part(f.gparv(r.lower).values, f.gparv(r.lower).probs, n)
               for f in bounds._families(mech, "optimal", "lower"))
    assert best >= target * (1 - 1e-9) or r.lower == 0.0


# ------------------------------------------------------------------ Laplace at small n
@pytest.mark.parametrize("eps0,n,target", [(1.0, 10, 1e-8), (1.0, 2, 1e-6)])
def test_laplace_small_n_answers_or_refuses(eps0, n, target):
    try:
        r = sa.epsilon(Laplace(eps0), n, target)
    except ResourceLimitError as e:          # bounded by the default budget, typed
        assert e.parameter == "max_seconds"
        return
    assert 0.0 <= r.lower <= r.upper <= eps0
    # delta(eps0) = 0 and delta is convex in e^eps: the answer is near eps0 for these small targets
    assert r.upper >= 0.99 * eps0


# ------------------------------------------------------------------ Chernoff screening bound and the lazy maximum
@pytest.mark.parametrize("n", [5, 300, 10**6])
def test_chernoff_bounds_are_upper_bounds(n):
    m = MatrixMechanism(_random_matrix(5, 4, 2.0, seed=3))
    fams = bounds._families(m, "optimal", "upper")
    for eps in (0.2, 1.0):
        ch = _chernoff_bounds(fams, n, eps)
        for f, c in zip(fams, ch):
            assert exact.delta_exact(f.gparv(eps), n, "lower").delta <= c


def test_lazy_maximum_matches_full_maximum():
    """Many families (> LAZY_FAMILIES): the ε found on the screened subset is certified for all."""
    m = MatrixMechanism(_random_matrix(8, 6, 1.0, seed=1))
    assert len(bounds._families(m, "optimal", "upper")) > bounds.LAZY_FAMILIES
    r = sa.epsilon(m, 2000, 1e-6)
    d = sa.delta(m, 2000, r.upper)                  # evaluates every family at the answer
    assert d.upper <= 1e-6 * (1 + 1e-9)
    assert r.lower <= r.upper


@pytest.mark.parametrize("value", [1.0, 0.0, -0.0, -1.0, 2, 0, -3, 2 ** 62, 2 ** 70, 5e-324, 1e308, 0.5,
                                   float("nan"), float("inf"), -float("inf"), np.float64(2.5), np.float64("nan")])
def test_validate_real_scalar_path_matches_array_path(value):
    """``_validate.real``'s scalar fast path (Python / numpy floats, plain ints) gives the value, type and error
    message of its array path (the same value as a 0-d array)."""
    from shuffleamp import _validate as V
    from shuffleamp.errors import ParameterError

    def run(v, **kw):
        try:
            out = V.real("x", v, **kw)
            return "ok", out, type(out)
        except ParameterError as exc:
            return "error", str(exc), exc.parameter
    for kw in [{}, dict(lo=0.0, lo_open=True), dict(lo=0, hi=1), dict(hi=1, hi_open=True, allow_inf=True),
               dict(allow_inf=True, lo=-1.0), dict(lo=-2, hi=2, lo_open=True, hi_open=True)]:
        got = run(value, **kw)
        ref = run(np.asarray(value, dtype=np.float64), **kw)
        if got[0] == "ok" and ref[0] == "ok":
            assert got[1] == ref[1] and type(got[1]) is float and type(ref[1]) is float
            assert math.copysign(1.0, got[1]) == math.copysign(1.0, ref[1])
        else:
            assert got == ref


def _oriented_reference(mech):
    """``compose._oriented`` written out plainly: every upper decomposition simplified, and its swap, de-duplicated
    by an explicit law-key set."""
    from shuffleamp.decomposition import Decomposition, law_key
    out, seen = [], set()
    for d in mech.upper_decompositions():
        for f in (d, d.swapped()):
            f = f.simplified() if isinstance(f, Decomposition) else f
            k = law_key(f)
            if k not in seen:
                seen.add(k)
                out.append(f)
    return out


@pytest.mark.parametrize("mech", [KRR(1.0, 5), KRR(0.5, 2), BLH(1.0), RAPPOR(1.0, 4), OUE(1.0, 4),
                                  HadamardResponse(1.0, 8), MatrixMechanism(_random_matrix(3, 4, 1.0, seed=3)),
                                  MatrixMechanism(_random_matrix(4, 3, 2.0, seed=5)), Laplace(1.0)])
def test_oriented_families_skip_only_equal_swaps(mech):
    """``_oriented`` skips a swapped pair only when its law key equals the pair's own, and ``dedupe`` of at most
    one family computes no key: the same families (by law key) as the plain definition."""
    from shuffleamp import compose
    from shuffleamp.decomposition import dedupe, law_key
    got, ref = compose._oriented(mech), _oriented_reference(mech)
    assert [law_key(f) for f in got] == [law_key(f) for f in ref]
    assert dedupe([]) == [] and dedupe(iter(got[:1])) == got[:1]


@pytest.mark.parametrize("mech", [
    sa.compose.parallel([(0.3, KRR(1.0, 5)), (0.7, KRR(0.4, 5))]),
    sa.compose.parallel([(0.5, KRR(1.0, 2)), (0.5, KRR(2.0, 2))]),
    sa.compose.subsample(OUE(1.0, 4), 0.2), sa.compose.subsample(BLH(2.0, 3), 0.05),
    sa.compose.subsample(HadamardResponse(1.0, 8), 0.5)])
def test_parallel_families_match_plain_construction(mech):
    """The parallel / subsample upper and lower families equal (by law key) mixtures built from the plainly
    oriented components, and the certified interval holds against the brute-force divergence at small n."""
    from shuffleamp.decomposition import law_key, mixture
    import itertools
    parts = mech._parts()
    ws = [w for w, _ in parts]
    if mech._exact is None:
        ref = {law_key(mixture(list(zip(ws, combo))))
               for combo in itertools.product(*[_oriented_reference(c) for _, c in parts])}
        assert {law_key(f) for f in mech.upper_decompositions()} == ref
    low = mech.lower_cases()
    assert len({(p, law_key(f)) for p, f in low}) == len(low) >= 1
    P = np.asarray(mech.matrix())
    if P.shape[0] <= 4 and P.shape[1] <= 8:
        r = sa.epsilon(mech, 4, 1e-3)
        assert oracle_worst(P, 4, r.upper) <= 1e-3 * (1 + 1e-9)


def oracle_worst(P, n, eps):
    from oracle import worst_dataset_divergence
    return worst_dataset_divergence(P, n, eps)
