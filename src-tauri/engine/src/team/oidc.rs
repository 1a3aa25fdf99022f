//! Team mode's access-token check: the gateway as an OAuth 2.1 protected
//! resource (MCP authorization, spec 2025-11-25) that accepts JWT access
//! tokens issued by the team's identity provider.
//!
//! [`Validator::discover`] reads the provider's metadata once (OpenID Connect
//! discovery, else RFC 8414) and its signing keys (JWKS); [`Validator::validate`]
//! then checks one bearer token: its size and shape, an allowed asymmetric
//! algorithm (never `none` or HMAC), the signature with the key named by its
//! `kid`, and the claims: `iss` equal to the issuer, `aud` containing the
//! gateway's resource URL (RFC 8707), `exp`, `nbf` and `iat` within the
//! leeway, and a `sub`. A token that passes becomes an [`Identity`] (subject,
//! groups, scopes); one that fails becomes a [`Refusal`] with a metric label,
//! a sentence for people and the OAuth error code for `WWW-Authenticate`.
//!
//! Keys are cached by `kid`. A token naming an unknown `kid` makes the
//! validator fetch the JWKS again (the provider may have rotated its keys),
//! but only one fetch at a time (concurrent misses wait for the same one) and
//! at most one per [`KeyRefresh::min_interval`] (10 s), so tokens forged with
//! random `kid`s cannot make the gateway hammer the provider. Keys older than
//! [`KeyRefresh::max_age`] (1 hour) are fetched again on the next validation,
//! so a key the provider removed stops being accepted.
//!
//! A validation with a cached key does no network I/O and no JWKS parsing:
//! base64 decoding, one signature check and one small JSON parse
//! (`cargo bench --bench team_token` measures it).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::{Map, Value};

/// Tokens longer than this are refused without being parsed.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Metadata and JWKS responses larger than this are refused.
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// The time limit of each metadata or JWKS request.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// What the gateway is told about its identity provider (`switchboard serve
/// --oidc-issuer URL --resource URL`).
#[derive(Debug, Clone)]
pub struct OidcSettings {
    /// The provider's issuer identifier, compared exactly (no trailing-slash
    /// normalisation) with the metadata's `issuer` and each token's `iss`.
    pub issuer: String,
    /// The gateway's own resource URL; each token's `aud` must contain it.
    pub resource: String,
    /// The claim holding the user's groups (default `groups`).
    pub groups_claim: String,
    /// Clock skew allowed on `exp`, `nbf` and `iat` ([`DEFAULT_LEEWAY`]).
    pub leeway: Duration,
}

/// The default [`OidcSettings::leeway`].
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);

/// When the JWKS is fetched again ([`Validator::discover_with`]).
#[derive(Debug, Clone, Copy)]
pub struct KeyRefresh {
    /// At most one fetch per this long, for unknown `kid`s or old keys
    /// (default 10 s).
    pub min_interval: Duration,
    /// Keys fetched longer ago than this are fetched again on the next
    /// validation (default 1 hour).
    pub max_age: Duration,
}

impl Default for KeyRefresh {
    fn default() -> Self {
        KeyRefresh {
            min_interval: Duration::from_secs(10),
            max_age: Duration::from_secs(3600),
        }
    }
}

/// An HTTP client for the identity provider's metadata and keys: rustls,
/// a 5 s connection timeout, at most 3 redirects. (Each request also has
/// the 10 s [`FETCH_TIMEOUT`].)
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .timeout(FETCH_TIMEOUT)
        .redirect(reqwest::redirect::Policy::limited(3))
        .user_agent(concat!("switchboard/", env!("CARGO_PKG_VERSION")))
        .build()
        .unwrap_or_default()
}

impl OidcSettings {
    /// Settings with the defaults: groups in `groups`, 60 s leeway.
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> Self {
        OidcSettings {
            issuer: issuer.into(),
            resource: resource.into(),
            groups_claim: "groups".into(),
            leeway: DEFAULT_LEEWAY,
        }
    }
}

/// Why [`Validator::discover`] failed. Each message names the URL involved.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("the issuer {0:?} is not an http(s) URL without query or fragment")]
    InvalidIssuer(String),
    #[error("no authorization server metadata found for {issuer}: {}", tried.join("; "))]
    NoMetadata { issuer: String, tried: Vec<String> },
    #[error("the metadata at {url} names the issuer {found:?}, not the configured {expected:?}")]
    IssuerMismatch {
        url: String,
        expected: String,
        found: String,
    },
    #[error("the metadata at {url} is not usable: {reason}")]
    BadMetadata { url: String, reason: String },
    #[error("the signing keys (JWKS) at {url} could not be read: {reason}")]
    Jwks { url: String, reason: String },
}

/// Who a valid token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The `sub` claim.
    pub subject: String,
    /// The groups claim (see [`OidcSettings::groups_claim`]); empty if absent.
    pub groups: Vec<String>,
    /// From `scope` (space separated) or `scp` (array or string); empty if absent.
    pub scopes: Vec<String>,
    /// The `exp` claim, Unix seconds.
    pub expires_at: u64,
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// Not three base64url parts, or a header or claims that are not JSON
    /// objects of the expected types, or no `exp`.
    Malformed,
    /// Longer than [`MAX_TOKEN_BYTES`].
    TooLarge,
    /// `none`, HMAC or another algorithm not accepted, or one that does not
    /// fit the key (its type, or the key's own `alg`).
    AlgorithmRefused,
    /// No key with the token's `kid`, even after fetching the keys again.
    UnknownKey,
    /// The signature does not match.
    BadSignature,
    /// `exp` has passed.
    Expired,
    /// `nbf` or `iat` is in the future.
    NotYetValid,
    /// `iss` is not the issuer.
    WrongIssuer,
    /// `aud` does not contain the gateway's resource URL.
    WrongAudience,
    /// No `sub`.
    NoSubject,
    /// The key is not cached and the provider's keys could not be fetched.
    KeysUnavailable,
}

impl Refusal {
    /// A snake_case name, for a Prometheus label.
    pub fn label(&self) -> &'static str {
        match self {
            Refusal::Malformed => "malformed",
            Refusal::TooLarge => "too_large",
            Refusal::AlgorithmRefused => "algorithm_refused",
            Refusal::UnknownKey => "unknown_key",
            Refusal::BadSignature => "bad_signature",
            Refusal::Expired => "expired",
            Refusal::NotYetValid => "not_yet_valid",
            Refusal::WrongIssuer => "wrong_issuer",
            Refusal::WrongAudience => "wrong_audience",
            Refusal::NoSubject => "no_subject",
            Refusal::KeysUnavailable => "keys_unavailable",
        }
    }

    /// One sentence for a person (an error description, a log line). It
    /// never quotes the token.
    pub fn reason(&self) -> String {
        match self {
            Refusal::Malformed => {
                "The access token is not a well-formed JWT with the required claims."
            }
            Refusal::TooLarge => "The access token is larger than 16 KiB.",
            Refusal::AlgorithmRefused => {
                "The access token is signed with an algorithm this gateway does not accept \
                 for its key."
            }
            Refusal::UnknownKey => {
                "The access token is signed with a key the identity provider does not publish."
            }
            Refusal::BadSignature => "The access token's signature is not valid.",
            Refusal::Expired => "The access token has expired.",
            Refusal::NotYetValid => "The access token is not valid yet.",
            Refusal::WrongIssuer => {
                "The access token was issued by another identity provider than this gateway's."
            }
            Refusal::WrongAudience => "The access token was not issued for this gateway.",
            Refusal::NoSubject => "The access token does not say which user it is for.",
            Refusal::KeysUnavailable => {
                "The identity provider's signing keys could not be fetched; try again shortly."
            }
        }
        .to_string()
    }

    /// The OAuth error code for `WWW-Authenticate` (RFC 6750):
    /// `invalid_token`, or `temporarily_unavailable` when the keys could not
    /// be fetched (a server-side problem, not the client's token).
    pub fn oauth_error(&self) -> &'static str {
        match self {
            Refusal::KeysUnavailable => "temporarily_unavailable",
            _ => "invalid_token",
        }
    }

    /// The HTTP status to answer with: 401, or 503 when the keys could not
    /// be fetched.
    pub fn http_status(&self) -> u16 {
        match self {
            Refusal::KeysUnavailable => 503,
            _ => 401,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason())
    }
}

impl std::error::Error for Refusal {}

/// Checks access tokens against one identity provider. Cheap to clone (one
/// `Arc`); `Send + Sync`.
#[derive(Clone)]
pub struct Validator {
    inner: Arc<Inner>,
}

struct Inner {
    settings: OidcSettings,
    key_refresh: KeyRefresh,
    http: reqwest::Client,
    jwks_uri: String,
    scopes_supported: Option<Vec<String>>,
    keys: RwLock<Arc<KeySet>>,
    /// Held while fetching the JWKS: concurrent misses wait for one fetch.
    refresh: tokio::sync::Mutex<RefreshState>,
    /// The last JWKS fetch failed.
    keys_failing: AtomicBool,
}

struct RefreshState {
    /// The last fetch made for a cache miss or for old keys. Discovery's
    /// fetch does not count, so a key rotated in right after the gateway
    /// started is still picked up by the first token that uses it.
    last_attempt: Option<Instant>,
}

/// The key types a JWK can have, as far as the accepted algorithms go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyType {
    Rsa,
    P256,
    P384,
    Ed25519,
}

impl KeyType {
    fn fits(self, alg: Algorithm) -> bool {
        use Algorithm::*;
        matches!(
            (self, alg),
            (KeyType::Rsa, RS256 | RS384 | RS512 | PS256 | PS384 | PS512)
                | (KeyType::P256, ES256)
                | (KeyType::P384, ES384)
                | (KeyType::Ed25519, EdDSA)
        )
    }
}

struct Key {
    key_type: KeyType,
    /// The JWK's own `alg`, if it has one.
    alg: Option<Algorithm>,
    decoding: DecodingKey,
}

impl Key {
    fn usable_for(&self, alg: Algorithm) -> bool {
        self.key_type.fits(alg) && self.alg.is_none_or(|own| own == alg)
    }
}

struct KeySet {
    /// Keys with a `kid` (a `kid` may be shared by keys of different types).
    by_kid: HashMap<String, Vec<Arc<Key>>>,
    /// Every key, for tokens without a `kid`.
    all: Vec<Arc<Key>>,
    fetched: Instant,
}

enum Lookup {
    Found(Arc<Key>),
    /// A key with this `kid` exists but not of a type or `alg` that fits.
    Unfit,
    /// No `kid` and not exactly one usable key.
    Ambiguous,
    Missing,
}

impl KeySet {
    fn lookup(&self, kid: Option<&str>, alg: Algorithm) -> Lookup {
        match kid {
            Some(kid) => match self.by_kid.get(kid) {
                None => Lookup::Missing,
                Some(keys) => match keys.iter().find(|k| k.usable_for(alg)) {
                    Some(key) => Lookup::Found(key.clone()),
                    None => Lookup::Unfit,
                },
            },
            None => {
                let mut usable = self.all.iter().filter(|k| k.usable_for(alg));
                match (usable.next(), usable.next()) {
                    (Some(key), None) => Lookup::Found(key.clone()),
                    (None, _) => Lookup::Missing,
                    (Some(_), Some(_)) => Lookup::Ambiguous,
                }
            }
        }
    }
}

/// The accepted algorithms; everything else (`none`, `HS*`, unknown) is refused.
fn accepted_algorithm(name: &str) -> Option<Algorithm> {
    Some(match name {
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "EdDSA" => Algorithm::EdDSA,
        _ => return None,
    })
}

#[derive(serde::Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
    /// Critical extensions (RFC 7515 §4.1.11): none is understood here, so a
    /// token that has any is refused.
    #[serde(default)]
    crit: Option<Value>,
}

impl Validator {
    /// Reads the provider's metadata and keys: OpenID Connect discovery
    /// (`{issuer}/.well-known/openid-configuration`), else RFC 8414
    /// (`/.well-known/oauth-authorization-server` followed by the issuer's
    /// path, then appended to the issuer). The metadata's `issuer` must equal
    /// the configured one exactly; its `jwks_uri` is then fetched. Each
    /// request has a 10 s time limit and a 1 MiB size limit.
    pub async fn discover(
        settings: OidcSettings,
        http: reqwest::Client,
    ) -> Result<Validator, DiscoveryError> {
        Self::discover_with(settings, KeyRefresh::default(), http).await
    }

    /// [`Validator::discover`] with another [`KeyRefresh`] policy.
    pub async fn discover_with(
        settings: OidcSettings,
        key_refresh: KeyRefresh,
        http: reqwest::Client,
    ) -> Result<Validator, DiscoveryError> {
        let issuer = settings.issuer.clone();
        let parsed = url::Url::parse(&issuer)
            .ok()
            .filter(|u| {
                matches!(u.scheme(), "http" | "https")
                    && u.host().is_some()
                    && u.query().is_none()
                    && u.fragment().is_none()
            })
            .ok_or_else(|| DiscoveryError::InvalidIssuer(issuer.clone()))?;

        let mut tried = vec![];
        let mut found = None;
        for url in metadata_urls(&issuer, &parsed) {
            match fetch_json(&http, &url).await {
                Ok(doc) => {
                    found = Some((url, doc));
                    break;
                }
                Err(reason) => tried.push(format!("{url}: {reason}")),
            }
        }
        let Some((url, doc)) = found else {
            return Err(DiscoveryError::NoMetadata { issuer, tried });
        };
        let bad = |reason: &str| DiscoveryError::BadMetadata {
            url: url.clone(),
            reason: reason.to_string(),
        };
        let found_issuer = doc
            .get("issuer")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("it has no \"issuer\""))?;
        if found_issuer != issuer {
            return Err(DiscoveryError::IssuerMismatch {
                url: url.clone(),
                expected: issuer,
                found: found_issuer.to_string(),
            });
        }
        let jwks_uri = doc
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("it has no \"jwks_uri\""))?;
        let jwks_url =
            url::Url::parse(jwks_uri).map_err(|_| bad("its \"jwks_uri\" is not a URL"))?;
        let jwks_scheme_ok = match parsed.scheme() {
            "https" => jwks_url.scheme() == "https",
            _ => matches!(jwks_url.scheme(), "http" | "https"),
        };
        if !jwks_scheme_ok {
            return Err(bad("its \"jwks_uri\" is not an https URL"));
        }
        let scopes_supported = doc
            .get("scopes_supported")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            });
        let jwks_uri = jwks_uri.to_string();
        let keys = fetch_keys(&http, &jwks_uri)
            .await
            .map_err(|reason| DiscoveryError::Jwks {
                url: jwks_uri.clone(),
                reason,
            })?;
        Ok(Validator {
            inner: Arc::new(Inner {
                refresh: tokio::sync::Mutex::new(RefreshState { last_attempt: None }),
                settings,
                key_refresh,
                http,
                jwks_uri,
                scopes_supported,
                keys: RwLock::new(Arc::new(keys)),
                keys_failing: AtomicBool::new(false),
            }),
        })
    }

    /// The issuer (for RFC 9728 `authorization_servers`).
    pub fn issuer(&self) -> &str {
        &self.inner.settings.issuer
    }

    /// The metadata's `scopes_supported`, if it had one.
    pub fn scopes_supported(&self) -> Option<&[String]> {
        self.inner.scopes_supported.as_deref()
    }

    /// The settings this validator was made with.
    pub fn settings(&self) -> &OidcSettings {
        &self.inner.settings
    }

    /// Checks one access token (the JWT itself, without `Bearer `).
    pub async fn validate(&self, token: &str) -> Result<Identity, Refusal> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Refusal::TooLarge);
        }
        let mut parts = token.split('.');
        let (Some(header_b64), Some(claims_b64), Some(signature_b64), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Refusal::Malformed);
        };
        let header_json = URL_SAFE_NO_PAD
            .decode(header_b64)
            .map_err(|_| Refusal::Malformed)?;
        let header: Header =
            serde_json::from_slice(&header_json).map_err(|_| Refusal::Malformed)?;
        // Before any key is looked up: `none`, HMAC and the rest are refused.
        let alg = accepted_algorithm(&header.alg).ok_or(Refusal::AlgorithmRefused)?;
        if header.crit.is_some() {
            return Err(Refusal::Malformed);
        }
        let key = self.key_for(header.kid.as_deref(), alg).await?;

        let message = &token[..header_b64.len() + 1 + claims_b64.len()];
        match jsonwebtoken::crypto::verify(signature_b64, message.as_bytes(), &key.decoding, alg) {
            Ok(true) => {}
            _ => return Err(Refusal::BadSignature),
        }

        let claims_json = URL_SAFE_NO_PAD
            .decode(claims_b64)
            .map_err(|_| Refusal::Malformed)?;
        let claims: Map<String, Value> =
            serde_json::from_slice(&claims_json).map_err(|_| Refusal::Malformed)?;
        self.check_claims(&claims)
    }

    fn check_claims(&self, claims: &Map<String, Value>) -> Result<Identity, Refusal> {
        let settings = &self.inner.settings;
        if claims.get("iss").and_then(Value::as_str) != Some(settings.issuer.as_str()) {
            return Err(Refusal::WrongIssuer);
        }
        let audience_ok = match claims.get("aud") {
            Some(Value::String(aud)) => *aud == settings.resource,
            Some(Value::Array(auds)) => auds
                .iter()
                .any(|a| a.as_str() == Some(settings.resource.as_str())),
            _ => false,
        };
        if !audience_ok {
            return Err(Refusal::WrongAudience);
        }

        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let leeway = settings.leeway.as_secs_f64();
        let date = |name: &str| -> Result<Option<f64>, Refusal> {
            match claims.get(name) {
                None => Ok(None),
                Some(v) => v
                    .as_f64()
                    .filter(|d| d.is_finite())
                    .map(Some)
                    .ok_or(Refusal::Malformed),
            }
        };
        let exp = date("exp")?.ok_or(Refusal::Malformed)?;
        if now > exp + leeway {
            return Err(Refusal::Expired);
        }
        for name in ["nbf", "iat"] {
            if let Some(at) = date(name)? {
                if at > now + leeway {
                    return Err(Refusal::NotYetValid);
                }
            }
        }

        let subject = match claims.get("sub") {
            Some(Value::String(sub)) if !sub.is_empty() => sub.clone(),
            _ => return Err(Refusal::NoSubject),
        };
        let groups = match claims.get(&settings.groups_claim) {
            Some(Value::Array(groups)) => groups
                .iter()
                .filter_map(|g| g.as_str().map(str::to_string))
                .collect(),
            Some(Value::String(group)) => vec![group.clone()],
            _ => vec![],
        };
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect();
        let scopes = match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(scope)), _) => words(scope),
            (_, Some(Value::String(scp))) => words(scp),
            (_, Some(Value::Array(scp))) => scp
                .iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
            _ => vec![],
        };
        Ok(Identity {
            subject,
            groups,
            scopes,
            expires_at: exp.max(0.0) as u64,
        })
    }

    fn current_keys(&self) -> Arc<KeySet> {
        self.inner
            .keys
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The key for a token's `kid` and `alg`, fetching the JWKS again when
    /// the cached keys are too old or do not have it.
    async fn key_for(&self, kid: Option<&str>, alg: Algorithm) -> Result<Arc<Key>, Refusal> {
        let mut keys = self.current_keys();
        if keys.fetched.elapsed() > self.inner.key_refresh.max_age {
            // Only if no other fetch is under way: a request with a cached key
            // never waits for another one's fetch.
            if let Ok(state) = self.inner.refresh.try_lock() {
                keys = self.refresh_locked(state, &keys).await;
            }
        }
        match keys.lookup(kid, alg) {
            Lookup::Found(key) => return Ok(key),
            Lookup::Unfit => return Err(Refusal::AlgorithmRefused),
            Lookup::Ambiguous => return Err(Refusal::UnknownKey),
            Lookup::Missing => {}
        }
        let state = self.inner.refresh.lock().await;
        let keys = self.refresh_locked(state, &keys).await;
        match keys.lookup(kid, alg) {
            Lookup::Found(key) => Ok(key),
            Lookup::Unfit => Err(Refusal::AlgorithmRefused),
            Lookup::Ambiguous => Err(Refusal::UnknownKey),
            Lookup::Missing if self.inner.keys_failing.load(Ordering::Relaxed) => {
                Err(Refusal::KeysUnavailable)
            }
            Lookup::Missing => Err(Refusal::UnknownKey),
        }
    }

    /// Fetches the JWKS again, holding the refresh lock, unless another
    /// caller replaced `seen` while this one waited for the lock, or the
    /// last fetch was less than `min_interval` ago. Returns the keys to
    /// use. A failed fetch keeps the old keys.
    async fn refresh_locked(
        &self,
        mut state: tokio::sync::MutexGuard<'_, RefreshState>,
        seen: &Arc<KeySet>,
    ) -> Arc<KeySet> {
        let current = self.current_keys();
        let too_soon = state
            .last_attempt
            .is_some_and(|t| t.elapsed() < self.inner.key_refresh.min_interval);
        if !Arc::ptr_eq(&current, seen) || too_soon {
            return current;
        }
        state.last_attempt = Some(Instant::now());
        match fetch_keys(&self.inner.http, &self.inner.jwks_uri).await {
            Ok(fresh) => {
                let fresh = Arc::new(fresh);
                *self.inner.keys.write().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
                self.inner.keys_failing.store(false, Ordering::Relaxed);
                fresh
            }
            Err(_) => {
                self.inner.keys_failing.store(true, Ordering::Relaxed);
                current
            }
        }
    }
}

/// Where to look for the metadata, in order: OpenID Connect discovery
/// (appended to the issuer, then inserted after the host), then RFC 8414
/// (inserted, then appended). No duplicates.
fn metadata_urls(issuer: &str, parsed: &url::Url) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let path = parsed.path().trim_end_matches('/');
    let origin = parsed.origin().ascii_serialization();
    let mut urls = vec![format!("{trimmed}/.well-known/openid-configuration")];
    if !path.is_empty() {
        urls.push(format!("{origin}/.well-known/openid-configuration{path}"));
    }
    urls.push(format!(
        "{origin}/.well-known/oauth-authorization-server{path}"
    ));
    if !path.is_empty() {
        urls.push(format!("{trimmed}/.well-known/oauth-authorization-server"));
    }
    urls
}

/// GETs a JSON object, within the time and size limits. The error is a
/// short reason (HTTP status, too large, not JSON, …).
async fn fetch_json(http: &reqwest::Client, url: &str) -> Result<Value, String> {
    let mut response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(FETCH_TIMEOUT)
        .send()
        .await
        .map_err(|e| format!("request failed ({e})"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    if response
        .content_length()
        .is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64)
    {
        return Err("larger than 1 MiB".into());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("reading the response failed ({e})"))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err("larger than 1 MiB".into());
        }
        body.extend_from_slice(&chunk);
    }
    let doc: Value = serde_json::from_slice(&body).map_err(|_| "not JSON".to_string())?;
    if !doc.is_object() {
        return Err("not a JSON object".into());
    }
    Ok(doc)
}

async fn fetch_keys(http: &reqwest::Client, url: &str) -> Result<KeySet, String> {
    let doc = fetch_json(http, url).await?;
    let keys = doc
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("it has no \"keys\" array")?;
    let mut set = KeySet {
        by_kid: HashMap::new(),
        all: vec![],
        fetched: Instant::now(),
    };
    for jwk in keys {
        // Keys that are not for signatures, or of a kind not accepted here
        // (symmetric `oct` keys among them), are left out.
        let Some((kid, key)) = parse_jwk(jwk) else {
            continue;
        };
        let key = Arc::new(key);
        if let Some(kid) = kid {
            set.by_kid.entry(kid).or_default().push(key.clone());
        }
        set.all.push(key);
    }
    Ok(set)
}

/// One JWK as a verification key, or `None` if it cannot be one here.
fn parse_jwk(jwk: &Value) -> Option<(Option<String>, Key)> {
    let field = |name: &str| jwk.get(name).and_then(Value::as_str);
    if field("use").is_some_and(|u| u != "sig") {
        return None;
    }
    if let Some(ops) = jwk.get("key_ops") {
        let verify = ops
            .as_array()
            .is_some_and(|ops| ops.iter().any(|op| op.as_str() == Some("verify")));
        if !verify {
            return None;
        }
    }
    let alg = match jwk.get("alg") {
        None => None,
        // A key for an algorithm not accepted here is not used at all.
        Some(alg) => Some(accepted_algorithm(alg.as_str()?)?),
    };
    let b64_len = |s: &str| URL_SAFE_NO_PAD.decode(s).ok().map(|b| b.len());
    let (key_type, decoding) = match (field("kty")?, field("crv")) {
        ("RSA", _) => {
            let (n, e) = (field("n")?, field("e")?);
            // ring accepts 2048 to 8192 bits.
            if b64_len(n)? < 256 {
                return None;
            }
            (KeyType::Rsa, DecodingKey::from_rsa_components(n, e).ok()?)
        }
        ("EC", Some(crv @ ("P-256" | "P-384"))) => {
            let (x, y) = (field("x")?, field("y")?);
            let (key_type, size) = if crv == "P-256" {
                (KeyType::P256, 32)
            } else {
                (KeyType::P384, 48)
            };
            if b64_len(x)? != size || b64_len(y)? != size {
                return None;
            }
            (key_type, DecodingKey::from_ec_components(x, y).ok()?)
        }
        ("OKP", Some("Ed25519")) => {
            let x = field("x")?;
            if b64_len(x)? != 32 {
                return None;
            }
            (KeyType::Ed25519, DecodingKey::from_ed_components(x).ok()?)
        }
        _ => return None,
    };
    let key = Key {
        key_type,
        alg,
        decoding,
    };
    if alg.is_some_and(|a| !key_type.fits(a)) {
        return None;
    }
    Some((field("kid").map(str::to_string), key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_in_order() {
        let issuer = "https://id.example.com/tenant/";
        let parsed = url::Url::parse(issuer).unwrap();
        assert_eq!(
            metadata_urls(issuer, &parsed),
            [
                "https://id.example.com/tenant/.well-known/openid-configuration",
                "https://id.example.com/.well-known/openid-configuration/tenant",
                "https://id.example.com/.well-known/oauth-authorization-server/tenant",
                "https://id.example.com/tenant/.well-known/oauth-authorization-server",
            ]
        );
        let issuer = "https://id.example.com";
        let parsed = url::Url::parse(issuer).unwrap();
        assert_eq!(
            metadata_urls(issuer, &parsed),
            [
                "https://id.example.com/.well-known/openid-configuration",
                "https://id.example.com/.well-known/oauth-authorization-server",
            ]
        );
    }

    #[test]
    fn labels_are_snake_case_and_reasons_sentences() {
        use Refusal::*;
        for r in [
            Malformed,
            TooLarge,
            AlgorithmRefused,
            UnknownKey,
            BadSignature,
            Expired,
            NotYetValid,
            WrongIssuer,
            WrongAudience,
            NoSubject,
            KeysUnavailable,
        ] {
            assert!(r
                .label()
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_'));
            assert!(r.reason().ends_with('.'));
        }
    }

    #[test]
    fn jwk_alg_must_fit_its_key_type() {
        let n = URL_SAFE_NO_PAD.encode([0xc5u8; 256]);
        let rsa = |alg: &str| serde_json::json!({"kty": "RSA", "n": n, "e": "AQAB", "alg": alg});
        assert!(parse_jwk(&rsa("RS256")).is_some());
        assert!(parse_jwk(&rsa("ES256")).is_none());
        assert!(parse_jwk(&rsa("HS256")).is_none());
        assert!(parse_jwk(&serde_json::json!({"kty": "oct", "k": "c2VjcmV0"})).is_none());
        let mut enc = rsa("RS256");
        enc["use"] = "enc".into();
        assert!(parse_jwk(&enc).is_none());
    }
}
