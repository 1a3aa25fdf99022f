//! The CLI and project folders, as a script sees them: `add` then `status`
//! finds the new server running; `project add` trusts a folder with what
//! its servers run now, a change made later is shown as held by `discover`
//! and not started by `status`, and `project approve DIR SERVER` runs it.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SWITCHBOARD_SYSTEM_ROOT", home.join("sys"))
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn fixture() -> String {
    switchboard_tests::fixture_server_path()
        .to_string_lossy()
        .to_string()
}

fn status(home: &Path) -> Value {
    serde_json::from_str(&ok(&run(home, &["status", "--json"]))).unwrap()
}

fn state_of<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
    v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .and_then(|s| s["status"]["state"].as_str())
}

#[test]
fn add_then_status_finds_the_server_running() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&run(
        dir.path(),
        &["add", "fx", "--", &fixture(), "--name", "fx"],
    ));
    assert!(out.starts_with("Added \"fx\" to "), "{out}");
    assert_eq!(state_of(&status(dir.path()), "fx"), Some("connected"));
}

#[test]
fn a_trusted_folder_s_changed_server_is_held_until_approved() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let project = home.join("webapp");
    let file = project.join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let servers = |extra: &[&str]| {
        let mut args = vec!["--name", "p"];
        args.extend(extra);
        json!({ "mcpServers": { "p": { "command": fixture(), "args": args } } }).to_string()
    };
    std::fs::write(&file, servers(&[])).unwrap();
    let p = std::fs::canonicalize(&project).unwrap();
    let out = ok(&run(home, &["project", "add", project.to_str().unwrap()]));
    assert_eq!(out.trim(), format!("Added project {}", p.display()));
    assert_eq!(state_of(&status(home), "p"), Some("connected"));

    // The folder's file changes after it was trusted (a pull, a teammate).
    std::fs::write(&file, servers(&["--tool", "extra"])).unwrap();
    let table = ok(&run(home, &["discover"]));
    assert!(table.contains("held: changed since you trusted this folder; approve the change to run it (switchboard project approve DIR p)"), "{table}");
    assert!(
        table.contains("args: --name p → --name p --tool extra"),
        "{table}"
    );
    assert_eq!(
        state_of(&status(home), "p"),
        None,
        "a held server is not started"
    );

    let out = ok(&run(
        home,
        &["project", "approve", project.to_str().unwrap(), "p"],
    ));
    assert_eq!(out.trim(), format!("Approved \"p\" in {}", p.display()));
    assert_eq!(state_of(&status(home), "p"), Some("connected"));
    let out = ok(&run(
        home,
        &["project", "approve", project.to_str().unwrap()],
    ));
    assert_eq!(out.trim(), format!("Nothing is held in {}", p.display()));

    let o = run(
        home,
        &["project", "approve", project.to_str().unwrap(), "nope"],
    );
    assert!(!o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim(),
        format!(
            "switchboard: Server \"nope\" was not found in {}",
            p.display()
        )
    );
}
