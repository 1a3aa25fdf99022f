//! Atomic, conflict-checked file writes.
//!
//! `write_atomic` resolves symlinks to the real file (the link stays a link),
//! checks that file still holds what the caller read, writes a uniquely named
//! temp file next to it, fsyncs it, gives it the original's permissions and
//! renames it over the target. Until the rename the original is untouched,
//! and a failed write leaves no temp file behind.
//!
//! The check and the rename are not one atomic step: a writer racing in
//! between those few microseconds is not detected. Editors that save by
//! renaming have the same window; the check is for the usual case of a file
//! changed minutes after Switchboard read it.
//!
//! Content that is already on disk is not written again (the file keeps its
//! mtime, so no watcher or client sees a change that is not one), and a file
//! the user made read-only is refused rather than replaced: the rename would
//! otherwise swap it for a writable one.

use std::borrow::Cow;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// From this size on, a file's costly passes (its SHA-256, its secret scan,
/// a second parse) run on threads of their own beside the rest of the work:
/// a several-MB `~/.claude.json` then costs about its longest pass, not
/// their sum. Smaller files are not worth a thread.
pub(crate) const ASIDE_FROM: usize = 256 * 1024;

/// SHA-256 of a file's bytes, as read at discovery time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ContentHash(pub [u8; 32]);

pub fn content_hash(bytes: &[u8]) -> ContentHash {
    use sha2::Digest;
    ContentHash(sha2::Sha256::digest(bytes).into())
}

/// What the caller believes is on disk right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// The file must not exist (creating a new source file).
    Absent,
    /// The file must still have exactly these bytes.
    Hash(ContentHash),
    /// No check (only for files no one edits, e.g. Switchboard's tool cache).
    Any,
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{path} changed on disk since it was read; reload and try again")]
    Conflict { path: PathBuf },
    #[error("{} is read-only; make it writable to let Switchboard edit it", path.display())]
    ReadOnly { path: PathBuf },
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// How many links a chain may have before we call it a loop (Linux's limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// Write `contents` to `path` atomically, following symlinks to the real file.
pub fn write_atomic(path: &Path, contents: &[u8], expected: Expected) -> Result<(), WriteError> {
    write_file(
        path,
        Cow::Borrowed(contents),
        expected,
        NewFile::Ordinary,
        None,
    )
}

/// `write_atomic` (`private`: `write_private`) by a caller that holds the
/// bytes it read, whose hash `expected` is: the file is compared with them
/// instead of being hashed again (a several-MB file costs a memcmp, not a
/// SHA-256). The history keeps `contents` without copying them.
pub(crate) fn write_over(
    path: &Path,
    contents: Vec<u8>,
    expected: Expected,
    read: &[u8],
    private: bool,
) -> Result<(), WriteError> {
    let new_file = if private {
        NewFile::Private
    } else {
        NewFile::Ordinary
    };
    write_file(path, Cow::Owned(contents), expected, new_file, Some(read))
}

/// `write_atomic` for Switchboard's own files (settings, its server file,
/// history): a file it creates is 0600 and the folders it creates 0700, since
/// they hold parked definitions and may hold secrets. Existing files keep
/// their mode, as everywhere.
pub fn write_private(path: &Path, contents: &[u8], expected: Expected) -> Result<(), WriteError> {
    write_file(
        path,
        Cow::Borrowed(contents),
        expected,
        NewFile::Private,
        None,
    )
}

/// Permissions of what a write creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NewFile {
    /// What `File::create` and `create_dir_all` give (0666/0777 less the umask).
    Ordinary,
    /// Only the user: 0600 files, 0700 folders.
    Private,
}

/// The one place every file write of Switchboard's goes through.
fn write_file(
    path: &Path,
    contents: Cow<'_, [u8]>,
    expected: Expected,
    new_file: NewFile,
    read: Option<&[u8]>,
) -> Result<(), WriteError> {
    let target = resolve_symlinks(path).map_err(|source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let io_err = |source: io::Error| WriteError::Io {
        path: target.clone(),
        source,
    };

    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if matches!(expected, Expected::Hash(_)) && !dir.exists() {
        // no folder, no file: a doomed write creates no folders either
        return Err(WriteError::Conflict { path: target });
    }
    create_dirs(&dir, new_file).map_err(io_err)?;
    // From the check to the rename, other Switchboard processes wait: two of
    // them never both pass the check and overwrite each other.
    let _lock = DirLock::acquire(&dir);

    let large = contents.len() >= ASIDE_FROM && super::history::recording_open();
    let done = std::thread::scope(|aside| {
        let contents = &contents[..];
        // A large content's hash and secret values, which the history entry
        // needs, are worked out beside the check and the write, each on a
        // thread of its own: reading the file back and syncing several MB
        // keep this thread busy for about as long as the longer of the two
        // takes (the secret scan, ~8 ms for 5 MB).
        let sums = large.then(|| {
            let hash = aside.spawn(|| content_hash(contents));
            // The secret values need the hash only to be remembered by
            // it: they are found beside the hash, then filed under it.
            let secrets = aside.spawn(|| super::diff::secret_values_of(path, contents));
            (hash, secrets)
        });
        // Threads not joined below are joined as the scope ends, whatever
        // happened: nothing done beside the write outlives it.
        let Some((current, current_hash)) = check(&target, contents, expected, read)? else {
            return Ok(None);
        };
        // With the content before known, what the history entry keeps of
        // this write (its diff, both sides as stored) is worked out beside
        // the write as well. The content before is shared with that thread
        // and taken back when it is done (also if it failed).
        let current = Arc::new(current);
        let prepare = sums.map(|(hash, secrets)| {
            let before = Arc::clone(&current);
            aside.spawn(move || {
                // The diff and the stored sides first, while the secret
                // values are still being found; they are masked after.
                let unmasked = super::history::Unmasked::of(before.as_deref(), Some(contents));
                let after_hash = hash.join().ok()?;
                if let Ok(found) = secrets.join() {
                    super::diff::remember_found_secret_values(path, after_hash, found);
                }
                let kept = unmasked.masked(
                    path,
                    before.as_deref().map(|b| (b, current_hash)),
                    Some((contents, Some(after_hash))),
                );
                Some((after_hash, kept))
            })
        });
        let written = replace(&target, &dir, contents, new_file);
        let prepared = prepare.and_then(|p| p.join().ok().flatten());
        written?;
        let current = Arc::try_unwrap(current).unwrap_or_else(|shared| (*shared).clone());
        Ok(Some((current, current_hash, prepared)))
    })?;
    // Recorded here, where every write passes, so none escapes the history.
    if let Some((current, current_hash, prepared)) = done {
        let (after_hash, prepared) = prepared.unzip();
        super::history::note_write(
            path,
            current,
            current_hash,
            Some(contents.into_owned()),
            after_hash,
            prepared,
        );
    }
    Ok(())
}

/// What a write replaced: the content the file held (`None`: there was no
/// file) and its hash, when the check worked it out.
type Replaced = (Option<Vec<u8>>, Option<ContentHash>);

/// `write_file`'s check that `target` still holds what the caller expects;
/// `None` when it already holds `contents` (nothing is to be written).
fn check(
    target: &Path,
    contents: &[u8],
    expected: Expected,
    read: Option<&[u8]>,
) -> Result<Option<Replaced>, WriteError> {
    let io_err = |source: io::Error| WriteError::Io {
        path: target.to_path_buf(),
        source,
    };
    let current = match fs::read(target) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(e)),
    };
    let current_hash = match (expected, &current) {
        // Still the bytes the caller read (and hashed as `hash`).
        (Expected::Hash(hash), Some(bytes)) if read == Some(&bytes[..]) => Some(hash),
        (Expected::Hash(_), Some(bytes)) => Some(content_hash(bytes)),
        _ => None,
    };
    let unchanged = match (expected, &current) {
        (Expected::Any, _) => true,
        (Expected::Absent, current) => current.is_none(),
        (Expected::Hash(_), None) => false,
        (Expected::Hash(hash), Some(_)) => current_hash == Some(hash),
    };
    if !unchanged {
        return Err(WriteError::Conflict {
            path: target.to_path_buf(),
        });
    }
    if current.as_deref() == Some(contents) {
        return Ok(None);
    }
    Ok(Some((current, current_hash)))
}

/// `write_file`'s write: a temp file beside `target`, synced, renamed over it.
fn replace(
    target: &Path,
    dir: &Path,
    contents: &[u8],
    new_file: NewFile,
) -> Result<(), WriteError> {
    let io_err = |source: io::Error| WriteError::Io {
        path: target.to_path_buf(),
        source,
    };
    let original = match fs::metadata(target) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(e)),
    };
    if original
        .as_ref()
        .is_some_and(|meta| is_read_only(target, meta))
    {
        return Err(WriteError::ReadOnly {
            path: target.to_path_buf(),
        });
    }

    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{file_name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".switchboard-tmp");
    #[cfg(unix)]
    if original.is_none() && new_file == NewFile::Ordinary {
        // a new file gets what `File::create` would give it (0666 less the
        // umask), not the temp file's private 0600
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    // Dropping `temp` on any early return below deletes the temp file.
    let mut temp = builder.tempfile_in(dir).map_err(io_err)?;
    temp.write_all(contents).map_err(io_err)?;
    temp.flush().map_err(io_err)?;
    if let Some(meta) = &original {
        copy_owner_and_mode(temp.as_file(), meta).map_err(io_err)?;
    }
    temp.as_file().sync_all().map_err(io_err)?;

    if let Some(error) = take_injected_failure() {
        return Err(io_err(error));
    }

    temp.persist(target).map_err(|e| io_err(e.error))?;
    sync_dir(dir);
    Ok(())
}

/// How long a write waits for another Switchboard process's write in the
/// same folder (a few milliseconds normally). Past this, that process is
/// taken to be stuck and the write goes on unserialized: the hash check
/// still stands.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// An exclusive advisory lock (`flock`) on a folder, held by Switchboard's
/// writers only; released when dropped. Locking the folder, not the file,
/// because the rename replaces the file.
struct DirLock {
    #[cfg(unix)]
    _lock: nix::fcntl::Flock<fs::File>,
}

impl DirLock {
    #[cfg(unix)]
    fn acquire(dir: &Path) -> Option<DirLock> {
        use nix::fcntl::{Flock, FlockArg};
        let mut handle = fs::File::open(dir).ok()?;
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        loop {
            match Flock::lock(handle, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => return Some(DirLock { _lock: lock }),
                Err((h, errno)) => {
                    let busy = errno == nix::errno::Errno::EWOULDBLOCK;
                    if !busy || std::time::Instant::now() >= deadline {
                        return None;
                    }
                    handle = h;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[cfg(not(unix))]
    fn acquire(_dir: &Path) -> Option<DirLock> {
        None
    }
}

/// Create `dir` and its missing parents; private ones are 0700 (only the
/// folders created here: an existing folder is the user's business).
fn create_dirs(dir: &Path, new_file: NewFile) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    if new_file == NewFile::Private {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Whether the user keeps Switchboard from changing this file: no write
/// permission bit at all (`chmod a-w`, which root would otherwise ignore), or
/// not writable by this process (another user's file, a read-only mount).
fn is_read_only(path: &Path, meta: &fs::Metadata) -> bool {
    if meta.permissions().readonly() {
        return true;
    }
    #[cfg(unix)]
    {
        nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_err()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// The real file behind `path`, following a chain of links. A dangling link
/// resolves to where its target would be, so the file is created there.
fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&current)?;
                current = if link.is_absolute() {
                    link
                } else {
                    current.parent().unwrap_or_else(|| Path::new("")).join(link)
                };
            }
            Ok(_) => return Ok(current),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(current),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "too many levels of symbolic links at {}",
        path.display()
    )))
}

#[cfg(unix)]
fn copy_owner_and_mode(file: &fs::File, original: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // Keeping the owner only works as root (or when it is already us);
    // otherwise the new file is ours, as with any editor's save.
    let _ = std::os::unix::fs::fchown(file, Some(original.uid()), Some(original.gid()));
    file.set_permissions(fs::Permissions::from_mode(original.mode() & 0o7777))
}

#[cfg(not(unix))]
fn copy_owner_and_mode(file: &fs::File, original: &fs::Metadata) -> io::Result<()> {
    file.set_permissions(original.permissions())
}

/// Make the rename durable. Best effort: the new contents are already in
/// place, so a failure here is not worth reporting as a failed write.
#[cfg(unix)]
fn sync_dir(dir: &Path) {
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) {}

thread_local! {
    static INJECTED_FAILURE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Test hook: make the next `write_atomic` on this thread fail after its temp
/// file is written and synced, just before the rename. Tests run as root,
/// where permission bits cannot make a write fail.
#[doc(hidden)]
pub fn fail_next_write_before_rename() {
    INJECTED_FAILURE.with(|flag| flag.set(true));
}

fn take_injected_failure() -> Option<io::Error> {
    INJECTED_FAILURE
        .with(|flag| flag.replace(false))
        .then(|| io::Error::other("injected failure before rename"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `write_over` trusts the bytes it was given only while the file still
    /// holds them: a file another program changed after the read is refused,
    /// and left as that program wrote it.
    #[test]
    fn write_over_refuses_a_file_changed_since_it_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        let read = b"{\"mcpServers\": {}}\n".to_vec();
        std::fs::write(&path, &read).unwrap();
        let expected = Expected::Hash(content_hash(&read));

        std::fs::write(&path, b"{\"mcpServers\": {\"theirs\": {}}}\n").unwrap();
        let refused = write_over(&path, b"{\"mine\": 1}\n".to_vec(), expected, &read, false);
        assert!(
            matches!(refused, Err(WriteError::Conflict { .. })),
            "{refused:?}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"{\"mcpServers\": {\"theirs\": {}}}\n"
        );

        std::fs::write(&path, &read).unwrap();
        write_over(&path, b"{\"mine\": 1}\n".to_vec(), expected, &read, false).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"mine\": 1}\n");
    }
}
