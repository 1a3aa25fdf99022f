//! Team mode's access-token validator (`team::oidc`) against the stand-in
//! identity provider (`switchboard_tests::idp`): discovery, every refusal,
//! key rotation, the JWKS refresh rate limit, and tokens from the stand-in's
//! own OAuth flow and its HTTP control API.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use switchboard_engine::team::oidc::*;
use switchboard_tests::idp::{Idp, IdpOptions, KeyKind, Mint, Signing};

const RESOURCE: &str = "http://127.0.0.1/mcp";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn validator_with(settings: OidcSettings) -> Validator {
    Validator::discover(settings, http()).await.unwrap()
}

async fn validator(idp: &Idp) -> Validator {
    validator_with(OidcSettings::new(&idp.url, RESOURCE)).await
}

/// A validator that fetches the keys again on every miss (no rate limit).
async fn eager(idp: &Idp) -> Validator {
    let refresh = KeyRefresh {
        min_interval: Duration::ZERO,
        ..KeyRefresh::default()
    };
    Validator::discover_with(OidcSettings::new(&idp.url, RESOURCE), refresh, http())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_genuine_token_gives_the_identity() {
    let idp = Idp::start().await;
    let v = validator(&idp).await;
    assert_eq!(v.issuer(), idp.url);
    assert_eq!(
        v.scopes_supported(),
        Some(&["openid".to_string(), "mcp".to_string()][..])
    );
    idp.set_user("bob", &["ops", "dev"]);
    let id = v.validate(&idp.mint(Mint::new())).await.unwrap();
    assert_eq!(id.subject, "bob");
    assert_eq!(id.groups, ["ops", "dev"]);
    assert_eq!(id.scopes, ["openid", "mcp"]);
    assert!(id.expires_at > now() + 3000 && id.expires_at <= now() + 3600);
}

#[tokio::test]
async fn groups_and_scopes_in_their_other_shapes() {
    let idp = Idp::start().await;
    let v = validator(&idp).await;
    let t = idp.mint(
        Mint::new()
            .claim("groups", "solo")
            .without("scope")
            .claim("scp", json!(["a", "b"])),
    );
    let id = v.validate(&t).await.unwrap();
    assert_eq!(
        (id.groups, id.scopes),
        (vec!["solo".into()], vec!["a".into(), "b".into()])
    );

    let t = idp.mint(Mint::new().without("scope").claim("scp", "x y"));
    assert_eq!(v.validate(&t).await.unwrap().scopes, ["x", "y"]);

    let t = idp.mint(Mint::new().without("groups").without("scope"));
    let id = v.validate(&t).await.unwrap();
    assert!(id.groups.is_empty() && id.scopes.is_empty());

    let roles = validator_with(OidcSettings {
        groups_claim: "roles".into(),
        ..OidcSettings::new(&idp.url, RESOURCE)
    })
    .await;
    let t = idp.mint(Mint::new().claim("roles", json!(["admin"])));
    assert_eq!(roles.validate(&t).await.unwrap().groups, ["admin"]);
}

#[tokio::test]
async fn size_and_shape_refusals() {
    let idp = Idp::start().await;
    let v = validator(&idp).await;
    let huge = "a".repeat(16 * 1024 + 1);
    assert_eq!(v.validate(&huge).await, Err(Refusal::TooLarge));
    let big_claim = idp.mint(Mint::new().claim("pad", "x".repeat(13_000)));
    assert_eq!(v.validate(&big_claim).await, Err(Refusal::TooLarge));

    let good = idp.mint(Mint::new());
    let parts: Vec<&str> = good.split('.').collect();
    for bad in [
        String::new(),
        "abc".into(),
        "a.b".into(),
        format!("{good}.x"),
        format!("!!!.{}.{}", parts[1], parts[2]),
        format!("bm90IGpzb24.{}.{}", parts[1], parts[2]), // "not json"
        format!("W10.{}.{}", parts[1], parts[2]),         // "[]"
    ] {
        assert_eq!(v.validate(&bad).await, Err(Refusal::Malformed), "{bad:?}");
    }
    let crit = idp.mint(Mint::new().header("crit", json!(["exp"])));
    assert_eq!(v.validate(&crit).await, Err(Refusal::Malformed));
    let no_exp = idp.mint(Mint::new().without("exp"));
    assert_eq!(v.validate(&no_exp).await, Err(Refusal::Malformed));
    let text_exp = idp.mint(Mint::new().claim("exp", "tomorrow"));
    assert_eq!(v.validate(&text_exp).await, Err(Refusal::Malformed));
}

#[tokio::test]
async fn none_and_hmac_are_refused_before_any_key_lookup() {
    let idp = Idp::start().await;
    let v = eager(&idp).await;
    let fetches = idp.jwks_fetches();
    for signing in [Signing::None, Signing::Hs256WithPublicKey] {
        let t = idp.mint(Mint::new().signed(signing));
        assert_eq!(v.validate(&t).await, Err(Refusal::AlgorithmRefused));
        // Same with a kid the validator does not know: still no fetch.
        let t = idp.mint(Mint::new().signed(signing).header("kid", "nope"));
        assert_eq!(v.validate(&t).await, Err(Refusal::AlgorithmRefused));
    }
    for alg in ["HS384", "HS512", "None", "RS1", ""] {
        let t = idp.mint(Mint::new().header("alg", alg));
        assert_eq!(
            v.validate(&t).await,
            Err(Refusal::AlgorithmRefused),
            "{alg}"
        );
    }
    assert_eq!(idp.jwks_fetches(), fetches);
}

#[tokio::test]
async fn the_algorithm_must_fit_the_key() {
    let idp = Idp::start().await; // RS256 key, its JWK says alg RS256
    let v = validator(&idp).await;
    // An RSA key named in an ES256 header.
    let t = idp.mint(Mint::new().header("alg", "ES256"));
    assert_eq!(v.validate(&t).await, Err(Refusal::AlgorithmRefused));
    // An RSA algorithm other than the JWK's own alg.
    let t = idp.mint(Mint::new().header("alg", "PS256"));
    assert_eq!(v.validate(&t).await, Err(Refusal::AlgorithmRefused));
}

#[tokio::test]
async fn forged_and_tampered_signatures() {
    let idp = Idp::start().await;
    let v = validator(&idp).await;
    let forged = idp.mint(Mint::new().signed(Signing::Foreign));
    assert_eq!(v.validate(&forged).await, Err(Refusal::BadSignature));

    let good = idp.mint(Mint::new());
    let other = idp.mint(Mint::new().claim("sub", "mallory"));
    let parts: Vec<&str> = good.split('.').collect();
    let swapped = format!(
        "{}.{}.{}",
        parts[0],
        other.split('.').nth(1).unwrap(),
        parts[2]
    );
    assert_eq!(v.validate(&swapped).await, Err(Refusal::BadSignature));
    let unsigned = format!("{}.{}.", parts[0], parts[1]);
    assert_eq!(v.validate(&unsigned).await, Err(Refusal::BadSignature));

    // The same for an ES256 and an EdDSA key.
    for kind in [KeyKind::Es256, KeyKind::EdDsa] {
        idp.rotate(kind, true).await;
        let v = validator(&idp).await;
        assert!(v.validate(&idp.mint(Mint::new())).await.is_ok(), "{kind:?}");
        let forged = idp.mint(Mint::new().signed(Signing::Foreign));
        assert_eq!(
            v.validate(&forged).await,
            Err(Refusal::BadSignature),
            "{kind:?}"
        );
    }
}

#[tokio::test]
async fn claim_refusals() {
    let idp = Idp::start().await;
    let v = validator(&idp).await;
    let n = now();
    let cases = [
        (Mint::new().claim("exp", n - 120), Err(Refusal::Expired)),
        (Mint::new().claim("nbf", n + 300), Err(Refusal::NotYetValid)),
        (Mint::new().claim("iat", n + 300), Err(Refusal::NotYetValid)),
        (
            Mint::new().claim("iss", format!("{}/", idp.url)),
            Err(Refusal::WrongIssuer),
        ),
        (Mint::new().without("iss"), Err(Refusal::WrongIssuer)),
        (
            Mint::new().claim("aud", "http://127.0.0.1/other"),
            Err(Refusal::WrongAudience),
        ),
        (
            Mint::new().claim("aud", json!(["a", "b"])),
            Err(Refusal::WrongAudience),
        ),
        (Mint::new().without("aud"), Err(Refusal::WrongAudience)),
        (Mint::new().without("sub"), Err(Refusal::NoSubject)),
        (Mint::new().claim("sub", ""), Err(Refusal::NoSubject)),
    ];
    for (mint, expected) in cases {
        let label = format!("{:?}", mint.claims);
        assert_eq!(
            v.validate(&idp.mint(mint)).await.map(|_| ()),
            expected,
            "{label}"
        );
    }
    // Within the 60 s leeway, and an audience list containing the resource.
    for mint in [
        Mint::new().claim("exp", n - 30),
        Mint::new().claim("nbf", n + 30).claim("iat", n + 30),
        Mint::new().claim("aud", json!(["other", RESOURCE])),
        Mint::new().claim("exp", (n + 60) as f64 + 0.5),
    ] {
        let label = format!("{:?}", mint.claims);
        assert!(v.validate(&idp.mint(mint)).await.is_ok(), "{label}");
    }
}

#[tokio::test]
async fn refusals_say_what_and_why() {
    let r = Refusal::WrongAudience;
    assert_eq!(r.label(), "wrong_audience");
    assert_eq!(r.oauth_error(), "invalid_token");
    assert_eq!(r.http_status(), 401);
    assert!(r.reason().contains("not issued for this gateway"));
    assert_eq!(Refusal::KeysUnavailable.http_status(), 503);
}

#[tokio::test]
async fn unknown_kid_and_tokens_without_kid() {
    let idp = Idp::start().await;
    let v = validator(&idp).await;
    let t = idp.mint(Mint::new().signed(Signing::UnknownKid));
    assert_eq!(v.validate(&t).await, Err(Refusal::UnknownKey));

    // One RSA key: a token without kid is checked with it.
    let no_kid = idp.mint(Mint::new().signed(Signing::NoKid));
    assert!(v.validate(&no_kid).await.is_ok());
    // An EC key as well: still one key usable for RS256.
    idp.rotate(KeyKind::Es256, true).await;
    let v = validator(&idp).await;
    assert!(v.validate(&no_kid).await.is_ok());
    // Two RSA keys: which one is meant is not known.
    idp.rotate(KeyKind::Rs256, true).await;
    let v = validator(&idp).await;
    assert_eq!(v.validate(&no_kid).await, Err(Refusal::UnknownKey));
}

#[tokio::test]
async fn rotation_picks_up_new_keys_and_drops_removed_ones() {
    let idp = Idp::start().await;
    let v = eager(&idp).await;
    let old = idp.mint(Mint::new());
    assert!(v.validate(&old).await.is_ok());
    let fetches = idp.jwks_fetches();

    // A new key, the old one kept: the first token with the new kid fetches.
    idp.rotate(KeyKind::Es256, true).await;
    let new = idp.mint(Mint::new());
    assert!(v.validate(&new).await.is_ok());
    assert_eq!(idp.jwks_fetches(), fetches + 1);
    assert!(v.validate(&new).await.is_ok());
    assert!(v.validate(&old).await.is_ok());
    assert_eq!(idp.jwks_fetches(), fetches + 1, "cached keys need no fetch");

    // Only a newer key left: once the keys are fetched again, the removed
    // ones no longer validate.
    idp.rotate(KeyKind::EdDsa, false).await;
    let newest = idp.mint(Mint::new());
    assert!(v.validate(&newest).await.is_ok());
    assert_eq!(v.validate(&new).await, Err(Refusal::UnknownKey));
    assert_eq!(v.validate(&old).await, Err(Refusal::UnknownKey));
}

#[tokio::test]
async fn rotation_with_the_default_rate_limit() {
    let idp = Idp::start().await;
    let v = validator(&idp).await;
    // The first miss after discovery fetches at once.
    idp.rotate(KeyKind::Es256, true).await;
    assert!(v.validate(&idp.mint(Mint::new())).await.is_ok());
}

#[tokio::test]
async fn old_keys_are_fetched_again() {
    let idp = Idp::start().await;
    let refresh = KeyRefresh {
        max_age: Duration::from_millis(200),
        ..KeyRefresh::default()
    };
    let v = Validator::discover_with(OidcSettings::new(&idp.url, RESOURCE), refresh, http())
        .await
        .unwrap();
    let old = idp.mint(Mint::new());
    assert!(v.validate(&old).await.is_ok());
    idp.rotate(KeyKind::Es256, false).await;
    assert!(
        v.validate(&old).await.is_ok(),
        "the cached key is still young"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(v.validate(&old).await, Err(Refusal::UnknownKey));
}

#[tokio::test]
async fn random_kids_cannot_hammer_the_provider() {
    let idp = Idp::start().await;
    let v = validator(&idp).await;
    let before = idp.jwks_fetches();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..100 {
        let (v, t) = (v.clone(), idp.mint(Mint::new().signed(Signing::UnknownKid)));
        tasks.spawn(async move { v.validate(&t).await });
    }
    while let Some(result) = tasks.join_next().await {
        assert_eq!(result.unwrap(), Err(Refusal::UnknownKey));
    }
    for _ in 0..100 {
        let t = idp.mint(Mint::new().signed(Signing::UnknownKid));
        assert_eq!(v.validate(&t).await, Err(Refusal::UnknownKey));
    }
    let fetched = idp.jwks_fetches() - before;
    assert!((1..=2).contains(&fetched), "{fetched} JWKS fetches");
    // Genuine tokens are still fine meanwhile.
    assert!(v.validate(&idp.mint(Mint::new())).await.is_ok());
}

#[tokio::test]
async fn keys_unavailable_when_the_provider_is_down() {
    let idp = Idp::start().await;
    let v = eager(&idp).await;
    let genuine = idp.mint(Mint::new());
    let unknown = idp.mint(Mint::new().signed(Signing::UnknownKid));
    drop(idp);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(v.validate(&unknown).await, Err(Refusal::KeysUnavailable));
    // Cached keys keep working.
    assert!(v.validate(&genuine).await.is_ok());
}

#[tokio::test]
async fn discovery_falls_back_to_rfc_8414() {
    for issuer_path in ["", "/tenant"] {
        let idp = Idp::start_with(IdpOptions {
            openid_configuration: false,
            issuer_path: issuer_path.into(),
            ..IdpOptions::default()
        })
        .await;
        assert!(idp.url.ends_with(issuer_path));
        let v = validator(&idp).await;
        assert!(
            v.validate(&idp.mint(Mint::new())).await.is_ok(),
            "{issuer_path:?}"
        );
    }
    // OpenID Connect discovery under an issuer with a path.
    let idp = Idp::start_with(IdpOptions {
        oauth_metadata: false,
        issuer_path: "/realms/team".into(),
        ..IdpOptions::default()
    })
    .await;
    let v = validator(&idp).await;
    assert!(v.validate(&idp.mint(Mint::new())).await.is_ok());
}

#[tokio::test]
async fn discovery_refusals() {
    let idp = Idp::start_with(IdpOptions {
        metadata_issuer: Some("https://elsewhere.example".into()),
        ..IdpOptions::default()
    })
    .await;
    let err = Validator::discover(OidcSettings::new(&idp.url, RESOURCE), http())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(err, DiscoveryError::IssuerMismatch { .. }),
        "{err}"
    );

    let idp = Idp::start().await;
    // A trailing slash is another issuer.
    let err = Validator::discover(OidcSettings::new(format!("{}/", idp.url), RESOURCE), http())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(err, DiscoveryError::IssuerMismatch { .. }),
        "{err}"
    );

    let idp = Idp::start_with(IdpOptions {
        openid_configuration: false,
        oauth_metadata: false,
        ..IdpOptions::default()
    })
    .await;
    let err = Validator::discover(OidcSettings::new(&idp.url, RESOURCE), http())
        .await
        .err()
        .unwrap();
    assert!(matches!(err, DiscoveryError::NoMetadata { .. }), "{err}");
    assert!(err.to_string().contains("HTTP 404"), "{err}");

    for bad in ["ftp://example.com", "not a url", "https://example.com/?q=1"] {
        let err = Validator::discover(OidcSettings::new(bad, RESOURCE), http())
            .await
            .err()
            .unwrap();
        assert!(matches!(err, DiscoveryError::InvalidIssuer(_)), "{err}");
    }
}

/// Registration, authorization with PKCE and the token endpoint, as a
/// client would drive them; the tokens validate.
#[tokio::test]
async fn tokens_from_the_oauth_flow_validate() {
    use base64::Engine as _;
    use sha2::Digest as _;
    let idp = Idp::start().await;
    let resource = "http://127.0.0.1:9999/mcp";
    let v = validator_with(OidcSettings::new(&idp.url, resource)).await;
    let client = http();
    let redirect = "http://127.0.0.1:7777/callback";

    let reg: serde_json::Value = client
        .post(format!("{}/register", idp.url))
        .json(&json!({ "redirect_uris": [redirect], "client_name": "test" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client_id = reg["client_id"].as_str().unwrap();

    let verifier = "v".repeat(50);
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    idp.set_user("carol", &["team-a"]);
    let mut authorize = url::Url::parse(&format!("{}/authorize", idp.url)).unwrap();
    authorize
        .query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect)
        .append_pair("state", "s1")
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("scope", "mcp")
        .append_pair("resource", resource);
    let answer = client.get(authorize.as_str()).send().await.unwrap();
    assert_eq!(answer.status(), 302);
    let location = url::Url::parse(answer.headers()["location"].to_str().unwrap()).unwrap();
    let q: std::collections::HashMap<_, _> = location.query_pairs().into_owned().collect();
    assert_eq!(q["state"], "s1");
    assert_eq!(q["iss"], idp.url);

    let token = |form: Vec<(&'static str, String)>| {
        let client = client.clone();
        let url = format!("{}/token", idp.url);
        async move {
            let body = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&form)
                .finish();
            let r = client
                .post(url)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body)
                .send()
                .await
                .unwrap();
            (
                r.status().as_u16(),
                r.json::<serde_json::Value>().await.unwrap(),
            )
        }
    };
    let code_form = |verifier: &str| {
        vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", q["code"].clone()),
            ("redirect_uri", redirect.to_string()),
            ("client_id", client_id.to_string()),
            ("code_verifier", verifier.to_string()),
        ]
    };
    let (status, tokens) = token(code_form(&"w".repeat(50))).await;
    assert_eq!(
        (status, tokens["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    // The code was spent by the failed attempt: authorize again.
    let answer = client.get(authorize.as_str()).send().await.unwrap();
    let location = url::Url::parse(answer.headers()["location"].to_str().unwrap()).unwrap();
    let q: std::collections::HashMap<_, _> = location.query_pairs().into_owned().collect();
    let mut form = code_form(&verifier);
    form[1].1 = q["code"].clone();
    let (status, tokens) = token(form).await;
    assert_eq!(status, 200, "{tokens}");
    let id = v
        .validate(tokens["access_token"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(
        (id.subject.as_str(), id.groups, id.scopes),
        ("carol", vec!["team-a".into()], vec!["mcp".into()])
    );

    let (status, refreshed) = token(vec![
        ("grant_type", "refresh_token".into()),
        (
            "refresh_token",
            tokens["refresh_token"].as_str().unwrap().into(),
        ),
        ("client_id", client_id.into()),
    ])
    .await;
    assert_eq!(status, 200, "{refreshed}");
    assert!(v
        .validate(refreshed["access_token"].as_str().unwrap())
        .await
        .is_ok());
    assert_ne!(refreshed["refresh_token"], tokens["refresh_token"]);
}

/// The `/_control/…` API the Python tests use.
#[tokio::test]
async fn the_http_control_api() {
    let idp = Idp::start().await;
    let v = eager(&idp).await;
    let client = http();
    let control = |path: &str| format!("{}/_control/{path}", idp.base);
    let post = |path: &str, body: serde_json::Value| {
        let request = client.post(control(path)).json(&body);
        async move { request.send().await.unwrap() }
    };

    assert_eq!(
        post("user", json!({"sub": "dave", "groups": ["g"]}))
            .await
            .status(),
        204
    );
    let minted: serde_json::Value = post("mint", json!({"claims": {"scope": "x"}}))
        .await
        .json()
        .await
        .unwrap();
    let id = v.validate(minted["token"].as_str().unwrap()).await.unwrap();
    assert_eq!(
        (id.subject.as_str(), id.groups, id.scopes),
        ("dave", vec!["g".into()], vec!["x".into()])
    );

    for (signing, refusal) in [
        ("none", Refusal::AlgorithmRefused),
        ("hs256", Refusal::AlgorithmRefused),
        ("foreign", Refusal::BadSignature),
        ("unknown_kid", Refusal::UnknownKey),
    ] {
        let minted: serde_json::Value = post("mint", json!({"signing": signing}))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            v.validate(minted["token"].as_str().unwrap()).await,
            Err(refusal),
            "{signing}"
        );
    }
    let minted: serde_json::Value = post("mint", json!({"claims": {"sub": null}}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        v.validate(minted["token"].as_str().unwrap()).await,
        Err(Refusal::NoSubject)
    );

    let rotated: serde_json::Value =
        post("rotate", json!({"alg": "ES256", "keep_previous": false}))
            .await
            .json()
            .await
            .unwrap();
    assert_eq!(rotated["kid"].as_str().unwrap(), idp.kid());
    let minted: serde_json::Value = post("mint", json!({})).await.json().await.unwrap();
    assert!(v.validate(minted["token"].as_str().unwrap()).await.is_ok());

    let count: serde_json::Value = client
        .get(control("jwks_fetches"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(count["count"].as_u64(), Some(idp.jwks_fetches()));
    assert_eq!(
        post("mint", json!({"signing": "bogus"})).await.status(),
        400
    );
}
