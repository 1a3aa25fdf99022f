//! The defaults Settings keeps for servers that set none of their own
//! (`serverDefaults` in settings.json): the engine applies them when it
//! starts and whenever they are saved, and refuses values no server could
//! work with, naming the field.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_engine::engine::Engine;
use switchboard_engine::events::ServerStatus;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::settings::{settings_path, ServerDefaults};

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn failed(engine: &Engine, name: &str) -> bool {
    matches!(
        engine.manager().status(name),
        Some(ServerStatus::Failed { .. })
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_defaults_apply_at_start_and_when_changed_and_bad_values_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    // A server that exits at once, so it is restarted as its policy says.
    let cursor = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(
        &cursor,
        json!({"mcpServers": {"crash": {"command": "sh", "args": ["-c", "exit 3"]}}}).to_string(),
    )
    .unwrap();
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars: [
            ("HOME".to_string(), home.to_string_lossy().to_string()),
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
        ]
        .into(),
        system_root: home.join("sys"),
    };
    let mut saved = ServerDefaults::default();
    saved.restart_policy.max_restart_attempts = 1;
    saved.restart_policy.initial_delay_ms = 100;
    saved.restart_policy.max_delay_ms = 100;
    let settings = settings_path(&host);
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        serde_json::to_string_pretty(&json!({ "serverDefaults": saved })).unwrap(),
    )
    .unwrap();

    let opts = ManagerOptions {
        cache_path: None,
        home: home.clone(),
        grace: Duration::from_millis(200),
        ..ManagerOptions::default()
    };
    let engine = Arc::new(Engine::new(host, opts, vec![]));
    engine.start().await;
    until("crash fails after its one restart", || {
        failed(&engine, "crash")
    })
    .await;
    assert_eq!(
        engine.manager().state("crash").unwrap().restarts,
        1,
        "the saved policy (1 restart) applied, not the built-in 5"
    );

    // Saved from Settings: the next start uses it.
    let mut more = saved;
    more.restart_policy.max_restart_attempts = 2;
    engine.set_server_defaults(more).await.unwrap();
    assert_eq!(engine.settings().server_defaults, more);
    engine.manager().restart("crash").await.ok();
    // A restart by hand starts the count over; it fails after two now.
    until("crash fails again after 2 restarts", || {
        failed(&engine, "crash") && engine.manager().state("crash").unwrap().restarts == 2
    })
    .await;

    // Out of range: refused with the field's name, nothing written.
    let before = std::fs::read(&settings).unwrap();
    let mut bad = more;
    bad.timeout_ms = 0;
    let err = engine.set_server_defaults(bad).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("Timeout: 0 s is outside 1–600 seconds"),
        "{err}"
    );
    assert_eq!(std::fs::read(&settings).unwrap(), before);
    engine.manager().shutdown().await;
}

/// A hand edit that no server could work with (a timeout of 0) is not
/// applied: the engine keeps its own defaults.
#[tokio::test]
async fn out_of_range_defaults_in_the_file_are_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
        system_root: home.join("sys"),
    };
    let settings = settings_path(&host);
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, r#"{"serverDefaults": {"timeoutMs": 0}}"#).unwrap();
    let opts = ManagerOptions {
        cache_path: None,
        home: home.clone(),
        default_timeout: Duration::from_secs(7),
        ..ManagerOptions::default()
    };
    let engine = Engine::new(host, opts, vec![]);
    assert_eq!(
        engine.settings().server_defaults.timeout_ms,
        0,
        "read as written"
    );
    assert_eq!(
        engine.manager().defaults().timeout,
        Duration::from_secs(7),
        "a timeout of 0 is not used"
    );
}
