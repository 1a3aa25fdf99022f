//! Sharing profiles from the app: export one to a file the user names (the
//! save dialog, or a path typed; `~/` is the home folder), and import a
//! document from a file or pasted text with the engine's preview first.
//! The engine (`switchboard_engine::profile_share`) judges and writes
//! everything; these commands only read and write the one file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use switchboard_engine::error_code::ErrorCode;
use switchboard_engine::host::Host;
use switchboard_engine::profile_share::{
    read_document, ImportOptions, ImportPreview, ImportReport, SecretRef, ShareError,
};
use tauri::State;

use crate::error::{CommandError, CommandResult};
use crate::state::AppState;

impl From<ShareError> for CommandError {
    fn from(e: ShareError) -> Self {
        CommandError::new(e.code(), e.to_string())
    }
}

/// Where an import's document comes from.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ProfileSource {
    /// A file (`~/` is the home folder).
    File { path: String },
    /// The document itself, pasted.
    Text { text: String },
}

impl ProfileSource {
    fn read(self, host: &Host) -> CommandResult<String> {
        match self {
            ProfileSource::File { path } => Ok(read_document(&full_path(host, &path)?)?),
            ProfileSource::Text { text } => Ok(text),
        }
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Exported {
    pub profile: String,
    #[ts(as = "String")]
    pub path: PathBuf,
    pub servers: Vec<String>,
    /// What whoever imports it enters (the file holds references only).
    pub secrets: Vec<SecretRef>,
}

/// `path` as typed: `~/…` in the home folder; anything else must be absolute
/// (a relative path would land wherever the app was started).
pub(crate) fn full_path(host: &Host, path: &str) -> CommandResult<PathBuf> {
    let path = path.trim();
    let full = match path.strip_prefix("~/") {
        Some(rest) => host.home.join(rest),
        None if path == "~" => host.home.clone(),
        None => PathBuf::from(path),
    };
    if !full.is_absolute() {
        return Err(CommandError::new(
            ErrorCode::Invalid,
            format!("file: \"{path}\" is not a full path; start it with / or ~/"),
        ));
    }
    Ok(full)
}

/// Write profile `name` (Everything: every enabled server) to `path`, every
/// secret a reference. An existing file is replaced only with `replace`.
#[tauri::command]
pub async fn export_profile(
    state: State<'_, AppState>,
    name: String,
    path: String,
    replace: bool,
) -> CommandResult<Exported> {
    let path = full_path(state.engine.host(), &path)?;
    let doc = state.engine.export_profile(&name)?;
    write_new(&path, &doc.to_text(), replace)?;
    Ok(Exported {
        profile: doc.profile.name,
        path,
        servers: doc.servers.keys().cloned().collect(),
        secrets: doc.secrets,
    })
}

fn write_new(path: &Path, text: &str, replace: bool) -> CommandResult<()> {
    let failed = |e: std::io::Error| {
        CommandError::new(
            ErrorCode::Io,
            format!("cannot write {}: {e}", path.display()),
        )
    };
    if path.is_dir() {
        return Err(CommandError::new(
            ErrorCode::Invalid,
            format!("file: {} is a folder; add a file name", path.display()),
        ));
    }
    if !replace && path.exists() {
        return Err(CommandError::new(
            ErrorCode::AlreadyExists,
            format!(
                "{} exists already; replace it, or choose another file",
                path.display()
            ),
        ));
    }
    std::fs::write(path, text).map_err(failed)
}

/// What importing the document would do here; nothing is written.
#[tauri::command]
pub async fn preview_profile_import(
    state: State<'_, AppState>,
    source: ProfileSource,
    options: ImportOptions,
) -> CommandResult<ImportPreview> {
    let text = source.read(state.engine.host())?;
    Ok(state.engine.preview_import(text, options).await?)
}

/// Import the document: `values` are the secrets entered (by
/// `SecretToEnter::name`), kept in the keychain before anything is written.
#[tauri::command]
pub async fn import_profile(
    state: State<'_, AppState>,
    source: ProfileSource,
    options: ImportOptions,
    values: BTreeMap<String, String>,
) -> CommandResult<ImportReport> {
    let text = source.read(state.engine.host())?;
    Ok(state.engine.import_profile(text, options, values).await?)
}

/// The system's save dialog, starting at `file_name` in the home folder;
/// `None` when cancelled.
#[tauri::command]
pub async fn pick_save_path<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: State<'_, AppState>,
    file_name: String,
) -> CommandResult<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_directory(&state.engine.host().home)
        .set_file_name(file_name)
        .add_filter("Switchboard profile", &["json"])
        .save_file(move |p| drop(tx.send(p)));
    let picked = rx.await.ok().flatten();
    Ok(picked
        .and_then(|p| p.into_path().ok())
        .map(|p| p.display().to_string()))
}
