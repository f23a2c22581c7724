"""Sweeps (shuffleamp.sweep): value/range parsing, product order, tables and writers, the CLI,
progress output, the Dask backend against the serial run, and plans with list-valued fields."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

import shuffleamp as sa
from shuffleamp import cli
from shuffleamp.errors import ParameterError, PlanError, ResourceLimitError
from shuffleamp.mechanisms import make
from shuffleamp.sweep import Records, expand_grid, parse_values, to_csv, to_json, to_records

ISSUE_COLUMNS = ["mechanism", "k", "eps0", "n", "delta", "epsilon_upper", "epsilon_lower"]


# --------------------------------------------------------------------------- values and ranges
def test_parse_values_lists_and_ranges():
    assert parse_values("1e3:1e6:log:4", "n") == [1000, 10000, 100000, 1000000]
    assert all(type(v) is int for v in parse_values("1e3:1e6:log:4", "n"))
    assert parse_values("1,2", "eps0") == [1.0, 2.0]
    assert parse_values("0.5:2:lin:4", "eps0") == [0.5, 1.0, 1.5, 2.0]
    assert parse_values([1, "3,4"], "eps0") == [1.0, 3.0, 4.0]
    assert parse_values(1e-8, "delta") == [1e-8]
    assert parse_values("1e6", "n") == [1000000]
    assert parse_values("krr, BLH", "mechanism") == ["krr", "blh"]
    assert parse_values("none,64", "d") == [None, 64]
    # log-spaced values: geometric, ends exactly as written
    vals = parse_values("1e-10:1e-6:log:5", "delta")
    assert vals[0] == 1e-10 and vals[-1] == 1e-6
    assert all(math.isclose(b / a, 10.0, rel_tol=1e-12) for a, b in zip(vals, vals[1:]))
    # integer ranges are rounded, and rounding duplicates dropped
    assert parse_values("1:10:log:20", "n") == list(range(1, 11))


@pytest.mark.parametrize("text, fragment", [
    ("1e3:1e6:log", "START:STOP:log:COUNT"),
    ("1e3:1e6:exp:4", "'log' or 'lin'"),
    ("1e3:1e6:log:1", "COUNT must be >= 2"),
    ("1e3:1e6:log:x", "COUNT must be an integer"),
    ("0:1e6:log:4", "START > 0"),
    ("abc", "expected a number"),
    ("1,,2", "empty value"),
    ("nan", "finite"),
])
def test_parse_values_errors_name_the_parameter(text, fragment):
    with pytest.raises(ParameterError) as e:
        parse_values(text, "n")
    assert e.value.parameter == "n"
    assert fragment in str(e.value)


def test_parse_values_rejects_booleans_and_huge_ranges():
    with pytest.raises(ParameterError, match="eps0"):
        parse_values([True], "eps0")
    with pytest.raises(ResourceLimitError):
        parse_values("1:2:lin:100000000", "eps0")


# --------------------------------------------------------------------------- the grid
def test_issue_example_columns_order_and_values():
    t = sa.sweep(mechanism="krr", k=10, eps0=[1, 2], n="1e3:1e6:log:4", delta=1e-8, as_frame=False)
    assert t.columns == ISSUE_COLUMNS
    assert len(t) == 8
    # product order: eps0 outer, n inner
    assert [(r["eps0"], r["n"]) for r in t] == [(e, n) for e in (1.0, 2.0) for n in (10**3, 10**4, 10**5, 10**6)]
    for r in t:
        single = sa.epsilon(make("krr", eps0=r["eps0"], k=10), r["n"], 1e-8)
        assert (r["epsilon_upper"], r["epsilon_lower"]) == (single.upper, single.lower)
        assert 0 <= r["epsilon_lower"] <= r["epsilon_upper"] <= r["eps0"]
    # certified upper decreases with n and increases with eps0
    for e in (1.0, 2.0):
        ups = [r["epsilon_upper"] for r in t if r["eps0"] == e]
        assert ups == sorted(ups, reverse=True)
    assert all(a["epsilon_upper"] < b["epsilon_upper"] for a, b in zip(t[:4], t[4:]))


def test_parameters_apply_to_the_mechanisms_that_take_them():
    points, columns = expand_grid("krr,blh,hr", k=[4, 10], d=64, eps0=1.0, n=[100, 1000], delta=1e-6)
    assert columns == ["mechanism", "k", "d", "eps0", "n", "delta"]
    rows = [p["_row"] for p in points]
    assert [r["mechanism"] for r in rows] == ["krr"] * 4 + ["blh"] * 2 + ["hr"] * 2
    assert [r["k"] for r in rows[:4]] == [4, 4, 10, 10] and all(r["k"] is None for r in rows[4:])
    assert all(r["d"] is None for r in rows[:4]) and all(r["d"] == 64 for r in rows[4:])


@pytest.mark.parametrize("kwargs, parameter", [
    (dict(mechanism="krr", k=10, eps0=1, n=100), "delta"),                           # neither target
    (dict(mechanism="krr", k=10, eps0=1, n=100, delta=1e-6, epsilon=0.5), "delta"),  # both targets
    (dict(mechanism="krr", k=10, d=64, eps0=1, n=100, delta=1e-6), "d"),             # not a krr parameter
    (dict(mechanism="krr,foo", k=10, eps0=1, n=100, delta=1e-6), "mechanism"),
    (dict(mechanism="krr", k=10, eps0=[1, -1], n=100, delta=1e-6), "eps0"),
    (dict(mechanism="krr", k=10, eps0=1, n="100,2.5", delta=1e-6), "n"),
    (dict(mechanism="krr", k=10, eps0=1, n=100, delta="1e-6,2"), "delta"),
    (dict(mechanism="krr", k=10, eps0=1, n=100, delta=1e-6, method="best"), "method"),
    (dict(mechanism="krr", k=10, eps0=1, n=100, delta=1e-6, evaluator="magic"), "evaluator"),
    (dict(mechanism="krr", k="10,1", eps0=1, n=100, delta=1e-6), "k"),               # built before any work
    (dict(mechanism="krr", k=10, eps0=1, n=100, delta=1e-6, scheduler="cloud"), "scheduler"),
    (dict(mechanism="joint", components=["krr:k=4:eps0=1"], eps0=1, n=100, delta=1e-6), "eps0"),
])
def test_bad_combinations_raise_typed_errors(kwargs, parameter):
    with pytest.raises(ParameterError) as e:
        sa.sweep(**kwargs, as_frame=False)
    assert e.value.parameter == parameter


def test_epsilon_target_gives_delta_columns_and_mechanism_objects():
    m = make("krr", eps0=1.0, k=4)
    t = sa.sweep(m, n=[100, 1000], epsilon=0.5, as_frame=False)
    assert t.columns == ["mechanism", "eps0", "n", "epsilon", "delta_upper", "delta_lower"]
    for r in t:
        single = sa.delta(m, r["n"], 0.5)
        assert (r["delta_upper"], r["delta_lower"]) == (single.upper, single.lower)
    t2 = sa.sweep(m, eps0=[0.5, 1.0], n=100, epsilon=0.5, as_frame=False)
    assert [r["eps0"] for r in t2] == [0.5, 1.0]
    assert t2[1]["delta_upper"] == t[0]["delta_upper"]


def test_composed_mechanisms_sweep_q():
    t = sa.sweep("subsample", components=["krr:k=4:eps0=1"], q=[0.5, 1.0], n=100, delta=1e-6, as_frame=False)
    assert t.columns == ["mechanism", "q", "eps0", "n", "delta", "epsilon_upper", "epsilon_lower"]
    assert t[0]["epsilon_upper"] < t[1]["epsilon_upper"]                      # subsampling amplifies
    full = sa.epsilon(make("krr", eps0=1.0, k=4), 100, 1e-6)
    assert t[1]["epsilon_upper"] == pytest.approx(full.upper, rel=1e-6)


def test_methods_errors_and_details_columns():
    t = sa.sweep("krr", k=10, eps0=4.0, n=[100, 10**6], delta=1e-6, method="optimal,clone-closed-form",
                 errors="record", details=True, as_frame=False)
    assert t.columns[-5:] == ["method", "sound", "evaluator", "delta_error", "error"]
    assert [r["method"] for r in t] == ["optimal", "clone-closed-form"] * 2
    bad = t[1]
    assert bad["epsilon_upper"] is None and "OutOfRegimeError" in bad["error"]
    good = t[2]
    assert good["error"] is None and good["sound"] is True and good["delta_error"] >= 0
    assert t[3]["epsilon_upper"] >= t[2]["epsilon_upper"]           # a sound method is above the optimal bound
    with pytest.raises(sa.OutOfRegimeError) as e:
        sa.sweep("krr", k=10, eps0=4.0, n=100, delta=1e-6, method="clone-closed-form", as_frame=False)
    assert "sweep point" in " ".join(getattr(e.value, "__notes__", []))


# --------------------------------------------------------------------------- tables and writers
def test_dataframe_and_records_write_the_same_csv_and_json():
    pd = pytest.importorskip("pandas")
    kw = dict(mechanism="krr,blh", k=10, eps0=1.0, n=[100, 1000], delta=1e-6)
    df = sa.sweep(**kw)
    rec = sa.sweep(**kw, as_frame=False)
    assert isinstance(df, pd.DataFrame) and isinstance(rec, Records)
    assert list(df.columns) == rec.columns
    assert str(df["k"].dtype) == "Int64"           # 10 and <NA>, not 10.0 and NaN
    assert to_csv(df) == to_csv(rec) == rec.to_csv()
    assert to_json(df) == to_json(rec)
    rows = list(csv.reader(io.StringIO(to_csv(rec))))
    assert rows[0] == ["mechanism", "k", "eps0", "n", "delta", "epsilon_upper", "epsilon_lower"]
    assert rows[1][:4] == ["krr", "10", "1.0", "100"] and rows[3][1] == ""
    assert float(rows[1][5]) == rec[0]["epsilon_upper"]           # all digits kept
    doc = json.loads(to_json(rec))
    assert doc[2]["k"] is None and doc[0]["epsilon_upper"] == rec[0]["epsilon_upper"]
    assert to_records(df) == rec


def test_writers_take_paths_and_buffers(tmp_path):
    rec = sa.sweep("krr", k=4, eps0=1.0, n=100, delta=1e-6, as_frame=False)
    rec.to_csv(tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text().splitlines()[0] == "mechanism,k,eps0,n,delta,epsilon_upper,epsilon_lower"
    buf = io.StringIO()
    to_json(rec, buf)
    assert json.loads(buf.getvalue())[0]["n"] == 100


# --------------------------------------------------------------------------- progress
def test_progress_silent_off_a_terminal_and_when_disabled(capsys):
    sa.sweep("krr", k=4, eps0=1.0, n=[100, 200], delta=1e-6, as_frame=False)              # stderr is not a TTY
    sa.sweep("krr", k=4, eps0=1.0, n=[100, 200], delta=1e-6, progress=False, as_frame=False)
    assert capsys.readouterr().err == ""


def test_progress_bar_when_forced(capsys, monkeypatch):
    import shuffleamp.sweep as sweep_mod

    monkeypatch.setattr(sweep_mod, "PROGRESS_DELAY", 0.0)
    sa.sweep("krr", k=4, eps0=1.0, n=[100, 200, 300], delta=1e-6, progress=True, as_frame=False)
    err = capsys.readouterr().err
    assert "sweep" in err and "3" in err
    with pytest.raises(ParameterError, match="progress"):
        sa.sweep("krr", k=4, eps0=1.0, n=100, delta=1e-6, progress="yes")


def test_busy_indicator_for_one_long_computation(capsys, monkeypatch):
    import time

    import shuffleamp.sweep as sweep_mod

    monkeypatch.setattr(sweep_mod, "PROGRESS_DELAY", 0.0)
    with sweep_mod.busy("epsilon", progress=True):
        time.sleep(0.7)
    assert "epsilon: 00:00 elapsed" in capsys.readouterr().err
    with sweep_mod.busy("epsilon", progress=False):
        time.sleep(0.6)
    with sweep_mod.busy("epsilon"):                          # stderr is not a terminal here
        time.sleep(0.6)
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------- command line
def test_cli_sweep_csv_issue_example(capsys):
    code = cli.main(["sweep", "--mechanism", "krr", "--k", "10", "--eps0", "1,2", "--n", "1e3:1e6:log:4",
                     "--delta", "1e-8", "--format", "csv"])
    out = capsys.readouterr()
    assert code == 0
    lines = out.out.strip().splitlines()
    assert lines[0] == ",".join(ISSUE_COLUMNS) and len(lines) == 9
    assert lines[1].startswith("krr,10,1.0,1000,1e-08,")


def test_cli_sweep_json_table_output_and_repeated_options(capsys, tmp_path):
    assert cli.main(["sweep", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--eps0", "2", "--n", "100",
                     "--delta", "1e-6", "--format", "json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    from shuffleamp.results import SCHEMA_VERSION

    assert list(doc) == ["schema_version", "version", "command", "inputs", "result", "error"]
    assert doc["schema_version"] == SCHEMA_VERSION and doc["command"] == "sweep" and doc["error"] is None
    assert doc["inputs"]["eps0"] == "1,2" and doc["inputs"]["n"] == "100"
    assert [r["eps0"] for r in doc["result"]["rows"]] == [1.0, 2.0]
    assert doc["result"]["columns"] == ["mechanism", "k", "eps0", "n", "delta", "epsilon_upper", "epsilon_lower"]
    assert cli.main(["sweep", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--n", "100,1000",
                     "--delta", "1e-6"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split() == ["mechanism", "k", "eps0", "n", "delta", "epsilon_upper", "epsilon_lower"]
    assert len(text) == 4
    out = tmp_path / "grid.csv"
    assert cli.main(["sweep", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--n", "100", "--delta", "1e-6",
                     "-o", str(out)]) == 0
    assert out.read_text().startswith("mechanism,k,eps0,n,delta,")


def test_cli_sweep_bad_input_exits_2(capsys):
    assert cli.main(["sweep", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--n", "1e3:1e6:exp:4",
                     "--delta", "1e-6"]) == 2
    assert "n:" in capsys.readouterr().err
    assert cli.main(["sweep", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--n", "100", "--delta", "1e-6",
                     "--scheduler", "cloud"]) == 2
    capsys.readouterr()
    assert cli.main(["sweep", "--mechanism", "krr", "--k", "4", "--eps0", "1", "--n", "1e3:1e6:exp:4",
                     "--delta", "1e-6", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)                  # under --json the error is JSON too
    assert doc["command"] == "sweep" and doc["result"] is None and doc["error"]["parameter"] == "n"


# --------------------------------------------------------------------------- dask
def test_dask_local_cluster_matches_serial():
    distributed = pytest.importorskip("dask.distributed")
    kw = dict(mechanism="krr,blh", k=10, eps0=[1.0, 2.0], n=[100, 1000], delta=1e-8, as_frame=False)
    serial = sa.sweep(**kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as lc:
        with distributed.Client(lc) as client:
            via_client = sa.sweep(**kw, scheduler=client, chunk_size=2)
        via_address = sa.sweep(**kw, scheduler=lc.scheduler_address)
        with pytest.raises(sa.OutOfRegimeError) as e:          # a worker's error is re-raised with its note
            sa.sweep("krr", k=10, eps0=4.0, n=[100, 10**6], delta=1e-6, method="clone-closed-form",
                     scheduler=lc.scheduler_address, as_frame=False)
        assert "sweep point" in " ".join(getattr(e.value, "__notes__", []))
    assert via_client == serial and via_address == serial        # same rows, same order, same numbers
    assert via_client.columns == serial.columns


# --------------------------------------------------------------------------- plans with lists
def test_plan_lists_expand_as_a_product_of_scenarios():
    from shuffleamp.config import parse_plan

    doc = {"collection": [
        {"name": "emoji", "mechanism": "krr", "k": 10, "eps0": [1, 2, 4], "n": [1000, 10**6], "delta": 1e-8},
        {"name": "single", "mechanism": "blh", "eps0": 1.0, "n": 1000, "delta": 1e-8},
    ]}
    rows = parse_plan(doc)
    assert len(rows.scenarios) == 6 and all(len(sc.plan) == 2 for sc in rows.scenarios)
    assert [(sc.plan[0].eps0, sc.plan[0].n) for sc in rows.scenarios] == [(e, n) for e in (1.0, 2.0, 4.0)
                                                                          for n in (1000, 10**6)]
    assert rows.scenarios[0].values == {"emoji.eps0": 1, "emoji.n": 1000}
    assert [r.name for r in rows] == ["emoji", "single"] and rows[0].row == 1 and rows[1].row == 2
    with pytest.raises(PlanError) as e:
        parse_plan({"collection": [{"name": "x", "mechanism": "krr", "k": 10, "eps0": [1, -1], "n": 10,
                                    "delta": 1e-8}]})
    assert e.value.field == "eps0" and "plan row 1" in str(e.value)
    with pytest.raises(PlanError) as e:
        parse_plan({"collection": [{"name": "x", "mechanism": "krr", "k": 10, "eps0": [], "n": 10, "delta": 1e-8}]})
    assert e.value.field == "eps0"
