# make run: set up, then start the TUI on the offline model.
# make test: set up, then type-check and run every test side by side (TEST_JOBS=N workers; default two per core).
# make typecheck: the type checker alone (mypy; settings in pyproject.toml).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test typecheck bench bench-peers chaos setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/agent-tui --provider scripted

# Zero errors: a new one fails `make test` (and CI).
typecheck: $(STAMP)
	$(PY) -m mypy

# The test files run side by side, two workers per core (TEST_JOBS=1: one after another):
# the tests wait more than they compute (agent processes, servers, terminals), so a core
# left by a waiting worker takes another's test. A file's tests stay together in one
# worker, in order. The run writes bytecode even where PYTHONDONTWRITEBYTECODE is set:
# compiled once before the tests, the package is not compiled again by every agent
# process a test starts, nor the test files by every worker.
# The type checker runs beside the tests (it takes a core while they wait on their
# processes); an error of its fails `make test` as a failed test does, printed after them.
TEST_JOBS_DEFAULT = $(shell $(PY) -c 'import os; print(2 * (os.cpu_count() or 1))' 2>/dev/null)
test: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m compileall -q agent_tui tests bench
	@$(PY) -m mypy > $(VENV)/typecheck.log 2>&1 & typecheck=$$!; \
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n $(or $(TEST_JOBS),$(TEST_JOBS_DEFAULT),auto) \
		--dist loadfile; tests=$$?; \
	wait $$typecheck; typed=$$?; echo "type check:"; cat $(VENV)/typecheck.log; \
	test $$typed -eq 0 && test $$tests -eq 0

bench: $(STAMP)
	$(PY) -m bench.run

# Beside the peers: Claude Code, pi and opencode (pinned, from npm, into a cache outside
# the repo), each against its own fake API; not part of `make test`. RUNS=N, ONLY=a,b.
bench-peers: $(STAMP)
	$(PY) -m bench.peers --runs $(or $(RUNS),3) $(if $(ONLY),--only '$(ONLY)',)

chaos: $(STAMP)
	$(PY) -m bench.chaos --trials $(or $(N),500) $(if $(SEED),--seed $(SEED),) \
		$(if $(KIND),--kind $(KIND),) $(if $(JOBS),--jobs $(JOBS),)

clean:
	rm -rf $(VENV) build *.egg-info
