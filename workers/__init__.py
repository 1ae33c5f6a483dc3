"""absrank workers: a huey application (``workers.app``) and thin, idempotent tasks."""
