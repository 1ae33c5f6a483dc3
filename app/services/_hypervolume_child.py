"""The child process of :mod:`app.services.isolated`: one hypervolume, then exit.

Reads a front and a reference point (``numpy.save`` format, one after the other) from stdin
and writes the hypervolume as 8 bytes (float64) to stdout. It asks Linux to kill it when its
parent dies (``PR_SET_PDEATHSIG``), so a computation nobody waits for never outlives the API.
"""

from __future__ import annotations

import ctypes
import io
import os
import signal
import sys

import numpy as np

from app.domain.indicators import moocore_hypervolume

PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the parent kills it on every way out
        pass
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def main() -> None:
    _die_with_parent(int(sys.argv[1]))
    stream = io.BytesIO(sys.stdin.buffer.read())
    front, ref = np.load(stream), np.load(stream)
    sys.stdout.buffer.write(np.float64(moocore_hypervolume(front, ref)).tobytes())
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
