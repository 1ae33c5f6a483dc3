"""The numerical baseline that app/__init__.py pins holds: no numpy loop above x86-64-v3 runs.

Without it, answers recorded on one machine (README outputs, the seed archive, recorded
answers) differ in their last digits on a machine with AVX-512, and so would tables built by
workers on mixed hardware.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import numpy as np
import pytest
from packaging.version import Version

import app

X86 = platform.machine().lower() in ("x86_64", "amd64")


@pytest.mark.skipif(not X86, reason="the pin applies to x86-64 only")
def test_no_dispatch_target_above_the_baseline_is_active() -> None:
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    active = [t for t in __cpu_dispatch__ if t != "X86_V3" and __cpu_features__.get(t)]
    assert active == [], f"numpy dispatches {active}: the pin in app/__init__.py no longer holds"
    assert os.environ.get("OPENBLAS_CORETYPE") == app.OPENBLAS_CORETYPE


@pytest.mark.skipif(not X86, reason="the pin applies to x86-64 only")
def test_importing_app_first_pins_and_the_opt_out_keeps_native() -> None:
    probe = (
        "import app, numpy, os;"
        "from numpy._core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f;"
        "print(os.environ.get('NPY_DISABLE_CPU_FEATURES'), os.environ.get('OPENBLAS_CORETYPE'))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("NPY_DISABLE_CPU_FEATURES",
                                                              "OPENBLAS_CORETYPE")}
    pinned = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                            text=True, check=True)  # fmt: skip
    assert pinned.stdout.strip() == f"{app.NUMPY_DISABLED} {app.OPENBLAS_CORETYPE}"
    native = subprocess.run([sys.executable, "-c", probe], env={**env, "ABSRANK_NATIVE_SIMD": "1"},
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert native.stdout.strip() == "None None"
    assert Version(np.__version__) >= Version("2.4"), "app.NUMPY_DISABLED names numpy 2.4 targets"
