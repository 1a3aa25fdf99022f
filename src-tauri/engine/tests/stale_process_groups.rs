//! No process is orphaned, the start-up sweep: a manager started with a records folder ends
//! the process groups a dead Switchboard recorded there — a leader whose
//! start time matches, and the members of a leaderless group that carry the
//! dead owner's marker — and leaves alone a pid whose start time does not
//! match, an unmarked process, and everything recorded by a live owner.
#![cfg(target_os = "linux")]

use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use switchboard_engine::manager::orphans::{proc_stat, ProcessId, Record, OWNER_VAR};
use switchboard_engine::manager::{Manager, ManagerOptions};
use switchboard_tests::killed;

fn id_of(pid: u32) -> ProcessId {
    ProcessId {
        pid,
        start: proc_stat(pid).expect("process is running").start,
    }
}

/// `sleep 1000`, leading its own process group.
fn group() -> Child {
    Command::new("sleep")
        .arg("1000")
        .process_group(0)
        .spawn()
        .unwrap()
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap()
        .trim()
        .to_string()
}

/// What the test started: killed and reaped on the way out, pass or fail.
#[derive(Default)]
struct Started {
    children: Vec<Child>,
    /// Grandchildren (not ours to reap).
    others: Vec<u32>,
}

impl Started {
    fn add(&mut self, c: Child) -> u32 {
        let pid = c.id();
        self.children.push(c);
        pid
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        for p in &self.others {
            unsafe {
                libc::kill(*p as i32, libc::SIGKILL);
            }
        }
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[tokio::test]
async fn a_dead_owners_groups_are_ended_at_start() -> anyhow::Result<()> {
    let records = tempfile::tempdir()?;
    let mut started = Started::default();

    // A Switchboard that ran and died (its pid may be reused by anyone now).
    let mut dead = Command::new("sleep").arg("1000").spawn()?;
    let dead_owner = id_of(dead.id());
    let _ = dead.kill();
    dead.wait()?;

    // Its server, still running: the leader's start time matches the record.
    let ours = started.add(group());
    // A group whose recorded start time is wrong: the pid was reused.
    let reused = started.add(group());

    // A group whose leader is gone (the parent-death signal took it) with two
    // members left: one carries the dead owner's marker, one does not.
    let leader = started.add(Command::new("sh")
        .args(["-c", "sleep 1000 >/dev/null & echo $!; env -u \"$0\" sleep 1000 >/dev/null & echo $!; read _", OWNER_VAR])
        .env(OWNER_VAR, dead_owner.to_string())
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?);
    let remnant = id_of(leader);
    let sh = started.children.last_mut().unwrap();
    let mut lines = std::io::BufReader::new(sh.stdout.take().unwrap()).lines();
    let marked: u32 = lines.next().unwrap()?.parse()?;
    let unmarked: u32 = lines.next().unwrap()?.parse()?;
    started.others.extend([marked, unmarked]);
    sh.stdin.take().unwrap().write_all(b"\n")?;
    sh.wait()?;

    Record {
        boot: boot_id(),
        owner: dead_owner,
        groups: vec![
            ProcessId {
                pid: reused,
                start: id_of(reused).start + 1,
            },
            id_of(ours),
            remnant,
        ],
    }
    .write_in(records.path())?;

    // A live owner (another Switchboard beside us) and its server.
    let live = started.add(Command::new("sleep").arg("1000").spawn()?);
    let theirs = started.add(group());
    Record {
        boot: boot_id(),
        owner: id_of(live),
        groups: vec![id_of(theirs)],
    }
    .write_in(records.path())?;

    let _m = Manager::new(ManagerOptions {
        process_records: Some(records.path().to_path_buf()),
        ..ManagerOptions::default()
    });

    let until = Instant::now() + Duration::from_secs(5);
    while !killed(ours) || !killed(marked) {
        assert!(
            Instant::now() < until,
            "the dead owner's groups still run 5 s after a manager started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The sweep ran to its end inside `Manager::new`, so any kill it sent has landed.
    assert!(
        !killed(reused),
        "a group recorded with another start time (a reused pid) was killed"
    );
    assert!(
        !killed(unmarked),
        "a process without the dead owner's marker was killed"
    );
    assert!(!killed(theirs), "a live owner's group was killed");
    assert!(
        !records.path().join(Record::file_name(dead_owner)).exists(),
        "the dead owner's record is removed"
    );
    assert!(
        records.path().join(Record::file_name(id_of(live))).exists(),
        "the live owner's record is kept"
    );
    Ok(())
}
