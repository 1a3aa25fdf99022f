//! No process is orphaned: `kill -9` of `switchboard watch` with ten stdio servers up
//! leaves no server process behind: not a leader that ignores stdin EOF and
//! SIGTERM, not a grandchild in a server's process group (which no
//! parent-death signal reaches).
#![cfg(target_os = "linux")]

use std::collections::HashSet;
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

/// `(state, ppid, start time)` of a process, from `/proc/PID/stat`.
fn stat(pid: u32) -> Option<(char, u32, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = s.rsplit_once(") ")?.1.split_whitespace().collect();
    Some((
        f.first()?.chars().next()?,
        f.get(1)?.parse().ok()?,
        f.get(19)?.parse().ok()?,
    ))
}

/// Still running code: present and neither a zombie nor dead. (Orphans are
/// reaped by whatever adopts them; a zombie left to an init that does not
/// reap runs nothing.)
fn running(pid: u32, start: u64) -> bool {
    stat(pid).is_some_and(|(state, _, s)| s == start && !matches!(state, 'Z' | 'X'))
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Every process below `root`, with its start time (so a reused pid is not mistaken for it).
fn descendants(root: u32) -> Vec<(u32, u64)> {
    let all: Vec<(u32, u32, u64)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| stat(p).map(|(_, ppid, start)| (p, ppid, start)))
        .collect();
    let mut found = vec![];
    let mut parents = HashSet::from([root]);
    loop {
        let next: Vec<(u32, u64)> = all
            .iter()
            .filter(|(p, pp, _)| parents.contains(pp) && !found.iter().any(|(f, _)| f == p))
            .map(|(p, _, s)| (*p, *s))
            .collect();
        if next.is_empty() {
            return found;
        }
        parents.extend(next.iter().map(|(p, _)| *p));
        found.extend(next);
    }
}

/// Kills what a failed run left behind, so one failure does not leak sleeps.
struct Leftovers(Vec<(u32, u64)>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for (p, s) in &self.0 {
            if running(*p, *s) {
                unsafe {
                    libc::kill(*p as i32, libc::SIGKILL);
                }
            }
        }
    }
}

fn servers(fixture: &Path) -> Value {
    let fx = fixture.to_string_lossy();
    let mut servers = serde_json::Map::new();
    let mut add = |name: &str, v: Value| servers.insert(name.to_string(), v);
    for i in 0..5 {
        add(
            &format!("plain{i}"),
            json!({ "command": fx, "args": ["--name", format!("plain{i}")] }),
        );
    }
    // Outlives end of input on stdin and ignores SIGTERM (the leader itself;
    // stderr on /dev/null, or its "staying alive" line would die of EPIPE
    // once Switchboard, the reader, is gone).
    let stubborn = "exec \"$0\" \"$@\" 2>/dev/null";
    add(
        "stubborn",
        json!({ "command": "sh", "args": ["-c", stubborn, fx, "--name", "stubborn", "--ignore-sigterm", "--ignore-stdin-eof"] }),
    );
    // The same, with a `sleep` grandchild in its group.
    add(
        "stubborn-forks",
        json!({ "command": "sh", "args": ["-c", stubborn, fx, "--name", "stubborn-forks", "--ignore-sigterm", "--ignore-stdin-eof", "--spawn-grandchild"] }),
    );
    add(
        "forks",
        json!({ "command": fx, "args": ["--name", "forks", "--spawn-grandchild"] }),
    );
    // A shell that starts a sleep beside the server, then becomes the server.
    add(
        "sh-forks",
        json!({ "command": "sh", "args": ["-c", "sleep 1000 >/dev/null 2>&1 & exec \"$0\" --name sh-forks", fx] }),
    );
    // The server itself a grandchild (npx style), its shell waiting on a
    // sleep. (A background job's stdin is /dev/null unless passed by hand.)
    add(
        "wrapped",
        json!({ "command": "sh", "args": ["-c", "exec 3<&0; \"$0\" --name wrapped <&3 3<&- & exec 3<&-; sleep 1000; wait", fx] }),
    );
    Value::Object(servers)
}

#[test]
fn kill_dash_nine_of_watch_leaves_no_server_process() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let own = home.path().join(".config/switchboard/servers.json");
    std::fs::create_dir_all(own.parent().unwrap())?;
    let config = servers(&switchboard_tests::fixture_server_path());
    let names: HashSet<String> = config.as_object().unwrap().keys().cloned().collect();
    assert_eq!(names.len(), 10);
    std::fs::write(
        &own,
        serde_json::to_string_pretty(&json!({ "mcpServers": config }))?,
    )?;

    let mut cli = Command::new(BIN)
        .args(["watch", "--json"])
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SWITCHBOARD_SYSTEM_ROOT", home.path().join("sys"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = cli.id();
    let mut guard = Leftovers(vec![]);

    // Every server connected, as `watch --json` reports it.
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = cli.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut connected = HashSet::new();
    let until = Instant::now() + Duration::from_secs(60);
    while connected != names {
        let left = until.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .map_err(|_| anyhow::anyhow!("only {connected:?} connected within 60 s"))?;
        let v: Value = serde_json::from_str(&line)?;
        match v["type"].as_str() {
            Some("started") => connected.extend(
                v["report"]["connected"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|n| n.as_str().map(String::from)),
            ),
            Some("status") if v["status"]["state"] == "connected" => {
                connected.insert(v["server"].as_str().unwrap().to_string());
            }
            _ => {}
        }
    }

    // The four sleeps beside servers are up too (started with them, maybe a moment later).
    let procs = loop {
        let d = descendants(pid);
        guard.0 = d.clone();
        if d.iter().filter(|(p, _)| comm(*p) == "sleep").count() >= 4 {
            break d;
        }
        assert!(
            Instant::now() < until,
            "the sleeps beside the servers never started: {:?}",
            d.iter().map(|(p, _)| comm(*p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        procs.len() >= 16,
        "ten leaders, four sleeps, a server under a shell and the watchdog: {procs:?}"
    );

    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
    let killed_at = Instant::now();
    cli.wait()?;
    let deadline = killed_at + Duration::from_secs(5);
    loop {
        let left: Vec<String> = procs
            .iter()
            .filter(|(p, s)| running(*p, *s))
            .map(|(p, _)| format!("{p} ({})", comm(*p)))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "5 s after kill -9 of the CLI these still run: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!(
        "all {} server processes gone {} ms after kill -9",
        procs.len(),
        killed_at.elapsed().as_millis()
    );
    Ok(())
}
