"""The OpenAPI document: problems as ``application/problem+json``, exact integer bounds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel

from app.schemas.common import PROBLEM_MEDIA_TYPE, Problem
from app.schemas.comparisons import ComparisonCreate
from app.schemas.pareto import IndicatorRequest, ParetoRankingCreate
from app.schemas.result_sets import ResultSetCreate

#: Request bodies that routes read themselves (JSON or CSV; validated off the event loop by
#: ``app.api.work.parse_body``), so FastAPI does not list them.
EXTRA_COMPONENTS: tuple[type[BaseModel], ...] = (
    ComparisonCreate,
    ResultSetCreate,
    IndicatorRequest,
    ParetoRankingCreate,
)

_REF_TEMPLATE = "#/components/schemas/{model}"
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
#: FastAPI's own validation-error schemas, replaced by Problem everywhere.
_FASTAPI_ERROR_SCHEMAS = ("HTTPValidationError", "ValidationError")


def install_openapi(
    app: FastAPI,
    answered_examples: Callable[[], dict[str, Any]] | None = None,
    path_order: Sequence[str] = (),
) -> None:
    """Make ``app.openapi()`` return the generated document, post-processed once and cached.

    * every 4xx response is a :class:`~app.schemas.common.Problem` served as
      ``application/problem+json``, with the operation's own example (its ``instance`` filled
      in from the path); FastAPI's automatic 422 is dropped where the route declares none;
    * integer bounds keep their exact value (FastAPI's OpenAPI models turn them into floats,
      so ``2**63 - 1`` would print as ``9.223372036854776e+18``);
    * ``answered_examples()`` gives ``{path: answer}``: the 200 response of that path's POST
      shows the answer as its example;
    * the paths listed in ``path_order`` come in that order (the documented one, whatever the
      order routers are matched in), before any other.
    """

    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = generate()  # FastAPI's document, cached in app.openapi_schema
            rank = {p: i for i, p in reversed(list(enumerate(path_order)))}
            paths = spec.get("paths", {})
            ordered = sorted(paths, key=lambda p: rank.get(p, len(rank)))
            spec["paths"] = {p: paths[p] for p in ordered}
            _problems_as_problem_json(spec)
            _exact_integer_bounds(spec, _schema_models())
            for path, answer in (answered_examples() if answered_examples else {}).items():
                content = spec["paths"][path]["post"]["responses"]["200"]["content"]
                content["application/json"]["example"] = answer
        assert app.openapi_schema is not None
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented override


def _problems_as_problem_json(spec: dict[str, Any]) -> None:
    for path, operations in spec.get("paths", {}).items():
        for operation in operations.values():
            responses = operation.get("responses", {})
            for code in [c for c in responses if c.isdigit() and 400 <= int(c) < 500]:
                content = responses[code].get("content", {})
                if PROBLEM_MEDIA_TYPE not in content:
                    # FastAPI's automatic 422 of an operation that declares none: its
                    # parameters cannot fail validation (a string path id), so it never answers 422
                    del responses[code]
                    continue
                problem = content[PROBLEM_MEDIA_TYPE]
                responses[code]["content"] = {PROBLEM_MEDIA_TYPE: problem}
                example = problem.get("example")
                if example is not None and not example.get("instance"):
                    example["instance"] = _example_path(path, operation)
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    for name in _FASTAPI_ERROR_SCHEMAS:
        schemas.pop(name, None)
    schemas[Problem.__name__] = Problem.model_json_schema(ref_template=_REF_TEMPLATE)
    for model in EXTRA_COMPONENTS:
        schema = model.model_json_schema(ref_template=_REF_TEMPLATE)
        for name, sub in schema.pop("$defs", {}).items():
            schemas.setdefault(name, sub)
        schemas[model.__name__] = schema


def _example_path(path: str, operation: dict[str, Any]) -> str:
    """``path`` with each path parameter replaced by its first example (a problem's instance)."""
    for param in operation.get("parameters", []):
        if param.get("in") != "path":
            continue
        examples = param.get("examples") or param.get("schema", {}).get("examples") or []
        if isinstance(examples, dict):  # OpenAPI's named examples
            examples = [e.get("value") for e in examples.values()]
        if examples:
            path = path.replace("{" + param["name"] + "}", str(examples[0]))
    return path


def _schema_models() -> list[type[BaseModel]]:
    """Every pydantic model of ``app.schemas`` (the request and response bodies)."""
    found: list[type[BaseModel]] = []
    pending = list(BaseModel.__subclasses__())
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        if model.__module__.startswith("app.schemas."):
            found.append(model)
    return found


def _exact_integer_bounds(spec: dict[str, Any], models: list[type[BaseModel]]) -> None:
    """Copy pydantic's integer bounds over FastAPI's float copies, schema by schema."""
    schemas = spec.get("components", {}).get("schemas", {})
    for model in models:
        exact = model.model_json_schema(ref_template=_REF_TEMPLATE)
        for name, sub in [(model.__name__, exact), *exact.get("$defs", {}).items()]:
            for candidate in (name, f"{name}-Input", f"{name}-Output"):
                if candidate in schemas:
                    _overlay_bounds(schemas[candidate], sub)


def _overlay_bounds(target: Any, exact: Any) -> None:
    if isinstance(target, dict) and isinstance(exact, dict):
        for key in _BOUNDS:
            value = exact.get(key)
            if key in target and isinstance(value, int) and not isinstance(value, bool):
                target[key] = value
        for key, sub in target.items():
            if key in exact:
                _overlay_bounds(sub, exact[key])
    elif isinstance(target, list) and isinstance(exact, list):
        for sub_target, sub_exact in zip(target, exact, strict=False):
            _overlay_bounds(sub_target, sub_exact)
