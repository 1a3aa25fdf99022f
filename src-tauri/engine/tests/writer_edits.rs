//! Server edits on the fixture machine's real client files: each edit lands
//! in the client's own format and changes no byte outside the edited server.

mod common;

use common::{common_affixes, fixture_home, FixtureHome};
use switchboard_engine::config::{ServerDef, Transport};
use switchboard_engine::discovery::Discovery;
use switchboard_engine::sources::SourceSpec;
use switchboard_engine::writer::edit::{EditError, ServerEdit, Writer};

fn spec(d: &Discovery, id_prefix: &str) -> SourceSpec {
    d.sources
        .iter()
        .find(|s| s.id.starts_with(id_prefix))
        .unwrap()
        .spec
        .clone()
        .unwrap()
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].matches('\n').count() + 1
}

/// Apply `edit` to source `id` and return (before, after) texts; asserts the
/// changed bytes lie within lines `lo..=hi` of the original.
fn edit_confined(
    f: &FixtureHome,
    id: &str,
    edit: ServerEdit,
    lo: usize,
    hi: usize,
) -> (String, String) {
    let d = f.discover_trusted();
    let s = spec(&d, id);
    let before = std::fs::read_to_string(&s.path).unwrap();
    let seen = d.source(&s.id).unwrap().hash;
    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .apply(&s, edit, seen)
        .unwrap();
    let after = std::fs::read_to_string(&s.path).unwrap();
    assert_ne!(before, after, "the edit changed the file");
    let (p, suf) = common_affixes(&before, &after);
    let (first, last) = (line_of(&before, p), line_of(&before, before.len() - suf));
    assert!(
        first >= lo && last <= hi,
        "changed lines {first}..{last} must be within {lo}..{hi} of {}\n--- after:\n{after}",
        s.path.display()
    );
    (before, after)
}

fn entry_lines(f: &FixtureHome, id: &str, name: &str) -> (usize, usize) {
    // From the server's key line to the line before the next server (or the
    // container's end): the span an edit of this server may touch.
    let d = f.discover_trusted();
    let s = d.sources.iter().find(|s| s.id.starts_with(id)).unwrap();
    let mut lines: Vec<usize> = d
        .servers
        .iter()
        .flat_map(|x| x.definitions.iter())
        .filter(|def| def.source == s.id)
        .filter_map(|def| def.line)
        .collect();
    lines.sort();
    let me = d
        .servers
        .iter()
        .flat_map(|x| x.definitions.iter())
        .find(|def| def.source == s.id && def.def.name == name)
        .unwrap()
        .line
        .unwrap();
    let next = lines
        .iter()
        .find(|l| **l > me)
        .copied()
        .unwrap_or(usize::MAX);
    (me, next.saturating_sub(1).max(me + 1))
}

#[test]
fn disabling_in_zed_writes_enabled_false_inside_the_entry_and_keeps_comments() {
    let f = fixture_home();
    let (lo, hi) = entry_lines(&f, "zed-user", "zed-user-only");
    let (before, after) = edit_confined(
        &f,
        "zed-user",
        ServerEdit::SetEnabled {
            name: "zed-user-only".into(),
            enabled: false,
        },
        lo,
        hi,
    );
    assert_eq!(
        before.matches("//").count(),
        after.matches("//").count(),
        "comments kept"
    );
    assert!(
        !f.discover_trusted()
            .server("zed-user-only")
            .unwrap()
            .winner
            .def
            .enabled
    );
}

#[test]
fn disabling_in_cline_writes_disabled_true() {
    let f = fixture_home();
    let (lo, hi) = entry_lines(&f, "cline", "cline-only");
    let (_, after) = edit_confined(
        &f,
        "cline",
        ServerEdit::SetEnabled {
            name: "cline-only".into(),
            enabled: false,
        },
        lo,
        hi,
    );
    assert!(after.contains("\"disabled\": true"));
    assert!(
        !f.discover_trusted()
            .server("cline-only")
            .unwrap()
            .winner
            .def
            .enabled
    );
    // Enabling again removes the flag instead of writing `disabled: false`.
    let (lo, hi) = entry_lines(&f, "cline", "cline-only");
    edit_confined(
        &f,
        "cline",
        ServerEdit::SetEnabled {
            name: "cline-only".into(),
            enabled: true,
        },
        lo,
        hi,
    );
    assert!(
        f.discover_trusted()
            .server("cline-only")
            .unwrap()
            .winner
            .def
            .enabled
    );
}

#[test]
fn disabling_in_codex_writes_enabled_false_in_its_table() {
    let f = fixture_home();
    let (lo, hi) = entry_lines(&f, "codex-user", "codex-user-only");
    let (before, after) = edit_confined(
        &f,
        "codex-user",
        ServerEdit::SetEnabled {
            name: "codex-user-only".into(),
            enabled: false,
        },
        lo,
        hi,
    );
    assert!(after.contains("enabled = false"), "{after}");
    assert_eq!(
        before.matches('#').count(),
        after.matches('#').count(),
        "comments kept"
    );
    assert!(
        !f.discover_trusted()
            .server("codex-user-only")
            .unwrap()
            .winner
            .def
            .enabled
    );
}

#[test]
fn disabling_in_claude_desktop_parks_the_entry_and_enabling_restores_it() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let s = spec(&d, "claude-desktop");
    let original = std::fs::read_to_string(&s.path).unwrap();
    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .apply(
            &s,
            ServerEdit::SetEnabled {
                name: "obsidian".into(),
                enabled: false,
            },
            None,
        )
        .unwrap();
    let parked = std::fs::read_to_string(&s.path).unwrap();
    assert!(
        !parked.contains("\"obsidian\""),
        "Claude Desktop has no off switch: the entry leaves its file"
    );
    assert!(parked.contains("globalShortcut"), "keys we do not own stay");
    let d = f.discover_trusted();
    let ob = d
        .server("obsidian")
        .expect("a parked server is still listed");
    assert!(!ob.winner.def.enabled && ob.winner.parked);
    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .apply(
            &s,
            ServerEdit::SetEnabled {
                name: "obsidian".into(),
                enabled: true,
            },
            None,
        )
        .unwrap();
    let restored = std::fs::read_to_string(&s.path).unwrap();
    let v = |t: &str| {
        serde_json::from_str::<serde_json::Value>(t).unwrap()["mcpServers"]["obsidian"].clone()
    };
    assert_eq!(v(&restored), v(&original), "the entry comes back unchanged");
    assert!(f.settings().parked.is_empty());
    assert!(
        f.discover_trusted()
            .server("obsidian")
            .unwrap()
            .winner
            .def
            .enabled
    );
}

#[test]
fn gemini_enablement_lives_outside_the_entry() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let s = spec(&d, "gemini-user");
    let settings_before = std::fs::read_to_string(&s.path).unwrap();
    let mut settings = f.settings();
    let mut w = Writer::new(&f.host, &mut settings);
    w.apply(
        &s,
        ServerEdit::SetEnabled {
            name: "gemini-user-only".into(),
            enabled: false,
        },
        None,
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&s.path).unwrap(),
        settings_before,
        "settings.json untouched"
    );
    w.apply(
        &s,
        ServerEdit::SetEnabled {
            name: "gemini-off".into(),
            enabled: true,
        },
        None,
    )
    .unwrap();
    w.apply(
        &s,
        ServerEdit::SetEnabled {
            name: "gemini-excluded".into(),
            enabled: true,
        },
        None,
    )
    .unwrap();
    let d = f.discover_trusted();
    assert!(!d.server("gemini-user-only").unwrap().winner.def.enabled);
    assert!(d.server("gemini-off").unwrap().winner.def.enabled);
    assert!(
        d.server("gemini-excluded").unwrap().winner.def.enabled,
        "removed from mcp.excluded"
    );
}

#[test]
fn project_mcp_json_servers_use_claude_codes_approval_lists() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let s = spec(&d, "claude-code-project");
    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .apply(
            &s,
            ServerEdit::SetEnabled {
                name: "mcpjson-rejected".into(),
                enabled: true,
            },
            None,
        )
        .unwrap();
    Writer::new(&f.host, &mut settings)
        .apply(
            &s,
            ServerEdit::SetEnabled {
                name: "claude-code-project-only".into(),
                enabled: false,
            },
            None,
        )
        .unwrap();
    let d = f.discover_trusted();
    assert!(d.server("mcpjson-rejected").unwrap().winner.def.enabled);
    assert!(
        !d.server("claude-code-project-only")
            .unwrap()
            .winner
            .def
            .enabled
    );
    let claude: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.home.join(".claude.json")).unwrap())
            .unwrap();
    let p = &claude["projects"][f.project.to_str().unwrap()];
    assert_eq!(
        p["disabledMcpjsonServers"],
        serde_json::json!(["claude-code-project-only"])
    );
}

#[test]
fn updating_a_server_in_claude_json_keeps_every_other_byte() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let mut def = d.server("fetch").unwrap().winner.def.clone();
    def.args.push("--ignore-robots-txt".into());
    def.env.insert("FETCH_UA".into(), "switchboard".into());
    let (lo, hi) = entry_lines(&f, "claude-code-user", "fetch");
    let (_, after) = edit_confined(
        &f,
        "claude-code-user",
        ServerEdit::Update {
            name: "fetch".into(),
            def,
        },
        lo,
        hi,
    );
    assert!(after.contains("numStartups"), "Claude Code's own keys stay");
    let got = f
        .discover_trusted()
        .server("fetch")
        .unwrap()
        .winner
        .def
        .clone();
    assert_eq!(got.args.last().unwrap(), "--ignore-robots-txt");
    assert_eq!(got.env["FETCH_UA"], "switchboard");
}

#[test]
fn renaming_in_vscode_keeps_the_entry_bytes() {
    let f = fixture_home();
    let (lo, hi) = entry_lines(&f, "vscode-user", "perplexity");
    let (before, after) = edit_confined(
        &f,
        "vscode-user",
        ServerEdit::Rename {
            from: "perplexity".into(),
            to: "perplexity-ask".into(),
        },
        lo,
        lo,
    );
    let _ = hi;
    assert_eq!(
        before.len() + "-ask".len(),
        after.len(),
        "only the key changed"
    );
    let d = f.discover_trusted();
    assert!(d.server("perplexity").is_none());
    assert_eq!(
        d.server("perplexity-ask").unwrap().winner.source,
        "vscode-user"
    );
}

#[test]
fn adding_twice_gives_the_exact_error() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let s = spec(&d, "switchboard");
    let mut settings = f.settings();
    let def = ServerDef::stdio("time", "uvx", &["mcp-server-time"]);
    Writer::new(&f.host, &mut settings)
        .apply(&s, ServerEdit::Add(def.clone()), None)
        .unwrap();
    let err = Writer::new(&f.host, &mut settings)
        .apply(&s, ServerEdit::Add(def), None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("Server \"time\" already exists in {}", s.path.display())
    );
    assert_eq!(
        f.discover_trusted().server("time").unwrap().winner.source,
        "switchboard"
    );
}

#[test]
fn invalid_definitions_are_refused_with_the_spec_prefix() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let s = spec(&d, "switchboard");
    let before = std::fs::read(&s.path).unwrap();
    let mut settings = f.settings();
    let mut both = ServerDef::stdio("both", "npx", &[]);
    both.url = Some("https://x.example/mcp".into());
    for bad in [
        ServerDef::stdio("bad name", "npx", &[]),
        both,
        ServerDef::remote("nourl", Transport::Http, "ftp://x"),
    ] {
        let e = Writer::new(&f.host, &mut settings)
            .apply(&s, ServerEdit::Add(bad), None)
            .unwrap_err();
        assert!(e.to_string().starts_with("Invalid server config: "), "{e}");
    }
    assert_eq!(std::fs::read(&s.path).unwrap(), before, "nothing written");
}

#[test]
fn copying_to_codex_writes_codex_fields() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let (from, to) = (spec(&d, "cursor-user"), spec(&d, "codex-user"));
    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .copy_server(&from, &to, "browsermcp", false)
        .unwrap();
    let toml = std::fs::read_to_string(&to.path).unwrap();
    assert!(toml.contains("[mcp_servers.browsermcp]"), "{toml}");
    let d = f.discover_trusted();
    let defs = &d.server("browsermcp").unwrap().definitions;
    assert_eq!(defs.len(), 2, "copied, the original stays");
    assert_eq!(defs[0].def.command, defs[1].def.command);
    assert_eq!(defs[0].def.args, defs[1].def.args);
}

#[test]
fn moving_removes_the_original() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let (from, to) = (spec(&d, "windsurf"), spec(&d, "switchboard"));
    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .copy_server(&from, &to, "deepwiki", true)
        .unwrap();
    let d = f.discover_trusted();
    let s = d.server("deepwiki").unwrap();
    assert_eq!(s.winner.source, "switchboard");
    assert!(s.shadowed.is_empty());
    assert_eq!(
        s.winner.def.url.as_deref(),
        Some("https://mcp.deepwiki.com/mcp")
    );
}

#[test]
fn yaml_lists_and_managed_files_are_refused_and_untouched() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let mut settings = f.settings();
    for (id, name, code) in [
        ("continue", "continue-only", "unsupported"),
        ("claude-code-managed", "security-scanner", "read-only"),
    ] {
        let s = spec(&d, id);
        let before = std::fs::read(&s.path).unwrap();
        let e: EditError = Writer::new(&f.host, &mut settings)
            .apply(
                &s,
                ServerEdit::SetEnabled {
                    name: name.into(),
                    enabled: false,
                },
                None,
            )
            .unwrap_err();
        assert_eq!(e.code(), code, "{e}");
        assert!(
            e.to_string().contains(&s.path.display().to_string()),
            "names the file: {e}"
        );
        assert_eq!(std::fs::read(&s.path).unwrap(), before);
    }
}

#[test]
fn a_file_changed_since_discovery_is_not_overwritten() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let s = spec(&d, "cursor-user");
    let seen = d.source("cursor-user").unwrap().hash;
    // Another app saves the file after we read it.
    let external = std::fs::read_to_string(&s.path)
        .unwrap()
        .replace("browsermcp", "browser-mcp");
    std::fs::write(&s.path, &external).unwrap();
    let mut settings = f.settings();
    let e = Writer::new(&f.host, &mut settings)
        .apply(
            &s,
            ServerEdit::Remove {
                name: "cursor-user-only".into(),
            },
            seen,
        )
        .unwrap_err();
    assert_eq!(e.code(), "conflict", "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "{} changed since you opened it; your edit was not saved",
            s.path.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&s.path).unwrap(),
        external,
        "the other app's save survives"
    );
}

#[test]
fn adding_to_a_missing_switchboard_file_creates_it() {
    let dir = tempfile::tempdir().unwrap();
    let host = switchboard_engine::host::Host {
        os: switchboard_engine::host::Os::Linux,
        home: dir.path().to_path_buf(),
        vars: Default::default(),
        system_root: dir.path().join("sys"),
    };
    let s = switchboard_engine::sources::switchboard_source(&host);
    assert!(!s.path.exists());
    let mut settings = Default::default();
    Writer::new(&host, &mut settings)
        .apply(
            &s,
            ServerEdit::Add(ServerDef::remote(
                "docs",
                Transport::Http,
                "https://d.example/mcp",
            )),
            None,
        )
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&s.path).unwrap()).unwrap();
    assert_eq!(v["mcpServers"]["docs"]["url"], "https://d.example/mcp");
}
