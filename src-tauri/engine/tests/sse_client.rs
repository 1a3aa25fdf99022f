//! Legacy HTTP+SSE client transport (`switchboard_engine::sse_client`) against
//! the real `fixture-server` (`--sse`, `--http`, `--sse --with-streamable`) and
//! against tiny raw-TCP HTTP servers for error paths (401, cross-origin
//! endpoint, no endpoint, reconnect with Last-Event-ID).
//!
//! The fixture binary must be built first. `cargo test --workspace` builds it
//! (switchboard-tests is a default member); otherwise run
//! `cargo build -p switchboard-tests --bin fixture-server`.

use std::{
    future::Future,
    pin::Pin,
    sync::Arc,
    time::{Duration, Instant},
};

use indexmap::IndexMap;
use rmcp::{
    model::{
        CallToolRequestParams, ClientCapabilities, ClientJsonRpcMessage, ClientNotification,
        Implementation, InitializeRequestParams, InitializedNotification, ProtocolVersion,
        ServerJsonRpcMessage,
    },
    service::{NotificationContext, RunningService},
    transport::Transport,
    ClientHandler, RoleClient, ServiceExt,
};
use serde_json::json;
use switchboard_engine::sse_client::{
    connect_with_fallback, connect_with_fallback_config, FallbackTransport, HttpTransportKind,
    SseClientConfig, SseClientTransport, SseError,
};
use switchboard_tests::{
    spawn_http_fixture, spawn_listening, spawn_sse_fixture, try_fixture_server_path, FIXED_TOOLS,
};
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
    net::{TcpListener, TcpStream},
    sync::mpsc,
};

const T: Duration = Duration::from_secs(20);

fn require_fixture() {
    if try_fixture_server_path().is_none() {
        panic!(
            "fixture-server binary not found: run `cargo build -p switchboard-tests --bin fixture-server` \
             (a workspace-wide `cargo test` builds it) or set SWITCHBOARD_FIXTURE_SERVER"
        );
    }
}

fn no_headers() -> IndexMap<String, String> {
    IndexMap::new()
}

/// Client handler that asks for 2024-11-05 and records notifications.
#[derive(Clone)]
struct Legacy(Option<mpsc::UnboundedSender<String>>);

#[allow(deprecated)]
impl ClientHandler for Legacy {
    fn get_info(&self) -> InitializeRequestParams {
        InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("sse-test", "0"),
        )
        .with_protocol_version(ProtocolVersion::V_2024_11_05)
    }
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(tx) = &self.0 {
            let _ = tx.send("tools changed".into());
        }
    }
}

fn text(r: &rmcp::model::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

async fn echo<S: rmcp::Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    s: &str,
) -> String {
    let args = json!({ "text": s }).as_object().unwrap().clone();
    let r = tokio::time::timeout(
        T,
        client.call_tool(CallToolRequestParams::new("echo").with_arguments(args)),
    )
    .await
    .expect("call timed out")
    .expect("call failed");
    text(&r)
}

// ---------------------------------------------------------------------------
// Against the fixture server.

#[tokio::test]
async fn sse_initialize_list_call_2024_11_05() {
    require_fixture();
    let fx = spawn_sse_fixture::<&str>(&[]).await.unwrap();
    let t = SseClientTransport::connect(&fx.url, no_headers(), reqwest::Client::new())
        .await
        .unwrap();
    assert_eq!(t.endpoint().path(), "/message");
    assert!(
        t.endpoint().query().unwrap().starts_with("sessionId="),
        "{}",
        t.endpoint()
    );
    let client = tokio::time::timeout(T, Legacy(None).serve(t))
        .await
        .unwrap()
        .unwrap();
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2024_11_05);
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(&names[..FIXED_TOOLS.len()], FIXED_TOOLS);
    assert_eq!(echo(&client, "hello over sse").await, "hello over sse");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn sse_default_client_serve_works() {
    // `().serve(t)` with rmcp's default client info; records what it negotiates.
    require_fixture();
    let fx = spawn_sse_fixture::<&str>(&[]).await.unwrap();
    let t = SseClientTransport::connect(&fx.url, no_headers(), reqwest::Client::new())
        .await
        .unwrap();
    let client = tokio::time::timeout(T, ().serve(t)).await.unwrap().unwrap();
    let v = client.peer_info().unwrap().protocol_version.clone();
    eprintln!("default rmcp client over legacy SSE negotiated {v}");
    assert_eq!(echo(&client, "x").await, "x");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn sse_server_notification_arrives() {
    require_fixture();
    let fx = spawn_sse_fixture::<&str>(&[]).await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let t = SseClientTransport::connect(&fx.url, no_headers(), reqwest::Client::new())
        .await
        .unwrap();
    let client = tokio::time::timeout(T, Legacy(Some(tx)).serve(t))
        .await
        .unwrap()
        .unwrap();
    let before = client.list_all_tools().await.unwrap().len();
    client
        .call_tool(CallToolRequestParams::new("change_tools"))
        .await
        .unwrap();
    let n = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("no notification in 5 s");
    assert_eq!(n.as_deref(), Some("tools changed"));
    let after = client.list_all_tools().await.unwrap();
    assert_eq!(after.len(), before + 1);
    assert!(after.iter().any(|t| t.name == "dynamic_0"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn killed_server_closes_transport() {
    require_fixture();
    let fx = spawn_sse_fixture::<&str>(&[]).await.unwrap();
    let t = SseClientTransport::connect(&fx.url, no_headers(), reqwest::Client::new())
        .await
        .unwrap();
    let client = tokio::time::timeout(T, Legacy(None).serve(t))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(echo(&client, "alive").await, "alive");
    fx.kill().await.unwrap();
    let start = Instant::now();
    // Default policy: 3 reconnects 1 s apart (all refused), then closed.
    let quit = tokio::time::timeout(Duration::from_secs(6), client.waiting())
        .await
        .expect("transport not seen closed within 6 s");
    eprintln!("closed {:?} after kill: {quit:?}", start.elapsed());
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn killed_server_closes_fast_with_short_retry() {
    require_fixture();
    let fx = spawn_sse_fixture::<&str>(&[]).await.unwrap();
    let config = SseClientConfig::default().default_retry(Duration::from_millis(100));
    let mut t = SseClientTransport::connect_with_config(
        &fx.url,
        no_headers(),
        reqwest::Client::new(),
        config,
    )
    .await
    .unwrap();
    fx.kill().await.unwrap();
    let start = Instant::now();
    let got = tokio::time::timeout(Duration::from_secs(3), t.receive())
        .await
        .expect("receive() did not end");
    assert!(got.is_none());
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    // Sending on a closed transport fails fast.
    let err = t.send(initialized()).await.unwrap_err();
    assert!(matches!(err, SseError::Closed), "{err}");
}

#[tokio::test]
async fn fallback_uses_sse_for_sse_only_server() {
    require_fixture();
    let fx = spawn_sse_fixture::<&str>(&[]).await.unwrap();
    let t = connect_with_fallback(&fx.url, no_headers(), reqwest::Client::new())
        .await
        .unwrap();
    assert_eq!(t.kind(), HttpTransportKind::Sse);
    assert!(matches!(t, FallbackTransport::Sse(_)));
    let client = tokio::time::timeout(T, Legacy(None).serve(t))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(echo(&client, "via sse").await, "via sse");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn fallback_uses_streamable_for_http_server() {
    require_fixture();
    let fx = spawn_http_fixture::<&str>(&[]).await.unwrap();
    let t = connect_with_fallback(&fx.url, no_headers(), reqwest::Client::new())
        .await
        .unwrap();
    assert_eq!(t.kind(), HttpTransportKind::StreamableHttp);
    let client = tokio::time::timeout(T, ().serve(t)).await.unwrap().unwrap();
    assert_eq!(echo(&client, "via streamable").await, "via streamable");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn fallback_on_server_with_both() {
    require_fixture();
    let args = ["--sse", "--with-streamable", "--http", "127.0.0.1:0"]
        .map(String::from)
        .to_vec();
    let fx = spawn_listening(args).await.unwrap();
    // The Streamable HTTP URL: streamable is preferred.
    let mcp = format!("{}/mcp", fx.base_url());
    let t = connect_with_fallback(&mcp, no_headers(), reqwest::Client::new())
        .await
        .unwrap();
    assert_eq!(t.kind(), HttpTransportKind::StreamableHttp);
    let client = tokio::time::timeout(T, ().serve(t)).await.unwrap().unwrap();
    assert_eq!(echo(&client, "a").await, "a");
    client.cancel().await.unwrap();
    // The /sse URL: POST /sse is 405 there, so it falls back to legacy SSE.
    let t = connect_with_fallback(&fx.url, no_headers(), reqwest::Client::new())
        .await
        .unwrap();
    assert_eq!(t.kind(), HttpTransportKind::Sse);
    let client = tokio::time::timeout(T, Legacy(None).serve(t))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(echo(&client, "b").await, "b");
    client.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------
// Raw HTTP servers for the error paths.

#[derive(Debug, Clone)]
struct Req {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Req {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Handler =
    Arc<dyn Fn(Req, TcpStream, usize) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// One request per connection (responses say `Connection: close`). Returns the
/// base URL and a channel of every request seen.
async fn raw_server(handler: Handler) -> (String, mpsc::UnboundedReceiver<Req>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut n = 0;
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let handler = handler.clone();
            let tx = tx.clone();
            n += 1;
            let conn = n;
            tokio::spawn(async move {
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                    return;
                }
                let mut parts = line.split_whitespace();
                let method = parts.next().unwrap_or("").to_string();
                let path = parts.next().unwrap_or("").to_string();
                let mut headers = Vec::new();
                loop {
                    let mut l = String::new();
                    if reader.read_line(&mut l).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let l = l.trim_end();
                    if l.is_empty() {
                        break;
                    }
                    if let Some((k, v)) = l.split_once(':') {
                        headers.push((k.trim().to_string(), v.trim().to_string()));
                    }
                }
                let len: usize = headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0; len];
                reader.read_exact(&mut body).await.unwrap();
                let req = Req {
                    method,
                    path,
                    headers,
                    body: String::from_utf8_lossy(&body).into_owned(),
                };
                let _ = tx.send(req.clone());
                handler(req, reader.into_inner(), conn).await;
            });
        }
    });
    (base, rx)
}

async fn respond(mut s: TcpStream, status: &str, extra: &str, body: &str) {
    let r = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    );
    let _ = s.write_all(r.as_bytes()).await;
    let _ = s.shutdown().await;
}

async fn start_sse(s: &mut TcpStream, events: &str) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    let _ = s.write_all(head.as_bytes()).await;
    let _ = s.write_all(events.as_bytes()).await;
    let _ = s.flush().await;
}

fn initialized() -> ClientJsonRpcMessage {
    ClientJsonRpcMessage::notification(ClientNotification::InitializedNotification(
        InitializedNotification {
            method: Default::default(),
            extensions: Default::default(),
        },
    ))
}

/// GET /sse → endpoint `/msg`, kept open; POST → `post_status`.
fn endpoint_then_post(post_status: &'static str) -> Handler {
    Arc::new(move |req, mut s, _| {
        Box::pin(async move {
            if req.method == "GET" {
                start_sse(&mut s, "event: endpoint\ndata: /msg?sessionId=1\n\n").await;
                tokio::time::sleep(Duration::from_secs(30)).await;
            } else {
                respond(
                    s,
                    post_status,
                    "WWW-Authenticate: Bearer realm=\"x\"\r\n",
                    "go away",
                )
                .await;
            }
        })
    })
}

#[tokio::test]
async fn post_401_is_typed_http_error() {
    let (base, mut reqs) = raw_server(endpoint_then_post("401 Unauthorized")).await;
    let mut t = SseClientTransport::connect(
        &format!("{base}/sse"),
        [("X-Api-Key", "k1")],
        reqwest::Client::new(),
    )
    .await
    .unwrap();
    assert_eq!(t.endpoint().as_str(), format!("{base}/msg?sessionId=1"));
    let get = reqs.recv().await.unwrap();
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("x-api-key"), Some("k1"));

    let err = t.send(initialized()).await.unwrap_err();
    match &err {
        SseError::Http {
            status,
            www_authenticate,
            body,
            ..
        } => {
            assert_eq!(*status, 401);
            assert_eq!(www_authenticate.as_deref(), Some("Bearer realm=\"x\""));
            assert_eq!(body, "go away");
        }
        other => panic!("expected SseError::Http, got {other:?}"),
    }
    assert!(
        err.to_string().starts_with("HTTP 401 Unauthorized"),
        "{err}"
    );
    assert!(err.is_auth());
    let post = reqs.recv().await.unwrap();
    assert_eq!(
        (post.method.as_str(), post.path.as_str()),
        ("POST", "/msg?sessionId=1")
    );
    assert_eq!(post.header("x-api-key"), Some("k1"));
    assert_eq!(post.header("content-type"), Some("application/json"));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&post.body).unwrap()["method"],
        "notifications/initialized"
    );

    // Through rmcp's serve the status survives in the error text.
    let t =
        SseClientTransport::connect(&format!("{base}/sse"), no_headers(), reqwest::Client::new())
            .await
            .unwrap();
    let e = ().serve(t).await.unwrap_err();
    assert!(e.to_string().contains("HTTP 401 Unauthorized"), "{e}");
}

#[tokio::test]
async fn post_404_unknown_session_is_http_error() {
    let (base, _reqs) = raw_server(endpoint_then_post("404 Not Found")).await;
    let mut t =
        SseClientTransport::connect(&format!("{base}/sse"), no_headers(), reqwest::Client::new())
            .await
            .unwrap();
    let err = t.send(initialized()).await.unwrap_err();
    assert_eq!(err.http_status(), Some(404));
    assert!(!err.is_auth());
    assert!(err.to_string().starts_with("HTTP 404 Not Found"), "{err}");
}

#[tokio::test]
async fn get_401_fails_connect() {
    let h: Handler = Arc::new(|_, s, _| Box::pin(respond(s, "401 Unauthorized", "", "")));
    let (base, _) = raw_server(h).await;
    let err =
        SseClientTransport::connect(&format!("{base}/sse"), no_headers(), reqwest::Client::new())
            .await
            .unwrap_err();
    assert!(matches!(err, SseError::Http { status: 401, .. }), "{err:?}");
}

#[tokio::test]
async fn non_event_stream_response_is_rejected() {
    let h: Handler = Arc::new(|_, s, _| {
        Box::pin(respond(
            s,
            "200 OK",
            "Content-Type: text/html\r\n",
            "<html>",
        ))
    });
    let (base, _) = raw_server(h).await;
    let err =
        SseClientTransport::connect(&format!("{base}/sse"), no_headers(), reqwest::Client::new())
            .await
            .unwrap_err();
    assert!(
        matches!(err, SseError::UnexpectedContentType(Some(ref c)) if c == "text/html"),
        "{err:?}"
    );
}

#[tokio::test]
async fn cross_origin_endpoint_is_rejected_absolute_same_origin_accepted() {
    let h: Handler = Arc::new(|_, mut s, _| {
        Box::pin(async move {
            start_sse(
                &mut s,
                "event: endpoint\ndata: http://evil.example:8080/steal\n\n",
            )
            .await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        })
    });
    let (base, _) = raw_server(h).await;
    let err =
        SseClientTransport::connect(&format!("{base}/sse"), no_headers(), reqwest::Client::new())
            .await
            .unwrap_err();
    assert!(
        matches!(err, SseError::CrossOriginEndpoint { .. }),
        "{err:?}"
    );

    let h: Handler = Arc::new(|req, mut s, _| {
        Box::pin(async move {
            // Absolute endpoint on our own origin (Host header names it).
            let host = req.header("host").unwrap().to_string();
            start_sse(
                &mut s,
                &format!("event: endpoint\ndata: http://{host}/abs/post\n\n"),
            )
            .await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        })
    });
    let (base, _) = raw_server(h).await;
    let t = SseClientTransport::connect(
        &format!("{base}/deep/sse"),
        no_headers(),
        reqwest::Client::new(),
    )
    .await
    .unwrap();
    assert_eq!(t.endpoint().as_str(), format!("{base}/abs/post"));
}

#[tokio::test]
async fn relative_endpoint_resolves_against_sse_url() {
    let h: Handler = Arc::new(|_, mut s, _| {
        Box::pin(async move {
            start_sse(
                &mut s,
                ": comment\n\nevent: endpoint\ndata: messages?x=1\n\n",
            )
            .await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        })
    });
    let (base, _) = raw_server(h).await;
    let t = SseClientTransport::connect(
        &format!("{base}/mcp/sse"),
        no_headers(),
        reqwest::Client::new(),
    )
    .await
    .unwrap();
    assert_eq!(t.endpoint().as_str(), format!("{base}/mcp/messages?x=1"));
}

#[tokio::test]
async fn endpoint_timeout_is_configurable() {
    let h: Handler = Arc::new(|_, mut s, _| {
        Box::pin(async move {
            start_sse(&mut s, ": waiting\n\n").await;
            tokio::time::sleep(Duration::from_secs(10)).await;
        })
    });
    let (base, _) = raw_server(h).await;
    let start = Instant::now();
    let config = SseClientConfig::default().endpoint_timeout(Duration::from_millis(300));
    let err = SseClientTransport::connect_with_config(
        &format!("{base}/sse"),
        no_headers(),
        reqwest::Client::new(),
        config,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, SseError::EndpointTimeout(d) if d == Duration::from_millis(300)),
        "{err:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn reconnects_with_last_event_id_and_new_endpoint_then_closes() {
    let notif = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    let h: Handler = Arc::new(move |req, mut s, _| {
        Box::pin(async move {
            if req.method == "POST" {
                return respond(s, "202 Accepted", "", "").await;
            }
            match req.header("last-event-id") {
                // First stream: retry 50 ms, id 7, endpoint /m1, one message, then drop.
                None => {
                    start_sse(&mut s, &format!("retry: 50\nevent: endpoint\ndata: /m1\n\nid: 7\nevent: message\ndata: {notif}\n\n")).await;
                }
                // Second stream (resumed): new endpoint and a message, held open for a while, then drop.
                Some("7") => {
                    start_sse(
                        &mut s,
                        &format!("event: endpoint\ndata: /m2\n\nid: 8\ndata: {notif}\n\n"),
                    )
                    .await;
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                // Later attempts: refuse.
                Some(_) => respond(s, "503 Service Unavailable", "", "").await,
            }
        })
    });
    let (base, mut reqs) = raw_server(h).await;
    let mut t =
        SseClientTransport::connect(&format!("{base}/sse"), no_headers(), reqwest::Client::new())
            .await
            .unwrap();
    assert!(t.endpoint().as_str().ends_with("/m1"));
    for _ in 0..2 {
        let m = tokio::time::timeout(Duration::from_secs(3), t.receive())
            .await
            .unwrap()
            .expect("message");
        assert!(matches!(m, ServerJsonRpcMessage::Notification(_)), "{m:?}");
    }
    assert!(t.endpoint().as_str().ends_with("/m2"), "{}", t.endpoint());
    t.send(initialized()).await.unwrap();

    // The second stream ends; 3 refused reconnects (50 ms apart) → closed.
    let start = Instant::now();
    let end = tokio::time::timeout(Duration::from_secs(3), t.receive())
        .await
        .expect("not closed");
    assert!(end.is_none());
    eprintln!(
        "closed {:?} after the second stream's drop window began",
        start.elapsed()
    );

    let mut seen = Vec::new();
    while let Ok(r) = reqs.try_recv() {
        seen.push((
            r.method.clone(),
            r.path.clone(),
            r.header("last-event-id").map(str::to_owned),
        ));
    }
    let gets: Vec<_> = seen.iter().filter(|(m, ..)| m == "GET").collect();
    assert_eq!(gets.len(), 1 + 1 + 3, "{seen:?}");
    assert_eq!(gets[1].2.as_deref(), Some("7"));
    assert_eq!(gets[2].2.as_deref(), Some("8"));
    assert!(
        seen.iter().any(|(m, p, _)| m == "POST" && p == "/m2"),
        "{seen:?}"
    );
}

#[tokio::test]
async fn close_stops_the_stream_task() {
    let h: Handler = Arc::new(|_, mut s, _| {
        Box::pin(async move {
            start_sse(&mut s, "event: endpoint\ndata: /m\n\n").await;
            // Detect the client hanging up: reading returns 0 at EOF.
            let mut buf = [0u8; 16];
            let _ = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf)).await;
        })
    });
    let (base, mut reqs) = raw_server(h).await;
    let mut t =
        SseClientTransport::connect(&format!("{base}/sse"), no_headers(), reqwest::Client::new())
            .await
            .unwrap();
    tokio::time::timeout(Duration::from_secs(2), t.close())
        .await
        .expect("close hung")
        .unwrap();
    assert!(t.receive().await.is_none());
    tokio::time::sleep(Duration::from_millis(300)).await;
    // No reconnect GETs after close.
    let _first = reqs.recv().await.unwrap();
    assert!(reqs.try_recv().is_err());
}

#[tokio::test]
async fn fallback_does_not_fall_back_on_auth() {
    let h: Handler = Arc::new(|_, s, _| {
        Box::pin(respond(
            s,
            "401 Unauthorized",
            "WWW-Authenticate: Bearer\r\n",
            "",
        ))
    });
    let (base, mut reqs) = raw_server(h).await;
    let err = connect_with_fallback(
        &format!("{base}/sse"),
        [("Authorization", "Bearer t0k")],
        reqwest::Client::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, SseError::Http { status: 401, .. }), "{err:?}");
    assert!(err.is_auth());
    let probe = reqs.recv().await.unwrap();
    assert_eq!(probe.method, "POST");
    assert_eq!(probe.header("authorization"), Some("Bearer t0k"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        reqs.try_recv().is_err(),
        "must not try the legacy GET after 401"
    );
}

#[tokio::test]
async fn fallback_sse_401_surfaces_through_fallback_error() {
    // POST → 404 (not streamable), GET → 403: error names the 403.
    let h: Handler = Arc::new(|req, s, _| {
        Box::pin(async move {
            if req.method == "POST" {
                respond(s, "404 Not Found", "", "").await
            } else {
                respond(s, "403 Forbidden", "", "").await
            }
        })
    });
    let (base, _) = raw_server(h).await;
    let config = SseClientConfig::default().probe_timeout(Duration::from_secs(5));
    let err = connect_with_fallback_config(
        &format!("{base}/sse"),
        no_headers(),
        reqwest::Client::new(),
        config,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, SseError::Fallback { .. }), "{err:?}");
    assert_eq!(err.http_status(), Some(403));
    assert!(err.is_auth());
    assert!(err.to_string().contains("HTTP 403 Forbidden"), "{err}");
}
