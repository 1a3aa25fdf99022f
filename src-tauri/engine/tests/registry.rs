//! The MCP Registry client and the server.json → definition mapping
//! (issue 13), against the fixture registry (tests/src/bin/registry_server.rs
//! over tests/fixtures/registry): every package type and field, paging,
//! statuses, polite retries, the disk cache and offline answers, and
//! `${keychain:NAME}` resolved at launch.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use indexmap::IndexMap;
use switchboard_engine::auth::secrets::{Resolution, SecretResolver};
use switchboard_engine::auth::vault::{MemoryBackend, Vault};
use switchboard_engine::config::vars::{Expansion, VarContext};
use switchboard_engine::registry::client::{
    check_base_url, choose_base_url, RegistryClient, RegistryError, DEFAULT_REGISTRY,
};
use switchboard_engine::registry::install::{self, Choice, Secrets};
use switchboard_engine::registry::{ServerJson, ServerResponse};
use switchboard_tests::spawn_registry_server;

fn fixture(file: &str) -> ServerResponse {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/registry")
        .join(file);
    serde_json::from_slice(&std::fs::read(&p).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn server(file: &str) -> ServerJson {
    fixture(file).server
}

fn vals(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// What a definition runs or reaches, for the table.
fn line(def: &switchboard_engine::config::ServerDef) -> String {
    match &def.url {
        Some(u) => format!("{} {u}", def.transport.as_str()),
        None => std::iter::once(def.command.clone().unwrap_or_default())
            .chain(def.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

struct Row {
    file: &'static str,
    choice: Choice,
    values: &'static [(&'static str, &'static str)],
    /// The command line (argv joined by " | ") or "transport url"; or the error's text.
    expect: Result<&'static str, &'static str>,
    env: &'static [(&'static str, &'static str)],
    headers: &'static [(&'static str, &'static str)],
}

#[test]
fn every_package_type_and_field_maps_to_a_pinned_definition() {
    use Choice::*;
    let rows = [
        // npm (2025-12-11): fixed named arg, a choice, a required filepath positional, a secret and a defaulted choice env.
        Row {
            file: "weather-1.2.0.json",
            choice: Package { index: 0 },
            values: &[("env:WEATHER_API_KEY", "k-123"), ("arg:--name", "weather-slow"), ("arg:data_dir", "/data/w")],
            expect: Ok("npx | -y | @switchboard-fixtures/weather@1.2.0 | --require-env | WEATHER_API_KEY | --name | weather-slow | /data/w"),
            env: &[("WEATHER_API_KEY", "k-123"), ("WEATHER_UNITS", "metric")],
            headers: &[],
        },
        // A choice outside the list is refused, naming the field.
        Row {
            file: "weather-1.2.0.json",
            choice: Package { index: 0 },
            values: &[("env:WEATHER_API_KEY", "k"), ("arg:--name", "weather-turbo"), ("arg:data_dir", "/d")],
            expect: Err("invalid value for \"io.github.switchboard-fixtures/weather\": --name must be one of weather-fast, weather-slow"),
            env: &[],
            headers: &[],
        },
        // Missing required values: one error naming each.
        Row {
            file: "weather-1.2.0.json",
            choice: Package { index: 0 },
            values: &[],
            expect: Err("missing required values for \"io.github.switchboard-fixtures/weather\": name (argument; --arg name=…), data_dir (argument; --arg data_dir=…), WEATHER_API_KEY (env; --env WEATHER_API_KEY=…)"),
            env: &[],
            headers: &[],
        },
        // pypi → uvx pkg==version.
        Row {
            file: "weather-1.2.0.json",
            choice: Package { index: 1 },
            values: &[("env:WEATHER_API_KEY", "k")],
            expect: Ok("uvx | switchboard-fixtures-weather==1.2.0"),
            env: &[("WEATHER_API_KEY", "k")],
            headers: &[],
        },
        // remote with a header template and a secret variable in it.
        Row {
            file: "weather-1.2.0.json",
            choice: Remote { index: 0 },
            values: &[("header:Authorization/token", "tok")],
            expect: Ok("http https://weather.switchboard-fixtures.example/mcp"),
            env: &[],
            headers: &[("Authorization", "Bearer tok")],
        },
        // The 2025-09-29 schema reads the same.
        Row {
            file: "weather-1.0.0.json",
            choice: Package { index: 0 },
            values: &[("env:WEATHER_API_KEY", "k")],
            expect: Ok("npx | -y | @switchboard-fixtures/weather@1.0.0"),
            env: &[("WEATHER_API_KEY", "k")],
            headers: &[],
        },
        // oci: docker run -i --rm, runtime arg with a {variable}, -e per env var (no values on the command line), version as tag, choice default.
        Row {
            file: "toolbox-2.0.1.json",
            choice: Package { index: 0 },
            values: &[("rtarg:--mount/source_path", "/home/me/src"), ("env:TOOLBOX_TOKEN", "t0k")],
            expect: Ok("docker | run | -i | --rm | --mount | type=bind,src=/home/me/src,dst=/data | -e | TOOLBOX_TOKEN | -e | TOOLBOX_REGION | switchboard-fixtures/toolbox:2.0.1 | --log-level | info"),
            env: &[("TOOLBOX_TOKEN", "t0k"), ("TOOLBOX_REGION", "eu")],
            headers: &[],
        },
        // nuget: dnx pkg@version --yes -- args; a repeated positional; number and boolean defaults.
        Row {
            file: "toolbox-2.0.1.json",
            choice: Package { index: 1 },
            values: &[("arg:workspace", "/w/one\n/w/two"), ("arg:--verbose", "true")],
            expect: Ok("dnx | SwitchboardFixtures.Toolbox@2.0.1 | --yes | -- | /w/one | /w/two | --port | 8080 | --verbose | true"),
            env: &[],
            headers: &[],
        },
        Row {
            file: "toolbox-2.0.1.json",
            choice: Package { index: 1 },
            values: &[("arg:workspace", "/w"), ("arg:--port", "eighty")],
            expect: Err("invalid value for \"io.github.switchboard-fixtures/toolbox\": --port must be a number"),
            env: &[],
            headers: &[],
        },
        // mcpb: shown, not installable, and says why.
        Row {
            file: "toolbox-2.0.1.json",
            choice: Package { index: 2 },
            values: &[],
            expect: Err("\"io.github.switchboard-fixtures/toolbox\" cannot be installed this way: it is an MCP bundle (.mcpb)"),
            env: &[],
            headers: &[],
        },
        // A package that serves HTTP locally once started: not installable, says why.
        Row {
            file: "toolbox-2.0.1.json",
            choice: Package { index: 3 },
            values: &[],
            expect: Err("this package serves streamable-http on this computer once started"),
            env: &[],
            headers: &[],
        },
        // URL variables (2025-12-11), a secret header, a header choice with its default; and the sse remote.
        Row {
            file: "tenant-1.0.0.json",
            choice: Remote { index: 0 },
            values: &[("url:tenant_id", "acme"), ("header:X-Api-Key", "s3cret")],
            expect: Ok("http https://acme.api.example.com/mcp"),
            env: &[],
            headers: &[("X-Api-Key", "s3cret"), ("X-Region", "eu-west")],
        },
        Row {
            file: "tenant-1.0.0.json",
            choice: Remote { index: 1 },
            values: &[],
            expect: Ok("sse https://sse.example.com/events"),
            env: &[],
            headers: &[],
        },
        Row {
            file: "toolbox-2.0.1.json",
            choice: Remote { index: 0 },
            values: &[],
            expect: Err("\"io.github.switchboard-fixtures/toolbox\" has no remote 1"),
            env: &[],
            headers: &[],
        },
    ];
    for (i, r) in rows.iter().enumerate() {
        let s = server(r.file);
        let got = install::build(&s, r.choice, "x", &vals(r.values), &Secrets::Plain);
        match (&r.expect, got) {
            (Ok(want), Ok(b)) => {
                assert_eq!(line(&b.def), *want, "row {i} ({} {:?})", r.file, r.choice);
                let env: IndexMap<String, String> = r
                    .env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                assert_eq!(b.def.env, env, "row {i}: env");
                let headers: IndexMap<String, String> = r
                    .headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                assert_eq!(b.def.headers, headers, "row {i}: headers");
                assert!(
                    b.secrets.is_empty(),
                    "row {i}: Plain keeps nothing in the keychain"
                );
            }
            (Err(want), Err(e)) => assert!(
                e.to_string().contains(want),
                "row {i}: error {e} should contain {want}"
            ),
            (want, got) => panic!(
                "row {i} ({} {:?}): wanted {want:?}, got {got:?}",
                r.file, r.choice
            ),
        }
    }
}

#[test]
fn forms_describe_every_field_and_why_a_package_cannot_be_installed() {
    let s = server("weather-1.2.0.json");
    let forms = install::forms(&s);
    assert_eq!(forms.len(), 3, "two packages and one remote");
    let npm = &forms[0];
    assert_eq!(npm.runtime.as_deref(), Some("npx"));
    assert_eq!(npm.suggested_name, "weather");
    let ids: Vec<&str> = npm.fields.iter().map(|f| f.id.as_str()).collect();
    // The fixed `--require-env` argument is not a field; order is the command line's.
    assert_eq!(
        ids,
        [
            "arg:--name",
            "arg:data_dir",
            "env:WEATHER_API_KEY",
            "env:WEATHER_UNITS"
        ]
    );
    let key = npm
        .fields
        .iter()
        .find(|f| f.id == "env:WEATHER_API_KEY")
        .unwrap();
    assert!(key.required && key.secret);
    let name = &npm.fields[0];
    assert_eq!(name.choices, ["weather-fast", "weather-slow"]);
    let dir = &npm.fields[1];
    assert_eq!(
        (dir.format.as_str(), dir.placeholder.as_deref()),
        ("filepath", Some("/path/to/data"))
    );
    let units = &npm.fields[3];
    assert_eq!(units.default.as_deref(), Some("metric"));
    let remote = &forms[2];
    assert_eq!(remote.runtime, None);
    assert_eq!(remote.fields[0].id, "header:Authorization/token");
    assert_eq!(
        remote.fields[0].variable_of.as_deref(),
        Some("Authorization")
    );
    let toolbox = install::forms(&server("toolbox-2.0.1.json"));
    assert!(
        toolbox[2]
            .not_installable
            .as_deref()
            .unwrap()
            .contains("cannot install yet"),
        "mcpb says why"
    );
    assert!(toolbox[1].fields[0].repeated);
    assert_eq!(
        install::suggested_name("io.github.someone/My Server!"),
        "My-Server-"
    );
}

#[test]
fn secrets_become_keychain_references_for_switchboards_own_file() {
    let s = server("weather-1.2.0.json");
    let b = install::build(
        &s,
        Choice::Package { index: 0 },
        "wx",
        &vals(&[
            ("env:WEATHER_API_KEY", "k-123"),
            ("arg:--name", "weather-fast"),
            ("arg:data_dir", "/d"),
        ]),
        &Secrets::Keychain {
            server: "wx".into(),
        },
    )
    .unwrap();
    assert_eq!(
        b.def.env["WEATHER_API_KEY"],
        "${keychain:wx.WEATHER_API_KEY}"
    );
    assert_eq!(
        b.def.env["WEATHER_UNITS"], "metric",
        "not secret: written as given"
    );
    assert_eq!(b.secrets.len(), 1);
    assert_eq!(
        (b.secrets[0].name.as_str(), b.secrets[0].value.as_str()),
        ("wx.WEATHER_API_KEY", "k-123")
    );
    assert!(
        !format!("{b:?}").contains("k-123"),
        "Debug redacts kept secrets"
    );
    let r = install::build(
        &s,
        Choice::Remote { index: 0 },
        "wx",
        &vals(&[("header:Authorization/token", "tok")]),
        &Secrets::Keychain {
            server: "wx".into(),
        },
    )
    .unwrap();
    assert_eq!(
        r.def.headers["Authorization"],
        "Bearer ${keychain:wx.Authorization.token}"
    );
}

#[tokio::test]
async fn keychain_references_resolve_at_launch_and_are_never_run() -> anyhow::Result<()> {
    let vault = Vault::new(Arc::new(MemoryBackend::default()));
    vault.put_secret("wx.token", "tok-1")?;
    vault.put_secret("wx.cmd", "!echo pwned")?;
    let r = SecretResolver::with_env(HashMap::new());
    r.set_keychain(Some(vault));
    assert_eq!(
        r.resolve("Bearer ${keychain:wx.token}").await,
        Resolution::Value("Bearer tok-1".into())
    );
    assert_eq!(
        r.resolve("${keychain:wx.cmd}").await,
        Resolution::Value("!echo pwned".into()),
        "a kept value is used as it is"
    );
    match r.resolve("${keychain:wx.gone}").await {
        Resolution::Unresolved { reason } => assert!(
            reason.contains("wx.gone") && reason.contains("not in the keychain"),
            "{reason}"
        ),
        v => panic!("{v:?}"),
    }
    // Another client's file does not know the form: it is left alone.
    let cx = VarContext {
        expansion: Expansion::NONE,
        ..Default::default()
    };
    assert_eq!(
        r.resolve_keychain_refs("${keychain:wx.token}", &cx).await,
        None
    );
    Ok(())
}

#[test]
fn registry_url_comes_from_flag_env_settings_then_the_default() {
    assert_eq!(
        choose_base_url(
            Some("https://a.example"),
            Some("https://b.example"),
            Some("https://c.example")
        ),
        "https://a.example"
    );
    assert_eq!(
        choose_base_url(None, Some("https://b.example"), Some("https://c.example")),
        "https://b.example"
    );
    assert_eq!(
        choose_base_url(None, Some(" "), Some("https://c.example")),
        "https://c.example"
    );
    assert_eq!(choose_base_url(None, None, None), DEFAULT_REGISTRY);
    assert!(check_base_url("http://registry.corp.example")
        .unwrap_err()
        .to_string()
        .contains("use https"));
    assert!(check_base_url("file:///etc").is_err());
    assert!(check_base_url("https://u:p@registry.example").is_err());
    assert_eq!(
        check_base_url("https://registry.example/sub/v0.1/")
            .unwrap()
            .as_str(),
        "https://registry.example/sub"
    );
    assert!(check_base_url("http://127.0.0.1:9/").is_ok());
}

#[tokio::test]
async fn search_follows_cursors_hides_deleted_and_marks_deprecated() -> anyhow::Result<()> {
    let reg = spawn_registry_server::<&str>(&[]).await?;
    let c = RegistryClient::new(&reg.url, None)?;
    let mut names = vec![];
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = c.search("", cursor.as_deref(), 2).await?.value;
        pages += 1;
        assert!(page.servers.len() <= 2);
        names.extend(
            page.servers
                .iter()
                .map(|s| (s.server.name.clone(), s.official().status)),
        );
        match page.next_cursor {
            Some(n) => cursor = Some(n),
            None => break,
        }
        assert!(pages < 10, "cursors must end");
    }
    assert!(pages >= 3, "six servers in pages of two");
    let only: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        !only.contains(&"com.example/gone-weather"),
        "deleted servers are hidden: {only:?}"
    );
    assert!(names.contains(&("com.example/legacy-weather".into(), "deprecated".into())));
    assert_eq!(
        only.iter()
            .filter(|n| **n == "io.github.switchboard-fixtures/weather")
            .count(),
        1,
        "latest versions only"
    );
    let hits = c.search("forecast", None, 30).await?.value;
    assert_eq!(
        hits.servers
            .iter()
            .map(|s| s.server.name.as_str())
            .collect::<Vec<_>>(),
        ["io.github.switchboard-fixtures/weather"]
    );
    let versions: Vec<String> = c
        .versions("io.github.switchboard-fixtures/weather")
        .await?
        .value
        .iter()
        .map(|v| v.server.version.clone())
        .collect();
    assert_eq!(versions, ["1.2.0", "1.0.0"]);
    let old = c
        .version("io.github.switchboard-fixtures/weather", "1.0.0")
        .await?
        .value;
    assert_eq!(
        old.server.schema.as_deref(),
        Some("https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json")
    );
    assert!(!old.official().is_latest);
    match c.version("io.github.nobody/nothing", "latest").await {
        Err(RegistryError::NotFound { name, .. }) => assert_eq!(name, "io.github.nobody/nothing"),
        other => panic!("{other:?}"),
    }
    Ok(())
}

async fn requests(url: &str) -> u64 {
    let v: serde_json::Value = reqwest_get(&format!("{url}/stats")).await;
    v["requests"].as_u64().unwrap()
}

async fn reqwest_get(url: &str) -> serde_json::Value {
    // The stats endpoint through the engine's own HTTP stack is overkill; a raw GET will do.
    let addr = url.trim_start_matches("http://");
    let (host, path) = addr.split_once('/').unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(host).await.unwrap();
    s.write_all(format!("GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    serde_json::from_str(out.split("\r\n\r\n").nth(1).unwrap()).unwrap()
}

#[tokio::test]
async fn retries_politely_then_gives_up() -> anyhow::Result<()> {
    let reg = spawn_registry_server(&["--fail-first", "2"]).await?;
    let c = RegistryClient::new(&reg.url, None)?;
    let page = c.search("weather", None, 10).await?;
    assert!(!page.value.servers.is_empty());
    assert_eq!(requests(&reg.url).await, 3, "two 503s, then the answer");
    let down = spawn_registry_server(&["--always-fail"]).await?;
    let c = RegistryClient::new(&down.url, None)?;
    let t = std::time::Instant::now();
    let e = c.search("weather", None, 10).await.unwrap_err();
    assert!(e.to_string().contains("503"), "{e}");
    assert_eq!(
        requests(&down.url).await,
        3,
        "one try and two retries, no more"
    );
    assert!(
        t.elapsed() >= std::time::Duration::from_millis(1900),
        "retries wait 0.5 s then 1.5 s"
    );
    Ok(())
}

#[tokio::test]
async fn offline_answers_come_from_the_cache_with_their_date() -> anyhow::Result<()> {
    let cache = tempfile::tempdir()?;
    let reg = spawn_registry_server::<&str>(&[]).await?;
    let url = reg.url.clone();
    let c = RegistryClient::new(&url, Some(cache.path().to_path_buf()))?;
    let online = c.search("weather", None, 30).await?;
    assert!(online.offline.is_none());
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as u64;
    c.version("io.github.switchboard-fixtures/weather", "latest")
        .await?;
    reg.kill().await?;
    let offline = c.search("weather", None, 30).await?;
    let o = offline.offline.expect("answered from the cache");
    assert!(
        o.reason.starts_with("could not connect: ") && !o.reason.contains("http://"),
        "short, without the URL: {}",
        o.reason
    );
    assert!(
        o.fetched_at_ms <= before + 1000 && o.fetched_at_ms + 60_000 > before,
        "fetched just now: {}",
        o.fetched_at_ms
    );
    assert_eq!(offline.value.servers.len(), online.value.servers.len());
    assert!(c
        .version("io.github.switchboard-fixtures/weather", "latest")
        .await?
        .offline
        .is_some());
    // A question never asked while online has no cached answer.
    match c.search("toolbox", None, 30).await {
        Err(RegistryError::Unreachable { url: u, .. }) => assert_eq!(u, url),
        other => panic!("{other:?}"),
    }
    Ok(())
}

#[test]
fn a_missing_runtime_is_explained() {
    let hint = switchboard_engine::registry::apply::runtime_hint("uvx");
    assert!(hint.contains("install uv"), "{hint}");
    assert!(switchboard_engine::registry::apply::runtime_hint("npx").contains("Node.js"));
}
