//! "Use Switchboard in…": `connect` writes one `switchboard` entry into a
//! client's user config in that client's own format, and `disconnect` takes
//! it out again, byte for byte; duplicates disabled on request come back on,
//! and only those; every change is in the history. The last tests run the
//! clients' own CLIs (tests/npm: Claude Code, Codex, Gemini CLI) on what
//! `switchboard connect` wrote: they skip without them, and fail under `CI`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};
use switchboard_engine::connect::{
    self, ConnectError, ConnectOptions, DuplicateServer, EntryAction, EntryState, HttpSupport,
    HttpTarget, Via,
};
use switchboard_engine::discovery::{discover, DiscoverOptions, Discovery};
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::Wanted;
use switchboard_engine::settings::Settings;
use switchboard_engine::sources::read::parse;
use switchboard_engine::sources::Client;
use switchboard_engine::writer::edit::{ServerEdit, Writer};
use switchboard_engine::writer::history::History;
use switchboard_engine::writer::Format;

const SWITCHBOARD: &str = "/opt/Switchboard/bin/switchboard";
const TOKEN: &str = "connect-test-token-0123456789abcdef";
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

fn stdio(binary: &str) -> ConnectOptions {
    ConnectOptions {
        via: Via::Stdio {
            binary: PathBuf::from(binary),
        },
        disable_duplicates: false,
    }
}

fn http() -> ConnectOptions {
    ConnectOptions {
        via: Via::Http(HttpTarget {
            url: GATEWAY.into(),
            token: TOKEN.into(),
        }),
        disable_duplicates: false,
    }
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
    fn connect(
        &self,
        client: Client,
        opts: &ConnectOptions,
    ) -> Result<connect::ConnectReport, ConnectError> {
        let mut s = self.settings();
        let d = discover(&self.host, &s, &DiscoverOptions::default());
        connect::connect(&self.host, &mut s, &d, client, opts)
    }
    fn disconnect(&self, client: Client) -> Result<connect::DisconnectReport, ConnectError> {
        let mut s = self.settings();
        let d = discover(&self.host, &s, &DiscoverOptions::default());
        connect::disconnect(&self.host, &mut s, &d, client)
    }
    fn plan(
        &self,
        client: Client,
        opts: &ConnectOptions,
    ) -> Result<connect::ConnectPlan, ConnectError> {
        let s = self.settings();
        connect::plan_connect(
            &self.host,
            &s,
            &discover(&self.host, &s, &DiscoverOptions::default()),
            client,
            opts,
        )
    }
}

/// The document at `path` as a value (JSON, JSONC or TOML).
fn doc(path: &Path, format: Format) -> Value {
    parse(format, &std::fs::read_to_string(path).unwrap())
        .unwrap()
        .value
}

/// Connect over stdio, check the entry is `expected` in the client's
/// shape (under `container`), disconnect, check the file is as it was.
fn round_trip(
    client: Client,
    rel: &str,
    format: Format,
    container: &str,
    original: &str,
    expected: Value,
) {
    let h = home();
    let path = h.write(rel, original);
    let report = h.connect(client, &stdio(SWITCHBOARD)).unwrap();
    assert_eq!(report.plan.action, EntryAction::Add);
    assert_eq!(report.plan.path, path);
    let after = doc(&path, format);
    assert_eq!(
        after[container]["switchboard"],
        expected,
        "{}:\n{}",
        path.display(),
        std::fs::read_to_string(&path).unwrap()
    );
    // Everything else in the document is as it was.
    let mut without = after.clone();
    without[container]
        .as_object_mut()
        .unwrap()
        .remove("switchboard");
    let mut before = parse(format, original).unwrap().value;
    if before.get(container).is_none() {
        without.as_object_mut().unwrap().remove(container);
    }
    if let Some(m) = before.get_mut(container).and_then(Value::as_object_mut) {
        m.remove("switchboard");
    }
    assert_eq!(without, before, "only the entry was added");

    let r = h.disconnect(client).unwrap();
    assert!(r.removed_entry && !r.removed_file, "{r:?}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        original,
        "{} after disconnect",
        path.display()
    );
    assert!(
        h.settings().connections.is_empty(),
        "nothing left to remember"
    );
}

#[test]
fn cursor_round_trip_is_byte_for_byte() {
    // Hand-formatted: 4 spaces, an inline object, keys Switchboard does not know.
    let original = r#"{
    "mcpServers": {
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example" }
        },
        "notes": { "url": "https://notes.example.com/mcp", "headers": { "X-Team": "a" } },
        "local": {"command": "node", "args": ["/srv/mcp/index.js"], "cursorOnlyKey": 1}
    },
    "cursor.experimental": { "toolLimit": 40 }
}
"#;
    round_trip(
        Client::Cursor,
        ".cursor/mcp.json",
        Format::Json,
        "mcpServers",
        original,
        json!({"command": SWITCHBOARD, "args": ["serve"]}),
    );
}

#[test]
fn claude_code_round_trip_keeps_its_other_keys_byte_for_byte() {
    let original = r#"{
  "numStartups": 42,
  "installMethod": "npm-global",
  "autoUpdates": true,
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
    }
  },
  "userID": "0f3c9e",
  "firstStartTime": "2026-11-01T09:00:00.000Z"
}"#;
    round_trip(
        Client::ClaudeCode,
        ".claude.json",
        Format::Json,
        "mcpServers",
        original,
        json!({"type": "stdio", "command": SWITCHBOARD, "args": ["serve"]}),
    );
}

#[test]
fn claude_code_without_mcp_servers_gets_the_container_back_out() {
    // Connect has to create `mcpServers`; disconnect removes it again.
    let original = "{\n  \"numStartups\": 1,\n  \"theme\": \"dark\",\n  \"projects\": {}\n}\n";
    round_trip(
        Client::ClaudeCode,
        ".claude.json",
        Format::Json,
        "mcpServers",
        original,
        json!({"type": "stdio", "command": SWITCHBOARD, "args": ["serve"]}),
    );
}

#[test]
fn codex_toml_round_trip_keeps_comments_byte_for_byte() {
    let original = r#"# Codex settings
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

[profiles.fast]
model = "gpt-5-mini"
"#;
    round_trip(
        Client::Codex,
        ".codex/config.toml",
        Format::Toml,
        "mcp_servers",
        original,
        json!({"command": SWITCHBOARD, "args": ["serve"]}),
    );
}

#[test]
fn vscode_user_mcp_json_round_trip_keeps_inputs_and_comments() {
    let original = r#"{
	// Servers for Copilot agent mode
	"servers": {
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/",
			"headers": { "Authorization": "Bearer ${input:gh-token}" }
		},
		"fs": { "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${userHome}"] }
	},
	"inputs": [
		{ "type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true }
	]
}
"#;
    round_trip(
        Client::Vscode,
        ".config/Code/User/mcp.json",
        Format::Jsonc,
        "servers",
        original,
        json!({"type": "stdio", "command": SWITCHBOARD, "args": ["serve"]}),
    );
}

#[test]
fn claude_desktop_round_trip_is_byte_for_byte() {
    let original = "{\n  \"globalShortcut\": \"Alt+Space\",\n  \"mcpServers\": {\n    \"filesystem\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/home/me/Documents\"]\n    }\n  }\n}\n";
    round_trip(
        Client::ClaudeDesktop,
        ".config/Claude/claude_desktop_config.json",
        Format::Json,
        "mcpServers",
        original,
        json!({"command": SWITCHBOARD, "args": ["serve"]}),
    );
}

#[test]
fn a_file_connect_created_is_deleted_by_disconnect_when_nothing_else_is_in_it() {
    let h = home();
    let path = h.path(".cursor/mcp.json");
    let plan = h.plan(Client::Cursor, &stdio(SWITCHBOARD)).unwrap();
    assert!(plan.creates_file);
    h.connect(Client::Cursor, &stdio(SWITCHBOARD)).unwrap();
    assert_eq!(
        doc(&path, Format::Json),
        json!({"mcpServers": {"switchboard": {"command": SWITCHBOARD, "args": ["serve"]}}})
    );
    let r = h.disconnect(Client::Cursor).unwrap();
    assert!(r.removed_file, "{r:?}");
    assert!(!path.exists(), "the file connect created is gone");
    assert!(path.parent().unwrap().is_dir(), "its folder stays");

    // One the user added to meanwhile stays, without our entry.
    h.connect(Client::Cursor, &stdio(SWITCHBOARD)).unwrap();
    let mut s = h.settings();
    let d = h.discover();
    let spec = d.source("cursor-user").unwrap().spec.clone().unwrap();
    Writer::new(&h.host, &mut s)
        .apply(
            &spec,
            ServerEdit::Add(switchboard_engine::config::ServerDef::stdio(
                "mine",
                "node",
                &["x.js"],
            )),
            None,
        )
        .unwrap();
    let r = h.disconnect(Client::Cursor).unwrap();
    assert!(!r.removed_file);
    assert_eq!(
        doc(&path, Format::Json),
        json!({"mcpServers": {"mine": {"command": "node", "args": ["x.js"]}}})
    );
}

#[test]
fn http_entries_use_each_clients_own_fields_and_codex_names_a_variable() {
    let h = home();
    for (client, rel, format, container, expected) in [
        (
            Client::Cursor,
            ".cursor/mcp.json",
            Format::Json,
            "mcpServers",
            json!({"url": GATEWAY, "headers": {"Authorization": format!("Bearer {TOKEN}")}}),
        ),
        (
            Client::ClaudeCode,
            ".claude.json",
            Format::Json,
            "mcpServers",
            json!({"type": "http", "url": GATEWAY, "headers": {"Authorization": format!("Bearer {TOKEN}")}}),
        ),
        (
            Client::Vscode,
            ".config/Code/User/mcp.json",
            Format::Jsonc,
            "servers",
            json!({"type": "http", "url": GATEWAY, "headers": {"Authorization": format!("Bearer {TOKEN}")}}),
        ),
        (
            Client::Gemini,
            ".gemini/settings.json",
            Format::Jsonc,
            "mcpServers",
            json!({"httpUrl": GATEWAY, "headers": {"Authorization": format!("Bearer {TOKEN}")}}),
        ),
        (
            Client::Codex,
            ".codex/config.toml",
            Format::Toml,
            "mcp_servers",
            json!({"url": GATEWAY, "bearer_token_env_var": "SWITCHBOARD_GATEWAY_TOKEN"}),
        ),
    ] {
        let plan = h.plan(client, &http()).unwrap();
        assert!(
            !plan.entry_text.contains(TOKEN),
            "the preview never shows the token: {}",
            plan.entry_text
        );
        assert!(plan.entry_text.contains(GATEWAY), "{}", plan.entry_text);
        let report = h.connect(client, &http()).unwrap();
        let path = h.path(rel);
        assert_eq!(
            doc(&path, format)[container]["switchboard"],
            expected,
            "{client:?}"
        );
        assert!(
            !serde_json::to_string(&report).unwrap().contains(TOKEN),
            "the report never carries the token"
        );
        if client == Client::Codex {
            assert!(
                !std::fs::read_to_string(&path).unwrap().contains(TOKEN),
                "no token in config.toml"
            );
            assert!(
                report
                    .plan
                    .notes
                    .iter()
                    .any(|n| n.contains("SWITCHBOARD_GATEWAY_TOKEN")),
                "{:?}",
                report.plan.notes
            );
        }
    }
    // Claude Desktop and Continue take no http entry with headers in their files.
    for client in [Client::ClaudeDesktop, Client::Continue] {
        let e = h.connect(client, &http()).unwrap_err();
        assert_eq!(e.code(), "no-http", "{e}");
        assert!(e.to_string().contains("stdio"), "{e}");
    }
    assert!(!h.path(".config/Claude/claude_desktop_config.json").exists());
    let list = connect::connections(&h.host, &h.settings(), &h.discover());
    let support = |id: &str| list.iter().find(|c| c.client == id).unwrap().http;
    assert_eq!(support("codex"), HttpSupport::TokenEnvVar);
    assert_eq!(support("claude-desktop"), HttpSupport::None);
    assert_eq!(support("cursor"), HttpSupport::Headers);
}

#[test]
fn connecting_again_updates_the_entry_in_place() {
    let h = home();
    let original = "{\n  \"mcpServers\": {\n    \"time\": { \"command\": \"uvx\", \"args\": [\"mcp-server-time\"] }\n  }\n}\n";
    let path = h.write(".cursor/mcp.json", original);
    h.connect(Client::Cursor, &stdio("/old/place/switchboard"))
        .unwrap();
    let first = std::fs::read_to_string(&path).unwrap();

    let again = h.connect(Client::Cursor, &stdio(SWITCHBOARD)).unwrap();
    assert_eq!(again.plan.action, EntryAction::Update);
    let second = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        second.matches("\"switchboard\"").count(),
        1,
        "one entry, never two:\n{second}"
    );
    assert_eq!(
        second,
        first.replace("/old/place/switchboard", SWITCHBOARD),
        "only the path changed"
    );

    let same = h.connect(Client::Cursor, &stdio(SWITCHBOARD)).unwrap();
    assert_eq!(same.plan.action, EntryAction::Unchanged);
    assert_eq!(same.history_id, None, "nothing written, nothing recorded");

    // stdio → http in place: the command goes, the url and header come.
    h.connect(Client::Cursor, &http()).unwrap();
    let entry = &doc(&path, Format::Json)["mcpServers"]["switchboard"];
    assert_eq!(
        entry,
        &json!({"url": GATEWAY, "headers": {"Authorization": format!("Bearer {TOKEN}")}})
    );
    let list = connect::connections(&h.host, &h.settings(), &h.discover());
    let cursor = list.iter().find(|c| c.client == "cursor").unwrap();
    assert_eq!(
        cursor.entry,
        EntryState::Connected {
            transport: switchboard_engine::config::Transport::Http,
            target: GATEWAY.into(),
            enabled: true
        }
    );

    h.disconnect(Client::Cursor).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
}

#[test]
fn a_users_own_server_named_switchboard_is_refused_and_left_alone() {
    let h = home();
    let original = "{\"mcpServers\": {\"switchboard\": {\"command\": \"python3\", \"args\": [\"switchboard_bot.py\"]}}}\n";
    let path = h.write(".cursor/mcp.json", original);
    let e = h.connect(Client::Cursor, &stdio(SWITCHBOARD)).unwrap_err();
    assert_eq!(e.code(), "name-taken");
    let msg = e.to_string();
    for part in [
        path.to_str().unwrap(),
        "\"switchboard\"",
        "python3 switchboard_bot.py",
        "switchboard rename switchboard",
        "--source cursor-user",
    ] {
        assert!(msg.contains(part), "{msg} should name {part}");
    }
    assert_eq!(
        h.disconnect(Client::Cursor).unwrap_err().code(),
        "name-taken"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    let list = connect::connections(&h.host, &h.settings(), &h.discover());
    assert!(matches!(
        list.iter().find(|c| c.client == "cursor").unwrap().entry,
        EntryState::Foreign { .. }
    ));
    // And Switchboard still runs the user's server: it is not a gateway entry.
    assert!(h
        .discover()
        .server("switchboard")
        .unwrap()
        .winner
        .not_runnable
        .is_none());
}

#[test]
fn disable_duplicates_then_disconnect_re_enables_only_those() {
    let h = home();
    // Claude Code (above Cursor) also has github: the gateway serves it from there.
    h.write(".claude.json", r#"{"mcpServers": {"github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}}}"#);
    let cursor = h.write(
        ".cursor/mcp.json",
        r#"{
  "mcpServers": {
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]},
    "notes": {"command": "node", "args": ["/srv/notes.js"]},
    "mine": {"command": "node", "args": ["/srv/mine.js"]}
  }
}
"#,
    );
    // The user turned "mine" off themselves (Cursor has no switch: Switchboard parks it).
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
                name: "mine".into(),
                enabled: false,
            },
            None,
        )
        .unwrap();
    let before_connect = doc(&cursor, Format::Json);

    let opts = ConnectOptions {
        disable_duplicates: true,
        ..stdio(SWITCHBOARD)
    };
    let plan = h.plan(Client::Cursor, &opts).unwrap();
    assert_eq!(plan.duplicates, vec!["github", "notes"]);
    assert_eq!(
        plan.disable,
        vec![
            DuplicateServer {
                name: "github".into(),
                copy_to_switchboard: false
            },
            // Only Cursor defines it: copied into Switchboard's own file so the gateway keeps it.
            DuplicateServer {
                name: "notes".into(),
                copy_to_switchboard: true
            },
        ]
    );
    let report = h.connect(Client::Cursor, &opts).unwrap();
    assert_eq!(report.plan.disable.len(), 2);

    let d = h.discover();
    let served: Vec<String> = Wanted::from_discovery(&d)
        .into_iter()
        .filter(|w| w.def.enabled)
        .map(|w| w.def.name)
        .collect();
    for name in ["github", "notes"] {
        assert!(
            served.contains(&name.to_string()),
            "the gateway still serves {name}: {served:?}"
        );
    }
    assert_eq!(d.server("notes").unwrap().winner.source, "switchboard");
    assert!(
        !served.contains(&"switchboard".to_string()),
        "Switchboard never runs its own entry"
    );
    let now = doc(&cursor, Format::Json);
    assert!(
        now["mcpServers"].get("github").is_none() && now["mcpServers"].get("notes").is_none(),
        "off in Cursor: {now}"
    );
    assert_eq!(
        h.settings().connections["cursor"].disabled,
        vec!["github", "notes"]
    );
    let list = connect::connections(&h.host, &h.settings(), &d);
    let c = list.iter().find(|c| c.client == "cursor").unwrap();
    assert_eq!(c.disabled_by_connect, vec!["github", "notes"]);
    assert!(
        c.duplicates.is_empty(),
        "nothing runs twice any more: {:?}",
        c.duplicates
    );

    let r = h.disconnect(Client::Cursor).unwrap();
    assert_eq!(r.re_enabled, vec!["github", "notes"]);
    assert_eq!(r.removed_copies, vec!["notes"]);
    assert_eq!(
        doc(&cursor, Format::Json),
        before_connect,
        "Cursor holds what it held before connect"
    );
    let d = h.discover();
    let mine = d.server("mine").unwrap();
    assert!(
        mine.winner.parked && !mine.winner.def.enabled,
        "the server the user turned off stays off"
    );
    assert!(
        d.server("notes")
            .unwrap()
            .definitions
            .iter()
            .all(|x| x.source != "switchboard"),
        "the copy is gone"
    );
    assert!(h.settings().connections.is_empty());
}

#[test]
fn history_records_connect_and_disconnect_and_undo_takes_connect_back() {
    let h = home();
    let original = "{\n  \"mcpServers\": {}\n}\n";
    let path = h.write(".cursor/mcp.json", original);
    let report = h.connect(Client::Cursor, &stdio(SWITCHBOARD)).unwrap();
    let history = History::for_host(&h.host);
    let newest = &history.list()[0];
    assert_eq!(Some(newest.id), report.history_id);
    assert_eq!(newest.summary, "connect Cursor to Switchboard (stdio)");
    assert_eq!(newest.server.as_deref(), Some("switchboard"));
    assert_eq!(
        newest
            .files
            .iter()
            .map(|f| f.path.clone())
            .collect::<Vec<_>>(),
        vec![path.clone()]
    );

    history.undo(None).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        original,
        "undo restores the file"
    );

    h.connect(Client::Cursor, &stdio(SWITCHBOARD)).unwrap();
    let r = h.disconnect(Client::Cursor).unwrap();
    let newest = &history.list()[0];
    assert_eq!(Some(newest.id), r.history_id);
    assert_eq!(newest.summary, "disconnect Cursor from Switchboard");
    assert_eq!(
        h.disconnect(Client::Cursor).unwrap_err().code(),
        "not-connected"
    );
}

#[test]
fn unknown_clients_are_refused_with_the_known_ids() {
    let e = connect::parse_client("cursr").unwrap_err();
    let msg = e.to_string();
    for id in [
        "cursor",
        "claude-code",
        "claude-desktop",
        "codex",
        "gemini",
        "vscode",
        "windsurf",
        "zed",
    ] {
        assert!(msg.contains(id), "{msg}");
    }
    assert_eq!(
        connect::parse_client("Claude-Code").unwrap(),
        Client::ClaudeCode
    );
    let e = connect::entry_def(
        Client::Cursor,
        &Via::Stdio {
            binary: "switchboard".into(),
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), "invalid");
}

// ---- the clients' own CLIs read what `switchboard connect` wrote ----------

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

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Gemini CLI prints its list on stderr.
fn all_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn claude_code_reads_the_entry_switchboard_connect_wrote() {
    let Some(claude) = client_cli(
        "claude",
        "claude_code_reads_the_entry_switchboard_connect_wrote",
    ) else {
        return;
    };
    let h = tempfile::tempdir().unwrap();
    let original = "{\n  \"numStartups\": 2,\n  \"autoUpdates\": false\n}\n";
    std::fs::write(h.path().join(".claude.json"), original).unwrap();
    run(h.path(), Path::new(BIN), &["connect", "claude-code"], &[]);
    let got = text(&run(h.path(), &claude, &["mcp", "get", "switchboard"], &[]));
    assert!(
        got.contains(&format!("Command: {BIN}"))
            && got.contains("Args: serve")
            && got.contains("Type: stdio"),
        "{got}"
    );

    run(
        h.path(),
        Path::new(BIN),
        &["connect", "claude-code", "--http", "127.0.0.1:27182"],
        &[("SWITCHBOARD_GATEWAY_TOKEN", TOKEN)],
    );
    let got = text(&run(h.path(), &claude, &["mcp", "get", "switchboard"], &[]));
    assert!(
        got.contains("Type: http")
            && got.contains(&format!("URL: {GATEWAY}"))
            && got.contains(&format!("Authorization: Bearer {TOKEN}")),
        "{got}"
    );

    run(
        h.path(),
        Path::new(BIN),
        &["disconnect", "claude-code"],
        &[],
    );
    let got = text(&run(h.path(), &claude, &["mcp", "list"], &[]));
    assert!(!got.contains("switchboard"), "{got}");
}

#[test]
fn codex_reads_the_entry_switchboard_connect_wrote() {
    let Some(codex) = client_cli("codex", "codex_reads_the_entry_switchboard_connect_wrote") else {
        return;
    };
    let h = tempfile::tempdir().unwrap();
    let codex_home = h.path().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        "# mine\nmodel = \"gpt-5-codex\"\n",
    )
    .unwrap();
    let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    let list = |h: &Path| -> Vec<Value> {
        serde_json::from_str(&text(&run(h, &codex, &["mcp", "list", "--json"], &env))).unwrap()
    };

    run(h.path(), Path::new(BIN), &["connect", "codex"], &env);
    let servers = list(h.path());
    let s = servers
        .iter()
        .find(|s| s["name"] == "switchboard")
        .unwrap_or_else(|| panic!("{servers:?}"));
    assert_eq!(s["enabled"], true);
    assert_eq!(s["transport"]["command"], BIN);
    assert_eq!(s["transport"]["args"], json!(["serve"]));

    run(
        h.path(),
        Path::new(BIN),
        &["connect", "codex", "--http", "127.0.0.1:27182"],
        &env,
    );
    let servers = list(h.path());
    let s = servers
        .iter()
        .find(|s| s["name"] == "switchboard")
        .unwrap_or_else(|| panic!("{servers:?}"));
    assert_eq!(s["transport"]["url"], GATEWAY);
    assert_eq!(
        s["transport"]["bearer_token_env_var"],
        "SWITCHBOARD_GATEWAY_TOKEN"
    );

    run(h.path(), Path::new(BIN), &["disconnect", "codex"], &env);
    assert_eq!(
        std::fs::read_to_string(codex_home.join("config.toml")).unwrap(),
        "# mine\nmodel = \"gpt-5-codex\"\n"
    );
    assert!(list(h.path()).iter().all(|s| s["name"] != "switchboard"));
}

#[test]
fn gemini_reads_the_entry_switchboard_connect_wrote() {
    let Some(gemini) = client_cli("gemini", "gemini_reads_the_entry_switchboard_connect_wrote")
    else {
        return;
    };
    let h = tempfile::tempdir().unwrap();
    run(h.path(), Path::new(BIN), &["connect", "gemini"], &[]);
    let got = all_text(&run(h.path(), &gemini, &["mcp", "list"], &[]));
    assert!(
        got.contains(&format!("switchboard: {BIN} serve (stdio)")),
        "{got}"
    );

    run(
        h.path(),
        Path::new(BIN),
        &["connect", "gemini", "--http", "127.0.0.1:27182"],
        &[("SWITCHBOARD_GATEWAY_TOKEN", TOKEN)],
    );
    let got = all_text(&run(h.path(), &gemini, &["mcp", "list"], &[]));
    assert!(
        got.contains(&format!("switchboard: {GATEWAY} (http)")),
        "{got}"
    );

    run(h.path(), Path::new(BIN), &["disconnect", "gemini"], &[]);
    assert!(
        !h.path().join(".gemini/settings.json").exists(),
        "connect created the file; disconnect removed it"
    );
}

#[test]
fn cli_connect_lists_clients_and_round_trips_cursor() {
    let h = tempfile::tempdir().unwrap();
    let original = "{\n  \"mcpServers\": {\n    \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}\n  }\n}\n";
    let cursor = h.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(&cursor, original).unwrap();

    let dry = text(&run(
        h.path(),
        Path::new(BIN),
        &["connect", "cursor", "--dry-run"],
        &[],
    ));
    assert!(dry.contains("Would add \"switchboard\" to Cursor"), "{dry}");
    assert_eq!(
        std::fs::read_to_string(&cursor).unwrap(),
        original,
        "--dry-run writes nothing"
    );

    run(h.path(), Path::new(BIN), &["connect", "cursor"], &[]);
    assert_eq!(
        doc(&cursor, Format::Json)["mcpServers"]["switchboard"],
        json!({"command": BIN, "args": ["serve"]})
    );
    let listed = text(&run(h.path(), Path::new(BIN), &["connect"], &[]));
    let line = listed
        .lines()
        .find(|l| l.starts_with("cursor "))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(line.contains("connected (stdio)"), "{listed}");
    let json: Vec<Value> = serde_json::from_str(&text(&run(
        h.path(),
        Path::new(BIN),
        &["connect", "--json"],
        &[],
    )))
    .unwrap();
    let c = json.iter().find(|c| c["client"] == "cursor").unwrap();
    assert_eq!(
        c["entry"],
        json!({"kind": "connected", "transport": "stdio", "target": BIN, "enabled": true})
    );
    assert_eq!(c["duplicates"], json!(["time"]));

    let history = text(&run(h.path(), Path::new(BIN), &["history"], &[]));
    assert!(
        history.contains("connect Cursor to Switchboard (stdio)"),
        "{history}"
    );
    run(h.path(), Path::new(BIN), &["disconnect", "cursor"], &[]);
    assert_eq!(
        std::fs::read_to_string(&cursor).unwrap(),
        original,
        "byte for byte"
    );

    let bad = std::process::Command::new(BIN)
        .args(["connect", "cursr"])
        .env("HOME", h.path())
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("unknown client \"cursr\"")
            && err.contains("cursor")
            && err.contains("claude-code"),
        "{err}"
    );
}

#[test]
fn gateway_entries_are_recognised_and_never_run_by_switchboard() {
    use switchboard_engine::config::{ServerDef, Transport};
    let stdio = |cmd: &str, args: &[&str]| ServerDef::stdio("any-name", cmd, args);
    assert!(connect::is_gateway_entry(
        "any-name",
        &stdio("/usr/bin/switchboard", &["serve"])
    ));
    assert!(connect::is_gateway_entry(
        "any-name",
        &stdio(
            "/opt/Switchboard/switchboard-x86_64-unknown-linux-gnu",
            &["serve", "--tool-search"]
        )
    ));
    assert!(connect::is_gateway_entry(
        "any-name",
        &stdio(r"C:\Program Files\Switchboard\Switchboard.exe", &["serve"])
    ));
    assert!(!connect::is_gateway_entry(
        "any-name",
        &stdio("/usr/bin/switchboard", &["status"])
    ));
    assert!(!connect::is_gateway_entry(
        "any-name",
        &stdio("python3", &["serve"])
    ));
    let remote = |url: &str| ServerDef::remote("switchboard", Transport::Http, url);
    assert!(connect::is_gateway_entry(
        "switchboard",
        &remote("http://127.0.0.1:27182/mcp")
    ));
    assert!(connect::is_gateway_entry(
        "switchboard",
        &remote("http://localhost:8765/mcp/github")
    ));
    assert!(
        !connect::is_gateway_entry("other", &remote("http://127.0.0.1:3000/mcp")),
        "someone else's local server"
    );
    assert!(!connect::is_gateway_entry(
        "switchboard",
        &remote("https://switchboard.example.com/mcp")
    ));

    let h = home();
    h.connect(Client::Cursor, &http()).unwrap();
    let d = h.discover();
    let entry = d.server("switchboard").unwrap();
    assert!(
        entry
            .winner
            .not_runnable
            .as_deref()
            .is_some_and(|n| n.contains("does not run itself")),
        "{:?}",
        entry.winner.not_runnable
    );
    assert!(Wanted::from_discovery(&d)
        .iter()
        .all(|w| w.def.name != "switchboard"));
}
