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
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::config::{ServerDef, Transport};
use crate::doctor::stdout_watch::{Noise, Watch};
use crate::manager::logbuf::{pump_stderr, LogSink};

/// Most distinct resource URIs remembered as updated between two turns of
/// the server's loop; more are dropped (and counted).
pub const MAX_PENDING_UPDATES: usize = 1024;

/// What a server told us outside of replies, coalesced: however many
/// `list_changed` notifications arrive, each kind is one flag, and each
/// updated resource URI is kept once, so a flooding server costs a bounded
/// amount of memory and one re-list (SPEC P5).
#[derive(Default)]
pub struct Signals {
    tools: AtomicBool,
    resources: AtomicBool,
    prompts: AtomicBool,
    updated: std::sync::Mutex<indexmap::IndexSet<String>>,
    dropped_updates: AtomicU64,
    wake: tokio::sync::Notify,
}

/// What the server's loop takes from [`Signals`] in one turn.
#[derive(Debug, Default)]
pub struct Taken {
    pub tools_changed: bool,
    pub resources_changed: bool,
    pub prompts_changed: bool,
    pub updated: Vec<String>,
    pub dropped_updates: u64,
}

impl Signals {
    fn raise(&self, flag: &AtomicBool) {
        flag.store(true, Ordering::Release);
        self.wake.notify_one();
    }

    fn updated(&self, uri: String) {
        {
            let mut u = self.updated.lock().unwrap();
            if u.len() >= MAX_PENDING_UPDATES && !u.contains(&uri) {
                self.dropped_updates.fetch_add(1, Ordering::Relaxed);
                return;
            }
            u.insert(uri);
        }
        self.wake.notify_one();
    }

    /// Wait until something was signalled.
    pub async fn wait(&self) {
        self.wake.notified().await
    }

    pub fn take(&self) -> Taken {
        Taken {
            tools_changed: self.tools.swap(false, Ordering::AcqRel),
            resources_changed: self.resources.swap(false, Ordering::AcqRel),
            prompts_changed: self.prompts.swap(false, Ordering::AcqRel),
            updated: std::mem::take(&mut *self.updated.lock().unwrap())
                .into_iter()
                .collect(),
            dropped_updates: self.dropped_updates.swap(0, Ordering::Relaxed),
        }
    }
}

/// A server's request for user input during a call (SPEC M13).
#[derive(Debug, Clone)]
pub struct ElicitRequest {
    pub server: String,
    pub message: String,
    /// The requested JSON schema (an object of primitive properties).
    pub schema: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    Accept(serde_json::Value),
    Decline,
    Cancel,
}

pub type ElicitationHandler =
    Arc<dyn Fn(ElicitRequest) -> futures::future::BoxFuture<'static, ElicitAnswer> + Send + Sync>;

/// A server's `sampling/createMessage` during a call: a language model's
/// answer wanted. Switchboard has no model; a gateway asks its client's.
#[derive(Debug, Clone)]
#[allow(deprecated)] // sampling is what 2025 servers use.
pub struct SamplingRequest {
    pub server: String,
    pub params: rmcp::model::CreateMessageRequestParams,
}

#[allow(deprecated)] // sampling is what 2025 servers use.
pub type SamplingHandler = Arc<
    dyn Fn(
            SamplingRequest,
        ) -> futures::future::BoxFuture<
            'static,
            Result<rmcp::model::CreateMessageResult, rmcp::ErrorData>,
        > + Send
        + Sync,
>;

/// Hears a server's `notifications/progress` (server name, notification);
/// must not block: the gateway hands it on in the background.
pub type ProgressHandler = Arc<dyn Fn(&str, rmcp::model::ProgressNotificationParam) + Send + Sync>;

/// What every session's client side shares: the roots we expose and who
/// answers elicitations and sampling. Changing them reaches live sessions
/// (sampling is declared only to servers that connect while it is set).
#[derive(Default)]
pub struct ClientHooks {
    pub roots: std::sync::RwLock<Vec<(String, Option<String>)>>,
    pub elicitation: std::sync::RwLock<Option<ElicitationHandler>>,
    pub sampling: std::sync::RwLock<Option<SamplingHandler>>,
    pub progress: std::sync::RwLock<Option<ProgressHandler>>,
}

/// The values an elicitation schema declares as defaults (for headless
/// "accept defaults" answers and for pre-filling forms).
pub fn schema_defaults(schema: &serde_json::Value) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
        for (k, p) in props {
            if let Some(d) = p.get("default") {
                out.insert(k.clone(), d.clone());
            }
        }
    }
    serde_json::Value::Object(out)
}

/// An elicitation handler for runs with nobody to ask (`--accept-defaults`):
/// accepts with the defaults the requested schema declares. `label` prefixes
/// the note printed on stderr.
pub fn accept_defaults_handler(label: &'static str) -> ElicitationHandler {
    Arc::new(move |req: ElicitRequest| {
        let answer = schema_defaults(&req.schema);
        eprintln!(
            "{label}: {}: \"{}\" answered with defaults {answer}",
            req.server, req.message
        );
        Box::pin(async move { ElicitAnswer::Accept(answer) })
    })
}

/// Our side of every session: identifies Switchboard, offers roots and
/// elicitation, and sampling only when someone can answer it (a gateway
/// forwarding to its clients), forwards the server's notifications.
#[derive(Clone)]
pub struct SwitchboardClient {
    server: String,
    signals: Arc<Signals>,
    log: Arc<LogSink>,
    info: ClientConfig,
    hooks: Arc<ClientHooks>,
}

impl SwitchboardClient {
    /// What we declare: roots (with list_changed) and form elicitation; no
    /// sampling (see `new`).
    pub fn capabilities() -> ClientCapabilities {
        serde_json::from_value(serde_json::json!({
            "roots": { "listChanged": true },
            "elicitation": { "form": {} }
        }))
        .unwrap_or_default()
    }

    pub fn new(
        server: &str,
        signals: Arc<Signals>,
        log: Arc<LogSink>,
        hooks: Arc<ClientHooks>,
    ) -> Self {
        let mut caps = Self::capabilities();
        // Sampling only with someone to answer it, as the session starts: a
        // server that sees it may count on it.
        if hooks.sampling.read().unwrap().is_some() {
            caps.sampling = Some(Default::default());
        }
        // The handshake is `initialize`, so offer the newest version that has
        // it; servers negotiate down (2024-11-05 … 2025-11-25).
        let info = ClientConfig::new(
            caps,
            Implementation::new("switchboard", env!("CARGO_PKG_VERSION")).with_title("Switchboard"),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE);
        SwitchboardClient {
            server: server.into(),
            signals,
            log,
            info,
            hooks,
        }
    }
}

impl ClientHandler for SwitchboardClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _cx: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots: Vec<serde_json::Value> = self
            .hooks
            .roots
            .read()
            .unwrap()
            .iter()
            .map(|(uri, name)| serde_json::json!({"uri": uri, "name": name}))
            .collect();
        serde_json::from_value(serde_json::json!({ "roots": roots }))
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))
    }

    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _cx: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let handler = self.hooks.sampling.read().unwrap().clone();
        if let Some(h) = handler {
            return h(SamplingRequest {
                server: self.server.clone(),
                params,
            })
            .await;
        }
        Err(rmcp::ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            "Switchboard does not offer sampling: there is no language model in Switchboard to answer sampling/createMessage",
            None,
        ))
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _cx: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitResult, ElicitationAction};
        let v = serde_json::to_value(&request).unwrap_or_default();
        let req = ElicitRequest {
            server: self.server.clone(),
            message: v
                .get("message")
                .and_then(|m| m.as_str())
                .unwrap_or_default()
                .to_string(),
            schema: v.get("requestedSchema").cloned().unwrap_or_default(),
        };
        if v.get("mode").and_then(|m| m.as_str()) == Some("url") {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        let handler = self.hooks.elicitation.read().unwrap().clone();
        let answer = match handler {
            Some(h) => h(req).await,
            None => ElicitAnswer::Decline,
        };
        Ok(match answer {
            ElicitAnswer::Accept(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
            ElicitAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn on_progress(
        &self,
        p: rmcp::model::ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let handler = self.hooks.progress.read().unwrap().clone();
        if let Some(h) = handler {
            h(&self.server, p);
        }
    }

    async fn on_prompt_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.signals.raise(&self.signals.prompts);
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.signals.raise(&self.signals.tools);
    }

    async fn on_resource_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.signals.raise(&self.signals.resources);
    }

    async fn on_resource_updated(
        &self,
        p: ResourceUpdatedNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        self.signals.updated(p.uri.to_string());
    }

    // Logging is deprecated in the newest protocol but still what 2025 servers send.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        p: LoggingMessageNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let text = match &p.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let text = match &p.logger {
            Some(l) => format!("[{l}] {text}"),
            None => text,
        };
        let level = serde_json::to_value(p.level)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_else(|| "info".into());
        // Straight into the bounded, batched log: no queue of its own.
        self.log.line(&level, &text);
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
    /// Legacy SSE: why the transport closed for good, when the server caused
    /// it (shown instead of "the server closed the connection").
    pub close_reason: Option<Arc<std::sync::Mutex<Option<String>>>>,
    /// Stdio: text the server printed on stdout that is not JSON-RPC.
    pub noise: Option<Noise>,
}

/// Resolved launch parameters (secrets and variables already applied).
pub struct Launch {
    pub def: ServerDef,
    pub program: PathBuf,
    pub path_env: Option<std::ffi::OsString>,
    pub env: IndexMap<String, String>,
    pub headers: IndexMap<String, String>,
    /// http servers with a stored sign-in: rmcp's client that adds the token
    /// and refreshes it.
    pub oauth: Option<rmcp::transport::auth::AuthClient<reqwest::Client>>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The definition cannot be used as it is (a header that is not valid HTTP).
    #[error("{0}")]
    Spawn(String),
    /// Starting the process failed.
    #[error("{message}")]
    Start {
        message: String,
        kind: std::io::ErrorKind,
        raw_os: Option<i32>,
    },
    #[error("timed out after {0:?} waiting for the server to initialize")]
    Timeout(Duration),
    #[error("{message}")]
    Auth {
        message: String,
        /// The server's `WWW-Authenticate` header, when it sent one: sign-in
        /// starts discovery there and asks for its `scope`.
        challenge: Option<String>,
    },
    #[error("{0}")]
    Handshake(String),
}

/// Open the transport and run `initialize`. On failure everything opened is
/// closed again (the child's process group killed).
/// `stdout_noise` is set to the watch of a stdio server's stdout: after a
/// failure it holds the lines it printed that are not JSON-RPC.
pub async fn open(
    launch: Launch,
    handler: SwitchboardClient,
    log: Arc<LogSink>,
    timeout: Duration,
    stdout_noise: &mut Noise,
) -> Result<Opened, ConnectError> {
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
            // ... and with Switchboard, even a crashed one (SPEC P4): forked on
            // the keeper thread, which the parent-death signal depends on.
            cmd.wrap(crate::manager::orphans::DiesWithSwitchboard);
            cmd.command_mut()
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let (transport, stderr) =
                crate::manager::orphans::spawn_on_keeper(move || StdioChild::spawn(cmd))
                    .await
                    .map_err(|e| ConnectError::Start {
                        message: format!("cannot start {}: {e}", launch.program.display()),
                        kind: e.kind(),
                        raw_os: e.raw_os_error(),
                    })?;
            let pgid = transport.id();
            let noise = transport.noise.clone();
            *stdout_noise = noise.clone();
            // Always drain stderr, whatever bytes come: a server whose
            // stderr pipe stalls blocks, and one whose pipe closes dies.
            let pump = stderr.map(|stderr| tokio::spawn(pump_stderr(stderr, log)));
            let result = match tokio::time::timeout(timeout, handler.serve(transport)).await {
                Ok(Ok(session)) => Ok(Opened {
                    session,
                    pgid,
                    binary: Some(launch.program.clone()),
                    transport_used: "stdio",
                    close_reason: None,
                    noise: Some(noise.clone()),
                }),
                Ok(Err(e)) => {
                    kill_group(pgid);
                    Err(ConnectError::Handshake(tidy_error(&e.to_string())))
                }
                Err(_) => {
                    kill_group(pgid);
                    Err(ConnectError::Timeout(timeout))
                }
            };
            // A server that ended before answering usually said why on
            // stderr: its last lines are logged before the failure is judged.
            if let (Err(_), Some(pump)) = (&result, pump) {
                let _ = tokio::time::timeout(STDERR_SETTLE, pump).await;
            }
            result
        }
        Transport::Http => {
            let url = def.url.clone().unwrap_or_default();
            let signed_in = launch.oauth.is_some();
            let config = http_config(&url, &launch.headers)?;
            let served = match launch.oauth {
                Some(client) => {
                    tokio::time::timeout(
                        timeout,
                        handler.serve(StreamableHttpClientTransport::with_client(client, config)),
                    )
                    .await
                }
                None => {
                    tokio::time::timeout(
                        timeout,
                        handler.serve(StreamableHttpClientTransport::with_client(
                            reqwest::Client::new(),
                            config,
                        )),
                    )
                    .await
                }
            };
            match served {
                Ok(Ok(session)) => Ok(Opened {
                    session,
                    pgid: None,
                    binary: None,
                    transport_used: "streamable-http",
                    close_reason: None,
                    noise: None,
                }),
                Err(_) => Err(ConnectError::Timeout(timeout)),
                Ok(Err(e)) => {
                    let msg = e.to_string();
                    let challenge = e.auth_challenge().map(String::from);
                    if challenge.is_some() || e.is_authorization_required() || is_auth_failure(&msg)
                    {
                        let message = if signed_in {
                            resign_message()
                        } else {
                            auth_message(challenge.as_deref().unwrap_or(&msg))
                        };
                        return Err(ConnectError::Auth { message, challenge });
                    }
                    use rmcp::transport::streamable_http_client::StreamableHttpError;
                    let cause: &(dyn std::error::Error + 'static) = match &e {
                        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
                            match error
                                .error
                                .downcast_ref::<StreamableHttpError<reqwest::Error>>()
                            {
                                Some(StreamableHttpError::Client(re)) => re,
                                _ => error.error.as_ref(),
                            }
                        }
                        other => other,
                    };
                    Err(ConnectError::Handshake(with_root_cause(
                        tidy_error(&msg),
                        cause,
                    )))
                }
            }
        }
        // SPEC C2: streamable HTTP first, the legacy SSE transport as the fallback.
        Transport::Sse => {
            let url = def.url.clone().unwrap_or_default();
            let probe = crate::sse_client::connect_with_fallback(
                &url,
                &launch.headers,
                reqwest::Client::new(),
            );
            let t = match tokio::time::timeout(timeout, probe).await {
                Err(_) => return Err(ConnectError::Timeout(timeout)),
                Ok(Err(e)) if e.is_auth() => {
                    let msg = e.to_string();
                    return Err(ConnectError::Auth {
                        message: auth_message(&msg),
                        challenge: None,
                    });
                }
                Ok(Err(e)) => return Err(ConnectError::Handshake(tidy_error(&e.to_string()))),
                Ok(Ok(t)) => t,
            };
            let used = t.kind().as_str();
            let close_reason = t.close_reason();
            match tokio::time::timeout(timeout, handler.serve(t)).await {
                Ok(Ok(session)) => Ok(Opened {
                    session,
                    pgid: None,
                    binary: None,
                    transport_used: used,
                    close_reason,
                    noise: None,
                }),
                Ok(Err(e)) => {
                    // The transport's own reason (an oversized event) beats rmcp's "connection closed".
                    let why = close_reason
                        .and_then(|r| r.lock().unwrap_or_else(|p| p.into_inner()).clone());
                    Err(ConnectError::Handshake(
                        why.unwrap_or_else(|| tidy_error(&e.to_string())),
                    ))
                }
                Err(_) => Err(ConnectError::Timeout(timeout)),
            }
        }
    }
}

fn http_config(
    url: &str,
    headers: &IndexMap<String, String>,
) -> Result<StreamableHttpClientTransportConfig, ConnectError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    for (k, v) in headers {
        if k.eq_ignore_ascii_case("authorization") {
            if let Some(token) = v
                .strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
            {
                config.auth_header = Some(token.to_string());
                continue;
            }
        }
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| ConnectError::Spawn(format!("header name \"{k}\" is not valid")))?;
        let value = reqwest::header::HeaderValue::from_str(v).map_err(|_| {
            ConnectError::Spawn(format!(
                "header \"{k}\" has a value that is not valid in HTTP"
            ))
        })?;
        config.custom_headers.insert(name, value);
    }
    Ok(config)
}

pub fn is_auth_failure(msg: &str) -> bool {
    let m = msg.to_ascii_lowercase();
    m.contains("401")
        || m.contains("403")
        || m.contains("unauthorized")
        || m.contains("forbidden")
        || m.contains("auth required")
        || m.contains("www-authenticate")
}

fn auth_message(msg: &str) -> String {
    let m = msg.to_ascii_lowercase();
    let answered =
        if m.contains("403") || m.contains("forbidden") || m.contains("insufficient_scope") {
            "403 Forbidden"
        } else {
            "401 Unauthorized"
        };
    format!("Authentication required: the server answered {answered}. Sign in to this server, or set an Authorization header.")
}

/// rmcp's transport errors name Rust types
/// (`Send message error Transport [rmcp::transport::worker::WorkerTransport<…>] error: X, when send initialize request`);
/// people need only `X` and the step.
/// `msg` plus the innermost cause of `e` when `msg` does not say it already
/// (reqwest's "error sending request" hides "Connection refused").
pub fn with_root_cause(msg: String, e: &(dyn std::error::Error + 'static)) -> String {
    let mut root = None;
    let mut cur = Some(e);
    while let Some(c) = cur {
        root = Some(c.to_string());
        cur = c.source();
    }
    match root {
        Some(r) if !r.is_empty() && !msg.contains(&r) => format!("{msg}: {r}"),
        _ => msg,
    }
}

pub fn tidy_error(msg: &str) -> String {
    let Some(start) = msg.find("Transport [").and_then(|i| {
        msg[i..]
            .find("] error: ")
            .map(|j| i + j + "] error: ".len())
    }) else {
        return msg.to_string();
    };
    let rest = &msg[start..];
    match rest.rsplit_once(", when ") {
        Some((what, when)) => format!(
            "{what} (when the client tried to {})",
            when.trim_start_matches("send ")
                .trim_end_matches(" request")
        ),
        None => rest.to_string(),
    }
}

/// A stdio server as an rmcp transport: its stdin and stdout (watched for
/// text that is not JSON-RPC, see [`Watch`]), and the process, ended with
/// the MCP stdio shutdown sequence when the session closes (end of input,
/// then SIGTERM, then kill) and killed when dropped.
pub struct StdioChild {
    child: Option<Box<dyn process_wrap::tokio::ChildWrapper>>,
    transport: rmcp::transport::async_rw::AsyncRwTransport<
        RoleClient,
        Watch<tokio::process::ChildStdout>,
        tokio::process::ChildStdin,
    >,
    pub noise: Noise,
}

/// How long a failed start's stderr gets to reach the log (the group is killed, so it closes).
const STDERR_SETTLE: Duration = Duration::from_millis(500);

/// How long a closed server gets to exit by itself, then after SIGTERM.
const STDIO_EXIT_WAIT: Duration = Duration::from_secs(3);

impl StdioChild {
    /// Spawn `cmd` (stdin, stdout and stderr piped); stderr is handed back to be drained.
    pub fn spawn(
        mut cmd: CommandWrap,
    ) -> std::io::Result<(StdioChild, Option<tokio::process::ChildStderr>)> {
        let mut child = cmd.spawn()?;
        let stdin = child
            .inner_mut()
            .stdin()
            .take()
            .ok_or_else(|| std::io::Error::other("the server's stdin was not piped"))?;
        let stdout = child
            .inner_mut()
            .stdout()
            .take()
            .ok_or_else(|| std::io::Error::other("the server's stdout was not piped"))?;
        let stderr = child.inner_mut().stderr().take();
        let (watched, noise) = Watch::new(stdout);
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(watched, stdin);
        Ok((
            StdioChild {
                child: Some(child),
                transport,
                noise,
            },
            stderr,
        ))
    }

    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    async fn shutdown(&mut self) -> std::io::Result<()> {
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        rmcp::transport::Transport::<RoleClient>::close(&mut self.transport).await?;
        if matches!(
            tokio::time::timeout(STDIO_EXIT_WAIT, child.wait()).await,
            Ok(Ok(_))
        ) {
            self.child = None;
            return Ok(());
        }
        #[cfg(unix)]
        if child.signal(libc::SIGTERM).is_ok()
            && matches!(
                tokio::time::timeout(STDIO_EXIT_WAIT, child.wait()).await,
                Ok(Ok(_))
            )
        {
            self.child = None;
            return Ok(());
        }
        let r = Box::into_pin(child.kill()).await;
        self.child = None;
        r
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(async move {
                        let _ = Box::into_pin(child.kill()).await;
                    });
                }
                Err(_) => {
                    let _ = child.start_kill();
                }
            }
        }
    }
}

impl rmcp::transport::Transport<RoleClient> for StdioChild {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send
    {
        self.transport.receive()
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.shutdown()
    }
}

/// A stored sign-in the server (or its authorization server) no longer accepts.
pub fn resign_message() -> String {
    "Authentication required: the server no longer accepts your sign-in (the token was revoked or could not be refreshed). Sign in again.".into()
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

/// Make this process the reaper of orphaned descendants (Linux), so a
/// server's grandchildren that outlive it are re-parented to us rather than
/// to an init that may never reap them, and `reap_adopted` can collect them.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Reap zombies we adopted as subreaper: our children that are not
/// process-group leaders. Leaders are the servers themselves, whose exit
/// status belongs to their `TokioChildProcess` handle.
pub fn reap_adopted() {
    #[cfg(target_os = "linux")]
    {
        let me = std::process::id();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // Fields after the command: state ppid pgrp ...
            let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.len() < 3
                || f[0] != "Z"
                || f[1].parse::<u32>().ok() != Some(me)
                || f[2].parse::<u32>().ok() == Some(pid)
            {
                continue;
            }
            unsafe {
                libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
    }
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
                reap_adopted();
                if !group_alive(pgid) {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            reap_adopted();
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
        wait(Duration::from_millis(500)).await;
    }
    #[cfg(not(unix))]
    let _ = (pgid, grace);
}

/// `resources/subscribe` or `resources/unsubscribe` for one URI.
#[allow(deprecated)]
pub async fn subscribe_request(
    peer: &rmcp::service::Peer<RoleClient>,
    uri: &str,
    subscribe: bool,
) -> Result<(), rmcp::ServiceError> {
    if subscribe {
        let p: rmcp::model::SubscribeRequestParams =
            serde_json::from_value(serde_json::json!({ "uri": uri })).expect("params");
        peer.subscribe(p).await
    } else {
        let p: rmcp::model::UnsubscribeRequestParams =
            serde_json::from_value(serde_json::json!({ "uri": uri })).expect("params");
        peer.unsubscribe(p).await
    }
}

#[cfg(test)]
mod tidy_tests {
    use super::tidy_error;

    #[test]
    fn rmcp_transport_errors_lose_the_type_names() {
        let raw = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::async_impl::client::Client>>] error: Client error: error sending request for url (http://127.0.0.1:9/mcp), when send initialize request";
        assert_eq!(tidy_error(raw), "Client error: error sending request for url (http://127.0.0.1:9/mcp) (when the client tried to initialize)");
        assert_eq!(
            tidy_error("connection closed: initialize response"),
            "connection closed: initialize response"
        );
    }
}
