"""Settle the garbage collector's heap once a process has done its imports.

A fresh process's first full garbage collection walks every object its imports created (numpy,
scipy, SQLAlchemy, pydantic and the app: about 10^5 objects, ~50 ms on the 2-vCPU bench
machine). Left alone it falls inside the first request that allocates many objects (e.g. the
4,950 pairs of a 100-algorithm Nemenyi post-hoc). The API's startup and the worker consumer
call :func:`settle_after_imports` once, before serving: one collection, then ``gc.freeze()``
moves every surviving object to the permanent generation, which later collections never
scan again (and which forked worker processes share copy-on-write). Nothing is freed that is
still reachable; answers do not depend on it.
"""

from __future__ import annotations

import gc

__all__ = ["settle_after_imports"]


def settle_after_imports() -> None:
    """One full collection, then freeze what survives (see the module docstring)."""
    gc.collect()
    gc.freeze()
