//! `.mcpb` bundles through the app's IPC (issue 31), over a real engine with
//! an in-memory keychain and a bundle packed by the real `@anthropic-ai/mcpb`
//! CLI: `open_bundle` answers with the form's facts while it unpacks,
//! `preview_bundle` shows the exact command with the secret kept in the
//! keychain, `install_bundle` writes it and the server connects and lists
//! its tool; the server's page learns where it came from
//! (`bundle_origin`), and `remove_server` takes its files and secret along.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_tests::mcpb::{hello_bundles, mcpb_cli, HELLO_SECRET};

use crate::link_tests::App;

#[test]
fn a_bundle_is_opened_previewed_installed_and_removed_through_the_app() {
    let Some(cli) = mcpb_cli("bundle_tests") else {
        return;
    };
    let packed = tempfile::tempdir().unwrap();
    let (_, signed) = hello_bundles(&cli, packed.path(), "1.2.0").unwrap();
    let app = App::new();

    let view = app
        .invoke("open_bundle", json!({ "path": signed }))
        .unwrap();
    assert_eq!(view["name"], "hello-bundle");
    assert_eq!(view["signature"]["status"], "self_signed");
    assert_eq!(view["fields"][0]["key"], "api_key");
    assert_eq!(view["fields"][0]["sensitive"], true);
    let id = view["id"].clone();
    let end = Instant::now() + Duration::from_secs(20);
    while app.invoke("bundle_progress", json!({ "id": id })).unwrap()["state"] != "ready" {
        assert!(Instant::now() < end, "not unpacked within 20 s");
        std::thread::sleep(Duration::from_millis(20));
    }

    let request = json!({
        "id": id,
        "target": "switchboard",
        "values": { "api_key": [HELLO_SECRET] },
    });
    let preview = app
        .invoke("preview_bundle", json!({ "request": request }))
        .unwrap();
    assert_eq!(preview["def"]["command"], "node");
    assert_eq!(
        preview["def"]["env"]["API_KEY"],
        "${keychain:hello-bundle.api_key}"
    );
    assert!(!preview.to_string().contains(HELLO_SECRET));

    let done = app
        .invoke("install_bundle", json!({ "request": request }))
        .unwrap();
    assert_eq!(done["report"]["name"], "hello-bundle");
    let tools = app.wait_tools("hello-bundle");
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["server"] == "hello-bundle" && t["tool"] == "say_hello"),
        "{tools}"
    );
    let file =
        std::fs::read_to_string(app.home().join(".config/switchboard/servers.json")).unwrap();
    assert!(!file.contains(HELLO_SECRET), "{file}");

    let origin = app
        .invoke(
            "bundle_origin",
            json!({ "source": "switchboard", "name": "hello-bundle" }),
        )
        .unwrap();
    assert_eq!(origin["version"], "1.2.0");
    assert_eq!(origin["displayName"], "Hello bundle");

    // A closed form's id is gone: installing it again is refused by code.
    let again: Value = app
        .invoke("install_bundle", json!({ "request": request }))
        .unwrap_err();
    assert_eq!(again["code"], "not-found", "{again}");

    let cleaned = app
        .invoke(
            "remove_server",
            json!({ "source": "switchboard", "name": "hello-bundle", "contentHash": null }),
        )
        .unwrap();
    assert_eq!(cleaned["removedSecrets"], json!(["hello-bundle.api_key"]));
    assert!(cleaned["removedDir"]
        .as_str()
        .unwrap()
        .ends_with("bundles/hello-bundle/1.2.0"));
    assert!(app.keychain.dump().is_empty());
}
