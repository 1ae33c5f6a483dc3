"""The report form: what a researcher fills in on the page, checked and turned into a
:class:`~app.schemas.comparisons.ComparisonCreate` (the same request ``POST /v1/comparisons``
takes), so the page and the API answer identical requests with the identical comparison."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.config import Settings
from app.errors import InvalidInput
from app.schemas.comparisons import ComparisonCreate, ResultRow
from app.schemas.result_sets import UploadMetadata
from app.schemas.stattests import PosthocMethod
from app.services import results_input

FormValues = dict[str, str | list[str]]
"""A posted form's fields as the browser sends them (``result_sets`` may repeat)."""

#: The all-pairs post-hoc families (the control families need a control: the API takes them).
AllPairsPosthoc = Literal["nemenyi", "holm", "hochberg", "hommel", "finner", "shaffer"]
POSTHOC_CHOICES: tuple[str, ...] = get_args(AllPairsPosthoc)
assert set(POSTHOC_CHOICES) < set(get_args(PosthocMethod))


class ReportForm(BaseModel):
    """The form's fields, as strings from the browser, checked by Pydantic.

    ``csv`` is the pasted text or the uploaded file's content (the file wins when both are
    given); a wide table (``algorithm`` then one column per problem) is read with
    ``problem_template``, a long one (``algorithm,problem,run,value``) as it is.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    csv: str = Field("", max_length=8 * 1024 * 1024)
    problem_template: str = Field("{column}", min_length=1, max_length=200)
    values_are: Literal["error", "f"] = "error"
    reduction: Literal["mean", "median", "best"] = "mean"
    value_runs: int | None = Field(None, ge=1, le=10_000)
    budget: int = Field(ge=1, le=10**15)
    posthoc: AllPairsPosthoc = "nemenyi"
    alpha: float = Field(0.05, gt=0.0, lt=1.0, allow_inf_nan=False)
    result_sets: tuple[str, ...] = ()


#: The form's field labels, for messages that name the field a person sees.
LABELS: dict[str, str] = {
    "csv": "Results (CSV)",
    "problem_template": "Problem id template",
    "values_are": "Values are",
    "reduction": "Reduction of the runs",
    "value_runs": "Runs behind each value",
    "budget": "Evaluations per run",
    "posthoc": "Post-hoc family",
    "alpha": "Significance level",
    "result_sets": "Archived result sets",
    "archive_file": "Results file to archive",
    "archive_format": "Its format",
    "archive_name": "Algorithm name",
    "archive_version": "Version",
    "archive_values_are": "Its values are",
}


class ArchiveForm(BaseModel):
    """The archive form: one algorithm's results file (a zipped COCO experiment folder,
    IOHprofiler output, a nevergrad CSV or a long CSV), as ``POST /v1/result-sets`` takes it in
    ``multipart/form-data``; the name defaults to the one the files give."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    archive_format: Literal["coco", "iohprofiler", "nevergrad", "csv"]
    archive_name: str | None = Field(None, min_length=1, max_length=200)
    archive_version: str | None = Field(None, min_length=1, max_length=200)
    archive_values_are: Literal["error", "f"] | None = None

    def metadata(self) -> UploadMetadata:
        """The upload's metadata (what the files do not say)."""
        return UploadMetadata.model_validate(
            {
                "name": self.archive_name,
                "version": self.archive_version,
                "values_are": self.archive_values_are,
            }
        )


def read_archive_form(values: FormValues) -> ArchiveForm:
    """The archive form's values (blank optional fields left out), checked."""
    data = {k: v for k, v in values.items() if v not in ("", []) and k.startswith("archive_")}
    try:
        return ArchiveForm.model_validate(data)
    except ValidationError as exc:
        raise _problem(exc, "archive_file") from None


class FormProblem(Exception):
    """A refusal of the form: the field (its name in the form) and what is wrong."""

    def __init__(self, field: str, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.status = status

    @property
    def label(self) -> str:
        return LABELS.get(self.field, self.field)


def _problem(exc: ValidationError, default: str) -> FormProblem:
    """The first error of ``exc`` as a refusal naming its form field (``default`` when the
    field is not one of the form's, with the unknown field's name in the message)."""
    first = exc.errors(include_url=False)[0]
    field = str(first["loc"][0]) if first["loc"] else default
    if first["type"] == "extra_forbidden":
        return FormProblem(default, f"unknown form field {field[:40]!r}")
    if first["type"] == "missing":
        return FormProblem(field, "required: fill it in")
    return FormProblem(field if field in LABELS else default, first["msg"])


def read_form(values: FormValues) -> ReportForm:
    """The form's values (blank optional fields left out), checked; a :class:`FormProblem`
    names the first faulty field."""
    data = {k: v for k, v in values.items() if v not in ("", []) and not k.startswith("archive_")}
    try:
        return ReportForm.model_validate(data)
    except ValidationError as exc:
        raise _problem(exc, "csv") from None


def comparison_request(form: ReportForm, settings: Settings) -> ComparisonCreate:
    """The comparison the form asks for (``results`` rows from a wide table, ``csv`` for a
    long one; ``result_sets`` alone or beside them)."""
    if not form.csv and not form.result_sets:
        raise FormProblem("csv", "paste or upload a results CSV, or pick archived result sets")
    options = {
        "reduction": form.reduction,
        "values_are": form.values_are,
        "budget": form.budget,
        "value_runs": form.value_runs,
        "posthoc": form.posthoc,
        "alpha": form.alpha,
        "result_sets": list(form.result_sets) or None,
    }
    try:
        if not form.csv:
            return ComparisonCreate.model_validate(options | {"results": []})
        if results_input.is_wide(form.csv):
            rows = results_input.parse_wide_csv(
                form.csv, template=form.problem_template, max_rows=settings.max_result_rows
            )
            results = [ResultRow(algorithm=a, problem=p, run=r, value=v) for a, p, r, v in rows]
            return ComparisonCreate.model_validate(options | {"results": results})
        return ComparisonCreate.model_validate(options | {"csv": form.csv})
    except InvalidInput as exc:
        raise FormProblem(exc.field if exc.field in LABELS else "csv", str(exc)) from None
    except ValidationError as exc:
        raise _problem(exc, "csv") from None
