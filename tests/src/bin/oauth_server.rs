//! `oauth-server`: a test OAuth 2.1 authorization server and an MCP server
//! (Streamable HTTP at `/mcp`) that requires its access tokens, on one port.
//!
//! For Switchboard's sign-in tests: protected resource metadata (RFC 9728),
//! authorization server metadata (RFC 8414), dynamic client registration
//! (RFC 7591), authorization code + PKCE S256 with an auto-approving
//! `/authorize` (302 straight back to the redirect URI with `code`, `state`
//! and RFC 9207 `iss`), refresh token rotation, resource indicators
//! (RFC 8707), and a `/_control/` API for tests. See tests/README.md.
//!
//! Everything is in memory; nothing here is meant to be secure beyond
//! unguessable random tokens.

use std::{
    collections::{HashMap, HashSet},
    io::Write as _,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use anyhow::Context as _;
use axum::{
    body::Bytes,
    extract::{RawQuery, Request, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use base64::{
    engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD},
    Engine as _,
};
use clap::Parser;
use rmcp::{
    model::*,
    service::RequestContext,
    transport::streamable_http_server::{
        session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
    },
    ErrorData as McpError, RoleServer, ServerHandler,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Test OAuth 2.1 authorization server + MCP server requiring its bearer tokens.
#[derive(Parser, Debug, Clone)]
#[command(name = "oauth-server", version)]
struct Args {
    /// Address to listen on. Prints `LISTENING http://HOST:PORT/mcp` first on stdout.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: String,
    /// Access token lifetime in seconds (`expires_in`).
    #[arg(long, default_value_t = 3600)]
    token_ttl: u64,
    /// No dynamic client registration: metadata omits `registration_endpoint`,
    /// `POST /register` is 404.
    #[arg(long)]
    no_registration: bool,
    /// No discovery: every `/.well-known/...` metadata document and the OAuth
    /// endpoints (`/authorize`, `/token`, `/register`) are 404; `/mcp` still
    /// answers 401 (challenge without `resource_metadata`).
    #[arg(long)]
    no_metadata: bool,
    /// `/authorize` and `/token` reject requests without `resource` (RFC 8707).
    #[arg(long)]
    require_resource: bool,
    /// A pre-registered public client `ID=REDIRECT_URI` (repeatable).
    #[arg(long = "client", value_name = "ID=REDIRECT_URI")]
    clients: Vec<String>,
    /// Make a `--client` confidential: `ID=SECRET` (its token requests must
    /// authenticate with that secret).
    #[arg(long = "client-secret", value_name = "ID=SECRET")]
    client_secrets: Vec<String>,
    /// Dynamic registration always issues a client secret
    /// (`client_secret_basic`), even when the client asks for `none`, as
    /// some providers do: the client must keep it for its token requests.
    #[arg(long)]
    dcr_confidential: bool,
    /// Advertise this `authorization_endpoint` instead of `BASE/authorize`
    /// (a hostile server: `file:///etc/passwd`, `myapp://x`, ...).
    #[arg(long, value_name = "URL")]
    authorization_endpoint: Option<String>,
}

const SCOPE: &str = "mcp";
const CODE_TTL: Duration = Duration::from_secs(60);

struct Client {
    redirect_uris: Vec<String>,
    secret: Option<String>,
}

struct CodeGrant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    scope: String,
    resource: Option<String>,
    expires: Instant,
}

struct AccessGrant {
    client_id: String,
    scope: String,
    resource: String,
    expires: Instant,
}

struct RefreshGrant {
    client_id: String,
    scope: String,
    resource: String,
}

#[derive(Default)]
struct Inner {
    clients: HashMap<String, Client>,
    codes: HashMap<String, CodeGrant>,
    access: HashMap<String, AccessGrant>,
    refresh: HashMap<String, RefreshGrant>,
    reject_refresh: bool,
    /// `/_control/token-outage`: token requests lose their connection.
    token_outage: bool,
    deny: bool,
    last_authorize: Value,
    last_token: Value,
}

#[derive(Default)]
struct Stats {
    registrations: AtomicU64,
    authorizations: AtomicU64,
    code_exchanges: AtomicU64,
    refreshes: AtomicU64,
    refreshes_rejected: AtomicU64,
    token_errors: AtomicU64,
    token_outage_hits: AtomicU64,
    mcp_requests_authorized: AtomicU64,
    mcp_requests_rejected: AtomicU64,
}

struct AppState {
    args: Args,
    /// `http://127.0.0.1:PORT` (no trailing slash).
    issuer: String,
    /// `http://127.0.0.1:PORT/mcp`.
    resource: String,
    /// `http://127.0.0.1:PORT/.well-known/oauth-protected-resource/mcp`.
    resource_metadata_url: String,
    inner: Mutex<Inner>,
    stats: Stats,
}

type St = Arc<AppState>;

/// Who the bearer token on an `/mcp` request belongs to (an HTTP request extension).
#[derive(Clone, Debug)]
struct TokenInfo {
    client_id: String,
    scope: String,
}

fn random_token(prefix: &str) -> String {
    let mut buf = [0u8; 32];
    getrandom::fill(&mut buf).expect("OS random number generator");
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(buf))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Parse a form / query string; a repeated parameter is an error (RFC 6749 §3.1, §3.2).
fn parse_form(raw: &[u8]) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(raw) {
        if out.insert(k.to_string(), v.to_string()).is_some() {
            return Err(format!("parameter {k} repeated"));
        }
    }
    Ok(out)
}

fn no_store(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    resp
}

fn bad_request(msg: impl Into<String>) -> Response {
    (StatusCode::BAD_REQUEST, msg.into()).into_response()
}

fn oauth_error(status: StatusCode, error: &str, description: impl Into<String>) -> Response {
    no_store(
        (
            status,
            Json(json!({ "error": error, "error_description": description.into() })),
        )
            .into_response(),
    )
}

fn granted_scope(requested: Option<&str>) -> String {
    // Unknown scopes are ignored (RFC 6749 §3.3 lets the server grant less); the
    // grant is always the one scope this server knows.
    let _ = requested;
    SCOPE.to_string()
}

// ---------------------------------------------------------------- metadata

async fn protected_resource_metadata(State(st): State<St>) -> Response {
    Json(json!({
        "resource": st.resource,
        "authorization_servers": [st.issuer],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "Switchboard OAuth test server",
    }))
    .into_response()
}

async fn authorization_server_metadata(State(st): State<St>) -> Response {
    let mut m = json!({
        "issuer": st.issuer,
        "authorization_endpoint": st.args.authorization_endpoint.clone().unwrap_or_else(|| format!("{}/authorize", st.issuer)),
        "token_endpoint": format!("{}/token", st.issuer),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "scopes_supported": [SCOPE],
        "authorization_response_iss_parameter_supported": true,
    });
    if !st.args.no_registration {
        m["registration_endpoint"] = json!(format!("{}/register", st.issuer));
    }
    Json(m).into_response()
}

// ---------------------------------------------------------------- registration

async fn register(State(st): State<St>, body: Bytes) -> Response {
    let meta: Value = match serde_json::from_slice(&body) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                "body must be a JSON object",
            )
        }
    };
    let uris: Vec<String> = match meta.get("redirect_uris").and_then(Value::as_array) {
        Some(a) if !a.is_empty() => {
            let mut uris = Vec::new();
            for u in a {
                let Some(s) = u.as_str() else {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_redirect_uri",
                        "redirect_uris must be strings",
                    );
                };
                match url::Url::parse(s) {
                    Ok(parsed) if parsed.fragment().is_none() => uris.push(s.to_string()),
                    _ => {
                        return oauth_error(
                            StatusCode::BAD_REQUEST,
                            "invalid_redirect_uri",
                            format!("not an absolute URI without fragment: {s}"),
                        )
                    }
                }
            }
            uris
        }
        _ => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_redirect_uri",
                "redirect_uris (non-empty array) is required",
            )
        }
    };
    // RFC 7591 §2: the default is client_secret_basic.
    let method = meta
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("client_secret_basic")
        .to_string();
    if !["none", "client_secret_post", "client_secret_basic"].contains(&method.as_str()) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            format!("unsupported token_endpoint_auth_method {method}"),
        );
    }
    let client_id = random_token("client-");
    let method = if st.args.dcr_confidential && method == "none" {
        "client_secret_basic".to_string()
    } else {
        method
    };
    let secret = (method != "none").then(|| random_token("secret-"));
    let mut resp = meta.clone();
    resp["client_id"] = json!(client_id);
    resp["client_id_issued_at"] = json!(now_secs());
    resp["token_endpoint_auth_method"] = json!(method);
    resp["redirect_uris"] = json!(uris);
    if let Some(s) = &secret {
        resp["client_secret"] = json!(s);
        resp["client_secret_expires_at"] = json!(0);
    }
    st.inner.lock().unwrap().clients.insert(
        client_id,
        Client {
            redirect_uris: uris,
            secret,
        },
    );
    st.stats.registrations.fetch_add(1, Ordering::SeqCst);
    no_store((StatusCode::CREATED, Json(resp)).into_response())
}

// ---------------------------------------------------------------- authorize

async fn authorize(State(st): State<St>, RawQuery(query): RawQuery) -> Response {
    let q = match parse_form(query.unwrap_or_default().as_bytes()) {
        Ok(q) => q,
        Err(e) => return bad_request(e),
    };
    let get = |k: &str| q.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let Some(client_id) = get("client_id") else {
        return bad_request("missing client_id");
    };
    let Some(redirect_uri) = get("redirect_uri") else {
        return bad_request("missing redirect_uri");
    };
    {
        let inner = st.inner.lock().unwrap();
        let Some(client) = inner.clients.get(client_id) else {
            return bad_request(format!("unknown client_id {client_id}"));
        };
        if !client.redirect_uris.iter().any(|u| u == redirect_uri) {
            return bad_request(format!(
                "redirect_uri {redirect_uri} is not registered for this client"
            ));
        }
    }
    if get("response_type") != Some("code") {
        return bad_request("response_type must be code");
    }
    let Some(state) = get("state") else {
        return bad_request("missing state");
    };
    let Some(challenge) = get("code_challenge") else {
        return bad_request("missing code_challenge (PKCE is required)");
    };
    if !(43..=128).contains(&challenge.len())
        || !challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
    {
        return bad_request("malformed code_challenge");
    }
    if get("code_challenge_method") != Some("S256") {
        return bad_request("code_challenge_method must be S256");
    }
    let resource = get("resource");
    match resource {
        Some(r) if r != st.resource => {
            return bad_request(format!("invalid_target: resource must be {}", st.resource))
        }
        None if st.args.require_resource => return bad_request("missing resource"),
        _ => {}
    }
    let scope = granted_scope(get("scope"));

    let mut url = match url::Url::parse(redirect_uri) {
        Ok(u) => u,
        Err(_) => return bad_request("redirect_uri is not a URL"),
    };
    let mut inner = st.inner.lock().unwrap();
    inner.last_authorize = json!({
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": get("scope"),
        "resource": resource,
        "denied": inner.deny,
    });
    if inner.deny {
        url.query_pairs_mut()
            .append_pair("error", "access_denied")
            .append_pair(
                "error_description",
                "denied by /_control/deny-authorization",
            )
            .append_pair("state", state)
            .append_pair("iss", &st.issuer);
    } else {
        let code = random_token("code-");
        inner.codes.insert(
            code.clone(),
            CodeGrant {
                client_id: client_id.to_string(),
                redirect_uri: redirect_uri.to_string(),
                challenge: challenge.to_string(),
                scope,
                resource: resource.map(str::to_string),
                expires: Instant::now() + CODE_TTL,
            },
        );
        st.stats.authorizations.fetch_add(1, Ordering::SeqCst);
        url.query_pairs_mut()
            .append_pair("code", &code)
            .append_pair("state", state)
            .append_pair("iss", &st.issuer);
    }
    drop(inner);
    no_store((StatusCode::FOUND, [(header::LOCATION, url.to_string())]).into_response())
}

// ---------------------------------------------------------------- token

/// Decode `Authorization: Basic` credentials (RFC 6749 §2.3.1: each part form-urlencoded).
fn basic_credentials(headers: &HeaderMap) -> Option<Result<(String, String), ()>> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = STANDARD.decode(rest.trim()).map_err(|_| ());
    let parsed = decoded.and_then(|bytes| {
        let s = String::from_utf8(bytes).map_err(|_| ())?;
        let (id, secret) = s.split_once(':').ok_or(())?;
        let dec = |p: &str| {
            url::form_urlencoded::parse(format!("x={p}").as_bytes())
                .next()
                .map(|(_, v)| v.to_string())
                .unwrap_or_default()
        };
        Ok((dec(id), dec(secret)))
    });
    Some(parsed)
}

fn issue_tokens(
    st: &AppState,
    inner: &mut Inner,
    client_id: &str,
    scope: &str,
    resource: &str,
) -> Value {
    let access = random_token("at-");
    let refresh = random_token("rt-");
    inner.access.insert(
        access.clone(),
        AccessGrant {
            client_id: client_id.to_string(),
            scope: scope.to_string(),
            resource: resource.to_string(),
            expires: Instant::now() + Duration::from_secs(st.args.token_ttl),
        },
    );
    inner.refresh.insert(
        refresh.clone(),
        RefreshGrant {
            client_id: client_id.to_string(),
            scope: scope.to_string(),
            resource: resource.to_string(),
        },
    );
    json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": st.args.token_ttl,
        "refresh_token": refresh,
        "scope": scope,
    })
}

async fn token(State(st): State<St>, headers: HeaderMap, body: Bytes) -> Response {
    if st.inner.lock().unwrap().token_outage {
        st.stats.token_outage_hits.fetch_add(1, Ordering::SeqCst);
        // The connection breaks mid-answer, as when the network goes away:
        // the client gets no OAuth answer at all.
        let broken = futures::stream::once(async {
            Err::<Bytes, std::io::Error>(std::io::Error::other("token outage"))
        });
        return Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json")
            .body(axum::body::Body::from_stream(broken))
            .expect("response");
    }
    let resp = token_inner(&st, &headers, &body);
    if !resp.status().is_success() {
        st.stats.token_errors.fetch_add(1, Ordering::SeqCst);
    }
    resp
}

fn token_inner(st: &AppState, headers: &HeaderMap, body: &[u8]) -> Response {
    let form = match parse_form(body) {
        Ok(f) => f,
        Err(e) => return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", e),
    };
    let get = |k: &str| form.get(k).map(String::as_str).filter(|v| !v.is_empty());

    // Client authentication: Basic header, or client_id (+ client_secret) in the body.
    let basic = match basic_credentials(headers) {
        Some(Ok(c)) => Some(c),
        Some(Err(())) => {
            return oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "malformed Basic credentials",
            )
        }
        None => None,
    };
    if basic.is_some() && get("client_secret").is_some() {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "more than one client authentication method",
        );
    }
    let (client_id, secret, auth_method) = match &basic {
        Some((id, secret)) => {
            if get("client_id").is_some_and(|f| f != id) {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "client_id differs from Basic credentials",
                );
            }
            (id.clone(), Some(secret.clone()), "client_secret_basic")
        }
        None => match get("client_id") {
            Some(id) => match get("client_secret") {
                Some(s) => (id.to_string(), Some(s.to_string()), "client_secret_post"),
                None => (id.to_string(), None, "none"),
            },
            None => {
                return oauth_error(
                    StatusCode::UNAUTHORIZED,
                    "invalid_client",
                    "no client authentication",
                )
            }
        },
    };

    let mut inner = st.inner.lock().unwrap();
    inner.last_token = json!({
        "grant_type": get("grant_type"),
        "client_id": client_id,
        "client_auth": auth_method,
        "resource": get("resource"),
        "scope": get("scope"),
        "redirect_uri": get("redirect_uri"),
        "has_code_verifier": get("code_verifier").is_some(),
    });
    let Some(client) = inner.clients.get(&client_id) else {
        return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "unknown client");
    };
    if let Some(expected) = &client.secret {
        if secret.as_deref() != Some(expected.as_str()) {
            return oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "client authentication failed",
            );
        }
    }
    let resource_param = get("resource");
    if let Some(r) = resource_param {
        if r != st.resource {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_target",
                format!("resource must be {}", st.resource),
            );
        }
    } else if st.args.require_resource {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "missing resource",
        );
    }

    match get("grant_type") {
        Some("authorization_code") => {
            let (Some(code), Some(redirect_uri), Some(verifier)) =
                (get("code"), get("redirect_uri"), get("code_verifier"))
            else {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "code, redirect_uri and code_verifier are required",
                );
            };
            // Any attempt consumes the code, successful or not.
            let Some(grant) = inner.codes.remove(code) else {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "unknown or already used code",
                );
            };
            if grant.expires < Instant::now() {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "code expired");
            }
            if grant.client_id != client_id {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "code was issued to another client",
                );
            }
            if grant.redirect_uri != redirect_uri {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "redirect_uri does not match",
                );
            }
            let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
            if computed != grant.challenge {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "PKCE verification failed",
                );
            }
            if let (Some(a), Some(b)) = (grant.resource.as_deref(), resource_param) {
                if a != b {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_target",
                        "resource differs from the authorization request",
                    );
                }
            }
            let resource = st.resource.clone();
            let body = issue_tokens(st, &mut inner, &client_id, &grant.scope, &resource);
            st.stats.code_exchanges.fetch_add(1, Ordering::SeqCst);
            no_store(Json(body).into_response())
        }
        Some("refresh_token") => {
            let Some(rt) = get("refresh_token") else {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "refresh_token is required",
                );
            };
            if inner.reject_refresh {
                st.stats.refreshes_rejected.fetch_add(1, Ordering::SeqCst);
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "refresh rejected by /_control/reject-refresh",
                );
            }
            match inner.refresh.get(rt) {
                None => {
                    st.stats.refreshes_rejected.fetch_add(1, Ordering::SeqCst);
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "unknown or already used refresh token",
                    );
                }
                Some(g) if g.client_id != client_id => {
                    return oauth_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "refresh token was issued to another client",
                    );
                }
                Some(g) => {
                    if let Some(s) = get("scope") {
                        let original: HashSet<&str> = g.scope.split_whitespace().collect();
                        if !s.split_whitespace().all(|x| original.contains(x)) {
                            return oauth_error(
                                StatusCode::BAD_REQUEST,
                                "invalid_scope",
                                "scope exceeds the original grant",
                            );
                        }
                    }
                }
            }
            let grant = inner.refresh.remove(rt).expect("checked above");
            let scope = get("scope").map(str::to_string).unwrap_or(grant.scope);
            let body = issue_tokens(st, &mut inner, &client_id, &scope, &grant.resource);
            st.stats.refreshes.fetch_add(1, Ordering::SeqCst);
            no_store(Json(body).into_response())
        }
        Some(other) => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            format!("grant_type {other} is not supported"),
        ),
        None => oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "missing grant_type",
        ),
    }
}

// ---------------------------------------------------------------- /mcp guard

fn challenge(st: &AppState, error: Option<&str>) -> Response {
    let mut value = String::from("Bearer ");
    if !st.args.no_metadata {
        value.push_str(&format!(
            "resource_metadata=\"{}\", ",
            st.resource_metadata_url
        ));
    }
    value.push_str(&format!("scope=\"{SCOPE}\""));
    if let Some(e) = error {
        value.push_str(&format!(", error=\"{e}\""));
    }
    st.stats
        .mcp_requests_rejected
        .fetch_add(1, Ordering::SeqCst);
    let mut resp = (
        StatusCode::UNAUTHORIZED,
        Json(json!({ "error": error.unwrap_or("unauthorized") })),
    )
        .into_response();
    resp.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_str(&value).expect("header value"),
    );
    resp
}

async fn require_token(State(st): State<St>, mut req: Request, next: Next) -> Response {
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim().to_string());
    let Some(token) = bearer else {
        return challenge(&st, None);
    };
    let info = {
        let mut inner = st.inner.lock().unwrap();
        match inner.access.get(&token) {
            Some(g) if g.expires <= Instant::now() => {
                inner.access.remove(&token);
                None
            }
            Some(g) if g.resource != st.resource => None,
            Some(g) => Some(TokenInfo {
                client_id: g.client_id.clone(),
                scope: g.scope.clone(),
            }),
            None => None,
        }
    };
    let Some(info) = info else {
        return challenge(&st, Some("invalid_token"));
    };
    st.stats
        .mcp_requests_authorized
        .fetch_add(1, Ordering::SeqCst);
    req.extensions_mut().insert(info);
    next.run(req).await
}

// ---------------------------------------------------------------- control

async fn control_revoke_access(State(st): State<St>) -> Response {
    let mut inner = st.inner.lock().unwrap();
    let n = inner.access.len();
    inner.access.clear();
    Json(json!({ "revoked_access_tokens": n })).into_response()
}

async fn control_reject_refresh(State(st): State<St>) -> Response {
    let mut inner = st.inner.lock().unwrap();
    inner.reject_refresh = true;
    let n = inner.access.len();
    inner.access.clear();
    Json(json!({ "reject_refresh": true, "revoked_access_tokens": n })).into_response()
}

async fn control_deny_authorization(State(st): State<St>) -> Response {
    st.inner.lock().unwrap().deny = true;
    Json(json!({ "deny_authorization": true })).into_response()
}

async fn control_token_outage(State(st): State<St>) -> Response {
    st.inner.lock().unwrap().token_outage = true;
    Json(json!({ "token_outage": true })).into_response()
}

async fn control_reset(State(st): State<St>) -> Response {
    let mut inner = st.inner.lock().unwrap();
    inner.reject_refresh = false;
    inner.token_outage = false;
    inner.deny = false;
    Json(json!({ "reject_refresh": false, "deny_authorization": false })).into_response()
}

async fn control_stats(State(st): State<St>) -> Response {
    let s = &st.stats;
    let n = |a: &AtomicU64| a.load(Ordering::SeqCst);
    let inner = st.inner.lock().unwrap();
    let now = Instant::now();
    Json(json!({
        "registrations": n(&s.registrations),
        "authorizations": n(&s.authorizations),
        "code_exchanges": n(&s.code_exchanges),
        "refreshes": n(&s.refreshes),
        "refreshes_rejected": n(&s.refreshes_rejected),
        "token_errors": n(&s.token_errors),
        "token_outage_hits": n(&s.token_outage_hits),
        "token_outage": inner.token_outage,
        "mcp_requests_authorized": n(&s.mcp_requests_authorized),
        "mcp_requests_rejected": n(&s.mcp_requests_rejected),
        "clients": inner.clients.len(),
        "active_access_tokens": inner.access.values().filter(|g| g.expires > now).count(),
        "active_refresh_tokens": inner.refresh.len(),
        "reject_refresh": inner.reject_refresh,
        "deny_authorization": inner.deny,
        "last_authorize": inner.last_authorize,
        "last_token_request": inner.last_token,
    }))
    .into_response()
}

// ---------------------------------------------------------------- MCP server

#[derive(Clone)]
struct Mcp;

fn schema(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => unreachable!(),
    }
}

impl ServerHandler for Mcp {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::default();
        caps.tools = Some(ToolsCapability::default());
        ServerConfig::new(caps)
            .with_server_info(Implementation::new(
                "oauth-fixture",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions("Switchboard OAuth test server")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new(
                "whoami",
                "Returns the client_id and scope of the bearer token used",
                schema(json!({"type": "object", "properties": {}})),
            ),
            Tool::new(
                "echo",
                "Returns `text` unchanged",
                schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                })),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        let result = match request.name.as_ref() {
            "whoami" => {
                let info = context
                    .extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|p| p.extensions.get::<TokenInfo>())
                    .cloned()
                    .ok_or_else(|| {
                        McpError::internal_error("no token information on this request", None)
                    })?;
                let v = json!({ "client_id": info.client_id, "scope": info.scope });
                let mut r = CallToolResult::success(vec![ContentBlock::text(v.to_string())]);
                r.structured_content = Some(v);
                r
            }
            "echo" => {
                let text = args
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| McpError::invalid_params("echo needs a string `text`", None))?;
                CallToolResult::success(vec![ContentBlock::text(text.to_string())])
            }
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown tool {other:?}"),
                    None,
                ))
            }
        };
        Ok(result.into())
    }
}

// ---------------------------------------------------------------- main

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(run(args))
}

async fn run(args: Args) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(&args.addr)
        .await
        .with_context(|| format!("binding {}", args.addr))?;
    let local = listener.local_addr()?;
    let host = match local.ip() {
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        std::net::IpAddr::V4(ip) => ip.to_string(),
    };
    let issuer = format!("http://{host}:{}", local.port());
    let mut inner = Inner::default();
    for c in &args.clients {
        let (id, uri) = c
            .split_once('=')
            .with_context(|| format!("--client {c:?}: expected ID=REDIRECT_URI"))?;
        inner.clients.insert(
            id.to_string(),
            Client {
                redirect_uris: vec![uri.to_string()],
                secret: None,
            },
        );
    }
    for c in &args.client_secrets {
        let (id, secret) = c
            .split_once('=')
            .with_context(|| format!("--client-secret {c:?}: expected ID=SECRET"))?;
        let client = inner
            .clients
            .get_mut(id)
            .with_context(|| format!("--client-secret {id}: no --client {id}=REDIRECT_URI"))?;
        client.secret = Some(secret.to_string());
    }
    let st: St = Arc::new(AppState {
        resource: format!("{issuer}/mcp"),
        resource_metadata_url: format!("{issuer}/.well-known/oauth-protected-resource/mcp"),
        issuer,
        args: args.clone(),
        inner: Mutex::new(inner),
        stats: Stats::default(),
    });

    let service = StreamableHttpService::new(
        || Ok(Mcp),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let mcp = Router::new()
        .nest_service("/mcp", service)
        // route_layer: only /mcp is guarded (a plain `layer` would also wrap the
        // fallback, turning every unknown path into a 401).
        .route_layer(middleware::from_fn_with_state(st.clone(), require_token));

    let mut router = Router::new()
        .route("/_control/revoke-access", post(control_revoke_access))
        .route("/_control/reject-refresh", post(control_reject_refresh))
        .route(
            "/_control/deny-authorization",
            post(control_deny_authorization),
        )
        .route("/_control/token-outage", post(control_token_outage))
        .route("/_control/reset", post(control_reset))
        .route("/_control/stats", get(control_stats));
    if !args.no_metadata {
        router = router
            .route(
                "/.well-known/oauth-protected-resource",
                get(protected_resource_metadata),
            )
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(protected_resource_metadata),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get(authorization_server_metadata),
            )
            .route(
                "/.well-known/openid-configuration",
                get(authorization_server_metadata),
            )
            .route("/authorize", get(authorize))
            .route("/token", post(token));
        if !args.no_registration {
            router = router.route("/register", post(register));
        }
    }
    let router = router.with_state(st.clone()).merge(mcp);

    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "LISTENING {}", st.resource)?;
        out.flush()?;
    }
    axum::serve(listener, router).await?;
    Ok(())
}
