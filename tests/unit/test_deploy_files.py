"""Deployment files stay valid: compose vs the Compose Specification, CLI commands exist."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_compose_file_validates_against_the_compose_spec() -> None:
    exe = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    assert exe, "check-jsonschema is a test dependency"
    result = subprocess.run(
        [exe, "--builtin-schema", "vendor.compose-spec", str(ROOT / "docker-compose.yml")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_has_the_services_a_deployment_needs() -> None:
    services = _compose()["services"]
    assert {"db", "redis", "migrate", "api", "worker"} == set(services)
    assert services["migrate"]["restart"] == "no"
    assert services["api"]["depends_on"]["migrate"]["condition"] == (
        "service_completed_successfully"
    )
    env = services["worker"]["environment"]
    assert env["ABSRANK_QUEUE_URL"].startswith("redis://")
    assert env["ABSRANK_DATABASE_URL"].startswith("postgresql+psycopg://")
    json.loads(env["ABSRANK_API_KEYS"])


@pytest.mark.parametrize("service", ["migrate", "api", "worker"])
def test_compose_commands_are_real_cli_commands(service: str) -> None:
    command = _compose()["services"][service]["command"]
    assert command[0] == "absrank"
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", *command[1:2], "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    for option in command[2:]:
        if option.startswith("--"):
            assert option in result.stdout, f"{service}: unknown option {option}"


def test_dockerfile_runs_as_non_root_and_serves_the_api() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "\nUSER absrank\n" in text
    assert 'CMD ["absrank", "serve"' in text
