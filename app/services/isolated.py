"""Library calls that nothing stops once started, run where they can be stopped.

``moocore.hypervolume`` is one C call: no deadline or cancellation check can run inside it,
and its time is erratic in many objectives (13 points in 25 objectives did not finish in
minutes where 12 points take milliseconds), so no estimate bounds it safely. A hypervolume
that is not trivially cheap runs in a child process (``python -m
app.services._hypervolume_child``, the same numerical baseline as the API: ``app`` pins it on
import): the caller waits for it in slices of :data:`POLL_SECONDS`, checking its
:class:`~app.domain.cost.WorkControl` in between, and a deadline or a cancellation kills the
child (SIGKILL) before the error propagates; the child also dies with its parent. The cases
the cost model bounds from measurements — at most :data:`IN_PROCESS_MAX_OBJECTIVES`
objectives (``app.services.costs``: points and objectives bounded jointly on worst-case
fronts), or at most :data:`IN_PROCESS_MAX_POINTS` points — stay in the process: a child costs
0.5-1.5 s of start-up (numpy and moocore imported), paid only in many objectives.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np

from app.domain.cost import WorkControl
from app.domain.indicators import Hypervolume, moocore_hypervolume
from app.domain.pareto import FloatArray

IN_PROCESS_MAX_POINTS = 12
IN_PROCESS_MAX_OBJECTIVES = 10
#: How often the caller looks at its control while the child computes.
POLL_SECONDS = 0.05
CHILD = "app.services._hypervolume_child"


def in_process(front: FloatArray) -> bool:
    """Whether the hypervolume of ``front`` is computed in this process (cheap)."""
    n, m = front.shape
    return bool(n <= IN_PROCESS_MAX_POINTS or m <= IN_PROCESS_MAX_OBJECTIVES)


def _child_hypervolume(front: FloatArray, ref: FloatArray, control: WorkControl) -> float:
    payload = io.BytesIO()
    np.save(payload, np.ascontiguousarray(front, dtype=np.float64))
    np.save(payload, np.ascontiguousarray(ref, dtype=np.float64))
    child = subprocess.Popen(
        [sys.executable, "-m", CHILD, str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert child.stdin is not None
        assert child.stdout is not None
        assert child.stderr is not None
        child.stdin.write(payload.getvalue())
        child.stdin.close()
        while True:
            try:
                child.wait(POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                control.check()  # raises past the deadline or once cancelled: the child dies
        out, err = child.stdout.read(), child.stderr.read()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(5)
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    if child.returncode != 0 or len(out) != 8:
        last = err.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise ValueError(f"the hypervolume could not be computed: {last[0]}")
    return float(np.frombuffer(out, dtype=np.float64)[0])


def stoppable_hypervolume(control: WorkControl) -> Hypervolume:
    """A hypervolume function that ``control`` can stop (see the module docstring)."""

    def hypervolume(front: FloatArray, ref: FloatArray) -> float:
        if in_process(front):
            return moocore_hypervolume(front, ref)
        return _child_hypervolume(front, ref, control)

    return hypervolume
