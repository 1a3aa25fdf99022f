//! Shared helpers for the workspace end-to-end tests.
//!
//! The `fixture-server` binary (src/bin/fixture_server.rs) is a configurable MCP
//! server; see tests/README.md for its flags. Helpers here locate the binary and
//! start it in HTTP mode.

pub mod bench;
pub mod idp;
pub mod in_process;
pub mod mcpb;
pub mod round_robin;

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, ChildStdout, Command},
};

/// Tools every fixture server has, in `tools/list` order, before `--tool-prefix`
/// is applied. Extra `--tool NAME` tools follow, then the `--tools N` generated
/// `tool_0..tool_{N-1}`, then tools added at run time by `change_tools`
/// (`dynamic_0`, `dynamic_1`, ...).
pub const FIXED_TOOLS: &[&str] = &[
    "echo",
    "add",
    "fail",
    "sleep",
    "pid",
    "crash",
    "spawn_child",
    "change_tools",
    "bump_counter",
    "roots",
    "elicit",
    "stats",
];

/// A temporary HOME to run the `switchboard` binary in: Switchboard's own
/// file (`~/.config/switchboard/servers.json`) lists the given servers, and
/// nothing of the real home or system is seen.
pub struct TempHome {
    _dir: tempfile::TempDir,
    /// The folder, canonical (paths the engine reports compare equal).
    path: PathBuf,
}

impl TempHome {
    /// A home with no config file at all.
    pub fn empty() -> TempHome {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().canonicalize().expect("temp dir path");
        TempHome { _dir: dir, path }
    }

    /// `servers`: the `mcpServers` object of Switchboard's own file.
    pub fn with_servers(servers: serde_json::Value) -> TempHome {
        let home = TempHome::empty();
        home.write(
            ".config/switchboard/servers.json",
            &serde_json::json!({ "mcpServers": servers }).to_string(),
        );
        home
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `text` to `rel` (inside the home), making its folders.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).expect("folders");
        std::fs::write(&p, text).expect("write");
        p
    }

    /// The engine's view of this home as the machine (Linux, only HOME set).
    pub fn host(&self) -> switchboard_engine::host::Host {
        use switchboard_engine::host::{Host, Os};
        Host {
            os: Os::Linux,
            home: self.path.clone(),
            vars: [("HOME".to_string(), self.path.to_string_lossy().to_string())].into(),
            system_root: self.path.join("sys"),
        }
    }

    /// The whole environment of a process run in this home (use after
    /// `env_clear()`): HOME, the caller's PATH, and a system root inside it.
    pub fn vars(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        vec![
            ("HOME", self.path().into()),
            ("PATH", std::env::var_os("PATH").unwrap_or_default()),
            ("SWITCHBOARD_SYSTEM_ROOT", self.path().join("sys").into()),
        ]
    }

    /// `program` with only [`TempHome::vars`], killed when dropped.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env_clear().envs(self.vars()).kill_on_drop(true);
        c
    }
}

fn candidate(dir: &Path, bin: &str) -> Option<PathBuf> {
    let p = dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    p.is_file().then_some(p)
}

/// Path of the built `fixture-server` binary.
///
/// Looks, in order, at `$SWITCHBOARD_FIXTURE_SERVER`, next to the current
/// executable and its parent (a test binary lives in `target/<profile>/deps/`,
/// the bin in `target/<profile>/`), then `$CARGO_TARGET_DIR/{debug,release}` and
/// `<workspace>/target/{debug,release}`.
///
/// Inside this crate's own tests `env!("CARGO_BIN_EXE_fixture-server")` is
/// equivalent and guarantees the binary is built. Other crates must make sure
/// it is built first, e.g. `cargo build -p switchboard-tests --bin fixture-server`
/// (a workspace-wide `cargo test` builds it because this crate is a default member).
///
/// # Panics
/// If the binary cannot be found.
pub fn fixture_server_path() -> PathBuf {
    try_fixture_server_path().unwrap_or_else(|| {
        panic!(
            "fixture-server binary not found; build it with \
             `cargo build -p switchboard-tests --bin fixture-server` \
             or set SWITCHBOARD_FIXTURE_SERVER"
        )
    })
}

/// Like [`fixture_server_path`] but returns `None` when not found.
pub fn try_fixture_server_path() -> Option<PathBuf> {
    try_built_bin("fixture-server", "SWITCHBOARD_FIXTURE_SERVER")
}

/// The built `conformance-server` (src/bin/conformance_server.rs: what the
/// conformance suite's server scenarios call), searched like
/// [`fixture_server_path`] (`$SWITCHBOARD_CONFORMANCE_SERVER` first).
///
/// # Panics
/// If the binary cannot be found.
pub fn conformance_server_path() -> PathBuf {
    try_built_bin("conformance-server", "SWITCHBOARD_CONFORMANCE_SERVER").unwrap_or_else(|| {
        panic!("conformance-server binary not found; build it with `cargo build -p switchboard-tests --bin conformance-server`")
    })
}

/// The built `fixture-tricky-results` (src/bin/fixture_tricky_results.rs:
/// results that Switchboard's checks on results must catch), searched like
/// [`fixture_server_path`] (`$SWITCHBOARD_TRICKY_RESULTS` first).
///
/// # Panics
/// If the binary cannot be found.
pub fn tricky_results_server_path() -> PathBuf {
    try_built_bin("fixture-tricky-results", "SWITCHBOARD_TRICKY_RESULTS").unwrap_or_else(|| {
        panic!("fixture-tricky-results binary not found; build it with `cargo build -p switchboard-tests --bin fixture-tricky-results`")
    })
}

/// The `switchboard` CLI built from this workspace (`$SWITCHBOARD_BIN`, else
/// searched like [`fixture_server_path`]). This crate's tests cannot make
/// Cargo build another package's binary: `cargo build -p switchboard-engine
/// --bin switchboard` does (a workspace-wide `cargo test` builds it too).
pub fn try_switchboard_path() -> Option<PathBuf> {
    try_built_bin("switchboard", "SWITCHBOARD_BIN")
}

/// A workspace binary named `bin`: `$env` when set to a file, else next to
/// the current executable or its parent, else in the target directories.
fn try_built_bin(bin: &str, env: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Some(p);
        }
    }
    if let Ok(exe) = std::env::current_exe() {
        let mut dir = exe.parent();
        for _ in 0..2 {
            let Some(d) = dir else { break };
            if let Some(p) = candidate(d, bin) {
                return Some(p);
            }
            dir = d.parent();
        }
    }
    let mut roots = Vec::new();
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        roots.push(PathBuf::from(t));
    }
    // tests/ is one level below the workspace root.
    roots.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("target"),
    );
    for root in roots {
        for profile in ["debug", "release"] {
            if let Some(p) = candidate(&root.join(profile), bin) {
                return Some(p);
            }
        }
    }
    None
}

/// A `tokio::process::Command` for the fixture server with `args`, stdin/stdout
/// piped, stderr inherited and `kill_on_drop(true)`.
pub fn fixture_command<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut cmd = Command::new(fixture_server_path());
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    cmd
}

/// A fixture server running in HTTP mode (`--http` or `--sse`).
/// The process is killed when this value is dropped.
#[derive(Debug)]
pub struct HttpFixture {
    /// The child process (killed on drop).
    pub child: Child,
    /// URL from the `LISTENING` line: `http://127.0.0.1:PORT/mcp` (Streamable HTTP)
    /// or `http://127.0.0.1:PORT/sse` (legacy SSE).
    pub url: String,
    /// The rest of stdout (nothing more is printed today).
    pub stdout: BufReader<ChildStdout>,
}

impl HttpFixture {
    /// Base URL without the path, e.g. `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> &str {
        match self.url.rfind('/') {
            Some(i) if i > "http://".len() => &self.url[..i],
            _ => &self.url,
        }
    }

    /// Kill the server and wait for it to exit.
    pub async fn kill(mut self) -> std::io::Result<()> {
        self.child.kill().await
    }
}

/// Start `fixture-server --http 127.0.0.1:0 <extra_args>` and wait (up to 10 s)
/// for its `LISTENING <url>` line. Streamable HTTP at `/mcp`.
pub async fn spawn_http_fixture<S: AsRef<str>>(extra_args: &[S]) -> anyhow::Result<HttpFixture> {
    let mut args = vec!["--http".to_string(), "127.0.0.1:0".to_string()];
    args.extend(extra_args.iter().map(|s| s.as_ref().to_string()));
    spawn_listening(args).await
}

/// Start `fixture-server --sse --http 127.0.0.1:0 <extra_args>`: the legacy
/// 2024-11-05 HTTP+SSE transport. `url` ends in `/sse`.
pub async fn spawn_sse_fixture<S: AsRef<str>>(extra_args: &[S]) -> anyhow::Result<HttpFixture> {
    let mut args = vec![
        "--sse".to_string(),
        "--http".to_string(),
        "127.0.0.1:0".to_string(),
    ];
    args.extend(extra_args.iter().map(|s| s.as_ref().to_string()));
    spawn_listening(args).await
}

/// Start the fixture server with exactly `args` (which must select an HTTP mode)
/// and wait for the `LISTENING` line.
pub async fn spawn_listening(args: Vec<String>) -> anyhow::Result<HttpFixture> {
    let mut cmd = fixture_command(&args);
    cmd.stdin(Stdio::null());
    let mut child = cmd.spawn()?;
    let stdout = child.stdout.take().expect("stdout piped");
    let mut stdout = BufReader::new(stdout);
    let mut line = String::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stdout.read_line(&mut line)).await;
    match read {
        Ok(Ok(n)) if n > 0 => {}
        Ok(Ok(_)) => {
            let status = child.wait().await?;
            anyhow::bail!("fixture-server {args:?} exited ({status}) before LISTENING");
        }
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => anyhow::bail!("fixture-server {args:?} did not print LISTENING within 10 s"),
    }
    let url = line
        .trim()
        .strip_prefix("LISTENING ")
        .ok_or_else(|| anyhow::anyhow!("unexpected first line from fixture-server: {line:?}"))?
        .to_string();
    Ok(HttpFixture { child, url, stdout })
}

/// Start the `oauth-server` test authorization server + protected MCP server (see
/// tests/README.md) with `args` and wait ≤10 s for `LISTENING http://127.0.0.1:PORT/mcp`.
/// The binary is `$SWITCHBOARD_OAUTH_SERVER`, else `oauth-server` next to
/// [`fixture_server_path`] (`cargo build -p switchboard-tests --bins` builds both).
pub async fn spawn_oauth_server<S: AsRef<str>>(args: &[S]) -> anyhow::Result<HttpFixture> {
    let exe = std::env::var_os("SWITCHBOARD_OAUTH_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            fixture_server_path()
                .with_file_name(format!("oauth-server{}", std::env::consts::EXE_SUFFIX))
        });
    let mut child = Command::new(&exe)
        .args(args.iter().map(|s| s.as_ref()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| anyhow::anyhow!("starting {}: {e}", exe.display()))?;
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout piped"));
    let mut line = String::new();
    match tokio::time::timeout(Duration::from_secs(10), stdout.read_line(&mut line)).await {
        Ok(Ok(n)) if n > 0 => {}
        Ok(Ok(_)) => anyhow::bail!(
            "oauth-server exited ({}) before LISTENING",
            child.wait().await?
        ),
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => anyhow::bail!("oauth-server did not print LISTENING within 10 s"),
    }
    let url = line
        .trim()
        .strip_prefix("LISTENING ")
        .ok_or_else(|| anyhow::anyhow!("unexpected first line from oauth-server: {line:?}"))?
        .to_string();
    Ok(HttpFixture { child, url, stdout })
}

/// Whether process `pid` is gone, dying, or has a SIGKILL pending (Linux):
/// true as soon as a `kill(pid, SIGKILL)` has returned, not only once the
/// process is reaped, so a test can check that nobody sent one without
/// waiting for it to take effect.
pub fn killed(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return true;
    };
    let sigkill_pending = status
        .lines()
        .filter(|l| l.starts_with("SigPnd:") || l.starts_with("ShdPnd:"))
        .filter_map(|l| u64::from_str_radix(l.split_whitespace().nth(1)?, 16).ok())
        .any(|mask| mask & (1 << 8) != 0);
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    // After the command: state (field 3) … flags (field 9).
    let f: Vec<&str> = stat
        .rsplit_once(") ")
        .map(|x| x.1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    const PF_EXITING: u64 = 0x4;
    let exiting = f
        .get(6)
        .and_then(|x| x.parse::<u64>().ok())
        .is_some_and(|flags| flags & PF_EXITING != 0);
    sigkill_pending || exiting || matches!(f.first(), Some(&"Z") | Some(&"X"))
}

/// Start the `registry-server` stand-in for the MCP Registry's v0.1 API over
/// tests/fixtures/registry (src/bin/registry_server.rs) with `args`, and wait
/// ≤10 s for `LISTENING http://127.0.0.1:PORT` (`url` is that base URL). The
/// binary is `$SWITCHBOARD_REGISTRY_SERVER`, else `registry-server` next to
/// [`fixture_server_path`] (`cargo build -p switchboard-tests --bins`).
pub async fn spawn_registry_server<S: AsRef<str>>(args: &[S]) -> anyhow::Result<HttpFixture> {
    let exe = std::env::var_os("SWITCHBOARD_REGISTRY_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            fixture_server_path()
                .with_file_name(format!("registry-server{}", std::env::consts::EXE_SUFFIX))
        });
    let mut child = Command::new(&exe)
        .args(args.iter().map(|s| s.as_ref()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            anyhow::anyhow!(
                "starting {} (build it: cargo build -p switchboard-tests --bins): {e}",
                exe.display()
            )
        })?;
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout piped"));
    let mut line = String::new();
    match tokio::time::timeout(Duration::from_secs(10), stdout.read_line(&mut line)).await {
        Ok(Ok(n)) if n > 0 => {}
        Ok(Ok(_)) => anyhow::bail!(
            "registry-server exited ({}) before LISTENING",
            child.wait().await?
        ),
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => anyhow::bail!("registry-server did not print LISTENING within 10 s"),
    }
    let url = line
        .trim()
        .strip_prefix("LISTENING ")
        .ok_or_else(|| anyhow::anyhow!("unexpected first line from registry-server: {line:?}"))?
        .to_string();
    Ok(HttpFixture { child, url, stdout })
}

/// `tests/python`: the Python MCP SDK's venv (`tests/python/setup.sh`) and
/// the client scripts the gateway tests run.
pub fn python_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("python")
}

/// The venv's python for `test`, or `None` (the test skips, saying so)
/// when it is missing outside CI; with `CI` set a missing venv fails.
pub fn python(test: &str) -> Option<PathBuf> {
    let py = python_dir().join(".venv/bin/python");
    if py.is_file() {
        return Some(py);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{test}: {} is missing; .ci/test must run tests/python/setup.sh",
            py.display()
        );
    }
    eprintln!(
        "SKIPPED {test}: {} is missing; run tests/python/setup.sh",
        py.display()
    );
    None
}

/// Polls `check` every `every` until it gives `Ok`, and returns that value.
/// Fails the test with the last `Err` (what was seen instead) once `within`
/// has passed: tests wait for a condition, never for a fixed time.
pub async fn eventually<T, F, Fut>(within: Duration, every: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let until = tokio::time::Instant::now() + within;
    loop {
        match check().await {
            Ok(v) => return v,
            Err(seen) if tokio::time::Instant::now() >= until => {
                panic!("not within {within:?}: {seen}")
            }
            Err(_) => tokio::time::sleep(every).await,
        }
    }
}

/// The first line `child` writes to its stdout (taken from it), read within
/// `within`, or the test fails saying so; and the reader, for more lines.
pub async fn first_line(child: &mut Child, within: Duration) -> (String, BufReader<ChildStdout>) {
    let mut out = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut line = String::new();
    match tokio::time::timeout(within, out.read_line(&mut line)).await {
        Ok(Ok(_)) => (line, out),
        Ok(Err(e)) => panic!("reading the child's stdout: {e}"),
        Err(_) => panic!("the child wrote no line within {within:?}"),
    }
}

/// The desktop app's engine on `home` (nothing of this machine's own configs
/// is read), with sign-ins kept in memory, started.
pub async fn desktop_engine(home: &Path) -> switchboard_engine::engine::Engine {
    use switchboard_engine::auth::vault::{MemoryBackend, Vault};
    let host = switchboard_engine::host::Host {
        os: switchboard_engine::host::Os::Linux,
        home: home.to_path_buf(),
        vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
        system_root: home.join("sys"),
    };
    let opts = switchboard_engine::manager::ManagerOptions {
        gate: Duration::from_millis(250),
        default_timeout: Duration::from_secs(20),
        grace: Duration::from_millis(300),
        home: home.to_path_buf(),
        ..Default::default()
    };
    let engine = switchboard_engine::engine::Engine::new(host, opts, vec![]);
    engine
        .manager()
        .set_vault(Some(Vault::new(std::sync::Arc::new(
            MemoryBackend::default(),
        ))));
    engine.start().await;
    engine
}
