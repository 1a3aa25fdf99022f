//! Config watching timings:
//! `cargo bench -p switchboard-engine --bench watch`.
//!
//! Needs the `fixture-server` binary (`cargo build -p switchboard-tests --bin
//! fixture-server`). Real files in a temp home, two fixture servers `a` and `b`
//! in Switchboard's own file, `watch::Live` on top of a `Manager`.
//!
//! 1. External atomic save → `SourceChanged` (what the UI sees first) and →
//!    `Reconciled`, median of 20, debounce included, for a save that changes
//!    no server (pure pipeline: debounce + settle + hash + discovery +
//!    reconcile) and one that changes `b` (the reconcile also restarts `b`
//!    and waits for its handshake). Goal: < 150 ms.
//! 2. A burst of 100 atomic saves as fast as possible: time from the first
//!    save to the single `Reconciled`, and from the last save. Goal: exactly
//!    one reconcile.
//!
//! A plain binary printing markdown tables; medians because the machine is noisy.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_engine::discovery::discover;
use switchboard_engine::events::EngineEvent;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
use switchboard_engine::settings::Settings;
use switchboard_engine::watch::{settings_from_disk, Live, WatchOptions};
use tokio::sync::broadcast;

const REPS: usize = 20;
const BURST: usize = 100;
const BURST_REPS: usize = 3;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(v: &[Duration]) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s[s.len() / 2]
}

fn config(b_tools: usize, note: usize) -> String {
    let fx = switchboard_tests::fixture_server_path()
        .to_string_lossy()
        .to_string();
    let mut b_args = vec!["--name".to_string(), "b".to_string()];
    if b_tools > 0 {
        b_args.extend(["--tools".to_string(), b_tools.to_string()]);
    }
    let v: Value = json!({
        "mcpServers": {
            "a": { "command": fx, "args": ["--name", "a"] },
            "b": { "command": fx, "args": b_args },
        },
        // Changes the bytes without changing any server.
        "note": note,
    });
    serde_json::to_string_pretty(&v).unwrap()
}

fn save_atomic(path: &Path, text: &str) {
    let tmp = path.with_file_name(".servers.json.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

async fn wait_for(
    rx: &mut broadcast::Receiver<EngineEvent>,
    f: impl Fn(&EngineEvent) -> bool,
) -> Instant {
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("timed out")
            .expect("closed");
        if f(&ev) {
            return Instant::now();
        }
    }
}

fn is_reconciled(e: &EngineEvent) -> bool {
    matches!(e, EngineEvent::Reconciled { .. })
}

fn is_source_changed(e: &EngineEvent) -> bool {
    matches!(e, EngineEvent::SourceChanged { .. })
}

struct Setup {
    _dir: tempfile::TempDir,
    file: PathBuf,
    m: Manager,
    live: Live,
}

async fn setup(opts: WatchOptions) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let file = home.join(".config/switchboard/servers.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, config(0, 0)).unwrap();
    let mut vars = HashMap::new();
    vars.insert("HOME".to_string(), home.to_string_lossy().to_string());
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars,
        system_root: dir.path().join("system"),
    };
    let d = discover(&host, &Settings::load(&host).0, &opts.discover);
    let m = Manager::new(ManagerOptions {
        grace: Duration::from_millis(300),
        home,
        ..ManagerOptions::default()
    });
    m.start(Wanted::from_discovery(&d)).await;
    m.settle().await;
    let live = Live::start(host.clone(), settings_from_disk(&host), m.clone(), d, opts)
        .await
        .unwrap();
    Setup {
        _dir: dir,
        file,
        m,
        live,
    }
}

struct Row {
    what: String,
    first: Duration,
    reconciled: Duration,
}

async fn latency(opts: WatchOptions, label: &str) -> Vec<Row> {
    let s = setup(opts).await;
    let mut rx = s.m.subscribe();
    let mut wrx = s.live.subscribe();
    let mut rows = vec![];
    for restart in [false, true] {
        let (mut first, mut rec) = (vec![], vec![]);
        let mut b_tools = 0;
        for i in 1..=REPS {
            tokio::time::sleep(Duration::from_millis(150)).await;
            if restart {
                b_tools = i;
            }
            let text = config(b_tools, i + if restart { 1000 } else { 0 });
            let t0 = Instant::now();
            save_atomic(&s.file, &text);
            let t1 = wait_for(&mut wrx, is_source_changed).await;
            let t2 = wait_for(&mut rx, is_reconciled).await;
            first.push(t1 - t0);
            rec.push(t2 - t0);
        }
        rows.push(Row {
            what: format!(
                "{label}, {}",
                if restart {
                    "restarts `b`"
                } else {
                    "no server changed"
                }
            ),
            first: median(&first),
            reconciled: median(&rec),
        });
    }
    s.live.stop().await;
    s.m.shutdown().await;
    rows
}

async fn burst(opts: WatchOptions) -> (Duration, Duration, u64) {
    let s = setup(opts).await;
    let mut rx = s.m.subscribe();
    let (mut from_first, mut from_last) = (vec![], vec![]);
    let mut extra = 0;
    for rep in 0..BURST_REPS {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = s.live.stats().reconciles;
        let t0 = Instant::now();
        for i in 1..=BURST {
            save_atomic(&s.file, &config((rep % 2) * 3, rep * 1000 + i));
        }
        let t_last = Instant::now();
        let t2 = wait_for(&mut rx, is_reconciled).await;
        from_first.push(t2 - t0);
        from_last.push(t2 - t_last);
        tokio::time::sleep(Duration::from_millis(1000)).await;
        extra += s.live.stats().reconciles - before - 1;
    }
    s.live.stop().await;
    s.m.shutdown().await;
    (median(&from_first), median(&from_last), extra)
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let default = WatchOptions::default();
        let fast = WatchOptions { debounce: Duration::from_millis(20), settle: Duration::from_millis(30), ..WatchOptions::default() };
        let dl = format!("debounce {} ms + settle {} ms", default.debounce.as_millis(), default.settle.as_millis());
        let fl = format!("debounce {} ms + settle {} ms", fast.debounce.as_millis(), fast.settle.as_millis());

        let mut rows = latency(default.clone(), &dl).await;
        rows.extend(latency(fast.clone(), &fl).await);
        println!("### External atomic save → events (median of {REPS})\n");
        println!("| setting | → SourceChanged (ms) | → Reconciled (ms) | goal |");
        println!("|---|---:|---:|---|");
        for r in &rows {
            let ok = if r.reconciled < Duration::from_millis(150) { "< 150 ms ✓" } else { "< 150 ms ✗" };
            println!("| {} | {:.1} | {:.1} | {ok} |", r.what, ms(r.first), ms(r.reconciled));
        }
        if let Some(r) = rows.first() {
            switchboard_tests::bench::record(
                "Engine",
                "External save of a config file → servers reconciled",
                ms(r.reconciled),
                None,
                "ms",
                switchboard_tests::bench::Goal::Max(150.0),
                &format!("{}; median of {REPS}", r.what),
            );
        }

        println!("\n### Burst of {BURST} atomic saves (median of {BURST_REPS})\n");
        println!("| setting | first save → Reconciled (ms) | last save → Reconciled (ms) | extra reconciles |");
        println!("|---|---:|---:|---:|");
        for (label, o) in [(dl, default), (fl, fast)] {
            let (a, b, extra) = burst(o).await;
            println!("| {label} | {:.1} | {:.1} | {extra} |", ms(a), ms(b));
        }
    });
}
