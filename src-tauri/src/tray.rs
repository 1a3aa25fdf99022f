//! The tray icon: while the gateway serves other clients, closing the window
//! only hides it; the app stays in the system tray (Show Switchboard, Quit).
//! (A second launch while one runs finds the gateway's port taken and says
//! which program holds it.)

use std::sync::atomic::{AtomicBool, Ordering};

use tauri::menu::{Menu, MenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{Manager, Runtime, WindowEvent};

use crate::gateway::{AppGateway, GatewayState};

/// Set once the tray icon exists: only then may closing the window hide it.
static TRAY: AtomicBool = AtomicBool::new(false);

/// Add the tray icon and its menu. A desktop without a tray: the app then
/// quits when its window closes, as before.
pub fn install<R: Runtime>(app: &tauri::AppHandle<R>) {
    match build(app) {
        Ok(()) => TRAY.store(true, Ordering::SeqCst),
        Err(e) => eprintln!("switchboard: no tray icon ({e}); closing the window quits the app"),
    }
}

fn build<R: Runtime>(app: &tauri::AppHandle<R>) -> tauri::Result<()> {
    let show = MenuItem::with_id(app, "show", "Show Switchboard", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Switchboard", true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&show, &quit])?;
    let mut tray = TrayIconBuilder::with_id("switchboard")
        .tooltip("Switchboard")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "show" => show_main(app),
            "quit" => app.exit(0),
            _ => {}
        });
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(())
}

/// Bring the main window back (tray menu).
pub fn show_main<R: Runtime>(app: &tauri::AppHandle<R>) {
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.show();
        let _ = w.unminimize();
        let _ = w.set_focus();
    }
}

/// Closing the main window hides it while the gateway serves other clients
/// and the tray can bring it back; otherwise the app quits as usual.
pub fn on_window_event<R: Runtime>(window: &tauri::Window<R>, event: &WindowEvent) {
    if let WindowEvent::CloseRequested { api, .. } = event {
        let serving = window
            .app_handle()
            .try_state::<std::sync::Arc<AppGateway>>()
            .is_some_and(|g| g.status_state() == GatewayState::Listening);
        let tray = TRAY.load(Ordering::SeqCst);
        // Settings: "Keep running in the tray when the window is closed".
        let keep = window
            .app_handle()
            .try_state::<crate::AppState>()
            .is_none_or(|s| s.engine.settings().keep_in_tray);
        if tray && serving && keep && window.label() == "main" {
            api.prevent_close();
            let hidden = window.hide();
            eprintln!("switchboard: window closed: hidden, the gateway keeps serving from the tray ({hidden:?})");
        } else {
            eprintln!("switchboard: window closed: quitting (tray icon: {tray}, gateway serving: {serving}, keep in tray: {keep})");
        }
    }
}
