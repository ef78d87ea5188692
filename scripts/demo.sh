#!/usr/bin/env bash
# Installs fuxi-notebook into .venv and runs the demo agent. Without ANTHROPIC_API_KEY
# the fake Messages API server plays a recorded session; with it, the real API answers.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -U pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
exec .venv/bin/python -m fuxi_notebook demo
