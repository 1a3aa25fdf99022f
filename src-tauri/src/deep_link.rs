//! Switchboard's own `switchboard://` links opened from the desktop (issue 31):
//! a browser or `xdg-open` starts `switchboard-app <url>`. The installed
//! bundles declare the scheme (tauri.conf.json `plugins.deep-link`);
//! tauri-plugin-single-instance hands a second launch's arguments to the
//! running app (one app per data folder, see [`instance_id`]) and
//! tauri-plugin-deep-link turns them into URLs.
//!
//! The links wait here, in [`InstallLinks`], until the UI takes them with
//! `take_install_links`: at start it takes what is waiting (the UI may load
//! after the link arrived), and each later link is announced by one
//! `AppEvent::InstallLinks`, after which it takes them again. Taking empties
//! the queue, so no link is shown twice and none is lost. The UI then opens
//! the Add dialog with the link read: nothing is written before Install.

use std::collections::VecDeque;
use std::sync::Mutex;

use switchboard_engine::install_link::MAX_LINK_BYTES;
use tauri::{Manager, Runtime, State};

use crate::events::{emit, AppEvent};

/// The only scheme the app accepts from the desktop.
pub const SCHEME: &str = "switchboard";

/// Links kept until the UI takes them: a user clicking many links before the
/// window loads gets the latest ones; the oldest are dropped beyond this.
pub const MAX_WAITING: usize = 8;

/// `switchboard://` links waiting for the UI. Managed as state.
#[derive(Debug, Default)]
pub struct InstallLinks {
    inbox: Mutex<Inbox>,
}

#[derive(Debug, Default)]
struct Inbox {
    waiting: VecDeque<String>,
    /// While [`follow`] starts: the links deep-link events delivered.
    heard: Option<Vec<String>>,
}

impl InstallLinks {
    /// Queue `url` if it is a `switchboard:` link of at most
    /// [`MAX_LINK_BYTES`]; otherwise say why it was refused.
    pub fn offer(&self, url: &str) -> Result<(), String> {
        check(url)?;
        let mut inbox = self.lock();
        if inbox.waiting.len() == MAX_WAITING {
            inbox.waiting.pop_front();
        }
        inbox.waiting.push_back(url.to_string());
        Ok(())
    }

    /// Every waiting link, oldest first; the queue is then empty.
    pub fn take(&self) -> Vec<String> {
        self.lock().waiting.drain(..).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inbox> {
        self.inbox.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Why `url` is not a link the app opens, if it is not.
fn check(url: &str) -> Result<(), String> {
    let scheme_ok = url
        .split_once(':')
        .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case(SCHEME));
    if !scheme_ok {
        let shown: String = url.chars().take(60).collect();
        return Err(format!("\"{shown}\" is not a {SCHEME}:// link"));
    }
    if url.len() > MAX_LINK_BYTES {
        return Err(format!(
            "a {SCHEME}:// link of {} bytes is longer than the {MAX_LINK_BYTES} bytes allowed",
            url.len()
        ));
    }
    Ok(())
}

/// Queue the links among `urls` (others are refused with a log line) and,
/// if any was queued, tell the UI.
pub fn deliver<R: Runtime>(app: &tauri::AppHandle<R>, urls: impl IntoIterator<Item = String>) {
    let Some(links) = app.try_state::<InstallLinks>() else {
        return;
    };
    let mut queued = false;
    for url in urls {
        match links.offer(&url) {
            Ok(()) => queued = true,
            Err(why) => eprintln!("switchboard: link ignored: {why}"),
        }
    }
    if queued {
        emit(app, &AppEvent::InstallLinks);
    }
}

/// Log a URL of another scheme among a launch's arguments (`args` as
/// `std::env::args`): the deep-link plugin passes over it silently, and the
/// user who opened it should be able to see why nothing happened.
pub fn log_foreign_link(args: &[String]) {
    // Like the plugin, a link is the one argument after the program.
    let [_, arg] = args else {
        return;
    };
    let Some((scheme, _)) = arg.split_once(':') else {
        return;
    };
    let is_scheme = !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    // Switchboard's own links are checked (and refusals logged) by `deliver`.
    if is_scheme && !scheme.eq_ignore_ascii_case(SCHEME) {
        if let Err(why) = check(arg) {
            eprintln!("switchboard: link ignored: {why}");
        }
    }
}

/// Follow the desktop's links: later ones as deep-link events (a second
/// launch on Linux and Windows, through single-instance; Apple events on
/// macOS), then the one this process was started with (`get_current`).
/// Listening first loses no later link; an event meanwhile replaces the
/// plugin's "current" link with its own, so the start link is queued only if
/// it is not one an event already delivered (no link twice). The plugin
/// keeps one current link: should a second launch come during the setup,
/// before the listener, its link is taken here and the start link is lost.
pub fn follow<R: Runtime>(app: &tauri::AppHandle<R>) {
    use tauri_plugin_deep_link::DeepLinkExt;
    let Some(links) = app.try_state::<InstallLinks>() else {
        return;
    };
    links.lock().heard = Some(Vec::new());
    let handle = app.clone();
    app.deep_link().on_open_url(move |event| {
        let urls: Vec<String> = event.urls().into_iter().map(String::from).collect();
        if let Some(links) = handle.try_state::<InstallLinks>() {
            if let Some(heard) = links.lock().heard.as_mut() {
                heard.extend(urls.iter().cloned());
            }
        }
        deliver(&handle, urls);
        // The app may be hidden in the tray.
        crate::tray::show_main(&handle);
    });
    let current = match app.deep_link().get_current() {
        Ok(urls) => urls.unwrap_or_default(),
        Err(e) => {
            eprintln!("switchboard: cannot read the link the app was started with: {e}");
            vec![]
        }
    };
    let heard = links.lock().heard.take().unwrap_or_default();
    log_foreign_link(&std::env::args().collect::<Vec<_>>());
    let start: Vec<String> = current
        .into_iter()
        .map(String::from)
        .filter(|u| !heard.contains(u))
        .collect();
    deliver(app, start);
}

/// The single-instance D-Bus id on Linux (the plugin adds `.SingleInstance`):
/// the app's identifier and a hash of Switchboard's folder
/// (`Host::switchboard_dir`, where its settings and servers live). One
/// Switchboard per data folder, not per session bus: two HOMEs on one bus,
/// as the E2E tests have (each app its own HOME), each keep their own app;
/// with the plugin's default (the identifier alone) a test's app would exit,
/// handing its arguments to another test's app, maybe one shutting down.
/// (The plugin takes no such id on Windows and macOS: one app per user.)
pub fn instance_id(identifier: &str, data_folder: &std::path::Path) -> String {
    // FNV-1a: stable across builds and Rust versions, unlike std's hasher.
    let mut hash: u32 = 0x811c_9dc5;
    for b in data_folder.to_string_lossy().bytes() {
        hash = (hash ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    // A D-Bus name element must not start with a digit.
    format!("{identifier}.u{hash:08x}")
}

/// The `switchboard://` links waiting for the UI, oldest first; taking them
/// empties the queue. Called at start and after each `install-links` event.
#[tauri::command]
pub fn take_install_links(links: State<'_, InstallLinks>) -> Vec<String> {
    links.take()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use tauri::Listener;

    use crate::tests::{invoke_on, started_app_with_keychain};

    /// `switchboard://install` for a stdio server `name` running `command`.
    fn link(name: &str, command: &str) -> String {
        let entry = json!({"command": command, "args": ["--stdio"]}).to_string();
        let b64 = base64url(entry.as_bytes());
        format!("switchboard://install?name={name}&config={b64}")
    }

    fn base64url(bytes: &[u8]) -> String {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n =
                chunk.iter().fold(0u32, |n, b| (n << 8) | u32::from(*b)) << (8 * (3 - chunk.len()));
            for i in 0..=chunk.len() {
                out.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            }
        }
        out
    }

    /// A link handed over by the desktop waits until the UI takes it, is
    /// announced by one `install-links` event, is taken once, and reads as
    /// the server it names; nothing is written. Other schemes and oversized
    /// links are refused; the queue keeps the latest links.
    #[test]
    fn desktop_links_wait_for_the_ui_and_are_taken_once() {
        let home = tempfile::tempdir().unwrap();
        let (_keychain, app, webview) = started_app_with_keychain(home.path());
        let events = std::sync::Arc::new(Mutex::new(Vec::<Value>::new()));
        let seen = events.clone();
        app.listen(crate::events::EVENT, move |e| {
            let v: Value = serde_json::from_str(e.payload()).unwrap();
            if v["type"] == "install-links" {
                seen.lock().unwrap().push(v);
            }
        });
        let take = || invoke_on(&webview, "take_install_links", json!({})).expect("take succeeds");

        assert_eq!(take(), json!([]), "nothing waits at first");
        let url = link("notes", "notes-mcp");
        deliver(
            app.handle(),
            [
                "https://example.com/install".to_string(),
                "switchboardx://install?name=x".to_string(),
                format!(
                    "switchboard://install?name=big&config={}",
                    "A".repeat(MAX_LINK_BYTES)
                ),
                url.clone(),
            ],
        );
        assert_eq!(events.lock().unwrap().len(), 1, "one event for the batch");
        assert_eq!(
            take(),
            json!([url]),
            "only the switchboard:// link within the limit waits"
        );
        assert_eq!(take(), json!([]), "a link is taken once");

        let read = invoke_on(&webview, "read_install_link", json!({ "text": url }))
            .expect("the taken link reads");
        assert!(read.to_string().contains("notes-mcp"), "{read}");
        assert!(
            !home
                .path()
                .join(".config/switchboard/servers.json")
                .exists(),
            "reading a link writes nothing"
        );

        deliver(app.handle(), ["mailto:someone@example.com".to_string()]);
        assert_eq!(
            events.lock().unwrap().len(),
            1,
            "no event when nothing was queued"
        );

        let many: Vec<String> = (0..MAX_WAITING + 3)
            .map(|i| link(&format!("s{i}"), "x"))
            .collect();
        deliver(app.handle(), many.clone());
        let waiting = take();
        assert_eq!(
            waiting,
            json!(many[3..]),
            "the latest {MAX_WAITING} links are kept"
        );
    }

    #[test]
    fn instance_ids_differ_by_data_folder_and_are_dbus_names() {
        let a = instance_id(
            "dev.switchboard.app",
            std::path::Path::new("/home/a/.config"),
        );
        let b = instance_id(
            "dev.switchboard.app",
            std::path::Path::new("/home/b/.config"),
        );
        assert_ne!(a, b);
        assert_eq!(
            a,
            instance_id(
                "dev.switchboard.app",
                std::path::Path::new("/home/a/.config")
            ),
            "the same folder gives the same id"
        );
        let last = a.rsplit('.').next().unwrap();
        assert!(
            last.starts_with('u')
                && last.len() == 9
                && last[1..].chars().all(|c| c.is_ascii_hexdigit()),
            "{a}"
        );
    }
}
