//! Legacy HTTP+SSE MCP client transport (protocol 2024-11-05), written on
//! rmcp's [`Transport`] trait because rmcp 3.11 no longer ships one.
//!
//! The legacy transport: `GET <sse url>` opens an event stream whose first
//! event is `endpoint` (data: a URL, usually relative, for POSTs); every
//! server→client JSON-RPC message then arrives as a `message` event, and every
//! client→server message is `POST`ed to the endpoint (the server answers 202).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use rmcp::ServiceExt;
//! use switchboard_engine::sse_client::{connect_with_fallback, SseClientTransport};
//! let headers = indexmap::IndexMap::<String, String>::new();
//! // Legacy SSE only:
//! let t = SseClientTransport::connect("http://127.0.0.1:3000/sse", headers.clone(), reqwest::Client::new()).await?;
//! let client = ().serve(t).await?;
//! // `sse` servers: Streamable HTTP first, legacy SSE as fallback.
//! let t = connect_with_fallback("http://127.0.0.1:3000/sse", headers, reqwest::Client::new()).await?;
//! let kind = t.kind();
//! let client = ().serve(t).await?;
//! # Ok(()) }
//! ```

use std::{
    borrow::Cow,
    collections::HashMap,
    future::Future,
    sync::{Arc, RwLock},
    time::Duration,
};

use futures::{future::BoxFuture, stream::BoxStream, FutureExt, StreamExt};
use indexmap::IndexMap;
use reqwest::{
    header::{
        HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE,
        WWW_AUTHENTICATE,
    },
    StatusCode, Url,
};
use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    transport::{
        streamable_http_client::{StreamableHttpClientTransportConfig, StreamableHttpError},
        StreamableHttpClientTransport, Transport,
    },
    RoleClient,
};
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;

const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";
/// Bytes of an error response body kept in [`SseError::Http`].
const MAX_ERROR_BODY: usize = 1024;

/// Errors of the legacy SSE transport and of [`connect_with_fallback`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    #[error("invalid header {0}")]
    InvalidHeader(String),
    /// The server answered with a non-2xx status (GET of the event stream,
    /// POST of a message, or the Streamable HTTP probe). Display starts with
    /// `HTTP 401 Unauthorized` etc.
    #[error("HTTP {status} {reason}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Http {
        status: u16,
        /// Canonical reason phrase (`Unauthorized`), empty if unknown.
        reason: String,
        /// First bytes of the response body (lossy UTF-8, at most 1 KiB).
        body: String,
        /// The `WWW-Authenticate` challenge, if any (401/403).
        www_authenticate: Option<String>,
    },
    #[error("HTTP request failed: {0}")]
    Request(#[from] reqwest::Error),
    #[error("expected a text/event-stream response, got content type {0:?}")]
    UnexpectedContentType(Option<String>),
    #[error("no `endpoint` event within {0:?}")]
    EndpointTimeout(Duration),
    #[error("event stream ended before the `endpoint` event")]
    StreamEnded,
    #[error("event stream error: {0}")]
    Stream(String),
    #[error("endpoint {endpoint} is not on the origin of the SSE URL {sse_url}")]
    CrossOriginEndpoint { endpoint: String, sse_url: String },
    #[error("cannot serialize message: {0}")]
    Serialize(#[from] serde_json::Error),
    #[error("transport closed")]
    Closed,
    /// An error of rmcp's Streamable HTTP transport (after fallback chose it).
    #[error("streamable HTTP: {0}")]
    Streamable(#[source] Box<StreamableHttpError<reqwest::Error>>),
    /// Streamable HTTP was not usable and the legacy SSE fallback failed too.
    #[error("streamable HTTP not usable ({streamable}); legacy SSE failed: {sse}")]
    Fallback {
        streamable: String,
        sse: Box<SseError>,
    },
}

impl SseError {
    /// The HTTP status behind this error, if it is (or wraps) an HTTP failure.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            Self::Http { status, .. } => Some(*status),
            Self::Fallback { sse, .. } => sse.http_status(),
            Self::Streamable(e) => match e.as_ref() {
                StreamableHttpError::AuthRequired(_) => Some(401),
                StreamableHttpError::InsufficientScope(_) => Some(403),
                StreamableHttpError::HttpStatus(s) => Some(s.status),
                StreamableHttpError::SessionExpired => Some(404),
                _ => None,
            },
            _ => None,
        }
    }

    /// True for 401 and 403: the caller should authenticate, not retry/fall back.
    pub fn is_auth(&self) -> bool {
        matches!(self.http_status(), Some(401 | 403))
    }

    async fn from_response(resp: reqwest::Response) -> Self {
        let status = resp.status();
        let www_authenticate = resp
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut body = Vec::new();
        let mut resp = resp;
        while body.len() < MAX_ERROR_BODY {
            match resp.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                _ => break,
            }
        }
        body.truncate(MAX_ERROR_BODY);
        Self::Http {
            status: status.as_u16(),
            reason: status.canonical_reason().unwrap_or("").to_string(),
            body: String::from_utf8_lossy(&body).trim().to_string(),
            www_authenticate,
        }
    }
}

impl From<StreamableHttpError<reqwest::Error>> for SseError {
    fn from(e: StreamableHttpError<reqwest::Error>) -> Self {
        Self::Streamable(Box::new(e))
    }
}

/// Header collections accepted by [`SseClientTransport::connect`] and
/// [`connect_with_fallback`].
pub trait IntoHeaderMap {
    fn into_header_map(self) -> Result<HeaderMap, SseError>;
}

fn header_map_from_pairs<K: AsRef<str>, V: AsRef<str>>(
    pairs: impl IntoIterator<Item = (K, V)>,
) -> Result<HeaderMap, SseError> {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        let (k, v) = (k.as_ref(), v.as_ref());
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| SseError::InvalidHeader(format!("name {k:?} is not valid")))?;
        let value = HeaderValue::from_str(v).map_err(|_| {
            SseError::InvalidHeader(format!("{k:?} has a value that is not valid in HTTP"))
        })?;
        map.append(name, value);
    }
    Ok(map)
}

impl IntoHeaderMap for HeaderMap {
    fn into_header_map(self) -> Result<HeaderMap, SseError> {
        Ok(self)
    }
}
impl IntoHeaderMap for IndexMap<String, String> {
    fn into_header_map(self) -> Result<HeaderMap, SseError> {
        header_map_from_pairs(self)
    }
}
impl IntoHeaderMap for &IndexMap<String, String> {
    fn into_header_map(self) -> Result<HeaderMap, SseError> {
        header_map_from_pairs(self)
    }
}
impl IntoHeaderMap for HashMap<String, String> {
    fn into_header_map(self) -> Result<HeaderMap, SseError> {
        header_map_from_pairs(self)
    }
}
impl IntoHeaderMap for Vec<(String, String)> {
    fn into_header_map(self) -> Result<HeaderMap, SseError> {
        header_map_from_pairs(self)
    }
}
impl<const N: usize> IntoHeaderMap for [(&str, &str); N] {
    fn into_header_map(self) -> Result<HeaderMap, SseError> {
        header_map_from_pairs(self)
    }
}

/// Timeouts and reconnect policy.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SseClientConfig {
    /// How long `connect` waits for the GET and the `endpoint` event. 30 s.
    pub endpoint_timeout: Duration,
    /// Reconnect delay when the server sent no `retry:` field. 1 s.
    pub default_retry: Duration,
    /// Consecutive failed reconnects before the transport closes. 3.
    pub max_reconnects: u32,
    /// Buffered server messages not yet taken by `receive()`. 1024.
    pub channel_capacity: usize,
    /// [`connect_with_fallback`]: timeout of the Streamable HTTP probe POST. 30 s.
    pub probe_timeout: Duration,
    /// Largest event accepted, in bytes (16 MiB, as rmcp's Streamable HTTP
    /// client). A bigger one closes the stream for good: the server is
    /// refused, not buffered until memory runs out.
    pub max_event_size: usize,
}

/// The default [`SseClientConfig::max_event_size`].
pub const DEFAULT_MAX_EVENT_SIZE: usize = 16 * 1024 * 1024;

/// A server sent an event over the size cap.
#[derive(Debug, thiserror::Error)]
#[error("the server sent an SSE event larger than {limit} bytes; Switchboard refuses such events and closed the connection")]
pub struct EventTooLarge {
    pub limit: usize,
}

impl Default for SseClientConfig {
    fn default() -> Self {
        Self {
            endpoint_timeout: Duration::from_secs(30),
            default_retry: Duration::from_secs(1),
            max_reconnects: 3,
            channel_capacity: 1024,
            probe_timeout: Duration::from_secs(30),
            max_event_size: DEFAULT_MAX_EVENT_SIZE,
        }
    }
}

impl SseClientConfig {
    pub fn endpoint_timeout(mut self, d: Duration) -> Self {
        self.endpoint_timeout = d;
        self
    }
    pub fn default_retry(mut self, d: Duration) -> Self {
        self.default_retry = d;
        self
    }
    pub fn max_reconnects(mut self, n: u32) -> Self {
        self.max_reconnects = n;
        self
    }
    pub fn channel_capacity(mut self, n: usize) -> Self {
        self.channel_capacity = n.max(1);
        self
    }
    pub fn probe_timeout(mut self, d: Duration) -> Self {
        self.probe_timeout = d;
        self
    }
    pub fn max_event_size(mut self, n: usize) -> Self {
        self.max_event_size = n.max(1);
        self
    }
}

/// Fails the byte stream once one event (the bytes between two blank lines)
/// grows past `limit`, before the SSE parser buffers it.
fn cap_events<S>(
    bytes: S,
    limit: usize,
) -> impl futures::Stream<Item = Result<bytes::Bytes, std::io::Error>>
where
    S: futures::Stream<Item = Result<bytes::Bytes, reqwest::Error>>,
{
    let mut in_event = 0usize;
    let mut newline = false;
    let mut failed = false;
    bytes.map(move |chunk| {
        if failed {
            return Err(std::io::Error::other(EventTooLarge { limit }));
        }
        let chunk = chunk.map_err(std::io::Error::other)?;
        for b in chunk.iter() {
            match b {
                b'\n' if newline => in_event = 0,
                b'\n' => newline = true,
                b'\r' => {}
                _ => {
                    newline = false;
                    in_event += 1;
                }
            }
            if in_event > limit {
                failed = true;
                return Err(std::io::Error::other(EventTooLarge { limit }));
            }
        }
        Ok(chunk)
    })
}

/// The size-cap error inside an SSE stream error, if that is what it is.
fn too_large(e: &sse_stream::Error) -> Option<String> {
    match e {
        sse_stream::Error::Body(b) => b
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<EventTooLarge>())
            .map(|t| t.to_string()),
        _ => None,
    }
}

type EventStream = BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

struct Inner {
    client: reqwest::Client,
    headers: HeaderMap,
    sse_url: Url,
    endpoint: RwLock<Url>,
    /// Cancelled by `close()`/drop, and by the reader task when it gives up.
    ct: CancellationToken,
    max_event_size: usize,
    /// Why the reader stopped for good, when the server caused it.
    closed_because: Arc<std::sync::Mutex<Option<String>>>,
}

impl Inner {
    async fn open_stream(&self, last_event_id: Option<&str>) -> Result<EventStream, SseError> {
        let mut headers = self.headers.clone();
        headers.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        if let Some(id) = last_event_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            headers.insert(HeaderName::from_static("last-event-id"), id);
        }
        let resp = self
            .client
            .get(self.sse_url.clone())
            .headers(headers)
            .send()
            .await?;
        if !resp.status().is_success() {
            return Err(SseError::from_response(resp).await);
        }
        let ct = resp
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        if !ct
            .as_deref()
            .is_some_and(|c| media_type_is(c, EVENT_STREAM))
        {
            return Err(SseError::UnexpectedContentType(ct));
        }
        Ok(sse_stream::SseStream::from_bytes_stream(cap_events(
            resp.bytes_stream(),
            self.max_event_size,
        ))
        .boxed())
    }

    fn resolve_endpoint(&self, data: &str) -> Result<Url, SseError> {
        let endpoint = self
            .sse_url
            .join(data.trim())
            .map_err(|e| SseError::InvalidUrl {
                url: data.to_string(),
                reason: format!("bad endpoint: {e}"),
            })?;
        if endpoint.origin() != self.sse_url.origin() {
            return Err(SseError::CrossOriginEndpoint {
                endpoint: endpoint.to_string(),
                sse_url: self.sse_url.to_string(),
            });
        }
        Ok(endpoint)
    }

    async fn post(&self, message: ClientJsonRpcMessage) -> Result<(), SseError> {
        if self.ct.is_cancelled() {
            return Err(SseError::Closed);
        }
        let endpoint = self
            .endpoint
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut headers = self.headers.clone();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
        let body = serde_json::to_vec(&message)?;
        let resp = self
            .client
            .post(endpoint)
            .headers(headers)
            .body(body)
            .send()
            .await?;
        if resp.status().is_success() {
            Ok(())
        } else {
            Err(SseError::from_response(resp).await)
        }
    }
}

fn media_type_is(content_type: &str, want: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|m| m.trim().eq_ignore_ascii_case(want))
}

/// Reconnect bookkeeping carried across streams.
struct StreamState {
    last_event_id: Option<String>,
    retry: Duration,
}

impl StreamState {
    fn note(&mut self, ev: &sse_stream::Sse) {
        if let Some(id) = &ev.id {
            self.last_event_id = Some(id.clone());
        }
        if let Some(ms) = ev.retry {
            self.retry = Duration::from_millis(ms);
        }
    }
}

fn is_message_event(ev: &sse_stream::Sse) -> bool {
    matches!(ev.event.as_deref(), None | Some("") | Some("message"))
}

fn parse_message(ev: &sse_stream::Sse) -> Option<ServerJsonRpcMessage> {
    let data = ev.data.as_deref()?;
    if data.trim().is_empty() {
        return None;
    }
    // A malformed message cannot be delivered as a typed message; skip it.
    serde_json::from_str(data).ok()
}

/// The legacy HTTP+SSE client transport. Use with rmcp's `serve`:
/// `().serve(transport)` or `handler.serve(transport)`.
pub struct SseClientTransport {
    inner: Arc<Inner>,
    rx: mpsc::Receiver<ServerJsonRpcMessage>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for SseClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseClientTransport")
            .field("sse_url", &self.inner.sse_url.as_str())
            .field("endpoint", &self.endpoint().as_str())
            .finish()
    }
}

impl SseClientTransport {
    /// Open the event stream at `url` and wait (30 s) for the `endpoint` event.
    pub async fn connect(
        url: &str,
        headers: impl IntoHeaderMap,
        client: reqwest::Client,
    ) -> Result<Self, SseError> {
        Self::connect_with_config(url, headers, client, SseClientConfig::default()).await
    }

    /// [`connect`](Self::connect) with explicit timeouts / reconnect policy.
    pub async fn connect_with_config(
        url: &str,
        headers: impl IntoHeaderMap,
        client: reqwest::Client,
        config: SseClientConfig,
    ) -> Result<Self, SseError> {
        let sse_url = parse_http_url(url)?;
        let headers = headers.into_header_map()?;
        let inner = Arc::new(Inner {
            client,
            headers,
            endpoint: RwLock::new(sse_url.clone()),
            sse_url,
            ct: CancellationToken::new(),
            max_event_size: config.max_event_size,
            closed_because: Default::default(),
        });
        let mut state = StreamState {
            last_event_id: None,
            retry: config.default_retry,
        };
        let mut early = Vec::new();
        let handshake = async {
            let mut stream = inner.open_stream(None).await?;
            loop {
                match stream.next().await {
                    Some(Ok(ev)) => {
                        state.note(&ev);
                        if ev.event.as_deref() == Some("endpoint") {
                            let endpoint =
                                inner.resolve_endpoint(ev.data.as_deref().unwrap_or(""))?;
                            return Ok::<_, SseError>((endpoint, stream));
                        }
                        if is_message_event(&ev) {
                            early.extend(parse_message(&ev));
                        }
                    }
                    Some(Err(e)) => {
                        return Err(SseError::Stream(
                            too_large(&e).unwrap_or_else(|| e.to_string()),
                        ))
                    }
                    None => return Err(SseError::StreamEnded),
                }
            }
        };
        let (endpoint, stream) = tokio::time::timeout(config.endpoint_timeout, handshake)
            .await
            .map_err(|_| SseError::EndpointTimeout(config.endpoint_timeout))??;
        *inner.endpoint.write().unwrap_or_else(|p| p.into_inner()) = endpoint;

        let (tx, rx) = mpsc::channel(config.channel_capacity.max(early.len()).max(1));
        for m in early {
            let _ = tx.try_send(m);
        }
        let task = tokio::spawn(read_events(inner.clone(), stream, state, tx, config));
        Ok(Self {
            inner,
            rx,
            task: Some(task),
        })
    }

    /// The URL messages are POSTed to (may change after a reconnect).
    pub fn endpoint(&self) -> Url {
        self.inner
            .endpoint
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The event-stream URL given to `connect`.
    pub fn sse_url(&self) -> &Url {
        &self.inner.sse_url
    }
}

impl Drop for SseClientTransport {
    fn drop(&mut self) {
        self.inner.ct.cancel();
    }
}

/// Read events until the stream ends, reconnecting up to `max_reconnects`
/// consecutive times; returning drops `tx`, which closes `receive()`.
async fn read_events(
    inner: Arc<Inner>,
    mut stream: EventStream,
    mut state: StreamState,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
    config: SseClientConfig,
) {
    let _closed = inner.ct.clone().drop_guard();
    let mut failures: u32 = 0;
    loop {
        loop {
            let next = tokio::select! {
                _ = inner.ct.cancelled() => return,
                next = stream.next() => next,
            };
            let ev = match next {
                Some(Ok(ev)) => ev,
                Some(Err(e)) => match too_large(&e) {
                    // Not a network hiccup: reconnecting would only repeat it.
                    Some(why) => {
                        *inner
                            .closed_because
                            .lock()
                            .unwrap_or_else(|p| p.into_inner()) = Some(why);
                        return;
                    }
                    None => break,
                },
                None => break,
            };
            failures = 0;
            state.note(&ev);
            if ev.event.as_deref() == Some("endpoint") {
                match inner.resolve_endpoint(ev.data.as_deref().unwrap_or("")) {
                    Ok(url) => *inner.endpoint.write().unwrap_or_else(|p| p.into_inner()) = url,
                    // A server pointing us at another origin is not trusted further.
                    Err(_) => return,
                }
            } else if is_message_event(&ev) {
                if let Some(msg) = parse_message(&ev) {
                    if tx.send(msg).await.is_err() {
                        return;
                    }
                }
            }
        }
        // The stream dropped: reconnect with Last-Event-ID.
        loop {
            if failures >= config.max_reconnects {
                return;
            }
            failures += 1;
            tokio::select! {
                _ = inner.ct.cancelled() => return,
                _ = tokio::time::sleep(state.retry) => {}
            }
            let opened = tokio::select! {
                _ = inner.ct.cancelled() => return,
                r = inner.open_stream(state.last_event_id.as_deref()) => r,
            };
            if let Ok(s) = opened {
                stream = s;
                break;
            }
        }
    }
}

fn parse_http_url(url: &str) -> Result<Url, SseError> {
    let parsed = Url::parse(url).map_err(|e| SseError::InvalidUrl {
        url: url.to_string(),
        reason: e.to_string(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(SseError::InvalidUrl {
            url: url.to_string(),
            reason: "scheme must be http or https".into(),
        });
    }
    Ok(parsed)
}

impl Transport<RoleClient> for SseClientTransport {
    type Error = SseError;

    fn name() -> Cow<'static, str> {
        "SseClientTransport".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), SseError>> + Send + 'static {
        let inner = self.inner.clone();
        async move { inner.post(item).await }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.rx.recv()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), SseError>> + Send {
        self.inner.ct.cancel();
        self.rx.close();
        let task = self.task.take();
        async move {
            if let Some(task) = task {
                let _ = task.await;
            }
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------
// Streamable HTTP first, legacy SSE as fallback: a server configured as
// `sse` may well speak the newer transport.

/// Which transport [`connect_with_fallback`] chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpTransportKind {
    StreamableHttp,
    Sse,
}

impl HttpTransportKind {
    /// `"streamable-http"` or `"sse"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::StreamableHttp => "streamable-http",
            Self::Sse => "sse",
        }
    }
}

/// The transport [`connect_with_fallback`] returns; pass it to rmcp's `serve`.
pub enum FallbackTransport {
    StreamableHttp(StreamableHttpClientTransport<reqwest::Client>),
    Sse(SseClientTransport),
}

impl std::fmt::Debug for FallbackTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::StreamableHttp(_) => f.write_str("FallbackTransport::StreamableHttp"),
            Self::Sse(t) => f.debug_tuple("FallbackTransport::Sse").field(t).finish(),
        }
    }
}

impl FallbackTransport {
    /// Where the legacy SSE transport records why it closed for good (an
    /// event over the size cap); `None` for Streamable HTTP.
    pub fn close_reason(&self) -> Option<Arc<std::sync::Mutex<Option<String>>>> {
        match self {
            Self::StreamableHttp(_) => None,
            Self::Sse(t) => Some(t.inner.closed_because.clone()),
        }
    }

    pub fn kind(&self) -> HttpTransportKind {
        match self {
            Self::StreamableHttp(_) => HttpTransportKind::StreamableHttp,
            Self::Sse(_) => HttpTransportKind::Sse,
        }
    }
}

impl Transport<RoleClient> for FallbackTransport {
    type Error = SseError;

    fn name() -> Cow<'static, str> {
        "FallbackTransport".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), SseError>> + Send + 'static {
        let fut: BoxFuture<'static, Result<(), SseError>> = match self {
            Self::StreamableHttp(t) => Transport::<RoleClient>::send(t, item)
                .map(|r| r.map_err(SseError::from))
                .boxed(),
            Self::Sse(t) => Transport::<RoleClient>::send(t, item).boxed(),
        };
        fut
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        match self {
            Self::StreamableHttp(t) => Transport::<RoleClient>::receive(t).await,
            Self::Sse(t) => Transport::<RoleClient>::receive(t).await,
        }
    }

    async fn close(&mut self) -> Result<(), SseError> {
        match self {
            Self::StreamableHttp(t) => Transport::<RoleClient>::close(t)
                .await
                .map_err(SseError::from),
            Self::Sse(t) => Transport::<RoleClient>::close(t).await,
        }
    }
}

/// Connect an `sse` server: try Streamable HTTP (POST `initialize` to `url`),
/// fall back to the legacy SSE transport on 404/405/other non-auth 4xx or a
/// 2xx that is neither JSON nor an event stream. 401/403, 5xx and network
/// errors are returned, not fallen back from.
pub async fn connect_with_fallback(
    url: &str,
    headers: impl IntoHeaderMap,
    client: reqwest::Client,
) -> Result<FallbackTransport, SseError> {
    connect_with_fallback_config(url, headers, client, SseClientConfig::default()).await
}

/// [`connect_with_fallback`] with explicit timeouts.
pub async fn connect_with_fallback_config(
    url: &str,
    headers: impl IntoHeaderMap,
    client: reqwest::Client,
    config: SseClientConfig,
) -> Result<FallbackTransport, SseError> {
    let parsed = parse_http_url(url)?;
    let headers = headers.into_header_map()?;
    let probe = tokio::time::timeout(
        config.probe_timeout,
        probe_streamable(&client, &parsed, &headers),
    )
    .await
    .map_err(|_| SseError::EndpointTimeout(config.probe_timeout))??;
    match probe {
        Probe::Streamable => {
            let config = streamable_config(url, &headers);
            Ok(FallbackTransport::StreamableHttp(
                StreamableHttpClientTransport::with_client(client, config),
            ))
        }
        Probe::NotStreamable(why) => {
            match SseClientTransport::connect_with_config(url, headers, client, config).await {
                Ok(t) => Ok(FallbackTransport::Sse(t)),
                Err(e) => Err(SseError::Fallback {
                    streamable: why,
                    sse: Box::new(e),
                }),
            }
        }
    }
}

enum Probe {
    Streamable,
    NotStreamable(String),
}

/// POST a real `initialize` and classify the answer. A session the probe
/// opened is DELETEd again (best effort); the returned transport initializes
/// its own.
async fn probe_streamable(
    client: &reqwest::Client,
    url: &Url,
    headers: &HeaderMap,
) -> Result<Probe, SseError> {
    use rmcp::model::{
        ClientCapabilities, ClientRequest, Implementation, InitializeRequest,
        InitializeRequestParams, ProtocolVersion, RequestId,
    };
    let body = ClientJsonRpcMessage::request(
        ClientRequest::InitializeRequest(InitializeRequest::new(
            InitializeRequestParams::new(
                ClientCapabilities::default(),
                Implementation::new("switchboard-probe", env!("CARGO_PKG_VERSION")),
            )
            .with_protocol_version(ProtocolVersion::V_2025_03_26),
        )),
        RequestId::Number(0),
    );
    let mut h = headers.clone();
    h.insert(
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    h.insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
    let resp = client
        .post(url.clone())
        .headers(h)
        .json(&body)
        .send()
        .await?;
    let status = resp.status();
    if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
        || status.is_server_error()
    {
        return Err(SseError::from_response(resp).await);
    }
    if status.is_client_error() {
        return Ok(Probe::NotStreamable(format!(
            "POST initialize: HTTP {} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        )));
    }
    let ct = resp
        .headers()
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let usable = status.is_success()
        && ct
            .as_deref()
            .is_some_and(|c| media_type_is(c, JSON) || media_type_is(c, EVENT_STREAM));
    if !usable {
        return Ok(Probe::NotStreamable(format!(
            "POST initialize: HTTP {} with content type {ct:?}",
            status.as_u16()
        )));
    }
    let session = resp.headers().get("mcp-session-id").cloned();
    drop(resp);
    if let Some(session) = session {
        let mut h = headers.clone();
        h.insert(HeaderName::from_static("mcp-session-id"), session);
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            client.delete(url.clone()).headers(h).send(),
        )
        .await;
    }
    Ok(Probe::Streamable)
}

/// rmcp's Streamable HTTP config from our headers: `Authorization: Bearer X`
/// becomes `auth_header`, headers rmcp reserves are dropped.
fn streamable_config(url: &str, headers: &HeaderMap) -> StreamableHttpClientTransportConfig {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    let mut custom = HashMap::new();
    for (name, value) in headers {
        if name == AUTHORIZATION {
            if let Some(token) = value.to_str().ok().and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            }) {
                config.auth_header = Some(token.to_string());
                continue;
            }
        }
        if matches!(name.as_str(), "accept" | "mcp-session-id" | "last-event-id") {
            continue;
        }
        custom.insert(name.clone(), value.clone());
    }
    config.custom_headers = custom;
    config
}
