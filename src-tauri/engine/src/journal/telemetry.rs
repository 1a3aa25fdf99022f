//! The journal's calls as OpenTelemetry spans, one per call, sent over
//! OTLP/HTTP (protobuf) to the collector Settings name.
//!
//! The writer thread hands over each entry after masking it, so a span
//! carries no secret value the journal would not store. Handing over never
//! waits: spans go into the SDK's batch processor, a bounded queue (full:
//! the span is dropped) that its own thread empties, each request bounded
//! by [`Tuning::export_timeout`]. Names and attributes follow the
//! OpenTelemetry semantic conventions for MCP (`mcp.method.name`,
//! `gen_ai.tool.name`, …); what they do not cover is under `switchboard.`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer as _, TracerProvider as _};
use opentelemetry::{Array, Context, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracer, SdkTracerProvider, SpanData,
};
use opentelemetry_sdk::Resource;
use serde::{Deserialize, Serialize};

use super::entry::{Entry, Kind, Outcome, Via};
use super::Tuning;
use crate::settings::TelemetrySettings;

/// How long a closing journal waits for its last spans to be sent.
const FINISH_WITHIN: Duration = Duration::from_secs(2);

/// How the export is doing (Settings → Activity can show it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TelemetryStats {
    /// Spans are being exported (turned on, and the endpoint is usable).
    pub exporting: bool,
    /// Spans the collector accepted since this journal was opened.
    pub exported: u64,
    /// Spans in requests that failed (no collector, a refusal, a timeout).
    pub failed: u64,
    /// The last problem: a bad endpoint, or why the last request failed.
    pub problem: Option<String>,
}

/// What the exporter's thread and the journal's callers share.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    exporting: AtomicBool,
    exported: AtomicU64,
    failed: AtomicU64,
    problem: Mutex<Option<String>>,
}

impl Shared {
    fn set_problem(&self, text: Option<String>) {
        *self.problem.lock().unwrap_or_else(|p| p.into_inner()) = text;
    }

    pub fn stats(&self) -> TelemetryStats {
        TelemetryStats {
            exporting: self.exporting.load(Ordering::Relaxed),
            exported: self.exported.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            problem: self
                .problem
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        }
    }
}

/// The export while it is turned on: the SDK's provider (batch processor
/// and OTLP exporter) and its tracer.
pub(crate) struct Exporter {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    payloads: bool,
    shared: Arc<Shared>,
}

impl Exporter {
    /// Starts exporting as `settings` say; `None` when they are off or the
    /// endpoint is unusable (the problem is in the stats and on stderr).
    pub fn start(
        settings: &TelemetrySettings,
        tuning: &Tuning,
        shared: Arc<Shared>,
    ) -> Option<Exporter> {
        shared.exporting.store(false, Ordering::Relaxed);
        if !settings.enabled {
            shared.set_problem(None);
            return None;
        }
        if let Err(why) = settings.check() {
            let text = format!("{why}; calls are not exported");
            eprintln!("switchboard: settings.json: {text}");
            shared.set_problem(Some(text));
            return None;
        }
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(settings.endpoint.trim())
            .with_timeout(tuning.export_timeout)
            .build();
        let exporter = match exporter {
            Ok(e) => e,
            Err(e) => {
                let text = format!(
                    "telemetry.endpoint: the exporter for {} cannot start ({e}); calls are not exported",
                    settings.endpoint
                );
                eprintln!("switchboard: settings.json: {text}");
                shared.set_problem(Some(text));
                return None;
            }
        };
        let processor = BatchSpanProcessor::builder(Counted {
            inner: exporter,
            shared: shared.clone(),
            endpoint: settings.endpoint.trim().to_string(),
        })
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_max_queue_size(tuning.export_queue.max(1))
                .with_max_export_batch_size(512)
                .with_scheduled_delay(tuning.export_every)
                .build(),
        )
        .build();
        let version = env!("CARGO_PKG_VERSION");
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(
                Resource::builder()
                    .with_service_name("switchboard")
                    .with_attribute(KeyValue::new("service.version", version))
                    .build(),
            )
            .build();
        let tracer = provider.tracer_with_scope(
            InstrumentationScope::builder("switchboard")
                .with_version(version)
                .build(),
        );
        shared.set_problem(None);
        shared.exporting.store(true, Ordering::Relaxed);
        Some(Exporter {
            provider,
            tracer,
            payloads: settings.include_payloads,
            shared,
        })
    }

    /// One span for a call that was masked already. Never waits.
    pub fn export(&self, e: &Entry) {
        let start = SystemTime::UNIX_EPOCH + Duration::from_millis(e.time);
        let end = start + Duration::from_micros(e.duration_us);
        let (name, kind, attributes) = span_of(e, self.payloads);
        let mut span = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .with_start_time(start)
            .with_attributes(attributes)
            // Each call is its own trace: no parent, whatever runs here.
            .start_with_context(&self.tracer, &Context::new());
        if e.outcome != Outcome::Ok {
            span.set_status(Status::error(e.error.clone().unwrap_or_default()));
        }
        span.end_with_timestamp(end);
    }

    /// Stops exporting: what is queued is sent (within the timeout) on a
    /// thread of its own, so the journal's writer does not wait for it.
    pub fn stop(self) {
        self.shared.exporting.store(false, Ordering::Relaxed);
        let provider = self.provider;
        let stopping = std::thread::Builder::new()
            .name("telemetry-stop".into())
            .spawn(move || {
                let _ = provider.shutdown();
            });
        if let Err(e) = stopping {
            eprintln!("switchboard: the OpenTelemetry export cannot stop cleanly: {e}");
        }
    }

    /// Stops exporting after sending what is queued (the journal closing),
    /// waiting for that at most [`FINISH_WITHIN`].
    pub fn finish(self) {
        self.shared.exporting.store(false, Ordering::Relaxed);
        let _ = self.provider.shutdown_with_timeout(FINISH_WITHIN);
    }
}

/// The span's name, kind and attributes for a call.
///
/// Kind: the gateway is the MCP server its client called, so its calls are
/// SERVER spans (with the client's transport); the app's tool explorer is
/// itself the MCP client, so its calls are CLIENT spans.
fn span_of(e: &Entry, payloads: bool) -> (String, SpanKind, Vec<KeyValue>) {
    let method = match e.kind {
        Kind::Tool => "tools/call",
        Kind::Resource => "resources/read",
        Kind::Prompt => "prompts/get",
    };
    let mut a = vec![KeyValue::new("mcp.method.name", method)];
    // A resource's URI is left out of the name (too many distinct ones).
    let name = match e.kind {
        Kind::Tool => {
            a.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            a.push(KeyValue::new("gen_ai.tool.name", e.name.clone()));
            format!("{method} {}", e.name)
        }
        Kind::Prompt => {
            a.push(KeyValue::new("gen_ai.prompt.name", e.name.clone()));
            format!("{method} {}", e.name)
        }
        Kind::Resource => {
            a.push(KeyValue::new("mcp.resource.uri", e.name.clone()));
            method.to_string()
        }
    };
    let kind = match e.via {
        Via::Http => {
            a.push(KeyValue::new("network.transport", "tcp"));
            a.push(KeyValue::new("network.protocol.name", "http"));
            SpanKind::Server
        }
        Via::Stdio => {
            a.push(KeyValue::new("network.transport", "pipe"));
            SpanKind::Server
        }
        Via::App => SpanKind::Client,
    };
    let error_type = match e.outcome {
        Outcome::Ok => None,
        Outcome::ToolError => Some("tool_error".to_string()),
        Outcome::Timeout => Some(e.error_class.clone().unwrap_or_else(|| "timeout".into())),
        Outcome::ProtocolError => Some(e.error_class.clone().unwrap_or_else(|| "_OTHER".into())),
    };
    if let Some(t) = error_type {
        a.push(KeyValue::new("error.type", t));
    }
    a.push(KeyValue::new("switchboard.server", e.server.clone()));
    a.push(KeyValue::new("switchboard.via", e.via.as_str()));
    a.push(KeyValue::new("switchboard.outcome", e.outcome.as_str()));
    if !e.client.is_empty() {
        a.push(KeyValue::new("switchboard.client.name", e.client.clone()));
    }
    if let Some(v) = &e.client_version {
        a.push(KeyValue::new("switchboard.client.version", v.clone()));
    }
    if let Some(p) = &e.profile {
        a.push(KeyValue::new("switchboard.profile", p.clone()));
    }
    if let Some(u) = &e.user {
        a.push(KeyValue::new("user.id", u.clone()));
    }
    if !e.findings.is_empty() {
        let mut rules: Vec<StringValue> = vec![];
        for f in &e.findings {
            if !rules.iter().any(|r| r.as_str() == f.rule) {
                rules.push(f.rule.clone().into());
            }
        }
        a.push(KeyValue::new(
            "switchboard.findings.count",
            e.findings.len() as i64,
        ));
        a.push(KeyValue::new(
            "switchboard.findings.rules",
            Value::Array(Array::String(rules)),
        ));
    }
    if payloads {
        // The conventions name a tool call's arguments and result; a
        // resource's contents and a prompt's messages go under our own keys.
        let (args, result) = match e.kind {
            Kind::Tool => ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"),
            Kind::Resource | Kind::Prompt => ("switchboard.arguments", "switchboard.result"),
        };
        if !e.arguments.is_empty() {
            a.push(KeyValue::new(args, e.arguments.clone()));
        }
        if !e.result.is_empty() {
            a.push(KeyValue::new(result, e.result.clone()));
        }
        if e.arguments_cut {
            a.push(KeyValue::new("switchboard.arguments.truncated", true));
        }
        if e.result_cut {
            a.push(KeyValue::new("switchboard.result.truncated", true));
        }
    }
    (name, kind, a)
}

/// The OTLP exporter, counting what the collector accepted and refused.
#[derive(Debug)]
struct Counted {
    inner: opentelemetry_otlp::SpanExporter,
    shared: Arc<Shared>,
    endpoint: String,
}

impl opentelemetry_sdk::trace::SpanExporter for Counted {
    fn export(
        &self,
        batch: Vec<SpanData>,
    ) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        let n = batch.len() as u64;
        let shared = self.shared.clone();
        let endpoint = self.endpoint.clone();
        let sent = self.inner.export(batch);
        async move {
            let r = sent.await;
            match &r {
                Ok(()) => {
                    shared.exported.fetch_add(n, Ordering::Relaxed);
                    shared.set_problem(None);
                }
                Err(e) => {
                    shared.failed.fetch_add(n, Ordering::Relaxed);
                    shared.set_problem(Some(format!("spans could not be sent to {endpoint}: {e}")));
                }
            }
            r
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}
