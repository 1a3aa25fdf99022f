//! Sharing a profile (issue 28, point 5): export writes the profile and its
//! servers' definitions with every secret as a reference; import on another
//! home shows what it adds, what is missing there and which secrets to
//! enter, refuses bad documents naming the field (writing nothing), and
//! writes servers and profile as one history entry. Real files in temporary
//! homes; the CLI tests run the built `switchboard`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::{json, Value};
use switchboard_engine::auth::vault::{MemoryBackend, Vault};
use switchboard_engine::config::ServerDef;
use switchboard_engine::discovery::{discover, DiscoverOptions, Discovery};
use switchboard_engine::host::{Host, Os};
use switchboard_engine::launch::CommandResolver;
use switchboard_engine::profile::{ProfileServer, ToolRule};
use switchboard_engine::profile_share::{
    self, ImportOptions, ImportPreview, ProfileDocument, SecretKind, ServerAction, ShareError,
};
use switchboard_engine::settings::Settings;
use switchboard_engine::sources::Dialect;
use switchboard_engine::writer::history::History;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

// Secret values of the exporting machine: none may leave it.
const GH: &str = "ghp_Sb7TestTokenValue0123456789abcdEF";
const SEARCH_KEY: &str = "sk-live-SbTestSearchKey0123456789";
const URL_PASSWORD: &str = "pw-SbTestUrlPassword";
const BEARER: &str = "tok-9f8e7d6c5b4a3210";
const SLACK: &str = "xoxb-1234567890-SbTestSlackTokenValue";
const NOTES_KEY: &str = "k-SbTestNotesKey";
const CLIENT_SECRET: &str = "cs-SbTestClientSecret-42";
const ENV_VALUE: &str = "sk-SbTestEnvValue0123456789abcdef";
const COMMAND: &str = "pass show db";
const SECRETS: &[&str] = &[
    GH,
    SEARCH_KEY,
    URL_PASSWORD,
    BEARER,
    SLACK,
    NOTES_KEY,
    CLIENT_SECRET,
    ENV_VALUE,
    COMMAND,
];

/// A home folder of its own: Switchboard's own file, Cursor's, settings.
struct Machine {
    _dir: tempfile::TempDir,
    host: Host,
}

impl Machine {
    fn new() -> Machine {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut vars = HashMap::new();
        vars.insert("HOME".to_string(), home.to_string_lossy().to_string());
        let host = Host {
            os: Os::Linux,
            home,
            vars,
            system_root: dir.path().join("system"),
        };
        Machine { _dir: dir, host }
    }

    fn own_file(&self) -> PathBuf {
        self.host.home.join(".config/switchboard/servers.json")
    }

    fn write(&self, rel: &str, v: Value) {
        let p = self.host.home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }

    fn own_servers(&self, servers: Value) {
        self.write(
            ".config/switchboard/servers.json",
            json!({ "mcpServers": servers }),
        );
    }

    fn settings(&self) -> Settings {
        Settings::load(&self.host).0
    }

    fn discover(&self) -> Discovery {
        discover(&self.host, &self.settings(), &DiscoverOptions::default())
    }

    /// Every file under the home, by path, with its bytes.
    fn files(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else {
                    out.insert(p.clone(), std::fs::read(&p).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.host.home, &mut out);
        out
    }

    fn preview(&self, text: &str, opts: &ImportOptions) -> Result<ImportPreview, ShareError> {
        profile_share::preview(
            &self.host,
            &self.settings(),
            &self.discover(),
            text,
            opts,
            &resolver(),
        )
    }

    fn import(
        &self,
        text: &str,
        opts: &ImportOptions,
        values: &BTreeMap<String, String>,
        vault: Option<&Vault>,
    ) -> Result<profile_share::ImportReport, ShareError> {
        let mut settings = self.settings();
        profile_share::import(
            &self.host,
            &mut settings,
            &self.discover(),
            text,
            opts,
            &resolver(),
            values,
            vault,
        )
    }
}

/// This machine's PATH (`sh` and friends are found; the fixture's absolute
/// `/nonexistent-…/npx` is not).
fn resolver() -> CommandResolver {
    CommandResolver::new(std::env::var_os("PATH"), None, None)
}

/// The exporting machine: servers in Switchboard's own file and Cursor's,
/// with secrets written every way, and a profile "Work" with tool rules.
fn exporter() -> Machine {
    let mut m = Machine::new();
    m.host
        .vars
        .insert("OPENAI_API_KEY".to_string(), ENV_VALUE.to_string());
    m.own_servers(json!({
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": GH, "DEBUG": "true" }
        },
        "search": {
            "type": "http",
            "url": format!("https://bob:{URL_PASSWORD}@search.example/mcp?api_key={SEARCH_KEY}&region=eu"),
            "headers": { "Authorization": format!("Bearer {BEARER}"), "X-Client": "switchboard" }
        },
        "db": {
            "command": "/nonexistent-sb-test/bin/npx",
            "args": ["db-mcp"],
            "env": {
                "DB_PASSWORD": format!("!{COMMAND}"),
                "OPENAI_API_KEY": "OPENAI_API_KEY",
                "KEPT": "${keychain:db.KEPT}"
            }
        },
        "remote": {
            "type": "http",
            "url": "https://remote.example/mcp",
            "oauth": { "clientId": "sb-client", "clientSecret": CLIENT_SECRET }
        },
        "other": { "command": "sh", "args": ["-c", "true"] }
    }));
    m.write(
        ".cursor/mcp.json",
        json!({ "mcpServers": { "notes": {
            "command": "uvx",
            "args": ["notes-mcp", format!("--token={SLACK}"), "--api-key", NOTES_KEY],
            "env": { "NOTES_TOKEN": "${env:NOTES_TOKEN}", "LOG_LEVEL": "info" }
        } } }),
    );
    switchboard_engine::profiles::change(&m.host, |p| {
        p.create("Work")?.servers = work_servers();
        Ok(())
    })
    .unwrap();
    m
}

fn work_servers() -> Vec<ProfileServer> {
    let s = |name: &str, tools: Option<ToolRule>| ProfileServer {
        name: name.into(),
        tools,
    };
    vec![
        s("github", Some(ToolRule::Deny(vec!["delete_repo".into()]))),
        s("search", Some(ToolRule::Allow(vec!["search".into()]))),
        s("db", None),
        s("remote", None),
        s("notes", None),
    ]
}

fn export_work(m: &Machine) -> ProfileDocument {
    profile_share::export(&m.host, &m.settings(), &m.discover(), "Work").expect("export Work")
}

fn no_values() -> BTreeMap<String, String> {
    BTreeMap::new()
}

/// `text` with `f` applied to its JSON.
fn edited(text: &str, f: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    f(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

/// Import `text` into a fresh home: refused with a message containing
/// every one of `wants`, and the home's files exactly as they were.
fn refused_on_fresh_home(text: &str, opts: &ImportOptions, wants: &[&str]) -> String {
    let m = Machine::new();
    m.own_servers(json!({ "mine": { "command": "sh" } }));
    let before = m.files();
    let preview = m.preview(text, opts);
    let err = m
        .import(text, opts, &no_values(), None)
        .expect_err("the import should be refused");
    let msg = err.to_string();
    assert_eq!(
        preview.err().map(|e| e.to_string()),
        Some(msg.clone()),
        "the preview refuses it the same way"
    );
    for w in wants {
        assert!(msg.contains(w), "the refusal should mention {w:?}: {msg}");
    }
    assert_eq!(m.files(), before, "nothing was written: {msg}");
    msg
}

#[test]
fn the_exported_document_holds_no_secret_value() {
    let m = exporter();
    let text = export_work(&m).to_text();
    for s in SECRETS {
        assert!(
            !text.contains(s),
            "the value {s:?} is in the exported document:\n{text}"
        );
    }
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["switchboardProfile"], 1, "format marker and version");
    assert_eq!(
        v["servers"]["github"]["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "${keychain:github.GITHUB_PERSONAL_ACCESS_TOKEN}",
        "a literal token becomes a keychain reference"
    );
    assert_eq!(
        v["servers"]["github"]["env"]["DEBUG"], "true",
        "plain values stay"
    );
    assert_eq!(
        v["servers"]["search"]["headers"]["Authorization"],
        "Bearer ${keychain:search.header.Authorization}",
        "the scheme stays, the token goes"
    );
    assert_eq!(v["servers"]["search"]["headers"]["X-Client"], "switchboard");
    assert_eq!(
        v["servers"]["search"]["url"],
        "https://bob:${SEARCH_PASSWORD}@search.example/mcp?api_key=${SEARCH_API_KEY}&region=eu",
        "URL parts become variables (URLs are expanded from the environment only)"
    );
    assert_eq!(
        v["servers"]["db"]["env"],
        json!({ "DB_PASSWORD": "${keychain:db.DB_PASSWORD}", "OPENAI_API_KEY": "${OPENAI_API_KEY}", "KEPT": "${keychain:db.KEPT}" }),
        "a command and a bare variable name become references; references stay"
    );
    assert_eq!(
        v["servers"]["notes"]["args"],
        json!([
            "notes-mcp",
            "--token=${keychain:notes.token}",
            "--api-key",
            "${keychain:notes.api-key}"
        ]),
        "flag values judged by the flag's name"
    );
    assert_eq!(
        v["servers"]["notes"]["env"]["NOTES_TOKEN"], "${env:NOTES_TOKEN}",
        "a reference stays as written"
    );
    assert!(
        v["servers"]["remote"]["oauth"]
            .get("clientSecret")
            .is_none(),
        "an OAuth client secret is never written"
    );
    assert!(
        v["servers"].get("other").is_none(),
        "only the profile's servers: {v}"
    );
    assert_eq!(
        v["profile"]["servers"][0],
        json!({ "name": "github", "tools": { "deny": ["delete_repo"] } }),
        "tool rules travel with the profile"
    );
}

#[test]
fn the_secrets_section_names_what_the_importer_enters() {
    let m = exporter();
    let doc = export_work(&m);
    let listed: Vec<(String, String, Option<String>)> = doc
        .secrets
        .iter()
        .map(|s| (s.server.clone(), s.field.clone(), s.reference.clone()))
        .collect();
    let want = |server: &str, field: &str, reference: Option<&str>| {
        (
            server.to_string(),
            field.to_string(),
            reference.map(String::from),
        )
    };
    for w in [
        want(
            "github",
            "env.GITHUB_PERSONAL_ACCESS_TOKEN",
            Some("${keychain:github.GITHUB_PERSONAL_ACCESS_TOKEN}"),
        ),
        want(
            "search",
            "headers.Authorization",
            Some("${keychain:search.header.Authorization}"),
        ),
        want("search", "url", Some("${SEARCH_PASSWORD}")),
        want("search", "url", Some("${SEARCH_API_KEY}")),
        want("db", "env.DB_PASSWORD", Some("${keychain:db.DB_PASSWORD}")),
        want("db", "env.OPENAI_API_KEY", Some("${OPENAI_API_KEY}")),
        want("db", "env.KEPT", Some("${keychain:db.KEPT}")),
        want("remote", "oauth.clientSecret", None),
        want("notes", "args[1]", Some("${keychain:notes.token}")),
        want("notes", "args[3]", Some("${keychain:notes.api-key}")),
        want("notes", "env.NOTES_TOKEN", Some("${env:NOTES_TOKEN}")),
    ] {
        assert!(listed.contains(&w), "{w:?} missing from {listed:?}");
    }
    assert_eq!(
        listed.len(),
        11,
        "nothing else is listed (DEBUG, X-Client, LOG_LEVEL are not secrets): {listed:?}"
    );
}

#[test]
fn keychain_names_are_the_ones_installs_and_keychain_keep_use() {
    assert_eq!(
        switchboard_engine::registry::install::keychain_name("search", "header.Authorization"),
        "search.header.Authorization"
    );
    let m = exporter();
    let doc = export_work(&m);
    for s in &doc.secrets {
        if let Some(r) = s
            .reference
            .as_deref()
            .filter(|r| r.starts_with("${keychain:"))
        {
            let key = s
                .field
                .strip_prefix("env.")
                .or_else(|| s.field.strip_prefix("headers."));
            if let Some(key) = key {
                let label = if s.field.starts_with("headers.") {
                    format!("header.{key}")
                } else {
                    key.to_string()
                };
                assert_eq!(
                    r,
                    switchboard_engine::registry::install::keychain_ref(
                        &switchboard_engine::registry::install::keychain_name(&s.server, &label)
                    ),
                    "{s:?}"
                );
            }
        }
    }
}

#[test]
fn export_then_import_on_a_fresh_home_reproduces_the_profile_and_its_servers() {
    let m = exporter();
    let doc = export_work(&m);
    let text = doc.to_text();
    let fresh = Machine::new();
    let report = fresh
        .import(&text, &ImportOptions::default(), &no_values(), None)
        .expect("import on a fresh home");
    assert_eq!(report.preview.profile.as_deref(), Some("Work"));
    assert!(
        report
            .preview
            .servers
            .iter()
            .all(|s| s.action == ServerAction::Add),
        "every server is new there: {:?}",
        report.preview.servers
    );
    let settings = fresh.settings();
    let work = settings.profiles.get("Work").expect("the profile is made");
    assert_eq!(
        work.servers,
        work_servers(),
        "same servers, same order, same tool rules"
    );
    let d = fresh.discover();
    for (name, entry) in &doc.servers {
        let s = d
            .server(name)
            .unwrap_or_else(|| panic!("{name} is defined on the fresh home"));
        assert_eq!(
            s.winner.source, "switchboard",
            "{name} went to Switchboard's own file"
        );
        let want = Dialect::Switchboard.parse_entry(name, entry).def;
        assert_eq!(
            s.winner.def, want,
            "{name}: the definition the document gives"
        );
    }
    // Exported again from there: the same document (references in place of
    // secrets), but for the OAuth app secret, which stayed behind.
    let again = export_work(&fresh);
    assert_eq!(again.profile, doc.profile);
    assert_eq!(again.servers, doc.servers);
    let own = std::fs::read_to_string(fresh.own_file()).unwrap();
    for s in SECRETS {
        assert!(
            !own.contains(s),
            "{s:?} reached the importing machine's file"
        );
    }
    let history = History::for_host(&fresh.host).list();
    assert_eq!(
        history.len(),
        1,
        "one history entry for the whole import: {history:?}"
    );
    assert_eq!(report.history_id, Some(history[0].id));
    assert!(
        history[0].summary.contains("import profile \"Work\""),
        "{}",
        history[0].summary
    );
    assert_eq!(
        history[0].files.len(),
        2,
        "servers.json and settings.json: {:?}",
        history[0].files
    );
    History::for_host(&fresh.host)
        .undo(Some(history[0].id))
        .expect("undo the import");
    assert!(
        fresh.settings().profiles.get("Work").is_none(),
        "undo takes the profile back"
    );
}

#[test]
fn everything_exports_every_enabled_server_and_imports_them_without_a_profile() {
    let m = exporter();
    let doc = profile_share::export(&m.host, &m.settings(), &m.discover(), "everything")
        .expect("export Everything");
    let names: Vec<&str> = doc.servers.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["github", "search", "db", "remote", "other", "notes"],
        "every enabled server, in discovery's order"
    );
    let text = doc.to_text();
    for s in SECRETS {
        assert!(!text.contains(s), "{s:?} in the Everything export");
    }
    let fresh = Machine::new();
    let r = fresh
        .import(&text, &ImportOptions::default(), &no_values(), None)
        .expect("import Everything");
    assert_eq!(
        r.preview.profile, None,
        "the servers join Everything; no profile is made"
    );
    assert!(fresh.settings().profiles.list.is_empty());
    assert_eq!(fresh.discover().servers.len(), 6);
    let named = Machine::new();
    named
        .import(
            &text,
            &ImportOptions {
                as_name: Some("Laptop".into()),
                replace: false,
            },
            &no_values(),
            None,
        )
        .expect("import Everything as a profile");
    assert_eq!(
        named
            .settings()
            .profiles
            .get("Laptop")
            .unwrap()
            .servers
            .len(),
        6
    );
}

#[test]
fn a_profile_naming_a_server_that_is_gone_is_not_exported() {
    let m = exporter();
    switchboard_engine::profiles::change(&m.host, |p| {
        p.editable("Work")?.add(&["vanished".to_string()]);
        Ok(())
    })
    .unwrap();
    let err = profile_share::export(&m.host, &m.settings(), &m.discover(), "Work")
        .expect_err("a missing server is not dropped silently");
    assert!(err.to_string().contains("\"vanished\""), "{err}");
}

#[test]
fn the_preview_writes_nothing_and_says_what_is_missing_and_what_to_enter() {
    let m = exporter();
    let text = export_work(&m).to_text();
    let fresh = Machine::new();
    let before = fresh.files();
    let p = fresh
        .preview(&text, &ImportOptions::default())
        .expect("preview");
    assert_eq!(fresh.files(), before, "a preview writes nothing");
    assert!(p.writes);
    for m in &p.missing_runtimes {
        assert!(
            resolver().resolve(&m.program, None).is_err() || !Path::new(&m.program).exists(),
            "{} is reported missing but is here",
            m.program
        );
    }
    let missing = p
        .missing_runtimes
        .iter()
        .find(|m| m.server == "db")
        .expect("db's program is missing here");
    assert_eq!(
        (missing.server.as_str(), missing.program.as_str()),
        ("db", "/nonexistent-sb-test/bin/npx")
    );
    assert_eq!(
        missing.runtime.as_deref(),
        Some("Node.js"),
        "named by the doctor's hints"
    );
    assert!(missing.install.contains("Node.js"), "{}", missing.install);
    let kinds: Vec<(&str, SecretKind)> = p
        .secrets
        .iter()
        .map(|s| (s.name.as_str(), s.kind))
        .collect();
    for want in [
        ("github.GITHUB_PERSONAL_ACCESS_TOKEN", SecretKind::Keychain),
        ("search.header.Authorization", SecretKind::Keychain),
        ("SEARCH_API_KEY", SecretKind::Variable),
        ("SEARCH_PASSWORD", SecretKind::Variable),
        ("OPENAI_API_KEY", SecretKind::Variable),
        ("NOTES_TOKEN", SecretKind::Variable),
        ("notes.token", SecretKind::Keychain),
        ("remote.oauth.clientSecret", SecretKind::OauthAppSecret),
    ] {
        assert!(kinds.contains(&want), "{want:?} missing from {kinds:?}");
    }
}

#[test]
fn a_missing_program_without_a_known_runtime_gets_a_plain_hint() {
    let fresh = Machine::new();
    let text = json!({
        "switchboardProfile": 1,
        "profile": { "name": "Odd", "servers": [{ "name": "odd" }] },
        "servers": { "odd": { "command": "sb-test-program-that-is-not-installed" } }
    })
    .to_string();
    let p = fresh
        .preview(&text, &ImportOptions::default())
        .expect("preview");
    assert_eq!(p.missing_runtimes.len(), 1);
    assert_eq!(p.missing_runtimes[0].runtime, None);
    assert!(p.missing_runtimes[0]
        .install
        .contains("sb-test-program-that-is-not-installed"));
}

#[test]
fn secrets_entered_at_import_go_to_the_keychain_and_unknown_ones_are_refused() {
    let m = exporter();
    let text = export_work(&m).to_text();
    let fresh = Machine::new();
    let backend = Arc::new(MemoryBackend::default());
    let vault = Vault::new(backend.clone());
    let mut bad = BTreeMap::new();
    bad.insert("nobody.NOTHING".to_string(), "x".to_string());
    let before = fresh.files();
    let err = fresh
        .import(&text, &ImportOptions::default(), &bad, Some(&vault))
        .expect_err("a value for no secret");
    assert!(err.to_string().contains("nobody.NOTHING"), "{err}");
    assert_eq!(fresh.files(), before, "nothing written");
    assert!(backend.dump().is_empty(), "nothing kept");
    let mut values = BTreeMap::new();
    values.insert(
        "github.GITHUB_PERSONAL_ACCESS_TOKEN".to_string(),
        "ghp_enteredOnTheNewMachine0123456789".to_string(),
    );
    values.insert(
        "remote.oauth.clientSecret".to_string(),
        "entered-client-secret".to_string(),
    );
    let r = fresh
        .import(&text, &ImportOptions::default(), &values, Some(&vault))
        .expect("import with secrets");
    assert_eq!(
        r.kept,
        [
            "github.GITHUB_PERSONAL_ACCESS_TOKEN",
            "remote.oauth.clientSecret"
        ]
    );
    assert_eq!(
        vault
            .secret("github.GITHUB_PERSONAL_ACCESS_TOKEN")
            .unwrap()
            .as_deref(),
        Some("ghp_enteredOnTheNewMachine0123456789")
    );
    assert_eq!(
        vault.app_secret("remote").unwrap().as_deref(),
        Some("entered-client-secret")
    );
    assert!(
        !r.to_enter
            .iter()
            .any(|s| s.name == "github.GITHUB_PERSONAL_ACCESS_TOKEN"),
        "entered secrets are not listed as still to enter"
    );
    for (path, bytes) in fresh.files() {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("ghp_enteredOnTheNewMachine") && !text.contains("entered-client-secret"),
            "an entered secret is in {}",
            path.display()
        );
    }
}

#[test]
fn the_same_server_here_is_reused_and_keeps_its_own_secret() {
    let m = exporter();
    let text = export_work(&m).to_text();
    let fresh = Machine::new();
    fresh.own_servers(json!({
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_TheImportersOwnToken0123456789", "DEBUG": "true" }
        }
    }));
    let p = fresh
        .preview(&text, &ImportOptions::default())
        .expect("preview");
    let github = p.servers.iter().find(|s| s.name == "github").unwrap();
    assert_eq!(
        github.action,
        ServerAction::Reuse,
        "the same definition once its secret is a reference"
    );
    fresh
        .import(&text, &ImportOptions::default(), &no_values(), None)
        .expect("import");
    let own = std::fs::read_to_string(fresh.own_file()).unwrap();
    assert!(
        own.contains("ghp_TheImportersOwnToken0123456789"),
        "the importer's own definition is kept as it was:\n{own}"
    );
}

#[test]
fn a_different_server_here_is_a_conflict_written_only_with_replace() {
    let m = exporter();
    let text = export_work(&m).to_text();
    let fresh = Machine::new();
    fresh.own_servers(json!({ "github": { "command": "docker", "args": ["run", "gh"] } }));
    let p = fresh
        .preview(&text, &ImportOptions::default())
        .expect("preview");
    assert_eq!(p.conflicts, ["github"]);
    let github = p.servers.iter().find(|s| s.name == "github").unwrap();
    assert_eq!(github.action, ServerAction::Conflict);
    assert!(
        github
            .existing
            .as_deref()
            .is_some_and(|e| e.contains("servers.json")),
        "{github:?}"
    );
    let before = fresh.files();
    let err = fresh
        .import(&text, &ImportOptions::default(), &no_values(), None)
        .expect_err("a conflict is not overwritten");
    assert!(
        err.to_string().contains("\"github\"") && err.to_string().contains("--replace"),
        "{err}"
    );
    assert_eq!(fresh.files(), before, "nothing written");
    let replace = ImportOptions {
        as_name: None,
        replace: true,
    };
    let r = fresh
        .import(&text, &replace, &no_values(), None)
        .expect("import with --replace");
    assert!(r
        .preview
        .servers
        .iter()
        .any(|s| s.name == "github" && s.action == ServerAction::Replace));
    let def: ServerDef = fresh
        .discover()
        .server("github")
        .unwrap()
        .winner
        .def
        .clone();
    assert_eq!(
        def.command.as_deref(),
        Some("npx"),
        "the document's definition replaced it"
    );
}

// ---- bad input ----------------------------------------------------------

fn good_text() -> String {
    export_work(&exporter()).to_text()
}

#[test]
fn not_json_is_refused() {
    refused_on_fresh_home(
        "{ this is not json",
        &ImportOptions::default(),
        &["not a Switchboard profile document", "not JSON", "line 1"],
    );
}

#[test]
fn a_document_without_the_marker_is_refused() {
    let text = edited(&good_text(), |v| {
        v.as_object_mut().unwrap().remove("switchboardProfile");
    });
    refused_on_fresh_home(
        &text,
        &ImportOptions::default(),
        &["\"switchboardProfile\" is missing"],
    );
    refused_on_fresh_home(
        "[1, 2, 3]",
        &ImportOptions::default(),
        &["not a Switchboard profile document", "it is a list"],
    );
}

#[test]
fn another_version_is_refused() {
    let text = edited(&good_text(), |v| v["switchboardProfile"] = json!(2));
    refused_on_fresh_home(
        &text,
        &ImportOptions::default(),
        &["\"switchboardProfile\" is 2", "version 1"],
    );
}

#[test]
fn a_file_over_the_cap_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(profile_share::MAX_DOCUMENT_BYTES + 1).unwrap();
    let err = profile_share::read_document(&big).expect_err("too big");
    assert!(err.to_string().contains("at most 4 MiB"), "{err}");
    refused_on_fresh_home(
        &" ".repeat(profile_share::MAX_DOCUMENT_BYTES as usize + 1),
        &ImportOptions::default(),
        &["at most 4 MiB"],
    );
}

#[test]
fn an_unknown_field_is_refused() {
    let text = edited(&good_text(), |v| v["values"] = json!({ "GITHUB": "x" }));
    refused_on_fresh_home(
        &text,
        &ImportOptions::default(),
        &["\"values\" is not a field of a profile document"],
    );
    let text = edited(&good_text(), |v| {
        v["servers"]["github"]["apiKey"] = json!("whatever")
    });
    refused_on_fresh_home(
        &text,
        &ImportOptions::default(),
        &["servers.github.apiKey is not a field"],
    );
}

#[test]
fn an_invalid_definition_is_refused_naming_the_field() {
    let text = edited(&good_text(), |v| {
        v["servers"]["github"]["url"] = json!("https://x.example/mcp")
    });
    refused_on_fresh_home(
        &text,
        &ImportOptions::default(),
        &["servers.github", "both \"command\" and \"url\""],
    );
    let text = edited(&good_text(), |v| {
        v["servers"]["search"]["url"] = json!("ftp://x")
    });
    refused_on_fresh_home(&text, &ImportOptions::default(), &["servers.search.url"]);
    let text = edited(&good_text(), |v| {
        v["servers"]["github"]["timeout"] = json!("soon")
    });
    refused_on_fresh_home(
        &text,
        &ImportOptions::default(),
        &["servers.github.timeout"],
    );
}

#[test]
fn an_invalid_or_taken_profile_name_is_refused_with_as() {
    let text = edited(&good_text(), |v| v["profile"]["name"] = json!("a/b"));
    refused_on_fresh_home(
        &text,
        &ImportOptions::default(),
        &[
            "profile.name",
            "\"a/b\" is not a profile name",
            "--as NEW-NAME",
        ],
    );
    let text = good_text();
    let m = Machine::new();
    switchboard_engine::profiles::change(&m.host, |p| {
        p.create("Work")?;
        Ok(())
    })
    .unwrap();
    let before = m.files();
    let err = m
        .import(&text, &ImportOptions::default(), &no_values(), None)
        .expect_err("the name is taken");
    assert!(
        err.to_string().contains("\"Work\" exists here already")
            && err.to_string().contains("--as NEW-NAME"),
        "{err}"
    );
    assert_eq!(m.files(), before, "nothing written");
    let opts = ImportOptions {
        as_name: Some("Work from laptop".into()),
        replace: false,
    };
    m.import(&text, &opts, &no_values(), None)
        .expect("imported under another name");
    assert_eq!(
        m.settings()
            .profiles
            .get("Work from laptop")
            .unwrap()
            .servers,
        work_servers()
    );
    refused_on_fresh_home(
        &text,
        &ImportOptions {
            as_name: Some("Everything".into()),
            replace: false,
        },
        &["--as", "built-in"],
    );
}

#[test]
fn a_profile_naming_an_unknown_server_is_refused() {
    let text = edited(&good_text(), |v| {
        v["servers"].as_object_mut().unwrap().remove("notes");
    });
    refused_on_fresh_home(
        &text,
        &ImportOptions::default(),
        &["profile.servers[4]", "\"notes\"", "not in \"servers\""],
    );
    let text = edited(&good_text(), |v| {
        v["servers"]["extra"] = json!({ "command": "sh" })
    });
    refused_on_fresh_home(
        &text,
        &ImportOptions::default(),
        &["servers.extra is not one of the profile's servers"],
    );
}

/// A change to an exported document, the message it must be refused with,
/// and the secret value that message must not repeat.
type SecretCase = (Box<dyn Fn(&mut Value)>, &'static str, &'static str);

#[test]
fn a_literal_secret_anywhere_is_refused_naming_field_and_server() {
    let cases: Vec<SecretCase> = vec![
        (
            Box::new(|v| v["servers"]["github"]["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"] = json!(GH)),
            "field env.GITHUB_PERSONAL_ACCESS_TOKEN of server \"github\" carries a secret value",
            GH,
        ),
        (
            Box::new(|v| {
                v["servers"]["search"]["headers"]["Authorization"] =
                    json!(format!("Bearer {BEARER}"))
            }),
            "field headers.Authorization of server \"search\" carries a secret value",
            BEARER,
        ),
        (
            Box::new(|v| {
                v["servers"]["search"]["url"] =
                    json!(format!("https://search.example/mcp?api_key={SEARCH_KEY}"))
            }),
            "field url of server \"search\" carries a secret value",
            SEARCH_KEY,
        ),
        (
            Box::new(|v| v["servers"]["notes"]["args"][1] = json!(format!("--token={SLACK}"))),
            "field args[1] of server \"notes\" carries a secret value",
            SLACK,
        ),
        (
            Box::new(|v| v["servers"]["remote"]["oauth"]["clientSecret"] = json!(CLIENT_SECRET)),
            "field oauth.clientSecret of server \"remote\" carries a secret value",
            CLIENT_SECRET,
        ),
        (
            Box::new(|v| v["servers"]["db"]["env"]["DB_PASSWORD"] = json!("!pass show db")),
            "field env.DB_PASSWORD of server \"db\" runs a command",
            "pass show db",
        ),
        (
            Box::new(|v| v["secrets"][0]["reference"] = json!(GH)),
            "secrets[0].reference",
            GH,
        ),
    ];
    let good = good_text();
    for (change, want, value) in cases {
        let text = edited(&good, change);
        let msg =
            refused_on_fresh_home(&text, &ImportOptions::default(), &[want, "references only"]);
        assert!(
            !msg.contains(value),
            "the refusal repeats the secret value: {msg}"
        );
    }
}

// ---- the CLI ------------------------------------------------------------

struct CliHome {
    dir: tempfile::TempDir,
}

impl CliHome {
    fn new(servers: Value) -> CliHome {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join(".config/switchboard/servers.json");
        std::fs::create_dir_all(own.parent().unwrap()).unwrap();
        std::fs::write(&own, json!({ "mcpServers": servers }).to_string()).unwrap();
        CliHome { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .env_clear()
            .env("HOME", self.path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SWITCHBOARD_SYSTEM_ROOT", self.path().join("sys"))
            .output()
            .unwrap()
    }
    fn files(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let m = Machine {
            _dir: tempfile::tempdir().unwrap(),
            host: Host {
                os: Os::Linux,
                home: self.path().to_path_buf(),
                vars: HashMap::new(),
                system_root: self.path().join("sys"),
            },
        };
        m.files()
    }
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn cli_export_then_import_yes_on_another_home() {
    let a = CliHome::new(json!({
        "github": { "command": "npx", "args": ["-y", "server-github"], "env": { "GITHUB_TOKEN": GH } },
        "odd": { "command": "sb-test-program-that-is-not-installed" }
    }));
    ok(&a.run(&["profile", "create", "Work", "github", "odd"]));
    let out = a.path().join("work.json");
    let o = a.run(&["profile", "export", "Work", "-o", out.to_str().unwrap()]);
    ok(&o);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains(GH), "the token is in the exported file");
    let stdout_export = ok(&a.run(&["profile", "export", "Work"]));
    assert_eq!(
        stdout_export, text,
        "without -o the document goes to stdout"
    );

    let b = CliHome::new(json!({}));
    let before = b.files();
    let preview = ok(&b.run(&["profile", "import", out.to_str().unwrap()]));
    assert_eq!(b.files(), before, "the preview writes nothing");
    for want in [
        "Profile \"Work\"",
        "github",
        "adds it",
        "sb-test-program-that-is-not-installed",
        "env.GITHUB_TOKEN = ${keychain:github.GITHUB_TOKEN}",
        "Nothing written; run again with --yes",
    ] {
        assert!(preview.contains(want), "{want:?} missing from:\n{preview}");
    }
    let json_preview: Value = serde_json::from_str(&ok(&b.run(&[
        "profile",
        "import",
        out.to_str().unwrap(),
        "--json",
    ])))
    .unwrap();
    assert_eq!(json_preview["profile"], "Work");
    assert_eq!(json_preview["missingRuntimes"][0]["server"], "odd");
    assert_eq!(json_preview["secrets"][0]["name"], "github.GITHUB_TOKEN");

    let done = ok(&b.run(&["profile", "import", out.to_str().unwrap(), "--yes"]));
    assert!(done.contains("Imported profile \"Work\""), "{done}");
    let list: Value = serde_json::from_str(&ok(&b.run(&["profile", "list", "--json"]))).unwrap();
    assert_eq!(
        list["profiles"][1]["servers"],
        json!(["github", "odd"]),
        "{list}"
    );
    let own = std::fs::read_to_string(b.path().join(".config/switchboard/servers.json")).unwrap();
    assert!(
        own.contains("${keychain:github.GITHUB_TOKEN}") && !own.contains(GH),
        "{own}"
    );
}

#[test]
fn cli_import_of_a_bad_file_fails_naming_the_field_and_writes_nothing() {
    let b = CliHome::new(json!({}));
    let bad = b.path().join("bad.json");
    std::fs::write(
        &bad,
        json!({
            "switchboardProfile": 1,
            "profile": { "name": "P", "servers": [{ "name": "gh" }] },
            "servers": { "gh": { "command": "npx", "env": { "GITHUB_TOKEN": GH } } }
        })
        .to_string(),
    )
    .unwrap();
    let before = b.files();
    let o = b.run(&["profile", "import", bad.to_str().unwrap(), "--yes"]);
    assert!(!o.status.success(), "a literal secret is refused");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("field env.GITHUB_TOKEN of server \"gh\" carries a secret value"),
        "{err}"
    );
    assert!(!err.contains(GH), "the error repeats the value: {err}");
    assert_eq!(b.files(), before, "nothing written");
    let o = b.run(&[
        "profile",
        "import",
        b.path().join("absent.json").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot read"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn refusals_of_malformed_parts_never_repeat_their_values() {
    for (change, want) in [
        (
            Box::new(|v: &mut Value| v["profile"]["servers"][0] = json!(GH))
                as Box<dyn Fn(&mut Value)>,
            "profile.servers[0] is not a profile's server",
        ),
        (
            Box::new(|v: &mut Value| v["secrets"][0] = json!([GH])),
            "secrets[0] is not a secret reference",
        ),
        (
            Box::new(|v: &mut Value| {
                v["servers"]["search"]["url"] = json!(format!("ftp://x.example/?token={GH}"))
            }),
            "field url of server \"search\" carries a secret value",
        ),
    ] {
        let msg = refused_on_fresh_home(
            &edited(&good_text(), change),
            &ImportOptions::default(),
            &[want],
        );
        assert!(!msg.contains(GH), "the refusal repeats the value: {msg}");
    }
}

#[tokio::test]
async fn the_engine_exports_previews_and_imports_for_the_app() {
    // Off, so that the engine starts nothing after the import.
    let m = Machine::new();
    m.own_servers(
        json!({ "quiet": { "command": "sh", "args": ["-c", "exit 0"], "enabled": false } }),
    );
    switchboard_engine::profiles::change(&m.host, |p| {
        p.create("Calm")?.add(&["quiet".to_string()]);
        Ok(())
    })
    .unwrap();
    let engine = switchboard_engine::engine::Engine::for_host(m.host.clone());
    let doc = engine
        .export_profile("Calm")
        .expect("export through the engine");
    assert_eq!(
        doc,
        profile_share::export(&m.host, &m.settings(), &m.discover(), "Calm").unwrap(),
        "the same document as the function's"
    );
    assert_eq!(doc.servers["quiet"]["enabled"], false, "off stays off");
    let fresh = Machine::new();
    let other = switchboard_engine::engine::Engine::for_host(fresh.host.clone());
    let before = fresh.files();
    let p = other
        .preview_import(doc.to_text(), ImportOptions::default())
        .await
        .expect("preview through the engine");
    assert_eq!(p.profile.as_deref(), Some("Calm"));
    assert_eq!(fresh.files(), before, "a preview writes nothing");
    let r = other
        .import_profile(doc.to_text(), ImportOptions::default(), BTreeMap::new())
        .await
        .expect("import through the engine");
    assert!(r.history_id.is_some());
    assert!(fresh.settings().profiles.get("Calm").is_some());
    assert!(
        other.snapshot().server("quiet").is_some(),
        "the engine's snapshot follows the import"
    );
    other.shutdown().await;
    engine.shutdown().await;
}

#[test]
fn cli_secrets_on_stdin_that_no_server_asks_for_are_refused_before_anything_is_kept() {
    let a = CliHome::new(json!({
        "github": { "command": "npx", "args": ["server-github"], "env": { "GITHUB_TOKEN": GH } }
    }));
    ok(&a.run(&["profile", "create", "Work", "github"]));
    let out = a.path().join("work.json");
    ok(&a.run(&["profile", "export", "Work", "-o", out.to_str().unwrap()]));
    let b = CliHome::new(json!({}));
    let before = b.files();
    let mut child = Command::new(BIN)
        .args([
            "profile",
            "import",
            out.to_str().unwrap(),
            "--yes",
            "--secrets-stdin",
        ])
        .env_clear()
        .env("HOME", b.path())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SWITCHBOARD_SYSTEM_ROOT", b.path().join("sys"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"nobody.NOTHING=v4lue-not-asked\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("nobody.NOTHING is not a secret this profile asks for")
            && err.contains("github.GITHUB_TOKEN"),
        "{err}"
    );
    assert!(!err.contains("v4lue-not-asked"), "{err}");
    assert_eq!(b.files(), before, "nothing written");
}
