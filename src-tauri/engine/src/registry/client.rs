//! The registry's REST API v0.1, politely: one request at a time per call,
//! a timeout on each, at most two retries (after 0.5 s and 1.5 s, or the
//! server's `Retry-After` up to 5 s) for connection failures, 429 and 5xx,
//! and bounded response sizes. Every answer is kept on disk; when the
//! registry cannot be reached the last kept answer is returned, marked with
//! when it was fetched.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::model::{ServerList, ServerResponse};

/// The official registry.
pub const DEFAULT_REGISTRY: &str = "https://registry.modelcontextprotocol.io";
/// The environment variable that names another registry.
pub const REGISTRY_ENV: &str = "SWITCHBOARD_REGISTRY_URL";

const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest wait a `Retry-After` may ask for before we give up instead.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(5);
const RETRY_DELAYS: [Duration; 2] = [Duration::from_millis(500), Duration::from_millis(1500)];
/// A page of 100 servers is well under 1 MiB.
const MAX_BODY: usize = 8 * 1024 * 1024;
/// Most servers asked for per page.
pub const MAX_LIMIT: u32 = 100;
/// Most pages followed when listing every version of one server.
const MAX_PAGES: usize = 20;

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("the registry URL \"{0}\" is not usable: {1}")]
    BadUrl(String, String),
    #[error("the registry at {url} could not be reached ({message}), and nothing from it is cached yet; check the network or the registry URL (Settings, --registry or {REGISTRY_ENV})")]
    Unreachable { url: String, message: String },
    #[error("the registry has no server named \"{name}\"{}", version.as_ref().map(|v| format!(" with version {v}")).unwrap_or_default())]
    NotFound {
        name: String,
        version: Option<String>,
    },
    #[error("the registry at {url} answered {status}{}", message.as_ref().map(|m| format!(": {m}")).unwrap_or_default())]
    Status {
        url: String,
        status: u16,
        message: Option<String>,
    },
    #[error("the registry's answer from {url} could not be read: {message}")]
    Malformed { url: String, message: String },
}

pub type Result<T> = std::result::Result<T, RegistryError>;

/// When an answer came from the disk cache because the registry could not
/// be reached: when it was fetched and why the registry was not asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "RegistryOffline"))]
#[serde(rename_all = "camelCase")]
pub struct Offline {
    /// Milliseconds since 1970 (UTC).
    pub fetched_at_ms: u64,
    pub reason: String,
}

/// What a call got, and whether it is from the cache.
#[derive(Debug, Clone)]
pub struct Fetched<T> {
    pub value: T,
    pub offline: Option<Offline>,
}

/// What is kept on disk for one request.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheEntry {
    url: String,
    fetched_at_ms: u64,
    body: serde_json::Value,
}

/// The registry URL to use: `--registry`, else `SWITCHBOARD_REGISTRY_URL`,
/// else the one in Settings, else the official registry.
pub fn choose_base_url(flag: Option<&str>, env: Option<&str>, settings: Option<&str>) -> String {
    [flag, env, settings]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or(DEFAULT_REGISTRY)
        .to_string()
}

/// `url` as a registry base: https, or http to this computer (a registry
/// says what commands to run, so it is not read over plain http from the
/// network), without user name, password, query or fragment.
pub fn check_base_url(url: &str) -> Result<url::Url> {
    let bad = |m: &str| RegistryError::BadUrl(url.to_string(), m.to_string());
    let mut u = url::Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
    let loopback = match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match u.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err(bad(
                "plain http is accepted only on this computer (127.0.0.1, localhost); use https",
            ))
        }
        s => {
            return Err(bad(&format!(
                "\"{s}:\" is not a web address; use https://…"
            )))
        }
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err(bad("it has a user name or password in it"));
    }
    if u.query().is_some() || u.fragment().is_some() {
        return Err(bad(
            "it has a query or fragment; give only the base, e.g. https://registry.example.com",
        ));
    }
    // A base given with or without a trailing slash, or with `/v0.1`, is the same base.
    let path = u
        .path()
        .trim_end_matches('/')
        .trim_end_matches("/v0.1")
        .trim_end_matches('/')
        .to_string();
    u.set_path(&path);
    Ok(u)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A client for one registry.
#[derive(Clone)]
pub struct RegistryClient {
    base: url::Url,
    http: reqwest::Client,
    cache_dir: Option<PathBuf>,
}

impl std::fmt::Debug for RegistryClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryClient")
            .field("base", &self.base.as_str())
            .finish_non_exhaustive()
    }
}

/// One page of search results.
#[derive(Debug, Clone)]
pub struct Page {
    /// Entries that parsed (others are skipped with a note in `skipped`).
    pub servers: Vec<ServerResponse>,
    pub next_cursor: Option<String>,
    /// Entries left out because they did not parse as server.json.
    pub skipped: usize,
}

impl RegistryClient {
    /// `cache_dir`: where answers are kept (`None`: not kept, never offline).
    pub fn new(base_url: &str, cache_dir: Option<PathBuf>) -> Result<RegistryClient> {
        let base = check_base_url(base_url)?;
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::limited(3))
            .user_agent(concat!("Switchboard/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| RegistryError::BadUrl(base_url.into(), e.to_string()))?;
        Ok(RegistryClient {
            base,
            http,
            cache_dir,
        })
    }

    pub fn base_url(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    /// `base/v0.1/<segments…>?query`, each segment percent-encoded (a
    /// server name's `/` becomes `%2F`).
    fn url(&self, segments: &[&str], query: &[(&str, &str)]) -> url::Url {
        let mut u = self.base.clone();
        {
            let mut p = u.path_segments_mut().expect("http(s) URLs have paths");
            p.pop_if_empty().push("v0.1");
            for s in segments {
                p.push(s);
            }
        }
        if !query.is_empty() {
            u.query_pairs_mut()
                .extend_pairs(query.iter().filter(|(_, v)| !v.is_empty()));
        }
        u
    }

    /// One page of the latest version of servers matching `search` (all
    /// when empty), after `cursor`. Deleted servers are left out.
    pub async fn search(
        &self,
        search: &str,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Fetched<Page>> {
        let limit = limit.clamp(1, MAX_LIMIT).to_string();
        let url = self.url(
            &["servers"],
            &[
                ("search", search.trim()),
                ("limit", &limit),
                ("cursor", cursor.unwrap_or("")),
                ("version", "latest"),
            ],
        );
        let got = self.get(&url).await?;
        let page = parse_list(&url, got.value, true)?;
        Ok(Fetched {
            value: page,
            offline: got.offline,
        })
    }

    /// Every published version of `name`, newest first as the registry
    /// lists them, following cursors (deleted ones included, marked).
    pub async fn versions(&self, name: &str) -> Result<Fetched<Vec<ServerResponse>>> {
        let mut out = vec![];
        let mut cursor: Option<String> = None;
        let mut offline = None;
        for _ in 0..MAX_PAGES {
            let url = self.url(
                &["servers", name, "versions"],
                &[("cursor", cursor.as_deref().unwrap_or(""))],
            );
            let got = match self.get(&url).await {
                Err(RegistryError::Status { status: 404, .. }) => {
                    return Err(RegistryError::NotFound {
                        name: name.into(),
                        version: None,
                    })
                }
                r => r?,
            };
            offline = offline.or(got.offline);
            let page = parse_list(&url, got.value, false)?;
            out.extend(page.servers);
            match page.next_cursor {
                Some(c) if Some(&c) != cursor.as_ref() => cursor = Some(c),
                _ => break,
            }
        }
        Ok(Fetched {
            value: out,
            offline,
        })
    }

    /// One version of `name` (`latest` for the newest).
    pub async fn version(&self, name: &str, version: &str) -> Result<Fetched<ServerResponse>> {
        let url = self.url(&["servers", name, "versions", version], &[]);
        let got = match self.get(&url).await {
            Err(RegistryError::Status { status: 404, .. }) => {
                return Err(RegistryError::NotFound {
                    name: name.into(),
                    version: (version != "latest").then(|| version.to_string()),
                })
            }
            r => r?,
        };
        let entry: ServerResponse =
            serde_json::from_value(got.value).map_err(|e| RegistryError::Malformed {
                url: url.to_string(),
                message: e.to_string(),
            })?;
        Ok(Fetched {
            value: entry,
            offline: got.offline,
        })
    }

    fn cache_path(&self, url: &url::Url) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        Some(dir.join(format!(
            "{}.json",
            hex::encode(&Sha256::digest(url.as_str().as_bytes())[..16])
        )))
    }

    /// GET `url` as JSON (retrying politely); on a network failure, the
    /// cached answer if there is one.
    async fn get(&self, url: &url::Url) -> Result<Fetched<serde_json::Value>> {
        match self.fetch(url).await {
            Ok(body) => {
                if let Some(path) = self.cache_path(url) {
                    let entry = CacheEntry {
                        url: url.to_string(),
                        fetched_at_ms: now_ms(),
                        body: body.clone(),
                    };
                    // The cache is a convenience: failing to keep an answer is not an error.
                    let text = serde_json::to_string(&entry).unwrap_or_default();
                    let _ = crate::writer::atomic::write_atomic(
                        &path,
                        text.as_bytes(),
                        crate::writer::atomic::Expected::Any,
                    );
                }
                Ok(Fetched {
                    value: body,
                    offline: None,
                })
            }
            Err(
                e @ (RegistryError::Unreachable { .. }
                | RegistryError::Status {
                    status: 429 | 500..=599,
                    ..
                }),
            ) => {
                let cached = self
                    .cache_path(url)
                    .and_then(|p| std::fs::read(p).ok())
                    .and_then(|b| serde_json::from_slice::<CacheEntry>(&b).ok());
                match cached {
                    Some(c) if c.url == url.as_str() => {
                        let reason = match &e {
                            RegistryError::Unreachable { message, .. } => message.clone(),
                            other => other.to_string(),
                        };
                        Ok(Fetched {
                            value: c.body,
                            offline: Some(Offline {
                                fetched_at_ms: c.fetched_at_ms,
                                reason,
                            }),
                        })
                    }
                    _ => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    async fn fetch(&self, url: &url::Url) -> Result<serde_json::Value> {
        let mut attempt = 0;
        loop {
            let wait = match self.fetch_once(url).await {
                Ok(v) => return Ok(v),
                Err((e, retry_after)) => {
                    let retryable = matches!(
                        e,
                        RegistryError::Unreachable { .. }
                            | RegistryError::Status {
                                status: 429 | 500..=599,
                                ..
                            }
                    );
                    if !retryable
                        || attempt >= RETRY_DELAYS.len()
                        || retry_after.is_some_and(|d| d > MAX_RETRY_AFTER)
                    {
                        return Err(e);
                    }
                    retry_after.unwrap_or(RETRY_DELAYS[attempt])
                }
            };
            attempt += 1;
            tokio::time::sleep(wait).await;
        }
    }

    async fn fetch_once(
        &self,
        url: &url::Url,
    ) -> std::result::Result<serde_json::Value, (RegistryError, Option<Duration>)> {
        let unreachable = |e: reqwest::Error| {
            // Short and in plain words: the URL is shown elsewhere, the chain's last cause says what failed.
            let e = e.without_url();
            let message = if e.is_timeout() {
                "timed out".to_string()
            } else if e.is_connect() {
                format!("could not connect: {}", root_cause(&e))
            } else {
                error_chain(&e)
            };
            (
                RegistryError::Unreachable {
                    url: self.base_url().to_string(),
                    message,
                },
                None,
            )
        };
        let mut resp = self
            .http
            .get(url.clone())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(unreachable)?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(unreachable)? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err((
                    RegistryError::Malformed {
                        url: url.to_string(),
                        message: format!(
                            "the answer is larger than {} MiB",
                            MAX_BODY / 1024 / 1024
                        ),
                    },
                    None,
                ));
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            // A registry's error text is shown, short and as plain text.
            let message = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| {
                    v.get("detail")
                        .or_else(|| v.get("title"))
                        .or_else(|| v.get("error"))
                        .and_then(|m| m.as_str())
                        .map(String::from)
                })
                .map(|m| m.chars().filter(|c| !c.is_control()).take(200).collect());
            return Err((
                RegistryError::Status {
                    url: url.to_string(),
                    status: status.as_u16(),
                    message,
                },
                retry_after,
            ));
        }
        serde_json::from_slice(&body).map_err(|e| {
            (
                RegistryError::Malformed {
                    url: url.to_string(),
                    message: e.to_string(),
                },
                None,
            )
        })
    }
}

/// The innermost cause's text (`Connection refused (os error 111)`).
fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cur: &dyn std::error::Error = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = inner.source();
    }
    s
}

fn parse_list(url: &url::Url, body: serde_json::Value, hide_deleted: bool) -> Result<Page> {
    let list: ServerList = serde_json::from_value(body).map_err(|e| RegistryError::Malformed {
        url: url.to_string(),
        message: e.to_string(),
    })?;
    let mut servers = vec![];
    let mut skipped = 0;
    for v in list.servers {
        match serde_json::from_value::<ServerResponse>(v) {
            Ok(s) if hide_deleted && s.official().status == "deleted" => {}
            Ok(s) => servers.push(s),
            Err(_) => skipped += 1,
        }
    }
    let next_cursor = list.metadata.next_cursor.filter(|c| !c.is_empty());
    Ok(Page {
        servers,
        next_cursor,
        skipped,
    })
}
