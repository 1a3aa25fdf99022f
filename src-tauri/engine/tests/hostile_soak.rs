//! Soak with hostile neighbours (issue 11), not in CI's critical path:
//! `cargo test -p switchboard-engine --release --test hostile_soak -- --ignored --nocapture`
//! (`SOAK_SECS`, default 600). Twenty well-behaved servers run beside
//! hostile ones (stderr garbage and floods, list_changed storms, 10,000 tools
//! with 10 KB descriptions in pages of 100, hung tool calls, a fast
//! resource-update stream)
//! while a consumer drains the event stream as the UI would. Every second
//! each normal server answers a tool call. At the end: the process's RSS
//! stayed under 60 MB, no normal server restarted, every call answered.

use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_engine::config::ServerDef;
use switchboard_engine::events::EngineEvent;
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
use switchboard_tests::fixture_server_path;
use tokio::sync::broadcast::error::RecvError;

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn fixture(name: &str, args: &[&str]) -> Wanted {
    let bin = fixture_server_path();
    let mut def = ServerDef::stdio(name, bin.to_str().unwrap(), &["--name", name]);
    def.args.extend(args.iter().map(|s| s.to_string()));
    Wanted::new(def)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "soak: minutes long; run by hand with --ignored"]
async fn twenty_servers_beside_hostile_ones() -> anyhow::Result<()> {
    let secs: u64 = std::env::var("SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let m = Manager::new(ManagerOptions {
        call_timeout: Duration::from_secs(2),
        grace: Duration::from_millis(300),
        ..ManagerOptions::default()
    });
    let normal: Vec<String> = (0..20).map(|i| format!("normal{i}")).collect();
    let mut wanted: Vec<Wanted> = normal.iter().map(|n| fixture(n, &[])).collect();
    // SOAK_WITHOUT=huge,storm leaves hostile servers out (to see what each costs).
    let without = std::env::var("SOAK_WITHOUT").unwrap_or_default();
    // SOAK_HUGE_ARGS replaces the big server's flags (to see what its size costs).
    let huge_args = std::env::var("SOAK_HUGE_ARGS")
        .unwrap_or_else(|_| "--tools 10000 --description-bytes 10240 --page-size 100".into());
    let hostile = [
        ("garbage", vec!["--stderr-garbage"]),
        ("storm", vec!["--list-changed-burst", "500"]),
        ("huge", huge_args.split(' ').collect()),
        ("hung", vec!["--hang", "tools/call"]),
        ("ticker", vec!["--resources", "--notify-every-ms", "5"]),
    ];
    let on = |n: &str| !without.split(',').any(|w| w == n);
    for (name, args) in &hostile {
        if on(name) {
            wanted.push(fixture(name, args));
        }
    }
    let want = wanted.len();
    let r = m.start(wanted).await;
    assert_eq!(r.connected.len(), want, "{r:?}");
    if on("ticker") {
        m.subscribe_resource("ticker", "fixture://counter").await?;
    }

    // The UI: drains every event, as the app's forwarder does.
    let mut rx = m.subscribe();
    let consumer = tokio::spawn(async move {
        let (mut events, mut lagged) = (0u64, 0u64);
        loop {
            match rx.recv().await {
                Ok(EngineEvent::Log { lines, .. }) => events += lines.len().min(1) as u64,
                Ok(_) => events += 1,
                Err(RecvError::Lagged(n)) => lagged += n,
                Err(RecvError::Closed) => return (events, lagged),
            }
        }
    });

    let t0 = Instant::now();
    let (mut calls, mut max_rss) = (0u64, 0u64);
    let mut second = 0u64;
    while t0.elapsed() < Duration::from_secs(secs) {
        second += 1;
        if second.is_multiple_of(5) && on("storm") {
            m.call_raw("storm", "burst", None, None).await?;
        }
        // A hung call per round: each ends at the call timeout, never piles up.
        if on("hung") {
            let hung = m.clone();
            tokio::spawn(async move {
                hung.call_raw(
                    "hung",
                    "echo",
                    Some(json!({"text": "x"}).as_object().unwrap().clone()),
                    None,
                )
                .await
            });
        }
        for n in &normal {
            let out = m
                .call_raw(
                    n,
                    "echo",
                    Some(json!({"text": n}).as_object().unwrap().clone()),
                    None,
                )
                .await;
            assert_eq!(
                out.map(|o| o.text).map_err(|e| e.to_string()),
                Ok(n.clone()),
                "{n} answered at {}s",
                t0.elapsed().as_secs()
            );
            calls += 1;
        }
        max_rss = max_rss.max(rss_kib());
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let restarts: u32 = normal.iter().map(|n| m.state(n).unwrap().restarts).sum();
    let garbage_restarts = m.state("garbage").map(|s| s.restarts).unwrap_or(0);
    m.shutdown().await;
    drop(m);
    let (events, lagged) = tokio::time::timeout(Duration::from_secs(10), consumer)
        .await
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or_default();
    println!("soak: {secs} s, {calls} normal calls answered, peak RSS {} MiB, {events} events consumed ({lagged} lagged), normal restarts {restarts}, garbage-server restarts {garbage_restarts}", max_rss / 1024);
    assert_eq!(restarts, 0, "no normal server restarted");
    assert!(max_rss < 60 * 1024, "peak RSS {} KiB", max_rss);
    Ok(())
}
