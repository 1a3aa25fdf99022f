//! Property tests per dialect: every field a client can store survives being
//! written in that client's own keys and read back, and a patch written onto
//! an entry changes exactly the patched fields and keeps every key
//! Switchboard does not know.

use indexmap::IndexMap;
use proptest::prelude::*;
use serde_json::{json, Value};
use switchboard_engine::config::{
    AuthConfig, Field, RestartPolicy, ServerDef, ServerPatch, Transport,
};
use switchboard_engine::sources::dialect::{apply_entry_edits, Unit};
use switchboard_engine::sources::Dialect;

fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9._-]{0,10}"
}

fn text() -> impl Strategy<Value = String> {
    // Spaces, quotes, backslashes, non-ASCII and `${…}`: what args and env values hold.
    prop_oneof![
        "[ -~]{0,16}".prop_map(|s| s.replace("${", "$ {")),
        "[a-z ]{0,6}(ü|é|中|\"|\\\\|')[a-z]{0,4}",
        "[A-Z_]{1,8}".prop_map(|v| format!("${{{v}}}")),
    ]
}

fn env_name() -> impl Strategy<Value = String> {
    "[A-Z][A-Z0-9_]{0,8}"
}

fn headers() -> impl Strategy<Value = IndexMap<String, String>> {
    let value = prop_oneof![
        "[a-zA-Z0-9 ._-]{1,12}",
        env_name().prop_map(|v| format!("${{{v}}}")),
    ];
    let plain = prop::collection::vec(("X-[A-Za-z]{1,6}", value), 0..4)
        .prop_map(|kv| kv.into_iter().collect::<IndexMap<_, _>>());
    let bearer = prop_oneof![
        Just(None),
        "[a-z0-9]{4,12}".prop_map(|t| Some(format!("Bearer {t}"))),
        env_name().prop_map(|v| Some(format!("Bearer ${{{v}}}"))),
    ];
    (plain, bearer).prop_map(|(mut h, b)| {
        if let Some(b) = b {
            h.insert("Authorization".into(), b);
        }
        h
    })
}

fn timeout(d: Dialect) -> BoxedStrategy<Option<u64>> {
    let keys = d.spelling().timeout;
    if keys.is_empty() {
        return Just(None).boxed();
    }
    if keys.iter().all(|k| k.unit == Unit::WholeSeconds) {
        prop_oneof![Just(None), (1u64..100_000).prop_map(|s| Some(s * 1000))].boxed()
    } else {
        prop_oneof![Just(None), (1u64..100_000_000).prop_map(Some)].boxed()
    }
}

/// A valid definition using only what `d` can store.
fn def_for(d: Dialect) -> impl Strategy<Value = ServerDef> {
    let s = d.spelling();
    let transports: Vec<Transport> = [Transport::Stdio, Transport::Http, Transport::Sse]
        .into_iter()
        .filter(|t| match t {
            Transport::Stdio => true,
            Transport::Http => s.transport.http.is_some(),
            Transport::Sse => s.transport.sse.is_some(),
        })
        .collect();
    let can = move |f: Field| d.can_store(f);
    (
        prop::sample::select(transports),
        word(),
        prop::collection::vec(text(), 0..5),
        prop::collection::vec((env_name(), text()), 0..4),
        prop::option::of("/[a-z/]{1,12}"),
        "[a-z]{1,8}(\\.[a-z]{2,3})?(/[a-z0-9_-]{0,8}){0,2}",
        headers(),
        timeout(d),
        prop::collection::vec(word(), 0..3),
        prop::option::of(word()),
        prop::option::of((0u64..10_000, 0u64..100_000, 1u32..10, 0u32..20)),
    )
        .prop_map(
            move |(
                transport,
                command,
                args,
                env,
                cwd,
                host,
                headers,
                timeout,
                approve,
                credential,
                policy,
            )| {
                let mut def = ServerDef {
                    name: "srv".into(),
                    transport,
                    enabled: true,
                    timeout,
                    ..Default::default()
                };
                if transport == Transport::Stdio {
                    def.command = Some(command);
                    def.env = env.into_iter().collect();
                    def.cwd = cwd.filter(|_| can(Field::Cwd));
                } else {
                    def.url = Some(format!("https://{host}"));
                    def.headers = headers;
                }
                def.args = args;
                if can(Field::AutoApprove) {
                    def.auto_approve = approve;
                }
                if can(Field::Auth) {
                    def.auth = credential.map(|c| AuthConfig {
                        kind: "oauth".into(),
                        credential_id: Some(c),
                    });
                }
                if can(Field::RestartPolicy) {
                    def.restart_policy =
                        policy.map(|(initial, max, mult, attempts)| RestartPolicy {
                            initial_delay_ms: initial,
                            max_delay_ms: max,
                            backoff_multiplier: mult as f64 / 2.0,
                            max_restart_attempts: attempts,
                        });
                }
                def
            },
        )
}

fn check_round_trip(d: Dialect, def: &ServerDef) -> Result<(), TestCaseError> {
    let entry = d
        .to_entry(def)
        .map_err(|e| TestCaseError::fail(format!("{d:?} cannot write {def:?}: {e:?}")))?;
    let parsed = d.parse_entry(&def.name, &Value::Object(entry.clone()));
    prop_assert!(
        parsed.issues.is_empty(),
        "{:?}: {:?} from {}",
        d,
        parsed.issues,
        Value::Object(entry.clone())
    );
    prop_assert_eq!(&parsed.def, def, "{:?} wrote {}", d, Value::Object(entry));
    Ok(())
}

/// `original` written as an entry with keys Switchboard does not know, then
/// the patch to `edited` applied: it reads as `edited`, the unknown keys stay.
fn check_patch(d: Dialect, original: &ServerDef, edited: &ServerDef) -> Result<(), TestCaseError> {
    let mut entry = Value::Object(d.to_entry(original).unwrap());
    entry["x-user-note"] = json!("kept");
    entry["enabledTools"] = json!(["a", "b"]);
    let patch = ServerPatch::between(original, edited);
    let edits = d
        .patch_edits(entry.as_object(), &patch)
        .map_err(|e| TestCaseError::fail(format!("{d:?}: {e:?}")))?;
    apply_entry_edits(&mut entry, edits);
    let parsed = d.parse_entry(&edited.name, &entry);
    prop_assert!(
        parsed.issues.is_empty(),
        "{:?}: {:?} from {}",
        d,
        parsed.issues,
        entry
    );
    prop_assert_eq!(&parsed.def, edited, "{:?} patched to {}", d, entry);
    prop_assert_eq!(&entry["x-user-note"], &json!("kept"));
    prop_assert_eq!(&entry["enabledTools"], &json!(["a", "b"]));
    Ok(())
}

macro_rules! per_dialect {
    ($($test:ident: $dialect:expr;)*) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
            $(
                #[test]
                fn $test((def, edited) in (def_for($dialect), def_for($dialect))) {
                    check_round_trip($dialect, &def)?;
                    check_patch($dialect, &def, &edited)?;
                }
            )*
        }
    };
}

per_dialect! {
    switchboard_round_trips: Dialect::Switchboard;
    standard_round_trips: Dialect::Standard;
    claude_code_round_trips: Dialect::ClaudeCode;
    vscode_round_trips: Dialect::Vscode;
    windsurf_round_trips: Dialect::Windsurf;
    zed_round_trips: Dialect::Zed;
    cline_round_trips: Dialect::Cline;
    roo_round_trips: Dialect::Roo;
    gemini_round_trips: Dialect::Gemini;
    codex_round_trips: Dialect::Codex;
    goose_round_trips: Dialect::Goose;
    continue_round_trips: Dialect::Continue;
}

#[test]
fn every_dialect_is_tested_here() {
    let source = include_str!("dialect_roundtrip.rs");
    for d in Dialect::ALL {
        assert!(
            source.contains(&format!(": Dialect::{d:?};")),
            "{d:?} has a round-trip property above"
        );
    }
}

#[test]
fn a_field_a_client_has_no_key_for_is_refused_by_name() {
    let mut def = ServerDef::stdio("x", "npx", &[]);
    def.timeout = Some(5000);
    assert_eq!(
        Dialect::Standard
            .to_entry(&def)
            .unwrap_err()
            .message("Cursor"),
        "Invalid server config: Cursor has no field for timeout"
    );
    let mut sse = ServerDef::remote("x", Transport::Sse, "https://x.example/sse");
    sse.timeout = None;
    assert_eq!(
        Dialect::Codex
            .to_entry(&sse)
            .unwrap_err()
            .message("Codex CLI"),
        "Invalid server config: Codex CLI has no SSE transport; use http"
    );
    def.timeout = Some(1500);
    assert!(Dialect::Goose
        .to_entry(&def)
        .unwrap_err()
        .message("goose")
        .contains("whole seconds"));
    assert_eq!(
        Dialect::Cline.to_entry(&def).unwrap()["timeout"],
        json!(1.5),
        "Cline's seconds may be fractions"
    );
}

#[test]
fn fields_list_what_each_client_can_store() {
    let names = |d: Dialect| d.fields().iter().map(|f| f.as_str()).collect::<Vec<_>>();
    assert!(
        names(Dialect::Cline).contains(&"timeout")
            && names(Dialect::Cline).contains(&"autoApprove")
            && names(Dialect::Cline).contains(&"cwd")
    );
    assert!(
        !names(Dialect::Standard).contains(&"timeout"),
        "Cursor has no timeout"
    );
    assert!(
        names(Dialect::Switchboard).contains(&"auth")
            && names(Dialect::Switchboard).contains(&"restartPolicy")
    );
    assert!(!names(Dialect::Roo).contains(&"auth"));
    assert!(!names(Dialect::Windsurf).contains(&"cwd"));
    for d in Dialect::ALL {
        for k in d.owned_keys().into_iter().filter(|k| *k != "name") {
            let mut e = serde_json::Map::new();
            e.insert("command".into(), json!("x"));
            // Every owned key is read: a nonsense value in it is reported, not skipped silently.
            e.insert(k.into(), json!([{"nested": true}]));
            let parsed = d.parse_entry("x", &Value::Object(e));
            assert!(
                !parsed.issues.is_empty() || parsed.not_runnable.is_some(),
                "{d:?} owns \"{k}\" but does not read it"
            );
        }
    }
}

/// The OAuth app members a form may offer per client: Claude Code keeps
/// the port (not a redirect URI), Gemini the redirect URI (not a port), VS
/// Code and Zed only the client id, Cursor nothing; each listed member is
/// written when set.
#[test]
fn oauth_fields_list_the_members_each_client_writes() {
    assert_eq!(
        Dialect::Switchboard.oauth_fields(),
        [
            "oauth.clientId",
            "oauth.callbackPort",
            "oauth.scopes",
            "oauth.redirectUri"
        ]
    );
    assert_eq!(
        Dialect::ClaudeCode.oauth_fields(),
        ["oauth.clientId", "oauth.callbackPort", "oauth.scopes"]
    );
    assert_eq!(
        Dialect::Gemini.oauth_fields(),
        ["oauth.clientId", "oauth.scopes", "oauth.redirectUri"]
    );
    assert_eq!(Dialect::Vscode.oauth_fields(), ["oauth.clientId"]);
    assert_eq!(Dialect::Zed.oauth_fields(), ["oauth.clientId"]);
    assert!(Dialect::Standard.oauth_fields().is_empty());
    let app = switchboard_engine::config::OAuthApp {
        client_id: Some("id".into()),
        callback_port: Some(8765),
        scopes: vec!["a".into()],
        redirect_uri: Some("http://localhost:8765/cb".into()),
        client_secret: Some("never".into()),
    };
    for d in Dialect::ALL {
        let mut def = ServerDef::remote("r", Transport::Http, "https://mcp.example.com/mcp");
        def.oauth = Some(app.clone());
        let Ok(entry) = d.to_entry(&def) else {
            continue;
        };
        let entry = Value::Object(entry);
        let written = d.parse_entry("r", &entry).def.oauth.unwrap_or_default();
        let got: Vec<&str> = [
            ("oauth.clientId", written.client_id.is_some()),
            ("oauth.callbackPort", written.callback_port.is_some()),
            ("oauth.scopes", !written.scopes.is_empty()),
            ("oauth.redirectUri", written.redirect_uri.is_some()),
        ]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(k, _)| k)
        .collect();
        assert_eq!(
            got,
            d.oauth_fields(),
            "{d:?} writes exactly its oauth fields: {entry}"
        );
        assert!(
            !entry.to_string().contains("never"),
            "{d:?} wrote the secret: {entry}"
        );
    }
}
