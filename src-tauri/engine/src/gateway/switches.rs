//! Per-tool switches and gateway exclusions: kept in Switchboard's
//! settings file by server name and raw tool name, and followed live, so a
//! switch flipped by the app or by `switchboard tool off` in another process
//! reaches every running gateway within a fraction of a second.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio::sync::watch;

use crate::host::Host;
use crate::profile::{is_everything, Profile};
use crate::settings::{Settings, SettingsError};

/// What the gateway must not offer, and the profiles it serves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Switches {
    /// Server → raw names of its tools that are switched off.
    off: HashMap<String, HashSet<String>>,
    /// Servers the gateway does not serve at all.
    excluded: HashSet<String>,
    /// The user's profiles, by name as written.
    profiles: Vec<Profile>,
    /// The profile switched to (`None`: Everything); what `/mcp` serves.
    active: Option<String>,
    /// What is done when a server's answer has a finding (absent: warn).
    checks: std::collections::BTreeMap<String, crate::settings::ResultMode>,
}

impl Switches {
    pub fn from_settings(s: &Settings) -> Switches {
        Switches {
            off: s
                .disabled_tools
                .iter()
                .map(|(server, tools)| (server.clone(), tools.iter().cloned().collect()))
                .collect(),
            excluded: s.gateway_excluded.iter().cloned().collect(),
            profiles: s.profiles.list.clone(),
            active: s.profiles.active.clone(),
            checks: s.result_checks.clone(),
        }
    }

    /// What the gateway does when `server`'s answer has a finding.
    pub fn result_mode(&self, server: &str) -> crate::settings::ResultMode {
        self.checks.get(server).copied().unwrap_or_default()
    }

    /// The profile `name` (`Some(None)`: Everything, no filter; `None`: no
    /// such profile).
    pub fn profile(&self, name: &str) -> Option<Option<&Profile>> {
        if is_everything(name) {
            return Some(None);
        }
        self.profiles
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
            .map(Some)
    }

    /// The profile switched to (`None`: Everything). An active profile that
    /// no longer exists serves nothing rather than everything.
    pub fn active(&self) -> Option<ActiveProfile<'_>> {
        let name = self.active.as_deref()?;
        Some(match self.profile(name) {
            Some(Some(p)) => ActiveProfile::Profile(p),
            Some(None) => return None,
            None => ActiveProfile::Missing,
        })
    }

    /// The active profile's name.
    pub fn active_name(&self) -> &str {
        self.active.as_deref().unwrap_or(crate::profile::EVERYTHING)
    }

    pub fn is_off(&self, server: &str, tool: &str) -> bool {
        self.off.get(server).is_some_and(|t| t.contains(tool))
    }

    pub fn is_excluded(&self, server: &str) -> bool {
        self.excluded.contains(server)
    }

    /// Whether `other` serves the same servers (exclusions, profiles' servers
    /// and the active profile).
    pub fn same_servers(&self, other: &Switches) -> bool {
        let servers = |s: &Switches| -> Vec<(String, Vec<String>)> {
            s.profiles
                .iter()
                .map(|p| {
                    let names = p.servers.iter().map(|x| x.name.clone()).collect();
                    (p.name.to_lowercase(), names)
                })
                .collect()
        };
        self.excluded == other.excluded
            && self.active_name().eq_ignore_ascii_case(other.active_name())
            && servers(self) == servers(other)
    }
}

/// The profile switched to, as the gateway's `/mcp` serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActiveProfile<'a> {
    Profile(&'a Profile),
    /// The settings name a profile that is not there (deleted by hand).
    Missing,
}

/// Switch `tool` of `server` on or off in `s` (kept sorted, no duplicates;
/// a server with nothing switched off has no entry).
pub fn set_tool(s: &mut Settings, server: &str, tool: &str, on: bool) {
    let list = s.disabled_tools.entry(server.to_string()).or_default();
    list.retain(|t| t != tool);
    if !on {
        list.push(tool.to_string());
        list.sort();
    }
    if list.is_empty() {
        s.disabled_tools.remove(server);
    }
}

/// Exclude `server` from the gateway, or serve it again.
pub fn set_excluded(s: &mut Settings, server: &str, excluded: bool) {
    s.gateway_excluded.retain(|n| n != server);
    if excluded {
        s.gateway_excluded.push(server.to_string());
        s.gateway_excluded.sort();
    }
}

/// Switch tools on or off in the settings file (hash-checked, applied again
/// on top of a concurrent change). `tools` are (server, raw tool name).
pub fn save_tools(
    host: &Host,
    tools: &[(String, String)],
    on: bool,
) -> Result<Settings, SettingsError> {
    Settings::update(host, |s| {
        for (server, tool) in tools {
            set_tool(s, server, tool, on);
        }
    })
}

/// The settings file was just written by this process: every follower of it
/// here reads it now (see [`crate::settings::nudge`]).
pub fn nudge(host: &Host) {
    crate::settings::nudge(host);
}

/// Follows the settings file: the receiver holds the newest switches. A file
/// that stops parsing keeps the last good switches (turning every tool back
/// on because of a typo would be worse). Stops when every receiver is gone.
pub fn follow(host: &Host) -> watch::Receiver<Arc<Switches>> {
    crate::settings::follow(host, Switches::from_settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switching_keeps_lists_sorted_and_drops_empty_servers() {
        let mut s = Settings::default();
        set_tool(&mut s, "fx", "echo", false);
        set_tool(&mut s, "fx", "add", false);
        set_tool(&mut s, "fx", "add", false);
        assert_eq!(s.disabled_tools["fx"], vec!["add", "echo"]);
        let sw = Switches::from_settings(&s);
        assert!(
            sw.is_off("fx", "echo") && !sw.is_off("fx", "sleep") && !sw.is_off("other", "echo")
        );
        set_tool(&mut s, "fx", "add", true);
        set_tool(&mut s, "fx", "echo", true);
        assert!(s.disabled_tools.is_empty());
        set_excluded(&mut s, "b", true);
        set_excluded(&mut s, "a", true);
        set_excluded(&mut s, "a", true);
        assert_eq!(s.gateway_excluded, vec!["a", "b"]);
        assert!(Switches::from_settings(&s).is_excluded("a"));
    }
}
