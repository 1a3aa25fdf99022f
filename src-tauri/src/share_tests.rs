//! Clients' costs and shared profiles through the app's IPC (issue 28), over
//! a real engine with an in-memory keychain: what Cursor loads against the
//! budget set through `change_profile`; a profile exported to a file with
//! its secret as a reference, imported back under another name with the
//! secret typed kept in the keychain; bad documents refused with the
//! engine's message, the field named and nothing written.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_engine::auth::vault::{MemoryBackend, Vault};
use tauri::test::MockRuntime;

use crate::tests::{fixture_server, invoke_on};

/// A literal token in a server's env, as people write them.
const TOKEN: &str = "sk-live-0123456789abcdefghijklmn";

struct App {
    home: tempfile::TempDir,
    keychain: Arc<MemoryBackend>,
    _app: tauri::App<MockRuntime>,
    webview: tauri::WebviewWindow<MockRuntime>,
}

impl App {
    /// Cursor's file names `beta`; Switchboard's own file runs it (the
    /// fixture server) and holds `notes`, off, with a literal token.
    fn new() -> App {
        let home = tempfile::tempdir().unwrap();
        let cursor = home.path().join(".cursor");
        std::fs::create_dir_all(&cursor).unwrap();
        std::fs::write(
            cursor.join("mcp.json"),
            r#"{"mcpServers": {"beta": {"command": "beta-in-cursor"}}}"#,
        )
        .unwrap();
        let (keychain, app, webview) = crate::tests::started_app_with_keychain(home.path());
        let t = App {
            home,
            keychain,
            _app: app,
            webview,
        };
        let beta = json!({"name": "beta", "transport": "stdio", "command": fixture_server().to_string_lossy(), "args": ["--name", "beta"], "enabled": true});
        let notes = json!({"name": "notes", "transport": "stdio", "command": "notes-mcp-not-installed-here", "env": {"NOTES_TOKEN": TOKEN}, "enabled": false});
        for def in [beta, notes] {
            t.invoke("add_server", json!({"source": "switchboard", "def": def}))
                .expect("add_server succeeds");
        }
        t.wait_connected("beta");
        t
    }

    fn invoke(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        invoke_on(&self.webview, cmd, args)
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    fn wait_connected(&self, name: &str) {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let servers = self.invoke("list_servers", json!({})).unwrap();
            let connected = servers
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["name"] == name && s["runtime"]["status"]["state"] == "connected");
            if connected {
                return;
            }
            assert!(
                Instant::now() < end,
                "{name} did not connect within 30 s: {servers}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn cursor(&self) -> Value {
        let all = self
            .invoke("client_costs", json!({}))
            .expect("client_costs");
        all.as_array()
            .unwrap()
            .iter()
            .find(|c| c["client"] == "cursor")
            .cloned()
            .unwrap_or_else(|| panic!("Cursor has a config file, so a cost: {all}"))
    }

    fn profile_names(&self) -> Vec<String> {
        let list = self.invoke("list_profiles", json!({})).unwrap();
        list.as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect()
    }
}

fn tokens(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not a token count: {v}"))
}

#[test]
fn what_cursor_loads_is_its_servers_tokens_and_goes_over_the_budget_set_for_it() {
    switchboard_engine::tokens::use_in_process();
    let t = App::new();
    // The truth from elsewhere: every tool's cost, summed for beta.
    let costs = t.invoke("tool_costs", json!({})).unwrap();
    let beta: u64 = costs
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["server"] == "beta")
        .map(|c| tokens(&c["tokens"]))
        .sum();
    assert!(beta > 0, "beta's tools cost tokens: {costs}");

    let cursor = t.cursor();
    assert_eq!(
        (&cursor["label"], &cursor["tokenizer"]),
        (&json!("Cursor"), &json!("o200k_base")),
        "{cursor}"
    );
    assert_eq!(cursor["servers"], json!([["beta", beta]]), "{cursor}");
    assert_eq!(tokens(&cursor["tokens"]), beta, "{cursor}");
    assert_eq!(cursor["budget"], 20_000, "the default budget: {cursor}");
    assert!(cursor.get("overBudget").is_none(), "{cursor}");
    assert!(
        cursor.get("profile").is_none(),
        "it follows no profile: {cursor}"
    );

    let budget = |n: u64| {
        t.invoke(
            "change_profile",
            json!({"change": {"kind": "budget", "client": "cursor", "tokens": n}}),
        )
    };
    budget(beta - 1).expect("a budget for Cursor");
    let cursor = t.cursor();
    assert_eq!(tokens(&cursor["budget"]), beta - 1, "{cursor}");
    let over = &cursor["overBudget"];
    assert_eq!(tokens(&over["budget"]), beta - 1, "{cursor}");
    assert_eq!(over["biggest"], json!([["beta", beta]]), "{cursor}");
    assert!(tokens(&over["toolSearchTokens"]) > 0, "{cursor}");

    let err = budget(0).expect_err("no budget of 0");
    assert_eq!(err["code"], "invalid", "{err}");
    assert_eq!(
        err["message"], "a token budget must be more than 0 tokens",
        "{err}"
    );
    assert_eq!(tokens(&t.cursor()["budget"]), beta - 1, "kept");
}

#[test]
fn a_profile_goes_out_without_its_secret_and_comes_back_under_another_name() {
    switchboard_engine::tokens::use_in_process();
    let t = App::new();
    let create = json!({"kind": "create", "name": "Shared", "servers": ["beta", "notes"]});
    t.invoke("change_profile", json!({ "change": create }))
        .expect("create");

    let export = |path: &str, replace: bool| {
        t.invoke(
            "export_profile",
            json!({"name": "Shared", "path": path, "replace": replace}),
        )
    };
    let done = export("~/shared.json", false).expect("export_profile succeeds");
    let file = t.home().join("shared.json");
    assert_eq!(done["path"], json!(file.display().to_string()), "{done}");
    assert_eq!(done["servers"], json!(["beta", "notes"]), "{done}");
    assert_eq!(
        done["secrets"],
        json!([{"server": "notes", "field": "env.NOTES_TOKEN", "reference": "${keychain:notes.NOTES_TOKEN}"}]),
        "{done}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(TOKEN), "the token left the machine:\n{text}");
    assert!(text.contains("${keychain:notes.NOTES_TOKEN}"), "{text}");

    let err = export("~/shared.json", false).expect_err("the file exists");
    assert_eq!(err["code"], "already-exists", "{err}");
    std::fs::write(&file, "mine").unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine", "kept");
    export("~/shared.json", true).expect("replaced when asked");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let err = export("shared.json", false).expect_err("a relative path");
    assert_eq!(err["code"], "invalid", "{err}");
    assert!(
        err["message"].as_str().unwrap().contains("not a full path"),
        "{err}"
    );

    let source = json!({"kind": "file", "path": "~/shared.json"});
    let same = t
        .invoke(
            "preview_profile_import",
            json!({"source": source, "options": {}}),
        )
        .expect("preview");
    assert_eq!(
        (&same["profileExists"], &same["writes"]),
        (&json!(true), &json!(false)),
        "the same profile is here: {same}"
    );

    let options = json!({"asName": "Shared copy"});
    let preview = t
        .invoke(
            "preview_profile_import",
            json!({"source": source, "options": options}),
        )
        .expect("preview");
    assert_eq!(preview["profile"], "Shared copy", "{preview}");
    assert_eq!(preview["writes"], true, "{preview}");
    let actions: Vec<(&str, &str)> = preview["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["action"].as_str().unwrap()))
        .collect();
    assert_eq!(
        actions,
        [("beta", "reuse"), ("notes", "reuse")],
        "{preview}"
    );
    assert_eq!(
        preview["missingRuntimes"][0]["program"], "notes-mcp-not-installed-here",
        "{preview}"
    );
    assert_eq!(
        (
            &preview["secrets"][0]["name"],
            &preview["secrets"][0]["kind"]
        ),
        (&json!("notes.NOTES_TOKEN"), &json!("keychain")),
        "{preview}"
    );
    assert!(
        !t.profile_names().contains(&"Shared copy".to_string()),
        "a preview writes nothing"
    );

    let report = t
        .invoke(
            "import_profile",
            json!({"source": source, "options": options, "values": {"notes.NOTES_TOKEN": "typed-here"}}),
        )
        .expect("import_profile succeeds");
    assert!(report["historyId"].is_u64(), "recorded: {report}");
    assert_eq!(report["kept"], json!(["notes.NOTES_TOKEN"]), "{report}");
    assert_eq!(
        Vault::new(t.keychain.clone())
            .secret("notes.NOTES_TOKEN")
            .unwrap()
            .as_deref(),
        Some("typed-here"),
        "the typed secret is in the keychain"
    );
    assert_eq!(
        t.profile_names(),
        ["Everything", "Shared", "Shared copy"],
        "the imported profile is listed"
    );
}

#[test]
fn bad_documents_are_refused_with_the_field_named_and_nothing_written() {
    switchboard_engine::tokens::use_in_process();
    let t = App::new();
    let create = json!({"kind": "create", "name": "Shared", "servers": ["beta", "notes"]});
    t.invoke("change_profile", json!({ "change": create }))
        .expect("create");
    t.invoke(
        "export_profile",
        json!({"name": "Shared", "path": "~/shared.json", "replace": false}),
    )
    .expect("export");
    let good: Value =
        serde_json::from_str(&std::fs::read_to_string(t.home().join("shared.json")).unwrap())
            .unwrap();
    let own = t.home().join(".config/switchboard/servers.json");
    let settings = t.home().join(".config/switchboard/settings.json");
    let before = (
        std::fs::read(&own).unwrap(),
        std::fs::read(&settings).unwrap(),
    );

    let with = |change: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        change(&mut v);
        json!({"kind": "text", "text": v.to_string()})
    };
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"kind": "text", "text": "{ this is not json"}),
            "not a Switchboard profile document",
        ),
        (
            with(&|v| v["servers"]["notes"]["env"]["NOTES_TOKEN"] = json!(TOKEN)),
            "field env.NOTES_TOKEN of server \"notes\" carries a secret value",
        ),
        (
            with(&|v| v["profile"]["servers"][0]["name"] = json!("ghost")),
            "\"ghost\"",
        ),
        (
            json!({"kind": "file", "path": "~/no-such-file.json"}),
            "cannot read",
        ),
    ];
    for (source, want) in cases {
        let options = json!({"asName": "Other"});
        for (cmd, extra) in [
            ("preview_profile_import", json!({})),
            ("import_profile", json!({"values": {}})),
        ] {
            let mut args = json!({"source": source, "options": options});
            args.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            let err = t.invoke(cmd, args).expect_err("refused");
            let msg = err["message"].as_str().unwrap();
            assert!(msg.contains(want), "{cmd}: {want:?} not in {err}");
            assert!(!msg.contains(TOKEN), "{cmd} repeats the secret: {msg}");
        }
    }
    // A value for a secret the document does not ask for: refused before
    // anything goes into the keychain.
    let err = t
        .invoke(
            "import_profile",
            json!({"source": with(&|_| {}), "options": {"asName": "Other"}, "values": {"nobody.NOTHING": "x"}}),
        )
        .expect_err("not asked for");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("nobody.NOTHING is not a secret this profile asks for"),
        "{err}"
    );
    assert!(t.keychain.dump().is_empty(), "nothing kept");
    assert_eq!(
        (
            std::fs::read(&own).unwrap(),
            std::fs::read(&settings).unwrap()
        ),
        before,
        "nothing written"
    );
    assert_eq!(t.profile_names(), ["Everything", "Shared"]);
}
