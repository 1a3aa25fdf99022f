//! Keychain limits (issue 11): Windows Credential Manager refuses secrets
//! over 2,560 bytes, and a sign-in record (tokens plus client registration)
//! can be larger. A record over the vault's item limit is split across
//! several items and read back whole; forcing a small limit shows it here,
//! against an in-memory store that refuses items over the limit as Windows
//! does. The real keychain round trip is in keychain.rs.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_engine::auth::oauth;
use switchboard_engine::auth::vault::{
    account, part_account, MemoryBackend, OAuthRecord, SecretBackend, Vault, VaultError,
};
use switchboard_engine::events::ServerStatus;
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
use switchboard_tests::spawn_oauth_server;

const LIMIT: usize = 1000;

/// Bytes as the platform's keychain stores a secret (UTF-16 on Windows).
fn stored_len(s: &str) -> usize {
    if cfg!(windows) {
        s.encode_utf16().count() * 2
    } else {
        s.len()
    }
}

/// How many parts a record of this text takes (ASCII text).
fn parts_for(rec: &OAuthRecord, limit: usize) -> usize {
    stored_len(&serde_json::to_string(rec).unwrap()).div_ceil(limit)
}

/// An in-memory store that, like Windows Credential Manager, refuses an
/// item larger than its limit.
struct Limited {
    items: MemoryBackend,
    limit: usize,
}

impl SecretBackend for Limited {
    fn get(&self, account: &str) -> Result<Option<String>, VaultError> {
        self.items.get(account)
    }
    fn set(&self, account: &str, secret: &str) -> Result<(), VaultError> {
        if stored_len(secret) > self.limit {
            return Err(VaultError::Keychain(format!(
                "{account}: {} bytes is more than one item holds",
                stored_len(secret)
            )));
        }
        self.items.set(account, secret)
    }
    fn delete(&self, account: &str) -> Result<(), VaultError> {
        self.items.delete(account)
    }
    fn describe(&self) -> String {
        "limited in-memory store".into()
    }
}

fn store(limit: usize) -> Arc<Limited> {
    Arc::new(Limited {
        items: MemoryBackend::default(),
        limit,
    })
}

/// A sign-in record whose tokens are about `token_bytes` long.
fn record(token_bytes: usize) -> OAuthRecord {
    let token: String = (0..token_bytes)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let credentials = json!({
        "client_id": "client-0123456789",
        "token_response": {
            "access_token": format!("at-{token}"),
            "token_type": "bearer",
            "expires_in": 3600,
            "refresh_token": "rt-0123456789",
            "scope": "mcp"
        },
        "granted_scopes": ["mcp"],
        "token_received_at": 1_700_000_000u64,
        "issuer": "https://auth.example.com"
    });
    OAuthRecord {
        redirect_port: Some(43123),
        credentials: Some(serde_json::from_value(credentials).unwrap()),
        ..OAuthRecord::new("https://mcp.example.com/mcp")
    }
}

fn same(a: &OAuthRecord, b: &OAuthRecord) -> bool {
    serde_json::to_value(a).unwrap() == serde_json::to_value(b).unwrap()
}

fn items(s: &Limited) -> Vec<(String, String)> {
    let mut v = s.items.dump();
    v.sort();
    v
}

#[test]
fn a_6_kb_record_is_split_read_back_whole_shrunk_and_deleted() -> anyhow::Result<()> {
    let s = store(LIMIT);
    let vault = Vault::with_item_limit(s.clone(), LIMIT);
    let big = record(6 * 1024);
    assert!(serde_json::to_string(&big)?.len() > 6 * 1024);
    vault.put("remote", &big)?;

    let n = parts_for(&big, LIMIT);
    assert!(n >= 7, "{n}");
    let stored = items(&s);
    assert_eq!(
        stored.len(),
        n + 1,
        "a head and {n} parts of at most 1,000 bytes: {:?}",
        stored.iter().map(|(k, v)| (k, v.len())).collect::<Vec<_>>()
    );
    assert!(stored.iter().all(|(_, v)| stored_len(v) <= LIMIT));
    let head = s.get(&account("remote"))?.unwrap();
    assert!(
        head.starts_with(&format!("switchboard-parts:{n}:")),
        "{head}"
    );
    for i in 1..=n {
        assert!(s.get(&part_account("remote", i))?.is_some(), "part {i}");
    }

    // Another vault on the same store (think: the next run) reads it whole.
    let again = Vault::with_item_limit(s.clone(), LIMIT)
        .record("remote")?
        .expect("stored");
    assert!(same(&again, &big), "read back equal");

    // Shrinking leaves no stale parts behind.
    let smaller = record(2 * 1024);
    vault.put("remote", &smaller)?;
    assert_eq!(
        items(&s).len(),
        parts_for(&smaller, LIMIT) + 1,
        "a head and its parts only: {:?}",
        items(&s).iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    assert!(same(
        &Vault::with_item_limit(s.clone(), LIMIT)
            .record("remote")?
            .unwrap(),
        &smaller
    ));
    let small = record(100);
    vault.put("remote", &small)?;
    let stored = items(&s);
    assert_eq!(
        stored.len(),
        1,
        "one item again: {:?}",
        stored.iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    assert!(
        stored[0].1.starts_with('{'),
        "a record that fits keeps the one-item format"
    );
    assert!(same(
        &Vault::with_item_limit(s.clone(), LIMIT)
            .record("remote")?
            .unwrap(),
        &small
    ));

    // Growing again, then signing out, leaves nothing.
    vault.put("remote", &big)?;
    assert_eq!(items(&s).len(), n + 1);
    vault.remove("remote")?;
    assert!(
        items(&s).is_empty(),
        "sign-out deletes every part: {:?}",
        items(&s).iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    assert!(Vault::with_item_limit(s.clone(), LIMIT)
        .record("remote")?
        .is_none());
    Ok(())
}

#[test]
fn a_one_item_record_written_before_splitting_existed_still_reads() -> anyhow::Result<()> {
    let s = store(usize::MAX);
    let old = record(6 * 1024);
    s.set(&account("remote"), &serde_json::to_string(&old)?)?;
    let vault = Vault::with_item_limit(s.clone(), LIMIT);
    assert!(same(&vault.record("remote")?.unwrap(), &old));
    // The next write splits it.
    vault.put("remote", &old)?;
    assert_eq!(items(&s).len(), parts_for(&old, LIMIT) + 1);
    vault.remove("remote")?;
    assert!(items(&s).is_empty());
    Ok(())
}

#[test]
fn a_split_record_with_a_missing_or_foreign_part_is_damaged_not_misread() -> anyhow::Result<()> {
    let s = store(LIMIT);
    let vault = Vault::with_item_limit(s.clone(), LIMIT);
    vault.put("remote", &record(3000))?;
    let fresh = || Vault::with_item_limit(s.clone(), LIMIT);

    // A write cut short between its parts and its head: parts of another record.
    let part2 = s.get(&part_account("remote", 2))?.unwrap();
    s.set(&part_account("remote", 2), &part2.replace('a', "b"))?;
    let err = fresh()
        .record("remote")
        .map(|_| ())
        .expect_err("parts of two records");
    assert_eq!(
        err.to_string(),
        "the sign-in record for \"remote\" in the keychain is damaged; sign in again"
    );

    s.delete(&part_account("remote", 2))?;
    assert!(matches!(
        fresh().record("remote"),
        Err(VaultError::Damaged(_))
    ));

    // Signing out still clears everything, and signing in again works.
    fresh().remove("remote")?;
    assert!(
        items(&s).is_empty(),
        "{:?}",
        items(&s).iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    Ok(())
}

#[test]
fn parts_left_by_an_interrupted_write_are_swept() -> anyhow::Result<()> {
    let s = store(LIMIT);
    let vault = Vault::with_item_limit(s.clone(), LIMIT);
    // Parts written, head not (the app died in between).
    s.set(&part_account("remote", 1), "x")?;
    s.set(&part_account("remote", 2), "y")?;
    vault.put("remote", &record(100))?;
    assert_eq!(
        items(&s).len(),
        1,
        "{:?}",
        items(&s).iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    s.set(&part_account("remote", 1), "x")?;
    vault.remove("remote")?;
    assert!(items(&s).is_empty());
    Ok(())
}

#[test]
fn parts_of_a_server_never_collide_with_another_servers_record() {
    // A server named like a part of another one.
    assert_ne!(part_account("remote", 1), account("remote#1"));
    assert_ne!(part_account("remote", 1), part_account("remote#1", 1));
}

/// Multi-byte text is cut on character boundaries and comes back unchanged.
#[test]
fn records_with_non_ascii_text_split_on_character_boundaries() -> anyhow::Result<()> {
    let s = store(200);
    let vault = Vault::with_item_limit(s.clone(), 200);
    let mut rec = record(300);
    rec.resource = format!("https://mcp.example.com/{}", "ü€😀".repeat(100));
    vault.put("remote", &rec)?;
    assert!(items(&s).len() > 5);
    assert!(same(
        &Vault::with_item_limit(s.clone(), 200)
            .record("remote")?
            .unwrap(),
        &rec
    ));
    Ok(())
}

#[cfg(not(windows))]
#[test]
fn without_a_platform_limit_a_large_record_stays_one_item() -> anyhow::Result<()> {
    let mem = Arc::new(MemoryBackend::default());
    Vault::new(mem.clone()).put("remote", &record(6 * 1024))?;
    assert_eq!(mem.dump().len(), 1);
    Ok(())
}

/// The whole sign-in path (rmcp's credential store saves, loads, refreshes)
/// on a store whose items hold 300 bytes.
#[tokio::test]
async fn a_sign_in_kept_in_small_items_connects_and_refreshes() -> anyhow::Result<()> {
    let server = spawn_oauth_server::<&str>(&[]).await?;
    let s = store(300);
    let vault = Vault::with_item_limit(s.clone(), 300);
    let pending = oauth::begin("remote", &server.url, &vault).await?;
    let url = pending.url.clone();
    let browse = async {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let r = http.get(&url).send().await?;
        let back = r.headers()["location"].to_str()?.to_string();
        anyhow::Ok(http.get(&back).send().await?.status().as_u16())
    };
    let (done, status) = tokio::join!(pending.finish(Duration::from_secs(20)), browse);
    done?;
    assert_eq!(status?, 200);
    assert!(
        items(&s).len() > 2,
        "the record was split: {:?}",
        items(&s)
            .iter()
            .map(|(k, v)| (k, v.len()))
            .collect::<Vec<_>>()
    );

    // A fresh vault (the next run) connects from the split record, and a refresh rewrites it.
    let vault = Vault::with_item_limit(s.clone(), 300);
    let m = Manager::new(ManagerOptions {
        gate: Duration::from_millis(250),
        default_timeout: Duration::from_secs(20),
        grace: Duration::from_millis(300),
        home: std::env::temp_dir(),
        ..ManagerOptions::default()
    });
    m.set_vault(Some(vault.clone()));
    m.start(vec![Wanted::new(
        switchboard_engine::config::ServerDef::remote(
            "remote",
            switchboard_engine::config::Transport::Http,
            &server.url,
        ),
    )])
    .await;
    m.settle().await;
    assert_eq!(m.status("remote"), Some(ServerStatus::Connected));
    let before = serde_json::to_value(vault.record("remote")?.unwrap())?;
    let r = reqwest::Client::new()
        .post(format!("{}/_control/revoke-access", server.base_url()))
        .send()
        .await?;
    assert!(r.status().is_success());
    let out = m
        .call_tool(
            "mcp_remote_echo",
            Some(
                json!({"text": "after refresh"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
            None,
        )
        .await?;
    assert_eq!(out.text, "after refresh");
    let after: Value = serde_json::to_value(
        Vault::with_item_limit(s.clone(), 300)
            .record("remote")?
            .unwrap(),
    )?;
    assert_ne!(
        before["credentials"]["token_response"]["access_token"],
        after["credentials"]["token_response"]["access_token"],
        "the refreshed token was stored whole"
    );
    m.shutdown().await;

    oauth::sign_out("remote", &vault).await?;
    assert!(
        items(&s).is_empty(),
        "{:?}",
        items(&s).iter().map(|(k, _)| k).collect::<Vec<_>>()
    );
    Ok(())
}
