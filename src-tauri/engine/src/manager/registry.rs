//! The registered servers: add, stop, start, disable, update, remove.
//!
//! Every operation on a server changes its runtime under its one lock (and
//! the registry's lock, for the set of servers) and then waits, holding no
//! lock, for what it needs: a previous run to end, a handshake to settle.
//! Each start begins a new *run* (see `Runtime::run`); a run that was
//! overtaken by a later operation changes nothing, and a new run starts its
//! process only after every earlier run of that server has ended, so two
//! processes of one server never overlap and the latest operation wins.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::events::{EngineEvent, ServerStatus};

use super::logbuf::LogSink;
use super::orphans;
use super::state::{Phase, Runtime, Slot};
use super::{Manager, Wanted};

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    #[error("Unknown server \"{0}\"")]
    Unknown(String),
    #[error("Server \"{0}\" is not connected")]
    NotConnected(String),
    #[error("Failed to connect to \"{server}\": {error}")]
    UpdateFailed { server: String, error: String },
    #[error("MCP error: {0}")]
    Mcp(String),
    /// Switchboard's checks on what comes back refused the answer; the
    /// message says what was found and how to allow it.
    #[error("{0}")]
    Refused(String),
}

/// A token that is already cancelled: nothing to wait for.
fn nothing_before() -> CancellationToken {
    let t = CancellationToken::new();
    t.cancel();
    t
}

impl Manager {
    /// A new slot for `w` at registry place `seq`, in `Stopped`; its first
    /// run waits for `before` to end.
    fn new_slot(&self, w: Wanted, seq: u64, before: CancellationToken) -> Arc<Slot> {
        let log = LogSink::with_redactor(
            &w.def.name,
            self.shared.events.clone(),
            crate::redact::Redactor::feeding(self.shared.known_secrets.clone()),
        );
        Arc::new(Slot::new(w, seq, log, before))
    }

    /// Its first phase: connecting (a new run) or disabled.
    fn bring_up(&self, slot: &Arc<Slot>, rt: &mut Runtime) {
        if slot.wanted.def.enabled {
            self.begin(slot, rt);
        } else {
            self.transition(slot, rt, Phase::Disabled);
        }
    }

    /// Start a new run (`rt` is the slot's locked runtime): the current one
    /// is told to stop, the phase becomes `Connecting` at once (so gates
    /// and callers see it pending), and the supervising task starts its
    /// first connection once every earlier run has ended.
    fn begin(&self, slot: &Arc<Slot>, rt: &mut Runtime) {
        rt.stop.cancel();
        rt.run += 1;
        rt.restarts = 0;
        let stop = CancellationToken::new();
        let ended = CancellationToken::new();
        rt.stop = stop.clone();
        let before = std::mem::replace(&mut rt.ended, ended.clone());
        self.transition(slot, rt, Phase::Connecting { cached: None });
        let (me, slot, run) = (self.clone(), slot.clone(), rt.run);
        self.shared.tracker.spawn(async move {
            let _ended = ended.drop_guard();
            before.cancelled().await;
            if !stop.is_cancelled() {
                me.supervise(slot, run, stop).await;
            }
        });
    }

    /// Stop the current run (`rt` is the slot's locked runtime): the phase
    /// becomes `Stopped` (a disabled server stays disabled). Returns what to
    /// wait for until its process is gone.
    fn halt(&self, slot: &Slot, rt: &mut Runtime) -> CancellationToken {
        rt.stop.cancel();
        rt.run += 1;
        if !matches!(rt.phase, Phase::Stopped | Phase::Disabled) {
            self.transition(slot, rt, Phase::Stopped);
        }
        rt.ended.clone()
    }

    /// Run `op` on the registered, current slot `name` under its lock.
    fn operate<R>(
        &self,
        name: &str,
        op: impl FnOnce(&Arc<Slot>, &mut Runtime) -> R,
    ) -> Result<R, RegistryError> {
        let slots = self.shared.slots.read().unwrap();
        let slot = slots
            .get(name)
            .ok_or_else(|| RegistryError::Unknown(name.into()))?;
        let mut rt = slot.rt.lock().unwrap();
        if !rt.current {
            // Being removed.
            return Err(RegistryError::Unknown(name.into()));
        }
        Ok(op(slot, &mut rt))
    }

    /// Register servers and connect the enabled ones in parallel. Returns
    /// at once; see `start` for the gated variant. Names already registered
    /// are skipped (use `update` or `reconcile` to change them).
    pub fn add_all(&self, wanted: Vec<Wanted>) -> Vec<Arc<Slot>> {
        let mut started = vec![];
        for w in wanted {
            let name = w.def.name.clone();
            let mut slots = self.shared.slots.write().unwrap();
            if slots.contains_key(&name) {
                continue;
            }
            let seq = self.shared.next_seq.fetch_add(1, Ordering::Relaxed);
            let slot = self.new_slot(w, seq, nothing_before());
            slots.insert(name, slot.clone());
            // Still under the registry's lock: nobody lists it before it is
            // connecting or disabled.
            self.bring_up(&slot, &mut slot.rt.lock().unwrap());
            if slot.wanted.def.enabled {
                started.push(slot);
            }
        }
        started
    }

    /// Stop a server deliberately (it stays registered, `Disconnected`, and
    /// is never restarted by the supervisor). Waits until it is down.
    pub async fn stop(&self, name: &str) -> Result<(), RegistryError> {
        let ended = self.operate(name, |slot, rt| self.halt(slot, rt))?;
        ended.cancelled().await;
        Ok(())
    }

    /// Start a registered server that is stopped, failed or disabled at
    /// runtime (a running one starts over). Returns once its previous
    /// process is gone and the new one is on its way.
    pub async fn start_server(&self, name: &str) -> Result<(), RegistryError> {
        let ended = self.operate(name, |slot, rt| {
            let ended = self.halt(slot, rt);
            self.begin(slot, rt);
            ended
        })?;
        ended.cancelled().await;
        Ok(())
    }

    /// Stop and start again; the attempt counter starts over.
    pub async fn restart(&self, name: &str) -> Result<(), RegistryError> {
        self.start_server(name).await
    }

    /// Turn a server off at runtime (the config is the writer's business).
    pub async fn disable(&self, name: &str) -> Result<(), RegistryError> {
        let ended = self.operate(name, |slot, rt| {
            let ended = self.halt(slot, rt);
            self.transition(slot, rt, Phase::Disabled);
            ended
        })?;
        ended.cancelled().await;
        Ok(())
    }

    pub async fn enable(&self, name: &str) -> Result<(), RegistryError> {
        self.start_server(name).await
    }

    /// Disconnect one server and forget it: close its session, end its
    /// process group, remove its tools. Waits until it is down.
    pub async fn disconnect(&self, name: &str) -> bool {
        let Ok((slot, ended)) = self.operate(name, |slot, rt| {
            let ended = self.halt(slot, rt);
            rt.current = false;
            (slot.clone(), ended)
        }) else {
            return false;
        };
        ended.cancelled().await;
        {
            let mut slots = self.shared.slots.write().unwrap();
            if slots.get(name).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                slots.shift_remove(name);
                self.shared.index.remove(name);
            }
        }
        let _ = self.shared.events.send(EngineEvent::Removed {
            server: name.into(),
        });
        true
    }

    pub async fn remove(&self, name: &str) -> bool {
        self.disconnect(name).await
    }

    /// Replace the current slot of `w`'s name with a new one for `w`, under
    /// the registry's lock (`only`: only if the current slot is that one, at
    /// that run). The old slot's run is stopped; the new slot's first run
    /// waits for it to end. Returns the old slot, the new one, its run, and
    /// what to wait for until the old one's process is gone.
    fn replace(
        &self,
        w: Wanted,
        only: Option<(&Arc<Slot>, u64)>,
    ) -> Option<(Arc<Slot>, Arc<Slot>, u64, CancellationToken)> {
        let name = w.def.name.clone();
        let mut slots = self.shared.slots.write().unwrap();
        let old = slots.get(&name)?.clone();
        let ended = {
            let mut rt = old.rt.lock().unwrap();
            let wanted_here = only.is_none_or(|(s, run)| {
                Arc::ptr_eq(s, &old) && rt.run == run && !matches!(rt.phase, Phase::Connected(_))
            });
            if !rt.current || !wanted_here {
                return None;
            }
            let ended = self.halt(&old, &mut rt);
            rt.current = false;
            ended
        };
        let new = self.new_slot(w, old.seq, ended.clone());
        slots.insert(name, new.clone());
        let mut rt = new.rt.lock().unwrap();
        self.bring_up(&new, &mut rt);
        let run = rt.run;
        drop(rt);
        Some((old, new, run, ended))
    }

    /// Replace a server's definition: stop it, start the new one; if the
    /// replacement does not connect, restore and restart the previous
    /// definition and return the replacement's error. No lock is held while
    /// the new definition connects: a stop, restart or other update meanwhile
    /// wins (the previous definition is then not restored).
    pub async fn update(&self, wanted: Wanted) -> Result<(), RegistryError> {
        let name = wanted.def.name.clone();
        let (old, new, run, old_ended) = self
            .replace(wanted, None)
            .ok_or_else(|| RegistryError::Unknown(name.clone()))?;
        if !new.wanted.def.enabled {
            old_ended.cancelled().await;
            return Ok(());
        }
        let settled = new
            .wait_until(|s| !matches!(s, ServerStatus::Connecting))
            .await;
        let error = match settled {
            ServerStatus::Connected => return Ok(()),
            ServerStatus::Failed { error } => Some(error),
            ServerStatus::NeedsAuth { message } => Some(message),
            _ => new.state_error(),
        };
        // Restored only while the new definition is not connected and nothing
        // else happened to the server since.
        if let Some((_, _, _, new_ended)) = self.replace(old.wanted.clone(), Some((&new, run))) {
            new_ended.cancelled().await;
            return Err(RegistryError::UpdateFailed {
                server: name,
                error: error.unwrap_or_else(|| "the new definition did not connect".into()),
            });
        }
        // It connected after all, or a later operation took over.
        match (new.status(), error) {
            (ServerStatus::Connected, _) | (_, None) => Ok(()),
            (_, Some(error)) => Err(RegistryError::UpdateFailed {
                server: name,
                error,
            }),
        }
    }

    /// Disconnect every server, in parallel, and wait for every task.
    pub async fn shutdown(&self) {
        // Reconciles still running would start servers behind our back.
        self.shared.closing.cancel();
        self.shared.background.close();
        self.shared.background.wait().await;
        let names = self.server_names();
        futures::future::join_all(names.iter().map(|n| self.disconnect(n))).await;
        self.shared.tracker.close();
        self.shared.tracker.wait().await;
        // Every group is ended: forget them (this run's record goes with them).
        orphans::settle().await;
    }
}

impl Slot {
    /// The error of its last failed attempt, if that is where it is.
    fn state_error(&self) -> Option<String> {
        let rt = self.rt.lock().unwrap();
        rt.phase.why().map(|d| d.error.clone())
    }
}
