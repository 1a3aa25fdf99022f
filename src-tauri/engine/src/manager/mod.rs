//! The manager (SPEC M1–M6, M11): connects every enabled server in
//! parallel, keeps one explicit state per server, names their tools, routes
//! calls, and tears sessions and process groups down. Locks are plain
//! `std::sync` locks held only for quick reads and swaps, never across an
//! await that talks to a server.

pub mod connection;
mod keepalive;
pub mod logbuf;
pub mod orphans;
pub mod pages;
pub mod tool_cache;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult, Tool};
use rmcp::service::{Peer, PeerRequestOptions};
use rmcp::RoleClient;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::secrets::SecretResolver;
use crate::config::vars::{expand, Expansion, VarContext};
use crate::config::{ServerDef, Transport};
use crate::doctor::{self, Diagnosis, Failure};
use crate::events::{EngineEvent, ServerStatus};
use crate::launch::CommandResolver;
use crate::naming::{assign_names, with_properties, Collision, ToolRef};

use connection::{
    kill_group, subscribe_request, terminate_group, ConnectError, Launch, Signals,
    SwitchboardClient,
};
pub use connection::{
    ClientHooks, ElicitAnswer, ElicitRequest, ElicitationHandler, ProgressHandler, SamplingHandler,
    SamplingRequest,
};
use futures::future::FusedFuture;
use logbuf::LogSink;
use tool_cache::{config_hash, ToolCache};

pub const DEFAULT_GATE: Duration = Duration::from_millis(250);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);
pub const DEFAULT_HEALTH_INTERVAL: Duration = Duration::from_secs(15);
pub const DEFAULT_PING_TIMEOUT: Duration = Duration::from_secs(5);
pub const DEFAULT_HEALTHY_AFTER: Duration = Duration::from_secs(60);
/// Upper bound of a tool call: long-running tools are legitimate, endless
/// ones are not; the user can always cancel sooner.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);
/// Least time between two re-lists after `tools/list_changed`.
pub const RELIST_INTERVAL: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub struct ManagerOptions {
    /// Tool cache file; `None` disables the cache.
    pub cache_path: Option<PathBuf>,
    pub gate: Duration,
    pub default_timeout: Duration,
    /// How long a stopping stdio server gets to exit on its own.
    pub grace: Duration,
    /// Environment for variables, secrets and children.
    pub env: HashMap<String, String>,
    pub home: PathBuf,
    /// MCP `ping` every this often (SPEC M9).
    pub health_interval: Duration,
    pub ping_timeout: Duration,
    /// Connected this long, a server's restart counter starts over.
    pub healthy_after: Duration,
    /// Upper bound of one `tools/call` (other requests use the server's
    /// `timeout`, or `default_timeout`).
    pub call_timeout: Duration,
    /// Folder where this process records the process groups it starts, so
    /// the next start can end them if this one crashed (SPEC P4, see
    /// `orphans`); `None` records nothing.
    pub process_records: Option<PathBuf>,
}

impl Default for ManagerOptions {
    /// No cache, this process's environment, the default timings.
    fn default() -> Self {
        ManagerOptions {
            cache_path: None,
            gate: DEFAULT_GATE,
            default_timeout: DEFAULT_TIMEOUT,
            grace: DEFAULT_GRACE,
            env: std::env::vars().collect(),
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default(),
            health_interval: DEFAULT_HEALTH_INTERVAL,
            ping_timeout: DEFAULT_PING_TIMEOUT,
            healthy_after: DEFAULT_HEALTHY_AFTER,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            process_records: None,
        }
    }
}

impl ManagerOptions {
    pub fn for_host(host: &crate::host::Host) -> Self {
        ManagerOptions {
            cache_path: Some(host.join(
                &host.join(&host.cache_dir(), "switchboard"),
                "tool-cache.json",
            )),
            gate: DEFAULT_GATE,
            default_timeout: DEFAULT_TIMEOUT,
            grace: DEFAULT_GRACE,
            env: host.vars.clone(),
            home: host.home.clone(),
            health_interval: DEFAULT_HEALTH_INTERVAL,
            ping_timeout: DEFAULT_PING_TIMEOUT,
            healthy_after: DEFAULT_HEALTHY_AFTER,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            process_records: Some(
                host.join(&host.join(&host.cache_dir(), "switchboard"), "running"),
            ),
        }
    }
}

/// A server handed to the manager: its definition and where it came from.
#[derive(Debug, Clone)]
pub struct Wanted {
    pub def: ServerDef,
    pub source: Option<String>,
    /// Project folder of a project-level source (`${workspaceFolder}`).
    pub project: Option<PathBuf>,
    /// What the source's client expands; launching applies exactly this.
    pub expansion: Expansion,
    /// The folder of the file that defines it: a relative `cwd` is relative
    /// to it, as the client reading that file would take it.
    pub config_dir: Option<PathBuf>,
}

impl Wanted {
    /// A server given directly counts as one of Switchboard's own file.
    pub fn new(def: ServerDef) -> Self {
        Wanted {
            def,
            source: None,
            project: None,
            expansion: Expansion::SWITCHBOARD,
            config_dir: None,
        }
    }

    /// The folder a stdio server runs in, from its `cwd` with variables
    /// already expanded: an absolute one as is, a relative one against the
    /// defining file's folder, none at all the project folder (a project's
    /// `node ./tools/server.js` means that project's `tools`), else the
    /// process's own folder (`None`).
    pub fn working_folder(&self, cwd: Option<&str>) -> Option<PathBuf> {
        match cwd.filter(|c| !c.is_empty()) {
            Some(c) if std::path::Path::new(c).is_absolute() => Some(PathBuf::from(c)),
            Some(c) => Some(match &self.config_dir {
                Some(dir) => dir.join(c),
                None => PathBuf::from(c),
            }),
            None => self.project.clone(),
        }
    }

    /// Equal keys start the same way: the definition, and what its
    /// variables and relative paths are taken against.
    fn launch_key(&self) -> (String, Option<PathBuf>, Option<PathBuf>) {
        let relative = self.def.transport == Transport::Stdio
            && !self
                .def
                .cwd
                .as_deref()
                .is_some_and(|c| std::path::Path::new(c).is_absolute());
        (
            config_hash(&self.def),
            self.project.clone(),
            if relative {
                self.config_dir.clone()
            } else {
                None
            },
        )
    }

    /// The servers discovery says should run: each name's valid winner that
    /// Switchboard can start (disabled ones included, to show as disabled),
    /// unless it is held for the user's approval.
    pub fn from_discovery(d: &crate::discovery::Discovery) -> Vec<Wanted> {
        d.servers
            .iter()
            .filter(|s| {
                s.winner.is_valid() && s.winner.not_runnable.is_none() && s.winner.held.is_none()
            })
            .map(|s| Wanted {
                def: s.winner.def.clone(),
                source: Some(s.winner.source.clone()),
                project: d
                    .source(&s.winner.source)
                    .and_then(|src| src.project.clone()),
                expansion: s.winner.expansion,
                config_dir: s.winner.path.parent().map(PathBuf::from),
            })
            .collect()
    }
}

#[derive(Default)]
struct SlotState {
    peer: Option<Peer<RoleClient>>,
    tools: Arc<Vec<Tool>>,
    deferred: bool,
    pgid: Option<u32>,
    binary: Option<PathBuf>,
    transport_used: Option<&'static str>,
    protocol: Option<String>,
    warnings: Vec<String>,
    last_error: Option<String>,
    /// Why the last start failed, in plain words (cleared on connect).
    diagnosis: Option<Diagnosis>,
    /// What the last stdio start printed on stdout that is not JSON-RPC.
    stdout_noise: Vec<String>,
    restarts: u32,
    /// The last `WWW-Authenticate` challenge the server answered with.
    auth_challenge: Option<String>,
    /// `tools` as the index shows them, made once per list (and the list it
    /// was made from): re-indexing after another server's change then copies
    /// no description or schema of this one.
    shown: Option<ShownList>,
}

/// A tool list and its shared parts as the index shows them.
type ShownList = (Arc<Vec<Tool>>, Arc<Vec<Shown>>);

/// One tool's parts the index shares instead of copying.
struct Shown {
    description: Option<Arc<str>>,
    input_schema: Arc<Map<String, Value>>,
}

impl SlotState {
    fn shown(&mut self) -> Arc<Vec<Shown>> {
        if let Some((from, shown)) = &self.shown {
            if Arc::ptr_eq(from, &self.tools) {
                return shown.clone();
            }
        }
        let shown: Arc<Vec<Shown>> = Arc::new(
            self.tools
                .iter()
                .map(|t| Shown {
                    description: t.description.as_deref().map(Arc::from),
                    input_schema: with_properties(&t.input_schema),
                })
                .collect(),
        );
        self.shown = Some((self.tools.clone(), shown.clone()));
        shown
    }
}

/// One server's runtime record. A slot lives from `add` to `remove`; each
/// start gets a fresh stop token and one supervising task.
pub struct Slot {
    pub name: String,
    pub wanted: Wanted,
    hash: String,
    status: watch::Sender<ServerStatus>,
    state: Mutex<SlotState>,
    /// Its log, which also masks its secrets in every text shown.
    pub log: Arc<LogSink>,
    control: Mutex<Control>,
    /// Resource URIs subscribed to; restored after every reconnect.
    subscriptions: Mutex<std::collections::BTreeSet<String>>,
    /// Serializes registry operations on this server (not handshakes).
    op: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Control {
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// A tool as the outside world sees it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// Sanitized, unique, at most 64 characters.
    pub name: String,
    pub server: String,
    /// The tool's raw name on its server.
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub description: Option<Arc<str>>,
    /// Shared with the server's own tool list (10,000 tools must not mean
    /// 10,000 schemas copied on every re-index).
    #[cfg_attr(feature = "ts", ts(type = "JsonSchema"))]
    pub input_schema: Arc<Map<String, Value>>,
    /// From the tool cache; the server is still connecting.
    pub deferred: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolIndex {
    pub tools: Vec<ToolEntry>,
    pub collisions: Vec<Collision>,
    #[serde(skip)]
    by_name: HashMap<String, usize>,
}

impl ToolIndex {
    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.by_name.get(name).map(|i| &self.tools[*i])
    }
}

/// What one server looks like right now.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerState {
    pub name: String,
    pub status: ServerStatus,
    pub transport: Transport,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub source: Option<String>,
    pub tool_count: usize,
    pub deferred: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub binary: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub transport_used: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub protocol_version: Option<String>,
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub last_error: Option<String>,
    /// Why it is not running, in plain words with what to do (while it is not connected).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub diagnosis: Option<Diagnosis>,
    /// Restarts since the server was last started by hand.
    pub restarts: u32,
}

/// The result of the startup gate (SPEC M3).
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StartupReport {
    pub connected: Vec<String>,
    pub failed: Vec<ServerError>,
    /// Pending servers whose tools came from the cache.
    pub deferred: Vec<String>,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerError {
    pub server: String,
    pub error: String,
}

/// A tool call's result, flattened for display (SPEC M6).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CallOutcome {
    /// Text content joined; `Error: …` when the server reported an error.
    pub text: String,
    pub is_error: bool,
    #[cfg_attr(feature = "ts", ts(type = "unknown[]"))]
    pub content: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub structured_content: Option<Value>,
    pub server: String,
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub source: Option<String>,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CallError {
    #[error("Unknown tool \"{0}\"")]
    UnknownTool(String),
    #[error("Server \"{0}\" is disabled.")]
    Disabled(String),
    /// A transport or runtime failure (`MCP error: …`).
    #[error("MCP error: {0}")]
    Mcp(String),
    /// Cancelled by the caller: an abort, not an error.
    #[error("Tool call aborted")]
    Aborted,
}

/// Why a forwarded request failed: the server's own JSON-RPC error, passed
/// on as it is, or Switchboard's reason.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ForwardError {
    #[error("{0}")]
    Server(rmcp::ErrorData),
    #[error(transparent)]
    Call(#[from] CallError),
}

/// What one reconcile step did to its server.
enum Step {
    Nothing,
    Kept,
    Started,
    Stopped,
    Updated,
    Failed(RegistryError),
}

/// How one connection ended.
enum Outcome {
    /// Stopped on purpose: never restarted.
    Stopped,
    NeedsAuth(String),
    Failed {
        failure: Failure,
        healthy_for: Duration,
    },
}

/// Delay before restart `attempt` (1-based): initial × multiplier^(n-1), capped.
pub fn backoff(p: &crate::config::RestartPolicy, attempt: u32) -> Duration {
    let factor = p
        .backoff_multiplier
        .max(1.0)
        .powi(attempt.saturating_sub(1).min(64) as i32);
    let ms = (p.initial_delay_ms as f64 * factor).min(p.max_delay_ms as f64);
    Duration::from_millis(ms as u64)
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    #[error("Unknown server \"{0}\"")]
    Unknown(String),
    #[error("Server \"{0}\" is not connected")]
    NotConnected(String),
    #[error("Failed to connect to \"{server}\": {error}")]
    UpdateFailed { server: String, error: String },
    #[error("MCP error: {0}")]
    Mcp(String),
}

/// What a reconcile did, by server name.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ReconcileReport {
    pub started: Vec<String>,
    pub stopped: Vec<String>,
    pub updated: Vec<String>,
    /// Untouched: same definition, same connection, same process.
    pub kept: Vec<String>,
    pub failed: Vec<ServerError>,
}

struct Shared {
    slots: RwLock<IndexMap<String, Arc<Slot>>>,
    events: broadcast::Sender<EngineEvent>,
    index: RwLock<Arc<ToolIndex>>,
    cache: ToolCache,
    secrets: SecretResolver,
    /// Built on first launch: asking the login shell for its PATH can take a moment.
    commands: tokio::sync::OnceCell<Arc<CommandResolver>>,
    opts: ManagerOptions,
    tracker: TaskTracker,
    client_hooks: Arc<ClientHooks>,
    reindex: Mutex<()>,
    /// Stored sign-ins (SPEC A3); `None`: no OAuth tokens are injected.
    vault: RwLock<Option<crate::auth::vault::Vault>>,
    /// Pins and approval modes (SPEC G9) the gateway follows; `None`: nothing is held.
    trust: RwLock<Option<Arc<crate::tool_trust::TrustCell>>>,
    /// The newest reconcile's wish, by name (absent: not wanted). A
    /// server's reconcile step reads it under that name's lock, so
    /// reconciles that overlap converge on the newest wish.
    desired: Mutex<HashMap<String, Wanted>>,
    /// One lock per server name for reconcile steps: an update replaces the
    /// slot, so the slot's own lock cannot order two steps on one name.
    steps: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Reconciles running in the background, ended at shutdown.
    background: TaskTracker,
    closing: CancellationToken,
    /// Whether the sign-in refresh timer (`keepalive`) runs.
    keepalive_started: std::sync::atomic::AtomicBool,
    /// Set once a [`Manager::start`] passed its startup gate (cached tools of
    /// servers still starting are offered from then on).
    gate_passed: watch::Sender<bool>,
}

#[derive(Clone)]
pub struct Manager {
    shared: Arc<Shared>,
}

impl Manager {
    pub fn new(opts: ManagerOptions) -> Manager {
        let (events, _) = broadcast::channel(4096);
        connection::become_subreaper();
        if let Some(dir) = &opts.process_records {
            orphans::start_records(dir);
        }
        let secrets = SecretResolver::with_env(opts.env.clone());
        Manager {
            shared: Arc::new(Shared {
                slots: RwLock::new(IndexMap::new()),
                events,
                index: RwLock::new(Arc::new(ToolIndex::default())),
                cache: ToolCache::new(opts.cache_path.clone()),
                secrets,
                commands: tokio::sync::OnceCell::new(),
                opts,
                tracker: TaskTracker::new(),
                client_hooks: Arc::new(ClientHooks::default()),
                reindex: Mutex::new(()),
                vault: RwLock::new(None),
                trust: RwLock::new(None),
                desired: Mutex::new(HashMap::new()),
                steps: Mutex::new(HashMap::new()),
                background: TaskTracker::new(),
                closing: CancellationToken::new(),
                keepalive_started: Default::default(),
                gate_passed: watch::channel(false).0,
            }),
        }
    }

    /// Until a [`Manager::start`] has passed its startup gate: every server
    /// that connected in time, and the cached tools of those still starting,
    /// are in [`Manager::tools`]. A client's first list waits for this.
    pub async fn gate_passed(&self) {
        let mut rx = self.shared.gate_passed.subscribe();
        let _ = rx.wait_for(|p| *p).await;
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.shared.events.subscribe()
    }

    fn slot(&self, name: &str) -> Option<Arc<Slot>> {
        self.shared.slots.read().unwrap().get(name).cloned()
    }

    pub fn server_names(&self) -> Vec<String> {
        self.shared.slots.read().unwrap().keys().cloned().collect()
    }

    /// The one place a status changes: stored, logged, published. Texts in
    /// it have the server's secrets masked.
    fn set_status(&self, slot: &Slot, status: ServerStatus) {
        let status = match status {
            ServerStatus::Failed { error } => ServerStatus::Failed {
                error: slot.log.redactor.apply(&error),
            },
            ServerStatus::NeedsAuth { message } => ServerStatus::NeedsAuth {
                message: slot.log.redactor.apply(&message),
            },
            s => s,
        };
        let detail = match &status {
            ServerStatus::Failed { error } => format!("failed: {error}"),
            ServerStatus::NeedsAuth { message } => format!("needs auth: {message}"),
            ServerStatus::Restarting { attempt, of } => {
                format!("restarting (attempt {attempt}/{of})")
            }
            s => s.label().to_string(),
        };
        slot.log.now("lifecycle", &detail);
        slot.status.send_replace(status.clone());
        let _ = self.shared.events.send(EngineEvent::Status {
            server: slot.name.clone(),
            status,
        });
    }

    /// Publish an event on the manager's channel (the engine's sign-in progress).
    pub fn publish(&self, ev: EngineEvent) {
        let _ = self.shared.events.send(ev);
    }

    /// A lifecycle line in a server's log (and its event).
    pub fn note(&self, name: &str, text: &str) {
        if let Some(slot) = self.slot(name) {
            slot.log.now("lifecycle", text);
        }
    }

    /// The `WWW-Authenticate` challenge of the server's last refusal, if any.
    pub fn auth_challenge(&self, name: &str) -> Option<String> {
        self.slot(name)?
            .state
            .lock()
            .unwrap()
            .auth_challenge
            .clone()
    }

    /// A managed remote server's URL with its variables expanded, as it connects.
    pub fn resolved_url(&self, name: &str) -> Option<String> {
        let slot = self.slot(name)?;
        let url = slot.wanted.def.url.clone()?;
        Some(expand(&url, &self.var_context(&slot.wanted)).value)
    }

    fn var_context(&self, w: &Wanted) -> VarContext {
        VarContext {
            env: self.shared.opts.env.clone(),
            workspace_folder: w.project.as_ref().map(|p| p.to_string_lossy().to_string()),
            user_home: Some(self.shared.opts.home.to_string_lossy().to_string()),
            inputs: HashMap::new(),
            expansion: w.expansion,
        }
    }

    pub fn status(&self, name: &str) -> Option<ServerStatus> {
        self.slot(name).map(|s| s.status.borrow().clone())
    }

    pub fn state(&self, name: &str) -> Option<ServerState> {
        let slot = self.slot(name)?;
        let status = slot.status.borrow().clone();
        let st = slot.state.lock().unwrap();
        Some(ServerState {
            name: slot.name.clone(),
            status,
            transport: slot.wanted.def.transport,
            source: slot.wanted.source.clone(),
            tool_count: st.tools.len(),
            deferred: st.deferred,
            pid: st.pgid,
            binary: st.binary.clone(),
            transport_used: st.transport_used,
            protocol_version: st.protocol.clone(),
            warnings: st.warnings.clone(),
            last_error: st.last_error.clone(),
            diagnosis: st.diagnosis.clone(),
            restarts: st.restarts,
        })
    }

    pub fn states(&self) -> Vec<ServerState> {
        self.server_names()
            .iter()
            .filter_map(|n| self.state(n))
            .collect()
    }

    /// A report on `name` to paste into a bug report or a chat: its
    /// definition (argument values masked where they are secrets; env and
    /// header values never shown), the resolved program and search PATH, its
    /// status and diagnosis, and its last log lines, all through the server's
    /// secret masking.
    pub fn diagnostic_report(&self, name: &str) -> Option<String> {
        let slot = self.slot(name)?;
        let st = self.state(name)?;
        let def = &slot.wanted.def;
        let mask = |t: &str| slot.log.redactor.apply(t);
        let search_path = self.shared.commands.get().map(|c| c.describe_dirs());
        let log: Vec<String> = slot
            .log
            .snapshot()
            .into_iter()
            .rev()
            .take(30)
            .rev()
            .map(|l| format!("[{}] {}", l.kind, mask(&l.text)))
            .collect();
        Some(doctor::report(&doctor::ReportInput {
            name: name.to_string(),
            source: slot.wanted.source.clone(),
            status: st.status.label().to_string(),
            diagnosis: st.diagnosis.clone(),
            last_error: st.last_error.clone(),
            transport: def.transport,
            command: def.command.clone(),
            program: st.binary.as_ref().map(|b| b.display().to_string()),
            args: def.args.iter().map(|a| mask(a)).collect(),
            cwd: def.cwd.clone(),
            url: def.url.as_deref().map(mask),
            env_keys: def.env.keys().cloned().collect(),
            header_keys: def.headers.keys().cloned().collect(),
            timeout_ms: def
                .timeout
                .unwrap_or(self.shared.opts.default_timeout.as_millis() as u64),
            search_path,
            restarts: st.restarts,
            warnings: st.warnings.clone(),
            log,
        }))
    }

    pub fn logs(&self, name: &str) -> Option<Vec<crate::events::LogLine>> {
        self.slot(name).map(|s| s.log.snapshot())
    }

    /// `text` with `server`'s secrets masked (for errors built outside the
    /// manager, e.g. a connection test's report).
    pub fn redact(&self, server: &str, text: &str) -> String {
        match self.slot(server) {
            Some(s) => s.log.redactor.apply(text),
            None => text.to_string(),
        }
    }

    pub fn tools(&self) -> Arc<ToolIndex> {
        self.shared.index.read().unwrap().clone()
    }

    /// Rebuild names over every server's current tool slice.
    fn reindex(&self) {
        // Serialized: two servers connecting at once must not overwrite each
        // other's index with one computed from an older snapshot.
        let _one_at_a_time = self.shared.reindex.lock().unwrap();
        let slots: Vec<Arc<Slot>> = self
            .shared
            .slots
            .read()
            .unwrap()
            .values()
            .cloned()
            .collect();
        let mut refs = vec![];
        let mut meta = vec![];
        for s in &slots {
            let mut st = s.state.lock().unwrap();
            let shown = st.shown();
            for (t, sh) in st.tools.iter().zip(shown.iter()) {
                refs.push(ToolRef {
                    server: s.name.clone(),
                    tool: t.name.to_string(),
                });
                meta.push((sh.description.clone(), sh.input_schema.clone(), st.deferred));
            }
        }
        let naming = assign_names(&refs);
        let mut index = ToolIndex {
            tools: Vec::with_capacity(refs.len()),
            collisions: naming.collisions,
            by_name: HashMap::with_capacity(refs.len()),
        };
        for ((r, name), (description, schema, deferred)) in
            refs.into_iter().zip(naming.names).zip(meta)
        {
            index.by_name.insert(name.clone(), index.tools.len());
            index.tools.push(ToolEntry {
                name,
                server: r.server,
                tool: r.tool,
                description,
                input_schema: schema,
                deferred,
            });
        }
        let big = index.tools.len() >= 1000;
        *self.shared.index.write().unwrap() = Arc::new(index);
        if big {
            // The old index of thousands of entries was just freed.
            release_freed_memory();
        }
    }

    fn publish_tools(&self, slot: &Slot) {
        let (count, deferred) = {
            let st = slot.state.lock().unwrap();
            (st.tools.len(), st.deferred)
        };
        self.reindex();
        let _ = self.shared.events.send(EngineEvent::Tools {
            server: slot.name.clone(),
            count,
            deferred,
        });
    }

    fn new_slot(&self, w: Wanted) -> Arc<Slot> {
        Arc::new(Slot {
            name: w.def.name.clone(),
            hash: config_hash(&w.def),
            // Born with the status it is listed with: a list read between
            // registering a disabled server and marking it would say "stopped".
            status: watch::channel(if w.def.enabled {
                ServerStatus::Disconnected
            } else {
                ServerStatus::Disabled
            })
            .0,
            state: Mutex::new(SlotState::default()),
            log: LogSink::new(&w.def.name, self.shared.events.clone()),
            control: Mutex::new(Control::default()),
            subscriptions: Mutex::new(Default::default()),
            op: tokio::sync::Mutex::new(()),
            wanted: w,
        })
    }

    /// Register servers and connect the enabled ones in parallel. Returns
    /// at once; see `start` for the gated variant. Names already registered
    /// are skipped (use `update` or `reconcile` to change them).
    pub fn add_all(&self, wanted: Vec<Wanted>) -> Vec<Arc<Slot>> {
        let mut started = vec![];
        for w in wanted {
            let name = w.def.name.clone();
            let slot = {
                let mut slots = self.shared.slots.write().unwrap();
                if slots.contains_key(&name) {
                    continue;
                }
                let slot = self.new_slot(w);
                slots.insert(name, slot.clone());
                slot
            };
            if slot.wanted.def.enabled {
                self.launch(&slot);
                started.push(slot);
            } else {
                self.set_status(&slot, ServerStatus::Disabled);
            }
        }
        started
    }

    /// Spawn the supervising task for a registered slot.
    fn launch(&self, slot: &Arc<Slot>) {
        // Mark pending before returning so gates and callers see it.
        self.set_status(slot, ServerStatus::Connecting);
        slot.state.lock().unwrap().restarts = 0;
        let stop = CancellationToken::new();
        let me = self.clone();
        let s = slot.clone();
        let st = stop.clone();
        let task = self
            .shared
            .tracker
            .spawn(async move { me.supervise(s, st).await });
        let mut c = slot.control.lock().unwrap();
        c.stop = stop;
        c.task = Some(task);
    }

    /// Start every server and wait for the startup gate (SPEC M3): until all
    /// settle or the gate passes; then pending servers with a cache entry
    /// offer deferred tools and the others are waited for.
    pub async fn start(&self, wanted: Vec<Wanted>) -> StartupReport {
        let t0 = Instant::now();
        let started = self.add_all(wanted);
        let deadline = tokio::time::Instant::now() + self.shared.opts.gate;
        // For the gate a server is settled once its first attempt ended: a
        // failed start that is now backing off must not hold everyone up.
        let first_settled = |st: &ServerStatus| !matches!(st, ServerStatus::Connecting);
        futures::future::join_all(started.iter().map(|s| {
            let mut rx = s.status.subscribe();
            async move {
                let _ = tokio::time::timeout_at(deadline, rx.wait_for(first_settled)).await;
            }
        }))
        .await;
        let mut report = StartupReport::default();
        let mut wait_for = vec![];
        for s in &started {
            if first_settled(&s.status.borrow()) {
                continue;
            }
            match self.shared.cache.get(&s.name, &s.hash).await {
                Some(tools) => {
                    let applied = {
                        let mut st = s.state.lock().unwrap();
                        // Only without a live session: a live list always wins.
                        if st.peer.is_none() && s.status.borrow().is_pending() {
                            st.tools = Arc::new(tools);
                            st.deferred = true;
                            true
                        } else {
                            false
                        }
                    };
                    if applied {
                        self.publish_tools(s);
                        report.deferred.push(s.name.clone());
                    }
                }
                None => wait_for.push(s.clone()),
            }
        }
        // What a client may be shown now is in the index: the gate has passed.
        self.shared.gate_passed.send_replace(true);
        futures::future::join_all(wait_for.iter().map(|s| {
            let mut rx = s.status.subscribe();
            async move {
                let _ = rx.wait_for(first_settled).await;
            }
        }))
        .await;
        for s in &started {
            let status = s.status.borrow().clone();
            match status {
                ServerStatus::Connected => report.connected.push(s.name.clone()),
                ServerStatus::Failed { error } => report.failed.push(ServerError {
                    server: s.name.clone(),
                    error,
                }),
                ServerStatus::NeedsAuth { message } => report.failed.push(ServerError {
                    server: s.name.clone(),
                    error: message,
                }),
                ServerStatus::Restarting { .. } => {
                    let error = s
                        .state
                        .lock()
                        .unwrap()
                        .last_error
                        .clone()
                        .unwrap_or_default();
                    report.failed.push(ServerError {
                        server: s.name.clone(),
                        error,
                    })
                }
                _ => {}
            }
        }
        report.elapsed_ms = t0.elapsed().as_millis() as u64;
        report
    }

    /// Wait until no server is connecting or restarting.
    pub async fn settle(&self) {
        let slots: Vec<Arc<Slot>> = self
            .shared
            .slots
            .read()
            .unwrap()
            .values()
            .cloned()
            .collect();
        futures::future::join_all(slots.iter().map(|s| {
            let mut rx = s.status.subscribe();
            async move {
                let _ = rx.wait_for(|st| !st.is_pending()).await;
            }
        }))
        .await;
    }

    /// Resolve variables, secrets and the command for one launch.
    async fn prepare(&self, slot: &Slot) -> Result<Launch, Outcome> {
        let mut launch = self
            .prepare_launch(slot)
            .await
            .map_err(|failure| Outcome::Failed {
                failure,
                healthy_for: Duration::ZERO,
            })?;
        self.add_sign_in(slot, &mut launch)
            .await
            .map_err(Outcome::NeedsAuth)?;
        Ok(launch)
    }

    /// SPEC A3: a stored sign-in becomes the http client's token handling, an
    /// `sse` server's `Authorization` header, or (for stdio servers with
    /// `auth: {type: "oauth", credentialId}`) `OAUTH_ACCESS_TOKEN`. An
    /// explicit Authorization header in the config wins over a sign-in, and
    /// so does a bearer token the user gave for this server and URL (kept in
    /// the keychain, never in the config file).
    async fn add_sign_in(&self, slot: &Slot, launch: &mut Launch) -> Result<(), String> {
        let Some(vault) = self.vault() else {
            return Ok(());
        };
        let has_header = launch
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"));
        if let (false, Some(url), Transport::Http | Transport::Sse) =
            (has_header, launch.def.url.clone(), launch.def.transport)
        {
            match crate::auth::oauth::static_token(&slot.name, &url, &vault).await {
                Ok(Some(t)) => {
                    slot.log.redactor.add([t.clone()]);
                    launch
                        .headers
                        .insert("Authorization".into(), format!("Bearer {t}"));
                    return Ok(());
                }
                Ok(None) => {}
                Err(e) => self.warn(
                    slot,
                    &format!("cannot read the bearer token kept for this server: {e}"),
                ),
            }
        }
        match launch.def.transport {
            Transport::Http if !has_header => {
                let url = launch.def.url.clone().unwrap_or_default();
                match crate::auth::oauth::authorized(&slot.name, &url, &vault).await {
                    Ok(crate::auth::oauth::Authorized::Client(c)) => launch.oauth = Some(c),
                    Ok(crate::auth::oauth::Authorized::None) => {}
                    Err(e) => self.warn(slot, &e),
                }
            }
            Transport::Sse if !has_header => {
                let url = launch.def.url.clone().unwrap_or_default();
                if crate::auth::oauth::is_signed_in(&slot.name, &url, &vault).await {
                    match crate::auth::oauth::access_token(&slot.name, &vault).await {
                        Ok(Some(t)) => {
                            slot.log.redactor.add([t.clone()]);
                            launch
                                .headers
                                .insert("Authorization".into(), format!("Bearer {t}"));
                        }
                        Ok(None) => {}
                        Err(e) => return Err(format!("Authentication required: {e}")),
                    }
                }
            }
            Transport::Stdio => {
                let Some(auth) = launch.def.auth.as_ref().filter(|a| a.kind == "oauth") else {
                    return Ok(());
                };
                let from = auth
                    .credential_id
                    .clone()
                    .unwrap_or_else(|| slot.name.clone());
                match crate::auth::oauth::access_token(&from, &vault).await {
                    Ok(Some(t)) => {
                        slot.log.redactor.add([t.clone()]);
                        launch.env.insert("OAUTH_ACCESS_TOKEN".into(), t);
                    }
                    Ok(None) => {
                        let msg = format!("Authentication required: no sign-in is stored for \"{from}\" (auth.credentialId); sign in to it first, then start this server");
                        self.warn(slot, &msg);
                        return Err(msg);
                    }
                    Err(e) => return Err(format!("Authentication required: {e}")),
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn warn(&self, slot: &Slot, message: &str) {
        let message = &slot.log.redactor.apply(message);
        let _ = self.shared.events.send(EngineEvent::Warning {
            server: slot.name.clone(),
            message: message.into(),
        });
        slot.log.now("warning", message);
        let mut st = slot.state.lock().unwrap();
        if !st.warnings.iter().any(|w| w == message) {
            st.warnings.push(message.into());
        }
    }

    async fn prepare_launch(&self, slot: &Slot) -> Result<Launch, Failure> {
        let w = &slot.wanted;
        let cx = self.var_context(w);
        let mut def = w.def.clone();
        let x = |s: &str| expand(s, &cx).value;
        def.command = def.command.as_deref().map(x);
        def.args = def.args.iter().map(|a| x(a)).collect();
        def.cwd = def.cwd.as_deref().map(x);
        if def.transport == Transport::Stdio {
            let folder = w.working_folder(def.cwd.as_deref());
            if let Some(f) = folder.as_ref().filter(|f| !f.is_dir()) {
                return Err(Failure::Folder {
                    message: match &def.cwd {
                        Some(c) => format!("its working folder {} does not exist (\"cwd\": \"{c}\"); fix \"cwd\" in its config file", f.display()),
                        None => format!("its working folder, the project folder {}, does not exist", f.display()),
                    },
                });
            }
            def.cwd = folder.map(|f| f.to_string_lossy().into_owned());
        }
        def.url = def.url.as_deref().map(x);
        if let Some(u) = &def.url {
            crate::config::validate::check_url(u).map_err(|e| Failure::Invalid {
                message: format!("url {e}"),
            })?;
        }
        let (env, mut warnings) = self
            .shared
            .secrets
            .resolve_map_in("env", &def.env, &cx)
            .await;
        let (headers, w2) = self
            .shared
            .secrets
            .resolve_map_in("header", &def.headers, &cx)
            .await;
        warnings.extend(w2);
        // Arguments with a value kept in the keychain (installed from the registry).
        let mut arg_secrets = vec![];
        for (i, raw) in w.def.args.iter().enumerate() {
            match self.shared.secrets.resolve_keychain_refs(raw, &cx).await {
                Some(crate::auth::secrets::Resolution::Value(v)) => {
                    arg_secrets.push(v.clone());
                    def.args[i] = v;
                }
                Some(crate::auth::secrets::Resolution::Unresolved { reason }) => {
                    return Err(Failure::Invalid {
                        message: format!("argument {} resolved to nothing ({reason})", i + 1),
                    })
                }
                None => {}
            }
        }
        // Before anything about this launch is shown: its secrets are masked.
        let mut masked = crate::redact::secret_values(
            &w.def.env,
            &env,
            &headers,
            w.def.url.as_deref(),
            def.url.as_deref(),
        );
        masked.extend(arg_secrets);
        slot.log.redactor.set(masked);
        let warnings: Vec<String> = warnings
            .iter()
            .map(|w| slot.log.redactor.apply(w))
            .collect();
        for w in &warnings {
            let _ = self.shared.events.send(EngineEvent::Warning {
                server: slot.name.clone(),
                message: w.clone(),
            });
            slot.log.now("warning", w);
        }
        slot.state.lock().unwrap().warnings = warnings;
        if def.transport != Transport::Stdio {
            return Ok(Launch {
                def,
                program: PathBuf::new(),
                path_env: None,
                env,
                headers,
                oauth: None,
            });
        }
        // Only stdio servers need the command search PATH (the login shell is asked once).
        let commands = self
            .shared
            .commands
            .get_or_init(|| async {
                let path = self
                    .shared
                    .opts
                    .env
                    .get("PATH")
                    .map(std::ffi::OsString::from);
                let home = Some(self.shared.opts.home.clone());
                let r = tokio::task::spawn_blocking(move || {
                    CommandResolver::new(
                        path,
                        home,
                        crate::launch::login_shell_path().map(String::from),
                    )
                })
                .await;
                Arc::new(r.expect("command resolver"))
            })
            .await
            .clone();
        let program = match def.transport {
            Transport::Stdio => {
                let cmd = def.command.clone().unwrap_or_default();
                let cwd = def.cwd.as_ref().map(PathBuf::from);
                commands.resolve(&cmd, cwd.as_deref()).map_err(|message| {
                    if cmd.trim().is_empty() {
                        Failure::Invalid { message }
                    } else {
                        Failure::NotFound {
                            searched: commands.describe_dirs(),
                            message,
                            login_shell: crate::launch::login_shell_path().is_some(),
                        }
                    }
                })?
            }
            _ => PathBuf::new(),
        };
        Ok(Launch {
            def,
            program,
            path_env: Some(commands.search_path()),
            env,
            headers,
            oauth: None,
        })
    }

    /// Supervise one server (SPEC M9): run connections, restart crashed or
    /// failed ones with exponential backoff, give up after the policy's
    /// attempts. Each server has its own task, so one crash loop never
    /// delays another server or a status read.
    async fn supervise(&self, slot: Arc<Slot>, stop: CancellationToken) {
        let policy = slot.wanted.def.restart_policy.unwrap_or_default();
        let mut attempt: u32 = 0;
        loop {
            let outcome = self.run_once(&slot, &stop, attempt).await;
            let (failure, healthy_for) = match outcome {
                Outcome::Stopped => return self.set_status(&slot, ServerStatus::Disconnected),
                Outcome::NeedsAuth(message) => {
                    let diagnosis = doctor::diagnose(
                        &Failure::Auth {
                            message: message.clone(),
                        },
                        &self.facts(&slot),
                    );
                    slot.state.lock().unwrap().diagnosis = Some(diagnosis);
                    return self.set_status(&slot, ServerStatus::NeedsAuth { message });
                }
                Outcome::Failed {
                    failure,
                    healthy_for,
                } => (failure, healthy_for),
            };
            if healthy_for >= self.shared.opts.healthy_after {
                attempt = 0;
            }
            attempt += 1;
            let mut diagnosis = doctor::diagnose(&failure, &self.facts(&slot));
            for text in [
                &mut diagnosis.summary,
                &mut diagnosis.detail,
                &mut diagnosis.error,
            ] {
                *text = slot.log.redactor.apply(text);
            }
            let error = diagnosis.error.clone();
            let heals = diagnosis.class.heals();
            {
                let mut st = slot.state.lock().unwrap();
                st.last_error = Some(error.clone());
                st.diagnosis = Some(diagnosis);
            }
            // Starting again cannot help (no such command, not a program, no
            // such folder, an unusable definition): failed now, no restarts.
            if !heals {
                slot.log.now(
                    "lifecycle",
                    &format!("{error}; not restarting: this does not heal by retrying"),
                );
                return self.set_status(&slot, ServerStatus::Failed { error });
            }
            if attempt > policy.max_restart_attempts {
                let error = if policy.max_restart_attempts == 0 {
                    error
                } else {
                    format!(
                        "{error} (gave up after {} restarts)",
                        policy.max_restart_attempts
                    )
                };
                return self.set_status(&slot, ServerStatus::Failed { error });
            }
            let delay = backoff(&policy, attempt);
            slot.log.now(
                "lifecycle",
                &format!("{error}; restarting in {} ms", delay.as_millis()),
            );
            slot.state.lock().unwrap().restarts += 1;
            self.set_status(
                &slot,
                ServerStatus::Restarting {
                    attempt,
                    of: policy.max_restart_attempts,
                },
            );
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stop.cancelled() => return self.set_status(&slot, ServerStatus::Disconnected),
            }
        }
    }

    /// One connection's whole life: connect, list, serve signals and health
    /// checks, tear down. Never restarts by itself.
    async fn run_once(&self, slot: &Arc<Slot>, stop: &CancellationToken, attempt: u32) -> Outcome {
        let failed = |failure: Failure| Outcome::Failed {
            failure,
            healthy_for: Duration::ZERO,
        };
        if attempt == 0 && !matches!(*slot.status.borrow(), ServerStatus::Connecting) {
            self.set_status(slot, ServerStatus::Connecting);
        }
        let launch = match self.prepare(slot).await {
            Ok(l) => l,
            Err(o) => return o,
        };
        if launch.def.transport == Transport::Stdio {
            slot.log.now(
                "lifecycle",
                &format!("starting {}", launch.program.display()),
            );
            slot.state.lock().unwrap().binary = Some(launch.program.clone());
        }
        let timeout = launch
            .def
            .timeout
            .map(Duration::from_millis)
            .unwrap_or(self.shared.opts.default_timeout);
        let started = tokio::time::Instant::now();
        let signals = Arc::new(Signals::default());
        let handler = SwitchboardClient::new(
            &slot.name,
            signals.clone(),
            slot.log.clone(),
            self.shared.client_hooks.clone(),
        );
        let mut noise = crate::doctor::stdout_watch::Noise::default();
        let opened = tokio::select! {
            r = connection::open(launch, handler, slot.log.clone(), timeout, &mut noise) => r,
            _ = stop.cancelled() => return Outcome::Stopped,
        };
        slot.state.lock().unwrap().stdout_noise = noise.lines();
        let opened = match opened {
            Ok(o) => o,
            Err(ConnectError::Auth { message, challenge }) => {
                slot.state.lock().unwrap().auth_challenge = challenge;
                return Outcome::NeedsAuth(message);
            }
            Err(ConnectError::Start {
                message,
                kind,
                raw_os,
            }) => {
                return failed(Failure::Spawn {
                    kind,
                    raw_os,
                    message,
                })
            }
            Err(ConnectError::Spawn(message)) => return failed(Failure::Invalid { message }),
            Err(ConnectError::Timeout(_)) => return failed(Failure::Timeout),
            Err(e) => {
                return failed(Failure::Handshake {
                    message: e.to_string(),
                })
            }
        };
        let session = opened.session;
        let peer = session.peer().clone();
        // Switchboard keeps each server's list itself: a server's `ttlMs`
        // must not make rmcp hold another copy of every page.
        peer.set_response_cache_config(rmcp::service::ClientCacheConfig::disabled())
            .await;
        let pgid = opened.pgid;
        slot.state.lock().unwrap().pgid = pgid;
        let remaining = timeout
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(100));
        let tools = tokio::select! {
            r = tokio::time::timeout(remaining, pages::tools(&peer)) => r,
            _ = stop.cancelled() => Ok(Err(rmcp::ServiceError::Cancelled { reason: None })),
        };
        let tools = match tools {
            Ok(Ok(t)) => t,
            other => {
                session.cancellation_token().cancel();
                kill_group(pgid);
                if stop.is_cancelled() {
                    return Outcome::Stopped;
                }
                return failed(Failure::Later {
                    message: match other {
                        Err(_) => format!("timed out after {timeout:?} listing tools"),
                        Ok(Err(e)) => format!("tools/list failed: {e}"),
                        Ok(Ok(_)) => unreachable!(),
                    },
                });
            }
        };
        if let Some(w) = &tools.warning {
            self.warn(slot, w);
        }
        let tools = tools.items;
        if tools.len() >= 1000 {
            release_freed_memory();
        }
        {
            let mut st = slot.state.lock().unwrap();
            st.peer = Some(peer.clone());
            st.tools = Arc::new(tools.clone());
            st.deferred = false;
            st.transport_used = Some(opened.transport_used);
            st.protocol = peer.peer_info().map(|i| i.protocol_version.to_string());
            st.last_error = None;
            st.diagnosis = None;
        }
        // Names first, then the status: whoever sees "connected" finds the tools.
        self.publish_tools(slot);
        self.set_status(slot, ServerStatus::Connected);
        self.restore_subscriptions(slot, &peer, timeout).await;
        self.shared.cache.put(&slot.name, &slot.hash, &tools).await;
        let connected_at = Instant::now();

        let ct = session.cancellation_token();
        let waiting = session.waiting();
        tokio::pin!(waiting);
        let mut health = tokio::time::interval_at(
            tokio::time::Instant::now() + self.shared.opts.health_interval,
            self.shared.opts.health_interval,
        );
        let mut missed_pings = 0u32;
        let mut ping_supported = true;
        // `tools/list_changed` (SPEC M7), however often it comes: one re-list
        // in flight and at most one more after it. The re-list runs beside
        // the loop, so a server that hangs it never delays a stop or a ping.
        type Relist = futures::future::Fuse<
            futures::future::BoxFuture<
                'static,
                Result<
                    Result<pages::Listed<Tool>, rmcp::ServiceError>,
                    tokio::time::error::Elapsed,
                >,
            >,
        >;
        let mut relist = std::pin::pin!(Relist::terminated());
        let mut relist_again = false;
        let mut last_relist: Option<tokio::time::Instant> = None;
        // At most one re-list per RELIST_INTERVAL: the first change is
        // re-listed at once, a storm of them every half second.
        let start_relist = |peer: Peer<RoleClient>, last: &mut Option<tokio::time::Instant>| {
            use futures::FutureExt;
            let now = tokio::time::Instant::now();
            let at = last.map(|l| (l + RELIST_INTERVAL).max(now)).unwrap_or(now);
            *last = Some(at);
            async move {
                tokio::time::sleep_until(at).await;
                tokio::time::timeout(timeout, pages::tools(&peer)).await
            }
            .boxed()
            .fuse()
        };
        let end: Option<String> = loop {
            tokio::select! {
                _ = &mut waiting => {
                    let why = opened.close_reason.as_ref().and_then(|r| r.lock().unwrap_or_else(|p| p.into_inner()).clone());
                    break Some(why.unwrap_or_else(|| "the server closed the connection".to_string()));
                }
                _ = stop.cancelled() => break None,
                _ = health.tick(), if ping_supported => {
                    let ping = peer.send_request(ClientRequest::PingRequest(Default::default()));
                    match tokio::time::timeout(self.shared.opts.ping_timeout, ping).await {
                        Ok(Ok(_)) => missed_pings = 0,
                        Ok(Err(rmcp::ServiceError::McpError(e))) if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND => ping_supported = false,
                        Ok(Err(e)) => break Some(format!("ping failed: {e}")),
                        Err(_) => {
                            missed_pings += 1;
                            slot.log.now("lifecycle", &format!("ping timed out ({missed_pings} in a row)"));
                            if missed_pings >= 2 {
                                break Some("the server stopped answering pings".to_string());
                            }
                        }
                    }
                }
                listed = &mut relist => {
                    match listed {
                        Ok(Ok(l)) => {
                            if let Some(w) = &l.warning {
                                self.warn(slot, w);
                            }
                            slot.state.lock().unwrap().tools = Arc::new(l.items.clone());
                            self.publish_tools(slot);
                            self.shared.cache.put(&slot.name, &slot.hash, &l.items).await;
                        }
                        Ok(Err(e)) => { slot.log.now("warning", &format!("re-listing tools after tools/list_changed failed: {e}")); }
                        Err(_) => { slot.log.now("warning", &format!("re-listing tools after tools/list_changed timed out after {timeout:?}; keeping the previous list")); }
                    }
                    if std::mem::take(&mut relist_again) {
                        relist.set(start_relist(peer.clone(), &mut last_relist));
                    }
                }
                _ = signals.wait() => {
                    let taken = signals.take();
                    if taken.tools_changed {
                        if relist.is_terminated() {
                            relist.set(start_relist(peer.clone(), &mut last_relist));
                        } else {
                            relist_again = true;
                        }
                    }
                    if taken.resources_changed {
                        let _ = self.shared.events.send(EngineEvent::ResourcesChanged { server: slot.name.clone() });
                    }
                    if taken.prompts_changed {
                        let _ = self.shared.events.send(EngineEvent::PromptsChanged { server: slot.name.clone() });
                    }
                    for uri in taken.updated {
                        let _ = self.shared.events.send(EngineEvent::ResourceUpdated { server: slot.name.clone(), uri });
                    }
                    if taken.dropped_updates > 0 {
                        slot.log.line("warning", &format!("{} resource updates dropped: the server sent more than {} at once", taken.dropped_updates, connection::MAX_PENDING_UPDATES));
                    }
                }
            }
        };
        let healthy_for = connected_at.elapsed();
        {
            let mut st = slot.state.lock().unwrap();
            st.peer = None;
            st.tools = Arc::new(vec![]);
        }
        self.publish_tools(slot);
        match end {
            None => {
                // Deliberate stop (SPEC M11): close the session (closes
                // stdin), wait the grace period, then SIGTERM/SIGKILL the group.
                ct.cancel();
                let _ = tokio::time::timeout(self.shared.opts.grace, &mut waiting).await;
                if let Some(p) = pgid {
                    terminate_group(p, self.shared.opts.grace).await;
                }
                Outcome::Stopped
            }
            Some(error) => {
                ct.cancel();
                if let Some(p) = pgid {
                    terminate_group(p, Duration::from_millis(200)).await;
                }
                Outcome::Failed {
                    failure: Failure::Ended { message: error },
                    healthy_for,
                }
            }
        }
    }

    /// What a diagnosis of `slot`'s failure starts from: its definition,
    /// its last stderr lines of this start, text on its stdout, values that
    /// resolved to nothing.
    fn facts(&self, slot: &Slot) -> doctor::Facts {
        let def = &slot.wanted.def;
        let log = slot.log.snapshot();
        let since = log
            .iter()
            .rposition(|l| l.kind == "lifecycle" && l.text.starts_with("starting "))
            .map_or(0, |i| i + 1);
        let stderr: Vec<String> = log[since..]
            .iter()
            .filter(|l| l.kind == "stderr")
            .map(|l| l.text.clone())
            .collect();
        let st = slot.state.lock().unwrap();
        let unresolved = st
            .warnings
            .iter()
            .filter(|w| w.contains("resolved to nothing") || w.contains("needs input"))
            .filter_map(|w| {
                w.split_whitespace()
                    .nth(1)
                    .map(|n| n.trim_end_matches(',').to_string())
            })
            .collect();
        doctor::Facts {
            os: Some(doctor::this_os()),
            transport: Some(def.transport),
            command: def.command.clone(),
            args: def.args.clone(),
            url: def.url.clone(),
            timeout: Some(
                def.timeout
                    .map(Duration::from_millis)
                    .unwrap_or(self.shared.opts.default_timeout),
            ),
            stderr_tail: stderr[stderr.len().saturating_sub(5)..].to_vec(),
            stdout_noise: st.stdout_noise.clone(),
            unresolved,
        }
    }

    async fn restore_subscriptions(&self, slot: &Slot, peer: &Peer<RoleClient>, timeout: Duration) {
        let uris: Vec<String> = slot.subscriptions.lock().unwrap().iter().cloned().collect();
        for uri in uris {
            match tokio::time::timeout(timeout, subscribe_request(peer, &uri, true)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    slot.log.now(
                        "warning",
                        &format!("could not restore the subscription to {uri}: {e}"),
                    );
                }
                Err(_) => {
                    slot.log.now("warning", &format!("could not restore the subscription to {uri}: no answer within {timeout:?}"));
                }
            }
        }
    }

    /// Call a tool by its sanitized name (SPEC M6). A deferred tool waits for
    /// its server. `cancel` aborts: the server gets `notifications/cancelled`.
    pub async fn call_tool(
        &self,
        name: &str,
        args: Option<Map<String, Value>>,
        cancel: Option<CancellationToken>,
    ) -> Result<CallOutcome, CallError> {
        let (server, tool) = {
            let index = self.tools();
            let e = index
                .get(name)
                .ok_or_else(|| CallError::UnknownTool(name.into()))?;
            (e.server.clone(), e.tool.clone())
        };
        self.call_raw(&server, &tool, args, cancel).await
    }

    /// Call a tool by server and raw tool name.
    pub async fn call_raw(
        &self,
        server: &str,
        tool: &str,
        args: Option<Map<String, Value>>,
        cancel: Option<CancellationToken>,
    ) -> Result<CallOutcome, CallError> {
        let slot = self
            .slot(server)
            .ok_or_else(|| CallError::Mcp(format!("unknown server \"{server}\"")))?;
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Some(a) = args {
            params = params.with_arguments(a);
        }
        let result = match self
            .forward_call(server, params, cancel.unwrap_or_default(), None)
            .await
        {
            Ok(r) => r,
            Err(ForwardError::Server(e)) => {
                return Err(CallError::Mcp(rmcp::ServiceError::McpError(e).to_string()))
            }
            Err(ForwardError::Call(e)) => return Err(e),
        };
        let is_error = result.is_error.unwrap_or(false);
        let content: Vec<Value> = result
            .content
            .iter()
            .filter_map(|c| serde_json::to_value(c).ok())
            .collect();
        let text = flatten(&content);
        Ok(CallOutcome {
            text: if is_error {
                format!("Error: {text}")
            } else {
                text
            },
            is_error,
            content,
            structured_content: result.structured_content.clone(),
            server: server.into(),
            tool: tool.into(),
            source: slot.wanted.source.clone(),
        })
    }

    /// `tools/call` with the caller's own parameters (`_meta` included) on
    /// `server`, the result as the server gave it (the gateway, SPEC G1). A
    /// deferred server is waited for; `cancel` sends
    /// `notifications/cancelled`; the call is bounded by `call_timeout` and
    /// never replayed. `sent` learns the progress token the server's
    /// `notifications/progress` for this call will carry (rmcp picks it).
    pub async fn forward_call(
        &self,
        server: &str,
        params: CallToolRequestParams,
        cancel: CancellationToken,
        sent: Option<&(dyn Fn(&rmcp::model::ProgressToken) + Send + Sync)>,
    ) -> Result<rmcp::model::CallToolResult, ForwardError> {
        let slot = self
            .slot(server)
            .ok_or_else(|| CallError::Mcp(format!("unknown server \"{server}\"")))?;
        let peer = self.wait_peer(&slot, &cancel).await?;
        let tool = params.name.to_string();
        let req = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut handle = peer
            .send_cancellable_request(req, PeerRequestOptions::no_options())
            .await
            .map_err(|e| CallError::Mcp(e.to_string()))?;
        if let Some(f) = sent {
            f(&handle.progress_token);
        }
        let limit = self.shared.opts.call_timeout;
        let resp = tokio::select! {
            r = &mut handle.rx => r,
            _ = cancel.cancelled() => {
                let _ = handle.cancel(Some("cancelled by the user".into())).await;
                return Err(CallError::Aborted.into());
            }
            _ = tokio::time::sleep(limit) => {
                let _ = handle.cancel(Some("timed out".into())).await;
                return Err(CallError::Mcp(format!("server \"{server}\" did not answer tools/call {tool} within {limit:?} (the call was cancelled)")).into());
            }
        };
        // Never replayed: an ambiguous failure is reported, not retried.
        match resp {
            Ok(Ok(ServerResult::CallToolResult(r))) => Ok(r),
            Ok(Ok(other)) => Err(CallError::Mcp(format!("unexpected response {other:?}")).into()),
            Ok(Err(rmcp::ServiceError::McpError(e))) => Err(ForwardError::Server(e)),
            Ok(Err(e)) => Err(CallError::Mcp(e.to_string()).into()),
            Err(_) => Err(CallError::Mcp(
                "the connection closed before the server answered".into(),
            )
            .into()),
        }
    }

    /// Any other request to a connected `server`, under its timeout, the
    /// answer as the server gave it (the gateway's resources, prompts and
    /// completions). `what` names the request in a timeout's message.
    pub async fn forward(
        &self,
        server: &str,
        what: &str,
        req: ClientRequest,
        cancel: CancellationToken,
    ) -> Result<ServerResult, ForwardError> {
        let peer = self
            .peer_of(server)
            .map_err(|e| CallError::Mcp(e.to_string()))?;
        let limit = self.request_timeout(server);
        let answer = tokio::select! {
            r = tokio::time::timeout(limit, peer.send_request(req)) => r,
            _ = cancel.cancelled() => return Err(CallError::Aborted.into()),
        };
        match answer {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(rmcp::ServiceError::McpError(e))) => Err(ForwardError::Server(e)),
            Ok(Err(e)) => Err(CallError::Mcp(self.redact(server, &e.to_string())).into()),
            Err(_) => Err(CallError::Mcp(format!(
                "server \"{server}\" did not answer {what} within {limit:?}"
            ))
            .into()),
        }
    }

    /// The tool trust (pins, approval modes) gateways on this manager follow.
    pub fn set_trust(&self, cell: Option<Arc<crate::tool_trust::TrustCell>>) {
        *self.shared.trust.write().unwrap() = cell;
    }

    pub fn trust(&self) -> Option<Arc<crate::tool_trust::TrustCell>> {
        self.shared.trust.read().unwrap().clone()
    }

    /// The definition a managed server runs (as written, unexpanded).
    pub fn server_def(&self, server: &str) -> Option<ServerDef> {
        Some(self.slot(server)?.wanted.def.clone())
    }

    /// The `instructions` the server sent at `initialize`, while connected.
    pub fn server_instructions(&self, server: &str) -> Option<String> {
        let slot = self.slot(server)?;
        let st = slot.state.lock().unwrap();
        st.peer.as_ref()?.peer_info()?.instructions.clone()
    }

    /// Whether the connected server offers prompts, and resources.
    pub fn offers(&self, server: &str) -> (bool, bool) {
        let Some(slot) = self.slot(server) else {
            return (false, false);
        };
        let st = slot.state.lock().unwrap();
        let caps = st
            .peer
            .as_ref()
            .and_then(|p| p.peer_info())
            .map(|i| i.capabilities.clone());
        caps.map(|c| (c.prompts.is_some(), c.resources.is_some()))
            .unwrap_or((false, false))
    }

    /// Every server with tools, as the tool review reads it (tools only;
    /// prompts and templates are listed by whoever needs them).
    pub fn trust_inputs(&self) -> Vec<crate::tool_trust::ServerInput> {
        let slots: Vec<Arc<Slot>> = self
            .shared
            .slots
            .read()
            .unwrap()
            .values()
            .cloned()
            .collect();
        slots
            .iter()
            .filter_map(|s| {
                let st = s.state.lock().unwrap();
                if st.tools.is_empty() && st.peer.is_none() {
                    return None;
                }
                Some(crate::tool_trust::ServerInput {
                    server: s.name.clone(),
                    identity: crate::tool_trust::pins::identity(&s.wanted.def),
                    tools: st.tools.clone(),
                    extra: None,
                    instructions: st
                        .peer
                        .as_ref()
                        .and_then(|p| p.peer_info())
                        .and_then(|i| i.instructions.clone()),
                    deferred: st.deferred,
                })
            })
            .collect()
    }

    /// `server`'s tools as it listed them (or as cached, while deferred).
    pub fn server_tools(&self, server: &str) -> Option<Arc<Vec<Tool>>> {
        Some(self.slot(server)?.state.lock().unwrap().tools.clone())
    }

    /// The server's peer, waiting while it connects (a deferred call).
    async fn wait_peer(
        &self,
        slot: &Slot,
        cancel: &CancellationToken,
    ) -> Result<Peer<RoleClient>, CallError> {
        // Fast path: connected now.
        if let Some(p) = slot.state.lock().unwrap().peer.clone() {
            return Ok(p);
        }
        let mut rx = slot.status.subscribe();
        let limit = slot
            .wanted
            .def
            .timeout
            .map(Duration::from_millis)
            .unwrap_or(self.shared.opts.default_timeout);
        let settled = tokio::select! {
            r = tokio::time::timeout(limit, rx.wait_for(|s| !s.is_pending())) => r.ok().and_then(|r| r.ok()).map(|s| s.clone()),
            _ = cancel.cancelled() => return Err(CallError::Aborted),
        };
        match settled {
            Some(ServerStatus::Connected) => {}
            Some(ServerStatus::Disabled) => return Err(CallError::Disabled(slot.name.clone())),
            Some(s) => {
                let why = match s {
                    ServerStatus::Failed { error } => error,
                    ServerStatus::NeedsAuth { message } => message,
                    other => other.label().to_string(),
                };
                return Err(CallError::Mcp(format!(
                    "server \"{}\" is not connected: {why}",
                    slot.name
                )));
            }
            None => {
                return Err(CallError::Mcp(format!(
                    "server \"{}\" did not connect within {limit:?}",
                    slot.name
                )))
            }
        }
        slot.state
            .lock()
            .unwrap()
            .peer
            .clone()
            .ok_or_else(|| CallError::Mcp(format!("server \"{}\" is not connected", slot.name)))
    }

    /// The connected peer of `server`, or a clear error (SPEC M8).
    fn peer_of(&self, server: &str) -> Result<Peer<RoleClient>, RegistryError> {
        let slot = self
            .slot(server)
            .ok_or_else(|| RegistryError::Unknown(server.into()))?;
        let peer = slot.state.lock().unwrap().peer.clone();
        peer.ok_or_else(|| RegistryError::NotConnected(server.into()))
    }

    /// One request to `server` under its timeout (the server's `timeout`,
    /// else `default_timeout`): a server that never answers gets an error
    /// naming it and the request, and blocks nobody else (SPEC P5). Error
    /// texts have the server's secrets masked.
    async fn ask<T>(
        &self,
        server: &str,
        what: &str,
        req: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, RegistryError> {
        let limit = self.request_timeout(server);
        let answer = tokio::time::timeout(limit, req).await;
        self.answer(server, what, limit, answer)
    }

    fn request_timeout(&self, server: &str) -> Duration {
        self.slot(server)
            .and_then(|s| s.wanted.def.timeout)
            .map(Duration::from_millis)
            .unwrap_or(self.shared.opts.default_timeout)
    }

    fn answer<T>(
        &self,
        server: &str,
        what: &str,
        limit: Duration,
        answer: Result<Result<T, rmcp::ServiceError>, tokio::time::error::Elapsed>,
    ) -> Result<T, RegistryError> {
        match answer {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(RegistryError::Mcp(self.redact(server, &e.to_string()))),
            Err(_) => Err(RegistryError::Mcp(format!(
                "server \"{server}\" did not answer {what} within {limit:?}"
            ))),
        }
    }

    /// A list's "stopped early" warning goes to the server's log.
    fn note_listed<T>(&self, server: &str, l: pages::Listed<T>) -> Vec<T> {
        if let (Some(w), Some(slot)) = (&l.warning, self.slot(server)) {
            self.warn(&slot, w);
        }
        l.items
    }

    /// Resources and resource templates, all pages.
    pub async fn list_resources(&self, server: &str) -> Result<Value, RegistryError> {
        let peer = self.peer_of(server)?;
        let resources = self
            .ask(server, "resources/list", pages::resources(&peer))
            .await?;
        let resources = self.note_listed(server, resources);
        let limit = self.request_timeout(server);
        let templates = match tokio::time::timeout(limit, pages::resource_templates(&peer)).await {
            // Servers without templates answer "method not found".
            Ok(Err(rmcp::ServiceError::McpError(e)))
                if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
            {
                vec![]
            }
            other => {
                let t = self.answer(server, "resources/templates/list", limit, other)?;
                self.note_listed(server, t)
            }
        };
        Ok(serde_json::json!({ "resources": resources, "resourceTemplates": templates }))
    }

    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, RegistryError> {
        let peer = self.peer_of(server)?;
        let p: rmcp::model::ReadResourceRequestParams =
            serde_json::from_value(serde_json::json!({ "uri": uri })).expect("params");
        let r = self
            .ask(server, "resources/read", peer.read_resource(p))
            .await?;
        Ok(serde_json::to_value(r).unwrap_or_default())
    }

    pub async fn list_prompts(&self, server: &str) -> Result<Value, RegistryError> {
        let peer = self.peer_of(server)?;
        let p = self
            .ask(server, "prompts/list", pages::prompts(&peer))
            .await?;
        Ok(serde_json::json!({ "prompts": self.note_listed(server, p) }))
    }

    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<Value, RegistryError> {
        let peer = self.peer_of(server)?;
        // Prompt arguments are strings in MCP; numbers and booleans are sent as text.
        let args: Option<Map<String, Value>> = args.map(|a| {
            a.into_iter()
                .map(|(k, v)| match v {
                    Value::String(_) => (k, v),
                    other => (k, Value::String(other.to_string())),
                })
                .collect()
        });
        let p: rmcp::model::GetPromptRequestParams =
            serde_json::from_value(serde_json::json!({ "name": name, "arguments": args }))
                .expect("params");
        let r = self.ask(server, "prompts/get", peer.get_prompt(p)).await?;
        Ok(serde_json::to_value(r).unwrap_or_default())
    }

    /// Subscribe to a resource; kept across reconnects. Updates arrive as
    /// `EngineEvent::ResourceUpdated`.
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<(), RegistryError> {
        let peer = self.peer_of(server)?;
        self.ask(
            server,
            "resources/subscribe",
            subscribe_request(&peer, uri, true),
        )
        .await?;
        if let Some(s) = self.slot(server) {
            s.subscriptions.lock().unwrap().insert(uri.to_string());
        }
        Ok(())
    }

    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<(), RegistryError> {
        if let Some(s) = self.slot(server) {
            s.subscriptions.lock().unwrap().remove(uri);
        }
        let peer = self.peer_of(server)?;
        self.ask(
            server,
            "resources/unsubscribe",
            subscribe_request(&peer, uri, false),
        )
        .await
    }

    /// The folders offered to servers as roots (SPEC M13); connected servers
    /// get `notifications/roots/list_changed`.
    pub async fn set_roots(&self, folders: &[PathBuf]) {
        let roots: Vec<(String, Option<String>)> = folders
            .iter()
            .map(|p| {
                let uri = format!("file://{}", p.to_string_lossy());
                (uri, p.file_name().map(|n| n.to_string_lossy().to_string()))
            })
            .collect();
        {
            let mut r = self.shared.client_hooks.roots.write().unwrap();
            if *r == roots {
                return;
            }
            *r = roots;
        }
        let peers: Vec<Peer<RoleClient>> = self
            .shared
            .slots
            .read()
            .unwrap()
            .values()
            .filter_map(|s| s.state.lock().unwrap().peer.clone())
            .collect();
        // Told in the background: a server that does not read its input
        // must not hold up the caller (an edit, the file watcher).
        let timeout = self.shared.opts.ping_timeout;
        self.shared.tracker.spawn(async move {
            for p in peers {
                #[allow(deprecated)]
                let _ = tokio::time::timeout(timeout, p.notify_roots_list_changed()).await;
            }
        });
    }

    /// Where stored sign-ins are read from when servers connect (the OS
    /// keychain in the app and CLI); `None` injects no OAuth tokens.
    /// With a vault, stored sign-ins are also refreshed ahead of expiry on
    /// a timer (see `keepalive`).
    pub fn set_vault(&self, vault: Option<crate::auth::vault::Vault>) {
        let some = vault.is_some();
        self.shared.secrets.set_keychain(vault.clone());
        *self.shared.vault.write().unwrap() = vault;
        if some && tokio::runtime::Handle::try_current().is_ok() {
            self.start_keepalive();
        }
    }

    pub fn vault(&self) -> Option<crate::auth::vault::Vault> {
        self.shared.vault.read().unwrap().clone()
    }

    /// Who answers servers' elicitation requests; `None` declines them all.
    pub fn set_elicitation_handler(&self, handler: Option<ElicitationHandler>) {
        *self.shared.client_hooks.elicitation.write().unwrap() = handler;
    }

    /// Who answers servers' elicitation requests now (a gateway wraps it).
    pub fn elicitation_handler(&self) -> Option<ElicitationHandler> {
        self.shared.client_hooks.elicitation.read().unwrap().clone()
    }

    /// Who answers servers' `sampling/createMessage` (a gateway asks its
    /// clients); `None` refuses them. Servers connected from now on are
    /// told sampling is offered while one is set.
    pub fn set_sampling_handler(&self, handler: Option<SamplingHandler>) {
        *self.shared.client_hooks.sampling.write().unwrap() = handler;
    }

    /// Who answers servers' sampling requests now (a gateway wraps it).
    pub fn sampling_handler(&self) -> Option<SamplingHandler> {
        self.shared.client_hooks.sampling.read().unwrap().clone()
    }

    /// Who hears servers' `notifications/progress` (the gateway forwards them).
    pub fn set_progress_handler(&self, handler: Option<ProgressHandler>) {
        *self.shared.client_hooks.progress.write().unwrap() = handler;
    }

    /// Stop a server deliberately (it stays registered, `Disconnected`, and
    /// is never restarted by the supervisor). Waits until it is down.
    pub async fn stop(&self, name: &str) -> Result<(), RegistryError> {
        let slot = self
            .slot(name)
            .ok_or_else(|| RegistryError::Unknown(name.into()))?;
        let _op = slot.op.lock().await;
        self.stop_slot(&slot).await;
        Ok(())
    }

    async fn stop_slot(&self, slot: &Arc<Slot>) {
        let task = {
            let mut c = slot.control.lock().unwrap();
            c.stop.cancel();
            c.task.take()
        };
        if let Some(t) = task {
            let _ = t.await;
        }
        // A server that never got a session may still have a group.
        let pgid = slot.state.lock().unwrap().pgid.take();
        if let Some(p) = pgid {
            if connection::group_alive(p) {
                terminate_group(p, Duration::ZERO).await;
            }
        }
        if !matches!(
            *slot.status.borrow(),
            ServerStatus::Disconnected | ServerStatus::Disabled
        ) {
            self.set_status(slot, ServerStatus::Disconnected);
        }
    }

    /// Start a registered server that is stopped, failed or disabled-at-runtime.
    pub async fn start_server(&self, name: &str) -> Result<(), RegistryError> {
        let slot = self
            .slot(name)
            .ok_or_else(|| RegistryError::Unknown(name.into()))?;
        let _op = slot.op.lock().await;
        self.stop_slot(&slot).await;
        self.launch(&slot);
        Ok(())
    }

    /// Stop and start again; the attempt counter starts over.
    pub async fn restart(&self, name: &str) -> Result<(), RegistryError> {
        self.start_server(name).await
    }

    /// Turn a server off at runtime (the config is the writer's business).
    pub async fn disable(&self, name: &str) -> Result<(), RegistryError> {
        let slot = self
            .slot(name)
            .ok_or_else(|| RegistryError::Unknown(name.into()))?;
        let _op = slot.op.lock().await;
        self.stop_slot(&slot).await;
        self.set_status(&slot, ServerStatus::Disabled);
        Ok(())
    }

    pub async fn enable(&self, name: &str) -> Result<(), RegistryError> {
        self.start_server(name).await
    }

    /// Disconnect one server and forget it: close its session, end its
    /// process group, remove its tools (SPEC M11). Waits until it is down.
    pub async fn disconnect(&self, name: &str) -> bool {
        let Some(slot) = self.slot(name) else {
            return false;
        };
        let _op = slot.op.lock().await;
        self.stop_slot(&slot).await;
        self.shared.slots.write().unwrap().shift_remove(name);
        self.reindex();
        let _ = self.shared.events.send(EngineEvent::Removed {
            server: name.into(),
        });
        true
    }

    pub async fn remove(&self, name: &str) -> bool {
        self.disconnect(name).await
    }

    /// Replace a server's definition (SPEC M10): stop it, start the new one;
    /// if the replacement does not connect, restore and restart the previous
    /// definition and return the replacement's error.
    pub async fn update(&self, wanted: Wanted) -> Result<(), RegistryError> {
        let name = wanted.def.name.clone();
        let old = self
            .slot(&name)
            .ok_or_else(|| RegistryError::Unknown(name.clone()))?;
        let _op = old.op.lock().await;
        self.stop_slot(&old).await;
        let new = self.new_slot(wanted);
        self.shared
            .slots
            .write()
            .unwrap()
            .insert(name.clone(), new.clone());
        if !new.wanted.def.enabled {
            self.set_status(&new, ServerStatus::Disabled);
            self.reindex();
            return Ok(());
        }
        self.launch(&new);
        let mut rx = new.status.subscribe();
        let settled = rx
            .wait_for(|s| !matches!(s, ServerStatus::Connecting))
            .await
            .map(|s| s.clone());
        match settled {
            Ok(ServerStatus::Connected) => Ok(()),
            other => {
                let error = match other {
                    Ok(ServerStatus::Failed { error }) => error,
                    Ok(ServerStatus::NeedsAuth { message }) => message,
                    _ => new
                        .state
                        .lock()
                        .unwrap()
                        .last_error
                        .clone()
                        .unwrap_or_else(|| "the new definition did not connect".into()),
                };
                self.stop_slot(&new).await;
                let restored = self.new_slot(old.wanted.clone());
                self.shared
                    .slots
                    .write()
                    .unwrap()
                    .insert(name.clone(), restored.clone());
                if restored.wanted.def.enabled {
                    self.launch(&restored);
                } else {
                    self.set_status(&restored, ServerStatus::Disabled);
                }
                Err(RegistryError::UpdateFailed {
                    server: name,
                    error,
                })
            }
        }
    }

    /// Make the running set match `wanted` (SPEC M12): only servers whose
    /// effective definition changed are touched; the rest keep their
    /// connection and process. Waits for the replacements' handshakes; each
    /// server is its own step, so a slow one holds up no other. Reconciles
    /// may overlap: every step applies the newest wish for its server.
    pub async fn reconcile(&self, wanted: Vec<Wanted>) -> ReconcileReport {
        let names = self.wish(wanted);
        self.drive(names).await
    }

    /// `reconcile` without waiting: the wish is recorded now (a later one
    /// wins), the starts, stops and handshakes happen in the background and
    /// end with a `Reconciled` event.
    pub fn reconcile_in_background(&self, wanted: Vec<Wanted>) {
        if self.shared.closing.is_cancelled() {
            return;
        }
        let names = self.wish(wanted);
        let me = self.clone();
        let closing = self.shared.closing.clone();
        self.shared.background.spawn(async move {
            tokio::select! {
                _ = me.drive(names) => {}
                _ = closing.cancelled() => {}
            }
        });
    }

    /// Record `wanted` as the newest wish; returns every name it concerns
    /// (wanted now, or registered and no longer wanted).
    fn wish(&self, wanted: Vec<Wanted>) -> Vec<String> {
        let mut names: Vec<String> = self.server_names();
        let mut desired = HashMap::new();
        for w in wanted {
            if !names.contains(&w.def.name) {
                names.push(w.def.name.clone());
            }
            desired.insert(w.def.name.clone(), w);
        }
        *self.shared.desired.lock().unwrap() = desired;
        names
    }

    async fn drive(&self, names: Vec<String>) -> ReconcileReport {
        let steps = futures::future::join_all(names.iter().map(|n| self.step(n))).await;
        let mut report = ReconcileReport::default();
        for (name, step) in names.into_iter().zip(steps) {
            match step {
                Step::Nothing => {}
                Step::Kept => report.kept.push(name),
                Step::Started => report.started.push(name),
                Step::Stopped => report.stopped.push(name),
                Step::Updated => report.updated.push(name),
                Step::Failed(e) => report.failed.push(ServerError {
                    server: name,
                    error: e.to_string(),
                }),
            }
        }
        let _ = self.shared.events.send(EngineEvent::Reconciled {
            report: report.clone(),
        });
        report
    }

    fn wished(&self, name: &str) -> Option<Wanted> {
        self.shared.desired.lock().unwrap().get(name).cloned()
    }

    /// Bring one server in line with the newest wish for it. A server that
    /// is already as wished is not waited for, even while an earlier step
    /// still runs on it (a handshake in progress): that step checks the
    /// newest wish again when it ends, and goes on until they agree.
    async fn step(&self, name: &str) -> Step {
        let key = |w: &Option<Wanted>| w.as_ref().map(Wanted::launch_key);
        let as_wished = |want: &Option<Wanted>| match (self.slot(name), want) {
            (None, None) => Some(Step::Nothing),
            (Some(slot), Some(w)) if slot.wanted.launch_key() == w.launch_key() => Some(Step::Kept),
            _ => None,
        };
        if let Some(done) = as_wished(&self.wished(name)) {
            return done;
        }
        let lock = self
            .shared
            .steps
            .lock()
            .unwrap()
            .entry(name.to_string())
            .or_default()
            .clone();
        let _g = lock.lock().await;
        let mut result = Step::Nothing;
        loop {
            if self.shared.closing.is_cancelled() {
                return result;
            }
            let want = self.wished(name);
            let now = match as_wished(&want) {
                Some(done) => done,
                None => match (self.slot(name), want.clone()) {
                    (Some(_), None) => {
                        self.disconnect(name).await;
                        Step::Stopped
                    }
                    (None, Some(w)) => {
                        self.add_all(vec![w]);
                        Step::Started
                    }
                    (_, Some(w)) => match self.update(w).await {
                        Ok(()) => Step::Updated,
                        Err(e) => Step::Failed(e),
                    },
                    (None, None) => Step::Nothing,
                },
            };
            result = match (result, now) {
                (_, Step::Failed(e)) => Step::Failed(e),
                (Step::Nothing | Step::Kept, now) => now,
                (before, _) => before,
            };
            if key(&self.wished(name)) == key(&want) {
                return result;
            }
        }
    }

    /// Disconnect every server, in parallel, and wait for every task.
    pub async fn shutdown(&self) {
        // Reconciles still running would start servers behind our back.
        self.shared.closing.cancel();
        self.shared.background.close();
        self.shared.background.wait().await;
        let names = self.server_names();
        futures::future::join_all(names.iter().map(|n| self.disconnect(n))).await;
        self.shared.tracker.close();
        self.shared.tracker.wait().await;
        // Every group is ended: forget them (this run's record goes with them).
        orphans::settle().await;
    }
}

/// A big tool list leaves megabytes of freed parser buffers behind (the
/// pages as received, before descriptions were cut); glibc keeps such memory
/// unless asked to give it back (measured: 76 → 69 MiB peak with a server of
/// 10,000 tools in pages of 1,000 beside twenty small ones).
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the OS.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Content flattened to display text: text parts joined, others described.
pub fn flatten(content: &[Value]) -> String {
    content
        .iter()
        .map(|c| match c.get("type").and_then(Value::as_str) {
            Some("text") => c
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            Some("image") => format!(
                "[image: {}]",
                c.get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
            ),
            Some("audio") => format!(
                "[audio: {}]",
                c.get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
            ),
            Some("resource") => {
                let r = c.get("resource").cloned().unwrap_or_default();
                r.get("text")
                    .and_then(Value::as_str)
                    .map(String::from)
                    .unwrap_or_else(|| {
                        format!(
                            "[resource: {}]",
                            r.get("uri").and_then(Value::as_str).unwrap_or("")
                        )
                    })
            }
            Some("resource_link") => format!(
                "[resource: {}]",
                c.get("uri").and_then(Value::as_str).unwrap_or("")
            ),
            _ => c.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
