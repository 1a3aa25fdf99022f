//! Tool names shown to models and users (SPEC M4) and the schema patch they
//! travel with (M5).
//!
//! A tool is exposed as `mcp_<server>_<tool>` with both parts sanitized to
//! `[a-z_]`. Sanitizing is lossy, so different tools can end up with the same
//! name; [`assign_names`] detects every such collision, keeps every tool
//! reachable with a deterministic suffix and reports what it did. The raw
//! server and tool names always stay next to the sanitized one ([`ToolRef`]).

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Longest tool name we hand out; several model providers reject longer ones.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Letters of the hash that shortens an over-long name.
const CAP_HASH_LEN: usize = 6;
/// Letters of the suffix that separates colliding names (at first).
const COLLISION_HASH_LEN: usize = 4;

/// Lower-cases `s`, turns every character outside `[a-z_]` (digits too, as in
/// the seed) into `_` and collapses runs of `_`.
pub fn sanitize_part(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() { c } else { '_' };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    out
}

/// `mcp_<server>_<tool>`, sanitized, with a redundant `<server>_` prefix of the
/// tool removed once and the result capped at [`MAX_TOOL_NAME_LEN`].
///
/// This is the name a tool gets when nothing collides with it; use
/// [`assign_names`] for a whole tool list.
pub fn tool_name(server: &str, tool: &str) -> String {
    let s = sanitize_part(server);
    let t = sanitize_part(tool);
    let prefix_len = s.len() + 1;
    let t = if t.len() > prefix_len && t.starts_with(&s) && t.as_bytes()[s.len()] == b'_' {
        &t[prefix_len..]
    } else {
        &t[..]
    };
    let mut name = String::with_capacity(4 + s.len() + 1 + t.len());
    for part in ["mcp_", &s, "_", t] {
        for c in part.chars() {
            // Parts may start or end with `_` ("-x", "x-"): keep the joined
            // name collapsed too.
            if c == '_' && name.ends_with('_') {
                continue;
            }
            name.push(c);
        }
    }
    cap(&name)
}

/// Keeps a name within [`MAX_TOOL_NAME_LEN`]: the first 57 characters, `_`
/// and a 6-letter hash of the whole name, so cut names stay distinct and stable.
fn cap(name: &str) -> String {
    if name.len() <= MAX_TOOL_NAME_LEN {
        return name.to_string();
    }
    with_suffix(name, &letters(name.as_bytes(), CAP_HASH_LEN))
}

/// `base` + `_` + `suffix`, cutting `base` so the result fits the length cap.
fn with_suffix(base: &str, suffix: &str) -> String {
    let keep = MAX_TOOL_NAME_LEN.saturating_sub(suffix.len() + 1).min(base.len());
    // Names are ASCII by construction, so any byte index is a char boundary.
    let head = base[..keep].trim_end_matches('_');
    let mut out = String::with_capacity(head.len() + 1 + suffix.len());
    out.push_str(head);
    out.push('_');
    out.push_str(suffix);
    out
}

/// `n` letters a–z derived from SHA-256 of `input` (more blocks if `n` > 32).
fn letters(input: &[u8], n: usize) -> String {
    let mut out = String::with_capacity(n);
    let mut block: u32 = 0;
    while out.len() < n {
        let mut h = Sha256::new();
        h.update(input);
        if block > 0 {
            h.update(block.to_le_bytes());
        }
        for b in h.finalize() {
            if out.len() == n {
                break;
            }
            out.push((b'a' + b % 26) as char);
        }
        block += 1;
    }
    out
}

/// A tool as its server names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ToolRef {
    pub server: String,
    pub tool: String,
}

impl ToolRef {
    pub fn new(server: impl Into<String>, tool: impl Into<String>) -> Self {
        Self { server: server.into(), tool: tool.into() }
    }
}

/// Tools whose sanitized names were equal, and the names they ended up with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Collision {
    /// The sanitized name they share.
    pub name: String,
    /// Sorted by (server, tool); the first one kept `name`.
    pub tools: Vec<ToolRef>,
    /// The final name of each tool in `tools`, same order.
    pub resolved: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Naming {
    /// One unique name per input tool, in input order.
    pub names: Vec<String>,
    /// Sorted by `name`.
    pub collisions: Vec<Collision>,
}

/// Names every tool uniquely, independent of input order.
///
/// Among tools with the same [`tool_name`], the smallest raw (server, tool)
/// keeps it; each other one gets `_` + a 4-letter hash of its raw
/// `server/tool`, lengthened while that is still taken (by any tool's plain
/// name or an earlier suffixed one).
pub fn assign_names(tools: &[ToolRef]) -> Naming {
    let base: Vec<String> = tools.iter().map(|t| tool_name(&t.server, &t.tool)).collect();

    let mut groups: HashMap<&str, Vec<usize>> = HashMap::with_capacity(tools.len());
    for (i, b) in base.iter().enumerate() {
        groups.entry(b.as_str()).or_default().push(i);
    }

    let mut names: Vec<Option<String>> = vec![None; tools.len()];
    // Every plain name belongs to its group's winner, so suffixes never take
    // a name some tool would get without any collision.
    let mut taken: HashSet<String> = groups.keys().map(|k| k.to_string()).collect();
    let mut losers: Vec<usize> = vec![];
    let mut collided: Vec<&str> = vec![];
    for (name, members) in groups.iter_mut() {
        members.sort_by(|&a, &b| tools[a].cmp(&tools[b]).then(a.cmp(&b)));
        names[members[0]] = Some(name.to_string());
        if members.len() > 1 {
            losers.extend_from_slice(&members[1..]);
            collided.push(name);
        }
    }

    // Suffixes are handed out in raw-name order, which makes the rare
    // "suffix already taken" case order independent as well.
    losers.sort_by(|&a, &b| tools[a].cmp(&tools[b]).then(a.cmp(&b)));
    for i in losers {
        let raw = format!("{}/{}", tools[i].server, tools[i].tool);
        let mut len = COLLISION_HASH_LEN;
        let name = loop {
            let candidate = with_suffix(&base[i], &letters(raw.as_bytes(), len));
            if taken.insert(candidate.clone()) {
                break candidate;
            }
            len += 1;
        };
        names[i] = Some(name);
    }
    let names: Vec<String> = names.into_iter().map(|n| n.expect("every tool is named")).collect();

    collided.sort_unstable();
    let collisions = collided
        .into_iter()
        .map(|name| {
            let members = &groups[name];
            Collision {
                name: name.to_string(),
                tools: members.iter().map(|&i| tools[i].clone()).collect(),
                resolved: members.iter().map(|&i| names[i].clone()).collect(),
            }
        })
        .collect();

    Naming { names, collisions }
}

/// Passes a tool's input schema through, giving an object schema without
/// `properties` an empty one (some providers reject it otherwise).
pub fn patch_schema(mut schema: serde_json::Value) -> serde_json::Value {
    if let Some(obj) = schema.as_object_mut() {
        let is_object = obj.get("type").and_then(|t| t.as_str()) == Some("object");
        let has_properties = obj.get("properties").is_some_and(|p| !p.is_null());
        if is_object && !has_properties {
            obj.insert("properties".into(), serde_json::Value::Object(Default::default()));
        }
    }
    schema
}
