//! The `switchboard` binary end to end: a fake home, real fixture servers,
//! real files; exit codes and output as a script would see them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new(servers: Value) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join(".config/switchboard/servers.json");
        std::fs::create_dir_all(own.parent().unwrap()).unwrap();
        std::fs::write(
            &own,
            serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap(),
        )
        .unwrap();
        Home { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env_clear()
            .env("HOME", self.path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SWITCHBOARD_SYSTEM_ROOT", self.path().join("sys"));
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
}

fn fixture() -> String {
    switchboard_tests::fixture_server_path()
        .to_string_lossy()
        .to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn discover_prints_the_documented_json() {
    let h = Home::new(json!({ "fx": { "command": fixture(), "args": ["--name", "fx"] } }));
    let o = h.run(&["discover", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["sources"][0]["id"], "switchboard");
    assert_eq!(v["sources"][0]["priority"], 0);
    assert_eq!(v["servers"][0]["name"], "fx");
    assert_eq!(v["servers"][0]["source"], "switchboard");
    assert_eq!(v["errors"], json!([]));
}

#[test]
fn add_disable_enable_remove_edit_the_file() {
    let h = Home::new(json!({}));
    let file = h.path().join(".config/switchboard/servers.json");
    assert!(h
        .run(&["add", "time", "--", "uvx", "mcp-server-time"])
        .status
        .success());
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("mcp-server-time"));
    let again = h.run(&["add", "time", "--", "uvx", "x"]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains(&format!(
        "Server \"time\" already exists in {}",
        file.display()
    )));
    let both = h.run(&["add", "both", "--url", "https://x.example/mcp", "--", "npx"]);
    assert!(
        String::from_utf8_lossy(&both.stderr).contains("Use either a URL or a command, not both.")
    );
    assert!(h.run(&["disable", "time"]).status.success());
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("\"enabled\": false"));
    assert!(h.run(&["enable", "time"]).status.success());
    assert!(h.run(&["remove", "time"]).status.success());
    assert!(!std::fs::read_to_string(&file).unwrap().contains("time"));
}

#[test]
fn tools_and_call_reach_a_real_server() {
    let h = Home::new(
        json!({ "fx": { "command": fixture(), "args": ["--name", "fx", "--resources"] } }),
    );
    let o = h.run(&["tools", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let echo = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp_fx_echo")
        .expect("sanitized name");
    assert_eq!(
        (echo["server"].as_str(), echo["tool"].as_str()),
        (Some("fx"), Some("echo"))
    );
    assert!(echo["inputSchema"]["properties"].is_object());

    let o = h.run(&["call", "mcp_fx_echo", "--args", r#"{"text":"hello"}"#]);
    assert!(o.status.success());
    assert_eq!(stdout(&o).trim(), "hello");
    // A tool-reported error is still a successful call.
    let o = h.run(&["call", "mcp_fx_fail", "--json"]);
    assert!(o.status.success());
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["isError"], true);
    assert_eq!(v["text"], "Error: deliberate failure");
    // A call that cannot be made is not.
    let o = h.run(&["call", "mcp_fx_nope"]);
    assert!(!o.status.success());

    let o = h.run(&["resources", "fx"]);
    assert!(
        stdout(&o).contains("fixture://greeting"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = h.run(&["prompt", "fx", "greet", "--args", r#"{"name":"Ada"}"#]);
    assert!(stdout(&o).contains("Ada"));
    // Elicitation: declined headless, answered with defaults when asked to.
    let o = h.run(&["call", "mcp_fx_elicit"]);
    assert!(stdout(&o).contains("decline"), "{}", stdout(&o));
    let o = h.run(&["--accept-defaults", "call", "mcp_fx_elicit"]);
    assert!(stdout(&o).contains("Grace"), "{}", stdout(&o));
}

fn children_of(pid: u32) -> Vec<u32> {
    let mut out = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let f: Vec<&str> = stat
            .rsplit_once(") ")
            .map(|x| x.1)
            .unwrap_or("")
            .split_whitespace()
            .collect();
        if f.get(1).and_then(|x| x.parse::<u32>().ok()) == Some(pid) {
            out.push(p);
        }
    }
    out
}

#[test]
fn sigterm_to_the_cli_leaves_no_server_behind() {
    let h = Home::new(json!({ "fx": { "command": fixture(), "args": ["--name", "fx"] } }));
    let mut child = h
        .cmd(&["logs", "fx", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let cli = child.id();
    let until = Instant::now() + Duration::from_secs(20);
    let servers = loop {
        let c = children_of(cli);
        if !c.is_empty() {
            std::thread::sleep(Duration::from_millis(300));
            break children_of(cli);
        }
        assert!(Instant::now() < until, "the CLI never started its server");
        std::thread::sleep(Duration::from_millis(20));
    };
    unsafe {
        libc::kill(cli as i32, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "interrupted runs exit non-zero");
    for p in servers {
        let gone = Instant::now() + Duration::from_secs(5);
        while PathBuf::from(format!("/proc/{p}")).exists() {
            assert!(Instant::now() < gone, "server process {p} outlived the CLI");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
