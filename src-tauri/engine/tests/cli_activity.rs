//! `switchboard activity` as a script sees it: the calls in the journal as
//! a table or JSON Lines (each with its findings), every filter, `--follow`
//! printing calls as they are recorded, and `activity export` as JSON Lines
//! and CSV.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_engine::host::{Host, Os};
use switchboard_engine::journal::{self, Entry, Journal, JournalSettings, Kind, Outcome, Via};
use switchboard_engine::redact::Redactor;
use switchboard_engine::tool_trust::scan::{Finding, Severity};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const SECRET: &str = "sk-live-secret-0123456789abcdef";

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn journal_path(&self) -> PathBuf {
        journal::path(&Host {
            os: Os::Linux,
            home: self.path().to_path_buf(),
            vars: Default::default(),
            system_root: self.path().join("sys"),
        })
    }
    fn journal(&self) -> Journal {
        let r = Arc::new(Redactor::default());
        r.set([SECRET.to_string()]);
        Journal::open(self.journal_path(), JournalSettings::default(), r)
    }
    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut c = std::process::Command::new(BIN);
        c.args(args)
            .env_clear()
            .env("HOME", self.path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SWITCHBOARD_SYSTEM_ROOT", self.path().join("sys"));
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn lines(o: &Output) -> Vec<Value> {
    assert!(o.status.success(), "{}", err(o));
    out(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn names(rows: &[Value]) -> Vec<&str> {
    rows.iter().map(|r| r["name"].as_str().unwrap()).collect()
}

/// Five calls: two clients, three servers, an error, a finding, one two days old.
fn record(h: &Home) {
    let j = h.journal();
    let now = switchboard_engine::events::now_ms();
    let call = |server: &str, tool: &str, client: &str| {
        Entry::new(Via::Stdio, server, Kind::Tool, tool)
            .with_client(client, Some("1.0".into()))
            .with_arguments(&json!({"q": format!("about {tool}"), "key": SECRET}))
            .with_result(&json!({"content": [{"type": "text", "text": "done"}]}))
            .with_duration(Duration::from_millis(12))
    };
    let mut old = call("github", "list_issues", "cursor");
    old.time = now - 2 * 86_400_000;
    j.record(old);
    j.record(call("github", "create_issue", "claude-code"));
    j.record(call("files", "read", "claude-code").with_error(
        Outcome::ToolError,
        None,
        "no such file",
    ));
    j.record(call("web", "fetch", "cursor").with_findings(vec![Finding {
        rule: "instructions".into(),
        severity: Severity::High,
        message: "The result tells the model to ignore previous instructions.".into(),
        at: "content[0].text".into(),
        visible: None,
    }]));
    j.record(call("github", "search", "codex"));
    j.flush();
}

#[test]
fn activity_json_lists_every_call_with_findings_and_masked_secrets() {
    let h = Home::new();
    let empty = h.run(&["activity"]);
    assert!(empty.status.success(), "{}", err(&empty));
    assert!(
        out(&empty).starts_with("No calls recorded yet"),
        "{}",
        out(&empty)
    );
    record(&h);
    let rows = lines(&h.run(&["activity", "--json"]));
    assert_eq!(
        names(&rows),
        ["list_issues", "create_issue", "read", "fetch", "search"],
        "oldest first"
    );
    for r in &rows {
        assert!(r["findings"].is_array(), "{r}");
        assert!(!r.to_string().contains(SECRET), "{r}");
        assert_eq!(r["via"], "stdio");
    }
    assert_eq!(rows[3]["findings"][0]["rule"], "instructions");
    assert_eq!(rows[2]["outcome"], "toolError");
    assert_eq!(rows[2]["error"], "no such file");
    assert_eq!(rows[1]["client"], "claude-code");
    assert_eq!(rows[1]["clientVersion"], "1.0");
    assert_eq!(rows[1]["durationUs"], 12_000);
}

#[test]
fn activity_filters_narrow_the_list() {
    let h = Home::new();
    record(&h);
    let q = |args: &[&str]| {
        let mut all = vec!["activity", "--json"];
        all.extend_from_slice(args);
        lines(&h.run(&all))
    };
    assert_eq!(
        names(&q(&["--server", "github"])),
        ["list_issues", "create_issue", "search"]
    );
    assert_eq!(names(&q(&["--tool", "read"])), ["read"]);
    assert_eq!(names(&q(&["--client", "cursor"])), ["list_issues", "fetch"]);
    assert_eq!(names(&q(&["--errors"])), ["read"]);
    assert_eq!(names(&q(&["--findings"])), ["fetch"]);
    assert_eq!(
        names(&q(&["--since", "1h"])),
        ["create_issue", "read", "fetch", "search"]
    );
    assert_eq!(names(&q(&["--search", "about sea"])), ["search"]);
    assert_eq!(names(&q(&["--limit", "2"])), ["fetch", "search"]);
    assert_eq!(
        names(&q(&[
            "--server", "github", "--since", "1d", "--client", "codex"
        ])),
        ["search"]
    );
    let none = h.run(&["activity", "--server", "nobody"]);
    assert_eq!(out(&none).trim(), "No calls match.");

    let bad = h.run(&["activity", "--since", "yesterday"]);
    assert!(!bad.status.success());
    assert!(err(&bad).contains("e.g. 30m, 2h or 7d"), "{}", err(&bad));
}

#[test]
fn activity_prints_a_table() {
    let h = Home::new();
    record(&h);
    let o = h.run(&["activity", "--server", "web"]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 2, "{text}");
    for col in [
        "TIME", "WHO", "SERVER", "TOOL", "DURATION", "OUTCOME", "FINDINGS",
    ] {
        assert!(rows[0].contains(col), "{text}");
    }
    let cells: Vec<&str> = rows[1].split_whitespace().collect();
    // date, time, client, server, tool, "12", "ms", outcome, findings
    assert_eq!(
        &cells[2..],
        ["cursor", "web", "fetch", "12", "ms", "ok", "1"],
        "{text}"
    );
}

#[test]
fn activity_follow_prints_calls_as_they_come() {
    let h = Home::new();
    record(&h);
    let mut child = h
        .command(&["activity", "--json", "--follow", "--server", "files"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut rd = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    rd.read_line(&mut line).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&line).unwrap()["name"],
        "read"
    );
    // Recorded while it follows: another server's call, then a files call.
    let j = h.journal();
    j.record(Entry::new(Via::Http, "web", Kind::Tool, "skip-me"));
    j.record(Entry::new(Via::Http, "files", Kind::Tool, "write"));
    j.flush();
    let t = Instant::now();
    line.clear();
    rd.read_line(&mut line).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["name"], "write");
    assert_eq!(v["via"], "http");
    assert!(t.elapsed() < Duration::from_secs(5));
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn activity_export_writes_json_lines_and_csv() {
    let h = Home::new();
    record(&h);
    let o = h.run(&["activity", "export", "--server", "github"]);
    let rows = lines(&o);
    assert_eq!(
        names(&rows),
        ["list_issues", "create_issue", "search"],
        "all that match, oldest first"
    );
    let file = h.path().join("calls.csv");
    let o = h.run(&[
        "activity",
        "export",
        "--format",
        "csv",
        "--output",
        file.to_str().unwrap(),
        "--errors",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("Wrote 1 calls to"), "{}", err(&o));
    let mut rd = csv::Reader::from_path(&file).unwrap();
    let header = rd.headers().unwrap().clone();
    let records: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 1);
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    assert_eq!(&records[0][col("name")], "read");
    assert_eq!(&records[0][col("outcome")], "toolError");
    assert!(!std::fs::read_to_string(&file).unwrap().contains(SECRET));
}
