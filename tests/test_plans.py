"""The budget workflow over plans (shuffleamp.plans, shuffleamp.config, ``report`` / ``eps0 --plan``):
one δ per plan, scenarios, the gating exit status, plan-level inverse queries, the total over days."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path

import pytest

import shuffleamp as sa
from shuffleamp import cli
from shuffleamp.accounting import compose_rounds
from shuffleamp.config import _BUDGET_FIELDS, _KNOWN, format_table, parse_plan
from shuffleamp.errors import OutOfRegimeError, ParameterError, PlanError
from shuffleamp.plans import plan_max, report, total_over_days

DOCS = Path(__file__).resolve().parents[1] / "docs"

#: A small plan (evaluates in about a second): two collections with several rounds, a budget at a δ that
#: differs from the collections' own.
SMALL = {
    "budget": {"epsilon": 1.0, "delta": 1e-7},
    "collection": [
        {"name": "histogram", "mechanism": "krr", "k": 4, "eps0": 1.0, "n": 20_000, "delta": 1e-6, "rounds": 4},
        {"name": "sites", "mechanism": "rappor", "d": 8, "eps0": 1.0, "n": 20_000, "rounds": 2},
    ],
}


def _plan(doc=SMALL, **budget):
    d = json.loads(json.dumps(doc))
    if budget:
        d["budget"] = {**d["budget"], **budget}
    return parse_plan(d)


def _write(tmp_path, doc, name="plan.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


@pytest.fixture(scope="module")
def small_report():
    return report(_plan(), progress=False)


# --------------------------------------------------------------------------- one δ per plan
def test_every_total_is_at_the_budget_delta(small_report):
    doc = small_report
    assert doc["delta"] == 1e-7 and doc["total"]["delta"] == 1e-7
    cols = doc["collections"]
    assert cols[0]["delta"] == 1e-6                  # the per-round column keeps the collection's own δ
    assert cols[1]["delta"] == 1e-7                  # no own delta: the budget's
    for c in cols:
        assert c["total"]["delta"] == 1e-7
    # the collection's total is the accountant's at the plan δ, not at its own δ
    ref = compose_rounds([(sa.mechanisms.KRR(1.0, 4), 20_000, 4)], delta=1e-7, lower=False)
    assert cols[0]["total"]["epsilon_upper"] == pytest.approx(ref.upper, rel=1e-12)


def test_grand_total_is_never_below_a_collection_total(small_report):
    t = small_report["total"]
    for c in small_report["collections"]:
        assert t["epsilon_upper"] >= c["total"]["epsilon_upper"]
        assert t["epsilon_lower"] >= c["total"]["epsilon_lower"]
    assert t["epsilon_upper"] >= t["epsilon_lower"] > 0


def test_plan_total_floors_use_only_totals_at_the_same_delta():
    from shuffleamp.config import plan_total

    rows = _plan()
    fake = [{"name": "histogram", "total": {"epsilon_upper": 50.0, "epsilon_lower": 40.0, "delta": 1e-3}},
            {"name": "sites", "total": {"epsilon_upper": 30.0, "epsilon_lower": 20.0, "delta": 1e-7}}]
    t = plan_total(rows, results=fake, lower=False)
    assert t["epsilon_upper"] == 30.0 and t["epsilon_lower"] == 20.0 and t["floors"] == ["upper: sites", "lower: sites"]
    assert t["verdict"] == "exceeded"


def test_collection_delta_defaults_to_the_budget_and_is_required_without_one():
    rows = _plan()
    assert rows[1].delta == 1e-7 and rows.delta == 1e-7
    doc = json.loads(json.dumps(SMALL))
    del doc["budget"]
    with pytest.raises(PlanError) as e:
        parse_plan(doc)
    assert e.value.field == "delta" and "plan row 2 ('sites')" in str(e.value)


def test_table_says_which_delta(capsys, tmp_path):
    code = cli.main(["report", str(_write(tmp_path, SMALL)), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert "every total (total_upper, total_lower and the grand total) is at the plan's delta = 1e-07" in out
    assert "grand total (one user in every collection and round), delta = 1e-07" in out


# --------------------------------------------------------------------------- verdicts and exit statuses
def test_exit_status_gates_on_the_verdict(small_report, capsys, tmp_path):
    t = small_report["total"]
    lo, up = t["epsilon_lower"], t["epsilon_upper"]
    cases = [(up * 1.01, 0, "holds (certified)"), ((lo + up) / 2, cli.EXIT_BUDGET_UNDECIDED, "NOT CERTIFIED"),
             (lo * 0.99, cli.EXIT_BUDGET_EXCEEDED, "EXCEEDED")]
    for eps, status, text in cases:
        doc = json.loads(json.dumps(SMALL))
        doc["budget"]["epsilon"] = eps
        path = _write(tmp_path, doc)
        assert cli.main(["report", str(path), "--json"]) == status
        res = json.loads(capsys.readouterr().out)["result"]
        assert res["verdict"] == {0: "holds", 3: "exceeded", 4: "undecided"}[status]
        assert res["total"]["holds"] is (status == 0)
        assert text in format_table(parse_plan(doc), res["collections"], res["total"])   # the printed verdict
    assert len({0, cli.EXIT_BUDGET_EXCEEDED, cli.EXIT_BUDGET_UNDECIDED, cli.EXIT_FAILURE, cli.EXIT_USAGE,
                cli.EXIT_INTERNAL}) == 6


def test_report_without_budget_exits_zero(capsys, tmp_path):
    doc = json.loads(json.dumps(SMALL))
    del doc["budget"]
    doc["collection"][1]["delta"] = 1e-6
    assert cli.main(["report", str(_write(tmp_path, doc)), "--quiet"]) == 0
    assert "budget" not in capsys.readouterr().out.split("grand total")[-1]


# --------------------------------------------------------------------------- scenarios
def test_list_fields_are_scenarios_with_separate_verdicts(capsys, tmp_path):
    base = report(_plan(), progress=False)["total"]["epsilon_upper"]
    doc = json.loads(json.dumps(SMALL))
    doc["collection"][0]["eps0"] = [1.0, 2.0]
    rows = parse_plan(doc)
    assert len(rows.scenarios) == 2 and [r.name for r in rows] == ["histogram", "sites"]
    assert [sc.values for sc in rows.scenarios] == [{"histogram.eps0": 1.0}, {"histogram.eps0": 2.0}]
    assert [sc.plan[0].eps0 for sc in rows.scenarios] == [1.0, 2.0]
    doc["budget"]["epsilon"] = base * 1.001              # the first scenario fits, the second does not
    code = cli.main(["report", str(_write(tmp_path, doc)), "--json"])
    res = json.loads(capsys.readouterr().out)["result"]
    sc = res["scenarios"]
    assert [s["values"] for s in sc] == [{"histogram.eps0": 1.0}, {"histogram.eps0": 2.0}]
    assert sc[0]["holds"] is True and sc[1]["holds"] is False
    assert sc[0]["total"]["epsilon_upper"] == pytest.approx(base, rel=1e-12)   # not charged together
    assert sc[1]["total"]["epsilon_upper"] > sc[0]["total"]["epsilon_upper"]
    assert res["collections"] is None and res["total"] is None
    assert code == {"exceeded": 3, "undecided": 4}[sc[1]["verdict"]]
    cli.main(["report", str(_write(tmp_path, doc)), "--quiet"])
    out = capsys.readouterr().out
    assert "histogram.eps0" in out and "2 scenarios" in out


def test_scenario_grid_explosion_is_refused_with_the_count(capsys, tmp_path):
    doc = json.loads(json.dumps(SMALL))
    doc["collection"][0]["eps0"] = [0.5 + i / 10 for i in range(10)]
    doc["collection"][1]["n"] = [1000 * (i + 1) for i in range(10)]
    with pytest.raises(PlanError) as e:
        parse_plan(doc)
    assert e.value.field == "eps0" and "100 scenarios" in str(e.value) and "sites.n" in str(e.value)
    assert len(parse_plan(doc, max_scenarios=100).scenarios) == 100
    path = _write(tmp_path, doc)
    assert cli.main(["report", str(path), "--json"]) == 2
    err = json.loads(capsys.readouterr().out)["error"]
    assert err["type"] == "PlanError" and err["parameter"] == "eps0" and "100 scenarios" in err["message"]


# --------------------------------------------------------------------------- plan-level inverse queries
@pytest.fixture(scope="module")
def eps0_answer():
    return plan_max(_plan(), "histogram", "eps0", rel_tol=1e-3, progress=False)


def test_plan_max_eps0_is_the_largest_fitting_eps0(eps0_answer):
    r = eps0_answer
    assert r.parameter == "eps0" and r.infeasible is not None and r.value < r.infeasible
    assert r.infeasible / r.value - 1 <= 1e-3
    # judged by an independent run of the report on the plan at each end
    at = json.loads(json.dumps(SMALL))          # r.total is the report's evaluation of the plan at r.value
    at["collection"][0]["eps0"] = r.infeasible
    over = report(parse_plan(at), progress=False)
    assert over["verdict"] in ("undecided", "exceeded") and over["total"]["epsilon_upper"] > 1.0
    assert r.total["epsilon_upper"] <= 1.0 and r.total["delta"] == 1e-7 and r.total["verdict"] == "holds"
    d = r.to_dict()
    assert d["eps0"] == r.value and d["eps0_infeasible"] == r.infeasible and d["total"] == r.total


def test_plan_max_rounds_is_exact(tmp_path, capsys):
    doc = json.loads(json.dumps(SMALL))
    doc["budget"]["epsilon"] = 0.3
    assert cli.main(["rounds", "--plan", str(_write(tmp_path, doc)), "--collection", "sites", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["command"] == "rounds" and out["inputs"]["collection"] == "sites"
    r = out["result"]
    assert r["rounds_infeasible"] == r["rounds"] + 1 and r["total"]["epsilon_upper"] <= 0.3
    assert r["total"]["verdict"] == "holds"
    doc["collection"][1]["rounds"] = r["rounds"] + 1                    # judged by the report itself
    assert report(parse_plan(doc), progress=False)["total"]["holds"] is False


def test_cli_eps0_plan_query_text(eps0_answer, capsys, tmp_path, monkeypatch):
    import shuffleamp.plans

    calls = []

    def answer(plan, collection, parameter, **kw):
        calls.append((collection, parameter, kw))
        return eps0_answer
    monkeypatch.setattr(shuffleamp.plans, "plan_max", answer)
    code = cli.main(["eps0", "--plan", str(_write(tmp_path, SMALL)), "--collection", "histogram", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert calls == [("histogram", "eps0", {"limit": 20.0, "progress": False})]
    assert "largest eps0 of collection 'histogram'" in out and "first infeasible eps0" in out
    printed = float(out.split("'histogram': ")[1].split(" nats")[0])
    assert eps0_answer.value * (1 - 1e-9) <= printed <= eps0_answer.value     # rounded down


@pytest.mark.parametrize("args,parameter", [
    (("--collection", "nope"), "collection"),
    (("--collection", "histogram", "--k", "3"), "k"),
    ((), "collection"),
])
def test_cli_plan_query_bad_input(args, parameter, capsys, tmp_path):
    code = cli.main(["eps0", "--plan", str(_write(tmp_path, SMALL)), *args, "--json"])
    err = json.loads(capsys.readouterr().out)["error"]
    assert code == 2 and err["parameter"] == parameter


def test_plan_max_bad_input(tmp_path):
    with pytest.raises(ParameterError) as e:
        plan_max(_plan(), "nope", "eps0")
    assert e.value.parameter == "collection" and "'histogram'" in str(e.value)
    with pytest.raises(ParameterError) as e:
        plan_max(_plan(), "histogram", "k")
    assert e.value.parameter == "parameter"
    mat = json.loads(json.dumps(SMALL))
    mat["collection"][0] = {"name": "m", "mechanism": "matrix", "matrix": [[0.6, 0.4], [0.4, 0.6]], "n": 1000}
    with pytest.raises(ParameterError) as e:
        plan_max(parse_plan(mat), "m", "eps0")
    assert e.value.parameter == "parameter" and "no eps0" in str(e.value)
    nob = json.loads(json.dumps(SMALL))
    del nob["budget"]
    nob["collection"][1]["delta"] = 1e-6
    with pytest.raises(PlanError) as e:
        plan_max(parse_plan(nob), "histogram", "eps0")
    assert e.value.parameter == "budget"
    sc = json.loads(json.dumps(SMALL))
    sc["collection"][0]["eps0"] = [1, 2]
    with pytest.raises(ParameterError) as e:
        plan_max(parse_plan(sc), "histogram", "eps0")
    assert e.value.parameter == "plan"
    tight = json.loads(json.dumps(SMALL))
    tight["budget"]["epsilon"] = 1e-4                      # the other collection alone exceeds it
    with pytest.raises(OutOfRegimeError):
        plan_max(parse_plan(tight), "histogram", "rounds")


def test_single_mechanism_queries_still_need_their_options(capsys):
    assert cli.main(["eps0", "--mechanism", "krr", "--k", "10", "--n", "1000", "--delta", "1e-6"]) == 2
    assert "--target-epsilon" in capsys.readouterr().err
    assert cli.main(["n", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--target-epsilon", "1", "--delta",
                     "1e-6", "--collection", "x"]) == 2
    assert "collection" in capsys.readouterr().err


# --------------------------------------------------------------------------- the total over days
def test_total_over_days_and_its_figure(tmp_path):
    pytest.importorskip("matplotlib")
    rows = _plan()
    curve = total_over_days(rows, progress=False)
    assert curve["days"] == [1, 2, 3, 4] and curve["delta"] == 1e-7
    up, lo = curve["upper"], curve["lower"]
    assert all(u >= l > 0 for u, l in zip(up, lo))
    assert all(b >= a for a, b in zip(up, up[1:]))         # the total does not shrink with the days
    # day 4 is the whole plan: the same grand total as the report
    assert up[-1] == pytest.approx(report(rows, progress=False)["total"]["epsilon_upper"], rel=1e-12)
    # the sites collection stops after day 2: its contribution is flat from there
    sites = curve["collections"]["sites"]
    assert sites[2] == sites[1] == sites[3]
    for name, ups in curve["collections"].items():
        assert all(c <= g * (1 + 1e-12) for c, g in zip(ups, up))
    for suffix in ("png", "svg"):
        out = tmp_path / f"plan.{suffix}"
        fig = sa.plot_plan(rows, out, curve=curve)
        assert out.stat().st_size > 5000
    ax = fig.axes[0]
    lines = {ln.get_gid(): ln for ln in ax.get_lines()}
    assert list(lines["grand-total-upper"].get_xdata()) == curve["days"]
    assert list(lines["grand-total-upper"].get_ydata()) == up
    assert list(lines["collection:histogram"].get_ydata()) == curve["collections"]["histogram"]
    assert list(lines["budget"].get_ydata()) == [1.0, 1.0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "nats" in ax.get_ylabel() and "1e-07" in ax.get_ylabel() and "day" in ax.get_xlabel()
    band = [c for c in ax.collections if c.get_gid() == "grand-total-band"]
    assert len(band) == 1


def test_report_plot_cli(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "plan.svg"
    doc = json.loads(json.dumps(SMALL))
    doc["collection"][0]["rounds"] = 2
    code = cli.main(["report", str(_write(tmp_path, doc)), "--plot", str(out), "--json"])
    res = json.loads(capsys.readouterr().out)["result"]
    assert code == 0 and out.read_text().lstrip().startswith("<?xml")
    assert res["total_over_days"]["days"] == [1, 2]
    assert res["total_over_days"]["upper"][-1] == pytest.approx(res["total"]["epsilon_upper"], rel=1e-12)


def test_progress_is_silent_off_a_terminal(capsys, tmp_path):
    assert cli.main(["report", str(_write(tmp_path, SMALL))]) == 0
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------- the plan file
def test_example_year_plan_is_the_realistic_year(capsys):
    text = resources.files("shuffleamp").joinpath("data/example_year.toml").read_text(encoding="utf-8")
    assert cli.main(["plan-template", "--example", "year"]) == 0
    assert capsys.readouterr().out == text
    rows = parse_plan(tomllib.loads(text))
    assert rows.budget == {"epsilon": 1.0, "delta": 1e-9}
    assert [(r.mechanism, r.k or r.d, r.eps0, r.n, r.rounds, r.delta) for r in rows] == [
        ("krr", 16, 2.0, 10**7, 365, 1e-9), ("krr", 2, 1.0, 5 * 10**7, 365, 1e-9),
        ("rappor", 1024, 4.0, 2 * 10**6, 365, 1e-9)]


def test_template_documents_delta_and_scenarios(capsys):
    cli.main(["plan-template"])
    out = capsys.readouterr().out
    for text in ("One delta per plan", "Scenarios", "exit status", "--max-scenarios", "eps0 --plan"):
        assert text in out, text


def test_schema_doc_lists_every_key():
    text = (DOCS / "plan.rst").read_text(encoding="utf-8")
    for key in (*_KNOWN, *(f"budget.{k}" for k in _BUDGET_FIELDS)):
        assert f"``{key}``" in text, key


def test_schema_doc_lists_every_declared_mechanism_parameter():
    """Every built-in mechanism and every parameter it declares (plan fields too) is in the schema page."""
    from shuffleamp import gaussian  # noqa: F401  (registers the randomizers beyond pure LDP)
    from shuffleamp.mechanisms import registry

    text = (DOCS / "plan.rst").read_text(encoding="utf-8")
    for name, cls in registry().items():
        if cls.__module__.startswith("shuffleamp."):
            assert f"``{name}``" in text, name
            for p in cls.param_specs:
                assert f"``{p.name}``" in text, (name, p.name)


@pytest.mark.slow
def test_realistic_year_end_to_end(tmp_path, capsys):
    """The three-collection year: the verdict and exit status, every total at δ = 1e-9, the grand total
    at least each collection's, and the largest histogram eps0 (holds at it, not at eps0_infeasible)."""
    text = resources.files("shuffleamp").joinpath("data/example_year.toml").read_text(encoding="utf-8")
    path = tmp_path / "year.toml"
    path.write_text(text)
    assert cli.main(["report", str(path), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["result"]
    assert res["verdict"] == "holds" and res["total"]["delta"] == 1e-9
    for c in res["collections"]:
        assert c["total"]["delta"] == 1e-9
        assert res["total"]["epsilon_upper"] >= c["total"]["epsilon_upper"]
    assert cli.main(["eps0", "--plan", str(path), "--collection", "histogram", "--json"]) == 0
    q = json.loads(capsys.readouterr().out)["result"]
    assert q["eps0_infeasible"] / q["eps0"] - 1 <= 1e-3
    for eps0, status in ((q["eps0"], 0), (q["eps0_infeasible"], None)):
        doc = tomllib.loads(text)
        doc["collection"][0]["eps0"] = eps0
        out = report(parse_plan(doc), progress=False)
        assert (out["verdict"] == "holds") is (status == 0)


@pytest.mark.parametrize("change,field,where", [
    (lambda d: d["collection"][1].update(rounds="daily"), "rounds", "plan row 2 ('sites')"),
    (lambda d: d["collection"][0].update(colour="red"), "colour", "plan row 1 ('histogram')"),
    (lambda d: d["collection"][1].update(delta=2.0), "delta", "plan row 2 ('sites')"),
    (lambda d: d["collection"][0].update(eps0=[1.0, -1.0]), "eps0", "plan row 1 ('histogram')"),
    (lambda d: d["budget"].update(epsilon="one"), "plan", "field 'budget.epsilon'"),
    (lambda d: d["budget"].pop("delta"), "plan", "field 'budget.delta': missing"),
])
def test_schema_errors_name_the_key_and_the_collection(change, field, where):
    doc = json.loads(json.dumps(SMALL))
    change(doc)
    with pytest.raises(PlanError) as e:
        parse_plan(doc)
    assert e.value.parameter == field and where in str(e.value)


def test_plan_delta_without_a_budget_is_the_smallest_collection_delta():
    from shuffleamp.config import plan_delta

    doc = json.loads(json.dumps(SMALL))
    del doc["budget"]
    doc["collection"][1]["delta"] = 1e-9
    rows = parse_plan(doc)
    assert plan_delta(rows) == 1e-9 and plan_delta(rows, 1e-5) == 1e-5
    with pytest.raises(ParameterError) as e:
        plan_delta(rows, 1.5)
    assert e.value.parameter == "delta"


def test_one_epsilon_call_imports_no_more_than_version(tmp_path):
    """Start-up: a single ``shuffleamp epsilon`` call loads the modules ``--version`` loads and the evaluation's
    own, not scipy.stats / scipy.optimize / scipy.fft / dp_accounting (imported on use)."""
    import subprocess
    import sys

    code = ("import sys, io, contextlib\nfrom shuffleamp.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['epsilon', '--mechanism', 'krr', '--k', '10', '--eps0', '1', '--n', '1e6', '--delta', '1e-8'])\n"
            "print(sorted(m for m in ('scipy.stats', 'scipy.optimize', 'scipy.fft', 'dp_accounting', 'matplotlib')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
