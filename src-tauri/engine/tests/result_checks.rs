//! Checks on what comes back, on real answers: the `fixture-tricky-results`
//! server runs under the manager beside a `fixture-server` "mail" that
//! offers `send_email`; each of its tools, its resource and its prompt is
//! called as the gateway forwards them, then checked and applied in each
//! mode. The mail server's secret, handed to the tricky server through its
//! environment, is echoed back and must never reach the client.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientRequest, GetPromptRequest, GetPromptRequestParams,
    ReadResourceRequest, ReadResourceRequestParams, ServerResult,
};
use serde_json::{json, Value};
use switchboard_engine::config::ServerDef;
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
use switchboard_engine::redact::Redactor;
use switchboard_engine::settings::ResultMode;
use switchboard_engine::tool_trust::results::{
    check_result, guard_prompt, guard_resource, guard_tool, Action, ResultContext, ResultKind,
    ToolOwners,
};
use switchboard_tests::{fixture_server_path, tricky_results_server_path};
use tokio_util::sync::CancellationToken;

const SECRET: &str = "mail-smtp-password-5f3a9c";

async fn start() -> Manager {
    let m = Manager::new(ManagerOptions {
        gate: Duration::from_millis(250),
        default_timeout: Duration::from_secs(20),
        grace: Duration::from_millis(500),
        env: std::env::vars().collect(),
        home: std::env::temp_dir(),
        ..ManagerOptions::default()
    });
    let fixture = fixture_server_path();
    let mail = ServerDef::stdio(
        "mail",
        fixture.to_str().unwrap(),
        &["--name", "mail", "--tool", "send_email"],
    );
    let tricky_bin = tricky_results_server_path();
    let mut tricky = ServerDef::stdio("tricky", tricky_bin.to_str().unwrap(), &[]);
    tricky.env.insert("TRICKY_SECRET".into(), SECRET.into());
    let report = m.start(vec![Wanted::new(mail), Wanted::new(tricky)]).await;
    assert_eq!(report.connected.len(), 2, "{report:?}");
    m
}

fn owners(m: &Manager) -> ToolOwners {
    let index = m.tools();
    ToolOwners::new(
        index
            .tools
            .iter()
            .map(|t| (t.server.as_str(), t.tool.as_str())),
    )
}

async fn call(m: &Manager, tool: &str) -> rmcp::model::CallToolResult {
    m.forward_call(
        "tricky",
        CallToolRequestParams::new(tool.to_string()),
        CancellationToken::new(),
        None,
    )
    .await
    .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

fn rules(f: &[switchboard_engine::tool_trust::Finding]) -> Vec<&str> {
    f.iter().map(|f| f.rule.as_str()).collect()
}

#[tokio::test]
async fn each_tricky_answer_is_found_noted_blocked_and_masked() -> anyhow::Result<()> {
    let m = start().await;
    let tools = owners(&m);
    let secrets = Redactor::default();
    secrets.set([SECRET.to_string()]);
    let ctx = ResultContext {
        tools: &tools,
        secrets: &secrets,
    };

    // (tool, the rule it must trip)
    let cases = [
        ("injected", "instruction-override"),
        ("injected", "concealment"),
        ("tag_payload", "hidden-tag-characters"),
        ("exfil_image", "image-link-data"),
        ("cross_call", "cross-server-call"),
        ("echo_secret", "known-secret"),
    ];
    for (tool, rule) in cases {
        let r = call(&m, tool).await;
        let v = serde_json::to_value(&r)?;
        let f = check_result("tricky", ResultKind::Tool, &v, &ctx);
        assert!(
            rules(&f).contains(&rule),
            "{tool} should trip {rule}: {f:?}"
        );

        let warned = guard_tool("tricky", ResultMode::Warn, r.clone(), &ctx);
        assert_eq!(warned.action, Action::Noted, "{tool}");
        let note = serde_json::to_value(&warned.result.content[0])?;
        let note = note["text"].as_str().unwrap_or_default().to_string();
        assert!(
            note.starts_with("Switchboard: this result from the server \"tricky\" may contain")
                && note.contains(rule),
            "{tool}: {note}"
        );
        assert_eq!(
            warned.result.content.len(),
            r.content.len() + 1,
            "{tool}: the content stays, after the note"
        );

        let blocked = guard_tool("tricky", ResultMode::Block, r.clone(), &ctx);
        assert_eq!(blocked.action, Action::Blocked);
        assert_eq!(blocked.result.is_error, Some(true), "{tool}");
        let text = serde_json::to_string(&blocked.result)?;
        assert!(
            text.contains(rule) && text.contains("switchboard checks set tricky warn"),
            "{tool}: {text}"
        );

        for mode in [ResultMode::Log, ResultMode::Warn, ResultMode::Block] {
            let g = guard_tool("tricky", mode, r.clone(), &ctx);
            let sent = serde_json::to_string(&g.result)?;
            assert!(!sent.contains(SECRET), "{tool} in {mode:?}: {sent}");
            let findings = serde_json::to_string(&g.findings)?;
            assert!(!findings.contains(SECRET), "{tool}: {findings}");
        }
    }

    // The secret is masked in the text and in structuredContent, even in log.
    let g = guard_tool(
        "tricky",
        ResultMode::Log,
        call(&m, "echo_secret").await,
        &ctx,
    );
    assert_eq!((g.action, g.masked), (Action::Passed, true));
    let v = serde_json::to_value(&g.result)?;
    assert_eq!(v["structuredContent"], json!({ "value": "•••" }));
    assert_eq!(v["content"][0]["text"], "The configured value is •••");

    // A clean answer goes through untouched.
    let clean = call(&m, "clean").await;
    let g = guard_tool("tricky", ResultMode::Block, clean.clone(), &ctx);
    assert!(g.findings.is_empty(), "{:?}", g.findings);
    assert_eq!((g.action, &g.result), (Action::Passed, &clean));

    // A big answer is read up to the bound, and says so.
    let big = m
        .forward_call(
            "tricky",
            CallToolRequestParams::new("big").with_arguments(
                json!({ "bytes": 3_000_000 })
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
            CancellationToken::new(),
            None,
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let g = guard_tool("tricky", ResultMode::Warn, big, &ctx);
    assert_eq!(rules(&g.findings), vec!["checked-in-part"]);
    assert_eq!(g.action, Action::Passed, "a low finding only is recorded");

    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn resources_and_prompts_are_checked_too() -> anyhow::Result<()> {
    let m = start().await;
    let tools = owners(&m);
    let secrets = Redactor::default();
    let ctx = ResultContext {
        tools: &tools,
        secrets: &secrets,
    };
    let ct = CancellationToken::new;

    let read = |uri: &str| {
        ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
            ReadResourceRequestParams::new(uri),
        ))
    };
    let ServerResult::ReadResourceResult(notes) = m
        .forward("tricky", "resources/read", read("tricky://notes"), ct())
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?
    else {
        anyhow::bail!("not a resource")
    };
    let g = guard_resource("tricky", ResultMode::Warn, notes.clone(), &ctx);
    assert!(
        rules(&g.findings).contains(&"instruction-override"),
        "{:?}",
        g.findings
    );
    assert_eq!(g.findings[0].at, "contents[0].text");
    let noted = serde_json::to_value(g.result.expect("warn passes it on"))?;
    assert!(noted["contents"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Switchboard: this resource from the server \"tricky\""));
    assert_eq!(
        noted["contents"][1],
        serde_json::to_value(&notes)?["contents"][0]
    );
    let g = guard_resource("tricky", ResultMode::Block, notes, &ctx);
    let message = g.result.expect_err("block refuses it");
    assert!(
        message.contains("switchboard checks set tricky warn"),
        "{message}"
    );

    // A blob is not text: nothing to find.
    let ServerResult::ReadResourceResult(logo) = m
        .forward("tricky", "resources/read", read("tricky://logo"), ct())
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?
    else {
        anyhow::bail!("not a resource")
    };
    let v: Value = serde_json::to_value(&logo)?;
    assert!(check_result("tricky", ResultKind::Resource, &v, &ctx).is_empty());

    let get = ClientRequest::GetPromptRequest(GetPromptRequest::new(GetPromptRequestParams::new(
        "summarize",
    )));
    let ServerResult::GetPromptResult(prompt) = m
        .forward("tricky", "prompts/get", get, ct())
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?
    else {
        anyhow::bail!("not a prompt")
    };
    let g = guard_prompt("tricky", ResultMode::Warn, prompt.clone(), &ctx);
    let found = rules(&g.findings);
    assert!(
        found.contains(&"model-address") && found.contains(&"concealment"),
        "{found:?}"
    );
    let noted = g.result.expect("warn passes it on");
    assert_eq!(noted.messages.len(), prompt.messages.len() + 1);
    let g = guard_prompt("tricky", ResultMode::Block, prompt, &ctx);
    assert!(g.result.unwrap_err().contains("model-address"));

    m.shutdown().await;
    Ok(())
}
