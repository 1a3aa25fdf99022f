//! The sign-in commands of issue 17 through the app's IPC, over a real
//! engine with an in-memory keychain: a pre-registered OAuth app's secret
//! set through the app, a sign-in with it at the test authorization server
//! (no registration endpoint), the accounts it lists, sign out everywhere,
//! the errors the UI branches on (`oauth-no-registration`,
//! `oauth-port-taken`) and a server's `insufficient_scope` answer as step-up.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_engine::auth::vault::MemoryBackend;
use switchboard_engine::engine::Engine;
use tauri::test::MockRuntime;
use tauri::Manager;

use crate::tests::invoke_on;
use crate::AppState;

struct App {
    home: tempfile::TempDir,
    keychain: Arc<MemoryBackend>,
    app: tauri::App<MockRuntime>,
    webview: tauri::WebviewWindow<MockRuntime>,
}

impl App {
    /// The app over a home whose `~/.claude.json` holds `claude` (its
    /// `mcpServers`), with sign-ins in memory instead of the OS keychain.
    fn new(claude: Value) -> App {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".claude.json"),
            serde_json::to_string_pretty(&json!({ "mcpServers": claude })).unwrap(),
        )
        .unwrap();
        let (keychain, app, webview) = crate::tests::started_app_with_keychain(home.path());
        App {
            home,
            keychain,
            app,
            webview,
        }
    }

    fn invoke(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        invoke_on(&self.webview, cmd, args)
    }

    fn engine(&self) -> Arc<Engine> {
        self.app.state::<AppState>().engine.clone()
    }

    /// Waits until `name`'s state is `want` (`connected`, `needs-auth`, …).
    fn wait_for(&self, name: &str, want: &str) -> Value {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let servers = self.invoke("list_servers", json!({})).unwrap();
            let s = servers
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == name)
                .cloned();
            if let Some(s) = s.filter(|s| s["runtime"]["status"]["state"] == want) {
                return s;
            }
            assert!(
                Instant::now() < end,
                "{name} did not become {want} within 30 s: {servers}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A port nothing listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET url` over plain HTTP/1.1: the status and the `Location` header.
fn get(url: &str) -> (u16, Option<String>, String) {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut s = TcpStream::connect(host).unwrap_or_else(|e| panic!("connecting to {host}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n",
        if path.is_empty() { "/" } else { path }
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let location = head.lines().find_map(|l| {
        l.split_once(':')
            .filter(|(k, _)| k.eq_ignore_ascii_case("location"))
            .map(|(_, v)| v.trim().to_string())
    });
    (status, location, body.to_string())
}

/// The user's browser: the authorization page approves at once and
/// redirects to Switchboard's listener (whose page says how it went).
fn browse(auth_url: &str) {
    let (status, location, _) = get(auth_url);
    assert_eq!(status, 302, "the authorization server redirects back");
    get(&location.expect("a Location header"));
}

fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle))
            {
                hits.push(p.display().to_string());
            }
        }
    }
    hits
}

/// A server written by `claude mcp add --transport http --client-id
/// claude-app --callback-port PORT prereg URL`, at an authorization server
/// with no registration endpoint and that one confidential client: the
/// secret set through the app is used by the sign-in (it works only with
/// it), lives only in the keychain, and outlives signing out everywhere.
#[test]
fn a_secret_set_in_the_app_signs_in_a_pre_registered_app_and_the_account_is_listed() {
    let port = free_port();
    let secret = format!("app-secret-{}", std::process::id());
    let redirect = format!("http://localhost:{port}/callback");
    let server = tauri::async_runtime::block_on(switchboard_tests::spawn_oauth_server(&[
        "--no-registration",
        "--client",
        &format!("claude-app={redirect}"),
        "--client-secret",
        &format!("claude-app={secret}"),
    ]))
    .unwrap();
    let t = App::new(
        json!({"prereg": {"type": "http", "url": server.url, "oauth": {"clientId": "claude-app", "callbackPort": port}}}),
    );
    t.wait_for("prereg", "needs-auth");

    // Sign in as the `sign_in` command does, with the test as the browser.
    let open: switchboard_engine::auth::oauth::BrowserOpener = Arc::new(|url: &str| {
        let url = url.to_string();
        std::thread::spawn(move || browse(&url));
        Ok(())
    });
    let engine = t.engine();
    let without = tauri::async_runtime::block_on(engine.sign_in(
        "prereg",
        Some(open.clone()),
        Duration::from_secs(30),
    ));
    assert!(
        without.is_err(),
        "the app is confidential: without its secret the code exchange is refused"
    );

    let status = t
        .invoke("oauth_client_secret_status", json!({"name": "prereg"}))
        .expect("status succeeds");
    assert_eq!(status, json!({"stored": false, "store": "in-memory store"}));
    t.invoke(
        "set_oauth_client_secret",
        json!({"name": "prereg", "secret": secret}),
    )
    .expect("the secret is kept");
    let status = t
        .invoke("oauth_client_secret_status", json!({"name": "prereg"}))
        .unwrap();
    assert_eq!(status["stored"], true, "{status}");
    assert!(
        !status.to_string().contains(&secret),
        "the status never carries the secret: {status}"
    );

    let empty = t
        .invoke("list_accounts", json!({}))
        .expect("list_accounts succeeds");
    assert_eq!(empty, json!({"accounts": [], "store": "in-memory store"}));

    tauri::async_runtime::block_on(engine.sign_in("prereg", Some(open), Duration::from_secs(30)))
        .expect("the sign-in with the pre-registered app succeeds");
    t.wait_for("prereg", "connected");
    let end = Instant::now() + Duration::from_secs(10);
    while t.invoke("list_tools", json!({})).unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["server"] == "prereg")
        .count()
        != 2
    {
        assert!(
            Instant::now() < end,
            "prereg's two tools are listed: {}",
            t.invoke("list_tools", json!({})).unwrap()
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let list = t.invoke("list_accounts", json!({})).unwrap();
    let accounts = list["accounts"].as_array().unwrap();
    assert_eq!(accounts.len(), 1, "{list}");
    let a = &accounts[0];
    assert_eq!(a["server"], "prereg");
    assert_eq!(a["clientId"], "claude-app");
    assert_eq!(a["issuer"], server.base_url(), "{a}");
    assert_eq!(a["scopes"], json!(["mcp"]));
    assert_eq!(a["hasRefreshToken"], true);
    assert_eq!(a["usedBy"], json!(["prereg"]));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        a["signedInAt"]
            .as_u64()
            .is_some_and(|s| s <= now && s + 60 > now),
        "{a}"
    );
    assert!(a["expiresAt"].as_u64().is_some_and(|e| e > now), "{a}");
    let dump = t.keychain.dump();
    assert!(
        !list.to_string().contains(&secret)
            && dump
                .iter()
                .all(|(_, v)| !list.to_string().contains(v.as_str())),
        "nothing secret in the listing: {list}"
    );
    assert!(
        files_containing(t.home.path(), &secret).is_empty(),
        "the secret is in a file: {:?}",
        files_containing(t.home.path(), &secret)
    );

    let out = t
        .invoke("sign_out_everywhere", json!({}))
        .expect("sign_out_everywhere succeeds");
    assert_eq!(out, json!(["prereg"]));
    assert_eq!(
        t.invoke("list_accounts", json!({})).unwrap()["accounts"],
        json!([])
    );
    t.wait_for("prereg", "needs-auth");
    assert_eq!(
        t.invoke("oauth_client_secret_status", json!({"name": "prereg"}))
            .unwrap()["stored"],
        true,
        "the app's secret outlives signing out"
    );
    t.invoke(
        "set_oauth_client_secret",
        json!({"name": "prereg", "secret": null}),
    )
    .expect("forgetting the secret succeeds");
    assert_eq!(
        t.invoke("oauth_client_secret_status", json!({"name": "prereg"}))
            .unwrap()["stored"],
        false
    );
    assert!(
        t.keychain.dump().is_empty(),
        "nothing is left in the keychain: {:?}",
        t.keychain.dump().iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    drop(server);
}

/// The two sign-in errors the UI treats specially, as the `sign_in`
/// command returns them, before any browser would open: no client id at a
/// server without registration says to set up an OAuth app; a fixed
/// callback port another program holds names the port.
#[test]
fn sign_in_errors_say_what_to_enter_and_which_port_is_taken() {
    let server = tauri::async_runtime::block_on(switchboard_tests::spawn_oauth_server(&[
        "--no-registration",
    ]))
    .unwrap();
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let t = App::new(json!({
        "noapp": {"type": "http", "url": server.url},
        "busy": {"type": "http", "url": server.url, "oauth": {"clientId": "x", "callbackPort": port}},
    }));
    t.wait_for("noapp", "needs-auth");
    let err = t
        .invoke("sign_in", json!({"name": "noapp"}))
        .expect_err("no registration and no client id");
    assert_eq!(err["code"], "oauth-no-registration", "{err}");
    let m = err["message"].as_str().unwrap();
    assert!(
        m.contains("\"noapp\"") && m.contains("OAuth app section") && m.contains("client ID"),
        "{m}"
    );

    let err = t
        .invoke("sign_in", json!({"name": "busy"}))
        .expect_err("the callback port is taken");
    assert_eq!(err["code"], "oauth-port-taken", "{err}");
    assert!(
        err["message"].as_str().unwrap().contains(&port.to_string()),
        "{err}"
    );
    drop(holder);
}

/// A server that answers 403 `insufficient_scope` needs a new sign-in; the
/// `step_up` command says which scopes it asks for and why, so the app can
/// show it before the browser opens. A server that merely needs a sign-in
/// has no step-up.
#[test]
fn step_up_names_the_scopes_and_reason_of_an_insufficient_scope_answer() {
    let forbidding = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", forbidding.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut c in forbidding.incoming().flatten() {
            let mut buf = [0u8; 8192];
            let _ = c.set_read_timeout(Some(Duration::from_millis(500)));
            let _ = c.read(&mut buf);
            let _ = c.write_all(b"HTTP/1.1 403 Forbidden\r\nWWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"files:read files:write\", error_description=\"Writing needs files:write\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    let plain =
        tauri::async_runtime::block_on(switchboard_tests::spawn_oauth_server::<&str>(&[])).unwrap();
    let t = App::new(
        json!({"files": {"type": "http", "url": url}, "plain": {"type": "http", "url": plain.url}}),
    );
    t.wait_for("files", "needs-auth");
    let step = t
        .invoke("step_up", json!({"name": "files"}))
        .expect("step_up succeeds");
    assert_eq!(
        step,
        json!({"scopes": ["files:read", "files:write"], "reason": "Writing needs files:write"})
    );
    t.wait_for("plain", "needs-auth");
    assert_eq!(
        t.invoke("step_up", json!({"name": "plain"})).unwrap(),
        Value::Null,
        "a 401 asks for no more scopes"
    );
    assert_eq!(
        t.invoke("step_up", json!({"name": "nope"})).unwrap(),
        Value::Null
    );
}
