//! `conformance-server`: an MCP server (stdio) offering exactly what the
//! server scenarios of the official conformance suite
//! (`@modelcontextprotocol/conformance`, pinned in tests/npm/package.json)
//! call: the `test_*` tools, the `test://` resources and template, the
//! `test_*` prompts, completion, logging, and the sampling and elicitation
//! requests some tools send back to the client.
//!
//! tests/tests/conformance.rs runs it behind Switchboard's gateway
//! (`switchboard serve --http`, at `/mcp/<name>`) and points the suite at
//! the gateway: what the suite sees is the gateway's forwarding of each of
//! these features. Names, texts and schemas follow each scenario's own
//! description of the server it expects.
#![allow(deprecated)] // logging, sampling and resources/subscribe are what 2025-11-25 clients use.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use base64::Engine as _;
use rmcp::serde::de::DeserializeOwned;
use rmcp::{
    model::*,
    service::{NotificationContext, RequestContext},
    ErrorData as McpError, RoleServer, ServerHandler, ServiceExt,
};
use serde_json::{json, Value};

/// A 1x1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// Pause between the log messages and progress steps of one call (the
/// scenarios ask for ~50 ms, so a client sees them arrive apart).
const STEP: Duration = Duration::from_millis(50);

/// A minimal WAV: 8 kHz, 8-bit mono, 8 samples of silence.
fn wav() -> String {
    let samples = [128u8; 8];
    let mut b = Vec::new();
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    b.extend_from_slice(&1u16.to_le_bytes()); // PCM
    b.extend_from_slice(&1u16.to_le_bytes()); // mono
    b.extend_from_slice(&8000u32.to_le_bytes()); // sample rate
    b.extend_from_slice(&8000u32.to_le_bytes()); // byte rate
    b.extend_from_slice(&1u16.to_le_bytes()); // block align
    b.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    b.extend_from_slice(b"data");
    b.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    b.extend_from_slice(&samples);
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// rmcp's typed value of a protocol JSON object (the shapes below are the
/// scenarios' own, written as JSON).
fn typed<T: DeserializeOwned>(v: Value) -> Result<T, McpError> {
    serde_json::from_value(v).map_err(|e| {
        McpError::internal_error(
            format!("conformance-server built an invalid message: {e}"),
            None,
        )
    })
}

fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

fn tools() -> Vec<Value> {
    let none = json!({ "type": "object", "properties": {} });
    let simple = |name: &str, description: &str| json!({ "name": name, "description": description, "inputSchema": none });
    vec![
        simple("test_simple_text", "Returns a simple text content"),
        simple("test_image_content", "Returns an image content (a 1x1 PNG)"),
        simple("test_audio_content", "Returns an audio content (a short silent WAV)"),
        simple("test_embedded_resource", "Returns an embedded text resource"),
        simple("test_multiple_content_types", "Returns text, image and embedded resource contents"),
        simple("test_tool_with_logging", "Sends three info log messages while it runs"),
        simple("test_error_handling", "Always fails: a result with isError true"),
        simple("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100 when the request has a progress token"),
        json!({
            "name": "test_sampling",
            "description": "Asks the client's language model (sampling/createMessage) to answer `prompt`",
            "inputSchema": { "type": "object", "properties": { "prompt": { "type": "string", "description": "The prompt to send to the LLM" } }, "required": ["prompt"] },
        }),
        json!({
            "name": "test_elicitation",
            "description": "Asks the client's user (elicitation/create) for a username and an email, showing `message`",
            "inputSchema": { "type": "object", "properties": { "message": { "type": "string", "description": "The message to show the user" } }, "required": ["message"] },
        }),
        simple("test_elicitation_sep1034_defaults", "Elicitation whose schema has a default for every primitive type (SEP-1034)"),
        simple("test_elicitation_sep1330_enums", "Elicitation with the five enum schema forms (SEP-1330)"),
        simple("test_reconnection", "Returns after a short pause (SEP-1699 polling: over stdio there is no stream for this server to close)"),
        json!({
            "name": "json_schema_2020_12_tool",
            "description": "Tool with JSON Schema 2020-12 features",
            "inputSchema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": { "address": { "type": "object", "properties": { "street": { "type": "string" }, "city": { "type": "string" } } } },
                "properties": { "name": { "type": "string" }, "address": { "$ref": "#/$defs/address" } },
                "additionalProperties": false,
            },
        }),
    ]
}

fn sep1034_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": { "type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active" },
            "verified": { "type": "boolean", "description": "Verification status", "default": true },
        },
    })
}

fn sep1330_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": { "type": "string", "description": "Untitled single-select", "enum": ["option1", "option2", "option3"] },
            "titledSingle": {
                "type": "string",
                "description": "Titled single-select",
                "oneOf": [
                    { "const": "value1", "title": "First Option" },
                    { "const": "value2", "title": "Second Option" },
                    { "const": "value3", "title": "Third Option" },
                ],
            },
            "legacyEnum": {
                "type": "string",
                "description": "Legacy titled enum (enumNames, deprecated)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Untitled multi-select",
                "items": { "type": "string", "enum": ["option1", "option2", "option3"] },
            },
            "titledMulti": {
                "type": "array",
                "description": "Titled multi-select",
                "items": {
                    "anyOf": [
                        { "const": "value1", "title": "First Choice" },
                        { "const": "value2", "title": "Second Choice" },
                        { "const": "value3", "title": "Third Choice" },
                    ],
                },
            },
        },
    })
}

#[derive(Clone, Default)]
struct Conformance {
    /// Least level of the log messages sent (`logging/setLevel`; all until set).
    level: Arc<Mutex<Option<LoggingLevel>>>,
    subscriptions: Arc<Mutex<HashSet<String>>>,
}

impl Conformance {
    async fn log(&self, peer: &rmcp::Peer<RoleServer>, level: LoggingLevel, text: &str) {
        if self
            .level
            .lock()
            .unwrap()
            .is_some_and(|least| (level as u8) < (least as u8))
        {
            return;
        }
        if let Ok(p) = typed::<LoggingMessageNotificationParam>(
            json!({ "level": level, "logger": "conformance-server", "data": text }),
        ) {
            let _ = peer.notify_logging_message(p).await;
        }
    }

    async fn elicit(
        &self,
        cx: &RequestContext<RoleServer>,
        message: &str,
        schema: Value,
    ) -> Result<CallToolResult, McpError> {
        if cx
            .peer
            .peer_info()
            .is_none_or(|i| i.capabilities.elicitation.is_none())
        {
            return Err(McpError::invalid_request(
                "the client does not support elicitation",
                None,
            ));
        }
        let params: ElicitRequestParams =
            typed(json!({ "mode": "form", "message": message, "requestedSchema": schema }))?;
        let r = cx.peer.create_elicitation(params).await.map_err(|e| {
            McpError::internal_error(format!("elicitation/create failed: {e}"), None)
        })?;
        let action = serde_json::to_value(&r.action).unwrap_or_default();
        let content = r
            .content
            .map(|c| serde_json::to_value(c).unwrap_or_default())
            .unwrap_or(Value::Null);
        Ok(text_result(format!(
            "Elicitation completed: action={}, content={content}",
            action.as_str().unwrap_or("?")
        )))
    }

    async fn run(
        &self,
        name: &str,
        args: &JsonObject,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        match name {
            "test_simple_text" => Ok(text_result("This is a simple text response for testing.")),
            "test_image_content" => Ok(CallToolResult::success(vec![ContentBlock::image(
                PNG,
                "image/png",
            )])),
            "test_audio_content" => typed(
                json!({ "content": [{ "type": "audio", "data": wav(), "mimeType": "audio/wav" }] }),
            ),
            "test_embedded_resource" => typed(json!({ "content": [{
                "type": "resource",
                "resource": { "uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content." },
            }] })),
            "test_multiple_content_types" => typed(json!({ "content": [
                { "type": "text", "text": "Multiple content types test:" },
                { "type": "image", "data": PNG, "mimeType": "image/png" },
                { "type": "resource", "resource": { "uri": "test://mixed-content-resource", "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}" } },
            ] })),
            "test_tool_with_logging" => {
                self.log(&cx.peer, LoggingLevel::Info, "Tool execution started")
                    .await;
                tokio::time::sleep(STEP).await;
                self.log(&cx.peer, LoggingLevel::Info, "Tool processing data")
                    .await;
                tokio::time::sleep(STEP).await;
                self.log(&cx.peer, LoggingLevel::Info, "Tool execution completed")
                    .await;
                Ok(text_result("Tool with logging executed successfully"))
            }
            "test_error_handling" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "This tool intentionally returns an error for testing",
            )])),
            "test_tool_with_progress" => {
                let token = cx.meta.get_progress_token();
                for (i, step) in [0, 50, 100].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(STEP).await;
                    }
                    if let Some(token) = &token {
                        let p: ProgressNotificationParam = typed(
                            json!({ "progressToken": token, "progress": step, "total": 100 }),
                        )?;
                        let _ = cx.peer.notify_progress(p).await;
                    }
                }
                Ok(text_result(format!(
                    "Tool with progress executed ({})",
                    if token.is_some() {
                        "progress reported"
                    } else {
                        "no progress token"
                    }
                )))
            }
            "test_sampling" => {
                let prompt = args.get("prompt").and_then(Value::as_str).ok_or_else(|| {
                    McpError::invalid_params("test_sampling needs a string `prompt`", None)
                })?;
                if cx
                    .peer
                    .peer_info()
                    .is_none_or(|i| i.capabilities.sampling.is_none())
                {
                    return Err(McpError::invalid_request(
                        "the client does not support sampling",
                        None,
                    ));
                }
                let params: CreateMessageRequestParams = typed(json!({
                    "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
                    "maxTokens": 100,
                }))?;
                let r = cx.peer.create_message(params).await.map_err(|e| {
                    McpError::internal_error(format!("sampling/createMessage failed: {e}"), None)
                })?;
                let v = serde_json::to_value(&r).unwrap_or_default();
                // `content` is one block, or (2025-11-25) possibly a list.
                let text = match &v["content"] {
                    Value::Array(a) => a
                        .iter()
                        .filter_map(|c| c["text"].as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                    c => c["text"].as_str().unwrap_or_default().to_string(),
                };
                Ok(text_result(format!("LLM response: {text}")))
            }
            "test_elicitation" => {
                let message = args.get("message").and_then(Value::as_str).ok_or_else(|| {
                    McpError::invalid_params("test_elicitation needs a string `message`", None)
                })?;
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "username": { "type": "string", "description": "User's response" },
                        "email": { "type": "string", "description": "User's email address" },
                    },
                    "required": ["username", "email"],
                });
                self.elicit(cx, message, schema).await
            }
            "test_elicitation_sep1034_defaults" => {
                self.elicit(
                    cx,
                    "Please review and update the form fields with defaults",
                    sep1034_schema(),
                )
                .await
            }
            "test_elicitation_sep1330_enums" => {
                self.elicit(
                    cx,
                    "Please select options from the enum fields",
                    sep1330_schema(),
                )
                .await
            }
            "test_reconnection" => {
                tokio::time::sleep(STEP).await;
                Ok(text_result("Reconnection test completed successfully"))
            }
            "json_schema_2020_12_tool" => Ok(text_result(format!(
                "json_schema_2020_12_tool called with {}",
                Value::Object(args.clone())
            ))),
            other => Err(McpError::invalid_params(
                format!("unknown tool {other:?}"),
                None,
            )),
        }
    }
}

fn resources() -> Value {
    json!([
        { "uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain" },
        { "uri": "test://static-binary", "name": "static-binary", "description": "A static binary resource (a 1x1 PNG)", "mimeType": "image/png" },
        { "uri": "test://watched-resource", "name": "watched-resource", "description": "A resource clients can subscribe to", "mimeType": "text/plain" },
    ])
}

fn prompts() -> Value {
    json!([
        { "name": "test_simple_prompt", "description": "A simple prompt without arguments" },
        {
            "name": "test_prompt_with_arguments",
            "description": "A prompt with two required arguments",
            "arguments": [
                { "name": "arg1", "description": "First test argument", "required": true },
                { "name": "arg2", "description": "Second test argument", "required": true },
            ],
        },
        {
            "name": "test_prompt_with_embedded_resource",
            "description": "A prompt that embeds the resource `resourceUri`",
            "arguments": [{ "name": "resourceUri", "description": "URI of the resource to embed", "required": true }],
        },
        { "name": "test_prompt_with_image", "description": "A prompt with an image" },
    ])
}

/// Completion candidates of a prompt argument or template variable.
fn candidates(argument: &str) -> &'static [&'static str] {
    match argument {
        "arg1" | "arg2" => &["paris", "park", "party", "test", "testing", "tested"],
        "id" => &["123", "456", "789"],
        _ => &[],
    }
}

impl ServerHandler for Conformance {
    fn get_info(&self) -> ServerConfig {
        let caps: ServerCapabilities = serde_json::from_value(json!({
            "tools": { "listChanged": false },
            "resources": { "subscribe": true, "listChanged": false },
            "prompts": { "listChanged": false },
            "logging": {},
            "completions": {},
        }))
        .unwrap_or_default();
        ServerConfig::new(caps).with_server_info(Implementation::new(
            "conformance-server",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        typed(json!({ "tools": tools() }))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        self.run(&request.name, &args, &context)
            .await
            .map(Into::into)
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        typed(json!({ "resources": resources() }))
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        typed(json!({ "resourceTemplates": [{
            "uriTemplate": "test://template/{id}/data",
            "name": "template-data",
            "description": "Data for an id",
            "mimeType": "application/json",
        }] }))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => {
                json!({ "uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource." })
            }
            "test://static-binary" => json!({ "uri": uri, "mimeType": "image/png", "blob": PNG }),
            "test://watched-resource" => {
                json!({ "uri": uri, "mimeType": "text/plain", "text": "Watched resource content." })
            }
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|r| r.strip_suffix("/data"))
                .filter(|id| !id.is_empty() && !id.contains('/'))
            {
                Some(id) => json!({
                    "uri": uri,
                    "mimeType": "application/json",
                    "text": json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") }).to_string(),
                }),
                None => {
                    return Err(McpError::resource_not_found(
                        format!("no resource {uri}"),
                        Some(json!({ "uri": uri })),
                    ))
                }
            },
        };
        let r: ReadResourceResult = typed(json!({ "contents": [contents] }))?;
        Ok(r.into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions.lock().unwrap().insert(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions.lock().unwrap().remove(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _r: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        typed(json!({ "prompts": prompts() }))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let arg = |k: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|a| a.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    McpError::invalid_params(
                        format!("prompt {} needs argument `{k}`", request.name),
                        None,
                    )
                })
        };
        let messages = match request.name.as_str() {
            "test_simple_prompt" => {
                json!([{ "role": "user", "content": { "type": "text", "text": "This is a simple prompt for testing." } }])
            }
            "test_prompt_with_arguments" => {
                let (a1, a2) = (arg("arg1")?, arg("arg2")?);
                json!([{ "role": "user", "content": { "type": "text", "text": format!("Prompt with arguments: arg1='{a1}', arg2='{a2}'") } }])
            }
            "test_prompt_with_embedded_resource" => {
                let uri = arg("resourceUri")?;
                json!([
                    { "role": "user", "content": { "type": "resource", "resource": { "uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing." } } },
                    { "role": "user", "content": { "type": "text", "text": "Please process the embedded resource above." } },
                ])
            }
            "test_prompt_with_image" => json!([
                { "role": "user", "content": { "type": "image", "data": PNG, "mimeType": "image/png" } },
                { "role": "user", "content": { "type": "text", "text": "Please analyze the image above." } },
            ]),
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown prompt {other:?}"),
                    None,
                ))
            }
        };
        let r: GetPromptResult = typed(json!({ "messages": messages }))?;
        Ok(r.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let v = serde_json::to_value(&request).unwrap_or_default();
        let (name, value) = (
            v["argument"]["name"].as_str().unwrap_or_default(),
            v["argument"]["value"].as_str().unwrap_or_default(),
        );
        let values: Vec<&str> = candidates(name)
            .iter()
            .copied()
            .filter(|c| c.starts_with(value))
            .collect();
        typed(
            json!({ "completion": { "values": values, "total": values.len(), "hasMore": false } }),
        )
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        *self.level.lock().unwrap() = Some(request.level);
        Ok(())
    }

    async fn on_initialized(&self, _cx: NotificationContext<RoleServer>) {}
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let running = Conformance::default()
        .serve(rmcp::transport::stdio())
        .await?;
    running.waiting().await?;
    Ok(())
}
