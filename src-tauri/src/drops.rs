//! Something dropped on the window (issue 31): a `.mcpb` file opens its
//! install form; a small text file (a server entry, a link saved to a file)
//! is read and opens the Add dialog with it. Only files the person dropped
//! are read, here in Rust, so the UI never gets a general "read this path"
//! command. Text and links dragged from a browser arrive as ordinary DOM
//! drops in the page (the UI handles those itself).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tauri::{DragDropEvent, Manager, Runtime, WindowEvent};

use crate::events::{emit, AppEvent};

/// Text files larger than this are not server entries or links (links are
/// refused past 64 KiB by the engine anyway).
pub const MAX_TEXT: u64 = 64 * 1024;

/// What a drop asks for.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Dropped {
    /// A `.mcpb` bundle: its install form opens.
    Bundle { path: PathBuf },
    /// A text file's content: read as a link or server entry.
    Text { text: String },
    /// Not something Switchboard installs: why, naming the file.
    Refused { message: String },
}

/// What dropping `paths` asks for: the first file only (one install at a time).
pub fn classify(paths: &[PathBuf]) -> Option<Dropped> {
    let path = paths.first()?;
    let mut d = classify_one(path);
    if paths.len() > 1 {
        if let Dropped::Refused { message } = &mut d {
            message.push_str("; drop one file at a time");
        }
    }
    Some(d)
}

fn classify_one(path: &Path) -> Dropped {
    let shown = path.display();
    let refused = |why: String| Dropped::Refused { message: why };
    let is_mcpb = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("mcpb"));
    if path.is_dir() {
        return refused(format!(
            "{shown} is a folder: drop a .mcpb extension, a file holding a server entry, or a link"
        ));
    }
    if is_mcpb {
        return Dropped::Bundle {
            path: path.to_path_buf(),
        };
    }
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return refused(format!("{shown}: cannot read it: {e}")),
    };
    let mut bytes = vec![];
    if let Err(e) = file.take(MAX_TEXT + 1).read_to_end(&mut bytes) {
        return refused(format!("{shown}: cannot read it: {e}"));
    }
    if bytes.len() as u64 > MAX_TEXT {
        return refused(format!(
            "{shown} is larger than 64 KiB: not a server entry or link Switchboard can install (an extension should end in .mcpb)"
        ));
    }
    match String::from_utf8(bytes) {
        Ok(text) if !text.trim().is_empty() => Dropped::Text { text },
        Ok(_) => refused(format!("{shown} is empty")),
        Err(_) => refused(format!(
            "{shown} is not a text file: drop a .mcpb extension, a file holding a server entry, or a link"
        )),
    }
}

/// The window's drag-and-drop events: a drop becomes an `AppEvent::Dropped`.
pub fn on_window_event<R: Runtime>(window: &tauri::Window<R>, event: &WindowEvent) {
    if let WindowEvent::DragDrop(DragDropEvent::Drop { paths, .. }) = event {
        if let Some(item) = classify(paths) {
            emit(window.app_handle(), &AppEvent::Dropped { item });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_are_bundles_text_or_refused_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("Hello.MCPB");
        std::fs::write(&bundle, b"PK").unwrap();
        assert_eq!(
            classify(std::slice::from_ref(&bundle)),
            Some(Dropped::Bundle {
                path: bundle.clone()
            })
        );
        let entry = dir.path().join("entry.json");
        std::fs::write(&entry, r#"{"weather": {"command": "npx"}}"#).unwrap();
        assert_eq!(
            classify(std::slice::from_ref(&entry)),
            Some(Dropped::Text {
                text: r#"{"weather": {"command": "npx"}}"#.into()
            })
        );
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; MAX_TEXT as usize + 1]).unwrap();
        let binary = dir.path().join("x.png");
        std::fs::write(&binary, [0x89, 0x50, 0xff, 0xfe]).unwrap();
        for (p, says) in [
            (&big, "larger than 64 KiB"),
            (&binary, "not a text file"),
            (&dir.path().to_path_buf(), "is a folder"),
            (&dir.path().join("gone.json"), "cannot read it"),
        ] {
            match classify(std::slice::from_ref(p)) {
                Some(Dropped::Refused { message }) => {
                    assert!(
                        message.contains(&p.display().to_string()) && message.contains(says),
                        "{message}"
                    )
                }
                other => panic!("{}: {other:?}", p.display()),
            }
        }
        // Several files: the first is used.
        assert_eq!(
            classify(&[bundle.clone(), entry]),
            Some(Dropped::Bundle { path: bundle })
        );
        assert_eq!(classify(&[]), None);
    }
}
