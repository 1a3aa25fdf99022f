//! The Activity view's commands (SPEC G11, issue 29 point 2): the call
//! journal's pages, plots, health and exports. The engine's journal
//! (`switchboard_engine::journal`) filters, masks and writes everything;
//! these commands hand its answers over and write one export file.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;
use switchboard_engine::error_code::ErrorCode;
use switchboard_engine::journal::{
    self, Aggregates, Filter, Format, Journal, Page, Stats, TelemetryStats,
};
use tauri::State;

use crate::error::{CommandError, CommandResult};
use crate::state::AppState;

impl From<journal::Error> for CommandError {
    fn from(e: journal::Error) -> Self {
        let code = match &e {
            journal::Error::Db { .. } => ErrorCode::Damaged,
            journal::Error::Io(_) | journal::Error::Csv(_) => ErrorCode::Io,
        };
        CommandError::new(code, e.to_string())
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ActivityExport {
    #[ts(as = "String")]
    pub path: PathBuf,
    /// Calls written.
    pub calls: u64,
}

fn journal_of(state: &AppState) -> CommandResult<Journal> {
    state.engine.manager().journal().ok_or_else(|| {
        CommandError::new(
            ErrorCode::Unsupported,
            "the call journal is not open; calls are not recorded",
        )
    })
}

/// Runs `f` on the journal off the async runtime (SQLite reads block).
async fn with_journal<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(Journal) -> CommandResult<T> + Send + 'static,
) -> CommandResult<T> {
    let j = journal_of(state)?;
    tokio::task::spawn_blocking(move || f(j))
        .await
        .map_err(|e| CommandError::new(ErrorCode::Io, format!("the journal read failed: {e}")))?
}

/// The calls `filter` matches: newest first, or newer than `afterId`
/// oldest first.
#[tauri::command]
pub async fn activity_query(state: State<'_, AppState>, filter: Filter) -> CommandResult<Page> {
    with_journal(&state, move |j| Ok(j.query(&filter)?)).await
}

/// The plots' data for `filter`.
#[tauri::command]
pub async fn activity_aggregates(
    state: State<'_, AppState>,
    filter: Filter,
) -> CommandResult<Aggregates> {
    with_journal(&state, move |j| Ok(j.aggregates(&filter)?)).await
}

/// Written, dropped and queued entries, and the journal's last problem.
#[tauri::command]
pub async fn activity_stats(state: State<'_, AppState>) -> CommandResult<Stats> {
    Ok(journal_of(&state)?.stats())
}

/// Writes the calls `filter` matches (oldest first) to `path` (`~/` is the
/// home folder) as JSON Lines or CSV. An existing file is replaced only
/// with `replace`.
#[tauri::command]
pub async fn activity_export(
    state: State<'_, AppState>,
    filter: Filter,
    format: Format,
    path: String,
    replace: bool,
) -> CommandResult<ActivityExport> {
    let path = crate::share::full_path(state.engine.host(), &path)?;
    with_journal(&state, move |j| {
        let calls = export_to(&j, &filter, format, &path, replace)?;
        Ok(ActivityExport { path, calls })
    })
    .await
}

/// The journal as Settings → Activity shows it: what it keeps, how many
/// calls it holds, its size on disk and how it is doing.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct JournalStatus {
    pub limits: switchboard_engine::settings::JournalSettings,
    #[ts(as = "String")]
    pub path: PathBuf,
    /// `None`: the journal is not open (calls are not recorded).
    pub stats: Option<Stats>,
    /// Calls in the file (`None`: it could not be read).
    pub entries: Option<u64>,
    /// The file with its write-ahead log, in bytes.
    pub bytes: u64,
}

/// [`JournalStatus`] now.
#[tauri::command]
pub async fn journal_status(state: State<'_, AppState>) -> CommandResult<JournalStatus> {
    let limits = state.engine.settings().journal;
    let Some(j) = state.engine.manager().journal() else {
        return Ok(JournalStatus {
            limits,
            path: journal::path(state.engine.host()),
            stats: None,
            entries: None,
            bytes: 0,
        });
    };
    tokio::task::spawn_blocking(move || status_of(&j, limits))
        .await
        .map_err(|e| CommandError::new(ErrorCode::Io, format!("the journal read failed: {e}")))
}

fn status_of(j: &Journal, limits: switchboard_engine::settings::JournalSettings) -> JournalStatus {
    let path = j.path();
    let size = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut wal = path.clone().into_os_string();
    wal.push("-wal");
    JournalStatus {
        limits,
        bytes: size(&path) + size(std::path::Path::new(&wal)),
        entries: j.count(&Filter::default()).ok(),
        stats: Some(j.stats()),
        path,
    }
}

/// How much the journal keeps (each at least 1): saved, and applied to the
/// open journal at once.
#[tauri::command]
pub async fn set_journal_limits(
    state: State<'_, AppState>,
    limits: switchboard_engine::settings::JournalSettings,
) -> CommandResult<()> {
    Ok(state.engine.set_journal_limits(limits).await?)
}

/// The OpenTelemetry export as Settings → Activity shows it: what is
/// saved, and how the export is doing.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct TelemetryStatus {
    pub settings: switchboard_engine::settings::TelemetrySettings,
    /// `None`: the journal is not open (no call is recorded or exported).
    pub stats: Option<TelemetryStats>,
}

/// [`TelemetryStatus`] now.
#[tauri::command]
pub async fn telemetry_status(state: State<'_, AppState>) -> CommandResult<TelemetryStatus> {
    Ok(TelemetryStatus {
        settings: state.engine.settings().telemetry,
        stats: state
            .engine
            .manager()
            .journal()
            .map(|j| j.telemetry_stats()),
    })
}

/// Turns the export on or off, or sends it elsewhere (an http(s) URL):
/// saved, and applied to the open journal at once.
#[tauri::command]
pub async fn set_telemetry(
    state: State<'_, AppState>,
    telemetry: switchboard_engine::settings::TelemetrySettings,
) -> CommandResult<()> {
    Ok(state.engine.set_telemetry(telemetry).await?)
}

fn export_to(
    j: &Journal,
    filter: &Filter,
    format: Format,
    path: &std::path::Path,
    replace: bool,
) -> CommandResult<u64> {
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
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    if replace {
        open.create(true).truncate(true);
    } else {
        open.create_new(true);
    }
    let file = open.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CommandError::new(
                ErrorCode::AlreadyExists,
                format!(
                    "{} exists already; replace it, or choose another file",
                    path.display()
                ),
            )
        } else {
            failed(e)
        }
    })?;
    let mut out = std::io::BufWriter::new(file);
    let n = j.export(filter, format, &mut out)?;
    out.flush().map_err(failed)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use switchboard_engine::journal::{Entry, Kind, Outcome, Via};
    use switchboard_engine::redact::Redactor;

    fn journal(dir: &std::path::Path) -> Journal {
        let j = Journal::open(
            dir.join("journal.db"),
            Default::default(),
            Arc::new(Redactor::default()),
        );
        for (i, server) in ["alpha", "beta", "alpha"].into_iter().enumerate() {
            let mut e = Entry::new(Via::App, server, Kind::Tool, format!("tool{i}"))
                .with_client("switchboard", None);
            if i == 1 {
                e.outcome = Outcome::ToolError;
            }
            j.record(e);
        }
        j.flush();
        j
    }

    #[test]
    fn exports_refuse_an_existing_file_unless_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let j = journal(dir.path());
        let out = dir.path().join("calls.jsonl");
        let alpha = Filter {
            server: Some("alpha".into()),
            ..Filter::default()
        };
        assert_eq!(
            export_to(&j, &alpha, Format::Jsonl, &out, false).unwrap(),
            2
        );
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().all(|l| l.contains("\"server\":\"alpha\"")));
        let again = export_to(&j, &alpha, Format::Jsonl, &out, false).unwrap_err();
        assert_eq!(again.code, ErrorCode::AlreadyExists);
        assert_eq!(text, std::fs::read_to_string(&out).unwrap());
        let errors = Filter {
            errors: true,
            ..Filter::default()
        };
        assert_eq!(export_to(&j, &errors, Format::Csv, &out, true).unwrap(), 1);
        let csv = std::fs::read_to_string(&out).unwrap();
        assert_eq!(csv.lines().count(), 2, "{csv}");
        assert!(csv.contains("beta"));
        let folder = export_to(&j, &errors, Format::Csv, dir.path(), true).unwrap_err();
        assert_eq!(folder.code, ErrorCode::Invalid);
    }

    #[test]
    fn the_status_counts_the_calls_and_the_file_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let j = journal(dir.path());
        let s = status_of(&j, Default::default());
        assert_eq!(s.entries, Some(3), "three calls recorded");
        assert!(s.bytes > 0, "the file and its log take space: {s:?}");
        assert_eq!(s.stats.as_ref().map(|s| s.dropped), Some(0));
        assert_eq!(s.path, dir.path().join("journal.db"));
    }
}
