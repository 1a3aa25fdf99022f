//! The floor of the memory and idle benchmarks: a bare Tauri window with the
//! same tauri, wry and WebKitGTK as the app and an empty page, nothing else
//! (no engine, no tray, no plugins). Whatever this costs, every Tauri app on
//! this machine costs; the benchmarks report Switchboard's figures above it.
//!
//! Built in release with the app's features, as `.ci/bench` does:
//! `cargo build --release -p switchboard-app --features custom-protocol --example bare_window`.
//! The window is the app's size; the page is an empty document served through
//! the same custom protocol the app's UI comes from. With `--app-webview`
//! the process gets the app's own webview settings (`switchboard_app::webview`), so
//! the benchmarks can also show what those settings save by themselves.

use tauri::{WebviewUrl, WebviewWindowBuilder};

const EMPTY_PAGE: &str =
    "<!doctype html><html><head><title>bare</title></head><body></body></html>";

fn main() {
    if std::env::args().any(|a| a == "--app-webview") {
        switchboard_app::webview::prepare_process();
    }
    let mut context = tauri::generate_context!();
    // The app's config declares its main window; this floor makes its own.
    context.config_mut().app.windows.clear();
    tauri::Builder::default()
        .register_uri_scheme_protocol("bare", |_ctx, _request| {
            tauri::http::Response::builder()
                .header("Content-Type", "text/html")
                .body(EMPTY_PAGE.as_bytes().to_vec())
                .expect("a static response")
        })
        .setup(|app| {
            let url = if cfg!(windows) {
                "http://bare.localhost/"
            } else {
                "bare://localhost/"
            };
            WebviewWindowBuilder::new(app, "main", WebviewUrl::CustomProtocol(url.parse()?))
                .title("bare window")
                .inner_size(1200.0, 780.0)
                .build()?;
            Ok(())
        })
        .run(context)
        .expect("the bare window runs");
}
