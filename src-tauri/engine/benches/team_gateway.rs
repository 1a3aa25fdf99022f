//! The team gateway under load: `cargo bench --bench team_gateway`.
//!
//! One replica (`switchboard serve --config DIR --oidc-issuer URL
//! --resource URL`, release build) with 20 fixture servers, against the
//! identity-provider stand-in. 50 MCP clients (rmcp, streamable HTTP, each
//! with its own access token) call `echo` at once, through the gateway and,
//! in interleaved rounds, the same fixture server directly over HTTP.
//!
//! 1. p99 latency overhead of a call through the gateway over calling the
//!    server directly, each of the 50 clients calling 20 times a second
//!    (open loop, 1,000 calls/s in all). Goal: <= 2 ms.
//! 2. Calls per second per core through the gateway, the 50 clients calling
//!    as fast as answers come, and the p99 overhead then (reported: with the
//!    clients, the gateway and the servers on the same two cores, it is
//!    queueing for the CPU, not the gateway's own time).
//! 3. The replica's resident memory with 20 servers connected, after the
//!    50 clients (the switchboard process only; servers are their own
//!    processes). Goal: <= 40 MiB.
//!
//! Needs `fixture-server`, ideally in release (`.ci/bench` builds it).

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use switchboard_tests::bench::{record, Goal};
use switchboard_tests::idp::{Idp, IdpOptions, Mint};
use tokio::io::AsyncBufReadExt;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const RESOURCE: &str = "https://mcp.bench.example/mcp";
const SERVERS: usize = 20;
const CLIENTS: usize = 50;
const CALLS: usize = 40;
const ROUNDS: usize = 3;
/// Between two calls of one client in the latency rounds.
const PACE: Duration = Duration::from_millis(50);

type Client = RunningService<RoleClient, ()>;

async fn client(url: &str, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(t) = token {
        config = config.auth_header(t.to_string());
    }
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("client connects")
}

/// Every client calls `tool` CALLS times, all clients at once; the
/// latencies of every call and the wall time of the whole round. With
/// `pace`, each client starts a call every `pace` (open loop: the load
/// stays the same however fast answers come); without, as fast as answers
/// come (closed loop: the most the machine does).
async fn round(
    clients: &[Client],
    tool: &str,
    pace: Option<Duration>,
) -> (Vec<Duration>, Duration) {
    let started = Instant::now();
    let mut tasks = Vec::new();
    let n = clients.len() as u32;
    for (k, c) in clients.iter().enumerate() {
        let peer = c.peer().clone();
        let tool = tool.to_string();
        tasks.push(tokio::spawn(async move {
            // Spread over the period, as independent people's calls are.
            if let Some(p) = pace {
                tokio::time::sleep(p * k as u32 / n).await;
            }
            let mut lat = Vec::with_capacity(CALLS);
            let mut tick = pace.map(|p| {
                let mut t = tokio::time::interval(p);
                t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                t
            });
            for i in 0..CALLS {
                if let Some(t) = tick.as_mut() {
                    t.tick().await;
                }
                let mut p = CallToolRequestParams::new(tool.clone());
                p.arguments = Some(
                    json!({ "text": format!("call {i}") })
                        .as_object()
                        .unwrap()
                        .clone(),
                );
                let t = Instant::now();
                let r = peer.call_tool(p).await.expect("call");
                lat.push(t.elapsed());
                assert_ne!(r.is_error, Some(true));
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    (all, started.elapsed())
}

fn pct(v: &mut [Duration], p: usize) -> f64 {
    v.sort();
    v[(v.len() - 1) * p / 100].as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let fixture = switchboard_tests::fixture_server_path();
    println!("fixture-server: {}", fixture.display());
    let idp = Idp::start_with(IdpOptions {
        default_resource: RESOURCE.into(),
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    let mut servers = serde_json::Map::new();
    for i in 0..SERVERS {
        // Letters, not digits: gateway names keep letters only.
        let name = format!("s{}", (b'a' + i as u8) as char);
        servers.insert(
            name.clone(),
            json!({ "command": fixture, "args": ["--name", name] }),
        );
    }
    std::fs::write(
        config.join("servers.json"),
        json!({ "mcpServers": servers }).to_string(),
    )
    .unwrap();
    std::fs::write(config.join("settings.json"), "{}").unwrap();
    std::fs::write(
        config.join("team.json"),
        json!({ "access": [{ "group": "engineering", "profiles": ["Everything"] }] }).to_string(),
    )
    .unwrap();
    let state = dir.path().join("state");
    let mut child = tokio::process::Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .args(["--oidc-issuer", &idp.url, "--resource", RESOURCE, "--state"])
        .arg(&state)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &state)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).await.unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    let url = v["url"].as_str().unwrap().to_string();
    let pid = v["pid"].as_u64().unwrap() as u32;
    let base = url.trim_end_matches("/mcp").to_string();
    let http = reqwest::Client::new();
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        let r = http.get(format!("{base}/readyz")).send().await.unwrap();
        let up = http
            .get(format!("{base}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
            .matches("status=\"connected\"} 1")
            .count();
        if r.status() == 200 && up == SERVERS {
            break;
        }
        assert!(Instant::now() < until, "the replica did not get ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let direct_server = switchboard_tests::spawn_http_fixture(&["--name", "direct"])
        .await
        .unwrap();
    let mut through = Vec::new();
    let mut direct = Vec::new();
    for i in 0..CLIENTS {
        let token = idp.mint(
            Mint::new()
                .claim("sub", format!("person{i}@example.com"))
                .claim("groups", json!(["engineering"])),
        );
        through.push(client(&url, Some(&token)).await);
        direct.push(client(&direct_server.url, None).await);
    }
    // Latency: 50 clients, each calling 20 times a second (1,000 calls/s in
    // all), through the gateway and directly, rounds interleaved.
    let (mut t_lat, mut d_lat) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        t_lat.extend(round(&through, "mcp_sh_echo", Some(PACE)).await.0);
        d_lat.extend(round(&direct, "echo", Some(PACE)).await.0);
    }
    let (t50, t99) = (pct(&mut t_lat, 50), pct(&mut t_lat, 99));
    let (d50, d99) = (pct(&mut d_lat, 50), pct(&mut d_lat, 99));
    println!("paced, through the gateway: p50 {t50:.3} ms, p99 {t99:.3} ms; directly: p50 {d50:.3} ms, p99 {d99:.3} ms");
    record(
        "Team gateway",
        "tools/call p99 overhead over calling the server directly, 50 concurrent clients at 20 calls/s each",
        t99 - d99,
        None,
        "ms",
        Goal::Max(2.0),
        &format!(
            "{CLIENTS} clients × {CALLS} calls × {ROUNDS} rounds, {SERVERS} servers; p99 {t99:.2} vs {d99:.2} ms, p50 {t50:.2} vs {d50:.2} ms"
        ),
    );
    // Throughput: the same clients as fast as they can.
    let (mut s_lat, mut s_dir) = (Vec::new(), Vec::new());
    let mut t_wall = Duration::ZERO;
    for _ in 0..ROUNDS {
        let (l, w) = round(&through, "mcp_sh_echo", None).await;
        s_lat.extend(l);
        t_wall += w;
        s_dir.extend(round(&direct, "echo", None).await.0);
    }
    let calls = s_lat.len();
    let (s99, sd99) = (pct(&mut s_lat, 99), pct(&mut s_dir, 99));
    println!("saturated: p99 through {s99:.3} ms, directly {sd99:.3} ms");
    record(
        "Team gateway",
        "tools/call p99 overhead with the machine saturated (50 clients, no pause)",
        s99 - sd99,
        None,
        "ms",
        Goal::None,
        "clients, gateway and servers share the machine's cores: queueing, not the gateway's own time",
    );
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    record(
        "Team gateway",
        "tools/call per second per core through one replica (50 clients)",
        calls as f64 / t_wall.as_secs_f64() / cores as f64,
        None,
        "calls/s",
        Goal::None,
        &format!("{cores} cores, clients and servers on the same machine"),
    );
    let (rss, hwm) = switchboard_tests::bench::rss_kb(pid);
    record(
        "Team gateway",
        "replica resident memory, 20 servers, after 50 concurrent clients",
        rss as f64 / 1024.0,
        Some(hwm as f64 / 1024.0),
        "MiB",
        Goal::Max(40.0),
        "VmRSS (p90 column: peak VmHWM); the switchboard process only",
    );
    for c in through.into_iter().chain(direct) {
        let _ = c.cancel().await;
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(30), child.wait()).await;
}
