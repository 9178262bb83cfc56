#!/usr/bin/env bash
# Installs everything the tests need and runs the whole suite: ruff, mypy (strict), pytest
# (unit, doctests, conformance, property, CLI, report, browser and notebook tests).
# Browser tests need Debian's chromium; installed here when missing (needs root or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q && $SUDO apt-get install -y -q chromium
fi
python -m pip install -q --disable-pip-version-check -e ".[test]"
ruff check .
mypy
python -m pytest -p no:cacheprovider
