//! Pins: what the user approved of each server, one per tool, prompt and
//! resource template, as a hash of its canonical definition (with the
//! definition kept, to show what changed). Kept in Switchboard's data folder
//! (`tool-pins.json`) by server name and the identity of the server's
//! definition (command + args, or URL): a different program under the same
//! name finds no pins of its own.
//!
//! The app, `switchboard serve` and the CLI may write the file at the same
//! moment: a change is applied to the newest file and written only if the
//! file still holds the bytes it was applied to (else applied again), like
//! Switchboard's settings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use sha2::Digest;

use crate::config::{ServerDef, Transport};
use crate::host::Host;
use crate::writer::atomic::WriteError;
use crate::writer::atomic::{content_hash, write_private, Expected};

/// How often a change is applied again after another process wrote the file.
const UPDATE_ATTEMPTS: usize = 20;
/// Identities kept per server name: switching between a few versions of a
/// program keeps each one's approvals; older ones are dropped.
const IDENTITIES_KEPT: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum ItemKind {
    Tool,
    Prompt,
    ResourceTemplate,
}

impl ItemKind {
    pub fn word(self) -> &'static str {
        match self {
            ItemKind::Tool => "tool",
            ItemKind::Prompt => "prompt",
            ItemKind::ResourceTemplate => "resource template",
        }
    }
}

/// One thing a server offers, reduced to what a model reads of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub name: String,
    /// Canonical: only the fields that define it, keys sorted.
    pub definition: Value,
}

impl Item {
    /// Name, title, description, input and output schema, annotations.
    pub fn tool(t: &Tool) -> Item {
        let v = serde_json::to_value(t).unwrap_or(Value::Null);
        Item::pick(
            ItemKind::Tool,
            &v,
            &[
                "name",
                "title",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
            ],
        )
        .expect("a tool has a name")
    }

    /// A prompt as `prompts/list` gives it.
    pub fn prompt(v: &Value) -> Option<Item> {
        Item::pick(
            ItemKind::Prompt,
            v,
            &["name", "title", "description", "arguments"],
        )
    }

    /// A resource template as `resources/templates/list` gives it.
    pub fn template(v: &Value) -> Option<Item> {
        Item::pick(
            ItemKind::ResourceTemplate,
            v,
            &[
                "name",
                "title",
                "description",
                "uriTemplate",
                "mimeType",
                "annotations",
            ],
        )
    }

    fn pick(kind: ItemKind, v: &Value, fields: &[&str]) -> Option<Item> {
        let name = v.get("name")?.as_str()?.to_string();
        let mut m = Map::new();
        let mut sorted = fields.to_vec();
        sorted.sort();
        for f in sorted {
            if let Some(x) = v.get(f).filter(|x| !x.is_null()) {
                m.insert(f.to_string(), canonical(x));
            }
        }
        Some(Item {
            kind,
            name,
            definition: Value::Object(m),
        })
    }

    /// `tool:NAME`, `prompt:NAME`, `resource-template:NAME`.
    pub fn key(&self) -> String {
        item_key(self.kind, &self.name)
    }

    pub fn hash(&self) -> String {
        definition_hash(&self.definition)
    }

    pub fn description(&self) -> Option<&str> {
        self.definition.get("description").and_then(Value::as_str)
    }
}

pub fn item_key(kind: ItemKind, name: &str) -> String {
    let k = serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    format!("{k}:{name}")
}

/// `v` with every object's keys sorted (serde_json keeps insertion order here).
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        x => x.clone(),
    }
}

/// SHA-256 (hex) of a canonical definition's compact JSON.
pub fn definition_hash(canonical: &Value) -> String {
    let bytes = serde_json::to_vec(canonical).unwrap_or_default();
    hex::encode(sha2::Sha256::digest(&bytes))
}

/// What makes a server the same program: its command and arguments (stdio)
/// or its URL, exactly as written (a `${VAR}` stays a `${VAR}`). Environment
/// and headers are left out: they hold secrets and change with sign-ins.
pub fn identity(def: &ServerDef) -> String {
    let what = match def.transport {
        Transport::Stdio => serde_json::json!({ "command": def.command, "args": def.args }),
        _ => serde_json::json!({ "url": def.url }),
    };
    hex::encode(&sha2::Sha256::digest(serde_json::to_vec(&what).unwrap_or_default())[..16])
}

/// A canonical definition kept as its compact JSON text. The pins hold
/// every item of every server a machine approved (10,000 tools with 200
/// servers); as text each is one allocation, a fraction of its parsed
/// size, and it is parsed only to show what changed. In the file it is
/// JSON like any other value (on one line).
#[derive(Debug, Clone)]
pub struct Definition(Box<RawValue>);

impl Definition {
    pub fn of(v: &Value) -> Definition {
        Definition(RawValue::from_string(v.to_string()).expect("a JSON value prints as JSON"))
    }

    /// The definition, parsed.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

impl PartialEq for Definition {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Serialize for Definition {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Definition {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Through a `Value`: the pins file's struct has a flattened part, so
        // its fields arrive buffered, which a raw value cannot be read from.
        // This also makes any indented definition compact.
        Ok(Definition::of(&Value::deserialize(d)?))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pin {
    pub hash: String,
    /// The approved definition (canonical), to show what changed since.
    pub definition: Definition,
    /// Approved by trust on first use, not by the user: such an approval
    /// never covers a high finding, even one that appears later (a tool
    /// naming another server's tool once that server connects).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub automatic: bool,
}

/// The approvals of one server name under one identity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdentityPins {
    /// When the user last approved something here (ms since the epoch).
    pub approved_at: u64,
    /// By [`Item::key`].
    pub items: BTreeMap<String, Pin>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PinFile {
    /// Server name → identity → its pins.
    #[serde(default)]
    pub servers: BTreeMap<String, BTreeMap<String, IdentityPins>>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl PinFile {
    pub fn get(&self, server: &str, identity: &str) -> Option<&IdentityPins> {
        self.servers.get(server)?.get(identity)
    }

    /// Whether anything was ever approved under this server name.
    pub fn knows_name(&self, server: &str) -> bool {
        self.servers
            .get(server)
            .is_some_and(|ids| ids.values().any(|p| !p.items.is_empty()))
    }

    /// Pin `items` of `server` under `identity` (replacing their earlier
    /// pins); `automatic`: by trust on first use rather than by the user.
    pub fn approve(
        &mut self,
        server: &str,
        identity: &str,
        items: &[Item],
        at: u64,
        automatic: bool,
    ) {
        let ids = self.servers.entry(server.to_string()).or_default();
        let pins = ids.entry(identity.to_string()).or_default();
        pins.approved_at = at;
        for i in items {
            pins.items.insert(
                i.key(),
                Pin {
                    hash: i.hash(),
                    definition: Definition::of(&i.definition),
                    automatic,
                },
            );
        }
        if ids.len() > IDENTITIES_KEPT {
            let mut by_age: Vec<(u64, String)> = ids
                .iter()
                .map(|(k, p)| (p.approved_at, k.clone()))
                .collect();
            by_age.sort();
            for (_, k) in by_age.into_iter().take(ids.len() - IDENTITIES_KEPT) {
                ids.remove(&k);
            }
        }
    }

    /// Forget the pins of items no longer offered (approving a removal).
    pub fn forget(&mut self, server: &str, identity: &str, keys: &[String]) {
        if let Some(p) = self
            .servers
            .get_mut(server)
            .and_then(|ids| ids.get_mut(identity))
        {
            for k in keys {
                p.items.remove(k);
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("cannot change {}: it does not parse ({message}); fix or delete the file, then approve again", path.display())]
    Broken { path: PathBuf, message: String },
    #[error(transparent)]
    Write(#[from] WriteError),
}

pub fn pins_path(host: &Host) -> PathBuf {
    host.join(&host.switchboard_data_dir(), "tool-pins.json")
}

enum OnDisk {
    Absent,
    Parsed(PinFile, crate::writer::atomic::ContentHash),
    Broken(String),
}

fn read(path: &Path) -> OnDisk {
    let bytes = match std::fs::read(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return OnDisk::Absent,
        Err(e) => return OnDisk::Broken(e.to_string()),
        Ok(b) => b,
    };
    let hash = content_hash(&bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return OnDisk::Parsed(PinFile::default(), hash);
    }
    match serde_json::from_slice::<PinFile>(&bytes) {
        Ok(p) => OnDisk::Parsed(p, hash),
        Err(e) => OnDisk::Broken(e.to_string()),
    }
}

/// The pins on disk; a file that does not parse is no pins plus a message
/// naming it (nothing is then approved, so changes show as new).
pub fn load(path: &Path) -> (PinFile, Option<String>) {
    match read(path) {
        OnDisk::Absent => (PinFile::default(), None),
        OnDisk::Parsed(p, _) => (p, None),
        OnDisk::Broken(m) => (PinFile::default(), Some(format!("{}: Switchboard's tool approvals do not parse ({m}); until it is fixed or deleted, no tool counts as approved", path.display()))),
    }
}

/// Apply `change` to the newest file and write it (hash-checked, applied
/// again on top of a concurrent write). A broken file is never overwritten.
pub fn update(path: &Path, change: impl Fn(&mut PinFile)) -> Result<PinFile, PinError> {
    for _ in 0..UPDATE_ATTEMPTS {
        let (mut pins, expected) = match read(path) {
            OnDisk::Absent => (PinFile::default(), Expected::Absent),
            OnDisk::Parsed(p, h) => (p, Expected::Hash(h)),
            OnDisk::Broken(message) => {
                return Err(PinError::Broken {
                    path: path.to_path_buf(),
                    message,
                })
            }
        };
        change(&mut pins);
        let mut text = serde_json::to_string_pretty(&pins).expect("pins serialize");
        text.push('\n');
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        match write_private(path, text.as_bytes(), expected) {
            Ok(()) => return Ok(pins),
            Err(WriteError::Conflict { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(WriteError::Conflict {
        path: path.to_path_buf(),
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(desc: &str) -> Tool {
        serde_json::from_value(serde_json::json!({"name": "echo", "description": desc, "inputSchema": {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "number"}}}})).unwrap()
    }

    #[test]
    fn the_hash_follows_the_definition_not_key_order() {
        let a = Item::tool(&tool("Echo it"));
        let reordered: Tool = serde_json::from_value(serde_json::json!({"inputSchema": {"properties": {"a": {"type": "number"}, "b": {"type": "string"}}, "type": "object"}, "description": "Echo it", "name": "echo"})).unwrap();
        assert_eq!(a.hash(), Item::tool(&reordered).hash());
        assert_ne!(a.hash(), Item::tool(&tool("Echo it!")).hash());
        assert_eq!(a.key(), "tool:echo");
    }

    #[test]
    fn definitions_are_kept_compact_and_older_indented_files_still_read() {
        let item = Item::tool(&tool("Echo it"));
        let mut file = PinFile::default();
        file.approve("fx", "id1", std::slice::from_ref(&item), 1, false);
        let text = serde_json::to_string_pretty(&file).unwrap();
        let pin = &file.get("fx", "id1").unwrap().items["tool:echo"];
        assert_eq!(pin.definition.value(), item.definition);
        // On one line in the file, as JSON (not a string).
        let compact = serde_json::to_string(&item.definition).unwrap();
        assert!(
            text.contains(&format!("\"definition\": {compact}")),
            "{text}"
        );
        // A file whose definitions are indented (as files were written
        // before) reads as the same pins.
        let mut old: Value = serde_json::from_str(&text).unwrap();
        let indented = old["servers"]["fx"]["id1"]["items"]["tool:echo"]["definition"].clone();
        old["servers"]["fx"]["id1"]["items"]["tool:echo"]["definition"] = indented;
        let old_text = serde_json::to_string_pretty(&old).unwrap();
        assert!(
            !old_text.contains(&compact),
            "the old file is indented: {old_text}"
        );
        let read: PinFile = serde_json::from_str(&old_text).unwrap();
        assert_eq!(read, file);
    }

    #[test]
    fn identity_is_command_and_args_or_url() {
        let a = ServerDef::stdio("fx", "node", &["a.js"]);
        let mut b = a.clone();
        b.env.insert("TOKEN".into(), "x".into());
        assert_eq!(identity(&a), identity(&b), "env is not identity");
        b.args = vec!["b.js".into()];
        assert_ne!(identity(&a), identity(&b));
        let r = ServerDef::remote("fx", Transport::Http, "https://example.com/mcp");
        assert_ne!(identity(&a), identity(&r));
    }

    #[test]
    fn updates_keep_each_others_pins_and_refuse_a_broken_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/tool-pins.json");
        let item = Item::tool(&tool("Echo it"));
        update(&path, |p| {
            p.approve("fx", "id1", std::slice::from_ref(&item), 1, false)
        })
        .unwrap();
        update(&path, |p| {
            p.approve("gx", "id2", std::slice::from_ref(&item), 2, false)
        })
        .unwrap();
        let (p, problem) = load(&path);
        assert!(problem.is_none());
        assert_eq!(
            p.get("fx", "id1").unwrap().items["tool:echo"].hash,
            item.hash()
        );
        assert!(p.knows_name("gx") && !p.knows_name("hx"));
        std::fs::write(&path, "{ nope").unwrap();
        let e = update(&path, |p| p.approve("fx", "id1", &[], 3, false)).unwrap_err();
        assert!(e.to_string().contains("tool-pins.json"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ nope");
        assert!(load(&path).1.unwrap().contains("do not parse"));
    }
}
