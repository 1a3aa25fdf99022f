//! "Copy to…" / "Move to…" in the app: the preview of what the target file
//! will hold, a clear refusal when the target client cannot express the
//! server, and which clients must be restarted to see a change.

use std::collections::HashMap;

use serde_json::json;
use switchboard_engine::engine::Engine;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::ManagerOptions;

fn host() -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let cursor = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(
        &cursor,
        serde_json::to_string_pretty(&json!({ "mcpServers": {
            "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": { "GITHUB_TOKEN": "${env:GITHUB_TOKEN}" } },
            "legacy": { "url": "https://legacy.example.com/sse", "type": "sse" }
        } }))
        .unwrap(),
    )
    .unwrap();
    let vars: HashMap<String, String> =
        [("HOME".to_string(), home.to_string_lossy().to_string())].into();
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars,
        system_root: home.join("sys"),
    };
    (dir, host)
}

#[tokio::test]
async fn the_preview_is_the_target_clients_entry_and_a_refusal_says_why() {
    let (_dir, host) = host();
    let engine = Engine::new(
        host.clone(),
        ManagerOptions {
            cache_path: None,
            process_records: None,
            ..ManagerOptions::default()
        },
        vec![],
    );
    engine.rediscover();

    let plan = engine
        .plan_copy("github", "cursor-user", "claude-desktop")
        .unwrap();
    assert!(plan.refusal.is_none(), "{plan:?}");
    let entry = plan.entry.clone().unwrap();
    assert!(
        entry.contains("\"command\": \"npx\"") && entry.contains("server-github"),
        "{entry}"
    );
    assert_eq!(plan.client, "Claude Desktop");
    assert!(
        plan.restart_hint
            .as_deref()
            .is_some_and(|h| h.contains("only when it starts")),
        "{plan:?}"
    );
    assert!(!plan.name_taken);

    // Cursor reloads its file by itself: no restart notice.
    let back = engine
        .plan_copy("github", "cursor-user", "cursor-user")
        .unwrap();
    assert!(back.name_taken && back.restart_hint.is_none(), "{back:?}");

    // Codex has no SSE transport.
    let sse = engine
        .plan_copy("legacy", "cursor-user", "codex-user")
        .unwrap();
    assert!(sse.entry.is_none(), "{sse:?}");
    let why = sse.refusal.unwrap();
    assert!(why.starts_with("Codex CLI cannot hold \"legacy\""), "{why}");

    // What the preview showed is what is written.
    engine
        .copy_server("github", "cursor-user", "claude-desktop", false)
        .await
        .unwrap();
    let written =
        std::fs::read_to_string(host.home.join(".config/Claude/claude_desktop_config.json"))
            .unwrap();
    let v: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        v["mcpServers"]["github"]["args"][1],
        "@modelcontextprotocol/server-github"
    );
    let src = engine.snapshot();
    assert!(src.source("claude-desktop").unwrap().restart_hint.is_some());
    assert!(src.source("cursor-user").unwrap().restart_hint.is_none());
    engine.shutdown().await;
}
