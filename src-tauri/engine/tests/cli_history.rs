//! `switchboard history` and `switchboard undo` as a script sees them: the
//! list newest first (text and JSON), undo of the newest or a given id, and
//! a refused undo over someone else's change (exit 1, file untouched).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join(".config/switchboard/servers.json");
        std::fs::create_dir_all(own.parent().unwrap()).unwrap();
        let servers =
            json!({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}});
        std::fs::write(&own, serde_json::to_string_pretty(&servers).unwrap() + "\n").unwrap();
        Home { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn servers(&self) -> PathBuf {
        self.path().join(".config/switchboard/servers.json")
    }
    fn run(&self, args: &[&str]) -> Output {
        std::process::Command::new(BIN)
            .args(args)
            .env_clear()
            .env("HOME", self.path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SWITCHBOARD_SYSTEM_ROOT", self.path().join("sys"))
            .output()
            .unwrap()
    }
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn history_lists_edits_newest_first_and_undo_restores_the_file() {
    let h = Home::new();
    let empty = h.run(&["history"]);
    assert!(empty.status.success(), "{}", err(&empty));
    assert!(
        out(&empty).starts_with("No changes recorded yet"),
        "{}",
        out(&empty)
    );

    let original = std::fs::read(h.servers()).unwrap();
    assert!(h.run(&["disable", "time"]).status.success());
    let disabled = std::fs::read(h.servers()).unwrap();
    assert!(h
        .run(&["add", "clock", "--", "uvx", "mcp-clock"])
        .status
        .success());

    let o = h.run(&["history", "--json"]);
    assert!(o.status.success(), "{}", err(&o));
    let list: Value = serde_json::from_str(&out(&o)).unwrap();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{list}");
    assert_eq!(rows[0]["id"], 2, "newest first: {list}");
    assert_eq!(rows[0]["summary"], "add \"clock\" to Switchboard");
    assert_eq!(rows[1]["summary"], "disable \"time\" in Switchboard");
    assert_eq!(rows[1]["server"], "time");
    assert_eq!(rows[1]["file"], h.servers().to_string_lossy().as_ref());
    assert_eq!(
        rows[1]["state"], "changed",
        "the add changed the file after the disable wrote it"
    );
    let time = rows[0]["time"].as_str().unwrap();
    assert!(
        time.len() == 20 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
        "ISO 8601 UTC: {time}"
    );

    let text = out(&h.run(&["history"]));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("ID") && lines[0].contains("CHANGE") && lines[0].contains("FILE"),
        "{text}"
    );
    assert!(
        lines[1].trim_start().starts_with("2 ")
            && lines[1].contains("add \"clock\" to Switchboard")
            && lines[1].contains("clock"),
        "{text}"
    );
    assert!(
        lines[2].contains("disable \"time\" in Switchboard [file changed since]"),
        "{text}"
    );

    // Undo without an id: the newest (the add).
    let u = h.run(&["undo"]);
    assert!(u.status.success(), "{}", err(&u));
    assert_eq!(
        out(&u).trim(),
        format!(
            "Undid #2: add \"clock\" to Switchboard; restored {} (recorded as #3)",
            h.servers().display()
        )
    );
    assert_eq!(
        std::fs::read(h.servers()).unwrap(),
        disabled,
        "byte for byte what the disable wrote"
    );

    // Now the disable can be undone too.
    assert!(h.run(&["undo", "1"]).status.success());
    assert_eq!(
        std::fs::read(h.servers()).unwrap(),
        original,
        "byte for byte the file before any edit"
    );
}

#[test]
fn undo_refuses_when_the_file_changed_since_and_names_it() {
    let h = Home::new();
    assert!(h.run(&["disable", "time"]).status.success());
    let theirs = std::fs::read_to_string(h.servers())
        .unwrap()
        .replace("mcp-server-time", "mcp-server-time@2");
    std::fs::write(h.servers(), &theirs).unwrap();

    let u = h.run(&["undo"]);
    assert_eq!(u.status.code(), Some(1));
    assert_eq!(err(&u).trim(), format!("switchboard: {} changed since Switchboard wrote it; undo would overwrite those changes", h.servers().display()));
    assert_eq!(
        std::fs::read_to_string(h.servers()).unwrap(),
        theirs,
        "nothing was overwritten"
    );

    let missing = h.run(&["undo", "42"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        err(&missing).trim(),
        "switchboard: There is no change #42 in Switchboard's history (see `switchboard history`)"
    );
}
