//! Following the `--config` folder. Kubernetes updates a mounted ConfigMap
//! by swapping a `..data` symlink inside the folder, and git-sync swaps a
//! symlink *above* it to a new checkout: neither writes the files the
//! engine's own watchers look at. So the folder is watched as a whole
//! (any change in it), and its files' content is also compared every few
//! seconds, which sees a swap anywhere on the path. Either way, a change
//! is reported only when a file's content actually differs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use sha2::{Digest, Sha256};

/// The files whose content counts.
pub const FILES: [&str; 3] = ["servers.json", "settings.json", super::access::FILE];
/// How often the content is compared without an event.
pub const POLL: Duration = Duration::from_secs(2);

/// A digest of the files' content (a missing file counts as empty).
pub fn digest(dir: &Path) -> [u8; 32] {
    let mut h = Sha256::new();
    for f in FILES {
        h.update(f.as_bytes());
        match std::fs::read(dir.join(f)) {
            Ok(b) => {
                h.update((b.len() as u64).to_le_bytes());
                h.update(&b);
            }
            Err(_) => h.update(u64::MAX.to_le_bytes()),
        }
    }
    h.finalize().into()
}

/// Calls `changed` (on a Tokio task) each time the folder's files differ
/// from what they were, until the returned guard is dropped.
pub fn follow<F, Fut>(dir: PathBuf, changed: F) -> FollowGuard
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let wake = Arc::new(tokio::sync::Notify::new());
    let watcher = {
        let wake = wake.clone();
        notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
            if ev.is_ok_and(|e| crate::file_watch::is_change(&e)) {
                wake.notify_one();
            }
        })
        .ok()
        .and_then(|mut w| w.watch(&dir, RecursiveMode::NonRecursive).ok().map(|_| w))
    };
    let task = tokio::spawn(async move {
        let mut seen = digest(&dir);
        loop {
            tokio::select! {
                _ = wake.notified() => {
                    // A swap is several steps: read once they settled.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                _ = tokio::time::sleep(POLL) => {}
            }
            let d = dir.clone();
            let now = tokio::task::spawn_blocking(move || digest(&d))
                .await
                .unwrap_or(seen);
            if now != seen {
                seen = now;
                changed().await;
            }
        }
    });
    FollowGuard {
        _watcher: watcher,
        task,
    }
}

pub struct FollowGuard {
    _watcher: Option<notify::RecommendedWatcher>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FollowGuard {
    fn drop(&mut self) {
        self.task.abort();
    }
}
