//! The manager (SPEC M1–M6, M11): connects every enabled server in
//! parallel, keeps one explicit state per server, names their tools, routes
//! calls, and tears sessions and process groups down. Locks are plain
//! `std::sync` locks held only for quick reads and swaps, never across an
//! await that talks to a server.

pub mod connection;
pub mod logbuf;
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
use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::secrets::SecretResolver;
use crate::config::vars::{expand, VarContext};
use crate::config::{ServerDef, Transport};
use crate::events::{EngineEvent, ServerStatus};
use crate::launch::CommandResolver;
use crate::naming::{assign_names, patch_schema, Collision, ToolRef};
use connection::{kill_group, terminate_group, ConnectError, Launch, Signal, SwitchboardClient};
use logbuf::LogBuffer;
use tool_cache::{config_hash, ToolCache};

pub const DEFAULT_GATE: Duration = Duration::from_millis(250);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

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
}

impl ManagerOptions {
    pub fn for_host(host: &crate::host::Host) -> Self {
        ManagerOptions {
            cache_path: Some(host.join(&host.join(&host.cache_dir(), "switchboard"), "tool-cache.json")),
            gate: DEFAULT_GATE,
            default_timeout: DEFAULT_TIMEOUT,
            grace: DEFAULT_GRACE,
            env: host.vars.clone(),
            home: host.home.clone(),
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
}

impl Wanted {
    pub fn new(def: ServerDef) -> Self {
        Wanted { def, source: None, project: None }
    }

    /// The servers discovery says should run: each name's valid winner that
    /// Switchboard can start (disabled ones included, to show as disabled).
    pub fn from_discovery(d: &crate::discovery::Discovery) -> Vec<Wanted> {
        d.servers
            .iter()
            .filter(|s| s.winner.is_valid() && s.winner.not_runnable.is_none())
            .map(|s| Wanted {
                def: s.winner.def.clone(),
                source: Some(s.winner.source.clone()),
                project: d.source(&s.winner.source).and_then(|src| src.project.clone()),
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
}

/// One server's runtime record.
pub struct Slot {
    pub name: String,
    pub wanted: Wanted,
    hash: String,
    status: watch::Sender<ServerStatus>,
    state: Mutex<SlotState>,
    pub logs: Arc<LogBuffer>,
    stop: CancellationToken,
}

/// A tool as the outside world sees it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// Sanitized, unique, at most 64 characters.
    pub name: String,
    pub server: String,
    /// The tool's raw name on its server.
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Value,
    /// From the tool cache; the server is still connecting.
    pub deferred: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
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
#[serde(rename_all = "camelCase")]
pub struct ServerState {
    pub name: String,
    pub status: ServerStatus,
    pub transport: Transport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub tool_count: usize,
    pub deferred: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_used: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    pub warnings: Vec<String>,
}

/// The result of the startup gate (SPEC M3).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StartupReport {
    pub connected: Vec<String>,
    pub failed: Vec<ServerError>,
    /// Pending servers whose tools came from the cache.
    pub deferred: Vec<String>,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ServerError {
    pub server: String,
    pub error: String,
}

/// A tool call's result, flattened for display (SPEC M6).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallOutcome {
    /// Text content joined; `Error: …` when the server reported an error.
    pub text: String,
    pub is_error: bool,
    pub content: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    pub server: String,
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
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
}

#[derive(Clone)]
pub struct Manager {
    shared: Arc<Shared>,
}

impl Manager {
    pub fn new(opts: ManagerOptions) -> Manager {
        let (events, _) = broadcast::channel(4096);
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
            }),
        }
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

    /// The one place a status changes: stored, logged, published.
    fn set_status(&self, slot: &Slot, status: ServerStatus) {
        let detail = match &status {
            ServerStatus::Failed { error } => format!("failed: {error}"),
            ServerStatus::NeedsAuth { message } => format!("needs auth: {message}"),
            ServerStatus::Restarting { attempt, of } => format!("restarting (attempt {attempt}/{of})"),
            s => s.label().to_string(),
        };
        let line = slot.logs.push("lifecycle", &detail);
        slot.status.send_replace(status.clone());
        let _ = self.shared.events.send(EngineEvent::Log { server: slot.name.clone(), line });
        let _ = self.shared.events.send(EngineEvent::Status { server: slot.name.clone(), status });
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
        })
    }

    pub fn states(&self) -> Vec<ServerState> {
        self.server_names().iter().filter_map(|n| self.state(n)).collect()
    }

    pub fn logs(&self, name: &str) -> Option<Vec<crate::events::LogLine>> {
        self.slot(name).map(|s| s.logs.snapshot())
    }

    pub fn tools(&self) -> Arc<ToolIndex> {
        self.shared.index.read().unwrap().clone()
    }

    /// Rebuild names over every server's current tool slice.
    fn reindex(&self) {
        let slots: Vec<Arc<Slot>> = self.shared.slots.read().unwrap().values().cloned().collect();
        let mut refs = vec![];
        let mut meta = vec![];
        for s in &slots {
            let st = s.state.lock().unwrap();
            for t in st.tools.iter() {
                refs.push(ToolRef { server: s.name.clone(), tool: t.name.to_string() });
                meta.push((t.description.as_ref().map(|d| d.to_string()), Value::Object((*t.input_schema).clone()), st.deferred));
            }
        }
        let naming = assign_names(&refs);
        let mut index = ToolIndex { tools: Vec::with_capacity(refs.len()), collisions: naming.collisions, by_name: HashMap::with_capacity(refs.len()) };
        for ((r, name), (description, schema, deferred)) in refs.into_iter().zip(naming.names).zip(meta) {
            index.by_name.insert(name.clone(), index.tools.len());
            index.tools.push(ToolEntry { name, server: r.server, tool: r.tool, description, input_schema: patch_schema(schema), deferred });
        }
        *self.shared.index.write().unwrap() = Arc::new(index);
    }

    fn publish_tools(&self, slot: &Slot) {
        let (count, deferred) = {
            let st = slot.state.lock().unwrap();
            (st.tools.len(), st.deferred)
        };
        self.reindex();
        let _ = self.shared.events.send(EngineEvent::Tools { server: slot.name.clone(), count, deferred });
    }

    /// Register servers and connect the enabled ones in parallel. Returns
    /// at once; see `start` for the gated variant.
    pub fn add_all(&self, wanted: Vec<Wanted>) -> Vec<Arc<Slot>> {
        let mut started = vec![];
        for w in wanted {
            let name = w.def.name.clone();
            if self.slot(&name).is_some() {
                continue;
            }
            let slot = Arc::new(Slot {
                name: name.clone(),
                hash: config_hash(&w.def),
                status: watch::channel(ServerStatus::Disconnected).0,
                state: Mutex::new(SlotState::default()),
                logs: Arc::new(LogBuffer::default()),
                stop: CancellationToken::new(),
                wanted: w,
            });
            self.shared.slots.write().unwrap().insert(name, slot.clone());
            if slot.wanted.def.enabled {
                // Mark pending before returning so the gate sees it.
                self.set_status(&slot, ServerStatus::Connecting);
                let me = self.clone();
                let s = slot.clone();
                self.shared.tracker.spawn(async move { me.run(s).await });
                started.push(slot);
            } else {
                self.set_status(&slot, ServerStatus::Disabled);
            }
        }
        started
    }

    /// Start every server and wait for the startup gate (SPEC M3): until all
    /// settle or the gate passes; then pending servers with a cache entry
    /// offer deferred tools and the others are waited for.
    pub async fn start(&self, wanted: Vec<Wanted>) -> StartupReport {
        let t0 = Instant::now();
        let started = self.add_all(wanted);
        let deadline = tokio::time::Instant::now() + self.shared.opts.gate;
        futures::future::join_all(started.iter().map(|s| {
            let mut rx = s.status.subscribe();
            async move {
                let _ = tokio::time::timeout_at(deadline, rx.wait_for(|st| !st.is_pending())).await;
            }
        }))
        .await;
        let mut report = StartupReport::default();
        let mut wait_for = vec![];
        for s in &started {
            if !s.status.borrow().is_pending() {
                continue;
            }
            match self.shared.cache.get(&s.name, &s.hash).await {
                Some(tools) => {
                    let applied = {
                        let mut st = s.state.lock().unwrap();
                        // Only while still pending: a live list always wins.
                        if s.status.borrow().is_pending() {
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
        futures::future::join_all(wait_for.iter().map(|s| {
            let mut rx = s.status.subscribe();
            async move {
                let _ = rx.wait_for(|st| !st.is_pending()).await;
            }
        }))
        .await;
        for s in &started {
            match &*s.status.borrow() {
                ServerStatus::Connected => report.connected.push(s.name.clone()),
                ServerStatus::Failed { error } => report.failed.push(ServerError { server: s.name.clone(), error: error.clone() }),
                ServerStatus::NeedsAuth { message } => report.failed.push(ServerError { server: s.name.clone(), error: message.clone() }),
                _ => {}
            }
        }
        report.elapsed_ms = t0.elapsed().as_millis() as u64;
        report
    }

    /// Wait until no server is connecting or restarting.
    pub async fn settle(&self) {
        let slots: Vec<Arc<Slot>> = self.shared.slots.read().unwrap().values().cloned().collect();
        futures::future::join_all(slots.iter().map(|s| {
            let mut rx = s.status.subscribe();
            async move {
                let _ = rx.wait_for(|st| !st.is_pending()).await;
            }
        }))
        .await;
    }

    /// Resolve variables, secrets and the command for one launch.
    async fn prepare(&self, slot: &Slot) -> Result<Launch, String> {
        let w = &slot.wanted;
        let cx = VarContext {
            env: self.shared.opts.env.clone(),
            workspace_folder: w.project.as_ref().map(|p| p.to_string_lossy().to_string()),
            user_home: Some(self.shared.opts.home.to_string_lossy().to_string()),
            inputs: HashMap::new(),
        };
        let mut def = w.def.clone();
        let x = |s: &str| expand(s, &cx).value;
        def.command = def.command.as_deref().map(x);
        def.args = def.args.iter().map(|a| x(a)).collect();
        def.cwd = def.cwd.as_deref().map(x);
        def.url = def.url.as_deref().map(x);
        if let Some(u) = &def.url {
            crate::config::validate::check_url(u).map_err(|e| format!("url {e}"))?;
        }
        let (env, mut warnings) = self.shared.secrets.resolve_map("env", &def.env).await;
        let (headers, w2) = self.shared.secrets.resolve_map("header", &def.headers).await;
        warnings.extend(w2);
        for w in &warnings {
            let _ = self.shared.events.send(EngineEvent::Warning { server: slot.name.clone(), message: w.clone() });
            slot.logs.push("warning", w);
        }
        slot.state.lock().unwrap().warnings = warnings;
        let commands = self
            .shared
            .commands
            .get_or_init(|| async {
                let path = self.shared.opts.env.get("PATH").map(std::ffi::OsString::from);
                let home = Some(self.shared.opts.home.clone());
                let r = tokio::task::spawn_blocking(move || CommandResolver::new(path, home, crate::launch::login_shell_path().map(String::from))).await;
                Arc::new(r.expect("command resolver"))
            })
            .await
            .clone();
        let program = match def.transport {
            Transport::Stdio => {
                let cmd = def.command.clone().unwrap_or_default();
                let cwd = def.cwd.as_ref().map(PathBuf::from);
                commands.resolve(&cmd, cwd.as_deref())?
            }
            _ => PathBuf::new(),
        };
        Ok(Launch { def, program, path_env: Some(commands.search_path()), env, headers })
    }

    /// One connection's whole life: connect, list, serve signals, tear down.
    async fn run(&self, slot: Arc<Slot>) {
        let launch = match self.prepare(&slot).await {
            Ok(l) => l,
            Err(e) => return self.set_status(&slot, ServerStatus::Failed { error: e }),
        };
        if let Some(b) = (launch.def.transport == Transport::Stdio).then(|| launch.program.clone()) {
            slot.logs.push("lifecycle", &format!("starting {}", b.display()));
            slot.state.lock().unwrap().binary = Some(b);
        }
        let timeout = launch.def.timeout.map(Duration::from_millis).unwrap_or(self.shared.opts.default_timeout);
        let started = tokio::time::Instant::now();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let events = self.shared.events.clone();
        let name = slot.name.clone();
        let on_log = move |kind: &str, text: &str| {
            let line = crate::events::LogLine { at: crate::events::now_ms(), kind: kind.into(), text: text.into() };
            let _ = events.send(EngineEvent::Log { server: name.clone(), line });
        };
        let opened = tokio::select! {
            r = connection::open(launch, SwitchboardClient::new(tx), slot.logs.clone(), on_log, timeout) => r,
            _ = slot.stop.cancelled() => return self.set_status(&slot, ServerStatus::Disconnected),
        };
        let opened = match opened {
            Ok(o) => o,
            Err(ConnectError::Auth { message }) => return self.set_status(&slot, ServerStatus::NeedsAuth { message }),
            Err(e) => return self.set_status(&slot, ServerStatus::Failed { error: e.to_string() }),
        };
        let session = opened.session;
        let peer = session.peer().clone();
        let pgid = opened.pgid;
        let remaining = timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(100));
        let tools = tokio::select! {
            r = tokio::time::timeout(remaining, peer.list_all_tools()) => r,
            _ = slot.stop.cancelled() => Ok(Err(rmcp::ServiceError::Cancelled { reason: None })),
        };
        let tools = match tools {
            Ok(Ok(t)) => t,
            failed => {
                let error = match failed {
                    Err(_) => format!("timed out after {timeout:?} listing tools"),
                    Ok(Err(e)) => format!("tools/list failed: {e}"),
                    Ok(Ok(_)) => unreachable!(),
                };
                let ct = session.cancellation_token();
                ct.cancel();
                kill_group(pgid);
                return self.set_status(&slot, if slot.stop.is_cancelled() { ServerStatus::Disconnected } else { ServerStatus::Failed { error } });
            }
        };
        {
            let mut st = slot.state.lock().unwrap();
            st.peer = Some(peer.clone());
            st.tools = Arc::new(tools.clone());
            st.deferred = false;
            st.pgid = pgid;
            st.transport_used = Some(opened.transport_used);
            st.protocol = peer.peer_info().map(|i| i.protocol_version.to_string());
            slot.status.send_replace(ServerStatus::Connected);
        }
        // Publish outside the lock (set_status re-sends the same state).
        self.set_status(&slot, ServerStatus::Connected);
        self.publish_tools(&slot);
        self.shared.cache.put(&slot.name, &slot.hash, &tools).await;

        let ct = session.cancellation_token();
        let waiting = session.waiting();
        tokio::pin!(waiting);
        let end = loop {
            tokio::select! {
                _ = &mut waiting => break None,
                _ = slot.stop.cancelled() => break Some(()),
                sig = rx.recv() => match sig {
                    Some(Signal::ToolsChanged) => {
                        if let Ok(Ok(t)) = tokio::time::timeout(timeout, peer.list_all_tools()).await {
                            slot.state.lock().unwrap().tools = Arc::new(t.clone());
                            self.publish_tools(&slot);
                            self.shared.cache.put(&slot.name, &slot.hash, &t).await;
                        }
                    }
                    Some(Signal::Log { level, text }) => {
                        let line = slot.logs.push(&level, &text);
                        let _ = self.shared.events.send(EngineEvent::Log { server: slot.name.clone(), line });
                    }
                    Some(_) | None => {}
                },
            }
        };
        {
            let mut st = slot.state.lock().unwrap();
            st.peer = None;
            st.tools = Arc::new(vec![]);
        }
        self.publish_tools(&slot);
        match end {
            Some(()) => {
                // Deliberate stop: close the session (closes stdin), then the ladder.
                ct.cancel();
                let _ = tokio::time::timeout(self.shared.opts.grace, &mut waiting).await;
                if let Some(p) = pgid {
                    terminate_group(p, self.shared.opts.grace).await;
                }
                self.set_status(&slot, ServerStatus::Disconnected);
            }
            None => {
                if let Some(p) = pgid {
                    terminate_group(p, Duration::from_millis(200)).await;
                }
                self.set_status(&slot, ServerStatus::Failed { error: "the server closed the connection".into() });
            }
        }
    }

    /// Call a tool by its sanitized name (SPEC M6). A deferred tool waits for
    /// its server. `cancel` aborts: the server gets `notifications/cancelled`.
    pub async fn call_tool(&self, name: &str, args: Option<Map<String, Value>>, cancel: Option<CancellationToken>) -> Result<CallOutcome, CallError> {
        let entry = self.tools().get(name).cloned().ok_or_else(|| CallError::UnknownTool(name.into()))?;
        self.call_raw(&entry.server, &entry.tool, args, cancel).await
    }

    /// Call a tool by server and raw tool name.
    pub async fn call_raw(&self, server: &str, tool: &str, args: Option<Map<String, Value>>, cancel: Option<CancellationToken>) -> Result<CallOutcome, CallError> {
        let slot = self.slot(server).ok_or_else(|| CallError::Mcp(format!("unknown server \"{server}\"")))?;
        let cancel = cancel.unwrap_or_default();
        let peer = self.wait_peer(&slot, &cancel).await?;
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Some(a) = args {
            params = params.with_arguments(a);
        }
        let req = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut handle = peer
            .send_cancellable_request(req, PeerRequestOptions::no_options())
            .await
            .map_err(|e| CallError::Mcp(e.to_string()))?;
        let resp = tokio::select! {
            r = &mut handle.rx => r,
            _ = cancel.cancelled() => {
                let _ = handle.cancel(Some("cancelled by the user".into())).await;
                return Err(CallError::Aborted);
            }
        };
        // Never replayed: an ambiguous failure is reported, not retried.
        let result = match resp {
            Ok(Ok(ServerResult::CallToolResult(r))) => r,
            Ok(Ok(other)) => return Err(CallError::Mcp(format!("unexpected response {other:?}"))),
            Ok(Err(e)) => return Err(CallError::Mcp(e.to_string())),
            Err(_) => return Err(CallError::Mcp("the connection closed before the server answered".into())),
        };
        let is_error = result.is_error.unwrap_or(false);
        let content: Vec<Value> = result.content.iter().filter_map(|c| serde_json::to_value(c).ok()).collect();
        let text = flatten(&content);
        Ok(CallOutcome {
            text: if is_error { format!("Error: {text}") } else { text },
            is_error,
            content,
            structured_content: result.structured_content.clone(),
            server: server.into(),
            tool: tool.into(),
            source: slot.wanted.source.clone(),
        })
    }

    /// The server's peer, waiting while it connects (a deferred call).
    async fn wait_peer(&self, slot: &Slot, cancel: &CancellationToken) -> Result<Peer<RoleClient>, CallError> {
        let mut rx = slot.status.subscribe();
        let limit = slot.wanted.def.timeout.map(Duration::from_millis).unwrap_or(self.shared.opts.default_timeout);
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
                return Err(CallError::Mcp(format!("server \"{}\" is not connected: {why}", slot.name)));
            }
            None => return Err(CallError::Mcp(format!("server \"{}\" did not connect within {limit:?}", slot.name))),
        }
        slot.state.lock().unwrap().peer.clone().ok_or_else(|| CallError::Mcp(format!("server \"{}\" is not connected", slot.name)))
    }

    /// Disconnect one server: close its session, end its process group,
    /// remove its tools (SPEC M11, basic form). Waits until it is down.
    pub async fn disconnect(&self, name: &str) -> bool {
        let Some(slot) = self.slot(name) else { return false };
        slot.stop.cancel();
        let mut rx = slot.status.subscribe();
        let _ = rx.wait_for(|s| !s.is_pending() && !matches!(s, ServerStatus::Connected)).await;
        // A server that never got a session may still have a group.
        let pgid = slot.state.lock().unwrap().pgid;
        if let Some(p) = pgid {
            if connection::group_alive(p) {
                terminate_group(p, Duration::ZERO).await;
            }
        }
        self.shared.slots.write().unwrap().shift_remove(name);
        self.reindex();
        true
    }

    /// Disconnect every server, in parallel.
    pub async fn shutdown(&self) {
        let names = self.server_names();
        futures::future::join_all(names.iter().map(|n| self.disconnect(n))).await;
        self.shared.tracker.close();
        self.shared.tracker.wait().await;
    }
}

/// Content flattened to display text: text parts joined, others described.
pub fn flatten(content: &[Value]) -> String {
    content
        .iter()
        .map(|c| match c.get("type").and_then(Value::as_str) {
            Some("text") => c.get("text").and_then(Value::as_str).unwrap_or_default().to_string(),
            Some("image") => format!("[image: {}]", c.get("mimeType").and_then(Value::as_str).unwrap_or("unknown")),
            Some("audio") => format!("[audio: {}]", c.get("mimeType").and_then(Value::as_str).unwrap_or("unknown")),
            Some("resource") => {
                let r = c.get("resource").cloned().unwrap_or_default();
                r.get("text").and_then(Value::as_str).map(String::from).unwrap_or_else(|| format!("[resource: {}]", r.get("uri").and_then(Value::as_str).unwrap_or("")))
            }
            Some("resource_link") => format!("[resource: {}]", c.get("uri").and_then(Value::as_str).unwrap_or("")),
            _ => c.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
