//! Who may use what on the team gateway: `team.json` in the `--config`
//! folder maps what a person's access token says (groups, scopes, or the
//! subject itself) to profiles (`settings.json`'s profiles, or the built-in
//! `Everything`). A person gets every profile any rule gives them; the
//! gateway then serves the union of those profiles' servers and tools. A
//! person no rule matches is refused (403), never served everything.
//!
//! ```json
//! {
//!   "access": [
//!     { "group": "engineering", "profiles": ["dev"] },
//!     { "scope": "mcp:ops", "profiles": ["ops"] },
//!     { "subject": "admin@example.com", "profiles": ["Everything"] }
//!   ]
//! }
//! ```

use std::path::Path;

use serde::Deserialize;

use super::oidc::Identity;

/// The file's name in the `--config` folder.
pub const FILE: &str = "team.json";
/// Largest `team.json` read.
const MAX_BYTES: u64 = 1024 * 1024;

/// One rule: who it is for (exactly one of `group`, `scope`, `subject`),
/// and the profiles it gives.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    #[serde(default)]
    pub group: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub subject: Option<String>,
    pub profiles: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Access {
    pub access: Vec<Rule>,
}

impl Rule {
    fn matches(&self, who: &Identity) -> bool {
        if let Some(g) = &self.group {
            return who.groups.iter().any(|x| x == g);
        }
        if let Some(s) = &self.scope {
            return who.scopes.iter().any(|x| x == s);
        }
        if let Some(s) = &self.subject {
            return &who.subject == s;
        }
        false
    }
}

impl Access {
    /// Reads and checks `dir/team.json`. The error names the file and the
    /// field, and says what to do.
    pub fn load(dir: &Path) -> Result<Access, String> {
        let path = dir.join(FILE);
        let shown = path.display();
        let meta = std::fs::metadata(&path).map_err(|e| {
            format!("{shown}: cannot be read ({e}); it says which groups may use which profiles, e.g. {{\"access\": [{{\"group\": \"engineering\", \"profiles\": [\"dev\"]}}]}}")
        })?;
        if meta.len() > MAX_BYTES {
            return Err(format!(
                "{shown}: larger than 1 MiB; it should hold only the access rules"
            ));
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{shown}: cannot be read ({e})"))?;
        Access::parse(&text).map_err(|e| format!("{shown}: {e}"))
    }

    /// Parses and checks the rules (the error names the field).
    pub fn parse(text: &str) -> Result<Access, String> {
        let a: Access = serde_json::from_str(text).map_err(|e| {
            format!("{e}; expected {{\"access\": [{{\"group\"|\"scope\"|\"subject\": \"…\", \"profiles\": [\"…\"]}}]}}")
        })?;
        for (i, r) in a.access.iter().enumerate() {
            let set = [&r.group, &r.scope, &r.subject]
                .iter()
                .filter(|x| x.is_some())
                .count();
            if set != 1 {
                return Err(format!(
                    "access[{i}]: give exactly one of \"group\", \"scope\" or \"subject\" (it gave {set})"
                ));
            }
            if [&r.group, &r.scope, &r.subject]
                .iter()
                .any(|x| x.as_deref().is_some_and(|v| v.trim().is_empty()))
            {
                return Err(format!("access[{i}]: the group, scope or subject is empty"));
            }
            if r.profiles.is_empty() {
                return Err(format!(
                    "access[{i}].profiles: empty; name at least one profile (or \"Everything\")"
                ));
            }
            if let Some(p) = r.profiles.iter().find(|p| p.trim().is_empty()) {
                return Err(format!(
                    "access[{i}].profiles: \"{p}\" is not a profile name"
                ));
            }
        }
        Ok(a)
    }

    /// The profiles `who` may use, sorted and without repeats (empty: none).
    pub fn profiles_for(&self, who: &Identity) -> Vec<String> {
        let mut out: Vec<String> = self
            .access
            .iter()
            .filter(|r| r.matches(who))
            .flat_map(|r| r.profiles.iter().cloned())
            .collect();
        out.sort_by_key(|p| p.to_lowercase());
        out.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
        out
    }

    /// Profile names the rules give that `known` does not know (a warning:
    /// the profile may be added to `settings.json` later; until then it
    /// serves nothing).
    pub fn unknown_profiles(&self, known: impl Fn(&str) -> bool) -> Vec<String> {
        let mut out: Vec<String> = self
            .access
            .iter()
            .flat_map(|r| r.profiles.iter())
            .filter(|p| !known(p))
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(sub: &str, groups: &[&str], scopes: &[&str]) -> Identity {
        Identity {
            subject: sub.into(),
            groups: groups.iter().map(|s| s.to_string()).collect(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            expires_at: 0,
        }
    }

    #[test]
    fn a_person_gets_every_profile_their_groups_scopes_and_name_give() {
        let a = Access::parse(
            r#"{"access": [
                {"group": "eng", "profiles": ["dev", "docs"]},
                {"scope": "mcp:ops", "profiles": ["ops"]},
                {"subject": "boss", "profiles": ["Everything"]},
                {"group": "writers", "profiles": ["Docs"]}
            ]}"#,
        )
        .unwrap();
        assert_eq!(
            a.profiles_for(&who("ann", &["eng", "writers"], &[])),
            vec!["dev", "docs"]
        );
        assert_eq!(
            a.profiles_for(&who("bob", &[], &["mcp:ops", "x"])),
            vec!["ops"]
        );
        assert_eq!(a.profiles_for(&who("boss", &[], &[])), vec!["Everything"]);
        assert!(a.profiles_for(&who("eve", &["ENG"], &["mcp"])).is_empty());
    }

    #[test]
    fn bad_rules_are_refused_naming_the_field() {
        let e = Access::parse(r#"{"access": [{"group": "a", "scope": "b", "profiles": ["x"]}]}"#)
            .unwrap_err();
        assert!(e.contains("access[0]") && e.contains("exactly one"), "{e}");
        let e = Access::parse(r#"{"access": [{"group": "a", "profiles": []}]}"#).unwrap_err();
        assert!(e.contains("access[0].profiles"), "{e}");
        let e = Access::parse(r#"{"access": [{"groop": "a", "profiles": ["x"]}]}"#).unwrap_err();
        assert!(e.contains("groop"), "{e}");
        let e = Access::parse(r#"{"rules": []}"#).unwrap_err();
        assert!(e.contains("rules"), "{e}");
        let a =
            Access::parse(r#"{"access": [{"group": "a", "profiles": ["dev", "gone"]}]}"#).unwrap();
        assert_eq!(a.unknown_profiles(|p| p == "dev"), vec!["gone"]);
    }
}
