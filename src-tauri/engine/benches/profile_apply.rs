//! Switching a profile in clients' own files (issue 28):
//! `cargo bench -p switchboard-engine --bench profile_apply`.
//!
//! A fake home with five clients' user files (Cursor and VS Code JSON(C),
//! Claude Code's `~/.claude.json`, Windsurf, Codex TOML), 40 servers each:
//! 200 servers. Two profiles split them: "even" and "odd" (100 servers
//! each, spread over all five files). Every client follows the switch, so
//! a switch rewrites all five files: each turns its own 20 servers of the
//! other profile on and 20 off, and takes out and adds the 80 servers of
//! the other files that the profile holds (each file ends up with the
//! profile's 100 servers on). Timed: `profile_apply::switch` from its
//! start until every file is written and the switch is recorded in the
//! history (discovery, which the app keeps live, runs before it and is not
//! timed). Goal: median ≤ 100 ms. Also timed: applying one profile to one
//! client (Cursor), and Everything (every file back byte for byte, which
//! the run checks).
//!
//! No criterion: a plain binary that prints the bench table's rows.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use switchboard_engine::discovery::{discover, DiscoverOptions};
use switchboard_engine::host::{Host, Os};
use switchboard_engine::profile::{ProfileChange, Via};
use switchboard_engine::profile_apply;
use switchboard_engine::profiles;
use switchboard_engine::settings::Settings;
use switchboard_engine::sources::Client;
use switchboard_tests::bench::{ms_stats, record, Goal};

const PER_FILE: usize = 40;
const RUNS: usize = 21;

/// (client, file under home, format tag).
const FILES: [(Client, &str, &str); 5] = [
    (Client::Cursor, ".cursor/mcp.json", "cursor"),
    (Client::ClaudeCode, ".claude.json", "claude"),
    (Client::Vscode, ".config/Code/User/mcp.json", "vscode"),
    (
        Client::Windsurf,
        ".codeium/windsurf/mcp_config.json",
        "windsurf",
    ),
    (Client::Codex, ".codex/config.toml", "codex"),
];

fn name(file: usize, i: usize) -> String {
    format!("{}-{i:02}", FILES[file].2)
}

fn entry(tag: &str, file: usize, i: usize) -> Value {
    let mut m = Map::new();
    if matches!(tag, "claude" | "vscode") {
        m.insert("type".into(), json!("stdio"));
    }
    m.insert("command".into(), json!("npx"));
    m.insert(
        "args".into(),
        json!([
            "-y",
            format!("@example/mcp-server-{file}-{i}"),
            "--log-level",
            "info"
        ]),
    );
    m.insert(
        "env".into(),
        json!({"API_TOKEN": format!("tok_{file}_{i:08x}"), "LOG_LEVEL": "debug"}),
    );
    Value::Object(m)
}

fn file_text(file: usize) -> String {
    let tag = FILES[file].2;
    if tag == "codex" {
        let mut t = String::from("# Codex\nmodel = \"gpt-5-codex\"\n");
        for i in 0..PER_FILE {
            t.push_str(&format!(
                "\n[mcp_servers.{}]\ncommand = \"npx\"\nargs = [\"-y\", \"@example/mcp-server-{file}-{i}\", \"--log-level\", \"info\"]\nenv = {{ API_TOKEN = \"tok_{file}_{i:08x}\", LOG_LEVEL = \"debug\" }}\n",
                name(file, i)
            ));
        }
        return t;
    }
    let servers: Map<String, Value> = (0..PER_FILE)
        .map(|i| (name(file, i), entry(tag, file, i)))
        .collect();
    let key = if tag == "vscode" {
        "servers"
    } else {
        "mcpServers"
    };
    let mut doc = Map::new();
    if tag == "claude" {
        doc.insert("numStartups".into(), json!(12));
        doc.insert(
            "projects".into(),
            json!({"/home/me/app": {"allowedTools": []}}),
        );
    }
    doc.insert(key.into(), Value::Object(servers));
    let mut t = serde_json::to_string_pretty(&Value::Object(doc)).unwrap();
    t.push('\n');
    t
}

struct Home {
    _dir: tempfile::TempDir,
    host: Host,
    files: Vec<(PathBuf, String)>,
}

fn build_home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars: HashMap::from([("HOME".to_string(), home.to_string_lossy().to_string())]),
        system_root: dir.path().join("system"),
    };
    let mut files = vec![];
    for (i, (_, rel, _)) in FILES.iter().enumerate() {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let t = file_text(i);
        std::fs::write(&p, &t).unwrap();
        files.push((p, t));
    }
    for (profile, parity) in [("even", 0), ("odd", 1)] {
        let servers: Vec<String> = (0..FILES.len())
            .flat_map(|f| {
                (0..PER_FILE)
                    .filter(move |i| i % 2 == parity)
                    .map(move |i| name(f, i))
            })
            .collect();
        let c = ProfileChange::Create {
            name: profile.into(),
            servers,
        };
        profiles::change(&host, |p| c.apply(p)).unwrap();
    }
    Home {
        _dir: dir,
        host,
        files,
    }
}

fn same_files(h: &Home) -> bool {
    h.files
        .iter()
        .all(|(p, t)| std::fs::read_to_string(p).unwrap() == *t)
}

fn on_count(h: &Home) -> usize {
    let s = Settings::load(&h.host).0;
    let d = discover(&h.host, &s, &DiscoverOptions::default());
    d.servers
        .iter()
        .flat_map(|s| s.definitions.iter())
        .filter(|d| d.def.enabled && !d.parked && d.source != "switchboard")
        .count()
}

fn main() {
    let h = build_home();
    let host = &h.host;
    // Every client follows the switch (applied once, not timed).
    for (client, _, _) in FILES {
        let mut s = Settings::load(host).0;
        let d = discover(host, &s, &DiscoverOptions::default());
        profile_apply::apply(host, &mut s, &d, client, "even", Via::File, true, None).unwrap();
    }
    assert_eq!(
        on_count(&h),
        5 * 100,
        "each file has the profile's 100 servers on"
    );

    let mut switch_times: Vec<Duration> = vec![];
    let mut files_written = 0;
    for run in 0..RUNS {
        let to = if run % 2 == 0 { "odd" } else { "even" };
        let mut s = Settings::load(host).0;
        let d = discover(host, &s, &DiscoverOptions::default());
        let t = Instant::now();
        let reports = profile_apply::switch(host, &mut s, &d, to).unwrap();
        switch_times.push(t.elapsed());
        files_written = reports.iter().filter(|r| r.changed()).count();
        assert!(
            reports.iter().all(|r| r.history_id.is_some()),
            "recorded in the history"
        );
    }
    assert_eq!(files_written, 5, "every file was rewritten");
    assert_eq!(on_count(&h), 5 * 100);
    let (median, p90) = ms_stats(&switch_times);
    record(
        "Engine",
        "Profile switch in 5 clients' files (200 servers) → written and recorded",
        median,
        Some(p90),
        "ms",
        Goal::Max(100.0),
        &format!("{RUNS} runs; each file: 40 on/off, 160 copies out and in"),
    );

    // One client, one apply (Cursor: park and unpark).
    let mut one: Vec<Duration> = vec![];
    for run in 0..RUNS {
        let to = if run % 2 == 0 { "odd" } else { "even" };
        let mut s = Settings::load(host).0;
        let d = discover(host, &s, &DiscoverOptions::default());
        let t = Instant::now();
        profile_apply::apply(host, &mut s, &d, Client::Cursor, to, Via::File, true, None).unwrap();
        one.push(t.elapsed());
    }
    let (median, p90) = ms_stats(&one);
    record(
        "Engine",
        "Profile applied to one client's file (Cursor, 40 own + 80 copied)",
        median,
        Some(p90),
        "ms",
        Goal::None,
        &format!("{RUNS} runs"),
    );

    // Everything: every file back, byte for byte.
    let mut s = Settings::load(host).0;
    let d = discover(host, &s, &DiscoverOptions::default());
    let t = Instant::now();
    profile_apply::switch(host, &mut s, &d, "Everything").unwrap();
    let back = t.elapsed();
    assert!(
        same_files(&h),
        "Everything gives every file back byte for byte"
    );
    record(
        "Engine",
        "Switch to Everything in 5 clients' files (every file back byte for byte)",
        back.as_secs_f64() * 1000.0,
        None,
        "ms",
        Goal::None,
        "1 run",
    );
}
