//! Manager timings against the rmcp fixture server:
//! `cargo bench -p switchboard-engine --bench manager`.
//!
//! Needs the `fixture-server` binary (`switchboard_tests::fixture_server_path()`);
//! build it first, ideally in release so both sides of every ratio use the
//! same optimized server: `cargo build --release -p switchboard-tests --bin fixture-server`.
//!
//! 1. 20 and 100 servers (`--init-delay-ms 50`) through one `Manager::start`
//!    vs the slowest server started alone, and vs as many bare rmcp clients
//!    started with `join_all` (the floor: no manager, no config work), and
//!    for 20 vs 20 separate `start` calls one after another. Goals:
//!    parallel / slowest-single <= 1.3 with 20 servers, <= 1.6 with 100.
//!    Also how long `shutdown` then takes to stop them all (no goal).
//! 2. Time to tools with one hung server (`--never-answer`, timeout 5000 ms)
//!    whose tools are in a warm tool cache. Goal: `start` returns <= 300 ms
//!    with the hung server's tools deferred.
//! 3. 2,000 `echo` calls through `Manager::call_tool` vs a bare rmcp client
//!    on the same fixture. Goal: per-call median ratio <= 1.1.
//! 4. `naming::assign_names` over 10,000 tools from 20 servers (median of 50).
//!
//! `BENCH_ONLY=start` (or `hung`, `calls`, `naming`) runs that section alone.
//!
//! No criterion: a plain binary that prints markdown tables; every ratio is
//! taken within one run because the machine is noisy, and every number is a
//! median over repetitions.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};
use switchboard_engine::config::ServerDef;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
use switchboard_engine::naming::{assign_names, ToolRef};
use switchboard_tests::bench::{record, Goal};

const PARALLEL_REPS: usize = 11;
const START_REPS: usize = 5;
const HUNG_REPS: usize = 7;
const CALLS: usize = 2_000;
const CALL_ROUNDS: usize = 4;
const NAMING_TOOLS: usize = 10_000;
const NAMING_SERVERS: usize = 20;
const NAMING_RUNS: usize = 50;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn median(v: &[Duration]) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s[s.len() / 2]
}

fn pct(v: &[Duration], p: f64) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s[(((s.len() - 1) as f64) * p).round() as usize]
}

/// Records the median and p90 of `times`, in ms, as one row of the bench table.
fn record_ms(figure: &str, times: &[Duration], goal: Goal, note: &str) {
    record(
        "Engine",
        figure,
        ms(median(times)),
        Some(ms(pct(times, 0.9))),
        "ms",
        goal,
        note,
    );
}

/// Options as the app builds them (so fields added later keep their
/// defaults), with a scratch home and the cache where we want it.
fn opts(home: &Path, cache: Option<PathBuf>) -> ManagerOptions {
    let host = Host {
        os: Os::Linux,
        home: home.to_path_buf(),
        vars: std::env::vars().collect::<HashMap<_, _>>(),
        system_root: PathBuf::from("/"),
    };
    ManagerOptions {
        cache_path: cache,
        gate: Duration::from_millis(250),
        default_timeout: Duration::from_secs(20),
        grace: Duration::from_millis(500),
        ..ManagerOptions::for_host(&host)
    }
}

fn fixture(bin: &Path, name: &str, args: &[&str]) -> Wanted {
    let mut def = ServerDef::stdio(name, bin.to_str().unwrap(), &["--name", name]);
    def.args.extend(args.iter().map(|s| s.to_string()));
    Wanted::new(def)
}

fn echo_args(text: &str) -> Map<String, Value> {
    json!({ "text": text }).as_object().unwrap().clone()
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run());
}

async fn run() {
    let bin = switchboard_tests::fixture_server_path();
    let scratch = tempfile::tempdir().unwrap();
    let home = scratch.path().to_path_buf();
    println!("fixture-server: {}\n", bin.display());

    // Warm-up: the first launch in a process asks the login shell for PATH.
    {
        let m = Manager::new(opts(&home, None));
        let r = m.start(vec![fixture(&bin, "warmup", &[])]).await;
        assert_eq!(r.connected, ["warmup"], "{r:?}");
        m.shutdown().await;
    }

    // `BENCH_ONLY=start` (or `hung`, `calls`, `naming`): that section alone.
    let only = std::env::var("BENCH_ONLY").ok();
    let run = |section: &str| only.as_deref().is_none_or(|o| o == section);
    if run("start") {
        parallel_start(&bin, &home, 20, 1.3, true).await;
        parallel_start(&bin, &home, 100, 1.6, false).await;
    }
    if run("hung") {
        hung_with_cache(&bin, &home).await;
    }
    if run("calls") {
        call_overhead(&bin, &home).await;
    }
    if run("naming") {
        naming();
    }
}

// ---------------------------------------------------------------------------
// 1. Parallel connects
// ---------------------------------------------------------------------------

/// `n` fixture servers (`--init-delay-ms 50`) for repetition `rep`.
fn slow_servers(bin: &Path, n: usize, rep: usize) -> Vec<Wanted> {
    (0..n)
        .map(|i| fixture(bin, &format!("p{rep}-s{i}"), &["--init-delay-ms", "50"]))
        .collect()
}

/// The floor: `n` bare rmcp clients (`TokioChildProcess`, no manager, no
/// config work) started with `join_all`, each through `initialize` and
/// `tools/list` like a managed server. Returns the time until all listed.
async fn raw_parallel(bin: &Path, n: usize) -> Duration {
    let t = Instant::now();
    let clients = futures::future::join_all((0..n).map(|i| async move {
        let mut cmd = tokio::process::Command::new(bin);
        cmd.args(["--name", &format!("raw{i}"), "--init-delay-ms", "50"]);
        let client =
            ().serve(TokioChildProcess::new(cmd).expect("spawn fixture"))
                .await
                .expect("raw client connects");
        let tools = client.list_all_tools().await.expect("raw tools/list");
        assert_eq!(tools.len(), switchboard_tests::FIXED_TOOLS.len());
        client
    }))
    .await;
    let elapsed = t.elapsed();
    futures::future::join_all(clients.into_iter().map(|c| c.cancel())).await;
    elapsed
}

/// One `Manager::start` with `n` servers; the time until it returned, and
/// the time its `shutdown` took to stop them all.
async fn managed_parallel(bin: &Path, home: &Path, n: usize, rep: usize) -> (Duration, Duration) {
    let m = Manager::new(opts(home, None));
    let t = Instant::now();
    let r = m.start(slow_servers(bin, n, rep)).await;
    let elapsed = t.elapsed();
    assert_eq!(r.connected.len(), n, "{r:?}");
    assert_eq!(
        m.tools().tools.len(),
        n * switchboard_tests::FIXED_TOOLS.len()
    );
    let t = Instant::now();
    m.shutdown().await;
    (elapsed, t.elapsed())
}

/// Each of `n` servers alone, in a fresh manager; the slowest and the median.
async fn singles(bin: &Path, home: &Path, n: usize, rep: usize) -> (Duration, Duration) {
    let mut times = vec![];
    for w in slow_servers(bin, n, rep) {
        let m = Manager::new(opts(home, None));
        let t = Instant::now();
        let r = m.start(vec![w]).await;
        times.push(t.elapsed());
        assert_eq!(r.connected.len(), 1, "{r:?}");
        m.shutdown().await;
    }
    (*times.iter().max().unwrap(), median(&times))
}

async fn parallel_start(bin: &Path, home: &Path, n: usize, goal: f64, sequential: bool) {
    let (mut par, mut raw, mut stop) = (vec![], vec![], vec![]);
    // Alternating which goes first, so drift hits both alike.
    for rep in 0..PARALLEL_REPS {
        if rep % 2 == 0 {
            let (p, s) = managed_parallel(bin, home, n, rep).await;
            par.push(p);
            stop.push(s);
            raw.push(raw_parallel(bin, n).await);
        } else {
            raw.push(raw_parallel(bin, n).await);
            let (p, s) = managed_parallel(bin, home, n, rep).await;
            par.push(p);
            stop.push(s);
        }
    }
    let (mut seq, mut slowest, mut single_median) = (vec![], vec![], vec![]);
    for rep in 0..START_REPS {
        if sequential {
            // One start call per server, on one manager.
            let m = Manager::new(opts(home, None));
            let t = Instant::now();
            for w in slow_servers(bin, n, rep) {
                let r = m.start(vec![w]).await;
                assert_eq!(r.connected.len(), 1, "{r:?}");
            }
            seq.push(t.elapsed());
            m.shutdown().await;
        }
        let (max, med) = singles(bin, home, n, rep).await;
        slowest.push(max);
        single_median.push(med);
    }
    let (p, r, w, one) = (
        median(&par),
        median(&raw),
        median(&slowest),
        median(&single_median),
    );
    println!("## Startup: {n} fixture servers, --init-delay-ms 50 ({PARALLEL_REPS} reps parallel, {START_REPS} reps single)\n");
    println!("| mode | median ms | p90 ms | min ms | max ms |");
    println!("|---|---:|---:|---:|---:|");
    let row = |label: &str, v: &[Duration]| {
        let mut s = v.to_vec();
        s.sort();
        println!(
            "| {label} | {:.1} | {:.1} | {:.1} | {:.1} |",
            ms(median(v)),
            ms(pct(v, 0.9)),
            ms(s[0]),
            ms(s[s.len() - 1])
        );
    };
    row(&format!("parallel (one `start` with {n})"), &par);
    row(
        &format!("raw rmcp: {n} `TokioChildProcess` clients, `join_all`, initialize + tools/list"),
        &raw,
    );
    row("stop them all (`shutdown` after the parallel start)", &stop);
    if sequential {
        row(&format!("sequential ({n} `start` calls)"), &seq);
    }
    row(
        &format!("slowest single server alone (max of {n} fresh managers)"),
        &slowest,
    );
    row(
        &format!("typical single server alone (median of {n})"),
        &single_median,
    );
    println!();
    println!("| ratio | median | p90 | goal |");
    println!("|---|---:|---:|---|");
    println!(
        "| parallel / slowest single | {:.2} | {:.2} | <= {goal} |",
        ms(p) / ms(w),
        ms(pct(&par, 0.9)) / ms(w)
    );
    println!(
        "| raw rmcp / slowest single | {:.2} | {:.2} | (the floor) |",
        ms(r) / ms(w),
        ms(pct(&raw, 0.9)) / ms(w)
    );
    println!(
        "| parallel / raw rmcp | {:.2} | {:.2} | |",
        ms(p) / ms(r),
        ms(pct(&par, 0.9)) / ms(pct(&raw, 0.9))
    );
    println!("| parallel / typical single | {:.2} | | |", ms(p) / ms(one));
    record(
        "Engine",
        &format!("Start {n} servers in parallel / slowest single start"),
        ms(p) / ms(w),
        Some(ms(pct(&par, 0.9)) / ms(w)),
        "×",
        Goal::Max(goal),
        &format!(
            "{:.0} ms vs {:.0} ms; bare rmcp clients: {:.2}× (the machine's floor)",
            ms(p),
            ms(w),
            ms(r) / ms(w)
        ),
    );
    record(
        "Engine",
        &format!("Start {n} servers: Switchboard / bare rmcp clients"),
        ms(p) / ms(r),
        Some(ms(pct(&par, 0.9)) / ms(pct(&raw, 0.9))),
        "×",
        Goal::None,
        "same run, alternating",
    );
    record_ms(
        &format!("Stop {n} servers (`Manager::shutdown`)"),
        &stop,
        Goal::None,
        "servers that exit when their input closes",
    );
    if sequential {
        println!(
            "| sequential / parallel | {:.1}x | | |",
            ms(median(&seq)) / ms(p)
        );
    }
    println!();
}

// ---------------------------------------------------------------------------
// 2. A hung server with a warm tool cache
// ---------------------------------------------------------------------------

async fn hung_with_cache(bin: &Path, home: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("tool-cache.json");
    let marker = dir.path().join("hang-now");
    // The definition never changes (so its cache key does not); the wrapper
    // decides at launch whether the fixture answers.
    let script = dir.path().join("maybe-hang.sh");
    std::fs::write(&script, "#!/bin/sh\nif [ -e \"$1\" ]; then exec \"$2\" --name hung --never-answer; fi\nexec \"$2\" --name hung\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let hung_def = {
        let mut d = ServerDef::stdio(
            "hung",
            script.to_str().unwrap(),
            &[marker.to_str().unwrap(), bin.to_str().unwrap()],
        );
        d.timeout = Some(5000);
        d
    };
    let wanted = || {
        let mut v = vec![Wanted::new(hung_def.clone())];
        v.extend((0..4).map(|i| fixture(bin, &format!("ok{i}"), &[])));
        v
    };

    // Warm the cache: the same definition, answering normally.
    let m = Manager::new(opts(home, Some(cache.clone())));
    let r = m.start(wanted()).await;
    assert_eq!(r.connected.len(), 5, "{r:?}");
    m.shutdown().await;
    assert!(
        std::fs::read_to_string(&cache)
            .unwrap()
            .contains("\"hung\""),
        "hung's tools are cached"
    );

    std::fs::write(&marker, "").unwrap();
    let mut times = vec![];
    for _ in 0..HUNG_REPS {
        let m = Manager::new(opts(home, Some(cache.clone())));
        let t = Instant::now();
        let r = m.start(wanted()).await;
        let elapsed = t.elapsed();
        assert_eq!(r.deferred, ["hung"], "{r:?}");
        assert_eq!(r.connected.len(), 4, "{r:?}");
        let tools = m.tools();
        let echo = tools.get("mcp_hung_echo").expect("cached tool listed");
        assert!(echo.deferred);
        times.push(elapsed);
        m.shutdown().await;
    }

    // For contrast, once without a cache: start waits for the 5 s timeout.
    let m = Manager::new(opts(home, None));
    let t = Instant::now();
    let r = m.start(wanted()).await;
    let cold = t.elapsed();
    assert!(r.failed.iter().any(|e| e.server == "hung"), "{r:?}");
    m.shutdown().await;

    println!("## Time to tools: 1 hung server (timeout 5000 ms) + 4 normal, gate 250 ms ({HUNG_REPS} reps)\n");
    println!("| case | median ms | p95 ms | min ms | goal |");
    println!("|---|---:|---:|---:|---|");
    let mut s = times.clone();
    s.sort();
    println!("| warm cache: `start` returns, hung server's tools deferred | {:.1} | {:.1} | {:.1} | <= 300 |", ms(median(&times)), ms(pct(&times, 0.95)), ms(s[0]));
    record_ms(
        "Hung server with cached tools: `start` returns (others' tools listed)",
        &times,
        Goal::Max(300.0),
        "1 hung + 4 normal servers, gate 250 ms",
    );
    println!(
        "| no cache (1 run): `start` waits for the timeout | {:.1} | | | |",
        ms(cold)
    );
    println!();
}

// ---------------------------------------------------------------------------
// 3. Tool-call overhead
// ---------------------------------------------------------------------------

async fn call_overhead(bin: &Path, home: &Path) {
    let m = Manager::new(opts(home, None));
    let r = m.start(vec![fixture(bin, "bench", &[])]).await;
    assert_eq!(r.connected, ["bench"], "{r:?}");
    assert!(m.tools().get("mcp_bench_echo").is_some());

    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(["--name", "bare"]);
    let bare =
        ().serve(TokioChildProcess::new(cmd).expect("spawn fixture"))
            .await
            .expect("bare client connects");

    let via_manager = |text: String| {
        let m = m.clone();
        async move {
            let out = m
                .call_tool("mcp_bench_echo", Some(echo_args(&text)), None)
                .await
                .expect("manager call");
            assert_eq!(out.text, text);
        }
    };
    let via_bare = |text: String| {
        let bare = &bare;
        async move {
            let out = bare
                .call_tool(CallToolRequestParams::new("echo").with_arguments(echo_args(&text)))
                .await
                .expect("bare call");
            let got = out
                .content
                .first()
                .and_then(|c| c.as_text())
                .map(|t| t.text.clone());
            assert_eq!(got.as_deref(), Some(text.as_str()));
        }
    };

    // Warm both paths, then alternate blocks so drift hits both alike.
    for i in 0..100 {
        via_manager(format!("warm {i}")).await;
        via_bare(format!("warm {i}")).await;
    }
    let per_round = CALLS / CALL_ROUNDS;
    let (mut tm, mut tb) = (Vec::with_capacity(CALLS), Vec::with_capacity(CALLS));
    let (mut wall_m, mut wall_b) = (Duration::ZERO, Duration::ZERO);
    for round in 0..CALL_ROUNDS {
        for first_manager in [round % 2 == 0, round % 2 != 0] {
            let w = Instant::now();
            for i in 0..per_round {
                let text = format!("hello {round} {i}");
                let t = Instant::now();
                if first_manager {
                    via_manager(text).await;
                    tm.push(t.elapsed());
                } else {
                    via_bare(text).await;
                    tb.push(t.elapsed());
                }
            }
            if first_manager {
                wall_m += w.elapsed();
            } else {
                wall_b += w.elapsed();
            }
        }
    }
    drop(bare.cancel().await);
    m.shutdown().await;

    let (mm, mb) = (median(&tm), median(&tb));
    println!(
        "## Tool-call overhead: {CALLS} `echo` calls each, {CALL_ROUNDS} alternating rounds\n"
    );
    println!("| client | median us | p95 us | p99 us | calls/s |");
    println!("|---|---:|---:|---:|---:|");
    println!(
        "| `Manager::call_tool` | {:.1} | {:.1} | {:.1} | {:.0} |",
        us(mm),
        us(pct(&tm, 0.95)),
        us(pct(&tm, 0.99)),
        tm.len() as f64 / wall_m.as_secs_f64()
    );
    println!(
        "| bare rmcp client (`call_tool`) | {:.1} | {:.1} | {:.1} | {:.0} |",
        us(mb),
        us(pct(&tb, 0.95)),
        us(pct(&tb, 0.99)),
        tb.len() as f64 / wall_b.as_secs_f64()
    );
    println!();
    println!("| ratio | value | goal |");
    println!("|---|---:|---|");
    println!(
        "| manager / bare (median per call) | {:.3} | <= 1.1 |",
        us(mm) / us(mb)
    );
    record(
        "Engine",
        "Tool call through the manager / bare rmcp client",
        us(mm) / us(mb),
        Some(us(pct(&tm, 0.9)) / us(pct(&tb, 0.9))),
        "×",
        Goal::Max(1.1),
        &format!("{:.0} µs vs {:.0} µs per `echo` call", us(mm), us(mb)),
    );
    println!();
}

// ---------------------------------------------------------------------------
// 4. Naming
// ---------------------------------------------------------------------------

fn naming() {
    let servers: Vec<String> = (0..NAMING_SERVERS)
        .map(|i| match i % 4 {
            0 => format!("server-{i}"),
            1 => format!("server.{i}"),
            2 => format!("Srv_{i}"),
            _ => format!("github-{i}"),
        })
        .collect();
    let tools: Vec<ToolRef> = (0..NAMING_TOOLS)
        .map(|i| {
            let server = &servers[i % NAMING_SERVERS];
            let tool = match i % 3 {
                0 => format!("tool_{i}"),
                1 => format!("{server}_create_issue_{i}"),
                _ => format!("read-file-with-a-very-long-descriptive-name-number-{i}"),
            };
            ToolRef::new(server.clone(), tool)
        })
        .collect();
    let mut times = Vec::with_capacity(NAMING_RUNS);
    for _ in 0..NAMING_RUNS {
        let t = Instant::now();
        let n = assign_names(&tools);
        times.push(t.elapsed());
        std::hint::black_box(n);
    }
    let n = assign_names(&tools);
    let unique: std::collections::HashSet<&String> = n.names.iter().collect();
    assert_eq!(unique.len(), NAMING_TOOLS);
    record_ms(
        &format!("Naming {NAMING_TOOLS} tools (`assign_names`)"),
        &times,
        Goal::None,
        &format!("{NAMING_SERVERS} servers"),
    );
    println!("## Naming: `assign_names` over {NAMING_TOOLS} tools from {NAMING_SERVERS} servers ({NAMING_RUNS} runs)\n");
    println!("| median ms | p95 ms | min ms | collision groups |");
    println!("|---:|---:|---:|---:|");
    let mut s = times.clone();
    s.sort();
    println!(
        "| {:.2} | {:.2} | {:.2} | {} |",
        ms(median(&times)),
        ms(pct(&times, 0.95)),
        ms(s[0]),
        n.collisions.len()
    );
}
