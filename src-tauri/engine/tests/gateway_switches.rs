//! The engine API the app uses for the gateway's switches: a tool switched
//! off with `Engine::set_tool_enabled`, or a server excluded with
//! `Engine::set_gateway_excluded`, leaves the lists of an open gateway
//! session at once, with list_changed; switched on again, it comes back.
//! In process: the gateway session runs over an in-memory pipe.
#![allow(deprecated)]

use std::collections::HashMap;
use std::time::Duration;

use rmcp::model::*;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;
use switchboard_engine::engine::Engine;
use switchboard_engine::gateway::{switches, Gateway, GatewayOptions};
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::ManagerOptions;
use tokio::sync::mpsc;

const T: Duration = Duration::from_secs(20);

#[derive(Clone)]
struct Recorder(mpsc::UnboundedSender<&'static str>);

impl ClientHandler for Recorder {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send("tools");
    }
    async fn on_resource_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send("resources");
    }
    async fn on_prompt_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send("prompts");
    }
}

async fn names(c: &RunningService<RoleClient, Recorder>) -> Vec<String> {
    c.list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// List after each `kind` notification until `ok` holds.
async fn until(
    c: &RunningService<RoleClient, Recorder>,
    rx: &mut mpsc::UnboundedReceiver<&'static str>,
    kind: &str,
    ok: impl Fn(&[String]) -> bool,
) {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(k)) if k == kind => {
                if ok(&names(c).await) {
                    return;
                }
            }
            Ok(Some(_)) => {}
            _ => panic!(
                "no {kind} list_changed leading to the expected list within {T:?}; now {:?}",
                names(c).await
            ),
        }
    }
}

#[tokio::test]
async fn engine_switches_reach_an_open_session() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let fixture = switchboard_tests::fixture_server_path();
    let own = home.join(".config/switchboard/servers.json");
    std::fs::create_dir_all(own.parent().unwrap()).unwrap();
    std::fs::write(
        &own,
        json!({ "mcpServers": {
            "fx": { "command": fixture, "args": ["--name", "fx", "--resources"] },
            "other": { "command": fixture, "args": ["--name", "other"] }
        }})
        .to_string(),
    )
    .unwrap();
    let vars: HashMap<String, String> = [
        ("HOME".to_string(), home.to_string_lossy().to_string()),
        (
            "PATH".to_string(),
            std::env::var("PATH").unwrap_or_default(),
        ),
    ]
    .into();
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars,
        system_root: home.join("sys"),
    };
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
    assert_eq!(report.connected.len(), 2, "{report:?}");
    let gateway = Gateway::new(
        engine.manager().clone(),
        switches::follow(&host),
        GatewayOptions::default(),
    );
    gateway.set_ready();
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let session = gateway.session();
    tokio::spawn(async move {
        if let Ok(running) = session.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = Recorder(tx).serve(client_end).await.unwrap();
    let now = names(&client).await;
    assert!(
        now.contains(&"mcp_fx_echo".into()) && now.contains(&"mcp_other_echo".into()),
        "{now:?}"
    );

    engine.set_tool_enabled("fx", "echo", false).await.unwrap();
    until(&client, &mut rx, "tools", |n| {
        !n.contains(&"mcp_fx_echo".to_string())
    })
    .await;
    assert!(engine.settings().disabled_tools["fx"] == vec!["echo".to_string()]);
    assert!(!gateway.tools().iter().any(|t| t.name == "mcp_fx_echo"));
    engine.set_tool_enabled("fx", "echo", true).await.unwrap();
    until(&client, &mut rx, "tools", |n| {
        n.contains(&"mcp_fx_echo".to_string())
    })
    .await;

    // A server left out of the gateway: its tools, resources and prompts go.
    engine.set_gateway_excluded("fx", true).await.unwrap();
    until(&client, &mut rx, "tools", |n| {
        !n.iter().any(|t| t.starts_with("mcp_fx_")) && n.contains(&"mcp_other_echo".to_string())
    })
    .await;
    assert!(!gateway.serves("fx") && gateway.serves("other"));
    assert!(client.list_all_resources().await.unwrap().is_empty());
    assert!(client.list_all_prompts().await.unwrap().is_empty());
    let e = client
        .read_resource(ReadResourceRequestParams::new(
            "switchboard://fx/fixture://greeting",
        ))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("no resource"), "{e}");
    // It still runs for the app.
    assert_eq!(
        engine.manager().status("fx"),
        Some(switchboard_engine::events::ServerStatus::Connected)
    );
    engine.set_gateway_excluded("fx", false).await.unwrap();
    until(&client, &mut rx, "tools", |n| {
        n.contains(&"mcp_fx_echo".to_string())
    })
    .await;
    assert_eq!(client.list_all_resources().await.unwrap().len(), 2);

    client.cancel().await.unwrap();
    engine.manager().shutdown().await;
}

/// The app's gateway status: who is connected (their `initialize` name and
/// version) and how often each tool was called, failures counted apart.
#[tokio::test]
async fn activity_shows_sessions_and_call_counts() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let fixture = switchboard_tests::fixture_server_path();
    let own = home.join(".config/switchboard/servers.json");
    std::fs::create_dir_all(own.parent().unwrap()).unwrap();
    std::fs::write(
        &own,
        json!({ "mcpServers": { "fx": { "command": fixture, "args": ["--name", "fx"] } } })
            .to_string(),
    )
    .unwrap();
    let vars: HashMap<String, String> = [
        ("HOME".to_string(), home.to_string_lossy().to_string()),
        (
            "PATH".to_string(),
            std::env::var("PATH").unwrap_or_default(),
        ),
    ]
    .into();
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars,
        system_root: home.join("sys"),
    };
    let engine = Engine::new(
        host.clone(),
        ManagerOptions {
            cache_path: None,
            process_records: None,
            ..ManagerOptions::default()
        },
        vec![],
    );
    engine.start().await;
    let gateway = Gateway::new(
        engine.manager().clone(),
        switches::follow(&host),
        GatewayOptions::default(),
    );
    gateway.set_ready();
    let mut changes = gateway.watch_activity();
    assert!(gateway.activity().sessions.is_empty());

    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let session = gateway.scoped("fx").session();
    tokio::spawn(async move {
        if let Ok(running) = session.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let info = ClientInfo::new(
        ClientCapabilities::default(),
        Implementation::new("activity-client", "9.8.7"),
    );
    let client = info.serve(client_end).await.unwrap();
    tokio::time::timeout(
        T,
        changes.wait_for(|_| !gateway.activity().sessions.is_empty()),
    )
    .await
    .unwrap()
    .unwrap();
    let s = &gateway.activity().sessions[0];
    assert_eq!(
        (s.client.as_str(), s.version.as_str(), s.server.as_deref()),
        ("activity-client", "9.8.7", Some("fx"))
    );

    let mut echo = CallToolRequestParams::new("echo");
    echo.arguments = json!({ "text": "hi" }).as_object().cloned();
    client.call_tool(echo.clone()).await.unwrap();
    client.call_tool(echo).await.unwrap();
    let _ = client.call_tool(CallToolRequestParams::new("fail")).await;
    let calls = gateway.activity().calls;
    let count = |t: &str| {
        calls
            .iter()
            .find(|c| c.server == "fx" && c.tool == t)
            .map(|c| (c.calls, c.errors))
    };
    assert_eq!(count("echo"), Some((2, 0)), "{calls:?}");
    assert_eq!(count("fail"), Some((1, 1)), "{calls:?}");
    assert_eq!(calls[0].tool, "echo", "most called first: {calls:?}");

    client.cancel().await.unwrap();
    tokio::time::timeout(
        T,
        changes.wait_for(|_| gateway.activity().sessions.is_empty()),
    )
    .await
    .expect("the closed session leaves the status")
    .unwrap();
    engine.manager().shutdown().await;
}
