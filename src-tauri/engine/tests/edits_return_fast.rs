//! An edit returns once its file is written and the server list follows it;
//! starts, restarts and handshakes happen in the background. While one
//! server takes 20 s to answer `initialize`, an edit of another server
//! returns at once and the watcher keeps taking other programs' changes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_engine::config::ServerDef;
use switchboard_engine::engine::Engine;
use switchboard_engine::events::{EngineEvent, ServerStatus};
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::writer::edit::ServerEdit;

const WAIT: Duration = Duration::from_secs(15);
/// Far above what an edit takes, far below the slow handshake.
const EDIT_BOUND: Duration = Duration::from_secs(5);

fn servers_file(entries: serde_json::Value) -> String {
    serde_json::to_string_pretty(&json!({ "mcpServers": entries })).unwrap()
}

fn save_atomic(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + WAIT;
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_returns_while_another_server_is_still_shaking_hands() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let home = dir.path().to_path_buf();
    let bin = switchboard_tests::fixture_server_path()
        .to_string_lossy()
        .to_string();
    let own = home.join(".config/switchboard/servers.json");
    let cursor = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(own.parent().unwrap())?;
    std::fs::create_dir_all(cursor.parent().unwrap())?;
    let fixture = |name: &str, extra: &[&str]| {
        let mut args = vec!["--name".to_string(), name.to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        json!({ "command": bin, "args": args })
    };
    std::fs::write(
        &own,
        servers_file(json!({ "slow": fixture("slow", &[]), "quick": fixture("quick", &[]) })),
    )?;
    std::fs::write(
        &cursor,
        servers_file(json!({ "other": fixture("other", &[]) })),
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
        default_timeout: Duration::from_secs(60),
        ..ManagerOptions::default()
    };
    let engine = Arc::new(Engine::new(host, opts, vec![]));
    let mut events = engine.manager().subscribe();
    engine.start().await;
    let _watch = engine.watch().await?;
    let pid = |n: &str| engine.manager().state(n).and_then(|s| s.pid);
    let (pid_other, pid_quick) = (pid("other").unwrap(), pid("quick").unwrap());

    // Another program makes `slow` answer `initialize` only after 20 s: the
    // watcher restarts it, and its new handshake is under way.
    save_atomic(
        &own,
        &servers_file(
            json!({ "slow": fixture("slow", &["--init-delay-ms", "20000"]), "quick": fixture("quick", &[]) }),
        ),
    );
    until("slow to be reconnecting", || {
        engine.manager().status("slow") == Some(ServerStatus::Connecting)
    })
    .await;
    let slow_started = Instant::now();

    // An edit of `quick` returns at once, with the server list already new.
    let mut def = ServerDef::stdio("quick", &bin, &["--name", "quick", "--tool", "extra"]);
    def.enabled = true;
    let t = Instant::now();
    engine
        .edit(
            "switchboard",
            ServerEdit::Update {
                name: "quick".into(),
                def,
            },
        )
        .await?;
    let took = t.elapsed();
    println!(
        "edit of quick returned in {} ms while slow's handshake had {} ms to go",
        took.as_millis(),
        20_000u128.saturating_sub(slow_started.elapsed().as_millis())
    );
    assert!(
        took < EDIT_BOUND,
        "the edit waited {took:?} (for slow's handshake?)"
    );
    assert!(
        engine
            .snapshot()
            .server("quick")
            .unwrap()
            .winner
            .def
            .args
            .contains(&"extra".to_string()),
        "the server list follows the edit when it returns"
    );
    // The restart happens in the background and is reported when done.
    until("quick's new tool", || {
        engine.manager().tools().get("mcp_quick_extra").is_some()
    })
    .await;
    assert_ne!(
        pid("quick"),
        Some(pid_quick),
        "quick runs its new definition"
    );
    let end = tokio::time::Instant::now() + WAIT;
    loop {
        match tokio::time::timeout_at(end, events.recv())
            .await
            .expect("a Reconciled event for the edit")?
        {
            EngineEvent::Reconciled { report } if report.updated.contains(&"quick".to_string()) => {
                break
            }
            _ => {}
        }
    }

    // Meanwhile the watcher still takes other programs' changes.
    save_atomic(
        &cursor,
        &servers_file(json!({ "other": fixture("other", &[]), "ext": fixture("ext", &[]) })),
    );
    until("ext to appear and connect", || {
        engine
            .servers()
            .iter()
            .any(|s| s.discovered.name() == "ext")
            && engine.manager().status("ext") == Some(ServerStatus::Connected)
    })
    .await;
    assert_eq!(
        engine.manager().status("slow"),
        Some(ServerStatus::Connecting),
        "all of this happened during slow's handshake"
    );
    assert!(slow_started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        pid("other"),
        Some(pid_other),
        "an untouched server kept its process"
    );

    // Shutting down does not wait for the handshake either.
    let t = Instant::now();
    engine.shutdown().await;
    println!("shutdown took {} ms", t.elapsed().as_millis());
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "shutdown waited {:?}",
        t.elapsed()
    );
    Ok(())
}
