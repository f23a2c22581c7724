"""Sphinx configuration of the shuffleamp documentation.

Build: ``sphinx-build -W -b html docs docs/_build/html`` (warnings are errors; the tests run this
and the doctest builder, ``sphinx-build -W -b doctest docs <dir>``, in ``tests/test_docs.py``).
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:                    # the installed package (or the one on PYTHONPATH) ...
    import shuffleamp
except ImportError:     # ... else the source tree, built in place (python setup.py build_ext --inplace)
    sys.path.insert(0, str(ROOT / "src"))
    import shuffleamp

project = "shuffleamp"
author = "shuffleamp developers"
copyright = "2026, shuffleamp developers"
release = version = shuffleamp.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "numpydoc",
]

autosummary_generate = False            # the API pages are written by hand (nothing generated into docs/)
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

doctest_global_setup = """
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np
import shuffleamp as sa
from shuffleamp.mechanisms import KRR, BLH, RAPPOR, OUE, HadamardResponse, Laplace, MatrixMechanism
"""
doctest_default_flags = 0
import doctest as _doctest  # noqa: E402

doctest_default_flags = _doctest.ELLIPSIS | _doctest.NORMALIZE_WHITESPACE | _doctest.DONT_ACCEPT_TRUE_FOR_1

templates_path = []
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path = []
html_theme_options = {"description": "Certified privacy amplification by shuffling"}
nitpicky = False
# A References section may list works its docstring does not cite inline (numpydoc relabels the
# citations per docstring, so references from other docstrings cannot resolve them): do not warn
# about unreferenced citations. An unresolved citation (ref.ref) is still an error.
suppress_warnings = ["ref.citation"]
