# Two commands on a fresh machine:
#   make demo   -- set up .venv and run the whole pipeline on the bundled sample
#   make test   -- set up .venv and run the test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test test-fast test-integration lint mutation clean

# the exact versions of constraints.txt, inside the ranges of pyproject.toml
$(STAMP): pyproject.toml setup.py constraints.txt engine/strategies/cogra/_steps.c engine/shared/kleene/_typed.c engine/shared/sequence/_counts.c engine/shared/panes/_panes.c engine/count128.h engine/steps.h engine/pymodule.h
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
# marked `integration`. Each tier is one pytest run: the fast tier must run in processes that
# never imported the pipeline stack (its tests check that a command fails before Spark is
# imported, and tests/conftest.py fails a run of unit tests that imported it), which a worker
# that collected tests/integration has. `make test` runs the two at once (make -j2, each
# tier's output printed whole when it ends): the fast tier on one worker fills the core the
# integration tier leaves idle while its JVMs start and wait on I/O; `make -k test` runs both
# to the end after a failure.
FAST_WORKERS ?= 2
test: $(STAMP)
	$(MAKE) --no-print-directory -j2 --output-sync=target FAST_WORKERS=1 test-fast test-integration

# --dist worksteal: a worker that runs out of tests takes queued ones from the other, so the
# longest properties do not leave one core idle at the end
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n $(FAST_WORKERS) --dist worksteal -m "not integration" tests

# the controller first sets the Spark drivers' JVM options and writes the class-data archive if
# missing (tests/integration/jvm_archive.py); --dist loadgroup hands out the files longest first,
# each (or the files sharing the sample lake) on one worker, so that its tests share the worker's
# SparkSession and the sample lake is built once (tests/integration/conftest.py)
test-integration: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup -m integration tests

# mutation score of engine/ and optimizer/analysis.py (not part of `make test`; see docs/testing.md)
SAMPLE ?= 5
SEED ?= 1
mutation: $(STAMP)
	nice -n 10 $(BIN)/python scripts/mutation.py --sample $(SAMPLE) --seed $(SEED)

lint: $(STAMP)
	$(BIN)/ruff check optimizer engine jobs datagen schemas src dags tests benchmarks scripts

clean:
	rm -rf $(VENV) lake out
