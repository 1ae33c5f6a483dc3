"""Provenance blocks: what produced an answer, with nothing time-dependent in it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import lru_cache
from importlib import metadata
from typing import Any

import numpy as np

from app import __version__

TRACKED_PACKAGES = (
    "numpy",
    "scipy",
    "statsmodels",
    "matplotlib",
    "moocore",
    "coco-experiment",
    "fastapi",
    "pydantic",
    "sqlalchemy",
)


@lru_cache
def library_versions() -> dict[str, str]:
    """Installed versions of the libraries whose behaviour reaches the numbers."""
    out: dict[str, str] = {}
    for name in TRACKED_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # pragma: no cover - optional package
            out[name] = "absent"
    return out


def canonical_sha256(payload: Any) -> str:
    """SHA-256 of the canonical JSON form (sorted keys, no spaces) of ``payload``."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def float64_sha256(values: Sequence[float] | np.ndarray) -> str:
    """SHA-256 of ``values`` as IEEE 754 binary64 numbers, little-endian, 8 bytes each, in
    order: what a hashed request holds instead of a long list of floats (the same numbers give
    the same digest; hashing their bytes costs ~1% of writing them as canonical JSON)."""
    return hashlib.sha256(np.asarray(values, dtype="<f8").tobytes()).hexdigest()


def provenance(request_payload: Any, **extra: Any) -> dict[str, Any]:
    """The provenance block every computed answer carries."""
    block: dict[str, Any] = {
        "service": "absrank",
        "service_version": __version__,
        "versions": library_versions(),
        "request_sha256": canonical_sha256(request_payload),
    }
    block.update(extra)
    return block
