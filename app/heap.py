"""Settle the garbage collector's heap once a process has done its imports.

A fresh process's first full garbage collection walks every object its imports created (numpy,
scipy, SQLAlchemy, pydantic and the app: about 10^5 objects, ~50 ms on the 2-vCPU bench
machine). Left alone it falls inside the first request that allocates many objects (e.g. the
4,950 pairs of a 100-algorithm Nemenyi post-hoc). The API's startup and the worker consumer
call :func:`settle_after_imports` once, before serving: one collection, then ``gc.freeze()``
moves every surviving object to the permanent generation, which later collections never
scan again (and which forked worker processes share copy-on-write). Nothing is freed that is
still reachable; answers do not depend on it.

The API's startup also calls :func:`keep_large_blocks` (unless ``ABSRANK_MALLOC_TUNING=0`` or
the process sets ``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_`` itself). By default
glibc makes every block above a threshold that adapts to the largest one freed (at most
32 MiB) a fresh ``mmap``, and returns free memory above twice that threshold at the top of the
heap to the kernel, so the buffers of a large answer (10^5 ranks: ~22 MB of JSON and its
buffers) were faulted in again on every request, a third of its time. Blocks up to 64 MiB now
come from the heap and up to 128 MiB of free heap is kept (the process's memory stays at its
high-water mark plus at most that). Workers keep glibc's defaults: a table build's time did
not change with it (``bench/README.md`` §2).
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

__all__ = ["keep_large_blocks", "settle_after_imports"]

#: glibc ``mallopt`` parameters (``malloc.h``) and the values :func:`keep_large_blocks` sets.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MALLOC_MMAP_THRESHOLD = 64 * 2**20
MALLOC_TRIM_THRESHOLD = 128 * 2**20


def keep_large_blocks() -> bool:
    """Fixed ``mmap`` and trim thresholds for glibc's ``malloc`` (see the module docstring);
    whether they were set (not on other C libraries, or when the process chose its own)."""
    if os.environ.get("ABSRANK_MALLOC_TUNING") == "0" or not sys.platform.startswith("linux"):
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        _ = libc.gnu_get_libc_version  # glibc only: musl's mallopt does nothing
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    mapped: bool = mallopt(_M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD) == 1
    trimmed: bool = mallopt(_M_TRIM_THRESHOLD, MALLOC_TRIM_THRESHOLD) == 1
    return mapped and trimmed


def settle_after_imports() -> None:
    """One full collection, then freeze what survives (see the module docstring)."""
    gc.collect()
    gc.freeze()
