//! `.mcpb` bundles in the app (issue 31): open one (from the Add dialog's
//! picker, a drop on the window, or a server's Update), fill in its form
//! while it unpacks in the background (`bundle-progress` events on the
//! engine channel), preview the exact definition, install or close it.
//! Each delegates to the engine's `BundleInstaller`; nothing runs before
//! the user clicks Install.

use std::path::PathBuf;

use switchboard_engine::bundle::{
    BundleInstallError, BundleInstallRequest, BundleInstalled, BundleOrigin, BundlePreview,
    BundleProgress, BundleView,
};
use switchboard_engine::error_code::ErrorCode;
use tauri::State;

use crate::error::{CommandError, CommandResult};
use crate::events::{emit, AppEvent};
use crate::state::AppState;

type S<'a> = State<'a, AppState>;

fn bundle_error(e: BundleInstallError) -> CommandError {
    use switchboard_engine::registry::apply::InstallFailure;
    let code = match &e {
        BundleInstallError::Install(InstallFailure::NameTaken { .. }) => ErrorCode::NameTaken,
        BundleInstallError::Install(InstallFailure::Keychain { .. }) => ErrorCode::Keychain,
        BundleInstallError::Install(InstallFailure::Edit(e)) => {
            return CommandError::new(e.code(), e.to_string())
        }
        BundleInstallError::NotOpen => ErrorCode::NotFound,
        _ => ErrorCode::Invalid,
    };
    CommandError::new(code, e.to_string())
}

/// Checks the bundle at `path` and shows what its form needs; unpacking
/// goes on in the background, reported as `bundle-progress` events.
#[tauri::command]
pub async fn open_bundle<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: S<'_>,
    path: PathBuf,
) -> CommandResult<BundleView> {
    state
        .bundles
        .open(&path, move |progress| {
            emit(&app, &AppEvent::BundleProgress { progress })
        })
        .await
        .map_err(bundle_error)
}

/// How far unpacking of opened bundle `id` is (the form asks once when it
/// opens; later changes come as events).
#[tauri::command]
pub fn bundle_progress(state: S<'_>, id: u64) -> CommandResult<BundleProgress> {
    state.bundles.progress(id).map_err(bundle_error)
}

/// The exact definition the form's values make (secrets masked) and where
/// it goes; nothing is written.
#[tauri::command]
pub fn preview_bundle(state: S<'_>, request: BundleInstallRequest) -> CommandResult<BundlePreview> {
    state.bundles.preview(&request).map_err(bundle_error)
}

/// Installs opened bundle `request.id` (waits for unpacking if needed).
#[tauri::command]
pub async fn install_bundle(
    state: S<'_>,
    request: BundleInstallRequest,
) -> CommandResult<BundleInstalled> {
    state.bundles.install(request).await.map_err(bundle_error)
}

/// Closes the form of bundle `id` without installing: what was unpacked goes.
#[tauri::command]
pub fn close_bundle(state: S<'_>, id: u64) {
    state.bundles.cancel(id);
}

/// The bundle server `name` of `source` was installed from, if any (its
/// page offers Update from a newer `.mcpb`).
#[tauri::command]
pub fn bundle_origin(state: S<'_>, source: String, name: String) -> Option<BundleOrigin> {
    let snap = state.engine.snapshot();
    let def = snap
        .servers
        .iter()
        .flat_map(|s| s.definitions.iter())
        .find(|d| d.source == source && d.def.name == name)?;
    switchboard_engine::bundle::origin(&def.def, &state.engine.host().switchboard_data_dir())
}
