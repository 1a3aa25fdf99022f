//! One gateway client connection: the MCP server side (rmcp `ServerHandler`)
//! that answers from the manager's servers, as `Scope` says.

#![allow(deprecated)] // resources/subscribe and logging are what 2025 clients use.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Value};

use super::{routes, search, Caller, Inner, Outbox, Scope, SessionEntry, SessionInfo};
use crate::manager::{CallError, ForwardError};

/// The handler rmcp runs for one client. Everything it knows of the client
/// is registered at `initialize`.
pub struct GatewaySession {
    inner: Arc<Inner>,
    entry: std::sync::OnceLock<Arc<SessionEntry>>,
    /// How the client reaches it, as the call journal says.
    via: crate::journal::Via,
}

impl GatewaySession {
    pub(crate) fn new(inner: Arc<Inner>, via: crate::journal::Via) -> Self {
        GatewaySession {
            inner,
            entry: std::sync::OnceLock::new(),
            via,
        }
    }

    /// A journal entry for a request of this session's client, when calls
    /// are recorded (`None`: they are not).
    fn journal_entry(
        &self,
        entry: &SessionEntry,
        cx: &RequestContext<RoleServer>,
        server: &str,
        kind: crate::journal::Kind,
        name: &str,
    ) -> Option<(
        crate::journal::Journal,
        crate::journal::Entry,
        std::time::Instant,
    )> {
        let journal = self.inner.manager.journal()?;
        let info = &entry.info;
        // Stateless: no `initialize` names the client (rmcp fills in its own
        // name); the request does.
        let (client, version) = if self.inner.scope.stateless() {
            request_client(cx).unwrap_or_default()
        } else {
            (
                info.client.clone(),
                (!info.version.is_empty()).then(|| info.version.clone()),
            )
        };
        let e = crate::journal::Entry::new(self.via, server, kind, name)
            .with_client(client, version)
            .with_profile(info.profile.clone())
            .with_user(Caller::of(cx).map(|c| c.subject.clone()));
        Some((journal, e, std::time::Instant::now()))
    }

    /// The session's entry; a client that skipped `initialize` (stateless
    /// HTTP, 2026-07-28 clients) gets one on its first request.
    fn entry(&self, peer: &rmcp::Peer<RoleServer>) -> Result<Arc<SessionEntry>, McpError> {
        if let Some(e) = self.entry.get() {
            return Ok(e.clone());
        }
        let info = peer.peer_info();
        let elicitation = info
            .as_ref()
            .is_some_and(|i| i.capabilities.elicitation.is_some());
        let sampling = info
            .as_ref()
            .is_some_and(|i| i.capabilities.sampling.is_some());
        let (client, version) = info
            .as_ref()
            .map(|i| (i.client_info.name.clone(), i.client_info.version.clone()))
            .unwrap_or_default();
        let id = self.inner.next_session_id();
        let entry = Arc::new(SessionEntry {
            id,
            peer: peer.clone(),
            outbox: Arc::new(Outbox::default()),
            log_level: std::sync::Mutex::new(LoggingLevel::Info),
            subscriptions: Default::default(),
            elicitation,
            sampling,
            activity: self.inner.relay.activity.clone(),
            info: SessionInfo {
                id,
                client,
                version,
                server: match &self.inner.scope {
                    Scope::All | Scope::Profile(_) | Scope::Team(_) => None,
                    Scope::One(s) => Some(s.clone()),
                },
                profile: match &self.inner.scope {
                    Scope::Profile(p) => Some(p.clone()),
                    Scope::Team(p) => Some(p.join(", ")),
                    _ => None,
                },
            },
        });
        let entry = match self.entry.set(entry.clone()) {
            Ok(()) => entry,
            Err(_) => return Ok(self.entry.get().expect("set").clone()),
        };
        self.inner
            .register(&entry)
            .map_err(|e| McpError::internal_error(e, None))?;
        entry.activity.opened(&entry.info);
        // A stateless request's answer is its result alone: its outbox stays
        // empty (no notifier fills it), and a send would also turn a JSON
        // answer into an event stream.
        if !self.inner.scope.stateless() {
            tokio::spawn(super::drain(entry.outbox.clone(), peer.clone()));
        }
        Ok(entry)
    }

    fn one(&self) -> Option<&str> {
        match &self.inner.scope {
            Scope::One(s) => Some(s),
            Scope::All | Scope::Profile(_) | Scope::Team(_) => None,
        }
    }

    /// The (server, raw name) behind a tool name a client sent.
    fn route_tool(&self, name: &str) -> Option<(String, String)> {
        let (_, routes) = self.inner.tool_list();
        routes.get(name).cloned()
    }

    /// Forward one `tools/call` of `name` (gateway name) with the client's
    /// arguments, progress token and cancellation.
    async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        meta: Option<RequestMetaObject>,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let route = match self.route_tool(name) {
            Some(r) => Some(r),
            // Called before listing, while servers still come up: wait for the gate.
            None if !*self.inner.ready.borrow() => {
                self.inner.wait_ready().await;
                self.route_tool(name)
            }
            None => None,
        };
        let Some((server, tool)) = route else {
            return Err(McpError::invalid_params(
                format!("Unknown tool \"{name}\""),
                None,
            ));
        };
        let entry = self.entry(&cx.peer)?;
        // rmcp hands the request's _meta over in the context.
        let client_token = meta
            .as_ref()
            .and_then(|m| m.get_progress_token())
            .or_else(|| cx.meta.get_progress_token());
        let (guard, mut progress) = self.inner.relay.begin_call(&server, &entry, client_token);
        let record = self
            .journal_entry(&entry, cx, &server, crate::journal::Kind::Tool, &tool)
            .map(|(j, e, t)| (j, e.with_arguments(&arguments), t));
        let mut params = CallToolRequestParams::new(tool.clone());
        params.arguments = arguments;
        // The client's _meta goes along; rmcp puts its own progress token in
        // (one per upstream request), which `sent` maps back to the client's.
        let mut meta = meta.unwrap_or_else(|| cx.meta.clone());
        meta.0.remove("progressToken");
        // Protocol keys describe the gateway's session, not the upstream one.
        meta.0
            .retain(|k, _| !k.starts_with("io.modelcontextprotocol/"));
        if !meta.0.is_empty() {
            params.meta = Some(meta);
        }
        let began = std::time::Instant::now();
        let call = self
            .inner
            .manager
            .forward_call(&server, params, cx.ct.clone(), guard.on_send());
        tokio::pin!(call);
        // Progress goes out while the call runs, on this request (streamable
        // HTTP sends it on the call's own stream), and before its result.
        let notify = |p: ProgressNotificationParam| {
            let peer = cx.peer.clone();
            async move {
                let _ = tokio::time::timeout(super::SEND_TIMEOUT, peer.notify_progress(p)).await;
            }
        };
        let result = loop {
            tokio::select! {
                r = &mut call => break r,
                Some(p) = progress.recv() => notify(p).await,
            }
        };
        // Progress is queued as the manager reads it, in order (see
        // `manager::client::InOrder`): what the server sent before its
        // result is all in the queue now.
        while let Ok(p) = progress.try_recv() {
            notify(p).await;
        }
        let failed = !matches!(&result, Ok(r) if r.is_error != Some(true));
        self.inner
            .relay
            .activity
            .called(&server, &tool, failed, began.elapsed());
        // What the server answered is recorded; what the client gets is
        // checked first (secrets masked, a note before it, or refused).
        let result = result.map(|r| {
            let answered = record.as_ref().map(|(journal, e, t)| {
                let e = e.clone().with_result(&r).with_duration(t.elapsed());
                let e = match r.is_error {
                    Some(true) => e.with_error(
                        crate::journal::Outcome::ToolError,
                        None,
                        "the tool answered with an error",
                    ),
                    _ => e,
                };
                (journal, e)
            });
            let g = self.inner.guard(&server, &tool, r, |mode, ctx, r| {
                crate::tool_trust::results::guard_tool(&server, mode, r, ctx)
            });
            if let Some((journal, e)) = answered {
                journal.record(checked(e, &g));
            }
            g.result
        });
        if let (Err(err), Some((journal, e, t))) = (&result, record) {
            let (outcome, class, message) = failure(err);
            journal.record(e.with_duration(t.elapsed()).with_error(
                outcome,
                Some(class.into()),
                message,
            ));
        }
        match result {
            Ok(mut r) => {
                if self.one().is_none() {
                    routes::wrap_result_uris(&server, &mut r);
                }
                Ok(r)
            }
            Err(ForwardError::Server(e)) => Err(e),
            Err(ForwardError::Call(CallError::Aborted)) => Err(McpError::new(
                ErrorCode::INTERNAL_ERROR,
                "Request cancelled",
                None,
            )),
            // The model should read why: a failed call is a tool result with isError.
            Err(ForwardError::Call(e)) => Ok(CallToolResult::error(vec![ContentBlock::text(
                e.to_string(),
            )])),
        }
    }

    /// `search_tools` in search mode.
    fn search(&self, arguments: Option<JsonObject>) -> Result<CallToolResult, McpError> {
        let args = arguments.unwrap_or_default();
        let query = args.get("query").and_then(Value::as_str).ok_or_else(|| {
            McpError::invalid_params("search_tools needs a \"query\" (text)", None)
        })?;
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map(|l| (l as usize).clamp(1, search::MAX_LIMIT))
            .unwrap_or(search::DEFAULT_LIMIT);
        let idx = self.inner.search_index();
        let found: Vec<Value> = idx
            .search(query, limit)
            .into_iter()
            .map(|(t, _)| search::describe(t))
            .collect();
        let text = if found.is_empty() {
            format!(
                "No tool matches \"{query}\" among {} tools; try other words.",
                idx.tools().len()
            )
        } else {
            serde_json::to_string(&found).unwrap_or_default()
        };
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(json!({ "tools": found }));
        Ok(r)
    }

    /// (server, original URI) of a URI a client sent.
    fn route_uri<'a>(&self, uri: &'a str) -> Result<(String, Cow<'a, str>), McpError> {
        let not_found = || {
            McpError::resource_not_found(
                format!("no resource {uri} in this Switchboard gateway"),
                Some(json!({ "uri": uri })),
            )
        };
        let (server, original) = match self.one() {
            Some(s) => (s.to_string(), Cow::Borrowed(uri)),
            None => {
                let (s, o) = routes::unwrap_uri(uri).ok_or_else(not_found)?;
                (s, Cow::Borrowed(o))
            }
        };
        if !self.inner.visible(&server) || self.inner.manager.status(&server).is_none() {
            return Err(not_found());
        }
        Ok((server, original))
    }

    fn gateway_uri(&self, server: &str, uri: &str) -> String {
        match self.one() {
            Some(_) => uri.to_string(),
            None => routes::wrap_uri(server, uri),
        }
    }

    /// Resources and templates of every served, connected server.
    async fn listed(&self) -> Vec<(String, Value)> {
        self.inner.wait_ready().await;
        let servers = self.inner.connected_servers();
        let m = &self.inner.manager;
        let lists = futures::future::join_all(servers.iter().map(|s| m.list_resources(s))).await;
        servers
            .into_iter()
            .zip(lists)
            .filter_map(|(s, l)| l.ok().map(|v| (s, v)))
            .collect()
    }

    async fn subscribe_uri(
        &self,
        uri: &str,
        on: bool,
        cx: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let (server, original) = self.route_uri(uri)?;
        let entry = self.entry(&cx.peer)?;
        let key = (server.clone(), original.to_string());
        let mut subs = self.inner.subscribers.lock().await;
        let set = subs.entry(key.clone()).or_default();
        let first = set.is_empty();
        if on {
            set.insert(entry.id);
            entry.subscriptions.lock().unwrap().insert(uri.to_string());
        } else {
            set.remove(&entry.id);
            entry.subscriptions.lock().unwrap().remove(uri);
        }
        let last = set.is_empty();
        if last {
            subs.remove(&key);
        }
        let m = &self.inner.manager;
        let r = match (on, first, last) {
            (true, true, _) => m.subscribe_resource(&server, &original).await,
            (false, _, true) => m.unsubscribe_resource(&server, &original).await,
            _ => Ok(()),
        };
        r.map_err(|e| McpError::internal_error(e.to_string(), None))
    }
}

type Recording = Option<(
    crate::journal::Journal,
    crate::journal::Entry,
    std::time::Instant,
)>;

impl GatewaySession {
    /// One answer to `resources/read` or `prompts/get`: recorded as the
    /// server gave it, checked, and what the client gets (a refusal as an
    /// MCP error).
    fn answered<T: serde::Serialize>(
        &self,
        record: Recording,
        server: &str,
        name: &str,
        answer: Result<T, ForwardError>,
        guard: impl FnOnce(
            crate::settings::ResultMode,
            &crate::tool_trust::results::ResultContext,
            T,
        ) -> crate::tool_trust::results::Guarded<Result<T, String>>,
    ) -> Result<T, McpError> {
        let answer = match answer {
            Ok(a) => a,
            Err(err) => {
                if let Some((journal, e, t)) = record {
                    let (outcome, class, message) = failure(&err);
                    journal.record(e.with_duration(t.elapsed()).with_error(
                        outcome,
                        Some(class.into()),
                        message,
                    ));
                }
                return Err(forwarded(err));
            }
        };
        let answered =
            record.map(|(j, e, t)| (j, e.with_result(&answer).with_duration(t.elapsed())));
        let g = self.inner.guard(server, name, answer, guard);
        if let Some((journal, e)) = answered {
            journal.record(checked(e, &g));
        }
        g.result
            .map_err(|message| McpError::invalid_request(message, None))
    }
}

/// An answer's entry with what the checks found, and refused when they
/// blocked it (the client got an error).
fn checked<T>(
    e: crate::journal::Entry,
    g: &crate::tool_trust::results::Guarded<T>,
) -> crate::journal::Entry {
    let e = e.with_findings(g.findings.clone());
    match g.action {
        crate::tool_trust::results::Action::Blocked => e.refused_by_checks(),
        _ => e,
    }
}

/// How a forwarded request failed, for the call journal: its outcome, a
/// short class and the message.
fn failure(e: &ForwardError) -> (crate::journal::Outcome, &'static str, String) {
    match e {
        ForwardError::Server(e) => (
            crate::journal::Outcome::ProtocolError,
            "server-error",
            e.message.to_string(),
        ),
        ForwardError::Call(c) => {
            let (outcome, class) = c.journal_outcome();
            (outcome, class, c.to_string())
        }
    }
}

fn forwarded(e: ForwardError) -> McpError {
    match e {
        ForwardError::Server(e) => e,
        ForwardError::Call(e) => McpError::internal_error(e.to_string(), None),
    }
}

impl ServerHandler for GatewaySession {
    fn get_info(&self) -> ServerInfo {
        #[allow(deprecated)] // logging: the gateway forwards its servers' log messages.
        let caps = if self.inner.scope.stateless() {
            // Nothing is pushed (no list_changed, subscriptions or log
            // messages): clients see changes at their next list.
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .enable_completions()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_logging()
                .enable_completions()
                .build()
        };
        let (name, instructions) = match self.one() {
            Some(s) => (format!("switchboard/{s}"), format!("The MCP server \"{s}\", served by Switchboard (signed in and supervised).")),
            None if self.inner.opts.tool_search => (
                "switchboard".to_string(),
                "Switchboard: the tools of every MCP server configured on this machine. Find a tool with search_tools, then run it with call_tool.".to_string(),
            ),
            None if matches!(self.inner.scope, Scope::Team(_)) => (
                super::TEAM_SERVER_NAME.to_string(),
                "Switchboard team gateway: the tools, resources and prompts of your team's MCP servers that your groups may use, in one place.".to_string(),
            ),
            None => ("switchboard".to_string(), "Switchboard: the tools, resources and prompts of every MCP server configured on this machine, in one place.".to_string()),
        };
        ServerConfig::new(caps)
            .with_server_info(
                Implementation::new(name, env!("CARGO_PKG_VERSION")).with_title("Switchboard"),
            )
            .with_instructions(instructions)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // Sessions need `initialize` (list_changed, subscriptions, elicitation).
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let result = self.negotiate_initialize(&request)?;
        self.entry(&context.peer)?;
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.inner.wait_ready().await;
        let tools = if self.inner.opts.tool_search {
            search::tools(self.inner.tool_list().0.len())
        } else {
            self.inner.tool_list().0.as_ref().clone()
        };
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let meta = request.meta.clone();
        if self.inner.opts.tool_search {
            return match request.name.as_ref() {
                search::SEARCH_TOOL => self.search(request.arguments).map(Into::into),
                search::CALL_TOOL => {
                    let args = request.arguments.unwrap_or_default();
                    let name = args.get("name").and_then(Value::as_str).ok_or_else(|| {
                        McpError::invalid_params(
                            "call_tool needs the \"name\" of a tool (see search_tools)",
                            None,
                        )
                    })?;
                    let arguments = match args.get("arguments") {
                        None | Some(Value::Null) => None,
                        Some(Value::Object(o)) => Some(o.clone()),
                        Some(_) => {
                            return Err(McpError::invalid_params(
                                "call_tool's \"arguments\" must be an object",
                                None,
                            ))
                        }
                    };
                    self.call(name, arguments, meta, &context)
                        .await
                        .map(Into::into)
                }
                other => Err(McpError::invalid_params(
                    format!(
                        "Unknown tool \"{other}\": this gateway offers search_tools and call_tool"
                    ),
                    None,
                )),
            };
        }
        self.call(&request.name, request.arguments, meta, &context)
            .await
            .map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let mut out: Vec<Resource> = vec![];
        for (server, v) in self.listed().await {
            for mut r in v
                .get("resources")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                if self.one().is_none() {
                    routes::wrap_uri_fields(&server, &mut r);
                }
                if let Ok(r) = serde_json::from_value(r) {
                    out.push(r);
                }
            }
        }
        Ok(ListResourcesResult::with_all_items(out))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let mut out: Vec<ResourceTemplate> = vec![];
        for (server, v) in self.listed().await {
            for mut t in v
                .get("resourceTemplates")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                if self
                    .inner
                    .holds_item(&server, crate::tool_trust::Item::template(&t))
                {
                    continue;
                }
                if let (None, Some(u)) = (
                    self.one(),
                    t.get("uriTemplate")
                        .and_then(Value::as_str)
                        .map(String::from),
                ) {
                    t["uriTemplate"] = Value::String(routes::wrap_uri(&server, &u));
                }
                if let Ok(t) = serde_json::from_value(t) {
                    out.push(t);
                }
            }
        }
        Ok(ListResourceTemplatesResult::with_all_items(out))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let (server, original) = self.route_uri(&request.uri)?;
        let mut params = request.clone();
        params.uri = original.to_string();
        let entry = self.entry(&context.peer)?;
        let record = self.journal_entry(
            &entry,
            &context,
            &server,
            crate::journal::Kind::Resource,
            &params.uri,
        );
        let uri = params.uri.clone();
        let req = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params));
        let r = match self
            .inner
            .manager
            .forward(&server, "resources/read", req, context.ct.clone())
            .await
        {
            Ok(ServerResult::ReadResourceResult(r)) => Ok(r),
            Ok(_) => {
                return Err(McpError::internal_error(
                    format!("server \"{server}\" answered resources/read with something else"),
                    None,
                ))
            }
            Err(e) => Err(e),
        };
        let mut r = self.answered(record, &server, &uri, r, |mode, ctx, r| {
            crate::tool_trust::results::guard_resource(&server, mode, r, ctx)
        })?;
        if self.one().is_none() {
            for c in r.contents.iter_mut() {
                match c {
                    ResourceContents::TextResourceContents { uri, .. }
                    | ResourceContents::BlobResourceContents { uri, .. } => {
                        *uri = self.gateway_uri(&server, uri)
                    }
                    #[allow(unreachable_patterns)]
                    _ => {}
                }
            }
        }
        Ok(r.into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscribe_uri(&request.uri, true, &context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscribe_uri(&request.uri, false, &context).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.inner.wait_ready().await;
        let servers = self.inner.connected_servers();
        let m = &self.inner.manager;
        let lists = futures::future::join_all(servers.iter().map(|s| m.list_prompts(s))).await;
        let mut found: Vec<(String, Value)> = vec![];
        for (server, l) in servers.into_iter().zip(lists) {
            let Ok(v) = l else { continue };
            for p in v
                .get("prompts")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                if self
                    .inner
                    .holds_item(&server, crate::tool_trust::Item::prompt(&p))
                {
                    continue;
                }
                found.push((server.clone(), p));
            }
        }
        let names: Vec<String> = match self.one() {
            Some(_) => found
                .iter()
                .map(|(_, p)| {
                    p.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                })
                .collect(),
            None => {
                let refs: Vec<crate::naming::ToolRef> = found
                    .iter()
                    .map(|(s, p)| {
                        crate::naming::ToolRef::new(
                            s.clone(),
                            p.get("name").and_then(Value::as_str).unwrap_or_default(),
                        )
                    })
                    .collect();
                let naming = crate::naming::assign_names(&refs);
                let mut map = self.inner.prompt_names.lock().unwrap();
                map.clear();
                for (r, n) in refs.into_iter().zip(&naming.names) {
                    map.insert(n.clone(), (r.server, r.tool));
                }
                naming.names
            }
        };
        let prompts = found
            .into_iter()
            .zip(names)
            .filter_map(|((_, mut p), name)| {
                p["name"] = Value::String(name);
                serde_json::from_value(p).ok()
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let (server, name) = match self.one() {
            Some(s) => (s.to_string(), request.name.clone()),
            None => {
                let mut found = self
                    .inner
                    .prompt_names
                    .lock()
                    .unwrap()
                    .get(&request.name)
                    .cloned();
                if found.is_none() {
                    // Not listed yet in this gateway's life: list, then look again.
                    self.list_prompts(None, context.clone()).await?;
                    found = self
                        .inner
                        .prompt_names
                        .lock()
                        .unwrap()
                        .get(&request.name)
                        .cloned();
                }
                found.ok_or_else(|| {
                    McpError::invalid_params(format!("Unknown prompt \"{}\"", request.name), None)
                })?
            }
        };
        if !self.inner.visible(&server) {
            return Err(McpError::invalid_params(
                format!("Unknown prompt \"{}\"", request.name),
                None,
            ));
        }
        // A prompt held by the tool trust is served by no gateway, not even
        // one that serves its server alone (where names are not looked up in
        // a listed map): its current definition is checked first.
        if self.one().is_some() {
            let listed = self
                .inner
                .manager
                .list_prompts(&server)
                .await
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
            let current = listed
                .get("prompts")
                .and_then(Value::as_array)
                .and_then(|ps| {
                    ps.iter()
                        .find(|p| p.get("name").and_then(Value::as_str) == Some(name.as_str()))
                        .cloned()
                });
            if let Some(p) = current {
                if self
                    .inner
                    .holds_item(&server, crate::tool_trust::Item::prompt(&p))
                {
                    return Err(McpError::invalid_params(
                        format!("The prompt \"{name}\" of \"{server}\" is held: it changed since it was approved, or a check flagged it. Review and approve it in Switchboard (or `switchboard approve {server}`)."),
                        None,
                    ));
                }
            }
        }
        let mut params = request.clone();
        params.name = name;
        let entry = self.entry(&context.peer)?;
        let record = self
            .journal_entry(
                &entry,
                &context,
                &server,
                crate::journal::Kind::Prompt,
                &params.name,
            )
            .map(|(j, e, t)| (j, e.with_arguments(&params.arguments), t));
        let prompt = params.name.clone();
        let req = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        let r = match self
            .inner
            .manager
            .forward(&server, "prompts/get", req, context.ct.clone())
            .await
        {
            Ok(ServerResult::GetPromptResult(r)) => Ok(r),
            Ok(_) => {
                return Err(McpError::internal_error(
                    format!("server \"{server}\" answered prompts/get with something else"),
                    None,
                ))
            }
            Err(e) => Err(e),
        };
        let mut r = self.answered(record, &server, &prompt, r, |mode, ctx, r| {
            crate::tool_trust::results::guard_prompt(&server, mode, r, ctx)
        })?;
        if self.one().is_none() {
            for m in r.messages.iter_mut() {
                if let Ok(mut v) = serde_json::to_value(&m.content) {
                    if v.get("uri").is_some() || v.get("resource").is_some() {
                        routes::wrap_uri_fields(&server, &mut v);
                        if let Ok(c) = serde_json::from_value(v) {
                            m.content = c;
                        }
                    }
                }
            }
        }
        Ok(r.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let mut v = serde_json::to_value(&request)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let server = match self.one() {
            Some(s) => s.to_string(),
            None => match v["ref"]["type"].as_str() {
                Some("ref/prompt") => {
                    let name = v["ref"]["name"].as_str().unwrap_or_default().to_string();
                    let (server, raw) = self
                        .inner
                        .prompt_names
                        .lock()
                        .unwrap()
                        .get(&name)
                        .cloned()
                        .ok_or_else(|| {
                            McpError::invalid_params(format!("Unknown prompt \"{name}\""), None)
                        })?;
                    v["ref"]["name"] = Value::String(raw);
                    server
                }
                Some("ref/resource") => {
                    let uri = v["ref"]["uri"].as_str().unwrap_or_default().to_string();
                    let (server, original) = self.route_uri(&uri)?;
                    v["ref"]["uri"] = Value::String(original.to_string());
                    server
                }
                _ => {
                    return Err(McpError::invalid_params(
                        "completion/complete needs a ref/prompt or ref/resource",
                        None,
                    ))
                }
            },
        };
        let params: CompleteRequestParams =
            serde_json::from_value(v).map_err(|e| McpError::invalid_params(e.to_string(), None))?;
        let req = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        match self
            .inner
            .manager
            .forward(&server, "completion/complete", req, context.ct.clone())
            .await
            .map_err(forwarded)?
        {
            ServerResult::CompleteResult(r) => Ok(r),
            _ => Err(McpError::internal_error(
                format!("server \"{server}\" answered completion/complete with something else"),
                None,
            )),
        }
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let entry = self.entry(&context.peer)?;
        *entry.log_level.lock().unwrap() = request.level;
        Ok(())
    }

    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {}
}

/// Who sent a request that came without a session (stateless HTTP, as the
/// team gateway serves it): the `clientInfo` a 2026-07-28 request carries in its
/// `_meta`, else the first product of its `User-Agent`
/// (`claude-code/2.1.3 (cli)` is claude-code 2.1.3). Capped, as it is the
/// client's to say.
fn request_client(cx: &RequestContext<RoleServer>) -> Option<(String, Option<String>)> {
    const MAX: usize = 100;
    let cap = |s: &str| s.chars().take(MAX).collect::<String>();
    if let Some(i) = cx.meta.client_info() {
        let name = i.name.trim();
        if !name.is_empty() {
            let version = i.version.trim();
            return Some((cap(name), (!version.is_empty()).then(|| cap(version))));
        }
    }
    let agent = cx
        .extensions
        .get::<axum::http::request::Parts>()?
        .headers
        .get(axum::http::header::USER_AGENT)?
        .to_str()
        .ok()?;
    let product = agent.split_whitespace().next()?;
    let (name, version) = match product.split_once('/') {
        Some((n, v)) => (n, Some(v)),
        None => (product, None),
    };
    (!name.is_empty()).then(|| (cap(name), version.filter(|v| !v.is_empty()).map(cap)))
}
