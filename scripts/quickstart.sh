#!/usr/bin/env bash
# Installs fuxi-notebook (with JupyterLab, pandas, matplotlib) into .venv and opens the
# quickstart notebook in JupyterLab. Run All works without an API key: the recorded agent
# runs replay (you confirm once); with ANTHROPIC_API_KEY set, %%fuxi cells call the model.
# Extra arguments go to `jupyter lab` (e.g. --no-browser --port 8890).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -U pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[lab]'
root=()
if [ "$(id -u)" -eq 0 ]; then root=(--allow-root); fi
exec .venv/bin/jupyter lab "${root[@]}" notebooks/quickstart.ipynb "$@"
