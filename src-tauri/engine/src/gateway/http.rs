//! The gateway over streamable HTTP: `http://ADDR/mcp` for every
//! server, `http://ADDR/mcp/<server>` for one, on loopback only. Every
//! request needs `Authorization: Bearer <token>` (401 otherwise), and a
//! `Host` and `Origin` of this machine (403 otherwise: a web page that
//! rebinds its DNS name to 127.0.0.1 must not reach the user's servers).
//! rmcp answers 404 for an unknown or ended session.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::token::GatewayToken;
use super::{Gateway, GatewaySession};

type Service = StreamableHttpService<GatewaySession, LocalSessionManager>;

/// How long open streams get to end after the gateway is told to stop.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// `ADDR` as given to `serve --http`: an IP address or `localhost`, with a
/// port; refused unless it is a loopback address.
pub fn loopback_addr(addr: &str) -> Result<SocketAddr, String> {
    let parsed = match addr.parse::<SocketAddr>() {
        Ok(a) => Some(a),
        Err(_) => match addr.rsplit_once(':') {
            Some((h, p)) if h.eq_ignore_ascii_case("localhost") => p
                .parse::<u16>()
                .ok()
                .map(|p| SocketAddr::from(([127, 0, 0, 1], p))),
            _ => None,
        },
    };
    let a = parsed
        .ok_or_else(|| format!("\"{addr}\" is not an address with a port (e.g. 127.0.0.1:8765)"))?;
    if !a.ip().is_loopback() {
        return Err(format!(
            "{addr} is not a loopback address: the gateway serves every server you signed in to, so it listens only on this computer (127.0.0.1, ::1 or localhost)"
        ));
    }
    Ok(a)
}

struct HttpState {
    gateway: Gateway,
    token: GatewayToken,
    config: StreamableHttpServerConfig,
    aggregate: Service,
    /// `/mcp/<server>` services, made on first use (one per served server).
    scoped: Mutex<HashMap<String, Service>>,
    /// `/mcp/p/<profile>` services, made on first use (by lower-case name).
    profiles: Mutex<HashMap<String, Service>>,
}

fn service(gateway: Gateway, config: StreamableHttpServerConfig) -> Service {
    StreamableHttpService::new(
        move || Ok(gateway.session_over(crate::journal::Via::Http)),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// The router: `/mcp`, `/mcp/{server}`, every request checked first.
pub fn router(
    gateway: Gateway,
    token: GatewayToken,
    bound: SocketAddr,
    stop: CancellationToken,
) -> Router {
    let ip = match bound.ip() {
        IpAddr::V6(v6) => format!("[{v6}]"),
        v4 => v4.to_string(),
    };
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts([
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
            "[::1]".to_string(),
            ip,
        ])
        .with_cancellation_token(stop);
    let state = Arc::new(HttpState {
        aggregate: service(gateway.clone(), config.clone()),
        gateway,
        token,
        config,
        scoped: Mutex::new(HashMap::new()),
        profiles: Mutex::new(HashMap::new()),
    });
    Router::new()
        .route("/mcp", axum::routing::any(aggregate))
        .route("/mcp/{server}", axum::routing::any(scoped))
        .route("/mcp/p/{profile}", axum::routing::any(profile))
        .fallback(|| async { (StatusCode::NOT_FOUND, "Not Found: the Switchboard gateway is at /mcp (every server), /mcp/<server> (one server) and /mcp/p/<profile> (one profile)") })
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

async fn aggregate(State(st): State<Arc<HttpState>>, req: Request) -> Response {
    use tower_service::Service as _;
    let mut svc = st.aggregate.clone();
    match svc.call(req).await {
        Ok(r) => r.into_response(),
        Err(never) => match never {},
    }
}

async fn scoped(
    State(st): State<Arc<HttpState>>,
    Path(server): Path<String>,
    req: Request,
) -> Response {
    use tower_service::Service as _;
    // Servers are registered as the gateway starts: a client quicker than
    // that waits for the startup gate before hearing "no such server".
    if !st.gateway.serves(&server) {
        st.gateway.wait_ready().await;
    }
    if !st.gateway.serves(&server) {
        return (StatusCode::NOT_FOUND, format!("Not Found: no server \"{server}\" in this Switchboard gateway (unknown, or excluded from the gateway)")).into_response();
    }
    let mut svc = {
        let mut map = st.scoped.lock().unwrap();
        map.entry(server.clone())
            .or_insert_with(|| service(st.gateway.scoped(&server), st.config.clone()))
            .clone()
    };
    match svc.call(req).await {
        Ok(r) => r.into_response(),
        Err(never) => match never {},
    }
}

async fn profile(
    State(st): State<Arc<HttpState>>,
    Path(name): Path<String>,
    req: Request,
) -> Response {
    use tower_service::Service as _;
    let known = st
        .gateway
        .watch_switches()
        .borrow()
        .profile(&name)
        .is_some();
    if !known {
        return (StatusCode::NOT_FOUND, format!("Not Found: no profile \"{name}\" in this Switchboard gateway (see `switchboard profile list`)")).into_response();
    }
    let mut svc = {
        let mut map = st.profiles.lock().unwrap();
        map.entry(name.to_lowercase())
            .or_insert_with(|| service(st.gateway.for_profile(&name), st.config.clone()))
            .clone()
    };
    match svc.call(req).await {
        Ok(r) => r.into_response(),
        Err(never) => match never {},
    }
}

/// A loopback host name or address (any 127.x, ::1, localhost).
fn loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost") || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `host[:port]` naming this machine, with any port (as rmcp's and the
/// MCP SDKs' own checks do): DNS rebinding shows in the host name, which
/// is the attacker's, while a client that reaches the gateway through a
/// port forward (`ssh -L`, a container's port mapping, a local proxy)
/// names the forwarded port, not the one the gateway listens on.
fn host_ok(value: &str) -> bool {
    let host = match value.rsplit_once(':') {
        // `[::1]:8080`, `127.0.0.1:8080`, `localhost:8080`; a bare `::1` has colons but no brackets.
        Some((h, p))
            if !h.is_empty()
                && (value.starts_with('[') || !h.contains(':'))
                && !h.ends_with(':') =>
        {
            if p.parse::<u16>().is_err() {
                return false;
            }
            h
        }
        _ => value,
    };
    loopback_host(host)
}

/// A browser page's `Origin` on this machine (any port: local tools such as
/// an MCP inspector run on their own).
fn origin_ok(value: &str) -> bool {
    let Some((scheme, rest)) = value.split_once("://") else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return false;
    }
    let authority = rest.split('/').next().unwrap_or_default();
    let host = if authority.starts_with('[') {
        authority.split_inclusive(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    loopback_host(host)
}

async fn guard(State(st): State<Arc<HttpState>>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !host_ok(host) {
        return (StatusCode::FORBIDDEN, "Forbidden: the Host header does not name this Switchboard gateway (DNS rebinding protection)").into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        if !origin.to_str().is_ok_and(origin_ok) {
            return (StatusCode::FORBIDDEN, "Forbidden: requests from web pages of other sites are refused (Origin is not this computer)").into_response();
        }
    }
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok());
    if !st.token.accepts(auth) {
        let mut r = (StatusCode::UNAUTHORIZED, "Unauthorized: the Switchboard gateway needs `Authorization: Bearer <token>`; `switchboard gateway token` prints the token").into_response();
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"Switchboard gateway\""),
        );
        return r;
    }
    next.run(req).await
}

/// Serve `router` on `listener` until `stop` is cancelled; open streams get
/// [`SHUTDOWN_GRACE`] to end.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let graceful = stop.clone();
    let server = std::future::IntoFuture::into_future(
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { graceful.cancelled().await }),
    );
    tokio::pin!(server);
    tokio::select! {
        r = &mut server => r,
        _ = async { stop.cancelled().await; tokio::time::sleep(SHUTDOWN_GRACE).await } => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_served() {
        assert_eq!(loopback_addr("127.0.0.1:0").unwrap().port(), 0);
        assert!(loopback_addr("[::1]:8080").is_ok());
        assert!(loopback_addr("localhost:9").is_ok());
        assert!(loopback_addr("0.0.0.0:8080")
            .unwrap_err()
            .contains("not a loopback address"));
        assert!(loopback_addr("192.168.1.2:80").is_err());
        assert!(loopback_addr("example.com:80").is_err());
        assert!(loopback_addr("127.0.0.1").is_err());
    }

    #[test]
    fn host_and_origin_must_be_this_machine() {
        // Any port: a port forward names its own.
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "[::1]:8080",
            "LOCALHOST:8080",
            "127.0.0.1:8081",
            "127.0.0.1",
            "localhost",
            "[::1]",
            "::1",
        ] {
            assert!(host_ok(ok), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "",
            "evil.example",
            "127.0.0.1.evil.example:8080",
            "127.0.0.1:http",
            "127.0.0.1:99999",
            "localhost.evil.example:80",
            "[::1]:",
        ] {
            assert!(!host_ok(bad), "{bad}");
        }
        for ok in [
            "http://localhost:5173",
            "http://127.0.0.1",
            "https://[::1]:3000",
        ] {
            assert!(origin_ok(ok), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "null",
            "http://localhost.evil.example",
            "file://",
            "http://127.0.0.1.evil.example:80",
        ] {
            assert!(!origin_ok(bad), "{bad}");
        }
    }
}
