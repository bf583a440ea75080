"""`--blas-threads N`, applied before anything loads OpenBLAS (it reads the variable once)."""

import os
import sys


def early_blas_threads() -> str | None:
    """Set the BLAS thread variables from `--blas-threads` in `sys.argv`; returns the value."""
    value = None
    for k, a in enumerate(sys.argv):
        if a == "--blas-threads" and k + 1 < len(sys.argv):
            value = sys.argv[k + 1]
        elif a.startswith("--blas-threads="):
            value = a.split("=", 1)[1]
    if value is not None:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = value
    return value
