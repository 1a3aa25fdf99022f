//! The call journal (SPEC G11): every request that passes through the
//! gateway or the app's tool explorer (`tools/call`, `resources/read`,
//! `prompts/get`), recorded masked and capped in an embedded database in
//! Switchboard's data folder, kept by age and size, queried by the
//! Activity view and `switchboard activity`.
//!
//! - [`Journal`]: what the gateway and the app hold. [`Journal::record`]
//!   never waits: entries go into a bounded queue (dropped and counted when
//!   it is full) that one writer thread (`writer.rs`) masks (`mask.rs`: no
//!   secret value is stored) and inserts in batches, pruning by age and
//!   size. A bad file is set aside, a locked one skipped; calls go on.
//! - [`cap_json`] (`cap.rs`): a value's JSON text capped at [`CAP_BYTES`]
//!   without ever holding all of it.
//! - [`Reader`] (`query.rs`, `aggregate.rs`, `export.rs`): filters, pages,
//!   counts, the plots' data and exports; `switchboard activity` reads
//!   with it alone.
//! - `store.rs`: the SQLite file (WAL, several processes write it).
//! - `telemetry.rs`: each call also sent as an OpenTelemetry span to a
//!   collector, when Settings turn that on ([`Journal::set_telemetry`]);
//!   the writer hands over entries once masked, and the export never
//!   makes it (or a caller) wait.

mod aggregate;
mod cap;
mod entry;
mod export;
mod mask;
mod query;
mod store;
mod telemetry;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::settings::{JournalSettings, TelemetrySettings};
pub use aggregate::{bucket_for, percentile, Aggregates, Latency, ServerSeries, BUSIEST};
pub use cap::{cap_json, cap_json_at, Capped, CAP_BYTES, ERROR_BYTES, TAIL_BYTES};
pub use entry::{Entry, Kind, Outcome, Via, BLOCKED};
pub use export::Format;
pub use query::{Filter, Page, Reader, DEFAULT_PAGE, MAX_PAGE};
pub use telemetry::TelemetryStats;

use crate::host::Host;
use crate::redact::Redactor;
use writer::{Msg, Shared, Writer};

/// Why a read or an export failed. Messages name the journal's file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the call journal {} cannot be read: {source}", path.display())]
    Db {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("cannot write the export: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot write the CSV export: {0}")]
    Csv(#[from] csv::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Where the journal lives: `journal.db` in Switchboard's data folder.
pub fn path(host: &Host) -> PathBuf {
    host.switchboard_data_dir().join("journal.db")
}

/// The queue and the writer's sizes (the defaults suit the app; tests and
/// benchmarks change them).
#[derive(Debug, Clone)]
pub struct Tuning {
    /// Entries the queue holds before `record` drops.
    pub queue: usize,
    /// Bytes of queued entries before `record` drops (entries are capped,
    /// so this bounds memory far below `queue` × the caps).
    pub queue_bytes: usize,
    /// Entries inserted per transaction at most.
    pub batch: usize,
    /// How long an entry may wait for others to be written with it. One
    /// transaction per call would cost the writer tens of µs of CPU per call
    /// (commit, the size check), taken from the calls themselves on a busy
    /// machine; calls that come within this time share one. `flush` and a
    /// full batch write at once.
    pub linger: Duration,
    /// How long a write waits for another process's lock before its
    /// entries are dropped.
    pub busy_timeout: Duration,
    /// How long dropping the last [`Journal`] waits for the writer to write
    /// what is queued.
    pub drop_wait: Duration,
    /// Spans waiting to be exported before new ones are dropped.
    pub export_queue: usize,
    /// How long spans wait to be sent together.
    pub export_every: Duration,
    /// How long one request to the collector may take.
    pub export_timeout: Duration,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            // A burst of 5,000 calls pushed at once fits (the bench); the
            // byte bound keeps memory small whatever the entries hold.
            queue: 16_384,
            queue_bytes: 32 * 1024 * 1024,
            batch: 512,
            linger: Duration::from_millis(50),
            // Generous: only the writer thread waits (calls never do, the
            // queue takes them), and a disk busy with something else can
            // stall another process's commit for seconds.
            busy_timeout: Duration::from_secs(10),
            drop_wait: Duration::from_secs(5),
            export_queue: 2048,
            export_every: Duration::from_secs(2),
            export_timeout: Duration::from_secs(10),
        }
    }
}

/// How the journal is doing (Settings → Activity shows it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Entries written since this journal was opened.
    pub written: u64,
    /// Entries dropped: the queue was full, or the file was locked or
    /// could not be written.
    pub dropped: u64,
    /// Entries waiting in the queue.
    pub queued: u64,
    /// The last problem (a damaged file set aside, a lock, a full disk).
    pub problem: Option<String>,
}

/// The call journal of one process: a queue in front of a writer thread,
/// and a reader for queries. Cheap to clone (all clones share both); the
/// writer finishes what is queued when the last clone is dropped.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

struct Inner {
    tx: Option<SyncSender<Msg>>,
    shared: Arc<Shared>,
    queue_bytes: usize,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Hears from the writer thread when it has ended.
    ended: Option<Mutex<mpsc::Receiver<()>>>,
    drop_wait: Duration,
    reader: Mutex<(Reader, u64)>,
    /// Ends what follows the settings file for this journal.
    stop: tokio_util::sync::CancellationToken,
}

impl Journal {
    /// Opens (or creates) the journal at `path` and starts its writer.
    /// Never fails: a problem (a damaged file set aside, a lock, no disk
    /// space) is in [`Journal::stats`], and calls go on unrecorded.
    /// `redactor` holds the secret values to mask (the manager's).
    pub fn open(
        path: impl Into<PathBuf>,
        limits: JournalSettings,
        redactor: Arc<Redactor>,
    ) -> Journal {
        Journal::open_with(path, limits, redactor, Tuning::default())
    }

    /// [`Journal::open`] with other queue and writer sizes.
    pub fn open_with(
        path: impl Into<PathBuf>,
        limits: JournalSettings,
        redactor: Arc<Redactor>,
        tuning: Tuning,
    ) -> Journal {
        let path = path.into();
        let (tx, rx) = mpsc::sync_channel(tuning.queue.max(1));
        let shared = Arc::new(Shared::default());
        let queue_bytes = tuning.queue_bytes;
        let drop_wait = tuning.drop_wait;
        let w = Writer::new(path.clone(), rx, shared.clone(), redactor, limits, tuning);
        let (ended_tx, ended) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("call-journal".into())
            .spawn(move || {
                w.run();
                let _ = ended_tx.send(());
            });
        let (tx, thread, ended) = match thread {
            Ok(t) => (Some(tx), Some(t), Some(Mutex::new(ended))),
            Err(e) => {
                shared.set_problem(Some(format!("the call journal cannot start: {e}")));
                (None, None, None)
            }
        };
        Journal {
            inner: Arc::new(Inner {
                tx,
                shared,
                queue_bytes,
                thread,
                ended,
                drop_wait,
                reader: Mutex::new((Reader::open(path), 0)),
                stop: tokio_util::sync::CancellationToken::new(),
            }),
        }
    }

    /// The journal's file.
    pub fn path(&self) -> PathBuf {
        self.reader().0.path().to_path_buf()
    }

    /// Queues one call for writing; returns at once. When the queue is
    /// full the entry is dropped and counted ([`Stats::dropped`]).
    pub fn record(&self, entry: Entry) {
        let s = &self.inner.shared;
        let weight = entry.weight();
        let Some(tx) = self.inner.tx.as_ref() else {
            s.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        if s.queued_bytes.fetch_add(weight, Ordering::Relaxed) + weight > self.inner.queue_bytes {
            s.queued_bytes.fetch_sub(weight, Ordering::Relaxed);
            s.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        s.queued.fetch_add(1, Ordering::Relaxed);
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
            tx.try_send(Msg::Entry(Box::new(entry)))
        {
            s.queued.fetch_sub(1, Ordering::Relaxed);
            s.queued_bytes.fetch_sub(weight, Ordering::Relaxed);
            s.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Waits until everything queued before this call is written (or
    /// dropped). For tests, the CLI and shutting down.
    pub fn flush(&self) {
        let Some(tx) = self.inner.tx.as_ref() else {
            return;
        };
        let (done, wait) = mpsc::channel();
        if tx.send(Msg::Flush(done)).is_ok() {
            let _ = wait.recv();
        }
    }

    /// [`Journal::flush`] waiting at most `limit` (a process on its way
    /// out: a journal another program keeps locked must not hold the exit
    /// up). Whether everything queued was written or dropped in time.
    pub fn flush_within(&self, limit: Duration) -> bool {
        let Some(tx) = self.inner.tx.as_ref() else {
            return true;
        };
        let deadline = std::time::Instant::now() + limit;
        let (done, wait) = mpsc::channel();
        let mut msg = Msg::Flush(done);
        loop {
            match tx.try_send(msg) {
                Ok(()) => break,
                Err(TrySendError::Full(m)) if std::time::Instant::now() < deadline => {
                    msg = m;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return false,
            }
        }
        wait.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
            .is_ok()
    }

    /// New limits (Settings changed); old entries are pruned at once.
    pub fn set_limits(&self, limits: JournalSettings) {
        if let Some(tx) = self.inner.tx.as_ref() {
            let _ = tx.send(Msg::Limits(limits));
        }
    }

    /// Export the calls recorded from now on as OpenTelemetry spans as
    /// `settings` say, or stop (off, or an unusable endpoint: see
    /// [`Journal::telemetry_stats`]). What was queued for the old endpoint
    /// is still sent there.
    pub fn set_telemetry(&self, settings: &TelemetrySettings) {
        if let Some(tx) = self.inner.tx.as_ref() {
            let _ = tx.send(Msg::Telemetry(settings.clone()));
        }
    }

    /// Follows Switchboard's settings file: the journal's limits and its
    /// OpenTelemetry export change as soon as the file does (from the app,
    /// the CLI or a hand edit), until the journal is dropped. Applies the
    /// file's settings now. Needs a tokio runtime.
    pub fn follow_settings(&self, host: &Host) {
        let mut rx = crate::settings::follow(host, |s| (s.journal.clone(), s.telemetry.clone()));
        let now = rx.borrow_and_update().clone();
        self.set_limits(now.0.clone());
        self.set_telemetry(&now.1);
        let me = Arc::downgrade(&self.inner);
        let stop = self.inner.stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    changed = rx.changed() => if changed.is_err() { return },
                }
                let Some(inner) = me.upgrade() else { return };
                let j = Journal { inner };
                let (limits, telemetry) = (**rx.borrow_and_update()).clone();
                j.set_limits(limits);
                j.set_telemetry(&telemetry);
            }
        });
    }

    /// How the OpenTelemetry export is doing.
    pub fn telemetry_stats(&self) -> TelemetryStats {
        self.inner.shared.telemetry.stats()
    }

    pub fn stats(&self) -> Stats {
        let s = &self.inner.shared;
        Stats {
            written: s.written.load(Ordering::Relaxed),
            dropped: s.dropped.load(Ordering::Relaxed),
            queued: s.queued.load(Ordering::Relaxed) as u64,
            problem: s.problem.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        }
    }

    /// The reader, opened anew after the writer set a bad file aside.
    fn reader(&self) -> std::sync::MutexGuard<'_, (Reader, u64)> {
        let mut r = self.inner.reader.lock().unwrap_or_else(|p| p.into_inner());
        let generation = self.inner.shared.generation.load(Ordering::Relaxed);
        if r.1 != generation {
            r.0.reopen();
            r.1 = generation;
        }
        r
    }

    /// [`Reader::query`].
    pub fn query(&self, filter: &Filter) -> Result<Page> {
        self.reader().0.query(filter)
    }

    /// [`Reader::count`].
    pub fn count(&self, filter: &Filter) -> Result<u64> {
        self.reader().0.count(filter)
    }

    /// [`Reader::aggregates`].
    pub fn aggregates(&self, filter: &Filter) -> Result<Aggregates> {
        self.reader().0.aggregates(filter)
    }

    /// [`Reader::export`].
    pub fn export(
        &self,
        filter: &Filter,
        format: Format,
        out: &mut dyn std::io::Write,
    ) -> Result<u64> {
        self.reader().0.export(filter, format, out)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
        // The writer drains the queue, then sees the queue closed. It is
        // waited for `Tuning::drop_wait` at most: a file another program
        // keeps locked must not hold up the process (the thread ends with it).
        self.tx.take();
        let wait = self.drop_wait;
        let ended = self
            .ended
            .take()
            .and_then(|e| e.into_inner().ok())
            .is_some_and(|e| e.recv_timeout(wait).is_ok());
        if let (true, Some(t)) = (ended, self.thread.take()) {
            let _ = t.join();
        }
    }
}

/// Writes entries as they are given, masked and capped, in one
/// transaction, without the queue (imports, benchmarks). Returns how many.
pub fn bulk_insert(
    path: &Path,
    entries: impl IntoIterator<Item = Entry>,
    redactor: &Redactor,
) -> Result<u64> {
    let db = |source| Error::Db {
        path: path.to_path_buf(),
        source,
    };
    let mut conn = store::open_for_writing(path, Tuning::default().busy_timeout).map_err(db)?;
    let mut batch = Vec::with_capacity(4096);
    let mut n = 0;
    let tx = conn.transaction().map_err(db)?;
    for e in entries {
        batch.push(writer::masked(e, redactor));
        if batch.len() == batch.capacity() {
            n += store::insert_in(&tx, &batch).map_err(db)?;
            batch.clear();
        }
    }
    n += store::insert_in(&tx, &batch).map_err(db)?;
    tx.commit().map_err(db)?;
    Ok(n)
}
