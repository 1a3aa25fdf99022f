//! Atomic, conflict-checked file writes.
//! (Interface fixed here; implementation in progress.)

use std::path::{Path, PathBuf};

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
    /// No check (only for files Switchboard alone owns, e.g. its settings).
    Any,
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{path} changed on disk since it was read; reload and try again")]
    Conflict { path: PathBuf },
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, #[source] source: std::io::Error },
}

/// Write `contents` to `path` atomically, following symlinks to the real file.
pub fn write_atomic(path: &Path, contents: &[u8], expected: Expected) -> Result<(), WriteError> {
    let _ = (path, contents, expected);
    unimplemented!()
}
