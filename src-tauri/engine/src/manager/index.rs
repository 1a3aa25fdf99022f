//! The tool index: every server's tools under unique names.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rmcp::model::Tool;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::naming::{assign_names, with_properties, Collision, ToolRef};

use super::state::Slot;
use super::Manager;

/// One tool's parts the index shares instead of copying.
struct Shown {
    description: Option<Arc<str>>,
    input_schema: Arc<Map<String, Value>>,
}

/// One server's tools as the index shows them, made once per list: a
/// re-index after another server's change then copies no description or
/// schema of this one.
struct Part {
    /// The server's place in the registry.
    seq: u64,
    tools: Arc<Vec<Tool>>,
    shown: Vec<Shown>,
    deferred: bool,
}

/// Every server's offered tools, and the index built from them. It never
/// takes a server's lock, so a transition (which holds one) can update it.
///
/// A change only marks the index stale; the next read builds it. Naming
/// looks at every tool of every server, so building on each change made
/// n servers connecting together cost n full builds (quadratic: a second
/// of naming for 100 servers on two cores); now a burst costs one build,
/// done by whoever asks first.
#[derive(Default)]
pub(super) struct Index {
    parts: Mutex<HashMap<String, Part>>,
    /// Set (with `parts` locked) when `parts` changed after the last build.
    stale: AtomicBool,
    built: RwLock<Arc<ToolIndex>>,
}

impl Index {
    /// The index over every server's tools as they are now: a change made
    /// before this call (a transition, then its `Tools` event) is in it.
    pub(super) fn current(&self) -> Arc<ToolIndex> {
        if self.stale.load(Ordering::Acquire) {
            let parts = self.parts.lock().unwrap();
            // Another reader may have built it while this one waited.
            if self.stale.load(Ordering::Acquire) {
                self.rebuild(&parts);
                self.stale.store(false, Ordering::Release);
            }
        }
        self.built.read().unwrap().clone()
    }

    /// `server` (registry place `seq`) now offers `offer` (the tools, and
    /// whether they are the cached ones); `None`: nothing.
    pub(super) fn set(&self, server: &str, seq: u64, offer: Option<(&Arc<Vec<Tool>>, bool)>) {
        let mut parts = self.parts.lock().unwrap();
        match offer {
            Some((tools, deferred)) => {
                let shown = match parts.get_mut(server) {
                    Some(p) if Arc::ptr_eq(&p.tools, tools) => std::mem::take(&mut p.shown),
                    _ => tools
                        .iter()
                        .map(|t| Shown {
                            description: t.description.as_deref().map(Arc::from),
                            input_schema: with_properties(&t.input_schema),
                        })
                        .collect(),
                };
                parts.insert(
                    server.to_string(),
                    Part {
                        seq,
                        tools: tools.clone(),
                        shown,
                        deferred,
                    },
                );
            }
            None => {
                if parts.remove(server).is_none() {
                    return;
                }
            }
        }
        self.stale.store(true, Ordering::Release);
    }

    /// `server` left the registry.
    pub(super) fn remove(&self, server: &str) {
        self.set(server, 0, None)
    }

    /// Names over every server's tools, in registry order. Runs with the
    /// parts locked: two readers never overwrite each other's index with one
    /// made from an older snapshot.
    fn rebuild(&self, parts: &HashMap<String, Part>) {
        let mut servers: Vec<(&String, &Part)> = parts.iter().collect();
        servers.sort_by_key(|(_, p)| p.seq);
        let mut refs = vec![];
        let mut meta = vec![];
        for (server, p) in servers {
            for (t, sh) in p.tools.iter().zip(p.shown.iter()) {
                refs.push(ToolRef {
                    server: server.clone(),
                    tool: t.name.to_string(),
                });
                meta.push((sh.description.clone(), sh.input_schema.clone(), p.deferred));
            }
        }
        let naming = assign_names(&refs);
        let mut index = ToolIndex {
            tools: Vec::with_capacity(refs.len()),
            collisions: naming.collisions,
            by_name: HashMap::with_capacity(refs.len()),
        };
        for ((r, name), (description, schema, deferred)) in
            refs.into_iter().zip(naming.names).zip(meta)
        {
            index.by_name.insert(name.clone(), index.tools.len());
            index.tools.push(ToolEntry {
                name,
                server: r.server,
                tool: r.tool,
                description,
                input_schema: schema,
                deferred,
            });
        }
        let big = index.tools.len() >= 1000;
        *self.built.write().unwrap() = Arc::new(index);
        if big {
            // The old index of thousands of entries was just freed.
            crate::memory::release_freed();
        }
    }
}

/// A tool as the outside world sees it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    /// Sanitized, unique, at most 64 characters.
    pub name: String,
    pub server: String,
    /// The tool's raw name on its server.
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub description: Option<Arc<str>>,
    /// Shared with the server's own tool list (10,000 tools must not mean
    /// 10,000 schemas copied on every re-index).
    #[cfg_attr(feature = "ts", ts(type = "JsonSchema"))]
    pub input_schema: Arc<Map<String, Value>>,
    /// From the tool cache; the server is still connecting.
    pub deferred: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolIndex {
    pub tools: Vec<ToolEntry>,
    pub collisions: Vec<Collision>,
    #[serde(skip)]
    pub(super) by_name: HashMap<String, usize>,
}

impl ToolIndex {
    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.by_name.get(name).map(|i| &self.tools[*i])
    }
}

impl Manager {
    pub fn tools(&self) -> Arc<ToolIndex> {
        self.shared.index.current()
    }

    /// Every server with tools, as the tool review reads it (tools only;
    /// prompts and templates are listed by whoever needs them).
    pub fn trust_inputs(&self) -> Vec<crate::tool_trust::ServerInput> {
        let slots: Vec<Arc<Slot>> = self
            .shared
            .slots
            .read()
            .unwrap()
            .values()
            .cloned()
            .collect();
        slots
            .iter()
            .filter_map(|s| {
                let rt = s.rt.lock().unwrap();
                let (tools, deferred) = rt.phase.offer()?;
                let live = rt.phase.live();
                if tools.is_empty() && live.is_none() {
                    return None;
                }
                Some(crate::tool_trust::ServerInput {
                    server: s.name.clone(),
                    identity: crate::tool_trust::pins::identity(&s.wanted.def),
                    tools: tools.clone(),
                    extra: None,
                    instructions: live
                        .and_then(|l| l.peer.peer_info())
                        .and_then(|i| i.instructions.clone()),
                    deferred,
                })
            })
            .collect()
    }

    /// `server`'s tools as it listed them (or as cached, while deferred).
    pub fn server_tools(&self, server: &str) -> Option<Arc<Vec<Tool>>> {
        let slot = self.slot(server)?;
        let rt = slot.rt.lock().unwrap();
        Some(rt.phase.offer().map(|(t, _)| t.clone()).unwrap_or_default())
    }
}
