//! Format-level edits on a config document's text.
//! (Interface fixed here; implementation in progress.)

use crate::config::Format;

/// One step of a path into a document: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    Key(String),
    Index(usize),
}

/// A structural edit. Paths address values from the document root.
#[derive(Debug, Clone, PartialEq)]
pub enum DocEdit {
    /// Set the value at `path`, creating missing parent objects (never arrays).
    /// Minimal: when old and new are both objects, only changed keys are
    /// rewritten, absent keys removed, new keys appended in `value`'s order;
    /// otherwise (scalars, arrays) the old value is replaced if it differs.
    /// Setting a value equal to the current one changes no byte.
    Set { path: Vec<PathSeg>, value: serde_json::Value },
    /// Remove the value at `path` (object property or array element), with
    /// its separator; a missing path is not an error.
    Remove { path: Vec<PathSeg> },
    /// Rename the object key at `path` (last segment must be a Key) to
    /// `new_key`, keeping its value's bytes and its position.
    RenameKey { path: Vec<PathSeg>, new_key: String },
}

#[derive(Debug, thiserror::Error)]
pub enum DocError {
    #[error("cannot parse: {0}")]
    Parse(String),
    #[error("{path}: {message}")]
    Path { path: String, message: String },
    #[error("{0} files cannot be edited without losing their comments and layout")]
    Unsupported(&'static str),
}

/// Apply `edits` in order to `text` (a document in `format`), returning the
/// new text. Every byte outside the edited values is kept.
pub fn apply_edits(format: Format, text: &str, edits: &[DocEdit]) -> Result<String, DocError> {
    let _ = (format, text, edits);
    unimplemented!()
}
