"""Comparison methods (shuffleamp.baselines): labels, regimes, formulas and sanity relations.

* every method is selectable through ``method=`` and ``--method``, ``optimal`` stays the default
  everywhere and no unsound method is a default;
* every result carries ``sound``, ``kind`` and ``settings["regime"]``; out-of-regime requests raise
  :class:`OutOfRegimeError` (never NaN);
* formula checks: exact clone vs brute force and vs the FFT engine, blanket constants vs the
  exact privacy-amplification random variable, the Bennett closed form vs a windowed binomial sum,
  the variation-ratio β table vs exact total variations, μ-GDP personalized API;
* sanity relations (grid + hypothesis): every sound upper method >= optimal >= exact lower,
  clone >= optimal, Hoeffding and Bennett >= optimal;
* the ``compare`` command.
"""

from __future__ import annotations

import inspect
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binom

import shuffleamp as sa
from shuffleamp import baselines as B
from shuffleamp import bounds, cli
from shuffleamp.cli import main
from shuffleamp.evaluate import delta_fft
from shuffleamp.errors import OutOfRegimeError, ParameterError
from shuffleamp.decomposition import clone_decomposition
from shuffleamp.mechanisms import laplace_upper_gparv
from shuffleamp.mechanisms import BLH, KRR, OUE, RAPPOR, HadamardResponse, Laplace, MatrixMechanism

from exact_oracles import exact_four_atom, exact_three_atom, gparv_bruteforce
from decomposition_side import both_engines

# exact-count (binary RR only) is the exact value, below the decomposition bound: tested in test_exact_count.py
SOUND_UPPER = [m for m, i in B.METHOD_INFO.items() if i.sound and m not in ("optimal", "exact-count")]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------- registry / defaults
def test_method_lists_agree():
    assert bounds.METHODS == B.METHODS == cli.METHODS
    assert bounds.EVALUATORS == cli.EVALUATORS and bounds.DEFAULT_EVALUATOR == cli.DEFAULT_EVALUATOR
    assert B.METHODS[0] == "optimal"
    unsound = {m for m, i in B.METHOD_INFO.items() if not i.sound}
    assert unsound == {"variation-ratio", "gdp"}
    assert B.METHOD_INFO["gdp"].kind == "estimate"
    for m, i in B.METHOD_INFO.items():
        assert i.source and i.regime and i.kind in ("upper", "estimate"), m


def test_unsound_is_never_a_default():
    for fn in (sa.epsilon, sa.delta):
        assert inspect.signature(fn).parameters["method"].default == "optimal"
    from shuffleamp.config import evaluate_plan
    assert inspect.signature(evaluate_plan).parameters["method"].default == "optimal"
    parser = cli.build_parser()
    for argv in (["epsilon", "--mechanism", "krr", "--k", "3", "--eps0", "1", "--n", "10", "--delta", "0.1"],
                 ["delta", "--mechanism", "krr", "--k", "3", "--eps0", "1", "--n", "10", "--epsilon", "0.1"],
                 ["report"]):
        assert parser.parse_args(argv).method == "optimal"
    # report only offers sound methods
    assert all(B.METHOD_INFO[m].sound for m in cli.REPORT_METHODS)


def test_report_rejects_unsound_methods(capsys):
    code, _, err = run(capsys, "report", "--method", "variation-ratio")
    assert code == 2 and "--method" in err


# ------------------------------------------------------------------------- labels and regimes
LABEL_CASES = [(KRR(1.0, 10), 20000, 1e-6), (OUE(0.5), 20000, 1e-6)]


@pytest.mark.parametrize("mech,n,delta", LABEL_CASES, ids=["krr", "oue"])
def test_every_result_is_labelled(mech, n, delta):
    for method in B.METHODS:
        for fn, arg in ((sa.epsilon, delta), (sa.delta, 0.3 * mech.eps0)):
            try:
                r = fn(mech, n, arg, method=method)
            except OutOfRegimeError:
                continue
            info = B.METHOD_INFO[method]
            assert r.method == method and r.sound is info.sound and r.kind == info.kind
            assert isinstance(r.settings.get("regime"), str) and r.settings["regime"]
            v = r.value
            assert v is not None and math.isfinite(v) and v >= 0
            d = json.loads(json.dumps(r.to_dict()))
            assert d["sound"] is info.sound and d["method_kind"] == info.kind and d["settings"]["regime"]
            if info.kind == "estimate":
                assert r.upper is None and d[f"{r.quantity}_upper"] is None
                assert d[f"{r.quantity}_estimate"] == pytest.approx(v)
            if method != "optimal":
                assert r.lower is None


def test_out_of_regime_raises_never_nan():
    k = KRR(1.0, 10)
    cases = [
        (sa.epsilon, KRR(0.8, 10), 10**5, 1e-6, "erlingsson"),        # eps0 > 1/2
        (sa.epsilon, KRR(0.4, 10), 500, 1e-6, "erlingsson"),          # n < 1000
        (sa.epsilon, KRR(0.4, 10), 10**5, 0.05, "erlingsson"),        # delta > 0.01
        (sa.epsilon, KRR(0.1, 10), 1000, 1e-4, "erlingsson"),         # eps > eps0
        (sa.delta, KRR(0.4, 10), 10**5, 0.5, "erlingsson"),           # eps > eps0
        (sa.epsilon, KRR(4.0, 10), 1000, 1e-6, "clone-closed-form"),  # eps0 > log(n / (16 log(4/δ)))
        (sa.delta, k, 1000, 0.0, "blanket-hoeffding"),                # eps must be > 0
        (sa.delta, k, 1000, 1.0, "blanket-bennett"),                  # eps must be < eps0
        (sa.epsilon, BLH(1.0), 1000, 1e-6, "stronger-clone"),
        (sa.epsilon, Laplace(1.0), 1000, 1e-6, "stronger-clone"),
        (sa.epsilon, MatrixMechanism(KRR(1.0, 3).matrix()), 1000, 1e-6, "stronger-clone"),
        (sa.epsilon, k, 1, 1e-6, "gdp"),                              # needs n >= 2
    ]
    for fn, mech, n, arg, method in cases:
        with pytest.raises(OutOfRegimeError):
            fn(mech, n, arg, method=method)
    # the stronger-clone message names the mechanism
    with pytest.raises(OutOfRegimeError, match="blh"):
        sa.epsilon(BLH(1.0), 1000, 1e-6, method="stronger-clone")
    # one bad point of an array fails the call, naming the point
    with pytest.raises(OutOfRegimeError) as ei:
        sa.delta(k, [1000, 2000], [0.3, 0.0], method="blanket-hoeffding")
    assert "n=2000" in " ".join(getattr(ei.value, "__notes__", []))
    # unknown method is a ParameterError naming 'method'
    with pytest.raises(ParameterError) as ei:
        sa.epsilon(k, 1000, 1e-6, method="magic")
    assert ei.value.parameter == "method"


def test_regime_edges_are_accepted():
    # Erlingsson exactly at its limits
    eps = B.erlingsson_epsilon(0.5, 1000 * 144 * 4, 0.01)
    assert eps == pytest.approx(12 * 0.5 * math.sqrt(math.log(100) / (1000 * 144 * 4)))
    assert B.erlingsson_delta(0.5, 10**6, 0.05) == pytest.approx(math.exp(-10**6 * (0.05 / 6) ** 2))
    # FMT closed form: valid just inside the log(4/δ) condition, invalid just outside
    n, d = 10**5, 1e-6
    lim = math.log(n / (16 * math.log(4 / d)))
    assert B.clone_closed_form_epsilon(lim * (1 - 1e-9), n, d) > 0
    with pytest.raises(OutOfRegimeError):
        B.clone_closed_form_epsilon(lim * (1 + 1e-9), n, d)


def test_closed_form_variants_and_inversion():
    for e0, n, d in ((0.5, 10**4, 1e-6), (1.0, 10**6, 1e-8), (2.0, 10**5, 1e-5)):
        code = B.clone_closed_form_epsilon(e0, n, d)
        paper = B.clone_closed_form_epsilon(e0, n, d, form="paper")
        assert code >= paper > 0                 # the default (code) factor is the conservative one
        r = sa.delta(KRR(e0, 10), n, code, method="clone-closed-form")
        # conservative inversion: δ(ε(d)) is within the bisection width of d, and ε(δ returned) <= ε
        assert r.upper == pytest.approx(d, rel=1e-6)
        assert B.clone_closed_form_epsilon(e0, n, r.upper, check=False) <= code


# ------------------------------------------------------------------------- clone (exact)
def test_clone_is_exact_and_matches_engine():
    dec = clone_decomposition
    for e0, n, eps in ((1.0, 10, 0.3), (4.0, 30, 2.0), (0.5, 40, 0.05)):
        lo, hi = B.clone_delta(e0, n, eps)
        g = dec(e0).gparv(eps)
        bf = gparv_bruteforce(g.values, g.probs, n)
        assert lo == pytest.approx(bf, rel=1e-10) and hi >= lo
    for e0, n, eps in ((1.0, 10**5, 0.01), (4.0, 10**4, 0.3)):
        lo, hi = B.clone_delta(e0, n, eps)
        fft = delta_fft(dec(e0).gparv(eps), n, mode="spread", rtol=1e-4).delta
        assert lo <= hi <= fft * (1 + 1e-12)   # the certified FFT upper is above the exact value
        assert fft == pytest.approx(hi, rel=1e-3)
    r = sa.epsilon(KRR(1.0, 10), 10**4, 1e-6, method="clone")
    assert "exact" in r.settings["evaluator"] and r.lower is None and r.sound


def test_stronger_clone_equals_optimal_for_krr():
    for k in (2, 3, 10):
        m = KRR(1.5, k)
        a = sa.delta(m, 5000, 0.1, method="stronger-clone").upper
        r = both_engines("delta", m, 5000, 0.1)   # k = 2: the exact count law beside it; compare the decomposition
        b = r.settings["grid"]["decomposition"]["upper"] if k == 2 else r.upper
        assert a == pytest.approx(b, rel=1e-12)


# ------------------------------------------------------------------------- privacy blanket
def _krr_L(mech, eps):
    """Exact PARV L of k-RR under the uniform blanket: values and probabilities."""
    E, e, k = math.exp(mech.eps0), math.exp(eps), mech.k
    g = k / (E + k - 1)
    return np.array([g * (E - e), g * (1 - E * e), g * (1 - e)]), np.array([1 / k, 1 / k, (k - 2) / k])


def test_blanket_constants_match_the_parv():
    for mech, eps in ((KRR(1.0, 10), 0.3), (KRR(3.0, 4), 1.2), (KRR(0.5, 2), 0.1)):
        v, p = _krr_L(mech, eps)
        c = B.blanket_constants(mech, eps)
        assert c.gamma_lb == pytest.approx(mech.gamma)
        assert c.b_plus == pytest.approx(v[p > 0].max(), rel=1e-12)
        assert c.b == pytest.approx(v[p > 0].max() - v[p > 0].min(), rel=1e-12)
        assert c.c == pytest.approx(float(np.dot(v * v, p)), rel=1e-12)      # second moment E[L^2]
        assert float(np.dot(v, p)) == pytest.approx(-c.a, rel=1e-12)
    for e0, eps in ((1.0, 0.1), (4.0, 1.0)):
        c = B.blanket_constants(Laplace(e0), eps)
        G = laplace_upper_gparv(e0, eps)          # G = L/γ w.p. γ, 0 otherwise
        v, p = G.approx_atoms(100000)
        g = math.exp(-e0 / 2)
        assert c.gamma_lb == pytest.approx(g)
        assert c.b_plus == pytest.approx(g * G.support[1], rel=1e-12)
        assert c.b == pytest.approx(g * (G.support[1] - G.support[0]), rel=1e-12)
        assert c.c == pytest.approx(g * float(np.dot(v * v, p)), rel=1e-6)
    assert B.blanket_constants(BLH(1.0), 0.3).label == "generic ε0-LDP"


def test_bennett_closed_form_equals_windowed_sum():
    """The Bernstein/Bennett m-sum is a binomial generating function; check it against a direct
    truncated sum with the dropped binomial mass charged at the largest term."""
    for mech, n, eps in ((KRR(1.0, 10), 2000, 0.2), (OUE(1.0), 5000, 0.3), (Laplace(0.7), 3000, 0.2)):
        c = B.blanket_constants(mech, eps)
        g, a, bp, cc = c.gamma_lb, c.a, c.b_plus, c.c
        alpha, beta = cc / bp ** 2, a * bp / cc
        x = math.exp(-alpha * ((1 + beta) * math.log1p(beta) - beta))
        mu, sd = n * g, math.sqrt(n * g * (1 - g))
        m = np.arange(max(1, int(mu - 14 * sd)), min(n, int(mu + 14 * sd)) + 1)
        body = float(np.sum(binom.pmf(m, n, g) * x ** m))
        dropped = 1.0 - float(np.sum(binom.pmf(m, n, g))) - binom.pmf(0, n, g)
        scale = bp / (math.log1p(beta) * g * n)
        val = B.bennett_delta(mech, n, eps)
        assert scale * body * (1 - 1e-9) <= val <= scale * (body + max(dropped, 0.0) + 1e-15) * (1 + 1e-9)
        assert val == pytest.approx(scale * body, rel=1e-6)


# ------------------------------------------------------------------------- variation ratio / GDP
def _max_tv(P):
    return max(0.5 * np.abs(P[i] - P[j]).sum() for i in range(P.shape[0]) for j in range(P.shape[0]) if i != j)


def test_vr_beta_table_vs_exact_tv():
    for mech in (KRR(1.3, 6), RAPPOR(1.3, 4), OUE(1.3, 5), HadamardResponse(1.3, 8)):
        assert B.vr_params(mech).beta == pytest.approx(_max_tv(np.asarray(mech.matrix())), rel=1e-9), mech
    # BLH: the Table 2 local-hash value is a valid but looser TV bound (exact TV is half of it)
    blh = BLH(1.3, 4)
    assert B.vr_params(blh).beta == pytest.approx(2 * _max_tv(np.asarray(blh.matrix())), rel=1e-9)
    mm = MatrixMechanism(KRR(1.3, 6).matrix())
    assert B.vr_params(mm).beta == pytest.approx(B.vr_params(KRR(1.3, 6)).beta, rel=1e-9)


def test_vr_is_below_a_certified_lower_bound_for_10rr():
    """Beyond the 4-RR counterexample (test_reference.py): for 10-RR, ε0 = 4, n = 1000, δ = 1e-6 the VR "upper bound" is below the
    optimal method's certified lower bound (an exact-divergence lower bound on the true ε)."""
    m = KRR(4.0, 10)
    vr = sa.epsilon(m, 1000, 1e-6, method="variation-ratio")
    opt = sa.epsilon(m, 1000, 1e-6)
    assert not vr.sound and vr.upper < opt.lower


def test_gdp_personalized_api():
    r = B.gdp_delta([0.5] * 1000, None, 0.19296272211158794)
    assert r.kind == "estimate" and r.sound is False and r.upper is None
    assert r.estimate == pytest.approx(1e-4, rel=1e-6)
    assert r.settings["mu"] == pytest.approx(0.07281995, abs=5e-9)
    e = B.gdp_epsilon([0.1, 0.5, 1.0, 2.0] * 250, [0.0, 0.0, 1e-3, 0.5] * 250, 1e-5)
    assert e.kind == "estimate" and e.to_dict()["epsilon_estimate"] == pytest.approx(e.estimate)
    # homogeneous method == personalized API with equal budgets
    h = sa.epsilon(KRR(0.5, 2), 1000, 1e-4, method="gdp").estimate
    assert h == pytest.approx(B.gdp_epsilon([0.5] * 1000, [0.0] * 1000, 1e-4).estimate, rel=1e-12)
    for bad in (dict(eps_list=[0.5], delta_list=None), dict(eps_list=[0.5, float("nan")], delta_list=None),
                dict(eps_list=[0.5, 0.5], delta_list=[0.0]), dict(eps_list=[0.5, 0.5], delta_list=[0.0, 1.0]),
                dict(eps_list=[-0.1, 0.5], delta_list=None)):
        with pytest.raises(ParameterError):
            B.gdp_delta(epsilon=0.1, **bad)


# ------------------------------------------------------------------------- sanity relations
GRID = [(KRR(0.5, 10), 10**4), (KRR(1.0, 2), 10**3), (KRR(4.0, 10), 10**4), (BLH(1.0), 10**4),
        (OUE(0.5), 10**5), (RAPPOR(2.0), 10**4)]


@pytest.mark.parametrize("mech,n", GRID, ids=[f"{m.name}-{m.eps0:g}-{n}" for m, n in GRID])
def test_sound_methods_dominate_optimal_on_grid(mech, n):
    """ε: every sound upper method >= optimal >= certified lower.  Tolerance: optimal.upper may exceed
    the exact optimal ε by the root-search width and the δ-accuracy rtol (<= 1e-4 relative)."""
    delta = 1e-6
    opt = sa.epsilon(mech, n, delta)
    assert opt.lower <= opt.upper
    for method in SOUND_UPPER:
        try:
            v = sa.epsilon(mech, n, delta, method=method).upper
        except OutOfRegimeError:
            continue
        assert v >= opt.lower, method
        assert v >= opt.upper * (1 - 1e-4), (method, v, opt.upper)


def _exact_opt_krr(eps0, k, n, eps):
    """Exact (lo, hi) of the optimal k-RR bound (max over both orientations; the law is symmetric)."""
    g = KRR(eps0, k).decomposition().gparv(eps)
    v, p = g.values[::-1], g.probs[::-1]
    if v.size == 4:
        return exact_four_atom(v[0], p[0], v[1], p[1], v[2], p[2], v[3], n)
    return exact_three_atom(v[0], p[0], v[1], p[1], v[2] if v.size == 3 else 0.0, n)


def _exact_lower_krr(eps0, k, n, eps):
    g = KRR(eps0, k).lower_decompositions()[0].gparv(eps)
    v, p = g.values[::-1], g.probs[::-1]
    if v.size == 4:
        return exact_four_atom(v[0], p[0], v[1], p[1], v[2], p[2], v[3], n)
    return exact_three_atom(v[0], p[0], v[1], p[1], v[2] if v.size == 3 else 0.0, n)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(eps0=st.floats(0.2, 5.0), k=st.integers(2, 20), n=st.integers(2, 20000), frac=st.floats(0.02, 0.98))
def test_sound_methods_dominate_exact_optimal_hypothesis(eps0, k, n, frac):
    """δ at ε = frac·ε0 for k-RR, against exact binomial sums: every sound method >= exact optimal
    >= exact Theorem-14 lower; clone >= optimal; Hoeffding and Bennett >= optimal.

    The engine-based method (stronger-clone) is evaluated on the FFT path here; the default
    (spectral) path has a known soundness defect, pinned by
    :func:`test_default_evaluator_sound_at_known_case`.
    """
    eps = frac * eps0
    mech = KRR(eps0, k)
    opt_lo, opt_hi = _exact_opt_krr(eps0, k, n, eps)
    low_lo, low_hi = _exact_lower_krr(eps0, k, n, eps)
    # sound directions only: the true optimal value is <= opt_hi and the true dataset value >= low_lo
    # (hi adds the binomial mass outside the summation window; it dominates only below ~1e-30)
    assert opt_hi >= low_lo * (1 - 1e-12)
    for method in SOUND_UPPER:
        try:
            v = sa.delta(mech, n, eps, method=method, evaluator="fft").upper
        except OutOfRegimeError:
            continue
        assert v >= min(opt_lo, 1.0) * (1 - 1e-12), (method, v, opt_lo)


def test_default_evaluator_sound_at_known_case():
    """Regression: the spectral evaluator counted some frequencies twice when refined cells overlapped
    (found by the hypothesis test above); fixed in engine._evaluate_spectral."""
    mech = KRR(4.75, 2)
    eps = 4.75 * 0.3125
    for n in (736, 760):
        exact_lo, _ = _exact_opt_krr(4.75, 2, n, eps)
        # k = 2: the exact count law (tighter) runs beside the decomposition; check the decomposition side
        assert both_engines("delta", mech, n, eps, evaluator="fft").settings["grid"]["decomposition"]["upper"] \
            >= exact_lo
        assert both_engines("delta", mech, n, eps).settings["grid"]["decomposition"]["upper"] >= exact_lo
        assert sa.delta(mech, n, eps, method="stronger-clone").upper >= exact_lo


# ------------------------------------------------------------------------- compare command
def test_compare_text(capsys):
    code, out, err = run(capsys, "compare", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--n", "100000",
                         "--delta", "1e-6")
    assert code == 0, err
    for m in B.METHODS:
        assert m in out
    assert "optimal (lower)" in out
    assert out.count(cli.UNSOUND_LABEL) >= 2            # variation-ratio and gdp rows
    assert "erlingsson: out of regime" in out            # eps0 = 1 > 1/2
    assert "time s" in out and "validity:" in out


def test_compare_json(capsys):
    code, out, err = run(capsys, "compare", "--mechanism", "oue", "--eps0", "0.5", "--n", "1e5", "--delta", "1e-6",
                         "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["version"] == sa.__version__ and doc["result"]["quantity"] == "epsilon"
    assert doc["inputs"]["n"] == 100000 and doc["inputs"]["delta"] == pytest.approx(1e-6)
    assert doc["result"]["mechanism"]["mechanism"] == "oue"
    rows = {r["method"]: r for r in doc["result"]["methods"]}
    assert set(B.METHODS) <= set(rows) and "optimal (lower)" in rows
    assert rows["stronger-clone"]["status"] == "out_of_regime" and "oue" in rows["stronger-clone"]["reason"]
    assert rows["erlingsson"]["status"] == "ok"          # eps0 = 0.5 is inside its regime here
    for m, r in rows.items():
        assert r["regime"]
        if r["status"] == "ok" and m != "optimal (lower)":
            assert r["seconds"] >= 0 and r["epsilon"] >= 0
            assert r["sound"] is B.METHOD_INFO[m].sound
    assert rows["gdp"]["kind"] == "estimate" and rows["variation-ratio"]["sound"] is False


def test_compare_delta_and_errors(capsys):
    code, out, err = run(capsys, "compare", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--n", "100",
                         "--epsilon", "0.6", "--json")
    assert code == 0, err
    rows = {r["method"]: r for r in json.loads(out)["result"]["methods"]}
    # the VR counterexample is visible in the comparison: VR below the exact-divergence lower bound
    assert rows["variation-ratio"]["delta"] < rows["optimal (lower)"]["delta"]
    code, _, err = run(capsys, "compare", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--n", "0",
                       "--delta", "1e-6")
    assert code == 2 and "n" in err
    code, _, err = run(capsys, "compare", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--n", "10")
    assert code == 2


def test_cli_method_choices_and_unsound_marking(capsys):
    code, out, err = run(capsys, "epsilon", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--n", "100",
                         "--delta", "1e-6", "--method", "variation-ratio")
    assert code == 0, err
    assert cli.UNSOUND_LABEL in out and "validity" in out
    code, out, err = run(capsys, "epsilon", "--mechanism", "blh", "--eps0", "1", "--n", "1e5", "--delta", "1e-6",
                         "--method", "gdp", "--json")
    assert code == 0, err
    d = json.loads(out)["result"]
    assert d["epsilon_upper"] is None and d["epsilon_estimate"] > 0 and d["sound"] is False
    code, out, err = run(capsys, "delta", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--n", "1e4",
                         "--epsilon", "0.1", "--method", "blanket-hoeffding", "--json")
    assert code == 0, err
    assert json.loads(out)["result"]["sound"] is True
    code, _, err = run(capsys, "epsilon", "--mechanism", "blh", "--eps0", "1", "--n", "1e5", "--delta", "1e-6",
                       "--method", "stronger-clone")
    assert code == 2 and "stronger-clone" in err and "blh" in err


# ---------------------------------------------------------------------------- huge n
def test_three_atom_large_n_route_agrees_with_window_sum():
    """Above THREE_ATOM_WINDOW_TERMS the clone / variation-ratio methods evaluate the same three-atom
    GPARV with the certified evaluator: at an n where both run, it is >= the exact window sum and
    within the evaluator's rtol of it."""
    import shuffleamp as sa
    from shuffleamp import baselines as B
    from shuffleamp.decomposition import clone_decomposition
    mech = KRR(1.0, 10)
    n, eps = 10 ** 7, 5e-4
    _, ctx = sa.bounds._common(mech, "clone", sa.bounds.DEFAULT_RTOL, sa.bounds.DEFAULT_RTOL_LOWER,
                               sa.bounds.DEFAULT_MAX_GRID, "exact", sa.bounds.DEFAULT_MAX_SECONDS,
                               sa.bounds.DEFAULT_MAX_MEMORY_GB)
    lo, hi = B.clone_delta(1.0, n, eps)
    via, _, info = B._large_n_delta(clone_decomposition(1.0), n, eps, ctx)
    assert lo > 1e-12 and via >= lo and via <= hi * (1 + 2e-3), (lo, hi, via)
    assert "large_n" in info
    prm = B.vr_params(mech)
    vlo, vhi = B.vr_delta(eps, n, prm)
    via_vr, _, _ = B._large_n_delta(B.vr_decomposition(prm), n, eps, ctx)
    assert vlo > 1e-12 and via_vr >= vlo and via_vr <= vhi * (1 + 2e-3), (vlo, vhi, via_vr)


@pytest.mark.parametrize("method", [m for m in B.METHODS if m not in ("erlingsson", "exact-count")])
def test_every_method_at_n_1e12(method):
    """Regression: `compare --mechanism krr --k 10 --eps0 1 --n 1e12 --delta 1e-8` ran > 60 s (the O(√n)
    window sums of clone and variation-ratio, ~10^7 betainc terms per evaluation).  Every method now
    answers at n = 10^12 (erlingsson is out of its regime eps0 <= 1/2: typed OutOfRegimeError)."""
    import shuffleamp as sa
    r = sa.epsilon(KRR(1.0, 10), 10 ** 12, 1e-8, method=method)
    val = r.upper if r.upper is not None else r.estimate
    assert 0.0 < val < 1e-3
    if r.sound:      # every sound method is above the optimal (certified, tight) value
        assert val >= sa.epsilon(KRR(1.0, 10), 10 ** 12, 1e-8).lower


def test_three_atom_window_sum_refuses_huge_n():
    from shuffleamp import baselines as B
    from shuffleamp.errors import ResourceLimitError
    with pytest.raises(ResourceLimitError) as ei:
        B.clone_delta(1.0, 10 ** 14, 0.001)
    assert ei.value.parameter == "n"
