//! Hostile servers (issue 11): nothing a server sends can hang, flood or
//! trick the manager. Each test runs the fixture server in one hostile mode
//! beside a well-behaved one and checks what a user would notice: the
//! hostile server's logs keep coming, requests end with an error naming the
//! server, the other server is untouched, and memory and events stay bounded.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_engine::config::ServerDef;
use switchboard_engine::events::{EngineEvent, ServerStatus};
use switchboard_engine::manager::{CallError, Manager, ManagerOptions, Wanted};
use switchboard_tests::{fixture_server_path, spawn_sse_fixture};
use tokio::sync::broadcast::error::TryRecvError;

fn opts() -> ManagerOptions {
    ManagerOptions {
        cache_path: None,
        default_timeout: Duration::from_secs(20),
        grace: Duration::from_millis(300),
        env: std::env::vars().collect(),
        home: std::env::temp_dir(),
        ..ManagerOptions::default()
    }
}

fn fixture(name: &str, args: &[&str]) -> Wanted {
    let bin: PathBuf = fixture_server_path();
    let mut def = ServerDef::stdio(name, bin.to_str().unwrap(), &["--name", name]);
    def.args.extend(args.iter().map(|s| s.to_string()));
    Wanted::new(def)
}

/// Poll `f` until it is true or `limit` passes.
async fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    f()
}

fn log_text(m: &Manager, server: &str) -> Vec<String> {
    m.logs(server)
        .unwrap_or_default()
        .into_iter()
        .map(|l| l.text)
        .collect()
}

fn alive_count(lines: &[String]) -> usize {
    lines.iter().filter(|l| l.starts_with("alive ")).count()
}

#[tokio::test]
async fn garbage_on_stderr_never_stops_the_log_or_the_server() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    let r = m
        .start(vec![
            fixture("noisy", &["--stderr-garbage"]),
            fixture("calm", &[]),
        ])
        .await;
    assert_eq!(r.connected.len(), 2, "{r:?}");
    // Lines keep arriving after the invalid UTF-8 and the 1 MiB line: the
    // reader did not stop (with a stopped reader the server dies of SIGPIPE).
    let before = alive_count(&log_text(&m, "noisy"));
    assert!(
        eventually(Duration::from_secs(10), || alive_count(&log_text(
            &m, "noisy"
        )) >= before + 10)
        .await,
        "no new stderr lines after the garbage: {:?}",
        log_text(&m, "noisy")
            .iter()
            .map(|l| l.chars().take(60).collect::<String>())
            .collect::<Vec<_>>()
    );
    let lines = log_text(&m, "noisy");
    assert!(
        lines.iter().any(|l| l.contains('\u{fffd}')),
        "invalid UTF-8 is shown as replacement characters"
    );
    let cut = lines
        .iter()
        .find(|l| l.contains("[line cut:"))
        .expect("the 1 MiB line is cut and marked");
    assert!(
        cut.len() < 9 * 1024,
        "a cut line holds at most 8 KiB, got {}",
        cut.len()
    );
    let st = m.state("noisy").unwrap();
    assert_eq!(st.status, ServerStatus::Connected);
    assert_eq!(st.restarts, 0, "the noisy server never restarted");
    assert_eq!(
        m.call_tool(
            "mcp_calm_echo",
            Some(json!({"text": "hi"}).as_object().unwrap().clone()),
            None
        )
        .await?
        .text,
        "hi"
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_stderr_flood_reaches_the_ui_in_few_batched_events() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    let mut rx = m.subscribe();
    let r = m
        .start(vec![fixture("flood", &["--stderr-flood", "5000"])])
        .await;
    assert_eq!(r.connected, ["flood"], "{r:?}");
    let (mut lines, mut events, mut last_seen) = (0usize, 0usize, false);
    let until = Instant::now() + Duration::from_secs(10);
    while !last_seen && Instant::now() < until {
        match rx.try_recv() {
            Ok(EngineEvent::Log { server, lines: l }) if server == "flood" => {
                lines += l.iter().filter(|x| x.kind == "stderr").count();
                last_seen |= l.iter().any(|x| x.text.contains("flood line 4999 of 5000"));
                events += 1;
            }
            Ok(_) => {}
            Err(TryRecvError::Empty) => tokio::time::sleep(Duration::from_millis(10)).await,
            Err(e) => panic!("event stream: {e}"),
        }
    }
    assert!(last_seen, "the newest stderr line reached the event stream");
    // The log keeps its newest 2,000 lines; a batch never carries more.
    assert!(
        (2000..=5000).contains(&lines),
        "{lines} stderr lines published"
    );
    assert!(
        events <= 500,
        "{lines} lines came as {events} events: they should be batched"
    );
    assert!(
        m.logs("flood")
            .unwrap()
            .iter()
            .any(|l| l.text.contains("flood line 4999 of 5000")),
        "the log holds the newest line"
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_hung_request_of_every_kind_ends_with_an_error_naming_the_server() -> anyhow::Result<()> {
    let mut o = opts();
    o.call_timeout = Duration::from_millis(800);
    let m = Manager::new(o);
    let mut hung = fixture(
        "stuck",
        &[
            "--resources",
            "--hang",
            "resources/list",
            "--hang",
            "resources/read",
            "--hang",
            "prompts/list",
            "--hang",
            "prompts/get",
            "--hang",
            "resources/subscribe",
            "--hang",
            "tools/call",
        ],
    );
    hung.def.timeout = Some(800);
    let r = m.start(vec![hung, fixture("calm", &["--resources"])]).await;
    assert_eq!(r.connected.len(), 2, "{r:?}");
    let t0 = Instant::now();
    let (a, b, c, d, e, f, calm) = tokio::join!(
        m.list_resources("stuck"),
        m.read_resource("stuck", "fixture://greeting"),
        m.list_prompts("stuck"),
        m.get_prompt("stuck", "greet", None),
        m.subscribe_resource("stuck", "fixture://counter"),
        m.call_tool(
            "mcp_stuck_echo",
            Some(json!({"text": "x"}).as_object().unwrap().clone()),
            None
        ),
        m.list_resources("calm"),
    );
    for (what, r) in [
        ("resources/list", a.map(|_| ())),
        ("resources/read", b.map(|_| ())),
        ("prompts/list", c.map(|_| ())),
        ("prompts/get", d.map(|_| ())),
        ("resources/subscribe", e),
    ] {
        let err = r.expect_err(what).to_string();
        assert!(
            err.contains("\"stuck\"") && err.contains(what) && err.contains("did not answer"),
            "{what}: {err}"
        );
    }
    match f {
        Err(CallError::Mcp(e)) => {
            assert!(e.contains("\"stuck\"") && e.contains("tools/call"), "{e}")
        }
        other => panic!("a hung tool call must end with an error, got {other:?}"),
    }
    assert!(calm.is_ok(), "the other server answers meanwhile: {calm:?}");
    assert!(
        t0.elapsed() < Duration::from_secs(15),
        "every hung request ended"
    );
    // Shutdown is not held up by the server that never answers.
    tokio::time::timeout(Duration::from_secs(15), m.shutdown())
        .await
        .expect("shutdown finished");
    Ok(())
}

#[tokio::test]
async fn a_repeating_cursor_ends_the_list_with_a_warning() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    let r = m
        .start(vec![fixture(
            "loop",
            &[
                "--tools",
                "6",
                "--page-size",
                "2",
                "--repeat-cursor",
                "--resources",
            ],
        )])
        .await;
    assert_eq!(r.connected, ["loop"], "{r:?}");
    let st = m.state("loop").unwrap();
    assert!(st.tool_count > 0, "the pages before the repeat are kept");
    assert!(
        st.warnings
            .iter()
            .any(|w| w.contains("tools/list") && w.contains("twice")),
        "{:?}",
        st.warnings
    );
    let res = tokio::time::timeout(Duration::from_secs(10), m.list_resources("loop"))
        .await
        .expect("resources/list ends");
    assert!(res.is_ok(), "{res:?}");
    let prompts = tokio::time::timeout(Duration::from_secs(10), m.list_prompts("loop"))
        .await
        .expect("prompts/list ends");
    assert!(prompts.is_ok(), "{prompts:?}");
    m.shutdown().await;
    Ok(())
}

fn stats(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("stats is JSON ({e}): {text}"))
}

#[tokio::test]
async fn a_burst_of_list_changed_makes_a_handful_of_relists() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    let mut rx = m.subscribe();
    let r = m
        .start(vec![fixture("bursty", &["--list-changed-burst", "500"])])
        .await;
    assert_eq!(r.connected, ["bursty"], "{r:?}");
    let before = stats(&m.call_tool("mcp_bursty_stats", None, None).await?.text)
        ["toolsListRequests"]
        .as_u64()
        .unwrap();
    m.call_tool("mcp_bursty_burst", None, None).await?;
    // The burst is over when a re-list has happened and no more follow.
    let mut tools_events = 0;
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        match rx.try_recv() {
            Ok(EngineEvent::Tools { server, .. }) if server == "bursty" => tools_events += 1,
            Ok(_) => {}
            Err(TryRecvError::Empty) => tokio::time::sleep(Duration::from_millis(20)).await,
            Err(TryRecvError::Lagged(_)) => {}
            Err(e) => panic!("{e}"),
        }
    }
    let after = stats(&m.call_tool("mcp_bursty_stats", None, None).await?.text)
        ["toolsListRequests"]
        .as_u64()
        .unwrap();
    assert!(after > before, "the burst caused a re-list");
    // One re-list in flight, at most one pending, at most two a second: a
    // burst of 500 costs a handful, not 500.
    assert!(
        after - before <= 5,
        "500 list_changed made {} re-lists",
        after - before
    );
    assert!(
        tools_events <= 5,
        "{tools_events} tool events for one burst"
    );
    assert_eq!(m.state("bursty").unwrap().status, ServerStatus::Connected);
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn ten_thousand_tools_with_long_descriptions_connect() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    let r = m
        .start(vec![fixture(
            "big",
            &[
                "--tools",
                "10000",
                "--description-bytes",
                "10240",
                "--page-size",
                "500",
            ],
        )])
        .await;
    assert_eq!(r.connected, ["big"], "{r:?}");
    let st = m.state("big").unwrap();
    assert!(st.tool_count >= 10_000);
    // 100 MB of descriptions are not kept: each is cut, and the server's
    // whole list stays within a few MiB.
    let kept: usize = m
        .tools()
        .tools
        .iter()
        .filter(|t| t.server == "big")
        .map(|t| t.description.as_ref().map_or(0, |d| d.len()))
        .sum();
    assert!(kept < 6 * 1024 * 1024, "{kept} bytes of descriptions kept");
    assert!(m.tools().tools.iter().any(|t| t
        .description
        .as_ref()
        .is_some_and(|d| d.contains("[cut by Switchboard:"))));
    assert!(
        st.warnings
            .iter()
            .any(|w| w.contains("descriptions were longer than Switchboard keeps")),
        "{:?}",
        st.warnings
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_relist_that_hangs_keeps_the_old_tools_and_never_blocks_a_stop() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    let mut w = fixture("relist", &["--hang", "tools/list", "--hang-after-first"]);
    w.def.timeout = Some(600);
    let r = m.start(vec![w]).await;
    assert_eq!(r.connected, ["relist"], "{r:?}");
    let count = m.state("relist").unwrap().tool_count;
    m.call_tool("mcp_relist_change_tools", None, None).await?;
    assert!(
        eventually(Duration::from_secs(10), || log_text(&m, "relist")
            .iter()
            .any(|l| l.contains("re-listing tools") && l.contains("timed out")))
        .await,
        "{:?}",
        log_text(&m, "relist")
    );
    assert_eq!(
        m.state("relist").unwrap().tool_count,
        count,
        "the previous list stays"
    );
    assert_eq!(m.state("relist").unwrap().status, ServerStatus::Connected);
    m.call_tool("mcp_relist_change_tools", None, None).await?;
    let t0 = Instant::now();
    m.stop("relist").await?;
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "a pending re-list delayed the stop by {:?}",
        t0.elapsed()
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn an_oversized_sse_event_is_refused_with_an_error_naming_the_cause() -> anyhow::Result<()> {
    let fx = spawn_sse_fixture(&["--sse-huge-event", &(17 * 1024 * 1024).to_string()]).await?;
    let m = Manager::new(opts());
    let mut def = ServerDef::remote("huge", switchboard_engine::config::Transport::Sse, &fx.url);
    def.restart_policy = Some(switchboard_engine::config::RestartPolicy {
        max_restart_attempts: 0,
        ..Default::default()
    });
    m.start(vec![Wanted::new(def)]).await;
    m.settle().await;
    let st = m.state("huge").unwrap();
    let error = match &st.status {
        ServerStatus::Failed { error } => error.clone(),
        other => panic!("expected failed, got {other:?} ({:?})", st.last_error),
    };
    assert!(error.contains("SSE event larger than"), "{error}");
    m.shutdown().await;
    fx.kill().await?;
    Ok(())
}
