"""absrank: absolute ranks for benchmarking optimizers (Jing & Liu), as a web service.

Importing ``app`` pins one numerical baseline on x86-64 before numpy loads (unless numpy is
already loaded or ``ABSRANK_NATIVE_SIMD=1``): numpy's AVX-512 loops and OpenBLAS's AVX-512
kernels give last-bit differences in ``exp``/``log``/BLAS results, so without the pin the same
table, rank or optimizer run would differ in its last digits between an AVX2 and an AVX-512
machine (and a table built by mixed workers would depend on which worker computed which chunk).
With it every x86-64 machine with AVX2 computes identical bytes
(tests/unit/test_numeric_baseline.py checks the pin holds in the test process).
"""

import os as _os
import platform as _platform
import sys as _sys

__version__ = "0.1.0"

#: numpy >= 2.4's dispatch targets above x86-64-v3 (AVX2/FMA3), disabled for the baseline.
NUMPY_DISABLED = "X86_V4 AVX512_ICL AVX512_SPR"
#: OpenBLAS's kernel family for the baseline (AVX2).
OPENBLAS_CORETYPE = "Haswell"


def _pin_numerics() -> None:
    if _os.environ.get("ABSRANK_NATIVE_SIMD") == "1" or "numpy" in _sys.modules:
        return
    if _platform.machine().lower() not in ("x86_64", "amd64"):
        return
    _os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", NUMPY_DISABLED)
    _os.environ.setdefault("OPENBLAS_CORETYPE", OPENBLAS_CORETYPE)


_pin_numerics()
