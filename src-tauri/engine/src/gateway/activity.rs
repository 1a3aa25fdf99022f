//! What the gateway is doing, for the app's status: the client
//! sessions open now (name and version from their `initialize`) and how
//! often each tool was called through the gateway since it started. Shared
//! by the aggregate and every one-server gateway of a manager; watchers are
//! told through a counter that changes with every update.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use serde::Serialize;
use tokio::sync::watch;

use super::SessionInfo;

/// Calls of one tool (server and raw tool name) through the gateway.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "GatewayToolCalls"))]
#[serde(rename_all = "camelCase")]
pub struct ToolCalls {
    pub server: String,
    pub tool: String,
    pub calls: u64,
    /// Calls that ended in an error (protocol error or `isError` result).
    pub errors: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivitySnapshot {
    /// Open sessions, oldest first.
    pub sessions: Vec<SessionInfo>,
    /// Per tool, most called first.
    pub calls: Vec<ToolCalls>,
}

/// Told of every tool call the gateway forwarded, as it ends (the team
/// gateway's Prometheus metrics). Called on the call's task: keep it quick.
pub trait CallObserver: Send + Sync {
    fn called(&self, server: &str, tool: &str, failed: bool, took: std::time::Duration);
}

pub struct Activity {
    sessions: Mutex<BTreeMap<u64, SessionInfo>>,
    calls: Mutex<HashMap<(String, String), (u64, u64)>>,
    changed: watch::Sender<u64>,
    observer: std::sync::OnceLock<std::sync::Arc<dyn CallObserver>>,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            sessions: Mutex::default(),
            calls: Mutex::default(),
            changed: watch::channel(0).0,
            observer: std::sync::OnceLock::new(),
        }
    }
}

impl Activity {
    fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub(crate) fn opened(&self, info: &SessionInfo) {
        self.sessions.lock().unwrap().insert(info.id, info.clone());
        self.bump();
    }

    pub(crate) fn closed(&self, id: u64) {
        if self.sessions.lock().unwrap().remove(&id).is_some() {
            self.bump();
        }
    }

    /// Sets the observer told of every call (once; later calls are ignored).
    pub fn observe(&self, observer: std::sync::Arc<dyn CallObserver>) {
        let _ = self.observer.set(observer);
    }

    pub(crate) fn called(&self, server: &str, tool: &str, failed: bool, took: std::time::Duration) {
        if let Some(o) = self.observer.get() {
            o.called(server, tool, failed, took);
        }
        {
            let mut calls = self.calls.lock().unwrap();
            let c = calls
                .entry((server.to_string(), tool.to_string()))
                .or_default();
            c.0 += 1;
            c.1 += u64::from(failed);
        }
        self.bump();
    }

    pub fn snapshot(&self) -> ActivitySnapshot {
        let sessions = self.sessions.lock().unwrap().values().cloned().collect();
        let mut calls: Vec<ToolCalls> = self
            .calls
            .lock()
            .unwrap()
            .iter()
            .map(|((server, tool), (calls, errors))| ToolCalls {
                server: server.clone(),
                tool: tool.clone(),
                calls: *calls,
                errors: *errors,
            })
            .collect();
        calls.sort_by(|a, b| {
            b.calls
                .cmp(&a.calls)
                .then_with(|| (&a.server, &a.tool).cmp(&(&b.server, &b.tool)))
        });
        ActivitySnapshot { sessions, calls }
    }

    /// Changes whenever a session opens or closes or a call ends.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}
