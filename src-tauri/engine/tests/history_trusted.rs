//! Undo in a trusted project folder: giving a server back its earlier
//! definition through Switchboard is the user's own change, so it runs as
//! restored instead of being held as "changed since you trusted this folder".

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use switchboard_engine::config::ServerDef;
use switchboard_engine::engine::Engine;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::writer::edit::ServerEdit;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undoing_an_edit_in_a_trusted_folder_leaves_the_server_trusted() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let home = dir.path().join("home");
    let project = home.join("code/webapp");
    std::fs::create_dir_all(project.join(".cursor"))?;
    let project = std::fs::canonicalize(&project)?;
    let file = project.join(".cursor/mcp.json");
    let original = serde_json::to_string_pretty(
        &json!({ "mcpServers": { "two": { "command": "two-mcp", "args": ["--port", "1"] } } }),
    )? + "\n";
    std::fs::write(&file, &original)?;
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
        system_root: dir.path().join("sys"),
    };
    let opts = ManagerOptions {
        cache_path: None,
        home: home.clone(),
        grace: Duration::from_millis(200),
        ..ManagerOptions::default()
    };
    let engine = Arc::new(Engine::new(host, opts, vec![]));
    engine.add_project(&project, true).await?;

    let source = format!("cursor-project@{}", project.display());
    let held = |e: &Engine| {
        e.snapshot()
            .server("two")
            .and_then(|s| s.winner.held.clone())
    };
    let mut def = ServerDef::stdio("two", "two-mcp", &["--port", "2"]);
    def.enabled = true;
    engine
        .edit(
            &source,
            ServerEdit::Update {
                name: "two".into(),
                def,
            },
        )
        .await?;
    assert!(
        held(&engine).is_none(),
        "an edit made in Switchboard is trusted as written"
    );

    let edit = engine
        .history()
        .into_iter()
        .find(|e| e.files.iter().any(|f| f.path == file))
        .expect("the edit is in the history");
    engine.undo(Some(edit.id)).await?;
    assert_eq!(
        std::fs::read_to_string(&file)?,
        original,
        "undo gives the file back byte for byte"
    );
    assert!(
        held(&engine).is_none(),
        "the restored server is trusted as restored, not held: {:?}",
        held(&engine)
    );
    engine.shutdown().await;
    Ok(())
}
