//! The registered servers: add, stop, start, update, remove.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::events::{EngineEvent, ServerStatus};

use super::connection::{self, terminate_group};
use super::logbuf::LogSink;
use super::orphans;
use super::state::{Control, Slot, SlotState};
use super::tool_cache::config_hash;
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
}

impl Manager {
    pub(super) fn new_slot(&self, w: Wanted) -> Arc<Slot> {
        Arc::new(Slot {
            name: w.def.name.clone(),
            hash: config_hash(&w.def),
            // Born with the status it is listed with: a list read between
            // registering a disabled server and marking it would say "stopped".
            status: watch::channel(if w.def.enabled {
                ServerStatus::Disconnected
            } else {
                ServerStatus::Disabled
            })
            .0,
            state: Mutex::new(SlotState::default()),
            log: LogSink::new(&w.def.name, self.shared.events.clone()),
            control: Mutex::new(Control::default()),
            subscriptions: Mutex::new(Default::default()),
            op: tokio::sync::Mutex::new(()),
            wanted: w,
        })
    }

    /// Register servers and connect the enabled ones in parallel. Returns
    /// at once; see `start` for the gated variant. Names already registered
    /// are skipped (use `update` or `reconcile` to change them).
    pub fn add_all(&self, wanted: Vec<Wanted>) -> Vec<Arc<Slot>> {
        let mut started = vec![];
        for w in wanted {
            let name = w.def.name.clone();
            let slot = {
                let mut slots = self.shared.slots.write().unwrap();
                if slots.contains_key(&name) {
                    continue;
                }
                let slot = self.new_slot(w);
                slots.insert(name, slot.clone());
                slot
            };
            if slot.wanted.def.enabled {
                self.launch(&slot);
                started.push(slot);
            } else {
                self.set_status(&slot, ServerStatus::Disabled);
            }
        }
        started
    }

    /// Spawn the supervising task for a registered slot.
    pub(super) fn launch(&self, slot: &Arc<Slot>) {
        // Mark pending before returning so gates and callers see it.
        self.set_status(slot, ServerStatus::Connecting);
        slot.state.lock().unwrap().restarts = 0;
        let stop = CancellationToken::new();
        let me = self.clone();
        let s = slot.clone();
        let st = stop.clone();
        let task = self
            .shared
            .tracker
            .spawn(async move { me.supervise(s, st).await });
        let mut c = slot.control.lock().unwrap();
        c.stop = stop;
        c.task = Some(task);
    }

    /// Stop a server deliberately (it stays registered, `Disconnected`, and
    /// is never restarted by the supervisor). Waits until it is down.
    pub async fn stop(&self, name: &str) -> Result<(), RegistryError> {
        let slot = self
            .slot(name)
            .ok_or_else(|| RegistryError::Unknown(name.into()))?;
        let _op = slot.op.lock().await;
        self.stop_slot(&slot).await;
        Ok(())
    }

    pub(super) async fn stop_slot(&self, slot: &Arc<Slot>) {
        let task = {
            let mut c = slot.control.lock().unwrap();
            c.stop.cancel();
            c.task.take()
        };
        if let Some(t) = task {
            let _ = t.await;
        }
        // A server that never got a session may still have a group.
        let pgid = slot.state.lock().unwrap().pgid.take();
        if let Some(p) = pgid {
            if connection::group_alive(p) {
                terminate_group(p, Duration::ZERO).await;
            }
        }
        if !matches!(
            *slot.status.borrow(),
            ServerStatus::Disconnected | ServerStatus::Disabled
        ) {
            self.set_status(slot, ServerStatus::Disconnected);
        }
    }

    /// Start a registered server that is stopped, failed or disabled-at-runtime.
    pub async fn start_server(&self, name: &str) -> Result<(), RegistryError> {
        let slot = self
            .slot(name)
            .ok_or_else(|| RegistryError::Unknown(name.into()))?;
        let _op = slot.op.lock().await;
        self.stop_slot(&slot).await;
        self.launch(&slot);
        Ok(())
    }

    /// Stop and start again; the attempt counter starts over.
    pub async fn restart(&self, name: &str) -> Result<(), RegistryError> {
        self.start_server(name).await
    }

    /// Turn a server off at runtime (the config is the writer's business).
    pub async fn disable(&self, name: &str) -> Result<(), RegistryError> {
        let slot = self
            .slot(name)
            .ok_or_else(|| RegistryError::Unknown(name.into()))?;
        let _op = slot.op.lock().await;
        self.stop_slot(&slot).await;
        self.set_status(&slot, ServerStatus::Disabled);
        Ok(())
    }

    pub async fn enable(&self, name: &str) -> Result<(), RegistryError> {
        self.start_server(name).await
    }

    /// Disconnect one server and forget it: close its session, end its
    /// process group, remove its tools (SPEC M11). Waits until it is down.
    pub async fn disconnect(&self, name: &str) -> bool {
        let Some(slot) = self.slot(name) else {
            return false;
        };
        let _op = slot.op.lock().await;
        self.stop_slot(&slot).await;
        self.shared.slots.write().unwrap().shift_remove(name);
        self.reindex();
        let _ = self.shared.events.send(EngineEvent::Removed {
            server: name.into(),
        });
        true
    }

    pub async fn remove(&self, name: &str) -> bool {
        self.disconnect(name).await
    }

    /// Replace a server's definition (SPEC M10): stop it, start the new one;
    /// if the replacement does not connect, restore and restart the previous
    /// definition and return the replacement's error.
    pub async fn update(&self, wanted: Wanted) -> Result<(), RegistryError> {
        let name = wanted.def.name.clone();
        let old = self
            .slot(&name)
            .ok_or_else(|| RegistryError::Unknown(name.clone()))?;
        let _op = old.op.lock().await;
        self.stop_slot(&old).await;
        let new = self.new_slot(wanted);
        self.shared
            .slots
            .write()
            .unwrap()
            .insert(name.clone(), new.clone());
        if !new.wanted.def.enabled {
            self.set_status(&new, ServerStatus::Disabled);
            self.reindex();
            return Ok(());
        }
        self.launch(&new);
        let mut rx = new.status.subscribe();
        let settled = rx
            .wait_for(|s| !matches!(s, ServerStatus::Connecting))
            .await
            .map(|s| s.clone());
        match settled {
            Ok(ServerStatus::Connected) => Ok(()),
            other => {
                let error = match other {
                    Ok(ServerStatus::Failed { error }) => error,
                    Ok(ServerStatus::NeedsAuth { message }) => message,
                    _ => new
                        .state
                        .lock()
                        .unwrap()
                        .last_error
                        .clone()
                        .unwrap_or_else(|| "the new definition did not connect".into()),
                };
                self.stop_slot(&new).await;
                let restored = self.new_slot(old.wanted.clone());
                self.shared
                    .slots
                    .write()
                    .unwrap()
                    .insert(name.clone(), restored.clone());
                if restored.wanted.def.enabled {
                    self.launch(&restored);
                } else {
                    self.set_status(&restored, ServerStatus::Disabled);
                }
                Err(RegistryError::UpdateFailed {
                    server: name,
                    error,
                })
            }
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
