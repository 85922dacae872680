# Two commands matter: `make report` (the main job) and `make test`. Both build the venv.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup test report validate notebooks site screenshots lint bench snapshots clean

setup: $(STAMP)

$(STAMP): pyproject.toml requirements-lock.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c requirements-lock.txt -e ".[dev,docs,audit]"
	touch $(STAMP)

# Lint and types first (fail fast), then the tests and the docstring examples, then nbval.
# Tests and notebooks run on $(WORKERS) processes (pytest-xdist); tests that share one
# expensive result (the ledger's evaluation, the site build) stay on one worker
# (--dist loadgroup, groups set in tests/conftest.py); each notebook's cells stay together
# in one kernel (--dist loadscope).
WORKERS ?= 2
test: setup lint
	$(BIN)/pytest -n $(WORKERS) --dist loadgroup tests
	$(BIN)/pytest --doctest-modules trnkb -q
	@if ls notebooks/*.ipynb >/dev/null 2>&1; then \
	  $(BIN)/pytest -n $(WORKERS) --dist loadscope --nbval --nbval-current-env notebooks -q; \
	else echo "no notebooks yet"; fi

validate: setup
	$(BIN)/trnkb validate
	$(BIN)/trnkb check
	$(BIN)/trnkb claims --summary

notebooks: setup
	$(BIN)/python -m trnkb.views.notebooks execute notebooks

site: setup
	$(BIN)/python -m trnkb.site build/site

# The report runs every step, shows progress, and ends with a summary. Expected findings
# (conflicts, contradicted claims, derived values that differ from reported ones) are
# counted in the summary and listed on the site, not printed as failures.
report: setup
	@mkdir -p build
	@echo "[1/4] validating the specs"
	@$(BIN)/trnkb validate
	@echo "[2/4] recomputing derived values (full list: trnkb check; JSON in build/check.json)"
	@$(BIN)/trnkb check --json > build/check.json
	@echo "[3/4] executing the notebooks"
	@$(BIN)/python -m trnkb.views.notebooks execute notebooks
	@echo "[4/4] building the site"
	@$(BIN)/python -m trnkb.site build/site
	@$(BIN)/python -m trnkb.site.summary --site build/site --notebooks notebooks

# Pictures for docs/reading-results.md, taken from the built site (needs chromium).
screenshots: site
	$(BIN)/python -m trnkb.site.screenshots build/site docs/_static/screenshots

lint: setup
	$(BIN)/ruff check trnkb tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache  # the layer contract (docs/architecture.md)

bench: setup
	for f in bench/*.py; do $(BIN)/python $$f; done

# The small snapshots of the specs that ship in trnkb/data (keyed by the specs' digest; a
# test fails while one is stale): run after any edit of specs/.
snapshots: setup
	$(BIN)/python -m trnkb.kb.peaks_table
	$(BIN)/python -m trnkb.engine.snapshot

clean:
	rm -rf build out docs/_build
