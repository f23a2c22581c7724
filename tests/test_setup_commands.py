"""The README's set-up section is exactly two commands, and CI runs exactly the second one.

A new user copies the set-up commands verbatim: the first installs the package and runs the main job (the
default plan's report), the second installs the test extras and runs the tests.  ``.ci/run`` is what CI
executes; it must run the README's test command, character for character, so that what the README promises
is what CI checks.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

INSTALL_AND_REPORT = 'python -m pip install . && shuffleamp report'
TEST = 'python -m pip install ".[test]" && python -m pytest -m "not slow" -q -n 2'


def _setup_commands() -> list[str]:
    """The indented (code) lines of the README's "Set-up" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^## Set-up[^\n]*\n(.*?)^## ", text, re.S | re.M)
    assert m, "README has no Set-up section"
    return [line.strip() for line in m.group(1).splitlines() if line.startswith("    ") and line.strip()]


def test_readme_setup_is_install_and_report_then_tests():
    assert _setup_commands() == [INSTALL_AND_REPORT, TEST]


def test_ci_runs_the_readme_test_command():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    commands = [line for line in lines if line and not line.startswith("#") and not line.startswith("set ")
                and not line.startswith("cd ")]
    assert commands == [TEST]
    assert TEST in (ROOT / "README.md").read_text(encoding="utf-8")
