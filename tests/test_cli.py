"""Tests of the command line (shuffleamp.cli) and plan files (shuffleamp.config)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import shuffleamp
from shuffleamp.cli import main
from shuffleamp.errors import ParameterError
from shuffleamp.config import Collection, PlanError, evaluate_plan, load_plan
from shuffleamp.results import SCHEMA_VERSION

DATA = Path(__file__).parent / "data"

KRR = ["--mechanism", "krr", "--k", "10", "--eps0", "1.0"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


ENVELOPE_KEYS = ["schema_version", "version", "command", "inputs", "result", "error"]


def run_envelope(capsys, *argv):
    """The whole JSON document of a successful ``--json`` run (checked against the one schema)."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    assert err == ""
    doc = json.loads(out)
    assert list(doc) == ENVELOPE_KEYS
    assert doc["schema_version"] == SCHEMA_VERSION and doc["version"] == shuffleamp.__version__
    assert doc["command"] == argv[0] and doc["error"] is None and isinstance(doc["inputs"], dict)
    return doc


def run_json(capsys, *argv):
    """The ``result`` member of a successful ``--json`` run."""
    return run_envelope(capsys, *argv)["result"]


def krr_matrix(k: int, eps0: float) -> np.ndarray:
    e = math.exp(eps0)
    P = np.full((k, k), 1.0 / (e + k - 1))
    np.fill_diagonal(P, e / (e + k - 1))
    return P


def assert_bracket(upper, lower):
    assert upper is not None and math.isfinite(upper)
    if lower is not None:
        assert upper >= lower >= 0
    else:
        assert upper >= 0


# --------------------------------------------------------------------------- epsilon / delta


def test_epsilon_json_echoes_inputs(capsys):
    d = run_json(capsys, "epsilon", *KRR, "--n", "20000", "--delta", "1e-6")
    for key in ("epsilon_upper", "epsilon_lower", "delta", "n", "eps0", "mechanism", "method", "bounds"):
        assert key in d, key
    assert d["n"] == 20000
    assert d["delta"] == pytest.approx(1e-6)
    assert d["eps0"] == pytest.approx(1.0)
    assert d["method"] == "optimal"
    assert d["mechanism"]["mechanism"] == "krr"
    assert d["mechanism"]["k"] == 10
    assert d["epsilon_lower"] is not None
    assert_bracket(d["epsilon_upper"], d["epsilon_lower"])
    assert d["epsilon_upper"] <= 1.0 + 1e-12  # never worse than the local guarantee


def test_epsilon_accepts_scientific_n(capsys):
    a = run_json(capsys, "epsilon", *KRR, "--n", "1e4", "--delta", "1e-6")
    b = run_json(capsys, "epsilon", *KRR, "--n", "10_000", "--delta", "1e-6")
    assert a["n"] == b["n"] == 10000
    assert a["epsilon_upper"] == b["epsilon_upper"]


def test_epsilon_human_summary(capsys):
    code, out, err = run(capsys, "epsilon", *KRR, "--n", "20000", "--delta", "1e-6")
    assert code == 0, err
    assert "krr" in out and "k=10" in out
    assert "20000" in out and "1e-06" in out
    assert "epsilon" in out
    assert not out.lstrip().startswith("{")


def test_epsilon_clone_method_is_upper_only(capsys):
    clone = run_json(capsys, "epsilon", *KRR, "--n", "20000", "--delta", "1e-6", "--method", "clone")
    opt = run_json(capsys, "epsilon", *KRR, "--n", "20000", "--delta", "1e-6")
    assert clone["method"] == "clone"
    assert clone["epsilon_lower"] is None
    assert_bracket(clone["epsilon_upper"], None)
    # the clone bound is a valid upper bound, hence above the optimal lower bound
    assert clone["epsilon_upper"] >= opt["epsilon_lower"]
    code, out, err = run(capsys, "epsilon", *KRR, "--n", "20000", "--delta", "1e-6", "--method", "clone")
    assert code == 0 and "upper bound only" in out


def test_delta_json(capsys):
    d = run_json(capsys, "delta", "--mechanism", "rappor", "--d", "16", "--eps0", "2",
                 "--n", "5000", "--epsilon", "0.5")
    for key in ("delta_upper", "delta_lower", "epsilon", "n", "eps0", "mechanism", "method", "bounds"):
        assert key in d, key
    assert d["epsilon"] == pytest.approx(0.5)
    assert d["n"] == 5000
    assert d["eps0"] == pytest.approx(2.0)
    assert d["mechanism"]["mechanism"] == "rappor"
    assert_bracket(d["delta_upper"], d["delta_lower"])
    assert d["delta_upper"] <= 1.0


def test_epsilon_and_delta_are_consistent(capsys):
    """δ(ε_upper(δ0)) must not exceed δ0 by more than the requested tolerance."""
    e = run_json(capsys, "epsilon", *KRR, "--n", "20000", "--delta", "1e-6")
    d = run_json(capsys, "delta", *KRR, "--n", "20000", "--epsilon", repr(e["epsilon_upper"]))
    assert d["delta_lower"] <= 1e-6 * (1 + 1e-2)


def test_matrix_csv(capsys, tmp_path):
    k, eps0 = 3, 1.0
    csv = tmp_path / "krr3.csv"
    np.savetxt(csv, krr_matrix(k, eps0), delimiter=",")
    m = run_json(capsys, "epsilon", "--mechanism", "matrix", "--matrix", str(csv),
                 "--n", "5000", "--delta", "1e-6")
    r = run_json(capsys, "epsilon", "--mechanism", "krr", "--k", str(k), "--eps0", str(eps0),
                 "--n", "5000", "--delta", "1e-6")
    assert m["eps0"] == pytest.approx(eps0, rel=1e-9)
    assert m["mechanism"]["mechanism"] == "matrix"
    assert_bracket(m["epsilon_upper"], m["epsilon_lower"])
    # same randomizer, two code paths: the certified intervals must overlap
    assert m["epsilon_upper"] >= r["epsilon_lower"] * (1 - 1e-9)
    assert r["epsilon_upper"] >= m["epsilon_lower"] * (1 - 1e-9)
    # an explicit eps0 that the matrix does satisfy is accepted
    code, out, err = run(capsys, "epsilon", "--mechanism", "matrix", "--matrix", str(csv), "--eps0", "1.5",
                         "--n", "5000", "--delta", "1e-6", "--json")
    assert code == 0, err


def test_matrix_not_ldp_is_rejected(capsys, tmp_path):
    csv = tmp_path / "bad.csv"
    np.savetxt(csv, np.array([[1.0, 0.0], [0.5, 0.5]]), delimiter=",")
    code, out, err = run(capsys, "epsilon", "--mechanism", "matrix", "--matrix", str(csv),
                         "--n", "1000", "--delta", "1e-6")
    assert code == 2
    assert err.startswith("error: ") and "Traceback" not in err
    assert out == ""


@pytest.mark.parametrize(
    "override, parameter",
    [
        ({"--eps0": "nan"}, "eps0"),
        ({"--eps0": "-1"}, "eps0"),
        ({"--eps0": "inf"}, "eps0"),
        ({"--delta": "1.5"}, "delta"),
        ({"--delta": "0"}, "delta"),
        ({"--n": "0"}, "n"),
        ({"--n": "10.5"}, "n"),
        ({"--k": "1"}, "k"),
    ],
)
def test_bad_cli_values_exit_2_naming_parameter(capsys, override, parameter):
    args = {"--mechanism": "krr", "--k": "10", "--eps0": "1.0", "--n": "1000", "--delta": "1e-6"}
    args.update(override)
    argv = ["epsilon"] + [x for kv in args.items() for x in kv]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("error: ")
    assert f"{parameter}:" in err or f"'{parameter}'" in err
    assert "Traceback" not in err


def test_bad_delta_epsilon_exit_2(capsys):
    code, out, err = run(capsys, "delta", *KRR, "--n", "1000", "--epsilon", "-0.5")
    assert code == 2 and "epsilon" in err and err.startswith("error: ")


def test_unparsable_number_is_a_usage_error(capsys):
    code, out, err = run(capsys, "epsilon", *KRR, "--n", "lots", "--delta", "1e-6")
    assert code == 2 and "--n" in err and "lots" in err


def test_missing_eps0(capsys):
    code, out, err = run(capsys, "epsilon", "--mechanism", "krr", "--k", "4", "--n", "1000", "--delta", "1e-6")
    assert code == 2 and "eps0" in err and "Traceback" not in err


def test_unknown_mechanism_and_method_are_usage_errors(capsys):
    code, _, err = run(capsys, "epsilon", "--mechanism", "teleport", "--eps0", "1", "--n", "10", "--delta", "0.1")
    assert code == 2 and "--mechanism" in err
    code, _, err = run(capsys, "epsilon", *KRR, "--n", "10", "--delta", "0.1", "--method", "magic")
    assert code == 2 and "--method" in err


def test_version_and_no_command(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and shuffleamp.__version__ in out
    code, _, err = run(capsys)
    assert code == 2 and "error:" in err


# --------------------------------------------------------------------------- report


def test_report_json_small_plan(capsys):
    doc = run_json(capsys, "report", str(DATA / "plan_ok.toml"))
    assert doc["method"] == "optimal"
    rows = doc["collections"]
    assert [r["name"] for r in rows] == ["binary flag", "category", "homepage"]
    expected = [("krr", 1.0, 1000, 1e-6), ("krr", 2.0, 5000, 1e-7), ("rappor", 2.0, 2000, 1e-6)]
    for r, (mech, eps0, n, delta) in zip(rows, expected):
        assert r["mechanism"]["mechanism"] == mech
        assert r["eps0"] == pytest.approx(eps0)
        assert r["n"] == n
        assert r["delta"] == pytest.approx(delta)
        assert r["comment"]
        assert r["method"] == "optimal"
        assert_bracket(r["epsilon_upper"], r["epsilon_lower"])
        assert r["epsilon_upper"] <= eps0 * (1 + 1e-9)
    assert rows[1]["mechanism"]["k"] == 8
    assert rows[2]["mechanism"]["d"] == 16


def test_report_table_and_determinism(capsys):
    code, out1, err = run(capsys, "report", str(DATA / "plan_ok.toml"))
    assert code == 0, err
    for text in ("name", "eps_upper", "eps_lower", "binary flag", "krr (k=8)", "rappor (d=16)",
                 "RAPPOR over 16 sites", "5000"):
        assert text in out1, text
    code, out2, _ = run(capsys, "report", str(DATA / "plan_ok.toml"))
    assert out1 == out2


def test_report_json_plan_and_clone(capsys):
    doc = run_json(capsys, "report", str(DATA / "plan_ok.json"), "--method", "clone")
    rows = doc["collections"]
    assert [r["name"] for r in rows] == ["word", "crash"]
    assert rows[1]["comment"] == ""
    for r in rows:
        assert r["method"] == "clone"
        assert r["epsilon_lower"] is None
        assert_bracket(r["epsilon_upper"], None)


def test_report_matrix_path_relative_to_plan(capsys, tmp_path):
    sub = tmp_path / "mats"
    sub.mkdir()
    np.savetxt(sub / "krr4.csv", krr_matrix(4, 1.0), delimiter=",")
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[[collection]]\nname = "custom"\nmechanism = "matrix"\nmatrix = "mats/krr4.csv"\n'
        'n = 2000\ndelta = 1e-6\n\n'
        '[[collection]]\nname = "inline"\nmechanism = "matrix"\neps0 = 1.0\n'
        'matrix = [[0.5, 0.5], [0.3, 0.7]]\nn = 2000\ndelta = 1e-6\n'
    )
    rows = load_plan(plan)
    assert rows[0].eps0 is None and Path(rows[0].matrix) == sub / "krr4.csv"
    assert rows[1].matrix == ((0.5, 0.5), (0.3, 0.7))
    doc = run_json(capsys, "report", str(plan))
    assert doc["collections"][0]["eps0"] == pytest.approx(1.0)
    for r in doc["collections"]:
        assert_bracket(r["epsilon_upper"], r["epsilon_lower"])


def test_default_plan_loads_without_evaluating():
    rows = load_plan(None)
    assert 5 <= len(rows) <= 10
    assert len({r.name for r in rows}) == len(rows)
    assert {r.mechanism for r in rows} >= {"krr", "rappor", "oue", "blh"}
    assert sum(r.n >= 10**8 for r in rows) <= 2
    for r in rows:
        assert isinstance(r, Collection)
        assert r.comment
        assert 0.5 <= r.eps0 <= 8
        assert 10**4 <= r.n <= 10**8
        assert 1e-10 <= r.delta <= 1e-6
        r.build()  # mechanism parameters are accepted by mechanisms.make


def test_default_plan_evaluate_small_rows():
    rows = [r for r in load_plan(None) if r.n <= 10**5]
    assert rows
    results = evaluate_plan(rows)
    for r, res in zip(rows, results):
        assert res["name"] == r.name and res["n"] == r.n
        assert_bracket(res["epsilon_upper"], res["epsilon_lower"])


@pytest.mark.slow
def test_default_plan_report(capsys):
    doc = run_json(capsys, "report")
    rows = load_plan(None)
    assert [r["name"] for r in doc["collections"]] == [r.name for r in rows]
    for r in doc["collections"]:
        assert_bracket(r["epsilon_upper"], r["epsilon_lower"])
        assert r["epsilon_upper"] <= r["eps0"] * (1 + 1e-9)


# --------------------------------------------------------------------------- malformed plans


@pytest.mark.parametrize(
    "fixture, row, name, field",
    [
        ("plan_bad_missing.toml", 2, "no delta", "delta"),
        ("plan_bad_eps0.toml", 3, "emoji", "eps0"),
        ("plan_bad_mechanism.json", 1, "mystery", "mechanism"),
        ("plan_bad_n.toml", 2, "vague", "n"),
    ],
)
def test_malformed_plan_fixtures(capsys, fixture, row, name, field):
    code, out, err = run(capsys, "report", str(DATA / fixture))
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and "Traceback" not in err
    assert f"plan row {row} ({name!r})" in err
    assert f"field {field!r}" in err
    with pytest.raises(PlanError) as info:
        load_plan(DATA / fixture)
    exc = info.value
    assert isinstance(exc, ParameterError)
    assert (exc.row, exc.name, exc.field, exc.parameter) == (row, name, field, field)


def test_bad_eps0_message_format():
    with pytest.raises(PlanError, match=r"^plan row 3 \('emoji'\): field 'eps0': must be > 0"):
        load_plan(DATA / "plan_bad_eps0.toml")


ROW = {"name": "r", "mechanism": "krr", "k": 4, "eps0": 1.0, "n": 1000, "delta": 1e-6}


@pytest.mark.parametrize(
    "change, field",
    [
        ({"eps0": float("nan")}, "eps0"),
        ({"eps0": "1.0"}, "eps0"),
        ({"delta": 1.5}, "delta"),
        ({"n": 0}, "n"),
        ({"n": 10.5}, "n"),
        ({"n": True}, "n"),
        ({"k": 1}, "k"),
        ({"name": ""}, "name"),
        ({"mechanism": 3}, "mechanism"),
        ({"comment": 5}, "comment"),
        ({"epsO": 1.0}, "epsO"),
        ({"matrix": 3}, "matrix"),
        ({"mechanism": "hr", "k": None, "d": 6}, "d"),  # d must be a power of 2
    ],
)
def test_malformed_rows(tmp_path, capsys, change, field):
    row = {key: value for key, value in {**ROW, **change}.items() if value is not None}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"collection": [ROW | {"name": "fine"}, row]}))
    with pytest.raises(PlanError) as info:
        load_plan(plan)
    assert info.value.row == 2
    assert info.value.field == field
    assert f"field {field!r}" in str(info.value)
    code, out, err = run(capsys, "report", str(plan))
    assert code == 2 and "plan row 2" in err and f"field {field!r}" in err


def test_missing_eps0_in_plan(tmp_path):
    plan = tmp_path / "plan.json"
    row = dict(ROW)
    del row["eps0"]
    plan.write_text(json.dumps([row]))
    with pytest.raises(PlanError, match=r"plan row 1 \('r'\): field 'eps0': required"):
        load_plan(plan)


def test_duplicate_names(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([ROW, ROW]))
    with pytest.raises(PlanError, match=r"plan row 2 \('r'\): field 'name': duplicate"):
        load_plan(plan)


@pytest.mark.parametrize(
    "filename, content, needle",
    [
        ("plan.toml", "[[collection]\nname = 1", "invalid TOML"),
        ("plan.json", "{not json", "invalid JSON"),
        ("plan.yaml", "collection: []", "unsupported plan format"),
        ("plan.toml", 'title = "x"\n', "unknown top-level key 'title'"),
        ("plan.json", '{"collection": []}', "no collections"),
        ("plan.json", '[1, 2]', "plan row 1"),
    ],
)
def test_unreadable_plans(tmp_path, capsys, filename, content, needle):
    plan = tmp_path / filename
    plan.write_text(content)
    code, out, err = run(capsys, "report", str(plan))
    assert code == 2
    assert err.startswith("error: ") and needle in err and "Traceback" not in err


def test_missing_plan_file(capsys, tmp_path):
    code, out, err = run(capsys, "report", str(tmp_path / "nope.toml"))
    assert code == 2 and "nope.toml" in err and err.startswith("error: ")


# --------------------------------------------------------------------------- one JSON schema

TINY_PLAN = '[[collection]]\nname = "flag"\nmechanism = "krr"\nk = 10\neps0 = 1.0\nn = 1000000\ndelta = 1e-6\n'

#: One cheap invocation of every subcommand that has --json, and what its inputs must echo.
SUBCOMMANDS = {
    "epsilon": (["epsilon", *KRR, "--n", "1e3", "--delta", "1e-6"], {"n": 1000, "delta": 1e-6, "eps0": 1.0}),
    "delta": (["delta", *KRR, "--n", "1000", "--epsilon", "0.5"], {"n": 1000, "epsilon": 0.5, "k": 10}),
    "compare": (["compare", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--n", "1000", "--delta", "1e-6"],
                {"n": 1000, "delta": 1e-6, "epsilon": None}),
    "rounds": (["rounds", *KRR, "--n", "1e6", "--target-epsilon", "0.1", "--delta", "1e-8", "--max-rounds", "5"],
               {"n": 1000000, "target_epsilon": 0.1, "max_rounds": 5}),
    "eps0": (["eps0", "--mechanism", "krr", "--k", "10", "--n", "10000", "--target-epsilon", "0.3", "--delta", "1e-6"],
             {"n": 10000, "target_epsilon": 0.3, "eps0_max": 20.0}),
    "n": (["n", *KRR, "--target-epsilon", "0.5", "--delta", "1e-6"], {"target_epsilon": 0.5, "n_max": 10**12}),
    "report": (["report", "PLAN"], {"method": "optimal", "rtol": 1e-3}),
}


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_json_schema_is_the_same_for_every_subcommand(capsys, tmp_path, command):
    argv, echoed = SUBCOMMANDS[command]
    plan = tmp_path / "plan.toml"
    plan.write_text(TINY_PLAN)
    argv = [str(plan) if a == "PLAN" else a for a in argv]
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0 and err == "", err
    doc = json.loads(out)
    assert list(doc) == ENVELOPE_KEYS
    assert doc["schema_version"] == SCHEMA_VERSION
    assert doc["version"] == shuffleamp.__version__
    assert doc["command"] == command and doc["error"] is None
    for key, value in echoed.items():      # every parameter as parsed, defaults included
        assert key in doc["inputs"], key
        assert doc["inputs"][key] == (pytest.approx(value) if isinstance(value, float) else value), key
    assert isinstance(doc["result"], dict) and doc["result"]
    assert "np.float64" not in out and "Infinity" not in out and "NaN" not in out


def test_json_bounds_name_their_guarantee_and_evaluator(capsys):
    d = run_json(capsys, "delta", "--mechanism", "rappor", "--d", "128", "--eps0", "2", "--n", "100000",
                 "--epsilon", "0.5")
    up, lo = d["bounds"]["upper"], d["bounds"]["lower"]
    assert up["guarantee"] == "certified upper bound" and lo["guarantee"] == "certified lower bound"
    assert up["value"] == d["delta_upper"] and lo["value"] == d["delta_lower"]
    # the evaluator reported next to each number is the one recorded in its evaluation, not the one requested
    grid = d["settings"]["grid"]
    assert up["evaluator"] == grid["upper"]["evaluator"] == d["evaluator"]
    assert lo["evaluator"] == grid["lower"]["evaluator"]
    assert d["settings"]["evaluator"] == "exact"
    assert "kind" not in d                   # no bare "kind": "upper" next to a lower bound
    clone = run_json(capsys, "epsilon", *KRR, "--n", "1000", "--delta", "1e-6", "--method", "clone")
    assert clone["bounds"]["lower"] is None and clone["bounds"]["upper"]["guarantee"] == "certified upper bound"
    vr = run_json(capsys, "epsilon", *KRR, "--n", "1000", "--delta", "1e-6", "--method", "variation-ratio")
    assert "UNSOUND" in vr["bounds"]["upper"]["guarantee"]


# --------------------------------------------------------------------------- errors: JSON, exit codes, no traceback


@pytest.mark.parametrize("argv, etype, parameter", [
    (["epsilon", "--mechanism", "krr", "--k", "10", "--eps0", "-1", "--n", "100", "--delta", "1e-6"],
     "ParameterError", "eps0"),
    (["epsilon", *KRR, "--n", "100"], "UsageError", "delta"),
    (["epsilon", *KRR, "--n", "lots", "--delta", "1e-6"], "UsageError", "n"),
    (["epsilon", *KRR, "--n", "100", "--n", "200", "--delta", "1e-6"], "UsageError", "n"),
    (["eps0", *KRR, "--n", "100", "--target-epsilon", "1", "--delta", "1e-6"], "UsageError", "eps0"),
    (["report", "nope.toml"], "PlanError", "plan"),
])
def test_json_errors(capsys, argv, etype, parameter):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 2
    assert err == "" and "Traceback" not in out
    doc = json.loads(out)
    assert list(doc) == ENVELOPE_KEYS
    assert doc["result"] is None and doc["command"] == argv[0]
    assert doc["error"]["type"] == etype
    assert doc["error"]["parameter"] == parameter
    assert doc["error"]["message"]


def test_internal_error_is_reported_without_traceback(capsys, monkeypatch):
    def boom(*args, **kwargs):
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(shuffleamp, "epsilon", boom)
    monkeypatch.delenv("SHUFFLEAMP_TRACEBACK", raising=False)
    code, out, err = run(capsys, "epsilon", *KRR, "--n", "100", "--delta", "1e-6")
    assert code == 70
    assert out == "" and "Traceback" not in err
    assert err.startswith("error: internal error (ZeroDivisionError: simulated bug)") and "report" in err
    code, out, err = run(capsys, "epsilon", *KRR, "--n", "100", "--delta", "1e-6", "--json")
    assert code == 70 and err == ""
    doc = json.loads(out)
    assert doc["error"]["type"] == "InternalError" and "simulated bug" in doc["error"]["message"]


def test_matrix_not_utf8_is_a_typed_error(capsys, tmp_path):
    csv = tmp_path / "latin1.csv"
    csv.write_bytes("0,5;0,5\n0\xe9\n".encode("latin-1") + b"\xff\xfe")
    code, out, err = run(capsys, "epsilon", "--mechanism", "matrix", "--matrix", str(csv), "--n", "100",
                         "--delta", "1e-6")
    assert code == 2 and out == ""
    assert err.startswith("error: matrix: ") and "UTF-8" in err and "Traceback" not in err
    code, out, err = run(capsys, "epsilon", "--mechanism", "matrix", "--matrix", str(csv), "--n", "100",
                         "--delta", "1e-6", "--json")
    doc = json.loads(out)
    assert code == 2 and doc["error"]["type"] == "ParameterError" and doc["error"]["parameter"] == "matrix"
    with pytest.raises(ParameterError) as info:
        shuffleamp.mechanisms.make("matrix", matrix=str(csv))
    assert info.value.parameter == "matrix"


# --------------------------------------------------------------------------- options a subcommand does not use


@pytest.mark.parametrize("argv, option", [
    (["eps0", "--mechanism", "krr", "--k", "10", "--n", "1000", "--target-epsilon", "1", "--delta", "1e-8",
      "--eps0", "3"], "--eps0"),          # must not be read as an abbreviation of --eps0-max either
    (["eps0", "--mechanism", "krr", "--k", "10", "--n", "1000", "--target-epsilon", "1", "--delta", "1e-8",
      "--matrix", "P.csv"], "--matrix"),
    (["n", *KRR, "--target-epsilon", "1", "--delta", "1e-8", "--n", "5"], "--n"),
    (["n", *KRR, "--target-epsilon", "1", "--delta", "1e-8", "--n-m", "5"], "--n-m"),   # no abbreviations
    (["report", "--evaluator", "fft"], "--evaluator"),
    (["rounds", *KRR, "--n", "1000", "--target-epsilon", "1", "--delta", "1e-8", "--rtol", "1e-2"], "--rtol"),
    (["compare", *KRR, "--n", "1000", "--delta", "1e-8", "--method", "clone"], "--method"),
    (["epsilon", *KRR, "--n", "1000", "--delta", "1e-8", "--epsilon", "1"], "--epsilon"),
    (["plan-template", "--delta", "1e-6"], "--delta"),
])
def test_options_a_subcommand_does_not_use_are_rejected(capsys, argv, option):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert option in err and "Traceback" not in err
    assert f"usage: shuffleamp {argv[0]}" in err


def test_scalar_options_take_one_value(capsys):
    code, out, err = run(capsys, "epsilon", *KRR, "--n", "1e4", "--n", "1e5", "--delta", "1e-6")
    assert code == 2 and "--n" in err and "more than once" in err
    code, out, err = run(capsys, "epsilon", *KRR, "--n", "1e4,1e5", "--delta", "1e-6")
    assert code == 2 and "--n" in err and "one value" in err
    code, out, err = run(capsys, "epsilon", "--mechanism", "krr", "--mechanism", "blh", "--eps0", "1",
                         "--n", "100", "--delta", "1e-6")
    assert code == 2 and "--mechanism" in err


def test_list_options_repeated_or_comma_separated(capsys):
    a = run_json(capsys, "epsilon", "--mechanism", "krr", "--k", "4", "--schedule", "0.5,1.0,2.0",
                 "--n", "1000", "--delta", "1e-6")
    b = run_json(capsys, "epsilon", "--mechanism", "krr", "--k", "4", "--schedule", "0.5", "--schedule", "1.0,2.0",
                 "--n", "1000", "--delta", "1e-6")
    assert a["schedule"] == b["schedule"] == [0.5, 1.0, 2.0]
    assert a["epsilon_upper"] == b["epsilon_upper"]
    c = run_json(capsys, "epsilon", "--mechanism", "joint", "--component", "krr:k=4:eps0=0.5,krr:k=4:eps0=0.5",
                 "--n", "1000", "--delta", "1e-6")
    d = run_json(capsys, "epsilon", "--mechanism", "joint", "--component", "krr:k=4:eps0=0.5",
                 "--component", "krr:k=4:eps0=0.5", "--n", "1000", "--delta", "1e-6")
    assert c["mechanism"] == d["mechanism"] and c["epsilon_upper"] == d["epsilon_upper"]


# --------------------------------------------------------------------------- text output


def _text_value(out: str, label: str) -> str:
    line = next(ln for ln in out.splitlines() if ln.strip().startswith(label))
    return line.split("=", 1)[1].split()[0] if "=" in line else line


def test_text_names_the_guarantee_and_rounds_outwards(capsys):
    argv = ("epsilon", *KRR, "--n", "20000", "--delta", "1e-6")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert "ε (upper, certified) = " in out and "ε (lower)" in out and "nats" in out
    assert "evaluator : exact" in out and "certified δ error" in out
    d = run_json(capsys, *argv)
    upper, lower = float(_text_value(out, "ε (upper")), float(_text_value(out, "ε (lower"))
    assert upper >= d["epsilon_upper"] and lower <= d["epsilon_lower"]      # printed outwards
    assert upper > lower                                                 # enough digits to show the bracket
    assert "np.float64" not in out


def test_denormal_delta_is_printed_as_a_bound(capsys):
    argv = ("delta", "--mechanism", "rappor", "--d", "128", "--eps0", "2", "--n", "100000", "--epsilon", "0.5")
    d = run_json(capsys, *argv)
    assert 0 < d["delta_upper"] < 1e-300 and d["bounds"]["upper"]["evaluator"] == "chernoff"
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert "δ (upper, certified) < 1e-300 (Chernoff bound)" in out
    assert "e-324" not in out and "4.94066" not in out
    assert "in [0," not in out


def test_planning_text_prints_the_certified_value(capsys):
    argv = ("n", *KRR[:4], "--eps0", "4", "--target-epsilon", "0.5", "--delta", "1e-6")
    d = run_json(capsys, *argv)
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    import re
    m = re.search(r"delta_upper = (\S+) ≤ (\S+) at epsilon", out)
    assert m, out
    printed, target = float(m.group(1)), float(m.group(2))
    assert target == 1e-6
    assert d["delta_upper_at_answer"] <= printed < target          # rounded up, yet shown below the target
    assert f"smallest n: {d['n']} " in out


def test_result_reprs_are_one_line():
    from shuffleamp.mechanisms import KRR as KRRm
    r = shuffleamp.epsilon(KRRm(1.0, 10), 1000, 1e-6)
    text = repr(r)
    assert "\n" not in text and text.startswith("BoundResult(epsilon: upper=")
    # n = 1000, 4-atom k-RR laws: the exact binomial-mixture sums evaluate delta (evaluator name in the repr)
    assert "np.float64" not in text and "evaluator='binomial-mixture'" in text
    v = shuffleamp.delta(KRRm(1.0, 10), [1000, 2000], 0.5)
    assert "\n" not in repr(v) and "np." not in repr(v)


# --------------------------------------------------------------------------- plan template


def test_plan_template_round_trip(capsys, tmp_path):
    code, out, err = run(capsys, "plan-template")
    assert code == 0 and err == ""
    assert out.lstrip().startswith("#") and out.count("\n# ") >= 10        # commented
    import tomllib
    doc = tomllib.loads(out)                                               # valid TOML
    plan = tmp_path / "plan.toml"
    plan.write_text(out, encoding="utf-8")
    rows = load_plan(plan)
    assert [r.name for r in rows] == [c["name"] for c in doc["collection"]]
    assert rows.budget == doc["budget"]
    result = run_json(capsys, "report", "--plan", str(plan))
    assert [c["name"] for c in result["collections"]] == [r.name for r in rows]
    assert result["total"]["holds"] is True
    code, out, err = run(capsys, "report", str(plan), "--plan", str(plan))
    assert code == 2 and "plan" in err


def test_text_output_on_an_ascii_terminal(monkeypatch):
    """A terminal that cannot encode ε / δ / ≤ gets ASCII names instead of a UnicodeEncodeError."""
    import io
    import sys

    buf = io.BytesIO()
    stream = io.TextIOWrapper(buf, encoding="ascii")
    monkeypatch.setattr(sys, "stdout", stream)
    code = main(["n", *KRR[:4], "--eps0", "4", "--target-epsilon", "0.5", "--delta", "1e-6"])
    code2 = main(["epsilon", *KRR, "--n", "1000", "--delta", "1e-6"])
    stream.flush()
    text = buf.getvalue().decode("ascii")
    assert code == code2 == 0
    assert "<= 1e-06" in text and "eps (upper, certified) = " in text and "eps (lower)" in text


def test_report_json_inputs_name_the_plan_once(capsys, tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text(TINY_PLAN)
    doc = run_envelope(capsys, "report", "--plan", str(plan))
    assert doc["inputs"]["plan"] == str(plan) and "plan_option" not in doc["inputs"]
    assert doc["result"]["plan"] == str(plan)
