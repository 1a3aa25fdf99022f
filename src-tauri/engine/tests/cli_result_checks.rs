//! `switchboard checks list [--json]` and `checks set SERVER log|warn|block`,
//! run as a script would: the real binary in a temporary home. The mode is
//! written to `resultChecks` in the settings file through the settings
//! writer (recorded in the history, undoable).

use std::process::Output;

use serde_json::{json, Value};
use switchboard_tests::TempHome;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

fn run(h: &TempHome, args: &[&str]) -> Output {
    std::process::Command::new(BIN)
        .args(args)
        .env_clear()
        .envs(h.vars())
        .output()
        .unwrap()
}

fn ok(h: &TempHome, args: &[&str]) -> String {
    let o = run(h, args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn list(h: &TempHome) -> Value {
    serde_json::from_str(&ok(h, &["checks", "list", "--json"])).unwrap()
}

fn settings(h: &TempHome) -> Value {
    let p = h.path().join(".config/switchboard/settings.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn modes_are_listed_set_recorded_and_undone() {
    let h = TempHome::with_servers(json!({
        "fx": { "command": "fx-server" },
        "mail": { "command": "mail-server" },
    }));
    assert_eq!(
        list(&h),
        json!([
            { "server": "fx", "mode": "warn", "default": true, "configured": true },
            { "server": "mail", "mode": "warn", "default": true, "configured": true },
        ])
    );

    let out = ok(&h, &["checks", "set", "fx", "block"]);
    assert!(out.contains("block"), "{out}");
    assert_eq!(settings(&h)["resultChecks"], json!({ "fx": "block" }));
    assert_eq!(
        list(&h)[0],
        json!({ "server": "fx", "mode": "block", "default": false, "configured": true })
    );
    let text = ok(&h, &["checks", "list"]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("fx ") && l.trim_end().ends_with("block")),
        "{text}"
    );

    let history: Value = serde_json::from_str(&ok(&h, &["history", "--json"])).unwrap();
    let summary = history[0]["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("checks on what servers return"),
        "{history}"
    );

    // Back to the default: the entry goes.
    ok(&h, &["checks", "set", "fx", "warn"]);
    assert!(
        settings(&h).get("resultChecks").is_none(),
        "{}",
        settings(&h)
    );
    ok(&h, &["undo"]);
    assert_eq!(settings(&h)["resultChecks"], json!({ "fx": "block" }));
}

#[test]
fn an_unknown_server_or_mode_is_refused() {
    let h = TempHome::with_servers(json!({ "fx": { "command": "fx-server" } }));
    let o = run(&h, &["checks", "set", "nope", "block"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no server named \"nope\""), "{err}");
    let o = run(&h, &["checks", "set", "fx", "loud"]);
    assert!(!o.status.success());
    assert!(!h.path().join(".config/switchboard/settings.json").exists());
}
