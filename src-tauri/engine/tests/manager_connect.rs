//! The manager against real MCP servers (the rmcp fixture): parallel
//! connects, the startup gate and its cache, isolation of slow and broken
//! servers, names, calls, cancellation and teardown without orphans.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_engine::config::{ServerDef, Transport};
use switchboard_engine::events::ServerStatus;
use switchboard_engine::manager::{CallError, Manager, ManagerOptions, Wanted};
use switchboard_tests::{fixture_server_path, spawn_http_fixture};
use tokio_util::sync::CancellationToken;

fn opts(cache: Option<PathBuf>) -> ManagerOptions {
    ManagerOptions {
        cache_path: cache,
        gate: Duration::from_millis(250),
        default_timeout: Duration::from_secs(20),
        grace: Duration::from_millis(500),
        env: std::env::vars().collect(),
        home: std::env::temp_dir(),
        ..ManagerOptions::default()
    }
}

fn fixture(name: &str, args: &[&str]) -> Wanted {
    let bin = fixture_server_path();
    let mut def = ServerDef::stdio(name, bin.to_str().unwrap(), &["--name", name]);
    def.args.extend(args.iter().map(|s| s.to_string()));
    Wanted::new(def)
}

fn pid_alive(pid: u32) -> bool {
    // A zombie still has a /proc entry; count it as dead only when reaped.
    std::path::Path::new(&format!("/proc/{pid}")).exists()
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

#[tokio::test]
async fn servers_connect_in_parallel_and_failures_stay_isolated() -> anyhow::Result<()> {
    let m = Manager::new(opts(None));
    let mut hung = fixture("hung", &["--never-answer"]);
    hung.def.timeout = Some(1500);
    let t0 = Instant::now();
    let report = m
        .start(vec![
            fixture("alpha", &["--init-delay-ms", "600"]),
            fixture("beta", &["--init-delay-ms", "600"]),
            fixture("broken", &["--fail-start"]),
            hung,
            Wanted::new(ServerDef {
                enabled: false,
                ..ServerDef::stdio("off", "nothing", &[])
            }),
        ])
        .await;
    let elapsed = t0.elapsed();
    assert!(
        report.connected.contains(&"alpha".to_string())
            && report.connected.contains(&"beta".to_string()),
        "{report:?}"
    );
    // Two 600 ms servers in parallel take well under their 1.2 s sum.
    assert!(
        elapsed < Duration::from_millis(1150) || report.connected.len() == 2,
        "elapsed {elapsed:?}"
    );
    let broken = report
        .failed
        .iter()
        .find(|e| e.server == "broken")
        .expect("broken reported");
    assert!(!broken.error.is_empty());
    let hung = report
        .failed
        .iter()
        .find(|e| e.server == "hung")
        .expect("hung reported");
    assert!(hung.error.contains("timed out"), "{}", hung.error);
    assert_eq!(m.status("off"), Some(ServerStatus::Disabled));
    assert_eq!(m.status("alpha"), Some(ServerStatus::Connected));
    let tools = m.tools();
    assert!(tools.get("mcp_alpha_echo").is_some() && tools.get("mcp_beta_echo").is_some());
    assert!(tools
        .tools
        .iter()
        .all(|t| t.server != "broken" && t.server != "hung"));
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn the_gate_uses_cached_tools_and_deferred_calls_wait_for_the_server() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("tool-cache.json");
    let slow = || fixture("slow", &["--init-delay-ms", "1500"]);

    // First start: no cache entry, so the gate waits for the slow server.
    let m = Manager::new(opts(Some(cache.clone())));
    let r = m.start(vec![slow()]).await;
    assert_eq!(r.connected, ["slow"]);
    assert!(
        r.elapsed_ms >= 1400,
        "without a cache the gate waits ({} ms)",
        r.elapsed_ms
    );
    m.shutdown().await;
    let cached = std::fs::read_to_string(&cache)?;
    assert!(cached.contains("\"echo\""), "tools were cached");

    // Second start: the cache answers at the gate; the server is still connecting.
    let m = Manager::new(opts(Some(cache.clone())));
    let r = m.start(vec![slow()]).await;
    assert_eq!(r.deferred, ["slow"], "{r:?}");
    assert!(
        r.elapsed_ms < 1000,
        "gate with a warm cache took {} ms",
        r.elapsed_ms
    );
    let t = m.tools();
    let echo = t.get("mcp_slow_echo").expect("cached tool listed");
    assert!(echo.deferred);
    // A deferred call waits for the connection, then runs.
    let out = m
        .call_tool(
            "mcp_slow_echo",
            Some(json!({"text": "hi"}).as_object().unwrap().clone()),
            None,
        )
        .await?;
    assert_eq!(out.text, "hi");
    assert!(
        !m.tools().get("mcp_slow_echo").unwrap().deferred,
        "the live list replaced the cached one"
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_changed_config_does_not_use_a_stale_cache_entry() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("tool-cache.json");
    let m = Manager::new(opts(Some(cache.clone())));
    m.start(vec![fixture("s", &["--init-delay-ms", "800"])])
        .await;
    m.shutdown().await;
    let m = Manager::new(opts(Some(cache)));
    let r = m
        .start(vec![fixture(
            "s",
            &["--init-delay-ms", "800", "--tools", "3"],
        )])
        .await;
    assert!(
        r.deferred.is_empty(),
        "a different definition must not reuse the entry"
    );
    assert_eq!(r.connected, ["s"]);
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn calls_flatten_results_and_report_errors_with_the_spec_texts() -> anyhow::Result<()> {
    let m = Manager::new(opts(None));
    m.start(vec![fixture("calc", &[])]).await;
    let args = |v: serde_json::Value| v.as_object().cloned();
    let sum = m
        .call_tool("mcp_calc_add", args(json!({"a": 2, "b": 3})), None)
        .await?;
    assert_eq!(
        sum.structured_content
            .as_ref()
            .and_then(|s| s["sum"].as_f64()),
        Some(5.0),
        "{sum:?}"
    );
    assert!(!sum.is_error);
    assert_eq!((sum.server.as_str(), sum.tool.as_str()), ("calc", "add"));
    let fail = m.call_tool("mcp_calc_fail", None, None).await?;
    assert!(fail.is_error);
    assert_eq!(fail.text, "Error: deliberate failure");
    assert_eq!(
        m.call_tool("mcp_nope_x", None, None).await.unwrap_err(),
        CallError::UnknownTool("mcp_nope_x".into())
    );
    // A crash mid-call is an MCP error, never replayed.
    let crash = m.call_tool("mcp_calc_crash", None, None).await.unwrap_err();
    assert!(matches!(crash, CallError::Mcp(_)), "{crash:?}");
    assert!(crash.to_string().starts_with("MCP error: "));
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn cancelling_a_call_aborts_it_and_tells_the_server() -> anyhow::Result<()> {
    let m = Manager::new(opts(None));
    m.start(vec![fixture("slp", &[])]).await;
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
    });
    let r = m
        .call_tool(
            "mcp_slp_sleep",
            json!({"ms": 30000}).as_object().cloned(),
            Some(cancel),
        )
        .await;
    assert_eq!(r.unwrap_err(), CallError::Aborted);
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let stats = m.call_tool("mcp_slp_stats", None, None).await?;
        if stats
            .structured_content
            .as_ref()
            .and_then(|s| s["cancelled"].as_u64())
            == Some(1)
        {
            break;
        }
        assert!(
            Instant::now() < until,
            "the server never saw notifications/cancelled: {stats:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn colliding_names_stay_reachable_and_are_reported() -> anyhow::Result<()> {
    let m = Manager::new(opts(None));
    m.start(vec![fixture("my-server", &[]), fixture("my.server", &[])])
        .await;
    let t = m.tools();
    let echoes: Vec<_> = t.tools.iter().filter(|x| x.tool == "echo").collect();
    assert_eq!(echoes.len(), 2);
    assert_ne!(echoes[0].name, echoes[1].name, "both stay reachable");
    assert!(
        t.collisions.iter().any(|c| c.name == "mcp_my_server_echo"),
        "{:?}",
        t.collisions
    );
    for e in echoes {
        let out = m
            .call_tool(
                &e.name,
                json!({"text": e.server.clone()}).as_object().cloned(),
                None,
            )
            .await?;
        assert_eq!(out.server, e.server, "each name reaches its own server");
    }
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn ten_thousand_paged_tools_are_listed() -> anyhow::Result<()> {
    let m = Manager::new(opts(None));
    m.start(vec![fixture(
        "big",
        &["--tools", "10000", "--page-size", "500"],
    )])
    .await;
    let t = m.tools();
    assert!(t.tools.len() >= 10_000, "{}", t.tools.len());
    let mut names: Vec<&str> = t.tools.iter().map(|x| x.name.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), t.tools.len(), "every name unique");
    assert!(names.iter().all(|n| n.len() <= 64));
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn disconnect_kills_the_whole_process_group_and_removes_tools() -> anyhow::Result<()> {
    let m = Manager::new(opts(None));
    m.start(vec![fixture("grp", &[]), fixture("other", &[])])
        .await;
    let pid = m.state("grp").unwrap().pid.expect("stdio pid");
    let child: u32 = m
        .call_tool("mcp_grp_spawn_child", None, None)
        .await?
        .text
        .trim()
        .parse()?;
    assert!(pid_alive(pid) && pid_alive(child));
    assert!(m.disconnect("grp").await);
    assert!(wait_gone(pid).await, "server {pid} still running");
    assert!(wait_gone(child).await, "grandchild {child} orphaned");
    assert!(
        m.tools().tools.iter().all(|t| t.server != "grp"),
        "its tools are gone"
    );
    assert_eq!(
        m.status("other"),
        Some(ServerStatus::Connected),
        "the other server is untouched"
    );
    let other = m.state("other").unwrap().pid.unwrap();
    m.shutdown().await;
    assert!(wait_gone(other).await);
    Ok(())
}

#[tokio::test]
async fn stderr_is_captured_into_a_bounded_log() -> anyhow::Result<()> {
    let m = Manager::new(opts(None));
    let r = m
        .start(vec![fixture("noisy", &["--stderr-flood", "5000"])])
        .await;
    assert_eq!(
        r.connected,
        ["noisy"],
        "a flood of stderr does not block the handshake"
    );
    let logs = m.logs("noisy").unwrap();
    assert!(logs.len() <= 2000, "bounded: {}", logs.len());
    assert!(logs.iter().any(|l| l.kind == "stderr"));
    assert!(logs
        .iter()
        .any(|l| l.kind == "lifecycle" && l.text == "connected"));
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn streamable_http_servers_connect_and_answer() -> anyhow::Result<()> {
    let fx = spawn_http_fixture(&["--name", "web"]).await?;
    let m = Manager::new(opts(None));
    let r = m
        .start(vec![Wanted::new(ServerDef::remote(
            "web",
            Transport::Http,
            &fx.url,
        ))])
        .await;
    assert_eq!(r.connected, ["web"], "{r:?}");
    let out = m
        .call_tool(
            "mcp_web_echo",
            json!({"text": "over http"}).as_object().cloned(),
            None,
        )
        .await?;
    assert_eq!(out.text, "over http");
    assert_eq!(
        m.state("web").unwrap().transport_used,
        Some("streamable-http")
    );
    m.shutdown().await;
    fx.kill().await?;
    Ok(())
}

#[tokio::test]
async fn a_missing_command_fails_with_the_path_searched() -> anyhow::Result<()> {
    let m = Manager::new(opts(None));
    let r = m
        .start(vec![Wanted::new(ServerDef::stdio(
            "ghost",
            "definitely-not-a-command-xyz",
            &[],
        ))])
        .await;
    assert_eq!(r.failed[0].server, "ghost");
    assert!(
        r.failed[0].error.contains("definitely-not-a-command-xyz"),
        "{}",
        r.failed[0].error
    );
    Ok(())
}

#[tokio::test]
async fn sse_servers_fall_back_to_the_legacy_transport() -> anyhow::Result<()> {
    let fx = switchboard_tests::spawn_sse_fixture(&["--name", "old"]).await?;
    let m = Manager::new(opts(None));
    let r = m
        .start(vec![Wanted::new(ServerDef::remote(
            "old",
            Transport::Sse,
            &fx.url,
        ))])
        .await;
    assert_eq!(r.connected, ["old"], "{r:?}");
    assert_eq!(m.state("old").unwrap().transport_used, Some("sse"));
    let out = m
        .call_tool(
            "mcp_old_echo",
            json!({"text": "legacy"}).as_object().cloned(),
            None,
        )
        .await?;
    assert_eq!(out.text, "legacy");
    m.shutdown().await;
    fx.kill().await?;
    Ok(())
}

/// An http server nobody listens on fails with a message that says so, not
/// just "error sending request" (the cause is at the bottom of reqwest's chain).
#[tokio::test]
async fn a_dead_http_server_says_the_connection_was_refused() -> anyhow::Result<()> {
    // Port 1 (tcpmux): nothing listens there. A port freed just before
    // could be taken by another test's server meanwhile (seen: a 403).
    let port = 1;
    let mut def = ServerDef::remote(
        "nowhere",
        Transport::Http,
        &format!("http://127.0.0.1:{port}/mcp"),
    );
    def.restart_policy = Some(switchboard_engine::config::RestartPolicy {
        max_restart_attempts: 0,
        ..Default::default()
    });
    let m = Manager::new(opts(None));
    m.start(vec![Wanted::new(def)]).await;
    m.settle().await;
    match m.status("nowhere") {
        Some(ServerStatus::Failed { error }) => {
            assert!(error.to_lowercase().contains("refused"), "{error}");
            assert!(!error.contains("rmcp::"), "no Rust type names: {error}");
        }
        other => panic!("expected failed, got {other:?}"),
    }
    m.shutdown().await;
    Ok(())
}
