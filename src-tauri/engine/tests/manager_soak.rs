//! Soak (bounded): 100 `kill -9` crashes spread over 10 servers. Every crash
//! is followed by a restart after the policy's delay, nothing is left as a
//! zombie, and the manager's memory stays flat.

use std::time::{Duration, Instant};

use switchboard_engine::config::{RestartPolicy, ServerDef};
use switchboard_engine::events::ServerStatus;
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
use switchboard_tests::fixture_server_path;

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn zombies_of_me() -> Vec<u32> {
    let me = std::process::id();
    let mut out = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let f: Vec<&str> = stat
            .rsplit_once(") ")
            .map(|x| x.1)
            .unwrap_or("")
            .split_whitespace()
            .collect();
        if f.first() == Some(&"Z") && f.get(1).and_then(|x| x.parse::<u32>().ok()) == Some(me) {
            out.push(p);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_kill_dash_nine_crashes() -> anyhow::Result<()> {
    let policy = RestartPolicy {
        initial_delay_ms: 50,
        max_delay_ms: 200,
        backoff_multiplier: 2.0,
        max_restart_attempts: 5,
    };
    // Connected for any time at all counts as healthy here, so every crash
    // is a first attempt with the initial delay.
    let m = Manager::new(ManagerOptions {
        healthy_after: Duration::ZERO,
        grace: Duration::from_millis(200),
        ..ManagerOptions::default()
    });
    let bin = fixture_server_path();
    let names: Vec<String> = (0..10).map(|i| format!("soak{i}")).collect();
    let wanted = names
        .iter()
        .map(|n| {
            let mut d = ServerDef::stdio(n, bin.to_str().unwrap(), &["--name", n]);
            d.restart_policy = Some(policy);
            Wanted::new(d)
        })
        .collect();
    let r = m.start(wanted).await;
    assert_eq!(r.connected.len(), 10);
    let mut rss_after_warmup = 0;
    let mut min_gap = Duration::MAX;
    for i in 0..100 {
        if i == 20 {
            rss_after_warmup = rss_kib();
        }
        let name = &names[i % 10];
        let deadline = Instant::now() + Duration::from_secs(10);
        let pid = loop {
            if let Some(s) = m.state(name) {
                if s.status == ServerStatus::Connected {
                    if let Some(p) = s.pid {
                        break p;
                    }
                }
            }
            assert!(
                Instant::now() < deadline,
                "{name} did not come back (crash {i})"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let killed = Instant::now();
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
        // Wait for the new process and measure how long the restart waited.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(s) = m.state(name) {
                if s.status == ServerStatus::Connected && s.pid.is_some_and(|p| p != pid) {
                    break;
                }
            }
            assert!(
                Instant::now() < deadline,
                "{name} was not restarted after crash {i}"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        min_gap = min_gap.min(killed.elapsed());
    }
    assert!(
        min_gap >= Duration::from_millis(50),
        "a restart came sooner than initialDelayMs: {min_gap:?}"
    );
    let restarts: u32 = names.iter().map(|n| m.state(n).unwrap().restarts).sum();
    assert_eq!(restarts, 100, "every crash was one restart");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let z = zombies_of_me();
    assert!(z.is_empty(), "zombies left: {z:?}");
    let grown = rss_kib().saturating_sub(rss_after_warmup);
    assert!(
        grown < 16 * 1024,
        "memory grew by {grown} KiB over 80 crashes"
    );
    m.shutdown().await;
    assert!(zombies_of_me().is_empty());
    Ok(())
}
