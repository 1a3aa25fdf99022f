//! Interop with a real-world server: the reference `server-everything`
//! from npm (pinned in tests/npm/package.json, installed by `npm ci` in
//! tests/npm), through the engine's `Manager`, over stdio and over
//! streamable HTTP. Tool names, a call, a tool error, a cancelled
//! long-running call, and teardown without leftover processes. Over stdio
//! also the rest of what a user sees of a server: resources and templates,
//! prompts with arguments, a resource subscription with updates, list_changed
//! (tools at initialize, resources from a tool), and elicitation answered
//! through the manager's hook.
//!
//! Skips (passing, with a message on stderr) when tests/npm/node_modules is
//! missing or `node` is not on PATH.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use switchboard_engine::config::{ServerDef, Transport};
use switchboard_engine::events::{EngineEvent, ServerStatus};
use switchboard_engine::manager::{
    CallError, ElicitAnswer, ElicitRequest, Manager, ManagerOptions, RegistryError, Wanted,
};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

fn npm_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("npm")
}

/// `dist/index.js` of server-everything, or `None` (with a skip message).
fn everything_js(test: &str) -> Option<PathBuf> {
    let js = npm_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !js.is_file() {
        eprintln!(
            "SKIPPED {test}: {} is missing; run `npm ci` in tests/npm (.ci/setup does) to test against server-everything",
            js.display()
        );
        return None;
    }
    let node_ok = std::process::Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !node_ok {
        eprintln!("SKIPPED {test}: `node` is not on PATH");
        return None;
    }
    Some(js)
}

fn opts() -> ManagerOptions {
    ManagerOptions {
        cache_path: None,
        gate: Duration::from_millis(250),
        default_timeout: Duration::from_secs(30),
        grace: Duration::from_millis(1000),
        env: std::env::vars().collect(),
        home: std::env::temp_dir(),
        ..ManagerOptions::default()
    }
}

fn args(v: Value) -> Option<Map<String, Value>> {
    v.as_object().cloned()
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

async fn wait_gone(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if !pid_alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Every process whose process group is `pgid` (from /proc/*/stat).
fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = vec![];
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after ')'.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

/// The checks shared by both transports, against server `name` (already connected).
async fn exercise(m: &Manager, name: &str) -> anyhow::Result<()> {
    let tools = m.tools();
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    for want in ["echo", "get_sum", "trigger_long_running_operation"] {
        let n = format!("mcp_{name}_{want}");
        assert!(tools.get(&n).is_some(), "{n} missing from {names:?}");
    }
    let echo = tools.get(&format!("mcp_{name}_echo")).unwrap();
    assert_eq!((echo.server.as_str(), echo.tool.as_str()), (name, "echo"));
    assert!(
        names.iter().all(|n| n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')),
        "{names:?}"
    );
    // get-sum's raw name has a dash; the sanitized one reaches it.
    assert_eq!(
        tools.get(&format!("mcp_{name}_get_sum")).unwrap().tool,
        "get-sum"
    );

    // A plain call.
    let out = m
        .call_tool(
            &format!("mcp_{name}_echo"),
            args(json!({"message": "hello from switchboard"})),
            None,
        )
        .await?;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.text, "Echo: hello from switchboard");
    assert_eq!((out.server.as_str(), out.tool.as_str()), (name, "echo"));
    let sum = m
        .call_tool(
            &format!("mcp_{name}_get_sum"),
            args(json!({"a": 2, "b": 40})),
            None,
        )
        .await?;
    assert!(!sum.is_error && sum.text.contains("42"), "{sum:?}");

    // A tool error: invalid arguments come back as an isError result.
    let bad = m
        .call_tool(
            &format!("mcp_{name}_echo"),
            args(json!({"message": 7})),
            None,
        )
        .await?;
    assert!(bad.is_error, "{bad:?}");
    assert!(bad.text.starts_with("Error: "), "{}", bad.text);
    assert!(
        bad.text.contains("validation") || bad.text.contains("Invalid"),
        "{}",
        bad.text
    );
    eprintln!("{name}: invalid arguments -> {}", bad.text);
    // A tool the server does not have (raw call, bypassing the index).
    let missing = m.call_raw(name, "no-such-tool", None, None).await;
    eprintln!("{name}: unknown raw tool -> {missing:?}");
    match missing {
        Ok(o) => assert!(
            o.is_error && o.text.starts_with("Error: ") && o.text.contains("no-such-tool"),
            "{o:?}"
        ),
        Err(e) => assert!(e.to_string().starts_with("MCP error: "), "{e}"),
    }

    // A long-running call, cancelled after 300 ms.
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        c2.cancel();
    });
    let t0 = Instant::now();
    let r = m
        .call_tool(
            &format!("mcp_{name}_trigger_long_running_operation"),
            args(json!({"duration": 30, "steps": 30})),
            Some(cancel),
        )
        .await;
    assert_eq!(r.unwrap_err(), CallError::Aborted);
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "abort took {:?}",
        t0.elapsed()
    );
    eprintln!("{name}: long-running call aborted after {:?}", t0.elapsed());
    // The session survives the cancellation.
    let again = m
        .call_tool(
            &format!("mcp_{name}_echo"),
            args(json!({"message": "still here"})),
            None,
        )
        .await?;
    assert_eq!(again.text, "Echo: still here");
    assert_eq!(m.status(name), Some(ServerStatus::Connected));
    Ok(())
}

#[tokio::test]
async fn server_everything_over_stdio() -> anyhow::Result<()> {
    let Some(js) = everything_js("server_everything_over_stdio") else {
        return Ok(());
    };
    let m = Manager::new(opts());
    let r = m
        .start(vec![Wanted::new(ServerDef::stdio(
            "everything",
            "node",
            &[js.to_str().unwrap(), "stdio"],
        ))])
        .await;
    assert_eq!(
        r.connected,
        ["everything"],
        "{r:?}\nlogs: {:?}",
        m.logs("everything")
    );
    let st = m.state("everything").unwrap();
    assert_eq!(st.transport_used, Some("stdio"), "{st:?}");
    let pid = st.pid.expect("a stdio server reports its pid");
    assert!(pid_alive(pid));
    let group = group_members(pid);
    assert!(
        group.contains(&pid),
        "the server leads its own process group: {group:?}"
    );

    exercise(&m, "everything").await?;

    m.shutdown().await;
    for p in group.iter().chain([&pid]) {
        assert!(
            wait_gone(*p).await,
            "process {p} of server-everything is still running after shutdown"
        );
    }
    assert!(
        group_members(pid).is_empty(),
        "process group {pid} still has members"
    );
    Ok(())
}

/// server-everything's streamable HTTP mode, on a free port (`PORT`).
struct HttpEverything {
    child: tokio::process::Child,
    url: String,
}

async fn spawn_http_everything(js: &Path) -> anyhow::Result<HttpEverything> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut child = tokio::process::Command::new("node")
        .arg(js)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = stderr.next_line().await? {
            if line.contains("listening on port") {
                return Ok(());
            }
            eprintln!("server-everything: {line}");
        }
        anyhow::bail!("server-everything (streamableHttp) exited before listening")
    })
    .await;
    match ready {
        Ok(r) => r?,
        Err(_) => anyhow::bail!("server-everything (streamableHttp) did not listen within 20 s"),
    }
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    Ok(HttpEverything {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    })
}

#[tokio::test]
async fn server_everything_over_streamable_http() -> anyhow::Result<()> {
    let Some(js) = everything_js("server_everything_over_streamable_http") else {
        return Ok(());
    };
    let mut srv = spawn_http_everything(&js).await?;
    let server_pid = srv.child.id().unwrap();
    let m = Manager::new(opts());
    let r = m
        .start(vec![Wanted::new(ServerDef::remote(
            "everything_http",
            Transport::Http,
            &srv.url,
        ))])
        .await;
    assert_eq!(
        r.connected,
        ["everything_http"],
        "{r:?}\nlogs: {:?}",
        m.logs("everything_http")
    );
    let st = m.state("everything_http").unwrap();
    assert_eq!(st.transport_used, Some("streamable-http"), "{st:?}");
    assert_eq!(st.pid, None, "a remote server has no local process");
    assert!(st.protocol_version.is_some(), "{st:?}");

    exercise(&m, "everything_http").await?;

    m.shutdown().await;
    assert!(m.server_names().is_empty());
    // The server we started is ours to stop.
    srv.child.kill().await?;
    assert!(
        wait_gone(server_pid).await,
        "server-everything {server_pid} still running"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Resources, prompts, subscriptions, list_changed and elicitation (stdio).
// What the pinned server-everything offers (read from its dist/):
// - resources: every file in dist/docs as `demo://resource/static/document/<file>`;
//   templates `demo://resource/dynamic/{text,blob}/{resourceId}` (not listed as resources);
//   `gzip-file-as-resource` registers `demo://resource/session/<name>` at run time,
//   which sends `notifications/resources/list_changed`.
// - prompts: simple-prompt, args-prompt (city required, state optional:
//   "What's weather in <city>, <state>?"), completable-prompt, resource-prompt.
// - subscriptions: resources/subscribe is recorded; the `toggle-subscriber-updates`
//   tool sends `notifications/resources/updated` for every subscribed URI at once
//   and then every 5 s, until toggled off.
// - tools list_changed: the tools that depend on client capabilities
//   (trigger-elicitation-request, get-roots-list, ...) are registered in
//   `oninitialized`, which sends `notifications/tools/list_changed` once per
//   session. No tool or timer changes the tool or prompt lists later, so
//   PromptsChanged cannot be triggered against this server.
// - elicitation: `trigger-elicitation-request` (registered only because we
//   declare the elicitation capability) sends elicitation/create and prints
//   the accepted fields ("- Name: ...", "- Favorite Integer: ...").

const SERVER: &str = "everything";

/// A manager with server-everything connected over stdio as `everything`,
/// plus an event receiver subscribed before the start; `None` when skipped.
async fn start_everything(test: &str) -> Option<(Manager, broadcast::Receiver<EngineEvent>)> {
    let js = everything_js(test)?;
    let m = Manager::new(opts());
    let rx = m.subscribe();
    let r = m
        .start(vec![Wanted::new(ServerDef::stdio(
            SERVER,
            "node",
            &[js.to_str().unwrap(), "stdio"],
        ))])
        .await;
    assert_eq!(r.connected, [SERVER], "{r:?}\nlogs: {:?}", m.logs(SERVER));
    Some((m, rx))
}

/// The first event matching `pred` within `within`, skipping others.
async fn next_event(
    rx: &mut broadcast::Receiver<EngineEvent>,
    within: Duration,
    mut pred: impl FnMut(&EngineEvent) -> bool,
) -> Option<EngineEvent> {
    tokio::time::timeout(within, async {
        loop {
            match rx.recv().await {
                Ok(e) if pred(&e) => return Some(e),
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
    .await
    .ok()
    .flatten()
}

/// Waits until the tool index holds `name` (tools registered after initialize).
async fn wait_tool(m: &Manager, name: &str) {
    let until = Instant::now() + Duration::from_secs(10);
    while m.tools().get(name).is_none() {
        assert!(
            Instant::now() < until,
            "{name} never appeared: {:?}",
            m.tools().tools.iter().map(|t| &t.name).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn uris(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r[field].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn server_everything_resources_and_templates() -> anyhow::Result<()> {
    let Some((m, _rx)) = start_everything("server_everything_resources_and_templates").await else {
        return Ok(());
    };

    let list = m.list_resources(SERVER).await?;
    let resources = uris(&list, "resources", "uri");
    let templates = uris(&list, "resourceTemplates", "uriTemplate");
    eprintln!("resources: {resources:?}\ntemplates: {templates:?}");
    let features = "demo://resource/static/document/features.md";
    assert!(resources.iter().any(|u| u == features), "{resources:?}");
    assert!(
        resources.iter().all(|u| u.starts_with("demo://resource/")),
        "{resources:?}"
    );
    for t in [
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
    ] {
        assert!(
            templates.iter().any(|u| u == t),
            "{t} missing from {templates:?}"
        );
    }
    let md = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == features)
        .unwrap();
    assert_eq!(md["mimeType"], "text/markdown", "{md}");

    // A static resource: the document's text, as on disk.
    let read = m.read_resource(SERVER, features).await?;
    let c = &read["contents"][0];
    assert_eq!(c["uri"], features, "{read}");
    let text = c["text"].as_str().expect("a text resource");
    let on_disk = std::fs::read_to_string(
        npm_dir()
            .join("node_modules/@modelcontextprotocol/server-everything/dist/docs/features.md"),
    )?;
    assert_eq!(text, on_disk);
    assert!(!text.trim().is_empty());

    // Resources behind the templates, text and blob.
    let dynamic = m
        .read_resource(SERVER, "demo://resource/dynamic/text/7")
        .await?;
    let t = dynamic["contents"][0]["text"].as_str().unwrap_or_default();
    assert!(
        t.starts_with("Resource 7: This is a plaintext resource"),
        "{dynamic}"
    );
    let blob = m
        .read_resource(SERVER, "demo://resource/dynamic/blob/3")
        .await?;
    let b = blob["contents"][0]["blob"].as_str().unwrap_or_default();
    // base64 of "Resource 3: " starts "UmVzb3VyY2UgMzog".
    assert!(b.starts_with("UmVzb3VyY2UgMzog"), "{blob}");

    // Unknown resource: a clear MCP error, the session survives.
    let missing = m
        .read_resource(SERVER, "demo://resource/static/document/no-such-file.md")
        .await;
    assert!(matches!(missing, Err(RegistryError::Mcp(_))), "{missing:?}");
    assert_eq!(m.status(SERVER), Some(ServerStatus::Connected));

    m.shutdown().await;
    assert!(m.server_names().is_empty());
    Ok(())
}

#[tokio::test]
async fn server_everything_prompts_with_arguments() -> anyhow::Result<()> {
    let Some((m, _rx)) = start_everything("server_everything_prompts_with_arguments").await else {
        return Ok(());
    };

    let list = m.list_prompts(SERVER).await?;
    let names = uris(&list, "prompts", "name");
    eprintln!("prompts: {names:?}");
    for want in [
        "simple-prompt",
        "args-prompt",
        "completable-prompt",
        "resource-prompt",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    let args_prompt = list["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "args-prompt")
        .unwrap();
    let declared: Vec<(String, bool)> = args_prompt["arguments"]
        .as_array()
        .expect("args-prompt declares arguments")
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap_or_default().to_string(),
                a["required"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert!(declared.contains(&("city".into(), true)), "{declared:?}");
    assert!(declared.contains(&("state".into(), false)), "{declared:?}");

    let got = m
        .get_prompt(
            SERVER,
            "args-prompt",
            args(json!({"city": "Lisbon", "state": "Estremadura"})),
        )
        .await?;
    assert_eq!(got["messages"][0]["role"], "user", "{got}");
    assert_eq!(
        got["messages"][0]["content"]["text"], "What's weather in Lisbon, Estremadura?",
        "{got}"
    );
    // The optional argument left out.
    let got = m
        .get_prompt(SERVER, "args-prompt", args(json!({"city": "Porto"})))
        .await?;
    assert_eq!(
        got["messages"][0]["content"]["text"], "What's weather in Porto?",
        "{got}"
    );
    // Non-string values are sent as text (prompt arguments are strings in MCP).
    let got = m
        .get_prompt(
            SERVER,
            "resource-prompt",
            args(json!({"resourceType": "Text", "resourceId": 5})),
        )
        .await?;
    let all = got["messages"].to_string();
    assert!(
        all.contains("resource with id: 5") && all.contains("demo://resource/dynamic/text/5"),
        "{got}"
    );
    let simple = m.get_prompt(SERVER, "simple-prompt", None).await?;
    assert_eq!(
        simple["messages"][0]["content"]["text"], "This is a simple prompt without arguments.",
        "{simple}"
    );

    // A missing required argument and an unknown prompt are MCP errors.
    let bad = m
        .get_prompt(SERVER, "args-prompt", args(json!({"state": "Nowhere"})))
        .await;
    assert!(matches!(bad, Err(RegistryError::Mcp(_))), "{bad:?}");
    let unknown = m.get_prompt(SERVER, "no-such-prompt", None).await;
    assert!(matches!(unknown, Err(RegistryError::Mcp(_))), "{unknown:?}");
    assert_eq!(m.status(SERVER), Some(ServerStatus::Connected));

    m.shutdown().await;
    assert!(m.server_names().is_empty());
    Ok(())
}

#[tokio::test]
async fn server_everything_resource_subscription_updates() -> anyhow::Result<()> {
    let Some((m, mut rx)) =
        start_everything("server_everything_resource_subscription_updates").await
    else {
        return Ok(());
    };
    let uri = "demo://resource/static/document/features.md";
    m.subscribe_resource(SERVER, uri).await?;

    // Updates for subscribed resources start with this tool (one at once, then every 5 s).
    let toggle = format!("mcp_{SERVER}_toggle_subscriber_updates");
    let on = m.call_tool(&toggle, None, None).await?;
    assert!(
        !on.is_error
            && on
                .text
                .starts_with("Started simulated resource updated notifications"),
        "{on:?}"
    );
    let t0 = Instant::now();
    let is_ours = |e: &EngineEvent| matches!(e, EngineEvent::ResourceUpdated { server, uri: u } if server == SERVER && u == uri);
    let first = next_event(&mut rx, Duration::from_secs(20), is_ours).await;
    assert!(
        first.is_some(),
        "no ResourceUpdated for {uri} within 20 s; logs: {:?}",
        m.logs(SERVER)
    );
    // And again on the server's 5 s timer.
    let second = next_event(&mut rx, Duration::from_secs(20), is_ours).await;
    assert!(
        second.is_some(),
        "only one ResourceUpdated for {uri} within 20 s"
    );
    eprintln!("two updates for {uri} after {:?}", t0.elapsed());

    // Unsubscribed and toggled off: no more updates.
    m.unsubscribe_resource(SERVER, uri).await?;
    let off = m.call_tool(&toggle, None, None).await?;
    assert!(
        off.text.starts_with("Stopped simulated resource updates"),
        "{off:?}"
    );
    while rx.try_recv().is_ok() {}
    let late = next_event(&mut rx, Duration::from_secs(6), is_ours).await;
    assert!(late.is_none(), "update after unsubscribing: {late:?}");

    m.shutdown().await;
    assert!(m.server_names().is_empty());
    Ok(())
}

#[tokio::test]
async fn server_everything_list_changed() -> anyhow::Result<()> {
    let Some((m, mut rx)) = start_everything("server_everything_list_changed").await else {
        return Ok(());
    };

    // Tools: server-everything registers its capability-dependent tools in
    // `oninitialized` and sends tools/list_changed once; the engine re-lists
    // (a second, live Tools event) and the index has those tools.
    let tools_events = |e: &EngineEvent| matches!(e, EngineEvent::Tools { server, count, deferred: false } if server == SERVER && *count > 0);
    assert!(
        next_event(&mut rx, Duration::from_secs(10), tools_events)
            .await
            .is_some(),
        "no Tools event after connecting"
    );
    let relisted = next_event(&mut rx, Duration::from_secs(10), tools_events).await;
    assert!(
        relisted.is_some(),
        "tools/list_changed at initialize did not re-list the tools"
    );
    wait_tool(&m, &format!("mcp_{SERVER}_trigger_elicitation_request")).await;
    wait_tool(&m, &format!("mcp_{SERVER}_get_roots_list")).await;

    // Resources: gzip-file-as-resource registers a session resource, which
    // sends resources/list_changed; the new resource is listed and readable.
    let before = uris(&m.list_resources(SERVER).await?, "resources", "uri");
    let made = m
        .call_tool(
            &format!("mcp_{SERVER}_gzip_file_as_resource"),
            args(json!({"name": "switchboard.txt.gz", "data": "data:text/plain,hello%20from%20switchboard", "outputType": "resourceLink"})),
            None,
        )
        .await?;
    let new_uri = "demo://resource/session/switchboard.txt.gz";
    assert!(!made.is_error && made.text.contains(new_uri), "{made:?}");
    let changed = next_event(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, EngineEvent::ResourcesChanged { server } if server == SERVER),
    )
    .await;
    assert!(
        changed.is_some(),
        "no ResourcesChanged after a resource was added"
    );
    let after = uris(&m.list_resources(SERVER).await?, "resources", "uri");
    assert!(
        !before.iter().any(|u| u == new_uri) && after.iter().any(|u| u == new_uri),
        "before {before:?}\nafter {after:?}"
    );
    let read = m.read_resource(SERVER, new_uri).await?;
    assert_eq!(
        read["contents"][0]["mimeType"], "application/gzip",
        "{read}"
    );
    // gzip magic 1f 8b 08 in base64.
    assert!(
        read["contents"][0]["blob"]
            .as_str()
            .unwrap_or_default()
            .starts_with("H4sI"),
        "{read}"
    );

    // Prompts: server-everything never changes its prompt list after
    // initialize (no tool or timer does), so PromptsChanged is not tested here.

    m.shutdown().await;
    assert!(m.server_names().is_empty());
    Ok(())
}

#[tokio::test]
async fn server_everything_elicitation_through_the_hook() -> anyhow::Result<()> {
    let Some((m, _rx)) = start_everything("server_everything_elicitation_through_the_hook").await
    else {
        return Ok(());
    };
    let tool = format!("mcp_{SERVER}_trigger_elicitation_request");
    wait_tool(&m, &tool).await;

    let seen: Arc<Mutex<Vec<ElicitRequest>>> = Arc::default();
    let seen2 = seen.clone();
    m.set_elicitation_handler(Some(Arc::new(move |req: ElicitRequest| {
        seen2.lock().unwrap().push(req);
        Box::pin(async { ElicitAnswer::Accept(json!({"name": "Ada Lovelace", "check": true, "integer": 7, "email": "ada@example.com"})) })
    })));
    let out = m.call_tool(&tool, None, None).await?;
    assert!(!out.is_error, "{out:?}");
    for want in [
        "User provided the requested information",
        "- Name: Ada Lovelace",
        "- Agreed to terms: true",
        "- Favorite Integer: 7",
        "- Email: ada@example.com",
    ] {
        assert!(
            out.text.contains(want),
            "{want:?} missing from {}",
            out.text
        );
    }
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].server, SERVER);
        assert_eq!(
            seen[0].message,
            "Please provide inputs for the following fields:"
        );
        assert_eq!(
            seen[0].schema["properties"]["name"]["type"], "string",
            "{}",
            seen[0].schema
        );
        assert_eq!(seen[0].schema["required"], json!(["name"]));
    }

    // Declining and cancelling reach the server too.
    m.set_elicitation_handler(Some(Arc::new(|_req: ElicitRequest| {
        Box::pin(async { ElicitAnswer::Cancel })
    })));
    let cancelled = m.call_tool(&tool, None, None).await?;
    assert!(
        cancelled
            .text
            .contains("User cancelled the elicitation dialog"),
        "{}",
        cancelled.text
    );
    // No handler: the engine declines.
    m.set_elicitation_handler(None);
    let declined = m.call_tool(&tool, None, None).await?;
    assert!(
        declined
            .text
            .contains("User declined to provide the requested information"),
        "{}",
        declined.text
    );
    assert!(!declined.text.contains("Ada Lovelace"));
    assert_eq!(m.status(SERVER), Some(ServerStatus::Connected));

    m.shutdown().await;
    assert!(m.server_names().is_empty());
    Ok(())
}
