# bondsim: every command sets up what it needs (a virtualenv in .venv, the Rust
# extension built by maturin in release mode) before running.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
OUT    ?= out

.PHONY: all setup build tools demo docs test test-rust test-python wheel-test lint bench clean

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

# System tools the tests read the run's output with: tshark reads the packet captures back
# (Debian's package, installed non-interactively; sudo only when not root). Where it cannot
# be installed, the capture tests that need it skip, saying so. The emulator (bondsim
# emulate) addresses its TUN devices with iproute2's `ip`; without it its tests skip;
# `bondsim emulate --traffic iperf3` runs Debian's iperf3. The report's browser tests drive Debian's
# chromium with Playwright (tests/test_report_browser.py).
tools:
	@command -v tshark >/dev/null 2>&1 || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		{ $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq tshark >/dev/null; } \
		|| echo "tools: tshark could not be installed; the packet capture tests will skip"; }
	@command -v ip >/dev/null 2>&1 || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		{ $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq iproute2 >/dev/null; } \
		|| echo "tools: iproute2 could not be installed; the emulator tests will skip"; }
	@command -v iperf3 >/dev/null 2>&1 || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		{ $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq iperf3 >/dev/null; } \
		|| echo "tools: iperf3 could not be installed; the emulator's iperf3 test will skip"; }
	@command -v chromium >/dev/null 2>&1 || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		{ $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
			-o DPkg::Lock::Timeout=600 chromium >/dev/null; } \
		|| echo "tools: chromium could not be installed; the report's browser tests will skip"; }

# The main job: reproduce the thesis's figures (CSV, PNG, markdown summary).
demo: build
	$(BIN)/bondsim reproduce thesis --out $(OUT)/thesis

# The reference pages of docs/reference/, written from the compiled core (tools/gen_docs.py); a test
# (tests/test_docs.py) fails while the committed pages differ from what the code gives.
docs: build
	$(BIN)/python tools/gen_docs.py

test: build tools lint test-rust test-python

test-rust:
	cargo test --release -p bondsim-time -p bondsim-bond -p bondsim-core -p bondsim-emu -p bondsim-py --quiet

test-python: tools
	$(BIN)/pytest -q

# The wheel as a user installs it: built by maturin (reusing the release build), installed into a
# fresh virtualenv outside the source tree, then the shipped scenarios listed and run and a quick
# reproduction, from an empty folder, then the README's quick start word by word (tests/wheel_check.sh,
# tools/quickstart.py; .ci/run runs it after make test).
wheel-test: setup
	tests/wheel_check.sh $(abspath $(BIN))/python

lint: setup
	cargo fmt --all -- --check
	cargo clippy --release --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff check python tests benchmarks examples tools
	$(BIN)/ruff format --check python tests benchmarks examples tools

bench: build
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_sweep.py

clean:
	rm -rf $(VENV) target $(OUT)
