# make run: set up, then start the TUI on the offline model.
# make test: set up, type-check, then run every test (TEST_JOBS=N workers; default one per core).
# make typecheck: the type checker alone (mypy; settings in pyproject.toml).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test typecheck bench chaos setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/agent-tui --provider scripted

# Zero errors: a new one fails `make test` (and CI) before any test runs.
typecheck: $(STAMP)
	$(PY) -m mypy

# The test files run side by side, one worker per core (TEST_JOBS=1: one after another);
# a file's tests stay together in one worker, in order.
test: typecheck
	$(PY) -m pytest -q -n $(or $(TEST_JOBS),auto) --dist loadfile

bench: $(STAMP)
	$(PY) -m bench.run

chaos: $(STAMP)
	$(PY) -m bench.chaos --trials $(or $(N),500) $(if $(SEED),--seed $(SEED),) \
		$(if $(KIND),--kind $(KIND),) $(if $(JOBS),--jobs $(JOBS),)

clean:
	rm -rf $(VENV) build *.egg-info
