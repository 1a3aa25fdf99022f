//! The machine Switchboard runs on, made injectable: OS, home folder,
//! environment variables and the root of system-wide paths. Tests resolve
//! macOS and Windows paths on Linux by building a `Host` by hand.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Os {
    Linux,
    Macos,
    Windows,
}

/// Moves [`Host::switchboard_dir`] elsewhere.
pub const CONFIG_DIR_VAR: &str = "SWITCHBOARD_CONFIG_DIR";

#[derive(Debug, Clone)]
pub struct Host {
    pub os: Os,
    pub home: PathBuf,
    pub vars: HashMap<String, String>,
    /// Prefix for system paths such as `/etc/claude-code` (normally `/`).
    pub system_root: PathBuf,
}

impl Host {
    /// The real machine. `SWITCHBOARD_SYSTEM_ROOT` moves system paths (tests).
    pub fn current() -> Host {
        let vars: HashMap<String, String> = std::env::vars().collect();
        let os = if cfg!(target_os = "macos") {
            Os::Macos
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        };
        let home = vars
            .get("HOME")
            .or_else(|| vars.get("USERPROFILE"))
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"));
        let system_root = vars
            .get("SWITCHBOARD_SYSTEM_ROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(if os == Os::Windows { "C:\\" } else { "/" }));
        Host {
            os,
            home,
            vars,
            system_root,
        }
    }

    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(|s| s.as_str())
            .filter(|s| !s.is_empty())
    }

    /// Join `rel` (written with `/`) onto `base` using this OS's separator.
    pub fn join(&self, base: &Path, rel: &str) -> PathBuf {
        if self.os == Os::Windows {
            let b = base.to_string_lossy();
            let sep = if b.ends_with('\\') || b.ends_with('/') {
                ""
            } else {
                "\\"
            };
            PathBuf::from(format!("{b}{sep}{}", rel.replace('/', "\\")))
        } else {
            base.join(rel)
        }
    }

    pub fn home_join(&self, rel: &str) -> PathBuf {
        self.join(&self.home, rel)
    }

    pub fn system_join(&self, rel: &str) -> PathBuf {
        self.join(&self.system_root, rel)
    }

    /// XDG config dir on Linux (honouring `XDG_CONFIG_HOME`), Application
    /// Support on macOS, `%APPDATA%` on Windows.
    pub fn config_dir(&self) -> PathBuf {
        match self.os {
            Os::Linux => self
                .var("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| self.home_join(".config")),
            Os::Macos => self.home_join("Library/Application Support"),
            Os::Windows => self.appdata(),
        }
    }

    /// `~/.config` on every OS where clients use XDG paths even on macOS.
    pub fn xdg_config_dir(&self) -> PathBuf {
        match self.os {
            Os::Windows => self.appdata(),
            _ => self
                .var("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| self.home_join(".config")),
        }
    }

    pub fn appdata(&self) -> PathBuf {
        self.var("APPDATA")
            .map(PathBuf::from)
            .unwrap_or_else(|| self.home_join("AppData/Roaming"))
    }

    pub fn cache_dir(&self) -> PathBuf {
        match self.os {
            Os::Linux => self
                .var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| self.home_join(".cache")),
            Os::Macos => self.home_join("Library/Caches"),
            Os::Windows => self
                .var("LOCALAPPDATA")
                .map(PathBuf::from)
                .unwrap_or_else(|| self.home_join("AppData/Local")),
        }
    }

    /// Switchboard's own folder: settings and its server file live here.
    /// `SWITCHBOARD_CONFIG_DIR` moves it (the team gateway reads its
    /// `servers.json` and `settings.json` from `serve --config DIR`).
    pub fn switchboard_dir(&self) -> PathBuf {
        if let Some(dir) = self.var(CONFIG_DIR_VAR) {
            return PathBuf::from(dir);
        }
        let name = if self.os == Os::Linux {
            "switchboard"
        } else {
            "Switchboard"
        };
        self.join(&self.config_dir(), name)
    }

    /// Where Switchboard keeps data it made itself (its history of edits):
    /// `$XDG_DATA_HOME/switchboard` (`~/.local/share/switchboard`) on Linux,
    /// `~/Library/Application Support/Switchboard` on macOS,
    /// `%LOCALAPPDATA%\Switchboard` on Windows (this machine's, not roaming).
    pub fn switchboard_data_dir(&self) -> PathBuf {
        match self.os {
            Os::Linux => {
                let base = self
                    .var("XDG_DATA_HOME")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| self.home_join(".local/share"));
                self.join(&base, "switchboard")
            }
            Os::Macos => self.join(
                &self.home_join("Library/Application Support"),
                "Switchboard",
            ),
            Os::Windows => {
                let base = self
                    .var("LOCALAPPDATA")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| self.home_join("AppData/Local"));
                self.join(&base, "Switchboard")
            }
        }
    }
}
