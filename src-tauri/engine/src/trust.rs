//! Project servers and trust. A project's config files come with the
//! project (a clone, a pull), so they can run commands the user never read:
//!
//! * Claude Code asks before it runs a server of a project's `.mcp.json`
//!   and keeps the answer (`enabledMcpjsonServers`,
//!   `disabledMcpjsonServers`, `enableAllProjectMcpServers`) in
//!   `~/.claude.json` under `projects[<folder>]` and in the settings files
//!   `~/.claude/settings.json`, `<folder>/.claude/settings.json` and
//!   `settings.local.json`. A server Claude Code would not run is not run
//!   here either ([`ClaudeApprovals`]).
//! * Trust is tied to content: when the user trusts a folder, each of its
//!   servers is pinned ([`Pin`]: a hash of what it runs, with enough kept to
//!   show a difference, never a secret value). A server that later runs
//!   something else, or that was added since, is held until the user
//!   approves it; approving pins the new content.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::ServerDef;
use crate::host::Host;
use crate::sources::read::parse_parts;
use crate::sources::{Client, Level, SourceSpec};
use crate::writer::doc::{Format, PathSeg};

/// What a trusted folder's server ran when the user trusted (or approved) it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pin {
    /// SHA-256 (hex) of command, args, cwd, url and env exactly as written.
    pub hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// As shown: a URL-looking argument without its credentials or query.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Without credentials, query or fragment (they may hold secrets; a
    /// change there still changes `hash`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Each variable's value as a short hash: values may be secrets.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

/// Pins of one trusted folder, by [`pin_key`].
pub type FolderPins = BTreeMap<String, Pin>;

/// One difference between the pinned and the current content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TrustChange {
    /// `command`, `args`, `cwd`, `url` or `env.NAME`.
    pub field: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub after: Option<String>,
}

/// Why an enabled, valid definition is not started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Held {
    /// Claude Code would not run it (rejected, or never approved there).
    NotApproved { reason: String },
    /// It runs something else than when its folder was trusted (or it was
    /// added since): held until the user approves the change.
    Changed {
        reason: String,
        changes: Vec<TrustChange>,
    },
}

impl Held {
    pub fn reason(&self) -> &str {
        match self {
            Held::NotApproved { reason } | Held::Changed { reason, .. } => reason,
        }
    }
}

fn short_hash(s: &str) -> String {
    hex::encode(&Sha256::digest(s.as_bytes())[..8])
}

/// A URL as it may be shown and stored: no user info, query or fragment.
fn shown_url(u: &str) -> String {
    match url::Url::parse(u) {
        Ok(mut p) if p.has_host() => {
            let hidden = !p.username().is_empty()
                || p.password().is_some()
                || p.query().is_some()
                || p.fragment().is_some();
            let _ = p.set_username("");
            let _ = p.set_password(None);
            p.set_query(None);
            p.set_fragment(None);
            if hidden {
                format!("{p} (+ hidden parts)")
            } else {
                p.to_string()
            }
        }
        _ => u.to_string(),
    }
}

fn shown_arg(a: &str) -> String {
    if a.contains("://") {
        shown_url(a)
    } else {
        a.to_string()
    }
}

/// The pin of a definition as it is written now.
pub fn pin_of(def: &ServerDef) -> Pin {
    let mut h = Sha256::new();
    let mut part = |tag: &str, v: &str| {
        h.update(tag.as_bytes());
        h.update((v.len() as u64).to_le_bytes());
        h.update(v.as_bytes());
    };
    if let Some(c) = &def.command {
        part("command", c);
    }
    for a in &def.args {
        part("arg", a);
    }
    if let Some(c) = &def.cwd {
        part("cwd", c);
    }
    if let Some(u) = &def.url {
        part("url", u);
    }
    let env: BTreeMap<&String, &String> = def.env.iter().collect();
    for (k, v) in &env {
        part("env", k);
        part("value", v);
    }
    Pin {
        hash: hex::encode(h.finalize()),
        command: def.command.clone(),
        args: def.args.iter().map(|a| shown_arg(a)).collect(),
        cwd: def.cwd.clone(),
        url: def.url.as_deref().map(shown_url),
        env: env
            .into_iter()
            .map(|(k, v)| (k.clone(), short_hash(v)))
            .collect(),
    }
}

/// The key of a server's pin within its folder: the kind of file and the name.
pub fn pin_key(spec: &SourceSpec, name: &str) -> String {
    let kind = spec.id.split('@').next().unwrap_or(&spec.id);
    format!("{kind}/{name}")
}

/// Sources whose servers are pinned: a trusted folder's project files.
/// Claude Code's local entries in `~/.claude.json` are the user's own file,
/// not the project's, so they are not.
pub fn is_pinned_source(spec: &SourceSpec) -> bool {
    spec.level == Level::Project
        && spec.project.is_some()
        && !spec.id.starts_with("claude-code-local@")
}

fn quote_args(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if a.is_empty() || a.contains([' ', '"', '\'']) {
                format!("{a:?}")
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What differs between a pin and the content now (`None`: nothing pinned,
/// every field is new).
pub fn changes(old: Option<&Pin>, now: &Pin) -> Vec<TrustChange> {
    let mut out = vec![];
    let mut field = |f: &str, before: Option<String>, after: Option<String>| {
        if before != after {
            out.push(TrustChange {
                field: f.into(),
                before,
                after,
            });
        }
    };
    field(
        "command",
        old.and_then(|o| o.command.clone()),
        now.command.clone(),
    );
    let args = |p: &Pin| {
        if p.args.is_empty() {
            None
        } else {
            Some(quote_args(&p.args))
        }
    };
    field("args", old.and_then(args), args(now));
    field("cwd", old.and_then(|o| o.cwd.clone()), now.cwd.clone());
    field("url", old.and_then(|o| o.url.clone()), now.url.clone());
    let empty = BTreeMap::new();
    let old_env = old.map(|o| &o.env).unwrap_or(&empty);
    let keys: std::collections::BTreeSet<&String> = old_env.keys().chain(now.env.keys()).collect();
    for k in keys {
        let (b, a) = (old_env.get(k), now.env.get(k));
        if b != a {
            // Values are never shown: only whether the variable is set.
            let say = |v: Option<&String>, what: &str| v.map(|_| what.to_string());
            let (before, after) = match (b, a) {
                (Some(_), Some(_)) => (Some("a value".into()), Some("another value".into())),
                _ => (say(b, "set"), say(a, "set")),
            };
            out.push(TrustChange {
                field: format!("env.{k}"),
                before,
                after,
            });
        }
    }
    if out.is_empty() && old.is_some_and(|o| o.hash != now.hash) {
        // Only hidden parts (credentials or a query in a URL) changed.
        out.push(TrustChange {
            field: "credentials or query of a URL".into(),
            before: None,
            after: Some("changed".into()),
        });
    }
    out
}

/// Whether `def` of a pinned source runs as trusted; `None` when the folder
/// has no pins at all (trusted before pins existed, or for this run only).
pub fn check_pin(pins: Option<&FolderPins>, spec: &SourceSpec, def: &ServerDef) -> Option<Held> {
    let pins = pins?;
    let now = pin_of(def);
    match pins.get(&pin_key(spec, &def.name)) {
        Some(p) if p.hash == now.hash => None,
        Some(p) => Some(Held::Changed {
            reason: "changed since you trusted this folder; approve the change to run it".into(),
            changes: changes(Some(p), &now),
        }),
        None => Some(Held::Changed {
            reason: "added to this folder since you trusted it; approve it to run it".into(),
            changes: changes(None, &now),
        }),
    }
}

/// Claude Code's answers for one project folder, with the file each came from.
#[derive(Debug, Clone, Default)]
pub struct ClaudeApprovals {
    enabled: Vec<(String, PathBuf)>,
    disabled: Vec<(String, PathBuf)>,
    all: Option<PathBuf>,
}

/// The files Claude Code keeps its answers for `project` in (besides
/// `~/.claude.json`, which is a source file already).
pub fn approval_files(host: &Host, project: &Path) -> Vec<PathBuf> {
    vec![
        host.home_join(".claude/settings.json"),
        host.join(project, ".claude/settings.json"),
        host.join(project, ".claude/settings.local.json"),
    ]
}

/// Where in `~/.claude.json` Claude Code keeps its answers for `project`:
/// what `ClaudeApprovals::read_with` needs of that file.
pub fn claude_json_answers(project: &Path) -> Vec<Vec<PathSeg>> {
    let folder = project.to_string_lossy().into_owned();
    [
        "enabledMcpjsonServers",
        "disabledMcpjsonServers",
        "enableAllProjectMcpServers",
    ]
    .iter()
    .map(|k| {
        vec![
            PathSeg::Key("projects".into()),
            PathSeg::Key(folder.clone()),
            PathSeg::Key((*k).into()),
        ]
    })
    .collect()
}

/// `projects[<project>]` of `~/.claude.json`, read without the rest of
/// what can be several MB (see `parse_parts`).
fn project_in_claude_json(claude: &Path, project: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(claude).ok()?;
    let folder = project.to_string_lossy().into_owned();
    let path = [
        PathSeg::Key("projects".into()),
        PathSeg::Key(folder.clone()),
    ];
    let doc = parse_parts(
        Format::Json,
        text.strip_prefix('\u{feff}').unwrap_or(&text),
        &[&path],
    )
    .ok()?;
    doc.value.get("projects")?.get(&folder).cloned()
}

fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(&text)).ok()
}

/// Claude Code matches names loosely (`my.server` and `my_server` alike).
fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    norm(a) == norm(b)
}

impl ClaudeApprovals {
    /// Read every place Claude Code keeps its answers for `project`; a file
    /// that is missing or broken adds nothing.
    pub fn read(host: &Host, project: &Path) -> ClaudeApprovals {
        let claude = host.home_join(".claude.json");
        ClaudeApprovals::read_with(host, project, project_in_claude_json(&claude, project))
    }

    /// `read`, with `projects[<project>]` of `~/.claude.json` as a reader
    /// that goes over that file anyway found it (at least the keys of
    /// `claude_json_answers`; `None`: not there).
    pub fn read_with(host: &Host, project: &Path, in_claude: Option<Value>) -> ClaudeApprovals {
        let mut out = ClaudeApprovals::default();
        let claude = host.home_join(".claude.json");
        let mut add = |v: &Value, from: &Path| {
            let list = |k: &str| {
                v.get(k)
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(String::from)
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default()
            };
            out.enabled.extend(
                list("enabledMcpjsonServers")
                    .into_iter()
                    .map(|n| (n, from.to_path_buf())),
            );
            out.disabled.extend(
                list("disabledMcpjsonServers")
                    .into_iter()
                    .map(|n| (n, from.to_path_buf())),
            );
            if v.get("enableAllProjectMcpServers") == Some(&Value::Bool(true)) && out.all.is_none()
            {
                out.all = Some(from.to_path_buf());
            }
        };
        if let Some(v) = in_claude {
            add(&v, &claude);
        }
        for f in approval_files(host, project) {
            if let Some(v) = read_json(&f) {
                add(&v, &f);
            }
        }
        out
    }

    /// Rejected in Claude Code: it stays off (the file that says so).
    pub fn rejected(&self, name: &str) -> Option<&Path> {
        self.disabled
            .iter()
            .find(|(n, _)| same_name(n, name))
            .map(|(_, p)| p.as_path())
    }

    /// `None` when Claude Code would run this `.mcp.json` server; otherwise why not.
    pub fn verdict(&self, name: &str) -> Option<Held> {
        if let Some(file) = self.rejected(name) {
            return Some(Held::NotApproved {
                reason: format!("Claude Code does not run it: it is rejected for this project (disabledMcpjsonServers in {}); approve it to run it", file.display()),
            });
        }
        if self.all.is_some() || self.enabled.iter().any(|(n, _)| same_name(n, name)) {
            return None;
        }
        Some(Held::NotApproved {
            reason: "Claude Code has not approved it for this project (it asks when the project is opened); approve it here or in Claude Code to run it".into(),
        })
    }
}

/// Claude Code's project `.mcp.json` source (its approvals apply to it only).
pub fn is_mcpjson(spec: &SourceSpec) -> bool {
    spec.client == Client::ClaudeCode
        && spec.level == Level::Project
        && spec.id.starts_with("claude-code-project@")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(cmd: &str, args: &[&str]) -> ServerDef {
        ServerDef::stdio("s", cmd, args)
    }

    #[test]
    fn a_pin_changes_with_what_runs_and_not_with_anything_else() {
        let a = def("node", &["./tools/server.js"]);
        let mut b = a.clone();
        b.enabled = false;
        b.timeout = Some(5);
        b.headers.insert("X".into(), "y".into());
        assert_eq!(
            pin_of(&a),
            pin_of(&b),
            "switches and timeouts are not what runs"
        );
        for change in [
            |d: &mut ServerDef| d.command = Some("sh".into()),
            |d: &mut ServerDef| d.args.push("--evil".into()),
            |d: &mut ServerDef| d.cwd = Some("..".into()),
            |d: &mut ServerDef| d.url = Some("https://x.example/mcp".into()),
            |d: &mut ServerDef| {
                drop(
                    d.env
                        .insert("NODE_OPTIONS".into(), "--require /tmp/x.js".into()),
                )
            },
        ] {
            let mut c = a.clone();
            change(&mut c);
            assert_ne!(pin_of(&a).hash, pin_of(&c).hash, "{c:?}");
        }
        // Moving text from one arg to the next is a change too.
        assert_ne!(
            pin_of(&def("x", &["ab", "c"])).hash,
            pin_of(&def("x", &["a", "bc"])).hash
        );
    }

    #[test]
    fn pins_keep_no_secret_and_changes_say_what_differs() {
        let mut a = def(
            "npx",
            &["-y", "server-postgres", "postgresql://me:hunter2@db/app"],
        );
        a.env.insert("API_KEY".into(), "sk-secret".into());
        let pin = pin_of(&a);
        let text = serde_json::to_string(&pin).unwrap();
        assert!(
            !text.contains("hunter2") && !text.contains("sk-secret"),
            "{text}"
        );
        let mut b = a.clone();
        b.args.push("--evil".into());
        b.env.insert("API_KEY".into(), "sk-other".into());
        b.env.insert("NEW".into(), "1".into());
        let ch = changes(Some(&pin), &pin_of(&b));
        let fields: Vec<&str> = ch.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, ["args", "env.API_KEY", "env.NEW"]);
        assert_eq!(
            ch[0].after.as_deref(),
            Some("-y server-postgres \"postgresql://db/app (+ hidden parts)\" --evil")
        );
        assert!(!format!("{ch:?}").contains("sk-"), "{ch:?}");
        // Only the password changed: still a change, still not shown.
        let mut c = a.clone();
        c.args[2] = "postgresql://me:other@db/app".into();
        let ch = changes(Some(&pin), &pin_of(&c));
        assert_eq!(ch.len(), 1, "{ch:?}");
        assert!(!format!("{ch:?}").contains("other@"), "{ch:?}");
    }
}
