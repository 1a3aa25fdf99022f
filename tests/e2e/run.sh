#!/usr/bin/env bash
# End-to-end tests of the real Switchboard app over WebDriver (WebKitWebDriver)
# under Xvfb. Builds what it needs, starts Xvfb and the driver, runs
# `node --test tests/e2e/*.test.mjs` one file at a time, and cleans up.
#
#   tests/e2e/run.sh                      # build + all tests
#   tests/e2e/run.sh --no-build           # reuse the last builds (or E2E_SKIP_BUILD=1)
#   tests/e2e/run.sh tests/e2e/tools.test.mjs   # only some test files
#
# Screenshots and logs: tests/e2e/artifacts/. Every step is time-boxed; the
# run fails if any app or fixture-server process outlives it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
E2E="$ROOT/tests/e2e"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/switchboard/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
ARTIFACTS="$E2E/artifacts"

skip_build="${E2E_SKIP_BUILD:-0}"
files=()
for a in "$@"; do
  case "$a" in
    --no-build) skip_build=1 ;;
    *) files+=("$a") ;;
  esac
done
[ ${#files[@]} -gt 0 ] || files=("$E2E"/*.test.mjs)

T0=$SECONDS
UPTIME0="$(cut -d" " -f1 /proc/uptime 2>/dev/null || echo 0)"
step() { printf '\n\033[1m== e2e: %s\033[0m  (+%ss)\n' "$*" "$((SECONDS - T0))"; }
die() { printf 'e2e: %s\n' "$*" >&2; exit 1; }

# Installs a package's npm dependencies only when its lock changed since the
# last install (hash kept inside node_modules), like .ci/setup does for ui/.
npm_ci_if_needed() {
  local dir="$1"; shift
  local stamp="$dir/node_modules/.switchboard-lock.sha256"
  local want; want="$(sha256sum "$dir/package-lock.json" | cut -d" " -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "$dir/node_modules is up to date"
  else
    (cd "$dir" && timeout 600 npm ci --no-audit --no-fund "$@")
    echo "$want" > "$stamp"
  fi
}

for tool in WebKitWebDriver Xvfb node timeout; do
  command -v "$tool" >/dev/null || die "$tool not found: run .ci/install-system-packages (webkit2gtk-driver, xvfb)"
done

step "npm dependencies (ui/, tests/e2e/)"
npm_ci_if_needed "$ROOT/ui"
# --ignore-scripts: webdriverio pulls in geckodriver/edgedriver, whose install
# scripts would download browser drivers; we only talk to WebKitWebDriver.
npm_ci_if_needed "$E2E" --ignore-scripts

if [ "$skip_build" != 1 ]; then
  step "Build the UI (ui/dist)"
  timeout 600 npm --prefix "$ROOT/ui" run build
  step "Build switchboard-app with the UI embedded (cold: ~10 min)"
  timeout 2400 cargo build --manifest-path "$ROOT/Cargo.toml" -p switchboard-app --features custom-protocol
  step "Build the switchboard binary the app runs as its sidecar (next to switchboard-app)"
  timeout 1200 cargo build --manifest-path "$ROOT/Cargo.toml" -p switchboard-engine --bin switchboard
  step "Build fixture-server, fixture-tricky-results, oauth-server, registry-server and fixture-idp"
  timeout 1200 cargo build --manifest-path "$ROOT/Cargo.toml" -p switchboard-tests --bin fixture-server --bin fixture-tricky-results --bin oauth-server --bin registry-server --bin fixture-idp
  step "Build the debug .deb deep-link.test.mjs unpacks (the debug build above, bundled: ~30 s)"
  timeout 1200 "$ROOT/.ci/package" --debug
fi
APP_BIN="${E2E_APP:-$CARGO_TARGET_DIR/debug/switchboard-app}"  # E2E_APP: test another build
FIXTURE_BIN="${E2E_FIXTURE:-$CARGO_TARGET_DIR/debug/fixture-server}"  # E2E_FIXTURE: e.g. a release build
# E2E_DEB: another package (deep-link.test.mjs skips without one, fails under CI).
DEB="${E2E_DEB:-$(ls -t "$CARGO_TARGET_DIR"/debug/bundle/deb/*.deb 2>/dev/null | head -n1 || true)}"
[ -x "$APP_BIN" ] || die "$APP_BIN is missing (build it, or drop --no-build)"
[ -x "$FIXTURE_BIN" ] || die "$FIXTURE_BIN is missing (build it, or drop --no-build)"

step "Fixture machine"
RUN_DIR="$(mktemp -d /tmp/switchboard-e2e.XXXXXX)"
BIN="$RUN_DIR/bin"
mkdir -p "$BIN" "$RUN_DIR/stub-bin" "$ARTIFACTS"
rm -f "$ARTIFACTS"/*.png "$ARTIFACTS"/*.log
# Everything the app and the fixture servers run is started through these
# links, so "is anything of ours still running?" is `pgrep -f $BIN/`.
ln -s "$APP_BIN" "$BIN/switchboard-app"
ln -s "$FIXTURE_BIN" "$BIN/fixture-server"
# The stand-in for the MCP Registry's API (catalog.test.mjs).
ln -s "$CARGO_TARGET_DIR/debug/registry-server" "$BIN/registry-server"
# Answers with injected instructions, hidden text, secrets (result-checks.test.mjs).
ln -s "$CARGO_TARGET_DIR/debug/fixture-tricky-results" "$BIN/fixture-tricky-results"
# The fixture clients' servers run npx, uvx, docker, ...: stubs that fail at
# once, so the app never downloads or starts real third-party servers.
for cmd in npx npm node uvx uv python python3 docker cargo bunx deno mcp-notes-server; do
  printf '#!/bin/sh\necho "e2e stub: %s is not available to the app under test" >&2\nexit 127\n' "$cmd" > "$RUN_DIR/stub-bin/$cmd"
  chmod +x "$RUN_DIR/stub-bin/$cmd"
done
# Except the fixture registry's npm packages (tests/fixtures/registry):
# `npx -y @switchboard-fixtures/NAME@VERSION ARGS...` runs the fixture server
# with ARGS, so a server installed from the Catalog really starts.
cat > "$RUN_DIR/stub-bin/npx" <<STUB
#!/bin/sh
if [ "\$1" = "-y" ]; then
  case "\$2" in @switchboard-fixtures/*) shift 2; exec "$BIN/fixture-server" "\$@" ;; esac
fi
echo "e2e stub: npx is not available to the app under test" >&2
exit 127
STUB
# And node for `.mcpb` extensions the app unpacked into its data folder
# (install-bundle.test.mjs, drop.test.mjs) and the compatibility check's
# `node --version`: the real node, for those only.
REAL_NODE="$(command -v node)"
cat > "$RUN_DIR/stub-bin/node" <<STUB
#!/bin/sh
case "\$1" in
  --version|*/switchboard/bundles/*) exec "$REAL_NODE" "\$@" ;;
esac
echo "e2e stub: node is not available to the app under test" >&2
exit 127
STUB
FIXTURE_HOME="$(node "$E2E/lib/fixture-home.mjs" "$RUN_DIR/fixture" "$BIN/fixture-server")"
echo "run dir $RUN_DIR; fixture home $FIXTURE_HOME"

XVFB_PID=""; DRIVER_PID=""
cleanup() {
  local rc=$?
  set +e
  [ -n "$DRIVER_PID" ] && kill "$DRIVER_PID" 2>/dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null
  [ -n "$DRIVER_PID" ] && wait "$DRIVER_PID" 2>/dev/null
  [ -n "$XVFB_PID" ] && wait "$XVFB_PID" 2>/dev/null
  # Nothing of ours may survive: the app, fixture servers, stubs.
  local left=""
  for _ in $(seq 50); do
    left="$(pgrep -af -- "$RUN_DIR/" || true)"
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -n "$left" ]; then
    printf '\ne2e: FAIL: processes left behind (killing them):\n%s\n' "$left" >&2
    # shellcheck disable=SC2046 # by pid, only what matched our unique run dir
    kill -KILL $(printf '%s\n' "$left" | cut -d" " -f1) 2>/dev/null
    [ $rc -eq 0 ] && rc=1
  fi
  # A failed run says whether a page's process crashed or the app panicked:
  # such lines of the app logs, and the kernel's record of crashed processes
  # since the run began (when this machine lets us read it).
  if [ $rc -ne 0 ]; then
    grep -H -E "page process|panicked" "$RUN_DIR"/sessions/*/app.log 2>/dev/null | tail -n 20
    dmesg 2>/dev/null | awk -v t0="$UPTIME0" '/segfault|general protection|Out of memory|Killed process/ { t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t); if (t + 0 >= t0) print "kernel: " $0 }' | tail -n 10
  fi
  # Keep the app logs next to the screenshots; drop the rest.
  for f in "$RUN_DIR"/sessions/*/app.log; do
    [ -f "$f" ] && cp "$f" "$ARTIFACTS/app-$(basename "$(dirname "$f")").log"
  done
  [ -f "$RUN_DIR/driver.log" ] && cp "$RUN_DIR/driver.log" "$ARTIFACTS/driver.log"
  [ "${E2E_KEEP_RUN_DIR:-0}" = 1 ] || rm -rf "$RUN_DIR"
  printf '\ne2e: finished in %ss (exit %s)\n' "$((SECONDS - T0))" "$rc"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "Xvfb"
exec 9> "$RUN_DIR/xvfb.display"
Xvfb -displayfd 9 -screen 0 1280x800x24 -nolisten tcp > "$RUN_DIR/xvfb.log" 2>&1 &
XVFB_PID=$!
exec 9>&-
for _ in $(seq 100); do [ -s "$RUN_DIR/xvfb.display" ] && break; sleep 0.1; done
[ -s "$RUN_DIR/xvfb.display" ] || die "Xvfb did not start: $(cat "$RUN_DIR/xvfb.log")"
export DISPLAY=":$(head -n1 "$RUN_DIR/xvfb.display")"
echo "DISPLAY=$DISPLAY"

step "WebKitWebDriver"
# The app runs as shipped: its page drawn without GPU compositing
# (src-tauri/src/webview.rs). With compositing, WebKitGTK's compositor thread
# draws through Mesa's software GL under Xvfb, which now and then crashes the
# page's process, and WebKitWebDriver then drops the session mid-test.
# Screenshots are taken from the X display (lib/app.mjs), because WebKitGTK's
# own snapshot hangs without compositing. E2E_GPU_COMPOSITING=1 runs the app
# with WebKit's default compositing instead.
gpu_compositing="${E2E_GPU_COMPOSITING-}"
# The app's PATH: the stubs first (deep-link.test.mjs gives it to xdg-open too).
APP_PATH="$RUN_DIR/stub-bin:/usr/local/bin:/usr/bin:/bin"
PORT="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
# The driver starts the app (through launch-app.sh), so the app's environment
# is the driver's: fixture HOME, system root, stub PATH, no XDG overrides.
env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME -u XDG_STATE_HOME -u SHELL \
  TAURI_WEBVIEW_AUTOMATION=true \
  HOME="$FIXTURE_HOME" \
  SWITCHBOARD_SYSTEM_ROOT="$RUN_DIR/fixture/system" \
  GITHUB_TOKEN=ghp_fixture \
  E2E_APP_BIN="$BIN/switchboard-app" \
  E2E_APP_PATH="$APP_PATH" \
  ${gpu_compositing:+SWITCHBOARD_GPU_COMPOSITING=1} \
  WebKitWebDriver --port="$PORT" > "$RUN_DIR/driver.log" 2>&1 &
DRIVER_PID=$!
for _ in $(seq 100); do
  node -e 'require("net").connect(+process.argv[1],"127.0.0.1").on("connect",()=>process.exit(0)).on("error",()=>process.exit(1))' "$PORT" && break
  kill -0 "$DRIVER_PID" 2>/dev/null || die "WebKitWebDriver exited: $(cat "$RUN_DIR/driver.log")"
  sleep 0.1
done
echo "WebKitWebDriver on 127.0.0.1:$PORT (pid $DRIVER_PID)"

step "node --test ${files[*]#"$ROOT/"}"
export E2E_DRIVER_PORT="$PORT" E2E_RUN_DIR="$RUN_DIR" E2E_LAUNCHER="$E2E/launch-app.sh" \
  E2E_FIXTURE_SERVER="$BIN/fixture-server" E2E_ARTIFACTS="$ARTIFACTS" E2E_HOME="$FIXTURE_HOME" \
  E2E_OAUTH_SERVER="$CARGO_TARGET_DIR/debug/oauth-server" E2E_REGISTRY_SERVER="$BIN/registry-server" \
  E2E_DEB="$DEB" E2E_APP_PATH="$APP_PATH" \
  E2E_FIXTURE_IDP="$CARGO_TARGET_DIR/debug/fixture-idp" E2E_SWITCHBOARD="$CARGO_TARGET_DIR/debug/switchboard"
# One file at a time: each file drives its own app window on the one display.
timeout "${E2E_TEST_TIMEOUT:-900}" node --test --test-concurrency=1 --test-timeout="${E2E_TEST_TIMEOUT_MS:-180000}" \
  ${E2E_TEST_PATTERN:+--test-name-pattern="$E2E_TEST_PATTERN"} "${files[@]}"
