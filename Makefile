# The README's two commands: `make serve` and `make test`. Each works on a fresh clone with only
# Python present: it builds .venv, installs the package with its test extras, and (for tests)
# Debian's Chromium when it is missing and we are root.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test lint format bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,notebooks]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/panel serve dashboard --show

test: $(STAMP)
	bash .ci/ensure-chromium
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n auto --dist loadgroup

lint: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP)
	$(BIN)/python -m dashboard bench

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
