#!/usr/bin/env bash
# Installs everything the test suite needs into .venv (fresh machine: nothing assumed
# but python3) and runs the linter and every test. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -U pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
.venv/bin/ruff check fuxi_notebook tests benchmarks scripts examples
# The type checker: strict, configured in pyproject.toml ([tool.mypy]), zero errors
.venv/bin/mypy
npm --prefix labextension test  # the extension's cell-change rules (node) against fuxi_notebook/testing/change_cases.json
# The documentation site (mkdocs.yml, docs/): strict, so a broken link or anchor fails
.venv/bin/mkdocs build --strict --quiet --site-dir "$(mktemp -d)"
# The real-browser tests (tests/browser) drive JupyterLab in Debian's chromium through
# Playwright's executable_path; `playwright install` is never run (no browser downloads).
if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" -eq 0 ]; then
        apt_get=(env DEBIAN_FRONTEND=noninteractive apt-get)
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        apt_get=(sudo -n env DEBIAN_FRONTEND=noninteractive apt-get)
    else
        apt_get=()
    fi
    if [ ${#apt_get[@]} -gt 0 ]; then
        "${apt_get[@]}" update -q
        "${apt_get[@]}" install -y -q --no-install-recommends chromium
    else
        echo "NOTE: /usr/bin/chromium is missing and we are neither root nor have passwordless" \
             "sudo: the browser tests (tests/browser) will be skipped." >&2
    fi
fi
# acpx (npm), an ACP client from outside the project, drives fuxi-acp in tests/acp
ACPX_VERSION=0.19.1
if [ ! -x .venv/acpx/node_modules/.bin/acpx ] || \
   ! grep -q "\"version\": \"$ACPX_VERSION\"" .venv/acpx/node_modules/acpx/package.json; then
    npm install --silent --no-audit --no-fund --prefix .venv/acpx "acpx@$ACPX_VERSION"
fi
# jupyter-ai's chat (the jupyter-ai extra) with this checkout, in an environment of its own
# (it pins agent-client-protocol below 0.12): the browser test of fuxi in that chat runs
# JupyterLab from it
if [ ! -x .venv-jupyter-ai/bin/jupyter ]; then
    python3 -m venv .venv-jupyter-ai
    .venv-jupyter-ai/bin/python -m pip install -q --disable-pip-version-check -U pip
fi
.venv-jupyter-ai/bin/python -m pip install -q --disable-pip-version-check -e '.[jupyter-ai]'
# No test may reach a model API that is not on this machine; the example notebooks in
# notebooks/ are replayed by nbval (testpaths and --nbval in pyproject.toml) with no key.
export FUXI_BLOCK_REAL_API=1
unset ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN
# pytest exits 5 when it collected no test: that is a failure here too (set -e).
exec .venv/bin/python -m pytest "$@"
