//! Where sign-in secrets live: the OS keychain and nowhere else.
//!
//! One keychain item per server (service `Switchboard MCP sign-in`, account
//! `oauth:<server>`) holds a JSON [`OAuthRecord`]: the server URL it was made
//! for, the authorization server (issuer), the redirect port the client was
//! registered with, the client id, and the tokens. A record whose URL no
//! longer matches the server's definition is treated as absent, so a changed
//! server never receives tokens meant for another one.
//!
//! A record larger than one item may hold (Windows Credential Manager takes
//! at most 2,560 bytes; tokens plus a client registration can be more) is
//! split: the item `oauth:<server>` then holds only a head,
//! `switchboard-parts:<N>:<sha256 of the record>`, and the record itself is
//! in `oauth-part:<server>#1` .. `#N` (its own prefix, so no server's name
//! can collide with a part). Records that fit keep the one-item format, and
//! sign-out deletes the head first, then every part.
//!
//! A bearer token the user gave for a server (`switchboard add --url URL
//! --token-stdin`) is kept the same way, in its own item (`token:<server>`,
//! parts `token-part:<server>#N`): the URL it is for and the token. It is
//! read at each connect (not cached, so a token added by the CLI reaches a
//! running app) and sent only to that server at that URL.
//!
//! A value of Switchboard's own file kept in the keychain (`${keychain:NAME}`
//! in an env or header value, e.g. a secret entered when installing from the
//! registry) is in `secret:NAME` (parts `secret-part:NAME#N`), read at each
//! launch.
//!
//! The [`Vault`] keeps what it read in memory (rmcp asks for the token on
//! every request; the keychain is asked once) and writes through. When the
//! keychain is unavailable, reads find nothing and writes fail with a clear
//! error: tokens are never put in a plain file instead.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The keychain service name every item is stored under.
pub const KEYCHAIN_SERVICE: &str = "Switchboard MCP sign-in";

/// The most one keychain item holds on this platform, in bytes as the
/// platform stores the secret (see [`Vault::with_item_limit`]): Windows
/// Credential Manager refuses credential blobs over 2,560 bytes, and the
/// keyring store writes passwords there as UTF-16. Secret Service and the
/// macOS Keychain have no limit a sign-in record reaches.
pub const PLATFORM_ITEM_LIMIT: Option<usize> = if cfg!(windows) { Some(2560) } else { None };

/// The smallest item limit a vault accepts: a head item must fit.
const MIN_ITEM_LIMIT: usize = 128;

/// What the head item of a split record starts with.
const PARTS_HEAD: &str = "switchboard-parts:";

#[derive(Debug, Clone, thiserror::Error)]
pub enum VaultError {
    #[error("no OS keychain is available ({0}); Switchboard does not store sign-in tokens in plain text. On Linux, install and unlock a Secret Service keyring (GNOME Keyring or KWallet).")]
    Unavailable(String),
    #[error("the OS keychain refused the request: {0}")]
    Keychain(String),
    #[error("the sign-in record for \"{0}\" in the keychain is damaged; sign in again")]
    Damaged(String),
}

/// A secret store keyed by account name.
pub trait SecretBackend: Send + Sync {
    fn get(&self, account: &str) -> Result<Option<String>, VaultError>;
    fn set(&self, account: &str, secret: &str) -> Result<(), VaultError>;
    fn delete(&self, account: &str) -> Result<(), VaultError>;
    /// What the store is, for messages (`Secret Service`, `in-memory`).
    fn describe(&self) -> String;
    /// Whether secrets can be stored at all right now.
    fn available(&self) -> Result<(), VaultError> {
        Ok(())
    }
}

/// The platform keychain through the `keyring` crate: Secret Service on
/// Linux, Keychain on macOS, Credential Manager on Windows.
///
/// Every request runs on one thread of its own ([`on_keychain_thread`]); the
/// caller waits for its answer. The keychain client (zbus on Linux) is thus
/// only ever driven from that thread, whoever asks: what lets zbus run on a
/// tokio runtime of its own, whose `block_on` refuses a thread that drives
/// async tasks (tried to drop the `blocking` pool thread async-io brings,
/// which wakes twice a second; taken back for now, see README Performance).
#[derive(Debug, Default, Clone, Copy)]
pub struct Keychain;

impl Keychain {
    fn entry(account: &str) -> Result<keyring::Entry, VaultError> {
        if let Err(e) = keyring::Entry::store_status() {
            return Err(VaultError::Unavailable(e.to_string()));
        }
        keyring::Entry::new(KEYCHAIN_SERVICE, account).map_err(|e| map_keyring(e, account))
    }

    /// Whether a keychain can be used at all (for the UI's and CLI's status).
    pub fn status() -> Result<(), VaultError> {
        on_keychain_thread(|| {
            keyring::Entry::store_status()
                .as_ref()
                .map(|_| ())
                .map_err(|e| VaultError::Unavailable(e.to_string()))
        })
    }
}

type KeychainJob = Box<dyn FnOnce() + Send>;

/// Runs `f` on the keychain's own thread (started at the first request; it
/// waits for the next one without waking) and returns its result. Requests
/// are answered one at a time, in order, as the keychain store would anyway.
fn on_keychain_thread<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, VaultError> + Send + 'static,
) -> Result<T, VaultError> {
    static JOBS: std::sync::OnceLock<Option<Mutex<std::sync::mpsc::Sender<KeychainJob>>>> =
        std::sync::OnceLock::new();
    let jobs = JOBS.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<KeychainJob>();
        std::thread::Builder::new()
            .name("switchboard-keychain".into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let Some(jobs) = jobs else {
        return Err(VaultError::Unavailable(
            "could not start the keychain's thread".into(),
        ));
    };
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let job: KeychainJob = Box::new(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
            Err(VaultError::Keychain(
                "the keychain request failed unexpectedly".into(),
            ))
        });
        let _ = tx.send(r);
    });
    jobs.lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job)
        .map_err(|_| VaultError::Unavailable("the keychain's thread has ended".into()))?;
    rx.recv().unwrap_or_else(|_| {
        Err(VaultError::Unavailable(
            "the keychain's thread has ended".into(),
        ))
    })
}

fn map_keyring(e: keyring::Error, account: &str) -> VaultError {
    match e {
        keyring::Error::NoStorageAccess(inner) => VaultError::Unavailable(inner.to_string()),
        keyring::Error::NoDefaultStore => {
            VaultError::Unavailable("no default credential store".into())
        }
        keyring::Error::PlatformFailure(inner) => {
            VaultError::Keychain(format!("{account}: {inner}"))
        }
        other => VaultError::Keychain(format!("{account}: {other}")),
    }
}

impl SecretBackend for Keychain {
    fn get(&self, account: &str) -> Result<Option<String>, VaultError> {
        let account = account.to_string();
        on_keychain_thread(move || match Self::entry(&account)?.get_password() {
            Ok(s) => Ok(Some(s)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_keyring(e, &account)),
        })
    }

    fn set(&self, account: &str, secret: &str) -> Result<(), VaultError> {
        let (account, secret) = (account.to_string(), secret.to_string());
        on_keychain_thread(move || {
            Self::entry(&account)?
                .set_password(&secret)
                .map_err(|e| map_keyring(e, &account))
        })
    }

    fn delete(&self, account: &str) -> Result<(), VaultError> {
        let account = account.to_string();
        on_keychain_thread(move || match Self::entry(&account)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(map_keyring(e, &account)),
        })
    }

    fn available(&self) -> Result<(), VaultError> {
        Self::status()
    }

    fn describe(&self) -> String {
        if cfg!(target_os = "macos") {
            "macOS Keychain".into()
        } else if cfg!(windows) {
            "Windows Credential Manager".into()
        } else {
            "Secret Service".into()
        }
    }
}

/// A process-local store for tests of the OAuth flow itself (the keychain
/// has its own tests against a real Secret Service).
#[derive(Debug, Default)]
pub struct MemoryBackend {
    items: Mutex<HashMap<String, String>>,
}

impl MemoryBackend {
    /// Every stored secret, for leak tests that look for tokens elsewhere.
    pub fn dump(&self) -> Vec<(String, String)> {
        self.items
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

impl SecretBackend for MemoryBackend {
    fn get(&self, account: &str) -> Result<Option<String>, VaultError> {
        Ok(self.items.lock().unwrap().get(account).cloned())
    }
    fn set(&self, account: &str, secret: &str) -> Result<(), VaultError> {
        self.items
            .lock()
            .unwrap()
            .insert(account.into(), secret.into());
        Ok(())
    }
    fn delete(&self, account: &str) -> Result<(), VaultError> {
        self.items.lock().unwrap().remove(account);
        Ok(())
    }
    fn describe(&self) -> String {
        "in-memory store".into()
    }
}

/// Everything a sign-in leaves behind for one server.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthRecord {
    /// The server URL (OAuth resource) the tokens were issued for.
    pub resource: String,
    /// Port of the 127.0.0.1 redirect listener the client was registered with.
    #[serde(default)]
    pub redirect_port: Option<u16>,
    /// rmcp's record: client id, tokens, granted scopes, issuer, received-at.
    #[serde(default)]
    pub credentials: Option<StoredCredentials>,
    /// The secret of the client the tokens belong to: one dynamic
    /// registration returned (a confidential client), or the pre-registered
    /// app's. Refreshes authenticate with it, and a new sign-in reuses it
    /// with the registration instead of registering again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// When the sign-in was made (seconds since 1970), for the accounts view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_in_at: Option<u64>,
}

impl std::fmt::Debug for OAuthRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthRecord")
            .field("resource", &self.resource)
            .field("redirect_port", &self.redirect_port)
            .field("credentials", &self.credentials)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("signed_in_at", &self.signed_in_at)
            .finish()
    }
}

impl OAuthRecord {
    /// A record for `resource` with nothing in it yet.
    pub fn new(resource: &str) -> Self {
        OAuthRecord {
            resource: resource.into(),
            redirect_port: None,
            credentials: None,
            client_secret: None,
            signed_in_at: None,
        }
    }
    pub fn has_tokens(&self) -> bool {
        self.credentials
            .as_ref()
            .is_some_and(|c| c.token_response.is_some())
    }
    pub fn issuer(&self) -> Option<&str> {
        self.credentials.as_ref().and_then(|c| c.issuer.as_deref())
    }
}

/// Keychain account name of a server's record (or of its head, when split).
pub fn account(server: &str) -> String {
    format!("oauth:{server}")
}

/// Keychain account name of part `i` (from 1) of a server's split record.
pub fn part_account(server: &str, i: usize) -> String {
    format!("oauth-part:{server}#{i}")
}

/// Keychain account name of a server's static bearer token (or its head).
pub fn token_account(server: &str) -> String {
    format!("token:{server}")
}

/// Keychain account name of the secret of a server's pre-registered OAuth
/// app, as entered in the app (or its head).
pub fn app_secret_account(server: &str) -> String {
    format!("app-secret:{server}")
}

/// Keychain account name of a value kept for `${keychain:NAME}` in
/// Switchboard's own file (or its head).
pub fn stored_secret_account(name: &str) -> String {
    format!("secret:{name}")
}

/// The kinds of keychain item a server may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    SignIn,
    Token,
    AppSecret,
    Stored,
}

impl Item {
    fn head(self, server: &str) -> String {
        match self {
            Item::SignIn => account(server),
            Item::Token => token_account(server),
            Item::AppSecret => app_secret_account(server),
            Item::Stored => stored_secret_account(server),
        }
    }
    fn part(self, server: &str, i: usize) -> String {
        match self {
            Item::SignIn => part_account(server, i),
            Item::Token => format!("token-part:{server}#{i}"),
            Item::AppSecret => format!("app-secret-part:{server}#{i}"),
            Item::Stored => format!("secret-part:{server}#{i}"),
        }
    }
}

/// A bearer token the user gave for one server, and the URL it is for.
#[derive(Clone, Serialize, Deserialize)]
struct StaticToken {
    resource: String,
    token: String,
}

/// Size of `s` as the platform's keychain stores it.
fn stored_len(s: &str) -> usize {
    if cfg!(windows) {
        s.encode_utf16().count() * 2
    } else {
        s.len()
    }
}

/// `text` cut into pieces of at most `limit` stored bytes, on char boundaries.
fn split_text(text: &str, limit: usize) -> Vec<&str> {
    let mut parts = vec![];
    let (mut start, mut size) = (0, 0);
    for (at, c) in text.char_indices() {
        let n = stored_len(c.encode_utf8(&mut [0; 4]));
        if size + n > limit && at > start {
            parts.push(&text[start..at]);
            (start, size) = (at, 0);
        }
        size += n;
    }
    if start < text.len() {
        parts.push(&text[start..]);
    }
    parts
}

fn digest(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The part count and digest a head item names; `None` for a one-item record.
fn parse_head(head: &str) -> Option<(usize, &str)> {
    let (n, hash) = head.strip_prefix(PARTS_HEAD)?.split_once(':')?;
    Some((n.parse().ok()?, hash))
}

/// The sign-in records, cached in memory, written through to a backend.
#[derive(Clone)]
pub struct Vault {
    backend: Arc<dyn SecretBackend>,
    /// Records larger than this (stored bytes) are split across items.
    item_limit: Option<usize>,
    /// `None` inside: known absent.
    cache: Arc<Mutex<HashMap<String, Option<OAuthRecord>>>>,
    /// One refresh at a time per server, across every connection using it.
    refreshing: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
}

impl Vault {
    /// Items as large as this platform's keychain takes ([`PLATFORM_ITEM_LIMIT`]).
    pub fn new(backend: Arc<dyn SecretBackend>) -> Self {
        Vault {
            backend,
            item_limit: PLATFORM_ITEM_LIMIT,
            cache: Default::default(),
            refreshing: Default::default(),
        }
    }

    /// Items of at most `limit` bytes as the platform stores them (at least
    /// 128): a larger record is split. Tests force a small one anywhere.
    pub fn with_item_limit(backend: Arc<dyn SecretBackend>, limit: usize) -> Self {
        Vault {
            item_limit: Some(limit.max(MIN_ITEM_LIMIT)),
            ..Self::new(backend)
        }
    }

    /// The OS keychain.
    pub fn keychain() -> Self {
        Self::new(Arc::new(Keychain))
    }

    pub fn describe(&self) -> String {
        self.backend.describe()
    }

    /// Fails with a clear message when there is nowhere safe to keep tokens.
    pub fn probe_writable(&self) -> Result<(), VaultError> {
        self.backend.available()
    }

    /// The stored record of `server`, whatever URL it was made for.
    pub fn record(&self, server: &str) -> Result<Option<OAuthRecord>, VaultError> {
        if let Some(hit) = self.cache.lock().unwrap().get(server) {
            return Ok(hit.clone());
        }
        let rec = match self.read_text(Item::SignIn, server)? {
            None => None,
            Some(text) => Some(
                serde_json::from_str::<OAuthRecord>(&text)
                    .map_err(|_| VaultError::Damaged(server.into()))?,
            ),
        };
        self.cache
            .lock()
            .unwrap()
            .insert(server.into(), rec.clone());
        Ok(rec)
    }

    /// The record of `server` if it was made for `resource`.
    pub fn record_for(
        &self,
        server: &str,
        resource: &str,
    ) -> Result<Option<OAuthRecord>, VaultError> {
        Ok(self
            .record(server)?
            .filter(|r| same_resource(&r.resource, resource)))
    }

    pub fn put(&self, server: &str, rec: &OAuthRecord) -> Result<(), VaultError> {
        let text = serde_json::to_string(rec).expect("records serialize");
        self.write_text(Item::SignIn, server, &text)?;
        self.cache
            .lock()
            .unwrap()
            .insert(server.into(), Some(rec.clone()));
        Ok(())
    }

    /// Sign out: the record (tokens and client registration) is deleted,
    /// every part of it too.
    pub fn remove(&self, server: &str) -> Result<(), VaultError> {
        self.delete_item(Item::SignIn, server)?;
        self.cache.lock().unwrap().insert(server.into(), None);
        Ok(())
    }

    /// Delete the bearer token given for `server` (none is fine).
    pub fn remove_token(&self, server: &str) -> Result<(), VaultError> {
        self.delete_item(Item::Token, server)
    }

    /// Keep `token` as the bearer token of `server` at `resource` (its URL),
    /// replacing any earlier one.
    pub fn put_token(&self, server: &str, resource: &str, token: &str) -> Result<(), VaultError> {
        let text = serde_json::to_string(&StaticToken {
            resource: resource.into(),
            token: token.into(),
        })
        .expect("tokens serialize");
        self.write_text(Item::Token, server, &text)
    }

    /// The bearer token given for `server`, if it was given for `resource`.
    pub fn token_for(&self, server: &str, resource: &str) -> Result<Option<String>, VaultError> {
        let Some(text) = self.read_text(Item::Token, server)? else {
            return Ok(None);
        };
        let t: StaticToken =
            serde_json::from_str(&text).map_err(|_| VaultError::Damaged(server.into()))?;
        Ok(same_resource(&t.resource, resource).then_some(t.token))
    }

    /// Keep `secret` as the client secret of `server`'s pre-registered OAuth
    /// app (entered in the app; never written to a file). It outlives a
    /// sign-out: it belongs to the app registration, not to the sign-in.
    pub fn put_app_secret(&self, server: &str, secret: &str) -> Result<(), VaultError> {
        self.write_text(Item::AppSecret, server, secret)
    }

    /// The client secret kept for `server`'s pre-registered OAuth app.
    pub fn app_secret(&self, server: &str) -> Result<Option<String>, VaultError> {
        self.read_text(Item::AppSecret, server)
    }

    pub fn remove_app_secret(&self, server: &str) -> Result<(), VaultError> {
        self.delete_item(Item::AppSecret, server)
    }

    /// Keep `value` as the secret `${keychain:NAME}` names (an env or
    /// header value of a server in Switchboard's own file).
    pub fn put_secret(&self, name: &str, value: &str) -> Result<(), VaultError> {
        self.write_text(Item::Stored, name, value)
    }

    /// The value `${keychain:NAME}` stands for, read at each launch.
    pub fn secret(&self, name: &str) -> Result<Option<String>, VaultError> {
        self.read_text(Item::Stored, name)
    }

    pub fn remove_secret(&self, name: &str) -> Result<(), VaultError> {
        self.delete_item(Item::Stored, name)
    }

    /// The names of the servers with a record in memory (read or written
    /// by this process); the keychain cannot be listed by prefix everywhere.
    pub fn cached_servers(&self) -> Vec<String> {
        self.cache
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, r)| r.is_some())
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn delete_item(&self, item: Item, server: &str) -> Result<(), VaultError> {
        let parts = self
            .backend
            .get(&item.head(server))?
            .as_deref()
            .and_then(parse_head)
            .map_or(0, |(n, _)| n);
        // The head goes first: a sign-out cut short leaves no record to read.
        self.backend.delete(&item.head(server))?;
        self.delete_parts(item, server, 1, parts)
    }

    /// The record's text, whole again if it was split.
    fn read_text(&self, item: Item, server: &str) -> Result<Option<String>, VaultError> {
        let Some(head) = self.backend.get(&item.head(server))? else {
            return Ok(None);
        };
        let Some((n, hash)) = parse_head(&head) else {
            return Ok(Some(head));
        };
        let mut text = String::new();
        for i in 1..=n {
            text.push_str(
                &self
                    .backend
                    .get(&item.part(server, i))?
                    .ok_or_else(|| VaultError::Damaged(server.into()))?,
            );
        }
        // A write cut short between its parts and its head mixes two records.
        if digest(&text) != hash {
            return Err(VaultError::Damaged(server.into()));
        }
        Ok(Some(text))
    }

    /// Store the record's text in one item, or in parts behind a head when
    /// it is larger than an item may be; parts the record no longer needs go.
    fn write_text(&self, item: Item, server: &str, text: &str) -> Result<(), VaultError> {
        let had = self
            .backend
            .get(&item.head(server))?
            .as_deref()
            .and_then(parse_head)
            .map_or(0, |(n, _)| n);
        let parts = match self.item_limit {
            Some(limit) if stored_len(text) > limit => split_text(text, limit),
            _ => vec![],
        };
        // Parts first, then the head that names them: until the head is
        // written, the previous record (or its damaged mix) is what reads.
        for (i, part) in parts.iter().enumerate() {
            self.backend.set(&item.part(server, i + 1), part)?;
        }
        let head = if parts.is_empty() {
            text.to_string()
        } else {
            format!("{PARTS_HEAD}{}:{}", parts.len(), digest(text))
        };
        self.backend.set(&item.head(server), &head)?;
        self.delete_parts(item, server, parts.len() + 1, had)
    }

    /// Delete parts `from..=to`, then any further ones a write cut short
    /// left behind (up to the first that is absent).
    fn delete_parts(
        &self,
        item: Item,
        server: &str,
        from: usize,
        to: usize,
    ) -> Result<(), VaultError> {
        for i in from..=to {
            self.backend.delete(&item.part(server, i))?;
        }
        let mut i = from.max(to + 1);
        while self.backend.get(&item.part(server, i))?.is_some() {
            self.backend.delete(&item.part(server, i))?;
            i += 1;
        }
        Ok(())
    }

    /// Forget what was read, so the next read asks the backend again.
    pub fn forget_cached(&self) {
        self.cache.lock().unwrap().clear();
    }

    /// rmcp's view of one server's record.
    pub fn credential_store(&self, server: &str, resource: &str) -> VaultCredentialStore {
        let refresh = self
            .refreshing
            .lock()
            .unwrap()
            .entry(server.to_string())
            .or_default()
            .clone();
        VaultCredentialStore {
            vault: self.clone(),
            server: server.into(),
            resource: resource.into(),
            refresh,
        }
    }
}

/// Two server URLs name the same resource (a trailing slash aside).
pub fn same_resource(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// rmcp's [`CredentialStore`] over one server's keychain record. Saving keeps
/// the redirect port; clearing drops the tokens and client registration.
#[derive(Clone)]
pub struct VaultCredentialStore {
    vault: Vault,
    server: String,
    resource: String,
    refresh: Arc<tokio::sync::Mutex<()>>,
}

fn store_err(e: VaultError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

impl VaultCredentialStore {
    fn read(&self) -> Result<Option<OAuthRecord>, VaultError> {
        self.vault.record_for(&self.server, &self.resource)
    }
}

#[async_trait::async_trait]
impl CredentialStore for VaultCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let me = self.clone();
        let rec = tokio::task::spawn_blocking(move || me.read())
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(store_err)?;
        Ok(rec.and_then(|r| r.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut rec = me.read()?.unwrap_or_else(|| OAuthRecord::new(&me.resource));
            rec.credentials = Some(credentials);
            me.vault.put(&me.server, &rec)
        })
        .await
        .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
        .map_err(store_err)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || me.vault.remove(&me.server))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(store_err)
    }

    /// A refresh token the server rejected is worthless: drop the tokens, keep
    /// the client registration (and its port) for the next sign-in.
    async fn on_refresh_token_rejected(
        &self,
        rejected: &StoredCredentials,
    ) -> Result<(), AuthError> {
        let me = self.clone();
        let client_id = rejected.client_id.clone();
        tokio::task::spawn_blocking(move || {
            let Some(mut rec) = me.read()? else {
                return Ok(());
            };
            if rec
                .credentials
                .as_ref()
                .is_some_and(|c| c.client_id == client_id)
            {
                rec.credentials = rec.credentials.map(|c| {
                    StoredCredentials::new(c.client_id, None, vec![], None).with_issuer(c.issuer)
                });
                me.vault.put(&me.server, &rec)?;
            }
            Ok(())
        })
        .await
        .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
        .map_err(store_err)
    }

    async fn acquire_refresh_guard(
        &self,
    ) -> Result<Option<rmcp::transport::auth::CredentialRefreshGuard>, AuthError> {
        let g = self.refresh.clone().lock_owned().await;
        Ok(Some(rmcp::transport::auth::CredentialRefreshGuard::new(g)))
    }
}
