//! A stand-in identity provider for team mode's tests: an in-memory OAuth 2.1
//! authorization server with OpenID Connect discovery that issues JWT access
//! tokens, as the gateway (`switchboard serve --oidc-issuer URL`) expects
//! from a real one (Keycloak, Entra ID, Okta, …).
//!
//! It serves, under its issuer URL:
//! - `/.well-known/openid-configuration` and, per RFC 8414,
//!   `/.well-known/oauth-authorization-server` (either can be turned off, and
//!   the issuer can have a path, to test the gateway's discovery);
//! - `/jwks`: the public signing keys (`kid`, `kty`, `alg`, `use: sig`);
//! - `/register`: RFC 7591 dynamic registration of public clients with
//!   loopback redirect URIs;
//! - `/authorize`: approves at once as the *current user* (no login page)
//!   and redirects with `code`, `state` and `iss`; PKCE S256 is required and
//!   `resource` (RFC 8707) and `scope` are remembered;
//! - `/token`: the `authorization_code` grant (checks the PKCE verifier,
//!   redirect URI and client) and the `refresh_token` grant (rotating the
//!   refresh token); the access token is a JWT signed with the current key:
//!   `iss`, `sub`, `aud` (the `resource` parameter, else
//!   [`IdpOptions::default_resource`]), `exp`, `iat`, `nbf`, `scope`,
//!   `groups`, `client_id`, `jti`.
//!
//! Tests steer it through [`Idp`]'s methods or, from other processes (the
//! `fixture-idp` binary for the Python tests), through `/_control/…` at the
//! server's root:
//! - `POST /_control/user` `{"sub": "bob", "groups": ["ops"]}`: who signs in;
//! - `POST /_control/rotate` `{"alg": "RS256" | "ES256" | "EdDSA",
//!   "keep_previous": true}` → `{"kid": …}`: a new current key, the old ones
//!   kept in the JWKS or dropped;
//! - `POST /_control/mint` `{"claims": {…}, "header": {…}, "signing": …}` →
//!   `{"token": …}`: any token (see [`Mint`] and [`Signing`]: the current
//!   key, a forged signature, `alg: none`, HS256 keyed with the public key,
//!   an unknown `kid`, no `kid`);
//! - `GET /_control/jwks_fetches` → `{"count": n}`: how often `/jwks` was read.
//!
//! For tests only: it approves everyone, keeps everything in memory, and the
//! first RSA key is generated once per process and shared by every stand-in
//! in it (RSA key generation takes about a second in a debug build; keys made
//! by a rotation to ES256 or EdDSA are instant). Nothing here is secure.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey};
use ring::signature::KeyPair as _;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// The user `/authorize` signs in as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub sub: String,
    pub groups: Vec<String>,
}

impl User {
    pub fn new(sub: &str, groups: &[&str]) -> Self {
        User {
            sub: sub.to_string(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    /// `sub:group1,group2` (the binary's `--user`); `sub` alone has no groups.
    pub fn parse(s: &str) -> Option<Self> {
        let (sub, groups) = s.split_once(':').unwrap_or((s, ""));
        (!sub.is_empty()).then(|| User {
            sub: sub.to_string(),
            groups: groups
                .split(',')
                .filter(|g| !g.is_empty())
                .map(str::to_string)
                .collect(),
        })
    }
}

/// The kind of a signing key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// RSA 2048, RS256. A new one takes about a second in a debug build.
    Rs256,
    /// P-256, ES256.
    Es256,
    /// Ed25519, EdDSA.
    EdDsa,
}

impl KeyKind {
    /// `RS256`, `ES256` or `EdDSA`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "RS256" => Some(KeyKind::Rs256),
            "ES256" => Some(KeyKind::Es256),
            "EdDSA" => Some(KeyKind::EdDsa),
            _ => None,
        }
    }
}

/// How the stand-in is set up.
#[derive(Debug, Clone)]
pub struct IdpOptions {
    /// Where to listen (default `127.0.0.1:0`).
    pub addr: SocketAddr,
    /// Who signs in at `/authorize` until [`Idp::set_user`].
    pub user: User,
    /// `aud` of tokens asked for without `resource`, and of minted tokens.
    pub default_resource: String,
    /// Access token lifetime.
    pub token_ttl: Duration,
    /// `scopes_supported` in the metadata; also the `scope` of minted tokens.
    pub scopes: Vec<String>,
    /// A path for the issuer (`/tenant`): the issuer is then
    /// `http://127.0.0.1:PORT/tenant` and the RFC 8414 metadata is at
    /// `/.well-known/oauth-authorization-server/tenant`.
    pub issuer_path: String,
    /// Serve `/.well-known/openid-configuration` (else 404, so a client
    /// must fall back to RFC 8414).
    pub openid_configuration: bool,
    /// Serve `/.well-known/oauth-authorization-server`.
    pub oauth_metadata: bool,
    /// The `issuer` the metadata claims, if not the real one (to test that
    /// a client refuses such metadata).
    pub metadata_issuer: Option<String>,
    /// The first signing key.
    pub first_key: KeyKind,
}

impl Default for IdpOptions {
    fn default() -> Self {
        IdpOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            user: User::new("alice", &["engineering"]),
            default_resource: "http://127.0.0.1/mcp".into(),
            token_ttl: Duration::from_secs(3600),
            scopes: vec!["openid".into(), "mcp".into()],
            issuer_path: String::new(),
            openid_configuration: true,
            oauth_metadata: true,
            metadata_issuer: None,
            first_key: KeyKind::Rs256,
        }
    }
}

/// How [`Idp::mint`] signs a token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Signing {
    /// The current key, with its `kid`: a genuine token.
    #[default]
    Current,
    /// A key of the same kind that is not in the JWKS, under the current
    /// key's `kid`: a forged signature.
    Foreign,
    /// `alg: none` and an empty signature.
    None,
    /// HS256 with the current key's public key as the HMAC secret (the PEM
    /// of an RSA key's SubjectPublicKeyInfo, else the raw public key): the
    /// algorithm-confusion attack.
    Hs256WithPublicKey,
    /// The current key, under a random `kid` the JWKS does not have.
    UnknownKid,
    /// The current key, without a `kid` in the header.
    NoKid,
}

impl Signing {
    /// `current`, `foreign`, `none`, `hs256`, `unknown_kid`, `no_kid`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "current" => Signing::Current,
            "foreign" => Signing::Foreign,
            "none" => Signing::None,
            "hs256" => Signing::Hs256WithPublicKey,
            "unknown_kid" => Signing::UnknownKid,
            "no_kid" => Signing::NoKid,
            _ => return Option::None,
        })
    }
}

/// A token to mint: the claims `/token` would issue for the current user
/// and the default resource, changed by `claims` (a `null` value removes the
/// claim), with the header changed by `header` likewise, signed per `signing`.
#[derive(Debug, Clone, Default)]
pub struct Mint {
    pub claims: Map<String, Value>,
    pub header: Map<String, Value>,
    pub signing: Signing,
}

impl Mint {
    pub fn new() -> Self {
        Mint::default()
    }

    /// Sets (or overrides) a claim.
    pub fn claim(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.claims.insert(name.to_string(), value.into());
        self
    }

    /// Removes a claim.
    pub fn without(self, name: &str) -> Self {
        self.claim(name, Value::Null)
    }

    /// Sets (or, with `null`, removes) a header field after signing chose it.
    pub fn header(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.header.insert(name.to_string(), value.into());
        self
    }

    pub fn signed(mut self, signing: Signing) -> Self {
        self.signing = signing;
        self
    }

    /// From `/_control/mint`'s body: `{"claims": {…}, "header": {…},
    /// "signing": "current"}`, each optional.
    pub fn from_json(body: &Value) -> Result<Self, String> {
        let object = |name: &str| match body.get(name) {
            None => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m.clone()),
            Some(_) => Err(format!("\"{name}\" must be an object")),
        };
        let signing = match body.get("signing") {
            None => Signing::Current,
            Some(s) => s.as_str().and_then(Signing::parse).ok_or(
                "\"signing\" must be one of current, foreign, none, hs256, unknown_kid, no_kid",
            )?,
        };
        Ok(Mint {
            claims: object("claims")?,
            header: object("header")?,
            signing,
        })
    }
}

/// A running stand-in. Dropping it stops the server: it stops accepting,
/// and its open connections close once idle (so a client's pooled
/// keep-alive connection does not keep reaching it).
pub struct Idp {
    /// The issuer URL (the server's root plus [`IdpOptions::issuer_path`]).
    pub url: String,
    /// The server's root URL, where `/_control/…` is.
    pub base: String,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Idp {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Idp {
    /// Starts a stand-in with the default options on 127.0.0.1 (a free port).
    pub async fn start() -> Idp {
        Self::start_with(IdpOptions::default()).await
    }

    pub async fn start_with(options: IdpOptions) -> Idp {
        Self::try_start(options)
            .await
            .expect("start the stand-in IdP")
    }

    pub async fn try_start(options: IdpOptions) -> anyhow::Result<Idp> {
        // The foreign RSA key, only needed by forged RS256 tokens, is made
        // meanwhile on another thread.
        std::thread::spawn(|| {
            foreign_rsa();
        });
        let first = new_key(options.first_key, true).await;
        let listener = tokio::net::TcpListener::bind(options.addr).await?;
        let base = format!("http://{}", listener.local_addr()?);
        let path = options.issuer_path.trim_end_matches('/').to_string();
        if !path.is_empty() && !path.starts_with('/') {
            anyhow::bail!("issuer_path must start with '/': {path:?}");
        }
        let url = format!("{base}{path}");
        let shared = Arc::new(Shared {
            issuer: url.clone(),
            options: options.clone(),
            jwks_fetches: AtomicU64::new(0),
            state: Mutex::new(IdpState {
                user: options.user.clone(),
                keys: vec![first],
                clients: HashMap::new(),
                codes: HashMap::new(),
                refresh_tokens: HashMap::new(),
            }),
        });
        let router = router(&path, &options, shared.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Idp {
            url,
            base,
            shared,
            stop: Some(stop),
        })
    }

    /// Who signs in at `/authorize` from now on.
    pub fn set_user(&self, sub: &str, groups: &[&str]) {
        self.shared.lock().user = User::new(sub, groups);
    }

    /// A new current signing key of `kind`; the previous keys stay in the
    /// JWKS if `keep_previous`, else are dropped. Returns the new `kid`.
    pub async fn rotate(&self, kind: KeyKind, keep_previous: bool) -> String {
        let key = new_key(kind, false).await;
        let kid = key.kid.clone();
        let mut state = self.shared.lock();
        if !keep_previous {
            state.keys.clear();
        }
        state.keys.push(key);
        kid
    }

    /// The current key's `kid`.
    pub fn kid(&self) -> String {
        self.shared.lock().keys.last().unwrap().kid.clone()
    }

    /// A token (see [`Mint`]).
    pub fn mint(&self, mint: Mint) -> String {
        self.shared.mint(&mint)
    }

    /// How many times `/jwks` was read.
    pub fn jwks_fetches(&self) -> u64 {
        self.shared.jwks_fetches.load(Ordering::SeqCst)
    }
}

struct Shared {
    issuer: String,
    options: IdpOptions,
    jwks_fetches: AtomicU64,
    state: Mutex<IdpState>,
}

struct IdpState {
    user: User,
    /// The JWKS; the last is the current key.
    keys: Vec<SigningKey>,
    /// client_id → redirect URIs.
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, Code>,
    refresh_tokens: HashMap<String, Grant>,
}

/// What an authorization code or refresh token stands for.
#[derive(Clone)]
struct Grant {
    client_id: String,
    user: User,
    resource: Option<String>,
    scope: Option<String>,
}

struct Code {
    grant: Grant,
    redirect_uri: String,
    challenge: String,
    expires: Instant,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, IdpState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The claims `/token` issues for `grant`.
    fn claims(&self, grant: &Grant) -> Map<String, Value> {
        let now = unix_now();
        let scope = grant
            .scope
            .clone()
            .unwrap_or_else(|| self.options.scopes.join(" "));
        let aud = grant
            .resource
            .clone()
            .unwrap_or_else(|| self.options.default_resource.clone());
        let claims = json!({
            "iss": self.issuer,
            "sub": grant.user.sub,
            "aud": aud,
            "iat": now,
            "nbf": now,
            "exp": now + self.options.token_ttl.as_secs(),
            "scope": scope,
            "groups": grant.user.groups,
            "client_id": grant.client_id,
            "jti": random_token(16),
        });
        match claims {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn mint(&self, mint: &Mint) -> String {
        let (user, key) = {
            let state = self.lock();
            (state.user.clone(), state.keys.last().unwrap().clone())
        };
        let grant = Grant {
            client_id: "fixture-idp-minted".into(),
            user,
            resource: None,
            scope: None,
        };
        let mut claims = self.claims(&grant);
        apply(&mut claims, &mint.claims);

        let mut header = Map::new();
        header.insert("typ".into(), "at+jwt".into());
        let alg_name = match mint.signing {
            Signing::None => "none",
            Signing::Hs256WithPublicKey => "HS256",
            _ => key.alg_name(),
        };
        header.insert("alg".into(), alg_name.into());
        match mint.signing {
            Signing::NoKid | Signing::None => {}
            Signing::UnknownKid => {
                header.insert("kid".into(), random_token(12).into());
            }
            _ => {
                header.insert("kid".into(), key.kid.clone().into());
            }
        }
        apply(&mut header, &mint.header);

        let message = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(Value::Object(header).to_string()),
            URL_SAFE_NO_PAD.encode(Value::Object(claims).to_string())
        );
        let signature = match mint.signing {
            Signing::None => String::new(),
            Signing::Hs256WithPublicKey => jsonwebtoken::crypto::sign(
                message.as_bytes(),
                &EncodingKey::from_secret(&key.public_secret),
                Algorithm::HS256,
            )
            .unwrap(),
            Signing::Foreign => {
                let foreign = match key.alg {
                    Algorithm::RS256 => foreign_rsa().signing_key(&key.kid),
                    Algorithm::ES256 => make_es256(&key.kid),
                    _ => make_eddsa(&key.kid),
                };
                foreign.sign(&message)
            }
            _ => key.sign(&message),
        };
        format!("{message}.{signature}")
    }

    fn jwks(&self) -> Value {
        let keys: Vec<Value> = self.lock().keys.iter().map(|k| k.jwk.clone()).collect();
        json!({ "keys": keys })
    }

    fn metadata(&self) -> Value {
        let issuer = &self.issuer;
        json!({
            "issuer": self.options.metadata_issuer.as_deref().unwrap_or(issuer),
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "registration_endpoint": format!("{issuer}/register"),
            "jwks_uri": format!("{issuer}/jwks"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": self.options.scopes,
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "authorization_response_iss_parameter_supported": true,
        })
    }
}

/// Sets `changes` into `map`; a `null` removes.
fn apply(map: &mut Map<String, Value>, changes: &Map<String, Value>) {
    for (name, value) in changes {
        if value.is_null() {
            map.remove(name);
        } else {
            map.insert(name.clone(), value.clone());
        }
    }
}

#[derive(Clone)]
struct SigningKey {
    kid: String,
    alg: Algorithm,
    encoding: EncodingKey,
    /// The public JWK.
    jwk: Value,
    /// The HMAC secret of [`Signing::Hs256WithPublicKey`].
    public_secret: Vec<u8>,
}

impl SigningKey {
    fn alg_name(&self) -> &'static str {
        match self.alg {
            Algorithm::RS256 => "RS256",
            Algorithm::ES256 => "ES256",
            _ => "EdDSA",
        }
    }

    fn sign(&self, message: &str) -> String {
        jsonwebtoken::crypto::sign(message.as_bytes(), &self.encoding, self.alg).unwrap()
    }
}

/// An RSA key pair: the private key as PKCS#1 DER, the public parts.
struct RsaMaterial {
    pkcs1_der: Vec<u8>,
    n: Vec<u8>,
    e: Vec<u8>,
    spki_pem: String,
}

impl RsaMaterial {
    fn generate() -> Self {
        use rsa::pkcs1::EncodeRsaPrivateKey as _;
        use rsa::pkcs8::EncodePublicKey as _;
        use rsa::traits::PublicKeyParts as _;
        let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("RSA key");
        let spki = key.to_public_key().to_public_key_der().expect("SPKI");
        let body = STANDARD.encode(spki.as_bytes());
        let mut spki_pem = String::from("-----BEGIN PUBLIC KEY-----\n");
        for line in body.as_bytes().chunks(64) {
            spki_pem.push_str(std::str::from_utf8(line).unwrap());
            spki_pem.push('\n');
        }
        spki_pem.push_str("-----END PUBLIC KEY-----\n");
        RsaMaterial {
            pkcs1_der: key.to_pkcs1_der().expect("PKCS#1").as_bytes().to_vec(),
            n: key.n().to_bytes_be(),
            e: key.e().to_bytes_be(),
            spki_pem,
        }
    }

    fn signing_key(&self, kid: &str) -> SigningKey {
        SigningKey {
            kid: kid.to_string(),
            alg: Algorithm::RS256,
            encoding: EncodingKey::from_rsa_der(&self.pkcs1_der),
            jwk: json!({
                "kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
                "n": URL_SAFE_NO_PAD.encode(&self.n), "e": URL_SAFE_NO_PAD.encode(&self.e),
            }),
            public_secret: self.spki_pem.as_bytes().to_vec(),
        }
    }
}

/// The first RSA key of every stand-in in this process (made once).
fn shared_rsa() -> &'static RsaMaterial {
    static KEY: OnceLock<RsaMaterial> = OnceLock::new();
    KEY.get_or_init(RsaMaterial::generate)
}

/// The RSA key that forges signatures; never in any JWKS.
fn foreign_rsa() -> &'static RsaMaterial {
    static KEY: OnceLock<RsaMaterial> = OnceLock::new();
    KEY.get_or_init(RsaMaterial::generate)
}

/// A new key of `kind` with a random `kid`; `first` uses the shared RSA key.
async fn new_key(kind: KeyKind, first: bool) -> SigningKey {
    let kid = random_token(9);
    match kind {
        KeyKind::Rs256 => tokio::task::spawn_blocking(move || {
            if first {
                shared_rsa().signing_key(&kid)
            } else {
                RsaMaterial::generate().signing_key(&kid)
            }
        })
        .await
        .expect("RSA key generation"),
        KeyKind::Es256 => make_es256(&kid),
        KeyKind::EdDsa => make_eddsa(&kid),
    }
}

fn make_es256(kid: &str) -> SigningKey {
    let rng = ring::rand::SystemRandom::new();
    let alg = &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = ring::signature::EcdsaKeyPair::generate_pkcs8(alg, &rng).expect("P-256 key");
    let pair = ring::signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap();
    // Uncompressed point: 0x04 ‖ x ‖ y.
    let point = pair.public_key().as_ref().to_vec();
    SigningKey {
        kid: kid.to_string(),
        alg: Algorithm::ES256,
        encoding: EncodingKey::from_ec_der(pkcs8.as_ref()),
        jwk: json!({
            "kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        }),
        public_secret: point,
    }
}

fn make_eddsa(kid: &str) -> SigningKey {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).expect("Ed25519 key");
    let pair = ring::signature::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let public = pair.public_key().as_ref().to_vec();
    SigningKey {
        kid: kid.to_string(),
        alg: Algorithm::EdDSA,
        encoding: EncodingKey::from_ed_der(pkcs8.as_ref()),
        jwk: json!({
            "kty": "OKP", "crv": "Ed25519", "kid": kid, "alg": "EdDSA", "use": "sig",
            "x": URL_SAFE_NO_PAD.encode(&public),
        }),
        public_secret: public,
    }
}

fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("random bytes");
    URL_SAFE_NO_PAD.encode(buf)
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

fn router(path: &str, options: &IdpOptions, shared: Arc<Shared>) -> Router {
    let mut router = Router::new()
        .route(&format!("{path}/jwks"), get(jwks))
        .route(&format!("{path}/register"), post(register))
        .route(&format!("{path}/authorize"), get(authorize))
        .route(&format!("{path}/token"), post(token))
        .route("/_control/user", post(control_user))
        .route("/_control/rotate", post(control_rotate))
        .route("/_control/mint", post(control_mint))
        .route("/_control/jwks_fetches", get(control_jwks_fetches));
    let mut metadata_paths = vec![];
    if options.openid_configuration {
        metadata_paths.push(format!("{path}/.well-known/openid-configuration"));
        if !path.is_empty() {
            metadata_paths.push(format!("/.well-known/openid-configuration{path}"));
        }
    }
    if options.oauth_metadata {
        metadata_paths.push(format!("/.well-known/oauth-authorization-server{path}"));
    }
    for p in metadata_paths {
        router = router.route(&p, get(metadata));
    }
    router.with_state(shared)
}

type St = State<Arc<Shared>>;

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        Json(json!({ "error": error, "error_description": description })),
    )
        .into_response()
}

async fn metadata(State(shared): St) -> Json<Value> {
    Json(shared.metadata())
}

async fn jwks(State(shared): St) -> Json<Value> {
    shared.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    Json(shared.jwks())
}

fn is_loopback_redirect(uri: &str) -> bool {
    url::Url::parse(uri).is_ok_and(|u| {
        u.scheme() == "http" && matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"))
    })
}

/// Equal, or both loopback and equal but for the port (RFC 8252 §7.3).
fn redirect_matches(registered: &str, given: &str) -> bool {
    if registered == given {
        return true;
    }
    match (url::Url::parse(registered), url::Url::parse(given)) {
        (Ok(mut a), Ok(mut b)) if is_loopback_redirect(registered) => {
            let _ = a.set_port(None);
            let _ = b.set_port(None);
            a == b
        }
        _ => false,
    }
}

async fn register(State(shared): St, body: Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "the body is not JSON",
        );
    };
    let redirect_uris: Vec<String> = request
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|u| u.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if redirect_uris.is_empty() || !redirect_uris.iter().all(|u| is_loopback_redirect(u)) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_redirect_uri",
            "redirect_uris must be http loopback URLs",
        );
    }
    let client_id = format!("client-{}", random_token(12));
    shared
        .lock()
        .clients
        .insert(client_id.clone(), redirect_uris.clone());
    let mut answer = json!({
        "client_id": client_id,
        "client_id_issued_at": unix_now(),
        "redirect_uris": redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    if let Some(name) = request.get("client_name") {
        answer["client_name"] = name.clone();
    }
    (StatusCode::CREATED, Json(answer)).into_response()
}

fn form(bytes: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(bytes).into_owned().collect()
}

async fn authorize(State(shared): St, RawQuery(query): RawQuery) -> Response {
    let q = form(query.unwrap_or_default().as_bytes());
    let get = |k: &str| q.get(k).map(String::as_str);
    let (Some(client_id), Some(redirect_uri)) = (get("client_id"), get("redirect_uri")) else {
        return (
            StatusCode::BAD_REQUEST,
            "client_id and redirect_uri are required",
        )
            .into_response();
    };
    let mut state = shared.lock();
    let known = state
        .clients
        .get(client_id)
        .is_some_and(|uris| uris.iter().any(|r| redirect_matches(r, redirect_uri)));
    if !known {
        return (StatusCode::BAD_REQUEST, "unknown client_id or redirect_uri").into_response();
    }
    let Ok(mut to) = url::Url::parse(redirect_uri) else {
        return (StatusCode::BAD_REQUEST, "bad redirect_uri").into_response();
    };
    let error = if get("response_type") != Some("code") {
        Some("unsupported_response_type")
    } else if get("code_challenge").is_none() || get("code_challenge_method") != Some("S256") {
        Some("invalid_request")
    } else {
        None
    };
    {
        let mut pairs = to.query_pairs_mut();
        match error {
            Some(error) => {
                pairs.append_pair("error", error);
            }
            None => {
                let code = random_token(24);
                let grant = Grant {
                    client_id: client_id.to_string(),
                    user: state.user.clone(),
                    resource: get("resource").map(str::to_string),
                    scope: get("scope").map(str::to_string),
                };
                state.codes.insert(
                    code.clone(),
                    Code {
                        grant,
                        redirect_uri: redirect_uri.to_string(),
                        challenge: get("code_challenge").unwrap().to_string(),
                        expires: Instant::now() + Duration::from_secs(300),
                    },
                );
                pairs.append_pair("code", &code);
            }
        }
        if let Some(s) = get("state") {
            pairs.append_pair("state", s);
        }
        pairs.append_pair("iss", &shared.issuer);
    }
    (StatusCode::FOUND, [(header::LOCATION, to.to_string())]).into_response()
}

async fn token(State(shared): St, body: Bytes) -> Response {
    let f = form(&body);
    let get = |k: &str| f.get(k).map(String::as_str);
    let bad = |e: &str, d: &str| oauth_error(StatusCode::BAD_REQUEST, e, d);
    let mut state = shared.lock();
    let grant = match get("grant_type") {
        Some("authorization_code") => {
            let Some(code) = get("code").and_then(|c| state.codes.remove(c)) else {
                return bad("invalid_grant", "unknown or used code");
            };
            let verifier = get("code_verifier").unwrap_or_default();
            let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
            if code.expires < Instant::now() {
                return bad("invalid_grant", "the code has expired");
            }
            if get("client_id") != Some(code.grant.client_id.as_str()) {
                return bad("invalid_grant", "the code was issued to another client");
            }
            if get("redirect_uri") != Some(code.redirect_uri.as_str()) {
                return bad("invalid_grant", "redirect_uri differs from /authorize's");
            }
            if !(43..=128).contains(&verifier.len()) || challenge != code.challenge {
                return bad("invalid_grant", "the PKCE code_verifier does not match");
            }
            code.grant
        }
        Some("refresh_token") => {
            let Some(grant) = get("refresh_token").and_then(|t| state.refresh_tokens.remove(t))
            else {
                return bad("invalid_grant", "unknown or used refresh token");
            };
            if get("client_id") != Some(grant.client_id.as_str()) {
                return bad(
                    "invalid_grant",
                    "the refresh token was issued to another client",
                );
            }
            grant
        }
        _ => {
            return bad(
                "unsupported_grant_type",
                "authorization_code or refresh_token",
            )
        }
    };
    let mut grant = grant;
    if let Some(resource) = get("resource") {
        if grant.resource.as_deref().is_some_and(|r| r != resource) {
            return bad("invalid_target", "resource differs from the one authorized");
        }
        grant.resource = Some(resource.to_string());
    }
    if let Some(scope) = get("scope") {
        grant.scope = Some(scope.to_string());
    }
    let key = state.keys.last().unwrap().clone();
    let refresh = random_token(24);
    state.refresh_tokens.insert(refresh.clone(), grant.clone());
    drop(state);

    let claims = shared.claims(&grant);
    let scope = claims["scope"].clone();
    let header = json!({ "alg": key.alg_name(), "typ": "at+jwt", "kid": key.kid });
    let message = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(Value::Object(claims).to_string())
    );
    let access_token = format!("{message}.{}", key.sign(&message));
    let mut answer = Response::new(
        json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": shared.options.token_ttl.as_secs(),
            "refresh_token": refresh,
            "scope": scope,
        })
        .to_string()
        .into(),
    );
    let headers = answer.headers_mut();
    headers.insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
    headers.insert(header::CACHE_CONTROL, "no-store".parse().unwrap());
    answer
}

async fn control_user(State(shared): St, Json(body): Json<Value>) -> Response {
    let Some(sub) = body.get("sub").and_then(Value::as_str) else {
        return (StatusCode::BAD_REQUEST, "\"sub\" is required").into_response();
    };
    let groups = body
        .get("groups")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|g| g.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    shared.lock().user = User {
        sub: sub.to_string(),
        groups,
    };
    StatusCode::NO_CONTENT.into_response()
}

async fn control_rotate(State(shared): St, Json(body): Json<Value>) -> Response {
    let alg = body.get("alg").and_then(Value::as_str).unwrap_or("RS256");
    let Some(kind) = KeyKind::parse(alg) else {
        return (
            StatusCode::BAD_REQUEST,
            "\"alg\" must be RS256, ES256 or EdDSA",
        )
            .into_response();
    };
    let keep = body
        .get("keep_previous")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let key = new_key(kind, false).await;
    let kid = key.kid.clone();
    let mut state = shared.lock();
    if !keep {
        state.keys.clear();
    }
    state.keys.push(key);
    Json(json!({ "kid": kid })).into_response()
}

async fn control_mint(State(shared): St, Json(body): Json<Value>) -> Response {
    match Mint::from_json(&body) {
        Ok(mint) => {
            let shared = shared.clone();
            // A forged RS256 token may wait for the foreign key's generation.
            let token = tokio::task::spawn_blocking(move || shared.mint(&mint))
                .await
                .expect("mint");
            Json(json!({ "token": token })).into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, e).into_response(),
    }
}

async fn control_jwks_fetches(State(shared): St) -> Json<Value> {
    Json(json!({ "count": shared.jwks_fetches.load(Ordering::SeqCst) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_parse() {
        assert_eq!(
            User::parse("bob:ops,dev"),
            Some(User::new("bob", &["ops", "dev"]))
        );
        assert_eq!(User::parse("bob"), Some(User::new("bob", &[])));
        assert_eq!(User::parse(":ops"), None);
    }

    #[test]
    fn loopback_redirects_match_on_any_port() {
        assert!(redirect_matches(
            "http://127.0.0.1/callback",
            "http://127.0.0.1:5555/callback"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1/callback",
            "http://127.0.0.1:5555/other"
        ));
        assert!(!is_loopback_redirect("https://evil.example/callback"));
    }
}
