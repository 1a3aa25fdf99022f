//! Discovery over the fixture machine (tests/fixtures, see EXPECTED.md):
//! winners, shadowed definitions, warnings and errors as a user sees them.

mod common;

use common::fixture_home;
use switchboard_engine::config::Transport;
use switchboard_engine::discovery::Discovery;

fn winner(d: &Discovery, name: &str) -> String {
    d.server(name)
        .unwrap_or_else(|| panic!("server {name} missing"))
        .winner
        .source
        .split('@')
        .next()
        .unwrap()
        .to_string()
}

fn shadowed(d: &Discovery, name: &str) -> Vec<String> {
    d.server(name)
        .unwrap()
        .shadowed
        .iter()
        .map(|s| s.source.split('@').next().unwrap().to_string())
        .collect()
}

#[test]
fn every_server_has_the_expected_winner() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let expected = [
        ("switchboard-only", "switchboard"),
        ("github", "switchboard"),
        ("linear", "switchboard"),
        ("sentry", "switchboard"),
        ("claude-code-managed-only", "claude-code-managed"),
        ("codex-managed-only", "codex-managed"),
        ("gemini-system-only", "gemini-system"),
        ("claude-code-local-only", "claude-code-local"),
        ("project-db", "claude-code-local"),
        ("claude-code-project-only", "claude-code-project"),
        ("cursor-project-only", "cursor-project"),
        ("vscode-project-only", "vscode-project"),
        ("zed-project-only", "zed-project"),
        ("roo-project-only", "roo-project"),
        ("gemini-project-only", "gemini-project"),
        ("codex-project-only", "codex-project"),
        ("claude-code-user-only", "claude-code-user"),
        ("filesystem", "claude-code-user"),
        ("claude-desktop-only", "claude-desktop"),
        ("broken-top", "cursor-user"),
        ("codex-user-only", "codex-user"),
        ("gemini-user-only", "gemini-user"),
        ("remote-docs", "gemini-user"),
        ("cursor-user-only", "cursor-user"),
        ("windsurf-only", "windsurf"),
        ("zed-user-only", "zed-user"),
        ("cline-only", "cline"),
        ("roo-user-only", "roo-user"),
        ("vscode-user-only", "vscode-user"),
        ("goose-only", "goose"),
        ("continue-only", "continue"),
        ("fallback-only", "fallback"),
    ];
    for (name, source) in expected {
        assert_eq!(winner(&d, name), source, "winner of {name}");
    }
    assert!(
        d.server("lmstudio-only").is_none(),
        "a malformed file contributes nothing"
    );
    assert!(
        d.server("other-project-server").is_none(),
        "servers of projects never added stay out"
    );
    assert!(
        d.server("developer").is_none(),
        "goose builtins are not MCP servers"
    );
    assert!(d.errors.is_empty(), "no global errors: {:?}", d.errors);
}

#[test]
fn shadowed_definitions_are_kept_in_priority_order() {
    let f = fixture_home();
    let d = f.discover_trusted();
    assert_eq!(
        shadowed(&d, "github"),
        ["claude-desktop", "cursor-user", "vscode-user"]
    );
    assert_eq!(
        shadowed(&d, "filesystem"),
        ["cursor-user", "windsurf", "zed-user", "continue"]
    );
    assert_eq!(
        shadowed(&d, "project-db"),
        ["claude-code-project", "cursor-project"]
    );
    assert_eq!(shadowed(&d, "remote-docs"), ["windsurf", "cline"]);
    let rd = d.server("remote-docs").unwrap();
    assert_eq!(
        rd.shadowed[0].transport,
        Transport::Sse,
        "windsurf's remote-docs is sse"
    );
    assert_eq!(
        rd.shadowed[1].transport,
        Transport::Http,
        "cline's streamableHttp is http"
    );
}

#[test]
fn an_invalid_top_definition_does_not_hide_a_valid_one() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let s = d.server("broken-top").unwrap();
    assert_eq!(s.winner.source, "cursor-user");
    assert!(s.winner.errors.is_empty());
    let skipped = &s.shadowed[0];
    assert_eq!(skipped.source, "claude-desktop");
    assert!(
        skipped.errors[0].contains("claude_desktop_config.json:")
            && skipped.errors[0].contains("both \"command\" and \"url\""),
        "the skipped entry's error names file, line and the problem: {:?}",
        skipped.errors
    );
    assert!(
        s.winner
            .warnings
            .iter()
            .any(|w| w.contains("invalid and was skipped")),
        "{:?}",
        s.winner.warnings
    );
}

#[test]
fn disabled_servers_are_listed_disabled_each_in_its_clients_way() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let mut off: Vec<&str> = d
        .servers
        .iter()
        .filter(|s| !s.winner.def.enabled)
        .map(|s| s.name())
        .collect();
    off.sort();
    let mut want = vec![
        "sentry",
        "mcpjson-rejected",
        "playwright-codex",
        "gemini-off",
        "gemini-excluded",
        "slack",
        "disabled-one",
        "aws-kb-retrieval",
        "browser-tools",
        "goose-disabled",
    ];
    want.sort();
    assert_eq!(off, want);
}

#[test]
fn transports_follow_each_clients_spelling() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let t = |n: &str| d.server(n).unwrap().winner.def.transport;
    assert_eq!(
        t("claude-code-user-only"),
        Transport::Http,
        "streamable-http alias"
    );
    assert_eq!(
        t("cline-legacy-sse"),
        Transport::Sse,
        "Cline url without type"
    );
    assert_eq!(t("remote-docs"), Transport::Http, "Gemini httpUrl");
    assert_eq!(t("cloud-run-tools"), Transport::Sse, "Gemini url");
    assert_eq!(t("deepwiki"), Transport::Http, "Windsurf serverUrl");
    assert_eq!(t("goose-remote"), Transport::Http, "goose streamable_http");
    assert_eq!(t("continue-sse"), Transport::Sse);
    assert_eq!(t("zed-remote"), Transport::Http);
    let goose = &d.server("goose-only").unwrap().winner.def;
    assert_eq!(goose.command.as_deref(), Some("uvx"), "goose cmd");
    assert_eq!(goose.timeout, Some(300_000), "goose timeout is seconds");
    assert_eq!(
        d.server("zed-user-only").unwrap().winner.def.timeout,
        Some(120_000),
        "Zed timeout is ms"
    );
    assert_eq!(
        d.server("cline-only").unwrap().winner.def.timeout,
        Some(120_000),
        "Cline timeout is seconds"
    );
    assert_eq!(
        d.server("sqlite-codex").unwrap().winner.def.timeout,
        Some(15_000),
        "Codex startup_timeout_ms"
    );
    assert_eq!(
        d.server("codex-user-only").unwrap().winner.def.timeout,
        Some(20_000),
        "Codex startup_timeout_sec"
    );
}

#[test]
fn warnings_name_file_line_server_and_field() {
    let f = fixture_home();
    let d = f.discover_trusted();
    let bt = &d.server("bad-timeout").unwrap().winner;
    assert_eq!(bt.def.timeout, None);
    let w = &bt.warnings[0];
    assert!(
        w.contains(".cursor/mcp.json:")
            && w.contains("\"bad-timeout\"")
            && w.contains("\"timeout\""),
        "{w}"
    );
    let vd = &d.server("vars-demo").unwrap().winner;
    // Cursor's own syntax only: `${FIXTURE_UNSET_VAR:-fallback}` (env
    // WITH_DEFAULT) is text to Cursor, not an unresolved variable.
    assert_eq!(vd.warnings.len(), 1, "{:?}", vd.warnings);
    assert!(
        vd.warnings[0].contains("${env:FIXTURE_DEFINITELY_UNSET}")
            && vd.warnings[0].contains("env.MISSING")
    );
    assert_eq!(
        vd.def.env["MISSING"], "${env:FIXTURE_DEFINITELY_UNSET}",
        "raw strings are kept"
    );
    let lm = d.source("lmstudio").unwrap();
    assert!(lm.exists);
    assert!(
        lm.warnings[0].contains(".lmstudio/mcp.json:4"),
        "file and line of the syntax error: {:?}",
        lm.warnings
    );
    let px = &d.server("perplexity").unwrap().winner.warnings;
    assert_eq!(px.len(), 1, "{px:?}");
    assert!(
        px[0].contains("${input:perplexity-key} needs input") && !px[0].contains("is not set"),
        "VS Code inputs need input, they are not missing variables: {px:?}"
    );
}

#[test]
fn an_unset_token_variable_warns_on_every_definition_using_it() {
    let mut f = fixture_home();
    f.host.vars.remove("GITHUB_TOKEN");
    let d = f.discover_trusted();
    let gh = &d.server("github").unwrap().winner;
    assert!(
        gh.warnings.iter().any(|w| w.contains("${GITHUB_TOKEN}")),
        "{:?}",
        gh.warnings
    );
}

#[test]
fn project_sources_need_trust() {
    let f = fixture_home();
    let trusted = f.discover_trusted();
    let untrusted = f.discover_untrusted();
    assert_eq!(trusted.servers.len() - untrusted.servers.len(), 12);
    assert!(untrusted.server("project-db").is_none());
    assert!(untrusted.sources.iter().all(|s| s.project.is_none()));
}

#[test]
fn saved_priority_changes_the_winner() {
    let f = fixture_home();
    let mut settings = f.settings();
    // Drag Cursor above everything (the UI saves the whole order): it now
    // wins `github` and `filesystem`.
    let before = f.discover_untrusted();
    settings.priority = std::iter::once("cursor-user".to_string())
        .chain(
            before
                .sources
                .iter()
                .map(|s| s.id.clone())
                .filter(|id| id != "cursor-user"),
        )
        .collect();
    let d = switchboard_engine::discovery::discover(&f.host, &settings, &Default::default());
    assert_eq!(d.sources[0].id, "cursor-user");
    assert_eq!(d.sources[1].id, "switchboard");
    assert_eq!(winner(&d, "github"), "cursor-user");
    assert_eq!(winner(&d, "filesystem"), "cursor-user");
    assert_eq!(shadowed(&d, "github")[0], "switchboard");
}

#[test]
fn json_output_has_the_documented_shape() {
    let f = fixture_home();
    let v = serde_json::to_value(f.discover_trusted()).unwrap();
    let src = &v["sources"][0];
    for k in [
        "id", "client", "level", "path", "format", "exists", "readOnly", "priority", "warnings",
    ] {
        assert!(src.get(k).is_some(), "source field {k}");
    }
    let gh = v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "github")
        .unwrap();
    for k in [
        "name",
        "transport",
        "enabled",
        "source",
        "path",
        "command",
        "args",
        "errors",
        "warnings",
        "shadowed",
    ] {
        assert!(gh.get(k).is_some(), "server field {k}");
    }
    assert_eq!(gh["shadowed"][0]["source"], "claude-desktop");
    assert!(gh["path"].as_str().unwrap().starts_with('/'));
}

#[test]
fn a_missing_home_yields_sources_that_do_not_exist_and_no_servers() {
    let dir = tempfile::tempdir().unwrap();
    let host = switchboard_engine::host::Host {
        os: switchboard_engine::host::Os::Linux,
        home: dir.path().join("nobody"),
        vars: Default::default(),
        system_root: dir.path().join("sys"),
    };
    let d =
        switchboard_engine::discovery::discover(&host, &Default::default(), &Default::default());
    assert!(d.servers.is_empty());
    assert!(d.sources.iter().all(|s| !s.exists));
    assert!(d.errors.is_empty());
}

#[test]
fn a_newly_trusted_project_slots_in_after_its_default_predecessor() {
    let f = fixture_home();
    let mut settings = f.settings();
    let before = f.discover_untrusted();
    // A saved order from before the project was trusted, with Cursor on top.
    settings.priority = std::iter::once("cursor-user".to_string())
        .chain(
            before
                .sources
                .iter()
                .map(|s| s.id.clone())
                .filter(|id| id != "cursor-user"),
        )
        .collect();
    let opts = switchboard_engine::discovery::DiscoverOptions {
        extra_projects: vec![f.project.clone()],
    };
    let d = switchboard_engine::discovery::discover(&f.host, &settings, &opts);
    let ids: Vec<&str> = d
        .sources
        .iter()
        .map(|s| s.id.split('@').next().unwrap())
        .collect();
    let at = |id: &str| ids.iter().position(|x| *x == id).unwrap();
    assert_eq!(at("cursor-user"), 0);
    assert_eq!(
        at("claude-code-local"),
        at("codex-managed") + 1,
        "project sources follow the managed ones: {ids:?}"
    );
    assert_eq!(at("fallback"), ids.len() - 1, "the fallback stays last");
}
