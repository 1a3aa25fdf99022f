//! Watching single files for changes made by other programs.
//!
//! A watch on a file itself goes deaf after the first atomic save (the
//! rename replaces the file it watched), so a file is watched through its
//! folder. Only events that can change a file's content count: the kernel
//! also reports every open and every close after reading, and a watcher that
//! woke on those would wake itself by reading the file it watches, forever.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

/// Can `ev` mean that a file's content or existence changed? Reads (open,
/// close without writing) cannot; a rescan request always can.
pub fn is_change(ev: &Event) -> bool {
    if ev.need_rescan() {
        return true;
    }
    match ev.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// Watches the folder of `file` (creating the folder if needed) and calls
/// `wake.notify_one()` on every change to a file of that name. `None` when
/// the folder cannot be watched; the watch ends when the watcher is dropped.
pub fn watch_file(file: &Path, wake: Arc<tokio::sync::Notify>) -> Option<RecommendedWatcher> {
    let dir = file.parent()?.to_path_buf();
    std::fs::create_dir_all(&dir).ok()?;
    let name: OsString = file.file_name()?.to_os_string();
    let mut w = notify::recommended_watcher(move |ev: notify::Result<Event>| {
        let Ok(ev) = ev else { return };
        if is_change(&ev)
            && ev
                .paths
                .iter()
                .any(|p| p.file_name() == Some(name.as_os_str()))
        {
            wake.notify_one();
        }
    })
    .ok()?;
    w.watch(&dir, RecursiveMode::NonRecursive).ok()?;
    Some(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Reading the watched file does not wake the watcher; writing it does.
    #[tokio::test]
    async fn reads_do_not_wake_and_writes_do() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, "{}").unwrap();
        let wake = Arc::new(tokio::sync::Notify::new());
        let _w = watch_file(&file, wake.clone()).expect("the folder can be watched");
        for _ in 0..20 {
            std::fs::read(&file).unwrap();
        }
        let woke = tokio::time::timeout(Duration::from_millis(300), wake.notified()).await;
        assert!(woke.is_err(), "reading the file woke the watcher");

        let tmp = dir.path().join("settings.json.tmp");
        std::fs::write(&tmp, r#"{"a": 1}"#).unwrap();
        std::fs::rename(&tmp, &file).unwrap();
        tokio::time::timeout(Duration::from_secs(5), wake.notified())
            .await
            .expect("an atomic save woke the watcher");
    }
}
