//! `conformance-client`: an MCP client for the official conformance suite
//! (`@modelcontextprotocol/conformance`, `client` mode), built only on the
//! engine's public API: it connects through `Manager` exactly as the app
//! does.
//!
//! The suite starts it as `conformance-client <server url>` with the
//! scenario name in `MCP_CONFORMANCE_SCENARIO`. Scenarios:
//! - `initialize`: connect (initialize + tools/list), then shut down.
//! - `tools_call`: also call the scenario's `add_numbers` tool.
//! - anything else: connect, then call every tool that needs no arguments
//!   (a best effort for exploring other scenarios).
//!
//! Exits 0 on success, 1 when the connection or a required call fails.
//! Diagnostics go to stderr; the suite shows them when a scenario fails.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_engine::config::{ServerDef, Transport};
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};

const SERVER: &str = "conformance";

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client <server url>  (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_else(|_| "initialize".into());
    eprintln!("conformance-client: scenario {scenario}, server {url}");

    let m = Manager::new(ManagerOptions {
        cache_path: None,
        gate: Duration::from_millis(250),
        default_timeout: Duration::from_secs(20),
        grace: Duration::from_millis(500),
        env: std::env::vars().collect(),
        home: std::env::temp_dir(),
        ..ManagerOptions::default()
    });
    if scenario.starts_with("elicitation") {
        // What `switchboard --accept-defaults` does: answer with the schema's defaults.
        m.set_elicitation_handler(Some(switchboard_engine::manager::connection::accept_defaults_handler("conformance-client")));
    }
    let ok = run(&m, &url, &scenario).await;
    m.shutdown().await;
    if ok {
        eprintln!("conformance-client: done");
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn run(m: &Manager, url: &str, scenario: &str) -> bool {
    let report = m.start(vec![Wanted::new(ServerDef::remote(SERVER, Transport::Http, url))]).await;
    if !report.connected.iter().any(|s| s == SERVER) {
        eprintln!("conformance-client: could not connect: {report:?}");
        if let Some(logs) = m.logs(SERVER) {
            for l in logs {
                eprintln!("  [{}] {}", l.kind, l.text);
            }
        }
        return false;
    }
    if let Some(st) = m.state(SERVER) {
        eprintln!("conformance-client: connected ({:?}, protocol {:?})", st.transport_used, st.protocol_version);
    }
    let tools = m.tools();
    for t in &tools.tools {
        eprintln!("conformance-client: tool {} -> {}", t.name, t.tool);
    }
    match scenario {
        "initialize" => true,
        "tools_call" => {
            let Some(add) = tools.tools.iter().find(|t| t.tool == "add_numbers") else {
                eprintln!("conformance-client: the server offers no add_numbers tool");
                return false;
            };
            call(m, &add.name, json!({"a": 5, "b": 3})).await
        }
        _ => {
            let mut ok = true;
            for t in &tools.tools {
                let required = t.input_schema.get("required").and_then(Value::as_array).map(|r| !r.is_empty()).unwrap_or(false);
                if !required {
                    ok &= call(m, &t.name, json!({})).await;
                }
            }
            ok
        }
    }
}

async fn call(m: &Manager, name: &str, args: Value) -> bool {
    match m.call_tool(name, args.as_object().cloned(), None).await {
        Ok(out) => {
            eprintln!("conformance-client: {name} -> {}", out.text);
            !out.is_error
        }
        Err(e) => {
            eprintln!("conformance-client: {name} failed: {e}");
            false
        }
    }
}
