//! Forwarding: every engine event reaches the UI as one Tauri event,
//! `engine://event`, whose payload is the serialized `EngineEvent` (or one
//! of the app's own `AppEvent`s). The UI never polls.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use switchboard_engine::events::EngineEvent;
use switchboard_engine::manager::{ElicitAnswer, ElicitRequest, ElicitationHandler, StartupReport};
use tauri::{Emitter, Runtime};
use tokio::sync::broadcast::error::RecvError;

use crate::state::{AppState, Elicitations};

pub const EVENT: &str = "engine://event";

/// How long a form may stay open before the server's request is cancelled.
const ELICITATION_PATIENCE: Duration = Duration::from_secs(600);

/// Events the app adds on the same channel as the engine's.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum AppEvent {
    /// The first discovery and the startup gate are done.
    Ready { report: StartupReport },
    /// Events were dropped (the UI fell behind): reload everything.
    Resync,
    /// The gateway's status changed (listener, sessions, calls, tool count).
    Gateway {
        status: crate::gateway::GatewayStatus,
    },
    /// The profiles changed (made, renamed, switched to, by the app or
    /// elsewhere): `active` is the one switched to now.
    Profiles { active: String },
    /// How far an opened `.mcpb` bundle is unpacked (its install form shows it).
    BundleProgress {
        progress: switchboard_engine::bundle::BundleProgress,
    },
    /// A file was dropped on the window: what it asks for.
    Dropped { item: crate::drops::Dropped },
    /// `switchboard://` links opened from the desktop wait for the UI:
    /// take them with `take_install_links` (deep_link.rs).
    InstallLinks,
}

pub(crate) fn emit<R: Runtime, T: Serialize + Clone>(app: &tauri::AppHandle<R>, payload: &T) {
    let _ = app.emit(EVENT, payload.clone());
}

/// Subscribe first, then start the engine, so no event is lost. With
/// `gateway`, the HTTP gateway listens from the start (servers come up
/// behind it; a client's first list waits at most the startup gate).
pub fn start<R: Runtime>(
    app: tauri::AppHandle<R>,
    state: &AppState,
    gateway: Option<Arc<crate::gateway::AppGateway>>,
) {
    let rx = state.engine.manager().subscribe();
    tauri::async_runtime::spawn(forward(rx, app.clone()));
    crate::profile_switch::follow(app.clone(), state.engine.host());
    state
        .engine
        .manager()
        .set_elicitation_handler(Some(elicitation_handler(
            app.clone(),
            state.elicitations.clone(),
        )));
    let engine = state.engine.clone();
    if let Some(g) = &gateway {
        let (g, app) = (g.clone(), app.clone());
        tauri::async_runtime::spawn(async move {
            g.restart().await;
            g.changes(|status| emit(&app, &AppEvent::Gateway { status }))
                .await;
        });
    }
    tauri::async_runtime::spawn(async move {
        let report = engine.start().await;
        if let Some(g) = &gateway {
            g.set_ready();
        }
        emit(&app, &AppEvent::Ready { report });
        // Then follow the config files (changes made in other apps).
        match engine.watch().await {
            Ok(rx) => forward(rx, app).await,
            Err(e) => {
                eprintln!("switchboard: {e}; config changes made elsewhere need a restart to show")
            }
        }
    });
}

/// Emit every event of `rx` until it closes. When the UI falls behind and
/// events are lost, one `Resync` follows once the backlog is drained,
/// however many times the channel overflowed meanwhile (a flood must not
/// turn into a stream of full reloads).
async fn forward<R: Runtime>(
    mut rx: tokio::sync::broadcast::Receiver<EngineEvent>,
    app: tauri::AppHandle<R>,
) {
    let mut behind = false;
    loop {
        match rx.recv().await {
            Ok(ev) => emit(&app, &ev),
            Err(RecvError::Lagged(_)) => behind = true,
            Err(RecvError::Closed) => break,
        }
        if behind && rx.is_empty() {
            behind = false;
            emit(&app, &AppEvent::Resync);
        }
    }
}

/// Shows each request as an `Elicitation` event and waits for
/// `answer_elicitation`; a form left open too long is cancelled.
fn elicitation_handler<R: Runtime>(
    app: tauri::AppHandle<R>,
    waiting: Arc<Elicitations>,
) -> ElicitationHandler {
    Arc::new(move |req: ElicitRequest| {
        let (id, rx) = waiting.open();
        emit(
            &app,
            &EngineEvent::Elicitation {
                id,
                server: req.server,
                message: req.message,
                schema: req.schema,
            },
        );
        let waiting = waiting.clone();
        Box::pin(async move {
            let answer = tokio::time::timeout(ELICITATION_PATIENCE, rx).await;
            waiting.close(id);
            match answer {
                Ok(Ok(a)) => a,
                _ => ElicitAnswer::Cancel,
            }
        })
    })
}

/// SIGTERM, SIGINT or SIGHUP end the app through the normal exit path, so
/// `RunEvent::Exit` stops every server instead of orphaning them.
#[cfg(unix)]
pub fn exit_on_signals<R: Runtime>(app: tauri::AppHandle<R>) {
    use tokio::signal::unix::{signal, SignalKind};
    tauri::async_runtime::spawn(async move {
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
            _ = hup.recv() => {}
        }
        app.exit(0);
    });
}
