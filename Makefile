# make run: set up, then start the TUI on the offline model.
# make test: set up, then run every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench chaos setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/agent-tui --provider scripted

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m bench.run

chaos: $(STAMP)
	$(PY) -m bench.chaos --trials $(or $(N),500) $(if $(SEED),--seed $(SEED),) \
		$(if $(KIND),--kind $(KIND),) $(if $(JOBS),--jobs $(JOBS),)

clean:
	rm -rf $(VENV) build *.egg-info
