//! Tool calls and forwarded requests.

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, GetExtensions, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions};
use rmcp::RoleClient;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::events::ServerStatus;

use super::{Manager, OnSend, RegistryError, Slot};

/// A tool call's result, flattened for display.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CallOutcome {
    /// Text content joined; `Error: …` when the server reported an error.
    pub text: String,
    pub is_error: bool,
    #[cfg_attr(feature = "ts", ts(type = "unknown[]"))]
    pub content: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub structured_content: Option<Value>,
    pub server: String,
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub source: Option<String>,
}

impl CallOutcome {
    /// The answer as JSON, as the journal and the checks read it.
    fn answer(&self) -> Value {
        serde_json::json!({
            "content": self.content,
            "structuredContent": self.structured_content,
            "isError": self.is_error,
        })
    }

    /// What the checks made of the answer ([`CallOutcome::answer`]): masked,
    /// with a note first, or a refusal.
    fn with_applied(self, applied: crate::tool_trust::results::Applied) -> CallOutcome {
        use crate::tool_trust::results::Action;
        let Ok(v) = applied.result else {
            return self;
        };
        if applied.action == Action::Passed && !applied.masked {
            return self;
        }
        let content: Vec<Value> = v
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let is_error = v.get("isError").and_then(Value::as_bool).unwrap_or(false);
        let text = flatten(&content);
        CallOutcome {
            text: if is_error {
                format!("Error: {text}")
            } else {
                text
            },
            is_error,
            structured_content: v.get("structuredContent").filter(|s| !s.is_null()).cloned(),
            content,
            ..self
        }
    }
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CallError {
    #[error("Unknown tool \"{0}\"")]
    UnknownTool(String),
    #[error("Server \"{0}\" is disabled.")]
    Disabled(String),
    /// A transport or runtime failure (`MCP error: …`).
    #[error("MCP error: {0}")]
    Mcp(String),
    /// Cancelled by the caller: an abort, not an error.
    #[error("Tool call aborted")]
    Aborted,
}

impl CallError {
    /// How the call ended, for the call journal: its outcome and a short
    /// class (`timeout`, `cancelled`, `disabled`, `unknown-tool`,
    /// `transport`).
    pub fn journal_outcome(&self) -> (crate::journal::Outcome, &'static str) {
        use crate::journal::Outcome;
        match self {
            CallError::Aborted => (Outcome::ProtocolError, "cancelled"),
            CallError::Disabled(_) => (Outcome::ProtocolError, "disabled"),
            CallError::UnknownTool(_) => (Outcome::ProtocolError, "unknown-tool"),
            CallError::Mcp(m) => {
                let l = m.to_lowercase();
                match l.contains("timed out") || l.contains("timeout") {
                    true => (Outcome::Timeout, "timeout"),
                    false => (Outcome::ProtocolError, "transport"),
                }
            }
        }
    }
}

/// Why a forwarded request failed: the server's own JSON-RPC error, passed
/// on as it is, or Switchboard's reason.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ForwardError {
    #[error("{0}")]
    Server(rmcp::ErrorData),
    #[error(transparent)]
    Call(#[from] CallError),
}

impl Manager {
    /// Call a tool by its sanitized name. A deferred tool waits for
    /// its server. `cancel` aborts: the server gets `notifications/cancelled`.
    pub async fn call_tool(
        &self,
        name: &str,
        args: Option<Map<String, Value>>,
        cancel: Option<CancellationToken>,
    ) -> Result<CallOutcome, CallError> {
        let (server, tool) = self.route(name)?;
        self.call_raw(&server, &tool, args, cancel).await
    }

    /// (server, raw tool name) of a sanitized tool name.
    fn route(&self, name: &str) -> Result<(String, String), CallError> {
        let index = self.tools();
        let e = index
            .get(name)
            .ok_or_else(|| CallError::UnknownTool(name.into()))?;
        Ok((e.server.clone(), e.tool.clone()))
    }

    /// [`Manager::call_tool`] made by a person in `client` (the app's tool
    /// explorer): the answer checked like the gateway's, with the mode
    /// `mode` gives its server (a note before it, or refused; known secrets
    /// masked), and recorded as the server gave it, with its findings, in
    /// the call journal when there is one.
    pub async fn call_tool_recorded(
        &self,
        name: &str,
        args: Option<Map<String, Value>>,
        cancel: Option<CancellationToken>,
        client: &str,
        mode: impl Fn(&str) -> crate::settings::ResultMode,
    ) -> Result<CallOutcome, CallError> {
        use crate::journal::{Entry, Kind, Outcome, Via};
        let (server, tool) = self.route(name)?;
        let journal = self.journal();
        let entry = journal.as_ref().map(|_| {
            Entry::new(Via::App, &server, Kind::Tool, &tool)
                .with_client(client, None)
                .with_arguments(&args)
        });
        let started = std::time::Instant::now();
        let r = self.call_raw(&server, &tool, args, cancel).await;
        let took = started.elapsed();
        let answer = r.as_ref().ok().map(CallOutcome::answer);
        let checked = answer
            .as_ref()
            .map(|a| self.check_answer(&server, &tool, mode(&server), a));
        if let (Some(journal), Some(e)) = (journal, entry) {
            let e = e.with_duration(took);
            journal.record(match (&r, answer, &checked) {
                (Ok(o), Some(a), Some((findings, applied))) => {
                    let e = e.with_result(&a).with_findings(findings.clone());
                    let e = match o.is_error {
                        true => e.with_error(
                            Outcome::ToolError,
                            None,
                            "the tool answered with an error",
                        ),
                        false => e,
                    };
                    match applied.action {
                        crate::tool_trust::results::Action::Blocked => e.refused_by_checks(),
                        _ => e,
                    }
                }
                (Err(err), _, _) => {
                    let (outcome, class) = err.journal_outcome();
                    e.with_error(outcome, Some(class.into()), err.to_string())
                }
                _ => e,
            });
        }
        match (r, checked) {
            (Ok(o), Some((_, applied))) => Ok(o.with_applied(applied)),
            (r, _) => r,
        }
    }

    /// [`crate::tool_trust::results::check_result`] and `apply` on a tool's
    /// answer, with every connected server's tools and the known secrets;
    /// the app hears a warning when it was noted or refused.
    fn check_answer(
        &self,
        server: &str,
        tool: &str,
        mode: crate::settings::ResultMode,
        answer: &Value,
    ) -> (
        Vec<crate::tool_trust::scan::Finding>,
        crate::tool_trust::results::Applied,
    ) {
        use crate::tool_trust::results::{self, ResultKind};
        let (findings, applied) = self.with_result_context(|ctx| {
            let findings = results::check_result(server, ResultKind::Tool, answer, ctx);
            let applied = results::apply(
                server,
                ResultKind::Tool,
                mode,
                &findings,
                answer.clone(),
                ctx.secrets,
            );
            (findings, applied)
        });
        self.warn_checked(server, tool, applied.action, &findings, "the tool explorer");
        (findings, applied)
    }

    /// `f` with what the checks on answers look at: which server owns which
    /// tool (every connected server's) and the secrets Switchboard knows.
    pub(crate) fn with_result_context<T>(
        &self,
        f: impl FnOnce(&crate::tool_trust::results::ResultContext) -> T,
    ) -> T {
        use crate::tool_trust::results::{ResultContext, ToolOwners};
        let index = self.tools();
        let owners = ToolOwners::new(
            index
                .tools
                .iter()
                .map(|e| (e.server.as_str(), e.tool.as_str())),
        );
        let secrets = self.known_secrets();
        f(&ResultContext {
            tools: &owners,
            secrets: &secrets,
        })
    }

    /// The app hears a warning when an answer the app asked for (`by`: the
    /// tool explorer, the Resources view) was noted or refused.
    pub(crate) fn warn_checked(
        &self,
        server: &str,
        name: &str,
        action: crate::tool_trust::results::Action,
        findings: &[crate::tool_trust::scan::Finding],
        by: &str,
    ) {
        use crate::tool_trust::results::{self, Action};
        if action != Action::Passed {
            self.announce(crate::events::EngineEvent::Warning {
                server: server.to_string(),
                message: results::warning(server, name, action, findings, by),
            });
        }
    }

    /// Call a tool by server and raw tool name.
    pub async fn call_raw(
        &self,
        server: &str,
        tool: &str,
        args: Option<Map<String, Value>>,
        cancel: Option<CancellationToken>,
    ) -> Result<CallOutcome, CallError> {
        let slot = self
            .slot(server)
            .ok_or_else(|| CallError::Mcp(format!("unknown server \"{server}\"")))?;
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Some(a) = args {
            params = params.with_arguments(a);
        }
        let result = match self
            .forward_call(server, params, cancel.unwrap_or_default(), None)
            .await
        {
            Ok(r) => r,
            Err(ForwardError::Server(e)) => {
                return Err(CallError::Mcp(rmcp::ServiceError::McpError(e).to_string()))
            }
            Err(ForwardError::Call(e)) => return Err(e),
        };
        let is_error = result.is_error.unwrap_or(false);
        let content: Vec<Value> = result
            .content
            .iter()
            .filter_map(|c| serde_json::to_value(c).ok())
            .collect();
        let text = flatten(&content);
        Ok(CallOutcome {
            text: if is_error {
                format!("Error: {text}")
            } else {
                text
            },
            is_error,
            content,
            structured_content: result.structured_content.clone(),
            server: server.into(),
            tool: tool.into(),
            source: slot.wanted.source.clone(),
        })
    }

    /// `tools/call` with the caller's own parameters (`_meta` included) on
    /// `server`, the result as the server gave it (what the gateway forwards). A
    /// deferred server is waited for; `cancel` sends
    /// `notifications/cancelled`; the call is bounded by `call_timeout` and
    /// never replayed. `on_send` learns the progress token the server's
    /// `notifications/progress` for this call will carry (rmcp picks it),
    /// just before the request is written.
    pub async fn forward_call(
        &self,
        server: &str,
        params: CallToolRequestParams,
        cancel: CancellationToken,
        on_send: Option<OnSend>,
    ) -> Result<rmcp::model::CallToolResult, ForwardError> {
        let slot = self
            .slot(server)
            .ok_or_else(|| CallError::Mcp(format!("unknown server \"{server}\"")))?;
        let peer = self.wait_peer(&slot, &cancel).await?;
        let tool = params.name.to_string();
        let mut req = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        if let Some(f) = on_send {
            req.extensions_mut().insert(f);
        }
        let mut handle = peer
            .send_cancellable_request(req, PeerRequestOptions::no_options())
            .await
            .map_err(|e| CallError::Mcp(e.to_string()))?;
        let limit = self.shared.opts.call_timeout;
        let resp = tokio::select! {
            r = &mut handle.rx => r,
            _ = cancel.cancelled() => {
                let _ = handle.cancel(Some("cancelled by the user".into())).await;
                return Err(CallError::Aborted.into());
            }
            _ = tokio::time::sleep(limit) => {
                let _ = handle.cancel(Some("timed out".into())).await;
                return Err(CallError::Mcp(format!("server \"{server}\" did not answer tools/call {tool} within {limit:?} (the call was cancelled)")).into());
            }
        };
        // Never replayed: an ambiguous failure is reported, not retried.
        match resp {
            Ok(Ok(ServerResult::CallToolResult(r))) => Ok(r),
            Ok(Ok(other)) => Err(CallError::Mcp(format!("unexpected response {other:?}")).into()),
            Ok(Err(rmcp::ServiceError::McpError(e))) => Err(ForwardError::Server(e)),
            Ok(Err(e)) => Err(CallError::Mcp(e.to_string()).into()),
            Err(_) => Err(CallError::Mcp(
                "the connection closed before the server answered".into(),
            )
            .into()),
        }
    }

    /// Any other request to a connected `server`, under its timeout, the
    /// answer as the server gave it (the gateway's resources, prompts and
    /// completions). `what` names the request in a timeout's message.
    pub async fn forward(
        &self,
        server: &str,
        what: &str,
        req: ClientRequest,
        cancel: CancellationToken,
    ) -> Result<ServerResult, ForwardError> {
        let peer = self
            .peer_of(server)
            .map_err(|e| CallError::Mcp(e.to_string()))?;
        let limit = self.request_timeout(server);
        let answer = tokio::select! {
            r = tokio::time::timeout(limit, peer.send_request(req)) => r,
            _ = cancel.cancelled() => return Err(CallError::Aborted.into()),
        };
        match answer {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(rmcp::ServiceError::McpError(e))) => Err(ForwardError::Server(e)),
            Ok(Err(e)) => Err(CallError::Mcp(self.redact(server, &e.to_string())).into()),
            Err(_) => Err(CallError::Mcp(format!(
                "server \"{server}\" did not answer {what} within {limit:?}"
            ))
            .into()),
        }
    }

    /// The server's peer, waiting while it connects (a deferred call).
    pub(super) async fn wait_peer(
        &self,
        slot: &Slot,
        cancel: &CancellationToken,
    ) -> Result<Peer<RoleClient>, CallError> {
        // Fast path: connected now.
        if let Some(p) = slot.peer() {
            return Ok(p);
        }
        let limit = self.timeout_of(&slot.wanted.def);
        let settled = tokio::select! {
            r = tokio::time::timeout(limit, slot.wait_until(|s| !s.is_pending())) => r.ok(),
            _ = cancel.cancelled() => return Err(CallError::Aborted),
        };
        match settled {
            Some(ServerStatus::Connected) => {}
            Some(ServerStatus::Disabled) => return Err(CallError::Disabled(slot.name.clone())),
            Some(s) => {
                let why = match s {
                    ServerStatus::Failed { error } => error,
                    ServerStatus::NeedsAuth { message } => message,
                    other => other.label().to_string(),
                };
                return Err(CallError::Mcp(format!(
                    "server \"{}\" is not connected: {why}",
                    slot.name
                )));
            }
            None => {
                return Err(CallError::Mcp(format!(
                    "server \"{}\" did not connect within {limit:?}",
                    slot.name
                )))
            }
        }
        slot.peer()
            .ok_or_else(|| CallError::Mcp(format!("server \"{}\" is not connected", slot.name)))
    }

    /// The connected peer of `server`, or an error saying it is unknown or
    /// not connected.
    pub(super) fn peer_of(&self, server: &str) -> Result<Peer<RoleClient>, RegistryError> {
        let slot = self
            .slot(server)
            .ok_or_else(|| RegistryError::Unknown(server.into()))?;
        slot.peer()
            .ok_or_else(|| RegistryError::NotConnected(server.into()))
    }

    /// One request to `server` under its timeout (see `request_timeout`): a
    /// server that never answers gets an error naming it and the request,
    /// and blocks nobody else. Error texts have the server's secrets masked.
    pub(super) async fn ask<T>(
        &self,
        server: &str,
        what: &str,
        req: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, RegistryError> {
        let limit = self.request_timeout(server);
        let answer = tokio::time::timeout(limit, req).await;
        self.answer(server, what, limit, answer)
    }

    /// The timeout of a request to `server`: the one its connection was
    /// made with (its own `timeout`, else the default when it connected).
    pub(super) fn request_timeout(&self, server: &str) -> Duration {
        let Some(slot) = self.slot(server) else {
            return self.defaults().timeout;
        };
        let live_timeout = slot.rt.lock().unwrap().phase.live().map(|l| l.timeout);
        live_timeout.unwrap_or_else(|| self.timeout_of(&slot.wanted.def))
    }

    pub(super) fn answer<T>(
        &self,
        server: &str,
        what: &str,
        limit: Duration,
        answer: Result<Result<T, rmcp::ServiceError>, tokio::time::error::Elapsed>,
    ) -> Result<T, RegistryError> {
        match answer {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(RegistryError::Mcp(self.redact(server, &e.to_string()))),
            Err(_) => Err(RegistryError::Mcp(format!(
                "server \"{server}\" did not answer {what} within {limit:?}"
            ))),
        }
    }
}

/// Content flattened to display text: text parts joined, others described.
pub fn flatten(content: &[Value]) -> String {
    content
        .iter()
        .map(|c| match c.get("type").and_then(Value::as_str) {
            Some("text") => c
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            Some("image") => format!(
                "[image: {}]",
                c.get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
            ),
            Some("audio") => format!(
                "[audio: {}]",
                c.get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
            ),
            Some("resource") => {
                let r = c.get("resource").cloned().unwrap_or_default();
                r.get("text")
                    .and_then(Value::as_str)
                    .map(String::from)
                    .unwrap_or_else(|| {
                        format!(
                            "[resource: {}]",
                            r.get("uri").and_then(Value::as_str).unwrap_or("")
                        )
                    })
            }
            Some("resource_link") => format!(
                "[resource: {}]",
                c.get("uri").and_then(Value::as_str).unwrap_or("")
            ),
            _ => c.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
