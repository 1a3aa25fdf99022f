//! `Engine::install_from_link` (issue 31), as the app's Add dialog calls it,
//! with an in-memory keychain: a VS Code link's password input goes to the
//! keychain when installing into Switchboard's own file (the file holds
//! `${keychain:NAME.ID}`), and is written as given into Cursor's file; a
//! taken name, a missing input, an entry without a name, an unknown input
//! and a registry link are refused naming what is wrong, and nothing is
//! written or kept.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};
use switchboard_engine::auth::vault::{MemoryBackend, Vault};
use switchboard_engine::engine::Engine;
use switchboard_engine::registry::apply::InstallFailure;
use switchboard_engine::registry::link::LinkInstallRequest;
use switchboard_tests::TempHome;

const SECRET: &str = "wx-secret-4711";

/// VS Code's `vscode:mcp/install?{URL-encoded JSON}` with a password input and a plain one.
fn vscode_link() -> String {
    let entry = json!({
        "name": "weather",
        "command": "weather-mcp",
        "args": ["--units", "${input:units}"],
        "env": {"WEATHER_API_KEY": "${input:apiKey}"},
        "inputs": [
            {"type": "promptString", "id": "apiKey", "description": "Weather API key", "password": true},
            {"type": "promptString", "id": "units", "description": "Units", "default": "metric"}
        ]
    });
    format!("vscode:mcp/install?{}", urlencoding(&entry.to_string()))
}

fn urlencoding(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn request(text: &str, target: &str, inputs: &[(&str, &str)]) -> LinkInstallRequest {
    LinkInstallRequest {
        text: text.into(),
        server_index: 0,
        name: None,
        inputs: inputs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<HashMap<_, _>>(),
        target: target.into(),
        replace: false,
    }
}

fn read(home: &TempHome, rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(home.path().join(rel)).unwrap()).unwrap()
}

fn engine(home: &TempHome) -> (Engine, Arc<MemoryBackend>) {
    let engine = Engine::for_host(home.host());
    let store = Arc::new(MemoryBackend::default());
    engine.manager().set_vault(Some(Vault::new(store.clone())));
    engine.rediscover();
    (engine, store)
}

#[tokio::test]
async fn a_password_input_goes_to_the_keychain_in_switchboards_own_file() -> anyhow::Result<()> {
    let home = TempHome::with_servers(json!({}));
    let (engine, store) = engine(&home);
    let got = engine
        .install_from_link(request(
            &vscode_link(),
            "switchboard",
            &[("apiKey", SECRET)],
        ))
        .await?;
    assert_eq!(got.report.name, "weather");
    assert_eq!(got.report.kept_in_keychain, ["weather.apiKey"]);
    assert!(!got.report.plain_text_secrets);
    assert_eq!(
        got.def.env["WEATHER_API_KEY"], "${keychain:weather.apiKey}",
        "what was written is returned"
    );
    assert_eq!(
        got.def.args,
        ["--units", "metric"],
        "the default fills units"
    );
    let own = read(&home, ".config/switchboard/servers.json");
    let w = &own["mcpServers"]["weather"];
    assert_eq!(w["command"], "weather-mcp", "{own}");
    assert_eq!(
        w["env"]["WEATHER_API_KEY"], "${keychain:weather.apiKey}",
        "{own}"
    );
    assert!(
        !std::fs::read_to_string(home.path().join(".config/switchboard/servers.json"))?
            .contains(SECRET),
        "the secret is in no file"
    );
    assert!(store
        .dump()
        .contains(&("secret:weather.apiKey".to_string(), SECRET.to_string())));

    // Installed again: the name is taken, a free one suggested, nothing new kept.
    match engine
        .install_from_link(request(
            &vscode_link(),
            "switchboard",
            &[("apiKey", "other")],
        ))
        .await
    {
        Err(InstallFailure::NameTaken {
            name, suggestion, ..
        }) => assert_eq!(
            (name.as_str(), suggestion.as_str()),
            ("weather", "weather-2")
        ),
        other => panic!("{other:?}"),
    }
    assert!(store.dump().iter().all(|(_, v)| v != "other"));
    // Under another name it goes in beside it.
    let again = engine
        .install_from_link(LinkInstallRequest {
            name: Some("weather-2".into()),
            ..request(
                &vscode_link(),
                "switchboard",
                &[("apiKey", "s2"), ("units", "imperial")],
            )
        })
        .await?;
    assert_eq!(again.def.args, ["--units", "imperial"]);
    assert_eq!(
        again.def.env["WEATHER_API_KEY"],
        "${keychain:weather-2.apiKey}"
    );
    Ok(())
}

#[tokio::test]
async fn into_a_clients_file_the_value_is_written_as_given_and_said_so() -> anyhow::Result<()> {
    let home = TempHome::with_servers(json!({}));
    let (engine, store) = engine(&home);
    let got = engine
        .install_from_link(request(
            &vscode_link(),
            "cursor-user",
            &[("apiKey", SECRET)],
        ))
        .await?;
    assert!(got.report.plain_text_secrets && got.report.kept_in_keychain.is_empty());
    assert_eq!(
        got.def.env["WEATHER_API_KEY"], "••••",
        "the value is not sent back"
    );
    assert_eq!(
        read(&home, ".cursor/mcp.json")["mcpServers"]["weather"]["env"]["WEATHER_API_KEY"],
        SECRET
    );
    assert!(store.dump().is_empty());
    Ok(())
}

#[tokio::test]
async fn refusals_name_what_is_wrong_and_write_nothing() -> anyhow::Result<()> {
    let home = TempHome::with_servers(json!({}));
    let (engine, store) = engine(&home);
    let own = ".config/switchboard/servers.json";
    let before = std::fs::read_to_string(home.path().join(own))?;

    let e = engine
        .install_from_link(request(&vscode_link(), "switchboard", &[]))
        .await
        .unwrap_err();
    assert!(
        matches!(e, InstallFailure::Install(_))
            && e.to_string().contains("apiKey (Weather API key)"),
        "{e}"
    );

    let e = engine
        .install_from_link(request(
            &vscode_link(),
            "switchboard",
            &[("apiKey", "x"), ("token", "y")],
        ))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("no input \"token\" (it has: units, apiKey)"),
        "{e}"
    );

    // A pasted entry without a name needs one.
    let e = engine
        .install_from_link(request(r#"{"command": "weather-mcp"}"#, "switchboard", &[]))
        .await
        .unwrap_err();
    assert!(matches!(e, InstallFailure::NoName { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "the pasted server entry gives the server no name: enter one"
    );
    let named = engine
        .install_from_link(LinkInstallRequest {
            name: Some("bare".into()),
            ..request(r#"{"command": "weather-mcp"}"#, "switchboard", &[])
        })
        .await?;
    assert_eq!(named.report.name, "bare");

    let e = engine
        .install_from_link(request(
            "cursor://anysphere.cursor-deeplink/mcp/install?name=x&config=%%%",
            "switchboard",
            &[],
        ))
        .await
        .unwrap_err();
    assert!(e.to_string().starts_with("Cursor install link"), "{e}");

    let e = engine
        .install_from_link(request(
            "switchboard://install?registry=io.github.user/weather",
            "switchboard",
            &[],
        ))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("io.github.user/weather of the MCP Registry"),
        "{e}"
    );

    let e = engine
        .install_from_link(request(
            &vscode_link(),
            "no-such-source",
            &[("apiKey", "x")],
        ))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no-such-source"), "{e}");

    let after = read(&home, own);
    assert_eq!(
        after["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["bare"],
        "only the named entry was written (before: {before})"
    );
    assert!(
        store.dump().is_empty(),
        "no secret kept: {:?}",
        store.dump()
    );
    Ok(())
}
