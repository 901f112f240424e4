#!/usr/bin/env bash
# The wheel as a user installs it (`make wheel-test`, run by .ci/run): build it with maturin
# (release; cargo reuses what `make build` compiled), install it into a fresh virtualenv
# outside the source tree, and from an empty temporary folder, where nothing of the source
# tree can be imported, run what a new user runs first: the shipped scenarios listed, a
# shipped scenario run, the shipped sweep checked, and a quick reproduction into a folder
# named like the scenario it reads; then the README's quick start, word by word, from an
# empty folder of its own (tools/quickstart.py: its commands must run and print what the
# README shows). Any step that fails stops the test with its output.
#
#   tests/wheel_check.sh [PYTHON]     (default: .venv/bin/python, which `make build` made)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${1:-$ROOT/.venv/bin/python}
MATURIN=$(dirname "$PYTHON")/maturin
[ -x "$MATURIN" ] || { echo "wheel test: $MATURIN is missing; run make build first" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bondsim-wheel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
unset PYTHONPATH VIRTUAL_ENV

fail() {
    echo "wheel test FAILED: $1" >&2
    [ -s "$WORK/out" ] && { echo "--- stdout" >&2; tail -n 40 "$WORK/out" >&2; }
    [ -s "$WORK/err" ] && { echo "--- stderr" >&2; tail -n 40 "$WORK/err" >&2; }
    exit 1
}

# Runs a command of the installed wheel, its output kept for the checks after it.
step() {
    echo "+ $*"
    "$@" >"$WORK/out" 2>"$WORK/err" || fail "$* exited $?"
}

cd "$ROOT"
step "$MATURIN" build --release --quiet --interpreter "$PYTHON" --out "$WORK/dist"
wheel=$(ls "$WORK"/dist/bondsim-*.whl)
step "$PYTHON" -m venv "$WORK/venv"
step "$WORK/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"

mkdir "$WORK/user"
cd "$WORK/user"
bondsim=$WORK/venv/bin/bondsim

# The package (and its scenario files) come from the virtualenv, not from the source tree.
step "$WORK/venv/bin/python" -c 'import bondsim.scenario as s; print(s.__file__); print(s.shipped_dir())'
grep -qv "^$WORK/venv/" "$WORK/out" && fail "bondsim was imported from outside the virtualenv: $(cat "$WORK/out")"

# Every scenario and sweep of the source tree is in the wheel, listed by its name.
step "$bondsim" scenario list --json
listed=$("$WORK/venv/bin/python" -c 'import json, sys; print(" ".join(sorted(e["name"] for e in json.load(sys.stdin))))' <"$WORK/out")
source=$(cd "$ROOT/python/bondsim/scenarios" && ls *.toml | sed 's/\.sweep\.toml$//; s/\.toml$//' | sort | tr '\n' ' ')
[ "$listed" = "${source% }" ] || fail "bondsim scenario list names [$listed], the source tree ships [${source% }]"
step "$bondsim" scenario list
grep -q "^  tcp_rr  *TCP over a round-robin bond" "$WORK/out" || fail "bondsim scenario list shows no tcp_rr with its description"

step "$bondsim" run tcp_rr --json
grep -q '"flows_complete": 8' "$WORK/out" || fail "bondsim run tcp_rr completed not all 8 flows"
step "$bondsim" sweep thesis_load --dry-run --db "$WORK/user/results.duckdb"
grep -q "every one checked; nothing run" "$WORK/out" || fail "bondsim sweep thesis_load --dry-run checked no grid"

# A folder named like the shipped scenario the reproduction reads (issue 37: it shadowed it).
step "$bondsim" reproduce thesis --quick --out thesis --quiet
[ -s thesis/summary.md ] || fail "bondsim reproduce thesis --quick wrote no thesis/summary.md"
step "$bondsim" run thesis --quiet --set workload.requests=3

# The HTML report draws with uPlot from the package's own files (vendored): no IPython in a user install.
step "$bondsim" run tcp_rr --quiet --out run
step "$bondsim" report run --out report.html --quiet
grep -q "uPlot" report.html || fail "bondsim report wrote no uPlot into report.html"
"$WORK/venv/bin/python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("IPython") is not None)' \
    || fail "a user install pulls in IPython (issue 37, item 10)"

# The README's quick start, followed word by word with this virtualenv's bondsim (issue 37: "the
# README's quick start was followed word by word in a clean venv from the wheel"). The script is
# the source tree's (standard library only); the commands it runs are the README's.
mkdir "$WORK/quickstart"
step "$WORK/venv/bin/python" "$ROOT/tools/quickstart.py" --bin "$WORK/venv/bin" --dir "$WORK/quickstart" --readme "$ROOT/README.md"
grep -q "^quick start followed" "$WORK/out" || fail "the README's quick start was not followed"

echo "wheel test passed: $(basename "$wheel") installed in a fresh virtualenv runs the shipped scenarios and the README's quick start"
