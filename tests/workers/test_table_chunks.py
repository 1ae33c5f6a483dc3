"""What a chunk task samples: noisy functions (CEC 2005 F4, F17, F24, F25), whose noise depends
on the table seed and the Sobol index only — not on the chunk size or the worker — and oriented
ladder levels, which sample their own box."""

from __future__ import annotations

import numpy as np
import pytest

from app.domain.functions import get_function
from app.services import tables

NOISY = "cec2005/f4/d10"


@pytest.mark.parametrize("start", [0, 5, 1000, 1024, 4090])
def test_noise_normals_do_not_depend_on_how_the_indices_are_cut(start: int) -> None:
    whole = tables.noise_normals(7, 0, 8192)
    np.testing.assert_array_equal(tables.noise_normals(7, start, 100), whole[start : start + 100])
    assert not np.array_equal(tables.noise_normals(8, start, 100), whole[start : start + 100])


def test_noisy_chunks_are_the_same_for_every_chunk_size() -> None:
    spec = {
        "function_id": NOISY,
        "region": {
            "kind": "domain",
            "lower": [-100.0] * 10,
            "upper": [100.0] * 10,
        },
        "seed": 3,
        "representation": {"k_exact": 16},
    }
    big = tables.compute_chunk(spec, 0, 2048).values
    small = np.concatenate([tables.compute_chunk(spec, j, 256).values for j in range(8)])
    np.testing.assert_array_equal(big, small)
    fn = get_function(NOISY)
    noise_free = get_function("cec2005/f4_noisefree/d10")
    from app.domain import sampling

    X = sampling.scale_to_box(sampling.sobol_chunk(10, 3, 0, 2048), fn.lower, fn.upper)
    g = noise_free.evaluate(X)
    # f = g·(1 + 0.4|N|) with bias -450: the noise is really there, and it is the table's normals
    eta = (big - fn.f_opt) / (g - fn.f_opt) - 1.0
    np.testing.assert_allclose(eta, 0.4 * np.abs(tables.noise_normals(3, 0, 2048)), atol=1e-9)


def test_oriented_ladder_levels_sample_their_own_box() -> None:
    """A level along the fitted form's axes samples that box, not its bounding box."""
    from app.config import Settings
    from app.services.table_cache import LadderCaches

    settings = Settings()
    specs = tables.ladder_specs(
        settings, "bbob/f22/i1/d10", cache=LadderCaches.from_settings(settings)
    )
    oriented = [s for s in specs if s["region"]["kind"] == "oriented"]
    assert oriented, "f22's rotated minimum gets oriented levels"
    spec = oriented[-1]
    chunk = tables.compute_chunk(spec, 0, 512)
    center, axes, half = tables.oriented_geometry(spec["region"])
    z = (chunk.low_x - center) @ axes  # coordinates along the box's axes
    assert np.all(np.abs(z) <= half * (1 + 1e-9) + 1e-12)
    fn = get_function("bbob/f22/i1/d10")
    np.testing.assert_array_equal(fn.evaluate(chunk.low_x), chunk.values[chunk.low_index])
