//! Sign-in to remote MCP servers (SPEC A1, A3) on rmcp's `auth` module:
//! discovery (RFC 9728, then RFC 8414 / OpenID), client registration
//! (a registration kept from an earlier sign-in, else dynamic, RFC 7591),
//! PKCE S256, `state`, `resource` (RFC 8707), `iss` (RFC 9207), refresh.
//!
//! What is ours: the keychain store ([`super::vault`]), the redirect listener
//! on 127.0.0.1 (on the port the client was registered with, so the
//! registration stays valid), the browser hand-off (a callback: the app opens
//! the system browser, the CLI prints the link too), the messages.
//!
//! The authorization URL comes from metadata the server controls: [`begin`]
//! refuses one that is not a web page ([`crate::opener::check_link`]), so no
//! caller can open or show it. The redirect listener answers stray requests
//! (another `state`, other paths) and keeps waiting for the real one.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, AuthorizationSession, OAuthState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::vault::{OAuthRecord, Vault, VaultError};
use crate::opener::{check_link, RefusedLink, SIGN_IN_METADATA};

/// How long a sign-in waits for the browser to come back.
pub const DEFAULT_SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);
/// The name Switchboard registers itself under.
pub const CLIENT_NAME: &str = "Switchboard";

#[derive(Debug, Clone, thiserror::Error)]
pub enum SignInError {
    #[error("OAuth flow timed out. Please try again.")]
    TimedOut,
    #[error("OAuth authentication failed: {0}")]
    Failed(String),
    #[error("Authentication required for \"{server}\", but its OAuth endpoints could not be discovered at {url} ({detail}). Set an Authorization header for it instead, if its provider gives you a token.")]
    NoEndpoints { server: String, url: String, detail: String },
    #[error("\"{0}\" is not a remote (http or sse) server; only remote servers sign in with OAuth")]
    NotRemote(String),
    #[error("sign-in to \"{0}\" was cancelled")]
    Cancelled(String),
    #[error("{0}")]
    Vault(#[from] VaultError),
    /// The server's metadata points the browser at something that is not a web page.
    #[error("{0}")]
    RefusedLink(#[from] RefusedLink),
}

impl SignInError {
    pub fn code(&self) -> &'static str {
        match self {
            SignInError::TimedOut => "oauth_timeout",
            SignInError::Failed(_) => "oauth_failed",
            SignInError::NoEndpoints { .. } => "oauth_no_endpoints",
            SignInError::NotRemote(_) => "oauth_not_remote",
            SignInError::Cancelled(_) => "oauth_cancelled",
            SignInError::Vault(_) => "keychain",
            SignInError::RefusedLink(_) => "oauth_refused_link",
        }
    }
}

fn failed(e: impl std::fmt::Display) -> SignInError {
    SignInError::Failed(e.to_string())
}

/// An OAuth manager for `url` with the server's keychain record as its store.
async fn manager_for(server: &str, url: &str, vault: &Vault) -> Result<AuthorizationManager, AuthError> {
    // Corporate authorization servers often live on private addresses; rmcp
    // still refuses loopback metadata unless the server itself is on loopback.
    let mut m = AuthorizationManager::new_allowing_private_addresses(url).await?;
    m.set_credential_store(vault.credential_store(server, url));
    Ok(m)
}

/// A sign-in waiting for the browser: open [`PendingSignIn::url`], then
/// [`PendingSignIn::finish`].
pub struct PendingSignIn {
    pub server: String,
    /// The authorization page to open in the user's browser.
    pub url: String,
    pub redirect_uri: String,
    resource: String,
    state: OAuthState,
    expected_state: String,
    listener: TcpListener,
    vault: Vault,
}

impl std::fmt::Debug for PendingSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSignIn").field("server", &self.server).field("redirect_uri", &self.redirect_uri).finish_non_exhaustive()
    }
}

/// Bind the redirect listener: the registered port when there is one (so
/// the client registration stays valid), else any free port.
async fn bind_listener(previous: Option<u16>) -> Result<(TcpListener, bool), SignInError> {
    if let Some(port) = previous {
        if let Ok(l) = TcpListener::bind(("127.0.0.1", port)).await {
            return Ok((l, true));
        }
    }
    let l = TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| failed(format!("cannot listen on 127.0.0.1 for the sign-in redirect: {e}")))?;
    Ok((l, false))
}

/// Start signing `server` (at `url`) in: discover, register if needed, and
/// build the authorization URL. Nothing is stored until [`PendingSignIn::finish`].
pub async fn begin(server: &str, url: &str, vault: &Vault) -> Result<PendingSignIn, SignInError> {
    begin_with(server, url, vault, SignInOptions::default()).await
}

/// What a sign-in can know beyond the server's URL. The default is what
/// [`begin`] does: discovery by probing, the registration kept from an
/// earlier sign-in or else dynamic registration, scopes chosen by rmcp.
#[derive(Debug, Clone, Default)]
pub struct SignInOptions {
    /// A client registered with the authorization server out of band (MCP
    /// "preregistration"); takes priority over every other way to get a client.
    pub client_id: Option<String>,
    /// The secret of the pre-registered [`client_id`](Self::client_id), for a
    /// confidential client (sent as `client_secret_basic`, or `_post` when
    /// the server supports only that).
    pub client_secret: Option<String>,
    /// HTTPS URL of the client's Client ID Metadata Document (SEP-991), used
    /// as the client id when the authorization server advertises
    /// `client_id_metadata_document_supported` and no client is pre-registered.
    pub client_metadata_url: Option<String>,
    /// The `WWW-Authenticate` header of the 401 (or the 403
    /// `insufficient_scope`) that made this sign-in necessary: discovery
    /// starts at its `resource_metadata` and its `scope` is requested
    /// (together with scopes requested before, for a step-up).
    pub challenge: Option<String>,
    /// Exactly these scopes instead of rmcp's selection.
    pub scopes: Vec<String>,
    /// Accept authorization server metadata that the MCP server's own origin
    /// serves at `/.well-known/oauth-authorization-server` (the 2025-03-26
    /// discovery, no protected resource metadata) although its `issuer` is
    /// another URL on that same origin (e.g. `https://host/oauth`), which
    /// RFC 8414 §3.3, and so rmcp, rejects. Only when rmcp's discovery fails
    /// with exactly that mismatch; an issuer on another origin is never
    /// accepted. The accepted issuer is recorded with the tokens, and
    /// [`authorized`] / [`access_token`] accept it again for that record.
    pub accept_same_origin_issuer: bool,
}

/// [`begin`] with [`SignInOptions`].
pub async fn begin_with(server: &str, url: &str, vault: &Vault, options: SignInOptions) -> Result<PendingSignIn, SignInError> {
    // Fail before the browser opens when there is nowhere to keep the tokens.
    let previous = read_record(vault, server, Some(url)).await?;
    vault.probe_writable()?;

    let (listener, kept_port) = bind_listener(previous.as_ref().and_then(|r| r.redirect_port)).await?;
    let port = listener.local_addr().map_err(failed)?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");

    let manager = manager_for(server, url, vault).await.map_err(|e| no_endpoints(server, url, e))?;
    let mut state = OAuthState::Unauthorized(manager);
    let mut request = AuthorizationRequest::new(redirect_uri.clone()).with_client_name(CLIENT_NAME);
    if let Some(challenge) = options.challenge {
        request = request.with_challenge(challenge);
    }
    if !options.scopes.is_empty() {
        request = request.with_scopes(options.scopes);
    }
    if let Some(metadata_url) = options.client_metadata_url {
        request = request.with_client_metadata_url(metadata_url);
    }
    if let Some(client_id) = options.client_id {
        request = request.with_preregistered_client(client_id);
        if let Some(secret) = options.client_secret {
            request = request.with_client_secret(secret);
        }
    } else if kept_port {
        // The client registered last time is reused while its redirect URI still holds.
        if let Some(client_id) = previous.as_ref().and_then(|r| r.credentials.as_ref()).map(|c| c.client_id.clone()) {
            request = request.with_preregistered_client(client_id);
        }
    }
    let started = match state.start_authorization(request.clone()).await {
        Err(AuthError::AuthorizationServerMismatch { expected_issuer, received_issuer }) if options.accept_same_origin_issuer => {
            match same_origin_metadata(url, &received_issuer).await {
                Some(metadata) => {
                    let OAuthState::Unauthorized(mut manager) = state else { unreachable!("a failed start_authorization leaves the state unauthorized") };
                    manager.set_metadata(metadata);
                    match AuthorizationSession::new(manager, request).await {
                        Ok(session) => {
                            state = OAuthState::Session(session);
                            Ok(())
                        }
                        Err((manager, e)) => {
                            state = OAuthState::Unauthorized(manager);
                            Err(e)
                        }
                    }
                }
                None => Err(AuthError::AuthorizationServerMismatch { expected_issuer, received_issuer }),
            }
        }
        other => other,
    };
    if let Err(e) = started {
        return Err(match e {
            AuthError::NoAuthorizationSupport | AuthError::DiscoveryRequestFailed { .. } | AuthError::MetadataError(_) | AuthError::AuthorizationServersUnavailable { .. } | AuthError::ProtectedResourceMetadataInvalid { .. } => no_endpoints(server, url, e),
            // rmcp falls back to guessed endpoints (/authorize, /token, /register,
            // per the 2025-03-26 spec) when nothing is published; when those
            // fail too, say that nothing could be discovered.
            other if !metadata_published(url).await => no_endpoints(server, url, other),
            other => failed(other),
        });
    }
    let auth_url = state.get_authorization_url().await.map_err(failed)?;
    let auth_url = check_link(&auth_url, SIGN_IN_METADATA)?.to_string();
    let expected_state = url::Url::parse(&auth_url)
        .ok()
        .and_then(|u| u.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned()))
        .ok_or_else(|| failed("the authorization URL has no state parameter"))?;
    Ok(PendingSignIn { server: server.into(), url: auth_url, redirect_uri, resource: url.into(), state, expected_state, listener, vault: vault.clone() })
}

/// The authorization server metadata at the origin root of the MCP server
/// at `url`, if its `issuer` is exactly `issuer` and on that same origin
/// (see [`SignInOptions::accept_same_origin_issuer`]).
async fn same_origin_metadata(url: &str, issuer: &str) -> Option<AuthorizationMetadata> {
    let server = url::Url::parse(url).ok()?;
    let issuer_url = url::Url::parse(issuer).ok()?;
    if server.origin() != issuer_url.origin() || !server.origin().is_tuple() {
        return None;
    }
    let mut well_known = server;
    well_known.set_path("/.well-known/oauth-authorization-server");
    well_known.set_query(None);
    well_known.set_fragment(None);
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).timeout(Duration::from_secs(10)).build().ok()?;
    let response = http.get(well_known).header("Accept", "application/json").send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let metadata: AuthorizationMetadata = serde_json::from_slice(&response.bytes().await.ok()?).ok()?;
    (metadata.issuer.as_deref() == Some(issuer)).then_some(metadata)
}

/// `initialize_from_store`, also for a record signed in with
/// [`SignInOptions::accept_same_origin_issuer`]: when discovery fails with an
/// issuer mismatch and the mismatching issuer is the one recorded with the
/// tokens, that same-origin metadata is used again.
async fn initialize_from_store(m: &mut AuthorizationManager, url: &str, recorded_issuer: Option<&str>) -> Result<bool, AuthError> {
    match m.initialize_from_store().await {
        Err(AuthError::AuthorizationServerMismatch { expected_issuer, received_issuer }) if recorded_issuer == Some(received_issuer.as_str()) => {
            let Some(metadata) = same_origin_metadata(url, &received_issuer).await else {
                return Err(AuthError::AuthorizationServerMismatch { expected_issuer, received_issuer });
            };
            m.set_metadata(metadata);
            m.initialize_from_store().await
        }
        other => other,
    }
}

/// Whether the server (or its authorization server) publishes OAuth metadata.
async fn metadata_published(url: &str) -> bool {
    match AuthorizationManager::new_allowing_private_addresses(url).await {
        Ok(m) => m.resolve_metadata().await.is_ok_and(|r| r.source.is_discovered()),
        Err(_) => false,
    }
}

fn no_endpoints(server: &str, url: &str, e: AuthError) -> SignInError {
    SignInError::NoEndpoints { server: server.into(), url: url.into(), detail: e.to_string() }
}

impl PendingSignIn {
    /// Wait for the browser to come back to the listener (up to `timeout`),
    /// check `state`, exchange the code (PKCE verifier, `iss`), and keep the
    /// tokens and the redirect port in the keychain.
    pub async fn finish(mut self, timeout: Duration) -> Result<(), SignInError> {
        let waited = tokio::time::timeout(timeout, wait_for_callback(&self.listener, &self.expected_state, &self.server)).await;
        let (callback, mut stream) = match waited {
            Err(_) => return Err(SignInError::TimedOut),
            Ok(r) => r?,
        };
        let exchanged = self.state.handle_callback_with_issuer(&callback.code, &callback.csrf_token, callback.issuer.as_deref()).await;
        if let Err(e) = exchanged {
            let err = failed(e);
            respond(&mut stream, 400, &page(false, &self.server, &err.to_string())).await;
            return Err(err);
        }
        let port = self.listener.local_addr().map(|a| a.port()).ok();
        let (vault, server, resource) = (self.vault.clone(), self.server.clone(), self.resource.clone());
        let kept = tokio::task::spawn_blocking(move || -> Result<(), VaultError> {
            let mut rec = vault.record(&server)?.unwrap_or(OAuthRecord { resource: resource.clone(), redirect_port: None, credentials: None });
            rec.resource = resource;
            rec.redirect_port = port;
            vault.put(&server, &rec)
        })
        .await
        .map_err(failed)?;
        if let Err(e) = kept {
            respond(&mut stream, 500, &page(false, &self.server, &e.to_string())).await;
            return Err(e.into());
        }
        respond(&mut stream, 200, &page(true, &self.server, "")).await;
        Ok(())
    }
}

/// At most this many requests to the redirect listener are read at once;
/// more connections wait in the accept queue.
const MAX_VISITORS: usize = 16;

/// Accept connections until one brings the authorization response for this
/// sign-in (its `state`). Anything else is answered and the wait goes on:
/// another `state` (a stale tab, a forged link) gets a 400 page, other paths
/// (a browser's favicon request) a 404. Requests are read concurrently, so a
/// connection that sends nothing (a browser's preconnect) holds up nothing.
async fn wait_for_callback(listener: &TcpListener, expected_state: &str, server: &str) -> Result<(AuthorizationCallback, TcpStream), SignInError> {
    // Dropped with this future (timeout, cancel): every visit in progress ends.
    let mut visits = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept(), if visits.len() < MAX_VISITORS => {
                let (stream, peer) = accepted.map_err(failed)?;
                if peer.ip().is_loopback() {
                    let (expected_state, server) = (expected_state.to_string(), server.to_string());
                    visits.spawn(async move { visit(stream, &expected_state, &server).await });
                }
            }
            Some(done) = visits.join_next() => {
                if let Ok(Some(outcome)) = done {
                    return outcome;
                }
            }
        }
    }
}

/// One request to the redirect listener: `None` when it is not this
/// sign-in's redirect (answered here), else how the sign-in ends.
async fn visit(mut stream: TcpStream, expected_state: &str, server: &str) -> Option<Result<(AuthorizationCallback, TcpStream), SignInError>> {
    let target = read_request_target(&mut stream).await?;
    let Ok(url) = url::Url::parse(&format!("http://127.0.0.1{target}")) else {
        respond(&mut stream, 400, "Bad request").await;
        return None;
    };
    if url.path() != "/callback" {
        respond(&mut stream, 404, "Not found").await;
        return None;
    }
    let q: std::collections::HashMap<String, String> = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    if q.get("state").map(String::as_str) != Some(expected_state) {
        respond(&mut stream, 400, &stray_page()).await;
        return None;
    }
    if let Some(code) = q.get("error") {
        let detail = q.get("error_description").map(|d| format!(": {d}")).unwrap_or_default();
        let err = failed(format!("the authorization server answered {code}{detail}"));
        respond(&mut stream, 400, &page(false, server, &err.to_string())).await;
        return Some(Err(err));
    }
    match AuthorizationCallback::from_redirect_url(url.as_str()) {
        Ok(cb) => Some(Ok((cb, stream))),
        Err(e) => {
            let err = failed(e);
            respond(&mut stream, 400, &page(false, server, &err.to_string())).await;
            Some(Err(err))
        }
    }
}

/// The request target of an HTTP/1 GET (`/callback?code=…`), from a request
/// of at most 16 KiB; `None` for anything else.
async fn read_request_target(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let read = async {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.ok()??;
    let text = String::from_utf8_lossy(&buf);
    let mut parts = text.lines().next()?.split_whitespace();
    (parts.next()? == "GET").then_some(())?;
    let target = parts.next()?;
    target.starts_with('/').then(|| target.to_string())
}

async fn respond(stream: &mut TcpStream, status: u16, body: &str) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Internal Server Error",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The page the browser shows when it comes back.
fn page(ok: bool, server: &str, error: &str) -> String {
    let server = html_escape(server);
    if ok {
        html_page(&format!("Signed in to {server}"), "You can close this tab and return to Switchboard.")
    } else {
        html_page(&format!("Sign-in to {server} failed"), &format!("{}<br>Close this tab and try again from Switchboard.", html_escape(error)))
    }
}

/// The page for a request to the redirect listener with another `state`
/// than the sign-in in progress (which goes on waiting).
fn stray_page() -> String {
    html_page(
        "This sign-in link does not match the one Switchboard is waiting for",
        "Switchboard is still waiting for the sign-in it started. Finish it in the browser tab Switchboard opened, or start the sign-in again from Switchboard.",
    )
}

/// `title` and `body` are HTML.
fn html_page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title><style>body{{font:16px system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0;color:#1f2328;background:#f6f8fa}}main{{background:#fff;border:1px solid #d0d7de;border-radius:12px;padding:32px 40px;max-width:520px}}h1{{font-size:20px;margin:0 0 8px}}@media(prefers-color-scheme:dark){{body{{background:#0d1117;color:#e6edf3}}main{{background:#161b22;border-color:#30363d}}}}</style></head><body><main><h1>{title}</h1><p>{body}</p></main></body></html>"
    )
}

/// What a connection gets from a stored sign-in.
pub enum Authorized {
    /// No sign-in stored for this server (at this URL).
    None,
    /// An rmcp HTTP client that adds the token and refreshes it (before
    /// expiry and once on a 401).
    Client(AuthClient<reqwest::Client>),
}

/// The stored sign-in of `server` at `url`, ready to connect with. `Err` is a
/// message for `needs-auth` (e.g. the refresh token was rejected).
pub async fn authorized(server: &str, url: &str, vault: &Vault) -> Result<Authorized, String> {
    let rec = match read_record(vault, server, Some(url)).await {
        Ok(Some(r)) if r.has_tokens() => r,
        Ok(_) => return Ok(Authorized::None),
        // No keychain: nothing can have been stored; the server is tried without a token.
        Err(VaultError::Unavailable(_)) => return Ok(Authorized::None),
        Err(e) => return Err(format!("cannot read the saved sign-in: {e}")),
    };
    Ok(match stored_manager(server, url, &rec, vault).await? {
        Some(m) => Authorized::Client(AuthClient::new(reqwest::Client::new(), m)),
        None => Authorized::None,
    })
}

/// `server`'s record (keychain calls block: off the async threads); with
/// `url`, only a record made for that URL.
async fn read_record(vault: &Vault, server: &str, url: Option<&str>) -> Result<Option<OAuthRecord>, VaultError> {
    let (v, s, u) = (vault.clone(), server.to_string(), url.map(str::to_string));
    tokio::task::spawn_blocking(move || match u {
        Some(u) => v.record_for(&s, &u),
        None => v.record(&s),
    })
    .await
    .map_err(|e| VaultError::Keychain(e.to_string()))?
}

/// An rmcp manager for `url` loaded with the stored sign-in `rec`; `None`
/// when rmcp finds it unusable (e.g. the authorization server changed).
async fn stored_manager(server: &str, url: &str, rec: &OAuthRecord, vault: &Vault) -> Result<Option<AuthorizationManager>, String> {
    let mut m = manager_for(server, url, vault).await.map_err(|e| format!("cannot reach the authorization server for the saved sign-in: {e}"))?;
    match initialize_from_store(&mut m, url, rec.issuer()).await {
        Ok(true) => Ok(Some(m)),
        Ok(false) => Ok(None),
        Err(e) => Err(format!("the saved sign-in cannot be used: {e}")),
    }
}

/// A current access token from a stored sign-in (refreshed when it is about
/// to expire): for `sse` servers' header and stdio servers' `OAUTH_ACCESS_TOKEN`.
/// `Ok(None)`: nothing stored. `Err`: a message for `needs-auth`.
pub async fn access_token(server: &str, vault: &Vault) -> Result<Option<String>, String> {
    let rec = read_record(vault, server, None).await.map_err(|e| e.to_string())?;
    let Some(rec) = rec.filter(OAuthRecord::has_tokens) else { return Ok(None) };
    let Some(m) = stored_manager(server, &rec.resource, &rec, vault).await? else { return Ok(None) };
    match m.get_access_token().await {
        Ok(t) => Ok(Some(t)),
        Err(AuthError::AuthorizationRequired) => Err(format!("the saved sign-in for \"{server}\" has expired or was revoked; sign in again")),
        Err(e) => Err(e.to_string()),
    }
}

/// Sign out: the tokens, the client registration and a bearer token given
/// for the server (`add --token-stdin`) leave the keychain.
pub async fn sign_out(server: &str, vault: &Vault) -> Result<(), VaultError> {
    let (v, s) = (vault.clone(), server.to_string());
    tokio::task::spawn_blocking(move || v.remove(&s).and_then(|()| v.remove_token(&s))).await.map_err(|e| VaultError::Keychain(e.to_string()))?
}

/// The bearer token given for `server` at `url`, if any (keychain calls
/// block: off the async threads). No keychain means none was stored.
pub async fn static_token(server: &str, url: &str, vault: &Vault) -> Result<Option<String>, VaultError> {
    let (v, s, u) = (vault.clone(), server.to_string(), url.to_string());
    match tokio::task::spawn_blocking(move || v.token_for(&s, &u)).await.map_err(|e| VaultError::Keychain(e.to_string()))? {
        Err(VaultError::Unavailable(_)) => Ok(None),
        other => other,
    }
}

/// Whether a sign-in is stored for `server` at `url` (no token is returned).
pub async fn is_signed_in(server: &str, url: &str, vault: &Vault) -> bool {
    read_record(vault, server, Some(url)).await.ok().flatten().is_some_and(|r| r.has_tokens())
}

/// A shareable browser opener (the app: tauri-plugin-opener; the CLI: `open`).
pub type BrowserOpener = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;
