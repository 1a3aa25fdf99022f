//! Tool names shown to models and users and the schema patch they travel
//! with.
//!
//! A tool is exposed as `mcp_<server>_<tool>` with both parts sanitized to
//! `[a-z_]`. Sanitizing is lossy, so different tools can end up with the same
//! name; [`assign_names`] detects every such collision, keeps every tool
//! reachable with a deterministic suffix and reports what it did. The raw
//! server and tool names always stay next to the sanitized one ([`ToolRef`]).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

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
    push_sanitized(&mut out, s);
    out
}

fn push_sanitized(out: &mut String, s: &str) {
    let mut push = |c: char| {
        let c = if c.is_ascii_lowercase() { c } else { '_' };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    };
    for c in s.chars() {
        if c.is_ascii() {
            push(c.to_ascii_lowercase());
        } else {
            // Some non-ASCII characters lower-case to ASCII (KELVIN SIGN → `k`).
            c.to_lowercase().for_each(&mut push);
        }
    }
}

/// `mcp_<server>_<tool>`, sanitized, with a redundant `mcp_` prefix of the
/// tool (a gateway's name for it), then a redundant `<server>_` prefix,
/// removed once, and the result capped at [`MAX_TOOL_NAME_LEN`].
///
/// This is the name a tool gets when nothing collides with it; use
/// [`assign_names`] for a whole tool list.
pub fn tool_name(server: &str, tool: &str) -> String {
    join_name(&sanitize_part(server), tool, &mut String::new())
}

/// [`tool_name`] for an already sanitized server, reusing `scratch` for the
/// tool part (naming thousands of tools should not allocate thrice per tool).
fn join_name(s: &str, tool: &str, scratch: &mut String) -> String {
    scratch.clear();
    push_sanitized(scratch, tool);
    let t = scratch.as_str();
    // A tool already named by a gateway (a team gateway's `mcp_fx_echo`,
    // seen through this one) keeps one `mcp_`: `mcp_acme_fx_echo`.
    let t = match t.strip_prefix("mcp_") {
        Some(rest) if !rest.is_empty() => rest,
        _ => t,
    };
    let t = match t.strip_prefix(s).and_then(|rest| rest.strip_prefix('_')) {
        Some(rest) if !rest.is_empty() => rest,
        _ => t,
    };
    let mut name = String::with_capacity(4 + s.len() + 1 + t.len());
    name.push_str("mcp_");
    // Parts may start or end with `_` ("-x", "x-"): keep the joined name
    // collapsed too.
    for part in [s, "_", t] {
        let part = if name.ends_with('_') {
            part.trim_start_matches('_')
        } else {
            part
        };
        name.push_str(part);
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        name = cap(&name);
    }
    name
}

/// Keeps a name within [`MAX_TOOL_NAME_LEN`]: the first 57 characters, `_`
/// and a 6-letter hash of the whole name, so cut names stay distinct and stable.
fn cap(name: &str) -> String {
    if name.len() <= MAX_TOOL_NAME_LEN {
        return name.to_string();
    }
    with_hash_suffix(name, &[name.as_bytes()], CAP_HASH_LEN)
}

/// `base` + `_` + `n` hash letters of `parts`, cutting `base` so the result
/// fits the length cap.
fn with_hash_suffix(base: &str, parts: &[&[u8]], n: usize) -> String {
    let keep = MAX_TOOL_NAME_LEN.saturating_sub(n + 1).min(base.len());
    // Names are ASCII by construction, so any byte index is a char boundary.
    let head = base[..keep].trim_end_matches('_');
    let mut out = String::with_capacity(head.len() + 1 + n);
    out.push_str(head);
    out.push('_');
    push_letters(&mut out, parts, n);
    out
}

/// Appends `n` letters a–z derived from SHA-256 of `parts` (more blocks if
/// `n` > 32).
fn push_letters(out: &mut String, parts: &[&[u8]], n: usize) {
    let mut block: u32 = 0;
    let mut left = n;
    while left > 0 {
        let mut h = Sha256::new();
        parts.iter().for_each(|p| h.update(p));
        if block > 0 {
            h.update(block.to_le_bytes());
        }
        for b in h.finalize().into_iter().take(left) {
            out.push((b'a' + b % 26) as char);
            left -= 1;
        }
        block += 1;
    }
}

/// A tool as its server names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolRef {
    pub server: String,
    pub tool: String,
}

impl ToolRef {
    pub fn new(server: impl Into<String>, tool: impl Into<String>) -> Self {
        Self {
            server: server.into(),
            tool: tool.into(),
        }
    }
}

/// Tools whose sanitized names were equal, and the names they ended up with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    let mut servers: FastMap<&str, String> = FastMap::default();
    let mut scratch = String::new();
    let mut names: Vec<String> = tools
        .iter()
        .map(|t| {
            let s = servers
                .entry(&t.server)
                .or_insert_with(|| sanitize_part(&t.server));
            join_name(s, &t.tool, &mut scratch)
        })
        .collect();

    // Plain name → first tool seen with it; names seen twice → all their tools.
    let mut plain: FastMap<&str, usize> =
        FastMap::with_capacity_and_hasher(tools.len(), Default::default());
    let mut groups: FastMap<&str, Vec<usize>> = FastMap::default();
    for (i, name) in names.iter().enumerate() {
        match plain.entry(name) {
            Entry::Vacant(e) => {
                e.insert(i);
            }
            Entry::Occupied(e) => groups.entry(name).or_insert_with(|| vec![*e.get()]).push(i),
        }
    }

    // Groups in name order, members in raw-name order: who keeps a shared
    // name and who gets a suffix first never depends on input order.
    let mut groups: Vec<(&str, Vec<usize>)> = groups.into_iter().collect();
    groups.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (_, members) in &mut groups {
        // Sorting the raw names side by side, not through `tools[i]`, halves
        // the time for big groups (fewer cache misses).
        let mut keyed: Vec<(&str, &str, usize)> = members
            .iter()
            .map(|&i| (tools[i].server.as_str(), tools[i].tool.as_str(), i))
            .collect();
        keyed.sort_unstable();
        *members = keyed.into_iter().map(|(_, _, i)| i).collect();
    }
    // Suffixed names handed out so far, by fingerprint. A fingerprint clash
    // only lengthens a suffix; it can never let two tools share a name.
    let mut suffixed: HashSet<u64, FastHash> = HashSet::default();
    let mut renamed: Vec<(usize, String)> = vec![];
    for (base, members) in &groups {
        for &i in &members[1..] {
            let t = &tools[i];
            let raw: [&[u8]; 3] = [t.server.as_bytes(), b"/", t.tool.as_bytes()];
            let mut len = COLLISION_HASH_LEN;
            let name = loop {
                let candidate = with_hash_suffix(base, &raw, len);
                if !plain.contains_key(candidate.as_str())
                    && suffixed.insert(fingerprint(&candidate))
                {
                    break candidate;
                }
                len += 1;
            };
            renamed.push((i, name));
        }
    }

    let groups: Vec<(String, Vec<usize>)> = groups
        .into_iter()
        .map(|(n, m)| (n.to_string(), m))
        .collect();
    drop(plain);
    for (i, name) in renamed {
        names[i] = name;
    }
    let collisions = groups
        .into_iter()
        .map(|(name, members)| Collision {
            name,
            tools: members.iter().map(|&i| tools[i].clone()).collect(),
            resolved: members.iter().map(|&i| names[i].clone()).collect(),
        })
        .collect();

    Naming { names, collisions }
}

/// Maps keyed by tool names: many short keys from local servers, where
/// SipHash's flooding protection costs more than it buys. Deterministic,
/// which the fingerprints rely on.
type FastMap<K, V> = HashMap<K, V, FastHash>;
type FastHash = BuildHasherDefault<FxHasher>;

fn fingerprint(name: &str) -> u64 {
    FastHash::default().hash_one(name)
}

/// The multiply-rotate hash rustc uses (FxHash).
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Passes a tool's input schema through, giving an object schema without
/// `properties` an empty one (some providers reject it otherwise).
pub fn patch_schema(mut schema: serde_json::Value) -> serde_json::Value {
    if let Some(obj) = schema.as_object_mut() {
        if needs_properties(obj) {
            obj.insert(
                "properties".into(),
                serde_json::Value::Object(Default::default()),
            );
        }
    }
    schema
}

type Schema = std::sync::Arc<serde_json::Map<String, serde_json::Value>>;

/// [`patch_schema`] for a shared schema: the same `Arc` unless it needed the
/// patch (thousands of tools must not mean thousands of copied schemas).
pub fn with_properties(schema: &Schema) -> Schema {
    if !needs_properties(schema) {
        return schema.clone();
    }
    let mut patched = (**schema).clone();
    patched.insert(
        "properties".into(),
        serde_json::Value::Object(Default::default()),
    );
    std::sync::Arc::new(patched)
}

fn needs_properties(schema: &serde_json::Map<String, serde_json::Value>) -> bool {
    schema.get("type").and_then(|t| t.as_str()) == Some("object")
        && schema.get("properties").is_none_or(|p| p.is_null())
}
