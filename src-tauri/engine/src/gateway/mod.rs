//! The gateway: Switchboard as one MCP server in front of
//! every server the manager runs. What it offers:
//!
//! - tools: the manager's tool index (sanitized names, see `naming`) of the
//!   servers it serves, minus switched-off tools, with each tool's
//!   definition as its server gave it, minus the tools the manager's tool
//!   trust holds until the user approves them (`tool_trust`); calls are routed to the owning
//!   server (cancellation and progress forwarded, errors passed through,
//!   never replayed);
//! - resources and prompts of every served server, renamed as `routes`
//!   says, and mapped back;
//! - `list_changed` notifications to every session when servers connect,
//!   disconnect or re-list, or a switch changes (coalesced), resource
//!   updates to the sessions that subscribed, servers' log messages;
//! - elicitation and sampling requests of a server, forwarded to the
//!   gateway client whose call caused them when that client can answer
//!   (servers are told sampling is offered only when a gateway is there
//!   as they connect).
//!
//! A [`Gateway`] serves either all servers (the aggregate, `/mcp`) or one
//! server under its own names (`/mcp/<server>`, `serve --server`). Each MCP
//! client connection is one [`server::GatewaySession`]; `http` serves them
//! over streamable HTTP, `rmcp::transport::stdio()` over stdin/stdout.

// Logging is deprecated in the newest protocol but is what 2025 clients and servers use.
#![allow(deprecated)]

pub mod activity;
pub mod http;
pub mod routes;
pub mod search;
pub mod server;
pub mod switches;
pub mod token;

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, Tool,
};
use rmcp::service::Peer;
use rmcp::RoleServer;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use crate::events::{EngineEvent, ServerStatus};
use crate::manager::{
    ElicitAnswer, ElicitRequest, ElicitationHandler, Manager, OnSend, SamplingHandler,
    SamplingRequest, ToolIndex,
};
use crate::tool_trust::{Holds, TrustBasis};
pub use server::GatewaySession;
pub use switches::Switches;

/// Notifications arriving within this window of the last one sent go out
/// as one (the first after a quiet spell goes out at once).
pub const COALESCE: Duration = Duration::from_millis(30);
/// Bound of one notification send to a client (a client that stops reading
/// loses notifications, it never blocks the gateway).
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);
/// How much longer than the startup gate a first list may wait when the
/// manager never says its gate passed (it was never started).
const GATE_BACKSTOP: Duration = Duration::from_secs(2);
/// Most gateway sessions at once (each holds a little state and a task).
pub const MAX_SESSIONS: usize = 256;
/// Per session: log messages and progress notifications waiting to be sent.
pub const OUTBOX_LIMIT: usize = 256;
/// Per session: distinct updated resource URIs waiting to be sent.
pub const UPDATES_LIMIT: usize = 1024;
/// Per forwarded call: progress notifications waiting to be sent.
pub const PROGRESS_LIMIT: usize = 64;
/// How long a forwarded elicitation may wait for the gateway client's user.
pub const ELICITATION_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a forwarded sampling request may wait for the gateway client
/// (its model, and often its user's approval).
pub const SAMPLING_TIMEOUT: Duration = Duration::from_secs(600);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every served server under gateway names.
    All,
    /// One server under its own names.
    One(String),
    /// One profile's servers and tools under gateway names
    /// (`/mcp/p/<profile>`); `All` serves the active profile.
    Profile(String),
    /// What a signed-in person of the team gateway may use: every server
    /// and tool that any of these profiles lets through, under gateway names.
    Team(Vec<String>),
}

impl Scope {
    /// Served without sessions (the team gateway): each request is answered
    /// on its own, so no `initialize` names the client and nothing is pushed
    /// to clients (no list_changed, log lines or resource updates).
    pub fn stateless(&self) -> bool {
        matches!(self, Scope::Team(_))
    }
}

/// The team gateway's `serverInfo.name` (how the desktop app knows one).
pub const TEAM_SERVER_NAME: &str = "switchboard-team";
/// `_meta` key of a team gateway's tool: the team server it belongs to.
pub const TEAM_SERVER_META: &str = "io.github.switchboard/server";
/// `_meta` key of a team gateway's tool: its name on that server.
pub const TEAM_TOOL_META: &str = "io.github.switchboard/tool";

/// The signed-in person a request of the team gateway came from. The team
/// gateway's HTTP layer puts it into the request's extensions; rmcp hands
/// the request's parts to the session, which records the subject in the
/// call journal. Never sent to an upstream server.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The access token's `sub`.
    pub subject: String,
}

impl Caller {
    /// The caller of the request `cx` is answering, when it came through
    /// the team gateway.
    pub fn of(cx: &rmcp::service::RequestContext<RoleServer>) -> Option<&Caller> {
        cx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Caller>())
    }
}

#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// Offer `search_tools` and `call_tool` instead of every tool (`search`).
    pub tool_search: bool,
    /// The first `tools/list` waits at most this long after the gateway
    /// started for servers to come up (the manager's startup gate).
    pub gate: Duration,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        GatewayOptions {
            tool_search: false,
            gate: crate::manager::DEFAULT_GATE,
        }
    }
}

/// Live sessions' basic facts (for the app's status, issue 12 point 8).
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "GatewaySession"))]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub id: u64,
    pub client: String,
    pub version: String,
    /// `None`: the aggregate; else the one server it is for.
    pub server: Option<String>,
    /// The profile it was opened for (`/mcp/p/<profile>`, `serve --profile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub profile: Option<String>,
}

const TOOLS: u8 = 1;
const RESOURCES: u8 = 2;
const PROMPTS: u8 = 4;
const ALL: u8 = TOOLS | RESOURCES | PROMPTS;

/// What waits to be sent to one session: list changes as flags, the rest in
/// bounded queues (the oldest log lines go first when a client falls behind).
/// Progress goes with its call instead (see `Relay::begin_call`).
#[derive(Default)]
pub(crate) struct Outbox {
    flags: AtomicU8,
    logs: Mutex<VecDeque<Outgoing>>,
    updated: Mutex<indexmap::IndexSet<String>>,
    dropped: AtomicU64,
    closed: AtomicBool,
    wake: tokio::sync::Notify,
}

pub(crate) enum Outgoing {
    Log(LoggingMessageNotificationParam),
}

impl Outbox {
    fn raise(&self, bits: u8) {
        self.flags.fetch_or(bits, Ordering::AcqRel);
        self.wake.notify_one();
    }

    fn push(&self, o: Outgoing) {
        {
            let mut q = self.logs.lock().unwrap();
            if q.len() >= OUTBOX_LIMIT {
                q.pop_front();
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            q.push_back(o);
        }
        self.wake.notify_one();
    }

    fn updated(&self, uri: String) {
        {
            let mut u = self.updated.lock().unwrap();
            if u.len() >= UPDATES_LIMIT && !u.contains(&uri) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            u.insert(uri);
        }
        self.wake.notify_one();
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.wake.notify_one();
    }
}

/// One client connection, from its `initialize` on.
pub(crate) struct SessionEntry {
    pub id: u64,
    pub peer: Peer<RoleServer>,
    pub outbox: Arc<Outbox>,
    /// Least level of server log messages forwarded (`logging/setLevel`).
    pub log_level: Mutex<LoggingLevel>,
    /// Gateway URIs (aggregate) or server URIs (one server) subscribed to.
    pub subscriptions: Mutex<HashSet<String>>,
    pub elicitation: bool,
    /// The client declared `sampling`.
    pub sampling: bool,
    pub info: SessionInfo,
    pub activity: Arc<activity::Activity>,
}

impl Drop for SessionEntry {
    fn drop(&mut self) {
        self.outbox.close();
        self.activity.closed(self.id);
    }
}

/// Where a call's progress goes: its queue, and the client's own token.
type ProgressRoute = (
    tokio::sync::mpsc::Sender<ProgressNotificationParam>,
    ProgressToken,
);
/// Gateway tool or prompt name → (server, its raw name there).
pub(crate) type ToolRoutes = HashMap<String, (String, String)>;

/// Shared by every gateway on one manager: who gets a server's progress
/// notifications, elicitation and sampling requests.
pub(crate) struct Relay {
    next: AtomicU64,
    /// (server, upstream progress token) → the call waiting for its progress
    /// and the token its client used.
    progress: Mutex<HashMap<(String, String), ProgressRoute>>,
    /// Calls in flight: (id, server, session), newest last.
    calls: Mutex<Vec<(u64, String, Weak<SessionEntry>)>>,
    /// Open sessions and call counts of every gateway on this manager.
    pub activity: Arc<activity::Activity>,
}

impl Relay {
    fn install(manager: &Manager) -> Arc<Relay> {
        let relay = Arc::new(Relay {
            next: AtomicU64::new(1),
            progress: Default::default(),
            calls: Default::default(),
            activity: Default::default(),
        });
        let weak = Arc::downgrade(&relay);
        manager.set_progress_handler(Some(Arc::new(
            move |server: &str, p: ProgressNotificationParam| {
                let Some(relay) = weak.upgrade() else { return };
                let key = (server.to_string(), token_key(&p.progress_token));
                let target = relay.progress.lock().unwrap().get(&key).cloned();
                if let Some((call, token)) = target {
                    let mut p = p;
                    p.progress_token = token;
                    // Bounded: a flood of progress loses steps, never memory.
                    let _ = call.try_send(p);
                }
            },
        )));
        let previous = manager.elicitation_handler();
        let weak = Arc::downgrade(&relay);
        let handler: ElicitationHandler = Arc::new(move |req: ElicitRequest| {
            let target = weak
                .upgrade()
                .and_then(|r| r.elicitation_target(&req.server));
            let previous = previous.clone();
            Box::pin(async move {
                match target {
                    Some(peer) => forward_elicitation(&peer, &req).await,
                    None => match previous {
                        Some(h) => h(req).await,
                        None => ElicitAnswer::Decline,
                    },
                }
            })
        });
        manager.set_elicitation_handler(Some(handler));
        let previous = manager.sampling_handler();
        let weak = Arc::downgrade(&relay);
        let handler: SamplingHandler = Arc::new(move |req: SamplingRequest| {
            let target = weak.upgrade().and_then(|r| r.sampling_target(&req.server));
            let previous = previous.clone();
            Box::pin(async move {
                match (target, previous) {
                    (Some(peer), _) => forward_sampling(&peer, req.params).await,
                    (None, Some(h)) => h(req).await,
                    (None, None) => Err(rmcp::ErrorData::new(
                        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                        format!("no client of the Switchboard gateway that offers sampling has a call to \"{}\" in flight: nobody to answer sampling/createMessage", req.server),
                        None,
                    )),
                }
            })
        });
        manager.set_sampling_handler(Some(handler));
        relay
    }

    /// The newest session with a call in flight to `server` that can answer
    /// an elicitation. Over stdio nothing ties a server's request to the
    /// call that caused it: with calls of several sessions in flight, the
    /// newest is asked.
    fn elicitation_target(&self, server: &str) -> Option<Peer<RoleServer>> {
        self.asking_target(server, |s| s.elicitation)
    }

    /// Likewise for a sampling request.
    fn sampling_target(&self, server: &str) -> Option<Peer<RoleServer>> {
        self.asking_target(server, |s| s.sampling)
    }

    fn asking_target(
        &self,
        server: &str,
        can: impl Fn(&SessionEntry) -> bool,
    ) -> Option<Peer<RoleServer>> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .rev()
            .filter(|(_, s, _)| s == server)
            .filter_map(|(_, _, w)| w.upgrade())
            .find(|s| can(s))
            .map(|s| s.peer.clone())
    }

    /// Register a call; its progress notifications arrive on the receiver,
    /// to be sent to the client before the call's result.
    pub(crate) fn begin_call(
        self: &Arc<Self>,
        server: &str,
        session: &Arc<SessionEntry>,
        client_token: Option<ProgressToken>,
    ) -> (
        CallGuard,
        tokio::sync::mpsc::Receiver<ProgressNotificationParam>,
    ) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.calls
            .lock()
            .unwrap()
            .push((id, server.to_string(), Arc::downgrade(session)));
        let (tx, rx) = tokio::sync::mpsc::channel(PROGRESS_LIMIT);
        (
            CallGuard {
                relay: self.clone(),
                id,
                server: server.to_string(),
                progress: tx,
                client_token,
                upstream: Arc::new(Mutex::new(Upstream::Waiting)),
            },
            rx,
        )
    }
}

/// A forwarded call's registrations, undone when it ends.
pub(crate) struct CallGuard {
    relay: Arc<Relay>,
    id: u64,
    server: String,
    progress: tokio::sync::mpsc::Sender<ProgressNotificationParam>,
    /// The token the gateway client asked progress for, if any.
    client_token: Option<ProgressToken>,
    upstream: Arc<Mutex<Upstream>>,
}

/// Where a call's progress route stands.
enum Upstream {
    /// The upstream request is not written yet.
    Waiting,
    /// Written; its progress is routed under this key.
    Sent((String, String)),
    /// The call ended: a request written from now on routes nothing.
    Ended,
}

impl CallGuard {
    /// What the upstream request carries so that, as it is written with
    /// its progress token, that token's progress is routed to the client
    /// under the client's own token; `None` when the client asked for none.
    pub(crate) fn on_send(&self) -> Option<OnSend> {
        let client = self.client_token.clone()?;
        let (relay, server) = (self.relay.clone(), self.server.clone());
        let (queue, upstream) = (self.progress.clone(), self.upstream.clone());
        Some(OnSend(Arc::new(move |token: &ProgressToken| {
            let mut state = upstream.lock().unwrap();
            if matches!(*state, Upstream::Ended) {
                return;
            }
            let key = (server.clone(), token_key(token));
            relay
                .progress
                .lock()
                .unwrap()
                .insert(key.clone(), (queue.clone(), client.clone()));
            *state = Upstream::Sent(key);
        })))
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.relay
            .calls
            .lock()
            .unwrap()
            .retain(|(id, _, _)| *id != self.id);
        let mut state = self.upstream.lock().unwrap();
        if let Upstream::Sent(key) = std::mem::replace(&mut *state, Upstream::Ended) {
            self.relay.progress.lock().unwrap().remove(&key);
        }
    }
}

fn token_key(t: &ProgressToken) -> String {
    match &t.0 {
        rmcp::model::NumberOrString::String(s) => s.to_string(),
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
    }
}

async fn forward_elicitation(peer: &Peer<RoleServer>, req: &ElicitRequest) -> ElicitAnswer {
    use rmcp::model::ElicitationAction;
    // The schema is the server's: one the protocol does not allow is declined.
    let Ok(requested_schema) =
        serde_json::from_value::<rmcp::model::ElicitationSchema>(req.schema.clone())
    else {
        return ElicitAnswer::Decline;
    };
    let params = rmcp::model::ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: req.message.clone(),
        requested_schema,
    };
    match tokio::time::timeout(ELICITATION_TIMEOUT, peer.create_elicitation(params)).await {
        Ok(Ok(r)) => match r.action {
            ElicitationAction::Accept => ElicitAnswer::Accept(
                r.content
                    .map(|c| serde_json::to_value(c).unwrap_or_default())
                    .unwrap_or(serde_json::json!({})),
            ),
            ElicitationAction::Decline => ElicitAnswer::Decline,
            _ => ElicitAnswer::Cancel,
        },
        _ => ElicitAnswer::Cancel,
    }
}

/// A server's sampling request, asked of the gateway client; its answer or
/// error goes back to the server as it is.
#[allow(deprecated)] // sampling is what 2025 clients and servers use.
async fn forward_sampling(
    peer: &Peer<RoleServer>,
    params: rmcp::model::CreateMessageRequestParams,
) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
    match tokio::time::timeout(SAMPLING_TIMEOUT, peer.create_message(params)).await {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(rmcp::ServiceError::McpError(e))) => Err(e),
        Ok(Err(e)) => Err(rmcp::ErrorData::internal_error(format!("the gateway client did not answer sampling/createMessage: {e}"), None)),
        Err(_) => Err(rmcp::ErrorData::internal_error(format!("the gateway client did not answer sampling/createMessage within {SAMPLING_TIMEOUT:?}"), None)),
    }
}

pub(crate) struct Inner {
    pub manager: Manager,
    pub scope: Scope,
    pub opts: GatewayOptions,
    pub switches: watch::Receiver<Arc<Switches>>,
    /// Pins and approval modes (`None`: the manager has no tool trust).
    pub trust: Option<watch::Receiver<Arc<TrustBasis>>>,
    pub ready: watch::Receiver<bool>,
    ready_tx: Arc<watch::Sender<bool>>,
    pub started: tokio::time::Instant,
    pub relay: Arc<Relay>,
    sessions: Mutex<HashMap<u64, Weak<SessionEntry>>>,
    next_session: Arc<AtomicU64>,
    /// The visible tool list, rebuilt when the index or the switches change.
    tool_list: Mutex<Option<ToolList>>,
    search: Mutex<Option<Arc<search::SearchIndex>>>,
    /// Every server's tools by name, for the checks on what comes back;
    /// rebuilt when the index changes.
    owners: Mutex<Option<(Arc<ToolIndex>, Arc<crate::tool_trust::results::ToolOwners>)>>,
    /// Aggregate prompt names → (server, prompt), as last listed.
    pub prompt_names: Mutex<ToolRoutes>,
    /// (server, original URI) → sessions subscribed; upstream subscribes on
    /// the first and unsubscribes after the last.
    pub subscribers: tokio::sync::Mutex<HashMap<(String, String), HashSet<u64>>>,
    stop: CancellationToken,
}

struct ToolList {
    index: Arc<ToolIndex>,
    switches: Arc<Switches>,
    basis: Option<Arc<TrustBasis>>,
    tools: Arc<Vec<Tool>>,
    /// Per visible tool: (server, raw name), same order.
    routes: Arc<ToolRoutes>,
}

/// The gateway of one manager, for all servers or for one.
#[derive(Clone)]
pub struct Gateway {
    pub(crate) inner: Arc<Inner>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Gateway {
    /// A gateway over every server of `manager` (not yet ready: call
    /// [`Gateway::set_ready`] once the servers passed the startup gate).
    /// Installs itself as the manager's progress and elicitation hooks (the
    /// previous elicitation handler answers what no gateway client can).
    pub fn new(
        manager: Manager,
        switches: watch::Receiver<Arc<Switches>>,
        opts: GatewayOptions,
    ) -> Gateway {
        let relay = Relay::install(&manager);
        let (ready_tx, ready) = watch::channel(false);
        Self::build(
            manager,
            Scope::All,
            opts,
            switches,
            Arc::new(ready_tx),
            ready,
            relay,
            Arc::new(AtomicU64::new(1)),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        manager: Manager,
        scope: Scope,
        opts: GatewayOptions,
        switches: watch::Receiver<Arc<Switches>>,
        ready_tx: Arc<watch::Sender<bool>>,
        ready: watch::Receiver<bool>,
        relay: Arc<Relay>,
        next_session: Arc<AtomicU64>,
    ) -> Gateway {
        let cell = manager.trust();
        if let Some(c) = &cell {
            c.follow();
        }
        let inner = Arc::new(Inner {
            manager,
            scope,
            opts,
            switches,
            trust: cell.map(|c| c.subscribe()),
            ready,
            ready_tx,
            started: tokio::time::Instant::now(),
            relay,
            sessions: Mutex::new(HashMap::new()),
            next_session,
            tool_list: Mutex::new(None),
            search: Mutex::new(None),
            owners: Mutex::new(None),
            prompt_names: Mutex::new(HashMap::new()),
            subscribers: tokio::sync::Mutex::new(HashMap::new()),
            stop: CancellationToken::new(),
        });
        // Tells sessions of changes; a stateless gateway has none to tell.
        if !inner.scope.stateless() {
            tokio::spawn(notifier(
                Arc::downgrade(&inner),
                inner.manager.subscribe(),
                inner.switches.clone(),
                inner.trust.clone(),
                inner.stop.clone(),
            ));
        }
        Gateway { inner }
    }

    /// The same gateway for one server alone, under its own names.
    pub fn scoped(&self, server: &str) -> Gateway {
        self.with_scope(Scope::One(server.to_string()))
    }

    /// This gateway's manager, switches, readiness and relay, for another scope.
    fn with_scope(&self, scope: Scope) -> Gateway {
        let i = &self.inner;
        Self::build(
            i.manager.clone(),
            scope,
            i.opts.clone(),
            i.switches.clone(),
            i.ready_tx.clone(),
            i.ready.clone(),
            i.relay.clone(),
            i.next_session.clone(),
        )
    }

    /// The same gateway for one profile's servers and tools, under gateway
    /// names. A profile that does not exist (or is deleted while clients
    /// are connected) serves nothing.
    pub fn for_profile(&self, profile: &str) -> Gateway {
        self.with_scope(Scope::Profile(profile.to_string()))
    }

    /// The same gateway for the union of `profiles` (a team member's
    /// groups): a server or tool any of them lets through is served.
    pub fn for_team(&self, profiles: Vec<String>) -> Gateway {
        self.with_scope(Scope::Team(profiles))
    }

    /// Tells `observer` of every tool call forwarded by this gateway and
    /// by every gateway made from it (scoped, profile, team).
    pub fn observe_calls(&self, observer: Arc<dyn activity::CallObserver>) {
        self.inner.relay.activity.observe(observer);
    }

    /// The servers passed the startup gate: `tools/list` stops waiting.
    pub fn set_ready(&self) {
        self.inner.ready_tx.send_replace(true);
    }

    /// Whether the servers passed the startup gate.
    pub fn is_ready(&self) -> bool {
        *self.inner.ready.borrow()
    }

    /// Until the servers passed the startup gate (at most the gate's time
    /// after the gateway started).
    pub async fn wait_ready(&self) {
        self.inner.wait_ready().await
    }

    /// A handler for one new client connection.
    /// A session for one client over stdio.
    pub fn session(&self) -> GatewaySession {
        self.session_over(crate::journal::Via::Stdio)
    }

    /// A session for one client reaching the gateway `via` (as the call
    /// journal records it).
    pub fn session_over(&self, via: crate::journal::Via) -> GatewaySession {
        GatewaySession::new(self.inner.clone(), via)
    }

    pub fn scope(&self) -> &Scope {
        &self.inner.scope
    }

    pub fn manager(&self) -> &Manager {
        &self.inner.manager
    }

    /// Whether `server` is one this gateway serves (known and not excluded).
    pub fn serves(&self, server: &str) -> bool {
        self.inner.manager.status(server).is_some() && self.inner.visible(server)
    }

    /// The clients connected now.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        self.inner
            .live_sessions()
            .iter()
            .map(|s| s.info.clone())
            .collect()
    }

    /// Open sessions (of this gateway and of the one-server gateways made
    /// from it) and per-tool call counts.
    pub fn activity(&self) -> activity::ActivitySnapshot {
        self.inner.relay.activity.snapshot()
    }

    /// The tool switches this gateway follows (changes with the settings file).
    pub fn watch_switches(&self) -> watch::Receiver<Arc<Switches>> {
        self.inner.switches.clone()
    }

    /// Changes whenever [`Gateway::activity`] would answer differently.
    pub fn watch_activity(&self) -> watch::Receiver<u64> {
        self.inner.relay.activity.watch()
    }

    /// The tools a client of this gateway sees (without search mode).
    pub fn tools(&self) -> Arc<Vec<Tool>> {
        self.inner.tool_list().0
    }
}

/// Which servers and tools a profile lets through, as a gateway scope sees it.
enum ProfileFilter<'a> {
    Everything,
    Only(&'a crate::profile::Profile),
    /// A profile that is not there: nothing.
    Nothing,
    /// Several profiles: what any of them lets through.
    Any(Vec<ProfileFilter<'a>>),
}

impl ProfileFilter<'_> {
    fn server(&self, server: &str) -> bool {
        match self {
            ProfileFilter::Everything => true,
            ProfileFilter::Only(p) => p.includes(server),
            ProfileFilter::Nothing => false,
            ProfileFilter::Any(all) => all.iter().any(|f| f.server(server)),
        }
    }

    fn tool(&self, server: &str, tool: &str) -> bool {
        match self {
            ProfileFilter::Everything => true,
            ProfileFilter::Only(p) => p.allows(server, tool),
            ProfileFilter::Nothing => false,
            ProfileFilter::Any(all) => all.iter().any(|f| f.tool(server, tool)),
        }
    }
}

fn named_filter<'a>(switches: &'a Switches, name: &str) -> ProfileFilter<'a> {
    match switches.profile(name) {
        Some(None) => ProfileFilter::Everything,
        Some(Some(p)) => ProfileFilter::Only(p),
        None => ProfileFilter::Nothing,
    }
}

impl Inner {
    fn filter<'a>(&self, switches: &'a Switches) -> ProfileFilter<'a> {
        use switches::ActiveProfile;
        match &self.scope {
            Scope::One(_) => ProfileFilter::Everything,
            Scope::All => match switches.active() {
                None => ProfileFilter::Everything,
                Some(ActiveProfile::Profile(p)) => ProfileFilter::Only(p),
                Some(ActiveProfile::Missing) => ProfileFilter::Nothing,
            },
            Scope::Profile(name) => named_filter(switches, name),
            Scope::Team(names) => {
                ProfileFilter::Any(names.iter().map(|n| named_filter(switches, n)).collect())
            }
        }
    }

    pub fn visible(&self, server: &str) -> bool {
        let switches = self.switches.borrow();
        if switches.is_excluded(server) {
            return false;
        }
        match &self.scope {
            Scope::One(s) => s == server,
            _ => self.filter(&switches).server(server),
        }
    }

    /// Servers to ask for resources and prompts: served and connected.
    pub fn connected_servers(&self) -> Vec<String> {
        self.manager
            .server_names()
            .into_iter()
            .filter(|s| self.visible(s) && self.manager.status(s) == Some(ServerStatus::Connected))
            .collect()
    }

    /// Until the manager's start passed its startup gate (its tools and the
    /// cached ones of servers still starting are then in the index), or the
    /// servers all settled. The gateway's own clock is only a backstop: it
    /// starts before the manager's, so on a busy machine it would run out
    /// first and a client's first list would miss the cached tools.
    pub async fn wait_ready(&self) {
        let mut ready = self.ready.clone();
        let backstop = self.started + self.opts.gate + GATE_BACKSTOP;
        let _ = tokio::time::timeout_at(backstop, async {
            tokio::select! {
                _ = ready.wait_for(|r| *r) => {}
                _ = self.manager.gate_passed() => {}
            }
        })
        .await;
    }

    pub fn register(&self, entry: &Arc<SessionEntry>) -> Result<(), String> {
        let mut s = self.sessions.lock().unwrap();
        s.retain(|_, w| w.strong_count() > 0);
        if s.len() >= MAX_SESSIONS {
            return Err(format!("this Switchboard gateway already has {MAX_SESSIONS} sessions; close some clients and try again"));
        }
        s.insert(entry.id, Arc::downgrade(entry));
        Ok(())
    }

    pub fn next_session_id(&self) -> u64 {
        self.next_session.fetch_add(1, Ordering::Relaxed)
    }

    fn live_sessions(&self) -> Vec<Arc<SessionEntry>> {
        self.sessions
            .lock()
            .unwrap()
            .values()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// The visible tools and how each name finds its server.
    pub fn tool_list(&self) -> (Arc<Vec<Tool>>, Arc<ToolRoutes>) {
        let index = self.manager.tools();
        let switches = self.switches.borrow().clone();
        let basis = self.trust.as_ref().map(|t| t.borrow().clone());
        let same_basis = |c: &ToolList| match (&c.basis, &basis) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        let mut cache = self.tool_list.lock().unwrap();
        if let Some(c) = cache.as_ref().filter(|c| {
            Arc::ptr_eq(&c.index, &index) && Arc::ptr_eq(&c.switches, &switches) && same_basis(c)
        }) {
            return (c.tools.clone(), c.routes.clone());
        }
        // Reviewed against the same servers the index was built from: a
        // server that just connected is judged before its tools are offered.
        let holds = match (&basis, self.manager.trust()) {
            (Some(b), Some(cell)) => {
                crate::tool_trust::holds_with(&self.manager.trust_inputs(), b, &cell.memo)
            }
            _ => Default::default(),
        };
        let (tools, routes) = self.build_tool_list(&index, &switches, &holds);
        let (tools, routes) = (Arc::new(tools), Arc::new(routes));
        *cache = Some(ToolList {
            index,
            switches,
            basis,
            tools: tools.clone(),
            routes: routes.clone(),
        });
        (tools, routes)
    }

    /// Every server's tools by name (for the cross-server rule).
    fn tool_owners(&self) -> Arc<crate::tool_trust::results::ToolOwners> {
        let index = self.manager.tools();
        let mut cache = self.owners.lock().unwrap();
        if let Some((i, o)) = cache.as_ref() {
            if Arc::ptr_eq(i, &index) {
                return o.clone();
            }
        }
        let owners = Arc::new(crate::tool_trust::results::ToolOwners::new(
            index
                .tools
                .iter()
                .map(|e| (e.server.as_str(), e.tool.as_str())),
        ));
        *cache = Some((index, owners.clone()));
        owners
    }

    /// Check an answer of `server` to a request for `name` (a tool, a
    /// resource's URI, a prompt) and do what its mode says: the findings,
    /// what the client gets, and (when something was noted or refused) a
    /// warning for the app.
    pub(crate) fn guard<T, U>(
        &self,
        server: &str,
        name: &str,
        answer: T,
        guard: impl FnOnce(
            crate::settings::ResultMode,
            &crate::tool_trust::results::ResultContext,
            T,
        ) -> crate::tool_trust::results::Guarded<U>,
    ) -> crate::tool_trust::results::Guarded<U> {
        use crate::tool_trust::results::{Action, ResultContext};
        let mode = self.switches.borrow().result_mode(server);
        let owners = self.tool_owners();
        let secrets = self.manager.known_secrets();
        let ctx = ResultContext {
            tools: &owners,
            secrets: &secrets,
        };
        let g = guard(mode, &ctx, answer);
        if g.action != Action::Passed {
            self.manager.announce(EngineEvent::Warning {
                server: server.to_string(),
                message: crate::tool_trust::results::warning(
                    server,
                    name,
                    g.action,
                    &g.findings,
                    "the gateway",
                ),
            });
        }
        g
    }

    fn build_tool_list(
        &self,
        index: &ToolIndex,
        switches: &Switches,
        holds: &Holds,
    ) -> (Vec<Tool>, ToolRoutes) {
        let mut tools = Vec::with_capacity(index.tools.len());
        let mut routes = HashMap::with_capacity(index.tools.len());
        // Each server's own definitions, by raw name.
        type ByName = (Arc<Vec<Tool>>, HashMap<String, usize>);
        let mut raw: HashMap<String, ByName> = HashMap::new();
        let filter = self.filter(switches);
        for e in &index.tools {
            if !self.visible(&e.server)
                || !filter.tool(&e.server, &e.tool)
                || switches.is_off(&e.server, &e.tool)
                || holds.holds_tool(&e.server, &e.tool)
            {
                continue;
            }
            let (list, by_name) = raw.entry(e.server.clone()).or_insert_with(|| {
                let list = self.manager.server_tools(&e.server).unwrap_or_default();
                let by_name = list
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (t.name.to_string(), i))
                    .collect();
                (list, by_name)
            });
            let Some(def) = by_name.get(&e.tool).map(|i| &list[*i]) else {
                continue;
            };
            let mut t = def.clone();
            let name = match &self.scope {
                Scope::All | Scope::Profile(_) | Scope::Team(_) => e.name.clone(),
                Scope::One(_) => e.tool.clone(),
            };
            t.name = name.clone().into();
            t.input_schema = crate::naming::with_properties(&t.input_schema);
            if let Scope::Team(_) = &self.scope {
                // The team gateway says which team server each tool is of
                // (the desktop app's Team source groups them by it).
                let mut meta = t.meta.take().unwrap_or_default();
                meta.0
                    .insert(TEAM_SERVER_META.into(), e.server.clone().into());
                meta.0.insert(TEAM_TOOL_META.into(), e.tool.clone().into());
                t.meta = Some(meta);
            }
            routes.insert(name, (e.server.clone(), e.tool.clone()));
            tools.push(t);
        }
        (tools, routes)
    }

    /// Whether the tool trust holds this prompt or resource template of `server`.
    pub fn holds_item(&self, server: &str, item: Option<crate::tool_trust::Item>) -> bool {
        let (Some(trust), Some(item), Some(def)) =
            (&self.trust, item, self.manager.server_def(server))
        else {
            return false;
        };
        let basis = trust.borrow().clone();
        basis.holds_item(server, &crate::tool_trust::pins::identity(&def), &item)
    }

    /// The search index over the visible tools (search mode).
    pub fn search_index(&self) -> Arc<search::SearchIndex> {
        let (tools, _) = self.tool_list();
        let mut cache = self.search.lock().unwrap();
        if let Some(s) = cache.as_ref().filter(|s| Arc::ptr_eq(s.tools(), &tools)) {
            return s.clone();
        }
        let idx = Arc::new(search::SearchIndex::new(tools));
        *cache = Some(idx.clone());
        idx
    }

    /// A fingerprint of what `tools/list` answers now: a list_changed goes
    /// out only when it differs.
    fn tools_fingerprint(&self) -> u64 {
        if self.opts.tool_search {
            return 0;
        }
        let (tools, _) = self.tool_list();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for t in tools.iter() {
            let _ = serde_json::to_writer(HashWriter(&mut h), t);
        }
        h.finish()
    }
}

/// Lets serde_json write straight into a hasher.
struct HashWriter<'a, H: Hasher>(&'a mut H);

impl<H: Hasher> std::io::Write for HashWriter<'_, H> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        buf.hash(self.0);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An MCP log level from a log line's kind (`None`: not a server log message).
fn level_of(kind: &str) -> Option<LoggingLevel> {
    serde_json::from_value(serde_json::Value::String(kind.to_string())).ok()
}

fn level_rank(l: LoggingLevel) -> u8 {
    l as u8
}

/// Hears the manager and the switches; tells every session what changed,
/// coalesced over [`COALESCE`].
async fn notifier(
    inner: Weak<Inner>,
    mut events: broadcast::Receiver<EngineEvent>,
    mut switches: watch::Receiver<Arc<Switches>>,
    mut trust: Option<watch::Receiver<Arc<TrustBasis>>>,
    stop: CancellationToken,
) {
    let mut pending: u8 = 0;
    let mut flush_at: Option<tokio::time::Instant> = None;
    // The first change after a quiet spell goes out at once; what follows
    // within COALESCE goes out as one, after it.
    let mut last_flush = tokio::time::Instant::now() - COALESCE;
    let mut last_tools = match inner.upgrade() {
        Some(i) => i.tools_fingerprint(),
        None => return,
    };
    let mut last_switches = switches.borrow().clone();
    loop {
        let earliest = last_flush + COALESCE;
        let raise = |bits: u8, pending: &mut u8, flush_at: &mut Option<tokio::time::Instant>| {
            *pending |= bits;
            flush_at.get_or_insert_with(|| earliest.max(tokio::time::Instant::now()));
        };
        tokio::select! {
            _ = stop.cancelled() => return,
            ev = events.recv() => {
                let Some(inner) = inner.upgrade() else { return };
                match ev {
                    Ok(ev) => {
                        let bits = inner.classify(&ev);
                        if bits != 0 {
                            raise(bits, &mut pending, &mut flush_at);
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => raise(ALL, &mut pending, &mut flush_at),
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
            changed = switches.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = switches.borrow_and_update().clone();
                let bits = if now.same_servers(&last_switches) { TOOLS } else { ALL };
                last_switches = now;
                raise(bits, &mut pending, &mut flush_at);
            }
            changed = async { trust.as_mut().expect("guarded").changed().await }, if trust.is_some() => {
                match changed {
                    // An approval or a mode change: tools, prompts or templates may come or go.
                    Ok(()) => raise(ALL, &mut pending, &mut flush_at),
                    Err(_) => trust = None,
                }
            }
            _ = async { tokio::time::sleep_until(flush_at.unwrap()).await }, if flush_at.is_some() => {
                flush_at = None;
                last_flush = tokio::time::Instant::now();
                let Some(inner) = inner.upgrade() else { return };
                let mut bits = std::mem::take(&mut pending);
                if bits & TOOLS != 0 {
                    let fp = inner.tools_fingerprint();
                    if fp == last_tools {
                        bits &= !TOOLS;
                    }
                    last_tools = fp;
                }
                if bits != 0 {
                    for s in inner.live_sessions() {
                        s.outbox.raise(bits);
                    }
                }
            }
        }
    }
}

impl Inner {
    /// What an engine event changes for this gateway's clients; log lines
    /// and resource updates go straight to the sessions concerned.
    fn classify(&self, ev: &EngineEvent) -> u8 {
        match ev {
            EngineEvent::Tools { server, .. } if self.visible(server) => TOOLS,
            // Connected or gone: its resources and prompts came or went.
            EngineEvent::Status { server, .. } if self.visible(server) => ALL,
            EngineEvent::Removed { server } if self.visible(server) => ALL,
            EngineEvent::ResourcesChanged { server } if self.visible(server) => RESOURCES,
            EngineEvent::PromptsChanged { server } if self.visible(server) => PROMPTS,
            EngineEvent::ResourceUpdated { server, uri } if self.visible(server) => {
                let uri = match self.scope {
                    Scope::All | Scope::Profile(_) | Scope::Team(_) => {
                        routes::wrap_uri(server, uri)
                    }
                    Scope::One(_) => uri.clone(),
                };
                for s in self.live_sessions() {
                    if s.subscriptions.lock().unwrap().contains(&uri) {
                        s.outbox.updated(uri.clone());
                    }
                }
                0
            }
            EngineEvent::Log { server, lines } if self.visible(server) => {
                let sessions = self.live_sessions();
                if sessions.is_empty() {
                    return 0;
                }
                for line in lines {
                    let Some(level) = level_of(&line.kind) else {
                        continue;
                    };
                    let msg = LoggingMessageNotificationParam::new(
                        level,
                        serde_json::Value::String(line.text.clone()),
                    )
                    .with_logger(server.clone());
                    for s in &sessions {
                        if level_rank(level) >= level_rank(*s.log_level.lock().unwrap()) {
                            s.outbox.push(Outgoing::Log(msg.clone()));
                        }
                    }
                }
                0
            }
            _ => 0,
        }
    }
}

/// Sends what a session's outbox holds, in order, each send bounded; ends
/// with the session.
pub(crate) async fn drain(outbox: Arc<Outbox>, peer: Peer<RoleServer>) {
    loop {
        if outbox.closed.load(Ordering::Acquire) || peer.is_transport_closed() {
            return;
        }
        let bits = outbox.flags.swap(0, Ordering::AcqRel);
        let queued: Vec<Outgoing> = outbox.logs.lock().unwrap().drain(..).collect();
        let updated: Vec<String> = std::mem::take(&mut *outbox.updated.lock().unwrap())
            .into_iter()
            .collect();
        let mut ok = true;
        let send = |f: futures::future::BoxFuture<'static, Result<(), rmcp::ServiceError>>| async move {
            !matches!(
                tokio::time::timeout(SEND_TIMEOUT, f).await,
                Ok(Err(rmcp::ServiceError::TransportClosed))
            )
        };
        if bits & TOOLS != 0 {
            let p = peer.clone();
            ok &= send(Box::pin(async move { p.notify_tool_list_changed().await })).await;
        }
        if bits & RESOURCES != 0 {
            let p = peer.clone();
            ok &= send(Box::pin(
                async move { p.notify_resource_list_changed().await },
            ))
            .await;
        }
        if bits & PROMPTS != 0 {
            let p = peer.clone();
            ok &= send(Box::pin(
                async move { p.notify_prompt_list_changed().await },
            ))
            .await;
        }
        for uri in updated {
            let p = peer.clone();
            let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
            ok &= send(Box::pin(
                async move { p.notify_resource_updated(param).await },
            ))
            .await;
        }
        for o in queued {
            let p = peer.clone();
            ok &= match o {
                Outgoing::Log(m) => {
                    send(Box::pin(async move { p.notify_logging_message(m).await })).await
                }
            };
        }
        if !ok {
            return;
        }
        let more = outbox.flags.load(Ordering::Acquire) != 0
            || !outbox.logs.lock().unwrap().is_empty()
            || !outbox.updated.lock().unwrap().is_empty();
        if !more {
            outbox.wake.notified().await;
        }
    }
}
