"""Suite-wide settings: no test touches ./var, and hypothesis runs a fixed, CI-sized profile."""

from __future__ import annotations

import os

# workers.app builds its huey from the settings at import time: keep it in memory in tests
os.environ.setdefault("ABSRANK_QUEUE_URL", "memory://")
os.environ.setdefault("ABSRANK_DATABASE_URL", "sqlite:///:memory:")

import app  # noqa: F401, I001 - pins the numerical baseline before numpy loads (app/__init__.py)
from hypothesis import HealthCheck, settings

settings.register_profile(
    "absrank",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("absrank")
