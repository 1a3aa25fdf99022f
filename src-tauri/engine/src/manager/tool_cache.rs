//! The on-disk tool cache behind the startup gate (see `startup`): each server's
//! last tool list, keyed by server name and a hash of its *unresolved*
//! definition, so secrets never reach the disk and any config change
//! invalidates the entry.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::config::ServerDef;
use crate::writer::{write_private, Expected};

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    hash: String,
    /// The same list the server's phase holds (not a copy of it).
    tools: Arc<Vec<Tool>>,
}

/// Hash of a definition as written in its file (raw `${VAR}`, `!cmd`).
pub fn config_hash(def: &ServerDef) -> String {
    let bytes = serde_json::to_vec(def).expect("ServerDef serializes");
    hex::encode(&sha2::Sha256::digest(&bytes)[..16])
}

#[derive(Debug)]
pub struct ToolCache {
    path: Option<PathBuf>,
    entries: tokio::sync::Mutex<Option<HashMap<String, Entry>>>,
    /// Bumped (with `entries` locked) on every change of the entries.
    changes: AtomicU64,
    /// Held while the file is written; holds the `changes` count the file
    /// was last written at.
    written: tokio::sync::Mutex<u64>,
}

impl ToolCache {
    /// `path` None disables the cache (tests, `--no-cache`).
    pub fn new(path: Option<PathBuf>) -> Self {
        ToolCache {
            path,
            entries: tokio::sync::Mutex::new(None),
            changes: AtomicU64::new(0),
            written: tokio::sync::Mutex::new(0),
        }
    }

    async fn loaded(&self) -> tokio::sync::MutexGuard<'_, Option<HashMap<String, Entry>>> {
        let mut g = self.entries.lock().await;
        if g.is_none() {
            let map = match &self.path {
                Some(p) => tokio::fs::read(p)
                    .await
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok())
                    .unwrap_or_default(),
                None => HashMap::new(),
            };
            *g = Some(map);
        }
        g
    }

    pub async fn get(&self, name: &str, hash: &str) -> Option<Arc<Vec<Tool>>> {
        let g = self.loaded().await;
        g.as_ref()?
            .get(name)
            .filter(|e| e.hash == hash)
            .map(|e| e.tools.clone())
    }

    /// Remember `tools` for `name` and write the file; returns once the
    /// file holds them. Servers that connect together share writes: a put
    /// whose change a later write already carried writes nothing, and one
    /// waiting for a write in progress then writes every change made
    /// meanwhile (twenty servers cost two writes of the file, not twenty,
    /// each longer than the one before).
    pub async fn put(&self, name: &str, hash: &str, tools: &Arc<Vec<Tool>>) {
        // Without a file there is nothing to read back: keeping a copy of
        // every server's tools in memory would only cost memory.
        let Some(path) = &self.path else {
            return;
        };
        let mine = {
            let mut g = self.loaded().await;
            let map = g.as_mut().expect("loaded");
            if map.get(name).is_some_and(|e| {
                e.hash == hash && (Arc::ptr_eq(&e.tools, tools) || e.tools == *tools)
            }) {
                return;
            }
            map.insert(
                name.to_string(),
                Entry {
                    hash: hash.to_string(),
                    tools: tools.clone(),
                },
            );
            self.changes.fetch_add(1, Ordering::SeqCst) + 1
        };
        let mut written = self.written.lock().await;
        if *written >= mine {
            return;
        }
        let (bytes, at) = {
            let g = self.entries.lock().await;
            let map = g.as_ref().expect("loaded");
            (
                serde_json::to_vec(map).expect("cache serializes"),
                self.changes.load(Ordering::SeqCst),
            )
        };
        let p = path.clone();
        // A failed cache write only costs the next start its head start.
        // Private like Switchboard's other files: it lists what each server offers.
        let _ = tokio::task::spawn_blocking(move || write_private(&p, &bytes, Expected::Any)).await;
        *written = at;
    }
}
