//! Installing a `.mcpb` bundle the way the app does (`BundleInstaller`),
//! with bundles packed by the real `@anthropic-ai/mcpb` CLI and an in-memory
//! keychain: opening shows the form's facts at once and unpacks into a
//! hidden folder (nothing where anything reads it); the preview is the exact
//! definition with the secret masked; install moves the folder into place,
//! keeps the secret in the keychain, and the running engine connects the
//! server and lists its tool. Closing the form leaves nothing; a missing
//! value names the setting; an update keeps the settings and the secret and
//! removes the old version; removing the server takes its folder and secret.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use switchboard_engine::auth::vault::{MemoryBackend, Vault};
use switchboard_engine::bundle::{
    BundleInstallError, BundleInstallRequest, BundleInstaller, BundleProgress, SignatureStatus,
    UnpackState,
};
use switchboard_engine::engine::Engine;
use switchboard_engine::events::ServerStatus;
use switchboard_tests::mcpb::{hello_bundles, mcpb_cli, HELLO_SECRET};
use switchboard_tests::TempHome;

fn engine(home: &TempHome) -> (Arc<Engine>, Arc<MemoryBackend>) {
    let engine = Arc::new(Engine::for_host(home.host()));
    let store = Arc::new(MemoryBackend::default());
    engine.manager().set_vault(Some(Vault::new(store.clone())));
    engine.rediscover();
    (engine, store)
}

/// The keychain item `name` in the in-memory store.
fn kept(store: &MemoryBackend, name: &str) -> Option<String> {
    let account = format!("secret:{name}");
    store
        .dump()
        .into_iter()
        .find(|(k, _)| *k == account)
        .map(|(_, v)| v)
}

fn request(id: u64, target: &str, values: &[(&str, &str)]) -> BundleInstallRequest {
    BundleInstallRequest {
        id,
        name: None,
        target: target.into(),
        values: values
            .iter()
            .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
            .collect::<HashMap<_, _>>(),
        replace: false,
        skip_runtime_check: false,
    }
}

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Everything in `dir`, as paths relative to it (empty when it is missing).
fn listing(dir: &Path) -> Vec<String> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in read.flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

fn own_file(home: &TempHome) -> serde_json::Value {
    std::fs::read_to_string(home.path().join(".config/switchboard/servers.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(json!({}))
}

#[tokio::test]
async fn a_bundle_opens_unpacks_in_the_background_and_installs_into_switchboards_file(
) -> anyhow::Result<()> {
    let Some(cli) = mcpb_cli("bundle_install") else {
        return Ok(());
    };
    let tmp = tempfile::tempdir()?;
    let (_, signed) = hello_bundles(&cli, tmp.path(), "1.2.0")?;
    let home = TempHome::with_servers(json!({}));
    let (engine, store) = engine(&home);
    engine.start().await;
    let data = home.host().switchboard_data_dir();
    let heard: Arc<Mutex<Vec<BundleProgress>>> = Arc::default();
    let h = heard.clone();
    let installer = BundleInstaller::new(Arc::clone(&engine));

    let view = installer
        .open(&signed, move |p| h.lock().unwrap().push(p))
        .await?;
    assert_eq!(view.name, "hello-bundle");
    assert_eq!(view.display_name.as_deref(), Some("Hello bundle"));
    assert_eq!(view.version, "1.2.0");
    assert!(
        matches!(view.signature, SignatureStatus::SelfSigned { .. }),
        "{:?}",
        view.signature
    );
    assert!(view.compatible, "node is here: {:?}", view.problems);
    let keys: Vec<&str> = view.fields.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, ["api_key", "greeting"]);
    assert!(view.fields[0].sensitive && view.fields[0].required);
    assert_eq!(view.fields[1].defaults, ["hello"]);
    assert_eq!(view.unpack_dir, data.join("bundles/hello-bundle/1.2.0"));
    assert!(view.installed.is_empty());

    // Unpacking ends on its own; until Install nothing is in bundles/.
    let id = view.id;
    until("unpacked", || {
        installer.progress(id).unwrap().state == UnpackState::Ready
    })
    .await;
    assert!(heard
        .lock()
        .unwrap()
        .iter()
        .any(|p| p.state == UnpackState::Ready && p.done == p.total));
    assert!(!data.join("bundles").exists(), "{:?}", listing(&data));
    assert_eq!(
        own_file(&home),
        json!({"mcpServers": {}}),
        "nothing written"
    );

    // Before anything is typed the preview shows the command, the key missing.
    let empty = installer.preview(&request(id, "claude-code-user", &[]))?;
    assert_eq!(empty.missing, ["api_key"]);
    assert_eq!(
        empty.def.env.get("API_KEY").map(String::as_str),
        Some("<api_key>")
    );
    // The preview: the exact command, the secret kept in the keychain.
    let preview = installer.preview(&request(id, "switchboard", &[("api_key", HELLO_SECRET)]))?;
    let index = view.unpack_dir.join("server/index.js");
    assert_eq!(preview.def.command.as_deref(), Some("node"));
    assert_eq!(
        preview.def.args,
        [index.to_string_lossy().as_ref(), "--greeting", "hello"]
    );
    assert_eq!(
        preview.def.env.get("API_KEY").map(String::as_str),
        Some("${keychain:hello-bundle.api_key}")
    );
    assert_eq!(preview.report.kept_in_keychain, ["hello-bundle.api_key"]);
    assert!(preview.missing.is_empty());
    // Into a client's file the value is written as given: masked here.
    let to_claude = installer.preview(&request(
        id,
        "claude-code-user",
        &[("api_key", HELLO_SECRET)],
    ))?;
    assert_eq!(
        to_claude.def.env.get("API_KEY").map(String::as_str),
        Some("••••")
    );
    assert!(to_claude.report.plain_text_secrets);
    assert!(store.dump().is_empty(), "a preview keeps nothing");

    let done = installer
        .install(request(id, "switchboard", &[("api_key", HELLO_SECRET)]))
        .await?;
    assert_eq!(done.report.name, "hello-bundle");
    assert!(index.is_file());
    assert!(
        !listing(&data).iter().any(|p| p.contains(".mcpb-unpack")),
        "{:?}",
        listing(&data)
    );
    let file = own_file(&home).to_string();
    assert!(!file.contains(HELLO_SECRET), "{file}");
    assert!(file.contains("${keychain:hello-bundle.api_key}"), "{file}");
    assert_eq!(
        kept(&store, "hello-bundle.api_key").as_deref(),
        Some(HELLO_SECRET)
    );
    // The server starts with the secret from the keychain and lists its tool.
    until("hello-bundle connected with say_hello", || {
        engine.manager().status("hello-bundle") == Some(ServerStatus::Connected)
            && engine
                .manager()
                .tools()
                .tools
                .iter()
                .any(|t| t.server == "hello-bundle" && t.tool == "say_hello")
    })
    .await;
    assert!(matches!(
        installer.progress(id),
        Err(BundleInstallError::NotOpen)
    ));

    // Removing it takes the folder and the keychain item along.
    let cleaned = engine
        .remove_server("switchboard", "hello-bundle", None)
        .await?;
    assert_eq!(
        cleaned.removed_dir.as_deref(),
        Some(view.unpack_dir.as_path())
    );
    assert_eq!(cleaned.removed_secrets, ["hello-bundle.api_key"]);
    assert!(!data.join("bundles/hello-bundle").exists());
    assert!(store.dump().is_empty());
    engine.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_closed_form_or_a_missing_value_leaves_nothing_written() -> anyhow::Result<()> {
    let Some(cli) = mcpb_cli("bundle_install") else {
        return Ok(());
    };
    let tmp = tempfile::tempdir()?;
    let (unsigned, _) = hello_bundles(&cli, tmp.path(), "1.2.0")?;
    let home = TempHome::with_servers(json!({}));
    let (engine, store) = engine(&home);
    let data = home.host().switchboard_data_dir();
    let installer = BundleInstaller::new(Arc::clone(&engine));
    let view = installer.open(&unsigned, |_| {}).await?;
    assert_eq!(view.signature, SignatureStatus::Unsigned);

    // No api_key: refused naming it, and the form stays open.
    let err = installer
        .install(request(view.id, "switchboard", &[]))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("api_key") && err.contains("required"), "{err}");
    let err = installer
        .preview(&request(view.id, "switchboard", &[("colour", "red")]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("colour") && err.contains("api_key, greeting"),
        "{err}"
    );
    assert_eq!(
        own_file(&home),
        json!({"mcpServers": {}}),
        "nothing written"
    );
    assert!(store.dump().is_empty());

    // Closing the form removes the unpacked copy, finished or not.
    until("unpacked", || {
        installer.progress(view.id).unwrap().state != UnpackState::Unpacking
    })
    .await;
    installer.cancel(view.id);
    assert_eq!(listing(&data), Vec::<String>::new());
    let err = installer
        .install(request(view.id, "switchboard", &[("api_key", "x")]))
        .await
        .unwrap_err();
    assert!(matches!(err, BundleInstallError::NotOpen), "{err}");

    // A tampered signed bundle is refused at open: nothing unpacked.
    let (_, signed) = hello_bundles(&cli, tmp.path(), "1.2.0")?;
    let mut bytes = std::fs::read(&signed)?;
    let at = bytes.len() / 3;
    bytes[at] ^= 0x20;
    std::fs::write(&signed, bytes)?;
    let err = installer
        .open(&signed, |_| {})
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(&signed.display().to_string()), "{err}");
    assert_eq!(listing(&data), Vec::<String>::new());
    Ok(())
}

#[tokio::test]
async fn an_update_keeps_the_settings_and_the_secret_and_removes_the_old_version(
) -> anyhow::Result<()> {
    let Some(cli) = mcpb_cli("bundle_install") else {
        return Ok(());
    };
    let tmp = tempfile::tempdir()?;
    let (old, _) = hello_bundles(&cli, tmp.path(), "1.2.0")?;
    let newer_dir = tmp.path().join("newer");
    std::fs::create_dir_all(&newer_dir)?;
    let (newer, _) = hello_bundles(&cli, &newer_dir, "1.3.0")?;
    let home = TempHome::with_servers(json!({}));
    let (engine, store) = engine(&home);
    let data = home.host().switchboard_data_dir();
    let installer = BundleInstaller::new(Arc::clone(&engine));

    let v = installer.open(&old, |_| {}).await?;
    let mut req = request(
        v.id,
        "switchboard",
        &[("api_key", HELLO_SECRET), ("greeting", "hi there")],
    );
    req.name = Some("hello".into());
    installer.install(req).await?;
    // A second server from the same version shares its folder.
    let v = installer.open(&old, |_| {}).await?;
    let mut req = request(v.id, "switchboard", &[("api_key", "other-key")]);
    req.name = Some("hello2".into());
    installer.install(req).await?;

    let v = installer.open(&newer, |_| {}).await?;
    let mut copies = v.installed.clone();
    copies.sort_by(|a, b| a.server.cmp(&b.server));
    assert_eq!(copies.len(), 2, "{copies:?}");
    assert_eq!(copies[0].server, "hello");
    assert_eq!(copies[0].version, "1.2.0");
    assert_eq!(
        copies[0].values.get("greeting"),
        Some(&vec!["hi there".to_string()])
    );
    assert_eq!(copies[0].kept, ["api_key"]);

    // Everything left empty: the settings and the secret it has now stay.
    let mut req = request(v.id, "switchboard", &[]);
    req.name = Some("hello".into());
    req.replace = true;
    let preview = installer.preview(&req)?;
    assert_eq!(preview.def.args[1..], ["--greeting", "hi there"]);
    let done = installer.install(req).await?;
    assert!(done.report.replaced);
    assert_eq!(done.dir, data.join("bundles/hello-bundle/1.3.0"));
    assert_eq!(kept(&store, "hello.api_key").as_deref(), Some(HELLO_SECRET));
    // 1.2.0 stays: "hello2" still runs from it.
    assert_eq!(done.cleaned.removed_dir, None);
    assert!(data.join("bundles/hello-bundle/1.2.0").is_dir());
    let file = own_file(&home);
    assert!(file["mcpServers"]["hello"]["args"][0]
        .as_str()
        .unwrap()
        .contains("/1.3.0/"));

    // Updating "hello2" too leaves 1.2.0 unused: it goes.
    let v = installer.open(&newer, |_| {}).await?;
    let mut req = request(v.id, "switchboard", &[]);
    req.name = Some("hello2".into());
    req.replace = true;
    let done = installer.install(req).await?;
    assert_eq!(
        done.cleaned.removed_dir,
        Some(data.join("bundles/hello-bundle/1.2.0"))
    );
    assert!(!data.join("bundles/hello-bundle/1.2.0").exists());
    assert_eq!(kept(&store, "hello2.api_key").as_deref(), Some("other-key"));
    Ok(())
}
