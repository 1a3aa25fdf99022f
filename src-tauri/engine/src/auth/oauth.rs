//! Sign-in to remote MCP servers on rmcp's `auth` module:
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

use crate::error_code::ErrorCode;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    AuthorizationRequest, AuthorizationSession, OAuthClientConfig, OAuthState,
};
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
    NoEndpoints {
        server: String,
        url: String,
        detail: String,
    },
    #[error(
        "\"{0}\" is not a remote (http or sse) server; only remote servers sign in with OAuth"
    )]
    NotRemote(String),
    #[error("sign-in to \"{0}\" was cancelled")]
    Cancelled(String),
    #[error("{0}")]
    Vault(#[from] VaultError),
    /// The server's metadata points the browser at something that is not a web page.
    #[error("{0}")]
    RefusedLink(#[from] RefusedLink),
    /// No client id is configured and the authorization server offers no
    /// dynamic client registration (nor client ID metadata documents).
    #[error("Sign-in to \"{server}\" needs an OAuth app registered in advance: its authorization server ({issuer}) offers no dynamic client registration. Register an app with the server's provider (redirect URI http://localhost:PORT/callback), then enter its client ID, secret and callback port in the server's OAuth app section (or `claude mcp add --transport http --client-id ID --callback-port PORT {server} URL`).")]
    NoRegistration { server: String, issuer: String },
    /// The fixed callback port of the server's OAuth app cannot be listened on.
    #[error("{message}")]
    PortTaken {
        server: String,
        port: u16,
        message: String,
    },
    /// The configured redirect URI is not one Switchboard can receive.
    #[error("Sign-in to \"{server}\": the OAuth app's redirect URI {uri} is not http://localhost:PORT/… or http://127.0.0.1:PORT/… on this computer; Switchboard cannot receive the sign-in there. Change the redirect URI (or the callback port) in the server's OAuth app section.")]
    BadRedirect { server: String, uri: String },
}

impl SignInError {
    pub fn code(&self) -> ErrorCode {
        match self {
            SignInError::TimedOut => ErrorCode::OauthTimeout,
            SignInError::Failed(_) => ErrorCode::OauthFailed,
            SignInError::NoEndpoints { .. } => ErrorCode::OauthNoEndpoints,
            SignInError::NotRemote(_) => ErrorCode::OauthNotRemote,
            SignInError::Cancelled(_) => ErrorCode::OauthCancelled,
            SignInError::Vault(_) => ErrorCode::Keychain,
            SignInError::RefusedLink(_) => ErrorCode::OauthRefusedLink,
            SignInError::NoRegistration { .. } => ErrorCode::OauthNoRegistration,
            SignInError::PortTaken { .. } => ErrorCode::OauthPortTaken,
            SignInError::BadRedirect { .. } => ErrorCode::OauthBadRedirect,
        }
    }
}

fn failed(e: impl std::fmt::Display) -> SignInError {
    SignInError::Failed(e.to_string())
}

/// An OAuth manager for `url` with the server's keychain record as its store.
async fn manager_for(
    server: &str,
    url: &str,
    vault: &Vault,
) -> Result<AuthorizationManager, AuthError> {
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
    listener: Listener,
    /// The path of the redirect URI (`/callback`, or the configured one).
    path: String,
    /// The client secret to keep with the tokens (registration's or app's).
    client_secret: Option<String>,
    vault: Vault,
}

impl std::fmt::Debug for PendingSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSignIn")
            .field("server", &self.server)
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// The redirect listener: 127.0.0.1, and for a `localhost` redirect URI
/// also [::1] when it can be had (a browser may try either address).
struct Listener {
    v4: TcpListener,
    v6: Option<TcpListener>,
}

impl Listener {
    fn port(&self) -> Option<u16> {
        self.v4.local_addr().ok().map(|a| a.port())
    }
    async fn accept(&self) -> std::io::Result<(TcpStream, std::net::SocketAddr)> {
        match &self.v6 {
            None => self.v4.accept().await,
            Some(v6) => tokio::select! {
                a = self.v4.accept() => a,
                a = v6.accept() => a,
            },
        }
    }
}

/// Bind the redirect listener: the registered port when there is one (so
/// the client registration stays valid), else any free port.
async fn bind_listener(previous: Option<u16>) -> Result<(Listener, bool), SignInError> {
    if let Some(port) = previous {
        if let Ok(l) = TcpListener::bind(("127.0.0.1", port)).await {
            return Ok((Listener { v4: l, v6: None }, true));
        }
    }
    let l = TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| {
        failed(format!(
            "cannot listen on 127.0.0.1 for the sign-in redirect: {e}"
        ))
    })?;
    Ok((Listener { v4: l, v6: None }, false))
}

/// Bind the fixed port of a pre-registered redirect URI, or say which
/// program holds it.
async fn bind_fixed(server: &str, port: u16, localhost: bool) -> Result<Listener, SignInError> {
    let v4 = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| SignInError::PortTaken {
            server: server.into(),
            port,
            message: crate::ports::taken_message(
                &format!("The sign-in to \"{server}\" (its OAuth app's callback port)"),
                port,
                &e,
            ),
        })?;
    let v6 = if localhost {
        TcpListener::bind(("::1", port)).await.ok()
    } else {
        None
    };
    Ok(Listener { v4, v6 })
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
    /// The redirect URI the pre-registered app was registered with
    /// (`http://localhost:PORT/callback`): the listener binds that port
    /// (an error names the program holding it) and answers on that path.
    /// Also used with dynamic registration (Claude Code's `--callback-port`
    /// alone), so the registered URI is the fixed one.
    pub redirect_uri: Option<String>,
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

/// Where Claude Code reads a pre-registered app's secret from when none is
/// stored (`claude mcp add --client-secret` reads it from there too).
pub const CLIENT_SECRET_ENV: &str = "MCP_CLIENT_SECRET";

impl SignInOptions {
    /// The options a server's pre-registered OAuth app (its `oauth` field)
    /// gives: client id, redirect URI (fixed port), scopes, and the secret:
    /// the one kept in the keychain for it, else one the user wrote in the
    /// client's file (`${VAR}` read from the environment), else
    /// `MCP_CLIENT_SECRET` (Claude Code's convention), only with a client id.
    pub async fn for_app(
        server: &str,
        app: Option<&crate::config::OAuthApp>,
        vault: &Vault,
    ) -> Result<SignInOptions, SignInError> {
        let Some(app) = app else {
            return Ok(SignInOptions::default());
        };
        let mut o = SignInOptions {
            client_id: app.client_id.clone(),
            redirect_uri: app.redirect(),
            scopes: app.scopes.clone(),
            ..Default::default()
        };
        if o.client_id.is_some() {
            let (v, s) = (vault.clone(), server.to_string());
            let kept = match tokio::task::spawn_blocking(move || v.app_secret(&s))
                .await
                .map_err(failed)?
            {
                Ok(kept) => kept,
                Err(VaultError::Unavailable(_)) => None,
                Err(e) => return Err(e.into()),
            };
            let written = app.client_secret.as_deref().and_then(|raw| {
                match raw
                    .strip_prefix("${")
                    .and_then(|r| r.strip_suffix('}'))
                    .or_else(|| raw.strip_prefix('$'))
                {
                    Some(var) => std::env::var(var).ok(),
                    None => Some(raw.to_string()),
                }
            });
            o.client_secret = kept
                .or(written)
                .or_else(|| std::env::var(CLIENT_SECRET_ENV).ok())
                .filter(|s| !s.is_empty());
        }
        Ok(o)
    }
}

/// [`begin`] with [`SignInOptions`].
pub async fn begin_with(
    server: &str,
    url: &str,
    vault: &Vault,
    options: SignInOptions,
) -> Result<PendingSignIn, SignInError> {
    // Fail before the browser opens when there is nowhere to keep the tokens.
    let previous = read_record(vault, server, Some(url)).await?;
    vault.probe_writable()?;

    let (listener, kept_port, path) = match options.redirect_uri.as_deref() {
        Some(uri) => {
            let Some((port, path)) = crate::config::loopback_redirect(uri) else {
                return Err(SignInError::BadRedirect {
                    server: server.into(),
                    uri: uri.into(),
                });
            };
            let localhost = url::Url::parse(uri)
                .ok()
                .and_then(|u| u.host_str().map(|h| h == "localhost"))
                .unwrap_or(false);
            let kept = previous
                .as_ref()
                .is_some_and(|r| r.redirect_port == Some(port));
            (bind_fixed(server, port, localhost).await?, kept, path)
        }
        None => {
            let (l, kept) = bind_listener(previous.as_ref().and_then(|r| r.redirect_port)).await?;
            (l, kept, "/callback".to_string())
        }
    };
    let port = listener
        .port()
        .ok_or_else(|| failed("the sign-in listener has no port"))?;
    let redirect_uri = options
        .redirect_uri
        .clone()
        .unwrap_or_else(|| format!("http://127.0.0.1:{port}/callback"));

    let mut manager = manager_for(server, url, vault)
        .await
        .map_err(|e| no_endpoints(server, url, e))?;
    let mut request = AuthorizationRequest::new(redirect_uri.clone()).with_client_name(CLIENT_NAME);
    if let Some(challenge) = options.challenge.clone() {
        request = request.with_challenge(challenge);
    }
    if !options.scopes.is_empty() {
        request = request.with_scopes(options.scopes.clone());
    }
    if let Some(metadata_url) = options.client_metadata_url.clone() {
        request = request.with_client_metadata_url(metadata_url);
    }

    // Discovery: the server's challenge first, then RFC 9728 / 8414.
    let metadata = match manager
        .resolve_metadata_from_challenge(options.challenge.as_deref())
        .await
    {
        Ok(r) => r.metadata,
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) if options.accept_same_origin_issuer => {
            match same_origin_metadata(url, &received_issuer).await {
                Some(m) => m,
                None => {
                    return Err(no_endpoints(
                        server,
                        url,
                        AuthError::AuthorizationServerMismatch {
                            expected_issuer,
                            received_issuer,
                        },
                    ))
                }
            }
        }
        Err(e) => {
            return Err(match e {
                AuthError::NoAuthorizationSupport
                | AuthError::DiscoveryRequestFailed { .. }
                | AuthError::MetadataError(_)
                | AuthError::AuthorizationServersUnavailable { .. }
                | AuthError::ProtectedResourceMetadataInvalid { .. } => {
                    no_endpoints(server, url, e)
                }
                other if !metadata_published(url).await => no_endpoints(server, url, other),
                other => failed(other),
            })
        }
    };
    manager.set_metadata(metadata.clone());

    // The client: pre-registered (the app's), else the registration kept
    // from an earlier sign-in while its redirect URI still holds, else a
    // client ID metadata document, else dynamic registration, done here so
    // a secret it returns is kept (rmcp would drop it).
    let mut client_secret = None;
    if let Some(client_id) = options.client_id.clone() {
        request = request.with_preregistered_client(client_id);
        if let Some(secret) = options.client_secret.clone() {
            request = request.with_client_secret(secret.clone());
            client_secret = Some(secret);
        }
    } else if let Some(prev) = previous.as_ref().filter(|_| kept_port).and_then(|r| {
        r.credentials
            .as_ref()
            .map(|c| (c.client_id.clone(), r.client_secret.clone()))
    }) {
        request = request.with_preregistered_client(prev.0);
        if let Some(secret) = prev.1 {
            request = request.with_client_secret(secret.clone());
            client_secret = Some(secret);
        }
    } else {
        let cimd = options.client_metadata_url.is_some()
            && metadata
                .additional_fields
                .get("client_id_metadata_document_supported")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
        if !cimd {
            let published = metadata_published(url).await;
            if metadata.registration_endpoint.is_none() && published {
                return Err(SignInError::NoRegistration {
                    server: server.into(),
                    issuer: metadata
                        .issuer
                        .clone()
                        .unwrap_or_else(|| metadata.authorization_endpoint.clone()),
                });
            }
            let scopes = if options.scopes.is_empty() {
                manager.select_scopes(None, &[])
            } else {
                options.scopes.clone()
            };
            let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let registered = manager
                .register_client(CLIENT_NAME, &redirect_uri, &scope_refs)
                .await
                .map_err(|e| {
                    if published {
                        failed(format!("Dynamic registration failed: {e}"))
                    } else {
                        no_endpoints(server, url, e)
                    }
                })?;
            request = request.with_preregistered_client(registered.client_id.clone());
            if let Some(secret) = registered.client_secret {
                request = request.with_client_secret(secret.clone());
                client_secret = Some(secret);
            }
        }
    }
    let state = match AuthorizationSession::new(manager, request).await {
        Ok(session) => OAuthState::Session(session),
        Err((_, e)) => {
            return Err(if metadata_published(url).await {
                failed(e)
            } else {
                no_endpoints(server, url, e)
            })
        }
    };
    let auth_url = state.get_authorization_url().await.map_err(failed)?;
    let auth_url = check_link(&auth_url, SIGN_IN_METADATA)?.to_string();
    let expected_state = url::Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| failed("the authorization URL has no state parameter"))?;
    Ok(PendingSignIn {
        server: server.into(),
        url: auth_url,
        redirect_uri,
        resource: url.into(),
        state,
        expected_state,
        listener,
        path,
        client_secret,
        vault: vault.clone(),
    })
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
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .ok()?;
    let response = http
        .get(well_known)
        .header("Accept", "application/json")
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let metadata: AuthorizationMetadata =
        serde_json::from_slice(&response.bytes().await.ok()?).ok()?;
    (metadata.issuer.as_deref() == Some(issuer)).then_some(metadata)
}

/// `initialize_from_store`, also for a record signed in with
/// [`SignInOptions::accept_same_origin_issuer`]: when discovery fails with an
/// issuer mismatch and the mismatching issuer is the one recorded with the
/// tokens, that same-origin metadata is used again.
async fn initialize_from_store(
    m: &mut AuthorizationManager,
    url: &str,
    recorded_issuer: Option<&str>,
) -> Result<bool, AuthError> {
    match m.initialize_from_store().await {
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) if recorded_issuer == Some(received_issuer.as_str()) => {
            let Some(metadata) = same_origin_metadata(url, &received_issuer).await else {
                return Err(AuthError::AuthorizationServerMismatch {
                    expected_issuer,
                    received_issuer,
                });
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
        Ok(m) => m
            .resolve_metadata()
            .await
            .is_ok_and(|r| r.source.is_discovered()),
        Err(_) => false,
    }
}

fn no_endpoints(server: &str, url: &str, e: AuthError) -> SignInError {
    SignInError::NoEndpoints {
        server: server.into(),
        url: url.into(),
        detail: e.to_string(),
    }
}

impl PendingSignIn {
    /// Wait for the browser to come back to the listener (up to `timeout`),
    /// check `state`, exchange the code (PKCE verifier, `iss`), and keep the
    /// tokens and the redirect port in the keychain.
    pub async fn finish(mut self, timeout: Duration) -> Result<(), SignInError> {
        let waited = tokio::time::timeout(
            timeout,
            wait_for_callback(
                &self.listener,
                &self.path,
                &self.expected_state,
                &self.server,
            ),
        )
        .await;
        let (callback, mut stream) = match waited {
            Err(_) => return Err(SignInError::TimedOut),
            Ok(r) => r?,
        };
        let exchanged = self
            .state
            .handle_callback_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await;
        if let Err(e) = exchanged {
            let err = failed(e);
            respond(
                &mut stream,
                400,
                &page(false, &self.server, &err.to_string()),
            )
            .await;
            return Err(err);
        }
        let port = self.listener.port();
        let (vault, server, resource, secret) = (
            self.vault.clone(),
            self.server.clone(),
            self.resource.clone(),
            self.client_secret.clone(),
        );
        let kept = tokio::task::spawn_blocking(move || -> Result<(), VaultError> {
            let mut rec = vault
                .record(&server)?
                .unwrap_or_else(|| OAuthRecord::new(&resource));
            rec.resource = resource;
            rec.redirect_port = port;
            rec.client_secret = secret;
            rec.signed_in_at = Some(now_secs());
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
async fn wait_for_callback(
    listener: &Listener,
    path: &str,
    expected_state: &str,
    server: &str,
) -> Result<(AuthorizationCallback, TcpStream), SignInError> {
    // Dropped with this future (timeout, cancel): every visit in progress ends.
    let mut visits = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept(), if visits.len() < MAX_VISITORS => {
                let (stream, peer) = accepted.map_err(failed)?;
                if peer.ip().is_loopback() {
                    let (path, expected_state, server) = (path.to_string(), expected_state.to_string(), server.to_string());
                    visits.spawn(async move { visit(stream, &path, &expected_state, &server).await });
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
async fn visit(
    mut stream: TcpStream,
    path: &str,
    expected_state: &str,
    server: &str,
) -> Option<Result<(AuthorizationCallback, TcpStream), SignInError>> {
    let target = read_request_target(&mut stream).await?;
    let Ok(url) = url::Url::parse(&format!("http://127.0.0.1{target}")) else {
        respond(&mut stream, 400, "Bad request").await;
        return None;
    };
    if url.path() != path {
        respond(&mut stream, 404, "Not found").await;
        return None;
    }
    let q: std::collections::HashMap<String, String> = url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if q.get("state").map(String::as_str) != Some(expected_state) {
        respond(&mut stream, 400, &stray_page()).await;
        return None;
    }
    if let Some(code) = q.get("error") {
        let detail = q
            .get("error_description")
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
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
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .ok()??;
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
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page the browser shows when it comes back.
fn page(ok: bool, server: &str, error: &str) -> String {
    let server = html_escape(server);
    if ok {
        html_page(
            &format!("Signed in to {server}"),
            "You can close this tab and return to Switchboard.",
        )
    } else {
        html_page(
            &format!("Sign-in to {server} failed"),
            &format!(
                "{}<br>Close this tab and try again from Switchboard.",
                html_escape(error)
            ),
        )
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
async fn read_record(
    vault: &Vault,
    server: &str,
    url: Option<&str>,
) -> Result<Option<OAuthRecord>, VaultError> {
    let (v, s, u) = (vault.clone(), server.to_string(), url.map(str::to_string));
    tokio::task::spawn_blocking(move || match u {
        Some(u) => v.record_for(&s, &u),
        None => v.record(&s),
    })
    .await
    .map_err(|e| VaultError::Keychain(e.to_string()))?
}

/// `server`'s record, whatever URL it was made for.
pub(crate) async fn read_record_blocking(
    vault: &Vault,
    server: &str,
) -> Result<Option<OAuthRecord>, VaultError> {
    read_record(vault, server, None).await
}

/// [`stored_manager`] at the URL the record was made for.
pub(crate) async fn stored_manager_for(
    server: &str,
    rec: &OAuthRecord,
    vault: &Vault,
) -> Result<Option<AuthorizationManager>, String> {
    stored_manager(server, &rec.resource, rec, vault).await
}

/// An rmcp manager for `url` loaded with the stored sign-in `rec`; `None`
/// when rmcp finds it unusable (e.g. the authorization server changed).
async fn stored_manager(
    server: &str,
    url: &str,
    rec: &OAuthRecord,
    vault: &Vault,
) -> Result<Option<AuthorizationManager>, String> {
    let mut m = manager_for(server, url, vault)
        .await
        .map_err(|e| format!("cannot reach the authorization server for the saved sign-in: {e}"))?;
    match initialize_from_store(&mut m, url, rec.issuer()).await {
        Ok(true) => {
            // rmcp configures a stored client without its secret; a
            // confidential client's refresh needs it.
            if let (Some(secret), Some(c)) = (&rec.client_secret, &rec.credentials) {
                let redirect = format!(
                    "http://127.0.0.1:{}/callback",
                    rec.redirect_port.unwrap_or(0)
                );
                m.configure_client(
                    OAuthClientConfig::new(c.client_id.clone(), redirect)
                        .with_client_secret(secret.clone()),
                )
                .map_err(|e| format!("the saved sign-in cannot be used: {e}"))?;
            }
            Ok(Some(m))
        }
        Ok(false) => Ok(None),
        Err(e) => Err(format!("the saved sign-in cannot be used: {e}")),
    }
}

/// A current access token from a stored sign-in (refreshed when it is about
/// to expire): for `sse` servers' header and stdio servers' `OAUTH_ACCESS_TOKEN`.
/// `Ok(None)`: nothing stored. `Err`: a message for `needs-auth`.
pub async fn access_token(server: &str, vault: &Vault) -> Result<Option<String>, String> {
    let rec = read_record(vault, server, None)
        .await
        .map_err(|e| e.to_string())?;
    let Some(rec) = rec.filter(OAuthRecord::has_tokens) else {
        return Ok(None);
    };
    let Some(m) = stored_manager(server, &rec.resource, &rec, vault).await? else {
        return Ok(None);
    };
    match m.get_access_token().await {
        Ok(t) => Ok(Some(t)),
        Err(AuthError::AuthorizationRequired) => Err(format!(
            "the saved sign-in for \"{server}\" has expired or was revoked; sign in again"
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// Sign out: the tokens, the client registration and a bearer token given
/// for the server (`add --token-stdin`) leave the keychain.
pub async fn sign_out(server: &str, vault: &Vault) -> Result<(), VaultError> {
    let (v, s) = (vault.clone(), server.to_string());
    tokio::task::spawn_blocking(move || v.remove(&s).and_then(|()| v.remove_token(&s)))
        .await
        .map_err(|e| VaultError::Keychain(e.to_string()))?
}

/// The bearer token given for `server` at `url`, if any (keychain calls
/// block: off the async threads). No keychain means none was stored.
pub async fn static_token(
    server: &str,
    url: &str,
    vault: &Vault,
) -> Result<Option<String>, VaultError> {
    let (v, s, u) = (vault.clone(), server.to_string(), url.to_string());
    match tokio::task::spawn_blocking(move || v.token_for(&s, &u))
        .await
        .map_err(|e| VaultError::Keychain(e.to_string()))?
    {
        Err(VaultError::Unavailable(_)) => Ok(None),
        other => other,
    }
}

/// Whether a sign-in is stored for `server` at `url` (no token is returned).
pub async fn is_signed_in(server: &str, url: &str, vault: &Vault) -> bool {
    read_record(vault, server, Some(url))
        .await
        .ok()
        .flatten()
        .is_some_and(|r| r.has_tokens())
}

pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A shareable browser opener (the app: tauri-plugin-opener; the CLI: `open`).
pub type BrowserOpener = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;
