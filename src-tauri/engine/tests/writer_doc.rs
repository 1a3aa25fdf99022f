//! Byte-level round trips for `writer::doc::apply_edits`: edit one server and
//! check that every byte outside that server's slot is unchanged, and that
//! the result reads back as the expected value (keys in the expected order).

use std::ops::Range;

use jsonc_parser::{ast, CollectOptions, ParseOptions};
use serde_json::{json, Map, Value};
use switchboard_engine::writer::doc::{apply_edits, DocEdit, DocError, PathSeg};
use switchboard_engine::writer::Format;

// ---------------------------------------------------------------- helpers

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

fn path(keys: &[&str]) -> Vec<PathSeg> {
    keys.iter().map(|k| key(k)).collect()
}

fn set(keys: &[&str], value: Value) -> DocEdit {
    DocEdit::Set {
        path: path(keys),
        value,
    }
}

fn remove(keys: &[&str]) -> DocEdit {
    DocEdit::Remove { path: path(keys) }
}

fn rename(keys: &[&str], new_key: &str) -> DocEdit {
    DocEdit::RenameKey {
        path: path(keys),
        new_key: new_key.to_string(),
    }
}

/// The byte range of `before` that differs from `after` (common prefix and
/// suffix stripped), as positions in `before`.
fn changed_range(before: &str, after: &str) -> Range<usize> {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let prefix = b.iter().zip(a).take_while(|(x, y)| x == y).count();
    let max_suffix = b.len().min(a.len()) - prefix;
    let suffix = b
        .iter()
        .rev()
        .zip(a.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    prefix..b.len() - suffix
}

/// Every byte of `before` outside `allowed` must be in `after`, unchanged:
/// the part before it as a prefix, the part after it as a suffix.
fn assert_changed_within(before: &str, after: &str, allowed: Range<usize>, what: &str) {
    let head = &before[..allowed.start];
    let tail = &before[allowed.end..];
    assert!(
        after.starts_with(head) && after[head.len()..].ends_with(tail),
        "{what}: bytes outside {allowed:?} changed (diff is {:?})\n--- before:\n{before}\n--- after:\n{after}",
        changed_range(before, after)
    );
}

/// Where a server sits in a JSON(C) document: from the end of the previous
/// property (or the `{`) to the start of the next one (or the `}`). Removing
/// or editing the server may only touch bytes in here.
fn json_slot(text: &str, container: &[&str], name: Option<&str>) -> Range<usize> {
    let parsed =
        jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
            .expect("fixture parses");
    let mut object = match parsed.value.expect("fixture has a value") {
        ast::Value::Object(o) => o,
        other => panic!("fixture root is not an object: {other:?}"),
    };
    for k in container {
        object = match object
            .properties
            .into_iter()
            .find(|p| p.name.as_str() == *k)
            .map(|p| p.value)
        {
            Some(ast::Value::Object(o)) => o,
            _ => panic!("fixture has no object at {k}"),
        };
    }
    let props = &object.properties;
    let open = object.range.start + 1;
    let close = object.range.end - 1;
    match name {
        None => {
            // appending: after the last property, before the `}`
            let start = props.last().map(|p| p.range.end).unwrap_or(open);
            start..close
        }
        Some(name) => {
            let i = props
                .iter()
                .position(|p| p.name.as_str() == name)
                .expect("server in fixture");
            let start = if i == 0 { open } else { props[i - 1].range.end };
            let end = props.get(i + 1).map(|p| p.range.start).unwrap_or(close);
            start..end
        }
    }
}

fn parse_jsonc(text: &str) -> Value {
    jsonc_parser::parse_to_serde_value::<Value>(text, &ParseOptions::default())
        .unwrap_or_else(|e| panic!("result is not valid JSONC ({e}):\n{text}"))
}

fn parse_strict_json(text: &str) -> Value {
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("result is not strict JSON ({e}):\n{text}"))
}

fn parse_toml(text: &str) -> Value {
    fn value(v: &toml_edit::Value) -> Value {
        match v {
            toml_edit::Value::String(s) => json!(s.value()),
            toml_edit::Value::Integer(i) => json!(i.value()),
            toml_edit::Value::Float(f) => json!(f.value()),
            toml_edit::Value::Boolean(b) => json!(b.value()),
            toml_edit::Value::Datetime(d) => json!(d.value().to_string()),
            toml_edit::Value::Array(a) => Value::Array(a.iter().map(value).collect()),
            toml_edit::Value::InlineTable(t) => {
                Value::Object(t.iter().map(|(k, v)| (k.to_string(), value(v))).collect())
            }
        }
    }
    fn item(i: &toml_edit::Item) -> Value {
        match i {
            toml_edit::Item::None => Value::Null,
            toml_edit::Item::Value(v) => value(v),
            toml_edit::Item::Table(t) => {
                Value::Object(t.iter().map(|(k, v)| (k.to_string(), item(v))).collect())
            }
            toml_edit::Item::ArrayOfTables(a) => Value::Array(
                a.iter()
                    .map(|t| item(&toml_edit::Item::Table(t.clone())))
                    .collect(),
            ),
        }
    }
    let doc: toml_edit::DocumentMut = text
        .parse()
        .unwrap_or_else(|e| panic!("result is not valid TOML ({e}):\n{text}"));
    item(doc.as_item())
}

/// The reference model: the same edit applied to a plain value.
fn model(mut value: Value, edit: &DocEdit) -> Value {
    fn slot<'v>(mut v: &'v mut Value, path: &[PathSeg]) -> &'v mut Value {
        for seg in path {
            v = match seg {
                PathSeg::Key(k) => v
                    .as_object_mut()
                    .unwrap()
                    .entry(k.clone())
                    .or_insert_with(|| json!({})),
                PathSeg::Index(i) => &mut v.as_array_mut().unwrap()[*i],
            };
        }
        v
    }
    match edit {
        DocEdit::Set { path, value: new } => {
            let (last, parents) = path.split_last().unwrap();
            let parent = slot(&mut value, parents);
            match last {
                PathSeg::Key(k) => {
                    parent
                        .as_object_mut()
                        .unwrap()
                        .insert(k.clone(), new.clone());
                }
                PathSeg::Index(i) => {
                    let array = parent.as_array_mut().unwrap();
                    if *i == array.len() {
                        array.push(new.clone());
                    } else {
                        array[*i] = new.clone();
                    }
                }
            }
        }
        DocEdit::Remove { path } => {
            let (last, parents) = path.split_last().unwrap();
            let parent = slot(&mut value, parents);
            match last {
                PathSeg::Key(k) => {
                    parent.as_object_mut().unwrap().shift_remove(k);
                }
                PathSeg::Index(i) => {
                    parent.as_array_mut().unwrap().remove(*i);
                }
            }
        }
        DocEdit::RenameKey { path, new_key } => {
            let (PathSeg::Key(old), parents) = path.split_last().unwrap() else {
                panic!()
            };
            let parent = slot(&mut value, parents).as_object_mut().unwrap();
            let renamed: Map<String, Value> = std::mem::take(parent)
                .into_iter()
                .map(|(k, v)| {
                    if &k == old {
                        (new_key.clone(), v)
                    } else {
                        (k, v)
                    }
                })
                .collect();
            *parent = renamed;
        }
    }
    value
}

/// Compare with key order: `serde_json::Value` equality ignores it.
fn assert_same_value_and_order(actual: &Value, expected: &Value, what: &str) {
    assert_eq!(
        serde_json::to_string_pretty(actual).unwrap(),
        serde_json::to_string_pretty(expected).unwrap(),
        "{what}: value (or key order) differs"
    );
}

/// Re-indent a 2-space fixture with another indent unit.
fn reindent(text: &str, unit: &str) -> String {
    text.lines()
        .map(|line| {
            let spaces = line.len() - line.trim_start_matches(' ').len();
            format!("{}{}", unit.repeat(spaces / 2), &line[spaces..])
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

// ---------------------------------------------------------------- fixtures

const CLAUDE_JSON: &str = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "github": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ],
      "env": {
        "GITHUB_TOKEN": "ghp_example"
      }
    },
    "fetch": {
      "command": "uvx",
      "args": ["mcp-server-fetch"]
    }
  },
  "globalShortcut": "Ctrl+Space",
  "zTheme": "dark"
}"#;

const COMPACT_JSON: &str = r#"{"mcpServers":{"filesystem":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem"]},"github":{"command":"npx","args":["-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_TOKEN":"ghp_example"}},"fetch":{"command":"uvx","args":["mcp-server-fetch"]}},"globalShortcut":"Ctrl+Space"}"#;

const VSCODE_JSONC: &str = r#"// VS Code user mcp.json
{
  /* servers Switchboard manages */
  "servers": {
    // the file system server
    "filesystem": {
      "type": "stdio",
      "command": "npx", // pinned below
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}",],
    },
    // GitHub, needs a token
    "github": {
      "type": "stdio",
      "command": "npx",
      /* inside github */
      "args": [
        "-y",
        "@modelcontextprotocol/server-github", // the package
      ],
      "env": {
        "GITHUB_TOKEN": "${input:token}",
      },
    },
    "fetch": { "type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"] }, // trailing neighbour
  },
  "inputs": [
    { "id": "token", "type": "promptString", "password": true },
  ],
}
"#;

const CODEX_TOML: &str = r#"# Codex config
model = "o3"
approval_policy = "on-request"

[profiles.fast]
model = "o4-mini"

# file system access
[mcp_servers.filesystem]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"] # pinned

[mcp_servers.github]
command = "npx" # from npm
args = [
  "-y",
  "@modelcontextprotocol/server-github",
]
env = { GITHUB_TOKEN = "ghp_example" }

[mcp_servers.github.tools]
enabled = true

# other tables after
[history]
persistence = "save-all"
"#;

fn toml_section(text: &str, header: &str) -> Range<usize> {
    let start = text
        .find(header)
        .unwrap_or_else(|| panic!("{header} in fixture"));
    let after = start + header.len();
    let end = text[after..]
        .find("\n[")
        .map(|i| after + i + 1)
        .unwrap_or(text.len());
    start..end
}

// ---------------------------------------------------------------- JSON

struct JsonCase {
    name: &'static str,
    text: String,
    strict: bool,
}

fn json_cases() -> Vec<JsonCase> {
    vec![
        JsonCase {
            name: "2-space JSON",
            text: CLAUDE_JSON.to_string(),
            strict: true,
        },
        JsonCase {
            name: "4-space JSON",
            text: reindent(CLAUDE_JSON, "    "),
            strict: true,
        },
        JsonCase {
            name: "tab JSON",
            text: reindent(CLAUDE_JSON, "\t"),
            strict: true,
        },
        JsonCase {
            name: "compact JSON",
            text: COMPACT_JSON.to_string(),
            strict: true,
        },
        JsonCase {
            name: "JSONC",
            text: VSCODE_JSONC.to_string(),
            strict: false,
        },
    ]
}

fn container(case: &JsonCase) -> &'static str {
    if case.strict {
        "mcpServers"
    } else {
        "servers"
    }
}

/// Apply `edit` to every JSON fixture and check the bytes and the value.
fn check_json_edit(edit_for: impl Fn(&str) -> DocEdit, server: Option<&str>) {
    for case in json_cases() {
        let c = container(&case);
        let edit = edit_for(c);
        let format = if case.strict {
            Format::Json
        } else {
            Format::Jsonc
        };
        let after = apply_edits(format, &case.text, std::slice::from_ref(&edit))
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let allowed = json_slot(&case.text, &[c], server);
        assert_changed_within(&case.text, &after, allowed, case.name);
        let actual = if case.strict {
            parse_strict_json(&after)
        } else {
            parse_jsonc(&after)
        };
        let expected = model(parse_jsonc(&case.text), &edit);
        assert_same_value_and_order(&actual, &expected, case.name);
        if !case.strict {
            // a comment on the same line after a property goes with it when it is removed
            let own_comment = if server == Some("fetch") {
                ""
            } else {
                "// trailing neighbour"
            };
            for comment in [
                "// VS Code user mcp.json",
                "/* servers Switchboard manages */",
                own_comment,
            ] {
                assert!(
                    after.contains(comment),
                    "{}: comment {comment:?} lost:\n{after}",
                    case.name
                );
            }
        }
    }
}

#[test]
fn json_change_one_arg_touches_only_that_server() {
    check_json_edit(
        |c| {
            set(
                &[c, "github", "args"],
                json!(["-y", "@modelcontextprotocol/server-github@1.2.3"]),
            )
        },
        Some("github"),
    );
}

#[test]
fn json_change_one_arg_keeps_multiline_array_layout() {
    let edit = set(
        &["mcpServers", "github", "args"],
        json!(["-y", "@modelcontextprotocol/server-github@2"]),
    );
    let after = apply_edits(Format::Json, CLAUDE_JSON, &[edit]).unwrap();
    assert!(
        after.contains("\"args\": [\n        \"-y\",\n        \"@modelcontextprotocol/server-github@2\"\n      ],"),
        "only the changed element should differ:\n{after}"
    );
}

#[test]
fn json_add_env_var_to_existing_env() {
    check_json_edit(
        |c| {
            set(
                &[c, "github", "env", "GITHUB_HOST"],
                json!("github.example.com"),
            )
        },
        Some("github"),
    );
}

#[test]
fn json_add_env_var_creates_env_object() {
    check_json_edit(
        |c| set(&[c, "filesystem", "env", "DEBUG"], json!("1")),
        Some("filesystem"),
    );
}

#[test]
fn json_remove_a_key_of_a_server() {
    check_json_edit(|c| remove(&[c, "github", "env"]), Some("github"));
}

#[test]
fn json_add_a_new_server() {
    check_json_edit(
        |c| {
            set(
                &[c, "memory"],
                json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"A": "1"}}),
            )
        },
        None,
    );
}

#[test]
fn json_remove_a_middle_server() {
    check_json_edit(|c| remove(&[c, "github"]), Some("github"));
}

#[test]
fn json_remove_the_first_server() {
    check_json_edit(|c| remove(&[c, "filesystem"]), Some("filesystem"));
}

#[test]
fn json_remove_the_last_server() {
    check_json_edit(|c| remove(&[c, "fetch"]), Some("fetch"));
}

#[test]
fn json_rename_a_server_keeps_its_position() {
    check_json_edit(
        |c| rename(&[c, "github"], "github-enterprise"),
        Some("github"),
    );
}

#[test]
fn json_set_disabled_true() {
    check_json_edit(
        |c| set(&[c, "filesystem", "disabled"], json!(true)),
        Some("filesystem"),
    );
}

#[test]
fn json_minimal_set_of_whole_server_touches_only_changed_keys() {
    check_json_edit(
        |c| {
            set(
                &[c, "github"],
                json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "disabled": true}),
            )
        },
        Some("github"),
    );
}

#[test]
fn jsonc_minimal_set_keeps_comments_inside_the_server() {
    let edit = set(
        &["servers", "github"],
        json!({
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_TOKEN": "${input:token}", "EXTRA": "1"}
        }),
    );
    let after = apply_edits(Format::Jsonc, VSCODE_JSONC, &[edit]).unwrap();
    for comment in [
        "/* inside github */",
        "// the package",
        "// GitHub, needs a token",
        "// pinned below",
    ] {
        assert!(
            after.contains(comment),
            "comment {comment:?} lost:\n{after}"
        );
    }
    assert!(
        after.contains("\"EXTRA\": \"1\","),
        "new env var uses the file's trailing commas:\n{after}"
    );
}

#[test]
fn jsonc_remove_server_keeps_neighbour_comments() {
    let after = apply_edits(
        Format::Jsonc,
        VSCODE_JSONC,
        &[remove(&["servers", "filesystem"])],
    )
    .unwrap();
    assert!(
        after.contains("// GitHub, needs a token"),
        "comment of the next server lost:\n{after}"
    );
    assert!(
        after.contains("// trailing neighbour"),
        "comment of another server lost:\n{after}"
    );
    assert!(
        !after.contains("server-filesystem"),
        "server still there:\n{after}"
    );
}

#[test]
fn set_equal_value_changes_no_byte() {
    for case in json_cases() {
        let c = container(&case);
        let current = parse_jsonc(&case.text)[c]["github"].clone();
        let format = if case.strict {
            Format::Json
        } else {
            Format::Jsonc
        };
        let edits = [
            DocEdit::Set {
                path: path(&[c, "github"]),
                value: current.clone(),
            },
            DocEdit::Set {
                path: path(&[c, "github", "command"]),
                value: json!("npx"),
            },
            DocEdit::Set {
                path: vec![],
                value: parse_jsonc(&case.text),
            },
        ];
        let after = apply_edits(format, &case.text, &edits).unwrap();
        assert_eq!(
            after, case.text,
            "{}: setting equal values must not change a byte",
            case.name
        );
    }
    let after = apply_edits(
        Format::Toml,
        CODEX_TOML,
        &[set(&["mcp_servers", "github", "command"], json!("npx"))],
    )
    .unwrap();
    assert_eq!(
        after, CODEX_TOML,
        "TOML: setting an equal value must not change a byte"
    );
}

#[test]
fn remove_last_property_leaves_no_dangling_comma() {
    let text = "{\n  \"a\": 1,\n  \"b\": {\n    \"x\": 1,\n    \"y\": 2\n  }\n}\n";
    let after = apply_edits(Format::Json, text, &[remove(&["b", "y"])]).unwrap();
    assert_eq!(
        after, "{\n  \"a\": 1,\n  \"b\": {\n    \"x\": 1\n  }\n}\n",
        "comma after x must go"
    );
    let after = apply_edits(Format::Json, &after, &[remove(&["b"])]).unwrap();
    assert_eq!(after, "{\n  \"a\": 1\n}\n", "comma after a must go");
    parse_strict_json(&after);
}

#[test]
fn remove_last_property_keeps_trailing_comma_style() {
    let text = "{\n  \"a\": 1,\n  \"b\": 2,\n}\n";
    let after = apply_edits(Format::Jsonc, text, &[remove(&["b"])]).unwrap();
    assert_eq!(
        after, "{\n  \"a\": 1,\n}\n",
        "a file with trailing commas keeps them"
    );
}

#[test]
fn remove_only_property_leaves_empty_object() {
    let after = apply_edits(
        Format::Json,
        "{\n  \"mcpServers\": {\n    \"a\": {}\n  }\n}",
        &[remove(&["mcpServers", "a"])],
    )
    .unwrap();
    assert_eq!(
        parse_strict_json(&after),
        json!({"mcpServers": {}}),
        "result:\n{after}"
    );
}

#[test]
fn remove_missing_path_is_a_no_op() {
    for p in [
        &["mcpServers", "nope"][..],
        &["nope", "deeper"],
        &["mcpServers", "github", "command", "x"],
    ] {
        let after = apply_edits(Format::Json, CLAUDE_JSON, &[remove(p)]).unwrap();
        assert_eq!(
            after, CLAUDE_JSON,
            "removing missing {p:?} must not change the file"
        );
        let after = apply_edits(Format::Toml, CODEX_TOML, &[remove(p)]).unwrap();
        assert_eq!(
            after, CODEX_TOML,
            "TOML: removing missing {p:?} must not change the file"
        );
    }
}

#[test]
fn keys_we_do_not_own_keep_their_order() {
    let text = r#"{"zeta": 1, "mcpServers": {"a": {"command": "x"}}, "alpha": [1, 2], "mid": {"k": true}}"#;
    let after = apply_edits(
        Format::Json,
        text,
        &[set(&["mcpServers", "b"], json!({"command": "y"}))],
    )
    .unwrap();
    let keys: Vec<String> = parse_strict_json(&after)
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        keys,
        ["zeta", "mcpServers", "alpha", "mid"],
        "top-level key order changed:\n{after}"
    );
    assert!(
        after.ends_with(r#", "alpha": [1, 2], "mid": {"k": true}}"#),
        "bytes after the edit moved:\n{after}"
    );
}

#[test]
fn empty_document_is_an_empty_object() {
    for text in ["", "\n", "  \n\n"] {
        let after = apply_edits(
            Format::Json,
            text,
            &[set(&["mcpServers", "a", "command"], json!("x"))],
        )
        .unwrap();
        assert_eq!(
            parse_strict_json(&after),
            json!({"mcpServers": {"a": {"command": "x"}}}),
            "from {text:?}"
        );
    }
    let after = apply_edits(
        Format::Jsonc,
        "// only a comment\n",
        &[set(&["a"], json!(1))],
    )
    .unwrap();
    assert!(
        after.starts_with("// only a comment\n"),
        "comment kept:\n{after}"
    );
    assert_eq!(parse_jsonc(&after), json!({"a": 1}));
}

#[test]
fn new_content_follows_the_file_indentation() {
    let four = reindent(CLAUDE_JSON, "    ");
    let after = apply_edits(
        Format::Json,
        &four,
        &[set(
            &["mcpServers", "new"],
            json!({"command": "x", "env": {"K": "v"}}),
        )],
    )
    .unwrap();
    assert!(
        after.contains("        \"new\": {\n            \"command\": \"x\",\n            \"env\": {\n                \"K\": \"v\"\n            }\n        }\n    },"),
        "new server should use 4-space indentation:\n{after}"
    );
    let tabs = reindent(CLAUDE_JSON, "\t");
    let after = apply_edits(
        Format::Json,
        &tabs,
        &[set(&["mcpServers", "new"], json!({"command": "x"}))],
    )
    .unwrap();
    assert!(
        after.contains("\t\t\"new\": {\n\t\t\t\"command\": \"x\"\n\t\t}\n\t},"),
        "tabs expected:\n{after}"
    );
}

#[test]
fn array_index_paths_address_list_style_servers() {
    let text = r#"{
  "experimental": {
    "modelContextProtocolServers": [
      { "transport": { "type": "stdio", "command": "uvx", "args": ["mcp-server-sqlite"] } },
      { "transport": { "type": "stdio", "command": "npx", "args": ["-y", "x"] } }
    ]
  }
}"#;
    let list = |i: usize| {
        vec![
            key("experimental"),
            key("modelContextProtocolServers"),
            PathSeg::Index(i),
        ]
    };
    let mut p = list(1);
    p.extend(path(&["transport", "command"]));
    let after = apply_edits(
        Format::Json,
        text,
        &[DocEdit::Set {
            path: p,
            value: json!("bunx"),
        }],
    )
    .unwrap();
    let npx = text.find("\"npx\"").unwrap();
    assert_changed_within(text, &after, npx..npx + 5, "only `npx` → `bunx` changes");

    let after = apply_edits(
        Format::Json,
        text,
        &[DocEdit::Set {
            path: list(2),
            value: json!({"transport": {"type": "sse", "url": "http://x"}}),
        }],
    )
    .unwrap();
    assert_eq!(
        parse_strict_json(&after)["experimental"]["modelContextProtocolServers"][2]["transport"]
            ["url"],
        "http://x"
    );

    let after = apply_edits(Format::Json, text, &[DocEdit::Remove { path: list(0) }]).unwrap();
    let servers = &parse_strict_json(&after)["experimental"]["modelContextProtocolServers"];
    assert_eq!(
        servers.as_array().map(Vec::len),
        Some(1),
        "one server left:\n{after}"
    );
    assert_eq!(servers[0]["transport"]["command"], "npx");

    let err = apply_edits(
        Format::Json,
        text,
        &[DocEdit::Set {
            path: list(5),
            value: json!({}),
        }],
    )
    .unwrap_err();
    assert!(
        matches!(err, DocError::Path { .. }),
        "index past the end is an error: {err}"
    );
}

#[test]
fn rename_to_an_existing_key_is_an_error() {
    let err = apply_edits(
        Format::Json,
        CLAUDE_JSON,
        &[rename(&["mcpServers", "github"], "fetch")],
    )
    .unwrap_err();
    assert!(err.to_string().contains("already exists"), "message: {err}");
    let err = apply_edits(
        Format::Toml,
        CODEX_TOML,
        &[rename(&["mcp_servers", "github"], "filesystem")],
    )
    .unwrap_err();
    assert!(err.to_string().contains("already exists"), "message: {err}");
}

#[test]
fn rename_escapes_the_new_key() {
    let after = apply_edits(
        Format::Json,
        CLAUDE_JSON,
        &[rename(&["mcpServers", "github"], "git\"hub")],
    )
    .unwrap();
    assert!(
        parse_strict_json(&after)["mcpServers"]
            .get("git\"hub")
            .is_some(),
        "result:\n{after}"
    );
}

#[test]
fn parse_errors_carry_line_and_column() {
    let err = apply_edits(Format::Json, "{\n  \"a\": 1,\n  \"b\" 2\n}", &[]).unwrap_err();
    assert!(matches!(err, DocError::Parse(_)), "{err:?}");
    assert!(
        err.to_string().contains("on line 3 column"),
        "message: {err}"
    );
    let err = apply_edits(Format::Toml, "a = 1\n[x\nb = 2\n", &[]).unwrap_err();
    assert!(matches!(err, DocError::Parse(_)), "{err:?}");
    assert!(
        err.to_string().contains("on line 2 column"),
        "message: {err}"
    );
}

const GOOSE_YAML: &str = "\
# goose settings
GOOSE_PROVIDER: anthropic
extensions:
  fetch:
    enabled: true   # on by default
    type: stdio
    cmd: uvx
    args:
      - mcp-server-fetch
      - '--ignore-robots-txt'
    envs: {}
    timeout: 300

  \"memory\":
    type: stdio
    cmd: npx
    args:
    - -y
    - '@modelcontextprotocol/server-memory'
# trailing comment
";

#[test]
fn yaml_block_edits_change_only_the_edited_lines() {
    let edited = |edits: &[DocEdit]| apply_edits(Format::Yaml, GOOSE_YAML, edits).unwrap();
    // A list value is rewritten in place, in the file's own item indentation.
    let after = edited(&[set(
        &["extensions", "fetch", "args"],
        json!(["mcp-server-fetch", "--user-agent=x"]),
    )]);
    assert_eq!(
        after,
        GOOSE_YAML.replace("      - '--ignore-robots-txt'", "      - --user-agent=x")
    );
    let after = edited(&[set(
        &["extensions", "memory", "args"],
        json!(["-y", "@modelcontextprotocol/server-memory@1"]),
    )]);
    assert_eq!(
        after,
        GOOSE_YAML.replace(
            "    - '@modelcontextprotocol/server-memory'",
            "    - '@modelcontextprotocol/server-memory@1'"
        )
    );
    // An inline value becomes a block; a scalar keeps its line.
    let after = edited(&[set(&["extensions", "fetch", "envs"], json!({"UA": "me"}))]);
    assert_eq!(
        after,
        GOOSE_YAML.replace("    envs: {}\n", "    envs:\n      UA: me\n")
    );
    let after = edited(&[set(&["extensions", "fetch", "timeout"], json!(60))]);
    assert_eq!(after, GOOSE_YAML.replace("timeout: 300", "timeout: 60"));
    // New keys go at the end of their mapping, before blank lines and comments.
    let after = edited(&[set(&["extensions", "memory", "timeout"], json!(30))]);
    assert_eq!(
        after,
        GOOSE_YAML.replace("server-memory'\n", "server-memory'\n    timeout: 30\n")
    );
    let after = edited(&[remove(&["extensions", "fetch", "timeout"])]);
    assert_eq!(after, GOOSE_YAML.replace("    timeout: 300\n", ""));
    let after = edited(&[rename(&["extensions", "memory"], "memory-2")]);
    assert_eq!(after, GOOSE_YAML.replace("  \"memory\":", "  memory-2:"));
    let after = edited(&[set(
        &["extensions", "new one"],
        json!({"type": "stdio", "cmd": "x", "args": ["a b"]}),
    )]);
    assert_eq!(
        after,
        GOOSE_YAML.replace(
            "# trailing",
            "  \"new one\":\n    type: stdio\n    cmd: x\n    args:\n      - a b\n# trailing"
        )
    );
    assert_eq!(
        edited(&[set(&["extensions", "fetch", "cmd"], json!("uvx"))]),
        GOOSE_YAML,
        "an equal value changes nothing"
    );
}

#[test]
fn yaml_it_cannot_place_surely_is_refused() {
    let list = "mcpServers:\n  - name: a\n    command: x\n";
    let err = apply_edits(
        Format::Yaml,
        list,
        &[DocEdit::Set {
            path: vec![
                PathSeg::Key("mcpServers".into()),
                PathSeg::Index(0),
                PathSeg::Key("command".into()),
            ],
            value: json!("y"),
        }],
    )
    .unwrap_err();
    assert!(matches!(err, DocError::Unsupported("YAML")), "{err:?}");
    let err = apply_edits(
        Format::Yaml,
        "---\na: 1\n---\nb: 2\n",
        &[set(&["a"], json!(2))],
    )
    .unwrap_err();
    assert!(
        matches!(err, DocError::Unsupported("YAML") | DocError::Parse(_)),
        "{err:?}"
    );
}

#[test]
fn set_through_a_scalar_is_an_error() {
    let err = apply_edits(
        Format::Json,
        CLAUDE_JSON,
        &[set(&["globalShortcut", "x"], json!(1))],
    )
    .unwrap_err();
    assert!(matches!(err, DocError::Path { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("globalShortcut:"),
        "names the path: {err}"
    );
}

#[test]
fn utf8_bom_is_kept() {
    let text = "\u{feff}{\"a\": 1}";
    let after = apply_edits(Format::Json, text, &[set(&["b"], json!(2))]).unwrap();
    assert!(after.starts_with('\u{feff}'), "BOM lost: {after:?}");
    assert_eq!(parse_strict_json(&after[3..]), json!({"a": 1, "b": 2}));
}

#[test]
fn crlf_files_stay_crlf() {
    let text = "{\r\n  \"mcpServers\": {\r\n    \"a\": { \"command\": \"x\" }\r\n  }\r\n}\r\n";
    let after = apply_edits(
        Format::Json,
        text,
        &[set(&["mcpServers", "b"], json!({"command": "y"}))],
    )
    .unwrap();
    assert!(
        !after.replace("\r\n", "").contains('\n'),
        "a bare LF was introduced:\n{after:?}"
    );
}

// ---------------------------------------------------------------- TOML

fn check_toml_edit(edit: DocEdit, allowed: Range<usize>) -> String {
    let after = apply_edits(Format::Toml, CODEX_TOML, std::slice::from_ref(&edit)).unwrap();
    assert_changed_within(CODEX_TOML, &after, allowed, "TOML");
    let expected = model(parse_toml(CODEX_TOML), &edit);
    let actual = parse_toml(&after);
    assert_eq!(actual, expected, "TOML value after {edit:?}:\n{after}");
    for kept in [
        "# Codex config",
        "# file system access",
        "# other tables after",
        "[profiles.fast]",
        "[history]",
    ] {
        assert!(after.contains(kept), "{kept:?} lost:\n{after}");
    }
    after
}

fn github_section() -> Range<usize> {
    let start = toml_section(CODEX_TOML, "[mcp_servers.github]").start;
    let end = toml_section(CODEX_TOML, "[mcp_servers.github.tools]").end;
    start..end
}

#[test]
fn toml_change_one_arg() {
    let after = check_toml_edit(
        set(
            &["mcp_servers", "github", "args"],
            json!(["-y", "@modelcontextprotocol/server-github@1"]),
        ),
        github_section(),
    );
    assert!(
        after.contains("args = [\n  \"-y\",\n  \"@modelcontextprotocol/server-github@1\",\n]"),
        "layout kept:\n{after}"
    );
    assert!(
        after.contains("command = \"npx\" # from npm"),
        "neighbour comment kept:\n{after}"
    );
}

#[test]
fn toml_add_env_var() {
    let after = check_toml_edit(
        set(&["mcp_servers", "github", "env", "GITHUB_HOST"], json!("x")),
        github_section(),
    );
    assert!(
        after.contains("env = { GITHUB_TOKEN = \"ghp_example\", GITHUB_HOST = \"x\" }"),
        "inline env kept:\n{after}"
    );
}

#[test]
fn toml_remove_a_key() {
    check_toml_edit(remove(&["mcp_servers", "github", "env"]), github_section());
}

#[test]
fn toml_set_disabled_true() {
    let after = check_toml_edit(
        set(&["mcp_servers", "filesystem", "enabled"], json!(false)),
        toml_section(CODEX_TOML, "[mcp_servers.filesystem]"),
    );
    assert!(
        after.contains("# pinned\nenabled = false\n"),
        "appended after the last key:\n{after}"
    );
}

#[test]
fn toml_add_a_new_server_uses_codex_style() {
    let after_github = CODEX_TOML.find("enabled = true\n").unwrap() + "enabled = true\n".len();
    let after = check_toml_edit(
        set(
            &["mcp_servers", "memory"],
            json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"A": "1"}}),
        ),
        after_github..after_github,
    );
    assert!(
        after.contains("\n[mcp_servers.memory]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-memory\"]\nenv = { A = \"1\" }\n"),
        "new server as a [mcp_servers.memory] table:\n{after}"
    );
}

#[test]
fn toml_add_server_to_empty_document() {
    let after = apply_edits(
        Format::Toml,
        "",
        &[set(
            &["mcp_servers", "x"],
            json!({"command": "a", "args": []}),
        )],
    )
    .unwrap();
    assert_eq!(
        after, "[mcp_servers.x]\ncommand = \"a\"\nargs = []\n",
        "result:\n{after}"
    );
}

#[test]
fn toml_remove_a_server_with_its_subtables() {
    let after = check_toml_edit(remove(&["mcp_servers", "github"]), github_section());
    assert!(
        !after.contains("mcp_servers.github"),
        "sub-table left behind:\n{after}"
    );
}

#[test]
fn toml_rename_a_server_keeps_its_position() {
    let after = check_toml_edit(rename(&["mcp_servers", "github"], "gh"), github_section());
    let gh = after.find("[mcp_servers.gh]").expect("renamed header");
    let history = after.find("[history]").unwrap();
    let fs = after.find("[mcp_servers.filesystem]").unwrap();
    assert!(fs < gh && gh < history, "position kept:\n{after}");
    assert!(
        after.contains("[mcp_servers.gh.tools]"),
        "sub-table follows:\n{after}"
    );
}

#[test]
fn toml_null_is_an_error_not_a_panic() {
    let err = apply_edits(
        Format::Toml,
        CODEX_TOML,
        &[set(&["mcp_servers", "x", "command"], Value::Null)],
    )
    .unwrap_err();
    assert!(matches!(err, DocError::Path { .. }), "{err:?}");
}
