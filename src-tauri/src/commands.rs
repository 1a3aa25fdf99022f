//! Tauri commands: each one a few lines that delegate to the engine.
//! Every command here is also declared in `build.rs` and granted in
//! `capabilities/default.json`; their payload types are in `types.rs`.

use std::path::PathBuf;
use switchboard_engine::error_code::ErrorCode;

use serde::Serialize;
use serde_json::{Map, Value};
use switchboard_engine::auth::vault::SecretBackend;
use switchboard_engine::config::{ServerDef, ServerPatch};
use switchboard_engine::discovery::SourceInfo;
use switchboard_engine::engine::ServerView;
use switchboard_engine::events::LogLine;
use switchboard_engine::manager::{CallOutcome, ElicitAnswer, ToolIndex};
use switchboard_engine::profile::ProfileChange;
use switchboard_engine::profile_apply::ApplyReport;
use switchboard_engine::profiles::{ClientCost, ProfileView, ToolCost};
use switchboard_engine::projects::Approved;
use switchboard_engine::settings::ProjectFolder;
use switchboard_engine::sources::text::EntryText;
use switchboard_engine::writer::edit::ServerEdit;
use switchboard_engine::writer::history::{HistoryEntry, UndoReport};
use tauri::State;

use crate::error::{CommandError, CommandResult};
use crate::probe::{probe, ProbeReport};
use crate::state::AppState;
use crate::tool_calls::{RunningCall, ToolCalls};

/// What the UI shows in its header and About box.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub name: String,
    pub version: String,
}

type S<'a> = State<'a, AppState>;

#[tauri::command]
pub fn app_info<R: tauri::Runtime>(app: tauri::AppHandle<R>) -> AppInfo {
    let pkg = app.package_info();
    AppInfo {
        name: pkg.name.clone(),
        version: pkg.version.to_string(),
    }
}

/// How the app itself behaves (Settings): starting at login, the tray,
/// project config files, and the folder where Switchboard keeps its files.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AppSettings {
    /// The desktop starts Switchboard (in the tray) when the user logs in:
    /// read from the desktop's own autostart entry, which the user may also
    /// remove outside Switchboard.
    pub start_at_login: bool,
    pub keep_in_tray: bool,
    pub project_config: bool,
    /// Timeout, restart policy and health checks of servers that set none.
    pub server_defaults: switchboard_engine::settings::ServerDefaults,
    pub data_folder: String,
}

#[tauri::command]
pub fn app_settings<R: tauri::Runtime>(app: tauri::AppHandle<R>, state: S<'_>) -> AppSettings {
    use tauri_plugin_autostart::ManagerExt;
    let s = state.engine.settings();
    AppSettings {
        start_at_login: app.autolaunch().is_enabled().unwrap_or(false),
        keep_in_tray: s.keep_in_tray,
        project_config: s.enable_project_config,
        server_defaults: s.server_defaults,
        data_folder: state.engine.host().switchboard_dir().display().to_string(),
    }
}

/// Adds or removes the desktop's autostart entry for Switchboard (on Linux
/// `~/.config/autostart/Switchboard.desktop`), which starts it with
/// `--hidden`: in the tray, its window closed.
#[tauri::command]
pub fn set_start_at_login<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    on: bool,
) -> CommandResult<()> {
    use tauri_plugin_autostart::ManagerExt;
    let launcher = app.autolaunch();
    let done = if on {
        launcher.enable()
    } else {
        launcher.disable()
    };
    done.map_err(|e| {
        let what = if on { "add" } else { "remove" };
        CommandError::new(
            ErrorCode::Io,
            format!("cannot {what} Switchboard's entry in the desktop's startup applications: {e}"),
        )
    })
}

#[tauri::command]
pub async fn set_server_defaults(
    state: S<'_>,
    defaults: switchboard_engine::settings::ServerDefaults,
) -> CommandResult<()> {
    Ok(state.engine.set_server_defaults(defaults).await?)
}

#[tauri::command]
pub async fn set_keep_in_tray(state: S<'_>, keep: bool) -> CommandResult<()> {
    Ok(state.engine.set_keep_in_tray(keep).await?)
}

#[tauri::command]
pub async fn set_project_config(state: S<'_>, enabled: bool) -> CommandResult<()> {
    Ok(state.engine.set_project_config(enabled).await?)
}

/// Opens the folder where Switchboard keeps its files in the system's file manager.
#[tauri::command]
pub fn open_data_folder<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: S<'_>,
) -> CommandResult<()> {
    use tauri_plugin_opener::OpenerExt;
    let dir = state.engine.host().switchboard_dir();
    std::fs::create_dir_all(&dir).map_err(|e| {
        CommandError::new(
            ErrorCode::Io,
            format!("cannot create {}: {e}", dir.display()),
        )
    })?;
    app.opener()
        .open_path(dir.display().to_string(), None::<&str>)
        .map_err(|e| {
            CommandError::new(ErrorCode::Io, format!("cannot open {}: {e}", dir.display()))
        })
}

#[tauri::command]
pub fn list_servers(state: S<'_>) -> Vec<ServerView> {
    state.engine.servers()
}

#[tauri::command]
pub fn list_sources(state: S<'_>) -> Vec<SourceInfo> {
    state.engine.snapshot().sources.clone()
}

#[tauri::command]
pub fn list_projects(state: S<'_>) -> Vec<ProjectFolder> {
    state.engine.settings().projects
}

#[tauri::command]
pub fn list_tools(state: S<'_>) -> std::sync::Arc<ToolIndex> {
    // Serialized from the index itself: 10,000 tools are not copied first.
    state.engine.manager().tools()
}

/// `callId` (chosen by the UI) makes the call cancellable with `cancel_tool_call`.
#[tauri::command]
pub async fn call_tool(
    state: S<'_>,
    calls: State<'_, ToolCalls>,
    name: String,
    args: Option<Map<String, Value>>,
    call_id: Option<String>,
) -> CommandResult<CallOutcome> {
    let running = calls.start(call_id);
    let cancel = running.as_ref().map(RunningCall::token);
    Ok(state
        .engine
        .call_tool(&name, args, cancel, "Switchboard (tool explorer)")
        .await?)
}

/// The call then fails with code `aborted`; false when it had already ended.
#[tauri::command]
pub fn cancel_tool_call(calls: State<'_, ToolCalls>, call_id: String) -> bool {
    calls.cancel(&call_id)
}

#[tauri::command]
pub fn server_logs(state: S<'_>, name: String) -> CommandResult<Vec<LogLine>> {
    state
        .engine
        .manager()
        .logs(&name)
        .ok_or_else(|| CommandError::new(ErrorCode::NotFound, format!("Unknown server \"{name}\"")))
}

/// What copying `name` from source `from` to source `to` would write.
#[tauri::command]
pub fn plan_copy(
    state: S<'_>,
    name: String,
    from: String,
    to: String,
) -> CommandResult<switchboard_engine::engine::CopyPlan> {
    Ok(state.engine.plan_copy(&name, &from, &to)?)
}

/// Copy (or, with `moveIt`, move) a server into another client's file, in
/// that client's format.
#[tauri::command]
pub async fn copy_server(
    state: S<'_>,
    name: String,
    from: String,
    to: String,
    move_it: bool,
) -> CommandResult<()> {
    Ok(state.engine.copy_server(&name, &from, &to, move_it).await?)
}

/// Rename a server in its own file (checked against what the user saw).
#[tauri::command]
pub async fn rename_server(
    state: S<'_>,
    source: String,
    from: String,
    to: String,
    content_hash: Option<String>,
) -> CommandResult<()> {
    Ok(state
        .engine
        .edit_seen(
            &source,
            ServerEdit::Rename { from, to },
            content_hash.as_deref(),
        )
        .await?)
}

/// A plain-text report on a server for a bug report (no secret in it).
#[tauri::command]
pub fn diagnostic_report(state: S<'_>, name: String) -> CommandResult<String> {
    state
        .engine
        .manager()
        .diagnostic_report(&name)
        .ok_or_else(|| CommandError::new(ErrorCode::NotFound, format!("Unknown server \"{name}\"")))
}

#[tauri::command]
pub async fn start_server(state: S<'_>, name: String) -> CommandResult<()> {
    Ok(state.engine.manager().start_server(&name).await?)
}

#[tauri::command]
pub async fn stop_server(state: S<'_>, name: String) -> CommandResult<()> {
    Ok(state.engine.manager().stop(&name).await?)
}

#[tauri::command]
pub async fn restart_server(state: S<'_>, name: String) -> CommandResult<()> {
    Ok(state.engine.manager().restart(&name).await?)
}

/// Writes `enabled` into the server's own file; the server starts or stops
/// in the background (status events).
#[tauri::command]
pub async fn set_enabled(
    state: S<'_>,
    source: String,
    name: String,
    enabled: bool,
    content_hash: Option<String>,
) -> CommandResult<()> {
    Ok(state
        .engine
        .edit_seen(
            &source,
            ServerEdit::SetEnabled { name, enabled },
            content_hash.as_deref(),
        )
        .await?)
}

/// `contentHash`: the source's hash as the user saw it (`list_sources`);
/// a file changed since is refused with code `conflict`.
#[tauri::command]
pub async fn add_server(
    state: S<'_>,
    source: String,
    def: ServerDef,
    content_hash: Option<String>,
) -> CommandResult<()> {
    Ok(state
        .engine
        .edit_seen(&source, ServerEdit::Add(def), content_hash.as_deref())
        .await?)
}

/// Writes only the fields where `def` differs from `original` (the
/// definition the form was opened with), each in its client's own key.
#[tauri::command]
pub async fn update_server(
    state: S<'_>,
    source: String,
    name: String,
    def: ServerDef,
    original: ServerDef,
    content_hash: Option<String>,
) -> CommandResult<()> {
    let patch = ServerPatch::between(&original, &def);
    Ok(state
        .engine
        .edit_seen(
            &source,
            ServerEdit::Patch { name, patch },
            content_hash.as_deref(),
        )
        .await?)
}

/// Removes a server; one installed from a `.mcpb` bundle takes its unpacked
/// folder and keychain items along when nothing else uses them.
#[tauri::command]
pub async fn remove_server(
    state: S<'_>,
    source: String,
    name: String,
    content_hash: Option<String>,
) -> CommandResult<switchboard_engine::bundle::CleanedUp> {
    Ok(state
        .engine
        .remove_server(&source, &name, content_hash.as_deref())
        .await?)
}

#[tauri::command]
pub async fn set_priority(state: S<'_>, ids: Vec<String>) -> CommandResult<()> {
    Ok(state.engine.set_priority(ids).await?)
}

/// "Use this one": moves `source` right above the winner's source.
#[tauri::command]
pub async fn promote(state: S<'_>, name: String, source: String) -> CommandResult<()> {
    Ok(state.engine.promote(&name, &source).await?)
}

#[tauri::command]
pub async fn add_project(state: S<'_>, path: PathBuf, trusted: bool) -> CommandResult<()> {
    Ok(state.engine.add_project(&path, trusted).await?)
}

#[tauri::command]
pub async fn remove_project(state: S<'_>, path: PathBuf) -> CommandResult<()> {
    Ok(state.engine.remove_project(&path).await?)
}

/// Run the held servers of a project folder (all, or only `server`): ones
/// changed since the folder was trusted, or not approved in Claude Code.
#[tauri::command]
pub async fn approve_project(
    state: S<'_>,
    path: PathBuf,
    server: Option<String>,
) -> CommandResult<Approved> {
    Ok(state
        .engine
        .approve_project(&path, server.as_deref())
        .await?)
}

#[tauri::command]
pub async fn list_resources(state: S<'_>, server: String) -> CommandResult<Value> {
    Ok(state.engine.manager().list_resources(&server).await?)
}

#[tauri::command]
pub async fn read_resource(state: S<'_>, server: String, uri: String) -> CommandResult<Value> {
    Ok(state
        .engine
        .read_resource(&server, &uri, "Switchboard (Resources view)")
        .await?)
}

#[tauri::command]
pub async fn list_prompts(state: S<'_>, server: String) -> CommandResult<Value> {
    Ok(state.engine.manager().list_prompts(&server).await?)
}

#[tauri::command]
pub async fn get_prompt(
    state: S<'_>,
    server: String,
    name: String,
    args: Option<Map<String, Value>>,
) -> CommandResult<Value> {
    Ok(state
        .engine
        .get_prompt(&server, &name, args, "Switchboard (Resources view)")
        .await?)
}

#[tauri::command]
pub async fn subscribe_resource(state: S<'_>, server: String, uri: String) -> CommandResult<()> {
    Ok(state
        .engine
        .manager()
        .subscribe_resource(&server, &uri)
        .await?)
}

#[tauri::command]
pub async fn unsubscribe_resource(state: S<'_>, server: String, uri: String) -> CommandResult<()> {
    Ok(state
        .engine
        .manager()
        .unsubscribe_resource(&server, &uri)
        .await?)
}

/// Connect `def` in a throwaway manager, as it would run from `source`
/// (its client's variable rules); the error is the exact message to show.
#[tauri::command]
pub async fn test_connection(
    state: S<'_>,
    def: ServerDef,
    source: Option<String>,
) -> CommandResult<ProbeReport> {
    let wanted = state.engine.wanted_for(def, source.as_deref());
    probe(state.engine.host(), wanted).await
}

/// `def` as an entry of `source`'s file, in its client's format and field names.
#[tauri::command]
pub fn entry_text(state: S<'_>, source: String, def: ServerDef) -> CommandResult<EntryText> {
    Ok(state.engine.entry_text(&source, &def)?)
}

/// Entry text typed by the user, read back; the error names the line and field.
#[tauri::command]
pub fn parse_entry_text(
    state: S<'_>,
    source: String,
    name: String,
    text: String,
) -> CommandResult<ServerDef> {
    Ok(state.engine.parse_entry_text(&source, &name, &text)?)
}

/// The user's answer to an `Elicitation` event: `accept` (with `content`), `decline` or `cancel`.
#[tauri::command]
pub fn answer_elicitation(
    state: S<'_>,
    id: u64,
    action: String,
    content: Option<Value>,
) -> CommandResult<()> {
    let answer = match action.as_str() {
        "accept" => ElicitAnswer::Accept(content.unwrap_or_else(|| Value::Object(Map::new()))),
        "decline" => ElicitAnswer::Decline,
        "cancel" => ElicitAnswer::Cancel,
        other => {
            return Err(CommandError::new(
                ErrorCode::Invalid,
                format!("Unknown elicitation action \"{other}\""),
            ))
        }
    };
    state
        .elicitations
        .answer(id, answer)
        .then_some(())
        .ok_or_else(|| {
            CommandError::new(
                ErrorCode::NotFound,
                format!("Elicitation {id} is no longer waiting"),
            )
        })
}

/// Whether a remote server has a stored sign-in, and where sign-ins are kept.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SignInStatus {
    pub signed_in: bool,
    /// `Secret Service`, `macOS Keychain`, …
    pub store: String,
    /// Why sign-in cannot work here (no keychain), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unavailable: Option<String>,
}

/// Sign in: the authorization page opens in the system browser
/// (tauri-plugin-opener), never in the webview, and only when it is a web
/// page; returns once signed in and the server is connecting.
/// Progress arrives as `sign-in` events.
#[tauri::command]
pub async fn sign_in<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: S<'_>,
    name: String,
) -> CommandResult<()> {
    use switchboard_engine::opener::{check_link, SIGN_IN_METADATA};
    use tauri_plugin_opener::OpenerExt;
    let open: switchboard_engine::auth::oauth::BrowserOpener =
        std::sync::Arc::new(move |url: &str| {
            let link = check_link(url, SIGN_IN_METADATA).map_err(|e| e.to_string())?;
            app.opener()
                .open_url(link.as_str(), None::<&str>)
                .map_err(|e| e.to_string())
        });
    Ok(state
        .engine
        .sign_in(
            &name,
            Some(open),
            switchboard_engine::auth::oauth::DEFAULT_SIGN_IN_TIMEOUT,
        )
        .await?)
}

#[tauri::command]
pub fn cancel_sign_in(state: S<'_>, name: String) {
    state.engine.cancel_sign_in(&name);
}

#[tauri::command]
pub async fn sign_out(state: S<'_>, name: String) -> CommandResult<()> {
    Ok(state.engine.sign_out(&name).await?)
}

#[tauri::command]
pub async fn sign_in_status(state: S<'_>, name: String) -> CommandResult<SignInStatus> {
    let unavailable = switchboard_engine::auth::vault::Keychain::status()
        .err()
        .map(|e| e.to_string());
    Ok(SignInStatus {
        signed_in: state.engine.is_signed_in(&name).await,
        store: switchboard_engine::auth::vault::Keychain.describe(),
        unavailable,
    })
}

/// Where sign-ins and OAuth app secrets are kept, and why not, if they cannot be.
fn keychain(state: &AppState) -> (String, Option<String>) {
    let vault = state
        .engine
        .manager()
        .vault()
        .unwrap_or_else(switchboard_engine::auth::vault::Vault::keychain);
    (
        vault.describe(),
        vault.probe_writable().err().map(|e| e.to_string()),
    )
}

/// The signed-in accounts view: every sign-in kept for a configured server
/// (nothing secret in it) and the keychain they are kept in.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AccountList {
    pub accounts: Vec<switchboard_engine::auth::accounts::Account>,
    /// `Secret Service`, `macOS Keychain`, …
    pub store: String,
    /// Why nothing can be kept there right now, if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unavailable: Option<String>,
}

#[tauri::command]
pub async fn list_accounts(state: S<'_>) -> CommandResult<AccountList> {
    let (store, unavailable) = keychain(&state);
    Ok(AccountList {
        accounts: state.engine.accounts().await,
        store,
        unavailable,
    })
}

/// Sign out of every listed sign-in; returns the servers signed out.
#[tauri::command]
pub async fn sign_out_everywhere(state: S<'_>) -> CommandResult<Vec<String>> {
    Ok(state.engine.sign_out_everywhere().await?)
}

/// Keep `secret` as the client secret of `name`'s pre-registered OAuth app
/// in the keychain (never in a file); `null` or empty deletes it.
#[tauri::command]
pub async fn set_oauth_client_secret(
    state: S<'_>,
    name: String,
    secret: Option<String>,
) -> CommandResult<()> {
    Ok(state.engine.set_oauth_client_secret(&name, secret).await?)
}

/// Whether a client secret is kept for a server's OAuth app (never the secret).
#[derive(Debug, Clone, Serialize, PartialEq, Eq, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ClientSecretStatus {
    pub stored: bool,
    pub store: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unavailable: Option<String>,
}

#[tauri::command]
pub async fn oauth_client_secret_status(
    state: S<'_>,
    name: String,
) -> CommandResult<ClientSecretStatus> {
    let (store, unavailable) = keychain(&state);
    Ok(ClientSecretStatus {
        stored: state.engine.has_oauth_client_secret(&name).await,
        store,
        unavailable,
    })
}

/// What a server asked for when it answered `insufficient_scope` (the
/// scopes and its reason), shown before the browser opens again; `null`
/// when its last answer was not that.
#[tauri::command]
pub fn step_up(state: S<'_>, name: String) -> Option<switchboard_engine::auth::accounts::StepUp> {
    state.engine.step_up(&name)
}

/// Every write Switchboard made to a file, newest first (the History view).
#[tauri::command]
pub async fn list_history(state: S<'_>) -> CommandResult<Vec<HistoryEntry>> {
    Ok(state.engine.history())
}

/// Undo history entry `id`: its files get their earlier content back, or it
/// fails with code `conflict` (naming the file) when one changed since.
#[tauri::command]
pub async fn undo(state: S<'_>, id: u64) -> CommandResult<UndoReport> {
    Ok(state.engine.undo(Some(id)).await?)
}

// The gateway: status, settings, token and tool switches.

type G<'a> = State<'a, std::sync::Arc<crate::gateway::AppGateway>>;

#[tauri::command]
pub fn gateway_status(gateway: G<'_>) -> crate::gateway::GatewayStatus {
    gateway.status()
}

/// Saves the settings and restarts the listener with them.
#[tauri::command]
pub async fn set_gateway_settings(
    state: S<'_>,
    gateway: G<'_>,
    settings: switchboard_engine::settings::GatewaySettings,
) -> CommandResult<crate::gateway::GatewayStatus> {
    if settings.port == Some(0) {
        return Err(CommandError::new(
            ErrorCode::InvalidPort,
            "Port 0 is not a port clients can be configured with: choose one from 1024 to 65535.",
        ));
    }
    state.engine.set_gateway_settings(settings).await?;
    gateway.inner().restart().await;
    Ok(gateway.status())
}

/// The bearer token clients send to the HTTP gateway (shown only on request).
#[tauri::command]
pub async fn gateway_token() -> CommandResult<String> {
    let t = crate::gateway::token()
        .await
        .map_err(|e| CommandError::new(ErrorCode::NoKeychain, e))?;
    Ok(t.reveal().to_string())
}

/// Switch one tool (by server and raw name) on or off for the gateway.
#[tauri::command]
pub async fn set_tool_enabled(
    state: S<'_>,
    server: String,
    tool: String,
    on: bool,
) -> CommandResult<()> {
    Ok(state.engine.set_tool_enabled(&server, &tool, on).await?)
}

/// Leave all of a server's tools, resources and prompts out of the gateway, or serve them again.
#[tauri::command]
pub async fn set_gateway_excluded(
    state: S<'_>,
    server: String,
    excluded: bool,
) -> CommandResult<()> {
    Ok(state.engine.set_gateway_excluded(&server, excluded).await?)
}

// "Use Switchboard in…" (issue: connect a client to the gateway).

#[tauri::command]
pub fn list_connections(state: S<'_>) -> Vec<switchboard_engine::connect::ClientConnection> {
    state.engine.connections()
}

/// How the entry reaches the gateway: over HTTP (the app's URL and token),
/// or by running the bundled `switchboard serve`.
async fn via(
    gateway: &crate::gateway::AppGateway,
    http: bool,
) -> CommandResult<switchboard_engine::connect::Via> {
    use switchboard_engine::connect::{HttpTarget, Via};
    if !http {
        let binary =
            crate::sidecar::path().map_err(|m| CommandError::new(ErrorCode::NoSidecar, m))?;
        return Ok(Via::Stdio { binary });
    }
    let token = crate::gateway::token()
        .await
        .map_err(|e| CommandError::new(ErrorCode::NoKeychain, e))?;
    Ok(Via::Http(HttpTarget {
        url: gateway.url(),
        token: token.reveal().to_string(),
    }))
}

fn options(
    via: switchboard_engine::connect::Via,
    disable_duplicates: bool,
) -> switchboard_engine::connect::ConnectOptions {
    switchboard_engine::connect::ConnectOptions {
        via,
        disable_duplicates,
    }
}

/// The preview: the entry as it will be written and what would be disabled.
#[tauri::command]
pub async fn plan_connect(
    state: S<'_>,
    gateway: G<'_>,
    client: String,
    http: bool,
    disable_duplicates: bool,
) -> CommandResult<switchboard_engine::connect::ConnectPlan> {
    let via = via(&gateway, http).await?;
    Ok(state
        .engine
        .plan_connect(&client, &options(via, disable_duplicates))?)
}

/// What connecting did; for a stdio entry, also the check of the binary it runs.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Connected {
    pub report: switchboard_engine::connect::ConnectReport,
    pub check: Option<crate::sidecar::SidecarCheck>,
}

/// Connect `client`. A stdio entry is written only after the bundled
/// `switchboard serve` answered an MCP handshake (its result is returned).
#[tauri::command]
pub async fn connect_client<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    state: S<'_>,
    gateway: G<'_>,
    client: String,
    http: bool,
    disable_duplicates: bool,
) -> CommandResult<Connected> {
    let via = via(&gateway, http).await?;
    let check = if http {
        None
    } else {
        Some(crate::sidecar::check(&app).await)
    };
    if let Some(c) = check.as_ref().filter(|c| !c.ok) {
        return Err(CommandError::new(
            ErrorCode::SidecarFailed,
            format!("Nothing was written: {}", c.message),
        ));
    }
    let report = state
        .engine
        .connect_client(&client, &options(via, disable_duplicates))
        .await?;
    Ok(Connected { report, check })
}

#[tauri::command]
pub async fn disconnect_client(
    state: S<'_>,
    client: String,
) -> CommandResult<switchboard_engine::connect::DisconnectReport> {
    Ok(state.engine.disconnect_client(&client).await?)
}

// Tools you can trust: pins, findings, approvals.

/// Every server's tools, prompts and templates against what the user
/// approved: pin state, findings, what changed, what the gateway holds.
#[tauri::command]
pub async fn tool_review(
    state: S<'_>,
) -> CommandResult<switchboard_engine::tool_trust::TrustReport> {
    Ok(state.engine.tool_review().await)
}

/// Approve `tools` of `server` as offered now (every item when empty).
#[tauri::command]
pub async fn approve_tools(
    state: S<'_>,
    server: String,
    tools: Vec<String>,
) -> CommandResult<switchboard_engine::approvals::Approved> {
    Ok(state.engine.approve_tools(&server, &tools).await?)
}

/// What the gateway holds back of `server`: `hold-changed`, `warn`, `hold-new`.
#[tauri::command]
pub async fn set_approval_mode(
    state: S<'_>,
    server: String,
    mode: switchboard_engine::settings::ApprovalMode,
) -> CommandResult<()> {
    Ok(state.engine.set_approval_mode(&server, mode).await?)
}

/// Each server's mode for checks on what it returns, where it is not the
/// default (`warn`).
#[tauri::command]
pub fn result_checks(
    state: S<'_>,
) -> std::collections::BTreeMap<String, switchboard_engine::settings::ResultMode> {
    state.engine.settings().result_checks
}

/// What is done when `server`'s answer has a finding: `log`, `warn`, `block`.
#[tauri::command]
pub async fn set_result_check(
    state: S<'_>,
    server: String,
    mode: switchboard_engine::settings::ResultMode,
) -> CommandResult<()> {
    Ok(state.engine.set_result_mode(&server, mode).await?)
}

// Profiles: named sets of servers and tools, and what they cost in tokens.

/// Runs `f` off the async runtime: counting tokens may run the sidecar.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> CommandResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::new(ErrorCode::Io, format!("counting tokens failed: {e}")))
}

/// Every profile (Everything first): servers, tools, tokens, who uses it.
#[tauri::command]
pub async fn list_profiles(state: S<'_>) -> CommandResult<Vec<ProfileView>> {
    let engine = state.engine.clone();
    blocking(move || engine.profiles()).await
}

/// What each client with a config file loads now: its servers' tokens
/// against its budget, and the profile it follows.
#[tauri::command]
pub async fn client_costs(state: S<'_>) -> CommandResult<Vec<ClientCost>> {
    let engine = state.engine.clone();
    blocking(move || engine.client_costs()).await
}

/// Every tool with the tokens its definition costs (`o200k_base`).
#[tauri::command]
pub async fn tool_costs(state: S<'_>) -> CommandResult<Vec<ToolCost>> {
    let engine = state.engine.clone();
    blocking(move || engine.tool_costs()).await
}

/// Create, rename, delete a profile, or change its servers, tools or budget.
#[tauri::command]
pub async fn change_profile(state: S<'_>, change: ProfileChange) -> CommandResult<()> {
    Ok(state.engine.change_profiles(change).await?)
}

/// Switch the gateway's `/mcp` (and the clients that follow the switch) to `name`.
#[tauri::command]
pub async fn switch_profile(state: S<'_>, name: String) -> CommandResult<()> {
    Ok(state.engine.switch_profile(&name).await?)
}

/// Apply a profile to a client: in its own file (`file`: exactly the
/// profile's servers on) or through the gateway (`gateway`: one
/// `switchboard` entry serving it); `follow`: it moves with the switch.
#[tauri::command]
pub async fn apply_profile(
    state: S<'_>,
    gateway: G<'_>,
    client: String,
    profile: String,
    via: switchboard_engine::profile::Via,
    follow: bool,
) -> CommandResult<ApplyReport> {
    if via == switchboard_engine::profile::Via::Gateway {
        let target = gateway_target(&state, &gateway, &client).await?;
        state.engine.set_gateway_target(target);
    }
    Ok(state
        .engine
        .apply_profile(&client, &profile, via, follow)
        .await?)
}

/// How a client's entry reaches the gateway when a profile is applied
/// through it: as it does now when it has one (`None`), else by running the
/// bundled `switchboard serve`, else over the app's HTTP gateway.
async fn gateway_target(
    state: &AppState,
    gateway: &crate::gateway::AppGateway,
    client: &str,
) -> CommandResult<Option<switchboard_engine::connect::Via>> {
    use switchboard_engine::connect::EntryState;
    let connections = state.engine.connections();
    let connected = connections
        .iter()
        .any(|c| c.client == client && matches!(c.entry, EntryState::Connected { .. }));
    if connected {
        return Ok(None);
    }
    Ok(Some(via(gateway, crate::sidecar::path().is_err()).await?))
}
