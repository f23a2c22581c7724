"""Plots (shuffleamp.plot): files are written in the format of their suffix, are non-empty, and the
figure shows what was asked (axes, scales, curves); the CLI's plot and report --plot."""

from __future__ import annotations

import pytest

import shuffleamp as sa
from shuffleamp import cli
from shuffleamp.errors import ParameterError

pytest.importorskip("matplotlib")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_epsilon_versus_n_png_three_mechanisms(tmp_path):
    out = tmp_path / "curve.png"
    fig = sa.plot(out, mechanism="krr,blh,rappor", k=10, eps0=1.0, n="1e3:1e6:log:4", delta=1e-8)
    w, h = _png_size(out)
    assert w >= 800 and h >= 500 and out.stat().st_size > 10_000
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "nats" in ax.get_ylabel() and ax.get_xlabel().startswith("n ")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["krr (k=10)", "blh", "rappor"]
    # each curve is the certified upper bound at the swept n
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [1000, 10000, 100000, 1000000]
    table = sa.sweep("krr", k=10, eps0=1.0, n="1e3:1e6:log:4", delta=1e-8, as_frame=False)
    assert list(line.get_ydata()) == [r["epsilon_upper"] for r in table]
    assert len(ax.collections) == 3                          # one lower-to-upper band per mechanism


@pytest.mark.parametrize("suffix, magic", [(".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_vector_formats_by_suffix(tmp_path, suffix, magic):
    out = tmp_path / f"curve{suffix}"
    sa.plot(out, mechanism="krr", k=4, eps0=1.0, n=[100, 1000], delta=1e-6)
    assert out.read_bytes()[:len(magic)] == magic


def test_epsilon_versus_eps0_with_methods(tmp_path):
    out = tmp_path / "eps0.png"
    fig = sa.plot(out, mechanism="krr", k=10, eps0="1:3:lin:3", n=10**4, delta=1e-8, method="optimal,clone")
    _png_size(out)
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("local ε0")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["krr (k=10)", "krr (k=10) [clone, upper only]"]
    opt, clone = ax.get_lines()
    assert all(c >= o for o, c in zip(opt.get_ydata(), clone.get_ydata()))   # both sound upper bounds


def test_total_versus_rounds(tmp_path):
    out = tmp_path / "rounds.png"
    fig = sa.plot(out, mechanism="krr", k=10, eps0=1.0, n=10**6, delta=1e-8, rounds=[1, 4])
    _png_size(out)
    ax = fig.axes[0]
    total, basic = ax.get_lines()
    assert list(total.get_xdata()) == [1, 4]
    one = sa.epsilon(sa.mechanisms.make("krr", eps0=1.0, k=10), 10**6, 1e-8).upper
    assert total.get_ydata()[1] > total.get_ydata()[0]
    assert total.get_ydata()[1] <= basic.get_ydata()[1]       # PLD composition beats basic composition
    assert basic.get_ydata()[0] == one


def test_plot_errors(tmp_path):
    with pytest.raises(ParameterError) as e:
        sa.plot(tmp_path / "curve.jpg", mechanism="krr", k=4, eps0=1.0, n=[10, 100], delta=1e-6)
    assert e.value.parameter == "output"
    with pytest.raises(ParameterError) as e:
        sa.plot(None, x="delta", mechanism="krr", k=4, eps0=1.0, n=[10, 100], delta=1e-6)
    assert e.value.parameter == "x"
    with pytest.raises(ParameterError) as e:
        sa.plot(None, mechanism="krr", k=4, eps0=1.0, n=100, delta=1e-6, rounds=[1, 2], method="clone")
    assert e.value.parameter == "method"
    with pytest.raises(ParameterError) as e:                   # an argument the rounds plot would ignore
        sa.plot(None, mechanism="krr", k=4, eps0=1.0, n=100, delta=1e-6, rounds=[1, 2], evaluator="fft")
    assert e.value.parameter == "evaluator"
    with pytest.raises(ParameterError) as e:
        sa.plot(None, mechanism="krr", k=4, eps0=1.0, n=[10, 100], delta=1e-6, rounds=[1, 2], x="n")
    assert e.value.parameter == "rounds"


def test_cli_plot_and_report_plot(tmp_path, capsys):
    out = tmp_path / "curve.png"
    assert cli.main(["plot", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--n", "1e3:1e5:log:3",
                     "--delta", "1e-8", "-o", str(out)]) == 0
    _png_size(out)
    plan = tmp_path / "plan.toml"
    plan.write_text('[[collection]]\nname = "a"\nmechanism = "krr"\nk = 4\neps0 = [1, 2]\nn = 1000000\n'
                    'delta = 1e-6\n')
    png = tmp_path / "plan.png"
    assert cli.main(["report", str(plan), "--plot", str(png)]) == 2          # two scenarios: one plan to draw
    assert "scenarios" in capsys.readouterr().err
    plan.write_text('[[collection]]\nname = "a"\nmechanism = "krr"\nk = 4\neps0 = 1\nn = 1000000\n'
                    'delta = 1e-6\nrounds = 3\n')
    assert cli.main(["report", str(plan), "--plot", str(png)]) == 0
    _png_size(png)
    assert cli.main(["plot", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--n", "100", "--delta", "1e-8",
                     "-o", str(tmp_path / "x.gif")]) == 2
