//! The `oauth-server` test binary: the whole OAuth 2.1 + MCP flow driven by hand
//! with reqwest, and rmcp's own `auth` client (`OAuthState` + `AuthClient`)
//! against it.

use std::time::Duration;

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
use reqwest::{header, redirect, StatusCode};
use rmcp::{
    model::{CallToolRequestParams, CallToolResult},
    service::RunningService,
    transport::{
        auth::{AuthClient, AuthorizationRequest, OAuthState},
        streamable_http_client::StreamableHttpClientTransportConfig,
        StreamableHttpClientTransport,
    },
    RoleClient, ServiceExt,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use switchboard_tests::{spawn_oauth_server, HttpFixture};

const T: Duration = Duration::from_secs(20);
const REDIRECT: &str = "http://127.0.0.1:45678/callback";

struct Server {
    _fx: HttpFixture,
    base: String,
    mcp: String,
    http: reqwest::Client,
}

async fn start(args: &[&str]) -> Server {
    let fx = spawn_oauth_server(args).await.expect("start oauth-server");
    assert!(
        fx.url.starts_with("http://127.0.0.1:") && fx.url.ends_with("/mcp"),
        "{}",
        fx.url
    );
    Server {
        base: fx.base_url().to_string(),
        mcp: fx.url.clone(),
        _fx: fx,
        http: reqwest::Client::builder()
            .redirect(redirect::Policy::none())
            .build()
            .unwrap(),
    }
}

fn pkce() -> (String, String) {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).unwrap();
    let verifier = URL_SAFE_NO_PAD.encode(bytes);
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

fn form(pairs: &[(&str, &str)]) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}

fn query(url: &str) -> std::collections::HashMap<String, String> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

impl Server {
    async fn get_json(&self, path: &str) -> (StatusCode, Value) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn control(&self, what: &str) -> Value {
        let r = self
            .http
            .post(format!("{}/_control/{what}", self.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "control {what}");
        r.json().await.unwrap()
    }

    async fn stats(&self) -> Value {
        self.get_json("/_control/stats").await.1
    }

    async fn register(&self, meta: Value) -> (StatusCode, Value) {
        let r = self
            .http
            .post(format!("{}/register", self.base))
            .json(&meta)
            .send()
            .await
            .unwrap();
        (r.status(), r.json().await.unwrap_or(Value::Null))
    }

    async fn register_public(&self) -> String {
        let (status, body) = self
            .register(json!({
                "client_name": "by-hand",
                "redirect_uris": [REDIRECT],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["client_id"].as_str().unwrap().to_string()
    }

    /// GET /authorize; returns (status, Location header, body).
    async fn authorize(&self, params: &[(&str, &str)]) -> (StatusCode, Option<String>, String) {
        let r = self
            .http
            .get(format!("{}/authorize?{}", self.base, form(params)))
            .send()
            .await
            .unwrap();
        let status = r.status();
        let location = r
            .headers()
            .get(header::LOCATION)
            .map(|v| v.to_str().unwrap().to_string());
        (status, location, r.text().await.unwrap())
    }

    /// A fresh code for `client_id` with the given PKCE challenge.
    async fn code(&self, client_id: &str, challenge: &str) -> String {
        let (status, location, body) = self
            .authorize(&[
                ("response_type", "code"),
                ("client_id", client_id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", challenge),
                ("code_challenge_method", "S256"),
                ("state", "st-1"),
                ("scope", "mcp"),
                ("resource", &self.mcp),
            ])
            .await;
        assert_eq!(status, StatusCode::FOUND, "{body}");
        let location = location.expect("Location");
        assert!(location.starts_with(&format!("{REDIRECT}?")), "{location}");
        let q = query(&location);
        assert_eq!(q["state"], "st-1");
        assert_eq!(q["iss"], self.base);
        q["code"].clone()
    }

    async fn token_with(
        &self,
        pairs: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> (StatusCode, Value) {
        let mut req = self
            .http
            .post(format!("{}/token", self.base))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form(pairs));
        if let Some((id, secret)) = basic {
            req = req.basic_auth(id, Some(secret));
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        if status == StatusCode::OK {
            assert_eq!(r.headers()[header::CACHE_CONTROL], "no-store");
        }
        (status, r.json().await.unwrap())
    }

    async fn token(&self, pairs: &[(&str, &str)]) -> (StatusCode, Value) {
        self.token_with(pairs, None).await
    }

    async fn exchange(&self, client_id: &str, code: &str, verifier: &str) -> (StatusCode, Value) {
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", client_id),
            ("code_verifier", verifier),
            ("resource", &self.mcp),
        ])
        .await
    }

    async fn refresh(&self, client_id: &str, refresh_token: &str) -> (StatusCode, Value) {
        self.token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client_id),
            ("resource", &self.mcp),
        ])
        .await
    }

    /// POST an `initialize` to /mcp with an optional bearer token: (status, WWW-Authenticate).
    async fn raw_initialize(&self, token: Option<&str>) -> (StatusCode, Option<String>) {
        let mut req = self
            .http
            .post(&self.mcp)
            .header(header::ACCEPT, "application/json, text/event-stream")
            .json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "0"}}
            }));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.unwrap();
        let www = r
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .map(|v| v.to_str().unwrap().to_string());
        (r.status(), www)
    }

    /// rmcp client with a fixed bearer token (`auth_header`).
    async fn connect_with_token(
        &self,
        token: &str,
    ) -> anyhow::Result<RunningService<RoleClient, ()>> {
        let transport = StreamableHttpClientTransport::with_client(
            reqwest::Client::new(),
            StreamableHttpClientTransportConfig::with_uri(self.mcp.clone()).auth_header(token),
        );
        Ok(tokio::time::timeout(T, ().serve(transport)).await??)
    }
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> anyhow::Result<CallToolResult> {
    let params = CallToolRequestParams::new(name.to_string())
        .with_arguments(args.as_object().unwrap().clone());
    Ok(tokio::time::timeout(T, client.call_tool(params)).await??)
}

async fn whoami(client: &RunningService<RoleClient, ()>) -> anyhow::Result<Value> {
    let r = call(client, "whoami", json!({})).await?;
    Ok(serde_json::from_str(&text(&r))?)
}

#[tokio::test]
async fn discovery_metadata_and_challenge() {
    let s = start(&[]).await;
    let prm_url = format!("{}/.well-known/oauth-protected-resource/mcp", s.base);

    // No token: 401 pointing at the protected resource metadata.
    let (status, www) = s.raw_initialize(None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        www.unwrap(),
        format!("Bearer resource_metadata=\"{prm_url}\", scope=\"mcp\"")
    );
    // GET and DELETE are guarded too.
    let r = s.http.get(&s.mcp).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = s.http.delete(&s.mcp).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    // A bogus token: same, with error="invalid_token".
    let (status, www) = s.raw_initialize(Some("nope")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(www.unwrap().ends_with(", error=\"invalid_token\""));

    // RFC 9728, both paths.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let (status, prm) = s.get_json(path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(prm["resource"], s.mcp);
        assert_eq!(prm["authorization_servers"], json!([s.base]));
        assert_eq!(prm["scopes_supported"], json!(["mcp"]));
        assert_eq!(prm["bearer_methods_supported"], json!(["header"]));
    }

    // RFC 8414 (and the OIDC alias).
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let (status, m) = s.get_json(path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(m["issuer"], s.base);
        assert_eq!(m["authorization_endpoint"], format!("{}/authorize", s.base));
        assert_eq!(m["token_endpoint"], format!("{}/token", s.base));
        assert_eq!(m["registration_endpoint"], format!("{}/register", s.base));
        assert_eq!(m["response_types_supported"], json!(["code"]));
        assert_eq!(
            m["grant_types_supported"],
            json!(["authorization_code", "refresh_token"])
        );
        assert_eq!(m["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(
            m["token_endpoint_auth_methods_supported"],
            json!(["none", "client_secret_post", "client_secret_basic"])
        );
        assert_eq!(m["scopes_supported"], json!(["mcp"]));
        assert_eq!(
            m["authorization_response_iss_parameter_supported"],
            json!(true)
        );
    }

    let st = s.stats().await;
    assert_eq!(st["mcp_requests_rejected"], 4);
    assert_eq!(st["mcp_requests_authorized"], 0);
}

#[tokio::test]
async fn full_flow_by_hand() {
    let s = start(&[]).await;

    // Registration: public client, no secret, metadata echoed.
    let (status, reg) = s
        .register(json!({
            "client_name": "by-hand",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
        }))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let client_id = reg["client_id"].as_str().unwrap().to_string();
    assert!(client_id.len() > 32, "{client_id}");
    assert_eq!(reg["client_name"], "by-hand");
    assert_eq!(reg["redirect_uris"], json!([REDIRECT]));
    assert_eq!(reg["token_endpoint_auth_method"], "none");
    assert!(reg.get("client_secret").is_none());
    // Invalid registrations.
    let (status, body) = s.register(json!({"client_name": "x"})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_redirect_uri"))
    );

    let (verifier, challenge) = pkce();
    let good: Vec<(&str, &str)> = vec![
        ("response_type", "code"),
        ("client_id", &client_id),
        ("redirect_uri", REDIRECT),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
        ("state", "xyz"),
    ];
    let with = |k: &'static str, v: &'static str| -> Vec<(&str, &str)> {
        let mut p: Vec<(&str, &str)> = good.iter().filter(|(n, _)| *n != k).cloned().collect();
        if !v.is_empty() {
            p.push((k, v));
        }
        p
    };

    // Invalid authorization requests: 400, never a redirect.
    for (params, why) in [
        (
            with("redirect_uri", "http://127.0.0.1:45678/other"),
            "unregistered redirect_uri",
        ),
        (with("client_id", "client-unknown"), "unknown client"),
        (with("response_type", "token"), "response_type"),
        (with("code_challenge", ""), "no PKCE"),
        (with("code_challenge_method", "plain"), "plain PKCE"),
        (with("state", ""), "no state"),
        (
            with("resource", "http://127.0.0.1:1/elsewhere"),
            "wrong resource",
        ),
    ] {
        let (status, location, body) = s.authorize(&params).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{why}: {body}");
        assert!(location.is_none(), "{why}");
        assert!(!body.is_empty(), "{why}");
    }
    assert_eq!(s.stats().await["authorizations"], 0);

    // Without `resource` the request is accepted (only --require-resource insists).
    let (status, location, _) = s.authorize(&good).await;
    assert_eq!(status, StatusCode::FOUND);
    let q = query(&location.unwrap());
    assert_eq!(
        (q["state"].as_str(), q["iss"].as_str()),
        ("xyz", s.base.as_str())
    );

    // Wrong verifier: invalid_grant, and the attempt consumed the code.
    let code = s.code(&client_id, &challenge).await;
    let (status, body) = s.exchange(&client_id, &code, &pkce().0).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    let (status, body) = s.exchange(&client_id, &code, &verifier).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );

    // Wrong redirect_uri at the token endpoint.
    let code = s.code(&client_id, &challenge).await;
    let (status, body) = s
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", "http://127.0.0.1:45678/other"),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
        ])
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    // Wrong resource at the token endpoint.
    let code = s.code(&client_id, &challenge).await;
    let (status, body) = s
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
            ("code_verifier", &verifier),
            ("resource", "http://127.0.0.1:1/elsewhere"),
        ])
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_target"))
    );
    // Unknown grant type / client.
    let (status, body) = s
        .token(&[("grant_type", "password"), ("client_id", &client_id)])
        .await;
    assert_eq!(body["error"], "unsupported_grant_type", "{status}");
    let (status, body) = s.refresh("client-unknown", "rt-x").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_client"))
    );

    // The real exchange.
    let code = s.code(&client_id, &challenge).await;
    let (status, tok) = s.exchange(&client_id, &code, &verifier).await;
    assert_eq!(status, StatusCode::OK, "{tok}");
    assert_eq!(tok["token_type"], "Bearer");
    assert_eq!(tok["expires_in"], 3600);
    assert_eq!(tok["scope"], "mcp");
    let access = tok["access_token"].as_str().unwrap().to_string();
    let refresh = tok["refresh_token"].as_str().unwrap().to_string();
    assert!(access.len() >= 40 && refresh.len() >= 40 && access != refresh);
    // The code is single use.
    let (status, body) = s.exchange(&client_id, &code, &verifier).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );

    // The token opens /mcp: rmcp client with a bearer header.
    let client = s
        .connect_with_token(&access)
        .await
        .expect("initialize with token");
    assert_eq!(
        whoami(&client).await.unwrap(),
        json!({"client_id": client_id, "scope": "mcp"})
    );
    assert_eq!(
        text(
            &call(&client, "echo", json!({"text": "hi there"}))
                .await
                .unwrap()
        ),
        "hi there"
    );
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["whoami", "echo"]);

    // Refresh rotates: new tokens, the old refresh token is dead, both access tokens work.
    let (status, tok2) = s.refresh(&client_id, &refresh).await;
    assert_eq!(status, StatusCode::OK, "{tok2}");
    let access2 = tok2["access_token"].as_str().unwrap().to_string();
    let refresh2 = tok2["refresh_token"].as_str().unwrap().to_string();
    assert_ne!(access2, access);
    assert_ne!(refresh2, refresh);
    assert_eq!(tok2["scope"], "mcp");
    let (status, body) = s.refresh(&client_id, &refresh).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    assert_eq!(s.raw_initialize(Some(&access2)).await.0, StatusCode::OK);

    // revoke-access: access tokens die (existing session too), refresh still works.
    assert_eq!(s.control("revoke-access").await["revoked_access_tokens"], 2);
    let (status, www) = s.raw_initialize(Some(&access2)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(www.unwrap().contains("error=\"invalid_token\""));
    assert!(call(&client, "echo", json!({"text": "x"})).await.is_err());
    let (status, tok3) = s.refresh(&client_id, &refresh2).await;
    assert_eq!(status, StatusCode::OK, "{tok3}");
    let access3 = tok3["access_token"].as_str().unwrap().to_string();
    let refresh3 = tok3["refresh_token"].as_str().unwrap().to_string();
    let client3 = s
        .connect_with_token(&access3)
        .await
        .expect("initialize after refresh");
    assert_eq!(
        whoami(&client3).await.unwrap()["client_id"],
        client_id.as_str()
    );

    // reject-refresh: access tokens die and refreshes fail until reset.
    s.control("reject-refresh").await;
    assert_eq!(
        s.raw_initialize(Some(&access3)).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, body) = s.refresh(&client_id, &refresh3).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    s.control("reset").await;
    let (status, tok4) = s.refresh(&client_id, &refresh3).await;
    assert_eq!(status, StatusCode::OK, "{tok4}");

    let st = s.stats().await;
    assert_eq!(st["registrations"], 1);
    assert_eq!(st["authorizations"], 5);
    assert_eq!(st["code_exchanges"], 1);
    assert_eq!(st["refreshes"], 3);
    assert_eq!(st["refreshes_rejected"], 2);
    assert!(st["mcp_requests_authorized"].as_u64().unwrap() >= 8, "{st}");
    assert!(st["mcp_requests_rejected"].as_u64().unwrap() >= 3, "{st}");
    assert_eq!(st["last_token_request"]["grant_type"], "refresh_token");
    assert_eq!(st["last_token_request"]["resource"], s.mcp);
    // No token anywhere in the control API.
    let dump = st.to_string();
    for t in [&access, &refresh, &access3, &refresh3, &code] {
        assert!(!dump.contains(t.as_str()));
    }
}

#[tokio::test]
async fn confidential_clients_and_denial() {
    let s = start(&[]).await;
    for method in ["client_secret_basic", "client_secret_post"] {
        let (status, reg) = s
            .register(json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": method}))
            .await;
        assert_eq!(status, StatusCode::CREATED);
        let id = reg["client_id"].as_str().unwrap().to_string();
        let secret = reg["client_secret"]
            .as_str()
            .expect("client_secret")
            .to_string();
        let (verifier, challenge) = pkce();
        let base = |code: &str| {
            vec![
                ("grant_type", "authorization_code".to_string()),
                ("code", code.to_string()),
                ("redirect_uri", REDIRECT.to_string()),
                ("code_verifier", verifier.clone()),
            ]
        };
        // Without the secret: invalid_client (and the code is not consumed by that).
        let code = s.code(&id, &challenge).await;
        let mut p = base(&code);
        p.push(("client_id", id.clone()));
        let pairs: Vec<(&str, &str)> = p.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (status, body) = s.token(&pairs).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("invalid_client"))
        );
        // Wrong secret.
        let (status, _) = s.token_with(&pairs, Some((&id, "wrong"))).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // Right secret, either way of sending it.
        let (status, tok) = if method == "client_secret_basic" {
            let p = base(&code);
            let pairs: Vec<(&str, &str)> = p.iter().map(|(k, v)| (*k, v.as_str())).collect();
            s.token_with(&pairs, Some((&id, &secret))).await
        } else {
            let mut p = base(&code);
            p.push(("client_id", id.clone()));
            p.push(("client_secret", secret.clone()));
            let pairs: Vec<(&str, &str)> = p.iter().map(|(k, v)| (*k, v.as_str())).collect();
            s.token(&pairs).await
        };
        assert_eq!(status, StatusCode::OK, "{method}: {tok}");
    }

    // deny-authorization: redirect back with error=access_denied, state and iss; no code.
    let id = s.register_public().await;
    s.control("deny-authorization").await;
    let (_, challenge) = pkce();
    let (status, location, _) = s
        .authorize(&[
            ("response_type", "code"),
            ("client_id", &id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("state", "s9"),
        ])
        .await;
    assert_eq!(status, StatusCode::FOUND);
    let q = query(&location.unwrap());
    assert_eq!(q["error"], "access_denied");
    assert_eq!(q["state"], "s9");
    assert_eq!(q["iss"], s.base);
    assert!(!q.contains_key("code"));
    s.control("reset").await;
    s.code(&id, &challenge).await;
}

#[tokio::test]
async fn short_token_ttl_expires() {
    let s = start(&["--token-ttl", "1"]).await;
    let id = s.register_public().await;
    let (verifier, challenge) = pkce();
    let code = s.code(&id, &challenge).await;
    let (status, tok) = s.exchange(&id, &code, &verifier).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(tok["expires_in"], 1);
    let access = tok["access_token"].as_str().unwrap();
    assert_eq!(s.raw_initialize(Some(access)).await.0, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert_eq!(
        s.raw_initialize(Some(access)).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, _) = s.refresh(&id, tok["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK);
}

/// The "browser": GET the authorization URL without following redirects and
/// return the Location (the redirect back to the client's callback).
async fn browse(http: &reqwest::Client, auth_url: &str) -> String {
    let r = http.get(auth_url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::FOUND, "{}", r.text().await.unwrap());
    r.headers()[header::LOCATION].to_str().unwrap().to_string()
}

#[tokio::test]
async fn rmcp_auth_client_signs_in_and_refreshes() {
    let s = start(&[]).await;
    let mut state = OAuthState::new(s.mcp.as_str(), None)
        .await
        .expect("OAuthState::new");
    state
        .start_authorization(
            AuthorizationRequest::new(REDIRECT).with_client_name("switchboard-test"),
        )
        .await
        .expect("discovery + dynamic registration");
    let auth_url = state.get_authorization_url().await.unwrap();
    let q = query(&auth_url);
    assert!(
        auth_url.starts_with(&format!("{}/authorize?", s.base)),
        "{auth_url}"
    );
    assert_eq!(q["resource"], s.mcp, "rmcp sends the PRM resource");
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["scope"], "mcp");
    assert_eq!(q["redirect_uri"], REDIRECT);

    let callback = browse(&s.http, &auth_url).await;
    assert!(
        callback.starts_with(REDIRECT) && callback.contains("iss="),
        "{callback}"
    );
    // The metadata advertises authorization_response_iss_parameter_supported, so rmcp
    // insists on `iss`: a callback without it, or with another issuer, is refused
    // (and keeps the PKCE state, so the real callback still works).
    let cq = query(&callback);
    let err = state
        .handle_callback(&cq["code"], &cq["state"])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("issuer"), "{err}");
    let forged = callback.replace("iss=http", "iss=https");
    let err = state.handle_callback_url(&forged).await.unwrap_err();
    assert!(
        err.to_string().contains("issuer") || err.to_string().contains("mismatch"),
        "{err}"
    );
    assert_eq!(s.stats().await["code_exchanges"], 0);
    state
        .handle_callback_url(&callback)
        .await
        .expect("code exchange");
    let (client_id, creds) = state.get_credentials().await.unwrap();
    assert!(creds.is_some());
    let last = &s.stats().await["last_token_request"];
    assert_eq!(last["grant_type"], "authorization_code");
    assert_eq!(last["client_auth"], "none");
    assert_eq!(last["resource"], s.mcp);

    let manager = state.into_authorization_manager().expect("authorized");
    let auth_client = AuthClient::new(reqwest::Client::new(), manager);
    let transport = StreamableHttpClientTransport::with_client(
        auth_client,
        StreamableHttpClientTransportConfig::with_uri(s.mcp.clone()),
    );
    let client = tokio::time::timeout(T, ().serve(transport))
        .await
        .unwrap()
        .expect("initialize");
    assert_eq!(
        whoami(&client).await.unwrap(),
        json!({"client_id": client_id, "scope": "mcp"})
    );

    // Revoked access token: AuthClient refreshes on the 401 and retries, silently.
    s.control("revoke-access").await;
    assert_eq!(
        whoami(&client).await.unwrap()["client_id"],
        client_id.as_str()
    );
    let st = s.stats().await;
    assert_eq!(st["refreshes"], 1, "{st}");
    assert_eq!(st["last_token_request"]["resource"], s.mcp);

    // Refresh rejected: the call fails (re-authorization needed).
    s.control("reject-refresh").await;
    let err = whoami(&client).await.unwrap_err();
    eprintln!("rmcp after reject-refresh: {err:#}");
    let st = s.stats().await;
    assert_eq!(st["refreshes_rejected"], 1, "{st}");
    assert!(
        format!("{err:#}").to_lowercase().contains("auth"),
        "{err:#}"
    );
}

#[tokio::test]
async fn no_registration_and_no_metadata() {
    let s = start(&["--no-registration"]).await;
    let (_, m) = s.get_json("/.well-known/oauth-authorization-server").await;
    assert!(m.get("registration_endpoint").is_none(), "{m}");
    let (status, _) = s.register(json!({"redirect_uris": [REDIRECT]})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let mut state = OAuthState::new(s.mcp.as_str(), None).await.unwrap();
    let err = state
        .start_authorization(AuthorizationRequest::new(REDIRECT))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("registration"), "{err}");

    let s = start(&["--no-metadata"]).await;
    let (status, www) = s.raw_initialize(None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(www.unwrap(), "Bearer scope=\"mcp\"");
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/authorize",
    ] {
        assert_eq!(s.get_json(path).await.0, StatusCode::NOT_FOUND, "{path}");
    }
    let mut state = OAuthState::new(s.mcp.as_str(), None).await.unwrap();
    let err = state
        .start_authorization(AuthorizationRequest::new(REDIRECT))
        .await
        .unwrap_err();
    eprintln!("rmcp with --no-metadata: {err}");
    assert!(err.to_string().contains("404"), "{err}");
}

#[tokio::test]
async fn preregistered_client_and_required_resource() {
    let s = start(&[
        "--client",
        &format!("pre-1={REDIRECT}"),
        "--require-resource",
        "--no-registration",
    ])
    .await;
    let (_, challenge) = pkce();
    let params = [
        ("response_type", "code"),
        ("client_id", "pre-1"),
        ("redirect_uri", REDIRECT),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
        ("state", "s"),
    ];
    let (status, _, body) = s.authorize(&params).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("resource"), "{body}");
    s.code("pre-1", &challenge).await;

    // rmcp with a pre-registered client sends `resource` everywhere, so it passes.
    let mut state = OAuthState::new(s.mcp.as_str(), None).await.unwrap();
    state
        .start_authorization(AuthorizationRequest::new(REDIRECT).with_preregistered_client("pre-1"))
        .await
        .unwrap();
    let callback = browse(&s.http, &state.get_authorization_url().await.unwrap()).await;
    state
        .handle_callback_url(&callback)
        .await
        .expect("exchange with resource");
    assert_eq!(state.get_credentials().await.unwrap().0, "pre-1");
}
