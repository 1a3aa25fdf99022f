//! The `Engine` facade the app uses: with the watcher on, an edit made in
//! another program reaches its server list and the running set, and an edit
//! through the engine is applied once, without restarting other servers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_engine::config::ServerDef;
use switchboard_engine::engine::Engine;
use switchboard_engine::events::ServerStatus;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::writer::edit::ServerEdit;

fn cursor_file(entries: serde_json::Value) -> String {
    serde_json::to_string_pretty(&json!({ "mcpServers": entries })).unwrap()
}

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(15);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_edits_and_own_edits_reach_the_engine() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let home = dir.path().to_path_buf();
    let bin = switchboard_tests::fixture_server_path()
        .to_string_lossy()
        .to_string();
    let cursor = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap())?;
    std::fs::write(
        &cursor,
        cursor_file(json!({ "one": {"command": bin, "args": ["--name", "one"]} })),
    )?;
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
        system_root: home.join("sys"),
    };
    let opts = ManagerOptions {
        cache_path: None,
        home: home.clone(),
        grace: Duration::from_millis(200),
        ..ManagerOptions::default()
    };
    let engine = Arc::new(Engine::new(host, opts, vec![]));
    engine.start().await;
    let _events = engine.watch().await?;
    let pid_one = engine.manager().state("one").unwrap().pid.unwrap();

    // Another program adds a server to Cursor's file (atomic save by rename).
    let tmp = home.join(".cursor/.mcp.json.tmp");
    std::fs::write(
        &tmp,
        cursor_file(json!({
            "one": {"command": bin, "args": ["--name", "one"]},
            "two": {"command": bin, "args": ["--name", "two"]}
        })),
    )?;
    std::fs::rename(&tmp, &cursor)?;
    until("two to appear and connect", || {
        engine
            .servers()
            .iter()
            .any(|s| s.discovered.name() == "two")
            && engine.manager().status("two") == Some(ServerStatus::Connected)
    })
    .await;
    assert_eq!(
        engine.manager().state("one").unwrap().pid,
        Some(pid_one),
        "one kept its process"
    );

    // An edit through the engine: applied once, the other server untouched.
    let pid_two = engine.manager().state("two").unwrap().pid.unwrap();
    let mut def = ServerDef::stdio("one", &bin, &["--name", "one", "--tool", "extra"]);
    def.enabled = true;
    engine
        .edit(
            "cursor-user",
            ServerEdit::Update {
                name: "one".into(),
                def,
            },
        )
        .await?;
    until("one's new tool", || {
        engine.manager().tools().get("mcp_one_extra").is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        engine.manager().state("two").unwrap().pid,
        Some(pid_two),
        "two was not restarted"
    );
    assert!(std::fs::read_to_string(&cursor)?.contains("extra"));
    engine.shutdown().await;
    Ok(())
}
