# absrank — two commands do everything: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test install migrate worker lint bench clean

$(STAMP): pyproject.toml client/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,cec]'
	$(BIN)/python -m pip install --quiet -e ./client
	touch $(STAMP)

install: $(STAMP)

migrate: $(STAMP)
	$(BIN)/absrank migrate

## run: install, migrate the embedded SQLite database, serve the API + an embedded worker on 127.0.0.1:8000
run: migrate
	$(BIN)/absrank serve

## worker: a worker process only (distributed mode; see README)
worker: $(STAMP)
	$(BIN)/absrank worker

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

## test: install if needed, lint (ruff, import-linter, mypy), run the whole suite (SQLite + the PostgreSQL on 127.0.0.1:5432)
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) var .pytest_cache .hypothesis
