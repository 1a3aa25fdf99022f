//! The team gateway (`switchboard serve --config DIR --oidc-issuer URL
//! --resource URL`) as a process, against the identity-provider stand-in
//! (`switchboard_tests::idp`) and the fixture servers: what a person signed
//! in with the team's identity provider gets, what every bad token, bad
//! request and slow client gets, the folder followed while serving,
//! `/metrics`, two replicas behind a round-robin proxy serving one Python
//! SDK session, the SDK's own OAuth sign-in, and SIGTERM during calls.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_tests::eventually;
use switchboard_tests::idp::{Idp, IdpOptions, Mint, Signing, User};
use tokio::io::AsyncBufReadExt;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const T: Duration = Duration::from_secs(60);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}
/// The gateway's public URL in tests that do not go through the proxy.
const RESOURCE: &str = "https://mcp.team.example/mcp";

/// A team's `--config` folder and a state folder.
struct Team {
    dir: tempfile::TempDir,
}

impl Team {
    fn new() -> Team {
        let dir = tempfile::tempdir().unwrap();
        let fixture = switchboard_tests::fixture_server_path();
        let config = dir.path().join("config");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(dir.path().join("secrets")).unwrap();
        std::fs::write(dir.path().join("secrets/fx-token"), "s3cr3t-from-a-file\n").unwrap();
        let t = Team { dir };
        t.write(
            "servers.json",
            &json!({ "mcpServers": {
                "fx": { "command": fixture, "args": ["--name", "fx", "--require-env", "FX_TOKEN"],
                        "env": { "FX_TOKEN": format!("${{file:{}}}", t.dir.path().join("secrets/fx-token").display()) } },
                "other": { "command": fixture, "args": ["--name", "other"] }
            }}),
        );
        t.write(
            "settings.json",
            &json!({ "profiles": { "list": [
                { "name": "dev", "servers": [{ "name": "fx" }] },
                { "name": "ops", "servers": [{ "name": "other", "tools": { "allow": ["echo", "sleep", "add"] } }] }
            ]}}),
        );
        t.write(
            "team.json",
            &json!({ "access": [
                { "group": "engineering", "profiles": ["dev"] },
                { "group": "operations", "profiles": ["ops"] },
                { "scope": "mcp:all", "profiles": ["Everything"] }
            ]}),
        );
        t
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    fn state(&self, n: usize) -> PathBuf {
        self.dir.path().join(format!("state-{n}"))
    }

    fn write(&self, name: &str, v: &Value) {
        let p = self.config().join(name);
        let tmp = p.with_extension("tmp");
        std::fs::write(&tmp, serde_json::to_string_pretty(v).unwrap()).unwrap();
        std::fs::rename(tmp, p).unwrap();
    }

    /// A replica (state folder `n`), ready (`/readyz` 200).
    async fn start(&self, n: usize, idp: &Idp, resource: &str) -> Replica {
        self.start_with(n, idp, resource, &[]).await
    }

    /// The same with environment variables (a Kubernetes Secret's keys).
    async fn start_with(
        &self,
        n: usize,
        idp: &Idp,
        resource: &str,
        env: &[(&str, &str)],
    ) -> Replica {
        let mut c = tokio::process::Command::new(BIN);
        c.args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(self.config())
            .args(["--oidc-issuer", &idp.url, "--resource", resource, "--state"])
            .arg(self.state(n))
            .args(["--request-timeout", "1", "--shutdown-grace", "20"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.state(n))
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = c.spawn().unwrap();
        let (line, _) = switchboard_tests::first_line(&mut child, T).await;
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("{e}: the first line was {line:?}"));
        let url = v["url"].as_str().unwrap().to_string();
        let base = url.trim_end_matches("/mcp").to_string();
        let r = Replica {
            pid: v["pid"].as_u64().unwrap() as u32,
            child,
            base,
            http: reqwest::Client::builder()
                .user_agent("team-test/1.0 (reqwest)")
                .build()
                .unwrap(),
        };
        r.wait_ready().await;
        r
    }
}

struct Replica {
    child: tokio::process::Child,
    pid: u32,
    base: String,
    http: reqwest::Client,
}

impl Replica {
    async fn get(&self, path: &str) -> reqwest::Response {
        self.http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
    }

    async fn wait_ready(&self) {
        eventually(T, ms(50), || async {
            let r = self.get("/readyz").await;
            if r.status() == 200 {
                return Ok(());
            }
            Err(format!("not ready: {}", r.text().await.unwrap()))
        })
        .await
    }

    /// One MCP request (stateless JSON-RPC), with `token` if given.
    async fn rpc(&self, token: Option<&str>, method: &str, params: Value) -> reqwest::Response {
        let mut r = self
            .http
            .post(format!("{}/mcp", self.base))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        r.send().await.unwrap()
    }

    /// The tool names `token`'s person sees.
    async fn tools(&self, token: &str) -> Vec<String> {
        let r = self.rpc(Some(token), "tools/list", json!({})).await;
        assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
        let v: Value = r.json().await.unwrap();
        let mut names: Vec<String> = v["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    }

    async fn call(&self, token: &str, tool: &str, args: Value) -> Value {
        let r = self
            .rpc(
                Some(token),
                "tools/call",
                json!({ "name": tool, "arguments": args }),
            )
            .await;
        assert_eq!(r.status(), 200);
        let headers = format!("{:?}", r.headers());
        let body = r.text().await.unwrap();
        serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{tool}: {e}: not JSON: {body:?} ({headers})"))
    }

    /// `/metrics`' value of the series `name{labels}` (0 when absent).
    async fn metric(&self, series: &str) -> f64 {
        let text = self.get("/metrics").await.text().await.unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or(0.0)
    }

    async fn metrics(&self) -> String {
        self.get("/metrics").await.text().await.unwrap()
    }
}

async fn idp(resource: &str) -> Idp {
    Idp::start_with(IdpOptions {
        default_resource: resource.into(),
        user: User::new("ann", &["engineering"]),
        ..Default::default()
    })
    .await
}

fn person(idp: &Idp, sub: &str, groups: &[&str]) -> String {
    idp.mint(Mint::new().claim("sub", sub).claim("groups", json!(groups)))
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn metadata_health_and_challenges() {
    let idp = idp(RESOURCE).await;
    let team = Team::new();
    let g = team.start(0, &idp, RESOURCE).await;
    assert_eq!(g.get("/healthz").await.status(), 200);
    // RFC 9728: at the root and with the resource's path appended.
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let r = g.get(path).await;
        assert_eq!(r.status(), 200, "{path}");
        let m: Value = r.json().await.unwrap();
        assert_eq!(m["resource"], RESOURCE);
        assert_eq!(m["authorization_servers"], json!([idp.url]));
        assert_eq!(m["bearer_methods_supported"], json!(["header"]));
    }
    // No token: 401 naming the metadata.
    let r = g.rpc(None, "tools/list", json!({})).await;
    assert_eq!(r.status(), 401);
    let challenge = r.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        challenge,
        "Bearer resource_metadata=\"https://mcp.team.example/.well-known/oauth-protected-resource/mcp\""
    );
    assert_eq!(g.get("/nothing").await.status(), 404);
    let m = g.metrics().await;
    assert!(
        m.contains("switchboard_refusals_total{reason=\"no_token\"} 1"),
        "{m}"
    );
    assert!(
        m.contains("switchboard_upstream_up{server=\"fx\",status=\"connected\"} 1"),
        "{m}"
    );
    assert!(m.contains("switchboard_ready 1"), "{m}");
}

#[tokio::test]
async fn each_person_gets_their_groups_tools_and_the_journal_names_them() {
    let idp = idp(RESOURCE).await;
    let team = Team::new();
    let g = team.start(0, &idp, RESOURCE).await;
    let ann = person(&idp, "ann@example.com", &["engineering"]);
    let bob = person(&idp, "bob@example.com", &["operations"]);
    let both = person(&idp, "cat@example.com", &["engineering", "operations"]);
    let dev = g.tools(&ann).await;
    assert!(dev.iter().all(|t| t.starts_with("mcp_fx_")), "{dev:?}");
    assert!(dev.contains(&"mcp_fx_echo".to_string()));
    // ops: only three tools of "other".
    assert_eq!(
        g.tools(&bob).await,
        vec!["mcp_other_add", "mcp_other_echo", "mcp_other_sleep"]
    );
    let union = g.tools(&both).await;
    assert_eq!(union.len(), dev.len() + 3, "{union:?}");
    // A scope can give access too.
    let admin = idp.mint(
        Mint::new()
            .claim("sub", "root@example.com")
            .claim("groups", json!([]))
            .claim("scope", "openid mcp:all"),
    );
    assert!(g.tools(&admin).await.contains(&"mcp_other_fail".into()));
    // fx runs with the secret read from the mounted file (it refuses to
    // start without FX_TOKEN), and answers ann's call.
    // Served statelessly, it promises nothing it would push on a session.
    let r = g
        .rpc(
            Some(&ann),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "probe", "version": "1"}}),
        )
        .await;
    let v: Value = r.json().await.unwrap();
    let caps = &v["result"]["capabilities"];
    assert_eq!(v["result"]["serverInfo"]["name"], "switchboard-team", "{v}");
    assert!(
        caps["tools"].is_object() && caps["resources"].is_object(),
        "{v}"
    );
    for promise in [
        &caps["tools"]["listChanged"],
        &caps["resources"]["listChanged"],
        &caps["resources"]["subscribe"],
        &caps["prompts"]["listChanged"],
        &caps["logging"],
    ] {
        assert!(promise.is_null() || promise == &json!(false), "{v}");
    }
    // A 2026-07-28 client names itself in each request's _meta.
    let r = g
        .rpc(
            Some(&ann),
            "tools/call",
            json!({ "name": "mcp_fx_echo", "arguments": {"text": "hi"},
                "_meta": {"io.modelcontextprotocol/clientInfo": {"name": "Claude Code", "version": "2.1.0"}} }),
        )
        .await;
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["result"]["content"][0]["text"], "hi", "{v}");
    // bob may not call ann's tools.
    let v = g.call(&bob, "mcp_fx_echo", json!({"text": "hi"})).await;
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Unknown tool"),
        "{v}"
    );
    let v = g.call(&bob, "mcp_other_echo", json!({"text": "ops"})).await;
    assert_eq!(v["result"]["content"][0]["text"], "ops", "{v}");
    // The journal records who called; /metrics counts per server and tool
    // and carries no subject.
    let entries = eventually(T, ms(100), || async {
        let o = tokio::process::Command::new(BIN)
            .args(["activity", "--json", "--limit", "20"])
            .env_clear()
            .env("HOME", team.state(0))
            .output()
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        if text.contains("bob@example.com") && text.contains("ann@example.com") {
            return Ok(text);
        }
        Err(format!("journal: {text}"))
    })
    .await;
    let mut users: Vec<(String, String, String, String)> = entries
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .flat_map(|v| match v {
            Value::Array(a) => a,
            v => vec![v],
        })
        .filter(|e| e["kind"] == "tool")
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (s("user"), s("name"), s("client"), s("clientVersion"))
        })
        .collect();
    users.sort();
    // Stateless requests have no session: the client is the one the request
    // names, else its User-Agent.
    assert_eq!(
        users,
        vec![
            (
                "ann@example.com".into(),
                "echo".into(),
                "Claude Code".into(),
                "2.1.0".into()
            ),
            (
                "bob@example.com".into(),
                "echo".into(),
                "team-test".into(),
                "1.0".into()
            )
        ],
        "{entries}"
    );
    let m = g.metrics().await;
    assert!(
        m.contains("switchboard_tool_calls_total{outcome=\"ok\",server=\"fx\",tool=\"echo\"} 1"),
        "{m}"
    );
    assert!(!m.contains("example.com"), "no person in /metrics: {m}");
}

/// No token passthrough: a remote upstream that accepts only the gateway's
/// own secret (from the environment, as a Kubernetes Secret gives it)
/// answers the person's call, so what it got was that secret, not the
/// person's access token; and the person's token never appears in what the
/// gateway keeps (the journal).
#[tokio::test]
async fn upstreams_get_the_gateways_own_secret_never_the_persons_token() {
    let idp = idp(RESOURCE).await;
    let team = Team::new();
    let upstream = switchboard_tests::spawn_http_fixture(&[
        "--name",
        "remote",
        "--require-bearer",
        "upstream-service-secret",
    ])
    .await
    .unwrap();
    team.write(
        "servers.json",
        &json!({ "mcpServers": {
            "remote": { "url": upstream.url, "headers": { "Authorization": "Bearer ${env:REMOTE_TOKEN}" } }
        }}),
    );
    team.write(
        "settings.json",
        &json!({ "profiles": { "list": [ { "name": "dev", "servers": [{ "name": "remote" }] } ] }}),
    );
    let g = team
        .start_with(
            0,
            &idp,
            RESOURCE,
            &[("REMOTE_TOKEN", "upstream-service-secret")],
        )
        .await;
    let ann = person(&idp, "ann@example.com", &["engineering"]);
    let v = g
        .call(
            &ann,
            "mcp_remote_echo",
            json!({"text": "via the service account"}),
        )
        .await;
    assert_eq!(
        v["result"]["content"][0]["text"], "via the service account",
        "{v}"
    );
    let data = team.state(0).join(".local/share/switchboard");
    let mut kept = Vec::new();
    for f in std::fs::read_dir(&data).unwrap() {
        let f = f.unwrap().path();
        if f.is_file() {
            kept.extend(std::fs::read(&f).unwrap());
        }
    }
    assert!(!kept.is_empty(), "the journal is in {}", data.display());
    let signature = ann.rsplit('.').next().unwrap();
    assert!(
        !String::from_utf8_lossy(&kept).contains(signature),
        "the access token is not kept"
    );
}

#[tokio::test]
async fn every_bad_token_is_refused_with_its_reason_and_counted() {
    let idp = idp(RESOURCE).await;
    let team = Team::new();
    let g = team.start(0, &idp, RESOURCE).await;
    let good = person(&idp, "ann@example.com", &["engineering"]);
    let t = now();
    let long = "x".repeat(20 * 1024);
    let cases: Vec<(&str, String, u16, &str)> = vec![
        (
            "forged",
            idp.mint(Mint::new().signed(Signing::Foreign)),
            401,
            "bad_signature",
        ),
        (
            "alg none",
            idp.mint(Mint::new().signed(Signing::None)),
            401,
            "algorithm_refused",
        ),
        (
            "HS256 keyed with the public key",
            idp.mint(Mint::new().signed(Signing::Hs256WithPublicKey)),
            401,
            "algorithm_refused",
        ),
        (
            "unknown kid",
            idp.mint(Mint::new().signed(Signing::UnknownKid)),
            401,
            "unknown_key",
        ),
        (
            "expired",
            idp.mint(
                Mint::new()
                    .claim("exp", t - 3600)
                    .claim("iat", t - 7200)
                    .claim("nbf", t - 7200),
            ),
            401,
            "expired",
        ),
        (
            "not yet valid",
            idp.mint(Mint::new().claim("nbf", t + 3600)),
            401,
            "not_yet_valid",
        ),
        (
            "wrong audience",
            idp.mint(Mint::new().claim("aud", "https://other.example/mcp")),
            401,
            "wrong_audience",
        ),
        (
            "wrong issuer",
            idp.mint(Mint::new().claim("iss", "https://evil.example")),
            401,
            "wrong_issuer",
        ),
        (
            "no subject",
            idp.mint(Mint::new().without("sub")),
            401,
            "no_subject",
        ),
        ("not a JWT", "not.a.jwt".to_string(), 401, "malformed"),
        ("oversized", long, 401, "too_large"),
        (
            "outside every group",
            person(&idp, "eve@example.com", &["visitors"]),
            403,
            "no_access",
        ),
    ];
    for (what, token, status, _) in &cases {
        let r = g.rpc(Some(token), "tools/list", json!({})).await;
        assert_eq!(r.status().as_u16(), *status, "{what}");
        let challenge = r.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_string();
        let body: Value = r.json().await.unwrap();
        let expected = if *status == 403 {
            "insufficient_scope"
        } else {
            "invalid_token"
        };
        assert_eq!(body["error"], expected, "{what}: {body}");
        assert!(
            challenge.contains(&format!("error=\"{expected}\""))
                && challenge.contains("resource_metadata="),
            "{what}: {challenge}"
        );
        let said = body["error_description"].as_str().unwrap();
        assert!(
            !said.is_empty() && !said.contains(token.as_str()),
            "{what}: {said}"
        );
        // The good token still works in between: nothing else is slowed or refused.
        assert!(!g.tools(&good).await.is_empty(), "after {what}");
    }
    let m = g.metrics().await;
    for (what, _, _, reason) in &cases {
        assert!(
            m.contains(&format!(
                "switchboard_refusals_total{{reason=\"{reason}\"}}"
            )),
            "{what} counted as {reason}: {m}"
        );
    }
}

#[tokio::test]
async fn rotated_keys_are_picked_up_and_dropped_keys_stop_working() {
    let idp = idp(RESOURCE).await;
    let team = Team::new();
    let g = team.start(0, &idp, RESOURCE).await;
    let good = person(&idp, "ann@example.com", &["engineering"]);
    assert!(!g.tools(&good).await.is_empty());
    // Keys rotate: a token of the new key works at once (the gateway
    // re-reads the JWKS for an unknown kid); without the old key in the
    // JWKS, the old key's tokens stop working.
    let before = idp.jwks_fetches();
    idp.rotate(switchboard_tests::idp::KeyKind::Es256, false)
        .await;
    let fresh = person(&idp, "ann@example.com", &["engineering"]);
    assert!(!g.tools(&fresh).await.is_empty());
    assert!(idp.jwks_fetches() > before);
    let r = g.rpc(Some(&good), "tools/list", json!({})).await;
    assert_eq!(r.status(), 401, "the old key is gone");
}

#[tokio::test]
async fn oversized_malformed_and_slow_requests_are_cut_off_and_others_go_on() {
    use tokio::io::AsyncWriteExt;
    let idp = idp(RESOURCE).await;
    let team = Team::new();
    let g = team.start(0, &idp, RESOURCE).await;
    let ann = person(&idp, "ann@example.com", &["engineering"]);
    // Oversized body: 413.
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "mcp_fx_echo", "arguments": {"text": "y".repeat(5 * 1024 * 1024)}}});
    // (Each on its own connection: the gateway closes the one it refused
    // a body on without reading it.)
    let r = reqwest::Client::new()
        .post(format!("{}/mcp", g.base))
        .bearer_auth(&ann)
        .header("Accept", "application/json, text/event-stream")
        .json(&big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    // Malformed JSON-RPC: 400.
    let r = reqwest::Client::new()
        .post(format!("{}/mcp", g.base))
        .bearer_auth(&ann)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    // rmcp answers a body it cannot parse with 415 and the parser's reason.
    let status = r.status().as_u16();
    let said = r.text().await.unwrap();
    assert!(
        matches!(status, 400 | 415) && said.contains("deserialize"),
        "{status} {said}"
    );
    let addr = g.base.trim_start_matches("http://").to_string();
    // Slow loris: a head that never ends is cut off (connection closed);
    // a body that never ends gets 408. Meanwhile calls go on.
    let mut head = tokio::net::TcpStream::connect(&addr).await.unwrap();
    head.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    let mut body = tokio::net::TcpStream::connect(&addr).await.unwrap();
    body.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ann}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    for i in 0..5 {
        let v = g
            .call(&ann, "mcp_fx_echo", json!({"text": format!("still {i}")}))
            .await;
        assert_eq!(v["result"]["content"][0]["text"], format!("still {i}"));
    }
    let mut got = String::new();
    tokio::time::timeout(T, async {
        use tokio::io::AsyncReadExt;
        let _ = body.read_to_string(&mut got).await;
    })
    .await
    .unwrap();
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    let mut rest = vec![];
    let n = tokio::time::timeout(T, async {
        use tokio::io::AsyncReadExt;
        head.read_to_end(&mut rest).await
    })
    .await
    .unwrap();
    assert!(n.is_ok(), "the slow head's connection was closed");
    eventually(T, ms(50), || async {
        let slow = g
            .metric("switchboard_refusals_total{reason=\"slow_request\"}")
            .await;
        let large = g
            .metric("switchboard_refusals_total{reason=\"body_too_large\"}")
            .await;
        let bad = g
            .metric("switchboard_refusals_total{reason=\"malformed\"}")
            .await;
        if slow >= 2.0 && large >= 1.0 && bad >= 1.0 {
            return Ok(());
        }
        Err(format!("slow {slow}, large {large}, malformed {bad}"))
    })
    .await;
}

/// More MCP requests at once than a replica answers get 503 with
/// `Retry-After` (a load balancer or the client sends them again), counted
/// as `busy`; the others are answered.
#[tokio::test]
async fn a_replica_at_its_most_requests_answers_503_busy() {
    let idp = idp(RESOURCE).await;
    let team = Team::new();
    let g = team.start(0, &idp, RESOURCE).await;
    let ann = person(&idp, "ann@example.com", &["engineering"]);
    let most = switchboard_engine::team::http::MAX_IN_FLIGHT;
    let mut calls = Vec::new();
    for _ in 0..most + 20 {
        let (http, base, token) = (reqwest::Client::new(), g.base.clone(), ann.clone());
        calls.push(tokio::spawn(async move {
            let r = http
                .post(format!("{base}/mcp"))
                .bearer_auth(token)
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2025-11-25")
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "mcp_fx_sleep", "arguments": {"ms": 3000}}}))
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let retry = r.headers().contains_key("retry-after");
            (status, retry, r.text().await.unwrap())
        }));
    }
    let (mut ok, mut busy) = (0, 0);
    for c in calls {
        let (status, retry, text) = c.await.unwrap();
        match status {
            200 => {
                assert!(text.contains("slept"), "{text}");
                ok += 1;
            }
            503 => {
                assert!(retry && text.contains("most requests at once"), "{text}");
                busy += 1;
            }
            s => panic!("{s}: {text}"),
        }
    }
    assert!(busy >= 1 && ok >= most / 2, "{ok} answered, {busy} busy");
    assert!(
        g.metric("switchboard_refusals_total{reason=\"busy\"}")
            .await
            >= busy as f64,
        "busy counted"
    );
}

#[tokio::test]
async fn the_folder_is_followed_including_a_configmap_swap() {
    let idp = idp(RESOURCE).await;
    let team = Team::new();
    // A ConfigMap volume: the files are links into `..data`, a link to a
    // timestamped folder that Kubernetes swaps atomically.
    let mount = team.dir.path().join("mount");
    std::fs::create_dir_all(mount.join("..v1")).unwrap();
    for f in ["servers.json", "settings.json", "team.json"] {
        std::fs::copy(team.config().join(f), mount.join("..v1").join(f)).unwrap();
        std::os::unix::fs::symlink(format!("..data/{f}"), mount.join(f)).unwrap();
    }
    std::os::unix::fs::symlink("..v1", mount.join("..data")).unwrap();
    std::fs::remove_dir_all(team.config()).unwrap();
    std::os::unix::fs::symlink(&mount, team.config()).unwrap();
    let g = team.start(0, &idp, RESOURCE).await;
    let bob = person(&idp, "bob@example.com", &["operations"]);
    assert_eq!(g.tools(&bob).await.len(), 3);
    // A call that runs while the servers change.
    let running = {
        let (http, base, token) = (g.http.clone(), g.base.clone(), bob.clone());
        tokio::spawn(async move {
            let r = http
                .post(format!("{base}/mcp"))
                .bearer_auth(token)
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2025-11-25")
                .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": "mcp_other_sleep", "arguments": {"ms": 4000}}}))
                .send()
                .await
                .unwrap();
            let kind = r.headers()[reqwest::header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .to_string();
            (kind, r.text().await.unwrap())
        })
    };
    // The new version: operations gets dev too, a new server, and one more
    // tool of "other" (all three files change in one swap).
    std::fs::create_dir_all(mount.join("..v2")).unwrap();
    let mut servers: Value =
        serde_json::from_str(&std::fs::read_to_string(mount.join("..v1/servers.json")).unwrap())
            .unwrap();
    servers["mcpServers"]["third"] = json!({
        "command": switchboard_tests::fixture_server_path(), "args": ["--name", "third"]
    });
    std::fs::write(mount.join("..v2/servers.json"), servers.to_string()).unwrap();
    std::fs::write(
        mount.join("..v2/settings.json"),
        json!({ "profiles": { "list": [
            { "name": "dev", "servers": [{ "name": "fx" }] },
            { "name": "ops", "servers": [
                { "name": "other", "tools": { "allow": ["echo", "sleep", "add", "fail"] } },
                { "name": "third" }
            ] }
        ]}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        mount.join("..v2/team.json"),
        json!({ "access": [ { "group": "operations", "profiles": ["ops", "dev"] } ] }).to_string(),
    )
    .unwrap();
    std::os::unix::fs::symlink("..v2", mount.join("..data_tmp")).unwrap();
    std::fs::rename(mount.join("..data_tmp"), mount.join("..data")).unwrap();
    eventually(T, ms(100), || async {
        let tools = g.tools(&bob).await;
        if ["mcp_fx_echo", "mcp_other_fail", "mcp_third_echo"]
            .iter()
            .all(|t| tools.iter().any(|x| x == t))
        {
            return Ok(());
        }
        Err(format!("bob's tools: {tools:?}"))
    })
    .await;
    // Its answer is its result alone, as JSON: nothing about the change (a
    // list_changed) is pushed on a stateless request.
    assert!(
        !running.is_finished(),
        "the call was still running when the servers changed"
    );
    let (kind, body) = running.await.unwrap();
    assert!(kind.starts_with("application/json"), "{kind}: {body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["result"]["content"][0]["text"], "slept", "{v}");
    // A broken team.json keeps the rules that were there, and says so.
    std::fs::create_dir_all(mount.join("..v3")).unwrap();
    for f in ["servers.json", "settings.json"] {
        std::fs::copy(mount.join("..v2").join(f), mount.join("..v3").join(f)).unwrap();
    }
    std::fs::write(mount.join("..v3/team.json"), "{ broken").unwrap();
    std::os::unix::fs::symlink("..v3", mount.join("..data_tmp")).unwrap();
    std::fs::rename(mount.join("..data_tmp"), mount.join("..data")).unwrap();
    eventually(T, ms(100), || async {
        let refused = g
            .metric("switchboard_config_reloads_total{result=\"refused\"}")
            .await;
        if refused >= 1.0 {
            return Ok(());
        }
        Err("the broken team.json is not counted as refused".to_string())
    })
    .await;
    assert!(g.tools(&bob).await.contains(&"mcp_fx_echo".to_string()));
}

/// Whether a process with this pid is gone (or a zombie).
fn gone(pid: u32) -> bool {
    switchboard_tests::killed(pid)
}

#[tokio::test]
async fn sigterm_lets_running_calls_finish_refuses_new_ones_and_leaves_no_process() {
    let idp = idp(RESOURCE).await;
    let team = Team::new();
    let mut g = team.start(0, &idp, RESOURCE).await;
    let ann = person(&idp, "ann@example.com", &["engineering"]);
    let v = g.call(&ann, "mcp_fx_pid", json!({})).await;
    let server_pid: u32 = v["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    // Three calls that take 1.5 s each are running...
    let mut running = vec![];
    for _ in 0..3 {
        let (http, base, token) = (g.http.clone(), g.base.clone(), ann.clone());
        running.push(tokio::spawn(async move {
            http.post(format!("{base}/mcp"))
                .bearer_auth(token)
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2025-11-25")
                .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": "mcp_fx_sleep", "arguments": {"ms": 1500}}}))
                .send()
                .await
                .unwrap()
        }));
    }
    eventually(T, ms(10), || async {
        let n = g.metric("switchboard_mcp_requests_in_flight").await;
        if n >= 3.0 {
            return Ok(());
        }
        Err(format!("{n} requests in flight, not 3"))
    })
    .await;
    // ...when Kubernetes sends SIGTERM.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(g.pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    eventually(T, ms(10), || async {
        let r = g.rpc(Some(&ann), "tools/list", json!({})).await;
        if r.status() == 503 {
            assert!(r.text().await.unwrap().contains("shutting down"));
            return Ok(());
        }
        Err(format!("no 503 after SIGTERM: {}", r.status()))
    })
    .await;
    assert_eq!(g.get("/readyz").await.status(), 503);
    for r in running {
        let r = r.await.unwrap();
        assert_eq!(r.status(), 200);
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["result"]["content"][0]["text"], "slept", "{v}");
    }
    let status = tokio::time::timeout(T, g.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
    eventually(T, ms(20), || async {
        if gone(server_pid) {
            return Ok(());
        }
        Err(format!("the upstream server {server_pid} was left running"))
    })
    .await;
}

async fn python_client(py: &Path, args: &[&str]) -> Value {
    let mut c = tokio::process::Command::new(py);
    c.arg(switchboard_tests::python_dir().join("team_client.py"))
        .args(args)
        .kill_on_drop(true);
    let o = tokio::time::timeout(T, c.output())
        .await
        .expect("the Python client finished in time")
        .unwrap();
    assert!(
        o.status.success(),
        "python {args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[tokio::test]
async fn two_replicas_behind_round_robin_serve_one_python_session_and_its_oauth_sign_in() {
    let Some(py) = switchboard_tests::python("two_replicas_behind_round_robin") else {
        return;
    };
    let proxy = switchboard_tests::round_robin::RoundRobin::start().await;
    let resource = format!("{}/mcp", proxy.base());
    let idp = idp(&resource).await;
    let team = Team::new();
    let (a, b) = tokio::join!(
        team.start(1, &idp, &resource),
        team.start(2, &idp, &resource)
    );
    proxy.set_backends(vec![a.base.clone(), b.base.clone()]);
    let ann = person(&idp, "ann@example.com", &["engineering"]);
    let v = python_client(&py, &["session", &resource, &ann, "10"]).await;
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"mcp_fx_echo") && tools.iter().all(|t| t.starts_with("mcp_fx_")),
        "{v}"
    );
    let echoed: Vec<String> = (0..10).map(|i| format!("call {i}")).collect();
    assert_eq!(v["echoed"], json!(echoed));
    assert_eq!(v["sum"]["sum"], 42);
    let counts = proxy.counts();
    assert!(
        counts.iter().all(|c| *c >= 3),
        "both replicas answered the one session: {counts:?}"
    );
    assert!(v["sessionId"].is_null(), "no session to keep: {v}");
    // A replica goes away in the middle of a session (a rollout, a node
    // drained): the Service stops sending it requests, and the same session
    // goes on with the other replica; nothing needs re-establishing.
    {
        use tokio::io::AsyncWriteExt;
        let mut c = tokio::process::Command::new(&py);
        c.arg(switchboard_tests::python_dir().join("team_client.py"))
            .args(["session", &resource, &ann, "5", "pause"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = c.spawn().unwrap();
        let (mut line, mut out) = switchboard_tests::first_line(&mut child, T).await;
        assert_eq!(line.trim(), r#"{"paused": 5}"#);
        let mut a = a;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(a.pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        tokio::time::timeout(T, a.child.wait())
            .await
            .unwrap()
            .unwrap();
        proxy.set_backends(vec![b.base.clone()]);
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"go on\n").await.unwrap();
        drop(stdin);
        line.clear();
        tokio::time::timeout(T, out.read_line(&mut line))
            .await
            .unwrap()
            .unwrap();
        let status = tokio::time::timeout(T, child.wait())
            .await
            .unwrap()
            .unwrap();
        let mut err = String::new();
        {
            use tokio::io::AsyncReadExt;
            let _ = child.stderr.take().unwrap().read_to_string(&mut err).await;
        }
        assert!(status.success(), "{err}");
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let echoed: Vec<String> = (0..10).map(|i| format!("call {i}")).collect();
        assert_eq!(v["echoed"], json!(echoed), "{v}");
        assert_eq!(v["sum"]["sum"], 42);
    }
    // The SDK's own OAuth client: 401 → metadata → the identity provider →
    // registration → code with PKCE → token for this resource; the person
    // (bob, operations) sees only the ops profile's tools.
    idp.set_user("bob@example.com", &["operations"]);
    let v = python_client(&py, &["oauth", &resource]).await;
    assert_eq!(
        v["tools"],
        json!(["mcp_other_add", "mcp_other_echo", "mcp_other_sleep"]),
        "{v}"
    );
    assert_eq!(v["echoed"], "signed in");
}
