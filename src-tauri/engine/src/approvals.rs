//! The tool trust at work on a running manager: reviewing what
//! its servers offer now, approving it, and trust on first use.
//!
//! Trust on first use: the first time a server *name* connects with tools
//! and nothing was ever approved under that name, what it offers is
//! approved as it is (except items with a high-severity finding, which
//! stay new and held). A server added or edited through Switchboard gets
//! the same on its next connect, even when its name had approvals before.
//! A different program under an approved name is not trusted this way: its
//! tools are `new` until the user approves them.

use crate::error_code::ErrorCode;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::events::{EngineEvent, ServerStatus};
use crate::manager::Manager;
use crate::tool_trust::{self, pins, Item, ItemKind, PinError, ServerInput, Severity, TrustReport};

#[derive(Debug, thiserror::Error)]
pub enum ApproveError {
    #[error("\"{0}\" is not connected: its tools can be approved once it runs (start it, or check `switchboard status`)")]
    NotConnected(String),
    #[error("\"{server}\" offers no tool, prompt or resource template named \"{name}\" (see `switchboard tools --server {server}`)")]
    Unknown { server: String, name: String },
    #[error("this Switchboard keeps no tool approvals here")]
    NoTrust,
    #[error(transparent)]
    Pins(#[from] PinError),
}

impl ApproveError {
    /// The code the app's commands reject with.
    pub fn code(&self) -> ErrorCode {
        match self {
            ApproveError::NotConnected(_) => ErrorCode::NotConnected,
            ApproveError::Unknown { .. } => ErrorCode::NotFound,
            ApproveError::NoTrust => ErrorCode::Unsupported,
            ApproveError::Pins(PinError::Broken { .. }) => ErrorCode::Unparsable,
            ApproveError::Pins(PinError::Write(crate::writer::atomic::WriteError::Conflict {
                ..
            })) => ErrorCode::Conflict,
            ApproveError::Pins(_) => ErrorCode::Io,
        }
    }
}

/// What an approval pinned, and which approved items it let go.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "ToolsApproved"))]
#[serde(rename_all = "camelCase")]
pub struct Approved {
    pub server: String,
    /// `tool:NAME`, `prompt:NAME`, `resource-template:NAME`.
    pub approved: Vec<String>,
    /// Approved items the server no longer offers, forgotten.
    pub forgotten: Vec<String>,
}

/// Names of servers whose next connect is approved (added or edited
/// through Switchboard), with the identity they were written with.
pub type ApproveNext = Arc<Mutex<HashMap<String, String>>>;

/// The prompts and resource templates of a connected server, as items
/// (`None` when it could not be asked).
async fn extra_items(m: &Manager, server: &str) -> Option<Vec<Item>> {
    let (prompts, resources) = m.offers(server);
    let mut out = vec![];
    if prompts {
        let v = m.list_prompts(server).await.ok()?;
        out.extend(
            v["prompts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Item::prompt),
        );
    }
    if resources {
        let v = m.list_resources(server).await.ok()?;
        out.extend(
            v["resourceTemplates"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Item::template),
        );
    }
    Some(out)
}

/// Every server's review input; the connected servers in `full` (all when
/// `None`) with their prompts and templates listed too.
pub async fn inputs(m: &Manager, full: Option<&[String]>) -> Vec<ServerInput> {
    let mut inputs = m.trust_inputs();
    let wanted: Vec<usize> = inputs
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            !s.deferred
                && m.status(&s.server) == Some(ServerStatus::Connected)
                && full.is_none_or(|f| f.contains(&s.server))
        })
        .map(|(i, _)| i)
        .collect();
    let extras =
        futures::future::join_all(wanted.iter().map(|&i| extra_items(m, &inputs[i].server))).await;
    for (i, e) in wanted.into_iter().zip(extras) {
        inputs[i].extra = e;
    }
    inputs
}

/// The review of every server the manager runs, with diffs.
pub async fn report(m: &Manager) -> TrustReport {
    let Some(cell) = m.trust() else {
        return TrustReport::default();
    };
    let inputs = inputs(m, None).await;
    tool_trust::review_with(&inputs, &cell.basis(), true, &cell.memo)
}

/// Approve `names` of `server` (every item when empty) as it offers them
/// now. Approving everything also forgets approved items it dropped.
pub async fn approve(
    m: &Manager,
    server: &str,
    names: &[String],
) -> Result<Approved, ApproveError> {
    let cell = m.trust().ok_or(ApproveError::NoTrust)?;
    let def = m
        .server_def(server)
        .ok_or_else(|| ApproveError::NotConnected(server.into()))?;
    if m.status(server) != Some(ServerStatus::Connected) {
        return Err(ApproveError::NotConnected(server.into()));
    }
    let identity = pins::identity(&def);
    let all = inputs(m, Some(&[server.to_string()])).await;
    let me = all
        .iter()
        .find(|s| s.server == server)
        .ok_or_else(|| ApproveError::NotConnected(server.into()))?;
    let mut items: Vec<Item> = me.tools.iter().map(Item::tool).collect();
    items.extend(me.extra.iter().flatten().cloned());
    let chosen: Vec<Item> = if names.is_empty() {
        items
    } else {
        let mut chosen = vec![];
        for n in names {
            let hits: Vec<&Item> = items
                .iter()
                .filter(|i| &i.name == n || i.key() == *n)
                .collect();
            if hits.is_empty() {
                return Err(ApproveError::Unknown {
                    server: server.into(),
                    name: n.clone(),
                });
            }
            chosen.extend(hits.into_iter().cloned());
        }
        chosen
    };
    let mut forgotten = vec![];
    if names.is_empty() {
        let review = tool_trust::review(&all, &cell.basis(), false);
        if let Some(s) = review.server(server) {
            forgotten = s
                .removed
                .iter()
                .map(|r| pins::item_key(r.kind, &r.name))
                .collect();
        }
    }
    cell.approve(server, &identity, &chosen, false)?;
    if !forgotten.is_empty() {
        cell.forget(server, &identity, &forgotten)?;
    }
    Ok(Approved {
        server: server.into(),
        approved: chosen.iter().map(Item::key).collect(),
        forgotten,
    })
}

/// Trust on first use for `server` (see the module docs); `next` names
/// servers whose next connect is approved. Returns whether it pinned.
pub async fn first_use(m: &Manager, server: &str, next: Option<&ApproveNext>) -> bool {
    first_use_of(m, &[server.to_string()], next).await > 0
}

/// Trust on first use for each of `servers` at once: one review and one
/// write of the pins file for all of them (two hundred servers connecting
/// together cost one write, not two hundred, each longer than the last).
/// Returns how many servers it pinned.
pub async fn first_use_of(m: &Manager, servers: &[String], next: Option<&ApproveNext>) -> usize {
    let Some(cell) = m.trust() else {
        return 0;
    };
    let basis = cell.basis();
    if basis.problem.is_some() {
        return 0;
    }
    let mut candidates: Vec<(String, String)> = vec![];
    for server in servers {
        let Some(def) = m.server_def(server) else {
            continue;
        };
        if candidates.iter().any(|(s, _)| s == server) {
            continue;
        }
        let identity = pins::identity(&def);
        let asked = next.is_some_and(|n| {
            let mut n = n.lock().unwrap();
            match n.get(server) {
                Some(id) if *id == identity => {
                    n.remove(server);
                    true
                }
                _ => false,
            }
        });
        if asked || !basis.pins.knows_name(server) {
            candidates.push((server.clone(), identity));
        }
    }
    if candidates.is_empty() {
        return 0;
    }
    let names: Vec<String> = candidates.iter().map(|(s, _)| s.clone()).collect();
    let all = inputs(m, Some(&names)).await;
    let review = tool_trust::review_with(&all, &basis, false, &cell.memo);
    let mut approvals: Vec<(String, String, Vec<Item>)> = vec![];
    for (server, identity) in candidates {
        let (Some(me), Some(r)) = (
            all.iter().find(|s| s.server == server && !s.deferred),
            review.server(&server),
        ) else {
            continue;
        };
        let high: std::collections::HashSet<(ItemKind, &str)> = r
            .items
            .iter()
            .filter(|x| x.findings.iter().any(|f| f.severity == Severity::High))
            .map(|x| (x.kind, x.name.as_str()))
            .collect();
        let clean: Vec<Item> = me
            .tools
            .iter()
            .map(Item::tool)
            .chain(me.extra.iter().flatten().cloned())
            .filter(|i| !high.contains(&(i.kind, i.name.as_str())))
            .collect();
        approvals.push((server, identity, clean));
    }
    let n = approvals.len();
    match cell.approve_all(&approvals, true) {
        Ok(()) => n,
        Err(_) => 0,
    }
}

/// Trust on first use for every connected server now, then for each
/// server as it lists its tools, until the manager closes.
pub fn keep(
    m: Manager,
    next: ApproveNext,
    stop: tokio_util::sync::CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let mut events = m.subscribe();
    tokio::spawn(async move {
        let _ = stop
            .run_until_cancelled(keeping(m, &mut events, next))
            .await;
    })
}

/// The servers connected now.
pub fn connected(m: &Manager) -> Vec<String> {
    m.server_names()
        .into_iter()
        .filter(|s| m.status(s) == Some(ServerStatus::Connected))
        .collect()
}

async fn keeping(
    m: Manager,
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    next: ApproveNext,
) {
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};
    // Approvals made anywhere (this process, the CLI) reach the UI as an event.
    let mut basis = m.trust().map(|c| c.subscribe());
    first_use_of(&m, &connected(&m), Some(&next)).await;
    // The server an event says is ready for trust on first use; `None` for
    // any other event.
    let ready = |ev: &EngineEvent| match ev {
        // Tools are published just before the status turns connected.
        EngineEvent::Status {
            server,
            status: ServerStatus::Connected,
        } => Some(server.clone()),
        EngineEvent::Tools {
            server,
            deferred: false,
            ..
        } if m.status(server) == Some(ServerStatus::Connected) => Some(server.clone()),
        _ => None,
    };
    loop {
        let ev = tokio::select! {
            ev = events.recv() => ev,
            changed = async { basis.as_mut().expect("guarded").changed().await }, if basis.is_some() => {
                match changed {
                    Ok(()) => m.publish(EngineEvent::Approvals),
                    Err(_) => basis = None,
                }
                continue;
            }
        };
        // Servers that connect together are taken together: this event and
        // every one already queued behind it. Events missed because the
        // queue overflowed are made up for by looking at every server.
        let mut batch = vec![];
        let mut missed = false;
        match ev {
            Ok(ev) => batch.extend(ready(&ev)),
            Err(RecvError::Lagged(_)) => missed = true,
            Err(RecvError::Closed) => return,
        }
        loop {
            match events.try_recv() {
                Ok(ev) => batch.extend(ready(&ev)),
                Err(TryRecvError::Lagged(_)) => missed = true,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Closed) => return,
            }
        }
        if missed {
            batch = connected(&m);
        }
        if !batch.is_empty() {
            first_use_of(&m, &batch, Some(&next)).await;
        }
    }
}

/// `kind:name` of an item, for messages.
pub fn describe(key: &str) -> String {
    match key.split_once(':') {
        Some((k, n)) => {
            let kind = serde_json::from_value::<ItemKind>(serde_json::Value::String(k.into()))
                .map(|k| k.word())
                .unwrap_or(k);
            format!("{kind} \"{n}\"")
        }
        None => key.to_string(),
    }
}
