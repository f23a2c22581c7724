"""Compiled kernels (built from ``_ext/*.pyx``).

OpenMP worker threads are told to sleep rather than spin when idle: on small machines a
spinning worker steals the core that pyFFTW's threads need right after a kernel call.
This must be set before libgomp is loaded, i.e. before the kernels are imported.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
