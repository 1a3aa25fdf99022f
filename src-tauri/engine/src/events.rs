//! Engine events: every state change is published on one broadcast channel
//! that the app forwards to the UI and the CLI prints, so nothing polls.

use serde::Serialize;

/// A server's lifecycle state, derived from its phase in the manager. Every
/// change goes through the manager's `transition`, which also publishes it.
/// What a reconcile did, by server name (`EngineEvent::Reconciled`).
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

/// A server that could not be started or changed, and why.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerError {
    pub server: String,
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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

impl ServerStatus {
    /// Still on its way up: a deferred call waits for it.
    pub fn is_pending(&self) -> bool {
        matches!(
            self,
            ServerStatus::Connecting | ServerStatus::Restarting { .. }
        )
    }
    pub fn label(&self) -> &'static str {
        match self {
            ServerStatus::Connecting => "connecting",
            ServerStatus::Connected => "connected",
            ServerStatus::Disabled => "disabled",
            ServerStatus::Failed { .. } => "failed",
            ServerStatus::NeedsAuth { .. } => "needs-auth",
            ServerStatus::Restarting { .. } => "restarting",
            ServerStatus::Disconnected => "disconnected",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogLine {
    /// The line's number among every line this process logged, for all
    /// servers: it only grows, and a server's lines are numbered in their
    /// order. A line buffered before its batch is published can reach a
    /// reader twice (in a snapshot and then in the event); the number says
    /// which lines the reader already has.
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub at: u64,
    /// `stderr`, `lifecycle` or a server log level (`info`, `error`, …).
    pub kind: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum EngineEvent {
    Status {
        server: String,
        status: ServerStatus,
    },
    /// A server's tool slice changed (connected, re-listed, removed).
    Tools {
        server: String,
        count: usize,
        deferred: bool,
    },
    /// New lines of a server's log, in order: lifecycle lines at once,
    /// stderr and the server's own log messages batched (about 20 events a
    /// second at most per server).
    Log {
        server: String,
        lines: Vec<LogLine>,
    },
    Warning {
        server: String,
        message: String,
    },
    /// A server left the registry (removed or no longer configured).
    Removed {
        server: String,
    },
    /// `notifications/resources/updated`, for every server, across restarts.
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
    /// A server asks the user for input (elicitation); the app shows a form.
    Elicitation {
        id: u64,
        server: String,
        message: String,
        #[cfg_attr(feature = "ts", ts(type = "JsonSchema"))]
        schema: serde_json::Value,
    },
    /// A watched config file's bytes changed on disk: `source` is a
    /// source id (one event per source living in that file), or `settings` /
    /// `gemini-enablement` for those files. Published by `watch::Live`.
    SourceChanged {
        source: String,
        path: std::path::PathBuf,
    },
    /// Discovery ran again after a change; the new result is `Live::discovery()`.
    DiscoveryChanged {
        servers: usize,
        warnings: usize,
    },
    /// A sign-in's progress. `url` is the authorization page
    /// (no token in it) for users whose browser did not open.
    SignIn {
        server: String,
        phase: SignInPhase,
    },
    /// Tool approvals or approval modes changed (by the app, the CLI, or a
    /// first connect): what is approved, new, changed and held may differ.
    Approvals,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum SignInPhase {
    /// Waiting for the browser to come back.
    Waiting {
        url: String,
    },
    SignedIn,
    SignedOut,
    Failed {
        error: String,
    },
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
