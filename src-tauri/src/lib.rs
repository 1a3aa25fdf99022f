//! Switchboard's desktop shell: builds the Tauri app around the engine.
//!
//! The builder is generic over `tauri::Runtime` so the real app (Wry) and
//! headless tests (`tauri::test::MockRuntime`) share one setup.

#[macro_use]
mod command_list;
pub mod activity;
pub mod bundles;
pub mod catalog;
pub mod commands;
pub mod deep_link;
pub mod drops;
pub mod error;
pub mod events;
pub mod gateway;
pub mod probe;
pub mod profile_switch;
pub mod share;
pub mod sidecar;
pub mod state;
pub mod tool_calls;
pub mod tray;
pub mod types;
pub mod webview;

#[cfg(test)]
mod account_tests;
#[cfg(test)]
mod bundle_tests;
#[cfg(test)]
mod link_tests;
#[cfg(test)]
mod share_tests;

use switchboard_engine::engine::Engine;
use switchboard_engine::host::Host;
use tauri::{Manager, RunEvent};

pub use state::AppState;

/// Every command the UI may call (from `command_list.rs`, the one list).
pub const COMMANDS: &[&str] = with_commands!(command_names);

/// The argument the desktop's autostart entry starts the app with: the
/// window stays closed and Switchboard runs in the tray.
pub const HIDDEN_ARG: &str = "--hidden";

/// The invoke handler of every command `with_commands!` lists.
macro_rules! handlers {
    ($($module:ident :: $command:ident),* $(,)?) => {
        tauri::generate_handler![$($module::$command),*]
    };
}

/// What the shell runs besides the engine: the desktop app serves the HTTP
/// gateway; headless command tests do not (no port is taken).
#[derive(Debug, Clone, Copy)]
pub struct Shell {
    pub serve_gateway: bool,
}

/// Plugins, state and command handlers shared by the app and its tests.
/// The engine starts in the background once the app is set up: the window
/// shows at once and servers appear as their events arrive.
pub fn builder<R: tauri::Runtime>(
    builder: tauri::Builder<R>,
    engine: Engine,
    shell: Shell,
) -> tauri::Builder<R> {
    // Reading the config files takes tens of milliseconds: do it now so the
    // first `list_servers` already shows every configured server.
    engine.rediscover();
    // Calls through the app's gateway and its tool explorer go into the call
    // journal (Activity) in Switchboard's data folder; opening it never
    // fails (a problem is shown in its stats) and never blocks a call.
    engine
        .manager()
        .open_journal(engine.host(), &engine.settings());
    let state = AppState::new(engine);
    let gateway = gateway::AppGateway::new(state.engine.clone());
    builder
        .plugin(tauri_plugin_opener::init())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_shell::init())
        .plugin(
            tauri_plugin_autostart::Builder::new()
                .app_name("Switchboard")
                .args([HIDDEN_ARG])
                .build(),
        )
        .manage(state)
        .manage(gateway.clone())
        .manage(tool_calls::ToolCalls::default())
        .manage(deep_link::InstallLinks::default())
        .setup(move |app| {
            events::start(
                app.handle().clone(),
                &app.state::<AppState>(),
                shell.serve_gateway.then_some(gateway),
            );
            Ok(())
        })
        .invoke_handler(with_commands!(handlers))
}

/// Stop every server before the process ends, so none is orphaned.
pub fn on_run_event<R: tauri::Runtime>(app: &tauri::AppHandle<R>, event: RunEvent) {
    if let RunEvent::Exit = event {
        app.state::<std::sync::Arc<gateway::AppGateway>>().stop();
        app.state::<AppState>().shutdown_blocking();
    }
}

/// Entry point of the `switchboard-app` binary. Like the CLI, it honours
/// HOME, XDG_CONFIG_HOME and SWITCHBOARD_SYSTEM_ROOT (`Host::current()`).
pub fn run() {
    // Token counts come from the `switchboard tokens` sidecar: the app never
    // loads the tokenizer itself. Without the sidecar, counts stay 0.
    match sidecar::path() {
        Ok(p) => switchboard_engine::tokens::use_program(p),
        Err(e) => eprintln!("switchboard: token counts not available: {e}"),
    }
    let context = tauri::generate_context!();
    let host = Host::current();
    // First of all plugins: a second launch (a `switchboard://` link clicked
    // while Switchboard runs, or the app started again) hands its arguments
    // to the running app, which shows its window, and exits in `build()`,
    // before the engine starts any server or the gateway listens (the
    // config files are read in `builder()`). With its `deep-link` feature
    // the running app gets the link as a deep-link event
    // (deep_link::follow). Scoped to the data folder
    // (deep_link::instance_id). Only here, not in `builder()`:
    // the headless command tests build many mock apps in one process, which
    // must neither find each other nor a Switchboard running on the machine.
    let single_instance = tauri_plugin_single_instance::Builder::new()
        .dbus_id(deep_link::instance_id(
            &context.config().identifier,
            &host.switchboard_dir(),
        ))
        .callback(|app, args, _cwd| {
            deep_link::log_foreign_link(&args);
            if !args.iter().any(|a| a == HIDDEN_ARG) {
                tray::show_main(app);
            }
        })
        .build();
    let shell = tauri::Builder::default()
        .plugin(single_instance)
        .plugin(tauri_plugin_deep_link::init());
    let app = builder(
        shell,
        Engine::for_host(host),
        Shell {
            serve_gateway: true,
        },
    )
    .on_window_event(|window, event| {
        tray::on_window_event(window, event);
        drops::on_window_event(window, event);
    })
    .build(context)
    .expect("error while building Switchboard");
    tray::install(app.handle());
    deep_link::follow(app.handle());
    // The window is created hidden (tauri.conf.json) and shown once the
    // event loop runs, unless the desktop started Switchboard at login: then
    // it stays in the tray until the user opens the window.
    let hidden = std::env::args().any(|a| a == HIDDEN_ARG);
    #[cfg(unix)]
    events::exit_on_signals(app.handle().clone());
    app.run(move |app, event| {
        if let RunEvent::Ready = event {
            if let Some(window) = app.get_webview_window("main") {
                webview::reload_when_page_dies(&window);
                if !hidden {
                    let _ = window.show();
                }
            }
        }
        on_run_event(app, event)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::collections::HashMap;
    use switchboard_engine::host::Os;
    use tauri::test::{
        get_ipc_response, mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY,
    };
    use tauri::webview::InvokeRequest;
    use tauri::WebviewWindowBuilder;

    struct TestApp {
        _home: tempfile::TempDir,
        app: tauri::App<MockRuntime>,
        webview: tauri::WebviewWindow<MockRuntime>,
    }

    /// The app over an empty temporary HOME (no env var is touched).
    fn app() -> TestApp {
        app_with(|_| {})
    }

    /// The app over a temporary HOME that `prepare` fills first.
    fn app_with(prepare: impl FnOnce(&std::path::Path)) -> TestApp {
        let home = tempfile::tempdir().unwrap();
        prepare(home.path());
        let app = builder(
            mock_builder(),
            Engine::for_host(mock_host(home.path())),
            Shell {
                serve_gateway: false,
            },
        )
        .build(mock_context(noop_assets()))
        .expect("mock app builds");
        let webview = WebviewWindowBuilder::new(&app, "main", Default::default())
            .build()
            .expect("mock webview builds");
        TestApp {
            _home: home,
            app,
            webview,
        }
    }

    /// This machine as the engine sees it: Linux, `home` as HOME (the only
    /// variable set), a system root inside it.
    pub(crate) fn mock_host(home: &std::path::Path) -> Host {
        Host {
            os: Os::Linux,
            home: home.to_path_buf(),
            vars: HashMap::from([("HOME".to_string(), home.to_string_lossy().to_string())]),
            system_root: home.join("system"),
        }
    }

    /// The app over a real engine on `home` with an in-memory keychain,
    /// built on Tauri's mock runtime, its engine started. A mock app runs no
    /// event loop, so the setup hook that starts the engine in the real app
    /// does not run: it is started here, as it would be.
    pub(crate) fn started_app_with_keychain(
        home: &std::path::Path,
    ) -> (
        std::sync::Arc<switchboard_engine::auth::vault::MemoryBackend>,
        tauri::App<MockRuntime>,
        tauri::WebviewWindow<MockRuntime>,
    ) {
        use switchboard_engine::auth::vault::{MemoryBackend, Vault};
        let engine = Engine::for_host(mock_host(home));
        let keychain = std::sync::Arc::new(MemoryBackend::default());
        engine
            .manager()
            .set_vault(Some(Vault::new(keychain.clone())));
        let app = builder(
            mock_builder(),
            engine,
            Shell {
                serve_gateway: false,
            },
        )
        .build(mock_context(noop_assets()))
        .expect("mock app builds");
        let webview = WebviewWindowBuilder::new(&app, "main", Default::default())
            .build()
            .expect("mock webview builds");
        let engine = app.state::<AppState>().engine.clone();
        tauri::async_runtime::block_on(async move { engine.start().await });
        (keychain, app, webview)
    }

    fn invoke(t: &TestApp, cmd: &str, args: Value) -> Result<Value, Value> {
        invoke_on(&t.webview, cmd, args)
    }

    pub(crate) fn invoke_on(
        webview: &tauri::WebviewWindow<MockRuntime>,
        cmd: &str,
        args: Value,
    ) -> Result<Value, Value> {
        let request = InvokeRequest {
            cmd: cmd.into(),
            callback: tauri::ipc::CallbackFn(0),
            error: tauri::ipc::CallbackFn(1),
            // On Linux the IPC origin is the custom protocol, not http://.
            url: "tauri://localhost".parse().unwrap(),
            body: tauri::ipc::InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        };
        get_ipc_response(webview, request).map(|r| r.deserialize::<Value>().expect("JSON body"))
    }

    #[test]
    fn app_info_returns_package_name_and_version() {
        let t = app();
        let info = invoke(&t, "app_info", json!({})).expect("app_info succeeds");
        let pkg = t.app.package_info();
        assert_eq!(
            info["name"],
            pkg.name.as_str(),
            "name comes from the package info: {info}"
        );
        assert_eq!(
            info["version"],
            pkg.version.to_string(),
            "version comes from the package info: {info}"
        );
    }

    #[test]
    fn sign_in_refuses_a_stdio_server_and_reports_sign_in_status() {
        let t = app();
        let def = json!({"name": "local", "transport": "stdio", "command": "local-mcp", "enabled": false});
        invoke(
            &t,
            "add_server",
            json!({"source": "switchboard", "def": def}),
        )
        .expect("add_server succeeds");
        let err = invoke(&t, "sign_in", json!({"name": "local"}))
            .expect_err("stdio servers do not sign in");
        assert_eq!(err["code"], "oauth-not-remote", "{err}");
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .contains("\"local\" is not a remote"),
            "{err}"
        );
        let status = invoke(&t, "sign_in_status", json!({"name": "local"}))
            .expect("sign_in_status succeeds");
        assert_eq!(status["signedIn"], false, "{status}");
        assert!(
            !status["store"].as_str().unwrap().is_empty(),
            "names the keychain: {status}"
        );
        invoke(&t, "cancel_sign_in", json!({"name": "local"})).expect("cancelling nothing is fine");
    }

    #[test]
    fn list_sources_starts_with_switchboards_own_file() {
        let t = app();
        let sources = invoke(&t, "list_sources", json!({})).expect("list_sources succeeds");
        let list = sources.as_array().expect("an array");
        assert!(
            list.iter()
                .any(|s| s["id"] == "switchboard" && s["exists"] == false),
            "Switchboard's own source is listed: {sources}"
        );
    }

    #[test]
    fn add_server_writes_the_file_and_lists_it_and_refuses_a_duplicate() {
        let t = app();
        let def = json!({"name": "notes", "transport": "stdio", "command": "notes-mcp", "args": ["--db", "x"], "env": {"TOKEN": "secret"}, "enabled": false});
        invoke(
            &t,
            "add_server",
            json!({"source": "switchboard", "def": def}),
        )
        .expect("add_server succeeds");

        // Listed at once; its runtime state follows in the background.
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let notes = loop {
            let servers = invoke(&t, "list_servers", json!({})).expect("list_servers succeeds");
            let notes = servers
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == "notes")
                .cloned()
                .unwrap_or_else(|| panic!("notes is listed: {servers}"));
            if notes["runtime"].is_object() || std::time::Instant::now() > end {
                break notes;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(notes["source"], "switchboard");
        assert_eq!(notes["command"], "notes-mcp");
        assert_eq!(
            notes["runtime"]["status"]["state"], "disabled",
            "a disabled server is shown as disabled: {notes}"
        );

        let err = invoke(
            &t,
            "add_server",
            json!({"source": "switchboard", "def": def}),
        )
        .expect_err("a second add fails");
        assert_eq!(err["code"], "already-exists", "{err}");
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .starts_with("Server \"notes\" already exists in "),
            "{err}"
        );
    }

    /// History and undo through the commands: an add is listed with its
    /// diff, undo removes the file it created, an undo over someone else's
    /// change is refused with `conflict` and writes nothing.
    #[test]
    fn list_history_shows_an_edit_and_undo_restores_or_refuses_with_the_conflict() {
        let t = app();
        let path = t._home.path().join(".config/switchboard/servers.json");
        let def = json!({"name": "notes", "transport": "stdio", "command": "notes-mcp", "env": {"TOKEN": "s3cret-value"}, "enabled": false});
        invoke(
            &t,
            "add_server",
            json!({"source": "switchboard", "def": def}),
        )
        .expect("add_server succeeds");
        let written = std::fs::read(&path).expect("servers.json was created");

        let list = invoke(&t, "list_history", json!({})).expect("list_history succeeds");
        let entries = list.as_array().unwrap();
        assert_eq!(entries.len(), 1, "{list}");
        let e = &entries[0];
        assert_eq!(e["summary"], "add \"notes\" to Switchboard", "{e}");
        assert_eq!(e["server"], "notes");
        assert_eq!(e["state"], "ready");
        assert_eq!(e["files"][0]["path"], path.to_string_lossy().as_ref());
        assert!(
            e["files"][0].get("beforeHash").is_none(),
            "the file did not exist before: {e}"
        );
        assert!(
            e["files"][0]["diff"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["kind"] == "added" && l["text"].as_str().unwrap().contains("notes-mcp")),
            "{e}"
        );
        assert!(
            !e.to_string().contains("s3cret-value"),
            "env values are masked in the listing: {e}"
        );

        invoke(&t, "undo", json!({"id": e["id"]})).expect("undo succeeds");
        assert!(
            !path.exists(),
            "undoing the add that created servers.json removes it"
        );
        let list = invoke(&t, "list_history", json!({})).unwrap();
        assert_eq!(
            list[0]["undoOf"], e["id"],
            "the undo is an entry too: {list}"
        );
        assert_eq!(list[1]["state"], "undone", "{list}");
        let err = invoke(&t, "undo", json!({"id": e["id"]})).expect_err("undoing twice is refused");
        assert_eq!(err["code"], "already-undone", "{err}");

        // Redo, then someone else edits the file: undo refuses.
        invoke(&t, "undo", json!({"id": list[0]["id"]})).expect("undoing the undo succeeds");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            written,
            "the file is back as Switchboard wrote it"
        );
        let theirs = String::from_utf8(written)
            .unwrap()
            .replace("notes-mcp", "notes-mcp-2");
        std::fs::write(&path, &theirs).unwrap();
        let newest = invoke(&t, "list_history", json!({})).unwrap()[0]["id"].clone();
        let err = invoke(&t, "undo", json!({"id": newest})).expect_err("the file changed since");
        assert_eq!(err["code"], "conflict", "{err}");
        assert_eq!(
            err["message"],
            format!(
                "{} changed since Switchboard wrote it; undo would overwrite those changes",
                path.display()
            )
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            theirs,
            "nothing was overwritten"
        );
        let err = invoke(&t, "undo", json!({"id": 999})).expect_err("no such entry");
        assert_eq!(err["code"], "not-found", "{err}");
    }

    /// The form sends the definition it was opened with and the file's hash
    /// as it showed it: a file changed since is refused, not overwritten;
    /// with the new hash only the edited field is written.
    #[test]
    fn update_server_with_a_stale_content_hash_is_a_conflict() {
        let t = app();
        let def = json!({"name": "notes", "transport": "stdio", "command": "notes-mcp", "args": ["--db", "x"], "enabled": false});
        invoke(
            &t,
            "add_server",
            json!({"source": "switchboard", "def": def, "contentHash": null}),
        )
        .expect("add_server succeeds");
        let sources = invoke(&t, "list_sources", json!({})).unwrap();
        let own = sources
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == "switchboard")
            .unwrap()
            .clone();
        assert!(
            own["fields"]
                .as_array()
                .unwrap()
                .contains(&json!("restartPolicy")),
            "Switchboard's file stores every field: {own}"
        );
        let (path, seen) = (
            own["path"].as_str().unwrap().to_string(),
            own["contentHash"].as_str().unwrap().to_string(),
        );

        // Another program saves the file while the form is open.
        let theirs = std::fs::read_to_string(&path).unwrap().replace(
            "\"notes-mcp\"",
            "\"notes-mcp\",\n      \"cwd\": \"/srv/notes\"",
        );
        std::fs::write(&path, &theirs).unwrap();
        let edited = json!({"name": "notes", "transport": "stdio", "command": "notes-mcp", "args": ["--db", "y"], "enabled": false});
        let err = invoke(&t, "update_server", json!({"source": "switchboard", "name": "notes", "def": edited, "original": def, "contentHash": seen})).expect_err("stale hash");
        assert_eq!(err["code"], "conflict", "{err}");
        assert_eq!(
            err["message"],
            format!("{path} changed since you opened it; your edit was not saved")
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            theirs,
            "the other program's save survives"
        );

        // Seen again (the UI reloads), the same edit lands on top of it.
        let fresh: String = switchboard_engine::writer::content_hash(theirs.as_bytes())
            .0
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        invoke(&t, "update_server", json!({"source": "switchboard", "name": "notes", "def": edited, "original": def, "contentHash": fresh})).expect("fresh hash");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            theirs.replace("\"x\"", "\"y\""),
            "only the argument changed; their cwd stays"
        );
    }

    #[test]
    fn entry_text_is_the_clients_own_format_and_reads_back() {
        let t = app();
        let def = json!({"name": "notes", "transport": "stdio", "command": "notes-mcp", "args": ["--db", "x"], "enabled": true, "timeout": 5000});
        let entry = invoke(
            &t,
            "entry_text",
            json!({"source": "switchboard", "def": def}),
        )
        .expect("entry_text succeeds");
        assert_eq!(entry["format"], "json");
        let text = entry["text"].as_str().unwrap();
        assert!(text.contains("\"timeout\": 5000"), "{text}");
        let back = invoke(
            &t,
            "parse_entry_text",
            json!({"source": "switchboard", "name": "notes", "text": text}),
        )
        .expect("reads back");
        assert_eq!(back, def);
        let err = invoke(&t, "parse_entry_text", json!({"source": "switchboard", "name": "notes", "text": "{\n  \"command\": \"x\",\n  \"args\": 3\n}"})).expect_err("args must be a list");
        assert_eq!(err["code"], "invalid", "{err}");
        assert_eq!(
            err["message"],
            "Invalid server config: line 3: \"args\" should be a list of strings, found a number"
        );
    }

    #[test]
    fn invalid_names_and_stale_elicitations_are_errors_with_codes() {
        let t = app();
        let bad =
            json!({"name": "has space", "transport": "stdio", "command": "x", "enabled": true});
        let err = invoke(
            &t,
            "add_server",
            json!({"source": "switchboard", "def": bad}),
        )
        .expect_err("invalid name is refused");
        assert_eq!(err["code"], "invalid", "{err}");
        let err = invoke(
            &t,
            "answer_elicitation",
            json!({"id": 42, "action": "decline"}),
        )
        .expect_err("no such elicitation");
        assert_eq!(err["code"], "not-found", "{err}");
        let err = invoke(&t, "server_logs", json!({"name": "nope"})).expect_err("unknown server");
        assert_eq!(err["code"], "not-found", "{err}");
    }

    /// The rmcp fixture server (tests/src/bin/fixture_server.rs), built by
    /// `cargo build -p switchboard-tests --bin fixture-server` (a workspace
    /// `cargo test` builds it first); `SWITCHBOARD_FIXTURE_SERVER` overrides.
    pub(crate) fn fixture_server() -> std::path::PathBuf {
        if let Some(p) = std::env::var_os("SWITCHBOARD_FIXTURE_SERVER") {
            return p.into();
        }
        let exe = std::env::current_exe().unwrap();
        let debug = exe.parent().and_then(|deps| deps.parent()).unwrap();
        let path = debug.join(format!("fixture-server{}", std::env::consts::EXE_SUFFIX));
        assert!(
            path.exists(),
            "{} is missing: run `cargo build -p switchboard-tests --bin fixture-server` first",
            path.display()
        );
        path
    }

    /// Adds `fixture-server --name beta --resources` and waits until it is connected.
    fn app_with_beta() -> TestApp {
        let t = app();
        let command = fixture_server().to_string_lossy().to_string();
        let def = json!({"name": "beta", "transport": "stdio", "command": command, "args": ["--name", "beta", "--resources"], "enabled": true});
        invoke(
            &t,
            "add_server",
            json!({"source": "switchboard", "def": def}),
        )
        .expect("add_server succeeds");
        let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let servers = invoke(&t, "list_servers", json!({})).unwrap();
            let state = servers
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == "beta")
                .map(|s| s["runtime"]["status"]["state"].clone());
            if state == Some(json!("connected")) {
                return t;
            }
            assert!(
                std::time::Instant::now() < end,
                "beta did not connect within 30 s: {servers}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    #[test]
    fn resources_and_prompts_of_a_connected_server_match_their_typescript_shapes() {
        let t = app_with_beta();
        let list = invoke(&t, "list_resources", json!({"server": "beta"}))
            .expect("list_resources succeeds");
        types::tests::assert_mirrors::<types::ResourceList>("ResourceList", list.clone());
        assert!(
            list["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["uri"] == "fixture://greeting"),
            "{list}"
        );
        assert_eq!(
            list["resourceTemplates"][0]["uriTemplate"], "fixture://item/{id}",
            "{list}"
        );

        let read = invoke(
            &t,
            "read_resource",
            json!({"server": "beta", "uri": "fixture://greeting"}),
        )
        .expect("read_resource succeeds");
        types::tests::assert_mirrors::<types::ResourceRead>("ResourceRead", read.clone());
        assert_eq!(read["contents"][0]["text"], "Hello from beta", "{read}");

        let prompts =
            invoke(&t, "list_prompts", json!({"server": "beta"})).expect("list_prompts succeeds");
        types::tests::assert_mirrors::<types::PromptList>("PromptList", prompts.clone());
        assert_eq!(
            prompts["prompts"][0]["arguments"][0]["required"], true,
            "{prompts}"
        );
        let got = invoke(
            &t,
            "get_prompt",
            json!({"server": "beta", "name": "greet", "args": {"name": "Ada"}}),
        )
        .expect("get_prompt succeeds");
        types::tests::assert_mirrors::<types::PromptResult>("PromptResult", got.clone());
        assert_eq!(
            got["messages"][0]["content"]["text"], "Hello, Ada!",
            "{got}"
        );

        invoke(
            &t,
            "subscribe_resource",
            json!({"server": "beta", "uri": "fixture://counter"}),
        )
        .expect("subscribe succeeds");
        invoke(
            &t,
            "unsubscribe_resource",
            json!({"server": "beta", "uri": "fixture://counter"}),
        )
        .expect("unsubscribe succeeds");
        let err = invoke(
            &t,
            "unsubscribe_resource",
            json!({"server": "nope", "uri": "x://y"}),
        )
        .expect_err("unknown server");
        assert_eq!(err["code"], "not-found", "{err}");
    }

    #[test]
    fn cancelling_a_running_tool_call_ends_it_as_aborted() {
        let t = app_with_beta();
        let started = std::time::Instant::now();
        let (call, cancelled) = std::thread::scope(|s| {
            let webview = t.webview.clone();
            let call = s.spawn(move || {
                invoke_on(
                    &webview,
                    "call_tool",
                    json!({"name": "mcp_beta_sleep", "args": {"ms": 20000}, "callId": "c-1"}),
                )
            });
            // Wait until the call is registered, then cancel it.
            let calls = t.app.state::<tool_calls::ToolCalls>();
            while calls.running() == 0 {
                assert!(started.elapsed().as_secs() < 10, "the call never started");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            std::thread::sleep(std::time::Duration::from_millis(300));
            let cancelled = invoke(&t, "cancel_tool_call", json!({"callId": "c-1"}))
                .expect("cancel_tool_call succeeds");
            (call.join().unwrap(), cancelled)
        });
        assert_eq!(cancelled, json!(true), "the call was running");
        let err = call.expect_err("a cancelled call is not a result");
        assert_eq!(err["code"], "aborted", "{err}");
        assert!(
            started.elapsed().as_secs() < 10,
            "the call ended when cancelled, not after the 20 s sleep"
        );
        let again = invoke(&t, "cancel_tool_call", json!({"callId": "c-1"}))
            .expect("cancel_tool_call succeeds");
        assert_eq!(again, json!(false), "an ended call is forgotten");
    }

    /// Profiles through the commands: made with a server, listed after the
    /// built-in Everything with their tools and tokens, a tool switched off
    /// lowers the total, switched to; the engine's refusals come back with
    /// its code and message.
    #[test]
    fn profiles_are_made_listed_switched_and_refused_with_the_engines_message() {
        // The app counts with its sidecar; a test counts in its own process.
        switchboard_engine::tokens::use_in_process();
        let t = app_with_beta();
        let change = |c: Value| invoke(&t, "change_profile", json!({ "change": c }));
        change(json!({"kind": "create", "name": "Writing", "servers": ["beta"]})).expect("create");
        let costs = invoke(&t, "tool_costs", json!({})).expect("tool_costs succeeds");
        let echo = costs
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "mcp_beta_echo")
            .unwrap_or_else(|| panic!("beta's echo has a cost: {costs}"));
        assert_eq!(
            (&echo["server"], &echo["tool"]),
            (&json!("beta"), &json!("echo"))
        );
        assert!(echo["tokens"].as_u64().unwrap() > 10, "{echo}");

        let list = invoke(&t, "list_profiles", json!({})).expect("list_profiles succeeds");
        let (all, writing) = (&list[0], &list[1]);
        assert_eq!(
            (&all["name"], &all["builtIn"], &all["active"]),
            (&json!("Everything"), &json!(true), &json!(true)),
            "{list}"
        );
        assert_eq!(all["tokenizer"], "o200k_base", "{all}");
        assert_eq!(writing["name"], "Writing", "{list}");
        assert_eq!(writing["servers"][0]["name"], "beta", "{writing}");
        assert_eq!(
            writing["tokens"], all["tokens"],
            "beta is every server here"
        );

        change(json!({"kind": "setTool", "name": "writing", "server": "beta", "tool": "echo", "on": false}))
            .expect("setTool");
        invoke(&t, "switch_profile", json!({"name": "writing"})).expect("switch_profile");
        let list = invoke(&t, "list_profiles", json!({})).unwrap();
        let writing = &list[1];
        assert_eq!(writing["active"], true, "{writing}");
        assert_eq!(list[0]["active"], false, "{list}");
        assert_eq!(
            writing["servers"][0]["leftOut"][0]["tool"], "echo",
            "{writing}"
        );
        assert_eq!(
            writing["tokens"].as_u64().unwrap() + echo["tokens"].as_u64().unwrap(),
            list[0]["tokens"].as_u64().unwrap(),
            "the total drops by echo's cost: {list}"
        );

        let err = change(json!({"kind": "create", "name": "writing"})).expect_err("taken");
        assert_eq!(err["code"], "already-exists", "{err}");
        let err = change(json!({"kind": "delete", "name": "Everything"})).expect_err("built in");
        assert_eq!(err["code"], "invalid", "{err}");
        assert!(
            err["message"].as_str().unwrap().contains("built in"),
            "{err}"
        );
        let err = change(json!({"kind": "add", "name": "Writing", "servers": ["nope"]}))
            .expect_err("unknown server");
        assert_eq!(
            err["message"],
            "no server named \"nope\" was found (see `switchboard discover`)"
        );
        let err = invoke(&t, "switch_profile", json!({"name": "Nope"})).expect_err("unknown");
        assert_eq!(err["code"], "not-found", "{err}");
    }

    /// "Use in…": a profile applied to Cursor's own file through the
    /// command: the report says what was switched off, the change is in the
    /// history, and the profile is then used by cursor.
    #[test]
    fn apply_profile_writes_the_clients_file_and_reports_what_it_changed() {
        let t = app_with(|home| {
            let dir = home.join(".cursor");
            std::fs::create_dir_all(&dir).unwrap();
            let servers =
                r#"{"mcpServers": {"a": {"command": "a-mcp"}, "b": {"command": "b-mcp"}}}"#;
            std::fs::write(dir.join("mcp.json"), servers).unwrap();
        });
        let create = json!({"kind": "create", "name": "Focus", "servers": ["a"]});
        invoke(&t, "change_profile", json!({ "change": create })).expect("create");
        let report = invoke(
            &t,
            "apply_profile",
            json!({"client": "cursor", "profile": "Focus", "via": "file", "follow": false}),
        )
        .expect("apply_profile succeeds");
        assert_eq!(report["disabled"], json!(["b"]), "{report}");
        assert_eq!(report["via"], "file", "{report}");
        assert!(report["historyId"].is_u64(), "recorded: {report}");
        let list = invoke(&t, "list_profiles", json!({})).unwrap();
        assert_eq!(list[1]["usedBy"], json!(["cursor"]), "{list}");
        let err = invoke(
            &t,
            "apply_profile",
            json!({"client": "nope", "profile": "Focus", "via": "file", "follow": false}),
        )
        .expect_err("unknown client");
        assert_eq!(err["code"], "unknown-client", "{err}");
    }

    /// The one command list (`command_list.rs`), the UI's calls and the
    /// capability agree: the window is granted exactly what the UI calls
    /// (every command, listening to events) and nothing else. The sign-in page is opened from
    /// Rust (tauri-plugin-opener), which needs no capability, so a webview
    /// permission to open URLs (or any other plugin's) fails here.
    #[test]
    fn the_window_is_granted_exactly_what_the_ui_calls() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));

        // What the UI calls. api.ts is the one module that talks to Rust.
        let ui = dir.join("../ui/src");
        let mut talkers = vec![];
        let mut stack = vec![ui.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let (p, name) = (e.path(), e.file_name().to_string_lossy().to_string());
                if p.is_dir() {
                    stack.push(p);
                } else if (name.ends_with(".ts") || name.ends_with(".svelte"))
                    && !name.contains(".test.")
                    && std::fs::read_to_string(&p)
                        .unwrap()
                        .contains("@tauri-apps/")
                {
                    talkers.push(
                        p.strip_prefix(&ui)
                            .unwrap()
                            .to_string_lossy()
                            .replace('\\', "/"),
                    );
                }
            }
        }
        assert_eq!(
            talkers,
            ["lib/api.ts"],
            "only api.ts talks to the Rust side"
        );
        let api = std::fs::read_to_string(ui.join("lib/api.ts")).unwrap();
        let imports: Vec<&str> = api
            .lines()
            .filter(|l| l.contains("from '@tauri-apps/"))
            .filter_map(|l| l.split('\'').nth(1))
            .collect();
        assert_eq!(
            imports,
            ["@tauri-apps/api/core", "@tauri-apps/api/event"],
            "the UI uses no plugin from JavaScript"
        );
        // `call<Type>('command', …)`; not `call<T>(command: string …)`, the definition.
        let mut called: Vec<String> = api
            .match_indices("call<")
            .filter_map(|(at, _)| {
                api[at + 5..]
                    .split_once(">('")
                    .filter(|(ty, _)| !ty.contains(['(', '\n']))
            })
            .filter_map(|(_, rest)| rest.split_once('\'').map(|(name, _)| name.to_string()))
            .collect();
        called.sort();
        called.dedup();
        let mut commands: Vec<String> = COMMANDS.iter().map(|c| c.to_string()).collect();
        commands.sort();
        assert_eq!(
            called, commands,
            "the UI calls every command in COMMANDS, and no other"
        );
        // The `commands` set build.rs wrote: allow-<command> for each.
        let set: Value = toml_set(&dir.join("permissions/commands.toml"));
        let mut in_set: Vec<String> = set["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect();
        in_set.sort();
        let mut allow: Vec<String> = commands
            .iter()
            .map(|c| format!("allow-{}", c.replace('_', "-")))
            .collect();
        allow.sort();
        assert_eq!(in_set, allow, "the commands set allows every command");
        let mut want: Vec<String> = vec!["commands".to_string()];
        if api.contains("import { listen") {
            // `listen` resolves to an unlisten function, which calls `unlisten`.
            want.extend([
                "core:event:allow-listen".to_string(),
                "core:event:allow-unlisten".to_string(),
            ]);
        }
        want.sort();

        // What the window is granted: the one capability, for the main window, local only.
        let files: Vec<String> = std::fs::read_dir(dir.join("capabilities"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(files, ["default.json"], "one capability file");
        let cap: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("capabilities/default.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(cap["windows"], json!(["main"]), "{cap}");
        assert!(
            cap.get("remote").is_none() && cap.get("webviews").is_none(),
            "no remote pages or other webviews get IPC: {cap}"
        );
        let permissions = cap["permissions"].as_array().unwrap();
        assert!(
            permissions.iter().all(Value::is_string),
            "no scoped (object) permissions: {cap}"
        );
        let mut granted: Vec<String> = permissions
            .iter()
            .filter_map(|p| p.as_str().map(str::to_string))
            .collect();
        granted.sort();
        assert_eq!(
            granted, want,
            "capabilities/default.json grants exactly what the UI calls"
        );
    }

    /// The one `[[set]]` of a permission file, as JSON (`identifier`, `permissions`).
    fn toml_set(path: &std::path::Path) -> Value {
        let text = std::fs::read_to_string(path).unwrap();
        let doc: toml_edit::DocumentMut = text.parse().unwrap();
        let set = doc["set"].as_array_of_tables().unwrap().get(0).unwrap();
        let permissions: Vec<String> = set["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        json!({"identifier": set["identifier"].as_str(), "permissions": permissions})
    }
}
