//! A server's runtime state: one [`Phase`] whose variants carry their data,
//! behind one lock per server ([`Slot::rt`]); the one function that changes
//! it ([`Manager::transition`]), which also publishes the change; and what
//! the outside sees ([`ServerStatus`], [`ServerState`]), always derived from
//! the phase, never stored beside it.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::Tool;
use rmcp::service::Peer;
use rmcp::RoleClient;
use serde::Serialize;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::config::Transport;
use crate::doctor::Diagnosis;
use crate::events::{EngineEvent, ServerStatus};
use crate::redact::Redactor;

use super::logbuf::LogSink;
use super::{Manager, Wanted};

/// Where a server is in its life, with what belongs to that phase only.
pub(super) enum Phase {
    /// Registered and not running: not started yet, or stopped on purpose.
    Stopped,
    /// Turned off, in its definition or at runtime.
    Disabled,
    /// The first attempt since it was started is under way. `cached`: its
    /// tools from the tool cache, offered (deferred) once the startup gate
    /// passed without it.
    Connecting { cached: Option<Arc<Vec<Tool>>> },
    /// A live session, with the tools it listed.
    Connected(Box<Live>),
    /// An attempt failed: the next one is waiting for its delay, or under way.
    Restarting {
        attempt: u32,
        of: u32,
        why: Diagnosis,
        cached: Option<Arc<Vec<Tool>>>,
    },
    /// The server (or a missing sign-in) wants the user to sign in.
    NeedsAuth {
        message: String,
        /// The server's `WWW-Authenticate` header, when it sent one.
        challenge: Option<String>,
        why: Diagnosis,
    },
    /// Given up: it is not started again until someone asks.
    Failed { error: String, why: Diagnosis },
}

/// A live connection.
#[derive(Clone)]
pub(super) struct Live {
    pub(super) peer: Peer<RoleClient>,
    pub(super) tools: Arc<Vec<Tool>>,
    /// A stdio server's process group.
    pub(super) pgid: Option<u32>,
    pub(super) transport_used: &'static str,
    pub(super) protocol: Option<String>,
    /// How long a request on this connection may take (fixed when it connected).
    pub(super) timeout: Duration,
    /// The connection ended and is being torn down: no tools are offered
    /// and no requests sent while the supervisor waits for the process.
    pub(super) closing: bool,
}

impl Phase {
    pub(super) fn status(&self) -> ServerStatus {
        match self {
            Phase::Stopped => ServerStatus::Disconnected,
            Phase::Disabled => ServerStatus::Disabled,
            Phase::Connecting { .. } => ServerStatus::Connecting,
            Phase::Connected(_) => ServerStatus::Connected,
            Phase::Restarting { attempt, of, .. } => ServerStatus::Restarting {
                attempt: *attempt,
                of: *of,
            },
            Phase::NeedsAuth { message, .. } => ServerStatus::NeedsAuth {
                message: message.clone(),
            },
            Phase::Failed { error, .. } => ServerStatus::Failed {
                error: error.clone(),
            },
        }
    }

    /// The tools it offers now, and whether they are the cached ones.
    pub(super) fn offer(&self) -> Option<(&Arc<Vec<Tool>>, bool)> {
        match self {
            Phase::Connected(live) if !live.closing => Some((&live.tools, false)),
            Phase::Connecting { cached } | Phase::Restarting { cached, .. } => {
                cached.as_ref().map(|t| (t, true))
            }
            _ => None,
        }
    }

    /// Cached tools a pending phase offers (kept from one attempt to the next).
    pub(super) fn cached(&self) -> Option<Arc<Vec<Tool>>> {
        self.offer()
            .filter(|(_, deferred)| *deferred)
            .map(|(t, _)| t.clone())
    }

    pub(super) fn live(&self) -> Option<&Live> {
        match self {
            Phase::Connected(live) => Some(live),
            _ => None,
        }
    }

    pub(super) fn peer(&self) -> Option<Peer<RoleClient>> {
        self.live().filter(|l| !l.closing).map(|l| l.peer.clone())
    }

    /// Why the last attempt failed, while that is what the phase is about.
    pub(super) fn why(&self) -> Option<&Diagnosis> {
        match self {
            Phase::Restarting { why, .. }
            | Phase::NeedsAuth { why, .. }
            | Phase::Failed { why, .. } => Some(why),
            _ => None,
        }
    }

    /// The error of the last failed attempt (not set for a sign-in wanted).
    fn last_error(&self) -> Option<&str> {
        match self {
            Phase::Restarting { why, .. } | Phase::Failed { why, .. } => Some(&why.error),
            _ => None,
        }
    }

    /// The same phase with the server's secrets masked in every text.
    fn masked(self, r: &Redactor) -> Phase {
        let why = |mut d: Diagnosis| {
            for text in [&mut d.summary, &mut d.detail, &mut d.error] {
                *text = r.apply(text);
            }
            d
        };
        match self {
            Phase::Restarting {
                attempt,
                of,
                why: d,
                cached,
            } => Phase::Restarting {
                attempt,
                of,
                why: why(d),
                cached,
            },
            Phase::NeedsAuth {
                message,
                challenge,
                why: d,
            } => Phase::NeedsAuth {
                message: r.apply(&message),
                challenge,
                why: why(d),
            },
            Phase::Failed { error, why: d } => Phase::Failed {
                error: r.apply(&error),
                why: why(d),
            },
            other => other,
        }
    }
}

/// Everything about a server that changes while it runs, under its one lock.
pub(super) struct Runtime {
    pub(super) phase: Phase,
    /// The run allowed to change the phase: every start, stop and
    /// replacement makes a new one, so a run that was overtaken (still
    /// ending its connection, or finishing a handshake) changes nothing.
    pub(super) run: u64,
    /// False once the slot was replaced or is being removed.
    pub(super) current: bool,
    /// Asks the current run to end.
    pub(super) stop: CancellationToken,
    /// Cancelled once every run started so far has ended (its process gone).
    pub(super) ended: CancellationToken,
    /// Restarts since it was last started by hand.
    pub(super) restarts: u32,
    pub(super) warnings: Vec<String>,
    /// The program its last start ran (stdio).
    pub(super) binary: Option<PathBuf>,
    /// What the last stdio start printed on stdout that is not JSON-RPC.
    pub(super) stdout_noise: Vec<String>,
    /// Resource URIs subscribed to; restored after every reconnect.
    pub(super) subscriptions: BTreeSet<String>,
}

/// One server's runtime record. A slot lives from `add` until it is removed
/// or replaced by `update` (a new definition gets a new slot, and a new log:
/// the old log's lines were masked with the old definition's secrets).
pub struct Slot {
    pub name: String,
    pub wanted: Wanted,
    pub(super) hash: String,
    /// Its place in the registry: the index lists tools in this order.
    pub(super) seq: u64,
    /// Its log, which also masks its secrets in every text shown.
    pub log: Arc<LogSink>,
    pub(super) rt: Mutex<Runtime>,
    /// Bumped on every transition, to wake whoever waits for one.
    changed: watch::Sender<u64>,
}

impl Slot {
    /// A slot in `Stopped` whose first run will wait for `before` (the
    /// runs of the slot it replaces) to end.
    pub(super) fn new(
        wanted: Wanted,
        seq: u64,
        log: Arc<LogSink>,
        before: CancellationToken,
    ) -> Slot {
        Slot {
            name: wanted.def.name.clone(),
            hash: super::tool_cache::config_hash(&wanted.def),
            seq,
            log,
            rt: Mutex::new(Runtime {
                phase: Phase::Stopped,
                run: 0,
                current: true,
                stop: CancellationToken::new(),
                ended: before,
                restarts: 0,
                warnings: vec![],
                binary: None,
                stdout_noise: vec![],
                subscriptions: BTreeSet::new(),
            }),
            changed: watch::channel(0).0,
            wanted,
        }
    }

    pub(super) fn status(&self) -> ServerStatus {
        self.rt.lock().unwrap().phase.status()
    }

    pub(super) fn peer(&self) -> Option<Peer<RoleClient>> {
        self.rt.lock().unwrap().phase.peer()
    }

    /// Wait until the status satisfies `done`, and return it.
    pub(super) async fn wait_until(&self, done: impl Fn(&ServerStatus) -> bool) -> ServerStatus {
        let mut rx = self.changed.subscribe();
        loop {
            let status = self.status();
            if done(&status) {
                return status;
            }
            if rx.changed().await.is_err() {
                return self.status();
            }
        }
    }
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
    /// What the server said it is when it connected (`serverInfo`), while connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub server_info: Option<PeerInfo>,
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

/// The `serverInfo` a server answered `initialize` with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PeerInfo {
    pub name: String,
    pub version: String,
}

impl Manager {
    /// The one place a server's phase changes (`rt` is its locked runtime).
    /// Texts are masked with the server's secrets; when the tools it offers
    /// changed, the index is updated (named on its next read) and `Tools`
    /// published first (whoever sees "connected" finds its tools); when the
    /// status changed, it is logged and `Status` published; waiters are woken.
    pub(super) fn transition(&self, slot: &Slot, rt: &mut Runtime, next: Phase) {
        let next = next.masked(&slot.log.redactor);
        let before = rt
            .phase
            .offer()
            .map(|(t, deferred)| (Arc::as_ptr(t), deferred));
        let was = rt.phase.status();
        rt.phase = next;
        let offer = rt.phase.offer();
        if offer.map(|(t, deferred)| (Arc::as_ptr(t), deferred)) != before {
            self.shared.index.set(&slot.name, slot.seq, offer);
            self.shared.trim.poke(&self.shared.closing);
            let _ = self.shared.events.send(EngineEvent::Tools {
                server: slot.name.clone(),
                count: offer.map_or(0, |(t, _)| t.len()),
                deferred: offer.is_some_and(|(_, d)| d),
            });
        }
        let status = rt.phase.status();
        if status != was {
            let detail = match &status {
                ServerStatus::Failed { error } => format!("failed: {error}"),
                ServerStatus::NeedsAuth { message } => format!("needs auth: {message}"),
                ServerStatus::Restarting { attempt, of } => {
                    format!("restarting (attempt {attempt}/{of})")
                }
                s => s.label().to_string(),
            };
            slot.log.now("lifecycle", &detail);
            let _ = self.shared.events.send(EngineEvent::Status {
                server: slot.name.clone(),
                status,
            });
        }
        slot.changed.send_modify(|n| *n += 1);
    }

    /// Change the phase on behalf of run `run`: `next` sees the runtime and
    /// returns the new phase, or `None` for no change. A run that was
    /// overtaken by a later start, stop or replacement changes nothing
    /// (`false`).
    pub(super) fn advance(
        &self,
        slot: &Slot,
        run: u64,
        next: impl FnOnce(&mut Runtime) -> Option<Phase>,
    ) -> bool {
        let mut rt = slot.rt.lock().unwrap();
        if !rt.current || rt.run != run {
            return false;
        }
        if let Some(phase) = next(&mut rt) {
            self.transition(slot, &mut rt, phase);
        }
        true
    }

    pub fn status(&self, name: &str) -> Option<ServerStatus> {
        self.slot(name).map(|s| s.status())
    }

    pub fn state(&self, name: &str) -> Option<ServerState> {
        let slot = self.slot(name)?;
        let rt = slot.rt.lock().unwrap();
        let live = rt.phase.live();
        let offer = rt.phase.offer();
        Some(ServerState {
            name: slot.name.clone(),
            status: rt.phase.status(),
            transport: slot.wanted.def.transport,
            source: slot.wanted.source.clone(),
            tool_count: offer.map_or(0, |(t, _)| t.len()),
            deferred: offer.is_some_and(|(_, d)| d),
            pid: live.and_then(|l| l.pgid),
            binary: rt.binary.clone(),
            transport_used: live.map(|l| l.transport_used),
            protocol_version: live.and_then(|l| l.protocol.clone()),
            server_info: live
                .filter(|l| !l.closing)
                .and_then(|l| l.peer.peer_info())
                .and_then(|i| i.server_info.clone())
                .map(|i| PeerInfo {
                    name: i.name,
                    version: i.version,
                }),
            warnings: rt.warnings.clone(),
            last_error: rt.phase.last_error().map(String::from),
            diagnosis: rt.phase.why().cloned(),
            restarts: rt.restarts,
        })
    }

    pub fn states(&self) -> Vec<ServerState> {
        self.server_names()
            .iter()
            .filter_map(|n| self.state(n))
            .collect()
    }

    /// The `WWW-Authenticate` challenge of the server's refusal, while it
    /// waits for a sign-in.
    pub fn auth_challenge(&self, name: &str) -> Option<String> {
        match &self.slot(name)?.rt.lock().unwrap().phase {
            Phase::NeedsAuth { challenge, .. } => challenge.clone(),
            _ => None,
        }
    }
}
