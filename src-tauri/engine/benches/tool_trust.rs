//! Reviewing 10,000 tools of 200 servers against their pins, as the gateway
//! does whenever the tool index or the approvals change:
//! `cargo bench --bench tool_trust`. Every description and schema string is
//! scanned and hashed, so this bounds how long a `tools/list` after a change
//! waits (the target is well under 100 ms in release).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::Tool;
use switchboard_engine::tool_trust::{
    holds, holds_with, review, Item, ScanMemo, ServerInput, TrustBasis,
};

const SERVERS: usize = 200;
const PER_SERVER: usize = 50;
const RUNS: usize = 10;

fn main() {
    let description = "Creates an issue in the repository with a title and a body; returns its number and URL. Labels and assignees are optional. ".repeat(2);
    let inputs: Vec<ServerInput> = (0..SERVERS)
        .map(|s| {
            let tools: Vec<Tool> = (0..PER_SERVER)
                .map(|t| {
                    serde_json::from_value(serde_json::json!({
                        "name": format!("create_issue_{t}"),
                        "description": description,
                        "inputSchema": {"type": "object", "properties": {
                            "title": {"type": "string", "description": "The issue's title"},
                            "body": {"type": "string", "description": "Markdown body"},
                            "labels": {"type": "array", "items": {"type": "string"}}
                        }, "required": ["title"]}
                    }))
                    .unwrap()
                })
                .collect();
            ServerInput {
                server: format!("server-{s}"),
                identity: "id".into(),
                tools: Arc::new(tools),
                extra: None,
                instructions: Some("Use these tools for issues.".into()),
                deferred: false,
            }
        })
        .collect();
    let mut basis = TrustBasis::default();
    for s in &inputs {
        let items: Vec<Item> = s.tools.iter().map(Item::tool).collect();
        basis.pins.approve(&s.server, &s.identity, &items, 1, false);
    }
    let mut times: Vec<Duration> = vec![];
    for _ in 0..RUNS {
        let start = Instant::now();
        let h = holds(&inputs, &basis);
        times.push(start.elapsed());
        assert!(h.is_empty());
    }
    times.sort();
    // As the gateway runs it: a memo of unchanged lists; one server re-listed.
    let memo = ScanMemo::default();
    holds_with(&inputs, &basis, &memo);
    let mut inputs = inputs;
    let mut relisted: Vec<Duration> = vec![];
    for i in 0..RUNS {
        inputs[i].tools = Arc::new(inputs[i].tools.as_ref().clone());
        let start = Instant::now();
        let h = holds_with(&inputs, &basis, &memo);
        relisted.push(start.elapsed());
        assert!(h.is_empty());
    }
    relisted.sort();
    println!(
        "holds after one server re-listed (memo): median {:?}, max {:?}",
        relisted[RUNS / 2],
        relisted[RUNS - 1]
    );
    let start = Instant::now();
    let r = review(&inputs, &basis, true);
    let full = start.elapsed();
    let items: usize = r.servers.iter().map(|s| s.items.len()).sum();
    println!(
        "holds over {} tools: median {:?}, max {:?}; full review with diffs: {:?} ({items} items)",
        SERVERS * PER_SERVER,
        times[RUNS / 2],
        times[RUNS - 1],
        full
    );
}
