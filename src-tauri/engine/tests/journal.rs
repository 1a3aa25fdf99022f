//! The call journal's store (SPEC G11, issue 29 point 1): masked and capped
//! entries, a queue that never makes a call wait, crash safety under
//! `kill -9`, retention by age and size, a damaged or locked file, two
//! writers on one file, queries, aggregates and exports.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::json;
use switchboard_engine::journal::{
    cap_json, Entry, Filter, Format, Journal, JournalSettings, Kind, Outcome, Tuning, Via,
    CAP_BYTES,
};
use switchboard_engine::redact::Redactor;
use switchboard_engine::tool_trust::scan::{Finding, Severity};

// ---- Memory: what this thread holds, to show capping keeps no copy.

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|l| {
        let now = l.get() + delta;
        l.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

// SAFETY: forwards to the system allocator; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The most this thread held at once while `f` ran, above what it held before.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, (PEAK.with(Cell::get) - base).max(0) as usize)
}

// ---- Helpers.

const GH: &str = "ghp_0123456789abcdefghijABCDEFGHIJ";
const KNOWN: &str = "hunter2-known-secret-value";

fn db(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("data/journal.db")
}

fn open(path: &Path) -> Journal {
    Journal::open(
        path,
        JournalSettings::default(),
        Arc::new(Redactor::default()),
    )
}

fn call(server: &str, name: &str) -> Entry {
    Entry::new(Via::Http, server, Kind::Tool, name)
        .with_client("claude-code", Some("1.2.3".into()))
        .with_arguments(&json!({"q": name}))
        .with_result(&json!({"content": [{"type": "text", "text": "fine"}]}))
        .with_duration(Duration::from_micros(1500))
}

fn finding(message: &str) -> Finding {
    Finding {
        rule: "instructions".into(),
        severity: Severity::High,
        message: message.into(),
        at: "content[0].text".into(),
        visible: None,
    }
}

fn all(j: &Journal, mut f: Filter) -> Vec<Entry> {
    f.limit = Some(1000);
    j.query(&f).expect("query").entries
}

fn names(entries: &[Entry]) -> Vec<String> {
    entries.iter().map(|e| e.name.clone()).collect()
}

fn file_bytes(path: &Path) -> Vec<u8> {
    let mut out = vec![];
    for suffix in ["", "-wal", "-shm"] {
        if let Ok(b) = std::fs::read(format!("{}{suffix}", path.display())) {
            out.extend(b);
        }
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

// ---- Masking and capping.

#[test]
fn no_secret_value_reaches_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let redactor = Arc::new(Redactor::default());
    redactor.set([KNOWN.to_string()]);
    let j = Journal::open(&path, JournalSettings::default(), redactor);
    let e = Entry::new(Via::Stdio, "github", Kind::Tool, "search")
        .with_client("cursor", None)
        .with_arguments(
            &json!({"query": format!("find {KNOWN}"), "auth": GH, "apiKey": "plain-looking-key"}),
        )
        .with_result(&json!({"content": [{"type": "text",
            "text": format!("env:\nGITHUB_TOKEN={GH}\nSECRET={KNOWN}\n")}]}))
        .with_error(
            Outcome::ToolError,
            Some("auth".into()),
            format!("denied for {KNOWN}"),
        )
        .with_findings(vec![finding(&format!("a secret-looking value {GH}"))]);
    j.record(e);
    // A resource whose URI carries a token.
    j.record(Entry::new(
        Via::App,
        "files",
        Kind::Resource,
        format!("https://api.example/x?key={GH}"),
    ));
    j.flush();
    assert_eq!(j.stats().written, 2, "{:?}", j.stats());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the journal is the user's alone");
    }
    let bytes = file_bytes(&path);
    for secret in [KNOWN, GH, "0123456789abcdefghij", "plain-looking-key"] {
        assert!(
            !contains(&bytes, secret),
            "{secret} is in the journal's files"
        );
    }
    let got = all(&j, Filter::default());
    let e = got.iter().find(|e| e.name == "search").unwrap();
    assert!(e.arguments.contains("find •••"), "{}", e.arguments);
    assert!(e.result.contains("GITHUB_TOKEN=•••"), "{}", e.result);
    assert_eq!(e.error.as_deref(), Some("denied for •••"));
    assert!(e.findings[0].message.ends_with("value •••"));
    assert_eq!(e.client, "cursor");
}

/// A value that serializes as `n` strings of 1 KiB: 50 MB of JSON text
/// that never exists in memory.
struct Huge(usize);

impl Serialize for Huge {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let chunk = "x".repeat(1022);
        let mut seq = s.serialize_seq(Some(self.0))?;
        for _ in 0..self.0 {
            seq.serialize_element(&chunk)?;
        }
        seq.end()
    }
}

#[test]
fn a_50_mb_result_is_capped_counted_and_never_held() {
    let n = 50 * 1024;
    let (capped, peak) = peak_during(|| cap_json(&Huge(n)));
    // 1,024 bytes per element with quotes and comma, less the last comma, plus brackets.
    assert_eq!(capped.full_bytes, (n * 1025 + 1) as u64);
    assert!(capped.cut);
    assert!(capped.text.len() <= CAP_BYTES + switchboard_engine::journal::TAIL_BYTES);
    assert!(
        peak < 256 * 1024,
        "capping a 50 MB value held {peak} bytes at once"
    );

    let dir = tempfile::tempdir().unwrap();
    let j = open(&db(&dir));
    j.record(call("big", "dump").with_result(&Huge(n)));
    j.flush();
    let e = &all(&j, Filter::default())[0];
    assert!(e.result_cut);
    assert_eq!(e.result_bytes, (n * 1025 + 1) as u64);
    assert!(e.result.len() <= CAP_BYTES, "{}", e.result.len());
    assert!(e.result.starts_with("[\"xxx"));
}

// ---- The queue.

#[test]
fn a_full_queue_drops_and_counts_and_never_waits() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let tuning = Tuning {
        queue: 16,
        busy_timeout: Duration::from_millis(800),
        // The writer takes "held" and goes straight to the lock (no waiting
        // for more calls to share its transaction, which would take some of
        // the burst out of the queue first).
        linger: Duration::ZERO,
        ..Tuning::default()
    };
    let j = Journal::open_with(
        &path,
        JournalSettings::default(),
        Arc::new(Redactor::default()),
        tuning,
    );
    j.record(call("s", "first"));
    j.flush();
    // Another process holds the write lock: the writer waits on it.
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    j.record(call("s", "held"));
    std::thread::sleep(Duration::from_millis(50));
    let mut slowest = Duration::ZERO;
    for i in 0..2000 {
        let e = call("s", &format!("burst-{i}"));
        let t = Instant::now();
        j.record(e);
        slowest = slowest.max(t.elapsed());
    }
    // The writer waits 800 ms for the lock; no call waits with it (the
    // margin is for a busy test machine's scheduling, not the journal).
    assert!(
        slowest < Duration::from_millis(100),
        "a record call took {slowest:?}"
    );
    let s = j.stats();
    assert!(s.dropped >= 2000 - 16, "{s:?}");
    assert!(s.queued <= 16, "{s:?}");
    std::thread::sleep(Duration::from_millis(1000));
    other.execute_batch("COMMIT").unwrap();
    j.flush();
    let s = j.stats();
    assert_eq!(s.written + s.dropped, 2002, "{s:?}");
    assert!(
        s.problem.as_deref().unwrap_or_default().contains("locked"),
        "{s:?}"
    );
    // Calls go on: once the lock is gone, entries are written again.
    j.record(call("s", "after"));
    j.flush();
    assert!(names(&all(&j, Filter::default())).contains(&"after".to_string()));
}

#[test]
fn a_journal_locked_by_another_program_does_not_hold_up_an_exit() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let tuning = Tuning {
        busy_timeout: Duration::from_secs(30),
        drop_wait: Duration::from_millis(300),
        ..Tuning::default()
    };
    let j = Journal::open_with(
        &path,
        JournalSettings::default(),
        Arc::new(Redactor::default()),
        tuning,
    );
    j.record(call("s", "first"));
    j.flush();
    // Another program keeps the write lock far longer than an exit may take.
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    for i in 0..100 {
        j.record(call("s", &format!("late-{i}")));
    }
    let t = Instant::now();
    assert!(
        !j.flush_within(Duration::from_millis(300)),
        "the writer cannot have written past the lock"
    );
    // Dropping the last handle gives up waiting too (the writer would wait
    // 30 s for the lock); the margins are for a busy machine.
    drop(j);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "flush_within and drop waited {:?}",
        t.elapsed()
    );
    other.execute_batch("ROLLBACK").unwrap();
    drop(other);
    // What was written before is there; the file is sound.
    let j = open(&path);
    assert!(names(&all(&j, Filter::default())).contains(&"first".to_string()));
}

#[test]
fn two_journals_write_one_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                let j = open(&path);
                for i in 0..500 {
                    j.record(call(&format!("w{w}"), &format!("c{i}")));
                    if i % 50 == 0 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                j.flush();
                j.stats()
            })
        })
        .collect();
    for w in writers {
        let s = w.join().unwrap();
        assert_eq!((s.written, s.dropped), (500, 0), "{s:?}");
    }
    let j = open(&path);
    assert_eq!(j.count(&Filter::default()).unwrap(), 1000);
    for w in ["w0", "w1"] {
        let f = Filter {
            server: Some(w.into()),
            ..Filter::default()
        };
        assert_eq!(j.count(&f).unwrap(), 500);
    }
}

// ---- Crash safety.

/// The child: records without end, printing each batch it saw committed.
fn crash_child(path: &str) {
    let j = open(Path::new(path));
    let mut out = std::io::stdout().lock();
    for i in 0u64.. {
        j.record(call("crash", &format!("call-{i}")));
        if i % 100 == 99 {
            j.flush();
            use std::io::Write;
            writeln!(out, "committed {i}").unwrap();
            out.flush().unwrap();
        }
    }
}

#[test]
fn kill_9_mid_burst_loses_nothing_committed() {
    if let Ok(path) = std::env::var("JOURNAL_CRASH_CHILD") {
        crash_child(&path);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "kill_9_mid_burst_loses_nothing_committed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("JOURNAL_CRASH_CHILD", &path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut last = None;
    let mut batches = 0;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("committed ") {
            last = Some(n.parse::<u64>().unwrap());
            batches += 1;
            if batches == 30 {
                // SIGKILL while the child keeps recording.
                child.kill().unwrap();
                break;
            }
        }
    }
    child.wait().unwrap();
    let last = last.expect("the child committed batches");

    let conn = rusqlite::Connection::open(&path).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let mut st = conn.prepare("SELECT name FROM calls").unwrap();
    let stored: std::collections::HashSet<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for i in 0..=last {
        assert!(
            stored.contains(&format!("call-{i}")),
            "call-{i} was committed before the kill and is missing ({} stored)",
            stored.len()
        );
    }
    drop(st);
    drop(conn);
    let j = open(&path);
    j.record(call("crash", "after"));
    j.flush();
    assert_eq!(j.stats().problem, None);
    assert_eq!(j.stats().written, 1);
}

// ---- Retention.

fn sized(i: usize, bytes: usize) -> Entry {
    // Words of changing hex: SQLite stores them as they are.
    let mut text = String::with_capacity(bytes);
    let mut x = i as u64 * 2_654_435_761 + 1;
    while text.len() < bytes {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        text.push_str(&format!("{:x} ", x >> 16));
    }
    call("big", &format!("c{i}")).with_result(&text)
}

#[test]
fn retention_prunes_by_age_at_open_and_on_new_limits() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let now = switchboard_engine::events::now_ms();
    let day = 86_400_000;
    let keep_all = JournalSettings {
        keep_days: 3650,
        keep_mb: 200,
    };
    let j = Journal::open(&path, keep_all.clone(), Arc::new(Redactor::default()));
    for (name, age) in [("old-40d", 40), ("old-10d", 10), ("new", 0)] {
        let mut e = call("s", name);
        e.time = now - age * day;
        j.record(e);
    }
    j.flush();
    assert_eq!(j.count(&Filter::default()).unwrap(), 3);
    j.set_limits(JournalSettings {
        keep_days: 30,
        keep_mb: 200,
    });
    j.flush();
    assert_eq!(names(&all(&j, Filter::default())), ["new", "old-10d"]);
    drop(j);
    // At open.
    let j = Journal::open(
        &path,
        JournalSettings {
            keep_days: 5,
            keep_mb: 200,
        },
        Arc::new(Redactor::default()),
    );
    j.flush();
    assert_eq!(names(&all(&j, Filter::default())), ["new"]);
}

#[test]
fn retention_prunes_by_size_oldest_first_and_the_file_shrinks() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let j = open(&path);
    for i in 0..800 {
        j.record(sized(i, 10_000));
    }
    j.flush();
    assert_eq!(j.stats().written, 800, "{:?}", j.stats());
    // The file and its WAL (what is not checkpointed yet is only there).
    let before = file_bytes(&path).len();
    assert!(before > 6 * 1024 * 1024, "{before}");
    j.set_limits(JournalSettings {
        keep_days: 30,
        keep_mb: 2,
    });
    j.flush();
    let after = std::fs::metadata(&path).unwrap().len();
    assert!(after <= 2 * 1024 * 1024, "{before} → {after} bytes");
    let left = all(&j, Filter::default());
    assert!(left.len() > 50 && left.len() < 300, "{} left", left.len());
    // The newest are kept.
    assert_eq!(left[0].name, "c799");
    let oldest = left.last().unwrap().name[1..].parse::<usize>().unwrap();
    assert_eq!(oldest, 800 - left.len(), "oldest removed first");
    // Writing on stays under the limit.
    for i in 800..1400 {
        j.record(sized(i, 10_000));
    }
    j.flush();
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size <= 3 * 1024 * 1024, "{size} bytes");
}

// ---- Bad files.

#[test]
fn a_damaged_file_is_set_aside_and_a_new_journal_works() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let garbage = b"this is not a database, just bytes ".repeat(2000);
    std::fs::write(&path, &garbage).unwrap();
    let j = open(&path);
    j.record(call("s", "fresh"));
    j.flush();
    let s = j.stats();
    let problem = s.problem.expect("the damage is reported");
    let aside: Vec<PathBuf> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("journal.db.corrupt-")
        })
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(
        problem.contains(&aside[0].display().to_string()),
        "{problem}"
    );
    assert_eq!(std::fs::read(&aside[0]).unwrap(), garbage, "kept as it was");
    assert_eq!(s.written, 1);
    assert_eq!(names(&all(&j, Filter::default())), ["fresh"]);
}

#[test]
fn a_file_another_process_set_aside_is_left_for_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let j = open(&path);
    j.record(call("s", "before"));
    j.flush();
    // What another process does when it finds the file damaged.
    let aside = dir.path().join("data/journal.db.corrupt-test");
    for suffix in ["", "-wal", "-shm"] {
        let from = format!("{}{suffix}", path.display());
        if Path::new(&from).exists() {
            std::fs::rename(&from, format!("{}{suffix}", aside.display())).unwrap();
        }
    }
    let other = open(&path);
    other.record(call("s", "other"));
    other.flush();
    j.record(call("s", "after"));
    j.flush();
    assert_eq!(j.stats().dropped, 0, "{:?}", j.stats());
    assert_eq!(names(&all(&j, Filter::default())), ["after", "other"]);
    // A reader that had the old file open (`activity --follow`) moves on too.
    let mut follower = switchboard_engine::journal::Reader::open(&path);
    assert_eq!(follower.count(&Filter::default()).unwrap(), 2);
    for suffix in ["", "-wal", "-shm"] {
        let from = format!("{}{suffix}", path.display());
        if Path::new(&from).exists() {
            std::fs::rename(&from, format!("{}-2{suffix}", aside.display())).unwrap();
        }
    }
    drop(other);
    let third = open(&path);
    third.record(call("s", "third"));
    third.flush();
    assert_eq!(
        names(&follower.query(&Filter::default()).unwrap().entries),
        ["third"]
    );
    let mut old = switchboard_engine::journal::Reader::open(&aside);
    assert_eq!(
        names(&old.query(&Filter::default()).unwrap().entries),
        ["before"],
        "nothing more went into the file set aside"
    );
}

// ---- Queries, aggregates, exports.

/// 3 servers, 2 clients, every outcome, some findings, over 3 hours.
fn sample(j: &Journal) -> u64 {
    let start = switchboard_engine::events::now_ms() - 3 * 3_600_000;
    let outcomes = [
        Outcome::Ok,
        Outcome::Ok,
        Outcome::ToolError,
        Outcome::Ok,
        Outcome::Timeout,
        Outcome::ProtocolError,
    ];
    for i in 0..60u64 {
        let server = ["github", "files", "search"][(i % 3) as usize];
        let tool = ["create_issue", "read", "web"][(i % 3) as usize];
        let mut e = Entry::new(Via::Http, server, Kind::Tool, tool)
            .with_client(
                if i % 2 == 0 { "claude-code" } else { "cursor" },
                Some("1.0".into()),
            )
            .with_arguments(&json!({"n": i, "note": if i == 7 { "needle-in-args" } else { "" }}))
            .with_result(&json!({"content": [{"type": "text", "text": format!("result {i}")}]}))
            .with_duration(Duration::from_micros(1000 + i));
        let outcome = outcomes[(i % 6) as usize];
        if outcome != Outcome::Ok {
            e = e.with_error(outcome, Some("server".into()), format!("failed {i}"));
        }
        if i % 10 == 0 {
            e = e.with_findings(vec![finding("ignore previous instructions")]);
        }
        e.time = start + i * 180_000;
        j.record(e);
    }
    j.record(Entry::new(
        Via::App,
        "files",
        Kind::Resource,
        "file:///tmp/a.txt",
    ));
    j.flush();
    start
}

#[test]
fn queries_narrow_by_every_filter_and_page_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(&db(&dir));
    let start = sample(&j);
    let n = |f: Filter| j.count(&f).unwrap();
    assert_eq!(n(Filter::default()), 61);
    let by = |server: &str| Filter {
        server: Some(server.into()),
        ..Filter::default()
    };
    assert_eq!(n(by("github")), 20);
    assert_eq!(n(by("files")), 21);
    let f = Filter {
        client: Some("cursor".into()),
        ..Filter::default()
    };
    assert_eq!(n(f), 30);
    let f = Filter {
        name: Some("web".into()),
        ..Filter::default()
    };
    assert_eq!(n(f), 20);
    let f = Filter {
        kind: Some(Kind::Resource),
        ..Filter::default()
    };
    assert_eq!(names(&all(&j, f)), ["file:///tmp/a.txt"]);
    let f = Filter {
        errors: true,
        ..Filter::default()
    };
    assert_eq!(n(f), 30);
    let f = Filter {
        outcomes: vec![Outcome::Timeout, Outcome::ProtocolError],
        ..Filter::default()
    };
    assert_eq!(n(f), 20);
    let f = Filter {
        findings: true,
        ..Filter::default()
    };
    let with = all(&j, f);
    assert_eq!(with.len(), 6);
    assert!(with.iter().all(|e| e.findings.len() == 1));
    let f = Filter {
        since: Some(start + 30 * 180_000),
        until: Some(start + 40 * 180_000),
        ..Filter::default()
    };
    assert_eq!(n(f), 10);
    let f = Filter {
        search: Some("NEEDLE-in".into()),
        ..Filter::default()
    };
    assert_eq!(n(f), 1);
    let f = Filter {
        search: Some("failed 11".into()),
        ..Filter::default()
    };
    assert_eq!(n(f), 1, "the error text is searched");
    let f = Filter {
        search: Some("100%".into()),
        ..Filter::default()
    };
    assert_eq!(n(f), 0, "% is a character, not a wildcard");
    // Combined: the bench's filter.
    let f = Filter {
        server: Some("github".into()),
        errors: true,
        since: Some(start),
        ..Filter::default()
    };
    assert!(all(&j, f)
        .iter()
        .all(|e| e.server == "github" && e.outcome != Outcome::Ok));

    // Pages: newest first, keyset by id, no overlap, nothing missed.
    let mut seen = vec![];
    let mut f = Filter {
        limit: Some(25),
        ..Filter::default()
    };
    loop {
        let page = j.query(&f).unwrap();
        seen.extend(page.entries.iter().map(|e| e.id));
        match page.next_before_id {
            Some(id) => f.before_id = Some(id),
            None => break,
        }
    }
    assert_eq!(seen.len(), 61);
    assert!(seen.windows(2).all(|w| w[0] > w[1]), "newest first");
    // Following: oldest first after an id.
    let f = Filter {
        after_id: Some(seen[3]),
        ..Filter::default()
    };
    let newer: Vec<u64> = all(&j, f).iter().map(|e| e.id).collect();
    assert_eq!(newer, vec![seen[2], seen[1], seen[0]]);
}

#[test]
fn percentiles_and_series_are_right_on_known_data() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(&db(&dir));
    let hour = 3_600_000;
    let start = (switchboard_engine::events::now_ms() / hour - 2) * hour;
    // Server "a": tool "x" 1..=100 ms, tool "y" 1000 ms ×10 (errors).
    for d in 1..=100u64 {
        let mut e = call("a", "x").with_duration(Duration::from_millis(d));
        e.time = start + d * 1000;
        j.record(e);
    }
    for k in 0..10 {
        let mut e = call("a", "y")
            .with_duration(Duration::from_millis(1000))
            .with_error(Outcome::ToolError, None, "no");
        e.time = start + hour + k * 1000;
        j.record(e);
    }
    let mut e = call("b", "z").with_duration(Duration::from_millis(7));
    e.time = start + hour;
    j.record(e);
    j.flush();
    let a = j
        .aggregates(&Filter {
            since: Some(start),
            until: Some(start + 2 * hour),
            ..Filter::default()
        })
        .unwrap();
    assert_eq!((a.calls, a.errors), (111, 10));
    assert_eq!(a.bucket_ms, 60_000);
    assert_eq!(a.buckets, 120);
    let x = a
        .tools
        .iter()
        .find(|l| l.name.as_deref() == Some("x"))
        .unwrap();
    assert_eq!(
        (x.calls, x.p50_us, x.p90_us, x.p99_us, x.max_us),
        (100, 50_000, 90_000, 99_000, 100_000)
    );
    let server_a = &a.servers[0];
    assert_eq!(server_a.server, "a");
    assert_eq!((server_a.calls, server_a.errors), (110, 10));
    // 110 values: 1..=100 ms and ten of 1000 ms; rank ceil(0.5×110)=55 → 55 ms.
    assert_eq!(server_a.p50_us, 55_000);
    assert_eq!(server_a.p90_us, 99_000);
    assert_eq!(server_a.p99_us, 1_000_000);
    assert_eq!(a.busiest[0].name.as_deref(), Some("x"));
    assert_eq!(a.busiest.len(), 3);
    let series_a = &a.series[0];
    assert_eq!(series_a.calls.len(), 120);
    assert_eq!(series_a.calls.iter().sum::<u32>(), 110);
    assert_eq!(series_a.calls[0], 59, "1 s .. 59 s in the first minute");
    assert_eq!(series_a.errors[60], 10, "the errors an hour later");
    assert_eq!(a.series[1].calls[60], 1);
    // Absurd ranges give empty plots, not a panic.
    for (since, until) in [(Some(u64::MAX), None), (Some(0), Some(0)), (None, Some(1))] {
        let a = j
            .aggregates(&Filter {
                since,
                until,
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(a.calls, 0);
        assert!(a.buckets <= 121);
    }
}

#[test]
fn exports_round_trip_as_json_lines_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(&db(&dir));
    sample(&j);
    let f = Filter {
        server: Some("github".into()),
        ..Filter::default()
    };
    let mut want = all(&j, f.clone());
    want.reverse(); // exports are oldest first

    let mut out = vec![];
    assert_eq!(j.export(&f, Format::Jsonl, &mut out).unwrap(), 20);
    let got: Vec<Entry> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got, want);

    let mut out = vec![];
    assert_eq!(j.export(&f, Format::Csv, &mut out).unwrap(), 20);
    let mut rd = csv::Reader::from_reader(out.as_slice());
    let header = rd.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 20);
    for (row, e) in rows.iter().zip(&want) {
        assert_eq!(row[col("id")], e.id.to_string());
        assert_eq!(row[col("timeMs")], e.time.to_string());
        assert!(row[col("time")].ends_with('Z'));
        assert_eq!(&row[col("server")], e.server);
        assert_eq!(&row[col("name")], e.name);
        assert_eq!(&row[col("outcome")], e.outcome.as_str());
        assert_eq!(&row[col("arguments")], e.arguments);
        assert_eq!(&row[col("result")], e.result);
        assert_eq!(row[col("durationUs")], e.duration_us.to_string());
        assert_eq!(row[col("error")], e.error.clone().unwrap_or_default());
        let findings: Vec<Finding> = match &row[col("findings")] {
            "" => vec![],
            text => serde_json::from_str(text).unwrap(),
        };
        assert_eq!(findings, e.findings);
    }

    // Nothing matches: the CSV still has its header.
    let none = Filter {
        server: Some("nobody".into()),
        ..Filter::default()
    };
    let mut out = vec![];
    assert_eq!(j.export(&none, Format::Csv, &mut out).unwrap(), 0);
    assert!(String::from_utf8(out)
        .unwrap()
        .starts_with("id,time,timeMs,"));
}

#[test]
fn a_journal_that_does_not_exist_reads_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let mut r = switchboard_engine::journal::Reader::open(&path);
    assert_eq!(r.query(&Filter::default()).unwrap().entries.len(), 0);
    assert_eq!(r.count(&Filter::default()).unwrap(), 0);
    assert_eq!(r.aggregates(&Filter::default()).unwrap().calls, 0);
    assert!(!path.exists(), "reading creates no file");
}
