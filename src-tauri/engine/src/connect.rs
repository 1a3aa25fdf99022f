//! "Use Switchboard in…": connect a client to the gateway by
//! writing one server entry named `switchboard` into that client's user
//! config, in the client's own format; disconnect takes it out again.
//!
//! Every change goes through the writer (`writer::edit::Writer`), so it keeps
//! the file's layout, refuses a file changed since it was read, and lands in
//! the history as one entry that `switchboard undo` can take back.
//!
//! - stdio: `{"command": "<absolute path of switchboard>", "args": ["serve"]}`.
//! - http: the gateway's URL with `Authorization: Bearer <token>` in the
//!   client's header field. Codex gets `bearer_token_env_var =
//!   "SWITCHBOARD_GATEWAY_TOKEN"` instead: its literal `http_headers` would
//!   put the token in `config.toml`, which Codex users share and commit, and
//!   Codex reads the variable from its environment. Clients whose files take
//!   no remote server with headers (Claude Desktop, Continue) get stdio only.
//!
//! Connecting can also disable, in that client, the servers the gateway now
//! serves to it, so they do not run twice. A server whose only enabled
//! definition is in that very client would then stop being served by the
//! gateway too, so it is first copied into Switchboard's own file (which
//! outranks every client's). What connect disabled and copied is remembered
//! in Switchboard's settings (`connections`, by client id), and disconnect
//! re-enables exactly those servers (never ones the user disabled) and
//! removes the copies it made that are still as copied.
//!
//! Byte for byte: disconnecting right after connecting leaves the client's
//! file as it was. A container (`mcpServers`) connect had to create is
//! removed with the entry, and a file connect created is deleted when it
//! holds nothing else (its folder stays). Re-enabling a disabled server goes
//! through the client's own switch: for clients without one (Cursor, Claude
//! Desktop, Claude Code) the entry comes back at the end of the list, with
//! the same content.

use crate::error_code::ErrorCode;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{ServerDef, Transport};
pub use crate::discovery::is_gateway_entry;
use crate::discovery::{is_gateway_url, value_at, Discovery, GATEWAY_ENTRY_NAME};
use crate::gateway::token::TOKEN_ENV;
use crate::host::Host;
use crate::redact::MASK;
use crate::settings::Settings;
pub use crate::settings::{ConnectionRecord, Connections};
use crate::sources::read::parse;
use crate::sources::{switchboard_source, user_sources, Client, Level, SourceSpec};
use crate::writer::edit::{read_def, EditError, ServerEdit, Writer};
use crate::writer::history::{Label, Recording};
use crate::writer::{apply_edits, write_atomic, DocEdit, Expected, PathSeg};

/// The name of the entry connect writes.
pub const ENTRY_NAME: &str = GATEWAY_ENTRY_NAME;

/// The arguments of the stdio entry: the gateway over stdin/stdout.
pub const SERVE_ARGS: &[&str] = &["serve"];

/// The stdio entry's arguments: `serve`, or `serve --profile NAME` for one
/// profile's servers and tools.
pub fn serve_args(profile: Option<&str>) -> Vec<String> {
    let mut args: Vec<String> = SERVE_ARGS.iter().map(|a| a.to_string()).collect();
    if let Some(p) = profile {
        args.extend(["--profile".to_string(), p.to_string()]);
    }
    args
}

/// The gateway URL of one profile: `http://127.0.0.1:PORT/mcp/p/<profile>`
/// beside the gateway's `…/mcp` (the name escaped as a path segment).
pub fn profile_url(gateway_url: &str, profile: &str) -> String {
    let segment = url::form_urlencoded::byte_serialize(profile.as_bytes())
        .collect::<String>()
        .replace('+', "%20");
    format!("{}/p/{segment}", gateway_url.trim_end_matches('/'))
}

/// How a client's entry can reach the HTTP gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum HttpSupport {
    /// `Authorization: Bearer <token>` written in the entry's headers.
    Headers,
    /// The entry names an environment variable holding the token (Codex's
    /// `bearer_token_env_var`); the client must be started with it set.
    TokenEnvVar,
    /// The client's file takes no remote server with headers: stdio only.
    None,
}

/// Whether and how `client`'s user config takes an http entry with the
/// gateway's bearer token in its headers.
pub fn http_support(client: Client) -> HttpSupport {
    match client {
        Client::ClaudeCode
        | Client::Cursor
        | Client::Vscode
        | Client::Windsurf
        | Client::Zed
        | Client::Cline
        | Client::Roo
        | Client::Gemini
        | Client::Goose
        | Client::Lmstudio => HttpSupport::Headers,
        Client::Codex => HttpSupport::TokenEnvVar,
        // Claude Desktop adds remote servers in its Connectors UI, not its
        // file; Continue's entries have no headers.
        Client::ClaudeDesktop
        | Client::Continue
        | Client::Switchboard
        | Client::Team
        | Client::Fallback => HttpSupport::None,
    }
}

/// The clients that can be connected: each with a user-level file.
pub fn connectable_clients() -> Vec<Client> {
    // The host does not change which clients have a user file.
    user_sources(&Host {
        os: crate::host::Os::Linux,
        home: PathBuf::from("/"),
        vars: Default::default(),
        system_root: PathBuf::from("/"),
    })
    .into_iter()
    .map(|s| s.client)
    .collect()
}

/// The id Switchboard names a client by (`cursor`, `claude-code`, …).
pub fn client_id(client: Client) -> String {
    serde_json::to_value(client)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// A client from its id; an unknown one is refused with the list of ids.
pub fn parse_client(id: &str) -> Result<Client> {
    let known = connectable_clients();
    known
        .iter()
        .copied()
        .find(|c| client_id(*c).eq_ignore_ascii_case(id.trim()))
        .ok_or_else(|| ConnectError::UnknownClient {
            given: id.into(),
            known: known.into_iter().map(client_id).collect(),
        })
}

/// Where the gateway is for an http entry. The token is written into the
/// client's file (or, for Codex, only named); it is never serialized back.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpTarget {
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// The gateway's bearer token (`GatewayToken::reveal`). Not needed for
    /// Codex, whose entry names `SWITCHBOARD_GATEWAY_TOKEN` instead.
    #[serde(default)]
    pub token: String,
}

impl std::fmt::Debug for HttpTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTarget")
            .field("url", &self.url)
            .field("token", &MASK)
            .finish()
    }
}

/// How the client reaches the gateway.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", tag = "transport")]
pub enum Via {
    /// Start `binary serve`: the CLI passes `std::env::current_exe()`, the
    /// app its bundled sidecar. Must be absolute.
    Stdio {
        binary: PathBuf,
    },
    Http(HttpTarget),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectOptions {
    pub via: Via,
    /// Also disable, in that client, the servers the gateway serves.
    #[serde(default)]
    pub disable_duplicates: bool,
}

/// What the client's file holds under the name `switchboard`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum EntryState {
    /// No such entry: not connected.
    Absent,
    /// Ours: `switchboard serve`, or the gateway's URL.
    Connected {
        transport: Transport,
        /// The binary path (stdio) or URL (http).
        target: String,
        /// Off in the client (disabled, or parked by Switchboard).
        enabled: bool,
    },
    /// The user's own server that happens to be named `switchboard`.
    Foreign { runs: String },
}

/// One client in the "Use Switchboard in…" list.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ClientConnection {
    /// The id commands take (`cursor`).
    pub client: String,
    pub label: &'static str,
    /// The source id of its user file (`cursor-user`).
    pub source: String,
    pub path: PathBuf,
    /// Whether the file exists (connecting creates it).
    pub exists: bool,
    pub entry: EntryState,
    pub http: HttpSupport,
    /// Servers in this client's file that the gateway also serves: they
    /// would run twice once the client uses the gateway.
    pub duplicates: Vec<String>,
    /// Servers connect disabled here; disconnect turns them back on.
    pub disabled_by_connect: Vec<String>,
    /// Why the file cannot be read or written now, if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub problem: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum EntryAction {
    /// The entry is new.
    Add,
    /// The entry is ours and changes (a new binary path, http ↔ stdio, or
    /// it was off and is turned on).
    Update,
    /// The entry is ours and already as it would be written.
    Unchanged,
}

/// A server connect would disable in the client.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DuplicateServer {
    pub name: String,
    /// Its only enabled definition is in this client: it is copied into
    /// Switchboard's own file first, so the gateway keeps serving it.
    pub copy_to_switchboard: bool,
}

/// A server the gateway serves that connect leaves on in the client.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct KeptServer {
    pub name: String,
    pub reason: String,
}

/// What connect would do; nothing is written to make it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConnectPlan {
    pub client: String,
    pub label: &'static str,
    pub source: String,
    pub path: PathBuf,
    pub action: EntryAction,
    pub transport: Transport,
    /// The entry as it will be written, in the client's format (as a
    /// document of its own), with the token shown as `•••`.
    pub entry_text: String,
    /// Whether the file does not exist yet and will be created.
    pub creates_file: bool,
    /// The servers the gateway also serves (the choice to offer).
    pub duplicates: Vec<String>,
    /// What will be disabled: empty unless `disable_duplicates` was asked.
    pub disable: Vec<DuplicateServer>,
    /// Duplicates that stay on, and why (only with `disable_duplicates`).
    pub kept: Vec<KeptServer>,
    /// Things the user must know (e.g. Codex reads the token from a variable).
    pub notes: Vec<String>,
}

/// What connect did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConnectReport {
    #[serde(flatten)]
    pub plan: ConnectPlan,
    /// The history entry (`switchboard undo ID`), if anything was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub history_id: Option<u64>,
}

/// What disconnect did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DisconnectReport {
    pub client: String,
    pub label: &'static str,
    pub path: PathBuf,
    pub removed_entry: bool,
    /// Servers turned back on in the client.
    pub re_enabled: Vec<String>,
    /// Copies removed from Switchboard's own file.
    pub removed_copies: Vec<String>,
    /// Things left as they are, and why (a server the user removed since,
    /// a copy the user changed since).
    pub kept: Vec<KeptServer>,
    /// The file connect created was deleted (it held nothing else).
    pub removed_file: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub history_id: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("unknown client \"{given}\"; Switchboard knows: {}", known.join(", "))]
    UnknownClient { given: String, known: Vec<String> },
    #[error("{label} already has a server named \"{ENTRY_NAME}\" in {} that is not Switchboard's gateway (it runs {runs}). Rename it (`switchboard rename {ENTRY_NAME} NEW-NAME --source {source_id}`) or remove it, then connect again", path.display())]
    Foreign {
        label: &'static str,
        path: PathBuf,
        runs: String,
        source_id: String,
    },
    #[error("{label} takes no http server with an Authorization header in its config file; connect it over stdio (without --http)")]
    NoHttp { label: &'static str },
    #[error(
        "the gateway URL \"{0}\" is not http://127.0.0.1:PORT/mcp (a loopback address and /mcp)"
    )]
    NotGatewayUrl(String),
    #[error("the http entry needs the gateway's token (`switchboard gateway token`)")]
    NoToken,
    #[error("the switchboard binary must be given as an absolute path, not \"{}\"", .0.display())]
    RelativeBinary(PathBuf),
    #[error("{label} is not connected to Switchboard: {} has no \"{ENTRY_NAME}\" entry", path.display())]
    NotConnected { label: &'static str, path: PathBuf },
    #[error(transparent)]
    Edit(#[from] EditError),
}

impl ConnectError {
    /// Stable code for the UI (`{code, message}`).
    pub fn code(&self) -> ErrorCode {
        match self {
            ConnectError::UnknownClient { .. } => ErrorCode::UnknownClient,
            ConnectError::Foreign { .. } => ErrorCode::NameTaken,
            ConnectError::NoHttp { .. } => ErrorCode::NoHttp,
            ConnectError::NotGatewayUrl(_)
            | ConnectError::NoToken
            | ConnectError::RelativeBinary(_) => ErrorCode::Invalid,
            ConnectError::NotConnected { .. } => ErrorCode::NotConnected,
            ConnectError::Edit(e) => e.code(),
        }
    }
}

impl From<crate::settings::SettingsError> for ConnectError {
    fn from(e: crate::settings::SettingsError) -> Self {
        ConnectError::Edit(e.into())
    }
}

pub type Result<T> = std::result::Result<T, ConnectError>;

/// The user-level source of `client`, as discovery read it (else as the host has it).
fn user_source(host: &Host, discovery: &Discovery, client: Client) -> Option<SourceSpec> {
    discovery
        .sources
        .iter()
        .filter_map(|s| s.spec.as_ref())
        .find(|s| s.client == client && s.level == Level::User)
        .cloned()
        .or_else(|| user_sources(host).into_iter().find(|s| s.client == client))
}

pub(crate) fn source_for(host: &Host, discovery: &Discovery, client: Client) -> Result<SourceSpec> {
    user_source(host, discovery, client).ok_or_else(|| ConnectError::UnknownClient {
        given: client_id(client),
        known: connectable_clients().into_iter().map(client_id).collect(),
    })
}

/// The stdio command line or the URL of a definition, for messages.
fn runs(def: &ServerDef) -> String {
    match &def.url {
        Some(u) if def.transport != Transport::Stdio => u.clone(),
        _ => std::iter::once(def.command.clone().unwrap_or_default())
            .chain(def.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// What `spec`'s file holds under `switchboard` now (read from disk; a
/// parked entry counts, switched off).
pub fn entry_state(
    settings: &Settings,
    spec: &SourceSpec,
) -> std::result::Result<EntryState, EditError> {
    match read_def(settings, spec, ENTRY_NAME) {
        Ok(def) if is_gateway_entry(ENTRY_NAME, &def) => {
            let target = match def.transport {
                Transport::Stdio => def.command.clone().unwrap_or_default(),
                _ => def.url.clone().unwrap_or_default(),
            };
            Ok(EntryState::Connected {
                transport: def.transport,
                target,
                enabled: def.enabled,
            })
        }
        Ok(def) => Ok(EntryState::Foreign { runs: runs(&def) }),
        Err(EditError::NotFound { .. }) => Ok(EntryState::Absent),
        Err(e) => Err(e),
    }
}

/// Whether the gateway serves `name` (as `switchboard serve` picks servers:
/// the enabled, runnable winner, unless excluded from the gateway).
fn served(discovery: &Discovery, settings: &Settings, name: &str) -> bool {
    let Some(s) = discovery.server(name) else {
        return false;
    };
    let w = &s.winner;
    w.is_valid()
        && w.not_runnable.is_none()
        && w.held.is_none()
        && w.def.enabled
        && !settings.gateway_excluded.iter().any(|n| n == name)
}

/// Servers enabled in `spec` that the gateway serves.
fn duplicates(discovery: &Discovery, settings: &Settings, spec: &SourceSpec) -> Vec<String> {
    let mut out: Vec<String> = discovery
        .servers
        .iter()
        .flat_map(|s| s.definitions.iter())
        .filter(|d| {
            d.source == spec.id
                && !d.parked
                && d.def.enabled
                && d.not_runnable.is_none()
                && d.def.name != ENTRY_NAME
        })
        .filter(|d| served(discovery, settings, &d.def.name))
        .map(|d| d.def.name.clone())
        .collect();
    out.dedup();
    out
}

/// The "Use Switchboard in…" list: every client with a user-level file.
pub fn connections(
    host: &Host,
    settings: &Settings,
    discovery: &Discovery,
) -> Vec<ClientConnection> {
    connectable_clients()
        .into_iter()
        .filter_map(|client| {
            let spec = user_source(host, discovery, client)?;
            let info = discovery.source(&spec.id);
            let (entry, problem) = match entry_state(settings, &spec) {
                Ok(e) => (e, None),
                Err(e) => (EntryState::Absent, Some(e.to_string())),
            };
            let id = client_id(client);
            Some(ClientConnection {
                label: client.display_name(),
                source: spec.id.clone(),
                exists: info.map(|i| i.exists).unwrap_or_else(|| spec.path.exists()),
                entry,
                http: http_support(client),
                duplicates: duplicates(discovery, settings, &spec),
                disabled_by_connect: settings
                    .connections
                    .get(&id)
                    .map(|r| r.disabled.clone())
                    .unwrap_or_default(),
                problem,
                path: spec.path,
                client: id,
            })
        })
        .collect()
}

/// The definition connect writes for `client`.
pub fn entry_def(client: Client, via: &Via) -> Result<ServerDef> {
    entry_def_for(client, via, None)
}

/// The definition connect writes for `client`, serving `profile` only
/// (`serve --profile NAME`, `…/mcp/p/NAME`) or the whole gateway (`None`).
pub fn entry_def_for(client: Client, via: &Via, profile: Option<&str>) -> Result<ServerDef> {
    match via {
        Via::Stdio { binary } => {
            if !binary.is_absolute() {
                return Err(ConnectError::RelativeBinary(binary.clone()));
            }
            let args = serve_args(profile);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            Ok(ServerDef::stdio(
                ENTRY_NAME,
                &binary.to_string_lossy(),
                &args,
            ))
        }
        Via::Http(t) => {
            if !is_gateway_url(&t.url) {
                return Err(ConnectError::NotGatewayUrl(t.url.clone()));
            }
            let url = match profile {
                Some(p) => profile_url(&t.url, p),
                None => t.url.clone(),
            };
            let mut def = ServerDef::remote(ENTRY_NAME, Transport::Http, &url);
            let value = match http_support(client) {
                HttpSupport::None => {
                    return Err(ConnectError::NoHttp {
                        label: client.display_name(),
                    })
                }
                // Written by Codex's dialect as `bearer_token_env_var`.
                HttpSupport::TokenEnvVar => format!("Bearer ${{{TOKEN_ENV}}}"),
                HttpSupport::Headers if t.token.trim().is_empty() => {
                    return Err(ConnectError::NoToken)
                }
                HttpSupport::Headers => format!("Bearer {}", t.token.trim()),
            };
            def.headers.insert("Authorization".into(), value);
            Ok(def)
        }
    }
}

/// The entry alone as a document in `spec`'s format, e.g.
/// `{"mcpServers": {"switchboard": {…}}}` or `[mcp_servers.switchboard]`.
fn render_entry(spec: &SourceSpec, def: &ServerDef, token: Option<&str>) -> Result<String> {
    let unstorable = |u: crate::sources::dialect::Unstorable| {
        EditError::Invalid(u.message(spec.client.display_name()))
    };
    let mut entry = Value::Object(spec.dialect.to_entry(def).map_err(unstorable)?);
    if let Some(t) = token.filter(|t| !t.is_empty()) {
        mask(&mut entry, t);
    }
    let mut path = spec.container.path().to_vec();
    let (path, value) = match &spec.container {
        crate::sources::Container::Map(_) => {
            path.push(PathSeg::Key(ENTRY_NAME.into()));
            (path, entry)
        }
        crate::sources::Container::List(_) => (path, Value::Array(vec![entry])),
    };
    let text = apply_edits(spec.format, "", &[DocEdit::Set { path, value }])
        .map_err(|e| EditError::Invalid(e.to_string()))?;
    Ok(text)
}

fn mask(v: &mut Value, secret: &str) {
    match v {
        Value::String(s) if s.contains(secret) => *s = s.replace(secret, MASK),
        Value::Array(a) => a.iter_mut().for_each(|x| mask(x, secret)),
        Value::Object(m) => m.values_mut().for_each(|x| mask(x, secret)),
        _ => {}
    }
}

/// What connecting `client` would do; nothing is written. Refused for a
/// foreign `switchboard` entry, an http entry the client cannot take, or a
/// file that does not parse.
pub fn plan_connect(
    host: &Host,
    settings: &Settings,
    discovery: &Discovery,
    client: Client,
    opts: &ConnectOptions,
) -> Result<ConnectPlan> {
    plan_connect_to(host, settings, discovery, client, opts, None)
}

/// `plan_connect` for an entry that serves `profile` only (`None`: the
/// whole gateway, i.e. the profile switched to).
pub fn plan_connect_to(
    host: &Host,
    settings: &Settings,
    discovery: &Discovery,
    client: Client,
    opts: &ConnectOptions,
    profile: Option<&str>,
) -> Result<ConnectPlan> {
    let profile = profile_name(settings, profile)?;
    let profile = profile.as_deref();
    let spec = source_for(host, discovery, client)?;
    let def = entry_def_for(client, &opts.via, profile)?;
    let label = client.display_name();
    let action = match entry_state(settings, &spec)? {
        EntryState::Foreign { runs } => {
            return Err(ConnectError::Foreign {
                label,
                path: spec.path.clone(),
                runs,
                source_id: spec.id.clone(),
            })
        }
        EntryState::Absent => EntryAction::Add,
        EntryState::Connected { enabled, .. } => {
            let current = read_def(settings, &spec, ENTRY_NAME)?;
            // Compared as the client stores it: what it cannot keep is not a change.
            if enabled
                && current
                    == (ServerDef {
                        enabled: true,
                        ..spec.dialect.storable(&def)
                    })
            {
                EntryAction::Unchanged
            } else {
                EntryAction::Update
            }
        }
    };
    let token = match &opts.via {
        Via::Http(t) => Some(t.token.trim().to_string()),
        Via::Stdio { .. } => None,
    };
    let mut notes = vec![];
    if matches!(opts.via, Via::Http(_)) && http_support(client) == HttpSupport::TokenEnvVar {
        notes.push(format!(
            "{label} reads the gateway token from the environment variable {TOKEN_ENV} (`bearer_token_env_var`), so the token is not written to {}: start {label} with {TOKEN_ENV} set to the output of `switchboard gateway token`",
            spec.path.display()
        ));
    }
    if matches!(opts.via, Via::Http(_)) {
        notes.push("The http entry works while the gateway is serving (`switchboard serve --http ADDR`, or the app)".into());
    }
    let dups = duplicates(discovery, settings, &spec);
    let (mut disable, mut kept) = (vec![], vec![]);
    if opts.disable_duplicates {
        let own_rank = discovery.source("switchboard").map(|s| s.priority);
        let this_rank = discovery.source(&spec.id).map(|s| s.priority);
        for name in &dups {
            let winner_here = discovery
                .server(name)
                .is_some_and(|s| s.winner.source == spec.id);
            if !winner_here {
                disable.push(DuplicateServer {
                    name: name.clone(),
                    copy_to_switchboard: false,
                });
                continue;
            }
            let own_has = discovery
                .server(name)
                .is_some_and(|s| s.definitions.iter().any(|d| d.source == "switchboard"));
            let reason = match (own_rank, this_rank) {
                _ if own_has => Some("Switchboard's own file already has a server of this name that does not run; fix or remove it there first".to_string()),
                (Some(o), Some(t)) if o > t => Some(format!("{label} is above Switchboard's own file in the source priority, so a copy there would not be served; disabling it here would stop the gateway serving it")),
                _ => None,
            };
            match reason {
                Some(reason) => kept.push(KeptServer {
                    name: name.clone(),
                    reason,
                }),
                None => disable.push(DuplicateServer {
                    name: name.clone(),
                    copy_to_switchboard: true,
                }),
            }
        }
    }
    Ok(ConnectPlan {
        client: client_id(client),
        label,
        source: spec.id.clone(),
        creates_file: !spec.path.exists(),
        action,
        transport: def.transport,
        entry_text: render_entry(&spec, &def, token.as_deref())?,
        duplicates: dups,
        disable,
        kept,
        notes,
        path: spec.path,
    })
}

/// A profile's name as the profile spells it (refused when there is none).
fn profile_name(settings: &Settings, profile: Option<&str>) -> Result<Option<String>> {
    let Some(p) = profile else { return Ok(None) };
    Ok(Some(
        match settings.profiles.filter(p).map_err(EditError::from)? {
            Some(x) => x.name.clone(),
            None => crate::profile::EVERYTHING.to_string(),
        },
    ))
}

/// The container's value in `spec`'s file now (`None`: no file or no container).
fn container_value(spec: &SourceSpec) -> std::result::Result<Option<Value>, EditError> {
    let text = match std::fs::read_to_string(&spec.path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(crate::writer::atomic::WriteError::Io {
                path: spec.path.clone(),
                source: e,
            }
            .into())
        }
    };
    let doc = parse(spec.format, text.strip_prefix('\u{feff}').unwrap_or(&text))
        .map_err(|f| EditError::Unparsable {
            path: spec.path.clone(),
            message: f.message,
        })?
        .value;
    Ok(value_at(&doc, spec.container.path()).cloned())
}

/// Connect `client`: write (or update in place) its `switchboard` entry and,
/// when asked, disable the duplicates, all as one history entry. `discovery`
/// is what the user saw: the client's file must still hold those bytes.
pub fn connect(
    host: &Host,
    settings: &mut Settings,
    discovery: &Discovery,
    client: Client,
    opts: &ConnectOptions,
) -> Result<ConnectReport> {
    connect_to(host, settings, discovery, client, opts, None)
}

/// `connect` with an entry that serves `profile` only (`serve --profile
/// NAME`, `…/mcp/p/NAME`); `None`: the whole gateway.
pub fn connect_to(
    host: &Host,
    settings: &mut Settings,
    discovery: &Discovery,
    client: Client,
    opts: &ConnectOptions,
    profile: Option<&str>,
) -> Result<ConnectReport> {
    let profile = profile_name(settings, profile)?;
    let profile = profile.as_deref();
    let plan = plan_connect_to(host, settings, discovery, client, opts, profile)?;
    let spec = source_for(host, discovery, client)?;
    let def = entry_def_for(client, &opts.via, profile)?;
    let seen = discovery.source(&spec.id).and_then(|s| s.hash);
    let transport = def.transport.as_str();
    let what = match profile {
        Some(p) => format!("Switchboard's profile \"{p}\""),
        None => "Switchboard".to_string(),
    };
    let recording = Recording::begin(
        host,
        Label::fixed(
            Some(ENTRY_NAME),
            format!("connect {} to {what} ({transport})", plan.label),
        ),
    );

    let created_file = !spec.path.exists();
    let created_container = plan.action == EntryAction::Add && container_value(&spec)?.is_none();
    {
        let mut w = Writer::new(host, settings);
        match plan.action {
            EntryAction::Add => w.apply(&spec, ServerEdit::Add(def.clone()), seen)?,
            EntryAction::Update => {
                // In place: only the fields that differ are written; an entry
                // that was off is turned on through the client's own switch.
                let current = read_def(w.settings, &spec, ENTRY_NAME)?;
                w.apply(
                    &spec,
                    ServerEdit::Update {
                        name: ENTRY_NAME.into(),
                        def: ServerDef {
                            enabled: current.enabled,
                            ..def.clone()
                        },
                    },
                    seen,
                )?;
                if !current.enabled {
                    w.apply(
                        &spec,
                        ServerEdit::SetEnabled {
                            name: ENTRY_NAME.into(),
                            enabled: true,
                        },
                        None,
                    )?;
                }
            }
            EntryAction::Unchanged => {}
        }
        for d in &plan.disable {
            if d.copy_to_switchboard {
                w.copy_server(&spec, &switchboard_source(host), &d.name, false)?;
            }
            w.apply(
                &spec,
                ServerEdit::SetEnabled {
                    name: d.name.clone(),
                    enabled: false,
                },
                None,
            )?;
        }
    }
    let own = switchboard_source(host);
    let copies: Vec<ServerDef> = plan
        .disable
        .iter()
        .filter(|d| d.copy_to_switchboard)
        .filter_map(|d| read_def(settings, &own, &d.name).ok())
        .collect();
    let disabled: Vec<String> = plan.disable.iter().map(|d| d.name.clone()).collect();
    let id = client_id(client);
    let fresh = ConnectionRecord {
        disabled,
        copied: copies,
        created_file,
        created_container,
    };
    let known = settings.connections.get(&id).cloned();
    if !fresh.is_empty() || known.is_some() {
        *settings = Settings::update(host, |s| {
            let mut r = s.connections.get(&id).cloned().unwrap_or(ConnectionRecord {
                created_file,
                created_container,
                ..Default::default()
            });
            for n in &fresh.disabled {
                if !r.disabled.contains(n) {
                    r.disabled.push(n.clone());
                }
            }
            for c in &fresh.copied {
                r.copied.retain(|x| x.name != c.name);
                r.copied.push(c.clone());
            }
            if !r.is_empty() {
                s.connections.insert(id.clone(), r);
            }
        })?;
    }
    let history_id = recording.finish().map(|e| e.id);
    Ok(ConnectReport { plan, history_id })
}

/// Disconnect `client`: remove its `switchboard` entry, turn back on the
/// servers connect disabled there, remove the copies connect made in
/// Switchboard's own file (if unchanged), and what connect created (the
/// container, the file) when nothing else is in it. One history entry.
pub fn disconnect(
    host: &Host,
    settings: &mut Settings,
    discovery: &Discovery,
    client: Client,
) -> Result<DisconnectReport> {
    let spec = source_for(host, discovery, client)?;
    let label = client.display_name();
    let id = client_id(client);
    let record = settings.connections.get(&id).cloned();
    let state = entry_state(settings, &spec)?;
    match (&state, &record) {
        (EntryState::Foreign { runs }, _) => {
            return Err(ConnectError::Foreign {
                label,
                path: spec.path.clone(),
                runs: runs.clone(),
                source_id: spec.id.clone(),
            });
        }
        (EntryState::Absent, None) => {
            return Err(ConnectError::NotConnected {
                label,
                path: spec.path.clone(),
            })
        }
        _ => {}
    }
    let record = record.unwrap_or_default();
    let seen = discovery.source(&spec.id).and_then(|s| s.hash);
    let recording = Recording::begin(
        host,
        Label::fixed(
            Some(ENTRY_NAME),
            format!("disconnect {label} from Switchboard"),
        ),
    );
    let mut report = DisconnectReport {
        client: id.clone(),
        label,
        path: spec.path.clone(),
        removed_entry: false,
        re_enabled: vec![],
        removed_copies: vec![],
        kept: vec![],
        removed_file: false,
        history_id: None,
    };
    let own = switchboard_source(host);
    {
        let mut w = Writer::new(host, settings);
        if let EntryState::Connected { .. } = state {
            w.apply(
                &spec,
                ServerEdit::Remove {
                    name: ENTRY_NAME.into(),
                },
                seen,
            )?;
            report.removed_entry = true;
        }
        for name in &record.disabled {
            match read_def(w.settings, &spec, name) {
                Ok(d) if !d.enabled => {
                    w.apply(
                        &spec,
                        ServerEdit::SetEnabled {
                            name: name.clone(),
                            enabled: true,
                        },
                        None,
                    )?;
                    report.re_enabled.push(name.clone());
                }
                Ok(_) => {}
                Err(EditError::NotFound { .. }) => {
                    report.kept.push(KeptServer {
                        name: name.clone(),
                        reason: format!("no longer in {}", spec.path.display()),
                    });
                }
                Err(e) => return Err(e.into()),
            }
        }
        for copy in &record.copied {
            match read_def(w.settings, &own, &copy.name) {
                Ok(d) if d == *copy => {
                    w.apply(
                        &own,
                        ServerEdit::Remove {
                            name: copy.name.clone(),
                        },
                        None,
                    )?;
                    report.removed_copies.push(copy.name.clone());
                }
                Ok(_) => report.kept.push(KeptServer {
                    name: copy.name.clone(),
                    reason: format!(
                        "its copy in {} changed since connect copied it; it stays there",
                        own.path.display()
                    ),
                }),
                Err(EditError::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    if record.created_container || record.created_file {
        report.removed_file = remove_what_connect_created(&spec, &record)?;
    }
    if settings.connections.contains_key(&id) {
        *settings = Settings::update(host, |s| {
            s.connections.remove(&id);
        })?;
    }
    report.history_id = recording.finish().map(|e| e.id);
    Ok(report)
}

/// Take out the (now empty) container connect added, and delete the file
/// connect created if nothing else is in it, comments included. Returns
/// whether the file was deleted.
fn remove_what_connect_created(spec: &SourceSpec, record: &ConnectionRecord) -> Result<bool> {
    let empty = |v: &Value| match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    let Ok(text) = std::fs::read_to_string(&spec.path) else {
        return Ok(false);
    };
    let mut now = text.clone();
    if container_value(spec)?.as_ref().is_some_and(empty) {
        now = apply_edits(
            spec.format,
            &text,
            &[DocEdit::Remove {
                path: spec.container.path().to_vec(),
            }],
        )
        .map_err(|e| EditError::Unparsable {
            path: spec.path.clone(),
            message: e.to_string(),
        })?;
    }
    let nothing_else = matches!(now.trim(), "" | "{}");
    if record.created_file && nothing_else {
        remove_file(&spec.path, &text)?;
        return Ok(true);
    }
    if now != text {
        write_atomic(
            &spec.path,
            now.as_bytes(),
            Expected::Hash(crate::writer::content_hash(text.as_bytes())),
        )
        .map_err(EditError::from)?;
    }
    Ok(false)
}

fn remove_file(path: &Path, expected_text: &str) -> Result<()> {
    crate::writer::history::remove_checked(
        path,
        Expected::Hash(crate::writer::content_hash(expected_text.as_bytes())),
    )
    .map_err(EditError::from)?;
    Ok(())
}
