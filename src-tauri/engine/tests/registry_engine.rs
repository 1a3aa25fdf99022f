//! `Engine::install` and `Engine::keep_in_keychain` (issue 13), as the app
//! calls them, with an in-memory keychain: secrets into Switchboard's own
//! file become `${keychain:NAME}` references with the value in the keychain;
//! into Cursor's file they are written as given and reported as plain text;
//! a taken name is refused with a free one suggested, unless replacing; a
//! value already in the own file moves into the keychain.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use switchboard_engine::auth::vault::{MemoryBackend, Vault};
use switchboard_engine::engine::Engine;
use switchboard_engine::registry::apply::{InstallFailure, InstallRequest};
use switchboard_engine::registry::install::Choice;
use switchboard_engine::registry::ServerResponse;
use switchboard_tests::TempHome;

fn weather() -> ServerResponse {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/registry/weather-1.2.0.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn request(target: &str, secret: &str) -> InstallRequest {
    let values: HashMap<String, String> = [
        ("env:WEATHER_API_KEY", secret),
        ("arg:--name", "weather-fast"),
        ("arg:data_dir", "/data"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    InstallRequest {
        server: weather().server,
        choice: Choice::Package { index: 0 },
        name: None,
        target: target.into(),
        values,
        replace: false,
        extra_env: vec![],
        extra_headers: vec![],
    }
}

fn read(home: &TempHome, rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(home.path().join(rel)).unwrap()).unwrap()
}

#[tokio::test]
async fn install_and_keep_values_in_the_keychain() -> anyhow::Result<()> {
    let home = TempHome::with_servers(
        json!({ "plain": { "command": "x", "env": { "TOKEN": "tok-plain-1", "REF": "${HOME}" }, "headers": {} } }),
    );
    let engine = Engine::for_host(home.host());
    let store = Arc::new(MemoryBackend::default());
    engine.manager().set_vault(Some(Vault::new(store.clone())));
    engine.rediscover();

    let report = engine.install(request("switchboard", "sek-1")).await?;
    assert_eq!(report.name, "weather");
    assert_eq!(report.kept_in_keychain, ["weather.WEATHER_API_KEY"]);
    assert!(!report.plain_text_secrets);
    let own = read(&home, ".config/switchboard/servers.json");
    assert_eq!(
        own["mcpServers"]["weather"]["env"]["WEATHER_API_KEY"],
        "${keychain:weather.WEATHER_API_KEY}"
    );
    assert_eq!(
        own["mcpServers"]["plain"]["env"]["TOKEN"], "tok-plain-1",
        "other servers are untouched"
    );
    assert!(store.dump().contains(&(
        "secret:weather.WEATHER_API_KEY".to_string(),
        "sek-1".to_string()
    )));

    // The name is taken now: refused, with a free one suggested; nothing new kept.
    match engine.install(request("switchboard", "sek-2")).await {
        Err(InstallFailure::NameTaken {
            name, suggestion, ..
        }) => assert_eq!(
            (name.as_str(), suggestion.as_str()),
            ("weather", "weather-2")
        ),
        other => panic!("{other:?}"),
    }
    assert!(store.dump().iter().all(|(_, v)| v != "sek-2"));
    let replaced = engine
        .install(InstallRequest {
            replace: true,
            ..request("switchboard", "sek-2")
        })
        .await?;
    assert!(replaced.replaced);
    assert!(store.dump().contains(&(
        "secret:weather.WEATHER_API_KEY".to_string(),
        "sek-2".to_string()
    )));

    // Into Cursor's file: written as given, and said so.
    let cursor = engine.install(request("cursor-user", "sek-3")).await?;
    assert!(cursor.plain_text_secrets && cursor.kept_in_keychain.is_empty());
    assert_eq!(
        read(&home, ".cursor/mcp.json")["mcpServers"]["weather"]["env"]["WEATHER_API_KEY"],
        "sek-3"
    );

    // A value already in the own file moves into the keychain.
    let name = engine.keep_in_keychain("plain", "env", "TOKEN").await?;
    assert_eq!(name, "plain.TOKEN");
    let own = read(&home, ".config/switchboard/servers.json");
    assert_eq!(
        own["mcpServers"]["plain"]["env"]["TOKEN"],
        "${keychain:plain.TOKEN}"
    );
    assert!(
        !std::fs::read_to_string(home.path().join(".config/switchboard/servers.json"))?
            .contains("tok-plain-1")
    );
    assert!(store
        .dump()
        .contains(&("secret:plain.TOKEN".to_string(), "tok-plain-1".to_string())));
    for (key, why) in [
        ("TOKEN", "kept in the keychain already"),
        ("REF", "a reference or a command"),
        ("NOPE", "no env value named NOPE"),
    ] {
        let e = engine
            .keep_in_keychain("plain", "env", key)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{key}: {e}");
    }
    let e = engine
        .keep_in_keychain("weather-elsewhere", "env", "X")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not in Switchboard's own file"), "{e}");
    engine.shutdown().await;
    Ok(())
}
