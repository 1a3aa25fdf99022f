//! Pre-registered OAuth apps in each client's own fields (issue 17): read
//! from Claude Code's `oauth.clientId` / `oauth.callbackPort` / `oauth.scopes`,
//! Gemini CLI's `oauth` object and Switchboard's own file; kept verbatim on
//! edits (members Switchboard does not know stay, a secret is never written);
//! written in the target client's names when a server is copied.

mod common;

use common::fixture_home;
use serde_json::{json, Value};
use switchboard_engine::config::{OAuthApp, ServerDef, ServerPatch, Transport};
use switchboard_engine::sources::dialect::Dialect;
use switchboard_engine::writer::edit::{ServerEdit, Writer};

fn parse(d: Dialect, entry: Value) -> ServerDef {
    let p = d.parse_entry("remote", &entry);
    assert!(p.issues.is_empty(), "no issues: {:?}", p.issues);
    p.def
}

#[test]
fn claude_code_entry_as_claude_mcp_add_writes_it() {
    // `claude mcp add --transport http --client-id ID --callback-port 8765 remote URL`
    let def = parse(
        Dialect::ClaudeCode,
        json!({"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {"clientId": "ID", "callbackPort": 8765}}),
    );
    assert_eq!(def.transport, Transport::Http);
    let app = def.oauth.expect("the oauth object is read");
    assert_eq!(app.client_id.as_deref(), Some("ID"));
    assert_eq!(app.callback_port, Some(8765));
    assert_eq!(
        app.redirect().as_deref(),
        Some("http://localhost:8765/callback"),
        "Claude Code's redirect URI for a fixed port"
    );
    let scoped = parse(
        Dialect::ClaudeCode,
        json!({"type": "http", "url": "https://x.example/mcp", "oauth": {"clientId": "ID", "scopes": "read write"}}),
    );
    assert_eq!(
        scoped.oauth.unwrap().scopes,
        ["read", "write"],
        "Claude Code's scopes are one space-separated string"
    );
}

#[test]
fn gemini_oauth_object_is_read_with_its_redirect_uri_and_secret() {
    let def = parse(
        Dialect::Gemini,
        json!({"httpUrl": "https://mcp.example.com/mcp", "oauth": {"enabled": true, "clientId": "gem", "clientSecret": "${GEM_SECRET}", "authorizationUrl": "https://as.example/authorize", "tokenUrl": "https://as.example/token", "scopes": ["a", "b"], "redirectUri": "http://localhost:9999/oauth/callback"}}),
    );
    let app = def.oauth.unwrap();
    assert_eq!(app.client_id.as_deref(), Some("gem"));
    assert_eq!(
        app.client_secret.as_deref(),
        Some("${GEM_SECRET}"),
        "a secret the user wrote stays raw"
    );
    assert_eq!(app.scopes, ["a", "b"]);
    assert_eq!(app.port(), Some(9999));
    assert_eq!(
        app.redirect().as_deref(),
        Some("http://localhost:9999/oauth/callback")
    );
    let default = parse(
        Dialect::Gemini,
        json!({"httpUrl": "https://mcp.example.com/mcp", "oauth": {"enabled": true, "clientId": "gem"}}),
    );
    assert_eq!(
        default.oauth.unwrap().redirect().as_deref(),
        Some("http://localhost:7777/oauth/callback"),
        "Gemini's default redirect URI"
    );
    assert!(!format!("{:?}", parse(Dialect::Gemini, json!({"httpUrl": "https://x.example/mcp", "oauth": {"clientId": "g", "clientSecret": "s3cr3t-literal"}}))).contains("s3cr3t-literal"), "Debug redacts the secret");
}

#[test]
fn a_wrong_port_is_a_warning_naming_the_member() {
    let p = Dialect::ClaudeCode.parse_entry("remote", &json!({"type": "http", "url": "https://x.example/mcp", "oauth": {"clientId": "ID", "callbackPort": 70000}}));
    assert!(
        p.issues
            .iter()
            .any(|i| i.field.as_deref() == Some("oauth.callbackPort")
                && i.message.contains("70000")
                && !i.is_error),
        "{:?}",
        p.issues
    );
    assert_eq!(p.def.oauth.unwrap().callback_port, None);
}

#[test]
fn copied_servers_use_the_target_clients_names_and_never_carry_a_secret() {
    let from_claude = parse(
        Dialect::ClaudeCode,
        json!({"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {"clientId": "ID", "callbackPort": 8765, "scopes": "read write"}}),
    );
    let gemini = Dialect::Gemini.to_entry(&from_claude).unwrap();
    assert_eq!(
        gemini["oauth"],
        json!({"clientId": "ID", "redirectUri": "http://localhost:8765/callback", "scopes": ["read", "write"], "enabled": true})
    );
    let own = Dialect::Switchboard.to_entry(&from_claude).unwrap();
    assert_eq!(
        own["oauth"],
        json!({"clientId": "ID", "callbackPort": 8765, "scopes": ["read", "write"]})
    );

    let from_gemini = parse(
        Dialect::Gemini,
        json!({"httpUrl": "https://mcp.example.com/mcp", "oauth": {"clientId": "gem", "clientSecret": "literal-secret", "redirectUri": "http://localhost:9999/callback"}}),
    );
    let claude = Dialect::ClaudeCode.to_entry(&from_gemini).unwrap();
    assert_eq!(
        claude["oauth"],
        json!({"clientId": "gem", "callbackPort": 9999})
    );
    for d in Dialect::ALL {
        if let Ok(entry) = d.to_entry(&from_gemini) {
            assert!(
                !Value::Object(entry).to_string().contains("literal-secret"),
                "{d:?}: a secret is never written"
            );
        }
    }
    assert!(
        Dialect::Standard.to_entry(&from_gemini).is_err(),
        "a client without an OAuth field says so"
    );
    assert_eq!(Dialect::Standard.storable(&from_gemini).oauth, None);
}

#[test]
fn editing_the_oauth_app_changes_only_its_members_in_claude_code_json() {
    let f = fixture_home();
    let path = f.home.join(".claude.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let from = "\"url\": \"https://mcp.example.com/mcp\",\n";
    assert_eq!(text.matches(from).count(), 1);
    let shaped = text.replacen(from, &format!("{from}      \"oauth\": {{\"clientId\": \"ID\", \"callbackPort\": 8765, \"authServerMetadataUrl\": \"https://as.example/.well-known/oauth-authorization-server\"}},\n"), 1);
    std::fs::write(&path, &shaped).unwrap();

    let d = f.discover_trusted();
    let info = d
        .source("claude-code-user")
        .or_else(|| {
            d.sources
                .iter()
                .find(|s| s.spec.as_ref().is_some_and(|sp| sp.path == path))
        })
        .expect("Claude Code's user file");
    let spec = info.spec.clone().unwrap();
    let source_id = info.id.clone();
    let original = d
        .server("claude-code-user-only")
        .unwrap()
        .definitions
        .iter()
        .find(|x| x.source == info.id)
        .unwrap()
        .def
        .clone();
    assert_eq!(
        original.oauth.as_ref().and_then(|o| o.callback_port),
        Some(8765)
    );

    let mut edited = original.clone();
    edited.oauth = Some(OAuthApp {
        scopes: vec!["mcp".into(), "offline_access".into()],
        callback_port: Some(8766),
        ..original.oauth.clone().unwrap()
    });
    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .apply(
            &spec,
            ServerEdit::Patch {
                name: "claude-code-user-only".into(),
                patch: ServerPatch::between(&original, &edited),
            },
            info.hash,
        )
        .unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(
        v["mcpServers"]["claude-code-user-only"]["oauth"],
        json!({"clientId": "ID", "callbackPort": 8766, "authServerMetadataUrl": "https://as.example/.well-known/oauth-authorization-server", "scopes": "mcp offline_access"}),
        "the port changed in place, scopes added in Claude Code's form, the unknown member kept"
    );
    let outside = |t: &str| {
        t.split("\"oauth\"").next().unwrap().to_string()
            + t.split("\"oauth\"")
                .nth(1)
                .unwrap()
                .split_once('}')
                .unwrap()
                .1
    };
    assert_eq!(
        outside(&after),
        outside(&shaped),
        "no byte outside the oauth object changed"
    );

    // Clearing the app in the form removes what Switchboard writes, not the rest.
    let d = f.discover_trusted();
    let info = d.source(&source_id).unwrap();
    let original = d
        .server("claude-code-user-only")
        .unwrap()
        .definitions
        .iter()
        .find(|x| x.source == info.id)
        .unwrap()
        .def
        .clone();
    let mut cleared = original.clone();
    cleared.oauth = None;
    Writer::new(&f.host, &mut settings)
        .apply(
            &info.spec.clone().unwrap(),
            ServerEdit::Patch {
                name: "claude-code-user-only".into(),
                patch: ServerPatch::between(&original, &cleared),
            },
            info.hash,
        )
        .unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        v["mcpServers"]["claude-code-user-only"]["oauth"],
        json!({"authServerMetadataUrl": "https://as.example/.well-known/oauth-authorization-server"})
    );
}
