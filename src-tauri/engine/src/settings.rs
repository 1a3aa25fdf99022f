//! Switchboard's own settings file (`<config dir>/switchboard/settings.json`):
//! source priority, project folders and their trust, parked entries.
//! Unknown keys are kept so newer versions' settings survive older ones.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::host::Host;
use crate::writer::atomic::WriteError;
use crate::writer::{write_atomic, Expected};
use crate::writer::history::Recording;
use crate::writer::summary;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectFolder {
    pub path: PathBuf,
    #[serde(default)]
    pub trusted: bool,
}

/// An entry removed from a client file that has no off switch (see
/// `EnableFlag::Park`), kept here verbatim until it is enabled again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParkedEntry {
    pub source: String,
    pub name: String,
    pub entry: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// Source ids, highest priority first. Empty means the default order.
    #[serde(default)]
    pub priority: Vec<String>,
    #[serde(default)]
    pub projects: Vec<ProjectFolder>,
    /// Global switch for project-level sources (SPEC C6).
    #[serde(default = "yes")]
    pub enable_project_config: bool,
    #[serde(default)]
    pub parked: Vec<ParkedEntry>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

fn yes() -> bool {
    true
}

impl Default for Settings {
    fn default() -> Self {
        Settings { priority: vec![], projects: vec![], enable_project_config: true, parked: vec![], other: Map::new() }
    }
}

pub fn settings_path(host: &Host) -> PathBuf {
    host.join(&host.switchboard_dir(), "settings.json")
}

impl Settings {
    /// Load the settings; a missing file is the default, a broken one is the
    /// default plus a warning naming the file and line.
    pub fn load(host: &Host) -> (Settings, Option<String>) {
        Self::load_from(&settings_path(host))
    }

    pub fn load_from(path: &Path) -> (Settings, Option<String>) {
        match std::fs::read_to_string(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Settings::default(), None),
            Err(e) => (Settings::default(), Some(format!("{}: cannot read settings: {e}; using defaults", path.display()))),
            Ok(text) if text.trim().is_empty() => (Settings::default(), None),
            Ok(text) => match serde_json::from_str(&text) {
                Ok(s) => (s, None),
                Err(e) => (
                    Settings::default(),
                    Some(format!("{}:{}: settings are not valid ({e}); using defaults", path.display(), e.line())),
                ),
            },
        }
    }

    pub fn save(&self, host: &Host) -> Result<(), WriteError> {
        let path = settings_path(host);
        let _recording = Recording::begin(host, summary::for_settings());
        let mut text = serde_json::to_string_pretty(self).expect("settings serialize");
        text.push('\n');
        write_atomic(&path, text.as_bytes(), Expected::Any)
    }

    /// Trusted project folders, honouring the global switch.
    pub fn trusted_projects(&self) -> Vec<PathBuf> {
        if !self.enable_project_config {
            return vec![];
        }
        self.projects.iter().filter(|p| p.trusted).map(|p| p.path.clone()).collect()
    }
}
