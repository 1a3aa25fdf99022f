//! Sign-in against a real OAuth authorization server and an
//! MCP server that requires its tokens (`oauth-server` in tests/), both on
//! 127.0.0.1. The "browser" is an HTTP client that follows the authorization
//! redirect to our listener. Tokens live in a process-local vault here; the
//! keychain itself is tested against a real Secret Service in keychain.rs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_engine::auth::oauth::{self, SignInError};
use switchboard_engine::auth::vault::{MemoryBackend, Vault};
use switchboard_engine::config::{AuthConfig, ServerDef, Transport};
use switchboard_engine::events::{EngineEvent, ServerStatus};
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
use switchboard_tests::{fixture_server_path, spawn_oauth_server, HttpFixture};

fn opts() -> ManagerOptions {
    ManagerOptions {
        gate: Duration::from_millis(250),
        default_timeout: Duration::from_secs(20),
        grace: Duration::from_millis(300),
        home: std::env::temp_dir(),
        ..ManagerOptions::default()
    }
}

fn vault() -> (Vault, Arc<MemoryBackend>) {
    let mem = Arc::new(MemoryBackend::default());
    (Vault::new(mem.clone()), mem)
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The user's browser: open the authorization page, follow its redirect
/// back to our listener, return what the listener showed.
async fn browse(
    auth_url: &str,
    tamper: impl Fn(String) -> String,
) -> anyhow::Result<(u16, String)> {
    let http = no_redirects();
    let r = http.get(auth_url).send().await?;
    anyhow::ensure!(
        r.status().is_redirection(),
        "the authorization page answered {} instead of redirecting: {}",
        r.status(),
        r.text().await?
    );
    let back = r.headers()["location"].to_str()?.to_string();
    let back = tamper(back);
    let page = http.get(&back).send().await?;
    Ok((page.status().as_u16(), page.text().await?))
}

async fn stats(server: &HttpFixture) -> Value {
    reqwest::get(format!("{}/_control/stats", server.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn control(server: &HttpFixture, what: &str) {
    let r = reqwest::Client::new()
        .post(format!("{}/_control/{what}", server.base_url()))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "control {what}: {}", r.status());
}

/// A full sign-in of `name` at the server's URL with the HTTP-client browser.
async fn sign_in(name: &str, server: &HttpFixture, vault: &Vault) -> anyhow::Result<()> {
    let pending = oauth::begin(name, &server.url, vault).await?;
    let url = pending.url.clone();
    let (done, page) = tokio::join!(pending.finish(Duration::from_secs(20)), browse(&url, |u| u));
    let (status, text) = page?;
    assert_eq!(status, 200, "the browser tab says: {text}");
    assert!(
        text.contains("You can close this tab"),
        "friendly page: {text}"
    );
    Ok(done?)
}

/// A manager with `vault`, running `remote` at the server, connected.
async fn connected(server: &HttpFixture, vault: &Vault) -> Manager {
    let m = Manager::new(opts());
    m.set_vault(Some(vault.clone()));
    m.start(vec![remote("remote", &server.url)]).await;
    m.settle().await;
    assert_eq!(m.status("remote"), Some(ServerStatus::Connected));
    m
}

fn remote(name: &str, url: &str) -> Wanted {
    Wanted::new(ServerDef::remote(name, Transport::Http, url))
}

async fn until(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

fn tokens_of(vault: &Vault, name: &str) -> (String, String) {
    let rec = vault.record(name).unwrap().expect("a stored sign-in");
    let v = serde_json::to_value(rec.credentials.unwrap().token_response.unwrap()).unwrap();
    (
        v["access_token"].as_str().unwrap().to_string(),
        v["refresh_token"].as_str().unwrap_or_default().to_string(),
    )
}

#[tokio::test]
async fn a_server_needing_auth_is_needs_auth_until_signed_in_then_its_tools_work(
) -> anyhow::Result<()> {
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let (vault, _) = vault();
    let m = Manager::new(opts());
    m.set_vault(Some(vault.clone()));
    m.start(vec![remote("remote", &server.url)]).await;
    m.settle().await;
    match m.status("remote") {
        Some(ServerStatus::NeedsAuth { message }) => {
            assert!(message.contains("Sign in"), "hint to sign in: {message}")
        }
        other => panic!("expected needs-auth before signing in, got {other:?}"),
    }
    let challenge = m
        .auth_challenge("remote")
        .expect("the server's challenge is kept for the sign-in");
    assert!(
        challenge.starts_with("Bearer ") && challenge.contains("resource_metadata="),
        "{challenge}"
    );

    sign_in("remote", &server, &vault).await?;
    let rec = vault.record("remote")?.expect("stored");
    assert!(
        rec.redirect_port.is_some(),
        "the redirect port is kept for the registration"
    );
    assert_eq!(
        rec.issuer(),
        Some(server.base_url()),
        "the issuer is recorded"
    );
    let s = stats(&server).await;
    assert_eq!(s["registrations"], 1, "one dynamic registration: {s}");
    assert_eq!(s["code_exchanges"], 1, "one code exchange: {s}");

    m.restart("remote").await?;
    m.settle().await;
    assert_eq!(m.status("remote"), Some(ServerStatus::Connected));
    let out = m.call_tool("mcp_remote_whoami", None, None).await?;
    let client_id = rec.credentials.as_ref().unwrap().client_id.clone();
    assert!(
        out.text.contains(&client_id),
        "the server saw our registered client: {}",
        out.text
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn signing_in_again_reuses_the_registration_and_its_redirect_port() -> anyhow::Result<()> {
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let (vault, _) = vault();
    sign_in("remote", &server, &vault).await?;
    let first = vault.record("remote")?.unwrap();
    let (first_access, _) = tokens_of(&vault, "remote");
    sign_in("remote", &server, &vault).await?;
    let second = vault.record("remote")?.unwrap();
    assert_eq!(
        first.redirect_port, second.redirect_port,
        "same redirect port"
    );
    assert_eq!(
        first.credentials.unwrap().client_id,
        second.credentials.unwrap().client_id,
        "same client"
    );
    assert_eq!(
        stats(&server).await["registrations"],
        1,
        "no second registration"
    );
    assert_ne!(
        tokens_of(&vault, "remote").0,
        first_access,
        "reauth replaced the tokens"
    );
    Ok(())
}

/// A stray request to the redirect listener (a forged or stale `state`, no
/// `state`, another path, a connection that sends nothing) is answered and
/// ignored: nothing is exchanged or stored, and the sign-in goes on until
/// the real redirect arrives.
#[tokio::test]
async fn a_callback_with_another_state_is_refused_and_the_sign_in_keeps_waiting(
) -> anyhow::Result<()> {
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let (vault, mem) = vault();
    let pending = oauth::begin("remote", &server.url, &vault).await?;
    let (url, callback) = (pending.url.clone(), pending.redirect_uri.clone());
    let finish = tokio::spawn(pending.finish(Duration::from_secs(20)));

    // A browser's preconnect: a connection that never sends a request.
    let silent =
        tokio::net::TcpStream::connect(url::Url::parse(&callback)?.socket_addrs(|| None)?[0])
            .await?;
    let forge = |u: String| {
        let mut parsed = url::Url::parse(&u).unwrap();
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, v)| {
                if k == "state" {
                    (k.into_owned(), "forged".to_string())
                } else {
                    (k.into_owned(), v.into_owned())
                }
            })
            .collect();
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
        parsed.to_string()
    };
    let (status, text) = browse(&url, forge).await?;
    assert_eq!(status, 400, "{text}");
    assert!(
        text.contains("This sign-in link does not match the one Switchboard is waiting for"),
        "{text}"
    );
    let http = no_redirects();
    let no_state = http.get(format!("{callback}?code=stolen")).send().await?;
    assert_eq!(no_state.status().as_u16(), 400);
    assert!(no_state
        .text()
        .await?
        .contains("does not match the one Switchboard is waiting for"));
    let favicon = http
        .get(callback.replace("/callback", "/favicon.ico"))
        .send()
        .await?;
    assert_eq!(favicon.status().as_u16(), 404);
    assert!(
        mem.dump().iter().all(|(_, v)| !v.contains("access_token")),
        "no tokens stored"
    );
    assert_eq!(
        stats(&server).await["code_exchanges"],
        0,
        "no code was exchanged for a stray request"
    );

    // The real redirect still completes the sign-in, without waiting for the silent connection.
    let started = Instant::now();
    let (status, text) = browse(&url, |u| u).await?;
    assert_eq!(status, 200, "{text}");
    finish
        .await?
        .expect("the sign-in completes with the matching state");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the silent connection held the sign-in up for {:?}",
        started.elapsed()
    );
    assert!(vault.record("remote")?.expect("stored").has_tokens());
    assert_eq!(stats(&server).await["code_exchanges"], 1);
    drop(silent);
    Ok(())
}

#[tokio::test]
async fn a_sign_in_nobody_finishes_times_out_with_the_spec_message() -> anyhow::Result<()> {
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let (vault, _) = vault();
    let pending = oauth::begin("remote", &server.url, &vault).await?;
    let err = pending
        .finish(Duration::from_millis(300))
        .await
        .expect_err("no browser came back");
    assert_eq!(err.to_string(), "OAuth flow timed out. Please try again.");
    Ok(())
}

#[tokio::test]
async fn a_server_without_oauth_metadata_says_the_endpoints_could_not_be_discovered(
) -> anyhow::Result<()> {
    let server = spawn_oauth_server(&["--no-metadata"]).await?;
    let (vault, _) = vault();
    let err = oauth::begin("remote", &server.url, &vault)
        .await
        .expect_err("nothing to discover");
    let msg = err.to_string();
    assert!(
        msg.starts_with("Authentication required for \"remote\""),
        "{msg}"
    );
    assert!(
        msg.contains("OAuth endpoints could not be discovered"),
        "{msg}"
    );
    Ok(())
}

#[tokio::test]
async fn an_authorization_server_that_denies_access_fails_the_sign_in_clearly() -> anyhow::Result<()>
{
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let (vault, _) = vault();
    let pending = oauth::begin("remote", &server.url, &vault).await?;
    let url = pending.url.clone();
    let deny = |u: String| {
        let parsed = url::Url::parse(&u).unwrap();
        let state = parsed
            .query_pairs()
            .find(|(k, _)| k == "state")
            .unwrap()
            .1
            .into_owned();
        format!(
            "{}://{}{}?error=access_denied&error_description=The+user+said+no&state={state}",
            parsed.scheme(),
            parsed.host_str().unwrap().to_owned() + ":" + &parsed.port().unwrap().to_string(),
            parsed.path()
        )
    };
    let (done, page) = tokio::join!(pending.finish(Duration::from_secs(20)), browse(&url, deny));
    assert_eq!(page?.0, 400);
    assert_eq!(done.unwrap_err().to_string(), "OAuth authentication failed: the authorization server answered access_denied: The user said no");
    Ok(())
}

#[tokio::test]
async fn a_rejected_token_is_refreshed_once_and_the_call_goes_through() -> anyhow::Result<()> {
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let (vault, _) = vault();
    sign_in("remote", &server, &vault).await?;
    let m = connected(&server, &vault).await;
    let (before, _) = tokens_of(&vault, "remote");
    control(&server, "revoke-access").await;
    let out = m
        .call_tool(
            "mcp_remote_echo",
            Some(json!({"text": "after revoke"}).as_object().unwrap().clone()),
            None,
        )
        .await?;
    assert_eq!(out.text, "after revoke");
    assert!(
        stats(&server).await["refreshes"].as_u64().unwrap() >= 1,
        "a refresh happened"
    );
    assert_ne!(
        tokens_of(&vault, "remote").0,
        before,
        "the new token is stored"
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_token_about_to_expire_is_refreshed_before_use() -> anyhow::Result<()> {
    let server = spawn_oauth_server(&["--token-ttl", "6"]).await?;
    let (vault, _) = vault();
    sign_in("remote", &server, &vault).await?;
    // With 6 s of life the token is refreshed once less than 3 s remain
    // (rmcp counts whole seconds: 4.2 s later at least 4 have passed).
    tokio::time::sleep(Duration::from_millis(4200)).await;
    let m = connected(&server, &vault).await;
    let s = stats(&server).await;
    // The token still had ~1.8 s to live, so the server would have taken it:
    // only the client's own look at the expiry makes it refresh.
    assert!(
        s["refreshes"].as_u64().unwrap() >= 1,
        "refreshed before it expired: {s}"
    );
    assert_eq!(
        s["last_token_request"]["grant_type"], "refresh_token",
        "{s}"
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_rejected_refresh_returns_the_server_to_needs_auth() -> anyhow::Result<()> {
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let (vault, _) = vault();
    sign_in("remote", &server, &vault).await?;
    let m = connected(&server, &vault).await;
    control(&server, "reject-refresh").await;
    let call = m
        .call_tool(
            "mcp_remote_echo",
            Some(json!({"text": "x"}).as_object().unwrap().clone()),
            None,
        )
        .await;
    assert!(
        call.is_err() || call.as_ref().unwrap().is_error,
        "a call with a dead sign-in fails: {call:?}"
    );
    // The next connection attempt finds no usable sign-in.
    m.restart("remote").await.ok();
    until("needs-auth after the refresh was rejected", 20, || {
        matches!(m.status("remote"), Some(ServerStatus::NeedsAuth { .. }))
    })
    .await;
    let rec = vault.record("remote")?.expect("the registration is kept");
    assert!(!rec.has_tokens(), "the rejected tokens are dropped");
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn signing_out_deletes_the_tokens_and_the_server_needs_auth_again() -> anyhow::Result<()> {
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let (vault, mem) = vault();
    sign_in("remote", &server, &vault).await?;
    let m = connected(&server, &vault).await;
    oauth::sign_out("remote", &vault).await?;
    assert!(mem.dump().is_empty(), "nothing left in the store");
    m.restart("remote").await.ok();
    until("needs-auth after signing out", 20, || {
        matches!(m.status("remote"), Some(ServerStatus::NeedsAuth { .. }))
    })
    .await;
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn sse_servers_get_a_bearer_header_and_stdio_servers_get_oauth_access_token(
) -> anyhow::Result<()> {
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let (vault, _) = vault();
    sign_in("remote", &server, &vault).await?;
    let (access, _) = tokens_of(&vault, "remote");
    let m = Manager::new(opts());
    m.set_vault(Some(vault.clone()));
    // `sse` tries streamable HTTP first: with the header, it connects.
    let sse = Wanted::new(ServerDef::remote("remote", Transport::Sse, &server.url));
    // A stdio server borrowing the sign-in writes what it got, then serves.
    let dir = tempfile::tempdir()?;
    let seen = dir.path().join("token");
    let script = format!(
        "printf %s \"$OAUTH_ACCESS_TOKEN\" > '{}'; exec '{}' --name local",
        seen.display(),
        fixture_server_path().display()
    );
    let mut local = ServerDef::stdio("local", "sh", &["-c", &script]);
    local.auth = Some(AuthConfig {
        kind: "oauth".into(),
        credential_id: Some("remote".into()),
    });
    let mut orphan = ServerDef::stdio(
        "orphan",
        fixture_server_path().to_str().unwrap(),
        &["--name", "orphan"],
    );
    orphan.auth = Some(AuthConfig {
        kind: "oauth".into(),
        credential_id: Some("nobody".into()),
    });
    m.start(vec![sse, Wanted::new(local), Wanted::new(orphan)])
        .await;
    m.settle().await;
    assert_eq!(
        m.status("remote"),
        Some(ServerStatus::Connected),
        "the sse server connected with the bearer token"
    );
    assert_eq!(m.status("local"), Some(ServerStatus::Connected));
    assert_eq!(
        std::fs::read_to_string(&seen)?,
        access,
        "the stdio server got OAUTH_ACCESS_TOKEN"
    );
    match m.status("orphan") {
        Some(ServerStatus::NeedsAuth { message }) => {
            assert!(message.contains("nobody"), "{message}")
        }
        other => panic!("a stdio server whose credential is missing needs auth, got {other:?}"),
    }
    assert!(
        m.state("orphan")
            .unwrap()
            .warnings
            .iter()
            .any(|w| w.contains("nobody")),
        "and says so as a warning"
    );
    m.shutdown().await;
    Ok(())
}

/// After a full sign-in and a few calls, no token is anywhere but
/// the vault: not in the tool cache, the logs, any event, or the server view.
#[tokio::test]
async fn tokens_never_leak_into_the_cache_logs_or_events() -> anyhow::Result<()> {
    // A confidential registration: its client secret must not leak either.
    let server = spawn_oauth_server(&["--dcr-confidential"]).await?;
    let (vault, _) = vault();
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("tools.json");
    let m = Manager::new(ManagerOptions {
        cache_path: Some(cache.clone()),
        ..opts()
    });
    m.set_vault(Some(vault.clone()));
    let mut events = m.subscribe();
    m.start(vec![remote("remote", &server.url)]).await;
    m.settle().await;
    sign_in("remote", &server, &vault).await?;
    m.restart("remote").await?;
    m.settle().await;
    for i in 0..3 {
        m.call_tool(
            "mcp_remote_echo",
            Some(
                json!({"text": format!("call {i}")})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
            None,
        )
        .await?;
    }
    control(&server, "revoke-access").await;
    m.call_tool("mcp_remote_whoami", None, None).await?;
    let (access, refresh) = tokens_of(&vault, "remote");
    let secret = vault
        .record("remote")?
        .unwrap()
        .client_secret
        .expect("a confidential client");
    m.shutdown().await;

    let mut haystack = String::new();
    while let Ok(ev) = events.try_recv() {
        haystack.push_str(&serde_json::to_string(&ev)?);
        if let EngineEvent::Log { lines, .. } = ev {
            for line in lines {
                haystack.push_str(&line.text);
            }
        }
    }
    haystack.push_str(&std::fs::read_to_string(&cache).unwrap_or_default());
    for line in m.logs("remote").unwrap_or_default() {
        haystack.push_str(&line.text);
    }
    haystack.push_str(&serde_json::to_string(&m.states())?);
    assert!(haystack.len() > 500, "there was something to search");
    assert!(!haystack.contains(&access), "the access token leaked");
    assert!(
        !refresh.is_empty() && !haystack.contains(&refresh),
        "the refresh token leaked"
    );
    assert!(!haystack.contains(&secret), "the client secret leaked");
    Ok(())
}

/// The app's path: `Engine::sign_in` opens the page through the opener,
/// reports progress as events, stores the tokens and connects that server at
/// once; the other servers keep their processes. Cancel and sign out too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_signs_in_connects_at_once_and_leaves_other_servers_alone() -> anyhow::Result<()>
{
    use switchboard_engine::engine::Engine;
    use switchboard_engine::events::SignInPhase;
    use switchboard_engine::host::{Host, Os};

    let server = spawn_oauth_server::<&str>(&[]).await?;
    let dir = tempfile::tempdir()?;
    let home = dir.path().to_path_buf();
    let own = home.join(".config/switchboard/servers.json");
    std::fs::create_dir_all(own.parent().unwrap())?;
    let bin = fixture_server_path().to_string_lossy().to_string();
    std::fs::write(
        &own,
        serde_json::to_string(&json!({ "mcpServers": {
            "remote": { "type": "http", "url": server.url },
            "local": { "command": bin, "args": ["--name", "local"] },
        }}))?,
    )?;
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
        system_root: home.join("sys"),
    };
    let engine = Arc::new(Engine::new(
        host,
        ManagerOptions {
            home: home.clone(),
            ..opts()
        },
        vec![],
    ));
    let (vault, _) = vault();
    engine.manager().set_vault(Some(vault.clone()));
    let mut events = engine.manager().subscribe();
    engine.start().await;
    engine.manager().settle().await;
    assert!(matches!(
        engine.manager().status("remote"),
        Some(ServerStatus::NeedsAuth { .. })
    ));
    assert!(!engine.is_signed_in("remote").await);
    let local_pid = engine.manager().state("local").unwrap().pid;

    // The opener is the user's browser.
    let opener: oauth::BrowserOpener = Arc::new(|url: &str| {
        let url = url.to_string();
        tokio::spawn(async move { browse(&url, |u| u).await.unwrap() });
        Ok(())
    });
    engine
        .sign_in("remote", Some(opener), Duration::from_secs(20))
        .await?;
    until("remote connected right after signing in", 20, || {
        engine.manager().status("remote") == Some(ServerStatus::Connected)
    })
    .await;
    assert!(engine.is_signed_in("remote").await);
    assert_eq!(
        engine.manager().state("local").unwrap().pid,
        local_pid,
        "the other server kept its process"
    );
    let mut phases = vec![];
    while let Ok(ev) = events.try_recv() {
        if let EngineEvent::SignIn { server, phase } = ev {
            assert_eq!(server, "remote");
            phases.push(phase);
        }
    }
    assert!(
        matches!(phases.first(), Some(SignInPhase::Waiting { url }) if url.contains("code_challenge=")),
        "{phases:?}"
    );
    assert_eq!(phases.last(), Some(&SignInPhase::SignedIn), "{phases:?}");

    // A sign-in nobody finishes can be cancelled.
    let e2 = engine.clone();
    let waiting =
        tokio::spawn(async move { e2.sign_in("remote", None, Duration::from_secs(60)).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    engine.cancel_sign_in("remote");
    let err = waiting.await?.expect_err("cancelled");
    assert_eq!(err.to_string(), "sign-in to \"remote\" was cancelled");
    assert_eq!(
        engine.manager().status("remote"),
        Some(ServerStatus::Connected),
        "cancelling a re-sign-in keeps the old one"
    );

    // A stdio server cannot sign in.
    assert!(matches!(
        engine.sign_in("local", None, Duration::from_secs(1)).await,
        Err(SignInError::NotRemote(_))
    ));

    engine.sign_out("remote").await?;
    until("needs-auth after signing out", 20, || {
        matches!(
            engine.manager().status("remote"),
            Some(ServerStatus::NeedsAuth { .. })
        )
    })
    .await;
    assert!(!engine.is_signed_in("remote").await);
    engine.shutdown().await;
    Ok(())
}

/// A free port on 127.0.0.1 (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The refresh timer (issue 17): a connected server that nobody uses still
/// has its 60-second token refreshed before it expires, so the next call
/// goes through without a 401.
#[tokio::test]
async fn an_idle_servers_60_second_token_is_refreshed_before_it_expires() -> anyhow::Result<()> {
    let server = spawn_oauth_server(&["--token-ttl", "60"]).await?;
    let (vault, _) = vault();
    sign_in("remote", &server, &vault).await?;
    let signed_in = Instant::now();
    let m = connected(&server, &vault).await;
    let (first, _) = tokens_of(&vault, "remote");
    let end = Instant::now() + Duration::from_secs(90);
    while stats(&server).await["refreshes"].as_u64().unwrap() == 0 {
        assert!(
            Instant::now() < end,
            "no refresh within 90 s of an idle server's 60 s token"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        signed_in.elapsed() < Duration::from_secs(60),
        "refreshed only after the token expired ({:?})",
        signed_in.elapsed()
    );
    assert_ne!(
        tokens_of(&vault, "remote").0,
        first,
        "the new token is stored"
    );
    // Past the first token's expiry, the call goes through on the new one.
    until("the first token's expiry", 70, || {
        signed_in.elapsed() > Duration::from_secs(61)
    })
    .await;
    let rejected = stats(&server).await["mcp_requests_rejected"]
        .as_u64()
        .unwrap();
    let out = m
        .call_tool(
            "mcp_remote_echo",
            Some(
                json!({"text": "still signed in"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
            None,
        )
        .await?;
    assert_eq!(out.text, "still signed in");
    let s = stats(&server).await;
    assert_eq!(
        s["mcp_requests_rejected"].as_u64().unwrap(),
        rejected,
        "no request met an expired token: {s}"
    );
    assert!(
        m.logs("remote")
            .unwrap()
            .iter()
            .any(|l| l.text.contains("refreshed the sign-in ahead of its expiry")),
        "the refresh is in the server's log"
    );
    m.shutdown().await;
    Ok(())
}

/// A refresh that cannot reach the authorization server (the connection
/// breaks) is tried again with backoff and keeps the sign-in; once the
/// server is back the refresh goes through.
#[tokio::test]
async fn a_refresh_the_network_breaks_is_retried_and_keeps_the_sign_in() -> anyhow::Result<()> {
    let server = spawn_oauth_server(&["--token-ttl", "60"]).await?;
    let (vault, _) = vault();
    sign_in("remote", &server, &vault).await?;
    let m = connected(&server, &vault).await;
    control(&server, "token-outage").await;
    let end = Instant::now() + Duration::from_secs(90);
    while stats(&server).await["token_outage_hits"].as_u64().unwrap() < 2 {
        assert!(
            Instant::now() < end,
            "the refresh was not tried twice during the outage"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let rec = vault.record("remote")?.expect("kept");
    assert!(
        rec.has_tokens(),
        "a refresh that could not reach the server keeps the sign-in"
    );
    assert!(
        !matches!(m.status("remote"), Some(ServerStatus::NeedsAuth { .. })),
        "not needs-auth: {:?}",
        m.status("remote")
    );
    assert!(
        m.logs("remote")
            .unwrap()
            .iter()
            .any(|l| l.text.contains("could not refresh the sign-in")
                && l.text.contains("the sign-in is kept")),
        "the retry is in the log"
    );
    control(&server, "reset").await;
    let end = Instant::now() + Duration::from_secs(60);
    while stats(&server).await["refreshes"].as_u64().unwrap() == 0 {
        assert!(Instant::now() < end, "no refresh after the outage ended");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let out = m
        .call_tool(
            "mcp_remote_echo",
            Some(json!({"text": "back"}).as_object().unwrap().clone()),
            None,
        )
        .await?;
    assert_eq!(out.text, "back");
    m.shutdown().await;
    Ok(())
}

/// Only an `invalid_grant` answer ends a sign-in: the timer's refresh is
/// refused, the tokens go, and the idle server shows needs-auth without any
/// call having been made.
#[tokio::test]
async fn an_invalid_grant_on_the_timer_makes_the_idle_server_need_auth() -> anyhow::Result<()> {
    let server = spawn_oauth_server(&["--token-ttl", "60"]).await?;
    let (vault, _) = vault();
    sign_in("remote", &server, &vault).await?;
    let m = connected(&server, &vault).await;
    control(&server, "reject-refresh").await;
    until(
        "needs-auth after the timer's refresh was refused",
        90,
        || matches!(m.status("remote"), Some(ServerStatus::NeedsAuth { .. })),
    )
    .await;
    assert!(stats(&server).await["refreshes_rejected"].as_u64().unwrap() >= 1);
    assert!(
        !vault
            .record("remote")?
            .expect("the registration is kept")
            .has_tokens(),
        "the refused tokens are dropped"
    );
    m.shutdown().await;
    Ok(())
}

/// A client secret returned by dynamic registration (a provider that makes
/// every client confidential) is kept in the keychain record, sent on
/// refreshes and reused with the registration by the next sign-in.
#[tokio::test]
async fn a_client_secret_from_dynamic_registration_is_kept_and_reused() -> anyhow::Result<()> {
    let server = spawn_oauth_server(&["--dcr-confidential"]).await?;
    let (vault, mem) = vault();
    sign_in("remote", &server, &vault).await?;
    let rec = vault.record("remote")?.unwrap();
    let secret = rec
        .client_secret
        .clone()
        .expect("the registration's secret is kept");
    assert!(
        mem.dump().iter().any(|(_, v)| v.contains(&secret)),
        "in the keychain record"
    );
    assert!(!format!("{rec:?}").contains(&secret), "Debug redacts it");
    let m = connected(&server, &vault).await;
    control(&server, "revoke-access").await;
    let out = m
        .call_tool(
            "mcp_remote_echo",
            Some(json!({"text": "refreshed"}).as_object().unwrap().clone()),
            None,
        )
        .await?;
    assert_eq!(out.text, "refreshed");
    let s = stats(&server).await;
    assert_eq!(
        s["last_token_request"]["grant_type"], "refresh_token",
        "{s}"
    );
    assert_eq!(
        s["last_token_request"]["client_auth"], "client_secret_basic",
        "the refresh authenticates with the secret: {s}"
    );
    m.shutdown().await;
    sign_in("remote", &server, &vault).await?;
    let s = stats(&server).await;
    assert_eq!(
        s["registrations"], 1,
        "the confidential registration is reused, not replaced by a public one: {s}"
    );
    assert_eq!(
        s["last_token_request"]["client_auth"], "client_secret_basic",
        "{s}"
    );
    Ok(())
}

/// A server defined the way `claude mcp add --transport http --client-id ID
/// --callback-port PORT` writes it, at an authorization server with no
/// registration endpoint and one pre-registered confidential client: the
/// sign-in uses that client, that port and its secret from the keychain.
/// A taken port names its holder; no client id says what to enter.
#[tokio::test]
async fn a_pre_registered_app_signs_in_on_its_callback_port() -> anyhow::Result<()> {
    let port = free_port();
    let redirect = format!("http://localhost:{port}/callback");
    let server = spawn_oauth_server(&[
        "--no-registration",
        "--client",
        &format!("claude-app={redirect}"),
        "--client-secret",
        "claude-app=app-secret-value",
    ])
    .await?;
    let (vault, mem) = vault();
    let def = switchboard_engine::sources::dialect::Dialect::ClaudeCode.parse_entry("remote", &json!({"type": "http", "url": server.url, "oauth": {"clientId": "claude-app", "callbackPort": port}})).def;

    // Without a client id: the server offers no registration, and says so.
    let err = oauth::begin("remote", &server.url, &vault)
        .await
        .expect_err("no registration endpoint");
    assert_eq!(err.code(), "oauth-no-registration");
    assert!(
        err.to_string()
            .contains("offers no dynamic client registration")
            && err.to_string().contains("OAuth app section"),
        "{err}"
    );

    // The port held by another program: the error names port and program.
    let holder = std::net::TcpListener::bind(("127.0.0.1", port))?;
    let options = oauth::SignInOptions::for_app("remote", def.oauth.as_ref(), &vault).await?;
    let err = oauth::begin_with("remote", &server.url, &vault, options)
        .await
        .expect_err("the port is taken");
    assert_eq!(err.code(), "oauth-port-taken");
    assert!(
        err.to_string().contains(&format!("port {port}"))
            && err
                .to_string()
                .contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
    drop(holder);

    vault.put_app_secret("remote", "app-secret-value")?;
    let options = oauth::SignInOptions::for_app("remote", def.oauth.as_ref(), &vault).await?;
    let pending = oauth::begin_with("remote", &server.url, &vault, options).await?;
    assert_eq!(pending.redirect_uri, redirect);
    let url = pending.url.clone();
    let (done, page) = tokio::join!(pending.finish(Duration::from_secs(20)), browse(&url, |u| u));
    assert_eq!(page?.0, 200);
    done?;
    let s = stats(&server).await;
    assert_eq!(s["last_authorize"]["client_id"], "claude-app", "{s}");
    assert_eq!(
        s["last_authorize"]["redirect_uri"],
        redirect.as_str(),
        "{s}"
    );
    assert_eq!(
        s["last_token_request"]["client_auth"], "client_secret_basic",
        "the secret from the keychain: {s}"
    );
    assert_eq!(s["registrations"], 0);
    let m = Manager::new(opts());
    m.set_vault(Some(vault.clone()));
    m.start(vec![Wanted::new(def.clone())]).await;
    m.settle().await;
    assert_eq!(m.status("remote"), Some(ServerStatus::Connected));
    let who = m.call_tool("mcp_remote_whoami", None, None).await?;
    assert!(who.text.contains("claude-app"), "{}", who.text);
    // Refreshes authenticate with the app's secret too.
    control(&server, "revoke-access").await;
    let out = m
        .call_tool(
            "mcp_remote_echo",
            Some(json!({"text": "refreshed"}).as_object().unwrap().clone()),
            None,
        )
        .await?;
    assert_eq!(out.text, "refreshed");
    m.shutdown().await;
    assert!(
        mem.dump()
            .iter()
            .filter(|(_, v)| v.contains("app-secret-value"))
            .count()
            >= 1,
        "the secret is in the keychain only"
    );
    Ok(())
}
