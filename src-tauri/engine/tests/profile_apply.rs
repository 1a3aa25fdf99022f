//! Applying a profile to a client's own file (issue 28): afterwards exactly
//! the profile's servers are on there; applying Everything, or `undo`,
//! gives the file back byte for byte; what the user changed by hand is left
//! alone; a file changed since discovery is refused. Through the gateway,
//! the client's `switchboard` entry serves the profile. The last tests run
//! the clients' own CLIs (tests/npm: Claude Code, Codex, Gemini CLI) on
//! what `switchboard profile apply` wrote: they skip without them, and fail
//! under `CI`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};
use switchboard_engine::connect::{self, ConnectOptions, HttpTarget};
use switchboard_engine::discovery::{discover, DiscoverOptions, Discovery};
use switchboard_engine::host::{Host, Os};
use switchboard_engine::profile::{ProfileChange, Via};
use switchboard_engine::profile_apply::{self, ApplyError, ApplyReport};
use switchboard_engine::profiles;
use switchboard_engine::settings::Settings;
use switchboard_engine::sources::read::parse;
use switchboard_engine::sources::Client;
use switchboard_engine::writer::edit::{ServerEdit, Writer};
use switchboard_engine::writer::history::History;
use switchboard_engine::writer::Format;

const SWITCHBOARD: &str = "/opt/Switchboard/bin/switchboard";
const TOKEN: &str = "profile-test-token-0123456789abcdef";
const GATEWAY: &str = "http://127.0.0.1:27182/mcp";

struct Home {
    _dir: tempfile::TempDir,
    host: Host,
}

fn home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let vars: HashMap<String, String> =
        [("HOME".to_string(), home.to_string_lossy().to_string())].into();
    let host = Host {
        os: Os::Linux,
        home,
        vars,
        system_root: dir.path().join("system"),
    };
    Home { _dir: dir, host }
}

impl Home {
    fn path(&self, rel: &str) -> PathBuf {
        self.host.home.join(rel)
    }
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    fn settings(&self) -> Settings {
        Settings::load(&self.host).0
    }
    fn discover(&self) -> Discovery {
        discover(&self.host, &self.settings(), &DiscoverOptions::default())
    }
    fn profile(&self, name: &str, servers: &[&str]) {
        let c = ProfileChange::Create {
            name: name.into(),
            servers: servers.iter().map(|s| s.to_string()).collect(),
        };
        profiles::change(&self.host, |p| c.apply(p)).unwrap();
    }
    fn apply(&self, client: Client, profile: &str) -> Result<ApplyReport, ApplyError> {
        self.apply_seen(client, profile, &self.discover())
    }
    fn apply_seen(
        &self,
        client: Client,
        profile: &str,
        d: &Discovery,
    ) -> Result<ApplyReport, ApplyError> {
        let mut s = self.settings();
        profile_apply::apply(
            &self.host,
            &mut s,
            d,
            client,
            profile,
            Via::File,
            false,
            None,
        )
    }
    /// The servers on in `source` (enabled, not parked), as discovery reads them.
    fn on_in(&self, source: &str) -> BTreeSet<String> {
        self.discover()
            .servers
            .iter()
            .flat_map(|s| s.definitions.iter())
            .filter(|d| d.source == source && d.def.enabled && !d.parked)
            .map(|d| d.def.name.clone())
            .collect()
    }
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Apply `profile` (whose servers `on` end up on in `source`), check that,
/// then apply Everything and check the file is byte for byte as it was.
fn round_trip(client: Client, rel: &str, source: &str, original: &str, profile: &[&str]) {
    let h = home();
    let path = h.write(rel, original);
    let others = h.on_in(source);
    h.profile("work", profile);
    let r = h.apply(client, "work").unwrap();
    assert_eq!(r.path, path, "{r:?}");
    let wanted: BTreeSet<String> = profile.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        h.on_in(source),
        wanted,
        "exactly the profile's servers are on in {}:\n{}",
        path.display(),
        read(&path)
    );
    let off: Vec<String> = others.difference(&wanted).cloned().collect();
    assert_eq!(
        r.disabled.iter().cloned().collect::<BTreeSet<_>>(),
        off.iter().cloned().collect(),
        "the report names what was switched off"
    );
    assert!(r.history_id.is_some(), "recorded in the history");

    let back = h.apply(client, "Everything").unwrap();
    assert_eq!(
        read(&path),
        original,
        "Everything gives {} back byte for byte (report: {back:?})",
        path.display()
    );
    assert_eq!(h.on_in(source), others, "every server is on again");
    assert!(
        h.settings().parked.is_empty() && h.settings().profiles.clients.is_empty(),
        "nothing parked or remembered once Everything is back: {:?}",
        h.settings().profiles.clients
    );
}

const CURSOR: &str = r#"{
    "mcpServers": {
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example" }
        },
        "notes": { "url": "https://notes.example.com/mcp", "headers": { "X-Team": "a" } },
        "local": {"command": "node", "args": ["/srv/mcp/index.js"], "cursorOnlyKey": 1},
        "time": {"command": "uvx", "args": ["mcp-server-time"]}
    },
    "cursor.experimental": { "toolLimit": 40 }
}
"#;

#[test]
fn cursor_keeps_exactly_the_profiles_servers_and_everything_restores_it_byte_for_byte() {
    // Cursor has no off switch: the others are parked, from the middle of the list.
    round_trip(
        Client::Cursor,
        ".cursor/mcp.json",
        "cursor-user",
        CURSOR,
        &["notes", "time"],
    );
}

const CLAUDE: &str = r#"{
  "numStartups": 42,
  "installMethod": "npm-global",
  "tipsHistory": {"new-user-warmup": 7, "memory-command": 3},
  "projects": {
    "/home/me/app": {
      "allowedTools": [],
      "mcpServers": {"db": {"type": "stdio", "command": "pg-mcp", "args": []}},
      "hasTrustDialogAccepted": true
    }
  },
  "mcpServers": {
    "time": {
      "type": "stdio",
      "command": "uvx",
      "args": [
        "mcp-server-time"
      ],
      "env": {}
    },
    "fetch": {
      "type": "stdio",
      "command": "uvx",
      "args": [
        "mcp-server-fetch"
      ],
      "env": {}
    },
    "docs": {
      "type": "http",
      "url": "https://docs.example.com/mcp"
    }
  },
  "userID": "0f3c9e"
}"#;

#[test]
fn claude_code_keeps_exactly_the_profiles_servers_and_everything_restores_it_byte_for_byte() {
    round_trip(
        Client::ClaudeCode,
        ".claude.json",
        "claude-code-user",
        CLAUDE,
        &["docs"],
    );
}

const CODEX: &str = r#"# Codex settings
model = "gpt-5-codex"
approval_policy = "on-request"  # ask first

[mcp_servers.time]
command = "uvx"
args = ["mcp-server-time", "--local-timezone", "Europe/Berlin"]
startup_timeout_sec = 20

# Docs search, off for now
[mcp_servers.docs]
url = "https://docs.example.com/mcp"
enabled = false

[mcp_servers.fetch] # fetcher
command = "uvx"
args = ["mcp-server-fetch"]
enabled = true

[profiles.fast]
model = "gpt-5-mini"
"#;

#[test]
fn codex_toml_keeps_exactly_the_profiles_servers_and_everything_restores_it_byte_for_byte() {
    // `time` gets `enabled = false` (and loses it again), `fetch` goes from
    // true to false and back, `docs` is switched on and off again.
    round_trip(
        Client::Codex,
        ".codex/config.toml",
        "codex-user",
        CODEX,
        &["docs"],
    );
}

const VSCODE: &str = r#"{
	// Servers for Copilot agent mode
	"servers": {
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/",
			"headers": { "Authorization": "Bearer ${input:gh-token}" }
		},
		// files
		"fs": { "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${userHome}"] },
		"time": { "type": "stdio", "command": "uvx", "args": ["mcp-server-time"] },
	},
	"inputs": [
		{ "type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true }
	]
}
"#;

#[test]
fn vscode_jsonc_keeps_exactly_the_profiles_servers_and_everything_restores_it_byte_for_byte() {
    round_trip(
        Client::Vscode,
        ".config/Code/User/mcp.json",
        "vscode-user",
        VSCODE,
        &["time"],
    );
}

#[test]
fn a_profile_server_the_file_lacks_is_added_in_the_clients_dialect_and_taken_out_again() {
    let h = home();
    let cursor = h.write(".cursor/mcp.json", CURSOR);
    let codex = h.write(".codex/config.toml", CODEX);
    h.profile("work", &["github", "fetch"]);
    let r = h.apply(Client::Codex, "work").unwrap();
    assert_eq!(r.added, vec!["github".to_string()], "{r:?}");
    let doc = parse(Format::Toml, &read(&codex)).unwrap().value;
    assert_eq!(
        doc["mcp_servers"]["github"],
        json!({
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example" }
        }),
        "Cursor's winning definition, in Codex's TOML:\n{}",
        read(&codex)
    );
    assert_eq!(h.on_in("codex-user"), set(&["github", "fetch"]));
    assert_eq!(
        read(&cursor),
        CURSOR,
        "the source it was copied from is not touched"
    );

    let back = h.apply(Client::Codex, "Everything").unwrap();
    assert_eq!(back.removed, vec!["github".to_string()], "{back:?}");
    assert_eq!(read(&codex), CODEX, "byte for byte");
}

#[test]
fn undo_of_an_apply_gives_the_file_and_settings_back_byte_for_byte() {
    let h = home();
    let path = h.write(".cursor/mcp.json", CURSOR);
    h.profile("work", &["time"]);
    let settings_before = read(&switchboard_engine::settings::settings_path(&h.host));
    let r = h.apply(Client::Cursor, "work").unwrap();
    assert_ne!(read(&path), CURSOR);
    let history = History::for_host(&h.host);
    let newest = &history.list()[0];
    assert_eq!(Some(newest.id), r.history_id, "one history entry per apply");
    assert_eq!(
        newest.summary, "apply profile \"work\" to Cursor (file)",
        "{newest:?}"
    );
    history.undo(r.history_id).unwrap();
    assert_eq!(
        read(&path),
        CURSOR,
        "undo gives the file back byte for byte"
    );
    assert_eq!(
        read(&switchboard_engine::settings::settings_path(&h.host)),
        settings_before,
        "and Switchboard's settings (no parked entry, no record)"
    );
}

#[test]
fn applying_another_profile_takes_back_only_what_the_first_changed() {
    let h = home();
    let path = h.write(".codex/config.toml", CODEX);
    h.write(".cursor/mcp.json", CURSOR);
    h.profile("a", &["time", "notes"]);
    h.profile("b", &["fetch", "docs"]);
    h.apply(Client::Codex, "a").unwrap();
    assert_eq!(h.on_in("codex-user"), set(&["time", "notes"]));
    let r = h.apply(Client::Codex, "b").unwrap();
    assert_eq!(h.on_in("codex-user"), set(&["fetch", "docs"]), "{r:?}");
    assert_eq!(
        r.removed,
        vec!["notes".to_string()],
        "the copy a added goes"
    );
    h.apply(Client::Codex, "Everything").unwrap();
    assert_eq!(read(&path), CODEX, "byte for byte after a, b, Everything");
}

#[test]
fn a_server_the_user_turned_back_on_by_hand_is_left_alone() {
    let h = home();
    let path = h.write(".codex/config.toml", CODEX);
    h.profile("work", &["docs"]);
    h.apply(Client::Codex, "work").unwrap();
    // The user turns `time` back on in Codex's file, their own way.
    let text = read(&path).replace(
        "startup_timeout_sec = 20\nenabled = false\n",
        "startup_timeout_sec = 20\nenabled = true # mine\n",
    );
    assert!(text.contains("# mine"), "{text}");
    std::fs::write(&path, &text).unwrap();

    let again = h.apply(Client::Codex, "work").unwrap();
    assert!(
        !again.disabled.contains(&"time".to_string()),
        "a server the user turned on is not switched off again: {again:?}"
    );
    let record = &h.settings().profiles.clients["codex"].changes;
    assert!(
        !record.disabled.contains(&"time".to_string()),
        "and dropped from what profiles changed: {record:?}"
    );
    h.apply(Client::Codex, "Everything").unwrap();
    let after = read(&path);
    assert!(
        after.contains("enabled = true # mine"),
        "the user's line stays as they wrote it:\n{after}"
    );
    assert_eq!(
        after,
        CODEX.replace(
            "startup_timeout_sec = 20\n",
            "startup_timeout_sec = 20\nenabled = true # mine\n"
        ),
        "and everything else is back byte for byte"
    );
}

#[test]
fn a_parked_server_the_user_brought_back_is_not_parked_again_by_everything() {
    let h = home();
    let path = h.write(".cursor/mcp.json", CURSOR);
    h.profile("work", &["time"]);
    h.apply(Client::Cursor, "work").unwrap();
    // Back on through Switchboard (the writer unparks it at the end).
    let mut s = h.settings();
    let spec = h
        .discover()
        .source("cursor-user")
        .unwrap()
        .spec
        .clone()
        .unwrap();
    Writer::new(&h.host, &mut s)
        .apply(
            &spec,
            ServerEdit::SetEnabled {
                name: "notes".into(),
                enabled: true,
            },
            None,
        )
        .unwrap();
    let r = h.apply(Client::Cursor, "Everything").unwrap();
    assert!(
        !r.enabled.contains(&"notes".to_string()) && !r.disabled.contains(&"notes".to_string()),
        "{r:?}"
    );
    assert_eq!(
        h.on_in("cursor-user"),
        set(&["github", "notes", "local", "time"])
    );
    let doc = parse(Format::Json, &read(&path)).unwrap().value;
    assert_eq!(
        doc["mcpServers"].as_object().unwrap().len(),
        4,
        "no second copy"
    );
}

#[test]
fn a_file_changed_since_discovery_is_refused_and_not_written() {
    let h = home();
    let path = h.write(".cursor/mcp.json", CURSOR);
    h.profile("work", &["time"]);
    let seen = h.discover();
    let changed = CURSOR.replace("\"toolLimit\": 40", "\"toolLimit\": 41");
    std::fs::write(&path, &changed).unwrap();
    let e = h.apply_seen(Client::Cursor, "work", &seen).unwrap_err();
    assert_eq!(e.code(), "conflict", "{e}");
    assert_eq!(read(&path), changed, "the other program's bytes stay");
    assert!(
        h.settings().parked.is_empty(),
        "nothing parked: {:?}",
        h.settings().parked
    );
    assert!(h.settings().profiles.clients.is_empty());
}

#[test]
fn claude_code_rewriting_its_other_keys_does_not_stop_everything_being_exact() {
    let h = home();
    let path = h.write(".claude.json", CLAUDE);
    h.profile("work", &["fetch"]);
    h.apply(Client::ClaudeCode, "work").unwrap();
    // Claude Code counts its starts above `mcpServers` (the offsets before it move).
    let text = read(&path).replace("\"numStartups\": 42", "\"numStartups\": 1042");
    std::fs::write(&path, text).unwrap();
    h.apply(Client::ClaudeCode, "Everything").unwrap();
    assert_eq!(
        read(&path),
        CLAUDE.replace("\"numStartups\": 42", "\"numStartups\": 1042")
    );
}

#[test]
fn the_gateway_entry_is_never_touched_and_unknown_profiles_are_refused() {
    let h = home();
    let with_entry = CURSOR.replace(
        "\"mcpServers\": {",
        &format!("\"mcpServers\": {{\n        \"switchboard\": {{\"command\": \"{SWITCHBOARD}\", \"args\": [\"serve\"]}},"),
    );
    let path = h.write(".cursor/mcp.json", &with_entry);
    h.profile("work", &["time"]);
    let r = h.apply(Client::Cursor, "work").unwrap();
    let doc = parse(Format::Json, &read(&path)).unwrap().value;
    assert_eq!(
        doc["mcpServers"]["switchboard"],
        json!({"command": SWITCHBOARD, "args": ["serve"]}),
        "{r:?}"
    );
    assert!(
        r.notes.iter().any(|n| n.contains("\"switchboard\" entry")),
        "the report says the gateway serves it too: {r:?}"
    );
    h.apply(Client::Cursor, "Everything").unwrap();
    assert_eq!(read(&path), with_entry);
    let e = h.apply(Client::Cursor, "nope").unwrap_err();
    assert_eq!(e.code(), "not-found", "{e}");
}

#[test]
fn a_client_that_reads_its_file_at_start_gets_the_restart_notice() {
    let h = home();
    h.write(".codex/config.toml", CODEX);
    h.write(".cursor/mcp.json", CURSOR);
    h.profile("work", &["time"]);
    let codex = h.apply(Client::Codex, "work").unwrap();
    assert_eq!(
        codex.restart_hint.as_deref(),
        Client::Codex.restart_hint(),
        "{codex:?}"
    );
    let cursor = h.apply(Client::Cursor, "work").unwrap();
    assert_eq!(cursor.restart_hint, None, "Cursor watches its file");
}

// ---- through the gateway ---------------------------------------------------

fn stdio() -> ConnectOptions {
    ConnectOptions {
        via: connect::Via::Stdio {
            binary: SWITCHBOARD.into(),
        },
        disable_duplicates: false,
    }
}

#[test]
fn via_gateway_writes_an_entry_serving_the_profile() {
    let h = home();
    let path = h.write(".cursor/mcp.json", CURSOR);
    h.profile("deep work", &["time"]);
    let mut s = h.settings();
    let r = profile_apply::apply(
        &h.host,
        &mut s,
        &h.discover(),
        Client::Cursor,
        "deep work",
        Via::Gateway,
        false,
        Some(&stdio()),
    )
    .unwrap();
    let doc = parse(Format::Json, &read(&path)).unwrap().value;
    assert_eq!(
        doc["mcpServers"]["switchboard"],
        json!({"command": SWITCHBOARD, "args": ["serve", "--profile", "deep work"]}),
        "{r:?}"
    );
    assert_eq!(h.settings().profiles.clients["cursor"].via, Via::Gateway);

    let http = ConnectOptions {
        via: connect::Via::Http(HttpTarget {
            url: GATEWAY.into(),
            token: TOKEN.into(),
        }),
        disable_duplicates: false,
    };
    let mut s = h.settings();
    profile_apply::apply(
        &h.host,
        &mut s,
        &h.discover(),
        Client::Cursor,
        "deep work",
        Via::Gateway,
        false,
        Some(&http),
    )
    .unwrap();
    let doc = parse(Format::Json, &read(&path)).unwrap().value;
    assert_eq!(
        doc["mcpServers"]["switchboard"]["url"],
        "http://127.0.0.1:27182/mcp/p/deep%20work"
    );

    // Back to the file: the entry goes, and the file is as it was.
    h.apply(Client::Cursor, "Everything").unwrap();
    assert_eq!(read(&path), CURSOR);
}

#[test]
fn via_gateway_takes_back_what_a_file_profile_did_first() {
    let h = home();
    let path = h.write(".cursor/mcp.json", CURSOR);
    h.profile("work", &["time"]);
    h.apply(Client::Cursor, "work").unwrap();
    let mut s = h.settings();
    let r = profile_apply::apply(
        &h.host,
        &mut s,
        &h.discover(),
        Client::Cursor,
        "work",
        Via::Gateway,
        false,
        Some(&stdio()),
    )
    .unwrap();
    assert_eq!(
        r.enabled.iter().cloned().collect::<BTreeSet<_>>(),
        set(&["github", "notes", "local"]),
        "{r:?}"
    );
    let doc = parse(Format::Json, &read(&path)).unwrap().value;
    assert_eq!(
        doc["mcpServers"].as_object().unwrap().len(),
        5,
        "every server back, plus the entry:\n{}",
        read(&path)
    );
    let history = History::for_host(&h.host);
    let entries = history.list();
    history.undo(r.history_id).unwrap();
    assert_ne!(read(&path), CURSOR, "undo takes back only the last apply");
    history.undo(Some(entries[1].id)).unwrap();
    assert_eq!(read(&path), CURSOR);
}

#[test]
fn switching_moves_the_clients_that_follow_in_their_files() {
    let h = home();
    let cursor = h.write(".cursor/mcp.json", CURSOR);
    let codex = h.write(".codex/config.toml", CODEX);
    h.profile("a", &["time"]);
    h.profile("b", &["github", "fetch"]);
    let mut s = h.settings();
    profile_apply::apply(
        &h.host,
        &mut s,
        &h.discover(),
        Client::Cursor,
        "a",
        Via::File,
        true,
        None,
    )
    .unwrap();
    // Codex does not follow.
    h.apply(Client::Codex, "a").unwrap();
    let codex_on_a = read(&codex);

    let mut s = h.settings();
    let reports = profile_apply::switch(&h.host, &mut s, &h.discover(), "b").unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(h.settings().profiles.active_name(), "b");
    assert_eq!(h.on_in("cursor-user"), set(&["github", "fetch"]));
    assert_eq!(
        read(&codex),
        codex_on_a,
        "a client that does not follow stays"
    );
    let history = History::for_host(&h.host);
    assert_eq!(history.list()[0].summary, "switch to profile \"b\"");

    let mut s = h.settings();
    profile_apply::switch(&h.host, &mut s, &h.discover(), "Everything").unwrap();
    assert_eq!(
        read(&cursor),
        CURSOR,
        "Everything: Cursor's file byte for byte"
    );
    assert!(
        h.settings().profiles.clients["cursor"].follow,
        "still follows"
    );
}

#[test]
fn a_project_folders_files_hold_exactly_the_profiles_servers() {
    let h = home();
    let project = h.path("app");
    let mcp = h.write(
        "app/.cursor/mcp.json",
        "{\n  \"mcpServers\": {\n    \"db\": {\"command\": \"pg-mcp\"},\n    \"lint\": {\"command\": \"lint-mcp\"}\n  }\n}\n",
    );
    let original = read(&mcp);
    h.write(".cursor/mcp.json", CURSOR);
    switchboard_engine::projects::set_trust(&h.host, &project, true).unwrap();
    h.profile("db only", &["db", "time"]);
    let mut s = h.settings();
    let d = h.discover();
    let reports = profile_apply::apply_project(&h.host, &mut s, &d, &project, "db only").unwrap();
    let source = format!("cursor-project@{}", project.display());
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(h.on_in(&source), set(&["db", "time"]), "{}", read(&mcp));
    let p = &h.settings().profiles.projects[&project];
    assert_eq!(p.profile, "db only");
    assert_eq!(p.changes[&source].disabled, vec!["lint".to_string()]);

    let mut s = h.settings();
    profile_apply::apply_project(&h.host, &mut s, &h.discover(), &project, "Everything").unwrap();
    assert_eq!(read(&mcp), original, "byte for byte");
    assert!(h.settings().profiles.projects.is_empty());

    let mut s = h.settings();
    let e = profile_apply::apply_project(&h.host, &mut s, &d, &h.path("elsewhere"), "db only")
        .unwrap_err();
    assert_eq!(e.code(), "not-found", "{e}");
}

// ---- the clients' own CLIs read what `switchboard profile apply` wrote ----

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

/// A client CLI from tests/npm, or `None` (skip) locally; panics under CI.
fn client_cli(name: &str, test: &str) -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/npm/node_modules/.bin")
        .join(name);
    let node = std::process::Command::new("node")
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

/// Run with only HOME (and `extra`) set, at most two minutes.
fn run(home: &Path, program: &Path, args: &[&str], extra: &[(&str, &str)]) -> Output {
    let mut c = std::process::Command::new("timeout");
    c.args(["-k", "5", "120"])
        .arg(program)
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SWITCHBOARD_SYSTEM_ROOT", home.join("system"))
        .current_dir(home);
    for (k, v) in extra {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{} {args:?} failed ({}):\n{}\n{}",
        program.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn all_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Servers a client's `mcp list` shows (a line per server: `NAME: …`),
/// leaving out those it marks disabled.
fn listed(text: &str, names: &[&str]) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.to_ascii_lowercase().contains("disabled"))
        .filter_map(|l| {
            let l = l.trim_start_matches(|c: char| !c.is_alphanumeric());
            names
                .iter()
                .find(|n| l.starts_with(&format!("{n}:")) || l.starts_with(&format!("{n} ")))
                .map(|n| n.to_string())
        })
        .collect()
}

/// Make profile "work" with `profile` and apply it to `client` with the
/// CLI; undo it with the CLI.
fn cli_apply(home: &Path, client: &str, profile: &[&str], env: &[(&str, &str)]) {
    let mut args = vec!["profile", "create", "work"];
    args.extend(profile);
    run(home, Path::new(BIN), &args, env);
    let out = run(
        home,
        Path::new(BIN),
        &[
            "profile", "apply", "work", "--client", client, "--via", "file",
        ],
        env,
    );
    assert!(
        all_text(&out).contains("profile \"work\" in its file"),
        "{}",
        all_text(&out)
    );
}

#[test]
fn claude_code_lists_exactly_the_profile_after_apply_and_undo_restores_its_file() {
    let test = "claude_code_lists_exactly_the_profile_after_apply_and_undo_restores_its_file";
    let Some(claude) = client_cli("claude", test) else {
        return;
    };
    let h = tempfile::tempdir().unwrap();
    let file = h.path().join(".claude.json");
    std::fs::write(&file, CLAUDE).unwrap();
    let names = ["time", "fetch", "docs"];
    let before = listed(
        &all_text(&run(h.path(), &claude, &["mcp", "list"], &[])),
        &names,
    );
    assert_eq!(before, set(&names), "Claude Code reads the fixture");
    // Claude Code rewrites its file as it starts (its ids, its layout).
    let original = read(&file);

    cli_apply(h.path(), "claude-code", &["docs", "time"], &[]);
    let got = all_text(&run(h.path(), &claude, &["mcp", "list"], &[]));
    assert_eq!(listed(&got, &names), set(&["docs", "time"]), "{got}");

    let applied = read(&file);
    run(h.path(), Path::new(BIN), &["undo"], &[]);
    assert_eq!(
        read(&file),
        original,
        "undo: byte for byte (Claude Code left the applied file as {applied})"
    );
}

#[test]
fn codex_lists_exactly_the_profile_after_apply_and_undo_restores_its_file() {
    let test = "codex_lists_exactly_the_profile_after_apply_and_undo_restores_its_file";
    let Some(codex) = client_cli("codex", test) else {
        return;
    };
    let h = tempfile::tempdir().unwrap();
    let codex_home = h.path().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let file = codex_home.join("config.toml");
    std::fs::write(&file, CODEX).unwrap();
    let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    let on = |h: &Path| -> BTreeSet<String> {
        let out = run(h, &codex, &["mcp", "list", "--json"], &env);
        let list: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        list.iter()
            .filter(|s| s["enabled"] == true)
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        on(h.path()),
        set(&["time", "fetch"]),
        "Codex reads the fixture"
    );

    cli_apply(h.path(), "codex", &["docs", "time"], &env);
    assert_eq!(on(h.path()), set(&["docs", "time"]), "{}", read(&file));

    run(h.path(), Path::new(BIN), &["undo"], &env);
    assert_eq!(read(&file), CODEX, "undo: byte for byte");
}

#[test]
fn gemini_lists_exactly_the_profile_after_apply_and_undo_restores_its_files() {
    let test = "gemini_lists_exactly_the_profile_after_apply_and_undo_restores_its_files";
    let Some(gemini) = client_cli("gemini", test) else {
        return;
    };
    let h = tempfile::tempdir().unwrap();
    let original = "{\n  // mine\n  \"theme\": \"Default\",\n  \"mcpServers\": {\n    \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]},\n    \"fetch\": {\"command\": \"uvx\", \"args\": [\"mcp-server-fetch\"]},\n    \"docs\": {\"httpUrl\": \"https://docs.example.com/mcp\"}\n  }\n}\n";
    let file = h.path().join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, original).unwrap();
    // Gemini CLI turns every server off in a folder it does not trust.
    std::fs::write(
        h.path().join(".gemini/trustedFolders.json"),
        json!({ h.path().to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let names = ["time", "fetch", "docs"];
    let before = listed(
        &all_text(&run(h.path(), &gemini, &["mcp", "list"], &[])),
        &names,
    );
    assert_eq!(before, set(&names), "Gemini CLI reads the fixture");

    cli_apply(h.path(), "gemini", &["docs"], &[]);
    let got = all_text(&run(h.path(), &gemini, &["mcp", "list"], &[]));
    assert_eq!(listed(&got, &names), set(&["docs"]), "{got}");

    run(h.path(), Path::new(BIN), &["undo"], &[]);
    assert_eq!(read(&file), original, "undo: byte for byte");
    let got = all_text(&run(h.path(), &gemini, &["mcp", "list"], &[]));
    assert_eq!(listed(&got, &names), set(&names), "{got}");
}

#[test]
fn cli_apply_via_gateway_and_connect_profile_write_the_profiles_entry() {
    let h = tempfile::tempdir().unwrap();
    let cursor = h.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(&cursor, CURSOR).unwrap();
    run(
        h.path(),
        Path::new(BIN),
        &["profile", "create", "work", "time"],
        &[],
    );
    run(
        h.path(),
        Path::new(BIN),
        &[
            "profile", "apply", "work", "--client", "cursor", "--via", "gateway",
        ],
        &[],
    );
    let doc = parse(Format::Json, &read(&cursor)).unwrap().value;
    assert_eq!(
        doc["mcpServers"]["switchboard"],
        json!({"command": BIN, "args": ["serve", "--profile", "work"]})
    );
    let out = run(
        h.path(),
        Path::new(BIN),
        &[
            "profile",
            "apply",
            "Everything",
            "--client",
            "cursor",
            "--json",
        ],
        &[],
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["profile"], "Everything", "{r}");
    assert_eq!(read(&cursor), CURSOR, "the entry went again");

    run(
        h.path(),
        Path::new(BIN),
        &[
            "connect",
            "cursor",
            "--http",
            "127.0.0.1:27182",
            "--profile",
            "WORK",
        ],
        &[("SWITCHBOARD_GATEWAY_TOKEN", TOKEN)],
    );
    let doc = parse(Format::Json, &read(&cursor)).unwrap().value;
    assert_eq!(
        doc["mcpServers"]["switchboard"]["url"], "http://127.0.0.1:27182/mcp/p/work",
        "the profile's own spelling"
    );
}
