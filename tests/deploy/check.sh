#!/usr/bin/env bash
# Checks the team-mode deployment files under src-tauri/engine/deploy,
# offline (no container registry is needed):
#
# 1. Kubernetes: renders the base and every overlay with the real kustomize
#    (`kubectl kustomize`, kubectl from PyPI: tests/deploy/requirements.txt),
#    validates every rendered object against the Kubernetes 1.31 and 1.37
#    schemas (kubernetes-validate, strict: unknown fields fail), and checks
#    that the objects fit together and fit the gateway (check_manifests.py).
# 2. Image: makes a local base image from scratch (the binary's shared
#    libraries, found by ldd, and a passwd entry for 65532), builds the
#    Containerfile's `runtime` target with buildah from the already built
#    binary (BINARY_FROM=prebuilt), and checks its config: user, entrypoint,
#    command, port, HOME, labels, the state folder's owner. Also checks that
#    the build context (.dockerignore) still holds a loadable Cargo workspace.
# 3. Run: where this machine can run containers (podman + runc), runs the
#    image as the cluster would (read-only root, tmpfs state, no
#    capabilities) with the base's example config: /healthz, the
#    protected-resource metadata, 401 with WWW-Authenticate on /mcp,
#    /metrics, the process's uid, and a clean exit on SIGTERM. Where
#    containers cannot run, it says so and stops after step 2.
#
# The binary: $SWITCHBOARD_BIN, else $CARGO_TARGET_DIR/debug/switchboard
# (built by `cargo test` earlier in .ci/test). A missing tool or binary is
# skipped locally and fails when CI is set. Needs root (buildah with vfs).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/tests/deploy"
DEPLOY="$ROOT/src-tauri/engine/deploy"
K8S="$DEPLOY/kubernetes"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/switchboard/target}"
BIN="${SWITCHBOARD_BIN:-$CARGO_TARGET_DIR/debug/switchboard}"
# 1.31: the oldest we validate against (preStop's sleep action needs 1.30);
# 1.37: the newest kubernetes-validate bundles.
K8S_VERSIONS=(1.31.0 1.37.0)

passed=0 failed=0 skipped=0
ok() { printf '  ok   %s\n' "$*"; passed=$((passed + 1)); }
bad() { printf '  FAIL %s\n' "$*"; failed=$((failed + 1)); }
# A missing dependency: a skip on a developer's machine, a failure in CI.
missing() {
  if [ -n "${CI:-}" ]; then bad "$* (required: CI is set)"
  else printf '  SKIP %s (this fails when CI is set)\n' "$*"; skipped=$((skipped + 1)); fi
}
section() { printf '\n== %s\n' "$*"; }
finish() {
  echo
  echo "deploy: $passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
}
# Runs a command with a time limit; on failure prints its output.
quiet() {
  local out
  if out="$(timeout 120 "$@" 2>&1)"; then return 0; fi
  printf '%s\n' "$out" | tail -20 | sed 's/^/       | /'
  return 1
}

WORK="$(mktemp -d /tmp/switchboard-deploy.XXXXXX)"
CONTAINER=""
cleanup() {
  if [ -n "$CONTAINER" ]; then podman "${PODMAN_OPTS[@]}" rm -f -t 0 "$CONTAINER" >/dev/null 2>&1 || true; fi
  if [ -d "$WORK/storage" ]; then
    buildah "${STORE[@]}" rm --all >/dev/null 2>&1 || true
    # Nothing may stay mounted under WORK before it is removed.
    findmnt -rn -o TARGET | grep "^$WORK/" | sort -r | xargs -r umount -l 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---------------------------------------------------------------- manifests
section "Kubernetes manifests (kustomize render, schema validation, cross-checks)"
"$HERE/setup.sh"
VENV="$HERE/.venv"
"$VENV/bin/kubectl" version --client 2>/dev/null | sed 's/^/  /'
for dir in "$K8S/base" "$K8S"/overlays/*/; do
  dir="${dir%/}"
  name="${dir#"$K8S"/}"
  out="$WORK/$(echo "$name" | tr / _).yaml"
  if quiet "$VENV/bin/kubectl" kustomize "$dir" -o "$out"; then
    ok "$name renders ($(grep -c '^kind:' "$out") objects)"
  else
    bad "$name does not render with kustomize"; continue
  fi
  for v in "${K8S_VERSIONS[@]}"; do
    if quiet "$VENV/bin/kubernetes-validate" --strict --quiet -k "$v" "$out"; then
      ok "$name: every object valid against the Kubernetes $v schemas (strict)"
    else
      bad "$name: not valid against the Kubernetes $v schemas"
    fi
  done
  if "$VENV/bin/python" "$HERE/check_manifests.py" "$out"; then
    ok "$name: objects fit together and fit the gateway"
  else
    bad "$name: cross-checks (above)"
  fi
done

# The build image's Rust must be new enough for the workspace and the
# locked dependencies (`cargo build --locked`).
rust_tag="$(sed -n 's/^ARG RUST_IMAGE=.*rust:\([0-9.]*\).*/\1/p' "$DEPLOY/Containerfile")"
ws_rust="$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' "$ROOT/Cargo.toml")"
need="$ws_rust"
if command -v cargo >/dev/null; then
  need="$( (cd "$ROOT" && cargo metadata --offline --locked --format-version 1 2>/dev/null) | python3 -c '
import json, sys
m = json.load(sys.stdin)
v = [tuple(int(x) for x in (p.get("rust_version") or "0").split(".")[:2]) for p in m["packages"]]
print(".".join(map(str, max(v))))' 2>/dev/null || echo "$ws_rust")"
fi
if [ -n "$rust_tag" ] && [ "$(printf '%s\n%s\n%s\n' "$ws_rust" "$need" "$rust_tag" | sort -V | tail -1)" = "$rust_tag" ]; then
  ok "Containerfile's RUST_IMAGE (Rust $rust_tag) >= workspace rust-version $ws_rust and the locked crates' $need"
else
  bad "Containerfile's RUST_IMAGE is Rust '$rust_tag': the workspace needs $ws_rust and the locked crates $need"
fi

# -------------------------------------------------------------------- image
section "Image (buildah, offline: local base image, prebuilt binary)"
STORE=(--root "$WORK/storage" --runroot "$WORK/run" --storage-driver vfs)
PODMAN_OPTS=("${STORE[@]}" --cgroup-manager cgroupfs --events-backend file)
image_ok=""
if [ "$(id -u)" -ne 0 ]; then
  missing "image checks need root (buildah and podman with vfs storage)"
elif ! command -v buildah >/dev/null; then
  missing "buildah is not installed (apt-get install buildah podman runc)"
elif [ ! -x "$BIN" ]; then
  missing "no switchboard binary at $BIN (cargo build -p switchboard-engine --bin switchboard)"
else
  # The runtime links only these (no GUI libraries): ld.so, libc, libm,
  # libgcc_s, plus libpthread/libdl/librt on an older glibc.
  others="$(ldd "$BIN" | awk '{print $1}' | grep -vE '^(linux-vdso\.so|/lib6?4?/ld-linux|ld-linux|libc\.so|libm\.so|libgcc_s\.so|libpthread\.so|libdl\.so|librt\.so)' || true)"
  if [ -z "$others" ]; then ok "the binary links only libc, libm, libgcc_s"
  else bad "the binary links more than libc, libm, libgcc_s: $others"; fi

  # A base image from scratch, standing in for distroless/cc: the binary's
  # libraries, CA certificates, passwd/group with nonroot (65532), /tmp.
  rootfs="$WORK/base/rootfs"
  mkdir -p "$rootfs/etc/ssl/certs" "$rootfs/tmp" "$rootfs/var/lib" "$rootfs/usr/local/bin"
  chmod 1777 "$rootfs/tmp"
  for lib in $(ldd "$BIN" | grep -o '/[^ ]*'); do
    mkdir -p "$rootfs$(dirname "$lib")"; cp -L "$lib" "$rootfs$lib"
  done
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$rootfs/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$rootfs/etc/group"
  [ -f /etc/ssl/certs/ca-certificates.crt ] && cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
  printf 'FROM scratch\nCOPY rootfs/ /\n' > "$WORK/base/Containerfile"
  mkdir -p "$WORK/ctx"; cp "$BIN" "$WORK/ctx/switchboard"
  BASE=localhost/switchboard-test-base:latest
  IMAGE=localhost/switchboard-test:latest
  revision="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  if quiet buildah "${STORE[@]}" bud --isolation chroot --pull-never -t "$BASE" "$WORK/base"; then
    ok "local base image from scratch ($BASE)"
    start=$SECONDS
    if quiet buildah "${STORE[@]}" bud --isolation chroot --pull-never --target runtime \
        --build-arg BASE_IMAGE="$BASE" --build-arg BINARY_FROM=prebuilt \
        --build-arg VERSION=test --build-arg REVISION="$revision" \
        -f "$DEPLOY/Containerfile" -t "$IMAGE" "$WORK/ctx"; then
      ok "Containerfile target runtime builds with BINARY_FROM=prebuilt ($((SECONDS - start)) s)"
      image_ok=1
    else
      bad "Containerfile target runtime does not build"
    fi
  else
    bad "cannot make the local base image"
  fi

  if [ -n "$image_ok" ]; then
    if buildah "${STORE[@]}" inspect --type image "$IMAGE" > "$WORK/inspect.json" 2>"$WORK/inspect.err" \
        && python3 - "$WORK/inspect.json" "$revision" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))["OCIv1"]["config"]
env = dict(e.split("=", 1) for e in c.get("Env", []))
labels = c.get("Labels", {})
want = {
    "user 65532:65532": c.get("User") == "65532:65532",
    "entrypoint [/usr/local/bin/switchboard, serve]": c.get("Entrypoint") == ["/usr/local/bin/switchboard", "serve"],
    "cmd --http 0.0.0.0:8080 --config /etc/switchboard": c.get("Cmd") == ["--http", "0.0.0.0:8080", "--config", "/etc/switchboard"],
    "exposes 8080/tcp": list(c.get("ExposedPorts", {})) == ["8080/tcp"],
    "HOME=/var/lib/switchboard": env.get("HOME") == "/var/lib/switchboard",
    "OCI labels title, licenses, version, revision": labels.get("org.opencontainers.image.title") == "switchboard"
        and labels.get("org.opencontainers.image.licenses") == "MIT"
        and labels.get("org.opencontainers.image.version") == "test"
        and labels.get("org.opencontainers.image.revision") == sys.argv[2],
}
for k, v in want.items():
    print(("  ok   " if v else "  FAIL ") + "image config: " + k)
sys.exit(0 if all(want.values()) else 1)
EOF
    then passed=$((passed + 6)); else bad "image config (above)"; cat "$WORK/inspect.err"; fi

    ctr="$(buildah "${STORE[@]}" from --pull-never "$IMAGE")"
    mnt="$(buildah "${STORE[@]}" mount "$ctr")"
    if [ "$(stat -c '%u:%g %a' "$mnt/var/lib/switchboard")" = "65532:65532 755" ]; then
      ok "/var/lib/switchboard exists, owned by 65532:65532"
    else bad "/var/lib/switchboard: $(stat -c '%u:%g %a' "$mnt/var/lib/switchboard" 2>&1)"; fi
    if [ "$(stat -c '%u %a' "$mnt/usr/local/bin/switchboard")" = "0 755" ]; then
      ok "/usr/local/bin/switchboard is root-owned, mode 755 (the user cannot replace it)"
    else bad "/usr/local/bin/switchboard: $(stat -c '%u %a' "$mnt/usr/local/bin/switchboard" 2>&1)"; fi
    buildah "${STORE[@]}" umount "$ctr" >/dev/null; buildah "${STORE[@]}" rm "$ctr" >/dev/null
  fi

  # The build stage's context: the repository minus .dockerignore must still
  # be a Cargo workspace that resolves with --locked.
  printf 'FROM scratch\nCOPY . /src\n' > "$WORK/context.Containerfile"
  if quiet buildah "${STORE[@]}" bud --isolation chroot --pull-never -f "$WORK/context.Containerfile" -t localhost/switchboard-test-context "$ROOT"; then
    ctr="$(buildah "${STORE[@]}" from --pull-never localhost/switchboard-test-context)"
    mnt="$(buildah "${STORE[@]}" mount "$ctr")"
    size="$(du -sm "$mnt/src" | cut -f1)"
    leaked="$(cd "$mnt/src" && find . -maxdepth 4 \( -name target -o -name node_modules -o -name .git -o -name .venv \) -print | head -5)"
    if [ -z "$leaked" ] && [ "$size" -lt 100 ]; then ok "build context is ${size} MB, without target/, node_modules/, .git, .venv"
    else bad "build context is ${size} MB and holds: $leaked"; fi
    if ! command -v cargo >/dev/null; then
      missing "cargo (to check that the build context is a Cargo workspace)"
    elif quiet cargo metadata --offline --locked --format-version 1 --manifest-path "$mnt/src/Cargo.toml"; then
      ok "build context is a Cargo workspace that resolves with --locked"
    else
      bad "build context is not a loadable Cargo workspace (.dockerignore leaves out something cargo needs)"
    fi
    buildah "${STORE[@]}" umount "$ctr" >/dev/null; buildah "${STORE[@]}" rm "$ctr" >/dev/null
  else
    bad "cannot copy the repository as the build context"
  fi
fi

# ---------------------------------------------------------------------- run
section "Run the image (podman)"
RUN_OPTS=(--network host --ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
# crun refuses cgroup v1/v2 hybrid hosts (like this CI's VM); runc copes.
command -v runc >/dev/null && PODMAN_OPTS+=(--runtime runc)
http() { curl -s -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' --max-time 5 "$@" || true; }
if [ -z "$image_ok" ]; then
  echo "  (no image: nothing to run)"
elif ! command -v podman >/dev/null; then
  missing "podman is not installed (apt-get install podman runc)"
elif ! probe="$(timeout 60 podman "${PODMAN_OPTS[@]}" run --rm "${RUN_OPTS[@]}" \
      --entrypoint /usr/local/bin/switchboard "$IMAGE" --version 2>&1)"; then
  echo "  *** CONTAINERS CANNOT RUN HERE: podman run failed:"
  printf '%s\n' "$probe" | tail -3 | sed 's/^/  *** /'
  echo "  *** The image was built and its config checked above; it was not started."
else
  ok "a container runs here: $probe"
  # The help is read whole before it is searched: `podman … | grep -q` under
  # pipefail fails whenever grep's early exit cuts podman's output short.
  serve_help="$(podman "${PODMAN_OPTS[@]}" run --rm "${RUN_OPTS[@]}" --entrypoint /usr/local/bin/switchboard \
      "$IMAGE" serve --help 2>&1 || true)"
  if [[ "$serve_help" != *--oidc-issuer* ]]; then
    bad "the binary has no team mode yet (serve --oidc-issuer): rebuild it ($BIN)"
  else
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    resource=https://mcp.example.com/mcp
    issuer=https://idp.example.com/realms/team
    CONTAINER="switchboard-deploy-test-$$"
    # As the cluster runs it: read-only root, the state folder and /tmp on
    # tmpfs, no capabilities, no privilege escalation; the base's example
    # config folder. Listens on loopback (host network) at a free port.
    if quiet podman "${PODMAN_OPTS[@]}" run -d --name "$CONTAINER" "${RUN_OPTS[@]}" \
        --read-only --tmpfs /tmp:rw,mode=1777 \
        --tmpfs /var/lib/switchboard:rw,mode=0700,U \
        --cap-drop ALL --security-opt no-new-privileges \
        -v "$K8S/base/config:/etc/switchboard:ro" \
        "$IMAGE" --http "127.0.0.1:$port" --config /etc/switchboard \
        --oidc-issuer "$issuer" --resource "$resource"; then
      base="http://127.0.0.1:$port"
      code="" deadline=$((SECONDS + 30))
      while [ $SECONDS -lt $deadline ]; do
        code="$(http "$base/healthz")"
        [ "$code" = 200 ] && break
        [ "$(podman "${PODMAN_OPTS[@]}" inspect -f '{{.State.Running}}' "$CONTAINER" 2>/dev/null)" = true ] || break
        sleep 0.2
      done
      if [ "$code" = 200 ]; then
        ok "/healthz 200 within $((30 - deadline + SECONDS)) s"
        pid="$(podman "${PODMAN_OPTS[@]}" inspect -f '{{.State.Pid}}' "$CONTAINER")"
        uid="$(awk '/^Uid:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo "?")"
        if [ "$uid" = 65532 ]; then ok "the gateway runs as uid 65532"; else bad "the gateway runs as uid $uid"; fi
        prm=""
        for path in /.well-known/oauth-protected-resource/mcp /.well-known/oauth-protected-resource; do
          if [ "$(http "$base$path")" = 200 ]; then prm="$path"; break; fi
        done
        if [ -n "$prm" ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d.get("resource") == sys.argv[2] and sys.argv[3] in d.get("authorization_servers", []) else 1)' \
            "$WORK/body" "$resource" "$issuer"; then
          ok "$prm names the resource and the issuer (RFC 9728)"
        else
          bad "protected-resource metadata: ${prm:-no 200}: $(head -c 300 "$WORK/body" 2>/dev/null)"
        fi
        code="$(http -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
          --data '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"deploy-check","version":"0"}}}' \
          "$base/mcp")"
        if [ "$code" = 401 ] && grep -qi '^www-authenticate: *bearer.*resource_metadata=' "$WORK/headers"; then
          ok "/mcp without a token: 401 with WWW-Authenticate: Bearer resource_metadata=..."
        else
          bad "/mcp without a token: HTTP $code, $(grep -i '^www-authenticate' "$WORK/headers" || echo 'no WWW-Authenticate')"
        fi
        code="$(http "$base/metrics")"
        if [ "$code" = 200 ]; then ok "/metrics 200"; else bad "/metrics: HTTP $code"; fi
        # The example's IdP cannot be reached from here, so no token could be
        # checked: the pod must stay out of the Service, and say why.
        code="$(http "$base/readyz")"
        if [ "$code" = 503 ] && grep -qF "$issuer" "$WORK/body"; then
          ok "/readyz 503 while the identity provider cannot be reached, naming it"
        else
          bad "/readyz: HTTP $code: $(head -c 300 "$WORK/body" | tr '\n' ' ')"
        fi
        start=$SECONDS
        podman "${PODMAN_OPTS[@]}" stop -t 40 "$CONTAINER" >/dev/null 2>&1 || true
        exit_code="$(podman "${PODMAN_OPTS[@]}" inspect -f '{{.State.ExitCode}}' "$CONTAINER")"
        if [ "$exit_code" != 137 ] && [ $((SECONDS - start)) -lt 40 ]; then
          ok "SIGTERM: the gateway stopped by itself in $((SECONDS - start)) s (exit $exit_code)"
        else
          bad "SIGTERM: exit $exit_code after $((SECONDS - start)) s (137: it had to be killed)"
        fi
      else
        bad "/healthz did not answer 200 within 30 s (last: HTTP ${code:-none})"
      fi
      echo "  -- container log (last 15 lines):"
      podman "${PODMAN_OPTS[@]}" logs "$CONTAINER" 2>&1 | tail -15 | sed 's/^/     | /'
    else
      bad "the container did not start"
    fi
  fi
fi

finish
