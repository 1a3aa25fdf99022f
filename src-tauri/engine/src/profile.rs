//! Profiles: named sets of servers (and, per server, of tools) for one task
//! or one client. A profile names servers by name — the winning definition
//! of that name, from whichever source — so it follows the user's own
//! client files instead of copying them. The built-in profile
//! [`EVERYTHING`] is every server with every tool.
//!
//! This module is the model and its pure rules (which server and tool a
//! profile lets through, what a valid profile name is); Switchboard's
//! settings keep the profiles, the gateway serves them
//! (`/mcp/p/<profile>`), and `profile_apply` writes them into clients'
//! files.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The built-in profile: every enabled server with every tool (what a
/// client gets without profiles). Never stored, never edited.
pub const EVERYTHING: &str = "Everything";

/// The token budget a client gets unless Settings give it another.
pub const DEFAULT_BUDGET: u32 = 20_000;

/// Longest profile name (it is part of a URL and of menu items).
pub const MAX_NAME_LEN: usize = 64;

/// Which of a server's tools a profile keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ToolRule {
    /// Only these tools (raw names, as the server lists them).
    Allow(Vec<String>),
    /// Every tool but these.
    Deny(Vec<String>),
}

impl ToolRule {
    pub fn allows(&self, tool: &str) -> bool {
        match self {
            ToolRule::Allow(l) => l.iter().any(|t| t == tool),
            ToolRule::Deny(l) => !l.iter().any(|t| t == tool),
        }
    }
}

/// One server of a profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProfileServer {
    /// The server's name (its winning definition is used).
    pub name: String,
    /// Absent: every tool of the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tools: Option<ToolRule>,
}

/// A named set of servers and tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub servers: Vec<ProfileServer>,
}

impl Profile {
    pub fn new(name: &str) -> Profile {
        Profile {
            name: name.to_string(),
            servers: vec![],
        }
    }

    pub fn server(&self, name: &str) -> Option<&ProfileServer> {
        self.servers.iter().find(|s| s.name == name)
    }

    pub fn includes(&self, server: &str) -> bool {
        self.server(server).is_some()
    }

    /// Whether the profile lets `tool` of `server` through.
    pub fn allows(&self, server: &str, tool: &str) -> bool {
        match self.server(server) {
            None => false,
            Some(s) => s.tools.as_ref().is_none_or(|r| r.allows(tool)),
        }
    }

    /// Add servers (kept in the order added; one already in stays as it is).
    pub fn add(&mut self, names: &[String]) {
        for n in names {
            if !self.includes(n) {
                self.servers.push(ProfileServer {
                    name: n.clone(),
                    tools: None,
                });
            }
        }
    }

    pub fn remove(&mut self, names: &[String]) {
        self.servers.retain(|s| !names.contains(&s.name));
    }

    /// Switch one tool of one server on or off in this profile. The rule
    /// keeps the shorter list: switching off on an "every tool" server makes
    /// a deny list; a deny list that empties goes back to every tool.
    pub fn set_tool(&mut self, server: &str, tool: &str, on: bool) {
        let Some(s) = self.servers.iter_mut().find(|s| s.name == server) else {
            return;
        };
        let rule = s.tools.take().unwrap_or(ToolRule::Deny(vec![]));
        let rule = match rule {
            ToolRule::Deny(mut l) => {
                l.retain(|t| t != tool);
                if !on {
                    l.push(tool.to_string());
                    l.sort();
                }
                (!l.is_empty()).then_some(ToolRule::Deny(l))
            }
            ToolRule::Allow(mut l) => {
                l.retain(|t| t != tool);
                if on {
                    l.push(tool.to_string());
                    l.sort();
                }
                Some(ToolRule::Allow(l))
            }
        };
        s.tools = rule;
    }
}

/// How a client follows a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Via {
    /// The client's own file holds exactly the profile's servers, the
    /// others switched off (or parked, for clients without a switch).
    #[default]
    File,
    /// The client's file holds one `switchboard` entry pointing at the
    /// profile's gateway endpoint.
    Gateway,
}

/// A client's profile, as Settings keep it (by client id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ClientProfile {
    pub profile: String,
    #[serde(default)]
    pub via: Via,
    /// The client moves with the profile switch (the app's header and tray):
    /// switching makes this client's profile the one switched to.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(as = "Option<bool>", optional))]
    pub follow: bool,
    /// What applying did to the client's file that applying another profile
    /// (or Everything) must undo: servers switched off, servers switched on
    /// that were off, definitions added.
    #[serde(default, skip_serializing_if = "FileChanges::is_empty")]
    pub changes: FileChanges,
}

/// What applying profiles has changed in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FileChanges {
    /// Servers switched off (or parked) because the profile leaves them out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<String>,
    /// Servers that were off and were switched on because the profile has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enabled: Vec<String>,
    /// Servers the profile has that the file did not define, added to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    /// Where each change above sits in the file, so that taking it back
    /// puts back the very bytes it replaced (`profile_apply`). Internal: not
    /// for the UI.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub exact: Vec<Splice>,
}

/// One change a profile made to a file, as bytes: at `at`, `put_len` bytes
/// (hashing to `put`) replaced `removed`. It is taken back byte for byte
/// only while the bytes around it (up to [`Splice::CONTEXT`] each side,
/// hashing to `left` and `right`) are as they were; otherwise the change is
/// taken back by meaning. Offsets are from the start of the servers'
/// container (`mcpServers`' `{`), or of the file when `whole`, so an edit
/// elsewhere in the file (Claude Code rewrites `~/.claude.json` often) does
/// not move them. No secret is kept here: hashes, and the bytes a flag or a
/// new entry replaced; a parked entry's bytes stay with the parked entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Splice {
    pub server: String,
    pub at: usize,
    /// The bytes the change took out; `None`: a parked entry, whose bytes
    /// are kept with it (`settings::ParkedEntry::text`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<String>,
    pub put_len: usize,
    pub put: String,
    pub left: String,
    pub right: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole: bool,
    /// The change created the file: taking it back to nothing deletes it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created_file: bool,
}

impl Splice {
    /// Bytes of context checked on each side.
    pub const CONTEXT: usize = 64;
}

impl FileChanges {
    pub fn is_empty(&self) -> bool {
        self.disabled.is_empty() && self.enabled.is_empty() && self.added.is_empty()
    }
}

/// Every profile setting, kept under `profiles` in Switchboard's settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProfileSettings {
    /// The user's profiles, in the order they are shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<Profile>,
    /// The profile switched to in the app's header or tray (what the
    /// gateway's `/mcp` serves). Absent: [`EVERYTHING`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub active: Option<String>,
    /// Clients that follow a profile, by client id (`cursor`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub clients: BTreeMap<String, ClientProfile>,
    /// Project folders bound to a profile: their clients' project files
    /// hold exactly its servers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub projects: BTreeMap<PathBuf, ProjectProfile>,
    /// Tokens of tool definitions a client may take before Switchboard
    /// warns; by client id, with `default` for the rest.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub budgets: BTreeMap<String, u32>,
}

/// A project folder's profile and what applying it changed, per project file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProjectProfile {
    pub profile: String,
    /// By source id of the project file (`cursor-project:/path`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub changes: BTreeMap<String, FileChanges>,
}

impl ProfileSettings {
    pub fn is_default(&self) -> bool {
        *self == ProfileSettings::default()
    }

    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.list.iter().find(|p| p.name.eq_ignore_ascii_case(name))
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Profile> {
        self.list
            .iter_mut()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// The active profile's name ([`EVERYTHING`] when none is set).
    pub fn active_name(&self) -> &str {
        self.active.as_deref().unwrap_or(EVERYTHING)
    }

    /// The budget of `client` (an id), else the default one.
    pub fn budget(&self, client: &str) -> u32 {
        self.budgets
            .get(client)
            .or_else(|| self.budgets.get("default"))
            .copied()
            .unwrap_or(DEFAULT_BUDGET)
    }

    /// What `name` lets through: `None` for [`EVERYTHING`] (no filter),
    /// `Err` for a profile that does not exist.
    pub fn filter(&self, name: &str) -> Result<Option<&Profile>, ProfileError> {
        if is_everything(name) {
            return Ok(None);
        }
        self.get(name)
            .map(Some)
            .ok_or_else(|| ProfileError::Unknown {
                name: name.to_string(),
                known: self.names(),
            })
    }

    /// Every profile's name, [`EVERYTHING`] first.
    pub fn names(&self) -> Vec<String> {
        std::iter::once(EVERYTHING.to_string())
            .chain(self.list.iter().map(|p| p.name.clone()))
            .collect()
    }

    /// Create a profile (refused when the name is taken or not valid).
    pub fn create(&mut self, name: &str) -> Result<&mut Profile, ProfileError> {
        check_name(name)?;
        if is_everything(name) || self.get(name).is_some() {
            return Err(ProfileError::Exists(name.to_string()));
        }
        self.list.push(Profile::new(name));
        Ok(self.list.last_mut().expect("just pushed"))
    }

    /// Rename a profile and every reference to it (active, clients, projects).
    pub fn rename(&mut self, from: &str, to: &str) -> Result<(), ProfileError> {
        check_name(to)?;
        let old = self.editable(from)?.name.clone();
        if !old.eq_ignore_ascii_case(to) && (is_everything(to) || self.get(to).is_some()) {
            return Err(ProfileError::Exists(to.to_string()));
        }
        self.get_mut(&old).expect("checked").name = to.to_string();
        let same = |n: &str| n.eq_ignore_ascii_case(&old);
        if self.active.as_deref().is_some_and(same) {
            self.active = Some(to.to_string());
        }
        for c in self.clients.values_mut().filter(|c| same(&c.profile)) {
            c.profile = to.to_string();
        }
        for p in self.projects.values_mut().filter(|p| same(&p.profile)) {
            p.profile = to.to_string();
        }
        Ok(())
    }

    /// Delete a profile. Refused while a client or project folder follows it
    /// (their files hold its servers: apply another profile to them first);
    /// the switch goes back to Everything if it was the active one.
    pub fn delete(&mut self, name: &str) -> Result<(), ProfileError> {
        let old = self.editable(name)?.name.clone();
        let same = |n: &str| n.eq_ignore_ascii_case(&old);
        let users: Vec<String> = self
            .clients
            .iter()
            .filter(|(_, c)| same(&c.profile))
            .map(|(id, _)| id.clone())
            .chain(
                self.projects
                    .iter()
                    .filter(|(_, p)| same(&p.profile))
                    .map(|(dir, _)| dir.display().to_string()),
            )
            .collect();
        if !users.is_empty() {
            return Err(ProfileError::InUse { name: old, users });
        }
        self.list.retain(|p| !same(&p.name));
        if self.active.as_deref().is_some_and(same) {
            self.active = None;
        }
        Ok(())
    }

    /// A profile the user may change (not Everything, and one that exists).
    pub fn editable(&mut self, name: &str) -> Result<&mut Profile, ProfileError> {
        if is_everything(name) {
            return Err(ProfileError::BuiltIn);
        }
        let known = self.names();
        self.get_mut(name).ok_or_else(|| ProfileError::Unknown {
            name: name.to_string(),
            known,
        })
    }

    /// Switch to `name` (the gateway's `/mcp` serves it); clients that follow
    /// the switch get it as their profile (their files are applied after).
    pub fn switch_to(&mut self, name: &str) -> Result<(), ProfileError> {
        let name = self.filter(name)?.map(|p| p.name.clone());
        for c in self.clients.values_mut().filter(|c| c.follow) {
            c.profile = name.clone().unwrap_or(EVERYTHING.into());
        }
        self.active = name;
        Ok(())
    }

    /// The clients and project folders that follow `name`.
    pub fn users_of(&self, name: &str) -> Vec<String> {
        let same = |n: &str| n.eq_ignore_ascii_case(name);
        self.clients
            .iter()
            .filter(|(_, c)| same(&c.profile))
            .map(|(id, _)| id.clone())
            .chain(
                self.projects
                    .iter()
                    .filter(|(_, p)| same(&p.profile))
                    .map(|(dir, _)| dir.display().to_string()),
            )
            .collect()
    }
}

/// One change of the profiles, as the app and the CLI ask for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum ProfileChange {
    Create {
        name: String,
        #[serde(default)]
        servers: Vec<String>,
    },
    Delete {
        name: String,
    },
    #[serde(rename_all = "camelCase")]
    Rename {
        name: String,
        new_name: String,
    },
    Add {
        name: String,
        servers: Vec<String>,
    },
    Remove {
        name: String,
        servers: Vec<String>,
    },
    /// Switch one tool of one of the profile's servers on or off.
    SetTool {
        name: String,
        server: String,
        tool: String,
        on: bool,
    },
    /// A server's whole tool rule (`None`: every tool).
    SetRule {
        name: String,
        server: String,
        #[cfg_attr(feature = "ts", ts(optional))]
        rule: Option<ToolRule>,
    },
    /// The budget of one client (an id), or of every other (`None`).
    Budget {
        #[cfg_attr(feature = "ts", ts(optional))]
        client: Option<String>,
        tokens: u32,
    },
}

impl ProfileChange {
    /// Servers this change adds to a profile (checked against discovery first).
    pub fn added_servers(&self) -> &[String] {
        match self {
            ProfileChange::Create { servers, .. } | ProfileChange::Add { servers, .. } => servers,
            _ => &[],
        }
    }

    pub fn apply(&self, p: &mut ProfileSettings) -> Result<(), ProfileError> {
        match self {
            ProfileChange::Create { name, servers } => p.create(name)?.add(servers),
            ProfileChange::Delete { name } => p.delete(name)?,
            ProfileChange::Rename { name, new_name } => p.rename(name, new_name)?,
            ProfileChange::Add { name, servers } => p.editable(name)?.add(servers),
            ProfileChange::Remove { name, servers } => p.editable(name)?.remove(servers),
            ProfileChange::SetTool {
                name,
                server,
                tool,
                on,
            } => {
                let profile = p.editable(name)?;
                if !profile.includes(server) {
                    return Err(ProfileError::UnknownServers(vec![server.clone()]));
                }
                profile.set_tool(server, tool, *on)
            }
            ProfileChange::SetRule { name, server, rule } => {
                let profile = p.editable(name)?;
                let s = profile
                    .servers
                    .iter_mut()
                    .find(|s| &s.name == server)
                    .ok_or_else(|| ProfileError::UnknownServers(vec![server.clone()]))?;
                s.tools = rule.clone();
            }
            ProfileChange::Budget { client, tokens } => {
                if *tokens == 0 {
                    return Err(ProfileError::BadBudget);
                }
                p.budgets
                    .insert(client.clone().unwrap_or("default".into()), *tokens);
            }
        }
        Ok(())
    }
}

pub fn is_everything(name: &str) -> bool {
    name.trim().eq_ignore_ascii_case(EVERYTHING)
}

/// A profile name must fit in a URL path segment and a menu: letters,
/// digits, spaces, `-`, `_` and `.`, 1–64 characters, not starting with a
/// space or dot.
pub fn check_name(name: &str) -> Result<(), ProfileError> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME_LEN
        && !name.starts_with([' ', '.'])
        && !name.ends_with(' ')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ProfileError::BadName(name.to_string()))
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProfileError {
    #[error("no profile named \"{name}\"; the profiles are: {}", known.join(", "))]
    Unknown { name: String, known: Vec<String> },
    #[error("a profile named \"{0}\" already exists; pick another name")]
    Exists(String),
    #[error("\"{0}\" is not a profile name: use 1–64 letters, digits, spaces, '-', '_' or '.', not starting with a space or '.'")]
    BadName(String),
    #[error("\"Everything\" is built in (every server, every tool) and cannot be changed; create a profile of your own")]
    BuiltIn,
    #[error("profile \"{name}\" is in use by {}; apply another profile to them first", users.join(", "))]
    InUse { name: String, users: Vec<String> },
    #[error("no server named {} was found (see `switchboard discover`)", .0.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", "))]
    UnknownServers(Vec<String>),
    #[error("a token budget must be more than 0 tokens")]
    BadBudget,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_let_through_what_they_name() {
        let mut p = Profile::new("work");
        p.add(&["github".into(), "fs".into(), "github".into()]);
        assert_eq!(p.servers.len(), 2);
        assert!(p.allows("github", "create_issue") && !p.allows("slack", "post"));
        p.set_tool("github", "delete_repo", false);
        assert_eq!(
            p.server("github").unwrap().tools,
            Some(ToolRule::Deny(vec!["delete_repo".into()]))
        );
        assert!(!p.allows("github", "delete_repo") && p.allows("github", "create_issue"));
        p.set_tool("github", "delete_repo", true);
        assert_eq!(p.server("github").unwrap().tools, None);
        p.servers[1].tools = Some(ToolRule::Allow(vec!["read".into()]));
        p.set_tool("fs", "write", true);
        assert!(p.allows("fs", "write") && p.allows("fs", "read") && !p.allows("fs", "rm"));
        p.remove(&["github".into()]);
        assert!(!p.includes("github"));
    }

    #[test]
    fn names_are_checked_and_everything_is_built_in() {
        let mut s = ProfileSettings::default();
        s.create("Writing").unwrap();
        assert_eq!(
            s.create("writing").unwrap_err(),
            ProfileError::Exists("writing".into())
        );
        assert!(matches!(
            s.create("everything"),
            Err(ProfileError::Exists(_))
        ));
        assert!(matches!(s.create("a/b"), Err(ProfileError::BadName(_))));
        assert!(matches!(s.create(""), Err(ProfileError::BadName(_))));
        assert!(matches!(
            s.editable("Everything"),
            Err(ProfileError::BuiltIn)
        ));
        assert_eq!(s.filter("everything"), Ok(None));
        assert!(matches!(
            s.filter("nope"),
            Err(ProfileError::Unknown { .. })
        ));
        s.active = Some("Writing".into());
        s.rename("writing", "Prose").unwrap();
        assert_eq!(s.active_name(), "Prose");
        s.clients.insert(
            "cursor".into(),
            ClientProfile {
                profile: "Prose".into(),
                via: Via::File,
                follow: false,
                changes: Default::default(),
            },
        );
        assert!(matches!(s.delete("prose"), Err(ProfileError::InUse { .. })));
        s.clients.clear();
        s.delete("prose").unwrap();
        assert_eq!(s.active_name(), EVERYTHING);
        assert_eq!(s.budget("cursor"), DEFAULT_BUDGET);
        s.budgets.insert("default".into(), 5000);
        s.budgets.insert("cursor".into(), 9000);
        assert_eq!((s.budget("cursor"), s.budget("zed")), (9000, 5000));
    }
}
