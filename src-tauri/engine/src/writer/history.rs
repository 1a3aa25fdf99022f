//! History and undo: every file Switchboard writes is kept with its content
//! before and after, in a bounded store, and can be undone as long as the
//! file still holds what Switchboard wrote.
//!
//! `write_atomic` reports each write it makes (`note_write`) to the
//! `Recording` open on its thread; each user action (a server edit, a
//! settings save, an undo) opens one, so the record is taken at the one
//! place bytes are written and one action is one entry even when it writes
//! two files (disabling a Cline server writes Cline's file and Switchboard's
//! settings). Undo restores every file of an entry, or refuses before
//! writing any.
//!
//! The store is `<data dir>/history/` (mode 0700): per entry `<id>.json`
//! (when, which files, which server, a one-line summary, a diff with secret
//! values masked) and `<id>.content.json` (the bytes before and after, which
//! may hold tokens; mode 0600, never logged). At most `MAX_ENTRIES` entries
//! and `MAX_BYTES` bytes are kept; the oldest go first, the newest always stays.

use crate::error_code::ErrorCode;
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::host::Host;
use crate::writer::atomic::{content_hash, write_atomic, ContentHash, Expected, WriteError};
use crate::writer::diff::{common_prefix, common_suffix, masked, unmasked_diff, DiffLine};

pub const MAX_ENTRIES: usize = 200;
pub const MAX_BYTES: u64 = 20 * 1024 * 1024;

/// One recorded action, newest first in `History::list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub id: u64,
    /// Milliseconds since the Unix epoch.
    pub at: u64,
    /// The server the action was about, if it was about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub server: Option<String>,
    /// `update "github" in Cursor (args)`.
    pub summary: String,
    /// Set on an entry that undid another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub undo_of: Option<u64>,
    pub files: Vec<FileChange>,
    /// Whether undo can apply now; worked out by `list`, not stored.
    #[serde(default)]
    pub state: UndoState,
}

/// What one action did to one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    pub path: PathBuf,
    /// SHA-256 (hex) of the content before and after; none: no file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub before_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub after_hash: Option<String>,
    /// Changed lines with context; env, header and token values masked.
    pub diff: Vec<DiffLine>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum UndoState {
    /// Every file still holds what Switchboard wrote.
    #[default]
    Ready,
    /// A file changed since; undo would refuse.
    Changed,
    /// Every file already holds the content from before.
    Undone,
}

/// What `undo` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UndoReport {
    /// The entry undone.
    pub undone: u64,
    pub summary: String,
    /// The files given back their earlier content.
    pub restored: Vec<PathBuf>,
    /// The entry recording the undo itself (none if it could not be recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub recorded_as: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error("Switchboard's history is empty: there is nothing to undo")]
    Empty,
    #[error("There is no change #{0} in Switchboard's history (see `switchboard history`)")]
    NotFound(u64),
    #[error("{} changed since Switchboard wrote it; undo would overwrite those changes", path.display())]
    Conflict { path: PathBuf },
    #[error("Change #{id} is already undone: {} has the content from before it", path.display())]
    AlreadyUndone { id: u64, path: PathBuf },
    #[error("The saved content of change #{id} is missing or damaged in {}; it cannot be undone", dir.display())]
    Damaged { id: u64, dir: PathBuf },
    #[error(transparent)]
    Write(#[from] WriteError),
}

impl UndoError {
    /// Stable code for the UI (`{code, message}`).
    pub fn code(&self) -> ErrorCode {
        match self {
            UndoError::Empty | UndoError::NotFound(_) => ErrorCode::NotFound,
            UndoError::Conflict { .. } | UndoError::Write(WriteError::Conflict { .. }) => {
                ErrorCode::Conflict
            }
            UndoError::AlreadyUndone { .. } => ErrorCode::AlreadyUndone,
            UndoError::Damaged { .. } => ErrorCode::Damaged,
            UndoError::Write(_) => ErrorCode::Io,
        }
    }
}

/// The history folder of one machine.
#[derive(Debug, Clone)]
pub struct History {
    dir: PathBuf,
    max_entries: usize,
    max_bytes: u64,
}

pub fn history_dir(host: &Host) -> PathBuf {
    host.join(&host.switchboard_data_dir(), "history")
}

impl History {
    pub fn for_host(host: &Host) -> History {
        History::at(history_dir(host))
    }

    pub fn at(dir: impl Into<PathBuf>) -> History {
        History {
            dir: dir.into(),
            max_entries: MAX_ENTRIES,
            max_bytes: MAX_BYTES,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every entry, newest first, each with whether it can be undone now.
    pub fn list(&self) -> Vec<HistoryEntry> {
        let mut ids = self.ids();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        let mut current = HashMap::new();
        ids.into_iter()
            .filter_map(|id| self.entry(id))
            .map(|mut e| {
                e.state = state_of(&e, &mut current).0;
                e
            })
            .collect()
    }

    /// One entry as stored (its `state` is not worked out).
    pub fn entry(&self, id: u64) -> Option<HistoryEntry> {
        let bytes = std::fs::read(self.meta_path(id)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    fn newest(&self) -> Option<u64> {
        self.ids().into_iter().max()
    }

    /// Undo entry `id` (the newest when `None`): every file it wrote gets its
    /// earlier content back, written like any edit (and so recorded as a new
    /// entry), if each still holds exactly what Switchboard wrote. Otherwise
    /// nothing is written and the conflict names the file.
    pub fn undo(&self, id: Option<u64>) -> Result<UndoReport, UndoError> {
        let id = match id {
            Some(id) => id,
            None => self.newest().ok_or(UndoError::Empty)?,
        };
        let entry = self.entry(id).ok_or(UndoError::NotFound(id))?;
        let content = self.content(id).ok_or_else(|| UndoError::Damaged {
            id,
            dir: self.dir.clone(),
        })?;
        let (state, path) = state_of(&entry, &mut HashMap::new());
        match (state, path) {
            (UndoState::Changed, Some(path)) => return Err(UndoError::Conflict { path }),
            (UndoState::Undone, path) => {
                let path = path
                    .or_else(|| entry.files.first().map(|f| f.path.clone()))
                    .unwrap_or_default();
                return Err(UndoError::AlreadyUndone { id, path });
            }
            _ => {}
        }

        let recording = Recording::open(
            self.clone(),
            Label::fixed(
                entry.server.as_deref(),
                format!("undo #{id}: {}", entry.summary),
            ),
            Some(id),
        );
        let mut restored = vec![];
        for file in &entry.files {
            let stored = content
                .files
                .iter()
                .find(|f| f.path == file.path)
                .ok_or_else(|| UndoError::Damaged {
                    id,
                    dir: self.dir.clone(),
                })?;
            let now = read_optional(&file.path).map_err(|source| WriteError::Io {
                path: file.path.clone(),
                source,
            })?;
            let now_hash = now.as_ref().map(|b| hex::encode(content_hash(b).0));
            if now_hash == file.before_hash {
                continue; // this file is already as it was
            }
            // A large file's content before is kept as what the write
            // changed, to be applied to the content it wrote; any other
            // content is refused below, by the write's hash check.
            let written = match now_hash == file.after_hash {
                true => now.as_deref(),
                false => None,
            };
            let before = match (&stored.before, written) {
                (Some(Bytes::Splice { .. }), None) => {
                    return Err(WriteError::Conflict {
                        path: file.path.clone(),
                    }
                    .into())
                }
                (before, written) => before
                    .as_ref()
                    .map(|b| b.to_vec(written))
                    .transpose()
                    .map_err(|_| UndoError::Damaged {
                        id,
                        dir: self.dir.clone(),
                    })?,
            };
            let expected = match &file.after_hash {
                Some(h) => Expected::Hash(parse_hash(h).ok_or_else(|| UndoError::Damaged {
                    id,
                    dir: self.dir.clone(),
                })?),
                None => Expected::Absent,
            };
            match before {
                Some(bytes) => write_atomic(&file.path, &bytes, expected)?,
                None => remove_checked(&file.path, expected)?,
            }
            restored.push(file.path.clone());
        }
        let recorded_as = recording.finish().map(|e| e.id);
        Ok(UndoReport {
            undone: id,
            summary: entry.summary,
            restored,
            recorded_as,
        })
    }

    /// Store one action's writes as a new entry, then drop the oldest
    /// entries beyond the bounds. Nothing is stored when nothing changed.
    fn record(
        &self,
        server: Option<String>,
        summary: String,
        undo_of: Option<u64>,
        writes: Vec<FileWrite>,
    ) -> io::Result<Option<HistoryEntry>> {
        let writes: Vec<FileWrite> = writes.into_iter().filter(|w| w.before != w.after).collect();
        if writes.is_empty() {
            return Ok(None);
        }
        // Each file's diff and masking on its own core.
        let (files, stored): (Vec<FileChange>, Vec<StoredFile>) =
            crate::parallel::map(writes, |w| {
                let before_hash = w
                    .before
                    .as_deref()
                    .map(|b| w.before_hash.unwrap_or_else(|| content_hash(b)));
                let after_hash = w
                    .after
                    .as_deref()
                    .map(|a| w.after_hash.unwrap_or_else(|| content_hash(a)));
                let kept = w.prepared.unwrap_or_else(|| {
                    Prepared::of(
                        &w.path,
                        w.before.as_deref(),
                        before_hash,
                        w.after.as_deref(),
                        after_hash,
                    )
                });
                (
                    FileChange {
                        path: w.path.clone(),
                        before_hash: before_hash.map(|h| hex::encode(h.0)),
                        after_hash: after_hash.map(|h| hex::encode(h.0)),
                        diff: kept.diff,
                    },
                    StoredFile {
                        path: w.path,
                        before: kept.before,
                        after: kept.after,
                    },
                )
            })
            .into_iter()
            .unzip();
        let content = StoredContent { files: stored };

        self.ensure_dir()?;
        let mut temp = tempfile::Builder::new()
            .prefix(".entry.")
            .suffix(".tmp")
            .tempfile_in(&self.dir)?;
        {
            let mut out = io::BufWriter::new(&mut temp);
            serde_json::to_writer(&mut out, &content)?;
            out.flush()?;
        }
        temp.as_file().sync_all()?;
        // The content file claims the id: two processes recording at once
        // (the app and the CLI) get different ones.
        let mut id = self.newest().unwrap_or(0) + 1;
        loop {
            match temp.persist_noclobber(self.content_path(id)) {
                Ok(_) => break,
                Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {
                    temp = e.file;
                    id += 1;
                }
                Err(e) => return Err(e.error),
            }
        }
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let entry = HistoryEntry {
            id,
            at,
            server,
            summary,
            undo_of,
            files,
            state: UndoState::Ready,
        };
        let mut meta = tempfile::Builder::new()
            .prefix(".entry.")
            .suffix(".tmp")
            .tempfile_in(&self.dir)?;
        // One write: straight into the file, serde writes token by token (an
        // entry's diff of several files was millions of system calls).
        meta.write_all(&serde_json::to_vec_pretty(&entry)?)?;
        meta.flush()?;
        meta.as_file().sync_all()?;
        meta.persist(self.meta_path(id)).map_err(|e| e.error)?;
        self.prune();
        Ok(Some(entry))
    }

    /// Drop the oldest entries until at most `max_entries` and `max_bytes`
    /// remain (the newest stays even when it alone is larger).
    fn prune(&self) {
        let mut ids = self.ids();
        ids.sort_unstable();
        let size = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        // An entry's files are written once, so a size read stays true:
        // only new entries are looked at (hundreds of entries would
        // otherwise cost hundreds of `stat`s per edit).
        let mut known = ENTRY_SIZES.lock().unwrap_or_else(|p| p.into_inner());
        known.retain(|(dir, id), _| *dir != self.dir || ids.binary_search(id).is_ok());
        let mut sizes: Vec<(u64, u64)> = ids
            .iter()
            .map(|&id| {
                let bytes = *known
                    .entry((self.dir.clone(), id))
                    .or_insert_with(|| size(self.meta_path(id)) + size(self.content_path(id)));
                (id, bytes)
            })
            .collect();
        let mut total: u64 = sizes.iter().map(|s| s.1).sum();
        while sizes.len() > 1 && (sizes.len() > self.max_entries || total > self.max_bytes) {
            let (id, bytes) = sizes.remove(0);
            let _ = std::fs::remove_file(self.meta_path(id));
            let _ = std::fs::remove_file(self.content_path(id));
            known.remove(&(self.dir.clone(), id));
            total -= bytes;
        }
    }

    fn ids(&self) -> Vec<u64> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return vec![];
        };
        dir.flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                name.strip_suffix(".json")
                    .filter(|n| !n.ends_with(".content"))?
                    .parse()
                    .ok()
            })
            .collect()
    }

    fn content(&self, id: u64) -> Option<StoredContent> {
        let bytes = std::fs::read(self.content_path(id)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    fn meta_path(&self, id: u64) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    fn content_path(&self, id: u64) -> PathBuf {
        self.dir.join(format!("{id}.content.json"))
    }

    /// The folder, readable by this user only (it holds config contents).
    fn ensure_dir(&self) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.dir)?;
            let mode = std::fs::metadata(&self.dir)?.permissions().mode() & 0o777;
            if mode != 0o700 {
                std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))?;
            }
            Ok(())
        }
        #[cfg(not(unix))]
        std::fs::create_dir_all(&self.dir)
    }
}

/// Whether `entry` can be undone, and the first file that decides it:
/// any file that is neither as written nor as before makes it `Changed`.
fn state_of(
    entry: &HistoryEntry,
    current: &mut HashMap<PathBuf, Option<String>>,
) -> (UndoState, Option<PathBuf>) {
    let mut all_before = true;
    let mut first_before = None;
    for f in &entry.files {
        let now = current
            .entry(f.path.clone())
            .or_insert_with(|| {
                read_optional(&f.path)
                    .ok()
                    .flatten()
                    .map(|b| hex::encode(content_hash(&b).0))
            })
            .clone();
        if now == f.after_hash {
            all_before = false;
        } else if now == f.before_hash {
            first_before.get_or_insert_with(|| f.path.clone());
        } else {
            return (UndoState::Changed, Some(f.path.clone()));
        }
    }
    if all_before && !entry.files.is_empty() {
        (UndoState::Undone, first_before)
    } else {
        (UndoState::Ready, None)
    }
}

fn read_optional(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn parse_hash(h: &str) -> Option<ContentHash> {
    let bytes: [u8; 32] = hex::decode(h).ok()?.try_into().ok()?;
    Some(ContentHash(bytes))
}

/// Delete a file Switchboard created (undoing its creation), if it still
/// holds what was written.
pub(crate) fn remove_checked(path: &Path, expected: Expected) -> Result<(), WriteError> {
    let io_err = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let now = read_optional(path).map_err(io_err)?;
    let same = match (expected, &now) {
        (Expected::Hash(h), Some(b)) => content_hash(b) == h,
        (Expected::Absent, None) | (Expected::Any, _) => true,
        _ => false,
    };
    if !same {
        return Err(WriteError::Conflict {
            path: path.to_path_buf(),
        });
    }
    if let Some(before) = now {
        std::fs::remove_file(path).map_err(io_err)?;
        note_write(path, Some(before), None, None, None, None);
    }
    Ok(())
}

#[derive(Serialize, Deserialize)]
struct StoredContent {
    files: Vec<StoredFile>,
}

/// What an entry keeps of one write: its diff, and the content before and
/// after as stored. Worked out by `record`, or beforehand beside the write
/// of a large file (`atomic`), whose disk sync leaves time for it.
pub(crate) struct Prepared {
    diff: Vec<DiffLine>,
    before: Option<Bytes>,
    after: Option<Bytes>,
}

/// `Prepared` before its diff's secret values are masked (which needs the
/// secret values of the content after, found on another thread).
pub(crate) struct Unmasked(Prepared);

impl Unmasked {
    /// `before` and `after` (`None`: no file).
    pub(crate) fn of(before: Option<&[u8]>, after: Option<&[u8]>) -> Unmasked {
        let diff = unmasked_diff(before, after);
        let (before, after) = match (before, after) {
            (Some(b), Some(a)) if b.len().max(a.len()) >= SPLICE_FROM => {
                let start = common_prefix(b, a);
                let end = common_suffix(&b[start..], &a[start..]);
                (
                    Some(Bytes::splice(b, start, end)),
                    Some(Bytes::splice(a, start, end)),
                )
            }
            _ => (before.map(Bytes::of), after.map(Bytes::of)),
        };
        Unmasked(Prepared {
            diff,
            before,
            after,
        })
    }

    /// Masked with the secret values of both sides, given with their hashes
    /// (by which large contents' secret values are remembered).
    pub(crate) fn masked(
        self,
        path: &Path,
        before: Option<(&[u8], Option<ContentHash>)>,
        after: Option<(&[u8], Option<ContentHash>)>,
    ) -> Prepared {
        let Unmasked(p) = self;
        Prepared {
            diff: masked(path, p.diff, before, after),
            ..p
        }
    }
}

impl Prepared {
    /// `before` and `after` with their hashes (`None`: no file).
    pub(crate) fn of(
        path: &Path,
        before: Option<&[u8]>,
        before_hash: Option<ContentHash>,
        after: Option<&[u8]>,
        after_hash: Option<ContentHash>,
    ) -> Prepared {
        Unmasked::of(before, after).masked(
            path,
            before.map(|b| (b, before_hash)),
            after.map(|a| (a, after_hash)),
        )
    }
}

#[derive(Serialize, Deserialize)]
struct StoredFile {
    path: PathBuf,
    before: Option<Bytes>,
    after: Option<Bytes>,
}

/// Content from this size on is stored as what one write changed (a
/// `Splice`), not whole: a several-MB `~/.claude.json` would otherwise put
/// twice its size into every entry, and the history's bounds would keep
/// only a few edits of it.
const SPLICE_FROM: usize = 256 * 1024;

/// The sizes (meta + content) of the history entries `prune` has seen, by
/// folder and id.
static ENTRY_SIZES: std::sync::Mutex<std::collections::BTreeMap<(PathBuf, u64), u64>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// File content: text as it is, anything else in hex; large content as a
/// splice of the content on the other side of the same write.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Bytes {
    Text(String),
    Hex(String),
    /// The other content, with its bytes from `start` up to the last `end`
    /// bytes replaced by `middle`. The content before a write is rebuilt
    /// from the file as the write left it, which undo checks by its hash.
    Splice {
        start: usize,
        end: usize,
        middle: Box<Bytes>,
    },
}

/// What a `Splice` does not fit (the stored entry is damaged).
#[derive(Debug)]
struct BadBytes;

impl Bytes {
    fn of(b: &[u8]) -> Bytes {
        match std::str::from_utf8(b) {
            Ok(t) => Bytes::Text(t.to_string()),
            Err(_) => Bytes::Hex(hex::encode(b)),
        }
    }

    /// `this` as stored next to the content on the other side of the write,
    /// with which it shares its first `start` and last `end` bytes.
    fn splice(this: &[u8], start: usize, end: usize) -> Bytes {
        Bytes::Splice {
            start,
            end,
            middle: Box::new(Bytes::of(&this[start..this.len() - end])),
        }
    }

    /// The bytes; a splice needs `other`, the content it was taken against.
    fn to_vec(&self, other: Option<&[u8]>) -> Result<Vec<u8>, BadBytes> {
        match self {
            Bytes::Text(t) => Ok(t.as_bytes().to_vec()),
            Bytes::Hex(h) => hex::decode(h).map_err(|_| BadBytes),
            Bytes::Splice { start, end, middle } => {
                let other = other.ok_or(BadBytes)?;
                if start.checked_add(*end).is_none_or(|n| n > other.len()) {
                    return Err(BadBytes);
                }
                let middle = middle.to_vec(None)?;
                Ok([&other[..*start], &middle[..], &other[other.len() - end..]].concat())
            }
        }
    }
}

// ---- recording ---------------------------------------------------------

/// One file write seen by a recording: content before (none: the file did
/// not exist) and after (none: removed).
pub struct FileWrite {
    pub path: PathBuf,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
    /// The hash of `before`, when the write worked it out already.
    before_hash: Option<ContentHash>,
    /// The hash of `after`, when the write worked it out already.
    after_hash: Option<ContentHash>,
    /// What the entry keeps of this write, when the write worked it out.
    prepared: Option<Prepared>,
}

/// Works out an action's summary from what it wrote.
pub type Describe = Box<dyn FnOnce(&[FileWrite]) -> String>;

/// What an action is called in the history. The summary is worked out
/// once the action is done, from what it wrote (e.g. which fields changed).
pub struct Label {
    pub server: Option<String>,
    pub describe: Describe,
}

impl Label {
    pub fn fixed(server: Option<&str>, summary: impl Into<String>) -> Label {
        let summary = summary.into();
        Label {
            server: server.map(String::from),
            describe: Box::new(move |_| summary),
        }
    }
}

struct Journal {
    history: History,
    label: Label,
    undo_of: Option<u64>,
    writes: Vec<FileWrite>,
}

thread_local! {
    static OPEN: RefCell<Option<Journal>> = const { RefCell::new(None) };
}

/// Collects the writes of one action on this thread; the outermost one
/// stores them as one entry when finished or dropped (also when the action
/// failed half-way: what was written is recorded). Recordings opened inside
/// it join it. Not `Send`: it cannot be held across an `.await` on a
/// multi-threaded runtime, where the writes could happen on another thread.
pub struct Recording {
    outer: bool,
    done: bool,
    _not_send: PhantomData<*const ()>,
}

impl Recording {
    pub fn begin(host: &Host, label: Label) -> Recording {
        Recording::open(History::for_host(host), label, None)
    }

    fn open(history: History, label: Label, undo_of: Option<u64>) -> Recording {
        let outer = OPEN.with(|open| {
            let mut open = open.borrow_mut();
            if open.is_some() {
                return false;
            }
            *open = Some(Journal {
                history,
                label,
                undo_of,
                writes: vec![],
            });
            true
        });
        Recording {
            outer,
            done: false,
            _not_send: PhantomData,
        }
    }

    /// Store what was written; the new entry, if anything changed.
    pub fn finish(mut self) -> Option<HistoryEntry> {
        self.close()
    }

    fn close(&mut self) -> Option<HistoryEntry> {
        if self.done || !self.outer {
            self.done = true;
            return None;
        }
        self.done = true;
        let journal = OPEN.with(|open| open.borrow_mut().take())?;
        let Journal {
            history,
            label,
            undo_of,
            writes,
        } = journal;
        if writes.is_empty() {
            return None;
        }
        let summary = (label.describe)(&writes);
        match history.record(label.server, summary, undo_of, writes) {
            Ok(entry) => entry,
            Err(e) => {
                // The write itself succeeded; losing its history entry is
                // worth a warning, not a failed edit.
                eprintln!(
                    "switchboard: could not record this change in the history at {}: {e}",
                    history.dir.display()
                );
                None
            }
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.close();
    }
}

/// Called by `write_atomic` after each successful write: the open
/// recording on this thread (if any) keeps the content before and after.
/// Several writes to one file in one action count as one change.
pub(crate) fn note_write(
    path: &Path,
    before: Option<Vec<u8>>,
    before_hash: Option<ContentHash>,
    after: Option<Vec<u8>>,
    after_hash: Option<ContentHash>,
    prepared: Option<Prepared>,
) {
    OPEN.with(|open| {
        let mut open = open.borrow_mut();
        let Some(journal) = open.as_mut() else { return };
        match journal.writes.iter_mut().find(|w| w.path == path) {
            Some(w) => {
                w.after = after;
                w.after_hash = after_hash;
                // prepared against this write's `before`, not the first's
                w.prepared = None;
            }
            None => journal.writes.push(FileWrite {
                path: path.to_path_buf(),
                before,
                after,
                before_hash,
                after_hash,
                prepared,
            }),
        }
    });
}

/// Whether a recording is open on this thread (tests of the write paths).
#[doc(hidden)]
pub fn recording_open() -> bool {
    OPEN.with(|open| open.borrow().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large file written inside a recorded action, where the
    /// new content's hash and secret values are worked out on threads beside
    /// the check: the refused write leaves the file as the other program
    /// wrote it and records nothing; the accepted one is recorded.
    #[test]
    fn a_large_write_refused_beside_its_hash_and_secret_scan_records_nothing() {
        use crate::host::{Host, Os};
        use crate::writer::atomic::{content_hash, write_over, Expected, WriteError};
        let home = tempfile::tempdir().unwrap();
        let host = Host {
            os: Os::Linux,
            home: home.path().into(),
            vars: Default::default(),
            system_root: home.path().into(),
        };
        let path = home.path().join("mcp.json");
        let big = |marker: &str| {
            let notes = "a line of notes\n".repeat(crate::writer::atomic::ASIDE_FROM / 16 + 1);
            serde_json::to_vec(&serde_json::json!({"mcpServers": {}, "notes": notes, "by": marker}))
                .unwrap()
        };
        let read = big("read");
        std::fs::write(&path, &read).unwrap();
        let expected = Expected::Hash(content_hash(&read));
        let theirs = big("theirs");
        std::fs::write(&path, &theirs).unwrap();

        let recording = Recording::begin(&host, Label::fixed(None, "mine"));
        let refused = write_over(&path, big("mine"), expected, &read, false);
        assert!(
            matches!(refused, Err(WriteError::Conflict { .. })),
            "{refused:?}"
        );
        assert_eq!(recording.finish(), None, "nothing recorded");
        assert_eq!(std::fs::read(&path).unwrap(), theirs);
        assert!(History::for_host(&host).list().is_empty());

        std::fs::write(&path, &read).unwrap();
        let recording = Recording::begin(&host, Label::fixed(None, "mine"));
        write_over(&path, big("mine"), expected, &read, false).unwrap();
        let entry = recording.finish().expect("the write is recorded");
        assert_eq!(std::fs::read(&path).unwrap(), big("mine"));
        assert_eq!(
            entry.files[0].after_hash.as_deref(),
            Some(hex::encode(content_hash(&big("mine")).0).as_str())
        );

        // Two writes of the file in one action are one change, from the
        // content before the first to the content after the second: what
        // was worked out beside the first write is not what is kept.
        let recording = Recording::begin(&host, Label::fixed(None, "twice"));
        let mine = big("mine");
        let first = big("first");
        write_over(
            &path,
            first.clone(),
            Expected::Hash(content_hash(&mine)),
            &mine,
            false,
        )
        .unwrap();
        write_over(
            &path,
            big("second"),
            Expected::Hash(content_hash(&first)),
            &first,
            false,
        )
        .unwrap();
        let entry = recording.finish().expect("recorded");
        // (the file is one line: the diff's lines end in what each write left)
        let shown: Vec<String> = entry.files[0]
            .diff
            .iter()
            .map(|l| l.text[l.text.len().saturating_sub(20)..].to_string())
            .collect();
        assert!(
            shown.iter().any(|l| l.contains("\"mine\""))
                && shown.iter().any(|l| l.contains("\"second\""))
                && !shown.iter().any(|l| l.contains("\"first\"")),
            "{shown:?}"
        );
        History::for_host(&host).undo(Some(entry.id)).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            mine,
            "undo gives the content before both"
        );
    }
}
