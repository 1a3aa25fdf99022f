//! Secrets stay out of text (issue 11, point 7): a secret configured in a URL query, a
//! header and an env var never appears in what a person or a log sees when
//! the servers fail: events, log lines, `lastError`, warnings, statuses, and
//! the CLI's output. Each secret reaches a place that would print it: the
//! URL is in the connection error, the env var is echoed on stderr.

use std::process::Command;
use std::time::Duration;

use indexmap::IndexMap;
use serde_json::json;
use switchboard_engine::config::{RestartPolicy, ServerDef, Transport};
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};

const URL_SECRET: &str = "url-secret-7f3a9c";
const HEADER_SECRET: &str = "header-secret-51be";
const ENV_SECRET: &str = "env-secret-c0ffee";

fn vars() -> std::collections::HashMap<String, String> {
    let mut env: std::collections::HashMap<String, String> = std::env::vars().collect();
    env.insert("SB_URL_SECRET".into(), URL_SECRET.into());
    env.insert("SB_HEADER_SECRET".into(), HEADER_SECRET.into());
    env.insert("SB_ENV_SECRET".into(), ENV_SECRET.into());
    env
}

fn once() -> Option<RestartPolicy> {
    Some(RestartPolicy {
        initial_delay_ms: 10,
        max_delay_ms: 10,
        backoff_multiplier: 1.0,
        max_restart_attempts: 1,
    })
}

fn servers() -> Vec<Wanted> {
    // Port 9 (discard) is closed on loopback: the error names the URL.
    let mut remote = ServerDef::remote(
        "remote",
        Transport::Http,
        "http://127.0.0.1:9/mcp?key=${SB_URL_SECRET}&mode=plain",
    );
    remote.headers = IndexMap::from([("X-Api-Key".to_string(), "${SB_HEADER_SECRET}".to_string())]);
    remote.restart_policy = once();
    let mut legacy = ServerDef::remote(
        "legacy",
        Transport::Sse,
        "http://127.0.0.1:9/sse?token=${SB_URL_SECRET}",
    );
    legacy.headers = IndexMap::from([(
        "Authorization".to_string(),
        "Bearer ${SB_HEADER_SECRET}".to_string(),
    )]);
    legacy.restart_policy = once();
    let mut local = ServerDef::stdio(
        "local",
        "sh",
        &[
            "-c",
            "echo \"starting with key $API_KEY\" >&2; echo \"fatal: bad key $API_KEY\"; exit 3",
        ],
    );
    local.env = IndexMap::from([("API_KEY".to_string(), "${SB_ENV_SECRET}".to_string())]);
    local.restart_policy = once();
    vec![Wanted::new(remote), Wanted::new(legacy), Wanted::new(local)]
}

fn assert_clean(what: &str, text: &str) {
    for s in [URL_SECRET, HEADER_SECRET, ENV_SECRET] {
        assert!(!text.contains(s), "{what} shows the secret {s}:\n{text}");
    }
}

#[tokio::test]
async fn secrets_never_reach_events_logs_or_errors() -> anyhow::Result<()> {
    let m = Manager::new(ManagerOptions {
        env: vars(),
        ..ManagerOptions::default()
    });
    let mut rx = m.subscribe();
    m.start(servers()).await;
    m.settle().await;
    let mut seen = String::new();
    while let Ok(ev) = rx.try_recv() {
        seen.push_str(&serde_json::to_string(&ev)?);
        seen.push('\n');
    }
    let states = serde_json::to_string_pretty(&m.states())?;
    let logs: String = ["remote", "legacy", "local"]
        .iter()
        .flat_map(|s| m.logs(s).unwrap_or_default())
        .map(|l| l.text + "\n")
        .collect();
    // The places the secrets would have been are there, masked.
    assert!(
        logs.contains("starting with key •••"),
        "the stderr line is kept with the value masked:\n{logs}"
    );
    assert!(
        states.contains("127.0.0.1:9") && states.contains("•••"),
        "the URL is named, its secret masked:\n{states}"
    );
    assert_clean("events", &seen);
    assert_clean("states (lastError, status, warnings)", &states);
    assert_clean("logs", &logs);
    m.shutdown().await;
    Ok(())
}

#[test]
fn the_cli_prints_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join(".config/switchboard/servers.json");
    std::fs::create_dir_all(own.parent().unwrap()).unwrap();
    let servers = json!({
        "remote": { "type": "http", "url": "http://127.0.0.1:9/mcp?key=${SB_URL_SECRET}", "headers": { "X-Api-Key": "${SB_HEADER_SECRET}" }, "restartPolicy": { "maxRestartAttempts": 0 } },
        "local": { "command": "sh", "args": ["-c", "echo \"key $API_KEY\" >&2; exit 3"], "env": { "API_KEY": "${SB_ENV_SECRET}" }, "restartPolicy": { "maxRestartAttempts": 0 } }
    });
    std::fs::write(
        &own,
        serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap(),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(args)
            .env_clear()
            .env("HOME", dir.path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SWITCHBOARD_SYSTEM_ROOT", dir.path().join("sys"))
            .env("SB_URL_SECRET", URL_SECRET)
            .env("SB_HEADER_SECRET", HEADER_SECRET)
            .env("SB_ENV_SECRET", ENV_SECRET)
            .output()
            .unwrap();
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let status = run(&["status"]);
    assert!(
        status.contains("remote") && status.contains("127.0.0.1:9"),
        "the CLI reports the failure:\n{status}"
    );
    assert_clean("switchboard status", &status);
    let logs = run(&["logs", "local"]);
    assert!(
        logs.contains("key •••"),
        "the stderr line is shown masked:\n{logs}"
    );
    assert_clean("switchboard logs", &logs);
    let _ = Duration::ZERO;
}
