//! Profiles changed anywhere reach the window and the tray. The profiles in
//! Switchboard's settings file are followed the way the gateway follows its
//! tool switches (`switchboard_engine::gateway::switches::follow`): a watch
//! on that one file, read once the write settled. A change made by the app,
//! the tray or the CLI becomes an `AppEvent::Profiles` and a new tray menu.

use std::sync::Arc;
use std::time::Duration;

use switchboard_engine::host::Host;
use switchboard_engine::settings::{settings_path, Settings};
use tauri::Runtime;

use crate::events::{emit, AppEvent};

/// Follow the profiles for as long as the app runs.
pub fn follow<R: Runtime>(app: tauri::AppHandle<R>, host: &Host) {
    let path = settings_path(host);
    let wake = Arc::new(tokio::sync::Notify::new());
    let Some(watcher) = switchboard_engine::file_watch::watch_file(&path, wake.clone()) else {
        eprintln!(
            "switchboard: cannot watch {}; profile changes made elsewhere show after a restart",
            path.display()
        );
        return;
    };
    tauri::async_runtime::spawn(async move {
        let _watcher = watcher;
        let mut last = Settings::load_from(&path).0.profiles;
        loop {
            wake.notified().await;
            // Editors and our own writer replace the file in steps.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let (settings, problem) = Settings::load_from(&path);
            if problem.is_some() || settings.profiles == last {
                continue;
            }
            last = settings.profiles;
            crate::tray::set_profiles(&app, &last);
            emit(
                &app,
                &AppEvent::Profiles {
                    active: last.active_name().to_string(),
                },
            );
        }
    });
}
