#!/usr/bin/env bash
# Installs everything the test suite needs into .venv (fresh machine: nothing assumed
# but python3) and runs the linter and every test. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -U pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
.venv/bin/ruff check fuxi_notebook tests benchmarks
# pytest exits 5 when it collected no test: that is a failure here too (set -e).
exec .venv/bin/python -m pytest "$@"
