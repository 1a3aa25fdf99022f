//! What a server installed from a bundle leaves once it is removed: its
//! unpacked folder (`<data>/bundles/<name>/<version>`) and the keychain
//! items its definition refers to — each only when no remaining definition,
//! in any source, still uses it.

use std::path::{Path, PathBuf};

use crate::config::ServerDef;
use crate::discovery::Discovery;

/// The unpacked bundle folder `def` runs from: the first of its command and
/// arguments under `<data_dir>/bundles/<name>/<version>/` whose folder holds
/// a `manifest.json`.
pub fn bundle_dir(def: &ServerDef, data_dir: &Path) -> Option<PathBuf> {
    let root = data_dir.join("bundles");
    def.command.iter().chain(def.args.iter()).find_map(|text| {
        let rest = Path::new(text).strip_prefix(&root).ok()?;
        let mut parts = rest.components();
        let (name, version) = (parts.next()?, parts.next()?);
        let dir = root.join(name).join(version);
        dir.join("manifest.json").is_file().then_some(dir)
    })
}

/// The keychain names `def`'s env and headers refer to (`${keychain:NAME}`).
pub fn keychain_names(def: &ServerDef) -> Vec<String> {
    let mut names = vec![];
    for value in def.env.values().chain(def.headers.values()) {
        let mut rest = value.as_str();
        while let Some(at) = rest.find("${keychain:") {
            let after = &rest[at + "${keychain:".len()..];
            let Some(end) = after.find('}') else { break };
            let name = after[..end].to_string();
            if !names.contains(&name) {
                names.push(name);
            }
            rest = &after[end + 1..];
        }
    }
    names
}

/// What removing `removed` leaves unused, given `remaining` (discovery after
/// the removal).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Leftovers {
    /// The unpacked folder, when no remaining definition runs from it.
    pub dir: Option<PathBuf>,
    /// Keychain names no remaining definition refers to.
    pub secrets: Vec<String>,
}

/// For a server that ran from a bundle: its folder and keychain items that
/// nothing in `remaining` uses. A server not from a bundle leaves nothing
/// (its secrets stay, as they always have).
pub fn leftovers(removed: &ServerDef, remaining: &Discovery, data_dir: &Path) -> Leftovers {
    let Some(dir) = bundle_dir(removed, data_dir) else {
        return Leftovers::default();
    };
    let others: Vec<&ServerDef> = remaining
        .servers
        .iter()
        .flat_map(|s| s.definitions.iter().map(|d| &d.def))
        .collect();
    let dir_used = others
        .iter()
        .any(|d| bundle_dir(d, data_dir).as_deref() == Some(dir.as_path()));
    let secrets = keychain_names(removed)
        .into_iter()
        .filter(|n| !others.iter().any(|d| keychain_names(d).contains(n)))
        .collect();
    Leftovers {
        dir: (!dir_used).then_some(dir),
        secrets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_found_only_under_bundles_with_a_manifest() {
        let data = tempfile::tempdir().unwrap();
        let dir = data.path().join("bundles/hello/1.0.0");
        std::fs::create_dir_all(dir.join("server")).unwrap();
        let mut def = ServerDef::stdio("hello", "node", &[]);
        def.args = vec![
            "--x".into(),
            dir.join("server/index.js").to_string_lossy().into(),
        ];
        assert_eq!(bundle_dir(&def, data.path()), None, "no manifest.json");
        std::fs::write(dir.join("manifest.json"), "{}").unwrap();
        assert_eq!(bundle_dir(&def, data.path()), Some(dir.clone()));
        def.args = vec![data.path().join("bundles/hello").to_string_lossy().into()];
        assert_eq!(bundle_dir(&def, data.path()), None, "not a version folder");
        def.args = vec!["/elsewhere/bundles/hello/1.0.0/x.js".into()];
        assert_eq!(bundle_dir(&def, data.path()), None);
    }

    #[test]
    fn keychain_names_are_read_from_env_and_headers() {
        let mut def = ServerDef::stdio("hello", "node", &[]);
        def.env
            .insert("A".into(), "${keychain:hello.a}-${keychain:hello.b}".into());
        def.env.insert("B".into(), "${env:HOME}".into());
        def.headers
            .insert("H".into(), "Bearer ${keychain:hello.a}".into());
        assert_eq!(keychain_names(&def), vec!["hello.a", "hello.b"]);
    }
}
