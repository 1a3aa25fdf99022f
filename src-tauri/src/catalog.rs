//! The Catalog's commands (issue 13): search the MCP Registry, show one
//! server with its versions and install forms, check a runtime, install,
//! keep a value in the keychain, open a repository link, and the registry
//! URL setting; and (issue 31) an install link or pasted entry read and
//! installed from the Add dialog. Each delegates to the engine.

use std::collections::HashMap;
use switchboard_engine::error_code::ErrorCode;

use serde::{Deserialize, Serialize};
use switchboard_engine::install_link::{self, LinkInstall};
use switchboard_engine::registry::apply::{
    InstallFailure, InstallReport, InstallRequest, RuntimeCheck,
};
use switchboard_engine::registry::client::{
    Offline, RegistryError, DEFAULT_REGISTRY, REGISTRY_ENV,
};
use switchboard_engine::registry::install::{self, Choice, InstallForm};
use switchboard_engine::registry::link::{LinkInstallRequest, LinkInstalled};
use switchboard_engine::registry::{ServerJson, ServerResponse};
use tauri::State;

use crate::error::{CommandError, CommandResult};
use crate::state::AppState;

type S<'a> = State<'a, AppState>;

fn registry_error(e: RegistryError) -> CommandError {
    let code = match &e {
        RegistryError::NotFound { .. } => ErrorCode::NotFound,
        RegistryError::Unreachable { .. } => ErrorCode::Offline,
        RegistryError::BadUrl(..) => ErrorCode::Invalid,
        _ => ErrorCode::Registry,
    };
    CommandError::new(code, e.to_string())
}

fn install_error(e: InstallFailure) -> CommandError {
    let code = match &e {
        InstallFailure::NameTaken { .. } => ErrorCode::NameTaken,
        InstallFailure::Install(install::InstallError::Missing { .. }) => ErrorCode::MissingValues,
        InstallFailure::NoName { .. } => ErrorCode::MissingValues,
        InstallFailure::Keychain { .. } => ErrorCode::Keychain,
        InstallFailure::Edit(e) => return CommandError::new(e.code(), e.to_string()),
        _ => ErrorCode::Invalid,
    };
    CommandError::new(code, e.to_string())
}

/// One search result as the Catalog lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogEntry {
    /// The registry name (`io.github.user/weather`).
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub version: String,
    /// `active` or `deprecated` (deleted servers are not listed).
    pub status: String,
    pub status_message: Option<String>,
    /// `npm`, `pypi`, `oci`, `nuget`, `mcpb`, in the order published.
    pub package_kinds: Vec<String>,
    /// It can run on this computer (has a package).
    pub local: bool,
    /// It can be reached as a hosted server (has a remote).
    pub remote: bool,
    pub repository_url: Option<String>,
    pub website_url: Option<String>,
}

fn entry(e: &ServerResponse) -> CatalogEntry {
    let s = &e.server;
    let o = e.official();
    let mut kinds: Vec<String> = vec![];
    for p in &s.packages {
        if !kinds.contains(&p.registry_type) {
            kinds.push(p.registry_type.clone());
        }
    }
    CatalogEntry {
        name: s.name.clone(),
        title: s.title.clone(),
        description: s.description.clone(),
        version: s.version.clone(),
        status: o.status,
        status_message: o.status_message,
        package_kinds: kinds,
        local: !s.packages.is_empty(),
        remote: !s.remotes.is_empty(),
        repository_url: s
            .repository
            .as_ref()
            .map(|r| r.url.clone())
            .filter(|u| !u.is_empty()),
        website_url: s.website_url.clone(),
    }
}

/// A page of search results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogPage {
    pub servers: Vec<CatalogEntry>,
    pub next_cursor: Option<String>,
    /// Set when the registry could not be reached: these results are the
    /// ones cached at `fetchedAtMs`.
    pub offline: Option<Offline>,
    /// The registry asked.
    pub registry_url: String,
}

#[tauri::command]
pub async fn registry_search(
    state: S<'_>,
    query: String,
    cursor: Option<String>,
) -> CommandResult<CatalogPage> {
    let client = state.engine.registry(None).map_err(registry_error)?;
    let got = client
        .search(&query, cursor.as_deref(), 30)
        .await
        .map_err(registry_error)?;
    Ok(CatalogPage {
        servers: got.value.servers.iter().map(entry).collect(),
        next_cursor: got.value.next_cursor,
        offline: got.offline,
        registry_url: client.base_url().to_string(),
    })
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogVersion {
    pub version: String,
    pub status: String,
    pub published_at: Option<String>,
    pub is_latest: bool,
}

/// One server: its summary, every version, and a form per package or remote.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogServer {
    pub entry: CatalogEntry,
    pub versions: Vec<CatalogVersion>,
    pub forms: Vec<InstallForm>,
    /// The server.json itself, sent back with `install_server`.
    #[ts(type = "unknown")]
    pub server: ServerJson,
    pub offline: Option<Offline>,
}

#[tauri::command]
pub async fn registry_server(
    state: S<'_>,
    name: String,
    version: Option<String>,
) -> CommandResult<CatalogServer> {
    let client = state.engine.registry(None).map_err(registry_error)?;
    let got = client
        .version(&name, version.as_deref().unwrap_or("latest"))
        .await
        .map_err(registry_error)?;
    let versions = client
        .versions(&name)
        .await
        .map(|v| v.value)
        .unwrap_or_default();
    let versions = versions
        .iter()
        .map(|v| {
            let o = v.official();
            CatalogVersion {
                version: v.server.version.clone(),
                status: o.status,
                published_at: o.published_at,
                is_latest: o.is_latest,
            }
        })
        .filter(|v| v.status != "deleted")
        .collect();
    Ok(CatalogServer {
        entry: entry(&got.value),
        versions,
        forms: install::forms(&got.value.server),
        server: got.value.server,
        offline: got.offline,
    })
}

/// Whether `npx`, `uvx`, `docker` or `dnx` is installed (the app's PATH or the login shell's).
#[tauri::command]
pub async fn check_runtime(state: S<'_>, program: String) -> CommandResult<RuntimeCheck> {
    Ok(state.engine.check_runtime(&program).await)
}

/// What the install form sends.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallArgs {
    pub server: ServerJson,
    pub choice: Choice,
    pub name: Option<String>,
    pub target: String,
    pub values: HashMap<String, String>,
    #[serde(default)]
    pub replace: bool,
}

impl std::fmt::Debug for InstallArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstallArgs")
            .field("server", &self.server.name)
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

#[tauri::command]
pub async fn install_server(state: S<'_>, request: InstallArgs) -> CommandResult<InstallReport> {
    let req = InstallRequest {
        server: request.server,
        choice: request.choice,
        name: request.name,
        target: request.target,
        values: request.values,
        replace: request.replace,
        extra_env: vec![],
        extra_headers: vec![],
    };
    state.engine.install(req).await.map_err(install_error)
}

/// What an install link or pasted server entry asks to install (issue 31):
/// shown in the Add dialog; nothing is written.
#[tauri::command]
pub fn read_install_link(text: String) -> CommandResult<LinkInstall> {
    install_link::read(&text).map_err(|e| CommandError::new(ErrorCode::Invalid, e.to_string()))
}

/// Install server `server_index` of an install link or pasted entry into
/// `target` under `name` (default: the link's) with `inputs` by input id.
#[tauri::command]
pub async fn install_from_link(
    state: S<'_>,
    text: String,
    server_index: usize,
    name: Option<String>,
    inputs: HashMap<String, String>,
    target: String,
    replace: Option<bool>,
) -> CommandResult<LinkInstalled> {
    let req = LinkInstallRequest {
        text,
        server_index,
        name,
        inputs,
        target,
        replace: replace.unwrap_or(false),
    };
    state
        .engine
        .install_from_link(req)
        .await
        .map_err(install_error)
}

/// Move an env (`group` = `env`) or header (`header`) value of a server in
/// Switchboard's own file into the keychain; returns its keychain name.
#[tauri::command]
pub async fn keep_in_keychain(
    state: S<'_>,
    server: String,
    group: String,
    key: String,
) -> CommandResult<String> {
    state
        .engine
        .keep_in_keychain(&server, &group, &key)
        .await
        .map_err(install_error)
}

/// Open a server's repository or website in the system browser: only an
/// https page (or http on this computer) is opened.
#[tauri::command]
pub fn open_catalog_link<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    url: String,
) -> CommandResult<()> {
    use tauri_plugin_opener::OpenerExt;
    let link = switchboard_engine::opener::check_link(&url, "the registry")
        .map_err(|e| CommandError::new(ErrorCode::Refused, e.to_string()))?;
    app.opener()
        .open_url(link.as_str(), None::<&str>)
        .map_err(|e| CommandError::new(ErrorCode::Io, e.to_string()))
}

/// Which registry the Catalog reads, and where that choice comes from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RegistrySettings {
    /// The URL in use.
    pub url: String,
    /// The one saved in Settings, if any.
    pub saved: Option<String>,
    /// Set when `SWITCHBOARD_REGISTRY_URL` overrides Settings.
    pub from_env: Option<String>,
    pub default_url: String,
}

#[tauri::command]
pub fn registry_settings(state: S<'_>) -> RegistrySettings {
    let saved = switchboard_engine::settings::Settings::load(state.engine.host())
        .0
        .registry_url;
    let from_env = state
        .engine
        .host()
        .var(REGISTRY_ENV)
        .filter(|v| !v.trim().is_empty())
        .map(String::from);
    let url = switchboard_engine::registry::client::choose_base_url(
        None,
        from_env.as_deref(),
        saved.as_deref(),
    );
    RegistrySettings {
        url,
        saved,
        from_env,
        default_url: DEFAULT_REGISTRY.into(),
    }
}

/// Save the registry URL (empty: the official registry again).
#[tauri::command]
pub fn set_registry_url(state: S<'_>, url: Option<String>) -> CommandResult<RegistrySettings> {
    state.engine.set_registry_url(url).map_err(install_error)?;
    Ok(registry_settings(state))
}

/// A native file (or, with `directory`, folder) picker for an install
/// form's file-path field; `None` when the user cancelled. Opened from Rust,
/// so the webview gets no general dialog permission. `filter`: a name and
/// the file extensions the picker shows (`["Claude Desktop extension", "mcpb"]`).
#[tauri::command]
pub async fn pick_path<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    directory: bool,
    filter: Option<Vec<String>>,
) -> Option<String> {
    use tauri::Manager;
    use tauri_plugin_dialog::DialogExt;
    let (tx, rx) = tokio::sync::oneshot::channel();
    // It opens in the user's folder (for a file type, their Downloads, where
    // such files land), not in "Recent".
    let places = switchboard_engine::bundle::Places::of(app.state::<AppState>().engine.host());
    let start = Some(&places.downloads)
        .filter(|d| filter.is_some() && d.is_dir())
        .unwrap_or(&places.home);
    let mut dialog = app.dialog().file().set_directory(start);
    if let Some((name, extensions)) = filter.as_deref().and_then(|f| f.split_first()) {
        let extensions: Vec<&str> = extensions.iter().map(String::as_str).collect();
        if !extensions.is_empty() {
            dialog = dialog.add_filter(name, &extensions);
        }
    }
    if directory {
        dialog.pick_folder(move |p| drop(tx.send(p)));
    } else {
        dialog.pick_file(move |p| drop(tx.send(p)));
    }
    let picked = rx.await.ok().flatten()?;
    picked
        .into_path()
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}
