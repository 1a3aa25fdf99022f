//! The tray icon: while the gateway serves other clients, closing the window
//! only hides it; the app stays in the system tray (Show Switchboard, Quit).
//! Its menu also lists the profiles, the active one checked: choosing one
//! switches to it (the gateway's `/mcp` serves it at once). The menu follows
//! profile changes made anywhere (`profile_switch.rs`).
//! (A second launch while one runs over the same data folder hands its
//! arguments, a `switchboard://` link say, to the running app, which shows
//! its window, and exits: `run()` in lib.rs. One over another data folder
//! finds the gateway's port taken and says which program holds it.)

use std::sync::atomic::{AtomicBool, Ordering};

use switchboard_engine::profile::ProfileSettings;
use tauri::menu::{CheckMenuItem, IsMenuItem, Menu, MenuItem, PredefinedMenuItem};
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

const TRAY_ID: &str = "switchboard";
/// Menu ids of profile items: this prefix and the profile's name.
const PROFILE_ITEM: &str = "profile:";

fn build<R: Runtime>(app: &tauri::AppHandle<R>) -> tauri::Result<()> {
    let profiles = app
        .try_state::<crate::AppState>()
        .map(|s| s.engine.settings().profiles)
        .unwrap_or_default();
    let mut tray = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("Switchboard")
        .menu(&menu(app, &profiles)?)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "show" => show_main(app),
            "quit" => app.exit(0),
            id => {
                if let Some(name) = id.strip_prefix(PROFILE_ITEM) {
                    switch_to(app, name.to_string());
                }
            }
        });
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(())
}

/// Show, the profiles (the active one checked), Quit.
fn menu<R: Runtime>(
    app: &tauri::AppHandle<R>,
    profiles: &ProfileSettings,
) -> tauri::Result<Menu<R>> {
    let show = MenuItem::with_id(app, "show", "Show Switchboard", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Switchboard", true, None::<&str>)?;
    let heading = MenuItem::with_id(app, "profiles", "Profile", false, None::<&str>)?;
    let active = profiles.active_name();
    let items = profiles
        .names()
        .into_iter()
        .map(|name| {
            let on = name.eq_ignore_ascii_case(active);
            let id = format!("{PROFILE_ITEM}{name}");
            CheckMenuItem::with_id(app, id, &name, true, on, None::<&str>)
        })
        .collect::<tauri::Result<Vec<_>>>()?;
    let (sep1, sep2) = (
        PredefinedMenuItem::separator(app)?,
        PredefinedMenuItem::separator(app)?,
    );
    let mut all: Vec<&dyn IsMenuItem<R>> = vec![&show, &sep1, &heading];
    all.extend(items.iter().map(|i| i as &dyn IsMenuItem<R>));
    all.extend([&sep2 as &dyn IsMenuItem<R>, &quit]);
    Menu::with_items(app, &all)
}

/// Show `profiles` in the tray menu (no-op without a tray icon).
pub fn set_profiles<R: Runtime>(app: &tauri::AppHandle<R>, profiles: &ProfileSettings) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    if let Err(e) = menu(app, profiles).and_then(|m| tray.set_menu(Some(m))) {
        eprintln!("switchboard: the tray menu could not show the profiles: {e}");
    }
}

/// The tray's profile item: switch, then show the menu as the engine has it
/// (a check item ticks itself when clicked, even if switching failed).
fn switch_to<R: Runtime>(app: &tauri::AppHandle<R>, name: String) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let Some(state) = app.try_state::<crate::AppState>() else {
            return;
        };
        if let Err(e) = state.engine.switch_profile(&name).await {
            eprintln!("switchboard: tray: cannot switch to profile \"{name}\": {e}");
        }
        set_profiles(&app, &state.engine.settings().profiles);
    });
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
