//! Checks on what comes back, in the app's tool explorer
//! (`Engine::call_tool`): the `fixture-tricky-results` server's answers are
//! checked with the server's mode like the gateway's. In `warn` (the
//! default) the result has Switchboard's note first and the app hears a
//! warning naming the server and the tool; after `set_result_mode` to
//! `block` the next call is a tool error naming the rule and how to allow
//! it; in `log` the answer passes with the echoed secret masked. Every call
//! is in the journal as the server answered, with its findings, the secret
//! in none; a refused answer is recorded as the error the app got.
//! The Resources view's `resources/read` and `prompts/get` are checked and
//! recorded the same way.

use std::time::Duration;

use serde_json::json;
use switchboard_engine::events::EngineEvent;
use switchboard_engine::journal::{Filter, Kind, Outcome, BLOCKED};
use switchboard_engine::settings::{ResultMode, Settings};

const SECRET: &str = "tricky-secret-value-2c7d41";

/// The next warning the app hears.
async fn warning(rx: &mut tokio::sync::broadcast::Receiver<EngineEvent>) -> (String, String) {
    let next = async {
        loop {
            match rx.recv().await {
                Ok(EngineEvent::Warning { server, message }) => return (server, message),
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("events ended: {e}"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), next)
        .await
        .expect("a warning in time")
}

#[tokio::test]
async fn the_tool_explorer_notes_blocks_and_masks_as_the_servers_mode_says() -> anyhow::Result<()> {
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
    let mut events = engine.manager().subscribe();
    let call = |tool: &'static str| {
        let engine = &engine;
        async move {
            engine
                .call_tool(
                    &format!("mcp_tricky_{tool}"),
                    None,
                    None,
                    "Switchboard (tool explorer)",
                )
                .await
                .unwrap_or_else(|e| panic!("{tool}: {e}"))
        }
    };

    // warn (the default): the note first, and a warning naming tool and server.
    let noted = call("injected").await;
    assert!(!noted.is_error, "{noted:?}");
    assert!(
        noted
            .text
            .starts_with("Switchboard: this result from the server \"tricky\"")
            && noted.text.contains("instruction-override")
            && noted.text.contains("Ignore all previous instructions"),
        "{}",
        noted.text
    );
    let (server, message) = warning(&mut events).await;
    assert_eq!(server, "tricky");
    assert!(
        message.starts_with("An answer of \"injected\" from \"tricky\" was passed on with a note by the tool explorer's checks (instruction-override"),
        "{message}"
    );
    let clean = call("clean").await;
    assert_eq!(clean.text, "The weather in Paris is 18°C and sunny.");

    // block, chosen in the app: the next call is refused, saying how to allow it.
    engine.set_result_mode("tricky", ResultMode::Block).await?;
    assert_eq!(
        Settings::load(&host).0.result_checks.get("tricky"),
        Some(&ResultMode::Block)
    );
    let blocked = call("injected").await;
    assert!(blocked.is_error, "{blocked:?}");
    for words in [
        "Switchboard blocked this result from the server \"tricky\"",
        "instruction-override",
        "switchboard checks set tricky warn",
        "When a result looks suspicious",
    ] {
        assert!(
            blocked.text.contains(words),
            "{words:?} in {}",
            blocked.text
        );
    }
    assert!(
        !blocked.text.contains("Ignore all previous"),
        "{}",
        blocked.text
    );
    let (_, message) = warning(&mut events).await;
    assert!(
        message.contains("\"injected\" from \"tricky\" was refused"),
        "{message}"
    );

    // log: passed on as it came, but a known secret is masked all the same.
    engine.set_result_mode("tricky", ResultMode::Log).await?;
    let logged = call("echo_secret").await;
    assert!(
        !logged.is_error && !logged.text.starts_with("Switchboard:"),
        "{logged:?}"
    );
    let shown = serde_json::to_string(&logged)?;
    assert!(
        !shown.contains(SECRET),
        "the secret reached the explorer: {shown}"
    );
    engine.set_result_mode("tricky", ResultMode::Warn).await?;
    assert!(
        Settings::load(&host).0.result_checks.is_empty(),
        "the default removes the entry"
    );

    // The journal: each call as the server answered, with its findings.
    journal.flush();
    let page = journal.query(&Filter {
        server: Some("tricky".into()),
        ..Filter::default()
    })?;
    let names: Vec<&str> = page.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["echo_secret", "injected", "clean", "injected"]);
    let [secret, blocked, clean, noted] = &page.entries[..] else {
        unreachable!()
    };
    assert!(clean.findings.is_empty(), "{clean:?}");
    // What the explorer got: the refused answer was an error, said so.
    assert_eq!(noted.outcome, Outcome::Ok, "{noted:?}");
    assert_eq!(blocked.outcome, Outcome::ToolError, "{blocked:?}");
    assert_eq!(blocked.error_class.as_deref(), Some(BLOCKED), "{blocked:?}");
    for e in [noted, blocked] {
        assert!(
            e.findings.iter().any(|f| f.rule == "instruction-override"),
            "{e:?}"
        );
        assert!(
            e.result.contains("Ignore all previous instructions"),
            "{e:?}"
        );
        assert_eq!(e.client, "Switchboard (tool explorer)");
    }
    assert!(
        secret.findings.iter().any(|f| f.rule == "known-secret"),
        "{secret:?}"
    );
    for e in &page.entries {
        assert!(
            !serde_json::to_string(e)?.contains(SECRET),
            "secret in the journal: {e:?}"
        );
    }
    engine.manager().shutdown().await;
    Ok(())
}

#[tokio::test]
async fn the_resources_view_is_checked_and_recorded_too() -> anyhow::Result<()> {
    let tricky = switchboard_tests::tricky_results_server_path();
    let home = switchboard_tests::TempHome::with_servers(json!({
        "tricky": { "command": tricky, "env": { "TRICKY_SECRET": SECRET } }
    }));
    let host = home.host();
    let engine = switchboard_tests::in_process::engine(&host);
    let report = engine.start().await;
    assert_eq!(report.connected.len(), 1, "{report:?}");
    let journal = engine.manager().open_journal(&host, &engine.settings());
    let mut events = engine.manager().subscribe();
    const BY: &str = "Switchboard (Resources view)";

    // warn: the contents with the note first, the app warned.
    let notes = engine.read_resource("tricky", "tricky://notes", BY).await?;
    let first = notes["contents"][0]["text"].as_str().unwrap_or_default();
    assert!(
        first.starts_with("Switchboard: this resource from the server \"tricky\""),
        "{notes}"
    );
    let (server, message) = warning(&mut events).await;
    assert_eq!(server, "tricky");
    assert!(
        message.contains("\"tricky://notes\" from \"tricky\" was passed on with a note by the Resources view's checks"),
        "{message}"
    );
    let prompt = engine
        .get_prompt(
            "tricky",
            "summarize",
            Some(json!({"topic": "x"}).as_object().unwrap().clone()),
            BY,
        )
        .await?;
    assert!(
        prompt["messages"][0].to_string().contains("Switchboard"),
        "{prompt}"
    );

    // block: refused, with what was found and how to allow it.
    engine.set_result_mode("tricky", ResultMode::Block).await?;
    let refused = engine
        .read_resource("tricky", "tricky://notes", BY)
        .await
        .expect_err("block refuses the resource");
    let text = refused.to_string();
    assert!(
        text.contains("instruction-override")
            && text.contains("switchboard checks set tricky warn"),
        "{text}"
    );
    let refused = engine
        .get_prompt("tricky", "summarize", None, BY)
        .await
        .expect_err("block refuses the prompt");
    assert!(refused.to_string().contains("model-address"), "{refused}");

    journal.flush();
    let page = journal.query(&Filter {
        server: Some("tricky".into()),
        ..Filter::default()
    })?;
    let seen: Vec<(Kind, &str, Outcome, Option<&str>)> = page
        .entries
        .iter()
        .map(|e| (e.kind, e.name.as_str(), e.outcome, e.error_class.as_deref()))
        .collect();
    assert_eq!(
        seen,
        [
            (
                Kind::Prompt,
                "summarize",
                Outcome::ProtocolError,
                Some(BLOCKED)
            ),
            (
                Kind::Resource,
                "tricky://notes",
                Outcome::ProtocolError,
                Some(BLOCKED)
            ),
            (Kind::Prompt, "summarize", Outcome::Ok, None),
            (Kind::Resource, "tricky://notes", Outcome::Ok, None),
        ]
    );
    for e in &page.entries {
        assert_eq!(e.client, BY);
        assert!(!e.findings.is_empty(), "{e:?}");
        assert!(!serde_json::to_string(e)?.contains(SECRET), "{e:?}");
    }
    assert!(
        page.entries[2].arguments.contains("topic"),
        "{:?}",
        page.entries[2]
    );
    engine.manager().shutdown().await;
    Ok(())
}
