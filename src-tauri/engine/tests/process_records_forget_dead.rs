//! Process records: a server's group that died on its own (and is not
//! restarted) leaves the record within a few seconds, while the manager keeps
//! running: the keepers check the listed groups once a second, also after
//! the group was listed by a start that found them all idle.
#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use switchboard_engine::config::{RestartPolicy, ServerDef};
use switchboard_engine::events::ServerStatus;
use switchboard_engine::manager::orphans::{this_owner, Record};
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};

#[tokio::test]
async fn a_dead_group_leaves_the_record_while_the_manager_runs() -> anyhow::Result<()> {
    let records = tempfile::tempdir()?;
    let m = Manager::new(ManagerOptions {
        process_records: Some(records.path().to_path_buf()),
        grace: Duration::from_millis(300),
        restart_policy: RestartPolicy {
            max_restart_attempts: 0,
            ..RestartPolicy::default()
        },
        ..ManagerOptions::default()
    });
    let bin = switchboard_tests::fixture_server_path();
    let r = m
        .start(vec![Wanted::new(ServerDef::stdio(
            "fx",
            bin.to_str().unwrap(),
            &["--name", "fx"],
        ))])
        .await;
    assert_eq!(r.connected, ["fx"], "{r:?}");
    let pid = m.state("fx").and_then(|s| s.pid).expect("a pid");
    let file = records.path().join(Record::file_name(this_owner()));
    let listed = |pid: u32| {
        std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| Record::parse(&t))
            .is_some_and(|r| r.groups.iter().any(|g| g.pid == pid))
    };
    assert!(listed(pid), "the running server's group is recorded");

    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )?;
    let until = Instant::now() + Duration::from_secs(10);
    while !matches!(m.status("fx"), Some(ServerStatus::Failed { .. })) {
        assert!(
            Instant::now() < until,
            "fx never failed: {:?}",
            m.status("fx")
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let until = Instant::now() + Duration::from_secs(5);
    while listed(pid) {
        assert!(
            Instant::now() < until,
            "the dead group {pid} is still in the record 5 s after it died"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    m.shutdown().await;
    Ok(())
}
