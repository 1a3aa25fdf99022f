//! Large JSON(C) files are edited on their skeleton (`writer::doc::scan`):
//! the edited object is cut out with its ancestors, edited, and put back.
//! These tests hold that shortcut to the whole-document edit, byte for byte,
//! on documents of every layout, and the scan to accepting only what the
//! parser accepts.

use proptest::prelude::*;
use serde_json::{json, Value};
use switchboard_engine::writer::doc::scan;
use switchboard_engine::writer::doc::{
    apply_edits, apply_edits_around, apply_edits_whole_document, Around, DocEdit, PathSeg,
};
use switchboard_engine::writer::Format;

/// How a generated document is laid out.
#[derive(Debug, Clone)]
struct Style {
    /// `None`: all on one line.
    indent: Option<&'static str>,
    crlf: bool,
    trailing_commas: bool,
    comments: bool,
    /// Spaces after `:` and `,` on one line.
    spaced: bool,
}

fn style() -> impl Strategy<Value = Style> {
    (
        prop_oneof![
            Just(None),
            Just(Some("  ")),
            Just(Some("    ")),
            Just(Some("\t"))
        ],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(indent, crlf, trailing_commas, comments, spaced)| Style {
            indent,
            crlf,
            trailing_commas,
            comments,
            spaced,
        })
}

/// `value` written in `style`; objects and arrays at `depth` or deeper than
/// `inline_from` stay on one line, as hand-edited files often have them.
fn render(value: &Value, style: &Style, depth: usize, inline_from: usize, out: &mut String) {
    let nl = if style.crlf { "\r\n" } else { "\n" };
    let multi = style.indent.is_some() && depth < inline_from;
    let pad = |d: usize| style.indent.unwrap_or("").repeat(d);
    let sep = if style.spaced { " " } else { "" };
    let (open, close, items): (&str, &str, Vec<(Option<&String>, &Value)>) = match value {
        Value::Object(m) => ("{", "}", m.iter().map(|(k, v)| (Some(k), v)).collect()),
        Value::Array(a) => ("[", "]", a.iter().map(|v| (None, v)).collect()),
        scalar => {
            out.push_str(&serde_json::to_string(scalar).unwrap());
            return;
        }
    };
    out.push_str(open);
    for (i, (k, v)) in items.iter().enumerate() {
        if multi {
            out.push_str(nl);
            if style.comments && i % 2 == 1 {
                out.push_str(&format!("{}// note {i}{nl}", pad(depth + 1)));
            }
            out.push_str(&pad(depth + 1));
        } else if i > 0 {
            out.push_str(sep);
        }
        if let Some(k) = k {
            out.push_str(&serde_json::to_string(k).unwrap());
            out.push(':');
            out.push_str(if multi { " " } else { sep });
            if style.comments && !multi && i == 0 {
                out.push_str("/* c */");
            }
        }
        render(v, style, depth + 1, inline_from, out);
        if i + 1 < items.len() || style.trailing_commas {
            out.push(',');
        }
    }
    if multi && !items.is_empty() {
        out.push_str(nl);
        out.push_str(&pad(depth));
    }
    out.push_str(close);
}

fn key() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        Just("mcpServers".to_string()),
        Just("srv".to_string()),
        Just("args".to_string()),
        Just("env".to_string()),
        Just("projects".to_string()),
        "[a-c]{1,2}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> + Clone {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        "[a-z \"\\\\é]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn path() -> impl Strategy<Value = Vec<PathSeg>> {
    prop::collection::vec(
        prop_oneof![4 => key().prop_map(PathSeg::Key), 1 => (0usize..3).prop_map(PathSeg::Index)],
        1..5,
    )
}

fn edit() -> impl Strategy<Value = DocEdit> {
    prop_oneof![
        3 => (path(), json_value()).prop_map(|(path, value)| DocEdit::Set { path, value }),
        1 => path().prop_map(|path| DocEdit::Remove { path }),
        1 => (path(), key()).prop_map(|(path, new_key)| DocEdit::RenameKey { path, new_key }),
    ]
}

/// A document with servers among big neighbours, like `~/.claude.json`.
fn document() -> impl Strategy<Value = Value> {
    (json_value(), json_value(), json_value()).prop_map(|(servers, before, after)| {
        json!({
            "numStartups": 3,
            "history": [before.clone(), {"display": "fix it", "pasted": before}],
            "mcpServers": {"srv": servers, "other": {"command": "x", "args": ["a", "b"]}},
            "projects": {"/p": {"history": [after.clone()], "mcpServers": {"srv": after}}},
        })
    })
}

fn same_outcome(text: &str, edits: &[DocEdit]) -> Result<(), TestCaseError> {
    let fast = apply_edits(Format::Jsonc, text, edits).map_err(|e| e.to_string());
    let whole = apply_edits_whole_document(Format::Jsonc, text, edits).map_err(|e| e.to_string());
    prop_assert_eq!(
        fast,
        whole,
        "skeleton and whole-document edits differ on\n{}\nedits {:?}",
        text,
        edits
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 768, ..ProptestConfig::default() })]

    #[test]
    fn the_skeleton_edit_is_the_whole_document_edit(
        doc in document(),
        style in style(),
        inline_from in 1usize..6,
        bom in any::<bool>(),
        edits in prop::collection::vec(edit(), 1..3),
    ) {
        let mut text = String::new();
        render(&doc, &style, 0, inline_from, &mut text);
        if style.indent.is_some() {
            text.push_str(if style.crlf { "\r\n" } else { "\n" });
        }
        if bom {
            text.insert(0, '\u{feff}');
        }
        same_outcome(&text, &edits)?;
    }

    #[test]
    fn server_edits_in_the_skeleton_are_the_whole_document_edit(
        doc in document(),
        style in style(),
        inline_from in 1usize..6,
        under in prop_oneof![
            Just(vec![PathSeg::Key("mcpServers".into())]),
            Just(vec![PathSeg::Key("projects".into()), PathSeg::Key("/p".into()), PathSeg::Key("mcpServers".into())]),
            Just(vec![PathSeg::Key("projects".into()), PathSeg::Key("/q".into()), PathSeg::Key("mcpServers".into())]),
        ],
        name in prop_oneof![Just("srv".to_string()), Just("other".to_string()), Just("new".to_string())],
        rest in prop::collection::vec(key().prop_map(PathSeg::Key), 0..2),
        value in json_value(),
        remove in any::<bool>(),
    ) {
        let mut text = String::new();
        render(&doc, &style, 0, inline_from, &mut text);
        let mut path = under;
        path.push(PathSeg::Key(name));
        path.extend(rest);
        let edit = if remove { DocEdit::Remove { path } } else { DocEdit::Set { path, value } };
        same_outcome(&text, &[edit])?;
    }

    /// The editor reads a file once (`scan::locate_around`) and edits it on
    /// the skeleton that pass took around the servers' container: the same
    /// values as `locate` finds, and the same result as editing the whole
    /// document, also for edits elsewhere, which take their own way.
    #[test]
    fn an_edit_on_the_skeleton_taken_while_reading_is_the_whole_document_edit(
        doc in document(),
        style in style(),
        inline_from in 1usize..6,
        bom in any::<bool>(),
        under in prop_oneof![
            Just(vec![PathSeg::Key("mcpServers".into())]),
            Just(vec![PathSeg::Key("projects".into()), PathSeg::Key("/p".into()), PathSeg::Key("mcpServers".into())]),
            Just(vec![PathSeg::Key("projects".into()), PathSeg::Key("/q".into()), PathSeg::Key("mcpServers".into())]),
            path(),
        ],
        name in prop_oneof![Just("srv".to_string()), Just("other".to_string()), Just("new".to_string())],
        value in json_value(),
        elsewhere in prop::collection::vec(edit(), 0..2),
    ) {
        let mut text = String::new();
        render(&doc, &style, 0, inline_from, &mut text);
        if bom {
            text.insert(0, '\u{feff}');
        }
        let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let Ok((found, skeleton)) = scan::locate_around(body, true, &[&under], 0) else {
            prop_assert!(scan::locate(body, true, &[&under]).is_err(), "locate_around is unsure only where locate is");
            return Ok(());
        };
        prop_assert_eq!(&found, &scan::locate(body, true, &[&under]).unwrap());
        let mut path = under.clone();
        path.push(PathSeg::Key(name));
        let mut edits = vec![DocEdit::Set { path, value }];
        edits.extend(elsewhere);
        let around = Around { path: under, skeleton };
        let read_once = apply_edits_around(Format::Jsonc, &text, &edits, Some(&around)).map_err(|e| e.to_string());
        let whole = apply_edits_whole_document(Format::Jsonc, &text, &edits).map_err(|e| e.to_string());
        prop_assert_eq!(read_once, whole, "on\n{}\nedits {:?}", text, edits);
    }

    /// What the scan accepts, the parser that reads the file accepts, with
    /// the options `sources::read` uses for JSON and for JSONC.
    #[test]
    fn scan_accepts_only_what_the_parser_accepts(text in doc_text()) {
        for jsonc in [false, true] {
            if scan::check(&text, jsonc).is_ok() {
                let options = jsonc_parser::ParseOptions {
                    allow_comments: jsonc,
                    allow_trailing_commas: jsonc,
                    allow_loose_object_property_names: false,
                    allow_missing_commas: false,
                    allow_single_quoted_strings: false,
                    allow_hexadecimal_numbers: false,
                    allow_unary_plus_numbers: false,
                    ..Default::default()
                };
                let parsed = jsonc_parser::parse_to_ast(&text, &Default::default(), &options)
                    .map(|p| p.value.is_some());
                prop_assert!(matches!(parsed, Ok(true)), "scan accepted (jsonc: {}) what the parser refuses: {:?}\n{:?}", jsonc, text, parsed.map_err(|e| e.to_string()));
            }
        }
    }
}

/// JSON-ish text: fragments that often form almost-valid documents.
fn doc_text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just(",".to_string()),
        Just(":".to_string()),
        Just("\"a\"".to_string()),
        Just("\"\\u00e9\\n\"".to_string()),
        Just("\"\\ud83d\\ude00\"".to_string()),
        Just("\"\\x41\"".to_string()),
        Just("1".to_string()),
        Just("-0.5e3".to_string()),
        Just("01".to_string()),
        Just("true".to_string()),
        Just("null".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("\r".to_string()),
        Just("  ".to_string()),
        Just("// c\n".to_string()),
        Just("/* c */".to_string()),
        Just("/* c".to_string()),
        ".{0,3}",
    ];
    prop::collection::vec(fragment, 0..24).prop_map(|parts| parts.concat())
}

/// A several-MB `~/.claude.json` with comments and odd layout far from the
/// edit: every byte outside the edited server is the same afterwards.
#[test]
fn an_edit_in_a_big_file_changes_only_the_edited_server() {
    let mut text = String::from("{\n  // Claude Code's file, with notes by hand\n  \"numStartups\": 187,\n  \"mcpServers\": {\n    \"github\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"@modelcontextprotocol/server-github\"], // pinned\n      \"env\": {\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"}\n    },\n    \"notes\": { \"command\": \"uvx\",   \"args\": [ \"mcp-notes\" ] }\n  },\n  \"projects\": {\n");
    let mut p = 0;
    while text.len() < 3 * 1024 * 1024 {
        text.push_str(&format!(
            "    \"/home/me/code/p{p}\": {{\n\t\"history\": [{}],\n      /* odd */ \"mcpServers\" :{{}},\"lastCost\":1.5 ,\n      \"allowedTools\": [ ]\n    }},\n",
            (0..40)
                .map(|h| format!("{{\"display\": \"prompt {h} with \\\"quotes\\\" and \\n a newline — ok\"}}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        p += 1;
    }
    text.push_str("    \"/last\": {}\n  },\n  \"theme\": \"dark\",\n}\n");

    let entry_start = text.find("    \"github\"").unwrap();
    let entry_end = text.find("    \"notes\"").unwrap();
    let edits = [
        DocEdit::Set {
            path: vec![
                PathSeg::Key("mcpServers".into()),
                PathSeg::Key("github".into()),
                PathSeg::Key("args".into()),
            ],
            value: json!(["-y", "@modelcontextprotocol/server-github", "--read-only"]),
        },
        DocEdit::Set {
            path: vec![
                PathSeg::Key("mcpServers".into()),
                PathSeg::Key("github".into()),
                PathSeg::Key("env".into()),
                PathSeg::Key("LOG".into()),
            ],
            value: json!("debug"),
        },
    ];
    let started = std::time::Instant::now();
    let out = apply_edits(Format::Jsonc, &text, &edits).unwrap();
    let took = started.elapsed();
    assert_eq!(
        &out[..entry_start],
        &text[..entry_start],
        "bytes before the server"
    );
    let tail = &text[entry_end..];
    assert!(out.ends_with(tail), "bytes after the server");
    let entry = &out[entry_start..out.len() - tail.len()];
    assert!(entry.contains("\"--read-only\"]"), "{entry}");
    assert!(entry.contains("// pinned"), "{entry}");
    assert!(entry.contains("\"LOG\": \"debug\""), "{entry}");
    assert_eq!(
        out,
        apply_edits_whole_document(Format::Jsonc, &text, &edits).unwrap(),
        "the shortcut and the whole-document edit agree"
    );
    // A project's servers, deep in the file, the same way.
    let add = [DocEdit::Set {
        path: vec![
            PathSeg::Key("projects".into()),
            PathSeg::Key("/home/me/code/p7".into()),
            PathSeg::Key("mcpServers".into()),
            PathSeg::Key("local".into()),
        ],
        value: json!({"command": "node", "args": ["srv.js"]}),
    }];
    let out2 = apply_edits(Format::Jsonc, &out, &add).unwrap();
    assert_eq!(
        out2,
        apply_edits_whole_document(Format::Jsonc, &out, &add).unwrap()
    );
    let at = out.find("\"/home/me/code/p7\"").unwrap();
    assert_eq!(&out2[..at], &out[..at]);
    // The shortcut costs what the edited object costs, not the file (loose
    // bound: debug build on a busy machine).
    assert!(took < std::time::Duration::from_secs(2), "{took:?}");
}
