//! Property tests: no input makes a parser, a dialect or the variable
//! expander panic, and discovery of arbitrary file contents never fails as a whole.

mod common;

use proptest::prelude::*;
use serde_json::Value;
use switchboard_engine::config::vars::{expand, Expansion, VarContext};
use switchboard_engine::sources::read::parse;
use switchboard_engine::sources::{Client, Dialect};
use switchboard_engine::writer::Format;

const CLIENTS: [Client; 15] = [
    Client::Switchboard,
    Client::ClaudeDesktop,
    Client::ClaudeCode,
    Client::Cursor,
    Client::Vscode,
    Client::Windsurf,
    Client::Zed,
    Client::Cline,
    Client::Roo,
    Client::Gemini,
    Client::Codex,
    Client::Goose,
    Client::Lmstudio,
    Client::Continue,
    Client::Fallback,
];

const DIALECTS: [Dialect; 12] = [
    Dialect::Switchboard,
    Dialect::Standard,
    Dialect::ClaudeCode,
    Dialect::Vscode,
    Dialect::Windsurf,
    Dialect::Zed,
    Dialect::Cline,
    Dialect::Roo,
    Dialect::Gemini,
    Dialect::Codex,
    Dialect::Goose,
    Dialect::Continue,
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z${}:/ -]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("command".to_string()),
                        Just("url".to_string()),
                        Just("type".to_string()),
                        Just("args".to_string()),
                        Just("env".to_string()),
                        Just("timeout".to_string()),
                        Just("enabled".to_string()),
                        Just("disabled".to_string()),
                        "[a-zA-Z]{1,8}".prop_map(String::from)
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Text that looks like config files: fragments of JSON, TOML and YAML syntax.
fn config_like() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("{".to_string()),
            Just("}".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just("\"mcpServers\"".to_string()),
            Just(":".to_string()),
            Just(",".to_string()),
            Just("\n".to_string()),
            Just("// c\n".to_string()),
            Just("/* c */".to_string()),
            Just("[mcp_servers.x]\n".to_string()),
            Just("command = \"npx\"\n".to_string()),
            Just("- name: x\n".to_string()),
            Just("  cmd: y\n".to_string()),
            Just("\"\\u12".to_string()),
            Just("'".to_string()),
            "[ -~]{0,6}".prop_map(String::from),
        ],
        0..40,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn parsers_never_panic(text in config_like()) {
        for f in [Format::Json, Format::Jsonc, Format::Toml, Format::Yaml] {
            let _ = parse(f, &text);
        }
    }

    #[test]
    fn parsers_never_panic_on_any_bytes(text in any::<String>()) {
        for f in [Format::Json, Format::Jsonc, Format::Toml, Format::Yaml] {
            let _ = parse(f, &text);
        }
    }

    #[test]
    fn dialects_never_panic_and_round_trip_valid_defs(entry in json_value(), name in "[a-z]{1,8}") {
        for d in DIALECTS {
            let parsed = d.parse_entry(&name, &entry);
            if parsed.issues.iter().all(|i| !i.is_error) && parsed.not_runnable.is_none() {
                // A valid definition written in the client's format reads back the same.
                if let Ok(e) = d.to_entry(&parsed.def) {
                    let back = d.parse_entry(&name, &Value::Object(e)).def;
                    prop_assert_eq!(&back.transport, &parsed.def.transport, "{:?}", d);
                    prop_assert_eq!(&back.command, &parsed.def.command, "{:?}", d);
                    prop_assert_eq!(&back.url, &parsed.def.url, "{:?}", d);
                    prop_assert_eq!(&back.args, &parsed.def.args, "{:?}", d);
                }
            }
        }
    }

    #[test]
    fn expander_never_panics_and_keeps_plain_text(s in any::<String>()) {
        // Every client's rules; without a `$` nothing is a reference.
        for client in CLIENTS {
            let e = expand(&s, &VarContext { expansion: client.expansion(), ..VarContext::default() });
            if !s.contains('$') {
                prop_assert_eq!(&e.value, &s);
            }
        }
        let e = expand(&s, &VarContext { expansion: Expansion::SWITCHBOARD, ..VarContext::default() });
        if !s.contains("${") {
            prop_assert_eq!(e.value, s);
        }
    }

}

proptest! {
    // Each case copies the fixture machine: fewer cases keep the suite fast.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn discovery_survives_garbage_in_every_file(text in config_like()) {
        let f = common::fixture_home();
        for p in ["home/.cursor/mcp.json", "home/.codex/config.toml", "home/.config/goose/config.yaml", "home/.config/zed/settings.json"] {
            std::fs::write(f.dir.path().join(p), &text).unwrap();
        }
        let d = f.discover_trusted();
        prop_assert!(d.errors.is_empty());
        prop_assert!(d.server("claude-desktop-only").is_some(), "other sources still load");
    }
}
