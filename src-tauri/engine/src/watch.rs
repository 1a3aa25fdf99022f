//! Live config watching: a filesystem watcher over every source file's
//! folder that turns changes into discovery + reconcile.
//!
//! How it works:
//!
//! * [`ConfigWatcher`] owns one `notify` watcher and watches
//!   the **parent folders** of every source file, non-recursively — never the
//!   files themselves, since an atomic save (rename over the file) would end
//!   a watch on the file's inode. A folder that does not exist yet is covered
//!   by watching its nearest existing ancestor; when folders appear (or a
//!   watched folder is deleted and recreated, i.e. has a new inode) the set is
//!   re-armed. A symlinked config also gets its target's folder watched.
//! * [`Live`] runs one task: each event that touches a tracked file
//!   (or a folder on the way to one) starts a settle window; once no further
//!   relevant event arrived for [`WatchOptions::settle`], it compares the
//!   **content hash** of every tracked file with the last discovery's
//!   (`SourceInfo::hash`). Nothing changed (a touch, a save with the same
//!   bytes, a write already picked up by [`Live::refresh`]) → nothing happens
//!   (hashes, not timestamps). Otherwise it re-runs discovery, publishes
//!   `SourceChanged` per changed source and one `DiscoveryChanged`, re-arms
//!   the folders (the watched set follows the source list: settings can add
//!   project sources) and starts one reconcile in the background
//!   (`Manager::reconcile_in_background`), so a server's slow handshake
//!   never stops the watcher from taking the next change. A burst — an
//!   editor saving ten times, a checkout touching thirty files — is one
//!   reconcile.
//! * A file caught mid-save (it does not parse) keeps the servers of its last
//!   good version (`discover_after`): nothing stops, and when it parses
//!   again only the servers whose definition changed restart.
//! * The app's own writes: after a `Writer` edit the app may call
//!   [`Live::refresh`] to apply the change immediately; the watcher's own
//!   event for that write then finds identical hashes and does nothing. If
//!   the app does not call it, the watcher picks the write up like any
//!   external edit. Either way one write is exactly one reconcile, and since
//!   reconciling never writes a config file there is no reload loop. (No
//!   `note_own_write` bookkeeping is needed: the hash comparison already
//!   deduplicates.)
//!
//! Watcher events go out on this module's own broadcast channel
//! ([`Live::subscribe`]); the manager's events (`Status`, `Reconciled`, …)
//! stay on `Manager::subscribe`. The app forwards both.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use serde::Serialize;
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::discovery::{discover_after, gemini_enablement_path, DiscoverOptions, Discovery};
use crate::events::EngineEvent;
use crate::host::Host;
use crate::manager::{Manager, Wanted};
use crate::settings::{settings_path, Settings};
use crate::writer::{content_hash, ContentHash};

/// Extra wait after the first relevant event of a burst, before the settle window.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(25);
/// Events waiting for the watch task at most. When it is full, events are
/// dropped and the next check counts as relevant: it hashes every tracked
/// file anyway, so nothing is missed.
const EVENT_QUEUE: usize = 1024;
/// Quiet time after the last relevant batch before acting on a burst.
pub const DEFAULT_SETTLE: Duration = Duration::from_millis(40);
/// A change storm that never goes quiet is still acted on this often.
pub const MAX_SETTLE: Duration = Duration::from_secs(2);
/// Same limit as discovery: larger files are not read (hash `None`).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// `SourceChanged.source` for Switchboard's settings file.
pub const SETTINGS_SOURCE: &str = "settings";
/// `SourceChanged.source` for Gemini's `mcp-server-enablement.json`.
pub const GEMINI_ENABLEMENT_SOURCE: &str = "gemini-enablement";

#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Extra wait after the first relevant event of a burst, before the
    /// settle window starts (25 ms by default).
    pub debounce: Duration,
    /// How long no further relevant batch must arrive before a burst is
    /// acted on (40 ms by default). Bursts whose saves are closer together
    /// than this are one reconcile.
    pub settle: Duration,
    /// Passed to every re-discovery (`--project` folders).
    pub discover: DiscoverOptions,
    /// The settings the initial discovery was made with, when the caller
    /// read them earlier (the engine reads `settings.json` when it is made,
    /// long before it starts watching). If the file says otherwise when the
    /// watch starts, another program changed it in between, and the
    /// catch-up check discovers again.
    pub initial_settings: Option<Settings>,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            debounce: DEFAULT_DEBOUNCE,
            settle: DEFAULT_SETTLE,
            discover: DiscoverOptions::default(),
            initial_settings: None,
        }
    }
}

/// Where the watcher gets the current settings on each re-discovery.
pub type SettingsProvider = Arc<dyn Fn() -> Settings + Send + Sync>;

/// Settings read from `settings.json` each time (a broken file gives the defaults).
pub fn settings_from_disk(host: &Host) -> SettingsProvider {
    let host = host.clone();
    Arc::new(move || Settings::load(&host).0)
}

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot start the file watcher: {0}")]
    Notify(#[from] notify::Error),
}

/// What the file watcher hands to the watch task. There is no timer in
/// between (a debouncer's ticking thread would wake an idle app ~160 times
/// a second): the watch task's settle window gathers a burst.
pub enum WatchBatch {
    Event(notify::Event),
    Error(notify::Error),
}

/// Identity of a watched folder, to notice it was deleted and recreated.
type FolderId = Option<(u64, u64)>;

fn folder_id(p: &Path) -> FolderId {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        None
    }
}

/// The nearest folder at or above `p` that exists.
fn nearest_existing_dir(p: &Path) -> Option<PathBuf> {
    let mut cur = Some(p);
    while let Some(c) = cur {
        if c.is_dir() {
            return Some(c.to_path_buf());
        }
        cur = c.parent();
    }
    None
}

/// One watcher on the parent folders of a set of files.
pub struct ConfigWatcher {
    watcher: RecommendedWatcher,
    /// Set when an event did not fit in the queue.
    overflowed: Arc<std::sync::atomic::AtomicBool>,
    /// The files as given (source paths, settings, Gemini enablement).
    base: Vec<PathBuf>,
    /// Files whose events matter: `base` plus symlink targets.
    files: HashSet<PathBuf>,
    /// Folders that should be watched (may not exist yet).
    folders: BTreeSet<PathBuf>,
    /// Folders actually watched, with the identity they had when armed.
    armed: BTreeMap<PathBuf, FolderId>,
    errors: Vec<String>,
}

impl ConfigWatcher {
    /// A watcher with no folders yet; events go to `tx`.
    pub fn new(tx: mpsc::Sender<WatchBatch>) -> Result<ConfigWatcher, WatchError> {
        let overflowed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = overflowed.clone();
        let watcher = notify::recommended_watcher(move |r: notify::Result<notify::Event>| {
            let b = match r {
                Ok(ev) => WatchBatch::Event(ev),
                Err(e) => WatchBatch::Error(e),
            };
            if tx.try_send(b).is_err() {
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        })?;
        Ok(ConfigWatcher {
            watcher,
            overflowed,
            base: vec![],
            files: HashSet::new(),
            folders: BTreeSet::new(),
            armed: BTreeMap::new(),
            errors: vec![],
        })
    }

    /// Watch the folders of exactly these files (replacing the previous set).
    pub fn set_files(&mut self, files: impl IntoIterator<Item = PathBuf>) {
        let mut seen = HashSet::new();
        self.base = files
            .into_iter()
            .filter(|f| seen.insert(f.clone()))
            .collect();
        self.rearm();
    }

    /// Recompute which folders to watch (folders appear and disappear,
    /// symlinks get retargeted) and watch/unwatch the difference.
    pub fn rearm(&mut self) {
        let mut files = HashSet::new();
        let mut folders = BTreeSet::new();
        for f in &self.base {
            files.insert(f.clone());
            if let Some(p) = f.parent() {
                folders.insert(p.to_path_buf());
            }
            if let Ok(target) = std::fs::canonicalize(f) {
                if &target != f {
                    if let Some(p) = target.parent() {
                        folders.insert(p.to_path_buf());
                    }
                    files.insert(target);
                }
            }
        }
        let want: BTreeMap<PathBuf, FolderId> = folders
            .iter()
            .filter_map(|f| nearest_existing_dir(f))
            .map(|d| {
                let id = folder_id(&d);
                (d, id)
            })
            .collect();
        let stale: Vec<PathBuf> = self
            .armed
            .iter()
            .filter(|(p, id)| want.get(*p) != Some(id))
            .map(|(p, _)| p.clone())
            .collect();
        for p in stale {
            // A deleted folder's watch is already gone: errors do not matter.
            let _ = self.watcher.unwatch(&p);
            self.armed.remove(&p);
        }
        for (p, id) in want {
            if self.armed.contains_key(&p) {
                continue;
            }
            match self.watcher.watch(&p, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.armed.insert(p, id);
                }
                Err(e) => self
                    .errors
                    .push(format!("cannot watch {}: {e}", p.display())),
            }
        }
        self.files = files;
        self.folders = folders;
    }

    /// The folders watched right now.
    pub fn armed(&self) -> Vec<PathBuf> {
        self.armed.keys().cloned().collect()
    }

    /// Warnings from watching (a folder that could not be watched).
    pub fn take_errors(&mut self) -> Vec<String> {
        std::mem::take(&mut self.errors)
    }

    /// Does this event concern a tracked file or a folder on the way to one?
    /// Reads (open, close-without-write) never do: the watcher reads files itself.
    pub fn is_relevant(&self, ev: &notify::Event) -> bool {
        if ev.need_rescan() {
            return true;
        }
        if !crate::file_watch::is_change(ev) {
            return false;
        }
        ev.paths
            .iter()
            .any(|p| self.files.contains(p) || self.folders.iter().any(|f| f.starts_with(p)))
    }
}

/// SHA-256 of a file as discovery would see it (`None`: absent or unreadable).
pub fn file_hash(path: &Path) -> Option<ContentHash> {
    match std::fs::metadata(path) {
        Ok(m) if m.len() > MAX_FILE_BYTES => None,
        Ok(_) => std::fs::read(path).ok().map(|b| content_hash(&b)),
        Err(_) => None,
    }
}

/// Every file whose content can change a discovery: the sources, Switchboard's
/// settings, Gemini's enablement file and the files Claude Code keeps its
/// project approvals in.
fn tracked_files(host: &Host, d: &Discovery) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = d.sources.iter().map(|s| s.path.clone()).collect();
    v.push(settings_path(host));
    v.push(gemini_enablement_path(host));
    for p in d.project_folders() {
        v.extend(crate::trust::approval_files(host, &p));
    }
    let mut seen = HashSet::new();
    v.retain(|p| seen.insert(p.clone()));
    v
}

/// Hashes as of discovery `d`: the sources' from `d`, the others read now.
fn baseline_of(host: &Host, d: &Discovery) -> HashMap<PathBuf, Option<ContentHash>> {
    baseline_after(host, d, &HashMap::new())
}

/// [`baseline_of`] for a discovery made after the files were hashed as
/// `hashed_before`: the settings and approval files keep those hashes (the
/// discovery read them later, so a save in between shows as a change next
/// time); only files tracked for the first time are read now.
fn baseline_after(
    host: &Host,
    d: &Discovery,
    hashed_before: &HashMap<PathBuf, Option<ContentHash>>,
) -> HashMap<PathBuf, Option<ContentHash>> {
    let mut b = HashMap::new();
    for s in &d.sources {
        b.entry(s.path.clone()).or_insert(s.hash);
    }
    for p in tracked_files(host, d) {
        b.entry(p)
            .or_insert_with_key(|p| match hashed_before.get(p) {
                Some(h) => *h,
                None => file_hash(p),
            });
    }
    b
}

fn warning_count(d: &Discovery) -> usize {
    d.errors.len()
        + d.sources.iter().map(|s| s.warnings.len()).sum::<usize>()
        + d.servers
            .iter()
            .map(|s| s.winner.warnings.len() + s.winner.errors.len())
            .sum::<usize>()
}

/// Counters, for tests and diagnostics.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct WatchStats {
    /// Events received from notify.
    pub batches: u64,
    /// Batches that touched a tracked file or folder.
    pub relevant_batches: u64,
    /// Hash comparisons run (after a settled burst or a refresh).
    pub checks: u64,
    /// Re-discoveries followed by a reconcile (started in the background).
    pub reconciles: u64,
}

struct Shared {
    events: broadcast::Sender<EngineEvent>,
    discovery: RwLock<Arc<Discovery>>,
    armed: RwLock<Vec<PathBuf>>,
    errors: Mutex<Vec<String>>,
    stats: Mutex<WatchStats>,
}

enum Cmd {
    Refresh(oneshot::Sender<Option<Arc<Discovery>>>),
    Stop,
}

struct State {
    host: Host,
    settings: SettingsProvider,
    manager: Manager,
    opts: WatchOptions,
    watcher: ConfigWatcher,
    baseline: HashMap<PathBuf, Option<ContentHash>>,
    discovery: Arc<Discovery>,
    shared: Arc<Shared>,
}

impl State {
    fn publish_watch_state(&mut self) {
        *self.shared.armed.write().unwrap() = self.watcher.armed();
        let errs = self.watcher.take_errors();
        if !errs.is_empty() {
            self.shared.errors.lock().unwrap().extend(errs);
        }
    }

    /// Count a batch; true when it concerns a tracked file or folder.
    fn take(&mut self, b: WatchBatch) -> bool {
        self.shared.stats.lock().unwrap().batches += 1;
        let overflowed = self
            .watcher
            .overflowed
            .swap(false, std::sync::atomic::Ordering::Relaxed);
        let relevant = overflowed
            || match b {
                WatchBatch::Event(ev) => self.watcher.is_relevant(&ev),
                WatchBatch::Error(e) => {
                    self.shared
                        .errors
                        .lock()
                        .unwrap()
                        .push(format!("file watcher: {e}"));
                    true
                }
            };
        if relevant {
            self.shared.stats.lock().unwrap().relevant_batches += 1;
        }
        relevant
    }

    /// Compare hashes; on any change re-discover, publish, and start a
    /// reconcile in the background. Returns the new discovery, if any.
    async fn check(&mut self) -> Option<Arc<Discovery>> {
        self.shared.stats.lock().unwrap().checks += 1;
        self.watcher.rearm();
        self.publish_watch_state();
        // Hashed before anything is read: a file saved while this check
        // reads it keeps its older hash in the baseline, so the next check
        // sees that save instead of taking it as already read.
        let now: HashMap<PathBuf, Option<ContentHash>> = self
            .baseline
            .keys()
            .map(|p| (p.clone(), file_hash(p)))
            .collect();
        let mut changed: Vec<PathBuf> = now
            .iter()
            .filter(|(p, h)| self.baseline.get(*p) != Some(*h))
            .map(|(p, _)| p.clone())
            .collect();
        if changed.is_empty() {
            return None;
        }
        changed.sort();
        let settings = (self.settings)();
        let (host, opts, previous) = (
            self.host.clone(),
            self.opts.discover.clone(),
            self.discovery.clone(),
        );
        let d = match tokio::task::spawn_blocking(move || {
            discover_after(&host, &settings, &opts, Some(&previous))
        })
        .await
        {
            Ok(d) => Arc::new(d),
            Err(e) => {
                self.shared
                    .errors
                    .lock()
                    .unwrap()
                    .push(format!("discovery failed: {e}"));
                return None;
            }
        };
        // The new discovery is visible before anyone hears of the change, so
        // a front end that reloads on the first event already sees it.
        let previous = std::mem::replace(&mut self.discovery, d.clone());
        *self.shared.discovery.write().unwrap() = d.clone();
        let settings_file = settings_path(&self.host);
        let enablement = gemini_enablement_path(&self.host);
        for p in &changed {
            let mut ids: Vec<String> = vec![];
            for s in previous.sources.iter().chain(d.sources.iter()) {
                if &s.path == p && !ids.contains(&s.id) {
                    ids.push(s.id.clone());
                }
            }
            if p == &settings_file {
                ids.push(SETTINGS_SOURCE.into());
            }
            if p == &enablement {
                ids.push(GEMINI_ENABLEMENT_SOURCE.into());
            }
            for id in ids {
                let _ = self.shared.events.send(EngineEvent::SourceChanged {
                    source: id,
                    path: p.clone(),
                });
            }
        }
        self.baseline = baseline_after(&self.host, &d, &now);
        self.watcher.set_files(tracked_files(&self.host, &d));
        self.publish_watch_state();
        let _ = self.shared.events.send(EngineEvent::DiscoveryChanged {
            servers: d.servers.len(),
            warnings: warning_count(&d),
        });
        self.manager.set_roots(&d.project_folders()).await;
        self.shared.stats.lock().unwrap().reconciles += 1;
        self.manager
            .reconcile_in_background(Wanted::from_discovery(&d));
        Some(d)
    }
}

async fn run(
    mut st: State,
    mut rx: mpsc::Receiver<WatchBatch>,
    mut cmds: mpsc::UnboundedReceiver<Cmd>,
) {
    loop {
        tokio::select! {
            b = rx.recv() => {
                let Some(b) = b else { return };
                if !st.take(b) {
                    continue;
                }
                // Settle: absorb the rest of the burst into this one check.
                let start = tokio::time::Instant::now();
                let mut deadline = start + st.opts.debounce + st.opts.settle;
                loop {
                    match tokio::time::timeout_at(deadline.min(start + MAX_SETTLE), rx.recv()).await {
                        Ok(Some(b)) => {
                            if st.take(b) {
                                deadline = tokio::time::Instant::now() + st.opts.settle;
                            }
                        }
                        Ok(None) => return,
                        Err(_) => break,
                    }
                }
                st.check().await;
            }
            c = cmds.recv() => match c {
                Some(Cmd::Refresh(reply)) => {
                    let r = st.check().await;
                    let _ = reply.send(r);
                }
                Some(Cmd::Stop) | None => return,
            }
        }
    }
}

/// The running watcher: keeps `manager` in line with the config files.
pub struct Live {
    shared: Arc<Shared>,
    cmds: mpsc::UnboundedSender<Cmd>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Live {
    /// Start watching. `initial` is the discovery the manager was started
    /// from; anything that changed since it was read is discovered before
    /// this returns (and reconciled in the background). Must be called inside a Tokio runtime.
    pub async fn start(
        host: Host,
        settings: SettingsProvider,
        manager: Manager,
        initial: Discovery,
        opts: WatchOptions,
    ) -> Result<Live, WatchError> {
        let (tx, rx) = mpsc::channel(EVENT_QUEUE);
        let mut watcher = ConfigWatcher::new(tx)?;
        watcher.set_files(tracked_files(&host, &initial));
        let (events, _) = broadcast::channel(1024);
        let initial = Arc::new(initial);
        let shared = Arc::new(Shared {
            events,
            discovery: RwLock::new(initial.clone()),
            armed: RwLock::new(vec![]),
            errors: Mutex::new(vec![]),
            stats: Mutex::new(WatchStats::default()),
        });
        let mut baseline = baseline_of(&host, &initial);
        if let Some(read) = &opts.initial_settings {
            if *read != settings() {
                // Not the settings `initial` was made with: a hash that no
                // content (nor a missing file) has, so the check below
                // discovers again.
                baseline.insert(settings_path(&host), Some(ContentHash([0; 32])));
            }
        }
        let mut st = State {
            baseline,
            host,
            settings,
            manager,
            opts,
            watcher,
            discovery: initial,
            shared: shared.clone(),
        };
        // Catch up with changes made between `initial` and the watches.
        st.check().await;
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(run(st, rx, cmd_rx));
        Ok(Live {
            shared,
            cmds: cmd_tx,
            task: Some(task),
        })
    }

    /// `SourceChanged` and `DiscoveryChanged` events (the manager's own
    /// events, `Reconciled` included, are on `Manager::subscribe`).
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.shared.events.subscribe()
    }

    /// The latest discovery (what the UI shows as sources and servers).
    pub fn discovery(&self) -> Arc<Discovery> {
        self.shared.discovery.read().unwrap().clone()
    }

    /// The folders being watched right now.
    pub fn watched_folders(&self) -> Vec<PathBuf> {
        self.shared.armed.read().unwrap().clone()
    }

    /// Problems so far (a folder that could not be watched, notify errors).
    pub fn errors(&self) -> Vec<String> {
        self.shared.errors.lock().unwrap().clone()
    }

    pub fn stats(&self) -> WatchStats {
        self.shared.stats.lock().unwrap().clone()
    }

    /// Check every tracked file now (no debounce); if any changed, returns
    /// the new discovery once it is published, with its reconcile started in
    /// the background (`Reconciled` tells when it is done); `None` when
    /// nothing changed. Call it after the app's own writes to apply them at
    /// once — the watcher's event for the same write then finds nothing new.
    pub async fn refresh(&self) -> Option<Arc<Discovery>> {
        let (tx, rx) = oneshot::channel();
        self.cmds.send(Cmd::Refresh(tx)).ok()?;
        rx.await.ok().flatten()
    }

    /// Stop watching after the check in progress, if any (servers keep
    /// running, and a reconcile already started goes on; shut the manager
    /// down separately). Dropping a `Live` stops it at once instead.
    pub async fn stop(mut self) {
        let _ = self.cmds.send(Cmd::Stop);
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}
