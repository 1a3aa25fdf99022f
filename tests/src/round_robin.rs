//! A round-robin HTTP proxy for tests: each request goes to the next
//! backend in turn, as a Kubernetes Service without session affinity
//! spreads requests over a Deployment's pods. Bodies stream both ways (a
//! server-sent event stream passes through as it comes). The proxy binds
//! first, so its URL is known before the backends start (they are told it
//! as their public URL); `set_backends` points it at them.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

#[derive(Default)]
struct Inner {
    backends: Mutex<Vec<String>>,
    next: AtomicUsize,
    /// Requests sent to each backend, by index.
    counts: Mutex<Vec<usize>>,
}

pub struct RoundRobin {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

impl RoundRobin {
    /// Listens on 127.0.0.1 (any free port), with no backend yet (502).
    pub async fn start() -> RoundRobin {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let inner = Arc::new(Inner::default());
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(120))
            .build()
            .unwrap();
        let app = axum::Router::new()
            .fallback(forward)
            .with_state((inner.clone(), client));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        RoundRobin { addr, inner, task }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Backends as base URLs (`http://127.0.0.1:PORT`).
    pub fn set_backends(&self, backends: Vec<String>) {
        *self.inner.counts.lock().unwrap() = vec![0; backends.len()];
        *self.inner.backends.lock().unwrap() = backends;
    }

    /// Requests forwarded to each backend so far.
    pub fn counts(&self) -> Vec<usize> {
        self.inner.counts.lock().unwrap().clone()
    }
}

impl Drop for RoundRobin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(
    State((inner, client)): State<(Arc<Inner>, reqwest::Client)>,
    req: Request,
) -> Response {
    let (i, backend) = {
        let backends = inner.backends.lock().unwrap();
        if backends.is_empty() {
            return (StatusCode::BAD_GATEWAY, "no backend").into_response();
        }
        let i = inner.next.fetch_add(1, Ordering::SeqCst) % backends.len();
        (i, backends[i].clone())
    };
    inner.counts.lock().unwrap()[i] += 1;
    let (parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let mut out = client.request(parts.method.clone(), format!("{backend}{path}"));
    for (name, value) in &parts.headers {
        if name != axum::http::header::HOST && name != axum::http::header::CONTENT_LENGTH {
            out = out.header(name, value);
        }
    }
    let body = reqwest::Body::wrap_stream(body.into_data_stream());
    match out.body(body).send().await {
        Ok(r) => {
            let mut b = Response::builder().status(r.status());
            for (name, value) in r.headers() {
                if name != axum::http::header::CONTENT_LENGTH
                    && name != axum::http::header::TRANSFER_ENCODING
                {
                    b = b.header(name, value);
                }
            }
            b.body(Body::from_stream(r.bytes_stream())).unwrap()
        }
        Err(e) => (StatusCode::BAD_GATEWAY, format!("backend {backend}: {e}")).into_response(),
    }
}
