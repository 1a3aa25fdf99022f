//! What the OS may open: the sign-in page comes from metadata the server controls, and
//! only a web page (`https:`, or `http:` on this computer) reaches the OS
//! opener. A server advertising `file:`, `smb:` or an app's own scheme as its
//! `authorization_endpoint` fails the sign-in with a message naming the
//! scheme; the opener is never called and the link is never shown.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_engine::auth::oauth::{self, BrowserOpener, SignInError};
use switchboard_engine::auth::vault::{MemoryBackend, Vault};
use switchboard_engine::engine::Engine;
use switchboard_engine::events::{EngineEvent, SignInPhase};
use switchboard_tests::{spawn_oauth_server, HttpFixture};

fn refused(scheme: &str) -> String {
    format!("Refusing to open \"{scheme}:\" link from the server's sign-in metadata: only https (or http on this computer) is opened.")
}

async fn stats(server: &HttpFixture) -> Value {
    reqwest::get(format!("{}/_control/stats", server.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// An engine whose own config file has `remote` at `server`, with an in-memory vault.
async fn engine_with_remote(
    server: &HttpFixture,
    home: &std::path::Path,
) -> anyhow::Result<Engine> {
    let own = home.join(".config/switchboard/servers.json");
    std::fs::create_dir_all(own.parent().unwrap())?;
    std::fs::write(
        &own,
        serde_json::to_string(
            &json!({ "mcpServers": { "remote": { "type": "http", "url": server.url } } }),
        )?,
    )?;
    let engine = switchboard_tests::desktop_engine(home).await;
    engine.manager().settle().await;
    Ok(engine)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_page_that_is_not_a_web_page_fails_the_sign_in_and_is_never_opened(
) -> anyhow::Result<()> {
    for (endpoint, scheme) in [
        ("file:///etc/passwd", "file"),
        ("myapp://authorize", "myapp"),
        ("smb://attacker.example/share", "smb"),
    ] {
        let server = spawn_oauth_server(&["--authorization-endpoint", endpoint]).await?;
        let dir = tempfile::tempdir()?;
        let engine = engine_with_remote(&server, dir.path()).await?;
        let mut events = engine.manager().subscribe();

        let opened = Arc::new(AtomicUsize::new(0));
        let opener: BrowserOpener = {
            let opened = opened.clone();
            Arc::new(move |_: &str| {
                opened.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
        };
        let err = engine
            .sign_in("remote", Some(opener), Duration::from_secs(20))
            .await
            .expect_err("a non-web sign-in page is refused");
        assert!(
            matches!(err, SignInError::RefusedLink(_)),
            "{endpoint}: {err:?}"
        );
        assert_eq!(err.to_string(), refused(scheme), "{endpoint}");
        assert_eq!(err.code(), "oauth-refused-link");
        assert_eq!(
            opened.load(Ordering::SeqCst),
            0,
            "{endpoint}: the opener was never called"
        );

        // The UI is told the sign-in failed, and never shown the link.
        let mut phases = vec![];
        while let Ok(ev) = events.try_recv() {
            if let EngineEvent::SignIn { phase, .. } = ev {
                phases.push(phase);
            }
        }
        assert!(
            !phases
                .iter()
                .any(|p| matches!(p, SignInPhase::Waiting { .. })),
            "{endpoint}: no link was offered: {phases:?}"
        );
        assert_eq!(
            phases.last(),
            Some(&SignInPhase::Failed {
                error: refused(scheme)
            }),
            "{endpoint}: {phases:?}"
        );
        assert!(!engine.is_signed_in("remote").await);
        assert_eq!(
            stats(&server).await["authorizations"],
            0,
            "{endpoint}: nothing was authorized"
        );
        engine.shutdown().await;
    }
    Ok(())
}

/// `oauth::begin` itself refuses, so no caller (app, CLI, tests) ever holds
/// a pending sign-in with such a link; plain http is refused unless it stays
/// on this computer.
#[tokio::test]
async fn begin_refuses_every_link_that_is_not_a_web_page_on_this_computer() -> anyhow::Result<()> {
    let vault = Vault::new(Arc::new(MemoryBackend::default()));
    for (endpoint, expected) in [
        ("javascript:alert(document.cookie)", refused("javascript")),
        ("data:text/html,<script>alert(1)</script>", refused("data")),
        ("http://auth.example.com/authorize", "Refusing to open \"http:\" link to auth.example.com from the server's sign-in metadata: only https (or http on this computer) is opened.".to_string()),
        ("http://localhost.evil.example/authorize", "Refusing to open \"http:\" link to localhost.evil.example from the server's sign-in metadata: only https (or http on this computer) is opened.".to_string()),
    ] {
        let server = spawn_oauth_server(&["--authorization-endpoint", endpoint]).await?;
        let err = oauth::begin("remote", &server.url, &vault).await.expect_err(endpoint);
        assert!(matches!(err, SignInError::RefusedLink(_)), "{endpoint}: {err:?}");
        assert_eq!(err.to_string(), expected, "{endpoint}");
    }
    // The same server pointing at a web page on this computer signs in as usual.
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let pending = oauth::begin("remote", &server.url, &vault).await?;
    assert!(
        pending
            .url
            .starts_with(&format!("{}/authorize?", server.base_url())),
        "{}",
        pending.url
    );
    Ok(())
}
