# Two commands on a fresh machine:
#   make demo   -- set up .venv and run the whole pipeline on the bundled sample
#   make test   -- set up .venv and run the test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test test-fast test-integration lint mutation clean

# the exact versions of constraints.txt, inside the ranges of pyproject.toml
$(STAMP): pyproject.toml setup.py constraints.txt engine/strategies/cogra/_steps.c engine/shared/kleene/_typed.c engine/shared/sequence/_counts.c engine/shared/panes/_panes.c engine/shared/subsequence/_prefix.c engine/count128.h engine/steps.h engine/count_pass.h engine/pymodule.h
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade -c constraints.txt pip uv
	# --compile-bytecode: every process (each trendlake command, each Spark Python worker)
	# otherwise compiles pandas, pyspark, ... anew where PYTHONDONTWRITEBYTECODE is set
	$(BIN)/uv pip install --python $(BIN)/python -q --compile-bytecode -c constraints.txt -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/trendlake demo

# The tiers are pytest markers (tests/conftest.py): everything under tests/integration is
# marked `integration`. `make test` is one pytest run of both tiers on two xdist workers: each
# worker runs its fast-tier tests first (tests/conftest.py orders them so and fails the run if
# they imported the pipeline stack by then), then the integration files (--dist loadgroup: each
# file, or the files sharing the sample lake, on one worker; below).
test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup --durations=15 tests

# --dist worksteal: a worker that runs out of tests takes queued ones from the other, so the
# longest properties do not leave one core idle at the end
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist worksteal -m "not integration" tests

# the controller first sets the Spark drivers' JVM options and writes the class-data archive if
# missing (tests/integration/jvm_archive.py); --dist loadgroup hands out the files longest first,
# each (or the files sharing the sample lake) on one worker, so that its tests share the worker's
# SparkSession and the sample lake is built once (tests/integration/conftest.py)
test-integration: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup -m integration tests

# Where PYTHONDONTWRITEBYTECODE is set, every test process and every trendlake command a test
# starts would compile the checkout's modules (trendlake is installed editable) and pytest would
# rewrite every test module anew; the test runs write their bytecode once (__pycache__/, ignored)
test test-fast test-integration: export PYTHONDONTWRITEBYTECODE :=

# mutation score of engine/ and optimizer/analysis.py (not part of `make test`; see docs/testing.md)
SAMPLE ?= 5
SEED ?= 1
mutation: $(STAMP)
	nice -n 10 $(BIN)/python scripts/mutation.py --sample $(SAMPLE) --seed $(SEED)

lint: $(STAMP)
	$(BIN)/ruff check optimizer engine jobs datagen schemas src dags tests benchmarks scripts

clean:
	rm -rf $(VENV) lake out
