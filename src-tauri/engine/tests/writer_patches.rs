//! Edits are patches: changing one argument of a server in a real-shaped
//! client file changes that argument's text and no other byte: not the
//! fields the form does not show (cwd, timeout, auto-approve lists, auth,
//! restart policy), not keys Switchboard does not know, not comments.

mod common;

use common::{fixture_home, FixtureHome};
use switchboard_engine::config::{ServerDef, ServerPatch};
use switchboard_engine::writer::edit::{ServerEdit, Writer};

/// Replace `from` by `to` once in the fixture file `rel` (under HOME), to
/// give a server the keys a test needs; `from` must be there exactly once.
fn shape(f: &FixtureHome, rel: &str, from: &str, to: &str) {
    let path = f.home.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{from:?} once in {rel}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// The definition of `name` in source `source` as discovery read it.
fn definition(f: &FixtureHome, source: &str, name: &str) -> ServerDef {
    let d = f.discover_trusted();
    let s = d
        .server(name)
        .unwrap_or_else(|| panic!("{name} is discovered"));
    s.definitions
        .iter()
        .find(|x| x.source == source)
        .unwrap_or_else(|| panic!("{name} in {source}"))
        .def
        .clone()
}

/// Edit `name`'s argument `old` to `new` as the app does (the definition the
/// form was opened with, and the edited one), and return the file before and after.
fn patch_arg(f: &FixtureHome, source: &str, name: &str, old: &str, new: &str) -> (String, String) {
    let d = f.discover_trusted();
    let info = d.source(source).unwrap();
    let spec = info.spec.clone().unwrap();
    let before = std::fs::read_to_string(&spec.path).unwrap();
    let original = definition(f, source, name);
    let mut edited = original.clone();
    let i = edited
        .args
        .iter()
        .position(|a| a == old)
        .unwrap_or_else(|| panic!("{name} has argument {old:?}: {:?}", original.args));
    edited.args[i] = new.into();
    let patch = ServerPatch::between(&original, &edited);
    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .apply(
            &spec,
            ServerEdit::Patch {
                name: name.into(),
                patch,
            },
            info.hash,
        )
        .unwrap();
    let after = std::fs::read_to_string(&spec.path).unwrap();
    assert_eq!(
        definition(f, source, name),
        edited,
        "{name} reads back as edited, every other field as it was"
    );
    (before, after)
}

/// `after` is `before` with `old` replaced by `new` once, and nothing else.
fn only_replaced(before: &str, after: &str, old: &str, new: &str) {
    assert_eq!(
        before.matches(old).count(),
        1,
        "{old:?} is unique in the file"
    );
    assert_eq!(after, before.replacen(old, new, 1), "only {old} changed");
}

#[test]
fn cline_keeps_cwd_auto_approve_timeout_and_unknown_keys() {
    let f = fixture_home();
    let file =
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json";
    shape(
        &f,
        file,
        "\"cline-only\": {\n",
        "\"cline-only\": {\n      \"notes\": \"ask Ana before changing\",\n",
    );
    let (before, after) = patch_arg(
        &f,
        "cline",
        "cline-only",
        "mcp_server_notes",
        "mcp_server_notes.v2",
    );
    only_replaced(
        &before,
        &after,
        "\"mcp_server_notes\"",
        "\"mcp_server_notes.v2\"",
    );
}

#[test]
fn codex_keeps_comments_env_vars_enabled_tools_and_tool_timeout() {
    let f = fixture_home();
    shape(&f, ".codex/config.toml", "tool_timeout_sec = 120\n", "tool_timeout_sec = 120\nenv_vars = [\"HOME_REGION\"]  # passed through\nenabled_tools = [\"echo\", \"add\"]\n");
    let (before, after) = patch_arg(
        &f,
        "codex-user",
        "codex-user-only",
        "@modelcontextprotocol/server-everything",
        "@modelcontextprotocol/server-everything@2025.9.1",
    );
    only_replaced(
        &before,
        &after,
        "\"@modelcontextprotocol/server-everything\"",
        "\"@modelcontextprotocol/server-everything@2025.9.1\"",
    );
}

#[test]
fn cursor_keeps_type_env_file_and_cwd() {
    let f = fixture_home();
    shape(&f, ".cursor/mcp.json", "\"type\": \"stdio\",\n", "\"type\": \"stdio\",\n      \"envFile\": \"${userHome}/.browsermcp.env\",\n      \"cwd\": \"/home/me/tools\",\n");
    let (before, after) = patch_arg(
        &f,
        "cursor-user",
        "browsermcp",
        "@browsermcp/mcp@latest",
        "@browsermcp/mcp@0.1.3",
    );
    only_replaced(
        &before,
        &after,
        "\"@browsermcp/mcp@latest\"",
        "\"@browsermcp/mcp@0.1.3\"",
    );
}

#[test]
fn roo_keeps_always_allow() {
    let f = fixture_home();
    let (before, after) = patch_arg(
        &f,
        "roo-user",
        "roo-user-only",
        "America/New_York",
        "Europe/Paris",
    );
    only_replaced(&before, &after, "\"America/New_York\"", "\"Europe/Paris\"");
}

#[test]
fn switchboard_keeps_auth_and_restart_policy() {
    let f = fixture_home();
    shape(
        &f,
        ".config/switchboard/servers.json",
        "\"timeout\": 30000\n",
        "\"timeout\": 30000,\n      \"auth\": {\"type\": \"oauth\", \"credentialId\": \"github\"},\n      \"restartPolicy\": {\"initialDelayMs\": 1000, \"maxDelayMs\": 60000, \"backoffMultiplier\": 3.0, \"maxRestartAttempts\": 2}\n",
    );
    let def = definition(&f, "switchboard", "github");
    assert!(
        def.auth.is_some() && def.restart_policy.is_some(),
        "the shaped file has both: {def:?}"
    );
    let (before, after) = patch_arg(
        &f,
        "switchboard",
        "github",
        "@modelcontextprotocol/server-github",
        "@modelcontextprotocol/server-github@2025.4.8",
    );
    only_replaced(
        &before,
        &after,
        "\"@modelcontextprotocol/server-github\"",
        "\"@modelcontextprotocol/server-github@2025.4.8\"",
    );
}

#[test]
fn vscode_keeps_comments_and_inputs() {
    let f = fixture_home();
    let (before, after) = patch_arg(
        &f,
        "vscode-user",
        "perplexity",
        "server-perplexity-ask",
        "server-perplexity-ask@0.2",
    );
    only_replaced(
        &before,
        &after,
        "\"server-perplexity-ask\"",
        "\"server-perplexity-ask@0.2\"",
    );
}

#[test]
fn zed_keeps_comments_and_its_timeout() {
    let f = fixture_home();
    let (before, after) = patch_arg(
        &f,
        "zed-user",
        "zed-user-only",
        "mcp-server-git",
        "mcp-server-git==1.2",
    );
    only_replaced(
        &before,
        &after,
        "\"mcp-server-git\"",
        "\"mcp-server-git==1.2\"",
    );
}

#[test]
fn zed_legacy_command_object_is_edited_inside_it() {
    let f = fixture_home();
    shape(
        &f,
        ".config/zed/settings.json",
        "\"context_servers\": {\n",
        "\"context_servers\": {\n    \"legacy\": {\n      \"command\": {\"path\": \"uvx\", \"args\": [\"mcp-legacy\"], \"env\": {}},\n      \"settings\": {},\n    },\n",
    );
    let (before, after) = patch_arg(&f, "zed-user", "legacy", "mcp-legacy", "mcp-legacy==2");
    only_replaced(&before, &after, "\"mcp-legacy\"", "\"mcp-legacy==2\"");
}

#[test]
fn gemini_keeps_comments_timeout_and_trust() {
    let f = fixture_home();
    let (before, after) = patch_arg(
        &f,
        "gemini-user",
        "gemini-user-only",
        "mcp-server-git",
        "mcp-server-git==1.2",
    );
    only_replaced(
        &before,
        &after,
        "\"mcp-server-git\"",
        "\"mcp-server-git==1.2\"",
    );
}

#[test]
fn goose_yaml_keeps_every_other_line() {
    let f = fixture_home();
    let (before, after) = patch_arg(
        &f,
        "goose",
        "goose-only",
        "mcp-server-fetch",
        "mcp-server-fetch==2025.4.7",
    );
    only_replaced(
        &before,
        &after,
        "- mcp-server-fetch\n",
        "- mcp-server-fetch==2025.4.7\n",
    );
}

#[test]
fn windsurf_claude_desktop_and_claude_code_keep_every_other_byte() {
    let f = fixture_home();
    let (before, after) = patch_arg(
        &f,
        "windsurf",
        "windsurf-only",
        "ghcr.io/github/github-mcp-server",
        "ghcr.io/github/github-mcp-server:v1",
    );
    only_replaced(
        &before,
        &after,
        "\"ghcr.io/github/github-mcp-server\"",
        "\"ghcr.io/github/github-mcp-server:v1\"",
    );
    let (before, after) = patch_arg(
        &f,
        "claude-desktop",
        "claude-desktop-only",
        "@modelcontextprotocol/server-memory",
        "@modelcontextprotocol/server-memory@1",
    );
    only_replaced(
        &before,
        &after,
        "\"@modelcontextprotocol/server-memory\"",
        "\"@modelcontextprotocol/server-memory@1\"",
    );
    let name = "fetch";
    let arg = definition(&f, "claude-code-user", name).args[0].clone();
    let (before, after) = patch_arg(&f, "claude-code-user", name, &arg, "mcp-server-fetch==9");
    assert_eq!(
        after,
        before.replacen(&format!("\"{arg}\""), "\"mcp-server-fetch==9\"", 1)
    );
}

#[test]
fn a_timeout_lands_in_the_clients_key_and_unit() {
    let f = fixture_home();
    let d = f.discover_trusted();
    for (source, name, old, new, ms) in [
        (
            "cline",
            "cline-only",
            "\"timeout\": 120,",
            "\"timeout\": 90,",
            90_000,
        ),
        (
            "codex-user",
            "sqlite-codex",
            "startup_timeout_ms = 15000",
            "startup_timeout_ms = 2500",
            2_500,
        ),
        (
            "codex-user",
            "codex-user-only",
            "startup_timeout_sec = 20",
            "startup_timeout_sec = 45",
            45_000,
        ),
        (
            "zed-user",
            "zed-user-only",
            "\"timeout\": 120000,",
            "\"timeout\": 5000,",
            5_000,
        ),
        (
            "goose",
            "goose-only",
            "timeout: 300\n    bundled: null\n    available_tools: []\n  goose-remote",
            "timeout: 30\n    bundled: null\n    available_tools: []\n  goose-remote",
            30_000,
        ),
    ] {
        let spec = d.source(source).unwrap().spec.clone().unwrap();
        let before = std::fs::read_to_string(&spec.path).unwrap();
        let original = definition(&f, source, name);
        let edited = ServerDef {
            timeout: Some(ms),
            ..original.clone()
        };
        let mut settings = f.settings();
        Writer::new(&f.host, &mut settings)
            .apply(
                &spec,
                ServerEdit::Patch {
                    name: name.into(),
                    patch: ServerPatch::between(&original, &edited),
                },
                None,
            )
            .unwrap();
        only_replaced(
            &before,
            &std::fs::read_to_string(&spec.path).unwrap(),
            old,
            new,
        );
        assert_eq!(definition(&f, source, name).timeout, Some(ms), "{name}");
    }
}

#[test]
fn a_timeout_for_a_client_without_one_is_refused_and_nothing_is_written() {
    let f = fixture_home();
    let d = f.discover_trusted();
    for (source, name, client) in [
        ("cursor-user", "browsermcp", "Cursor"),
        ("claude-code-user", "fetch", "Claude Code"),
        ("vscode-user", "perplexity", "VS Code"),
    ] {
        let info = d.source(source).unwrap();
        let spec = info.spec.clone().unwrap();
        let before = std::fs::read(&spec.path).unwrap();
        let original = definition(&f, source, name);
        let edited = ServerDef {
            timeout: Some(60_000),
            ..original.clone()
        };
        let mut settings = f.settings();
        let e = Writer::new(&f.host, &mut settings)
            .apply(
                &spec,
                ServerEdit::Patch {
                    name: name.into(),
                    patch: ServerPatch::between(&original, &edited),
                },
                info.hash,
            )
            .unwrap_err();
        assert_eq!(e.code(), "invalid", "{e}");
        assert_eq!(
            e.to_string(),
            format!("Invalid server config: {client} has no field for timeout")
        );
        assert_eq!(
            std::fs::read(&spec.path).unwrap(),
            before,
            "{source} untouched"
        );
    }
}

#[test]
fn a_patch_changes_only_its_fields_even_when_the_file_changed_elsewhere() {
    // The form was opened, then Cline itself set another field of the same
    // server; the CLI-style edit (no hash) keeps Cline's change.
    let f = fixture_home();
    let original = definition(&f, "cline", "cline-only");
    let file =
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json";
    shape(
        &f,
        file,
        "\"list_notes\", \"search_notes\"",
        "\"list_notes\", \"search_notes\", \"add_note\"",
    );
    let mut edited = original.clone();
    edited.cwd = Some("/home/me/notes".into());
    let d = f.discover_trusted();
    let spec = d.source("cline").unwrap().spec.clone().unwrap();
    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .apply(
            &spec,
            ServerEdit::Patch {
                name: "cline-only".into(),
                patch: ServerPatch::between(&original, &edited),
            },
            None,
        )
        .unwrap();
    let now = definition(&f, "cline", "cline-only");
    assert_eq!(now.cwd.as_deref(), Some("/home/me/notes"));
    assert_eq!(
        now.auto_approve,
        ["list_notes", "search_notes", "add_note"],
        "the other program's change stays"
    );
}

#[test]
fn renaming_and_disabling_through_a_patch() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let spec = d.source("roo-user").unwrap().spec.clone().unwrap();
    let original = definition(&f, "roo-user", "roo-user-only");
    let edited = ServerDef {
        name: "roo-time".into(),
        enabled: false,
        ..original.clone()
    };
    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .apply(
            &spec,
            ServerEdit::Patch {
                name: "roo-user-only".into(),
                patch: ServerPatch::between(&original, &edited),
            },
            None,
        )
        .unwrap();
    let now = definition(&f, "roo-user", "roo-time");
    assert_eq!(now, edited);
    let text = std::fs::read_to_string(&spec.path).unwrap();
    assert!(
        text.contains("\"alwaysAllow\": [\"get_current_time\"]")
            && text.contains("\"disabled\": true"),
        "{text}"
    );
    // goose: the entry's own `name` follows the key.
    let spec = d.source("goose").unwrap().spec.clone().unwrap();
    let original = definition(&f, "goose", "goose-only");
    let edited = ServerDef {
        name: "fetch".into(),
        ..original.clone()
    };
    Writer::new(&f.host, &mut settings)
        .apply(
            &spec,
            ServerEdit::Patch {
                name: "goose-only".into(),
                patch: ServerPatch::between(&original, &edited),
            },
            None,
        )
        .unwrap();
    let text = std::fs::read_to_string(&spec.path).unwrap();
    assert!(
        text.contains("  fetch:\n    enabled: true\n    type: stdio\n    name: fetch\n"),
        "{text}"
    );
}
