//! Gateway timings and sizes against the rmcp fixture server:
//! `cargo bench -p switchboard-engine --bench gateway`.
//!
//! Needs the `fixture-server` binary, ideally in release:
//! `cargo build --release -p switchboard-tests --bin fixture-server`.
//!
//! 1. `tools/call` (`echo`) through `switchboard serve` vs the fixture
//!    directly, over stdio and over loopback HTTP: median per call and the
//!    median overhead. Goal: overhead <= 0.5 ms.
//! 2. `tools/list` of 10,000 tools through the gateway vs directly. Goal:
//!    <= 20 ms.
//! 3. RSS of `switchboard serve --http` with 20 servers connected (the
//!    switchboard process only). Goal: <= 25 MB.
//! 4. The `tools/list` payload for 200 tools, with and without
//!    `--tool-search`, and one `search_tools` answer.
//! 5. What the call journal adds to a gateway call: `tools/call` (`echo`)
//!    through an in-process gateway session (no client process, so the
//!    difference is not lost in pipe noise), rounds with the journal
//!    recording and rounds without it interleaved. Goal: the medians differ
//!    by <= 20 µs. `BENCH_GATEWAY_ONLY=journal` runs this one alone.
//!
//! A plain binary that prints markdown; each comparison interleaves its two
//! sides in rounds because the machine is noisy.

use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ListToolsResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use switchboard_tests::TempHome;
use tokio::io::AsyncBufReadExt;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const TOKEN: &str = "gateway-bench-token-0123456789";
const CALLS: usize = 500;
const ROUNDS: usize = 4;
const LIST_REPS: usize = 15;

type Client = RunningService<RoleClient, ()>;

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn median(v: &[Duration]) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s[s.len() / 2]
}

fn home(servers: &[(String, Vec<String>)]) -> TempHome {
    let fixture = switchboard_tests::fixture_server_path();
    let mut map = serde_json::Map::new();
    for (name, args) in servers {
        let mut a = vec!["--name".to_string(), name.clone()];
        a.extend(args.iter().cloned());
        map.insert(name.clone(), json!({ "command": fixture, "args": a }));
    }
    TempHome::with_servers(map.into())
}

fn command(home: &TempHome, args: &[&str]) -> tokio::process::Command {
    let mut c = home.command(BIN);
    c.args(args)
        .env("SWITCHBOARD_GATEWAY_TOKEN", TOKEN)
        .stderr(std::process::Stdio::null());
    c
}

async fn gateway_stdio(home: &TempHome, extra: &[&str]) -> Client {
    let mut a = vec!["serve"];
    a.extend_from_slice(extra);
    ().serve(TokioChildProcess::new(command(home, &a)).unwrap())
        .await
        .unwrap()
}

async fn gateway_http(home: &TempHome) -> (tokio::process::Child, String, u32) {
    let mut c = command(home, &["serve", "--http", "127.0.0.1:0"]);
    c.stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).await.unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    (
        child,
        v["url"].as_str().unwrap().to_string(),
        v["pid"].as_u64().unwrap() as u32,
    )
}

async fn http_client(url: &str, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(t) = token {
        config = config.auth_header(t.to_string());
    }
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap()
}

async fn direct_stdio(args: &[&str]) -> Client {
    let mut cmd = tokio::process::Command::new(switchboard_tests::fixture_server_path());
    cmd.args(args).stderr(std::process::Stdio::null());
    ().serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap()
}

/// Until the client lists at least `n` tools.
async fn wait_count(c: &Client, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while c.list_all_tools().await.unwrap().len() < n {
        assert!(Instant::now() < deadline, "{n} tools never listed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Until the client lists a tool named `name` (servers come up behind the gate).
async fn wait_tool(c: &Client, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !c
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .any(|t| t.name == name)
    {
        assert!(Instant::now() < deadline, "{name} never listed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn calls(c: &Client, tool: &str, n: usize) -> Vec<Duration> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut p = CallToolRequestParams::new(tool.to_string());
        p.arguments = json!({ "text": format!("call {i}") }).as_object().cloned();
        let t = Instant::now();
        let r = c.call_tool(p).await.unwrap();
        out.push(t.elapsed());
        assert_ne!(r.is_error, Some(true));
    }
    out
}

/// Direct vs gateway, interleaved rounds; (direct, gateway) medians.
async fn compare_calls(direct: &Client, through: &Client) -> (Duration, Duration) {
    let (mut d, mut g) = (vec![], vec![]);
    calls(direct, "echo", 50).await;
    calls(through, "mcp_fx_echo", 50).await;
    for _ in 0..ROUNDS {
        d.extend(calls(direct, "echo", CALLS / ROUNDS).await);
        g.extend(calls(through, "mcp_fx_echo", CALLS / ROUNDS).await);
    }
    (median(&d), median(&g))
}

async fn list_times(c: &Client) -> (Vec<Duration>, usize) {
    let mut out = vec![];
    let mut n = 0;
    for _ in 0..LIST_REPS {
        let t = Instant::now();
        let r = c.list_tools(None).await.unwrap();
        out.push(t.elapsed());
        n = r.tools.len();
    }
    (out, n)
}

/// The gateway's share of one `tools/list` of 10,000 tools, without any
/// transport: (building the list from the manager's index, median copying
/// the cached list and serializing the answer), in ms.
async fn in_process_list() -> (f64, f64) {
    use switchboard_engine::config::ServerDef;
    use switchboard_engine::gateway::{Gateway, GatewayOptions, Switches};
    use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
    let fixture = switchboard_tests::fixture_server_path();
    let m = Manager::new(ManagerOptions {
        cache_path: None,
        process_records: None,
        ..ManagerOptions::default()
    });
    m.start(vec![Wanted::new(ServerDef::stdio(
        "fx",
        fixture.to_str().unwrap(),
        &["--name", "fx", "--tools", "9988"],
    ))])
    .await;
    m.settle().await;
    let (_tx, rx) = tokio::sync::watch::channel(std::sync::Arc::new(Switches::default()));
    let g = Gateway::new(m.clone(), rx, GatewayOptions::default());
    g.set_ready();
    let t = Instant::now();
    let tools = g.tools();
    let build = t.elapsed();
    assert_eq!(tools.len(), 10_000);
    let mut serve = vec![];
    for _ in 0..20 {
        let t = Instant::now();
        let list = ListToolsResult::with_all_items(g.tools().as_ref().clone());
        let bytes = serde_json::to_vec(&list).unwrap();
        serve.push(t.elapsed());
        assert!(bytes.len() > 100_000);
    }
    m.shutdown().await;
    (us(build) / 1000.0, us(median(&serve)) / 1000.0)
}

/// Median `tools/call` through an in-process gateway session with the call
/// journal recording and without it, interleaved rounds: (without, with,
/// entries the journal wrote, entries it dropped).
async fn journal_overhead() -> (Duration, Duration, u64, u64) {
    use switchboard_engine::config::ServerDef;
    use switchboard_engine::gateway::{Gateway, GatewayOptions, Switches};
    use switchboard_engine::journal::{Journal, JournalSettings};
    use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
    let fixture = switchboard_tests::fixture_server_path();
    let m = Manager::new(ManagerOptions {
        cache_path: None,
        process_records: None,
        ..ManagerOptions::default()
    });
    m.start(vec![Wanted::new(ServerDef::stdio(
        "fx",
        fixture.to_str().unwrap(),
        &["--name", "fx"],
    ))])
    .await;
    m.settle().await;
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(
        dir.path().join("journal.db"),
        JournalSettings::default(),
        m.known_secrets(),
    );
    let (_tx, rx) = tokio::sync::watch::channel(std::sync::Arc::new(Switches::default()));
    let g = Gateway::new(m.clone(), rx, GatewayOptions::default());
    g.set_ready();
    let client = switchboard_tests::in_process::client(g.session()).await;
    wait_tool(&client, "mcp_fx_echo").await;
    let (mut off, mut on) = (vec![], vec![]);
    calls(&client, "mcp_fx_echo", 100).await;
    for _ in 0..ROUNDS * 2 {
        m.set_journal(None);
        off.extend(calls(&client, "mcp_fx_echo", CALLS / ROUNDS).await);
        m.set_journal(Some(journal.clone()));
        on.extend(calls(&client, "mcp_fx_echo", CALLS / ROUNDS).await);
    }
    m.set_journal(None);
    journal.flush();
    let stats = journal.stats();
    client.cancel().await.unwrap();
    m.shutdown().await;
    (median(&off), median(&on), stats.written, stats.dropped)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!(
        "fixture-server: {}",
        switchboard_tests::fixture_server_path().display()
    );
    println!("switchboard: {BIN}\n");
    // `BENCH_GATEWAY_ONLY=journal`: section 5 alone (a quick run).
    if std::env::var("BENCH_GATEWAY_ONLY").as_deref() == Ok("journal") {
        report_journal_overhead().await;
        return;
    }

    // 1. Call overhead, stdio and HTTP.
    let h = home(&[("fx".into(), vec![])]);
    let direct = direct_stdio(&["--name", "fx"]).await;
    let through = gateway_stdio(&h, &[]).await;
    wait_tool(&through, "mcp_fx_echo").await;
    let (d, g) = compare_calls(&direct, &through).await;
    println!("| tools/call `echo` ({CALLS} calls) | direct median | gateway median | overhead |");
    println!("|---|---|---|---|");
    println!(
        "| stdio | {:.0} µs | {:.0} µs | {:.0} µs |",
        us(d),
        us(g),
        us(g) - us(d)
    );
    switchboard_tests::bench::record(
        "Gateway",
        "Tool call overhead through the gateway (stdio)",
        (us(g) - us(d)) / 1000.0,
        None,
        "ms",
        switchboard_tests::bench::Goal::Max(0.5),
        &format!(
            "{:.0} µs direct, {:.0} µs through the gateway",
            us(d),
            us(g)
        ),
    );
    through.cancel().await.unwrap();
    direct.cancel().await.unwrap();
    let fx = switchboard_tests::spawn_http_fixture(&["--name", "fx"])
        .await
        .unwrap();
    let direct = http_client(&fx.url, None).await;
    let (_gw, url, _) = gateway_http(&h).await;
    let through = http_client(&url, Some(TOKEN)).await;
    wait_tool(&through, "mcp_fx_echo").await;
    let (d, g) = compare_calls(&direct, &through).await;
    println!("| loopback HTTP (client→gateway over HTTP, gateway→server over stdio) | {:.0} µs | {:.0} µs | {:.0} µs |", us(d), us(g), us(g) - us(d));
    through.cancel().await.unwrap();
    direct.cancel().await.unwrap();
    drop(_gw);

    // 2. tools/list of 10,000 tools.
    let h = home(&[("fx".into(), vec!["--tools".into(), "9988".into()])]);
    let direct = direct_stdio(&["--name", "fx", "--tools", "9988"]).await;
    let through = gateway_stdio(&h, &[]).await;
    wait_count(&through, 10_000).await;
    let (mut dt, mut gt) = (vec![], vec![]);
    let mut counts = (0, 0);
    for _ in 0..3 {
        let (d, n) = list_times(&direct).await;
        dt.extend(d);
        counts.0 = n;
        let (g, n) = list_times(&through).await;
        gt.extend(g);
        counts.1 = n;
    }
    let own = in_process_list().await;
    println!("\n| tools/list | tools | median |");
    println!("|---|---|---|");
    println!(
        "| direct (stdio) | {} | {:.1} ms |",
        counts.0,
        us(median(&dt)) / 1000.0
    );
    println!(
        "| gateway (stdio) | {} | {:.1} ms |",
        counts.1,
        us(median(&gt)) / 1000.0
    );
    switchboard_tests::bench::record(
        "Gateway",
        "tools/list of 10,000 tools: through the gateway − directly",
        (us(median(&gt)) - us(median(&dt))) / 1000.0,
        None,
        "ms",
        switchboard_tests::bench::Goal::Max(20.0),
        &format!(
            "{:.1} ms through the gateway, {:.1} ms directly (the client's own parse)",
            us(median(&gt)) / 1000.0,
            us(median(&dt)) / 1000.0
        ),
    );
    println!("| gateway's own work per list, in process: build the visible list (cache cold) | 10000 | {:.1} ms |", own.0);
    println!("| gateway's own work per list, in process: copy the cached list + serialize the result | 10000 | {:.1} ms |", own.1);
    through.cancel().await.unwrap();
    direct.cancel().await.unwrap();

    // 3. RSS with 20 servers.
    let servers: Vec<(String, Vec<String>)> = (0..20u8)
        .map(|i| (format!("s{}", (b'a' + i) as char), vec![]))
        .collect();
    let h = home(&servers);
    let (_gw, url, pid) = gateway_http(&h).await;
    let client = http_client(&url, Some(TOKEN)).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n = client.list_all_tools().await.unwrap().len();
        if n >= 20 * switchboard_tests::FIXED_TOOLS.len() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "20 servers never all listed ({n} tools)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    calls(&client, "mcp_sa_echo", 200).await;
    let (rss, hwm) = switchboard_tests::bench::rss_kb(pid);
    println!(
        "\n| switchboard serve --http, 20 servers connected, 200 calls made | RSS | peak RSS |"
    );
    println!("|---|---|---|");
    println!(
        "| switchboard process | {:.1} MB | {:.1} MB |",
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    switchboard_tests::bench::record(
        "Gateway",
        "`switchboard serve --http` memory, 20 servers (RSS)",
        rss as f64 / 1024.0,
        None,
        "MiB",
        switchboard_tests::bench::Goal::Max(25.0),
        &format!("peak {:.1} MiB", hwm as f64 / 1024.0),
    );
    client.cancel().await.unwrap();
    drop(_gw);

    // 4. Payload of 200 tools, with and without tool search.
    let h = home(&[("fx".into(), vec!["--tools".into(), "188".into()])]);
    let plain = gateway_stdio(&h, &[]).await;
    wait_count(&plain, 200).await;
    let all: ListToolsResult = plain.list_tools(None).await.unwrap();
    plain.cancel().await.unwrap();
    let search = gateway_stdio(&h, &["--tool-search"]).await;
    let two: ListToolsResult = search.list_tools(None).await.unwrap();
    let mut p = CallToolRequestParams::new("search_tools");
    p.arguments = json!({ "query": "add two numbers" }).as_object().cloned();
    let found = search.call_tool(p).await.unwrap();
    search.cancel().await.unwrap();
    println!("\n| tools/list result (JSON) | tools | bytes |");
    println!("|---|---|---|");
    println!(
        "| every tool | {} | {} |",
        all.tools.len(),
        serde_json::to_vec(&all).unwrap().len()
    );
    println!(
        "| --tool-search | {} | {} |",
        two.tools.len(),
        serde_json::to_vec(&two).unwrap().len()
    );
    println!(
        "| one search_tools answer (\"add two numbers\") | - | {} |",
        serde_json::to_vec(&found).unwrap().len()
    );
    report_journal_overhead().await;
}

/// Section 5, printed and recorded.
async fn report_journal_overhead() {
    let (off, on, written, dropped) = journal_overhead().await;
    println!(
        "\n| tools/call `echo` through an in-process gateway session ({} calls each) | median |",
        CALLS * 2
    );
    println!("|---|---|");
    println!("| journal off | {:.0} µs |", us(off));
    println!("| journal recording | {:.0} µs |", us(on));
    println!("| entries written / dropped | {written} / {dropped} |");
    switchboard_tests::bench::record(
        "Journal",
        "Journal overhead per gateway call (median with − without)",
        us(on) - us(off),
        None,
        "µs",
        switchboard_tests::bench::Goal::Max(20.0),
        &format!(
            "{:.0} µs with the journal, {:.0} µs without; {written} written, {dropped} dropped",
            us(on),
            us(off)
        ),
    );
    assert_eq!(
        written as usize,
        CALLS * 2,
        "every recorded call is written"
    );
}
