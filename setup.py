"""Build the Cython kernels in ``_ext/`` as ``shuffleamp._ext.*``.

The compiled kernels are kept in ``build/ext-cache/<key>/`` (in the source tree), where the key hashes
everything the compiled file depends on: the ``_ext`` sources (.pyx, .pxi, .pxd), the compile and link
flags, and the versions of Python, the platform, Cython, numpy and scipy (whose headers and .pxd files
are compiled in).  A later build with the same key (for example ``pip install ".[test]"`` after
``pip install .``, each in its own isolated build environment, whose freshly installed .pxd files would
otherwise make Cython and the compiler start again) copies the cached file instead of compiling.
Any change to a source or a version gives a new key, so a stale kernel is never reused.  Delete
``build/`` to force a rebuild.
"""
import hashlib
import os
import platform
import shutil
import sys
from pathlib import Path

import numpy as np
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
CACHE = ROOT / "build" / "ext-cache"
DIRECTIVES = {"language_level": "3", "boundscheck": False, "wraparound": False, "cdivision": True,
              "initializedcheck": False}

#: production kernels (OpenMP), production binomial-mixture sums, binary-RR count laws.  Test oracles are
#: plain Python under tests/ (tests/exact_oracles.py, tests/oracle.py): nothing test-only is built or shipped.
_MODULES = {"kernels": True, "binomial": False, "count": False}

extensions = [
    Extension(
        f"shuffleamp._ext.{name}",
        [f"_ext/{name}.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3", "-fopenmp"] if omp else ["-O3"],
        extra_link_args=["-fopenmp"] if omp else [],
    )
    for name, omp in _MODULES.items()
]


def _versions() -> str:
    import Cython
    import scipy

    return "|".join((sys.version, platform.platform(), Cython.__version__, np.__version__, scipy.__version__,
                     os.environ.get("CC", ""), os.environ.get("CFLAGS", "")))


def _key(ext: Extension) -> str:
    h = hashlib.sha256()
    for path in sorted((ROOT / "_ext").iterdir()):
        if path.suffix in (".pyx", ".pxi", ".pxd"):
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(repr((ext.name, ext.extra_compile_args, ext.extra_link_args, ext.define_macros, DIRECTIVES)).encode())
    h.update(_versions().encode())
    return h.hexdigest()[:32]


class CachedBuildExt(build_ext):
    """``build_ext`` that cythonizes and compiles an extension only when ``build/ext-cache`` has no build of
    the same sources, flags and versions (see the module docstring)."""

    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name))
        cached = CACHE / _key(ext) / target.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if cached.is_file():
            print(f"reusing the compiled {ext.name} from {cached.relative_to(ROOT)}")
            shutil.copy2(cached, target)
            return
        from Cython.Build import cythonize

        (built,) = cythonize([ext], compiler_directives=DIRECTIVES, quiet=True)
        ext.sources = list(built.sources)              # the generated C; keep setuptools' own Extension
        super().build_extension(ext)
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp")
        shutil.copy2(target, tmp)
        os.replace(tmp, cached)


setup(ext_modules=extensions, cmdclass={"build_ext": CachedBuildExt})
