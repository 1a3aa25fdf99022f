//! Opening one MCP connection through rmcp: a stdio child in its own process
//! group with stderr captured, streamable HTTP, or SSE (streamable HTTP
//! first, legacy SSE as the fallback). Nothing here holds a manager lock.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use process_wrap::tokio::{CommandWrap, ProcessGroup};
#[allow(deprecated)]
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam, ResourceUpdatedNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

use crate::config::{ServerDef, Transport};
use crate::manager::logbuf::LogBuffer;

/// What a server tells us outside of replies.
#[derive(Debug, Clone)]
pub enum Signal {
    ToolsChanged,
    ResourcesChanged,
    ResourceUpdated(String),
    Log { level: String, text: String },
}

/// Our side of every session: identifies Switchboard, forwards the server's
/// notifications to the manager.
#[derive(Clone)]
pub struct SwitchboardClient {
    tx: mpsc::UnboundedSender<Signal>,
    info: ClientConfig,
}

impl SwitchboardClient {
    pub fn new(tx: mpsc::UnboundedSender<Signal>) -> Self {
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("switchboard", env!("CARGO_PKG_VERSION")).with_title("Switchboard"),
        );
        SwitchboardClient { tx, info }
    }
}

impl ClientHandler for SwitchboardClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.tx.send(Signal::ToolsChanged);
    }

    async fn on_resource_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.tx.send(Signal::ResourcesChanged);
    }

    async fn on_resource_updated(&self, p: ResourceUpdatedNotificationParam, _cx: NotificationContext<RoleClient>) {
        let _ = self.tx.send(Signal::ResourceUpdated(p.uri.to_string()));
    }

    // Logging is deprecated in the newest protocol but still what 2025 servers send.
    #[allow(deprecated)]
    async fn on_logging_message(&self, p: LoggingMessageNotificationParam, _cx: NotificationContext<RoleClient>) {
        let text = match &p.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let text = match &p.logger {
            Some(l) => format!("[{l}] {text}"),
            None => text,
        };
        let level = serde_json::to_value(p.level).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_else(|| "info".into());
        let _ = self.tx.send(Signal::Log { level, text });
    }
}

pub type Session = RunningService<RoleClient, SwitchboardClient>;

/// A live session plus what we need to tear it down.
pub struct Opened {
    pub session: Session,
    /// Process-group id of a stdio server (its leader's pid).
    pub pgid: Option<u32>,
    /// The binary a stdio server was started from.
    pub binary: Option<PathBuf>,
    /// `sse` servers: which transport answered.
    pub transport_used: &'static str,
}

/// Resolved launch parameters (secrets and variables already applied).
pub struct Launch {
    pub def: ServerDef,
    pub program: PathBuf,
    pub path_env: Option<std::ffi::OsString>,
    pub env: IndexMap<String, String>,
    pub headers: IndexMap<String, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("{0}")]
    Spawn(String),
    #[error("timed out after {0:?} waiting for the server to initialize")]
    Timeout(Duration),
    #[error("{message}")]
    Auth { message: String },
    #[error("{0}")]
    Handshake(String),
}

/// Open the transport and run `initialize`. On failure everything opened is
/// closed again (the child's process group killed).
pub async fn open(launch: Launch, handler: SwitchboardClient, logs: Arc<LogBuffer>, on_log: impl Fn(&str, &str) + Send + Sync + 'static, timeout: Duration) -> Result<Opened, ConnectError> {
    let def = &launch.def;
    match def.transport {
        Transport::Stdio => {
            let mut cmd = CommandWrap::with_new(&launch.program, |c| {
                c.args(&def.args);
                for (k, v) in &launch.env {
                    c.env(k, v);
                }
                if let Some(p) = &launch.path_env {
                    c.env("PATH", p);
                }
                if let Some(cwd) = &def.cwd {
                    c.current_dir(cwd);
                }
            });
            // Own process group: npx/uvx grandchildren die with the server.
            cmd.wrap(ProcessGroup::leader());
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| ConnectError::Spawn(format!("cannot start {}: {e}", launch.program.display())))?;
            let pgid = transport.id();
            if let Some(stderr) = stderr {
                // Always drain stderr: a chatty server would otherwise block.
                let logs = logs.clone();
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        let l = logs.push("stderr", &line);
                        on_log("stderr", &l.text);
                    }
                });
            }
            match tokio::time::timeout(timeout, handler.serve(transport)).await {
                Ok(Ok(session)) => Ok(Opened { session, pgid, binary: Some(launch.program.clone()), transport_used: "stdio" }),
                Ok(Err(e)) => {
                    kill_group(pgid);
                    Err(ConnectError::Handshake(e.to_string()))
                }
                Err(_) => {
                    kill_group(pgid);
                    Err(ConnectError::Timeout(timeout))
                }
            }
        }
        Transport::Http | Transport::Sse => {
            let url = def.url.clone().unwrap_or_default();
            let http = http_transport(&url, &launch.headers)?;
            let attempt = tokio::time::timeout(timeout, handler.clone().serve(http)).await;
            match attempt {
                Ok(Ok(session)) => Ok(Opened { session, pgid: None, binary: None, transport_used: "streamable-http" }),
                Err(_) => Err(ConnectError::Timeout(timeout)),
                Ok(Err(e)) => {
                    let msg = e.to_string();
                    if is_auth_failure(&msg) {
                        return Err(ConnectError::Auth { message: auth_message(&msg) });
                    }
                    if def.transport == Transport::Sse {
                        return open_legacy_sse(&url, &launch.headers, handler, timeout).await;
                    }
                    Err(ConnectError::Handshake(msg))
                }
            }
        }
    }
}

async fn open_legacy_sse(url: &str, headers: &IndexMap<String, String>, handler: SwitchboardClient, timeout: Duration) -> Result<Opened, ConnectError> {
    let t = legacy_sse(url, headers)
        .await
        .map_err(|e| {
            let m = e.to_string();
            if is_auth_failure(&m) {
                ConnectError::Auth { message: auth_message(&m) }
            } else {
                ConnectError::Handshake(format!("streamable HTTP and legacy SSE both failed: {m}"))
            }
        })?;
    match tokio::time::timeout(timeout, handler.serve(t)).await {
        Ok(Ok(session)) => Ok(Opened { session, pgid: None, binary: None, transport_used: "sse" }),
        Ok(Err(e)) => Err(ConnectError::Handshake(e.to_string())),
        Err(_) => Err(ConnectError::Timeout(timeout)),
    }
}

fn http_transport(url: &str, headers: &IndexMap<String, String>) -> Result<StreamableHttpClientTransport<reqwest::Client>, ConnectError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    for (k, v) in headers {
        if k.eq_ignore_ascii_case("authorization") {
            if let Some(token) = v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")) {
                config.auth_header = Some(token.to_string());
                continue;
            }
        }
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes()).map_err(|_| ConnectError::Spawn(format!("header name \"{k}\" is not valid")))?;
        let value = reqwest::header::HeaderValue::from_str(v).map_err(|_| ConnectError::Spawn(format!("header \"{k}\" has a value that is not valid in HTTP")))?;
        config.custom_headers.insert(name, value);
    }
    Ok(StreamableHttpClientTransport::with_client(reqwest::Client::new(), config))
}

pub fn is_auth_failure(msg: &str) -> bool {
    let m = msg.to_ascii_lowercase();
    m.contains("401") || m.contains("403") || m.contains("unauthorized") || m.contains("forbidden") || m.contains("auth required") || m.contains("www-authenticate")
}

fn auth_message(msg: &str) -> String {
    format!("Authentication required: the server refused the connection ({msg}). Sign in to this server, or set an Authorization header.")
}

/// SIGTERM then SIGKILL a process group; no-op elsewhere.
pub fn kill_group(pgid: Option<u32>) {
    #[cfg(unix)]
    if let Some(p) = pgid {
        unsafe {
            libc::killpg(p as libc::pid_t, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// Whether any process of the group is still alive.
pub fn group_alive(pgid: u32) -> bool {
    #[cfg(unix)]
    unsafe {
        libc::killpg(pgid as libc::pid_t, 0) == 0
    }
    #[cfg(not(unix))]
    {
        let _ = pgid;
        false
    }
}

/// The shutdown ladder for a stdio server's group (SPEC M11): after the
/// session closed stdin, wait up to `grace` for the group to exit, then
/// SIGTERM, a short wait, then SIGKILL.
pub async fn terminate_group(pgid: u32, grace: Duration) {
    #[cfg(unix)]
    {
        let wait = |d: Duration| async move {
            let until = tokio::time::Instant::now() + d;
            while tokio::time::Instant::now() < until {
                if !group_alive(pgid) {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            !group_alive(pgid)
        };
        if wait(grace).await {
            return;
        }
        unsafe {
            libc::killpg(pgid as libc::pid_t, libc::SIGTERM);
        }
        if wait(Duration::from_millis(500)).await {
            return;
        }
        unsafe {
            libc::killpg(pgid as libc::pid_t, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = (pgid, grace);
}

// TEMP until sse_client lands.
async fn legacy_sse(_url: &str, _h: &IndexMap<String, String>) -> Result<rmcp::transport::TokioChildProcess, String> {
    Err("legacy SSE client not built yet".to_string())
}
