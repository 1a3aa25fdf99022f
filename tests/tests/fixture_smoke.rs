//! Smoke tests: rmcp's own client against the fixture server over stdio,
//! Streamable HTTP, and (by hand) the legacy HTTP+SSE transport.

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use rmcp::{
    model::{CallToolRequestParams, ClientRequest, PaginatedRequestParams, ServerResult},
    service::{PeerRequestOptions, RunningService},
    transport::{StreamableHttpClientTransport, TokioChildProcess},
    RoleClient, ServiceExt,
};
use serde_json::{json, Value};
use switchboard_tests::{spawn_http_fixture, spawn_sse_fixture, FIXED_TOOLS};
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
    process::Command,
};

const BIN: &str = env!("CARGO_BIN_EXE_fixture-server");
const T: Duration = Duration::from_secs(20);

fn cmd(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args);
    c
}

async fn connect_stdio(args: &[&str]) -> RunningService<RoleClient, ()> {
    let transport = TokioChildProcess::new(cmd(args)).expect("spawn fixture");
    tokio::time::timeout(T, ().serve(transport))
        .await
        .expect("initialize timed out")
        .expect("initialize failed")
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn text(r: &rmcp::model::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    a: Value,
) -> rmcp::model::CallToolResult {
    tokio::time::timeout(
        T,
        client.call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args(a))),
    )
    .await
    .expect("call timed out")
    .expect("call failed")
}

async fn check_basic_tools(client: &RunningService<RoleClient, ()>) {
    let r = call(client, "echo", json!({"text": "hi there"})).await;
    assert_eq!(text(&r), "hi there");
    assert_ne!(r.is_error, Some(true));

    let r = call(client, "add", json!({"a": 2, "b": 40})).await;
    assert_eq!(text(&r), "42");
    assert_eq!(r.structured_content, Some(json!({"sum": 42})));

    let r = call(client, "fail", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), "deliberate failure");
}

#[tokio::test]
async fn stdio_basic_tools_and_server_info() {
    let client = connect_stdio(&["--name", "alpha"]).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("alpha")
    );
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, FIXED_TOOLS);
    check_basic_tools(&client).await;

    let r = call(&client, "pid", json!({})).await;
    let pid: u32 = text(&r).parse().unwrap();
    assert!(pid > 0);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_ten_thousand_tools_paged() {
    let client = connect_stdio(&["--tools", "10000", "--page-size", "500"]).await;
    let start = Instant::now();
    let first = client
        .list_tools(Some(PaginatedRequestParams::default()))
        .await
        .unwrap();
    assert_eq!(first.tools.len(), 500);
    assert_eq!(first.next_cursor.as_deref(), Some("500"));
    let all = client.list_all_tools().await.unwrap();
    assert_eq!(all.len(), 10_000 + FIXED_TOOLS.len());
    assert_eq!(all.last().unwrap().name, "tool_9999");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let r = call(&client, "tool_1234", json!({"text": "x"})).await;
    assert_eq!(text(&r), "x");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_ten_thousand_tools_single_page() {
    let client = connect_stdio(&["--tools", "10000"]).await;
    let page = client.list_tools(None).await.unwrap();
    assert_eq!(page.tools.len(), 10_000 + FIXED_TOOLS.len());
    assert!(page.next_cursor.is_none());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_prefix_and_extra_tools() {
    let client = connect_stdio(&[
        "--tool-prefix",
        "b_",
        "--tool",
        "search",
        "--tool",
        "echo",
        "--tools",
        "2",
    ])
    .await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.contains(&"b_echo".to_string()));
    assert!(names.contains(&"search".to_string()));
    assert!(names.contains(&"echo".to_string()));
    assert!(names.contains(&"b_tool_1".to_string()));
    let r = call(&client, "b_add", json!({"a": 1.5, "b": 1})).await;
    assert_eq!(r.structured_content, Some(json!({"sum": 2.5})));
    let r = call(&client, "search", json!({"text": "q"})).await;
    assert_eq!(text(&r), "q");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_init_delay() {
    let start = Instant::now();
    let client = connect_stdio(&["--init-delay-ms", "400"]).await;
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(400), "{took:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_sleep_is_cancelled() {
    let client = connect_stdio(&[]).await;
    let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
        CallToolRequestParams::new("sleep").with_arguments(args(json!({"ms": 60_000}))),
    ));
    let handle = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    handle.cancel(Some("test".into())).await.unwrap();
    // The server counts cancelled sleeps in `stats`.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = call(&client, "stats", json!({})).await;
        let cancelled = r.structured_content.as_ref().unwrap()["cancelled"]
            .as_u64()
            .unwrap();
        if cancelled == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "sleep was not cancelled: {r:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_crash_tool_closes_connection() {
    let client = connect_stdio(&[]).await;
    let res = tokio::time::timeout(T, client.call_tool(CallToolRequestParams::new("crash"))).await;
    assert!(res.expect("crash call hung").is_err());
}

#[tokio::test]
async fn stdio_crash_after_calls() {
    let client = connect_stdio(&["--crash-after-calls", "3"]).await;
    call(&client, "echo", json!({"text": "1"})).await;
    call(&client, "echo", json!({"text": "2"})).await;
    let third = tokio::time::timeout(
        T,
        client.call_tool(
            CallToolRequestParams::new("echo").with_arguments(args(json!({"text": "3"}))),
        ),
    )
    .await
    .expect("third call hung");
    assert!(third.is_err());
}

#[tokio::test]
async fn fail_start_exits_3() {
    let out = cmd(&["--fail-start"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("deliberate startup failure"));
}

#[tokio::test]
async fn stderr_flood_with_piped_stderr() {
    let (transport, stderr) = TokioChildProcess::builder(cmd(&["--stderr-flood", "20000"]))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = stderr.expect("stderr piped");
    // Drain stderr concurrently, or the server blocks writing it.
    let drain = tokio::spawn(async move {
        let mut lines = 0usize;
        let mut reader = BufReader::new(&mut stderr).lines();
        while let Ok(Some(_)) = reader.next_line().await {
            lines += 1;
        }
        lines
    });
    let client = tokio::time::timeout(T, ().serve(transport))
        .await
        .unwrap()
        .unwrap();
    check_basic_tools(&client).await;
    client.cancel().await.unwrap();
    let lines = tokio::time::timeout(T, drain).await.unwrap().unwrap();
    assert!(lines >= 20_000, "{lines}");
}

#[tokio::test]
async fn never_answer_and_ignore_pings() {
    // --never-answer: raw JSON-RPC initialize gets no reply.
    let mut child = cmd(&["--never-answer"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1];
    let r = tokio::time::timeout(Duration::from_millis(300), stdout.read(&mut buf)).await;
    assert!(r.is_err(), "never-answer server wrote something");
    drop(stdin); // EOF: it exits
    let status = tokio::time::timeout(T, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());

    // --ignore-pings: ping never answers, other requests do.
    let client = connect_stdio(&["--ignore-pings"]).await;
    let ping = ClientRequest::PingRequest(Default::default());
    let r = tokio::time::timeout(Duration::from_millis(300), client.send_request(ping)).await;
    assert!(r.is_err(), "ping was answered: {r:?}");
    check_basic_tools(&client).await;
    client.cancel().await.unwrap();

    // Without the flag, ping answers.
    let client = connect_stdio(&[]).await;
    let ping = ClientRequest::PingRequest(Default::default());
    tokio::time::timeout(T, client.send_request(ping))
        .await
        .unwrap()
        .unwrap();
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_resources_prompts_and_notifications() {
    let client = connect_stdio(&["--resources"]).await;
    let resources = client.list_all_resources().await.unwrap();
    let uris: Vec<_> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["fixture://greeting", "fixture://counter"]);
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "fixture://item/{id}");
    let read = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "fixture://item/42",
        ))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents[0]).unwrap()["text"],
        json!("item 42")
    );
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "greet");
    let mut p = rmcp::model::GetPromptRequestParams::new("greet");
    p.arguments = Some(args(json!({"name": "Ada"})));
    let got = client.get_prompt(p).await.unwrap();
    assert_eq!(
        got.messages[0].content.as_text().unwrap().text,
        "Hello, Ada!"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn http_basic_paging_and_init_delay() {
    let start = Instant::now();
    let fx = spawn_http_fixture(&[
        "--tools",
        "10000",
        "--page-size",
        "1000",
        "--init-delay-ms",
        "300",
        "--name",
        "webby",
    ])
    .await
    .unwrap();
    assert!(
        fx.url.starts_with("http://127.0.0.1:") && fx.url.ends_with("/mcp"),
        "{}",
        fx.url
    );
    let connect_start = Instant::now();
    let transport = StreamableHttpClientTransport::from_uri(fx.url.clone());
    let client = tokio::time::timeout(T, ().serve(transport))
        .await
        .unwrap()
        .unwrap();
    assert!(connect_start.elapsed() >= Duration::from_millis(300));
    assert_eq!(
        client
            .peer_info()
            .unwrap()
            .server_info
            .as_ref()
            .unwrap()
            .name,
        "webby"
    );
    let all = client.list_all_tools().await.unwrap();
    assert_eq!(all.len(), 10_000 + FIXED_TOOLS.len());
    check_basic_tools(&client).await;
    client.cancel().await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(15));
}

/// Legacy HTTP+SSE, driven by hand with raw HTTP on a TCP socket (rmcp has no SSE client).
#[tokio::test]
async fn legacy_sse_by_hand() {
    let fx = spawn_sse_fixture(&["--name", "old"]).await.unwrap();
    assert!(fx.url.ends_with("/sse"), "{}", fx.url);
    let authority = fx.base_url().trim_start_matches("http://").to_string();

    let mut sse = tokio::net::TcpStream::connect(&authority).await.unwrap();
    sse.write_all(
        format!("GET /sse HTTP/1.1\r\nHost: {authority}\r\nAccept: text/event-stream\r\n\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    let mut sse = BufReader::new(sse);
    // Read events: returns (event, data) pairs. Body is chunked; we skip chunk-size lines.
    async fn next_event<R: tokio::io::AsyncBufRead + Unpin>(r: &mut R) -> (String, String) {
        let (mut event, mut data) = (String::new(), String::new());
        loop {
            let mut line = String::new();
            let n = tokio::time::timeout(T, r.read_line(&mut line))
                .await
                .unwrap()
                .unwrap();
            assert!(n > 0, "sse stream closed");
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(v) = line.strip_prefix("event:") {
                event = v.trim().to_string();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.trim_start());
            } else if line.is_empty() && !event.is_empty() {
                return (event, data);
            }
        }
    }
    let (event, endpoint) = next_event(&mut sse).await;
    assert_eq!(event, "endpoint");
    assert!(endpoint.starts_with("/message?sessionId="), "{endpoint}");

    async fn post(authority: &str, path: &str, body: Value) -> String {
        let body = body.to_string();
        let mut s = tokio::net::TcpStream::connect(authority).await.unwrap();
        s.write_all(
            format!(
                "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).await.unwrap();
        resp
    }
    let resp = post(
        &authority,
        &endpoint,
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}),
    )
    .await;
    assert!(resp.starts_with("HTTP/1.1 202"), "{resp}");
    let (event, data) = next_event(&mut sse).await;
    assert_eq!(event, "message");
    let init: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(init["id"], json!(1));
    assert_eq!(init["result"]["protocolVersion"], json!("2024-11-05"));
    assert_eq!(init["result"]["serverInfo"]["name"], json!("old"));

    post(
        &authority,
        &endpoint,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    )
    .await;
    post(
        &authority,
        &endpoint,
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}),
    )
    .await;
    let (_, data) = next_event(&mut sse).await;
    let r: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(r["id"], json!(2));
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 3}));

    let bad = post(
        &authority,
        "/message?sessionId=nope",
        json!({"jsonrpc":"2.0","id":3,"method":"ping"}),
    )
    .await;
    assert!(bad.starts_with("HTTP/1.1 404"), "{bad}");
}

#[tokio::test]
async fn result_type_is_server_result() {
    // Compile-time check that the raw request API returns ServerResult (used in the report).
    let client = connect_stdio(&[]).await;
    let r = client
        .send_request(ClientRequest::ListToolsRequest(Default::default()))
        .await
        .unwrap();
    assert!(matches!(r, ServerResult::ListToolsResult(_)));
    client.cancel().await.unwrap();
}
