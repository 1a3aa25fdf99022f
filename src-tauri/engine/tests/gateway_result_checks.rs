//! Checks on what comes back, at the gateway: an MCP client (rmcp's) calls
//! the `fixture-tricky-results` server through the aggregate. In `warn`
//! (the default) every tricky answer reaches the client with Switchboard's
//! note first, and the secret it echoes is masked; in `block` (set as
//! `switchboard checks set` writes it, in the settings file) the client gets
//! a tool error or an MCP error that names what was found and how to allow
//! it, while a clean answer still passes. Every request is in the call
//! journal with its findings, the secret in none of them.

use std::time::Duration;

use rmcp::model::*;
use serde_json::{json, Value};
use switchboard_engine::gateway::switches;
use switchboard_engine::journal::Filter;
use switchboard_engine::settings::ResultMode;

const SECRET: &str = "tricky-secret-value-9e1f3b";
const T: Duration = Duration::from_secs(20);

fn texts(r: &CallToolResult) -> Vec<String> {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test]
async fn answers_are_noted_in_warn_refused_in_block_masked_always_and_journaled() {
    let fixture = switchboard_tests::fixture_server_path();
    let tricky = switchboard_tests::tricky_results_server_path();
    let home = switchboard_tests::TempHome::with_servers(json!({
        "mail": { "command": fixture, "args": ["--name", "mail", "--tool", "send_email"] },
        "tricky": { "command": tricky, "env": { "TRICKY_SECRET": SECRET } }
    }));
    let host = home.host();
    let engine = switchboard_tests::in_process::engine(&host);
    let report = engine.start().await;
    assert_eq!(report.connected.len(), 2, "{report:?}");
    let journal = engine.manager().open_journal(&host, &engine.settings());
    let gateway = switchboard_tests::in_process::gateway(&engine, &host);
    let client = switchboard_tests::in_process::client(gateway.session()).await;
    let call = |name: &'static str| {
        let client = &client;
        async move {
            tokio::time::timeout(
                T,
                client.call_tool(CallToolRequestParams::new(format!("mcp_tricky_{name}"))),
            )
            .await
            .expect("answered in time")
            .unwrap()
        }
    };

    // warn (the default): the answer with the note first; the secret masked.
    for (tool, rule) in [
        ("injected", "instruction-override"),
        ("tag_payload", "hidden-tag-characters"),
        ("exfil_image", "image-link-data"),
        ("echo_secret", "known-secret"),
    ] {
        let r = call(tool).await;
        let t = texts(&r);
        assert!(
            t[0].starts_with("Switchboard: this result from the server \"tricky\"")
                && t[0].contains(rule),
            "{tool}: {t:?}"
        );
        assert!(t.len() >= 2 && r.is_error != Some(true), "{tool}: {t:?}");
        let all = serde_json::to_string(&r).unwrap();
        assert!(
            !all.contains(SECRET),
            "{tool}: the secret reached the client: {all}"
        );
    }
    let clean = call("clean").await;
    assert_eq!(
        texts(&clean),
        vec!["The weather in Paris is 18°C and sunny."]
    );

    // block, written as `switchboard checks set tricky block` writes it.
    switchboard_engine::tool_trust::results::save_mode(&host, "tricky", ResultMode::Block).unwrap();
    switches::nudge(&host);
    let deadline = std::time::Instant::now() + T;
    let blocked = loop {
        let r = call("injected").await;
        if r.is_error == Some(true) || std::time::Instant::now() > deadline {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let t = texts(&blocked).join("\n");
    assert!(
        blocked.is_error == Some(true)
            && t.contains("instruction-override")
            && t.contains("switchboard checks set tricky warn"),
        "{t}"
    );
    assert!(!t.contains("Ignore all previous instructions"), "{t}");
    let clean = call("clean").await;
    assert!(
        clean.is_error != Some(true) && texts(&clean).len() == 1,
        "a clean answer still passes: {clean:?}"
    );
    let read = client
        .read_resource(ReadResourceRequestParams::new(
            "switchboard://tricky/tricky://notes",
        ))
        .await;
    let e = format!("{:?}", read.expect_err("the resource is refused"));
    assert!(e.contains("tricky"), "{e}");
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("mcp_tricky_summarize"))
        .await;
    assert!(prompt.is_err(), "the prompt is refused: {prompt:?}");

    // The journal has every request, with what was found; no secret.
    journal.flush();
    let page = journal.query(&Filter::default()).unwrap();
    let tricky_entries: Vec<Value> = page
        .entries
        .iter()
        .filter(|e| e.server == "tricky")
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    // Five tools in warn, the blocked call (maybe more than once, while the
    // settings file reached the gateway), a clean one, the resource, the prompt.
    let names: std::collections::BTreeSet<&str> = tricky_entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "clean",
            "echo_secret",
            "exfil_image",
            "injected",
            "summarize",
            "tag_payload",
            "tricky://notes"
        ]
        .into(),
        "{tricky_entries:#?}"
    );
    assert!(tricky_entries.len() >= 9, "{tricky_entries:#?}");
    let echo = tricky_entries
        .iter()
        .find(|e| e["name"] == "echo_secret")
        .unwrap();
    assert!(
        echo["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "known-secret"),
        "{echo}"
    );
    assert!(
        !serde_json::to_string(&tricky_entries)
            .unwrap()
            .contains(SECRET),
        "no secret in the journal"
    );
    assert!(tricky_entries
        .iter()
        .any(|e| e["kind"] == "resource" && !e["findings"].as_array().unwrap().is_empty()));
    // What the client got: the refused answers are errors in the journal
    // too (a tool error for the tool, MCP errors for the others).
    let refused: std::collections::BTreeSet<(&str, &str)> = tricky_entries
        .iter()
        .filter(|e| e["errorClass"] == "blocked")
        .map(|e| (e["name"].as_str().unwrap(), e["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        refused,
        [
            ("injected", "toolError"),
            ("summarize", "protocolError"),
            ("tricky://notes", "protocolError")
        ]
        .into(),
        "{tricky_entries:#?}"
    );
    client.cancel().await.unwrap();
    engine.manager().shutdown().await;
}
