"""The documentation builds with warnings as errors, and its examples (the README's) run.

Runs ``sphinx-build -W -b html`` and then ``sphinx-build -W -b doctest`` (user guide, command-line
examples and docstring examples) on ``docs/``, into a temporary directory, against the imported
``shuffleamp``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import shuffleamp

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

pytest.importorskip("sphinx")
pytest.importorskip("numpydoc")


def _sphinx(builder: str, out: Path, doctrees: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    # the subprocess documents the very package these tests import
    env["PYTHONPATH"] = os.pathsep.join([str(Path(shuffleamp.__file__).resolve().parents[1]),
                                         env.get("PYTHONPATH", "")])
    env.setdefault("OMP_NUM_THREADS", "1")
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", builder, "-d", str(doctrees),
           str(DOCS), str(out)]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_docs_build_without_warnings_and_examples_pass(tmp_path):
    doctrees = tmp_path / "doctrees"
    html = _sphinx("html", tmp_path / "html", doctrees)
    assert html.returncode == 0, html.stdout + html.stderr
    assert html.stderr.strip() == "", html.stderr
    index = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert "shuffleamp" in index
    api = (tmp_path / "html" / "api" / "bounds.html").read_text(encoding="utf-8")
    assert "shuffleamp.bounds.epsilon" in api            # API reference generated from the docstrings

    doc = _sphinx("doctest", tmp_path / "doctest", doctrees)
    report = (tmp_path / "doctest" / "output.txt").read_text(encoding="utf-8") if \
        (tmp_path / "doctest" / "output.txt").exists() else ""
    assert doc.returncode == 0, doc.stdout + doc.stderr + report
    assert "0 failures in tests" in report
    assert "Document: guide" in report and "Document: cli" in report


def test_user_facing_text_cites_papers_not_internal_paths():
    """README, docs and package sources never point users to internal notes."""
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", *DOCS.rglob("*.rst"), DOCS / "conf.py",
             *(ROOT / "src" / "shuffleamp").rglob("*.py"), *(ROOT / "src" / "shuffleamp").rglob("*.toml")]
    internal = re.compile(r"shared/|\bseed0\d*|\bdigests?\b", re.IGNORECASE)
    for path in files:
        m = internal.search(path.read_text(encoding="utf-8"))
        assert m is None, f"{path.relative_to(ROOT)} mentions {m.group(0)!r}"


def test_packaging_files():
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert "shuffleamp developers" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert (Path(shuffleamp.__file__).parent / "py.typed").exists()
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{shuffleamp.__version__}]" in changelog
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "py.typed" in pyproject and "sphinx" in pyproject and "numpydoc" in pyproject


# --------------------------------------------------------------------------- README commands


def _readme_commands():
    """(command line, expected output or None) for every ``shuffleamp ...`` line of the README.

    A fenced block whose first line is ``$ shuffleamp ...`` gives the exact expected output (the
    lines up to the closing fence); other command lines are only run.
    """
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        text = lines[i].strip()
        if lines[i].startswith("```") and i + 1 < len(lines) and lines[i + 1].startswith("$ shuffleamp "):
            j = i + 2
            while not lines[j].startswith("```"):
                j += 1
            out.append((lines[i + 1][2:], "\n".join(lines[i + 2:j]) + "\n"))
            i = j + 1
            continue
        if text.startswith("$ shuffleamp "):
            out.append((text[2:], None))
        elif text.startswith("shuffleamp ") or text.startswith("printf "):
            out.append((text, None))
        i += 1
    return out


def _run_line(line: str, cwd: Path, capsys) -> tuple[int, str]:
    """Run one README shell line (``shuffleamp ...`` through :func:`shuffleamp.cli.main`, ``printf`` and
    ``> FILE`` redirection emulated) in ``cwd``."""
    import shlex

    from shuffleamp.cli import main

    words = shlex.split(line, comments=True)
    target = None
    if ">" in words:
        k = words.index(">")
        words, target = words[:k], words[k + 1]
    if words[0] == "printf":
        text = words[1].encode().decode("unicode_escape")
        (cwd / target).write_text(text, encoding="utf-8")
        return 0, ""
    assert words[0] == "shuffleamp", line
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code = main(words[1:])
    finally:
        os.chdir(old)
    out = capsys.readouterr().out
    if target is not None:
        (cwd / target).write_text(out, encoding="utf-8")
    return code, out


def test_readme_sample_outputs_are_what_the_commands_print(capsys, tmp_path):
    samples = [(line, expected) for line, expected in _readme_commands() if expected is not None]
    assert len(samples) >= 3
    for line, expected in samples:
        code, out = _run_line(line, tmp_path, capsys)
        assert code == 0, line
        assert out == expected, f"README sample of `{line}` differs:\n{out}"


@pytest.mark.slow
def test_every_readme_command_runs(capsys, tmp_path):
    for line, _ in _readme_commands():
        code, out = _run_line(line, tmp_path, capsys)
        assert code == (2 if "--eps0 -1" in line else 0), line
        if "--json" in line:
            import json
            doc = json.loads(out)
            assert doc["schema_version"] == 1 and doc["version"] == shuffleamp.__version__
