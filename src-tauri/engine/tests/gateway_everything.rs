//! The reference `@modelcontextprotocol/server-everything` (tests/npm)
//! behind the gateway, over stdio and HTTP, with rmcp's client: the same
//! tools, call results, resources and prompts as directly, and its progress
//! notifications reach the gateway client under the client's own token.
//!
//! Needs tests/npm/node_modules (`npm ci` in tests/npm, which .ci/test
//! runs) and `node`: skips without them, fails when `CI` is set.
#![allow(deprecated)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::*;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const TOKEN: &str = "gateway-everything-token-0123456789";
const T: Duration = Duration::from_secs(30);

fn everything_js(test: &str) -> Option<PathBuf> {
    let js = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if js.is_file() && node {
        return Some(js);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{test}: server-everything or node is missing ({}); .ci/test runs npm ci in tests/npm",
            js.display()
        );
    }
    eprintln!("SKIPPED {test}: run `npm ci` in tests/npm (and have node on PATH)");
    None
}

#[derive(Clone)]
struct Progress(
    mpsc::UnboundedSender<ProgressNotificationParam>,
    mpsc::UnboundedSender<()>,
    mpsc::UnboundedSender<LoggingMessageNotificationParam>,
);

impl ClientHandler for Progress {
    async fn on_progress(
        &self,
        p: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(p);
    }
    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        let _ = self.1.send(());
    }
    async fn on_logging_message(
        &self,
        p: LoggingMessageNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let _ = self.2.send(p);
    }
}

/// Node takes longer than the startup gate: a client without the tool
/// cache lists nothing of it first, then hears list_changed.
async fn wait_for_tools(
    client: &RunningService<RoleClient, Progress>,
    changed: &mut mpsc::UnboundedReceiver<()>,
) {
    let deadline = tokio::time::Instant::now() + T;
    while !client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .any(|t| t.name == "mcp_everything_echo")
    {
        tokio::time::timeout_at(deadline, changed.recv())
            .await
            .expect("list_changed once server-everything is up")
            .unwrap();
    }
}

fn home(js: &Path) -> switchboard_tests::TempHome {
    switchboard_tests::TempHome::with_servers(
        json!({ "everything": { "command": "node", "args": [js, "stdio"] } }),
    )
}

fn command(home: &switchboard_tests::TempHome, args: &[&str]) -> tokio::process::Command {
    let mut c = home.command(BIN);
    c.args(args).env("SWITCHBOARD_GATEWAY_TOKEN", TOKEN);
    if std::env::var_os("GATEWAY_TEST_STDERR").is_none() {
        c.stderr(std::process::Stdio::null());
    }
    c
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let mut p = CallToolRequestParams::new(name.to_string());
    p.arguments = args.as_object().cloned();
    p
}

fn gw(tool: &str) -> String {
    switchboard_engine::naming::tool_name("everything", tool)
}

/// What a client sees through the gateway equals what it sees directly.
async fn compare(
    through: &RunningService<RoleClient, Progress>,
    rx: &mut mpsc::UnboundedReceiver<ProgressNotificationParam>,
    logs: &mut mpsc::UnboundedReceiver<LoggingMessageNotificationParam>,
    js: &Path,
) {
    let mut cmd = tokio::process::Command::new("node");
    cmd.args([js.to_str().unwrap(), "stdio"])
        .stderr(std::process::Stdio::null());
    let direct = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let want = direct.list_all_tools().await.unwrap();
    let got = through.list_all_tools().await.unwrap();
    assert!(!want.is_empty());
    for t in &want {
        let mut g = got
            .iter()
            .find(|g| g.name == gw(&t.name))
            .unwrap_or_else(|| panic!("{} missing", gw(&t.name)))
            .clone();
        g.name = t.name.clone();
        assert_eq!(
            serde_json::to_value(&g).unwrap(),
            serde_json::to_value(t).unwrap(),
            "{}",
            t.name
        );
    }
    for (tool, args) in [
        ("echo", json!({"message": "hello"})),
        ("get-sum", json!({"a": 2, "b": 40})),
        ("echo", json!({"message": 7})),
    ] {
        let w = direct.call_tool(call(tool, args.clone())).await.unwrap();
        let g = through.call_tool(call(&gw(tool), args)).await.unwrap();
        assert_eq!(
            serde_json::to_value(&g).unwrap(),
            serde_json::to_value(&w).unwrap(),
            "{tool}"
        );
    }
    // Resources: every direct one under its gateway URI, the first read alike.
    let want = direct.list_all_resources().await.unwrap();
    let got = through.list_all_resources().await.unwrap();
    for r in &want {
        assert!(
            got.iter()
                .any(|g| g.uri == format!("switchboard://everything/{}", r.uri)),
            "{} missing",
            r.uri
        );
    }
    if let Some(r) = want.first() {
        let w = direct
            .read_resource(ReadResourceRequestParams::new(r.uri.clone()))
            .await
            .unwrap();
        let g = through
            .read_resource(ReadResourceRequestParams::new(format!(
                "switchboard://everything/{}",
                r.uri
            )))
            .await
            .unwrap();
        let mut g = serde_json::to_value(&g).unwrap();
        for c in g["contents"].as_array_mut().unwrap() {
            let u = c["uri"]
                .as_str()
                .unwrap()
                .strip_prefix("switchboard://everything/")
                .expect("gateway URI")
                .to_string();
            c["uri"] = json!(u);
        }
        assert_eq!(g, serde_json::to_value(&w).unwrap());
    }
    // Prompts: the same ones, and one without arguments got alike.
    let want = direct.list_all_prompts().await.unwrap();
    let got = through.list_all_prompts().await.unwrap();
    assert_eq!(got.len(), want.len(), "{got:?}");
    if let Some(p) = want.iter().find(|p| {
        p.arguments
            .as_ref()
            .is_none_or(|a| a.iter().all(|x| x.required != Some(true)))
    }) {
        let w = direct
            .get_prompt(GetPromptRequestParams::new(p.name.clone()))
            .await
            .unwrap();
        let g = through
            .get_prompt(GetPromptRequestParams::new(gw(&p.name)))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&g).unwrap(),
            serde_json::to_value(&w).unwrap(),
            "{}",
            p.name
        );
    }
    direct.cancel().await.unwrap();
    // Progress: three steps, under the token this client's request carried
    // (rmcp's client picks it).
    let p = call(
        &gw("trigger-long-running-operation"),
        json!({"duration": 0.3, "steps": 3}),
    );
    let req = ClientRequest::CallToolRequest(CallToolRequest::new(p));
    let handle = through
        .peer()
        .send_cancellable_request(req, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    let token = handle.progress_token.clone();
    let r = tokio::time::timeout(T, handle.await_response())
        .await
        .unwrap()
        .unwrap();
    let ServerResult::CallToolResult(r) = r else {
        panic!("{r:?}")
    };
    assert!(
        r.content[0].as_text().unwrap().text.contains("Steps: 3"),
        "{r:?}"
    );
    let mut steps = vec![];
    while steps.len() < 3 {
        let n = tokio::time::timeout(T, rx.recv())
            .await
            .expect("3 progress notifications")
            .unwrap();
        assert_eq!(n.progress_token, token);
        steps.push(n.progress);
    }
    assert_eq!(steps, vec![1.0, 2.0, 3.0]);
    // Its log messages reach the client, named after the server.
    through
        .peer()
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .unwrap();
    through
        .call_tool(call(&gw("toggle-simulated-logging"), json!({})))
        .await
        .unwrap();
    loop {
        let m = tokio::time::timeout(T, logs.recv())
            .await
            .expect("a simulated log message")
            .unwrap();
        assert_eq!(m.logger.as_deref(), Some("everything"), "{m:?}");
        if m.data.as_str().unwrap().contains("-level message")
            || m.data.as_str().unwrap().contains("level-message")
        {
            break;
        }
    }
}

#[tokio::test]
async fn server_everything_through_the_stdio_gateway() {
    let Some(js) = everything_js("server_everything_through_the_stdio_gateway") else {
        return;
    };
    let home = home(&js);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (ctx, mut changed) = mpsc::unbounded_channel();
    let (ltx, mut logs) = mpsc::unbounded_channel();
    let client = Progress(tx, ctx, ltx)
        .serve(TokioChildProcess::new(command(&home, &["serve"])).unwrap())
        .await
        .unwrap();
    wait_for_tools(&client, &mut changed).await;
    compare(&client, &mut rx, &mut logs, &js).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn server_everything_through_the_http_gateway() {
    let Some(js) = everything_js("server_everything_through_the_http_gateway") else {
        return;
    };
    let home = home(&js);
    let mut c = command(&home, &["serve", "--http", "127.0.0.1:0"]);
    c.stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    tokio::time::timeout(T, out.read_line(&mut line))
        .await
        .unwrap()
        .unwrap();
    let url = serde_json::from_str::<Value>(&line).unwrap()["url"]
        .as_str()
        .unwrap()
        .to_string();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (ctx, mut changed) = mpsc::unbounded_channel();
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(TOKEN.to_string());
    let (ltx, mut logs) = mpsc::unbounded_channel();
    let client = Progress(tx, ctx, ltx)
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap();
    wait_for_tools(&client, &mut changed).await;
    compare(&client, &mut rx, &mut logs, &js).await;
    client.cancel().await.unwrap();
}
