//! Profiles at the gateway, in process: a profile's gateway serves exactly
//! its servers and tools; changing the profile, or switching the active
//! profile that the aggregate (`/mcp`) serves, reaches open sessions at
//! once with list_changed; a deleted profile serves nothing. And the tokens
//! Switchboard shows per tool are what a second, independent o200k_base
//! implementation (tiktoken-rs) counts in the definition a client received.
#![allow(deprecated)]

use std::time::Duration;

use rmcp::model::*;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;
use switchboard_engine::engine::Engine;
use switchboard_engine::gateway::{switches, Gateway, GatewayOptions};
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::profile::{ProfileChange, ToolRule};
use tokio::sync::mpsc;

const T: Duration = Duration::from_secs(20);

#[derive(Clone)]
struct Recorder(mpsc::UnboundedSender<()>);

impl ClientHandler for Recorder {
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

type Client = RunningService<RoleClient, Recorder>;

async fn tools(c: &Client) -> Vec<Tool> {
    c.list_all_tools().await.unwrap()
}

async fn names(c: &Client) -> Vec<String> {
    let mut n: Vec<String> = tools(c)
        .await
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    n.sort();
    n
}

/// List after each list_changed until `ok` holds.
async fn until(
    c: &Client,
    rx: &mut mpsc::UnboundedReceiver<()>,
    what: &str,
    ok: impl Fn(&[String]) -> bool,
) {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(())) => {
                if ok(&names(c).await) {
                    return;
                }
            }
            _ => panic!(
                "{what}: no list_changed leading there within {T:?}; now {:?}",
                names(c).await
            ),
        }
    }
}

async fn open(gateway: &Gateway) -> (Client, mpsc::UnboundedReceiver<()>) {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let session = gateway.session();
    tokio::spawn(async move {
        if let Ok(running) = session.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let (tx, rx) = mpsc::unbounded_channel();
    (Recorder(tx).serve(client_end).await.unwrap(), rx)
}

#[tokio::test]
async fn a_profile_serves_its_servers_and_tools_and_follows_changes() {
    switchboard_engine::tokens::use_in_process();
    let fixture = switchboard_tests::fixture_server_path();
    let home = switchboard_tests::TempHome::with_servers(json!({
        "fx": { "command": fixture, "args": ["--name", "fx"] },
        "other": { "command": fixture, "args": ["--name", "other"] }
    }));
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
    assert_eq!(report.connected.len(), 2, "{report:?}");
    engine.rediscover();
    engine
        .change_profiles(ProfileChange::Create {
            name: "focus".into(),
            servers: vec!["fx".into()],
        })
        .await
        .unwrap();
    engine
        .change_profiles(ProfileChange::SetRule {
            name: "focus".into(),
            server: "fx".into(),
            rule: Some(ToolRule::Allow(vec!["echo".into(), "add".into()])),
        })
        .await
        .unwrap();
    let gateway = Gateway::new(
        engine.manager().clone(),
        switches::follow(&host),
        GatewayOptions::default(),
    );
    gateway.set_ready();
    let focus = gateway.for_profile("focus");
    let (fc, mut frx) = open(&focus).await;
    let (all, mut arx) = open(&gateway).await;
    assert_eq!(
        names(&fc).await,
        vec!["mcp_fx_add", "mcp_fx_echo"],
        "exactly the profile's tools"
    );
    let everything = names(&all).await;
    assert!(
        everything.contains(&"mcp_other_echo".into())
            && everything.contains(&"mcp_fx_sleep".into())
    );

    // Tokens: what the app and the CLI show per tool is what tiktoken-rs
    // counts in the definition exactly as the client received it.
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let costs = engine.tool_costs();
    let received = tools(&all).await;
    assert_eq!(costs.len(), received.len());
    for t in &received {
        let c = costs.iter().find(|c| c.name == t.name).unwrap();
        let text = switchboard_engine::tokens::definition_json(t);
        assert_eq!(
            c.tokens as usize,
            bpe.encode_ordinary(&text).len(),
            "tokens of {}: {text}",
            t.name
        );
        assert!(c.tokens > 5);
    }
    let views = engine.profiles();
    let view = views.iter().find(|v| v.name == "focus").unwrap();
    let want: u32 = costs
        .iter()
        .filter(|c| c.name == "mcp_fx_add" || c.name == "mcp_fx_echo")
        .map(|c| c.tokens)
        .sum();
    assert_eq!(view.tokens, want, "the profile's total is its tools' sum");
    assert_eq!(
        view.servers[0].left_out.len(),
        costs.iter().filter(|c| c.server == "fx").count() - 2
    );
    let all_view = &views[0];
    assert!(all_view.built_in && all_view.tokens == costs.iter().map(|c| c.tokens).sum::<u32>());

    // The profile changes: its session hears it, the aggregate's tools stay.
    engine
        .change_profiles(ProfileChange::Add {
            name: "focus".into(),
            servers: vec!["other".into()],
        })
        .await
        .unwrap();
    until(&fc, &mut frx, "other added", |n| {
        n.contains(&"mcp_other_echo".to_string())
    })
    .await;
    assert!(!names(&fc).await.contains(&"mcp_fx_sleep".to_string()));

    // Switching the active profile narrows the aggregate at once.
    engine.switch_profile("focus").await.unwrap();
    until(&all, &mut arx, "switched to focus", |n| {
        !n.contains(&"mcp_fx_sleep".to_string())
    })
    .await;
    assert_eq!(names(&all).await, names(&fc).await);
    engine.switch_profile("Everything").await.unwrap();
    until(&all, &mut arx, "switched back", |n| {
        n.contains(&"mcp_fx_sleep".to_string())
    })
    .await;

    // Deleted while open: the profile's session is told, and lists nothing.
    engine
        .change_profiles(ProfileChange::Delete {
            name: "focus".into(),
        })
        .await
        .unwrap();
    until(&fc, &mut frx, "deleted", |n| n.is_empty()).await;
    let e = fc
        .call_tool(CallToolRequestParams::new("mcp_fx_echo"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("Unknown tool"), "{e}");

    fc.cancel().await.unwrap();
    all.cancel().await.unwrap();
    engine.manager().shutdown().await;
}
