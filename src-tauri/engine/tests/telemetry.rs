//! OpenTelemetry export of the call journal (SPEC G11, issue 29 point 4),
//! checked against an OTLP/HTTP receiver in this test that decodes what it
//! gets with the official protobuf types: one span per call, named and
//! described as the MCP semantic conventions say, at the call's times, an
//! error status for failed calls; no secret value ever, arguments and
//! results only when turned on; nothing sent while off, and turning it off
//! stops it; a collector that does not answer neither makes `record` wait
//! nor holds more than the exporter's bounded queue; Settings' endpoint is
//! checked, and a change of the settings file reaches a running journal.
//! Last, a real MCP client's call through the gateway becomes a span.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::KeyValue as ProtoKeyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;
use switchboard_engine::journal::{
    Entry, Journal, JournalSettings, Kind, Outcome, TelemetrySettings, Tuning, Via,
};
use switchboard_engine::redact::Redactor;
use switchboard_engine::tool_trust::scan::{Finding, Severity};

const SECRET: &str = "otel-secret-value-5c2e91";
const T: Duration = Duration::from_secs(20);
/// 2023-11-14T22:13:20Z, in ms.
const START_MS: u64 = 1_700_000_000_000;

// ---- An OTLP/HTTP receiver.

/// Takes `POST /v1/traces`, keeps each body, and answers once its gate is
/// open (closed: the exporter's request hangs, as with a stuck collector).
struct Collector {
    url: String,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
    gate: tokio::sync::watch::Sender<bool>,
    rt: tokio::runtime::Runtime,
}

impl Collector {
    fn start(open: bool) -> Collector {
        use axum::{extract::State, http::header, routing::post, Router};
        type St = (Arc<Mutex<Vec<Vec<u8>>>>, tokio::sync::watch::Receiver<bool>);
        async fn traces(
            State((bodies, mut gate)): State<St>,
            body: bytes::Bytes,
        ) -> impl axum::response::IntoResponse {
            bodies.lock().unwrap().push(body.to_vec());
            let _ = gate.wait_for(|open| *open).await;
            // An empty ExportTraceServiceResponse: everything accepted.
            (
                [(header::CONTENT_TYPE, "application/x-protobuf")],
                Vec::<u8>::new(),
            )
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let bodies = Arc::new(Mutex::new(vec![]));
        let (gate, gate_rx) = tokio::sync::watch::channel(open);
        let app = Router::new()
            .route("/v1/traces", post(traces))
            .with_state((bodies.clone(), gate_rx));
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        rt.spawn(async move { axum::serve(listener, app).await });
        Collector {
            url: format!("http://{addr}/v1/traces"),
            bodies,
            gate,
            rt,
        }
    }

    fn open(&self) {
        let _ = self.gate.send(true);
    }

    fn requests(&self) -> Vec<ExportTraceServiceRequest> {
        self.bodies
            .lock()
            .unwrap()
            .iter()
            .map(|b| {
                ExportTraceServiceRequest::decode(b.as_slice()).expect("an OTLP protobuf body")
            })
            .collect()
    }

    fn spans(&self) -> Vec<Span> {
        self.requests()
            .into_iter()
            .flat_map(|r| r.resource_spans)
            .flat_map(|r| r.scope_spans)
            .flat_map(|s| s.spans)
            .collect()
    }

    /// Every byte received, to look for what must never be sent.
    fn raw(&self) -> Vec<u8> {
        self.bodies.lock().unwrap().concat()
    }

    /// Waits until the spans received satisfy `done` (or fails at the deadline).
    fn wait_for(&self, what: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + T;
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not received in {T:?}; got {:?}",
                spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn has(spans: &[Span], name: &str) -> bool {
    spans.iter().any(|s| s.name == name)
}

fn span<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span {name}"))
}

/// An attribute's value as text (arrays joined with `,`).
fn attr(s: &Span, key: &str) -> Option<String> {
    text_of(&s.attributes, key)
}

fn text_of(attributes: &[ProtoKeyValue], key: &str) -> Option<String> {
    let v = attributes.iter().find(|a| a.key == key)?.value.as_ref()?;
    Some(match v.value.as_ref()? {
        AnyValue::StringValue(s) => s.clone(),
        AnyValue::BoolValue(b) => b.to_string(),
        AnyValue::IntValue(i) => i.to_string(),
        AnyValue::DoubleValue(d) => d.to_string(),
        AnyValue::ArrayValue(a) => a
            .values
            .iter()
            .filter_map(|v| match v.value.as_ref()? {
                AnyValue::StringValue(s) => Some(s.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(","),
        other => format!("{other:?}"),
    })
}

// ---- Journals and calls.

fn tuning() -> Tuning {
    Tuning {
        export_every: Duration::from_millis(20),
        ..Tuning::default()
    }
}

fn journal(dir: &tempfile::TempDir, tuning: Tuning) -> Journal {
    let secrets = Redactor::default();
    secrets.set([SECRET.to_string()]);
    Journal::open_with(
        dir.path().join("journal.db"),
        JournalSettings::default(),
        Arc::new(secrets),
        tuning,
    )
}

fn on(url: &str, payloads: bool) -> TelemetrySettings {
    TelemetrySettings {
        enabled: true,
        endpoint: url.to_string(),
        include_payloads: payloads,
    }
}

fn tool(name: &str) -> Entry {
    let mut e = Entry::new(Via::Http, "github", Kind::Tool, name)
        .with_client("claude-code", Some("1.2.3".into()))
        .with_profile(Some("work".into()))
        .with_arguments(&json!({"title": "bug-report-7731", "token": SECRET}))
        .with_result(&json!({"content": [{"type": "text", "text": format!("made with {SECRET}")}]}))
        .with_duration(Duration::from_micros(12_500));
    e.time = START_MS;
    e
}

// ---- The spans.

#[test]
fn each_call_is_a_span_named_and_described_by_the_mcp_conventions() {
    let collector = Collector::start(true);
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir, tuning());
    j.set_telemetry(&on(&collector.url, false));

    j.record(tool("create_issue").with_findings(vec![Finding {
        rule: "instruction-override".into(),
        severity: Severity::High,
        message: "asks to ignore what came before".into(),
        at: "content[0].text".into(),
        visible: None,
    }]));
    let mut failed = Entry::new(Via::Stdio, "github", Kind::Tool, "delete_repo")
        .with_client("cursor", None)
        .with_duration(Duration::from_millis(3))
        .with_error(Outcome::ToolError, None, "the tool answered with an error");
    failed.time = START_MS + 1;
    j.record(failed);
    let mut read = Entry::new(Via::App, "files", Kind::Resource, "file:///notes.md")
        .with_duration(Duration::from_millis(30_000))
        .with_error(
            Outcome::Timeout,
            Some("timeout".into()),
            "no answer in 30 s",
        );
    read.time = START_MS + 2;
    j.record(read);
    let mut prompt = Entry::new(Via::Http, "github", Kind::Prompt, "summarize").with_error(
        Outcome::ProtocolError,
        Some("auth".into()),
        "401 from the server",
    );
    prompt.time = START_MS + 3;
    j.record(prompt);

    let spans = collector.wait_for("four spans", |s| s.len() >= 4);
    assert_eq!(spans.len(), 4, "one span per call");

    let call = span(&spans, "tools/call create_issue");
    assert_eq!(call.kind, 2, "the gateway's calls are SERVER spans");
    assert_eq!(call.start_time_unix_nano, START_MS * 1_000_000);
    assert_eq!(
        call.end_time_unix_nano - call.start_time_unix_nano,
        12_500_000,
        "the span lasts the call's duration"
    );
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", "create_issue"),
        ("network.transport", "tcp"),
        ("network.protocol.name", "http"),
        ("switchboard.server", "github"),
        ("switchboard.client.name", "claude-code"),
        ("switchboard.client.version", "1.2.3"),
        ("switchboard.profile", "work"),
        ("switchboard.outcome", "ok"),
        ("switchboard.findings.count", "1"),
        ("switchboard.findings.rules", "instruction-override"),
    ] {
        assert_eq!(attr(call, key).as_deref(), Some(value), "{key}");
    }
    assert_eq!(attr(call, "error.type"), None);
    let status = call.status.clone().unwrap_or_default();
    assert_eq!(
        status.code, 0,
        "a call that went well leaves the status unset"
    );
    assert_eq!(
        attr(call, "gen_ai.tool.call.arguments"),
        None,
        "no arguments unless turned on"
    );
    assert_eq!(
        attr(call, "gen_ai.tool.call.result"),
        None,
        "no result unless turned on"
    );

    let failed = span(&spans, "tools/call delete_repo");
    assert_eq!(attr(failed, "error.type").as_deref(), Some("tool_error"));
    assert_eq!(attr(failed, "network.transport").as_deref(), Some("pipe"));
    let status = failed.status.clone().unwrap();
    assert_eq!(
        (status.code, status.message.as_str()),
        (2, "the tool answered with an error")
    );

    // A resource's URI is an attribute, not part of the name.
    let read = span(&spans, "resources/read");
    assert_eq!(read.kind, 3, "the app's own calls are CLIENT spans");
    assert_eq!(
        attr(read, "mcp.resource.uri").as_deref(),
        Some("file:///notes.md")
    );
    assert_eq!(attr(read, "error.type").as_deref(), Some("timeout"));
    assert_eq!(attr(read, "network.transport"), None);
    assert_eq!(
        read.end_time_unix_nano - read.start_time_unix_nano,
        30_000_000_000
    );

    let prompt = span(&spans, "prompts/get summarize");
    assert_eq!(
        attr(prompt, "gen_ai.prompt.name").as_deref(),
        Some("summarize")
    );
    assert_eq!(attr(prompt, "error.type").as_deref(), Some("auth"));
    assert_eq!(prompt.status.clone().unwrap().code, 2);

    // Each call is a trace of its own.
    let traces: std::collections::HashSet<_> = spans.iter().map(|s| s.trace_id.clone()).collect();
    assert_eq!(traces.len(), 4);
    assert!(spans.iter().all(|s| s.parent_span_id.is_empty()));

    let request = &collector.requests()[0];
    let resource = request.resource_spans[0].resource.clone().unwrap();
    assert_eq!(
        text_of(&resource.attributes, "service.name").as_deref(),
        Some("switchboard")
    );
    assert_eq!(
        text_of(&resource.attributes, "service.version").as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    let raw = String::from_utf8_lossy(&collector.raw()).into_owned();
    assert!(!raw.contains(SECRET), "a secret value was sent");
    assert!(!raw.contains("bug-report-7731"), "an argument was sent");
    assert!(j.telemetry_stats().exporting);
    let deadline = Instant::now() + T;
    while j.telemetry_stats().exported < 4 {
        assert!(Instant::now() < deadline, "{:?}", j.telemetry_stats());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(j.telemetry_stats().failed, 0);
}

#[test]
fn arguments_and_results_are_sent_masked_only_when_turned_on() {
    let collector = Collector::start(true);
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir, tuning());
    j.set_telemetry(&on(&collector.url, true));
    j.record(tool("create_issue"));
    let spans = collector.wait_for("the call", |s| has(s, "tools/call create_issue"));
    let call = span(&spans, "tools/call create_issue");
    let args = attr(call, "gen_ai.tool.call.arguments").expect("arguments sent");
    let result = attr(call, "gen_ai.tool.call.result").expect("result sent");
    assert!(args.contains("\"title\":\"bug-report-7731\""), "{args}");
    assert!(
        !args.contains(SECRET) && !result.contains(SECRET),
        "{args} {result}"
    );
    assert!(result.contains("made with "), "{result}");
    let raw = String::from_utf8_lossy(&collector.raw()).into_owned();
    assert!(!raw.contains(SECRET), "a secret value was sent");
}

#[test]
fn nothing_is_sent_while_off_and_turning_it_off_stops_it() {
    let collector = Collector::start(true);
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir, tuning());
    // Off by default.
    assert!(!TelemetrySettings::default().enabled);
    j.record(tool("before"));
    j.flush();
    j.set_telemetry(&on(&collector.url, false));
    j.record(tool("during"));
    collector.wait_for("the call while on", |s| has(s, "tools/call during"));
    j.set_telemetry(&TelemetrySettings {
        enabled: false,
        ..on(&collector.url, false)
    });
    j.record(tool("after"));
    j.flush();
    assert!(!j.telemetry_stats().exporting);
    // Turned on again: the next call arrives, the one made while off never.
    j.set_telemetry(&on(&collector.url, false));
    j.record(tool("again"));
    let spans = collector.wait_for("the call once on again", |s| has(s, "tools/call again"));
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["tools/call during", "tools/call again"]);
    // The journal itself recorded all four (written within its linger).
    j.flush();
    assert_eq!(j.stats().written, 4);
}

#[test]
fn a_stuck_collector_never_makes_record_wait_and_holds_a_bounded_queue() {
    let collector = Collector::start(false);
    let dir = tempfile::tempdir().unwrap();
    let queue = 64;
    let j = journal(
        &dir,
        Tuning {
            export_queue: queue,
            export_timeout: Duration::from_secs(60),
            ..tuning()
        },
    );
    j.set_telemetry(&on(&collector.url, true));
    // The first request is under way and hangs.
    j.record(tool("first"));
    collector.wait_for("the first request", |s| !s.is_empty());
    let calls = 5_000;
    let mut slowest = Duration::ZERO;
    let started = Instant::now();
    for i in 0..calls {
        let e = tool(&format!("t{i}"));
        let t = Instant::now();
        j.record(e);
        slowest = slowest.max(t.elapsed());
    }
    let recording = started.elapsed();
    j.flush();
    let flushed = started.elapsed();
    assert_eq!(j.stats().written, calls + 1, "the journal kept every call");
    assert_eq!(j.stats().dropped, 0);
    assert!(
        slowest < Duration::from_millis(100),
        "one record took {slowest:?}"
    );
    assert!(
        flushed < Duration::from_secs(10),
        "the writer waited on the collector: {recording:?} to record, {flushed:?} to write"
    );
    // Once the collector answers, what was held is sent: at most the
    // queue, one batch in flight and the first call; the rest was dropped.
    collector.open();
    let deadline = Instant::now() + T;
    let mut last = 0;
    loop {
        let n = j.telemetry_stats().exported;
        if n > 1 && n == last {
            break;
        }
        last = n;
        assert!(Instant::now() < deadline, "{:?}", j.telemetry_stats());
        std::thread::sleep(Duration::from_millis(200));
    }
    let sent = collector.spans().len();
    assert!(
        sent <= 2 * queue + 1,
        "{sent} spans were held for a collector that did not answer (queue {queue})"
    );
}

#[test]
fn an_unusable_endpoint_is_refused_by_name() {
    for bad in [
        "localhost:4318",
        "ftp://collector/v1/traces",
        "not a url",
        "http://",
    ] {
        let s = on(bad, false);
        let why = s.check().expect_err(bad);
        assert!(
            why.starts_with("telemetry.endpoint:") && why.contains(bad),
            "{why}"
        );
    }
    assert!(on("https://otel.example.com:4318/v1/traces", false)
        .check()
        .is_ok());
    assert!(TelemetrySettings::default().check().is_ok());

    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir, tuning());
    j.set_telemetry(&on("ftp://collector", false));
    j.record(tool("x"));
    j.flush();
    let stats = j.telemetry_stats();
    assert!(!stats.exporting, "{stats:?}");
    assert!(
        stats
            .problem
            .as_deref()
            .is_some_and(|p| p.contains("telemetry.endpoint")),
        "{stats:?}"
    );
    assert_eq!(j.stats().written, 1, "calls are still recorded");
}

#[test]
fn the_settings_file_is_followed_and_kept_in_camel_case() {
    let collector = Collector::start(true);
    let home = switchboard_tests::TempHome::empty();
    let host = home.host();
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir, tuning());
    // The default is not written into the file.
    let s = switchboard_engine::settings::Settings::update(&host, |_| {}).unwrap();
    let text = serde_json::to_value(&s).unwrap();
    assert!(text.get("telemetry").is_none(), "{text}");
    let _follow = collector.rt.enter();
    j.follow_settings(&host);
    j.record(tool("off"));
    j.flush();
    switchboard_engine::settings::Settings::update(&host, |s| {
        s.telemetry = on(&collector.url, false);
    })
    .unwrap();
    let written =
        std::fs::read_to_string(switchboard_engine::settings::settings_path(&host)).unwrap();
    assert!(
        written.contains("\"telemetry\"") && written.contains("\"includePayloads\": false"),
        "{written}"
    );
    switchboard_engine::settings::nudge(&host);
    // The change arrives within moments; calls from then on are exported.
    let deadline = Instant::now() + T;
    while !j.telemetry_stats().exporting {
        assert!(
            Instant::now() < deadline,
            "the settings change did not arrive"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    j.record(tool("on"));
    let spans = collector.wait_for("the call after the change", |s| has(s, "tools/call on"));
    assert!(!has(&spans, "tools/call off"));
}

// ---- Through the gateway.

#[test]
fn a_client_call_through_the_gateway_becomes_a_span() {
    let collector = Collector::start(true);
    let fixture = switchboard_tests::fixture_server_path();
    let home = switchboard_tests::TempHome::with_servers(json!({
        "mail": { "command": fixture, "args": ["--name", "mail", "--tool", "send_email"],
                  "env": { "MAIL_TOKEN": SECRET } }
    }));
    let host = home.host();
    switchboard_engine::settings::Settings::update(&host, |s| {
        s.telemetry = on(&collector.url, true);
    })
    .unwrap();
    collector.rt.block_on(async {
        use rmcp::model::CallToolRequestParams;
        let engine = switchboard_tests::in_process::engine(&host);
        let report = engine.start().await;
        assert_eq!(report.connected.len(), 1, "{report:?}");
        // As the app and `switchboard serve` open it: the settings' export on.
        let journal = engine.manager().open_journal(&host, &engine.settings());
        let gateway = switchboard_tests::in_process::gateway(&engine, &host);
        let client = switchboard_tests::in_process::client(gateway.session()).await;
        let args = json!({"text": format!("to ada@example.com, key {SECRET}")});
        let r = tokio::time::timeout(
            T,
            client.call_tool(
                CallToolRequestParams::new("mcp_mail_send_email")
                    .with_arguments(args.as_object().unwrap().clone()),
            ),
        )
        .await
        .expect("answered in time")
        .unwrap();
        assert_ne!(r.is_error, Some(true), "{r:?}");
        client.cancel().await.unwrap();
        engine.manager().shutdown().await;
        drop(journal);
    });
    let spans = collector.wait_for("the gateway's call", |s| has(s, "tools/call send_email"));
    let call = span(&spans, "tools/call send_email");
    assert_eq!(call.kind, 2);
    assert_eq!(attr(call, "switchboard.server").as_deref(), Some("mail"));
    assert_eq!(
        attr(call, "gen_ai.tool.name").as_deref(),
        Some("send_email")
    );
    assert_eq!(attr(call, "network.transport").as_deref(), Some("pipe"));
    assert!(attr(call, "switchboard.client.name").is_some_and(|c| !c.is_empty()));
    let args = attr(call, "gen_ai.tool.call.arguments").unwrap();
    assert!(args.contains("ada@example.com"), "{args}");
    assert!(call.end_time_unix_nano > call.start_time_unix_nano);
    let raw = String::from_utf8_lossy(&collector.raw()).into_owned();
    assert!(!raw.contains(SECRET), "a secret value was sent");
}
