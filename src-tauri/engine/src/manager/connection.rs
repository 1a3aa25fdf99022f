//! Opening one MCP connection through rmcp: a stdio child in its own process
//! group with stderr captured, streamable HTTP, or SSE (streamable HTTP
//! first, legacy SSE as the fallback). Nothing here holds a manager lock.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};

use crate::config::{ServerDef, Transport};
use crate::doctor::stdout_watch::Noise;
use crate::manager::logbuf::{pump_stderr, LogSink};

use super::client::InOrder;
pub use super::client::{
    accept_defaults_handler, schema_defaults, ClientHooks, ElicitAnswer, ElicitRequest,
    ElicitationHandler, OnSend, ProgressHandler, SamplingHandler, SamplingRequest, Signals,
    SwitchboardClient, Taken, MAX_PENDING_UPDATES,
};
use super::process::STDERR_SETTLE;
pub use super::process::{
    become_subreaper, group_alive, kill_group, reap_adopted, terminate_group, StdioChild,
};

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

/// `initialize` over `transport`, the server's progress read in order (see
/// `InOrder`).
async fn in_order<T>(
    handler: SwitchboardClient,
    transport: T,
) -> Result<RunningService<RoleClient, SwitchboardClient>, rmcp::service::ClientInitializeError>
where
    T: rmcp::transport::Transport<RoleClient> + 'static,
{
    let transport = InOrder::new(transport, &handler);
    handler.serve(transport).await
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
                for k in crate::launch::own_vars() {
                    c.env_remove(k);
                }
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
            // ... and with Switchboard, even a crashed one (see `orphans`):
            // forked on the keeper thread, which the parent-death signal
            // depends on.
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
            let result = match tokio::time::timeout(timeout, in_order(handler, transport)).await {
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
                        in_order(
                            handler,
                            StreamableHttpClientTransport::with_client(client, config),
                        ),
                    )
                    .await
                }
                None => {
                    tokio::time::timeout(
                        timeout,
                        in_order(
                            handler,
                            StreamableHttpClientTransport::with_client(
                                reqwest::Client::new(),
                                config,
                            ),
                        ),
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
        // An `sse` server: streamable HTTP first, the legacy HTTP+SSE transport
        // (protocol 2024-11-05) as the fallback.
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
            match tokio::time::timeout(timeout, in_order(handler, t)).await {
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

/// A stored sign-in the server (or its authorization server) no longer accepts.
pub fn resign_message() -> String {
    "Authentication required: the server no longer accepts your sign-in (the token was revoked or could not be refreshed). Sign in again.".into()
}

/// `resources/subscribe` or `resources/unsubscribe` for one URI.
#[allow(deprecated)]
pub async fn subscribe_request(
    peer: &rmcp::service::Peer<RoleClient>,
    uri: &str,
    subscribe: bool,
) -> Result<(), rmcp::ServiceError> {
    use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
    if subscribe {
        peer.subscribe(SubscribeRequestParams::new(uri)).await
    } else {
        peer.unsubscribe(UnsubscribeRequestParams::new(uri)).await
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
