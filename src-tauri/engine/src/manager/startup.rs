//! Starting a set of servers behind the startup gate.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::Tool;
use serde::Serialize;

use crate::events::{ServerError, ServerStatus};

use super::state::Phase;
use super::{Manager, Slot, Wanted};

/// The result of the startup gate.
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

impl Manager {
    /// Start every server and wait for the startup gate: until all settle
    /// or the gate (`gate`, a quarter second by default) passes; then pending
    /// servers with a tool cache entry offer their cached tools (deferred:
    /// a call waits for the server) and the others are waited for.
    pub async fn start(&self, wanted: Vec<Wanted>) -> StartupReport {
        let t0 = Instant::now();
        let started = self.add_all(wanted);
        let deadline = tokio::time::Instant::now() + self.shared.opts.gate;
        // For the gate a server is settled once its first attempt ended: a
        // failed start that is now backing off must not hold everyone up.
        let first_settled = |st: &ServerStatus| !matches!(st, ServerStatus::Connecting);
        futures::future::join_all(started.iter().map(|s| async move {
            let _ = tokio::time::timeout_at(deadline, s.wait_until(first_settled)).await;
        }))
        .await;
        let mut report = StartupReport::default();
        let mut wait_for = vec![];
        for s in &started {
            if first_settled(&s.status()) {
                continue;
            }
            match self.shared.cache.get(&s.name, &s.hash).await {
                Some(tools) => {
                    if self.offer_cached(s, tools) {
                        report.deferred.push(s.name.clone());
                    }
                }
                None => wait_for.push(s.clone()),
            }
        }
        // What a client may be shown now is in the index: the gate has passed.
        self.shared.gate_passed.send_replace(true);
        futures::future::join_all(wait_for.iter().map(|s| s.wait_until(first_settled))).await;
        for s in &started {
            match s.status() {
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
                    let error = {
                        let rt = s.rt.lock().unwrap();
                        rt.phase.why().map(|d| d.error.clone()).unwrap_or_default()
                    };
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

    /// Offer a still pending server's cached tools (deferred); not once it
    /// has a live session: a live list always wins.
    fn offer_cached(&self, slot: &Slot, tools: Arc<Vec<Tool>>) -> bool {
        let mut rt = slot.rt.lock().unwrap();
        let next = match &rt.phase {
            _ if !rt.current => return false,
            Phase::Connecting { .. } => Phase::Connecting {
                cached: Some(tools),
            },
            Phase::Restarting {
                attempt, of, why, ..
            } => Phase::Restarting {
                attempt: *attempt,
                of: *of,
                why: why.clone(),
                cached: Some(tools),
            },
            _ => return false,
        };
        self.transition(slot, &mut rt, next);
        true
    }

    /// Wait until no server is connecting or restarting.
    pub async fn settle(&self) {
        let slots = self.all_slots();
        futures::future::join_all(slots.iter().map(|s| s.wait_until(|st| !st.is_pending()))).await;
    }
}
