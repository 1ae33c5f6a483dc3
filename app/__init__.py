"""absrank: absolute ranks for benchmarking optimizers (Jing & Liu), as a web service.

Importing ``app`` pins one numerical baseline on x86-64 before numpy loads (unless numpy is
already loaded or ``ABSRANK_NATIVE_SIMD=1``): numpy's AVX-512 loops and OpenBLAS's AVX-512
kernels give last-bit differences in ``exp``/``log``/BLAS results, so without the pin the same
table, rank or optimizer run would differ in its last digits between an AVX2 and an AVX-512
machine (and a table built by mixed workers would depend on which worker computed which chunk).
With it every x86-64 machine with AVX2 computes identical bytes
(tests/unit/test_numeric_baseline.py checks the pin holds in the test process).

It also keeps glibc's allocator from handing large blocks back to the kernel after every
request (:func:`_keep_large_blocks`, unless ``ABSRANK_MALLOC_TUNING=0`` or the process sets
``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_`` itself): by default every block above a
threshold that adapts to the largest freed one (at most 32 MiB) is a fresh ``mmap``, and free
memory above twice that threshold at the top of the heap is returned, so a large answer (10^5
ranks: ~22 MB of JSON and its buffers) faulted in fresh pages on every request, a third of its
time. Blocks up to 64 MiB now come from the heap and up to 128 MiB of free heap is kept (the
process's memory stays at its high-water mark plus at most that).
"""

import ctypes as _ctypes
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

#: glibc ``mallopt`` parameters (``malloc.h``) and the values :func:`_keep_large_blocks` sets.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MALLOC_MMAP_THRESHOLD = 64 * 2**20
MALLOC_TRIM_THRESHOLD = 128 * 2**20


def _keep_large_blocks() -> bool:
    """Fixed ``mmap`` and trim thresholds for glibc's ``malloc`` (see the module docstring);
    whether they were set (not on other C libraries, or when the process chose its own)."""
    if _os.environ.get("ABSRANK_MALLOC_TUNING") == "0" or not _sys.platform.startswith("linux"):
        return False
    if "MALLOC_MMAP_THRESHOLD_" in _os.environ or "MALLOC_TRIM_THRESHOLD_" in _os.environ:
        return False
    try:
        libc = _ctypes.CDLL(None)
        mallopt = libc.mallopt
        _ = libc.gnu_get_libc_version  # glibc only: musl's mallopt does nothing
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [_ctypes.c_int, _ctypes.c_int]
    mallopt.restype = _ctypes.c_int
    mapped: bool = mallopt(_M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD) == 1
    trimmed: bool = mallopt(_M_TRIM_THRESHOLD, MALLOC_TRIM_THRESHOLD) == 1
    return mapped and trimmed


MALLOC_TUNED = _keep_large_blocks()
"""Whether :func:`_keep_large_blocks` set glibc's thresholds in this process."""
