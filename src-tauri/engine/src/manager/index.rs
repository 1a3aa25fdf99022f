//! The tool index: every server's tools under unique names.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::Tool;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::events::EngineEvent;
use crate::naming::{assign_names, with_properties, Collision, ToolRef};

use super::state::{Slot, SlotState};
use super::Manager;

/// A tool list and its shared parts as the index shows them.
pub(super) type ShownList = (Arc<Vec<Tool>>, Arc<Vec<Shown>>);

/// One tool's parts the index shares instead of copying.
pub(super) struct Shown {
    pub(super) description: Option<Arc<str>>,
    pub(super) input_schema: Arc<Map<String, Value>>,
}

impl SlotState {
    pub(super) fn shown(&mut self) -> Arc<Vec<Shown>> {
        if let Some((from, shown)) = &self.shown {
            if Arc::ptr_eq(from, &self.tools) {
                return shown.clone();
            }
        }
        let shown: Arc<Vec<Shown>> = Arc::new(
            self.tools
                .iter()
                .map(|t| Shown {
                    description: t.description.as_deref().map(Arc::from),
                    input_schema: with_properties(&t.input_schema),
                })
                .collect(),
        );
        self.shown = Some((self.tools.clone(), shown.clone()));
        shown
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
        self.shared.index.read().unwrap().clone()
    }

    /// Rebuild names over every server's current tool slice.
    pub(super) fn reindex(&self) {
        // Serialized: two servers connecting at once must not overwrite each
        // other's index with one computed from an older snapshot.
        let _one_at_a_time = self.shared.reindex.lock().unwrap();
        let slots: Vec<Arc<Slot>> = self
            .shared
            .slots
            .read()
            .unwrap()
            .values()
            .cloned()
            .collect();
        let mut refs = vec![];
        let mut meta = vec![];
        for s in &slots {
            let mut st = s.state.lock().unwrap();
            let shown = st.shown();
            for (t, sh) in st.tools.iter().zip(shown.iter()) {
                refs.push(ToolRef {
                    server: s.name.clone(),
                    tool: t.name.to_string(),
                });
                meta.push((sh.description.clone(), sh.input_schema.clone(), st.deferred));
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
        *self.shared.index.write().unwrap() = Arc::new(index);
        if big {
            // The old index of thousands of entries was just freed.
            release_freed_memory();
        }
    }

    pub(super) fn publish_tools(&self, slot: &Slot) {
        let (count, deferred) = {
            let st = slot.state.lock().unwrap();
            (st.tools.len(), st.deferred)
        };
        self.reindex();
        let _ = self.shared.events.send(EngineEvent::Tools {
            server: slot.name.clone(),
            count,
            deferred,
        });
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
                let st = s.state.lock().unwrap();
                if st.tools.is_empty() && st.peer.is_none() {
                    return None;
                }
                Some(crate::tool_trust::ServerInput {
                    server: s.name.clone(),
                    identity: crate::tool_trust::pins::identity(&s.wanted.def),
                    tools: st.tools.clone(),
                    extra: None,
                    instructions: st
                        .peer
                        .as_ref()
                        .and_then(|p| p.peer_info())
                        .and_then(|i| i.instructions.clone()),
                    deferred: st.deferred,
                })
            })
            .collect()
    }

    /// `server`'s tools as it listed them (or as cached, while deferred).
    pub fn server_tools(&self, server: &str) -> Option<Arc<Vec<Tool>>> {
        Some(self.slot(server)?.state.lock().unwrap().tools.clone())
    }
}

/// A big tool list leaves megabytes of freed parser buffers behind (the
/// pages as received, before descriptions were cut); glibc keeps such memory
/// unless asked to give it back (measured: 76 → 69 MiB peak with a server of
/// 10,000 tools in pages of 1,000 beside twenty small ones).
pub(super) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the OS.
    unsafe {
        libc::malloc_trim(0);
    }
}
