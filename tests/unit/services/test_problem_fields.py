"""Domain errors on derived values never name a field the request does not have."""

from __future__ import annotations

import numpy as np
import pytest

from app import errors
from app.domain import paired
from app.domain.errors import InvalidInput as DomainInvalidInput
from app.schemas.comparisons import ComparisonCreate
from app.services.errors import domain_errors_as_problems

FIELDS = frozenset(ComparisonCreate.model_fields)


def test_a_field_of_the_request_is_kept() -> None:
    with pytest.raises(errors.InvalidInput) as info:
        with domain_errors_as_problems("results", request_fields=FIELDS):
            raise DomainInvalidInput("bad control", field="control")
    assert info.value.field == "control"
    with pytest.raises(errors.InvalidInput) as info:
        with domain_errors_as_problems("results", request_fields=FIELDS):
            raise DomainInvalidInput("bad subset", field="niia_subsets.2")
    assert info.value.field == "niia_subsets.2"


def test_a_field_of_an_internal_computation_becomes_the_default() -> None:
    # the paired test of absolute ranks names its own arguments x and y
    with pytest.raises(errors.InvalidInput) as info:
        with domain_errors_as_problems("csv", request_fields=FIELDS):
            paired.wilcoxon_signed_rank(np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    assert info.value.field == "csv"
    with pytest.raises(errors.InvalidInput) as info:
        with domain_errors_as_problems("csv"):  # without request_fields: the domain's own
            paired.wilcoxon_signed_rank(np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    assert info.value.field == "x"
