//! A server handed to the manager: its definition and where it came from.

use std::path::PathBuf;

use crate::config::vars::Expansion;
use crate::config::{ServerDef, Transport};

use super::tool_cache::config_hash;

/// A server handed to the manager: its definition and where it came from.
#[derive(Debug, Clone)]
pub struct Wanted {
    pub def: ServerDef,
    pub source: Option<String>,
    /// Project folder of a project-level source (`${workspaceFolder}`).
    pub project: Option<PathBuf>,
    /// What the source's client expands; launching applies exactly this.
    pub expansion: Expansion,
    /// The folder of the file that defines it: a relative `cwd` is relative
    /// to it, as the client reading that file would take it.
    pub config_dir: Option<PathBuf>,
}

impl Wanted {
    /// A server given directly counts as one of Switchboard's own file.
    pub fn new(def: ServerDef) -> Self {
        Wanted {
            def,
            source: None,
            project: None,
            expansion: Expansion::SWITCHBOARD,
            config_dir: None,
        }
    }

    /// The folder a stdio server runs in, from its `cwd` with variables
    /// already expanded: an absolute one as is, a relative one against the
    /// defining file's folder, none at all the project folder (a project's
    /// `node ./tools/server.js` means that project's `tools`), else the
    /// process's own folder (`None`).
    pub fn working_folder(&self, cwd: Option<&str>) -> Option<PathBuf> {
        match cwd.filter(|c| !c.is_empty()) {
            Some(c) if std::path::Path::new(c).is_absolute() => Some(PathBuf::from(c)),
            Some(c) => Some(match &self.config_dir {
                Some(dir) => dir.join(c),
                None => PathBuf::from(c),
            }),
            None => self.project.clone(),
        }
    }

    /// Equal keys start the same way: the definition, and what its
    /// variables and relative paths are taken against.
    pub(super) fn launch_key(&self) -> (String, Option<PathBuf>, Option<PathBuf>) {
        let relative = self.def.transport == Transport::Stdio
            && !self
                .def
                .cwd
                .as_deref()
                .is_some_and(|c| std::path::Path::new(c).is_absolute());
        (
            config_hash(&self.def),
            self.project.clone(),
            if relative {
                self.config_dir.clone()
            } else {
                None
            },
        )
    }

    /// The servers discovery says should run: each name's valid winner that
    /// Switchboard can start (disabled ones included, to show as disabled),
    /// unless it is held for the user's approval.
    pub fn from_discovery(d: &crate::discovery::Discovery) -> Vec<Wanted> {
        d.servers
            .iter()
            .filter(|s| {
                s.winner.is_valid() && s.winner.not_runnable.is_none() && s.winner.held.is_none()
            })
            .map(|s| Wanted {
                def: s.winner.def.clone(),
                source: Some(s.winner.source.clone()),
                project: d
                    .source(&s.winner.source)
                    .and_then(|src| src.project.clone()),
                expansion: s.winner.expansion,
                config_dir: s.winner.path.parent().map(PathBuf::from),
            })
            .collect()
    }
}
