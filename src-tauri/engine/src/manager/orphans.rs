//! No server outlives Switchboard, even when Switchboard itself is
//! killed with SIGKILL. Three layers, each covering what the one before
//! cannot:
//!
//! 1. Parent-death signal (Linux): every stdio server is forked from one
//!    thread that lives as long as the process (the keeper) with
//!    `PR_SET_PDEATHSIG(SIGKILL)`, so the kernel kills each group leader the
//!    moment Switchboard dies.
//! 2. Watchdog (Unix): a small `sh` in its own process group, deaf to
//!    INT/TERM/HUP/QUIT, reads `+PGID` / `-PGID` lines from a pipe only
//!    Switchboard holds. End of file means Switchboard is gone (crash or
//!    exit): it SIGKILLs every group still listed (grandchildren such as
//!    npx's node, which a parent-death signal does not reach) and exits.
//! 3. Records (Linux, when a folder is configured): one file per Switchboard
//!    process lists the groups it owns with each leader's start time. The
//!    next start ends the groups of records whose owner is dead: a leader
//!    whose start time matches, or (the leader already gone) the members of
//!    the group whose environment carries the dead owner's marker. A reused
//!    pid never matches either test.
//!
//! Groups are listed from the moment they are spawned until they are seen
//! dead (checked every second while any are listed, and at shutdown): a
//! living group's id cannot be reused, so a listed id always names our group.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, CommandWrapper};

/// Every server process (and what it starts) carries `SWITCHBOARD_OWNER=<owner key>`.
pub const OWNER_VAR: &str = "SWITCHBOARD_OWNER";

/// A process identified so that a reused pid never matches: pid plus start
/// time (clock ticks after boot, `/proc/PID/stat` field 22).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessId {
    pub pid: u32,
    pub start: u64,
}

impl std::fmt::Display for ProcessId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.pid, self.start)
    }
}

/// This process, as owner of the groups it starts.
pub fn this_owner() -> ProcessId {
    static ME: OnceLock<ProcessId> = OnceLock::new();
    *ME.get_or_init(|| {
        let pid = std::process::id();
        ProcessId {
            pid,
            start: proc_stat(pid).map(|s| s.start).unwrap_or(0),
        }
    })
}

/// The fields of `/proc/PID/stat` we use.
#[derive(Debug, Clone, Copy)]
pub struct ProcStat {
    pub state: char,
    pub pgrp: u32,
    pub start: u64,
}

impl ProcStat {
    fn dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

pub fn proc_stat(pid: u32) -> Option<ProcStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command (field 2) may hold spaces and parentheses; the rest starts after the last ") ".
    let f: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
    Some(ProcStat {
        state: f.first()?.chars().next()?,
        pgrp: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// What one Switchboard process records: which boot, who it is, and the
/// process groups (leader pid = group id, with its start time) it owns.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub boot: String,
    pub owner: ProcessId,
    pub groups: Vec<ProcessId>,
}

const RECORD_HEADER: &str = "switchboard process groups v1";

impl Record {
    /// The file this record lives in, inside the records folder.
    pub fn file_name(owner: ProcessId) -> String {
        format!("{owner}.groups")
    }

    pub fn render(&self) -> String {
        let mut s = format!(
            "{RECORD_HEADER}\nboot {}\nowner {} {}\n",
            self.boot, self.owner.pid, self.owner.start
        );
        for g in &self.groups {
            s.push_str(&format!("group {} {}\n", g.pid, g.start));
        }
        s
    }

    pub fn parse(text: &str) -> Option<Record> {
        let mut lines = text.lines();
        if lines.next()? != RECORD_HEADER {
            return None;
        }
        let (mut boot, mut owner, mut groups) = (None, None, vec![]);
        for line in lines {
            let f: Vec<&str> = line.split_whitespace().collect();
            let id = || {
                Some(ProcessId {
                    pid: f.get(1)?.parse().ok()?,
                    start: f.get(2)?.parse().ok()?,
                })
            };
            match f.first() {
                Some(&"boot") => boot = f.get(1).map(|s| s.to_string()),
                Some(&"owner") => owner = id(),
                Some(&"group") => groups.extend(id()),
                _ => {}
            }
        }
        Some(Record {
            boot: boot?,
            owner: owner?,
            groups,
        })
    }

    /// Write atomically (a reader never sees half a record).
    pub fn write_in(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(Self::file_name(self.owner));
        let tmp = dir.join(format!(".{}.tmp", Self::file_name(self.owner)));
        std::fs::write(&tmp, self.render())?;
        std::fs::rename(&tmp, &path)
    }
}

/// The groups this process owns and where they are announced.
struct Ledger {
    groups: Vec<ProcessId>,
    watchdog: Option<Watchdog>,
    /// This process's record file, once a records folder is configured.
    record: Option<PathBuf>,
}

static LEDGER: Mutex<Ledger> = Mutex::new(Ledger {
    groups: vec![],
    watchdog: None,
    record: None,
});

impl Ledger {
    fn adopt(&mut self, g: ProcessId) {
        self.groups.push(g);
        self.tell(&format!("+{}\n", g.pid));
        self.save();
    }

    /// Forget groups that are gone; true when any were.
    fn forget_dead(&mut self) -> bool {
        let (alive, dead): (Vec<ProcessId>, Vec<ProcessId>) = self
            .groups
            .iter()
            .partition(|g| super::connection::group_alive(g.pid));
        if dead.is_empty() {
            return false;
        }
        self.groups = alive;
        for g in dead {
            self.tell(&format!("-{}\n", g.pid));
        }
        self.save();
        true
    }

    /// One line to the watchdog, starting it (again) if it is not running.
    fn tell(&mut self, line: &str) {
        if let Some(w) = &mut self.watchdog {
            if w.stdin.write_all(line.as_bytes()).is_ok() {
                return;
            }
            // It died (someone killed it): reap it, start another with the whole list.
            let _ = w.child.kill();
            let _ = w.child.wait();
            self.watchdog = None;
        }
        if !self.groups.is_empty() {
            self.watchdog = Watchdog::start(&self.groups);
        }
    }

    /// The record file holds exactly the listed groups; none listed, no file.
    fn save(&self) {
        let Some(path) = &self.record else { return };
        if self.groups.is_empty() {
            let _ = std::fs::remove_file(path);
            return;
        }
        let record = Record {
            boot: boot_id(),
            owner: this_owner(),
            groups: self.groups.clone(),
        };
        if let Some(dir) = path.parent() {
            let _ = record.write_in(dir);
        }
    }
}

/// The watchdog's script: keep the list, and at end of input kill what is left.
const WATCHDOG: &str = r#"trap '' INT TERM HUP QUIT
groups=' '
while read -r line; do
  case $line in
    +*) groups="$groups${line#+} " ;;
    -*) g=${line#-}
        case $groups in *" $g "*) groups="${groups%% $g *} ${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
"#;

struct Watchdog {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
}

impl Watchdog {
    #[cfg(unix)]
    fn start(groups: &[ProcessId]) -> Option<Watchdog> {
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};
        // Its own group: a Ctrl-C or a kill of Switchboard's group does not reach it.
        // Null stdout/stderr: it must not hold Switchboard's output open after a crash.
        // The pipe's write end is close-on-exec, so no server inherits it and
        // end of file comes exactly when Switchboard is gone.
        let mut child = Command::new("/bin/sh")
            .args(["-c", WATCHDOG, "switchboard-watchdog"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok()?;
        let mut stdin = child.stdin.take()?;
        for g in groups {
            let _ = stdin.write_all(format!("+{}\n", g.pid).as_bytes());
        }
        Some(Watchdog { child, stdin })
    }

    #[cfg(not(unix))]
    fn start(_groups: &[ProcessId]) -> Option<Watchdog> {
        None
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The keeper: one thread that forks every server and otherwise checks once
/// a second which listed groups are gone. Linux sends the parent-death
/// signal when the *thread* that forked a child exits; tokio forks on
/// whatever thread polls the spawn (a blocking-pool thread ends after 10 s
/// idle, `block_in_place` retires workers, a runtime can be shut down while
/// the manager lives on), so forking here, on a thread that never ends,
/// makes the signal mean "Switchboard died" and nothing else.
fn keeper() -> Option<&'static Mutex<std::sync::mpsc::Sender<Job>>> {
    static KEEPER: OnceLock<Option<Mutex<std::sync::mpsc::Sender<Job>>>> = OnceLock::new();
    KEEPER
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("switchboard-process-keeper".into())
                .spawn(move || loop {
                    let listed = !LEDGER
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .groups
                        .is_empty();
                    let wait = if listed {
                        Duration::from_secs(1)
                    } else {
                        Duration::from_secs(3600)
                    };
                    match rx.recv_timeout(wait) {
                        Ok(job) => {
                            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                            LEDGER
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .forget_dead();
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

/// Run `spawn` (which starts a server through a `CommandWrap` carrying
/// [`DiesWithSwitchboard`]) on the keeper thread, inside the caller's tokio
/// runtime so the child's pipes belong to it.
pub async fn spawn_on_keeper<T: Send + 'static>(
    spawn: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _runtime = handle.enter();
        let _ = tx.send(spawn());
    });
    let job = match keeper() {
        Some(k) => match k.lock().unwrap_or_else(|e| e.into_inner()).send(job) {
            Ok(()) => None,
            Err(e) => Some(e.0),
        },
        None => Some(job),
    };
    // No keeper thread (could not be created): spawn here; the watchdog still covers it.
    if let Some(job) = job {
        job();
    }
    rx.await
        .unwrap_or_else(|_| Err(std::io::Error::other("starting the server panicked")))
}

/// Marks a stdio server as Switchboard's: its environment carries the owner
/// marker, Linux kills it when Switchboard dies, and (when it leads its own
/// process group) the group is listed with the watchdog and in the record.
#[derive(Debug, Clone, Copy)]
pub struct DiesWithSwitchboard;

impl CommandWrapper for DiesWithSwitchboard {
    fn pre_spawn(
        &mut self,
        command: &mut tokio::process::Command,
        _core: &CommandWrap,
    ) -> std::io::Result<()> {
        command.env(OWNER_VAR, this_owner().to_string());
        #[cfg(target_os = "linux")]
        {
            use nix::sys::prctl::set_pdeathsig;
            use nix::sys::signal::Signal;
            use nix::unistd::{getpid, getppid};
            let parent = getpid();
            // Safety: between fork and exec the closure makes only
            // async-signal-safe system calls (prctl, getppid).
            unsafe {
                command.pre_exec(move || {
                    set_pdeathsig(Signal::SIGKILL)?;
                    // Switchboard died between fork and prctl: no signal will ever come.
                    if getppid() != parent {
                        return Err(std::io::Error::other(
                            "Switchboard exited while starting the server",
                        ));
                    }
                    Ok(())
                });
            }
        }
        Ok(())
    }

    fn post_spawn(
        &mut self,
        _command: &mut tokio::process::Command,
        child: &mut tokio::process::Child,
        core: &CommandWrap,
    ) -> std::io::Result<()> {
        #[cfg(unix)]
        if core.has_wrap::<process_wrap::tokio::ProcessGroup>() {
            if let Some(pid) = child.id() {
                let start = proc_stat(pid).map(|s| s.start).unwrap_or(0);
                LEDGER
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .adopt(ProcessId { pid, start });
            }
        }
        #[cfg(not(unix))]
        let _ = (child, core);
        Ok(())
    }
}

/// Record this process's groups in `dir` from now on, after ending the
/// groups of records in `dir` whose owner is dead (once per folder and
/// process). Linux only: elsewhere there is no start time to check a pid by.
pub fn start_records(dir: &Path) {
    if !cfg!(target_os = "linux") {
        return;
    }
    static DONE: Mutex<Vec<PathBuf>> = Mutex::new(vec![]);
    {
        let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
        if done.iter().any(|d| d == dir) {
            return;
        }
        done.push(dir.to_path_buf());
    }
    end_stale(dir);
    let mut ledger = LEDGER.lock().unwrap_or_else(|e| e.into_inner());
    // A second folder (a second manager configured elsewhere) is swept, but
    // the record stays in the first.
    if ledger.record.is_none() {
        ledger.record = Some(dir.join(Record::file_name(this_owner())));
        ledger.save();
    }
}

/// End what the dead owners of records in `dir` left running, and remove
/// their records. Records of living owners (an app beside this CLI) are
/// left alone.
pub fn end_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let boot = boot_id();
    let me = this_owner();
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().and_then(|x| x.to_str()) != Some("groups") {
            continue;
        }
        let Some(record) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| Record::parse(&t))
        else {
            continue;
        };
        if record.owner == me || (record.boot == boot && alive(record.owner)) {
            continue;
        }
        // From an earlier boot, everything it listed died with that boot.
        if record.boot == boot {
            for g in &record.groups {
                end_group(*g, record.owner);
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

fn alive(p: ProcessId) -> bool {
    proc_stat(p.pid).is_some_and(|s| !s.dead() && s.start == p.start)
}

/// Kill one recorded group of a dead owner, only if it is provably the one recorded.
fn end_group(g: ProcessId, owner: ProcessId) {
    match proc_stat(g.pid) {
        // The leader itself, by its start time.
        Some(s) if s.start == g.start => super::connection::kill_group(Some(g.pid)),
        // The pid now belongs to another process: our group is long gone.
        Some(_) => {}
        // The leader is gone (the parent-death signal took it), maybe not its
        // children: a member of the group is ours if it carries the owner's marker.
        None => {
            let marker = format!("{OWNER_VAR}={owner}");
            let Ok(dir) = std::fs::read_dir("/proc") else {
                return;
            };
            for e in dir.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                    continue;
                };
                let Some(s) = proc_stat(pid) else { continue };
                if s.pgrp != g.pid || s.start < g.start {
                    continue;
                }
                let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
                    continue;
                };
                if env.split(|b| *b == 0).any(|v| v == marker.as_bytes()) {
                    #[cfg(unix)]
                    if let Some(p) = super::process::nix_pid(pid) {
                        let _ = nix::sys::signal::kill(p, nix::sys::signal::Signal::SIGKILL);
                    }
                }
            }
        }
    }
}

/// At a manager's shutdown: forget the groups it ended (its teardown waits
/// until each is reaped), so with none left this process's record goes. One
/// pass, no waiting: other managers in this process may still run servers.
pub async fn settle() {
    LEDGER
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .forget_dead();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let r = Record {
            boot: "b-1".into(),
            owner: ProcessId { pid: 10, start: 20 },
            groups: vec![
                ProcessId { pid: 30, start: 40 },
                ProcessId { pid: 31, start: 41 },
            ],
        };
        assert_eq!(Record::parse(&r.render()), Some(r.clone()));
        assert_eq!(
            Record::parse("something else\nboot x\nowner 1 2\n"),
            None,
            "a file without the header is not a record"
        );
    }

    #[test]
    fn stat_reads_this_process() {
        let s = proc_stat(std::process::id()).expect("own stat");
        assert!(s.start > 0 && s.pgrp > 0 && !s.dead(), "{s:?}");
    }

    /// The watchdog kills the groups still listed at end of input, not the
    /// ones taken off the list.
    #[cfg(unix)]
    #[test]
    fn watchdog_kills_listed_groups_at_end_of_input() {
        use std::os::unix::process::CommandExt;
        let group = || {
            std::process::Command::new("sleep")
                .arg("1000")
                .process_group(0)
                .spawn()
                .unwrap()
        };
        let (mut listed, mut removed) = (group(), group());
        let mut w = Watchdog::start(&[ProcessId {
            pid: removed.id(),
            start: 0,
        }])
        .expect("watchdog");
        // Taken off the list: the first entry and the last one.
        w.stdin
            .write_all(
                format!("+{}\n+999999\n-999999\n-{}\n", listed.id(), removed.id()).as_bytes(),
            )
            .unwrap();
        drop(w.stdin);
        w.child.wait().unwrap();
        let until = std::time::Instant::now() + Duration::from_secs(5);
        while listed.try_wait().unwrap().is_none() {
            assert!(
                std::time::Instant::now() < until,
                "a listed group outlived the watchdog's input"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // The watchdog has exited, so any kill it sent has landed.
        assert!(
            !switchboard_tests::killed(removed.id()),
            "a group taken off the list was killed"
        );
        removed.kill().unwrap();
        removed.wait().unwrap();
    }
}
