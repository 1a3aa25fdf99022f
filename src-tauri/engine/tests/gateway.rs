//! The gateway end to end (aggregation, tool switches, search mode): the real `switchboard serve`
//! between rmcp's client and real fixture servers, over stdio and over
//! streamable HTTP. Each result is compared with the same request sent to
//! the fixture directly.
#![allow(deprecated)] // resources/subscribe and logging are what 2025 sessions use.

use std::path::Path;
use std::time::Duration;

use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const TOKEN: &str = "gateway-test-token-0123456789";
/// Every wait in these tests ends by this deadline.
const T: Duration = Duration::from_secs(20);

struct Home(switchboard_tests::TempHome);

impl Home {
    /// A home whose Switchboard file defines `servers` (name → fixture args).
    fn new(servers: &[(&str, &[&str])]) -> Home {
        let fixture = switchboard_tests::fixture_server_path();
        let mut map = serde_json::Map::new();
        for (name, args) in servers {
            let mut a: Vec<&str> = vec!["--name", name];
            a.extend_from_slice(args);
            map.insert(name.to_string(), json!({ "command": fixture, "args": a }));
        }
        Home(switchboard_tests::TempHome::with_servers(map.into()))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut c = self.0.command(BIN);
        c.args(args).env("SWITCHBOARD_GATEWAY_TOKEN", TOKEN);
        c
    }

    /// `switchboard serve ARGS` as the MCP server of a client (stdio).
    async fn stdio(&self, args: &[&str], client: Client) -> RunningService<RoleClient, Client> {
        let mut a = vec!["serve"];
        a.extend_from_slice(args);
        let mut cmd = self.command(&a);
        if std::env::var_os("GATEWAY_TEST_STDERR").is_none() {
            cmd.stderr(std::process::Stdio::null());
        }
        tokio::time::timeout(T, client.serve(TokioChildProcess::new(cmd).unwrap()))
            .await
            .expect("initialize in time")
            .expect("initialize")
    }

    /// `switchboard serve --http 127.0.0.1:0 ARGS`: the process and its URL.
    async fn http(&self, args: &[&str]) -> (tokio::process::Child, String) {
        let mut a = vec!["serve", "--http", "127.0.0.1:0"];
        a.extend_from_slice(args);
        let mut cmd = self.command(&a);
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .stdin(std::process::Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        tokio::time::timeout(T, out.read_line(&mut line))
            .await
            .expect("listening line in time")
            .unwrap();
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not one JSON line: {line:?}: {e}"));
        assert_eq!(v["pid"].as_u64(), child.id().map(u64::from), "{line}");
        let url = v["url"].as_str().unwrap().to_string();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
            "{url}"
        );
        // Nothing else is printed on stdout.
        let mut rest = String::new();
        let more = tokio::time::timeout(Duration::from_millis(200), out.read_line(&mut rest)).await;
        assert!(more.is_err() || rest.is_empty(), "more on stdout: {rest:?}");
        (child, url)
    }

    async fn run(&self, args: &[&str]) -> std::process::Output {
        tokio::time::timeout(T, self.command(args).output())
            .await
            .expect("in time")
            .unwrap()
    }
}

/// A client that records notifications and answers elicitations with a name.
#[derive(Clone)]
struct Client {
    tx: mpsc::UnboundedSender<String>,
    elicitation: bool,
}

impl Client {
    fn new(elicitation: bool) -> (Client, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Client { tx, elicitation }, rx)
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities = if self.elicitation {
            serde_json::from_value(json!({ "elicitation": { "form": {} } })).unwrap()
        } else {
            Default::default()
        };
        ClientConfig::new(caps, Implementation::new("gateway-test", "1.0"))
    }
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.tx.send("tools changed".into());
    }
    async fn on_resource_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.tx.send("resources changed".into());
    }
    async fn on_resource_updated(
        &self,
        p: ResourceUpdatedNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let _ = self.tx.send(format!("updated {}", p.uri));
    }
    async fn on_progress(
        &self,
        p: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let _ = self.tx.send(format!("progress {:?}", p.progress_token));
    }
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let v = serde_json::to_value(&request).unwrap();
        let _ = self.tx.send(format!(
            "elicitation {}",
            v["message"].as_str().unwrap_or_default()
        ));
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "name": "Ada" })))
    }
}

/// The next notification matching `want`, others skipped.
async fn wait_for(rx: &mut mpsc::UnboundedReceiver<String>, want: &str) {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(n)) if n == want => return,
            Ok(Some(_)) => continue,
            _ => panic!("no \"{want}\" notification within {T:?}"),
        }
    }
}

/// The fixture itself, for the direct side of each comparison.
async fn direct(args: &[&str]) -> RunningService<RoleClient, ()> {
    let mut cmd = tokio::process::Command::new(switchboard_tests::fixture_server_path());
    cmd.args(args).stderr(std::process::Stdio::null());
    ().serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap()
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let mut p = CallToolRequestParams::new(name.to_string());
    p.arguments = args.as_object().cloned();
    p
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Tools, calls (arguments, an error result, an unknown tool), resources,
/// templates and prompts through `peer`, against the fixture directly.
/// `name(tool)` and `uri(u)` say how the gateway names them.
async fn same_as_direct(
    peer: &rmcp::Peer<RoleClient>,
    name: &dyn Fn(&str) -> String,
    uri: &dyn Fn(&str) -> String,
) {
    let fx = direct(&["--name", "fx", "--resources"]).await;
    // Tools: every tool of fx, each definition as fx gave it but the name.
    let through = peer.list_all_tools().await.unwrap();
    for t in fx.list_all_tools().await.unwrap() {
        let g = through
            .iter()
            .find(|g| g.name == name(&t.name))
            .unwrap_or_else(|| panic!("{} missing from the gateway's list", name(&t.name)));
        let mut g = g.clone();
        g.name = t.name.clone();
        assert_eq!(
            serde_json::to_value(&g).unwrap(),
            serde_json::to_value(&t).unwrap(),
            "definition of {}",
            t.name
        );
    }
    // Calls: the same result.
    for (tool, args) in [
        ("add", json!({"a": 2, "b": 40})),
        ("echo", json!({"text": "hi there"})),
        ("fail", json!({})),
    ] {
        let want = fx.call_tool(call(tool, args.clone())).await.unwrap();
        let got = peer.call_tool(call(&name(tool), args)).await.unwrap();
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(&want).unwrap(),
            "{tool}"
        );
    }
    // An upstream protocol error comes through as it is.
    let want = fx
        .call_tool(call("sleep", json!({})))
        .await
        .unwrap_err()
        .to_string();
    let got = peer
        .call_tool(call(&name("sleep"), json!({})))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(got, want);
    let unknown = peer
        .call_tool(call(&name("no_such_tool"), json!({})))
        .await
        .unwrap_err()
        .to_string();
    assert!(unknown.contains("Unknown tool"), "{unknown}");
    // Resources: listed, read and templated under the gateway's URIs.
    let want = fx.list_all_resources().await.unwrap();
    let got = peer.list_all_resources().await.unwrap();
    for r in &want {
        let g = got
            .iter()
            .find(|g| g.uri == uri(&r.uri))
            .unwrap_or_else(|| panic!("{} missing", uri(&r.uri)));
        assert_eq!(g.name, r.name);
    }
    let read = |u: String| ReadResourceRequestParams::new(u);
    for u in ["fixture://greeting", "fixture://item/42"] {
        let want = fx.read_resource(read(u.to_string())).await.unwrap();
        let got = peer.read_resource(read(uri(u))).await.unwrap();
        let mut got = serde_json::to_value(&got).unwrap();
        assert_eq!(got["contents"][0]["uri"], json!(uri(u)));
        got["contents"][0]["uri"] = json!(u);
        assert_eq!(got, serde_json::to_value(&want).unwrap(), "{u}");
    }
    let missing = peer
        .read_resource(read(uri("fixture://nothing")))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("no resource fixture://nothing"),
        "{missing}"
    );
    // Subscriptions: an update of the server's resource reaches this client
    // under the gateway's URI (checked by the callers that record them).
    peer.subscribe(SubscribeRequestParams::new(uri("fixture://counter")))
        .await
        .unwrap();
    peer.call_tool(call(&name("bump_counter"), json!({})))
        .await
        .unwrap();
    let templates = peer.list_all_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == uri("fixture://item/{id}")),
        "{templates:?}"
    );
    // Prompts.
    let prompts = peer.list_all_prompts().await.unwrap();
    let greet = name("greet");
    assert!(prompts.iter().any(|p| p.name == greet), "{prompts:?}");
    let args = || Some(json!({"name": "Ada"}).as_object().unwrap().clone());
    let want = fx
        .get_prompt(GetPromptRequestParams::new("greet").with_arguments(args().unwrap()))
        .await
        .unwrap();
    let got = peer
        .get_prompt(GetPromptRequestParams::new(greet).with_arguments(args().unwrap()))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&got).unwrap(),
        serde_json::to_value(&want).unwrap()
    );
    fx.cancel().await.unwrap();
}

fn aggregate_name(tool: &str) -> String {
    switchboard_engine::naming::tool_name("fx", tool)
}

fn aggregate_uri(uri: &str) -> String {
    format!("switchboard://fx/{uri}")
}

#[tokio::test]
async fn stdio_gateway_answers_like_the_server_itself() {
    let home = Home::new(&[("fx", &["--resources"]), ("other", &[])]);
    let (c, mut rx) = Client::new(false);
    let client = home.stdio(&[], c).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "switchboard");
    assert!(info.capabilities.tools.as_ref().unwrap().list_changed == Some(true));
    let tools = client.list_all_tools().await.unwrap();
    // Both servers, under their gateway names.
    assert!(
        tools.iter().any(|t| t.name == "mcp_other_echo"),
        "{:?}",
        tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    same_as_direct(client.peer(), &aggregate_name, &aggregate_uri).await;
    wait_for(&mut rx, "updated switchboard://fx/fixture://counter").await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn one_server_alone_keeps_its_own_names() {
    let home = Home::new(&[("fx", &["--resources"]), ("other", &[])]);
    let (c, mut rx) = Client::new(false);
    let client = home.stdio(&["--server", "fx"], c).await;
    assert_eq!(
        client
            .peer_info()
            .unwrap()
            .server_info
            .as_ref()
            .unwrap()
            .name,
        "switchboard/fx"
    );
    let tools = client.list_all_tools().await.unwrap();
    assert!(
        tools.iter().all(|t| !t.name.starts_with("mcp_")),
        "{tools:?}"
    );
    same_as_direct(client.peer(), &|t| t.to_string(), &|u| u.to_string()).await;
    wait_for(&mut rx, "updated fixture://counter").await;
    client.cancel().await.unwrap();
    let unknown = home.run(&["serve", "--server", "nope"]).await;
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no runnable server named \"nope\""));
}

#[tokio::test]
async fn cancellation_and_elicitation_are_forwarded() {
    let home = Home::new(&[("fx", &["--resources"])]);
    let (c, mut rx) = Client::new(true);
    let client = home.stdio(&[], c).await;
    // Cancelling a call through the gateway cancels it at the server.
    let req = ClientRequest::CallToolRequest(CallToolRequest::new(call(
        "mcp_fx_sleep",
        json!({"ms": 60000}),
    )));
    let handle = client
        .peer()
        .send_cancellable_request(req, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    // The call has reached the server once stats counts it.
    let deadline = tokio::time::Instant::now() + T;
    let stats = |c: &RunningService<RoleClient, Client>| {
        let p = c.peer().clone();
        async move {
            p.call_tool(call("mcp_fx_stats", json!({})))
                .await
                .unwrap()
                .structured_content
                .unwrap()
        }
    };
    // `calls` counts every call, these stats calls too.
    let mut asked = 0;
    loop {
        asked += 1;
        if stats(&client).await["calls"].as_u64().unwrap() > asked {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the sleep call never reached the server"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    handle.cancel(Some("test".into())).await.unwrap();
    loop {
        if stats(&client).await["cancelled"] == json!(1) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server never saw the cancellation"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Elicitation: the server's question reaches this client, its answer the server.
    let r = client
        .call_tool(call("mcp_fx_elicit", json!({})))
        .await
        .unwrap();
    assert!(
        text(&r).contains("\"accept\"") && text(&r).contains("Ada"),
        "{}",
        text(&r)
    );
    wait_for(&mut rx, "elicitation What is your name?").await;
    client.cancel().await.unwrap();
    // A client that cannot answer: declined as without a gateway.
    let (c, _rx) = Client::new(false);
    let client = home.stdio(&[], c).await;
    let r = client
        .call_tool(call("mcp_fx_elicit", json!({})))
        .await
        .unwrap();
    assert!(text(&r).contains("\"decline\""), "{}", text(&r));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_switched_off_tool_leaves_an_open_session() {
    let home = Home::new(&[("fx", &[])]);
    let (c, mut rx) = Client::new(false);
    let client = home.stdio(&[], c).await;
    let names = |c: &RunningService<RoleClient, Client>| {
        let p = c.peer().clone();
        async move {
            p.list_all_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect::<Vec<_>>()
        }
    };
    assert!(names(&client).await.contains(&"mcp_fx_echo".to_string()));
    let off = home.run(&["tool", "off", "mcp_fx_echo", "fx/add"]).await;
    assert!(
        off.status.success(),
        "{}",
        String::from_utf8_lossy(&off.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&off.stdout),
        "Switched off mcp_fx_echo (fx/echo): the gateway no longer offers it\nSwitched off fx/add (fx/add): the gateway no longer offers it\n"
    );
    // Seen after a list_changed (ones from the start may still be queued).
    let now = loop {
        wait_for(&mut rx, "tools changed").await;
        let now = names(&client).await;
        if !now.contains(&"mcp_fx_echo".to_string()) {
            break now;
        }
    };
    assert!(!now.contains(&"mcp_fx_add".to_string()), "{now:?}");
    assert!(now.contains(&"mcp_fx_sleep".to_string()));
    // A switched-off tool cannot be called either.
    let e = client
        .call_tool(call("mcp_fx_echo", json!({"text": "x"})))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("Unknown tool \"mcp_fx_echo\""), "{e}");
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".config/switchboard/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(settings["disabledTools"], json!({"fx": ["add", "echo"]}));
    assert!(home
        .run(&["tool", "on", "mcp_fx_echo"])
        .await
        .status
        .success());
    loop {
        wait_for(&mut rx, "tools changed").await;
        if names(&client).await.contains(&"mcp_fx_echo".to_string()) {
            break;
        }
    }
    let unknown = home.run(&["tool", "off", "mcp_fx_nope"]).await;
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("Unknown tool \"mcp_fx_nope\""),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_crashed_server_comes_back_with_list_changed_both_times() {
    let home = Home::new(&[("fx", &[]), ("other", &[])]);
    let (c, mut rx) = Client::new(false);
    let client = home.stdio(&[], c).await;
    let has_fx = |c: &RunningService<RoleClient, Client>| {
        let p = c.peer().clone();
        async move {
            p.list_all_tools()
                .await
                .unwrap()
                .iter()
                .any(|t| t.name == "mcp_fx_echo")
        }
    };
    assert!(has_fx(&client).await);
    let pid = text(
        &client
            .call_tool(call("mcp_fx_pid", json!({})))
            .await
            .unwrap(),
    );
    // The server dies mid-session (its call never answers: an error, not a replay).
    let r = client.call_tool(call("mcp_fx_crash", json!({}))).await;
    let failed = match &r {
        Ok(r) => r.is_error == Some(true),
        Err(_) => true,
    };
    assert!(failed, "{r:?}");
    // Each phase is seen only after a list_changed (earlier ones, from the
    // start, may still be queued).
    loop {
        wait_for(&mut rx, "tools changed").await;
        if !has_fx(&client).await {
            break;
        }
    }
    assert!(
        client
            .list_all_tools()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "mcp_other_echo"),
        "other servers stay"
    );
    loop {
        wait_for(&mut rx, "tools changed").await;
        if has_fx(&client).await {
            break;
        }
    }
    let again = text(
        &client
            .call_tool(call("mcp_fx_pid", json!({})))
            .await
            .unwrap(),
    );
    assert_ne!(pid, again, "a new process");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn tool_search_mode_offers_two_tools() {
    let home = Home::new(&[("fx", &["--tools", "200"])]);
    let (c, _rx) = Client::new(false);
    let client = home.stdio(&["--tool-search"], c).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
        vec!["search_tools", "call_tool"]
    );
    let found = client
        .call_tool(call(
            "search_tools",
            json!({"query": "add two numbers", "limit": 3}),
        ))
        .await
        .unwrap();
    let list = found.structured_content.unwrap()["tools"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(list[0]["name"], "mcp_fx_add", "{list:?}");
    assert!(list[0]["inputSchema"]["properties"]["a"].is_object());
    let r = client
        .call_tool(call(
            "call_tool",
            json!({"name": "mcp_fx_add", "arguments": {"a": 1, "b": 2}}),
        ))
        .await
        .unwrap();
    assert_eq!(text(&r), "3");
    let e = client
        .call_tool(call("mcp_fx_add", json!({})))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("this gateway offers search_tools and call_tool"),
        "{e}"
    );
    client.cancel().await.unwrap();
}

/// An rmcp client of the HTTP gateway with the token.
async fn http_client(url: &str, token: &str) -> RunningService<RoleClient, Client> {
    let (c, _rx) = Client::new(false);
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .auth_header(token.to_string());
    tokio::time::timeout(
        T,
        c.serve(StreamableHttpClientTransport::from_config(config)),
    )
    .await
    .expect("in time")
    .expect("initialize")
}

#[tokio::test]
async fn http_gateway_needs_the_token_and_this_machine() {
    let home = Home::new(&[("fx", &["--resources"])]);
    let (_child, url) = home.http(&[]).await;
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}});
    let post = |auth: Option<&str>, extra: &[(&str, &str)]| {
        let mut r = http
            .post(&url)
            .header("Accept", "application/json, text/event-stream")
            .json(&init);
        if let Some(a) = auth {
            r = r.header("Authorization", a);
        }
        for (k, v) in extra {
            r = r.header(*k, *v);
        }
        r.timeout(T).send()
    };
    let bearer = format!("Bearer {TOKEN}");
    let no_token = post(None, &[]).await.unwrap();
    assert_eq!(no_token.status(), 401);
    assert_eq!(
        no_token.headers()["www-authenticate"],
        "Bearer realm=\"Switchboard gateway\""
    );
    assert_eq!(
        post(Some("Bearer wrong-token-of-some-length"), &[])
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        post(Some(&bearer), &[("Origin", "http://evil.example")])
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        post(Some(&bearer), &[("Host", "evil.example")])
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        post(Some(&bearer), &[("Origin", "http://localhost:5173")])
            .await
            .unwrap()
            .status(),
        200
    );
    let unknown = http
        .post(&url)
        .header("Authorization", &bearer)
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", "no-such-session")
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .timeout(T)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let other = http
        .get(url.replace("/mcp", "/elsewhere"))
        .header("Authorization", &bearer)
        .timeout(T)
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 404);
    let not_served = post(Some(&bearer), &[]).await.unwrap();
    assert_eq!(not_served.status(), 200);
    let missing = http
        .post(format!("{url}/nope"))
        .header("Authorization", &bearer)
        .header("Accept", "application/json, text/event-stream")
        .json(&init)
        .timeout(T)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

/// The JSON-RPC messages of one streamable-HTTP response body (SSE or JSON), in order.
fn messages_of(body: &str) -> Vec<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        return vec![v];
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_json::from_str(d.trim()).unwrap_or_else(|e| panic!("{d}: {e}")))
        .collect()
}

/// Every progress notification the server sent before its result reaches
/// the client before the result, on the call's own stream: read as the raw
/// stream, in order, over several calls (the server sends them back to back
/// and answers at once, the case where a late one was lost).
#[tokio::test]
async fn progress_sent_before_a_result_reaches_the_client_before_it() {
    let home = Home::new(&[("fx", &["--progress-tool"]), ("other", &[])]);
    let (_child, url) = home.http(&[]).await;
    let http = reqwest::Client::new();
    let bearer = format!("Bearer {TOKEN}");
    let post = |session: Option<&str>, body: Value| {
        let mut r = http
            .post(&url)
            .header("Authorization", &bearer)
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(s) = session {
            r = r
                .header("Mcp-Session-Id", s)
                .header("MCP-Protocol-Version", "2025-06-18");
        }
        r.timeout(T).send()
    };
    let init = post(
        None,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await
    .unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    init.text().await.unwrap();
    let ok = post(
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await
    .unwrap();
    assert!(ok.status().is_success(), "{}", ok.status());
    const STEPS: u64 = 40;
    for call in 1..=10u64 {
        let token = format!("call-{call}");
        let body = post(
            Some(&session),
            json!({"jsonrpc": "2.0", "id": call, "method": "tools/call", "params": {
                "name": aggregate_name("progress"), "arguments": {"steps": STEPS},
                "_meta": {"progressToken": token}}}),
        )
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
        let got = messages_of(&body);
        let (last, progress) = got.split_last().expect("a response");
        assert_eq!(last["id"], json!(call), "the result comes last: {body}");
        assert_eq!(
            last["result"]["content"][0]["text"],
            json!(format!("done {STEPS}")),
            "{body}"
        );
        let steps: Vec<u64> = progress
            .iter()
            .map(|m| {
                assert_eq!(m["method"], "notifications/progress", "{m}");
                assert_eq!(m["params"]["progressToken"], json!(token), "{m}");
                m["params"]["progress"].as_f64().unwrap() as u64
            })
            .collect();
        assert_eq!(
            steps,
            (1..=STEPS).collect::<Vec<_>>(),
            "call {call}: {body}"
        );
    }
}

#[tokio::test]
async fn http_gateway_answers_like_the_server_itself() {
    let home = Home::new(&[("fx", &["--resources"]), ("other", &[])]);
    let (_child, url) = home.http(&[]).await;
    let client = http_client(&url, TOKEN).await;
    same_as_direct(client.peer(), &aggregate_name, &aggregate_uri).await;
    client.cancel().await.unwrap();
    // One server alone, at /mcp/<server>, same token.
    let client = http_client(&format!("{url}/fx"), TOKEN).await;
    assert_eq!(
        client
            .peer_info()
            .unwrap()
            .server_info
            .as_ref()
            .unwrap()
            .name,
        "switchboard/fx"
    );
    same_as_direct(client.peer(), &|t| t.to_string(), &|u| u.to_string()).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn serve_refuses_addresses_off_this_machine() {
    let home = Home::new(&[("fx", &[])]);
    let o = home.run(&["serve", "--http", "0.0.0.0:0"]).await;
    assert!(!o.status.success());
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("0.0.0.0:0 is not a loopback address"), "{err}");
}

#[tokio::test]
async fn gateway_token_prints_the_environment_override() {
    let home = Home::new(&[]);
    let o = home.run(&["gateway", "token"]).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), format!("{TOKEN}\n"));
}

#[tokio::test]
async fn the_first_list_waits_at_most_the_startup_gate() {
    // "slow" takes 5 s to answer initialize and has no cached tools.
    let home = Home::new(&[("fx", &[]), ("slow", &["--init-delay-ms", "5000"])]);
    let (c, mut rx) = Client::new(false);
    let started = std::time::Instant::now();
    let client = home.stdio(&[], c).await;
    let first: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the first list took {:?}",
        started.elapsed()
    );
    assert!(
        !first.iter().any(|n| n.starts_with("mcp_slow_")),
        "{first:?}"
    );
    // Then list_changed brings it.
    loop {
        wait_for(&mut rx, "tools changed").await;
        let now = client.list_all_tools().await.unwrap();
        if now.iter().any(|t| t.name == "mcp_slow_echo")
            && now.iter().any(|t| t.name == "mcp_fx_echo")
        {
            break;
        }
    }
    client.cancel().await.unwrap();
}

/// A client that starts its own `switchboard serve` (Claude Desktop's
/// way) gets, in its very first list, the tools an earlier run cached for a
/// server still starting: the list waits for the manager's startup gate,
/// not for a clock of the gateway's own that starts earlier and, on a busy
/// machine, ran out before the cached tools were offered.
#[tokio::test]
async fn the_first_list_has_the_cached_tools_of_a_server_still_starting() {
    let home = Home::new(&[("fx", &[]), ("slow", &["--init-delay-ms", "4000"])]);
    // An earlier run: the slow server's tools arrive and are cached.
    let (c, mut rx) = Client::new(false);
    let client = home.stdio(&[], c).await;
    loop {
        let now = client.list_all_tools().await.unwrap();
        if now.iter().any(|t| t.name == "mcp_slow_echo") {
            break;
        }
        wait_for(&mut rx, "tools changed").await;
    }
    client.cancel().await.unwrap();

    for run in 0..3 {
        let (c, _rx) = Client::new(false);
        let client = home.stdio(&[], c).await;
        let first: Vec<String> = client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        assert!(
            first.iter().any(|n| n == "mcp_slow_echo"),
            "run {run}: the cached tools of the server still starting: {first:?}"
        );
        assert!(
            first.iter().any(|n| n == "mcp_fx_echo"),
            "run {run}: {first:?}"
        );
        client.cancel().await.unwrap();
    }
}
