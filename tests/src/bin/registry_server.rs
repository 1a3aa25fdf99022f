//! A stand-in for the MCP Registry's v0.1 API over a folder of fixture
//! entries (tests/fixtures/registry/*.json, each `{"server": server.json,
//! "_meta": {...official status...}}`), for the engine, CLI and E2E tests:
//!
//! - `GET /v0.1/servers?search=&limit=&cursor=&version=latest`: servers whose
//!   name, title or description contains `search` (case-insensitive), sorted
//!   by name then version; `version=latest` keeps each server's latest entry.
//!   Deleted entries are listed as the real registry lists them (with their
//!   status), so clients must hide them. Pages of `limit` (default 30, at
//!   most 100); `metadata.nextCursor` is the last entry's `name:version`.
//! - `GET /v0.1/servers/{name}/versions`: every version of one server
//!   (name URL-encoded), paged with `?cursor=` and `?limit=` the same way.
//! - `GET /v0.1/servers/{name}/versions/{version}` (`latest` allowed).
//! - `GET /stats`: `{"requests": N}` requests served to /v0.1 so far.
//!
//! Prints `LISTENING http://ADDR` as its first stdout line.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use clap::Parser;
use serde_json::{json, Value};

#[derive(Parser, Debug)]
#[command(name = "registry-server")]
struct Args {
    /// Address to listen on (port 0 picks one).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: String,
    /// Folder of fixture entries.
    #[arg(long, value_name = "DIR")]
    fixtures: Option<PathBuf>,
    /// The first N requests to /v0.1 answer 503 (clients must retry).
    #[arg(long, default_value_t = 0)]
    fail_first: u64,
    /// Every request to /v0.1 answers 503 (a registry that is down).
    #[arg(long)]
    always_fail: bool,
}

struct Registry {
    /// Every entry, sorted by name then publish order.
    entries: Vec<Value>,
    requests: AtomicU64,
    fail_first: u64,
    always_fail: bool,
}

fn name_of(e: &Value) -> &str {
    e["server"]["name"].as_str().unwrap_or_default()
}
fn version_of(e: &Value) -> &str {
    e["server"]["version"].as_str().unwrap_or_default()
}
fn official(e: &Value) -> &Value {
    &e["_meta"]["io.modelcontextprotocol.registry/official"]
}
fn key(e: &Value) -> String {
    format!("{}:{}", name_of(e), version_of(e))
}

impl Registry {
    fn load(dir: &std::path::Path) -> anyhow::Result<Registry> {
        let mut entries = vec![];
        for f in std::fs::read_dir(dir)? {
            let p = f?.path();
            if p.extension().is_some_and(|x| x == "json") {
                let v: Value = serde_json::from_slice(&std::fs::read(&p)?)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
                entries.push(v);
            }
        }
        entries.sort_by(|a, b| {
            (
                name_of(a),
                official(a)["publishedAt"].as_str().unwrap_or_default(),
            )
                .cmp(&(
                    name_of(b),
                    official(b)["publishedAt"].as_str().unwrap_or_default(),
                ))
        });
        Ok(Registry {
            entries,
            requests: AtomicU64::new(0),
            fail_first: 0,
            always_fail: false,
        })
    }

    /// 503 for the first `fail_first` requests, or always.
    fn gate(&self) -> Option<Response> {
        let n = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        (self.always_fail || n <= self.fail_first).then(|| (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"title": "Service Unavailable", "detail": "fixture registry: failing on purpose"}))).into_response())
    }

    fn latest<'a>(&'a self, name: &str) -> Option<&'a Value> {
        let all: Vec<&Value> = self.entries.iter().filter(|e| name_of(e) == name).collect();
        all.iter()
            .find(|e| official(e)["isLatest"] == json!(true))
            .copied()
            .or(all.last().copied())
    }
}

fn page(items: Vec<&Value>, q: &HashMap<String, String>) -> Value {
    let limit = q
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let start = match q.get("cursor").filter(|c| !c.is_empty()) {
        Some(c) => items
            .iter()
            .position(|e| key(e) == *c)
            .map(|i| i + 1)
            .unwrap_or(items.len()),
        None => 0,
    };
    let slice: Vec<Value> = items
        .iter()
        .skip(start)
        .take(limit)
        .map(|e| (*e).clone())
        .collect();
    let more = start + slice.len() < items.len();
    let mut metadata = json!({"count": slice.len()});
    if more {
        metadata["nextCursor"] = json!(key(slice.last().unwrap()));
    }
    json!({"servers": slice, "metadata": metadata})
}

async fn list(
    State(r): State<Arc<Registry>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(fail) = r.gate() {
        return fail;
    }
    let search = q
        .get("search")
        .map(|s| s.to_lowercase())
        .unwrap_or_default();
    let latest_only = q.get("version").is_some_and(|v| v == "latest");
    let items: Vec<&Value> = r
        .entries
        .iter()
        .filter(|e| {
            let s = &e["server"];
            let text = format!(
                "{} {} {}",
                name_of(e),
                s["title"].as_str().unwrap_or_default(),
                s["description"].as_str().unwrap_or_default()
            )
            .to_lowercase();
            text.contains(&search)
        })
        .filter(|e| !latest_only || r.latest(name_of(e)).is_some_and(|l| std::ptr::eq(l, *e)))
        .collect();
    Json(page(items, &q)).into_response()
}

async fn versions(
    State(r): State<Arc<Registry>>,
    Path(name): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if let Some(fail) = r.gate() {
        return fail;
    }
    let items: Vec<&Value> = r
        .entries
        .iter()
        .filter(|e| name_of(e) == name)
        .rev()
        .collect();
    if items.is_empty() {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"title": "Not Found", "detail": "Server not found"})),
        )
            .into_response();
    }
    Json(page(items, &q)).into_response()
}

async fn version(
    State(r): State<Arc<Registry>>,
    Path((name, version)): Path<(String, String)>,
) -> Response {
    if let Some(fail) = r.gate() {
        return fail;
    }
    let found = if version == "latest" {
        r.latest(&name)
    } else {
        r.entries
            .iter()
            .find(|e| name_of(e) == name && version_of(e) == version)
    };
    match found {
        Some(e) => Json(e.clone()).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({"title": "Not Found", "detail": "Server not found"})),
        )
            .into_response(),
    }
}

async fn stats(State(r): State<Arc<Registry>>) -> Json<Value> {
    Json(json!({"requests": r.requests.load(Ordering::SeqCst)}))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let dir = args
        .fixtures
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/registry"));
    let mut registry = Registry::load(&dir)?;
    registry.fail_first = args.fail_first;
    registry.always_fail = args.always_fail;
    let app = Router::new()
        .route("/v0.1/servers", get(list))
        .route("/v0.1/servers/{name}/versions", get(versions))
        .route("/v0.1/servers/{name}/versions/{version}", get(version))
        .route("/stats", get(stats))
        .with_state(Arc::new(registry));
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    println!("LISTENING http://{}", listener.local_addr()?);
    use std::io::Write;
    std::io::stdout().flush()?;
    axum::serve(listener, app).await?;
    Ok(())
}
