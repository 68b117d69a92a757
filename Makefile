# Two commands on a fresh machine:
#   make demo   -- set up .venv and run the whole pipeline on the bundled sample
#   make test   -- set up .venv and run the test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test test-fast lint mutation clean

# the exact versions of constraints.txt, inside the ranges of pyproject.toml
$(STAMP): pyproject.toml setup.py constraints.txt engine/strategies/cogra/_steps.c engine/shared/kleene/_typed.c engine/count128.h
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade -c constraints.txt pip uv
	# --compile-bytecode: every process (each trendlake command, each Spark Python worker)
	# otherwise compiles pandas, pyspark, ... anew where PYTHONDONTWRITEBYTECODE is set
	$(BIN)/uv pip install --python $(BIN)/python -q --compile-bytecode -c constraints.txt -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/trendlake demo

# both tiers at once on both cores: the fast tier in the background on one pytest-xdist worker
# (its output in $(FAST_LOG), printed when it ends), and, once the class-data archive of Spark's
# driver classes is written (tests/integration/jvm_archive.py; cached), the integration tier on
# two workers by file (xdist groups set in tests/integration/conftest.py: a file, or the files
# sharing the sample lake), so that a file's tests share their worker's SparkSession and the
# sample lake is built once. The fast tier fills the cores the archive and the integration
# tier leave idle; the status is the first failing tier's.
FAST_LOG ?= .fast-tier.log
test: $(STAMP)
	@echo "fast tier (tests/unit) running beside the integration tier; its output follows it"
	$(BIN)/python -m pytest -q -n 1 -o cache_dir=.pytest_cache/fast-tier tests/unit > $(FAST_LOG) 2>&1 & fast_pid=$$!; \
	$(BIN)/python -m tests.integration.jvm_archive; \
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup tests/integration; integration=$$?; \
	wait $$fast_pid; fast=$$?; \
	echo "---- fast tier (tests/unit)"; cat $(FAST_LOG); \
	test $$fast -eq 0 || exit $$fast; \
	exit $$integration

# --dist worksteal: a worker that runs out of tests takes queued ones from the other, so the
# longest properties do not leave one core idle at the end (38 idle CPU-seconds of 240 with
# xdist's default --dist load)
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist worksteal tests/unit

# mutation score of engine/ and optimizer/analysis.py (not part of `make test`; see docs/testing.md)
SAMPLE ?= 5
SEED ?= 1
mutation: $(STAMP)
	nice -n 10 $(BIN)/python scripts/mutation.py --sample $(SAMPLE) --seed $(SEED)

lint: $(STAMP)
	$(BIN)/ruff check optimizer engine jobs datagen schemas src dags tests benchmarks scripts

clean:
	rm -rf $(VENV) lake out
