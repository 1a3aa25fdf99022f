//! The journal's one writer thread: takes entries from the bounded queue,
//! masks them, inserts them in batches (calls that come within
//! `Tuning::linger` of each other share one transaction), prunes, and handles a bad or
//! locked file. Nothing here ever waits on a caller or makes one wait.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::cap::{CAP_BYTES, ERROR_BYTES};
use super::entry::Entry;
use super::mask::{mask, mask_capped};
use super::store::{self, file_id, Trouble};
use super::telemetry::{self, Exporter};
use super::{JournalSettings, Tuning};
use crate::redact::Redactor;
use crate::settings::TelemetrySettings;

/// What the queue carries.
pub(crate) enum Msg {
    Entry(Box<Entry>),
    /// Answered once everything queued before it is written (or dropped).
    Flush(Sender<()>),
    /// New limits; pruned at once.
    Limits(JournalSettings),
    /// Export calls as spans as these settings say (or stop).
    Telemetry(TelemetrySettings),
}

/// What the journal's callers and its writer share.
#[derive(Default)]
pub(crate) struct Shared {
    pub written: AtomicU64,
    pub dropped: AtomicU64,
    pub queued: AtomicUsize,
    pub queued_bytes: AtomicUsize,
    pub problem: Mutex<Option<String>>,
    /// Grows whenever the file was set aside: readers open the new one.
    pub generation: AtomicU64,
    pub telemetry: Arc<telemetry::Shared>,
}

impl Shared {
    pub fn set_problem(&self, text: Option<String>) {
        *self.problem.lock().unwrap_or_else(|p| p.into_inner()) = text;
    }
}

/// How often entries older than `keep_days` are looked for while writing.
const AGE_CHECK: Duration = Duration::from_secs(10 * 60);

/// How soon after a failed open the file is tried again.
const REOPEN_AFTER: Duration = Duration::from_secs(30);

/// Pruning by size goes this far under the limit, so it does not run at
/// every batch once the journal is full.
const PRUNE_TO_PERCENT: u64 = 90;

pub(crate) struct Writer {
    pub path: PathBuf,
    pub rx: Receiver<Msg>,
    pub shared: Arc<Shared>,
    pub redactor: Arc<Redactor>,
    pub limits: JournalSettings,
    pub tuning: Tuning,
    conn: Option<Connection>,
    tried_open: Option<Instant>,
    /// The file the connection has open ([`file_id`]), to notice another
    /// process setting it aside.
    opened: Option<u64>,
    age_checked: Option<Instant>,
    /// The kind of the last problem told on stderr, so each is told once
    /// until the journal works again.
    told: Option<&'static str>,
    /// Where masked entries go as spans too, while that is turned on.
    exporter: Option<Exporter>,
    /// The settings `exporter` follows.
    telemetry: TelemetrySettings,
}

impl Writer {
    pub fn new(
        path: PathBuf,
        rx: Receiver<Msg>,
        shared: Arc<Shared>,
        redactor: Arc<Redactor>,
        limits: JournalSettings,
        tuning: Tuning,
    ) -> Writer {
        Writer {
            path,
            rx,
            shared,
            redactor,
            limits,
            tuning,
            conn: None,
            tried_open: None,
            opened: None,
            age_checked: None,
            told: None,
            exporter: None,
            telemetry: TelemetrySettings::default(),
        }
    }

    /// Runs until every sender is gone and the queue is empty.
    pub fn run(mut self) {
        self.connect();
        let mut pending: Vec<Entry> = Vec::with_capacity(self.tuning.batch);
        // When what is pending is written at the latest (`Tuning::linger`).
        let mut due: Option<Instant> = None;
        loop {
            let msg = match due {
                None => match self.rx.recv() {
                    Ok(m) => m,
                    Err(_) => break,
                },
                Some(at) => match self
                    .rx
                    .recv_timeout(at.saturating_duration_since(Instant::now()))
                {
                    Ok(m) => m,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        self.write(&mut pending);
                        due = None;
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                },
            };
            let mut next = Some(msg);
            while let Some(msg) = next.take() {
                match msg {
                    Msg::Entry(e) => {
                        self.shared.queued.fetch_sub(1, Ordering::Relaxed);
                        self.shared
                            .queued_bytes
                            .fetch_sub(e.weight(), Ordering::Relaxed);
                        let e = masked(*e, &self.redactor);
                        // Exported before it is written: a journal file
                        // that cannot be written does not stop the spans.
                        if let Some(x) = &self.exporter {
                            x.export(&e);
                        }
                        pending.push(e);
                        if pending.len() >= self.tuning.batch {
                            self.write(&mut pending);
                        }
                    }
                    Msg::Flush(done) => {
                        self.write(&mut pending);
                        let _ = done.send(());
                    }
                    Msg::Limits(limits) => {
                        self.write(&mut pending);
                        self.limits = limits;
                        self.age_checked = None;
                        self.prune();
                    }
                    Msg::Telemetry(settings) if settings != self.telemetry => {
                        if let Some(x) = self.exporter.take() {
                            x.stop();
                        }
                        self.exporter =
                            Exporter::start(&settings, &self.tuning, self.shared.telemetry.clone());
                        self.telemetry = settings;
                    }
                    Msg::Telemetry(_) => {}
                }
                next = self.rx.try_recv().ok();
            }
            due = match (pending.is_empty(), due) {
                (true, _) => None,
                (false, None) => Some(Instant::now() + self.tuning.linger),
                (false, due) => due,
            };
            if due.is_some_and(|at| at <= Instant::now()) {
                self.write(&mut pending);
                due = None;
            }
        }
        self.write(&mut pending);
        if let Some(x) = self.exporter.take() {
            x.finish();
        }
    }

    /// Opens the file; a bad one is set aside and a fresh one started.
    fn connect(&mut self) {
        self.tried_open = Some(Instant::now());
        if let Some(dir) = self.path.parent() {
            if let Err(e) = std::fs::create_dir_all(dir) {
                self.problem(
                    "open",
                    format!(
                        "the call journal cannot be kept: cannot make {}: {e}",
                        dir.display()
                    ),
                );
                return;
            }
        }
        match store::open_for_writing(&self.path, self.tuning.busy_timeout) {
            Ok(c) => {
                self.conn = Some(c);
                self.opened = file_id(&self.path);
                self.prune();
            }
            Err(e) => match store::trouble(&e) {
                Trouble::Corrupt => {
                    self.opened = file_id(&self.path);
                    self.start_afresh(&e)
                }
                Trouble::Busy => self.problem(
                    "locked",
                    format!(
                        "the call journal {} is locked by another program; calls are not \
                         recorded until it is free",
                        self.path.display()
                    ),
                ),
                Trouble::Other => self.problem(
                    "open",
                    format!(
                        "the call journal {} cannot be opened: {e}",
                        self.path.display()
                    ),
                ),
            },
        }
    }

    /// Sets the bad file aside (never deleted) and opens a fresh one.
    fn start_afresh(&mut self, why: &dyn std::fmt::Display) {
        self.conn = None;
        if cfg!(unix) && file_id(&self.path) != self.opened {
            // Another process set it aside already (its fresh file is at
            // the path now, which must not be moved too): use that one.
            self.shared.generation.fetch_add(1, Ordering::Relaxed);
            self.connect();
            return;
        }
        match store::set_aside(&self.path) {
            Ok(aside) => {
                self.shared.generation.fetch_add(1, Ordering::Relaxed);
                self.problem(
                    "corrupt",
                    format!(
                        "the call journal {} was damaged ({why}); it was moved to {} and a new \
                         one started",
                        self.path.display(),
                        aside.display()
                    ),
                );
                match store::open_for_writing(&self.path, self.tuning.busy_timeout) {
                    Ok(c) => {
                        self.conn = Some(c);
                        self.opened = file_id(&self.path);
                    }
                    Err(e) => self.problem(
                        "open",
                        format!(
                            "the call journal {} cannot be started again: {e}",
                            self.path.display()
                        ),
                    ),
                }
            }
            Err(e) => self.problem(
                "corrupt",
                format!(
                    "the call journal {} is damaged ({why}) and cannot be moved aside: {e}; \
                     calls are not recorded",
                    self.path.display()
                ),
            ),
        }
    }

    /// Writes what is pending in one transaction; on failure the entries
    /// are dropped (and counted), never retried in a loop.
    fn write(&mut self, pending: &mut Vec<Entry>) {
        if pending.is_empty() {
            return;
        }
        if self.conn.is_some() && cfg!(unix) && file_id(&self.path) != self.opened {
            // Another process set the file aside and started a fresh one
            // (or the file was deleted): follow the path, not the old file.
            self.conn = None;
            self.shared.generation.fetch_add(1, Ordering::Relaxed);
            self.connect();
        }
        if self.conn.is_none() && self.tried_open.is_none_or(|t| t.elapsed() >= REOPEN_AFTER) {
            self.connect();
        }
        let n = pending.len() as u64;
        let Some(conn) = self.conn.as_mut() else {
            self.shared.dropped.fetch_add(n, Ordering::Relaxed);
            pending.clear();
            return;
        };
        let mut result = store::insert(conn, pending);
        if let Err(e) = &result {
            if let Trouble::Corrupt = store::trouble(e) {
                let why = e.to_string();
                self.start_afresh(&why);
                if let Some(c) = self.conn.as_mut() {
                    result = store::insert(c, pending);
                }
            }
        }
        pending.clear();
        match result {
            Ok(()) => {
                self.shared.written.fetch_add(n, Ordering::Relaxed);
                self.told = None;
                self.prune_if_due();
            }
            Err(e) => {
                self.shared.dropped.fetch_add(n, Ordering::Relaxed);
                match store::trouble(&e) {
                    Trouble::Busy => self.problem(
                        "locked",
                        format!(
                            "the call journal {} is locked by another program; calls are \
                             dropped until it is free",
                            self.path.display()
                        ),
                    ),
                    _ => self.problem(
                        "write",
                        format!(
                            "the call journal {} cannot be written: {e}",
                            self.path.display()
                        ),
                    ),
                }
            }
        }
    }

    /// Size is checked after every batch (three pragmas); age every
    /// [`AGE_CHECK`] while calls come in. Nothing runs while none do.
    fn prune_if_due(&mut self) {
        if self.age_checked.is_none_or(|t| t.elapsed() >= AGE_CHECK) {
            self.prune();
            return;
        }
        let Some(conn) = self.conn.as_ref() else {
            return;
        };
        let max = u64::from(self.limits.keep_mb.max(1)) * 1024 * 1024;
        if store::used_bytes(conn).is_ok_and(|used| used > max) {
            self.prune();
        }
    }

    /// Removes what is older than `keep_days`, then the oldest until the
    /// journal is under `keep_mb`, and gives the space back.
    fn prune(&mut self) {
        let Some(conn) = self.conn.as_ref() else {
            return;
        };
        self.age_checked = Some(Instant::now());
        let days = u64::from(self.limits.keep_days.max(1));
        let cutoff = crate::events::now_ms().saturating_sub(days * 86_400_000);
        let max = u64::from(self.limits.keep_mb.max(1)) * 1024 * 1024;
        let result = store::prune_older(conn, cutoff).and_then(|old| {
            let big = match store::used_bytes(conn)? > max {
                true => store::prune_to_size(conn, max / 100 * PRUNE_TO_PERCENT)?,
                false => 0,
            };
            if old > 0 || big > 0 {
                store::release(conn)?;
            }
            Ok(())
        });
        if let Err(e) = result {
            match store::trouble(&e) {
                // Another process is writing or pruning: next time.
                Trouble::Busy => {}
                Trouble::Corrupt => self.start_afresh(&e),
                Trouble::Other => self.problem(
                    "prune",
                    format!(
                        "old calls cannot be removed from the call journal {}: {e}",
                        self.path.display()
                    ),
                ),
            }
        }
    }

    /// Records a problem for `stats()`; tells it on stderr once.
    fn problem(&mut self, kind: &'static str, text: String) {
        if self.told != Some(kind) {
            eprintln!("switchboard: {text}");
            self.told = Some(kind);
        }
        self.shared.set_problem(Some(text));
    }
}

/// The entry as it may be stored: masked, and cut at the caps.
pub(crate) fn masked(mut e: Entry, r: &Redactor) -> Entry {
    let partial = (e.arguments.len() as u64) < e.arguments_bytes;
    let (text, cut) = mask_capped(&e.arguments, partial, CAP_BYTES, r);
    e.arguments = text;
    e.arguments_cut |= cut;
    let partial = (e.result.len() as u64) < e.result_bytes;
    let (text, cut) = mask_capped(&e.result, partial, CAP_BYTES, r);
    e.result = text;
    e.result_cut |= cut;
    if let Some(err) = e.error.take() {
        e.error = Some(mask_capped(&err, false, ERROR_BYTES, r).0);
    }
    // A resource's URI can carry a token; names and clients are the
    // caller's own words, masked all the same.
    e.name = mask(&e.name, r);
    e.client = mask(&e.client, r);
    for f in &mut e.findings {
        f.message = mask(&f.message, r);
        if let Some(v) = f.visible.take() {
            f.visible = Some(mask(&v, r));
        }
    }
    e
}
