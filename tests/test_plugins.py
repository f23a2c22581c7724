"""Mechanisms as plugins: the k-subset package under ``tests/plugins`` registered through the
``shuffleamp.mechanisms`` entry point, used from the command line, a plan file and a sweep.

Installation route (in CI): the test writes the plugin's ``*.dist-info`` (``METADATA`` and ``entry_points.txt``,
generated from the plugin's own ``pyproject.toml``) into a temporary directory and runs the command
line in subprocesses whose ``PYTHONPATH`` holds that directory and the plugin's source. That is what
``pip install`` leaves behind for an importable package, it needs no network and no build backend, and
:func:`importlib.metadata.entry_points` discovers it exactly as for an installed package. The test
process itself never loads the plugin (its registry stays the built-in one). A slow test installs the
package with ``pip install --no-build-isolation --no-deps --no-index --target`` (offline, needs
setuptools) and runs the command line on that installation.

The numbers are checked against an independent construction: the k-subset matrix written out here
and evaluated as a generic :class:`~shuffleamp.mechanisms.MatrixMechanism` (every ordered input pair),
whose certified bracket must overlap the plugin's.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import shuffleamp
from shuffleamp.mechanisms import MatrixMechanism

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = Path(__file__).resolve().parent / "plugins" / "shuffleamp_ksubset"


def _install_metadata(target: Path) -> None:
    """The ``.dist-info`` of the plugin (what ``pip install`` writes), from its ``pyproject.toml``."""
    meta = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = target / f"{meta['name'].replace('-', '_')}-{meta['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n",
                                   encoding="utf-8")
    groups = meta["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n" for g, eps in groups.items()),
        encoding="utf-8")


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory):
    """Environment of a subprocess in which the plugin is installed."""
    site = tmp_path_factory.mktemp("site")
    _install_metadata(site)
    here = str(Path(shuffleamp.__file__).resolve().parents[1])      # the shuffleamp under test
    paths = [str(PLUGIN), str(site), here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths), PYTHONWARNINGS="default")


def cli(env, *argv, cwd=None):
    """``shuffleamp ARGV`` in a subprocess: (exit code, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", "shuffleamp.cli", *argv], env=env, cwd=cwd, capture_output=True,
                       text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


#: Runs several command lines through the CLI's entry point in one subprocess (one interpreter start).
_DRIVER = """
import contextlib, io, json, sys
from shuffleamp.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        code = main(argv)
    out.append([code, o.getvalue(), e.getvalue()])
print(json.dumps(out))
"""


def cli_many(env, *argvs):
    """``shuffleamp ARGV`` for each ARGV, in one subprocess: a list of (exit code, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps([list(a) for a in argvs])], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return [tuple(r) for r in json.loads(p.stdout.strip().splitlines()[-1])]


def ksubset_matrix(eps0: float, k: int, s: int) -> np.ndarray:
    """The k-subset randomizer written out independently of the plugin: P[x, S] ∝ e^eps0 if x ∈ S, else 1."""
    subsets = list(itertools.combinations(range(k), s))
    P = np.array([[math.exp(eps0) if x in S else 1.0 for S in subsets] for x in range(k)])
    return P / P.sum(axis=1, keepdims=True)


def overlap(a_up, a_lo, b_up, b_lo):
    """Two certified brackets of the same quantity overlap (a wrong number on either side breaks this)."""
    assert a_lo <= a_up and b_lo <= b_up
    assert a_up >= b_lo * (1 - 1e-9) and b_up >= a_lo * (1 - 1e-9)


N, DELTA, EPS0 = 2000, 1e-6, 1.0


def test_plugin_epsilon_from_the_command_line(plugin_env):
    code, out, err = cli(plugin_env, "epsilon", "--mechanism", "ksubset", "--param", "k=5", "--param", "s=2",
                         "--eps0", str(EPS0), "--n", str(N), "--delta", str(DELTA), "--json")
    assert code == 0, err
    res = json.loads(out)["result"]
    assert res["mechanism"] == {"mechanism": "ksubset", "eps0": EPS0, "k": 5, "s": 2}
    ref = shuffleamp.epsilon(MatrixMechanism(ksubset_matrix(EPS0, 5, 2)), N, DELTA)
    overlap(res["epsilon_upper"], res["epsilon_lower"], ref.upper, ref.lower)
    # the named flag --k and --param give the same mechanism
    [(code, out2, err)] = cli_many(plugin_env, ["epsilon", "--mechanism", "ksubset", "--k", "5", "--param", "s=2",
                                                "--eps0", str(EPS0), "--n", str(N), "--delta", str(DELTA), "--json"])
    assert code == 0, err
    assert json.loads(out2)["result"]["epsilon_upper"] == res["epsilon_upper"]


def test_plugin_missing_required_parameter_is_an_error_naming_it(plugin_env):
    base = ["epsilon", "--mechanism", "ksubset", "--eps0", "1", "--n", "1000", "--delta", "1e-6"]
    missing_json, missing_text, out_of_range, undeclared = cli_many(
        plugin_env, base + ["--param", "k=5", "--json"], base + ["--param", "k=5"],
        base + ["--param", "k=5", "--param", "s=0", "--json"],
        base + ["--param", "k=5", "--param", "s=2", "--param", "t=1", "--json"])
    code, out, err = missing_json
    assert code == 2
    error = json.loads(out)["error"]
    assert error["parameter"] == "s" and "required" in error["message"] and "--param s=" in error["message"]
    code, out, err = missing_text
    assert code == 2 and out == "" and err.startswith("error: s: required") and "Traceback" not in err
    # a value outside the declared range, and an undeclared name, are errors naming the parameter
    code, out, err = out_of_range
    assert code == 2 and json.loads(out)["error"]["parameter"] == "s"
    code, out, err = undeclared
    assert code == 2
    error = json.loads(out)["error"]
    assert error["parameter"] == "t" and "s: size of the reported subset" in error["message"]


def test_plugin_in_a_plan_file(plugin_env, tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text(f"""
[[collection]]
name = "subsets"
mechanism = "ksubset"
k = 5
s = [1, 2]
eps0 = {EPS0}
n = {N}
delta = {DELTA}
""", encoding="utf-8")
    complete = tmp_path / "complete.toml"
    complete.write_text(plan.read_text(encoding="utf-8"), encoding="utf-8")
    plan.write_text(plan.read_text(encoding="utf-8").replace("s = [1, 2]\n", ""), encoding="utf-8")
    (code, out, err), missing = cli_many(plugin_env, ["report", str(complete), "--json"], ["report", str(plan)])
    assert code == 0, err
    scenarios = json.loads(out)["result"]["scenarios"]
    assert [sc["values"] for sc in scenarios] == [{"subsets.s": 1}, {"subsets.s": 2}]
    rows = [r for sc in scenarios for r in sc["collections"]]
    assert [r["name"] for r in rows] == ["subsets", "subsets"]
    for r, s in zip(rows, (1, 2)):
        assert r["mechanism"] == {"mechanism": "ksubset", "eps0": EPS0, "k": 5, "s": s}
        ref = shuffleamp.epsilon(MatrixMechanism(ksubset_matrix(EPS0, 5, s)), N, DELTA)
        overlap(r["epsilon_upper"], r["epsilon_lower"], ref.upper, ref.lower)
    code, out, err = missing
    assert code == 2 and "field 's'" in err and "required" in err and "Traceback" not in err


def test_plugin_in_a_sweep(plugin_env):
    (code, out, err), missing = cli_many(
        plugin_env, ["sweep", "--mechanism", "ksubset", "--param", "k=5", "--param", "s=1,2", "--eps0", str(EPS0),
                     "--n", f"{N},{2 * N}", "--delta", str(DELTA), "--json"],
        ["sweep", "--mechanism", "ksubset", "--param", "k=5", "--eps0", "1", "--n", "1000", "--delta", "1e-6"])
    assert code == 0, err
    result = json.loads(out)["result"]
    assert result["columns"][:3] == ["mechanism", "k", "s"]
    rows = result["rows"]
    assert [(r["s"], r["n"]) for r in rows] == [(1, N), (1, 2 * N), (2, N), (2, 2 * N)]
    for r in rows[::2]:
        ref = shuffleamp.epsilon(MatrixMechanism(ksubset_matrix(EPS0, 5, r["s"])), r["n"], DELTA)
        overlap(r["epsilon_upper"], r["epsilon_lower"], ref.upper, ref.lower)
    code, out, err = missing
    assert code == 2 and err.startswith("error: s: required")


def test_broken_plugin_is_skipped_with_a_warning(plugin_env, tmp_path):
    info = tmp_path / "broken_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[shuffleamp.mechanisms]\nbroken = no_such_module:Nothing\n"
                                           "krr = shuffleamp_ksubset:KSubset\n", encoding="utf-8")
    env = dict(plugin_env, PYTHONPATH=os.pathsep.join([str(tmp_path), plugin_env["PYTHONPATH"]]))
    code = ("from shuffleamp.mechanisms import registry, KRR\n"
            "reg = registry()\n"
            "assert 'broken' not in reg and reg['krr'] is KRR and 'ksubset' in reg, sorted(reg)\n"
            "print(sorted(reg))\n")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "mechanism plugin 'broken'" in p.stderr and "failed to load" in p.stderr
    assert "mechanism plugin 'krr'" in p.stderr


def test_contributing_example_is_the_plugin():
    """CONTRIBUTING.md's worked example is the plugin package's source, verbatim."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = text.split("<!-- example:begin -->", 1)[1].split("<!-- example:end -->", 1)[0]
    code = block.split("```python", 1)[1].rsplit("```", 1)[0].strip()
    source = (PLUGIN / "shuffleamp_ksubset" / "__init__.py").read_text(encoding="utf-8")
    assert code and code in source
    meta = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["entry-points"]["shuffleamp.mechanisms"] == {"ksubset": "shuffleamp_ksubset:KSubset"}


@pytest.mark.slow
def test_plugin_package_installs_with_pip(tmp_path):
    """The plugin's pyproject.toml is a valid package: ``pip install`` (offline, into a target directory)
    writes the entry point the dist-info route of the other tests imitates."""
    pytest.importorskip("setuptools")
    target = tmp_path / "target"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                        "--quiet", "--target", str(target), str(PLUGIN)], capture_output=True, text=True, timeout=300)
    if p.returncode != 0 and "setuptools" in p.stderr:
        pytest.skip("no offline build backend: " + p.stderr.strip().splitlines()[-1])
    assert p.returncode == 0, p.stderr
    [info] = target.glob("shuffleamp_ksubset-*.dist-info")
    assert "ksubset = shuffleamp_ksubset:KSubset" in (info / "entry_points.txt").read_text(encoding="utf-8")
    here = str(Path(shuffleamp.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(target), here, os.environ.get("PYTHONPATH", "")]))
    code, out, err = cli(env, "epsilon", "--mechanism", "ksubset", "--param", "k=5", "--param", "s=2", "--eps0", "1",
                         "--n", "1000", "--delta", "1e-6", "--json")
    assert code == 0, err
    assert json.loads(out)["result"]["mechanism"]["s"] == 2
