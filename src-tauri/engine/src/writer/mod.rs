//! The writer owns every change Switchboard makes to a config file.
//!
//! Two layers: `doc` applies format-level edits (JSON, JSONC, TOML) to the
//! original text, touching only the bytes of what changed; `atomic` writes the
//! result safely (same-directory temp file, fsync, rename, permissions kept,
//! symlinks followed) and refuses to overwrite a file that changed since it
//! was read. `edit` (the server-level operations) sits on top of both.
//! `history` keeps every write with its content before and after, for undo.

pub mod atomic;
pub mod diff;
pub mod doc;
pub mod edit;
pub mod history;
pub mod summary;

pub(crate) use atomic::ASIDE_FROM;
pub use atomic::{content_hash, write_atomic, write_private, ContentHash, Expected};
pub use doc::{apply_edits, DocEdit, Format, PathSeg};
