"""Benchmark-function registry: pure, vectorised ``f(X: (n, d)) -> (n,)`` by id.

Importing this package registers every suite (``classic``, ``bbob``, ``cec2005``, ``cec2017``,
``cec2020``, ``cec2022``).

Examples
--------
>>> from app.domain.functions import get_function
>>> sphere = get_function("classic/sphere/d3")
>>> sphere.evaluate([[1.0, 2.0, 3.0]])
array([14.])
>>> sphere.local.beta
1.5
"""

from app.domain.functions import bbob, cec2017, cec2020, cec2022, classic  # noqa: F401
from app.domain.functions import cec2005 as cec2005  # registers the cec2005 suite
from app.domain.functions.registry import (
    SUPPORTED_DIMS,
    BenchmarkFunction,
    LocalStructure,
    Suite,
    format_id,
    get_function,
    list_functions,
    local_degree,
    power_law,
    register_suite,
)

__all__ = [
    "SUPPORTED_DIMS",
    "BenchmarkFunction",
    "LocalStructure",
    "Suite",
    "bbob",
    "classic",
    "format_id",
    "get_function",
    "list_functions",
    "local_degree",
    "power_law",
    "register_suite",
]
