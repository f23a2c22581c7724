"""Architecture checks: the package's modules form acyclic layers.

Every ``from . import x`` / ``from .x import y`` / ``import shuffleamp.x`` inside ``src/shuffleamp``
(module level *and* inside functions) is an edge. The graph must have no cycle, and each module
may import only modules of a strictly lower layer (or its own layer's listed lower neighbours).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "src" / "shuffleamp"

#: Layer of every module (lower numbers are lower layers). A module may import only modules whose
#: layer is strictly lower than its own. ``__init__`` is the public facade and may import anything.
LAYERS = {
    "errors": 0,
    "_lru": 0,
    "_reuse": 0,        # results shared by the calls of one evaluation (scoped, never global)
    "_validate": 1,
    "results": 1,
    "_numerics": 2,
    "_registry": 2,
    "_extras": 2,
    "gparv": 3,
    "decomposition": 4,
    "mechanisms": 5,
    "compose": 6,
    "gaussian": 6,
    "exact": 7,
    "fft_engine": 7,
    "families": 6.5,        # the optimal method's GPARV families of a mechanism and their caches
    "evaluate": 7.5,        # the evaluator interface and selection policy: certified δ of GPARV families
    "search": 7.75,         # the ε search (on _numerics.inverse_monotone; the compiled search through exact)
    "baselines": 8,
    "exact_count": 8,
    "personalized": 8.5,    # above exact_count (the exact count law of binary-RR populations)
    "bounds": 9,
    "accounting": 10,
    "planning": 10,
    "gradual": 10,
    "config": 11,
    "interop": 11,
    "renyi": 11,
    "sweep": 12,
    "plans": 13,
    "plot": 14,
    "cli": 15,
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    return ".".join(rel.parts)


def _imports(path: Path) -> set[str]:
    """shuffleamp-internal modules imported anywhere in ``path`` (top-level module names)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                if node.module:
                    out.add(node.module.split(".")[0])
                else:
                    out.update(a.name.split(".")[0] for a in node.names)
            elif node.level == 0 and node.module and node.module.startswith("shuffleamp"):
                parts = node.module.split(".")
                if len(parts) > 1:
                    out.add(parts[1])
                else:
                    out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "shuffleamp" and len(parts) > 1:
                    out.add(parts[1])
    return out


def _graph() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(PKG.glob("*.py")):
        name = _module_name(path)
        if name == "__init__":
            continue
        graph[name] = {m for m in _imports(path) if m not in ("_ext", "__init__", "data") and m != name}
    return graph


def test_every_module_has_a_layer():
    missing = sorted(set(_graph()) - set(LAYERS))
    assert not missing, f"modules without a layer in LAYERS: {missing}"


def test_imports_go_down_the_layers():
    bad = []
    for mod, deps in _graph().items():
        for d in deps:
            if d in LAYERS and LAYERS[d] >= LAYERS[mod]:
                bad.append(f"{mod} (layer {LAYERS[mod]}) imports {d} (layer {LAYERS[d]})")
    assert not bad, "\n".join(sorted(bad))


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d in graph and d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_detector_finds_a_cycle(tmp_path):
    """The checker itself: a two-module cycle written to disk is reported."""
    (tmp_path / "a.py").write_text("from . import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from .a import x\n")
    assert _imports(tmp_path / "a.py") == {"b"}
    assert _imports(tmp_path / "b.py") == {"a"}


def test_no_test_oracles_are_built_or_shipped():
    """Test oracles are plain Python under ``tests/`` (``exact_oracles.py``, ``oracle.py``): no ``_ext`` source
    or built module holds them, ``setup.py`` builds none, and the library never imports them."""
    root = PKG.parents[1]
    assert not (root / "_ext" / "oracles.pyx").exists()
    assert not list((PKG / "_ext").glob("oracles*")), "a stale built oracle module is in the package"
    setup = (root / "setup.py").read_text(encoding="utf-8")
    assert '"oracles"' not in setup
    for path in PKG.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "oracles" not in _imports(path), path.name
        assert "_ext.oracles" not in text and "import oracles" not in text, path.name
        assert "exact_oracles" not in text, path.name


def test_kernels_hold_no_benchmark_hooks():
    """The compiled kernels keep no benchmark hooks or tuning globals that a test or bench flips."""
    text = "".join(p.read_text(encoding="utf-8") for p in (PKG.parents[1] / "_ext").glob("*.p*"))
    for hook in ("_mixture_model_last", "_set_mixture_trial", "_mix_trial_steps", "_mix_model_last"):
        assert hook not in text, hook


@pytest.mark.parametrize("module", ["shuffleamp.cli"])
def test_cli_import_is_light(module):
    """Importing the CLI module does not load the numerical layers (fast ``--help``)."""
    import subprocess
    import sys

    code = (f"import sys, {module}; heavy = [m for m in ('shuffleamp.exact', 'shuffleamp.fft_engine', "
            "'shuffleamp.bounds', 'scipy.optimize') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
