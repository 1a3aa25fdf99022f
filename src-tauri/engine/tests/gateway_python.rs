//! The gateway with the Python MCP SDK (PyPI `mcp`, tests/python) as its
//! client: the same tools, calls (arguments, an error result, a server
//! error, a cancelled call), resources, templates and prompts through
//! `switchboard serve` over stdio, over HTTP and at `/mcp/<server>` as when
//! the SDK talks to the fixture server directly.
//!
//! Needs tests/python/.venv (`tests/python/setup.sh`, which .ci/test runs):
//! without it these tests skip locally and fail when `CI` is set.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const TOKEN: &str = "gateway-python-token-0123456789";
const T: Duration = Duration::from_secs(60);

fn python_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python")
}

/// The venv's python, or `None` (skip) outside CI.
fn python(test: &str) -> Option<PathBuf> {
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

struct Home(switchboard_tests::TempHome);

impl Home {
    fn new() -> Home {
        let fixture = switchboard_tests::fixture_server_path();
        Home(switchboard_tests::TempHome::with_servers(json!({
            "fx": { "command": fixture, "args": ["--name", "fx", "--resources"] },
            "other": { "command": fixture, "args": ["--name", "other"] }
        })))
    }

    fn env(&self, c: &mut tokio::process::Command) {
        c.env_clear()
            .envs(self.0.vars())
            .env("SWITCHBOARD_GATEWAY_TOKEN", TOKEN)
            .kill_on_drop(true);
    }

    async fn http(&self) -> (tokio::process::Child, String) {
        let mut c = tokio::process::Command::new(BIN);
        c.args(["serve", "--http", "127.0.0.1:0"]);
        self.env(&mut c);
        c.stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = c.spawn().unwrap();
        let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        tokio::time::timeout(T, out.read_line(&mut line))
            .await
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        (child, v["url"].as_str().unwrap().to_string())
    }

    /// The client script's JSON for one connection.
    async fn client(&self, py: &Path, args: &[&str]) -> Value {
        let mut c = tokio::process::Command::new(py);
        c.arg(python_dir().join("gateway_client.py")).args(args);
        self.env(&mut c);
        let o = tokio::time::timeout(T, c.output())
            .await
            .expect("the Python client finished in time")
            .unwrap();
        assert!(
            o.status.success(),
            "python {args:?} failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
    }
}

const AGGREGATE: [&str; 6] = [
    "--tool-prefix",
    "mcp_fx_",
    "--uri-prefix",
    "switchboard://fx/",
    "--prompt-prefix",
    "mcp_fx_",
];

fn same(mut through: Value, mut direct: Value, what: &str) {
    let name = through.as_object_mut().unwrap().remove("serverName");
    direct.as_object_mut().unwrap().remove("serverName");
    assert_eq!(through, direct, "{what} ({name:?})");
    assert_eq!(
        direct["cancelled"], 1,
        "the direct run saw its cancellation"
    );
    assert_eq!(direct["tools"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn python_sdk_through_stdio_gets_what_it_gets_directly() {
    let Some(py) = python("python_sdk_through_stdio_gets_what_it_gets_directly") else {
        return;
    };
    let home = Home::new();
    let fixture = switchboard_tests::fixture_server_path();
    let direct = home
        .client(
            &py,
            &[
                "stdio",
                fixture.to_str().unwrap(),
                "--name",
                "fx",
                "--resources",
            ],
        )
        .await;
    let mut args = AGGREGATE.to_vec();
    args.extend(["stdio", BIN, "serve"]);
    let through = home.client(&py, &args).await;
    assert_eq!(through["serverName"], "switchboard");
    same(through, direct.clone(), "aggregate over stdio");
    let alone = home
        .client(&py, &["stdio", BIN, "serve", "--server", "fx"])
        .await;
    assert_eq!(alone["serverName"], "switchboard/fx");
    same(alone, direct, "serve --server fx");
}

#[tokio::test]
async fn python_sdk_through_http_gets_what_it_gets_directly() {
    let Some(py) = python("python_sdk_through_http_gets_what_it_gets_directly") else {
        return;
    };
    let home = Home::new();
    let fixture = switchboard_tests::fixture_server_path();
    let direct = home
        .client(
            &py,
            &[
                "stdio",
                fixture.to_str().unwrap(),
                "--name",
                "fx",
                "--resources",
            ],
        )
        .await;
    let (_gateway, url) = home.http().await;
    let mut args = AGGREGATE.to_vec();
    args.extend(["http", &url, TOKEN]);
    same(
        home.client(&py, &args).await,
        direct.clone(),
        "aggregate over HTTP",
    );
    let one = format!("{url}/fx");
    same(
        home.client(&py, &["http", &one, TOKEN]).await,
        direct,
        "/mcp/fx over HTTP",
    );
}
