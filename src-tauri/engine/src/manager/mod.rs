//! The manager: connects every enabled server in parallel, keeps one
//! explicit state per server, names their tools, routes calls, restarts
//! servers that fail, and tears sessions and process groups down. Locks are
//! plain `std::sync` locks held only for quick reads and swaps, never across
//! an await that talks to a server or waits for a process.
//!
//! Where each behaviour lives:
//!
//! | file            | what it does |
//! |-----------------|--------------|
//! | `options`       | [`ManagerOptions`], the default timings, the live [`ManagerDefaults`] |
//! | `wanted`        | [`Wanted`]: a server handed to the manager, and what makes two equal |
//! | `state`         | a server's `Phase` behind its one lock, the transition function, [`ServerState`] |
//! | `registry`      | add, stop, start, disable, update, remove, shutdown; runs of a server |
//! | `startup`       | [`Manager::start`] behind the startup gate, [`Manager::settle`] |
//! | `reconcile`     | making the running set match a wish ([`ReconcileReport`]) |
//! | `supervisor`    | one task per server: restarts with [`backoff`], giving up |
//! | `session`       | one connection's life: handshake, tools, health pings, re-lists, teardown |
//! | `prepare`       | variables, secrets and the command of one launch |
//! | `sign_in`       | stored sign-ins added to a launch |
//! | `connection`    | opening the transport and the handshake |
//! | `client`        | our side of a session: capabilities, roots, elicitation, sampling, notifications |
//! | `process`       | a stdio server's process and its process group |
//! | `orphans`       | no server outlives Switchboard, even a crashed one |
//! | `index`         | the tool index ([`ToolIndex`]) and the tool review's inputs |
//! | `calls`         | `tools/call` and other forwarded requests ([`CallOutcome`], [`CallError`]) |
//! | `catalog`       | resources, prompts, subscriptions, roots |
//! | `hooks`         | what the manager is given: vault, tool trust, elicitation, sampling, progress |
//! | `report`        | logs, warnings, the diagnostic report |
//! | `keepalive`     | refreshing stored sign-ins ahead of expiry |
//! | `logbuf`, `pages`, `tool_cache` | a server's log, paginated lists, the on-disk tool cache |

mod calls;
mod catalog;
mod client;
pub mod connection;
mod hooks;
mod index;
mod keepalive;
pub mod logbuf;
mod options;
pub mod orphans;
pub mod pages;
mod prepare;
mod process;
mod reconcile;
mod registry;
mod report;
mod session;
mod sign_in;
mod startup;
mod state;
mod supervisor;
pub mod tool_cache;
mod wanted;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, RwLock};

use indexmap::IndexMap;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::secrets::SecretResolver;
use crate::events::EngineEvent;
use crate::launch::CommandResolver;

pub use crate::events::ReconcileReport;
pub use crate::events::ServerError;
pub use calls::{flatten, CallError, CallOutcome, ForwardError};
pub use connection::{
    ClientHooks, ElicitAnswer, ElicitRequest, ElicitationHandler, OnSend, ProgressHandler,
    SamplingHandler, SamplingRequest,
};
pub use index::{ToolEntry, ToolIndex};
pub use options::{
    ManagerDefaults, ManagerOptions, DEFAULT_CALL_TIMEOUT, DEFAULT_GATE, DEFAULT_GRACE,
    DEFAULT_HEALTHY_AFTER, DEFAULT_HEALTH_INTERVAL, DEFAULT_PING_TIMEOUT, DEFAULT_TIMEOUT,
    RELIST_INTERVAL,
};
pub use registry::RegistryError;
pub use startup::StartupReport;
pub use state::{PeerInfo, ServerState, Slot};
pub use supervisor::backoff;
pub use wanted::Wanted;

use tool_cache::ToolCache;

struct Shared {
    /// The registered servers, in the order they were added.
    slots: RwLock<IndexMap<String, Arc<Slot>>>,
    /// Gives each registered server its place (the tool index's order).
    next_seq: AtomicU64,
    events: broadcast::Sender<EngineEvent>,
    index: index::Index,
    cache: ToolCache,
    secrets: SecretResolver,
    /// Built on first launch: asking the login shell for its PATH can take a moment.
    commands: tokio::sync::OnceCell<Arc<CommandResolver>>,
    opts: ManagerOptions,
    /// What servers without their own timeout or restart policy use, and
    /// the health-check interval; changed at runtime by `set_defaults`.
    defaults: watch::Sender<ManagerDefaults>,
    /// Every server's supervising task.
    tracker: TaskTracker,
    client_hooks: Arc<ClientHooks>,
    /// Stored sign-ins; `None`: no OAuth tokens are injected.
    vault: RwLock<Option<crate::auth::vault::Vault>>,
    /// Every secret value of every server's launches so far (env and
    /// header values, tokens): masked in the call journal and in what
    /// servers return.
    known_secrets: Arc<crate::redact::Redactor>,
    /// Where calls through the gateway and the app are recorded; `None`:
    /// nowhere.
    journal: RwLock<Option<crate::journal::Journal>>,
    /// Pins and approval modes the gateway follows; `None`: nothing is held.
    trust: RwLock<Option<Arc<crate::tool_trust::TrustCell>>>,
    /// The newest reconcile's wish, by name (absent: not wanted). A
    /// server's reconcile step reads it under that name's lock, so
    /// reconciles that overlap converge on the newest wish.
    desired: Mutex<HashMap<String, Wanted>>,
    /// One queue per server name for reconcile steps: an update replaces the
    /// slot, so nothing of the slot can order two steps on one name.
    steps: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Reconciles running in the background, ended at shutdown.
    background: TaskTracker,
    closing: CancellationToken,
    /// Whether the sign-in refresh timer (`keepalive`) runs.
    keepalive_started: AtomicBool,
    /// Set once a [`Manager::start`] passed its startup gate (cached tools of
    /// servers still starting are offered from then on).
    gate_passed: watch::Sender<bool>,
    /// Gives the memory of replaced tool lists back after a burst of them.
    trim: crate::memory::QuietTrim,
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
                next_seq: AtomicU64::new(0),
                events,
                index: Default::default(),
                cache: ToolCache::new(opts.cache_path.clone()),
                secrets,
                commands: tokio::sync::OnceCell::new(),
                defaults: watch::channel(ManagerDefaults::from(&opts)).0,
                opts,
                tracker: TaskTracker::new(),
                client_hooks: Arc::new(ClientHooks::default()),
                vault: RwLock::new(None),
                known_secrets: Default::default(),
                journal: RwLock::new(None),
                trust: RwLock::new(None),
                desired: Mutex::new(HashMap::new()),
                steps: Mutex::new(HashMap::new()),
                background: TaskTracker::new(),
                closing: CancellationToken::new(),
                keepalive_started: Default::default(),
                gate_passed: watch::channel(false).0,
                trim: Default::default(),
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

    /// Tell the manager's listeners (the app) something from outside the
    /// manager (the gateway's checks on answers).
    pub fn announce(&self, event: EngineEvent) {
        let _ = self.shared.events.send(event);
    }

    fn slot(&self, name: &str) -> Option<Arc<Slot>> {
        self.shared.slots.read().unwrap().get(name).cloned()
    }

    /// Every registered server, in registry order.
    fn all_slots(&self) -> Vec<Arc<Slot>> {
        self.shared
            .slots
            .read()
            .unwrap()
            .values()
            .cloned()
            .collect()
    }

    pub fn server_names(&self) -> Vec<String> {
        self.shared.slots.read().unwrap().keys().cloned().collect()
    }
}
