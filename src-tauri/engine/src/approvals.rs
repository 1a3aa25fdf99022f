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
    let (Some(cell), Some(def)) = (m.trust(), m.server_def(server)) else {
        return false;
    };
    let identity = pins::identity(&def);
    let basis = cell.basis();
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
    if basis.problem.is_some() || (!asked && basis.pins.knows_name(server)) {
        return false;
    }
    let all = inputs(m, Some(&[server.to_string()])).await;
    let Some(me) = all.iter().find(|s| s.server == server && !s.deferred) else {
        return false;
    };
    let review = tool_trust::review(&all, &basis, false);
    let Some(r) = review.server(server) else {
        return false;
    };
    let mut items: Vec<Item> = me.tools.iter().map(Item::tool).collect();
    items.extend(me.extra.iter().flatten().cloned());
    let clean: Vec<Item> = items
        .into_iter()
        .filter(|i| {
            let high = r
                .items
                .iter()
                .find(|x| x.kind == i.kind && x.name == i.name)
                .is_some_and(|x| x.findings.iter().any(|f| f.severity == Severity::High));
            !high
        })
        .collect();
    cell.approve(server, &identity, &clean, true).is_ok()
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

async fn keeping(
    m: Manager,
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    next: ApproveNext,
) {
    // Approvals made anywhere (this process, the CLI) reach the UI as an event.
    let mut basis = m.trust().map(|c| c.subscribe());
    for s in m.server_names() {
        if m.status(&s) == Some(ServerStatus::Connected) {
            first_use(&m, &s, Some(&next)).await;
        }
    }
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
        match ev {
            // Tools are published just before the status turns connected.
            Ok(EngineEvent::Status {
                server,
                status: ServerStatus::Connected,
            }) => {
                first_use(&m, &server, Some(&next)).await;
            }
            Ok(EngineEvent::Tools {
                server,
                deferred: false,
                ..
            }) if m.status(&server) == Some(ServerStatus::Connected) => {
                first_use(&m, &server, Some(&next)).await;
            }
            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
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
