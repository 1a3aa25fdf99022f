//! Making the running set match a wish.

use std::collections::HashMap;

use crate::events::EngineEvent;

use super::{Manager, ReconcileReport, RegistryError, ServerError, Wanted};

/// What one reconcile step did to its server.
pub(super) enum Step {
    Nothing,
    Kept,
    Started,
    Stopped,
    Updated,
    Failed(RegistryError),
}

impl Manager {
    /// Make the running set match `wanted`: only servers whose
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
    pub(super) fn wish(&self, wanted: Vec<Wanted>) -> Vec<String> {
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

    pub(super) async fn drive(&self, names: Vec<String>) -> ReconcileReport {
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

    pub(super) fn wished(&self, name: &str) -> Option<Wanted> {
        self.shared.desired.lock().unwrap().get(name).cloned()
    }

    /// Bring one server in line with the newest wish for it. A server that
    /// is already as wished is not waited for, even while an earlier step
    /// still runs on it (a handshake in progress): that step checks the
    /// newest wish again when it ends, and goes on until they agree.
    pub(super) async fn step(&self, name: &str) -> Step {
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
}
