//! Trusting project folders and approving their servers: what the app's
//! engine and the CLI both do (see `trust` for what is held and why).

use std::path::{Path, PathBuf};

use crate::discovery::{discover, DiscoverOptions, Discovery};
use crate::host::Host;
use crate::settings::{ProjectFolder, Settings};
use crate::trust::{self, ClaudeApprovals, FolderPins, Held};
use crate::writer::edit::{EditError, ServerEdit, Writer};

/// What the pinned sources of `folder` define now (every name, or only
/// `names`), read as if the folder were trusted.
pub fn pins_now(
    host: &Host,
    settings: &Settings,
    folder: &Path,
    names: Option<&[String]>,
) -> FolderPins {
    let d = discover(
        host,
        settings,
        &DiscoverOptions {
            extra_projects: vec![folder.to_path_buf()],
        },
    );
    pins_in(&d, folder, names)
}

fn pins_in(d: &Discovery, folder: &Path, names: Option<&[String]>) -> FolderPins {
    let mut out = FolderPins::new();
    for s in &d.servers {
        if names.is_some_and(|n| !n.iter().any(|n| n == s.name())) {
            continue;
        }
        for def in s.definitions.iter().filter(|d| !d.parked) {
            let Some(spec) = d.source(&def.source).and_then(|src| src.spec.as_ref()) else {
                continue;
            };
            if spec.project.as_deref() == Some(folder) && trust::is_pinned_source(spec) {
                out.insert(trust::pin_key(spec, &def.def.name), trust::pin_of(&def.def));
            }
        }
    }
    out
}

/// Add `folder` (trusted or not) to the settings. Trusting it pins what its
/// servers run now; a folder that is not trusted keeps no pins.
pub fn set_trust(host: &Host, folder: &Path, trusted: bool) -> Result<Settings, EditError> {
    let current = Settings::load(host).0;
    let pins = if trusted {
        Some(pins_now(host, &current, folder, None))
    } else {
        None
    };
    Ok(Settings::update(host, |s| {
        s.projects.retain(|p| p.path != folder);
        s.projects.push(ProjectFolder {
            path: folder.to_path_buf(),
            trusted,
        });
        match &pins {
            Some(p) => drop(s.trusted_servers.insert(folder.to_path_buf(), p.clone())),
            None => drop(s.trusted_servers.remove(folder)),
        }
    })?)
}

/// Forget `folder`: not read any more, its pins gone.
pub fn remove(host: &Host, folder: &Path) -> Result<Settings, EditError> {
    Ok(Settings::update(host, |s| {
        s.projects.retain(|p| p.path != folder);
        s.trusted_servers.remove(folder);
    })?)
}

/// Folders trusted before content was pinned get their servers pinned as
/// they are now (from `d`, which reads them); `None` when there was none.
pub fn pin_unpinned(
    host: &Host,
    settings: &Settings,
    d: &Discovery,
) -> Result<Option<Settings>, EditError> {
    let todo: Vec<PathBuf> = settings
        .trusted_projects()
        .into_iter()
        .filter(|p| !settings.trusted_servers.contains_key(p))
        .collect();
    if todo.is_empty() {
        return Ok(None);
    }
    let pins: Vec<(PathBuf, FolderPins)> = todo
        .iter()
        .map(|f| (f.clone(), pins_in(d, f, None)))
        .collect();
    Ok(Some(Settings::update(host, |s| {
        for (f, p) in &pins {
            s.trusted_servers
                .entry(f.clone())
                .or_insert_with(|| p.clone());
        }
    })?))
}

/// What `approve` did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Approved {
    /// Servers that were held and may run now.
    pub servers: Vec<String>,
    /// Of those, the ones approved for Claude Code too (its approval list
    /// in `~/.claude.json`).
    pub for_claude_code: Vec<String>,
}

/// Approve the held servers of `folder` (all, or only `name`), as `d` (a
/// discovery that reads the folder) shows them: a server Claude Code has not
/// approved is approved there (its `enabledMcpjsonServers`), and what each
/// runs now is pinned. A name the folder does not define is an error.
pub fn approve(
    host: &Host,
    settings: &mut Settings,
    d: &Discovery,
    folder: &Path,
    name: Option<&str>,
) -> Result<Approved, EditError> {
    let in_folder = |source: &str| {
        d.source(source)
            .is_some_and(|s| s.project.as_deref() == Some(folder))
    };
    let defs: Vec<&crate::discovery::Definition> = d
        .servers
        .iter()
        .filter(|s| name.is_none_or(|n| n == s.name()))
        .flat_map(|s| s.definitions.iter())
        .filter(|def| in_folder(&def.source))
        .collect();
    if !d.project_folders().iter().any(|p| p == folder) {
        return Err(EditError::Unsupported { path: folder.to_path_buf(), message: "this folder is not trusted, so none of its servers is read; trust it first (switchboard project add DIR, or Trust in Sources)".into() });
    }
    if let (Some(n), true) = (name, defs.is_empty()) {
        return Err(EditError::NotFound {
            name: n.into(),
            path: folder.to_path_buf(),
        });
    }
    let claude = ClaudeApprovals::read(host, folder);
    let mut out = Approved::default();
    for def in defs.iter().filter(|d| d.held.is_some()) {
        let spec = d
            .source(&def.source)
            .and_then(|s| s.spec.clone())
            .expect("discovered sources carry their spec");
        if matches!(def.held, Some(Held::NotApproved { .. })) {
            // Switchboard records approvals where Claude Code keeps its own
            // list (`~/.claude.json`); a rejection in a settings file is the
            // user's to lift there.
            if let Some(file) = claude
                .rejected(&def.def.name)
                .filter(|f| *f != host.home_join(".claude.json"))
            {
                return Err(EditError::Unsupported {
                    path: file.to_path_buf(),
                    message: format!("server \"{}\" is rejected for this project there (disabledMcpjsonServers); remove it from that list to approve it", def.def.name),
                });
            }
            let seen = d.source(&def.source).and_then(|s| s.hash);
            Writer::new(host, settings).apply(
                &spec,
                ServerEdit::SetEnabled {
                    name: def.def.name.clone(),
                    enabled: true,
                },
                seen,
            )?;
            out.for_claude_code.push(def.def.name.clone());
        }
        out.servers.push(def.def.name.clone());
    }
    out.servers.sort();
    out.servers.dedup();
    // Pinned: the held ones; every server when the folder had no pins yet
    // (else the others would count as added since).
    let pinned_before = settings.trusted_servers.contains_key(folder);
    let names = out.servers.clone();
    let pins = pins_in(d, folder, if pinned_before { Some(&names) } else { None });
    if !pins.is_empty() {
        *settings = Settings::update(host, |s| {
            s.trusted_servers
                .entry(folder.to_path_buf())
                .or_default()
                .extend(pins.clone())
        })?;
    }
    Ok(out)
}

/// After an edit Switchboard made to a pinned source: what the user wrote
/// through Switchboard is what they trust. Servers of `source` that changed
/// between `before` and `after` and were not held before are pinned anew
/// (held ones stay held until approved). `None`: nothing to pin.
pub fn pin_own_edit(
    host: &Host,
    before: &Discovery,
    after: &Discovery,
    source: &str,
) -> Result<Option<Settings>, EditError> {
    let Some(src) = after.source(source) else {
        return Ok(None);
    };
    let (Some(spec), Some(folder)) = (src.spec.as_ref(), src.project.as_ref()) else {
        return Ok(None);
    };
    if !trust::is_pinned_source(spec)
        || !Settings::load(host).0.trusted_servers.contains_key(folder)
    {
        return Ok(None);
    }
    let of = |d: &Discovery, name: &str| {
        d.server(name).and_then(|s| {
            s.definitions
                .iter()
                .find(|def| def.source == source && !def.parked)
                .cloned()
        })
    };
    let mut pins = FolderPins::new();
    for s in &after.servers {
        let Some(now) = of(after, s.name()) else {
            continue;
        };
        let was = of(before, s.name());
        let changed = was
            .as_ref()
            .is_none_or(|w| trust::pin_of(&w.def) != trust::pin_of(&now.def));
        let was_held = was.as_ref().is_some_and(|w| w.held.is_some());
        if changed && !was_held {
            pins.insert(trust::pin_key(spec, &now.def.name), trust::pin_of(&now.def));
        }
    }
    if pins.is_empty() {
        return Ok(None);
    }
    Ok(Some(Settings::update(host, |s| {
        s.trusted_servers
            .entry(folder.clone())
            .or_default()
            .extend(pins.clone())
    })?))
}
