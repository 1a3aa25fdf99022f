//! The OpenTelemetry export as Settings → Activity changes it
//! (`telemetry` in settings.json): turned on through the engine, a recorded
//! call reaches a local OTLP/HTTP receiver as a span at once; a hand edit of
//! the file turning it off is followed (calls from then on are not sent);
//! an endpoint that is not an http(s) URL is refused, naming the field, and
//! nothing is written.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde_json::{json, Value};
use switchboard_engine::engine::Engine;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::journal::{Entry, Kind, Via};
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::settings::{settings_path, TelemetrySettings};

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn host(home: &std::path::Path) -> Host {
    Host {
        os: Os::Linux,
        home: home.to_path_buf(),
        vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
        system_root: home.join("sys"),
    }
}

/// An OTLP/HTTP receiver: keeps the body of each `POST /v1/traces` and
/// accepts it.
async fn receiver() -> anyhow::Result<(String, Arc<Mutex<Vec<Vec<u8>>>>)> {
    use axum::{extract::State, http::header, routing::post, Router};
    type Bodies = Arc<Mutex<Vec<Vec<u8>>>>;
    async fn traces(
        State(bodies): State<Bodies>,
        body: bytes::Bytes,
    ) -> impl axum::response::IntoResponse {
        bodies.lock().unwrap().push(body.to_vec());
        // An empty ExportTraceServiceResponse: everything accepted.
        (
            [(header::CONTENT_TYPE, "application/x-protobuf")],
            Vec::<u8>::new(),
        )
    }
    let bodies: Bodies = Arc::default();
    let app = Router::new()
        .route("/v1/traces", post(traces))
        .with_state(bodies.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr: SocketAddr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((format!("http://{addr}/v1/traces"), bodies))
}

/// The names of every span received.
fn span_names(bodies: &Mutex<Vec<Vec<u8>>>) -> Vec<String> {
    bodies
        .lock()
        .unwrap()
        .iter()
        .map(|b| ExportTraceServiceRequest::decode(b.as_slice()).expect("an OTLP protobuf body"))
        .flat_map(|r| r.resource_spans)
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .map(|s| s.name)
        .collect()
}

fn call(tool: &str) -> Entry {
    Entry::new(Via::App, "alpha", Kind::Tool, tool).with_client("switchboard", None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_is_checked_saved_applied_at_once_and_follows_a_hand_edit() -> anyhow::Result<()> {
    let (url, bodies) = receiver().await?;
    let dir = tempfile::tempdir()?;
    let host = host(dir.path());
    let settings = settings_path(&host);
    std::fs::create_dir_all(settings.parent().unwrap())?;
    // Keys the export's settings must leave alone.
    std::fs::write(
        &settings,
        r#"{ "keepInTray": false, "journal": { "keepDays": 9, "keepMb": 90 }, "somethingNewer": [1, 2] }"#,
    )?;
    let opts = ManagerOptions {
        cache_path: None,
        home: host.home.clone(),
        ..ManagerOptions::default()
    };
    let engine = Arc::new(Engine::new(host.clone(), opts, vec![]));
    let journal = engine.manager().open_journal(&host, &engine.settings());
    assert!(!journal.telemetry_stats().exporting, "off unless turned on");

    // Not an http(s) URL: refused, naming the field; nothing is written.
    let before = std::fs::read(&settings)?;
    for bad in ["localhost:4318/v1/traces", "ftp://collector/v1/traces", ""] {
        let err = engine
            .set_telemetry(TelemetrySettings {
                enabled: true,
                endpoint: bad.into(),
                include_payloads: false,
            })
            .await
            .unwrap_err();
        assert!(
            err.to_string().starts_with("telemetry.endpoint: ")
                && err.to_string().contains("Nothing was saved"),
            "{bad:?}: {err}"
        );
        assert_eq!(
            std::fs::read(&settings)?,
            before,
            "{bad:?}: nothing written"
        );
    }
    assert!(!journal.telemetry_stats().exporting);

    // Turned on from Settings: in the file exactly, the other keys kept,
    // and the next call is sent at once (no restart).
    let on = TelemetrySettings {
        enabled: true,
        endpoint: url.clone(),
        include_payloads: false,
    };
    engine.set_telemetry(on.clone()).await?;
    let saved: Value = serde_json::from_slice(&std::fs::read(&settings)?)?;
    assert_eq!(
        saved["telemetry"],
        json!({ "enabled": true, "endpoint": url, "includePayloads": false }),
        "{saved}"
    );
    assert_eq!(saved["keepInTray"], json!(false), "{saved}");
    assert_eq!(
        saved["journal"],
        json!({ "keepDays": 9, "keepMb": 90 }),
        "{saved}"
    );
    assert_eq!(saved["somethingNewer"], json!([1, 2]), "{saved}");
    assert_eq!(engine.settings().telemetry, on);
    until("the export is on", || journal.telemetry_stats().exporting).await;
    journal.record(call("first"));
    until("the first call arrives as a span", || {
        span_names(&bodies).contains(&"tools/call first".to_string())
    })
    .await;
    until("the span is counted as sent", || {
        journal.telemetry_stats().exported >= 1
    })
    .await;

    // Turned off by hand in the file, with the watcher running: followed.
    let _events = engine.watch().await?;
    let mut edited = saved.clone();
    edited["telemetry"]["enabled"] = json!(false);
    std::fs::write(&settings, serde_json::to_string_pretty(&edited)?)?;
    until("the hand edit turns the export off", || {
        !journal.telemetry_stats().exporting
    })
    .await;
    assert!(!engine.settings().telemetry.enabled);
    journal.record(call("while_off"));
    journal.flush();

    // On again from Settings: the call made while off was never sent (the
    // journal hands calls to the export in order, so this one arriving
    // means the earlier one would have too).
    engine.set_telemetry(on).await?;
    journal.record(call("on_again"));
    until("the call made after turning it on again arrives", || {
        span_names(&bodies).contains(&"tools/call on_again".to_string())
    })
    .await;
    let names = span_names(&bodies);
    assert!(
        !names.contains(&"tools/call while_off".to_string()),
        "a call made while the export was off was sent: {names:?}"
    );
    engine.manager().shutdown().await;
    Ok(())
}
