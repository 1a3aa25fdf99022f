//! Sign-in with the real OS keychain, where sign-in tokens live: a Secret Service
//! (gnome-keyring) on a private D-Bus session. `.ci/test` runs these with
//! `with_keychain cargo test -p switchboard-engine --features keychain-tests --test keychain`;
//! without that session they would fail, hence the feature.
//!
//! What a user would notice: `switchboard login` prints a link and finishes
//! when the browser comes back; the next, separate process uses the server
//! with no browser step; `logout` takes the tokens away; no token is ever
//! written to a file; with no keychain, sign-in refuses instead of writing
//! tokens in plain text.
#![cfg(feature = "keychain-tests")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_engine::auth::vault::{
    account, part_account, Keychain, OAuthRecord, SecretBackend, Vault,
};
use switchboard_tests::spawn_oauth_server;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

fn home_with(servers: Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join(".config/switchboard/servers.json");
    std::fs::create_dir_all(own.parent().unwrap()).unwrap();
    std::fs::write(
        &own,
        serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap(),
    )
    .unwrap();
    dir
}

/// The CLI with a fake home and the test's D-Bus session (and so its keychain).
fn cli(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SWITCHBOARD_SYSTEM_ROOT", home.join("sys"));
    for k in [
        "DBUS_SESSION_BUS_ADDRESS",
        "XDG_RUNTIME_DIR",
        "XDG_DATA_HOME",
    ] {
        if let Ok(v) = std::env::var(k) {
            c.env(k, v);
        }
    }
    c
}

/// The user's browser: the authorization page, then its redirect to our listener.
fn browse(auth_url: &str) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let r = http.get(auth_url).send().await.unwrap();
        let back = r.headers()["location"].to_str().unwrap().to_string();
        http.get(&back).send().await.unwrap().text().await.unwrap()
    })
}

fn grep_tree(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p)
                .map(|b| String::from_utf8_lossy(&b).contains(needle))
                .unwrap_or(false)
            {
                hits.push(p.display().to_string());
            }
        }
    }
    hits
}

#[test]
fn the_keychain_backend_stores_reads_and_deletes_a_secret() {
    Keychain::status().expect("a Secret Service is running (see .ci/test's with_keychain)");
    let k = Keychain;
    let account = format!("test:{}", std::process::id());
    assert_eq!(k.get(&account).unwrap(), None);
    k.set(&account, "s3cret").unwrap();
    assert_eq!(k.get(&account).unwrap().as_deref(), Some("s3cret"));
    k.delete(&account).unwrap();
    assert_eq!(k.get(&account).unwrap(), None);
    k.delete(&account).expect("deleting what is gone is fine");
}

/// The names of this process's threads.
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_string())
        .collect()
}

/// The keychain can be asked straight from an async task: its requests run
/// on a thread of their own.
#[tokio::test(flavor = "multi_thread")]
async fn the_keychain_asked_from_an_async_task_answers_on_its_own_thread() {
    let k = Keychain;
    let account = format!("test-async:{}", std::process::id());
    k.set(&account, "s3cret").unwrap();
    assert_eq!(k.get(&account).unwrap().as_deref(), Some("s3cret"));
    k.delete(&account).unwrap();
    assert_eq!(k.get(&account).unwrap(), None);
    let names = thread_names();
    assert!(
        names.iter().any(|n| n == "switchboard-key"),
        "the keychain's own thread runs: {names:?}"
    );
}

/// Issue 11: a record larger than one item may hold (Windows: 2,560 bytes)
/// is split across items; here a 1,000-byte limit is forced on a 6 KB record.
#[test]
fn a_record_larger_than_one_item_is_split_across_keychain_items_and_read_back_whole() {
    Keychain::status().expect("a Secret Service is running (see .ci/test's with_keychain)");
    let server = format!("split-test-{}", std::process::id());
    let token = "t".repeat(6 * 1024);
    let credentials = json!({ "client_id": "c1", "token_response": { "access_token": token, "token_type": "bearer", "expires_in": 3600 } });
    let rec = OAuthRecord {
        redirect_port: Some(40000),
        credentials: Some(serde_json::from_value(credentials).unwrap()),
        ..OAuthRecord::new("https://mcp.example.com/mcp")
    };
    let split = || Vault::with_item_limit(std::sync::Arc::new(Keychain), 1000);
    split().put(&server, &rec).unwrap();
    let head = Keychain
        .get(&account(&server))
        .unwrap()
        .expect("the head item");
    assert!(head.starts_with("switchboard-parts:7:"), "{head}");
    assert!((1..=7).all(|i| Keychain
        .get(&part_account(&server, i))
        .unwrap()
        .is_some_and(|p| p.len() <= 1000)));
    let back = split().record(&server).unwrap().expect("read back");
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value(&rec).unwrap()
    );
    split().remove(&server).unwrap();
    assert_eq!(Keychain.get(&account(&server)).unwrap(), None);
    assert!(
        (1..=8).all(|i| Keychain.get(&part_account(&server, i)).unwrap().is_none()),
        "every part is gone"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn login_then_a_new_process_uses_the_server_without_a_browser_then_logout() {
    let server = spawn_oauth_server::<&str>(&[]).await.unwrap();
    let home = home_with(json!({ "remote": { "type": "http", "url": server.url } }));
    let h = home.path().to_path_buf();

    // Before signing in: needs auth, with the hint.
    let o = cli(&h, &["status", "--server", "remote"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("needs-auth") || text.contains("needs auth"),
        "{text}"
    );

    // `switchboard login` prints the link; the "browser" follows it.
    let mut child = cli(&h, &["login", "remote", "--no-browser", "--timeout", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    let link = loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "login ended before printing a link: {printed}"
        );
        printed.push_str(&line);
        if let Some(l) = line.trim().strip_prefix("http") {
            break format!("http{l}");
        }
    };
    let page = tokio::task::spawn_blocking(move || browse(&link))
        .await
        .unwrap();
    assert!(page.contains("You can close this tab"), "{page}");
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "login failed: {printed}{rest}{err}");
    assert!(
        rest.contains("Signed in to \"remote\"") && rest.contains("Secret Service"),
        "{rest}"
    );
    assert!(rest.contains("Connected: 2 tools"), "{rest}");

    // The tokens are in the keychain, and in no file.
    let vault = Vault::keychain();
    let rec = vault
        .record("remote")
        .unwrap()
        .expect("the sign-in is in the keychain");
    let tokens = serde_json::to_value(rec.credentials.unwrap().token_response.unwrap()).unwrap();
    let access = tokens["access_token"].as_str().unwrap().to_string();
    assert!(
        grep_tree(&h, &access).is_empty(),
        "the token is in a file: {:?}",
        grep_tree(&h, &access)
    );

    // A new process (think: the app restarted) connects with no browser step.
    let o = cli(&h, &["call", "mcp_remote_whoami", "--server", "remote"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("client_id"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    // Sign out (`unauth`, the seed's name for `logout`): the keychain item is gone, the server needs auth again.
    let o = cli(&h, &["unauth", "remote"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    vault.forget_cached();
    assert!(
        vault.record("remote").unwrap().is_none(),
        "logout removed the keychain item"
    );
    let o = cli(&h, &["status", "--server", "remote"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("needs-auth") || text.contains("needs auth"),
        "{text}"
    );
}

/// A sign-in page that is not a web page is neither opened nor
/// printed; `login` fails naming the scheme.
#[tokio::test(flavor = "multi_thread")]
async fn login_refuses_a_sign_in_page_that_is_not_a_web_page_and_prints_no_link() {
    let server = spawn_oauth_server(&["--authorization-endpoint", "file:///etc/passwd"])
        .await
        .unwrap();
    let home = home_with(json!({ "remote": { "type": "http", "url": server.url } }));
    let o = cli(
        home.path(),
        &["login", "remote", "--no-browser", "--timeout", "5"],
    )
    .output()
    .unwrap();
    assert!(!o.status.success());
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(err.contains("Refusing to open \"file:\" link from the server's sign-in metadata: only https (or http on this computer) is opened."), "{err}");
    assert!(
        !out.contains("file:") && !err.contains("/etc/passwd") && !out.contains("open this link"),
        "no link is offered: {out}{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_keychain_sign_in_refuses_instead_of_writing_tokens_to_a_file() {
    let server = spawn_oauth_server::<&str>(&[]).await.unwrap();
    let home = home_with(json!({ "remote": { "type": "http", "url": server.url } }));
    let o = cli(
        home.path(),
        &["login", "remote", "--no-browser", "--timeout", "5"],
    )
    .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
    .output()
    .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no OS keychain is available") && err.contains("plain text"),
        "{err}"
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).is_empty(),
        "no link is offered when the tokens could not be kept"
    );
    let _ = Duration::ZERO;
}

/// `add --url URL --token-stdin`: the token goes to the keychain (bound to
/// that URL), never to a file; it is sent at connect as `Authorization:
/// Bearer`, so a server that insists on it connects; `logout` deletes it.
#[tokio::test(flavor = "multi_thread")]
async fn a_bearer_token_given_on_stdin_is_kept_in_the_keychain_and_sent_at_connect() {
    use std::io::Write;
    let token = format!("static-{}-t0ken", std::process::id());
    let server =
        switchboard_tests::spawn_http_fixture(&["--name", "remote", "--require-bearer", &token])
            .await
            .unwrap();
    let home = home_with(json!({}));
    let h = home.path().to_path_buf();

    let mut child = cli(
        &h,
        &["add", "remote", "--url", &server.url, "--token-stdin"],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{token}\n").as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("Its token is in the OS keychain (Secret Service), not in the file"),
        "{out}"
    );

    // The file has the server and its URL, and no token; no file anywhere has it.
    let file = std::fs::read_to_string(h.join(".config/switchboard/servers.json")).unwrap();
    let entry: Value = serde_json::from_str(&file).unwrap();
    assert_eq!(
        entry["mcpServers"]["remote"],
        json!({ "url": server.url }),
        "nothing but the server in the file"
    );
    assert!(
        grep_tree(&h, &token).is_empty(),
        "the token is in a file: {:?}",
        grep_tree(&h, &token)
    );
    let vault = Vault::keychain();
    assert_eq!(
        vault.token_for("remote", &server.url).unwrap().as_deref(),
        Some(token.as_str())
    );
    assert_eq!(
        vault
            .token_for("remote", "https://elsewhere.example/mcp")
            .unwrap(),
        None,
        "only for the URL it was given for"
    );

    // A new process connects with it; the token shows nowhere in its output.
    let o = cli(&h, &["status", "--server", "remote"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("connected"),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!text.contains(&token) && !String::from_utf8_lossy(&o.stderr).contains(&token));

    // `logout` deletes it, and the server asks for authentication again.
    let o = cli(&h, &["logout", "remote"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(vault.token_for("remote", &server.url).unwrap(), None);
    let o = cli(&h, &["status", "--server", "remote"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        !text.contains("connected"),
        "without the token the server refuses: {text}"
    );
}

/// Issue 17: a server written by `claude mcp add --transport http
/// --client-id claude-app --callback-port PORT remote URL` into
/// `~/.claude.json`, at an authorization server with no registration
/// endpoint and that one confidential client: `switchboard login` signs in
/// with that client on that port (its secret from `MCP_CLIENT_SECRET`, as
/// Claude Code reads it), connects and lists its tools; the secret ends up
/// in the keychain record and in no file.
#[tokio::test(flavor = "multi_thread")]
async fn login_with_a_pre_registered_app_from_claude_codes_entry() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let redirect = format!("http://localhost:{port}/callback");
    let secret = format!("cli-app-secret-{}", std::process::id());
    let server = spawn_oauth_server(&[
        "--no-registration",
        "--client",
        &format!("claude-app={redirect}"),
        "--client-secret",
        &format!("claude-app={secret}"),
    ])
    .await
    .unwrap();
    let home = home_with(json!({}));
    let h = home.path().to_path_buf();
    let name = format!("prereg-{}", std::process::id());
    std::fs::write(h.join(".claude.json"), serde_json::to_string_pretty(&json!({"mcpServers": {name.clone(): {"type": "http", "url": server.url, "oauth": {"clientId": "claude-app", "callbackPort": port}}}})).unwrap()).unwrap();

    let mut child = cli(&h, &["login", &name, "--no-browser", "--timeout", "60"])
        .env("MCP_CLIENT_SECRET", &secret)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    let link = loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            panic!("login ended before printing a link: {printed}{err}");
        }
        printed.push_str(&line);
        if let Some(l) = line.trim().strip_prefix("http") {
            break format!("http{l}");
        }
    };
    assert!(
        link.contains("client_id=claude-app")
            && link.contains(&format!("localhost%3A{port}%2Fcallback")),
        "{link}"
    );
    let page = tokio::task::spawn_blocking(move || browse(&link))
        .await
        .unwrap();
    assert!(page.contains("You can close this tab"), "{page}");
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(status.success(), "login failed: {printed}{rest}");
    assert!(rest.contains("Connected: 2 tools"), "{rest}");
    let vault = Vault::keychain();
    let rec = vault
        .record(&name)
        .unwrap()
        .expect("the sign-in is in the keychain");
    assert_eq!(rec.credentials.as_ref().unwrap().client_id, "claude-app");
    assert_eq!(
        rec.client_secret.as_deref(),
        Some(secret.as_str()),
        "the secret is kept beside the sign-in"
    );
    assert!(
        grep_tree(&h, &secret).is_empty(),
        "the secret is in a file: {:?}",
        grep_tree(&h, &secret)
    );
    let o = cli(&h, &["logout", &name]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A client secret entered in the app goes to its own keychain item,
/// outlives a sign-out, and is deleted on request.
#[test]
fn an_oauth_apps_secret_is_kept_in_its_own_keychain_item() {
    Keychain::status().expect("a Secret Service is running (see .ci/test's with_keychain)");
    let server = format!("app-secret-{}", std::process::id());
    let vault = Vault::keychain();
    vault.put_app_secret(&server, "entered-in-the-app").unwrap();
    assert_eq!(
        Keychain
            .get(&switchboard_engine::auth::vault::app_secret_account(
                &server
            ))
            .unwrap()
            .as_deref(),
        Some("entered-in-the-app")
    );
    vault.remove(&server).unwrap();
    assert_eq!(
        vault.app_secret(&server).unwrap().as_deref(),
        Some("entered-in-the-app"),
        "signing out keeps the app's secret"
    );
    vault.remove_app_secret(&server).unwrap();
    assert_eq!(vault.app_secret(&server).unwrap(), None);
}
