//! The gateway with the Python MCP SDK (PyPI `mcp`, tests/python) as its
//! client: the same tools, calls (arguments, an error result, a server
//! error, a cancelled call), resources, templates and prompts through
//! `switchboard serve` over stdio, over HTTP and at `/mcp/<server>` as when
//! the SDK talks to the fixture server directly.
//!
//! Needs tests/python/.venv (`tests/python/setup.sh`, which .ci/test runs):
//! without it these tests skip locally and fail when `CI` is set.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const TOKEN: &str = "gateway-python-token-0123456789";
const T: Duration = Duration::from_secs(60);

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
        c.arg(switchboard_tests::python_dir().join("gateway_client.py"))
            .args(args);
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
    let Some(py) = switchboard_tests::python("python_sdk_through_stdio_gets_what_it_gets_directly")
    else {
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
    let Some(py) = switchboard_tests::python("python_sdk_through_http_gets_what_it_gets_directly")
    else {
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

/// Runs `switchboard ARGS` in the home, checks it succeeded, returns stdout.
async fn cli(home: &Home, args: &[&str]) -> String {
    let mut c = tokio::process::Command::new(BIN);
    c.args(args);
    home.env(&mut c);
    let o = tokio::time::timeout(T, c.output()).await.unwrap().unwrap();
    assert!(
        o.status.success(),
        "switchboard {args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A profile's endpoint, `/mcp/p/<profile>`: the Python SDK lists exactly the
/// profile's tools (one server, one of its tools left out), and when the
/// profile changes in another process (`switchboard profile add`), it gets
/// `list_changed` and then lists the new set.
#[tokio::test]
async fn python_sdk_at_a_profile_lists_its_tools_and_hears_it_change() {
    let Some(py) =
        switchboard_tests::python("python_sdk_at_a_profile_lists_its_tools_and_hears_it_change")
    else {
        return;
    };
    let home = Home::new();
    let all: Value =
        serde_json::from_str(&cli(&home, &["tools", "--json", "--server", "fx", "--wait"]).await)
            .unwrap();
    let mut want: Vec<String> = all["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .filter(|n| n != "mcp_fx_sleep")
        .collect();
    want.sort();
    assert!(want.len() > 3, "fx offers its tools: {want:?}");
    cli(&home, &["profile", "create", "focus", "fx"]).await;
    cli(
        &home,
        &["profile", "tools", "focus", "fx", "--deny", "sleep"],
    )
    .await;
    let (_gateway, url) = home.http().await;
    let at = format!("{url}/p/focus");
    let mut c = tokio::process::Command::new(&py);
    c.arg(switchboard_tests::python_dir().join("profile_client.py"))
        .args([&at, TOKEN]);
    home.env(&mut c);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    tokio::time::timeout(T, out.read_line(&mut line))
        .await
        .expect("the client listed the profile's tools in time")
        .unwrap();
    let first: Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("{e}: {line:?} (client's first line)"));
    assert_eq!(
        first["tools"],
        json!(want),
        "exactly the profile's tools: fx without sleep, nothing of other"
    );
    cli(&home, &["profile", "add", "focus", "other"]).await;
    line.clear();
    tokio::time::timeout(T, out.read_line(&mut line))
        .await
        .expect("the client heard list_changed and listed again in time")
        .unwrap();
    let second: Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("{e}: {line:?} (client's second line)"));
    let names: Vec<&str> = second["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"mcp_other_echo") && !names.contains(&"mcp_fx_sleep"),
        "after the change: other's tools are in, fx's sleep still out: {names:?}"
    );
    let status = tokio::time::timeout(T, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
}

/// What a secret of the fixture server `fx` is set to (its env).
const JOURNAL_SECRET: &str = "fx-journal-secret-7c41d9e2";

/// The call journal (Activity): every request the Python SDK makes through
/// `switchboard serve`, over stdio and over HTTP, is in `switchboard
/// activity --json`, with its client, transport, outcome and findings; the
/// server's secret, which the client sent as an argument and the echo tool
/// sent back, is masked before the client gets it back and is in no entry
/// and in none of the journal's files.
#[tokio::test]
async fn python_sdk_calls_through_the_gateway_are_in_the_journal_masked() {
    let Some(py) =
        switchboard_tests::python("python_sdk_calls_through_the_gateway_are_in_the_journal_masked")
    else {
        return;
    };
    let fixture = switchboard_tests::fixture_server_path();
    let home = Home(switchboard_tests::TempHome::with_servers(json!({
        "fx": {
            "command": fixture,
            "args": ["--name", "fx", "--resources"],
            "env": { "FX_API_TOKEN": JOURNAL_SECRET }
        }
    })));
    let run = |args: Vec<String>| {
        let mut c = tokio::process::Command::new(&py);
        c.arg(switchboard_tests::python_dir().join("journal_client.py"))
            .args(args);
        home.env(&mut c);
        c.env("JOURNAL_SECRET", JOURNAL_SECRET);
        async move {
            let o = tokio::time::timeout(T, c.output()).await.unwrap().unwrap();
            assert!(
                o.status.success(),
                "journal_client.py failed:\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
            serde_json::from_slice::<Value>(&o.stdout).unwrap()
        }
    };
    let stdio = run(vec!["stdio".into(), BIN.into(), "serve".into()]).await;
    let (mut gateway, url) = home.http().await;
    let http = run(vec!["http".into(), url, TOKEN.into()]).await;
    for (via, got) in [("stdio", &stdio), ("http", &http)] {
        let echo = got["echo"].as_str().unwrap();
        assert!(
            !echo.contains(JOURNAL_SECRET)
                && echo.contains("my key is •••")
                && echo.starts_with("Switchboard:"),
            "over {via} the client got the echo masked, with the checks' note first: {echo}"
        );
    }

    // Entries are written by the gateways' journal writers: wait for all ten.
    let deadline = std::time::Instant::now() + T;
    let entries: Vec<Value> = loop {
        let out = cli(&home, &["activity", "--json", "--server", "fx"]).await;
        let entries: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if entries.len() >= 10 || std::time::Instant::now() > deadline {
            assert!(
                !out.contains(JOURNAL_SECRET),
                "no secret in activity: {out}"
            );
            break entries;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let _ = gateway.kill().await;
    assert_eq!(
        entries.len(),
        10,
        "5 requests over stdio, 5 over HTTP: {entries:#?}"
    );
    for via in ["stdio", "http"] {
        let mine: Vec<&Value> = entries.iter().filter(|e| e["via"] == via).collect();
        let what: std::collections::BTreeSet<(String, String)> = mine
            .iter()
            .map(|e| {
                (
                    e["kind"].as_str().unwrap().to_string(),
                    e["name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let want: std::collections::BTreeSet<(String, String)> = [
            ("tool", "echo"),
            ("tool", "add"),
            ("tool", "fail"),
            ("resource", "fixture://greeting"),
            ("prompt", "greet"),
        ]
        .iter()
        .map(|(k, n)| (k.to_string(), n.to_string()))
        .collect();
        assert_eq!(what, want, "over {via}");
        for e in &mine {
            assert_eq!(
                e["client"], "mcp",
                "the Python SDK's name from its initialize"
            );
            let outcome = if e["name"] == "fail" {
                "toolError"
            } else {
                "ok"
            };
            assert_eq!(e["outcome"], outcome, "{e}");
        }
        let echo = mine.iter().find(|e| e["name"] == "echo").unwrap();
        let args = echo["arguments"].as_str().unwrap();
        assert!(args.contains("my key is"), "{args}");
        let rules: Vec<&str> = echo["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap())
            .collect();
        assert!(rules.contains(&"known-secret"), "{rules:?}");
        let add = mine.iter().find(|e| e["name"] == "add").unwrap();
        assert!(add["result"].as_str().unwrap().contains("42"), "{add}");
    }

    // Nor in the database's own files (the write-ahead log included).
    let mut files = vec![];
    let mut dirs = vec![home.0.path().to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("journal.db"))
            {
                files.push(p);
            }
        }
    }
    assert!(!files.is_empty(), "the journal is in the data folder");
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !bytes
                .windows(JOURNAL_SECRET.len())
                .any(|w| w == JOURNAL_SECRET.as_bytes()),
            "{} holds the secret",
            f.display()
        );
    }
}
