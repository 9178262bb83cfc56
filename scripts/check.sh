#!/usr/bin/env bash
# Installs everything the tests need and runs the whole suite: ruff, mypy (strict), pytest
# (unit, doctests, conformance, property, CLI, report, browser and notebook tests).
# Runs with the python3 on PATH: the README runs it in a fresh virtual environment (as CI
# does); a system interpreter works too. Extra arguments go to pytest.
# Browser tests need Debian's chromium, Spark's tests a Java runtime (Debian's
# default-jre-headless); each installed here when missing (needs root or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q && $SUDO apt-get install -y -q chromium
fi
# Spark's tests (tests/engines/test_engines.py, local[2]) need a Java runtime: Debian's, when missing
if ! command -v java >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q && $SUDO apt-get install -y -q default-jre-headless
fi
PYTHON=python3
echo "check.sh: $($PYTHON -c 'import sys; print(sys.executable, sys.version.split()[0])')" \
     "(virtual environment: ${VIRTUAL_ENV:-none})"
$PYTHON -m pip install -q --disable-pip-version-check -e ".[test]"
$PYTHON -m ruff check .
$PYTHON -m mypy
# the import contract (pyproject.toml [tool.importlinter]): a back-edge between layers fails
$PYTHON -c 'from importlinter.cli import lint_imports_command; lint_imports_command()'
status=0
# two worker processes (the CI machine has 2 cores), each test file kept on one worker (its
# module fixtures: one browser, one JupyterLab, one Spark session)
$PYTHON -m pytest -p no:cacheprovider -n 2 --dist loadfile "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "check.sh: pytest collected no test (exit 5): that is a failure" >&2
fi
exit "$status"
