//! The team gateway over HTTP, on one port:
//!
//! - `/mcp`: MCP over streamable HTTP, answered statelessly (no session is
//!   kept between requests, so any replica answers any request). Each
//!   request needs `Authorization: Bearer <access token>` from the team's
//!   identity provider; the person's groups, scopes or subject pick the
//!   profiles they may use (`access`). The token is checked and dropped
//!   here: upstream servers never see it.
//! - `/.well-known/oauth-protected-resource` (and the same with the
//!   resource URL's path appended, RFC 9728 §3.1): where clients learn which
//!   identity provider to sign in with.
//! - `/healthz` (alive), `/readyz` (servers past the startup gate, the
//!   identity provider's keys loaded, not shutting down), `/metrics`.
//!
//! Bounds against clients that send too much or too slowly: request heads
//! must arrive within the request timeout (`--request-timeout`; the
//! connection is closed otherwise), MCP bodies too (408) and below
//! [`MAX_BODY`] (413), at most [`MAX_CONNECTIONS`] connections are open and
//! at most [`MAX_IN_FLIGHT`] MCP requests answered at once (503 beyond).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures::StreamExt;
use http_body_util::BodyExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::access::Access;
use super::metrics::Metrics;
use super::oidc::{Refusal, Validator};
use crate::gateway::{Caller, Gateway, GatewaySession};

type Service = StreamableHttpService<GatewaySession, LocalSessionManager>;

/// Longest MCP request body.
pub const MAX_BODY: usize = 4 * 1024 * 1024;
/// Most MCP requests answered at once (each is a gateway session while it
/// runs); more get 503 with `Retry-After`, so a load balancer or the client
/// tries again, rather than a JSON-RPC error.
pub const MAX_IN_FLIGHT: usize = crate::gateway::MAX_SESSIONS;
/// Most connections open at once; more are closed as they arrive.
pub const MAX_CONNECTIONS: usize = 1024;
/// Most distinct sets of profiles with a service kept ready.
const MAX_SERVICES: usize = 256;
/// How long idle connections get to close once the gateway stops.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

const RESOURCE_NAME: &str = "Switchboard team gateway";

pub struct TeamState {
    gateway: Gateway,
    metrics: Arc<Metrics>,
    access: RwLock<Arc<Access>>,
    validator: RwLock<Option<Arc<Validator>>>,
    /// Why the identity provider's keys are not loaded (for `/readyz`).
    auth_problem: Mutex<Option<String>>,
    draining: AtomicBool,
    request_timeout: Duration,
    resource: String,
    issuer: String,
    metadata_url: String,
    metadata_path: String,
    config: StreamableHttpServerConfig,
    services: Mutex<HashMap<Vec<String>, Service>>,
}

/// The team gateway's HTTP side; cheap to clone.
#[derive(Clone)]
pub struct TeamHttp(Arc<TeamState>);

impl TeamHttp {
    /// The HTTP side for `opts` (its `--resource`, `--oidc-issuer` and
    /// `--request-timeout`); `stop` ends open MCP streams. The resource URL
    /// is used as written in the metadata and for tokens' `aud`.
    pub fn new(
        gateway: Gateway,
        metrics: Arc<Metrics>,
        access: Access,
        opts: &super::TeamOptions,
        stop: CancellationToken,
    ) -> Result<TeamHttp, String> {
        let resource = super::oidc_url("--resource", &opts.resource)?;
        let (raw_resource, issuer, request_timeout) =
            (&opts.resource, &opts.issuer, opts.request_timeout);
        let path = resource.path().trim_end_matches('/');
        let metadata_path = format!("/.well-known/oauth-protected-resource{path}");
        let metadata_url = format!("{}{metadata_path}", resource.origin().ascii_serialization());
        // Behind an ingress the Host is the team's own name, and every
        // request must carry a valid token: the loopback-only Host and
        // Origin checks of the desktop gateway do not apply.
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .disable_allowed_hosts()
            .disable_allowed_origins()
            .with_max_request_body_bytes(MAX_BODY)
            .with_cancellation_token(stop);
        gateway.observe_calls(metrics.clone());
        Ok(TeamHttp(Arc::new(TeamState {
            gateway,
            metrics,
            access: RwLock::new(Arc::new(access)),
            validator: RwLock::new(None),
            auth_problem: Mutex::new(Some(
                "the identity provider's metadata and keys are being read".into(),
            )),
            draining: AtomicBool::new(false),
            request_timeout,
            resource: raw_resource.to_string(),
            issuer: issuer.to_string(),
            metadata_url,
            metadata_path,
            config,
            services: Mutex::new(HashMap::new()),
        })))
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.0.metrics
    }

    pub fn gateway(&self) -> &Gateway {
        &self.0.gateway
    }

    /// The URL of this gateway's protected resource metadata.
    pub fn metadata_url(&self) -> &str {
        &self.0.metadata_url
    }

    pub fn set_validator(&self, v: Arc<Validator>) {
        *self.0.validator.write().unwrap() = Some(v);
        *self.0.auth_problem.lock().unwrap() = None;
    }

    pub fn set_auth_problem(&self, problem: String) {
        *self.0.auth_problem.lock().unwrap() = Some(problem);
    }

    /// New rules apply to the next request.
    pub fn set_access(&self, access: Access) {
        *self.0.access.write().unwrap() = Arc::new(access);
    }

    /// Stop taking MCP requests (503) and answer `/readyz` with 503.
    pub fn start_draining(&self) {
        self.0.draining.store(true, Ordering::SeqCst);
    }

    /// Until no MCP request is being answered, or `deadline` passed
    /// (`false`: some were still running).
    pub async fn wait_idle(&self, deadline: Duration) -> bool {
        let end = Instant::now() + deadline;
        loop {
            if self.0.metrics.requests_in_flight() <= 0 {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// `None` when ready; else why not.
    pub fn not_ready(&self) -> Option<String> {
        let st = &self.0;
        if st.draining.load(Ordering::SeqCst) {
            return Some("shutting down".into());
        }
        if let Some(p) = st.auth_problem.lock().unwrap().clone() {
            return Some(p);
        }
        if !st.gateway.is_ready() {
            return Some("servers are starting (the startup gate has not passed)".into());
        }
        None
    }

    pub fn router(&self) -> Router {
        let st = self.0.clone();
        let metadata_path = st.metadata_path.clone();
        let mut r = Router::new()
            .route("/mcp", axum::routing::any(mcp))
            .route(
                "/.well-known/oauth-protected-resource",
                axum::routing::get(metadata),
            )
            .route("/healthz", axum::routing::get(|| async { "ok\n" }))
            .route("/readyz", axum::routing::get(readyz))
            .route("/metrics", axum::routing::get(metrics_text));
        if metadata_path != "/.well-known/oauth-protected-resource" {
            r = r.route(&metadata_path, axum::routing::get(metadata));
        }
        r.fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                "Not Found: this Switchboard team gateway serves MCP at /mcp\n",
            )
        })
        .layer(axum::middleware::from_fn_with_state(st.clone(), observe))
        .with_state(st)
    }
}

fn endpoint(path: &str) -> &'static str {
    match path {
        "/mcp" => "mcp",
        "/healthz" => "healthz",
        "/readyz" => "readyz",
        "/metrics" => "metrics",
        p if p.starts_with("/.well-known/oauth-protected-resource") => "metadata",
        _ => "other",
    }
}

/// Counts every answer by endpoint and status.
async fn observe(State(st): State<Arc<TeamState>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let ep = endpoint(req.uri().path());
    let r = next.run(req).await;
    st.metrics
        .answered(ep, r.status().as_u16(), started.elapsed());
    r
}

async fn metadata(State(st): State<Arc<TeamState>>) -> Response {
    let body = json!({
        "resource": st.resource,
        "authorization_servers": [st.issuer],
        "bearer_methods_supported": ["header"],
        "resource_name": RESOURCE_NAME,
    });
    let mut r = axum::Json(body).into_response();
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    r
}

async fn readyz(State(st): State<Arc<TeamState>>) -> Response {
    match TeamHttp(st).not_ready() {
        None => (StatusCode::OK, "ready\n").into_response(),
        Some(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {why}\n"),
        )
            .into_response(),
    }
}

async fn metrics_text(State(st): State<Arc<TeamState>>) -> Response {
    let ready = TeamHttp(st.clone()).not_ready().is_none();
    let text = st.metrics.render(&st.gateway, ready);
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        text,
    )
        .into_response()
}

/// A refusal with a plain reason, counted under `reason`.
fn refuse(st: &TeamState, status: StatusCode, reason: &str, text: String) -> Response {
    st.metrics.refused(reason);
    (status, text).into_response()
}

/// `401`/`403` with the RFC 6750 challenge naming this gateway's metadata.
fn challenge(st: &TeamState, status: StatusCode, error: Option<(&str, &str)>) -> Response {
    let mut value = String::from("Bearer ");
    let mut body = json!({});
    if let Some((code, description)) = error {
        // Quoted-string: no quotes or backslashes inside.
        let d: String = description
            .chars()
            .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
            .collect();
        value.push_str(&format!("error=\"{code}\", error_description=\"{d}\", "));
        body = json!({ "error": code, "error_description": description });
    } else {
        body["error"] = json!("unauthorized");
        body["error_description"] = json!(format!(
            "sign in with the team's identity provider: see {}",
            st.metadata_url
        ));
    }
    value.push_str(&format!("resource_metadata=\"{}\"", st.metadata_url));
    let mut r = (status, axum::Json(body)).into_response();
    if let Ok(v) = HeaderValue::from_str(&value) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

fn bearer(req: &Request) -> Result<Option<&str>, ()> {
    let Some(v) = req.headers().get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let v = v.to_str().map_err(|_| ())?;
    match v.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => {
            let t = token.trim();
            if t.is_empty() {
                Err(())
            } else {
                Ok(Some(t))
            }
        }
        _ => Err(()),
    }
}

async fn mcp(State(st): State<Arc<TeamState>>, req: Request) -> Response {
    if st.draining.load(Ordering::SeqCst) {
        let mut r = refuse(
            &st,
            StatusCode::SERVICE_UNAVAILABLE,
            "draining",
            "Service Unavailable: this gateway replica is shutting down; send the request again (another replica answers it)\n".into(),
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    }
    let in_flight = st.metrics.in_flight();
    if st.metrics.requests_in_flight() > MAX_IN_FLIGHT as i64 {
        let mut r = refuse(
            &st,
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            format!("Service Unavailable: this gateway replica is answering its most requests at once ({MAX_IN_FLIGHT}); send the request again (another replica may answer it)\n"),
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    }
    let token = match bearer(&req) {
        Ok(Some(t)) => t.to_string(),
        Ok(None) => {
            st.metrics.refused("no_token");
            return challenge(&st, StatusCode::UNAUTHORIZED, None);
        }
        Err(()) => {
            st.metrics.refused("malformed");
            return challenge(
                &st,
                StatusCode::UNAUTHORIZED,
                Some((
                    "invalid_request",
                    "the Authorization header is not `Bearer <access token>`",
                )),
            );
        }
    };
    let validator = st.validator.read().unwrap().clone();
    let Some(validator) = validator else {
        let why = st.auth_problem.lock().unwrap().clone().unwrap_or_default();
        return refuse(
            &st,
            StatusCode::SERVICE_UNAVAILABLE,
            "idp_unavailable",
            format!("Service Unavailable: tokens cannot be checked yet: {why}\n"),
        );
    };
    let checked = Instant::now();
    let who = validator.validate(&token).await;
    st.metrics.token_checked(checked.elapsed());
    let who = match who {
        Ok(w) => w,
        Err(Refusal::KeysUnavailable) => {
            return refuse(
                &st,
                StatusCode::SERVICE_UNAVAILABLE,
                Refusal::KeysUnavailable.label(),
                format!(
                    "Service Unavailable: {}\n",
                    Refusal::KeysUnavailable.reason()
                ),
            )
        }
        Err(refusal) => {
            st.metrics.refused(refusal.label());
            return challenge(
                &st,
                StatusCode::UNAUTHORIZED,
                Some((refusal.oauth_error(), &refusal.reason())),
            );
        }
    };
    let profiles = st.access.read().unwrap().profiles_for(&who);
    if profiles.is_empty() {
        st.metrics.refused("no_access");
        return challenge(
            &st,
            StatusCode::FORBIDDEN,
            Some((
                "insufficient_scope",
                "you are signed in, but none of your groups or scopes gives access to this gateway; ask its operator to add your group to team.json",
            )),
        );
    }
    let (mut parts, body) = req.into_parts();
    // The person's token ends here (no token passthrough).
    parts.headers.remove(header::AUTHORIZATION);
    parts.extensions.insert(Caller {
        subject: who.subject,
    });
    let limited = http_body_util::Limited::new(body, MAX_BODY);
    let bytes = match tokio::time::timeout(st.request_timeout, limited.collect()).await {
        Err(_) => {
            return refuse(
                &st,
                StatusCode::REQUEST_TIMEOUT,
                "slow_request",
                format!(
                    "Request Timeout: the request's body did not arrive within {:?}\n",
                    st.request_timeout
                ),
            )
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return refuse(
                &st,
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!(
                    "Payload Too Large: an MCP request may have at most {} MiB\n",
                    MAX_BODY / (1024 * 1024)
                ),
            )
        }
        Ok(Err(_)) => {
            return refuse(
                &st,
                StatusCode::BAD_REQUEST,
                "malformed",
                "Bad Request: the request's body could not be read\n".into(),
            )
        }
        Ok(Ok(b)) => b.to_bytes(),
    };
    let req = Request::from_parts(parts, Body::from(bytes));
    let mut svc = service_for(&st, profiles);
    let response = {
        use tower_service::Service as _;
        match svc.call(req).await {
            Ok(r) => r.into_response(),
            Err(never) => match never {},
        }
    };
    match response.status() {
        s if s == StatusCode::BAD_REQUEST
            || s == StatusCode::NOT_ACCEPTABLE
            || s == StatusCode::UNSUPPORTED_MEDIA_TYPE =>
        {
            st.metrics.refused("malformed")
        }
        s if s == StatusCode::PAYLOAD_TOO_LARGE => st.metrics.refused("body_too_large"),
        _ => {}
    }
    // Counted as running until its body (a JSON answer, or a stream with
    // progress before the result) has been sent.
    let (p, b) = response.into_parts();
    let stream = b.into_data_stream().map(move |chunk| {
        let _running = &in_flight;
        chunk
    });
    Response::from_parts(p, Body::from_stream(stream))
}

fn service_for(st: &TeamState, profiles: Vec<String>) -> Service {
    let mut map = st.services.lock().unwrap();
    if let Some(s) = map.get(&profiles) {
        return s.clone();
    }
    if map.len() >= MAX_SERVICES {
        map.clear();
    }
    let gateway = st.gateway.for_team(profiles.clone());
    let svc = StreamableHttpService::new(
        move || Ok(gateway.session_over(crate::journal::Via::Http)),
        Arc::new(LocalSessionManager::default()),
        st.config.clone(),
    );
    map.insert(profiles, svc.clone());
    svc
}

/// Serves `router` on `listener` until `stop` is cancelled, with bounded
/// request heads and connections; then open connections get a moment to
/// close.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    metrics: Arc<Metrics>,
    request_timeout: Duration,
    stop: CancellationToken,
) {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::server::conn::auto;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(request_timeout)
        .max_buf_size(64 * 1024);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            a = listener.accept() => a,
        };
        let sock = match accepted {
            Ok((sock, _)) => sock,
            // Out of file descriptors and the like: try again shortly.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            metrics.refused("too_many_connections");
            drop(sock);
            continue;
        };
        let _ = sock.set_nodelay(true);
        let svc = hyper_util::service::TowerToHyperService::new(router.clone());
        let conn = builder
            .serve_connection(TokioIo::new(sock), svc)
            .into_owned();
        let conn = graceful.watch(conn);
        let m = metrics.clone();
        tokio::spawn(async move {
            let _slot = slot;
            if let Err(e) = conn.await {
                if e.downcast_ref::<hyper::Error>()
                    .is_some_and(|e| e.is_timeout())
                {
                    m.refused("slow_request");
                }
            }
        });
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(CLOSE_GRACE) => {}
    }
}
