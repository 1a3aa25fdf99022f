//! One server's runtime record and what it looks like from outside.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::model::Tool;
use rmcp::service::Peer;
use rmcp::RoleClient;
use serde::Serialize;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::config::Transport;
use crate::doctor::Diagnosis;
use crate::events::{EngineEvent, ServerStatus};

use super::index::ShownList;
use super::logbuf::LogSink;
use super::{Manager, Wanted};

#[derive(Default)]
pub(super) struct SlotState {
    pub(super) peer: Option<Peer<RoleClient>>,
    pub(super) tools: Arc<Vec<Tool>>,
    pub(super) deferred: bool,
    pub(super) pgid: Option<u32>,
    pub(super) binary: Option<PathBuf>,
    pub(super) transport_used: Option<&'static str>,
    pub(super) protocol: Option<String>,
    pub(super) warnings: Vec<String>,
    pub(super) last_error: Option<String>,
    /// Why the last start failed, in plain words (cleared on connect).
    pub(super) diagnosis: Option<Diagnosis>,
    /// What the last stdio start printed on stdout that is not JSON-RPC.
    pub(super) stdout_noise: Vec<String>,
    pub(super) restarts: u32,
    /// The last `WWW-Authenticate` challenge the server answered with.
    pub(super) auth_challenge: Option<String>,
    /// `tools` as the index shows them, made once per list (and the list it
    /// was made from): re-indexing after another server's change then copies
    /// no description or schema of this one.
    pub(super) shown: Option<ShownList>,
}

/// One server's runtime record. A slot lives from `add` to `remove`; each
/// start gets a fresh stop token and one supervising task.
pub struct Slot {
    pub name: String,
    pub wanted: Wanted,
    pub(super) hash: String,
    pub(super) status: watch::Sender<ServerStatus>,
    pub(super) state: Mutex<SlotState>,
    /// Its log, which also masks its secrets in every text shown.
    pub log: Arc<LogSink>,
    pub(super) control: Mutex<Control>,
    /// Resource URIs subscribed to; restored after every reconnect.
    pub(super) subscriptions: Mutex<std::collections::BTreeSet<String>>,
    /// Serializes registry operations on this server (not handshakes).
    pub(super) op: tokio::sync::Mutex<()>,
}

#[derive(Default)]
pub(super) struct Control {
    pub(super) stop: CancellationToken,
    pub(super) task: Option<tokio::task::JoinHandle<()>>,
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

impl Manager {
    /// The one place a status changes: stored, logged, published. Texts in
    /// it have the server's secrets masked.
    pub(super) fn set_status(&self, slot: &Slot, status: ServerStatus) {
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
}
