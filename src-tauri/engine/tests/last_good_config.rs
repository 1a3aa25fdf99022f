//! A client's file caught half-written (an editor's autosave, a save that
//! truncates first) keeps its last good servers running; the source says
//! why (file, line, column) and since when; when it parses again only the
//! servers whose definition changed restart. A file that is broken when
//! Switchboard starts has no last good version, and says so.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_engine::engine::Engine;
use switchboard_engine::events::{EngineEvent, ServerStatus};
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::{ManagerOptions, ReconcileReport};
use tokio::sync::broadcast;

const WAIT: Duration = Duration::from_secs(20);

fn fixture() -> String {
    switchboard_tests::fixture_server_path()
        .to_string_lossy()
        .to_string()
}

fn config(servers: &[(&str, &[&str])]) -> String {
    let m: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(n, extra)| {
            let mut args = vec!["--name".to_string(), n.to_string()];
            args.extend(extra.iter().map(|s| s.to_string()));
            (n.to_string(), json!({ "command": fixture(), "args": args }))
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "mcpServers": m })).unwrap()
}

/// A save that truncates the file and then writes it (no rename).
fn save_in_place(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

fn engine(home: &Path) -> Arc<Engine> {
    let host = Host {
        os: Os::Linux,
        home: home.to_path_buf(),
        vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
        system_root: home.join("sys"),
    };
    let opts = ManagerOptions {
        cache_path: None,
        home: home.to_path_buf(),
        grace: Duration::from_millis(200),
        ..ManagerOptions::default()
    };
    Arc::new(Engine::new(host, opts, vec![]))
}

async fn next_reconcile(rx: &mut broadcast::Receiver<EngineEvent>) -> ReconcileReport {
    let end = tokio::time::Instant::now() + WAIT;
    loop {
        match tokio::time::timeout_at(end, rx.recv())
            .await
            .expect("a reconcile within the timeout")
            .unwrap()
        {
            EngineEvent::Reconciled { report } => return report,
            _ => continue,
        }
    }
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    let end = tokio::time::Instant::now() + WAIT;
    while !f() {
        assert!(
            tokio::time::Instant::now() < end,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn pids(e: &Engine) -> HashMap<String, u32> {
    e.manager()
        .states()
        .into_iter()
        .filter_map(|s| Some((s.name.clone(), s.pid?)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_save_keeps_the_last_good_servers_and_only_changed_ones_restart(
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let home = dir.path().to_path_buf();
    let file = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap())?;
    std::fs::write(&file, config(&[("a", &[]), ("b", &[]), ("c", &[])]))?;
    let e = engine(&home);
    let mut rx = e.manager().subscribe();
    e.start().await;
    let _w = e.watch().await?;
    let before = pids(&e);
    assert_eq!(before.len(), 3, "{:?}", e.manager().states());

    // Half of the next version is on disk: it does not parse.
    let next = config(&[("a", &[]), ("b", &["--tools", "2"]), ("c", &[])]);
    save_in_place(&file, &next[..next.len() / 2]);
    let rep = next_reconcile(&mut rx).await;
    assert_eq!(
        (sorted(&rep.kept), rep.stopped.clone(), rep.updated.clone()),
        (
            vec!["a".to_string(), "b".into(), "c".into()],
            vec![],
            vec![]
        ),
        "{rep:?}"
    );
    assert_eq!(pids(&e), before, "nothing restarted");
    let d = e.snapshot();
    let src = d.source("cursor-user").unwrap();
    let err = src
        .parse_error
        .as_ref()
        .expect("the source says it does not parse");
    assert!(
        err.message.starts_with(&format!("{}:", file.display())),
        "{err:?}"
    );
    assert!(
        err.line.is_some() && err.column.is_some(),
        "line and column: {err:?}"
    );
    let saved_at = err.last_good_at.expect("the last good version's time");
    assert!(
        src.warnings
            .iter()
            .any(|w| w.contains("its servers keep running from the last good version")),
        "{:?}",
        src.warnings
    );
    assert_eq!(src.server_count, 3);
    for name in ["a", "b", "c"] {
        let s = d
            .server(name)
            .unwrap_or_else(|| panic!("{name} is still listed"));
        assert_eq!(
            s.winner.last_good_at,
            Some(saved_at),
            "{name} runs from the last good version"
        );
    }

    // Emptied (a save between truncating and writing): still the last good version.
    save_in_place(&file, "");
    let rep = next_reconcile(&mut rx).await;
    assert!(rep.stopped.is_empty() && rep.updated.is_empty(), "{rep:?}");
    let d = e.snapshot();
    let err = d
        .source("cursor-user")
        .unwrap()
        .parse_error
        .clone()
        .expect("an empty file counts as a save in progress");
    assert!(err.message.contains("the file is empty"), "{err:?}");
    assert_eq!(
        err.last_good_at,
        Some(saved_at),
        "still the same last good version"
    );
    assert_eq!(pids(&e), before);

    // The save completes: only b, whose definition changed, restarts.
    save_in_place(&file, &next);
    let rep = next_reconcile(&mut rx).await;
    assert_eq!(
        (
            sorted(&rep.kept),
            rep.updated.clone(),
            rep.stopped.clone(),
            rep.started.clone()
        ),
        (
            vec!["a".to_string(), "c".into()],
            vec!["b".to_string()],
            vec![],
            vec![]
        ),
        "{rep:?}"
    );
    until("b to reconnect", || {
        e.manager().status("b") == Some(ServerStatus::Connected) && pids(&e).contains_key("b")
    })
    .await;
    let after = pids(&e);
    assert_eq!(
        (after["a"], after["c"]),
        (before["a"], before["c"]),
        "a and c kept their processes"
    );
    assert_ne!(after["b"], before["b"], "b restarted");
    let d = e.snapshot();
    assert!(d.source("cursor-user").unwrap().parse_error.is_none());
    assert!(d.servers.iter().all(|s| s.winner.last_good_at.is_none()));
    e.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_broken_at_start_has_no_last_good_version_and_says_so() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let home = dir.path().to_path_buf();
    let file = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap())?;
    std::fs::write(
        &file,
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",,}\n",
    )?;
    let e = engine(&home);
    e.start().await;
    let _w = e.watch().await?;
    let d = e.snapshot();
    let src = d.source("cursor-user").unwrap();
    let err = src
        .parse_error
        .as_ref()
        .expect("the source says it does not parse");
    assert_eq!(
        (err.line, err.column, err.last_good_at),
        (Some(3), Some(26), None),
        "{err:?}"
    );
    assert!(
        src.warnings.iter().any(|w| w.starts_with(&format!("{}:3: cannot parse", file.display()))
            && w.contains("there is no last good version (it did not parse since Switchboard started), so none of its servers run until it parses")),
        "{:?}",
        src.warnings
    );
    assert!(d.servers.is_empty() && e.manager().states().is_empty());

    // Fixed: its servers start.
    std::fs::write(&file, config(&[("a", &[])]))?;
    until("a to connect", || {
        e.manager().status("a") == Some(ServerStatus::Connected)
    })
    .await;
    assert!(e
        .snapshot()
        .source("cursor-user")
        .unwrap()
        .parse_error
        .is_none());
    e.shutdown().await;
    Ok(())
}
