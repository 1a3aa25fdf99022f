//! A team gateway added to the Team source, as the desktop app does it: the
//! gateway (`switchboard serve --config DIR --oidc-issuer URL --resource
//! URL`, a real process) answers 401, so it waits for a sign-in; the sign-in
//! goes through the identity-provider stand-in like any OAuth server's
//! (discovery from the gateway's RFC 9728 metadata, dynamic registration,
//! PKCE, the browser coming back to 127.0.0.1); connected, the gateway is
//! known by its `serverInfo` and lists the team servers this person's groups
//! may use, each with its tools.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_engine::auth::oauth::BrowserOpener;
use switchboard_engine::config::{ServerDef, Transport};
use switchboard_engine::engine::{Engine, ServerView};
use switchboard_engine::events::ServerStatus;
use switchboard_engine::gateway::TEAM_SERVER_NAME;
use switchboard_engine::sources::TEAM_SOURCE_ID;
use switchboard_engine::writer::edit::ServerEdit;
use switchboard_tests::idp::Idp;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const T: Duration = Duration::from_secs(60);

fn write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// A team gateway on 127.0.0.1 whose `--resource` is the URL it serves
/// (the port is chosen first, so the two agree), for the `engineering`
/// group: the fixture server `fx`. Returns the process and its `/mcp` URL.
async fn team_gateway(dir: &Path, idp: &Idp) -> (tokio::process::Child, String) {
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    let fixture = switchboard_tests::fixture_server_path();
    write(
        &config.join("servers.json"),
        &json!({ "mcpServers": {
            "fx": { "command": fixture, "args": ["--name", "fx"] },
            "other": { "command": fixture, "args": ["--name", "other"] }
        }}),
    );
    write(
        &config.join("settings.json"),
        &json!({ "profiles": { "list": [
            { "name": "dev", "servers": [{ "name": "fx" }] },
            { "name": "ops", "servers": [{ "name": "other" }] }
        ]}}),
    );
    write(
        &config.join("team.json"),
        &json!({ "access": [
            { "group": "engineering", "profiles": ["dev"] },
            { "group": "operations", "profiles": ["ops"] }
        ]}),
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let state = dir.join("state");
    let mut c = tokio::process::Command::new(BIN);
    c.args(["serve", "--http", &format!("127.0.0.1:{port}"), "--config"])
        .arg(&config)
        .args(["--oidc-issuer", &idp.url, "--resource", &url, "--state"])
        .arg(&state)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &state)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true);
    let mut child = c.spawn().unwrap();
    // The gateway says where it listens.
    let (line, _) = switchboard_tests::first_line(&mut child, T).await;
    let v: Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: first line {line:?}"));
    assert_eq!(
        v["url"],
        url.as_str(),
        "it serves the URL it was told is its own"
    );
    let ready = format!("http://127.0.0.1:{port}/readyz");
    let until = Instant::now() + T;
    while !reqwest::get(&ready).await.is_ok_and(|r| r.status() == 200) {
        assert!(Instant::now() < until, "the gateway did not get ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (child, url)
}

/// The browser: the stand-in approves at once and redirects to the
/// engine's listener on 127.0.0.1.
fn browser() -> BrowserOpener {
    Arc::new(|url: &str| {
        let url = url.to_string();
        tokio::spawn(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            let r = http.get(&url).send().await.unwrap();
            assert_eq!(r.status(), 302, "the stand-in approves at once");
            let back = r.headers()["location"].to_str().unwrap().to_string();
            http.get(back).send().await.unwrap();
        });
        Ok(())
    })
}

async fn wait_for(e: &Engine, name: &str, done: impl Fn(&ServerView) -> bool) -> ServerView {
    let until = Instant::now() + T;
    loop {
        if let Some(s) = e
            .servers()
            .into_iter()
            .find(|s| s.discovered.name() == name)
        {
            if done(&s) {
                return s;
            }
            assert!(
                Instant::now() < until,
                "{name}: {:?}",
                s.runtime.map(|r| r.status)
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_gateway_added_to_the_team_source_signs_in_and_shows_the_team_servers(
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let idp = Idp::start().await;
    let (mut gateway, url) = team_gateway(dir.path(), &idp).await;
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home)?;
    let e = switchboard_tests::desktop_engine(&home).await;

    e.edit(
        TEAM_SOURCE_ID,
        ServerEdit::Add(ServerDef::remote("acme", Transport::Http, &url)),
    )
    .await?;
    let waiting = wait_for(&e, "acme", |s| {
        matches!(
            s.runtime.as_ref().map(|r| &r.status),
            Some(ServerStatus::NeedsAuth { .. })
        )
    })
    .await;
    assert_eq!(waiting.discovered.winner.source, TEAM_SOURCE_ID);
    assert_eq!(
        waiting.team_servers, None,
        "nothing is known before sign-in"
    );

    e.sign_in("acme", Some(browser()), T).await?;
    let s = wait_for(&e, "acme", |s| s.team_servers.is_some()).await;
    let rt = s.runtime.as_ref().unwrap();
    assert_eq!(rt.status, ServerStatus::Connected);
    assert_eq!(rt.server_info.as_ref().unwrap().name, TEAM_SERVER_NAME);
    let team = s.team_servers.unwrap();
    assert_eq!(
        team.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["fx"],
        "only what the engineering group may use: {team:?}"
    );
    let tools: Vec<(&str, &str)> = team[0]
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.tool.as_str()))
        .collect();
    for fixed in switchboard_tests::FIXED_TOOLS {
        let gateway_name = format!("mcp_fx_{fixed}");
        assert!(
            tools.contains(&(fixed, gateway_name.as_str())),
            "{fixed} as {gateway_name}: {tools:?}"
        );
    }
    assert_eq!(rt.tool_count, tools.len(), "every tool is a team server's");

    // The team server's tools are called through the gateway as any tool.
    let index = e.manager().tools();
    let echo = index
        .tools
        .iter()
        .find(|t| t.server == "acme" && t.tool == "mcp_fx_echo")
        .expect("the team server's echo is listed under acme");
    assert_eq!(
        echo.name, "mcp_acme_fx_echo",
        "the desktop's clients see it with one mcp_ prefix"
    );
    let args = json!({"text": "from the desktop"});
    let out = e
        .call_tool(&echo.name, args.as_object().cloned(), None, "test")
        .await?;
    assert_eq!(out.text, "from the desktop");

    e.manager().shutdown().await;
    gateway.kill().await?;
    Ok(())
}
