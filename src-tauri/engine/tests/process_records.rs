//! Process records: while a manager with a records folder runs, its record lists each
//! stdio server's process group with the leader's start time, the server
//! carries the owner marker, and a clean shutdown removes the record.
#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use switchboard_engine::config::ServerDef;
use switchboard_engine::events::ServerStatus;
use switchboard_engine::manager::orphans::{proc_stat, this_owner, ProcessId, Record, OWNER_VAR};
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};

#[tokio::test]
async fn a_run_records_its_groups_and_a_clean_exit_removes_the_record() -> anyhow::Result<()> {
    let records = tempfile::tempdir()?;
    let m = Manager::new(ManagerOptions {
        process_records: Some(records.path().to_path_buf()),
        grace: Duration::from_millis(300),
        ..ManagerOptions::default()
    });
    let bin = switchboard_tests::fixture_server_path();
    m.start(vec![Wanted::new(ServerDef::stdio(
        "fx",
        bin.to_str().unwrap(),
        &["--name", "fx"],
    ))])
    .await;
    let until = Instant::now() + Duration::from_secs(20);
    while m.status("fx") != Some(ServerStatus::Connected) {
        assert!(
            Instant::now() < until,
            "fx never connected: {:?}",
            m.status("fx")
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = m
        .state("fx")
        .and_then(|s| s.pid)
        .expect("a stdio server has a pid");
    let leader = ProcessId {
        pid,
        start: proc_stat(pid).expect("server runs").start,
    };

    let file = records.path().join(Record::file_name(this_owner()));
    let record = Record::parse(&std::fs::read_to_string(&file)?).expect("a record");
    assert_eq!(record.owner, this_owner());
    assert_eq!(
        record.groups,
        vec![leader],
        "the record lists the server's group with its leader's start time"
    );
    let environ = std::fs::read(format!("/proc/{pid}/environ"))?;
    let marker = format!("{OWNER_VAR}={}", this_owner());
    assert!(
        environ.split(|b| *b == 0).any(|v| v == marker.as_bytes()),
        "the server carries {marker}"
    );

    m.shutdown().await;
    assert!(!file.exists(), "a clean shutdown removes the record");
    Ok(())
}
