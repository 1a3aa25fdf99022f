#!/usr/bin/env bash
# What WebKitWebDriver starts as the "browser" (capability
# webkitgtk:browserOptions.binary). It takes the per-session options the tests
# pass as args, sets up the app's environment from them and execs the real app
# ($E2E_APP_BIN, inherited from the driver's environment), so:
#   - every session can get its own fresh fixture home,
#   - the app's stdout/stderr land in a log file the tests can show,
#   - the app's pid is known (exec keeps it) for teardown and /proc checks.
# Options (all removed before the app sees its args):
#   --e2e-home DIR  --e2e-system-root DIR  --e2e-log FILE  --e2e-pidfile FILE
#   --e2e-app BIN   run BIN instead of $E2E_APP_BIN (the benchmarks' bare window)
set -eu
home=""; system=""; log=""; pidfile=""; app=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --e2e-home) home="$2"; shift 2 ;;
    --e2e-system-root) system="$2"; shift 2 ;;
    --e2e-log) log="$2"; shift 2 ;;
    --e2e-pidfile) pidfile="$2"; shift 2 ;;
    --e2e-app) app="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
: "${E2E_APP_BIN:?E2E_APP_BIN is not set in the environment of WebKitWebDriver (tests/e2e/run.sh sets it)}"
[ -n "$app" ] || app="$E2E_APP_BIN"
if [ -n "$home" ]; then export HOME="$home"; fi
if [ -n "$system" ]; then export SWITCHBOARD_SYSTEM_ROOT="$system"; fi
# Config, data and cache all under the fixture home; no login-shell PATH
# lookup (SHELL unset); PATH with stubs for npx/uvx/docker/... (E2E_APP_PATH).
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME XDG_STATE_HOME SHELL
unset FIXTURE_UNSET_VAR FIXTURE_DEFINITELY_UNSET CODEX_HOME GEMINI_CLI_SYSTEM_SETTINGS_PATH GOOSE_PATH_ROOT FLATPAK_XDG_CONFIG_HOME
if [ -n "${E2E_APP_PATH:-}" ]; then export PATH="$E2E_APP_PATH"; fi
export GITHUB_TOKEN="${GITHUB_TOKEN:-ghp_fixture}"
if [ -n "$pidfile" ]; then echo $$ > "$pidfile"; fi
if [ -n "$log" ]; then
  { echo "== launch-app.sh $(date -Is) pid $$ HOME=$HOME args: ${args[*]-}"; } >> "$log"
  exec >> "$log" 2>&1
fi
exec "$app" ${args[@]+"${args[@]}"}
