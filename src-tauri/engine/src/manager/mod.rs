//! The manager (SPEC M1–M6, M11): connects every enabled server in
//! parallel, keeps one explicit state per server, names their tools, routes
//! calls, and tears sessions and process groups down. Locks are plain
//! `std::sync` locks held only for quick reads and swaps, never across an
//! await that talks to a server.

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
use std::sync::{Arc, Mutex, RwLock};

use indexmap::IndexMap;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::secrets::SecretResolver;
use crate::events::EngineEvent;
use crate::launch::CommandResolver;

pub use calls::{flatten, CallError, CallOutcome, ForwardError};
pub use connection::{
    ClientHooks, ElicitAnswer, ElicitRequest, ElicitationHandler, ProgressHandler, SamplingHandler,
    SamplingRequest,
};
pub use index::{ToolEntry, ToolIndex};
pub use options::{
    ManagerOptions, DEFAULT_CALL_TIMEOUT, DEFAULT_GATE, DEFAULT_GRACE, DEFAULT_HEALTHY_AFTER,
    DEFAULT_HEALTH_INTERVAL, DEFAULT_PING_TIMEOUT, DEFAULT_TIMEOUT, RELIST_INTERVAL,
};
pub use reconcile::ReconcileReport;
pub use registry::RegistryError;
pub use startup::{ServerError, StartupReport};
pub use state::{ServerState, Slot};
pub use supervisor::backoff;
pub use wanted::Wanted;

use tool_cache::ToolCache;

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
}
