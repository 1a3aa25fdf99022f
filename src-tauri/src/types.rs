//! The shapes the UI receives and sends, declared once for TypeScript.
//!
//! Commands return the engine's own types; these mirrors exist so ts-rs can
//! write `ui/src/lib/types/generated.ts` without the engine depending on it.
//! Two tests keep them honest: one regenerates the file and fails on drift,
//! one round-trips real engine values through each mirror and requires the
//! same JSON back (a renamed, added or dropped field fails it).

#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Stdio,
    Http,
    Sse,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    User,
    Project,
    Managed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Jsonc,
    Toml,
    Yaml,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    Switchboard,
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Windsurf,
    Zed,
    Cline,
    Roo,
    Gemini,
    Codex,
    Goose,
    Lmstudio,
    Continue,
    Fallback,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuthConfig {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub credential_id: Option<String>,
}

/// A pre-registered OAuth app of a remote server (issue 17). `clientSecret`
/// is only ever one the user wrote into a client's file (raw, e.g. `${VAR}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct OAuthApp {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub callback_port: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub scopes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub redirect_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub client_secret: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RestartPolicy {
    pub initial_delay_ms: u64,
    pub max_delay_ms: u64,
    pub backoff_multiplier: f64,
    pub max_restart_attempts: u32,
}

/// One server definition (SPEC C1), as read from and written to config files.
/// Env and header values are raw (`${env:X}`, `!cmd`): the UI masks them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerDef {
    pub name: String,
    pub transport: Transport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub args: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "Record<string, string>")]
    pub env: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "Record<string, string>")]
    pub headers: Option<BTreeMap<String, String>>,
    pub enabled: bool,
    /// Milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub timeout: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub auth: Option<AuthConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub oauth: Option<OAuthApp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub restart_policy: Option<RestartPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub auto_approve: Option<Vec<String>>,
}

/// A server's lifecycle state (SPEC M1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum ServerStatus {
    Connecting,
    Connected,
    Disabled,
    Failed { error: String },
    NeedsAuth { message: String },
    Restarting { attempt: u32, of: u32 },
    Disconnected,
}

/// What one managed server looks like right now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerState {
    pub name: String,
    pub status: ServerStatus,
    pub transport: Transport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub source: Option<String>,
    pub tool_count: usize,
    pub deferred: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub binary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub transport_used: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub protocol_version: Option<String>,
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_error: Option<String>,
    /// Why it is not running, in plain words with what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub diagnosis: Option<Diagnosis>,
    pub restarts: u32,
}

/// What "Copy to…" / "Move to…" would write, before anything is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CopyPlan {
    pub to: String,
    pub client: String,
    pub path: String,
    pub creates_file: bool,
    /// The entry as it will appear in the target file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub entry: Option<String>,
    /// Why it cannot be written there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub refusal: Option<String>,
    pub name_taken: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub restart_hint: Option<String>,
}

/// The class of a failed start (one per way a server fails to start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum FailureClass {
    CommandNotFound,
    NotExecutable,
    ExitedAtOnce,
    MissingValue,
    BadFolder,
    HandshakeTimeout,
    NotMcp,
    ConnectionRefused,
    HostNotFound,
    Tls,
    WrongUrl,
    Unauthorized,
    ProtocolMismatch,
    InvalidConfig,
    Crashed,
    Other,
}

/// Why a server is not running: a short line for its row, the whole
/// explanation with the fix for its detail, and the technical error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    pub class: FailureClass,
    pub summary: String,
    pub detail: String,
    pub error: String,
}

/// A shadowed definition of a name: loses to the winner by source priority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ShadowedDef {
    pub source: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub line: Option<usize>,
    pub transport: Transport,
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub errors: Option<Vec<String>>,
}

/// `list_servers`: a name's winning definition, its shadowed ones, its runtime state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerView {
    #[serde(flatten)]
    #[ts(flatten)]
    pub def: ServerDef,
    pub source: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub line: Option<usize>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub not_runnable: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parked: Option<bool>,
    /// Its file does not parse right now: this is the last good version,
    /// saved at this time (ms since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_good_at: Option<u64>,
    /// Not started until the user approves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub held: Option<Held>,
    pub shadowed: Vec<ShadowedDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub runtime: Option<ServerState>,
}

/// `list_sources`: one config source, in priority order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    pub id: String,
    pub client: Client,
    pub client_name: String,
    pub level: Level,
    pub path: String,
    pub format: Format,
    pub exists: bool,
    pub read_only: bool,
    pub priority: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub project: Option<String>,
    pub server_count: usize,
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub content_hash: Option<String>,
    /// Its client reads the file only at start: what to do after a change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub restart_hint: Option<String>,
    /// The `ServerDef` fields (camelCase) this source's client can store.
    pub fields: Vec<String>,
    /// Set while the file exists but does not parse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parse_error: Option<ParseError>,
}

/// Why a source file does not parse, and whether its last good version is used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ParseError {
    /// Starts with the file (and line).
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub line: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub column: Option<usize>,
    /// When the last good version still used was saved (ms since the
    /// epoch); absent: there is none, so none of the file's servers run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_good_at: Option<u64>,
}

/// One difference between what a trusted folder's server ran when it was
/// trusted and what it runs now (env values are never shown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TrustChange {
    pub field: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub after: Option<String>,
}

/// Why a valid, enabled server is not started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Held {
    /// Claude Code would not run this `.mcp.json` server.
    NotApproved { reason: String },
    /// Changed (or added) since its folder was trusted.
    Changed {
        reason: String,
        changes: Vec<TrustChange>,
    },
}

/// `approve_project`: the servers that may run now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Approved {
    pub servers: Vec<String>,
    /// Also approved for Claude Code (in `~/.claude.json`).
    pub for_claude_code: Vec<String>,
}

/// `list_projects`: a project folder and whether its configs may run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProjectFolder {
    pub path: String,
    pub trusted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolRef {
    pub server: String,
    pub tool: String,
}

/// Tools whose sanitized names were equal, and the names they ended up with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Collision {
    pub name: String,
    pub tools: Vec<ToolRef>,
    pub resolved: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// Sanitized, unique: what clients see.
    pub name: String,
    pub server: String,
    /// The tool's raw name on its server.
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[ts(type = "JsonSchema")]
    pub input_schema: Value,
    pub deferred: bool,
}

/// `list_tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolIndex {
    pub tools: Vec<ToolEntry>,
    pub collisions: Vec<Collision>,
}

/// `call_tool`: the result flattened for display (SPEC M6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CallOutcome {
    pub text: String,
    pub is_error: bool,
    #[ts(type = "unknown[]")]
    pub content: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "unknown")]
    pub structured_content: Option<Value>,
    pub server: String,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ServerError {
    pub server: String,
    pub error: String,
}

/// What a reconcile did, by server name (the `reconciled` event, which
/// follows every edit once its servers have started or stopped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReconcileReport {
    pub started: Vec<String>,
    pub stopped: Vec<String>,
    pub updated: Vec<String>,
    pub kept: Vec<String>,
    pub failed: Vec<ServerError>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StartupReport {
    pub connected: Vec<String>,
    pub failed: Vec<ServerError>,
    pub deferred: Vec<String>,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LogLine {
    /// Milliseconds since the Unix epoch.
    pub at: u64,
    /// `stderr`, `lifecycle` or a server log level.
    pub kind: String,
    pub text: String,
}

/// Where a sign-in is (SPEC A1, U8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum SignInPhase {
    /// Waiting for the browser; `url` is the authorization page, for copying.
    Waiting {
        url: String,
    },
    SignedIn,
    SignedOut,
    Failed {
        error: String,
    },
}

/// `sign_in_status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SignInStatus {
    pub signed_in: bool,
    pub store: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unavailable: Option<String>,
}

/// One stored sign-in (`list_accounts`): nothing secret in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    /// The server (keychain record) the sign-in belongs to.
    pub server: String,
    /// The URL it was made for.
    pub resource: String,
    /// The authorization server that issued it.
    pub issuer: Option<String>,
    pub client_id: String,
    pub scopes: Vec<String>,
    /// Seconds since 1970.
    pub signed_in_at: Option<u64>,
    /// When the access token expires (seconds since 1970).
    pub expires_at: Option<u64>,
    pub has_refresh_token: bool,
    /// The servers that use it.
    pub used_by: Vec<String>,
}

/// `list_accounts`: the sign-ins and the keychain they are kept in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AccountList {
    pub accounts: Vec<Account>,
    pub store: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unavailable: Option<String>,
}

/// `oauth_client_secret_status`: whether a server's OAuth app has a secret in the keychain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClientSecretStatus {
    pub stored: bool,
    pub store: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unavailable: Option<String>,
}

/// `step_up`: the scopes a server's `insufficient_scope` answer asks for, and its reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StepUp {
    pub scopes: Vec<String>,
    pub reason: Option<String>,
}

/// The payload of `engine://event`: an engine event or one of the app's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum EngineEvent {
    Status {
        server: String,
        status: ServerStatus,
    },
    Tools {
        server: String,
        count: usize,
        deferred: bool,
    },
    Log {
        server: String,
        lines: Vec<LogLine>,
    },
    Warning {
        server: String,
        message: String,
    },
    Removed {
        server: String,
    },
    ResourceUpdated {
        server: String,
        uri: String,
    },
    ResourcesChanged {
        server: String,
    },
    PromptsChanged {
        server: String,
    },
    Reconciled {
        report: ReconcileReport,
    },
    Elicitation {
        id: u64,
        server: String,
        message: String,
        #[ts(type = "JsonSchema")]
        schema: Value,
    },
    SourceChanged {
        source: String,
        path: String,
    },
    DiscoveryChanged {
        servers: usize,
        warnings: usize,
    },
    /// A sign-in's progress (no token is ever in it).
    SignIn {
        server: String,
        phase: SignInPhase,
    },
    /// App: the first discovery and the startup gate are done.
    Ready {
        report: StartupReport,
    },
    /// App: events were dropped; reload everything.
    Resync,
    /// App: the gateway's status changed (listener, sessions, calls, tools).
    Gateway {
        status: GatewayStatus,
    },
    /// Tool approvals or approval modes changed: reload `tool_review`.
    Approvals,
}

// Connecting other clients to the gateway (`switchboard_engine::connect`).

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum HttpSupport {
    Headers,
    TokenEnvVar,
    None,
}

/// What a client's file holds under the name `switchboard`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum EntryState {
    Absent,
    Connected {
        transport: Transport,
        target: String,
        enabled: bool,
    },
    /// The user's own server with that name.
    Foreign {
        runs: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClientConnection {
    pub client: String,
    pub label: String,
    pub source: String,
    pub path: String,
    pub exists: bool,
    pub entry: EntryState,
    pub http: HttpSupport,
    pub duplicates: Vec<String>,
    pub disabled_by_connect: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub problem: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum EntryAction {
    Add,
    Update,
    Unchanged,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DuplicateServer {
    pub name: String,
    pub copy_to_switchboard: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct KeptServer {
    pub name: String,
    pub reason: String,
}

/// What connect would write; `entryText` shows the token as `•••`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConnectPlan {
    pub client: String,
    pub label: String,
    pub source: String,
    pub path: String,
    pub action: EntryAction,
    pub transport: Transport,
    pub entry_text: String,
    pub creates_file: bool,
    pub duplicates: Vec<String>,
    pub disable: Vec<DuplicateServer>,
    pub kept: Vec<KeptServer>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConnectReport {
    #[serde(flatten)]
    pub plan: ConnectPlan,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub history_id: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DisconnectReport {
    pub client: String,
    pub label: String,
    pub path: String,
    pub removed_entry: bool,
    pub re_enabled: Vec<String>,
    pub removed_copies: Vec<String>,
    pub kept: Vec<KeptServer>,
    pub removed_file: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub history_id: Option<u64>,
}

/// The check of the bundled `switchboard serve` before a stdio entry is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SidecarCheck {
    pub ok: bool,
    pub path: String,
    pub server: Option<String>,
    pub tools: Option<u64>,
    pub message: String,
}

/// How the app itself behaves (`app_settings`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppSettings {
    pub start_at_login: bool,
    pub keep_in_tray: bool,
    pub project_config: bool,
    pub data_folder: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Connected {
    pub report: ConnectReport,
    pub check: Option<SidecarCheck>,
}

// The app's gateway (SPEC G1, G4): `src-tauri/src/gateway.rs`.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum GatewayState {
    Starting,
    Listening,
    Off,
    Failed,
}

/// Settings of the app's HTTP gateway; absent fields are the defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub port: Option<u16>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub off: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub tool_search: bool,
}

/// A client connected to the gateway (from its `initialize`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySession {
    pub id: u64,
    pub client: String,
    pub version: String,
    /// `null`: every server; else the one server it is for.
    pub server: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GatewayToolCalls {
    pub server: String,
    pub tool: String,
    pub calls: u64,
    pub errors: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    pub state: GatewayState,
    pub url: Option<String>,
    pub settings: GatewaySettings,
    pub default_port: u16,
    pub message: Option<String>,
    pub sessions: Vec<GatewaySession>,
    pub calls: Vec<GatewayToolCalls>,
    pub tool_count: u64,
    pub long_names: Vec<String>,
    pub over_limits: Vec<u64>,
    pub disabled_tools: BTreeMap<String, Vec<String>>,
    pub excluded: Vec<String>,
}

// Resources and prompts (SPEC M8) are MCP's own shapes, passed through as the
// server sent them: the fields the UI reads are typed, everything else
// (annotations, icons, `_meta`, …) is kept in `rest` and not declared.

/// One entry of `list_resources().resources`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
    /// Bytes, when the server says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub size: Option<u64>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// One entry of `list_resources().resourceTemplates` (RFC 6570 `uriTemplate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateInfo {
    pub uri_template: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// `list_resources`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceList {
    pub resources: Vec<ResourceInfo>,
    pub resource_templates: Vec<ResourceTemplateInfo>,
}

/// One item of `read_resource().contents`: `text`, or base64 `blob`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContent {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub blob: Option<String>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// `read_resource`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ResourceRead {
    pub contents: Vec<ResourceContent>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PromptArgumentInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub required: Option<bool>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// One entry of `list_prompts().prompts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PromptInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub arguments: Option<Vec<PromptArgumentInfo>>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// `list_prompts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PromptList {
    pub prompts: Vec<PromptInfo>,
}

/// One message of a prompt; `content` is MCP content (`text`, `image`, `audio`, `resource`, `resource_link`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PromptMessageInfo {
    pub role: String,
    #[ts(type = "{ type: string; text?: string; mimeType?: string; [key: string]: unknown }")]
    pub content: Value,
}

/// `get_prompt`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PromptResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    pub messages: Vec<PromptMessageInfo>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// `entry_text`: one server's entry as its client's file spells it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct EntryText {
    pub format: Format,
    pub text: String,
}

/// `test_connection` when the server connected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProbeReport {
    pub message: String,
    pub tool_count: usize,
    pub tools: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub name: String,
    pub version: String,
}

/// One line of a history entry's diff; `old`/`new` are 1-based line numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum LineKind {
    Same,
    Removed,
    Added,
    /// Unchanged lines left out; the text says how many.
    Skipped,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    pub kind: LineKind,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub old: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub new: Option<usize>,
}

/// What one recorded change did to one file. No hash: the file did not exist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub before_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub after_hash: Option<String>,
    /// Env, header and token values are masked (`•••`).
    pub diff: Vec<DiffLine>,
}

/// `ready`: every file still holds what Switchboard wrote; `changed`: one
/// changed since (undo would refuse); `undone`: they hold the earlier content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum UndoState {
    Ready,
    Changed,
    Undone,
}

/// `list_history`: one write Switchboard made (one user action), newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub id: u64,
    /// Milliseconds since the Unix epoch.
    pub at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server: Option<String>,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub undo_of: Option<u64>,
    pub files: Vec<FileChange>,
    pub state: UndoState,
}

/// `undo`: what was undone and the entry recording the undo itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UndoReport {
    pub undone: u64,
    pub summary: String,
    pub restored: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub recorded_as: Option<u64>,
}

// Tools you can trust (`switchboard_engine::tool_trust`, `approvals`).

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ItemKind {
    Tool,
    Prompt,
    ResourceTemplate,
}

/// Against what the user approved: as approved, never approved, or different.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum PinState {
    Approved,
    New,
    Changed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
}

/// What the gateway holds back of a server until approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    HoldChanged,
    Warn,
    HoldNew,
}

/// One finding of the offline checker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    /// Where: `description`, a schema path, `instructions`; absent: the whole server.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[ts(as = "Option<String>", optional)]
    pub at: String,
    /// The text with hidden characters made visible (tag characters decoded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub visible: Option<String>,
}

/// A changed item: line diffs of its description and of the rest (JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ItemChanges {
    pub description: Vec<DiffLine>,
    pub definition: Vec<DiffLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ItemReview {
    pub kind: ItemKind,
    pub name: String,
    pub pin: PinState,
    /// Left out of the gateway until approved.
    pub held: bool,
    pub findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub changes: Option<ItemChanges>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct RemovedItem {
    pub kind: ItemKind,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ServerReview {
    pub server: String,
    pub mode: ApprovalMode,
    /// Something was approved under this server's current command/URL.
    pub known: bool,
    pub items: Vec<ItemReview>,
    pub removed: Vec<RemovedItem>,
    pub findings: Vec<Finding>,
}

/// `tool_review`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TrustReport {
    pub servers: Vec<ServerReview>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub problem: Option<String>,
}

/// `approve_tools`: the items pinned (`tool:NAME`, …) and the ones forgotten.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolsApproved {
    pub server: String,
    pub approved: Vec<String>,
    pub forgotten: Vec<String>,
}

/// A registry answer taken from the disk cache: when it was fetched, and
/// why the registry was not asked (the Catalog's offline note).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RegistryOffline {
    pub fetched_at_ms: u64,
    pub reason: String,
}

/// One server in the Catalog's results (issue 13).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogEntry {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub version: String,
    pub status: String,
    pub status_message: Option<String>,
    pub package_kinds: Vec<String>,
    pub local: bool,
    pub remote: bool,
    pub repository_url: Option<String>,
    pub website_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogPage {
    pub servers: Vec<CatalogEntry>,
    pub next_cursor: Option<String>,
    pub offline: Option<RegistryOffline>,
    pub registry_url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogVersion {
    pub version: String,
    pub status: String,
    pub published_at: Option<String>,
    pub is_latest: bool,
}

/// Which package or remote of a server.json an install form is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum InstallChoice {
    Package { index: usize },
    Remote { index: usize },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum InstallFieldGroup {
    Env,
    Header,
    Argument,
    Url,
}

/// One value an install form asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InstallField {
    pub id: String,
    pub key: String,
    pub group: InstallFieldGroup,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub variable_of: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    pub required: bool,
    pub secret: bool,
    pub format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub default: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub placeholder: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub choices: Option<Vec<String>>,
    pub repeated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InstallForm {
    pub choice: InstallChoice,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub runtime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub not_installable: Option<String>,
    pub suggested_name: String,
    pub fields: Vec<InstallField>,
}

/// One server in the Catalog's detail page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogServer {
    pub entry: CatalogEntry,
    pub versions: Vec<CatalogVersion>,
    pub forms: Vec<InstallForm>,
    /// The server.json, sent back unchanged with `install_server`.
    #[ts(type = "unknown")]
    pub server: Value,
    pub offline: Option<RegistryOffline>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeCheck {
    pub program: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub found: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub install_hint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InstallReport {
    pub name: String,
    pub source: String,
    pub path: String,
    pub kept_in_keychain: Vec<String>,
    pub plain_text_secrets: bool,
    pub replaced: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RegistrySettings {
    pub url: String,
    pub saved: Option<String>,
    pub from_env: Option<String>,
    pub default_url: String,
}

/// What a failed command rejects with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CommandErrorPayload {
    pub code: String,
    pub message: String,
}

/// The whole of `ui/src/lib/types/generated.ts`.
pub fn typescript() -> String {
    let cfg = ts_rs::Config::new().with_large_int("number");
    let decls = [
        Transport::decl(&cfg),
        Level::decl(&cfg),
        Format::decl(&cfg),
        Client::decl(&cfg),
        AuthConfig::decl(&cfg),
        OAuthApp::decl(&cfg),
        RestartPolicy::decl(&cfg),
        ServerDef::decl(&cfg),
        ServerStatus::decl(&cfg),
        ServerState::decl(&cfg),
        FailureClass::decl(&cfg),
        CopyPlan::decl(&cfg),
        Diagnosis::decl(&cfg),
        ShadowedDef::decl(&cfg),
        TrustChange::decl(&cfg),
        Held::decl(&cfg),
        ServerView::decl(&cfg),
        ParseError::decl(&cfg),
        SourceInfo::decl(&cfg),
        Approved::decl(&cfg),
        ProjectFolder::decl(&cfg),
        ToolRef::decl(&cfg),
        Collision::decl(&cfg),
        ToolEntry::decl(&cfg),
        ToolIndex::decl(&cfg),
        CallOutcome::decl(&cfg),
        ServerError::decl(&cfg),
        ReconcileReport::decl(&cfg),
        StartupReport::decl(&cfg),
        LogLine::decl(&cfg),
        SignInPhase::decl(&cfg),
        SignInStatus::decl(&cfg),
        Account::decl(&cfg),
        AccountList::decl(&cfg),
        ClientSecretStatus::decl(&cfg),
        StepUp::decl(&cfg),
        EngineEvent::decl(&cfg),
        ResourceInfo::decl(&cfg),
        ResourceTemplateInfo::decl(&cfg),
        ResourceList::decl(&cfg),
        ResourceContent::decl(&cfg),
        ResourceRead::decl(&cfg),
        PromptArgumentInfo::decl(&cfg),
        PromptInfo::decl(&cfg),
        PromptList::decl(&cfg),
        PromptMessageInfo::decl(&cfg),
        PromptResult::decl(&cfg),
        ProbeReport::decl(&cfg),
        EntryText::decl(&cfg),
        LineKind::decl(&cfg),
        DiffLine::decl(&cfg),
        FileChange::decl(&cfg),
        UndoState::decl(&cfg),
        HistoryEntry::decl(&cfg),
        UndoReport::decl(&cfg),
        HttpSupport::decl(&cfg),
        EntryState::decl(&cfg),
        ClientConnection::decl(&cfg),
        EntryAction::decl(&cfg),
        DuplicateServer::decl(&cfg),
        KeptServer::decl(&cfg),
        ConnectPlan::decl(&cfg),
        ConnectReport::decl(&cfg),
        DisconnectReport::decl(&cfg),
        SidecarCheck::decl(&cfg),
        Connected::decl(&cfg),
        AppSettings::decl(&cfg),
        GatewayState::decl(&cfg),
        GatewaySettings::decl(&cfg),
        GatewaySession::decl(&cfg),
        GatewayToolCalls::decl(&cfg),
        GatewayStatus::decl(&cfg),
        ItemKind::decl(&cfg),
        PinState::decl(&cfg),
        Severity::decl(&cfg),
        ApprovalMode::decl(&cfg),
        Finding::decl(&cfg),
        ItemChanges::decl(&cfg),
        ItemReview::decl(&cfg),
        RemovedItem::decl(&cfg),
        ServerReview::decl(&cfg),
        TrustReport::decl(&cfg),
        ToolsApproved::decl(&cfg),
        RegistryOffline::decl(&cfg),
        CatalogEntry::decl(&cfg),
        CatalogPage::decl(&cfg),
        CatalogVersion::decl(&cfg),
        InstallChoice::decl(&cfg),
        InstallFieldGroup::decl(&cfg),
        InstallField::decl(&cfg),
        InstallForm::decl(&cfg),
        CatalogServer::decl(&cfg),
        RuntimeCheck::decl(&cfg),
        InstallReport::decl(&cfg),
        RegistrySettings::decl(&cfg),
        AppInfo::decl(&cfg),
        CommandErrorPayload::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from src-tauri/src/types.rs by `cargo test -p switchboard-app types`.\n\
         // Do not edit: change the Rust side and run that test with UPDATE_TYPES=1.\n\n\
         /** A JSON Schema object (tool input, elicitation request). */\n\
         export type JsonSchema = { [key: string]: unknown };\n",
    );
    for d in decls {
        out.push_str("\nexport ");
        out.push_str(&d);
        out.push('\n');
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::PathBuf;

    fn generated_path() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/types/generated.ts")
    }

    /// Fails when the committed TypeScript differs from the Rust types;
    /// `UPDATE_TYPES=1` rewrites it instead.
    #[test]
    fn generated_typescript_is_up_to_date() {
        let want = typescript();
        let path = generated_path();
        if std::env::var_os("UPDATE_TYPES").is_some() {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(have == want, "{} is out of date: run `UPDATE_TYPES=1 cargo test -p switchboard-app types` and commit it", path.display());
    }

    /// `engine` serialized, read as the mirror `T`, serialized again: equal.
    pub(crate) fn assert_mirrors<T: serde::de::DeserializeOwned + Serialize>(
        what: &str,
        engine: Value,
    ) {
        let mirror: T = serde_json::from_value(engine.clone())
            .unwrap_or_else(|e| panic!("{what}: the TS mirror cannot read {engine}: {e}"));
        let back = serde_json::to_value(&mirror).unwrap();
        assert_eq!(
            back, engine,
            "{what}: the TS mirror loses or renames fields"
        );
    }

    /// The Catalog's shapes, from the engine's own values over every fixture server.json.
    #[test]
    fn mirrors_match_the_catalog() {
        use switchboard_engine::registry::{install, ServerResponse};
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/registry");
        let mut files = 0;
        for f in std::fs::read_dir(&dir).unwrap() {
            let e: ServerResponse =
                serde_json::from_slice(&std::fs::read(f.unwrap().path()).unwrap()).unwrap();
            for form in install::forms(&e.server) {
                assert_mirrors::<InstallForm>("InstallForm", serde_json::to_value(&form).unwrap());
            }
            files += 1;
        }
        assert!(files >= 5);
        let offline = switchboard_engine::registry::client::Offline {
            fetched_at_ms: 1,
            reason: "down".into(),
        };
        assert_mirrors::<RegistryOffline>(
            "RegistryOffline",
            serde_json::to_value(&offline).unwrap(),
        );
        let check = switchboard_engine::registry::apply::RuntimeCheck {
            program: "npx".into(),
            found: None,
            install_hint: Some("install Node.js".into()),
        };
        assert_mirrors::<RuntimeCheck>("RuntimeCheck", serde_json::to_value(&check).unwrap());
        let report = switchboard_engine::registry::apply::InstallReport {
            name: "w".into(),
            source: "switchboard".into(),
            path: "/p".into(),
            kept_in_keychain: vec!["w.K".into()],
            plain_text_secrets: false,
            replaced: false,
        };
        assert_mirrors::<InstallReport>("InstallReport", serde_json::to_value(&report).unwrap());
        let entry = crate::catalog::CatalogEntry {
            name: "a/b".into(),
            title: None,
            description: "d".into(),
            version: "1".into(),
            status: "active".into(),
            status_message: None,
            package_kinds: vec!["npm".into()],
            local: true,
            remote: false,
            repository_url: Some("https://x".into()),
            website_url: None,
        };
        let page = crate::catalog::CatalogPage {
            servers: vec![entry.clone()],
            next_cursor: Some("c".into()),
            offline: Some(offline),
            registry_url: "https://r".into(),
        };
        assert_mirrors::<CatalogPage>("CatalogPage", serde_json::to_value(&page).unwrap());
        let v = crate::catalog::CatalogVersion {
            version: "1".into(),
            status: "active".into(),
            published_at: None,
            is_latest: true,
        };
        assert_mirrors::<CatalogVersion>("CatalogVersion", serde_json::to_value(&v).unwrap());
        let rs = crate::catalog::RegistrySettings {
            url: "u".into(),
            saved: None,
            from_env: Some("e".into()),
            default_url: "d".into(),
        };
        assert_mirrors::<RegistrySettings>("RegistrySettings", serde_json::to_value(&rs).unwrap());
    }

    #[test]
    fn mirrors_match_engine_events() {
        use switchboard_engine::events::{EngineEvent as E, LogLine as L, ServerStatus as St};
        let events = vec![
            E::Status {
                server: "a".into(),
                status: St::Restarting { attempt: 1, of: 5 },
            },
            E::Status {
                server: "a".into(),
                status: St::Failed { error: "x".into() },
            },
            E::Tools {
                server: "a".into(),
                count: 3,
                deferred: true,
            },
            E::Log {
                server: "a".into(),
                lines: vec![L {
                    at: 1,
                    kind: "stderr".into(),
                    text: "hi".into(),
                }],
            },
            E::Elicitation {
                id: 7,
                server: "a".into(),
                message: "m".into(),
                schema: serde_json::json!({"type": "object"}),
            },
            E::Reconciled {
                report: Default::default(),
            },
            E::DiscoveryChanged {
                servers: 1,
                warnings: 0,
            },
            E::SignIn {
                server: "a".into(),
                phase: switchboard_engine::events::SignInPhase::Waiting {
                    url: "http://127.0.0.1/authorize?x=1".into(),
                },
            },
            E::SignIn {
                server: "a".into(),
                phase: switchboard_engine::events::SignInPhase::Failed { error: "e".into() },
            },
            E::SignIn {
                server: "a".into(),
                phase: switchboard_engine::events::SignInPhase::SignedIn,
            },
        ];
        for e in events {
            assert_mirrors::<EngineEvent>("EngineEvent", serde_json::to_value(&e).unwrap());
        }
        assert_mirrors::<EngineEvent>(
            "AppEvent",
            serde_json::to_value(crate::events::AppEvent::Resync).unwrap(),
        );
        let ready = crate::events::AppEvent::Ready {
            report: Default::default(),
        };
        assert_mirrors::<EngineEvent>("AppEvent", serde_json::to_value(ready).unwrap());
    }

    /// Connect and disconnect Cursor through the engine: the list, the plan,
    /// the report and the disconnect report read back through the mirrors.
    #[tokio::test]
    async fn mirrors_match_a_copy_plan_and_restart_hints() {
        use switchboard_engine::host::{Host, Os};
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        std::fs::create_dir_all(home.join(".cursor")).unwrap();
        std::fs::write(home.join(".cursor/mcp.json"), r#"{"mcpServers":{"gh":{"command":"npx","args":["-y","x"]},"old":{"url":"https://o.example/sse","type":"sse"}}}"#).unwrap();
        let host = Host {
            os: Os::Linux,
            home: home.clone(),
            vars: [("HOME".to_string(), home.display().to_string())].into(),
            system_root: home.join("sys"),
        };
        let engine = switchboard_engine::engine::Engine::new(
            host,
            switchboard_engine::manager::ManagerOptions {
                cache_path: None,
                process_records: None,
                ..Default::default()
            },
            vec![],
        );
        engine.rediscover();
        assert_mirrors::<CopyPlan>(
            "CopyPlan",
            serde_json::to_value(
                engine
                    .plan_copy("gh", "cursor-user", "claude-desktop")
                    .unwrap(),
            )
            .unwrap(),
        );
        assert_mirrors::<CopyPlan>(
            "CopyPlan",
            serde_json::to_value(
                engine
                    .plan_copy("old", "cursor-user", "codex-user")
                    .unwrap(),
            )
            .unwrap(),
        );
        let desktop = engine.snapshot().source("claude-desktop").cloned().unwrap();
        assert_mirrors::<SourceInfo>("SourceInfo", serde_json::to_value(&desktop).unwrap());
    }

    #[test]
    fn mirrors_match_connect_reports() {
        use switchboard_engine::connect::{ConnectOptions, Via};
        use switchboard_engine::host::{Host, Os};
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        std::fs::create_dir_all(home.join(".cursor")).unwrap();
        std::fs::write(
            home.join(".cursor/mcp.json"),
            r#"{"mcpServers": {"dup": {"command": "x"}}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(home.join(".config/switchboard")).unwrap();
        std::fs::write(
            home.join(".config/switchboard/servers.json"),
            r#"{"mcpServers": {"dup": {"command": "x"}}}"#,
        )
        .unwrap();
        let host = Host {
            os: Os::Linux,
            home: home.clone(),
            vars: Default::default(),
            system_root: home.join("sys"),
        };
        let engine = switchboard_engine::engine::Engine::new(
            host,
            switchboard_engine::manager::ManagerOptions {
                cache_path: None,
                process_records: None,
                ..Default::default()
            },
            vec![],
        );
        engine.rediscover();
        let list = serde_json::to_value(engine.connections()).unwrap();
        let cursor = list
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["client"] == "cursor")
            .unwrap()
            .clone();
        assert_eq!(cursor["duplicates"], serde_json::json!(["dup"]), "{cursor}");
        assert_mirrors::<ClientConnection>("ClientConnection", cursor);
        let opts = ConnectOptions {
            via: Via::Stdio {
                binary: "/usr/bin/switchboard".into(),
            },
            disable_duplicates: true,
        };
        let plan = serde_json::to_value(engine.plan_connect("cursor", &opts).unwrap()).unwrap();
        assert_mirrors::<ConnectPlan>("ConnectPlan", plan);
        tauri::async_runtime::block_on(async {
            let report =
                serde_json::to_value(engine.connect_client("cursor", &opts).await.unwrap())
                    .unwrap();
            assert!(report["historyId"].is_number(), "{report}");
            assert_mirrors::<ConnectReport>("ConnectReport", report.clone());
            let check = serde_json::json!({"ok": true, "path": "/usr/bin/switchboard", "server": "switchboard 0.1.0", "tools": 3, "message": "m"});
            assert_mirrors::<Connected>(
                "Connected",
                serde_json::json!({"report": report, "check": check}),
            );
            let s = crate::commands::AppSettings {
                start_at_login: false,
                keep_in_tray: false,
                project_config: true,
                data_folder: "/home/me/.config/switchboard".into(),
            };
            assert_mirrors::<AppSettings>("AppSettings", serde_json::to_value(&s).unwrap());
            let list = serde_json::to_value(engine.connections()).unwrap();
            let cursor = list
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["client"] == "cursor")
                .unwrap()
                .clone();
            assert_eq!(cursor["entry"]["kind"], "connected", "{cursor}");
            assert_mirrors::<ClientConnection>("ClientConnection", cursor);
            let gone =
                serde_json::to_value(engine.disconnect_client("cursor").await.unwrap()).unwrap();
            assert_eq!(gone["reEnabled"], serde_json::json!(["dup"]), "{gone}");
            assert_mirrors::<DisconnectReport>("DisconnectReport", gone);
        });
    }

    /// A gateway status with a session, calls, switches and every setting,
    /// made by the app's own gateway over a real engine.
    #[test]
    fn mirrors_match_the_gateway_status() {
        use switchboard_engine::host::{Host, Os};
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let host = Host {
            os: Os::Linux,
            home: home.clone(),
            vars: Default::default(),
            system_root: home.join("sys"),
        };
        let engine = std::sync::Arc::new(switchboard_engine::engine::Engine::new(
            host,
            switchboard_engine::manager::ManagerOptions {
                cache_path: None,
                process_records: None,
                ..Default::default()
            },
            vec![],
        ));
        tauri::async_runtime::block_on(async {
            engine.set_tool_enabled("a", "t", false).await.unwrap();
            engine.set_gateway_excluded("b", true).await.unwrap();
            engine
                .set_gateway_settings(switchboard_engine::settings::GatewaySettings {
                    port: Some(1234),
                    off: true,
                    tool_search: true,
                })
                .await
                .unwrap();
            let g = crate::gateway::AppGateway::new(engine.clone());
            g.restart().await;
            let status = g.status();
            let v = serde_json::to_value(&status).unwrap();
            assert_eq!(v["state"], "off", "{v}");
            assert_eq!(
                v["settings"],
                serde_json::json!({"port": 1234, "off": true, "toolSearch": true}),
                "{v}"
            );
            assert_eq!(v["disabledTools"]["a"][0], "t", "{v}");
            assert_mirrors::<GatewayStatus>("GatewayStatus", v);
            let mut v = serde_json::to_value(crate::events::AppEvent::Gateway { status }).unwrap();
            v["status"]["sessions"] =
                serde_json::json!([{"id": 1, "client": "c", "version": "1", "server": null}]);
            v["status"]["calls"] =
                serde_json::json!([{"server": "a", "tool": "t", "calls": 2, "errors": 1}]);
            assert_mirrors::<EngineEvent>("AppEvent", v);
        });
    }

    /// A real review of fixture servers (a changed tool with its diff, a
    /// poisoned one with findings, a removed one, a mode) and a real
    /// approval read back through the mirrors.
    #[test]
    fn mirrors_match_the_tool_review() {
        use switchboard_engine::host::{Host, Os};
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let fixture = switchboard_tests::fixture_server_path();
        let desc = home.join("echo.txt");
        std::fs::write(&desc, "Returns text.").unwrap();
        std::fs::create_dir_all(home.join(".config/switchboard")).unwrap();
        let servers = serde_json::json!({ "mcpServers": { "fx": { "command": fixture, "args": ["--name", "fx", "--resources", "--poison-tags", "--description-file", desc] } } });
        std::fs::write(
            home.join(".config/switchboard/servers.json"),
            servers.to_string(),
        )
        .unwrap();
        let host = Host {
            os: Os::Linux,
            home: home.clone(),
            vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
            system_root: home.join("sys"),
        };
        let opts = || switchboard_engine::manager::ManagerOptions {
            cache_path: None,
            process_records: None,
            ..Default::default()
        };
        tauri::async_runtime::block_on(async {
            let engine = switchboard_engine::engine::Engine::new(host.clone(), opts(), vec![]);
            engine.start().await;
            let done = engine.approve_tools("fx", &[]).await.unwrap();
            assert_mirrors::<ToolsApproved>("ToolsApproved", serde_json::to_value(&done).unwrap());
            engine.shutdown().await;
            std::fs::write(&desc, "Returns text. Changed.").unwrap();
            let engine = switchboard_engine::engine::Engine::new(host.clone(), opts(), vec![]);
            engine.start().await;
            engine
                .set_approval_mode("fx", switchboard_engine::settings::ApprovalMode::HoldNew)
                .await
                .unwrap();
            let mut r = serde_json::to_value(engine.tool_review().await).unwrap();
            let fx = &r["servers"][0];
            assert_eq!(fx["mode"], "hold-new", "{fx}");
            let echo = fx["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["name"] == "echo")
                .unwrap();
            assert!(
                echo["changes"]["description"]
                    .as_array()
                    .is_some_and(|d| !d.is_empty()),
                "{echo}"
            );
            let weather = fx["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["name"] == "weather")
                .unwrap();
            assert!(weather["findings"][0]["visible"].is_string(), "{weather}");
            assert!(
                fx["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|i| i["kind"] == "prompt"),
                "{fx}"
            );
            r["servers"][0]["removed"] =
                serde_json::json!([{"kind": "resource-template", "name": "gone"}]);
            r["problem"] = serde_json::json!("tool-pins.json does not parse");
            assert_mirrors::<TrustReport>("TrustReport", r);
            assert_mirrors::<EngineEvent>(
                "EngineEvent",
                serde_json::to_value(switchboard_engine::events::EngineEvent::Approvals).unwrap(),
            );
            engine.shutdown().await;
        });
    }

    /// A file caught mid-save (its last good servers, its parse error), a
    /// `.mcp.json` server Claude Code has not approved and a server added to
    /// a trusted folder since: the engine's values read back through the mirrors.
    /// A real failed start (a command that exists nowhere) with its diagnosis.
    #[tokio::test]
    async fn mirrors_match_a_failed_server_and_its_diagnosis() {
        use switchboard_engine::config::ServerDef as Def;
        use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
        let mut def = Def::stdio("ghost", "switchboard-mirror-no-such-command", &[]);
        def.restart_policy = Some(Default::default());
        let m = Manager::new(ManagerOptions::default());
        m.start(vec![Wanted::new(def)]).await;
        let st = m.state("ghost").unwrap();
        assert!(st.diagnosis.is_some(), "{st:?}");
        assert_mirrors::<ServerState>("ServerState", serde_json::to_value(&st).unwrap());
        m.shutdown().await;
    }

    #[test]
    fn mirrors_match_a_server_with_an_oauth_app() {
        use switchboard_engine::config::{OAuthApp, ServerDef as Def, Transport as T};
        let mut def = Def::remote("r", T::Http, "https://mcp.example.com/mcp");
        def.oauth = Some(OAuthApp {
            client_id: Some("id".into()),
            callback_port: Some(8765),
            scopes: vec!["a".into()],
            redirect_uri: Some("http://localhost:8765/callback".into()),
            client_secret: Some("${S}".into()),
        });
        assert_mirrors::<ServerDef>("ServerDef", serde_json::to_value(&def).unwrap());
    }

    #[test]
    fn mirrors_match_last_good_and_held_servers() {
        use switchboard_engine::discovery::{discover_after, DiscoverOptions};
        use switchboard_engine::host::{Host, Os};
        use switchboard_engine::settings::{ProjectFolder, Settings};
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let project = home.join("webapp");
        let write = |p: PathBuf, text: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            home.join(".cursor/mcp.json"),
            r#"{"mcpServers": {"c": {"command": "x"}}}"#,
        );
        write(
            project.join(".mcp.json"),
            r#"{"mcpServers": {"p": {"command": "x"}}}"#,
        );
        write(
            project.join(".cursor/mcp.json"),
            r#"{"mcpServers": {"q": {"command": "x", "env": {"K": "v"}}}}"#,
        );
        let host = Host {
            os: Os::Linux,
            home: home.clone(),
            vars: Default::default(),
            system_root: home.join("sys"),
        };
        let mut settings = Settings::default();
        settings.projects.push(ProjectFolder {
            path: project.clone(),
            trusted: true,
        });
        settings
            .trusted_servers
            .insert(project.clone(), Default::default());
        let good = discover_after(&host, &settings, &DiscoverOptions::default(), None);
        write(
            home.join(".cursor/mcp.json"),
            r#"{"mcpServers": {"c": {"command": "x"},"#,
        );
        let d = discover_after(&host, &settings, &DiscoverOptions::default(), Some(&good));
        let view = |name: &str| {
            let s = d
                .server(name)
                .unwrap_or_else(|| panic!("{name} is listed"))
                .clone();
            serde_json::to_value(switchboard_engine::engine::ServerView {
                discovered: s,
                runtime: None,
            })
            .unwrap()
        };
        let c = view("c");
        assert!(c["lastGoodAt"].is_number(), "{c}");
        assert_mirrors::<ServerView>("ServerView", c);
        let p = view("p");
        assert_eq!(p["held"]["kind"], "not-approved", "{p}");
        assert_mirrors::<ServerView>("ServerView", p);
        let q = view("q");
        assert_eq!(q["held"]["kind"], "changed", "{q}");
        assert!(
            q["held"]["changes"]
                .as_array()
                .is_some_and(|c| c.len() == 2),
            "command and env.K: {q}"
        );
        assert_mirrors::<ServerView>("ServerView", q);
        let src = serde_json::to_value(d.source("cursor-user").unwrap()).unwrap();
        assert!(
            src["parseError"]["lastGoodAt"].is_number() && src["parseError"]["column"].is_number(),
            "{src}"
        );
        assert_mirrors::<SourceInfo>("SourceInfo", src);
        let approved = switchboard_engine::projects::Approved {
            servers: vec!["p".into()],
            for_claude_code: vec!["p".into()],
        };
        assert_mirrors::<Approved>("Approved", serde_json::to_value(approved).unwrap());
    }
}
