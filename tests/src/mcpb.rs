//! The real `@anthropic-ai/mcpb` CLI from tests/npm, for tests that pack and
//! sign `.mcpb` bundles.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The mcpb CLI from tests/npm, or `None` (skip) locally; panics under CI.
pub fn mcpb_cli(test: &str) -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("npm/node_modules/.bin/mcpb");
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if bin.exists() && node {
        return Some(bin);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{test}: {} or node is missing; .ci/test runs npm ci in tests/npm",
            bin.display()
        );
    }
    eprintln!("SKIPPED {test}: run `npm ci` in tests/npm (and have node on PATH)");
    None
}

/// Runs `mcpb ARGS` in `cwd`; panics with its output when it fails.
pub fn mcpb(cli: &Path, cwd: &Path, args: &[&str]) {
    let out = Command::new(cli)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run mcpb");
    assert!(
        out.status.success(),
        "mcpb {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
