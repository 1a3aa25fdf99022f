//! How much the call journal keeps (Settings → Activity, `journal` in
//! settings.json): saved from the app, checked (each at least 1, the field
//! named, nothing written otherwise), and applied to the open journal at
//! once, whether saved by the engine or edited by hand in the file.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use switchboard_engine::engine::Engine;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::journal::{Entry, Filter, Kind, Via};
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::settings::{settings_path, JournalSettings};

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn host(home: &std::path::Path) -> Host {
    Host {
        os: Os::Linux,
        home: home.to_path_buf(),
        vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
        system_root: home.join("sys"),
    }
}

fn days_ago(days: u64) -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    (now - Duration::from_secs(days * 86_400)).as_millis() as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_are_checked_saved_and_applied_at_once_also_after_a_hand_edit() -> anyhow::Result<()>
{
    let dir = tempfile::tempdir()?;
    let host = host(dir.path());
    let settings = settings_path(&host);
    std::fs::create_dir_all(settings.parent().unwrap())?;
    // A key the journal's settings must leave alone.
    std::fs::write(
        &settings,
        r#"{ "keepInTray": false, "somethingNewer": [1, 2] }"#,
    )?;
    let opts = ManagerOptions {
        cache_path: None,
        home: host.home.clone(),
        ..ManagerOptions::default()
    };
    let engine = Arc::new(Engine::new(host.clone(), opts, vec![]));
    let journal = engine.manager().open_journal(&host, &engine.settings());
    // Calls 20 and 10 days old, and one of now.
    for (i, age) in [20, 10, 0].into_iter().enumerate() {
        let mut e = Entry::new(Via::App, "alpha", Kind::Tool, format!("t{i}"));
        e.time = days_ago(age);
        journal.record(e);
    }
    journal.flush();
    assert_eq!(
        journal.count(&Filter::default())?,
        3,
        "30 days keep all three"
    );

    // Zero is refused, naming the field; nothing is written.
    let before = std::fs::read(&settings)?;
    let err = engine
        .set_journal_limits(JournalSettings {
            keep_days: 0,
            keep_mb: 200,
        })
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("journal.keepDays: must be at least 1"),
        "{err}"
    );
    assert_eq!(std::fs::read(&settings)?, before, "nothing written");

    // Saved from Settings: in the file exactly, the other keys kept, and
    // the 20-day-old call is gone at once.
    engine
        .set_journal_limits(JournalSettings {
            keep_days: 15,
            keep_mb: 50,
        })
        .await?;
    let saved: Value = serde_json::from_slice(&std::fs::read(&settings)?)?;
    assert_eq!(
        saved["journal"],
        json!({ "keepDays": 15, "keepMb": 50 }),
        "{saved}"
    );
    assert_eq!(saved["keepInTray"], json!(false), "{saved}");
    assert_eq!(
        saved["somethingNewer"],
        json!([1, 2]),
        "an unknown key is kept: {saved}"
    );
    until("the call older than 15 days is pruned", || {
        journal.count(&Filter::default()).ok() == Some(2)
    })
    .await;

    // By hand in the file, with the watcher running: followed too.
    let _events = engine.watch().await?;
    let mut edited = saved.clone();
    edited["journal"]["keepDays"] = json!(5);
    std::fs::write(&settings, serde_json::to_string_pretty(&edited)?)?;
    until(
        "the call older than 5 days is pruned after the hand edit",
        || journal.count(&Filter::default()).ok() == Some(1),
    )
    .await;
    assert_eq!(engine.settings().journal.keep_days, 5);
    engine.manager().shutdown().await;
    Ok(())
}
