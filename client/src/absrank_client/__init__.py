"""Python client of the absrank service: absolute ranks, statistical tests, comparisons.

>>> from absrank_client import Client
>>> with Client("http://127.0.0.1:8000") as client:          # doctest: +SKIP
...     cmp = client.compare("results.csv", budget=100_000, values_are="error")
...     cmp.to_frame()

See :class:`Client` for every method; results are the frozen dataclasses of
:mod:`absrank_client.models`, errors those of :mod:`absrank_client.errors`.
"""

from absrank_client.archive import ArchivedRun, QueuedBuilds, ResultSet, ResultSetList
from absrank_client.client import DEFAULT_URL, Client
from absrank_client.curves import *  # noqa: F403
from absrank_client.curves import __all__ as _curves
from absrank_client.errors import *  # noqa: F403
from absrank_client.errors import __all__ as _errors
from absrank_client.leaderboards import *  # noqa: F403
from absrank_client.leaderboards import __all__ as _leaderboards
from absrank_client.models import *  # noqa: F403
from absrank_client.models import __all__ as _models
from absrank_client.progress import JobStatus

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_URL",
    "ArchivedRun",
    "Client",
    "JobStatus",
    "QueuedBuilds",
    "ResultSet",
    "ResultSetList",
    *_errors,
    *_leaderboards,
    *_models,
    *_curves,
]
