#!/usr/bin/env bash
# Creates tests/deploy/.venv with kubernetes-validate and kubectl
# (requirements.txt), once per change of requirements.txt. check.sh runs it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d" " -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "tests/deploy/.venv is up to date with requirements.txt"
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
echo "$want" > "$stamp"
