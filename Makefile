# bondsim: every command sets up what it needs (a virtualenv in .venv, the Rust
# extension built by maturin in release mode) before running.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
OUT    ?= out

.PHONY: all setup build demo test test-rust test-python lint bench clean

all: demo

$(BIN)/maturin:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip "maturin>=1.7,<2"

setup: $(BIN)/maturin

# Builds the extension and installs bondsim with its dependencies into .venv, with the
# optional Dask extra so that the Dask tests run.
build: setup
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH \
		$(BIN)/maturin develop --release --extras dev,dask --quiet

# The main job: reproduce the thesis's figures (CSV, PNG, markdown summary).
demo: build
	$(BIN)/bondsim reproduce thesis --out $(OUT)/thesis

test: build lint test-rust test-python

test-rust:
	cargo test --release -p bondsim-time -p bondsim-bond -p bondsim-core --quiet

test-python:
	$(BIN)/pytest -q

lint: setup
	cargo fmt --all -- --check
	cargo clippy --release --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff check python tests benchmarks
	$(BIN)/ruff format --check python tests benchmarks

bench: build
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_sweep.py

clean:
	rm -rf $(VENV) target $(OUT)
