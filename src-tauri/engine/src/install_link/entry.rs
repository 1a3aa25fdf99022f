//! From a JSON server entry (decoded from a link, or pasted) to a
//! [`LinkServer`], through the client dialects `sources` already reads:
//! this module only finds the entries and picks the dialect.

use serde_json::{Map, Value};

use super::checks::{self, Declared};
use super::{LinkError, LinkKind, LinkServer, LinkWarning, SnippetShape, WarningKind};
use crate::config::validate::MAX_NAME_LEN;
use crate::sources::Dialect;

/// Keys that make an object a server entry rather than a map of them.
const ENTRY_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "url",
    "type",
    "transport",
    "transportType",
    "serverUrl",
    "httpUrl",
    "headers",
    "cmd",
    "uri",
    "envs",
    "cwd",
];

/// Keys a link's entry carries about itself, not about how to run it.
const META_KEYS: &[&str] = &["name", "inputs", "gallery", "version", "description"];

pub fn is_entry(obj: &Map<String, Value>) -> bool {
    obj.keys().any(|k| ENTRY_KEYS.contains(&k.as_str()))
}

/// Which client's spelling an `mcpServers`-style entry is in, from keys
/// only that client uses; otherwise the common one (Claude Desktop, Cursor,
/// LM Studio).
pub fn sniff(obj: &Map<String, Value>) -> Dialect {
    let ty = obj.get("type").and_then(|t| t.as_str());
    if obj.contains_key("serverUrl") {
        Dialect::Windsurf
    } else if obj.contains_key("httpUrl") {
        Dialect::Gemini
    } else if obj.contains_key("transportType") || ty == Some("streamableHttp") {
        Dialect::Cline
    } else if obj.contains_key("alwaysAllow") {
        Dialect::Roo
    } else if obj.contains_key("cmd") || obj.contains_key("envs") || obj.contains_key("uri") {
        Dialect::Goose
    } else if obj.contains_key("oauth") {
        Dialect::ClaudeCode
    } else {
        Dialect::Standard
    }
}

/// `name` as a valid server name (`[A-Za-z0-9_.-]`, at most 100
/// characters): other characters become `-`.
pub fn valid_name(name: &str) -> String {
    let mut s: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(MAX_NAME_LEN)
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    let s = s.trim_matches('-').to_string();
    if s.is_empty() {
        "server".into()
    } else {
        s
    }
}

/// One entry read with `dialect`. `name` is what the link calls the server
/// (`None`: the caller asks). An entry the dialect finds invalid is an
/// error of the link `kind`; what it only warns about, keys it does not
/// read, and [`checks::check`]'s findings are warnings.
pub fn server(
    kind: LinkKind,
    dialect: Dialect,
    name: Option<&str>,
    entry: &Value,
    declared: &[Declared],
) -> Result<(LinkServer, Vec<LinkWarning>), LinkError> {
    let label = name.map(String::from);
    let invalid = |message: String| LinkError::Invalid {
        kind,
        server: label.clone(),
        message,
    };
    let Some(obj) = entry.as_object() else {
        return Err(invalid(format!(
            "the server entry should be a JSON object, found {}",
            crate::sources::dialect::kind(entry)
        )));
    };
    let mut warnings = vec![];
    let mut warn = |field: Option<String>, kind, message: String| {
        warnings.push(LinkWarning {
            server: label.clone(),
            field,
            kind,
            message,
        })
    };
    let owned = dialect.owned_keys();
    let ignored: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !owned.contains(k) && !META_KEYS.contains(k))
        .collect();
    if !ignored.is_empty() {
        warn(
            None,
            WarningKind::Ignored,
            format!(
                "not used by Switchboard, left out: {}",
                ignored
                    .iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    let def_name = name.map(valid_name).unwrap_or_default();
    if let Some(n) = name.filter(|n| *n != def_name) {
        warn(
            Some("name".into()),
            WarningKind::Renamed,
            format!("the name \"{n}\" is not a valid server name; suggested: \"{def_name}\""),
        );
    }
    let parsed = dialect.parse_entry(&def_name, entry);
    if let Some(why) = parsed.not_runnable {
        return Err(invalid(format!(
            "it is not a server Switchboard can run: {why}"
        )));
    }
    let errors: Vec<String> = parsed
        .issues
        .iter()
        .filter(|i| i.is_error)
        .map(|i| {
            i.message
                .trim_start_matches("Invalid server config: ")
                .to_string()
        })
        .collect();
    if !errors.is_empty() {
        return Err(invalid(errors.join("; ")));
    }
    for i in parsed.issues {
        warn(i.field, WarningKind::Entry, i.message);
    }
    let def = parsed.def;
    let (found, secrets) = checks::check(&def, &label);
    warnings.extend(found);
    let (inputs, input_warnings) = checks::inputs(&def, declared, &label);
    warnings.extend(input_warnings);
    Ok((
        LinkServer {
            name: label,
            def,
            inputs,
            inline_secrets: secrets,
        },
        warnings,
    ))
}

/// The servers of a pasted snippet (JSON or JSONC, or Codex's TOML), in any
/// client's layout.
pub fn snippet(text: &str) -> Result<(SnippetShape, Vec<LinkServer>, Vec<LinkWarning>), LinkError> {
    use crate::sources::read::parse;
    use crate::writer::doc::Format;
    let kind = LinkKind::Snippet;
    let t = text.trim_start();
    let value = if t.starts_with('{') {
        parse(Format::Jsonc, text).map_err(|e| LinkError::BadJson {
            kind,
            what: "the snippet".into(),
            reason: e.message,
        })?
    } else {
        parse(Format::Toml, text).map_err(|e| LinkError::BadJson {
            kind,
            what: "the snippet (read as TOML)".into(),
            reason: e.message,
        })?
    }
    .value;
    let Some(obj) = value.as_object() else {
        return Err(LinkError::Invalid {
            kind,
            server: None,
            message: "a snippet must be a JSON object".into(),
        });
    };
    let map_of = |key: &str| obj.get(key).and_then(|v| v.as_object());
    let top_inputs = |obj: &Map<String, Value>, warnings: &mut Vec<LinkWarning>| {
        obj.get("inputs").map_or_else(Vec::new, |v| {
            let mut w = vec![];
            let d = checks::declared_inputs(v, &mut w);
            warnings.extend(w.into_iter().map(|m| input_warning(None, m)));
            d
        })
    };
    let mut warnings = vec![];
    let (shape, entries, fixed, declared): (_, Vec<(Option<String>, &Value)>, _, _) = if let Some(
        list,
    ) =
        obj.get("mcpServers").and_then(|v| v.as_array())
    {
        // Continue's list of entries, each with its `name`.
        let entries = list
            .iter()
            .map(|e| (e.get("name").and_then(|n| n.as_str()).map(String::from), e))
            .collect();
        (
            SnippetShape::McpServers,
            entries,
            Some(Dialect::Continue),
            vec![],
        )
    } else if let Some(m) = map_of("mcpServers") {
        (SnippetShape::McpServers, named(m), None, vec![])
    } else if let Some(m) = map_of("servers") {
        let d = top_inputs(obj, &mut warnings);
        (
            SnippetShape::VscodeServers,
            named(m),
            Some(Dialect::Vscode),
            d,
        )
    } else if let Some(mcp) = map_of("mcp").filter(|m| m.contains_key("servers")) {
        let d = top_inputs(mcp, &mut warnings);
        let m = mcp.get("servers").and_then(|v| v.as_object());
        let entries = m.map(named).unwrap_or_default();
        (
            SnippetShape::VscodeServers,
            entries,
            Some(Dialect::Vscode),
            d,
        )
    } else if let Some(m) = map_of("context_servers") {
        (
            SnippetShape::ZedContextServers,
            named(m),
            Some(Dialect::Zed),
            vec![],
        )
    } else if let Some(m) = map_of("mcp_servers") {
        (
            SnippetShape::CodexMcpServers,
            named(m),
            Some(Dialect::Codex),
            vec![],
        )
    } else if let Some(m) = map_of("extensions") {
        (
            SnippetShape::GooseExtensions,
            named(m),
            Some(Dialect::Goose),
            vec![],
        )
    } else if is_entry(obj) {
        // One entry; VS Code's `--add-mcp` form names itself and may
        // describe its inputs.
        let name = obj.get("name").and_then(|n| n.as_str()).map(String::from);
        let d = top_inputs(obj, &mut warnings);
        let dialect = (name.is_some() || obj.contains_key("inputs")).then_some(Dialect::Vscode);
        (SnippetShape::SingleEntry, vec![(name, &value)], dialect, d)
    } else if !obj.is_empty() && obj.values().all(|v| v.as_object().is_some_and(is_entry)) {
        (SnippetShape::NamedEntries, named(obj), None, vec![])
    } else {
        return Err(LinkError::Invalid {
                kind,
                server: None,
                message: "no server found: expected an entry (with \"command\" or \"url\"), a map of them, or a client's file (\"mcpServers\", \"servers\", \"context_servers\", [mcp_servers.NAME])".into(),
            });
    };
    let mut servers = vec![];
    let mut refused = vec![];
    for (name, entry) in entries {
        let dialect = fixed.unwrap_or_else(|| entry.as_object().map_or(Dialect::Standard, sniff));
        match server(kind, dialect, name.as_deref(), entry, &declared) {
            Ok((s, w)) => {
                servers.push(s);
                warnings.extend(w);
            }
            Err(e) => refused.push(e),
        }
    }
    if servers.is_empty() {
        return Err(refused.into_iter().next().unwrap_or(LinkError::Invalid {
            kind,
            server: None,
            message: "the snippet holds no servers".into(),
        }));
    }
    // Several servers: one that cannot be read does not hide the others.
    for e in refused {
        warnings.push(LinkWarning {
            server: None,
            field: None,
            kind: WarningKind::Entry,
            message: format!("skipped: {e}"),
        });
    }
    Ok((shape, servers, warnings))
}

fn named(m: &Map<String, Value>) -> Vec<(Option<String>, &Value)> {
    m.iter().map(|(k, v)| (Some(k.clone()), v)).collect()
}

pub fn input_warning(server: Option<String>, message: String) -> LinkWarning {
    LinkWarning {
        server,
        field: Some("inputs".into()),
        kind: WarningKind::Input,
        message,
    }
}
