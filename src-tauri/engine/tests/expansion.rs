//! Expansion only where the client expands (issue 11, point 8): a server is
//! launched with exactly what its own client would have given it. Real
//! files of each client are discovered, real children are started through
//! the manager, and each child writes down the environment it received.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indexmap::IndexMap;
use serde_json::json;
use switchboard_engine::auth::secrets::SecretResolver;
use switchboard_engine::config::vars::{Expansion, VarContext};
use switchboard_engine::discovery::{discover, DiscoverOptions, Discovery};
use switchboard_engine::events::ServerStatus;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
use switchboard_engine::settings::Settings;
use switchboard_engine::sources::{project_sources, switchboard_source, user_sources, Client};
use switchboard_tests::fixture_server_path;

/// A machine with one variable set that several configs refer to, and one
/// whose *name* is written as a literal value.
struct Machine {
    _dir: tempfile::TempDir,
    host: Host,
    project: PathBuf,
    out: PathBuf,
}

fn machine() -> Machine {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = home.join("proj");
    let out = dir.path().join("out");
    for d in [&home, &project, &out] {
        std::fs::create_dir_all(d).unwrap();
    }
    let vars: HashMap<String, String> = [
        ("HOME", home.to_str().unwrap()),
        ("SB_EXP_VAR", "from-env"),
        ("API_KEY", "sk-from-env"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let host = Host {
        os: Os::Linux,
        home,
        vars,
        system_root: dir.path().join("system"),
    };
    Machine {
        _dir: dir,
        host,
        project,
        out,
    }
}

impl Machine {
    fn user_path(&self, id: &str) -> PathBuf {
        user_sources(&self.host)
            .into_iter()
            .find(|s| s.id == id)
            .unwrap()
            .path
    }
    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    fn discover(&self) -> Discovery {
        let settings = Settings::load(&self.host).0;
        discover(
            &self.host,
            &settings,
            &DiscoverOptions {
                extra_projects: vec![self.project.clone()],
            },
        )
    }
    /// `sh -c` that writes its environment to `out/<name>.env`, then becomes
    /// the fixture server. No `$` in it: Gemini would expand one.
    fn env_dumping_args(&self, name: &str) -> Vec<String> {
        // Written whole, then renamed: a reader never sees half an
        // environment, even if a server were started twice.
        let out = self.out.join(format!("{name}.env"));
        let launches = self.out.join(format!("{name}.launches"));
        let script = format!(
            "echo launched >> '{l}'; env > '{o}.tmp' && mv '{o}.tmp' '{o}'; exec '{}' --name {name}",
            fixture_server_path().display(),
            l = launches.display(),
            o = out.display()
        );
        vec!["-c".into(), script]
    }
    fn child_env(&self, name: &str) -> HashMap<String, String> {
        let text = std::fs::read_to_string(self.out.join(format!("{name}.env")))
            .unwrap_or_else(|e| panic!("{name} wrote no environment: {e}"));
        let launches = std::fs::read_to_string(self.out.join(format!("{name}.launches")))
            .unwrap_or_default()
            .lines()
            .count();
        assert_eq!(launches, 1, "{name} was started {launches} times");
        let env: HashMap<String, String> = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        // The marker every server gets tells that this is the whole environment.
        assert!(
            env.contains_key("SWITCHBOARD_OWNER"),
            "{name}'s environment is incomplete:\n{text}"
        );
        env
    }
}

/// One stdio server entry in the JSON shape shared by these clients.
fn json_server(m: &Machine, name: &str, env: serde_json::Value) -> serde_json::Value {
    json!({ "command": "/bin/sh", "args": m.env_dumping_args(name), "env": env })
}

fn write_configs(m: &Machine) {
    // Codex: interpolates nothing.
    let args = m
        .env_dumping_args("codex-lit")
        .iter()
        .map(|a| format!("{a:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    m.write(
        &m.user_path("codex-user"),
        &format!(
            r#"[mcp_servers.codex-lit]
command = "/bin/sh"
args = [{args}]
env = {{ PASSWORD = "!echo pwned", TOKEN = "API_KEY", BRACED = "${{API_KEY}}", PREFIXED = "${{env:API_KEY}}" }}
"#
        ),
    );
    // Claude Code, project `.mcp.json`: `${VAR}` and `${VAR:-default}` only.
    let mcp_json = project_sources(&m.host, &m.project)
        .into_iter()
        .find(|s| s.id.starts_with("claude-code-project"))
        .unwrap()
        .path;
    let cc = json!({ "mcpServers": { "cc-vars": json_server(m, "cc-vars", json!({
        "DEFAULTED": "${SB_UNSET_EXP:-x}",
        "SET": "${SB_EXP_VAR}",
        "PASSWORD": "!echo pwned",
        "TOKEN": "API_KEY",
        "PREFIXED": "${env:SB_EXP_VAR}",
    })) } });
    m.write(&mcp_json, &cc.to_string());
    // Approved in Claude Code, which runs a project's `.mcp.json` servers only then.
    m.write(
        &m.project.join(".claude/settings.local.json"),
        r#"{"enabledMcpjsonServers": ["cc-vars"]}"#,
    );
    // VS Code: `${env:VAR}`, `${userHome}`, … but no bare `${VAR}`.
    let vs = json!({ "servers": { "vscode-vars": json_server(m, "vscode-vars", json!({
        "FROM_ENV": "${env:SB_EXP_VAR}",
        "BRACED": "${SB_EXP_VAR}",
        "HOME_DIR": "${userHome}",
        "PASSWORD": "!echo pwned",
        "TOKEN": "API_KEY",
    })) } });
    m.write(&m.user_path("vscode-user"), &vs.to_string());
    // Gemini CLI: `$VAR` and `${VAR}`.
    let gem = json!({ "mcpServers": { "gemini-vars": json_server(m, "gemini-vars", json!({
        "DOLLAR": "$SB_EXP_VAR",
        "BRACED": "${SB_EXP_VAR}",
        "PASSWORD": "!echo pwned",
    })) } });
    m.write(&m.user_path("gemini-user"), &gem.to_string());
    // Switchboard's own file: every form and both secret forms.
    let sb = json!({ "mcpServers": { "sb-vars": json_server(m, "sb-vars", json!({
        "RAN": "!echo ran",
        "NAMED": "API_KEY",
        "DEFAULTED": "${SB_UNSET_EXP:-x}",
        "PREFIXED": "${env:SB_EXP_VAR}",
        "BRACED": "${SB_EXP_VAR}",
        "DOLLAR": "$SB_EXP_VAR",
    })) } });
    m.write(&switchboard_source(&m.host).path, &sb.to_string());
}

#[tokio::test]
async fn each_child_gets_what_its_own_client_would_give_it() -> anyhow::Result<()> {
    let m = machine();
    write_configs(&m);
    let d = m.discover();
    let wanted = Wanted::from_discovery(&d);
    let names = [
        "codex-lit",
        "cc-vars",
        "vscode-vars",
        "gemini-vars",
        "sb-vars",
    ];
    for n in names {
        assert!(
            wanted.iter().any(|w| w.def.name == n),
            "{n} not discovered: {:?}",
            d.errors
        );
    }
    let manager = Manager::new(ManagerOptions {
        cache_path: None,
        default_timeout: Duration::from_secs(20),
        grace: Duration::from_millis(500),
        ..ManagerOptions::for_host(&m.host)
    });
    manager.start(wanted).await;
    manager.settle().await;
    for n in names {
        let st = manager.state(n).unwrap();
        assert_eq!(
            st.status,
            ServerStatus::Connected,
            "{n}: {:?} {:?}",
            st.last_error,
            st.warnings
        );
    }

    let codex = m.child_env("codex-lit");
    assert_eq!(
        codex["PASSWORD"], "!echo pwned",
        "Codex: `!cmd` is a literal password, never run"
    );
    assert_eq!(
        codex["TOKEN"], "API_KEY",
        "Codex: a variable's name is a literal"
    );
    assert_eq!(codex["BRACED"], "${API_KEY}", "Codex interpolates nothing");
    assert_eq!(
        codex["PREFIXED"], "${env:API_KEY}",
        "Codex interpolates nothing"
    );

    let cc = m.child_env("cc-vars");
    assert_eq!(cc["DEFAULTED"], "x", "Claude Code: ${{VAR:-default}}");
    assert_eq!(cc["SET"], "from-env", "Claude Code: ${{VAR}}");
    assert_eq!(
        cc["PASSWORD"], "!echo pwned",
        "Claude Code does not run commands"
    );
    assert_eq!(
        cc["TOKEN"], "API_KEY",
        "Claude Code does not resolve bare names"
    );
    // Claude Code reads `${env:SB_EXP_VAR}` as a variable named
    // `env:SB_EXP_VAR`, which is not set: left out, with a warning.
    assert!(!cc.contains_key("PREFIXED"), "{:?}", cc.get("PREFIXED"));
    let cc_warnings = manager.state("cc-vars").unwrap().warnings;
    assert!(
        cc_warnings
            .iter()
            .any(|w| w.contains("env PREFIXED resolved to nothing")),
        "{cc_warnings:?}"
    );

    let vs = m.child_env("vscode-vars");
    assert_eq!(vs["FROM_ENV"], "from-env", "VS Code: ${{env:VAR}}");
    assert_eq!(
        vs["BRACED"], "${SB_EXP_VAR}",
        "VS Code has no bare ${{VAR}}"
    );
    assert_eq!(
        vs["HOME_DIR"],
        m.host.home.to_str().unwrap(),
        "VS Code: ${{userHome}}"
    );
    assert_eq!(vs["PASSWORD"], "!echo pwned");
    assert_eq!(vs["TOKEN"], "API_KEY");

    let gem = m.child_env("gemini-vars");
    assert_eq!(gem["DOLLAR"], "from-env", "Gemini: $VAR");
    assert_eq!(gem["BRACED"], "from-env", "Gemini: ${{VAR}}");
    assert_eq!(gem["PASSWORD"], "!echo pwned");

    let sb = m.child_env("sb-vars");
    assert_eq!(sb["RAN"], "ran", "Switchboard's own file runs `!cmd`");
    assert_eq!(
        sb["NAMED"], "sk-from-env",
        "Switchboard's own file resolves a bare variable name"
    );
    assert_eq!(sb["DEFAULTED"], "x");
    assert_eq!(sb["PREFIXED"], "from-env");
    assert_eq!(sb["BRACED"], "from-env");
    assert_eq!(sb["DOLLAR"], "$SB_EXP_VAR", "`$VAR` is Gemini's form only");

    manager.shutdown().await;
    Ok(())
}

/// Headers take the path `prepare_launch` takes: the winner's own rules
/// through `SecretResolver::resolve_map_in`.
#[tokio::test]
async fn codex_headers_are_literal_except_its_env_named_ones() -> anyhow::Result<()> {
    let m = machine();
    m.write(
        &m.user_path("codex-user"),
        r#"[mcp_servers.figma]
url = "https://mcp.figma.example.com/mcp"
bearer_token_env_var = "SB_EXP_VAR"
http_headers = { "X-Api-Key" = "API_KEY", "X-Pass" = "!echo pwned", "X-Lit" = "Bearer ${SB_EXP_VAR}" }
env_http_headers = { "X-From-Env" = "API_KEY", "X-Unset" = "SB_UNSET_EXP" }
"#,
    );
    let d = m.discover();
    let figma = &d.server("figma").unwrap().winner;
    assert_eq!(figma.expansion, Client::Codex.expansion());
    let cx = VarContext {
        env: m.host.vars.clone(),
        expansion: figma.expansion,
        ..Default::default()
    };
    let (headers, warnings) = SecretResolver::with_env(m.host.vars.clone())
        .resolve_map_in("header", &figma.def.headers, &cx)
        .await;
    assert_eq!(
        headers["X-Api-Key"], "API_KEY",
        "a variable's name in http_headers is a literal"
    );
    assert_eq!(headers["X-Pass"], "!echo pwned", "never run");
    assert_eq!(
        headers["X-Lit"], "Bearer ${SB_EXP_VAR}",
        "http_headers are sent as written"
    );
    assert_eq!(
        headers["X-From-Env"], "sk-from-env",
        "env_http_headers name a variable"
    );
    assert_eq!(
        headers["Authorization"], "Bearer from-env",
        "bearer_token_env_var names a variable"
    );
    assert!(!headers.contains_key("X-Unset"));
    assert_eq!(
        warnings,
        ["header X-Unset resolved to nothing (unresolved ${SB_UNSET_EXP})"]
    );
    Ok(())
}

/// The same raw headers under each client's rules.
#[tokio::test]
async fn header_values_per_client() -> anyhow::Result<()> {
    let env: HashMap<String, String> = [("API_KEY", "sk-from-env"), ("TOKEN", "t0k")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let r = SecretResolver::with_env(env.clone());
    let raw: IndexMap<String, String> = [
        ("X-Named", "API_KEY"),
        ("X-Cmd", "!echo pwned"),
        ("X-Braced", "Bearer ${TOKEN}"),
        ("X-Env", "Bearer ${env:TOKEN}"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let resolve = |e: Expansion| {
        let cx = VarContext {
            env: env.clone(),
            expansion: e,
            ..Default::default()
        };
        let r = &r;
        let raw = &raw;
        async move { r.resolve_map_in("header", raw, &cx).await }
    };
    let (h, _) = resolve(Expansion::SWITCHBOARD).await;
    assert_eq!(
        (
            &h["X-Named"][..],
            &h["X-Cmd"][..],
            &h["X-Braced"][..],
            &h["X-Env"][..]
        ),
        ("sk-from-env", "pwned", "Bearer t0k", "Bearer t0k")
    );
    let (h, w) = resolve(Client::ClaudeCode.expansion()).await;
    assert_eq!(
        (&h["X-Named"][..], &h["X-Cmd"][..], &h["X-Braced"][..]),
        ("API_KEY", "!echo pwned", "Bearer t0k")
    );
    assert!(
        !h.contains_key("X-Env")
            && w == ["header X-Env resolved to nothing (unresolved ${env:TOKEN})"],
        "{w:?}"
    );
    let (h, w) = resolve(Client::Cursor.expansion()).await;
    assert_eq!(
        (
            &h["X-Named"][..],
            &h["X-Cmd"][..],
            &h["X-Braced"][..],
            &h["X-Env"][..]
        ),
        ("API_KEY", "!echo pwned", "Bearer ${TOKEN}", "Bearer t0k")
    );
    assert!(w.is_empty(), "{w:?}");
    for client in [
        Client::ClaudeDesktop,
        Client::Zed,
        Client::Cline,
        Client::Goose,
        Client::Lmstudio,
        Client::Continue,
        Client::Fallback,
    ] {
        let (h, w) = resolve(client.expansion()).await;
        assert_eq!(h, raw, "{client:?} expands nothing");
        assert!(w.is_empty(), "{client:?}: {w:?}");
    }
    Ok(())
}

/// VS Code prompts for `${input:id}`; Switchboard cannot, and says so
/// instead of sending the placeholder or calling it a missing variable.
#[tokio::test]
async fn vscode_inputs_are_reported_as_needing_input() -> anyhow::Result<()> {
    let m = machine();
    let vs = json!({
        "inputs": [{ "type": "promptString", "id": "api-key", "password": true }],
        "servers": { "needs-key": { "command": "npx", "args": ["srv", "${input:api-key}"], "env": { "KEY": "${input:api-key}" } } }
    });
    m.write(&m.user_path("vscode-user"), &vs.to_string());
    let d = m.discover();
    let w = &d.server("needs-key").unwrap().winner;
    assert_eq!(w.warnings.len(), 2, "{:?}", w.warnings);
    for warning in &w.warnings {
        assert!(
            warning.contains("${input:api-key} needs input") && !warning.contains("not set"),
            "{warning}"
        );
    }
    let cx = VarContext {
        env: m.host.vars.clone(),
        expansion: w.expansion,
        ..Default::default()
    };
    let (env, warnings) = SecretResolver::with_env(m.host.vars.clone())
        .resolve_map_in("env", &w.def.env, &cx)
        .await;
    assert!(env.is_empty(), "the placeholder is not sent as the key");
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].starts_with("env KEY resolved to nothing (${input:api-key} needs input"),
        "{}",
        warnings[0]
    );
    Ok(())
}

/// "Test connection" in the app tests a definition as it would run from the
/// file it is being saved to: a Codex server's `!cmd` stays text there too.
#[test]
fn a_definition_is_tested_with_its_target_clients_rules() {
    let m = machine();
    write_configs(&m);
    let engine =
        switchboard_engine::engine::Engine::new(m.host.clone(), ManagerOptions::default(), vec![]);
    engine.rediscover();
    let def = switchboard_engine::config::ServerDef::stdio("probe", "true", &[]);
    assert_eq!(
        engine.wanted_for(def.clone(), Some("codex-user")).expansion,
        Client::Codex.expansion()
    );
    let codex = engine.wanted_for(def.clone(), Some("codex-user")).expansion;
    assert!(
        !codex.commands && !codex.env_names && !codex.braced,
        "Codex runs no !cmd and expands no ${{VAR}}: {codex:?}"
    );
    assert_eq!(
        engine.wanted_for(def.clone(), None).expansion,
        Expansion::SWITCHBOARD
    );
    assert_eq!(
        engine.wanted_for(def, Some("no-such-source")).expansion,
        Expansion::SWITCHBOARD
    );
}

/// A secret kept in the keychain (`${keychain:NAME}` in an env or header
/// value of Switchboard's own file, as installs write it) is read at launch:
/// no "is not set" warning. In an argument, or in a client's file, it is
/// still literal text and still warned about.
#[test]
fn keychain_references_in_switchboards_env_and_headers_are_not_unresolved() {
    use switchboard_engine::config::ServerDef;
    use switchboard_engine::discovery::unresolved_warnings;
    let cx = |expansion| VarContext {
        env: HashMap::new(),
        workspace_folder: None,
        user_home: None,
        inputs: HashMap::new(),
        expansion,
    };
    let mut def = ServerDef::stdio("hello", "node", &["${keychain:hello.key}"]);
    def.env
        .insert("API_KEY".into(), "${keychain:hello.api_key}".into());
    def.env
        .insert("OTHER".into(), "${SB_SURELY_UNSET_VAR}".into());
    let fields = |w: Vec<(String, String)>| w.into_iter().map(|(f, _)| f).collect::<Vec<_>>();
    assert_eq!(
        fields(unresolved_warnings(&def, &cx(Expansion::SWITCHBOARD))),
        ["args[0]", "env.OTHER"]
    );
    let claude = Client::ClaudeCode.expansion();
    let warned = fields(unresolved_warnings(&def, &cx(claude)));
    assert!(warned.contains(&"env.API_KEY".to_string()), "{warned:?}");
}
