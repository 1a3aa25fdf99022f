//! Profiles: what counting costs and how fast a switch reaches clients.
//! `cargo bench -p switchboard-engine --bench profiles_gateway`.
//!
//! 1. Counting the tokens of 10,000 tool definitions (o200k_base, in
//!    process, none of them counted before). Goal: <= 50 ms.
//! 2. A profile switch at the gateway (`Engine::switch_profile`) until an
//!    open session receives `notifications/tools/list_changed`, with 20
//!    fixture servers, each switch after a quiet spell (as a person clicks;
//!    changes in a burst are merged over `gateway::COALESCE`). Goal: <= 20 ms.

use std::time::{Duration, Instant};

use rmcp::model::Tool;
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Map, Value};
use switchboard_engine::engine::Engine;
use switchboard_engine::gateway::{switches, Gateway, GatewayOptions};
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::profile::ProfileChange;
use switchboard_tests::bench::{ms_stats, record, Goal};
use tokio::sync::mpsc;

const TOOLS: usize = 10_000;
const COUNT_RUNS: usize = 9;
const SERVERS: usize = 20;
const SWITCHES: usize = 30;

/// A tool definition shaped like real servers' (a sentence or three, a few
/// typed properties); `run` makes every run's texts new to the cache.
fn tool(run: usize, i: usize) -> Tool {
    let schema: Map<String, Value> = serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "owner": {"type": "string", "description": "Repository owner (user or organization)"},
            "repo": {"type": "string", "description": "Repository name"},
            "query": {"type": "string", "description": format!("Search query {i}, in the service's search syntax")},
            "page": {"type": "number", "description": "Page number for pagination (min 1)"},
            "perPage": {"type": "number", "description": "Results per page (min 1, max 100)"}
        },
        "required": ["owner", "repo", "query"]
    }))
    .unwrap();
    Tool::new(
        format!("mcp_server{}_search_issues_{i}", i % 50),
        format!("Search for issues and pull requests in a repository (run {run}, tool {i}). Returns matching items with their titles, states, labels and authors; use the query syntax of the service to narrow the results."),
        schema,
    )
}

fn count_bench() {
    switchboard_engine::tokens::use_in_process();
    // The first count loads the tokenizer: not part of the figure.
    let _ = switchboard_engine::tokens::count_definitions(&[tool(usize::MAX, 0)]);
    let mut times = vec![];
    let mut total = 0u64;
    for run in 0..COUNT_RUNS {
        let tools: Vec<Tool> = (0..TOOLS).map(|i| tool(run, i)).collect();
        let start = Instant::now();
        let counts = switchboard_engine::tokens::count_definitions(&tools);
        times.push(start.elapsed());
        total = counts.iter().map(|c| *c as u64).sum();
    }
    let (median, p90) = ms_stats(&times);
    record(
        "Profiles",
        "Count the tokens of 10,000 tool definitions (o200k_base)",
        median,
        Some(p90),
        "ms",
        Goal::Max(50.0),
        &format!("{COUNT_RUNS} runs, {total} tokens a run, none counted before"),
    );
    // What a re-list costs when the definitions did not change: each is
    // serialized and looked up, none counted again.
    let tools: Vec<Tool> = (0..TOOLS).map(|i| tool(COUNT_RUNS - 1, i)).collect();
    let mut again = vec![];
    for _ in 0..COUNT_RUNS {
        let start = Instant::now();
        let _ = switchboard_engine::tokens::count_definitions(&tools);
        again.push(start.elapsed());
    }
    let (median, p90) = ms_stats(&again);
    record(
        "Profiles",
        "The same 10,000 definitions again (counts cached)",
        median,
        Some(p90),
        "ms",
        Goal::None,
        &format!("{COUNT_RUNS} runs"),
    );
}

#[derive(Clone)]
struct Heard(mpsc::UnboundedSender<Instant>);

impl ClientHandler for Heard {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send(Instant::now());
    }
}

async fn switch_bench() {
    let fixture = switchboard_tests::fixture_server_path();
    let servers: Map<String, Value> = (0..SERVERS)
        .map(|i| {
            (
                format!("s{i}"),
                json!({"command": fixture, "args": ["--name", format!("s{i}")]}),
            )
        })
        .collect();
    let home = switchboard_tests::TempHome::with_servers(Value::Object(servers));
    let host = home.host();
    let engine = Engine::new(
        host.clone(),
        ManagerOptions {
            cache_path: None,
            process_records: None,
            ..ManagerOptions::default()
        },
        vec![],
    );
    let report = engine.start().await;
    assert_eq!(report.connected.len(), SERVERS, "{report:?}");
    engine.rediscover();
    let half: Vec<String> = (0..SERVERS / 2).map(|i| format!("s{i}")).collect();
    engine
        .change_profiles(ProfileChange::Create {
            name: "half".into(),
            servers: half,
        })
        .await
        .unwrap();
    let gateway = Gateway::new(
        engine.manager().clone(),
        switches::follow(&host),
        GatewayOptions::default(),
    );
    gateway.set_ready();
    let (server_end, client_end) = tokio::io::duplex(1 << 22);
    let session = gateway.session();
    tokio::spawn(async move {
        if let Ok(r) = session.serve(server_end).await {
            let _ = r.waiting().await;
        }
    });
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = Heard(tx).serve(client_end).await.unwrap();
    let _ = client.list_all_tools().await.unwrap();
    let mut times = vec![];
    for i in 0..SWITCHES {
        let to = if i % 2 == 0 { "half" } else { "Everything" };
        while rx.try_recv().is_ok() {}
        let start = Instant::now();
        engine.switch_profile(to).await.unwrap();
        let heard = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("list_changed within 10 s")
            .unwrap();
        times.push(heard - start);
        // The client lists again, as clients do, before the next switch.
        let _ = client.list_all_tools().await.unwrap();
        // A person's next click comes after a quiet spell: changes within
        // COALESCE of the last notification are merged into one sent at its
        // end (bursts of server restarts), which is not what is timed here.
        tokio::time::sleep(switchboard_engine::gateway::COALESCE).await;
    }
    let (median, p90) = ms_stats(&times);
    record(
        "Profiles",
        "Profile switch at the gateway → list_changed received",
        median,
        Some(p90),
        "ms",
        Goal::Max(20.0),
        &format!("{SWITCHES} switches between Everything and 10 of {SERVERS} fixture servers"),
    );
    client.cancel().await.unwrap();
    engine.manager().shutdown().await;
}

fn main() {
    count_bench();
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(switch_bench());
}
