"""Build the Cython kernels in ``_ext/`` as ``shuffleamp._ext.*``."""
import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

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

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False,
                             "cdivision": True, "initializedcheck": False},
    ),
)
