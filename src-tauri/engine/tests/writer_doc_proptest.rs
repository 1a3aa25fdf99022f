//! Property tests for `apply_edits`: it never panics, on any text and any
//! edit, and on valid JSON a successful `Set` leaves the value it was asked
//! to leave while the rest of the document keeps its value.

use proptest::prelude::*;
use serde_json::{json, Value};
use switchboard_engine::writer::doc::{apply_edits, DocEdit, PathSeg};
use switchboard_engine::writer::Format;

fn key() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        Just("mcpServers".to_string()),
        Just("mcp_servers".to_string()),
        Just("a".to_string()),
        Just("args".to_string()),
        Just("env".to_string()),
        "[a-z]{1,3}",
        ".{0,4}",
    ]
}

fn seg() -> impl Strategy<Value = PathSeg> + Clone {
    prop_oneof![4 => key().prop_map(PathSeg::Key), 1 => (0usize..4).prop_map(PathSeg::Index)]
}

fn json_value() -> impl Strategy<Value = Value> + Clone {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        ".{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn edit() -> impl Strategy<Value = DocEdit> {
    let path = prop::collection::vec(seg(), 0..4);
    prop_oneof![
        (path.clone(), json_value()).prop_map(|(path, value)| DocEdit::Set { path, value }),
        path.clone().prop_map(|path| DocEdit::Remove { path }),
        (path, key()).prop_map(|(path, new_key)| DocEdit::RenameKey { path, new_key }),
    ]
}

/// JSON-ish and TOML-ish text: fragments that often form almost-valid documents.
fn doc_text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just(",".to_string()),
        Just(":".to_string()),
        Just("\"a\"".to_string()),
        Just("\"mcpServers\"".to_string()),
        Just("1".to_string()),
        Just("true".to_string()),
        Just("null".to_string()),
        Just("\n".to_string()),
        Just("  ".to_string()),
        Just("// c\n".to_string()),
        Just("/* c */".to_string()),
        Just("[mcp_servers.a]\n".to_string()),
        Just("[[x]]\n".to_string()),
        Just("a = 1\n".to_string()),
        Just("b = { c = \"d\" }\n".to_string()),
        Just("args = [\"x\",\n]\n".to_string()),
        Just("# c\n".to_string()),
        Just("=".to_string()),
        ".{0,3}",
    ];
    prop::collection::vec(fragment, 0..24).prop_map(|parts| parts.concat())
}

/// The value at `path`, if every step exists.
fn get<'v>(mut value: &'v Value, path: &[PathSeg]) -> Option<&'v Value> {
    for seg in path {
        value = match seg {
            PathSeg::Key(k) => value.as_object()?.get(k)?,
            PathSeg::Index(i) => value.as_array()?.get(*i)?,
        };
    }
    Some(value)
}

fn parse_jsonc(text: &str) -> Option<Value> {
    jsonc_parser::parse_to_serde_value::<Option<Value>>(text, &Default::default())
        .ok()
        .flatten()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_arbitrary_strings(text in ".{0,64}", edits in prop::collection::vec(edit(), 0..3)) {
        for format in [Format::Json, Format::Jsonc, Format::Toml, Format::Yaml] {
            let _ = apply_edits(format, &text, &edits);
        }
    }

    #[test]
    fn never_panics_on_document_like_text(text in doc_text(), edits in prop::collection::vec(edit(), 0..3)) {
        for format in [Format::Json, Format::Jsonc, Format::Toml, Format::Yaml] {
            let _ = apply_edits(format, &text, &edits);
        }
    }

    #[test]
    fn set_on_json_leaves_exactly_the_new_value(
        doc in json_value(),
        pretty in any::<bool>(),
        path in prop::collection::vec(seg(), 1..4),
        value in json_value(),
    ) {
        let text = if pretty { serde_json::to_string_pretty(&doc) } else { serde_json::to_string(&doc) }.unwrap();
        let edit = DocEdit::Set { path: path.clone(), value: value.clone() };
        if let Ok(out) = apply_edits(Format::Jsonc, &text, &[edit]) {
            let after = parse_jsonc(&out);
            prop_assert!(after.is_some(), "result does not parse:\n{}", out);
            let after = after.unwrap();
            prop_assert_eq!(get(&after, &path), Some(&value), "value at path, result:\n{}", out);
        }
    }

    #[test]
    fn set_on_yaml_leaves_exactly_the_new_value_and_the_rest(
        doc in json_value(),
        path in prop::collection::vec(key().prop_map(PathSeg::Key), 1..4),
        value in json_value(),
    ) {
        let Value::Object(_) = &doc else { return Ok(()) };
        let text = serde_norway::to_string(&doc).unwrap();
        let edit = DocEdit::Set { path: path.clone(), value: value.clone() };
        if let Ok(out) = apply_edits(Format::Yaml, &text, &[edit]) {
            let after: Value = serde_norway::from_str(&out).unwrap_or(Value::Null);
            prop_assert_eq!(get(&after, &path), Some(&value), "value at path, result:\n{}", out);
            // Every top-level key the path does not go through is as it was.
            let PathSeg::Key(first) = &path[0] else { unreachable!() };
            for (k, v) in doc.as_object().unwrap().iter().filter(|(k, _)| *k != first) {
                prop_assert_eq!(after.get(k), Some(v), "{} changed:\n{}", k, out);
            }
        }
    }

    #[test]
    fn set_equal_value_is_byte_identical(doc in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&doc) } else { serde_json::to_string(&doc) }.unwrap();
        if let Value::Object(map) = &doc {
            for (k, v) in map {
                let edit = DocEdit::Set { path: vec![PathSeg::Key(k.clone())], value: v.clone() };
                let out = apply_edits(Format::Json, &text, &[edit]).unwrap();
                prop_assert_eq!(&out, &text);
            }
        }
    }

    #[test]
    fn remove_on_json_leaves_valid_json(doc in json_value(), pretty in any::<bool>(), path in prop::collection::vec(seg(), 1..3)) {
        let text = if pretty { serde_json::to_string_pretty(&doc) } else { serde_json::to_string(&doc) }.unwrap();
        let out = apply_edits(Format::Json, &text, &[DocEdit::Remove { path: path.clone() }]).unwrap();
        if !out.trim().is_empty() {
            let parsed: Result<Value, _> = serde_json::from_str(&out);
            prop_assert!(parsed.is_ok(), "not strict JSON after remove {:?}:\n{}", path, out);
        }
    }
}

#[test]
fn set_into_toml_round_trips_a_server() {
    let value = json!({"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}, "enabled": true, "startup_timeout_sec": 20});
    let path = vec![PathSeg::Key("mcp_servers".into()), PathSeg::Key("x".into())];
    let out = apply_edits(
        Format::Toml,
        "",
        &[DocEdit::Set {
            path: path.clone(),
            value: value.clone(),
        }],
    )
    .unwrap();
    let again = apply_edits(Format::Toml, &out, &[DocEdit::Set { path, value }]).unwrap();
    assert_eq!(
        again, out,
        "setting the same server again changes nothing:\n{out}"
    );
}
