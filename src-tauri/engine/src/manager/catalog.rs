//! Resources, prompts, subscriptions and roots.

use std::path::PathBuf;

use rmcp::service::Peer;
use rmcp::RoleClient;
use serde_json::{Map, Value};

use crate::config::ServerDef;
use crate::journal::Kind;

use super::connection::subscribe_request;
use super::pages;
use super::{Manager, RegistryError};

impl Manager {
    /// A list's "stopped early" warning goes to the server's log.
    pub(super) fn note_listed<T>(&self, server: &str, l: pages::Listed<T>) -> Vec<T> {
        if let (Some(w), Some(slot)) = (&l.warning, self.slot(server)) {
            self.warn(&slot, w);
        }
        l.items
    }

    /// Resources and resource templates, all pages.
    pub async fn list_resources(&self, server: &str) -> Result<Value, RegistryError> {
        let peer = self.peer_of(server)?;
        let resources = self
            .ask(server, "resources/list", pages::resources(&peer))
            .await?;
        let resources = self.note_listed(server, resources);
        let limit = self.request_timeout(server);
        let templates = match tokio::time::timeout(limit, pages::resource_templates(&peer)).await {
            // Servers without templates answer "method not found".
            Ok(Err(rmcp::ServiceError::McpError(e)))
                if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
            {
                vec![]
            }
            other => {
                let t = self.answer(server, "resources/templates/list", limit, other)?;
                self.note_listed(server, t)
            }
        };
        Ok(serde_json::json!({ "resources": resources, "resourceTemplates": templates }))
    }

    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, RegistryError> {
        let r = self.read_resource_typed(server, uri).await?;
        Ok(serde_json::to_value(r).unwrap_or_default())
    }

    async fn read_resource_typed(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<rmcp::model::ReadResourceResult, RegistryError> {
        let peer = self.peer_of(server)?;
        let p = rmcp::model::ReadResourceRequestParams::new(uri);
        self.ask(server, "resources/read", peer.read_resource(p))
            .await
    }

    /// [`Manager::read_resource`] asked for by a person in `client` (the
    /// app's Resources view): the contents checked like the gateway's with
    /// the server's `mode` (a note first, or refused; known secrets masked)
    /// and recorded in the call journal as the server gave them.
    pub async fn read_resource_recorded(
        &self,
        server: &str,
        uri: &str,
        client: &str,
        mode: crate::settings::ResultMode,
    ) -> Result<Value, RegistryError> {
        let answer = self.read_resource_typed(server, uri);
        self.recorded(
            server,
            Kind::Resource,
            uri,
            None,
            client,
            answer,
            |ctx, r| crate::tool_trust::results::guard_resource(server, mode, r, ctx),
        )
        .await
    }

    /// [`Manager::get_prompt`] asked for by a person in `client`, checked
    /// and recorded like [`Manager::read_resource_recorded`].
    pub async fn get_prompt_recorded(
        &self,
        server: &str,
        name: &str,
        args: Option<Map<String, Value>>,
        client: &str,
        mode: crate::settings::ResultMode,
    ) -> Result<Value, RegistryError> {
        let arguments = args.clone();
        let answer = self.get_prompt_typed(server, name, args);
        self.recorded(
            server,
            Kind::Prompt,
            name,
            Some(&arguments),
            client,
            answer,
            |ctx, r| crate::tool_trust::results::guard_prompt(server, mode, r, ctx),
        )
        .await
    }

    /// One request of the app's own: its entry, the answer checked (a
    /// refusal as [`RegistryError::Refused`]), both recorded.
    #[allow(clippy::too_many_arguments)]
    async fn recorded<T: serde::Serialize>(
        &self,
        server: &str,
        kind: Kind,
        name: &str,
        arguments: Option<&Option<Map<String, Value>>>,
        client: &str,
        answer: impl std::future::Future<Output = Result<T, RegistryError>>,
        guard: impl FnOnce(
            &crate::tool_trust::results::ResultContext,
            T,
        ) -> crate::tool_trust::results::Guarded<Result<T, String>>,
    ) -> Result<Value, RegistryError> {
        use crate::journal::{Entry, Outcome, Via};
        use crate::tool_trust::results::Action;
        let journal = self.journal();
        let entry = journal.as_ref().map(|_| {
            let e = Entry::new(Via::App, server, kind, name).with_client(client, None);
            match arguments {
                Some(a) => e.with_arguments(a),
                None => e,
            }
        });
        let started = std::time::Instant::now();
        let answer = answer.await;
        let took = started.elapsed();
        let answer = match answer {
            Ok(a) => a,
            Err(err) => {
                if let (Some(journal), Some(e)) = (journal, entry) {
                    let (outcome, class) = match &err {
                        // `Manager::ask`'s own timeout.
                        RegistryError::Mcp(m) if m.contains("did not answer") => {
                            (Outcome::Timeout, "timeout")
                        }
                        RegistryError::Unknown(_) | RegistryError::NotConnected(_) => {
                            (Outcome::ProtocolError, "not-connected")
                        }
                        _ => (Outcome::ProtocolError, "server-error"),
                    };
                    journal.record(e.with_duration(took).with_error(
                        outcome,
                        Some(class.into()),
                        err.to_string(),
                    ));
                }
                return Err(err);
            }
        };
        let entry = entry.map(|e| e.with_result(&answer).with_duration(took));
        let g = self.with_result_context(|ctx| guard(ctx, answer));
        self.warn_checked(server, name, g.action, &g.findings, "the Resources view");
        if let (Some(journal), Some(e)) = (journal, entry) {
            let e = e.with_findings(g.findings.clone());
            journal.record(match g.action {
                Action::Blocked => e.refused_by_checks(),
                _ => e,
            });
        }
        match g.result {
            Ok(r) => Ok(serde_json::to_value(r).unwrap_or_default()),
            Err(message) => Err(RegistryError::Refused(message)),
        }
    }

    pub async fn list_prompts(&self, server: &str) -> Result<Value, RegistryError> {
        let peer = self.peer_of(server)?;
        let p = self
            .ask(server, "prompts/list", pages::prompts(&peer))
            .await?;
        Ok(serde_json::json!({ "prompts": self.note_listed(server, p) }))
    }

    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<Value, RegistryError> {
        let r = self.get_prompt_typed(server, name, args).await?;
        Ok(serde_json::to_value(r).unwrap_or_default())
    }

    async fn get_prompt_typed(
        &self,
        server: &str,
        name: &str,
        args: Option<Map<String, Value>>,
    ) -> Result<rmcp::model::GetPromptResult, RegistryError> {
        let peer = self.peer_of(server)?;
        // Prompt arguments are strings in MCP; numbers and booleans are sent as text.
        let args: Option<Map<String, Value>> = args.map(|a| {
            a.into_iter()
                .map(|(k, v)| match v {
                    Value::String(_) => (k, v),
                    other => (k, Value::String(other.to_string())),
                })
                .collect()
        });
        let p = rmcp::model::GetPromptRequestParams::new(name);
        let p = match args {
            Some(a) => p.with_arguments(a),
            None => p,
        };
        self.ask(server, "prompts/get", peer.get_prompt(p)).await
    }

    /// Subscribe to a resource; kept across reconnects. Updates arrive as
    /// `EngineEvent::ResourceUpdated`.
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<(), RegistryError> {
        let peer = self.peer_of(server)?;
        self.ask(
            server,
            "resources/subscribe",
            subscribe_request(&peer, uri, true),
        )
        .await?;
        if let Some(s) = self.slot(server) {
            s.rt.lock().unwrap().subscriptions.insert(uri.to_string());
        }
        Ok(())
    }

    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<(), RegistryError> {
        if let Some(s) = self.slot(server) {
            s.rt.lock().unwrap().subscriptions.remove(uri);
        }
        let peer = self.peer_of(server)?;
        self.ask(
            server,
            "resources/unsubscribe",
            subscribe_request(&peer, uri, false),
        )
        .await
    }

    /// The folders offered to servers as roots; connected servers
    /// get `notifications/roots/list_changed`.
    pub async fn set_roots(&self, folders: &[PathBuf]) {
        let roots: Vec<(String, Option<String>)> = folders
            .iter()
            .map(|p| {
                let uri = format!("file://{}", p.to_string_lossy());
                (uri, p.file_name().map(|n| n.to_string_lossy().to_string()))
            })
            .collect();
        {
            let mut r = self.shared.client_hooks.roots.write().unwrap();
            if *r == roots {
                return;
            }
            *r = roots;
        }
        let peers: Vec<Peer<RoleClient>> =
            self.all_slots().iter().filter_map(|s| s.peer()).collect();
        // Told in the background: a server that does not read its input
        // must not hold up the caller (an edit, the file watcher).
        let timeout = self.shared.opts.ping_timeout;
        self.shared.tracker.spawn(async move {
            for p in peers {
                #[allow(deprecated)]
                let _ = tokio::time::timeout(timeout, p.notify_roots_list_changed()).await;
            }
        });
    }

    /// The `instructions` the server sent at `initialize`, while connected.
    pub fn server_instructions(&self, server: &str) -> Option<String> {
        self.slot(server)?.peer()?.peer_info()?.instructions.clone()
    }

    /// Whether the connected server offers prompts, and resources.
    pub fn offers(&self, server: &str) -> (bool, bool) {
        let Some(slot) = self.slot(server) else {
            return (false, false);
        };
        let caps = slot
            .peer()
            .and_then(|p| p.peer_info().map(|i| i.capabilities.clone()));
        caps.map(|c| (c.prompts.is_some(), c.resources.is_some()))
            .unwrap_or((false, false))
    }

    /// The definition a managed server runs (as written, unexpanded).
    pub fn server_def(&self, server: &str) -> Option<ServerDef> {
        Some(self.slot(server)?.wanted.def.clone())
    }
}
