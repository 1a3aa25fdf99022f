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

/// From this size on, a file's costly passes (its SHA-256, its secret scan,
/// a second parse) run on threads of their own beside the rest of the work:
/// a several-MB `~/.claude.json` then costs about its longest pass, not
/// their sum. Smaller files are not worth a thread.
pub(crate) const ASIDE_FROM: usize = 256 * 1024;

pub use atomic::{content_hash, write_atomic, write_private, ContentHash, Expected};
pub use doc::{apply_edits, DocEdit, Format, PathSeg};
