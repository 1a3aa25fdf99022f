//! Starting a set of servers behind the startup gate.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::events::ServerStatus;

use super::{Manager, Slot, Wanted};

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

impl Manager {
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
}
