//! Interop with a real-world server: the reference `server-everything`
//! from npm (pinned in tests/npm/package.json, installed by `npm ci` in
//! tests/npm), through the engine's `Manager`, over stdio and over
//! streamable HTTP. Tool names, a call, a tool error, a cancelled
//! long-running call, and teardown without leftover processes.
//!
//! Skips (passing, with a message on stderr) when tests/npm/node_modules is
//! missing or `node` is not on PATH.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use switchboard_engine::config::{ServerDef, Transport};
use switchboard_engine::events::ServerStatus;
use switchboard_engine::manager::{CallError, Manager, ManagerOptions, Wanted};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

fn npm_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("npm")
}

/// `dist/index.js` of server-everything, or `None` (with a skip message).
fn everything_js(test: &str) -> Option<PathBuf> {
    let js = npm_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !js.is_file() {
        eprintln!(
            "SKIPPED {test}: {} is missing; run `npm ci` in tests/npm (.ci/setup does) to test against server-everything",
            js.display()
        );
        return None;
    }
    let node_ok = std::process::Command::new("node").arg("--version").stdout(Stdio::null()).status().map(|s| s.success()).unwrap_or(false);
    if !node_ok {
        eprintln!("SKIPPED {test}: `node` is not on PATH");
        return None;
    }
    Some(js)
}

fn opts() -> ManagerOptions {
    ManagerOptions {
        cache_path: None,
        gate: Duration::from_millis(250),
        default_timeout: Duration::from_secs(30),
        grace: Duration::from_millis(1000),
        env: std::env::vars().collect(),
        home: std::env::temp_dir(),
        ..ManagerOptions::default()
    }
}

fn args(v: Value) -> Option<Map<String, Value>> {
    v.as_object().cloned()
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

async fn wait_gone(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if !pid_alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Every process whose process group is `pgid` (from /proc/*/stat).
fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = vec![];
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after ')'.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

/// The checks shared by both transports, against server `name` (already connected).
async fn exercise(m: &Manager, name: &str) -> anyhow::Result<()> {
    let tools = m.tools();
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    for want in ["echo", "get_sum", "trigger_long_running_operation"] {
        let n = format!("mcp_{name}_{want}");
        assert!(tools.get(&n).is_some(), "{n} missing from {names:?}");
    }
    let echo = tools.get(&format!("mcp_{name}_echo")).unwrap();
    assert_eq!((echo.server.as_str(), echo.tool.as_str()), (name, "echo"));
    assert!(names.iter().all(|n| n.len() <= 64 && n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')), "{names:?}");
    // get-sum's raw name has a dash; the sanitized one reaches it.
    assert_eq!(tools.get(&format!("mcp_{name}_get_sum")).unwrap().tool, "get-sum");

    // A plain call.
    let out = m.call_tool(&format!("mcp_{name}_echo"), args(json!({"message": "hello from switchboard"})), None).await?;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.text, "Echo: hello from switchboard");
    assert_eq!((out.server.as_str(), out.tool.as_str()), (name, "echo"));
    let sum = m.call_tool(&format!("mcp_{name}_get_sum"), args(json!({"a": 2, "b": 40})), None).await?;
    assert!(!sum.is_error && sum.text.contains("42"), "{sum:?}");

    // A tool error: invalid arguments come back as an isError result.
    let bad = m.call_tool(&format!("mcp_{name}_echo"), args(json!({"message": 7})), None).await?;
    assert!(bad.is_error, "{bad:?}");
    assert!(bad.text.starts_with("Error: "), "{}", bad.text);
    assert!(bad.text.contains("validation") || bad.text.contains("Invalid"), "{}", bad.text);
    eprintln!("{name}: invalid arguments -> {}", bad.text);
    // A tool the server does not have (raw call, bypassing the index).
    let missing = m.call_raw(name, "no-such-tool", None, None).await;
    eprintln!("{name}: unknown raw tool -> {missing:?}");
    match missing {
        Ok(o) => assert!(o.is_error && o.text.starts_with("Error: ") && o.text.contains("no-such-tool"), "{o:?}"),
        Err(e) => assert!(e.to_string().starts_with("MCP error: "), "{e}"),
    }

    // A long-running call, cancelled after 300 ms.
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        c2.cancel();
    });
    let t0 = Instant::now();
    let r = m
        .call_tool(&format!("mcp_{name}_trigger_long_running_operation"), args(json!({"duration": 30, "steps": 30})), Some(cancel))
        .await;
    assert_eq!(r.unwrap_err(), CallError::Aborted);
    assert!(t0.elapsed() < Duration::from_secs(5), "abort took {:?}", t0.elapsed());
    eprintln!("{name}: long-running call aborted after {:?}", t0.elapsed());
    // The session survives the cancellation.
    let again = m.call_tool(&format!("mcp_{name}_echo"), args(json!({"message": "still here"})), None).await?;
    assert_eq!(again.text, "Echo: still here");
    assert_eq!(m.status(name), Some(ServerStatus::Connected));
    Ok(())
}

#[tokio::test]
async fn server_everything_over_stdio() -> anyhow::Result<()> {
    let Some(js) = everything_js("server_everything_over_stdio") else { return Ok(()) };
    let m = Manager::new(opts());
    let r = m.start(vec![Wanted::new(ServerDef::stdio("everything", "node", &[js.to_str().unwrap(), "stdio"]))]).await;
    assert_eq!(r.connected, ["everything"], "{r:?}\nlogs: {:?}", m.logs("everything"));
    let st = m.state("everything").unwrap();
    assert_eq!(st.transport_used, Some("stdio"), "{st:?}");
    let pid = st.pid.expect("a stdio server reports its pid");
    assert!(pid_alive(pid));
    let group = group_members(pid);
    assert!(group.contains(&pid), "the server leads its own process group: {group:?}");

    exercise(&m, "everything").await?;

    m.shutdown().await;
    for p in group.iter().chain([&pid]) {
        assert!(wait_gone(*p).await, "process {p} of server-everything is still running after shutdown");
    }
    assert!(group_members(pid).is_empty(), "process group {pid} still has members");
    Ok(())
}

/// server-everything's streamable HTTP mode, on a free port (`PORT`).
struct HttpEverything {
    child: tokio::process::Child,
    url: String,
}

async fn spawn_http_everything(js: &Path) -> anyhow::Result<HttpEverything> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut child = tokio::process::Command::new("node")
        .arg(js)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = stderr.next_line().await? {
            if line.contains("listening on port") {
                return Ok(());
            }
            eprintln!("server-everything: {line}");
        }
        anyhow::bail!("server-everything (streamableHttp) exited before listening")
    })
    .await;
    match ready {
        Ok(r) => r?,
        Err(_) => anyhow::bail!("server-everything (streamableHttp) did not listen within 20 s"),
    }
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    Ok(HttpEverything { child, url: format!("http://127.0.0.1:{port}/mcp") })
}

#[tokio::test]
async fn server_everything_over_streamable_http() -> anyhow::Result<()> {
    let Some(js) = everything_js("server_everything_over_streamable_http") else { return Ok(()) };
    let mut srv = spawn_http_everything(&js).await?;
    let server_pid = srv.child.id().unwrap();
    let m = Manager::new(opts());
    let r = m.start(vec![Wanted::new(ServerDef::remote("everything_http", Transport::Http, &srv.url))]).await;
    assert_eq!(r.connected, ["everything_http"], "{r:?}\nlogs: {:?}", m.logs("everything_http"));
    let st = m.state("everything_http").unwrap();
    assert_eq!(st.transport_used, Some("streamable-http"), "{st:?}");
    assert_eq!(st.pid, None, "a remote server has no local process");
    assert!(st.protocol_version.is_some(), "{st:?}");

    exercise(&m, "everything_http").await?;

    m.shutdown().await;
    assert!(m.server_names().is_empty());
    // The server we started is ours to stop.
    srv.child.kill().await?;
    assert!(wait_gone(server_pid).await, "server-everything {server_pid} still running");
    Ok(())
}
