//! Install links pasted into the Add dialog (issue 31) through the app's
//! IPC, over a real engine with an in-memory keychain: `read_install_link`
//! shows what a VS Code link for the fixture server asks (its command, its
//! password input, its warnings) and writes nothing; `install_from_link`
//! keeps the password in the keychain, writes `${keychain:…}` and the
//! server connects with the secret in its environment; refusals come back
//! with their code and the field named.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_engine::auth::vault::MemoryBackend;
use tauri::test::MockRuntime;

use crate::tests::{fixture_server, invoke_on};

const SECRET: &str = "fx-token-5e8a71";

pub(crate) struct App {
    home: tempfile::TempDir,
    pub(crate) keychain: Arc<MemoryBackend>,
    _app: tauri::App<MockRuntime>,
    webview: tauri::WebviewWindow<MockRuntime>,
}

impl App {
    pub(crate) fn new() -> App {
        let home = tempfile::tempdir().unwrap();
        let (keychain, app, webview) = crate::tests::started_app_with_keychain(home.path());
        App {
            home,
            keychain,
            _app: app,
            webview,
        }
    }

    pub(crate) fn invoke(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        invoke_on(&self.webview, cmd, args)
    }

    pub(crate) fn home(&self) -> &Path {
        self.home.path()
    }

    pub(crate) fn wait_tools(&self, server: &str) -> Value {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let servers = self.invoke("list_servers", json!({})).unwrap();
            let s = servers
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == server)
                .cloned();
            if s.as_ref()
                .is_some_and(|s| s["runtime"]["status"]["state"] == "connected")
            {
                return self.invoke("list_tools", json!({})).unwrap();
            }
            assert!(
                Instant::now() < end,
                "{server} did not connect within 30 s: {s:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// VS Code's documented form, `vscode:mcp/install?{URL-encoded JSON}`: the
/// fixture server, which refuses to start without FIXTURE_TOKEN.
fn fixture_link() -> String {
    let entry = json!({
        "name": "linked",
        "command": fixture_server().to_string_lossy(),
        "args": ["--name", "linked", "--require-env", "FIXTURE_TOKEN"],
        "env": {"FIXTURE_TOKEN": "${input:token}"},
        "inputs": [{"type": "promptString", "id": "token", "description": "Fixture token", "password": true}]
    });
    format!("vscode:mcp/install?{}", encode(&entry.to_string()))
}

#[test]
fn a_pasted_vscode_link_is_shown_then_installed_with_its_secret_in_the_keychain() {
    let t = App::new();
    let own = t.home().join(".config/switchboard/servers.json");
    let shown = t
        .invoke("read_install_link", json!({"text": fixture_link()}))
        .expect("the link reads");
    assert_eq!(shown["origin"]["kind"], "vscode", "{shown}");
    let server = &shown["servers"][0];
    assert_eq!(server["name"], "linked", "{shown}");
    assert_eq!(
        server["def"]["command"],
        fixture_server().to_string_lossy().as_ref(),
        "{shown}"
    );
    assert_eq!(server["def"]["env"]["FIXTURE_TOKEN"], "${input:token}");
    assert_eq!(server["inputs"][0]["id"], "token");
    assert_eq!(server["inputs"][0]["password"], true);
    assert!(!own.exists(), "reading writes nothing");

    let missing = t
        .invoke(
            "install_from_link",
            json!({"text": fixture_link(), "serverIndex": 0, "name": "linked", "inputs": {}, "target": "switchboard"}),
        )
        .expect_err("no token given");
    assert_eq!(missing["code"], "missing-values", "{missing}");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("token (Fixture token)"),
        "{missing}"
    );

    let got = t
        .invoke(
            "install_from_link",
            json!({"text": fixture_link(), "serverIndex": 0, "name": "linked", "inputs": {"token": SECRET}, "target": "switchboard"}),
        )
        .expect("installs");
    assert_eq!(
        got["report"]["keptInKeychain"],
        json!(["linked.token"]),
        "{got}"
    );
    assert_eq!(
        got["def"]["env"]["FIXTURE_TOKEN"],
        "${keychain:linked.token}"
    );
    let text = std::fs::read_to_string(&own).unwrap();
    assert!(text.contains("${keychain:linked.token}"), "{text}");
    assert!(!text.contains(SECRET), "the secret is in no file: {text}");
    assert!(t
        .keychain
        .dump()
        .contains(&("secret:linked.token".to_string(), SECRET.to_string())));

    // It runs with the secret in its environment: connected, its tools listed.
    let tools = t.wait_tools("linked");
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["server"] == "linked"),
        "{tools}"
    );

    let taken = t
        .invoke(
            "install_from_link",
            json!({"text": fixture_link(), "serverIndex": 0, "name": "linked", "inputs": {"token": "x"}, "target": "switchboard"}),
        )
        .expect_err("the name is taken");
    assert_eq!(taken["code"], "name-taken", "{taken}");
    assert!(
        taken["message"].as_str().unwrap().contains("linked-2"),
        "{taken}"
    );
}

#[test]
fn bad_links_are_refused_naming_the_link_kind() {
    let t = App::new();
    let e = t
        .invoke(
            "read_install_link",
            json!({"text": "cursor://anysphere.cursor-deeplink/mcp/install?name=x&config=%%%"}),
        )
        .expect_err("malformed");
    assert_eq!(e["code"], "invalid", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("Cursor install link"),
        "{e}"
    );
    let e = t
        .invoke(
            "install_from_link",
            json!({"text": r#"{"command": "x"}"#, "serverIndex": 0, "inputs": {}, "target": "switchboard"}),
        )
        .expect_err("no name");
    assert_eq!(e["code"], "missing-values", "{e}");
    assert!(e["message"].as_str().unwrap().contains("no name"), "{e}");

    // A program in /tmp is read with its warning.
    let tmp = json!({"name": "tmpd", "command": "/tmp/evil/server"});
    let shown = t
        .invoke(
            "read_install_link",
            json!({"text": format!("vscode:mcp/install?{}", encode(&tmp.to_string()))}),
        )
        .unwrap();
    assert!(
        shown["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "tempPath"),
        "{shown}"
    );
}
