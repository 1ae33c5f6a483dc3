"""Helpers shared by the benchmarks: temp deployments, child processes, ratios, reports.

Every benchmark prints RATIOS against a peer measured side by side in the same run (the machine
is small and noisy: absolute times are printed for information only, never asserted). All
servers bind 127.0.0.1; every process a benchmark starts runs in its own process group and is
stopped by the benchmark (SIGINT/SIGTERM, then SIGKILL of that group), also on errors.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"  # git-ignored: raw JSON of the last runs
PYTHON = sys.executable
ABSRANK = str(Path(PYTHON).with_name("absrank"))

# the process-wide huey of ``workers.app`` is built from the settings at import time: keep the
# benchmark's own process off any real queue (each measurement builds its own explicitly)
os.environ.setdefault("ABSRANK_QUEUE_URL", "memory://")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass
class Deployment:
    """A throw-away absrank deployment: SQLite database + SQLite huey queue in a temp dir."""

    root: Path
    overrides: dict[str, str] = field(default_factory=dict)

    @property
    def database_url(self) -> str:
        return f"sqlite:///{self.root / 'absrank.db'}"

    @property
    def queue_url(self) -> str:
        return f"sqlite:///{self.root / 'queue.db'}"

    def env(self) -> dict[str, str]:
        """Environment for child processes (every setting the benchmark depends on, explicit)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("ABSRANK_")}
        env.update(
            {
                "ABSRANK_ENVIRONMENT": "bench",
                "ABSRANK_DATABASE_URL": self.database_url,
                "ABSRANK_QUEUE_URL": self.queue_url,
                "ABSRANK_QUEUE_NAME": "absrank-bench",
                "ABSRANK_TABLE_CHUNK_LOG2": "16",
                "ABSRANK_TABLE_MAX_LOG2N": "24",
                "ABSRANK_TABLE_K_EXACT": "4096",
                "ABSRANK_TABLE_N_KNOTS": "16384",
                "ABSRANK_CHUNK_LEASE_SECONDS": "300",
                "ABSRANK_EMBEDDED_WORKER": "false",
                "ABSRANK_DEFAULT_TABLES": "false",
                # quotas counted as on a public instance (the middleware's cost is measured),
                # set high enough that a load run is never refused; in fixed windows: the
                # moving window's memory storage keeps one entry per request of the last
                # minute and inserts each new one at the front of that list (O(requests per
                # minute) a request, 36,000 entries at the loads here; at the default 600 a
                # minute it is small)
                "ABSRANK_ANONYMOUS_REQUESTS_PER_MINUTE": "1000000000",
                "ABSRANK_ANONYMOUS_CPU_SECONDS_PER_HOUR": "1000000000",
                "ABSRANK_RATE_LIMIT_STRATEGY": "fixed-window",
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update(self.overrides)
        return env

    def settings(self) -> Any:
        """The same settings, as an ``app.config.Settings`` for in-process service calls."""
        from app.config import Settings

        fields = {
            k.removeprefix("ABSRANK_").lower(): v
            for k, v in self.env().items()
            if k.startswith("ABSRANK_")
        }
        return Settings(_env_file=None, **fields)

    def migrate(self) -> None:
        """``absrank migrate`` in a child process, under this deployment's environment."""
        subprocess.run(
            [ABSRANK, "migrate"],
            cwd=ROOT,
            env=self.env(),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )


@contextlib.contextmanager
def deployment(prefix: str, **overrides: str) -> Iterator[Deployment]:
    """A migrated temp deployment, deleted afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"absrank-bench-{prefix}-") as tmp:
        dep = Deployment(Path(tmp), dict(overrides))
        dep.migrate()
        yield dep


@contextlib.contextmanager
def child(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    log: Path,
    stop_signal: int = signal.SIGTERM,
    grace: float = 20.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` in its own process group; always stop that group (and only it) at the end."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            list(argv),
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield proc
    finally:
        stop(proc, stop_signal, grace)


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, grace: float = 20.0) -> None:
    """Signal the process group we started, wait, then SIGKILL whatever of it is left."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    # the group may outlive its leader (forked workers): make sure nothing of it is left
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, lines: int = 30) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs))


def spread(xs: Sequence[float]) -> str:
    """``median [min–max]`` of a few repeats."""
    if len(xs) == 1:
        return f"{xs[0]:.3g}"
    return f"{median(xs):.3g} [{min(xs):.3g}-{max(xs):.3g}]"


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def machine() -> dict[str, Any]:
    """What the figures were measured on (for the README / JSON)."""
    import platform

    from app.services.provenance import library_versions

    return {
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": library_versions(),
    }


def save(name: str, payload: dict[str, Any]) -> Path:
    """Write the raw results as ``bench/results/<name>.json`` (git-ignored)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {"measured_at": time.strftime("%Y-%m-%d %H:%M:%S %z"), **payload}
    path.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
    return path


def finish(stem: str, results: dict[str, Any], only: str | None, goals: Any) -> dict[str, Any]:
    """Close a run: goals, load average, save ``<stem>-<mode>[-<only>].json``, print where.

    A partial run (``--only``) writes its own file, so it never replaces the whole run that
    ``run_all.py`` reads.
    """
    results["goals_met"] = goals(results)
    results["loadavg_after"] = os.getloadavg()
    name = f"{stem}-{results['mode']}" + (f"-{only}" if only else "")
    path = save(name, results)
    print(f"\n(total {results['seconds']:.0f} s; raw results in {path.relative_to(ROOT)})")
    return results


def exit_on_sigterm() -> None:
    """Turn SIGTERM into ``SystemExit`` so that every ``finally`` stops its child processes."""

    def handler(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def wait_until(predicate: Any, *, timeout: float, interval: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
