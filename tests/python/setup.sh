#!/usr/bin/env bash
# Creates tests/python/.venv with the Python MCP SDK (requirements.txt), once
# per change of requirements.txt. Used by .ci/test; run it by hand to run
# the Python client tests locally (they skip without it, and fail in CI).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d" " -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "tests/python/.venv is up to date with requirements.txt"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
echo "$want" > "$stamp"
