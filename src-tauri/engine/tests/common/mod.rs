//! Shared set-up for engine tests: a copy of `tests/fixtures` with the
//! `__HOME__` placeholder filled in, and a `Host` pointing at it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use switchboard_engine::discovery::{discover, DiscoverOptions, Discovery};
use switchboard_engine::host::{Host, Os};
use switchboard_engine::settings::Settings;

pub struct FixtureHome {
    pub dir: tempfile::TempDir,
    pub host: Host,
    pub home: PathBuf,
    pub project: PathBuf,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// A fresh copy of the fixture machine. `GITHUB_TOKEN` is set; nothing else.
pub fn fixture_home() -> FixtureHome {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixtures_dir(), dir.path());
    let home = dir.path().join("home");
    let claude = home.join(".claude.json");
    let text = std::fs::read_to_string(&claude)
        .unwrap()
        .replace("__HOME__", home.to_str().unwrap());
    std::fs::write(&claude, text).unwrap();
    let mut vars = HashMap::new();
    vars.insert("HOME".to_string(), home.to_string_lossy().to_string());
    vars.insert("GITHUB_TOKEN".to_string(), "ghp_fixture".to_string());
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars,
        system_root: dir.path().join("system"),
    };
    let project = home.join("projects/webapp");
    FixtureHome {
        dir,
        host,
        home,
        project,
    }
}

impl FixtureHome {
    pub fn discover_trusted(&self) -> Discovery {
        discover(
            &self.host,
            &self.settings(),
            &DiscoverOptions {
                extra_projects: vec![self.project.clone()],
            },
        )
    }
    pub fn discover_untrusted(&self) -> Discovery {
        discover(&self.host, &self.settings(), &DiscoverOptions::default())
    }
    pub fn settings(&self) -> Settings {
        Settings::load(&self.host).0
    }
}

/// The changed region between two texts: (common prefix length, common suffix length).
pub fn common_affixes(a: &str, b: &str) -> (usize, usize) {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    (prefix, suffix)
}
