//! The app's gateway: while Switchboard runs, every server it runs
//! is also served at `http://127.0.0.1:PORT/mcp` (and `/mcp/<server>`), so
//! other clients configured with that one entry use them, signed in and
//! supervised. The port, an off switch and tool search mode live in
//! Switchboard's settings; changing them restarts the listener. The UI
//! learns what changed from `gateway` events carrying the whole status.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use switchboard_engine::engine::Engine;
use switchboard_engine::gateway::activity::ToolCalls;
use switchboard_engine::gateway::token::GatewayToken;
use switchboard_engine::gateway::{http, switches, Gateway, GatewayOptions, SessionInfo};
use switchboard_engine::settings::GatewaySettings;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Tool counts above which some clients refuse or truncate the list.
pub const CLIENT_LIMITS: [usize; 3] = [40, 100, 128];
/// Longest tool name most clients accept.
pub const NAME_LIMIT: usize = 64;
/// Status events go out at most this often (a burst of calls is one event).
const EVENT_EVERY: Duration = Duration::from_millis(250);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
pub enum GatewayState {
    /// Not started yet, or restarting after a settings change.
    Starting,
    Listening,
    /// Switched off in Settings.
    Off,
    /// Could not listen (port taken, no keychain for the token, …): see `message`.
    Failed,
}

/// Everything the Gateway view shows.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    pub state: GatewayState,
    /// `http://127.0.0.1:PORT/mcp` while listening.
    pub url: Option<String>,
    pub settings: GatewaySettings,
    pub default_port: u16,
    /// Why the gateway is not listening, for people.
    pub message: Option<String>,
    /// Clients connected now.
    pub sessions: Vec<SessionInfo>,
    /// Calls through the gateway since the app started, most called first.
    pub calls: Vec<ToolCalls>,
    /// Tools a client of the aggregate sees now (switches applied).
    pub tool_count: usize,
    /// Those names longer than [`NAME_LIMIT`].
    pub long_names: Vec<String>,
    /// Limits of common clients that `tool_count` is above.
    pub over_limits: Vec<usize>,
    /// Tools switched off, by server and raw tool name.
    pub disabled_tools: std::collections::BTreeMap<String, Vec<String>>,
    /// Servers left out of the gateway.
    pub excluded: Vec<String>,
}

enum Run {
    Starting,
    Listening {
        url: String,
        stop: CancellationToken,
    },
    Off,
    Failed(String),
}

/// Managed as `tauri::State<Arc<AppGateway>>`.
pub struct AppGateway {
    engine: Arc<Engine>,
    gateway: Mutex<Option<(Gateway, bool)>>,
    run: Mutex<Run>,
    /// Bumped on every change of `run`; activity has its own watch.
    changed: watch::Sender<u64>,
    ready: std::sync::atomic::AtomicBool,
    /// One restart at a time.
    restarting: tokio::sync::Mutex<()>,
}

impl AppGateway {
    pub fn new(engine: Arc<Engine>) -> Arc<AppGateway> {
        Arc::new(AppGateway {
            engine,
            gateway: Mutex::new(None),
            run: Mutex::new(Run::Starting),
            changed: watch::channel(0).0,
            ready: Default::default(),
            restarting: tokio::sync::Mutex::new(()),
        })
    }

    /// The aggregate gateway for the current settings (made again when tool
    /// search mode changes, which changes what a session offers).
    fn gateway(&self, tool_search: bool) -> Gateway {
        let mut g = self.gateway.lock().unwrap();
        if let Some((gw, ts)) = g.as_ref() {
            if *ts == tool_search {
                return gw.clone();
            }
        }
        let gw = Gateway::new(
            self.engine.manager().clone(),
            switches::follow(self.engine.host()),
            GatewayOptions {
                tool_search,
                ..Default::default()
            },
        );
        if self.ready.load(std::sync::atomic::Ordering::SeqCst) {
            gw.set_ready();
        }
        *g = Some((gw.clone(), tool_search));
        gw
    }

    /// The servers passed the startup gate: a client's first list stops waiting.
    pub fn set_ready(&self) {
        self.ready.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some((g, _)) = self.gateway.lock().unwrap().as_ref() {
            g.set_ready();
        }
    }

    fn set_run(&self, run: Run) {
        let old = std::mem::replace(&mut *self.run.lock().unwrap(), run);
        if let Run::Listening { stop, .. } = old {
            stop.cancel();
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// (Re)start the listener as the settings say. Errors end up in the status.
    pub async fn restart(self: &Arc<Self>) {
        let _one = self.restarting.lock().await;
        let settings = self.engine.settings().gateway;
        self.set_run(Run::Starting);
        if settings.off {
            self.set_run(Run::Off);
            return;
        }
        let token = match token().await {
            Ok(t) => t,
            Err(e) => {
                return self.set_run(Run::Failed(format!(
                    "The gateway needs its access token: {e}"
                )))
            }
        };
        let port = settings.port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        // The previous listener lets go of the port before the new one binds.
        let listener = match bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                return self.set_run(Run::Failed(switchboard_engine::ports::taken_message(
                    "The gateway",
                    port,
                    &e,
                )))
            }
        };
        let bound = listener.local_addr().unwrap_or(addr);
        let gateway = self.gateway(settings.tool_search);
        let stop = CancellationToken::new();
        let router = http::router(gateway, token, bound, stop.clone());
        let url = format!("http://{bound}/mcp");
        let this = Arc::downgrade(self);
        let serving_stop = stop.clone();
        tauri::async_runtime::spawn(async move {
            if let Err(e) = http::serve(listener, router, serving_stop.clone()).await {
                if let Some(this) = this.upgrade() {
                    if !serving_stop.is_cancelled() {
                        this.set_run(Run::Failed(format!("The gateway stopped: {e}")));
                    }
                }
            }
        });
        self.set_run(Run::Listening { url, stop });
    }

    /// Stop listening (app exit).
    pub fn stop(&self) {
        if let Run::Listening { stop, .. } = &*self.run.lock().unwrap() {
            stop.cancel();
        }
    }

    pub fn status_state(&self) -> GatewayState {
        match &*self.run.lock().unwrap() {
            Run::Starting => GatewayState::Starting,
            Run::Listening { .. } => GatewayState::Listening,
            Run::Off => GatewayState::Off,
            Run::Failed(_) => GatewayState::Failed,
        }
    }

    /// Where clients reach the gateway: the listening URL, else the one the
    /// settings' port will give.
    pub fn url(&self) -> String {
        match &*self.run.lock().unwrap() {
            Run::Listening { url, .. } => url.clone(),
            _ => format!(
                "http://127.0.0.1:{}/mcp",
                self.engine.settings().gateway.port()
            ),
        }
    }

    pub fn status(&self) -> GatewayStatus {
        let settings = self.engine.settings();
        let (state, url, message) = match &*self.run.lock().unwrap() {
            Run::Starting => (GatewayState::Starting, None, None),
            Run::Listening { url, .. } => (GatewayState::Listening, Some(url.clone()), None),
            Run::Off => (
                GatewayState::Off,
                None,
                Some(
                    "The gateway is off: other clients cannot use Switchboard's servers."
                        .to_string(),
                ),
            ),
            Run::Failed(m) => (GatewayState::Failed, None, Some(m.clone())),
        };
        let gateway = self.gateway(settings.gateway.tool_search);
        let activity = gateway.activity();
        // Every tool a client can reach (in search mode, through `call_tool`).
        let tools = gateway.tools();
        let long_names = tools
            .iter()
            .filter(|t| t.name.chars().count() > NAME_LIMIT)
            .map(|t| t.name.to_string())
            .collect();
        GatewayStatus {
            state,
            url,
            settings: settings.gateway.clone(),
            default_port: switchboard_engine::settings::DEFAULT_GATEWAY_PORT,
            message,
            sessions: activity.sessions,
            calls: activity.calls,
            tool_count: tools.len(),
            long_names,
            // In search mode a client lists two tools: no limit applies.
            over_limits: if settings.gateway.tool_search {
                vec![]
            } else {
                CLIENT_LIMITS
                    .into_iter()
                    .filter(|l| tools.len() > *l)
                    .collect()
            },
            disabled_tools: settings.disabled_tools.clone(),
            excluded: settings.gateway_excluded.clone(),
        }
    }

    /// Changes whenever `status()` may answer differently: the listener,
    /// sessions and calls, the switches and the tool index.
    pub async fn changes(self: Arc<Self>, mut on_change: impl FnMut(GatewayStatus)) {
        use switchboard_engine::events::EngineEvent;
        use tokio::sync::broadcast::error::RecvError;
        let mut run = self.changed.subscribe();
        let mut engine_events = self.engine.manager().subscribe();
        on_change(self.status());
        loop {
            let gateway = self.gateway(self.engine.settings().gateway.tool_search);
            let (mut activity, mut switches) = (gateway.watch_activity(), gateway.watch_switches());
            // A clone starts where the gateway's own receiver stands: what it
            // holds now is in the status just sent.
            switches.borrow_and_update();
            tokio::select! {
                r = run.changed() => if r.is_err() { return },
                r = activity.changed() => if r.is_err() { continue },
                r = switches.changed() => if r.is_err() { return },
                r = engine_events.recv() => match r {
                    // What the tool list and the count depend on.
                    Ok(EngineEvent::Tools { .. } | EngineEvent::Status { .. } | EngineEvent::Removed { .. }) | Err(RecvError::Lagged(_)) => {}
                    Ok(_) => continue,
                    Err(RecvError::Closed) => return,
                },
            }
            // Let a burst settle, then send one status.
            tokio::time::sleep(EVENT_EVERY).await;
            on_change(self.status());
        }
    }
}

/// The gateway's token (made once, kept in the keychain; the environment
/// may override it). The keychain may ask D-Bus: not on the async runtime.
pub async fn token() -> Result<GatewayToken, String> {
    match tokio::task::spawn_blocking(GatewayToken::for_this_machine).await {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Bind, retrying briefly while a listener just stopped lets go of the port.
async fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let mut tries = 0;
    loop {
        match tokio::net::TcpListener::bind(addr).await {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && tries < 10 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            r => return r,
        }
    }
}
