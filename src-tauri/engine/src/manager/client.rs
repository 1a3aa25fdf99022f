//! Our side of every session: what Switchboard declares to a server, and how
//! it answers a server's requests and notifications.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

#[allow(deprecated)]
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitationCapability, FormElicitationCapability,
    Implementation, LoggingMessageNotificationParam, ResourceUpdatedNotificationParam,
};
use rmcp::model::{GetExtensions, GetMeta, JsonRpcMessage, ProgressToken, ServerNotification};
use rmcp::service::{NotificationContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, RoleClient};

use super::logbuf::LogSink;

/// Most distinct resource URIs remembered as updated between two turns of
/// the server's loop; more are dropped (and counted).
pub const MAX_PENDING_UPDATES: usize = 1024;

/// What a server told us outside of replies, coalesced: however many
/// `list_changed` notifications arrive, each kind is one flag, and each
/// updated resource URI is kept once, so a flooding server costs a bounded
/// amount of memory and one re-list, and never slows the others.
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

/// A server's request for user input during a call (MCP elicitation).
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

/// Hears a server's `notifications/progress` (server name, notification),
/// called as each is read (see `InOrder`): must not block or wait.
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

/// Called with an outgoing request's progress token just before the request
/// is written: put in the request's extensions by whoever wants its
/// progress (the gateway), so the route is in place before the server can
/// send any.
#[derive(Clone)]
pub struct OnSend(pub Arc<dyn Fn(&ProgressToken) + Send + Sync>);

/// A session's transport that hands the server's `notifications/progress`
/// to the progress hook as they are read, in the order they came.
///
/// rmcp handles each notification on a task of its own but hands a response
/// to its caller at once, so a handler of progress could run after the call
/// it belongs to has ended, and whoever forwards that progress would have
/// stopped listening. Read here, every notification sent before a result
/// has been handed on when the result arrives.
pub struct InOrder<T> {
    inner: T,
    server: String,
    hooks: Arc<ClientHooks>,
}

impl<T> InOrder<T> {
    pub fn new(inner: T, client: &SwitchboardClient) -> Self {
        InOrder {
            inner,
            server: client.server.clone(),
            hooks: client.hooks.clone(),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(r) = &item {
            let on_send = r.request.extensions().get::<OnSend>();
            if let (Some(f), Some(token)) = (on_send, r.request.get_meta().get_progress_token()) {
                (f.0)(&token);
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let Some(JsonRpcMessage::Notification(n)) = &message {
            if let ServerNotification::ProgressNotification(p) = &n.notification {
                let handler = self.hooks.progress.read().unwrap().clone();
                if let Some(h) = handler {
                    h(&self.server, p.params.clone());
                }
            }
        }
        message
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
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
    #[allow(deprecated)] // roots are what 2025 servers ask for.
    pub fn capabilities() -> ClientCapabilities {
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        ClientCapabilities::builder()
            .enable_roots()
            .enable_roots_list_changed()
            .enable_elicitation_with(elicitation)
            .build()
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
        use rmcp::model::{ListRootsResult, Root};
        let roots = self
            .hooks
            .roots
            .read()
            .unwrap()
            .iter()
            .map(|(uri, name)| match name {
                Some(n) => Root::new(uri).with_name(n),
                None => Root::new(uri),
            })
            .collect();
        Ok(ListRootsResult::new(roots))
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

#[cfg(test)]
mod tests {
    use super::SwitchboardClient;

    #[test]
    fn capabilities_declare_roots_with_changes_and_form_elicitation_only() {
        assert_eq!(
            serde_json::to_value(SwitchboardClient::capabilities()).unwrap(),
            serde_json::json!({
                "roots": { "listChanged": true },
                "elicitation": { "form": {} }
            })
        );
    }
}
