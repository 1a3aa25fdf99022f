//! No server outlives Switchboard, even when Switchboard itself is
//! killed with SIGKILL. Three layers, each covering what the one before
//! cannot:
//!
//! 1. Parent-death signal (Linux): every stdio server is forked from one of
//!    a few threads that live as long as the process (the keepers) with
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
//! The watchdog hears of each group at once; the record is rewritten once
//! per burst of starts (when no other start is queued), before the last
//! start of the burst returns, so twenty servers starting together cost one
//! write, not twenty growing ones.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// Groups were adopted since the record was last written.
    unsaved: bool,
}

static LEDGER: Mutex<Ledger> = Mutex::new(Ledger {
    groups: vec![],
    watchdog: None,
    record: None,
    unsaved: false,
});

impl Ledger {
    /// List a new group; the record follows with `save_unsaved` at the end
    /// of the burst of starts (see `spawn_on_keeper`).
    fn adopt(&mut self, g: ProcessId) {
        self.groups.push(g);
        self.tell(&format!("+{}\n", g.pid));
        self.unsaved = true;
    }

    fn save_unsaved(&mut self) {
        if self.unsaved {
            self.save();
        }
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
    fn save(&mut self) {
        self.unsaved = false;
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

/// How many keeper threads fork servers. A fork returns only once the child
/// has exec'd, so with one thread every start waited for all before it;
/// a few let starts overlap, also on two cores.
const KEEPERS: usize = 4;

/// Starts handed to the keepers and not yet done (see `spawn_on_keeper`).
static QUEUED: AtomicUsize = AtomicUsize::new(0);

/// Checks in a row that found every listed group alive (see `keep`).
static QUIET_CHECKS: AtomicUsize = AtomicUsize::new(0);

/// The keepers: a few threads that fork every server and otherwise check
/// which listed groups are gone: every second after a server started or a
/// group ended, then less and less often (up to about once a minute) while
/// none ends, so an idle Switchboard does not wake each second. Ending a
/// group ([`poke_keeper`]) brings the one-second checks back. Linux sends the parent-death
/// signal when the *thread* that forked a child exits; tokio forks on
/// whatever thread polls the spawn (a blocking-pool thread ends after 10 s
/// idle, `block_in_place` retires workers, a runtime can be shut down while
/// the manager lives on), so forking here, on threads that never end,
/// makes the signal mean "Switchboard died" and nothing else. They share one
/// queue: whichever is free takes the next start.
fn keeper() -> Option<&'static Mutex<std::sync::mpsc::Sender<Job>>> {
    static KEEPER: OnceLock<Option<Mutex<std::sync::mpsc::Sender<Job>>>> = OnceLock::new();
    KEEPER
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Job>();
            let rx = std::sync::Arc::new(Mutex::new(rx));
            let started = (0..KEEPERS)
                .filter(|i| {
                    let rx = rx.clone();
                    std::thread::Builder::new()
                        .name(format!("switchboard-process-keeper-{i}"))
                        .spawn(move || keep(&rx))
                        .is_ok()
                })
                .count();
            (started > 0).then(|| Mutex::new(tx))
        })
        .as_ref()
}

/// A group was just ended: the keepers go back to checking every second
/// until the ledger has let go of it.
pub fn poke_keeper() {
    if let Some(k) = keeper() {
        let _ = k
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(Box::new(|| {}));
    }
}

/// One keeper's life: take the next start from the shared queue (the queue's
/// lock is held only while waiting for one), or check the listed groups
/// while any are listed: a second after a start or an end, doubling while
/// nothing ends, up to 64 s. Only the keeper holding the queue waits
/// with a timeout; it chooses it after taking the queue, and a burst of
/// starts ends by waking it (see `spawn_on_keeper`), so a wait chosen while
/// nothing was listed never outlasts the first group listed.
fn keep(rx: &Mutex<std::sync::mpsc::Receiver<Job>>) {
    loop {
        let next = {
            let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
            let listed = !LEDGER
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .groups
                .is_empty();
            let wait = if listed {
                Duration::from_secs(1 << QUIET_CHECKS.load(Ordering::SeqCst).min(6))
            } else {
                Duration::from_secs(3600)
            };
            rx.recv_timeout(wait)
        };
        match next {
            Ok(job) => {
                QUIET_CHECKS.store(0, Ordering::SeqCst);
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let ended = LEDGER
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .forget_dead();
                if ended {
                    QUIET_CHECKS.store(0, Ordering::SeqCst);
                } else {
                    QUIET_CHECKS.fetch_add(1, Ordering::SeqCst);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Run `spawn` (which starts a server through a `CommandWrap` carrying
/// [`DiesWithSwitchboard`]) on a keeper thread, inside the caller's tokio
/// runtime so the child's pipes belong to it. The last start of a burst
/// (none other queued) writes the record of every group adopted so far
/// before it returns.
pub async fn spawn_on_keeper<T: Send + 'static>(
    spawn: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    QUEUED.fetch_add(1, Ordering::SeqCst);
    let job: Job = Box::new(move || {
        let _runtime = handle.enter();
        let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(spawn));
        if QUEUED.fetch_sub(1, Ordering::SeqCst) == 1 {
            LEDGER
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .save_unsaved();
            // The keeper waiting for the next start may have chosen its wait
            // while nothing was listed: an empty job makes it choose again.
            if let Some(k) = keeper() {
                let _ = k
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .send(Box::new(|| {}));
            }
        }
        if let Ok(started) = started {
            let _ = tx.send(started);
        }
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
    // Groups whose leader is gone, each with the dead owner that started it.
    let mut leaderless = vec![];
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
                if let Some(g) = end_group(*g) {
                    leaderless.push((g, record.owner));
                }
            }
        }
        let _ = std::fs::remove_file(&path);
    }
    end_leaderless(&leaderless);
}

fn alive(p: ProcessId) -> bool {
    proc_stat(p.pid).is_some_and(|s| !s.dead() && s.start == p.start)
}

/// Kill one recorded group of a dead owner, only if it is provably the one
/// recorded. A group whose leader is gone is handed back, for
/// [`end_leaderless`].
fn end_group(g: ProcessId) -> Option<ProcessId> {
    match proc_stat(g.pid) {
        // The leader itself, by its start time.
        Some(s) if s.start == g.start => super::connection::kill_group(Some(g.pid)),
        // The pid now belongs to another process: our group is long gone.
        Some(_) => {}
        // The leader is gone (the parent-death signal took it), maybe not its children.
        None => return Some(g),
    }
    None
}

/// Kill what is left of `groups` (each with the dead owner that started it)
/// whose leaders are gone: a member of such a group is ours if it started
/// after the leader and carries its owner's marker. One pass over the
/// processes for all of them (a crash leaves every server's group).
fn end_leaderless(groups: &[(ProcessId, ProcessId)]) {
    if groups.is_empty() {
        return;
    }
    let markers: Vec<(ProcessId, String)> = groups
        .iter()
        .map(|(g, owner)| (*g, format!("{OWNER_VAR}={owner}")))
        .collect();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Some(s) = proc_stat(pid) else { continue };
        // Two dead owners may have used the same group id in turn: any of them.
        let mut ours = markers
            .iter()
            .filter(|(g, _)| s.pgrp == g.pid && s.start >= g.start)
            .map(|(_, m)| m.as_bytes())
            .peekable();
        if ours.peek().is_none() {
            continue;
        }
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if ours.any(|m| env.split(|b| *b == 0).any(|v| v == m)) {
            #[cfg(unix)]
            if let Some(p) = super::process::nix_pid(pid) {
                let _ = nix::sys::signal::kill(p, nix::sys::signal::Signal::SIGKILL);
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
