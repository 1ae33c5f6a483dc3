"""What the comparison modules share: the request's fields and the absolute tests' adjustment.

Private to :mod:`app.services.comparisons` and :mod:`app.services._comparison_absolute`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from app.schemas.comparisons import ComparisonCreate
from app.services.errors import domain_errors_as_problems

#: Post-hoc family → the adjustment of pairwise Wilcoxon p-values on absolute ranks.
ABSOLUTE_ADJUSTMENT = {
    "nemenyi": "holm",
    "shaffer": "shaffer",
    "holm": "holm",
    "hochberg": "hochberg",
    "hommel": "hommel",
    "finner": "finner",
    "bonferroni-dunn": "bonferroni",
    "li": "li",
}
CONTROL_METHODS = ("bonferroni-dunn", "li")
REQUEST_FIELDS = frozenset(ComparisonCreate.model_fields)


def request_problems(default_field: str) -> AbstractContextManager[None]:
    """Domain errors as problems naming only fields of ``ComparisonCreate`` (else the default)."""
    return domain_errors_as_problems(default_field, request_fields=REQUEST_FIELDS)


def data_field(body: ComparisonCreate) -> str:
    """The request field that holds the results: ``csv`` or ``results``."""
    return "csv" if body.csv is not None else "results"
