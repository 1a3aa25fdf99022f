//! `switchboard registry search|show` and `switchboard install` against the
//! fixture registry (issue 13): JSON shapes, statuses, missing values named,
//! installing into Cursor's file (secrets in plain text there, with a
//! warning), a missing runtime explained, and a name that is taken. The
//! install into Switchboard's own file with its secret in the keychain is
//! in registry_keychain.rs (it needs a Secret Service).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use switchboard_tests::spawn_registry_server;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

fn cmd(home: &Path, path: &str, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .env("SWITCHBOARD_SYSTEM_ROOT", home.join("sys"))
        .stdin(Stdio::null());
    c
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A folder with `npx` and `uvx` that succeed (they are never run here).
fn stub_bin(dir: &Path) -> String {
    let bin = dir.join("stub-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for p in ["npx", "uvx"] {
        let f = bin.join(p);
        std::fs::write(&f, "#!/bin/sh\nexit 0\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    format!("{}:/usr/bin:/bin", bin.display())
}

#[tokio::test]
async fn search_and_show_print_the_registry_shapes() -> anyhow::Result<()> {
    let reg = spawn_registry_server::<&str>(&[]).await?;
    let home = tempfile::tempdir()?;
    let path = stub_bin(home.path());
    let o = cmd(
        home.path(),
        &path,
        &[
            "registry",
            "search",
            "weather",
            "--json",
            "--registry",
            &reg.url,
        ],
    )
    .output()?;
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout)?;
    let servers = v["servers"].as_array().unwrap();
    let names: Vec<&str> = servers
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "com.example/legacy-weather",
            "io.github.switchboard-fixtures/weather"
        ],
        "deleted gone-weather is hidden"
    );
    assert_eq!(servers[0]["status"], "deprecated");
    let w = &servers[1];
    assert_eq!(
        (
            w["title"].as_str(),
            w["version"].as_str(),
            w["status"].as_str()
        ),
        (Some("Weather"), Some("1.2.0"), Some("active"))
    );
    assert_eq!(
        w["packages"][0],
        serde_json::json!({"registryType": "npm", "identifier": "@switchboard-fixtures/weather", "version": "1.2.0", "transport": "stdio"})
    );
    assert_eq!(
        w["remotes"][0],
        serde_json::json!({"type": "streamable-http", "url": "https://weather.switchboard-fixtures.example/mcp"})
    );
    assert!(
        v.get("nextCursor").is_some(),
        "nextCursor is always there (null on the last page)"
    );
    // Paging from the command line.
    let o = cmd(
        home.path(),
        &path,
        &[
            "registry",
            "search",
            "",
            "--json",
            "--limit",
            "2",
            "--registry",
            &reg.url,
        ],
    )
    .output()?;
    let v: Value = serde_json::from_slice(&o.stdout)?;
    let cursor = v["nextCursor"]
        .as_str()
        .expect("more than two servers")
        .to_string();
    let o = cmd(
        home.path(),
        &path,
        &[
            "registry",
            "search",
            "",
            "--json",
            "--limit",
            "2",
            "--cursor",
            &cursor,
            "--registry",
            &reg.url,
        ],
    )
    .output()?;
    let v2: Value = serde_json::from_slice(&o.stdout)?;
    assert_ne!(v["servers"][0]["name"], v2["servers"][0]["name"]);

    // The registry from the environment, shown as text with versions and forms.
    let o = cmd(
        home.path(),
        &path,
        &["registry", "show", "io.github.switchboard-fixtures/weather"],
    )
    .env("SWITCHBOARD_REGISTRY_URL", &reg.url)
    .output()?;
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    for want in [
        "versions: 1.2.0, 1.0.0",
        "--env WEATHER_API_KEY=…",
        "required, secret",
        "one of weather-fast|weather-slow",
        "runs with: npx",
        "repository: https://github.com/switchboard-fixtures/weather",
    ] {
        assert!(out.contains(want), "show should say {want:?}:\n{out}");
    }
    let o = cmd(
        home.path(),
        &path,
        &[
            "registry",
            "show",
            "io.github.switchboard-fixtures/weather",
            "--version",
            "1.0.0",
            "--json",
            "--registry",
            &reg.url,
        ],
    )
    .output()?;
    let v: Value = serde_json::from_slice(&o.stdout)?;
    assert_eq!(v["server"]["version"], "1.0.0");
    assert_eq!(v["forms"][0]["fields"][0]["id"], "env:WEATHER_API_KEY");
    let o = cmd(
        home.path(),
        &path,
        &[
            "registry",
            "show",
            "io.github.nobody/nothing",
            "--registry",
            &reg.url,
        ],
    )
    .output()?;
    assert!(
        !o.status.success() && text(&o).contains("no server named \"io.github.nobody/nothing\""),
        "{}",
        text(&o)
    );
    Ok(())
}

#[tokio::test]
async fn install_into_cursor_writes_plain_text_with_a_warning() -> anyhow::Result<()> {
    let reg = spawn_registry_server::<&str>(&[]).await?;
    let home = tempfile::tempdir()?;
    let path = stub_bin(home.path());
    let base = [
        "install",
        "io.github.switchboard-fixtures/weather",
        "--registry",
        &reg.url,
        "--to",
        "cursor-user",
    ];
    // Missing required values: one error naming each, nothing written.
    let o = cmd(home.path(), &path, &base).output()?;
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    for want in ["--arg name=", "--arg data_dir=", "--env WEATHER_API_KEY="] {
        assert!(out.contains(want), "the error names {want}:\n{out}");
    }
    assert!(!home.path().join(".cursor/mcp.json").exists());
    let data = home.path().join("data");
    let data_arg = format!("data_dir={}", data.display());
    let mut args = base.to_vec();
    args.extend([
        "--arg",
        "name=weather-slow",
        "--arg",
        &data_arg,
        "--env",
        "WEATHER_UNITS=imperial",
    ]);
    // The secret comes from standard input, as KEY=VALUE.
    let mut child = cmd(home.path(), &path, &args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"WEATHER_API_KEY=plain-77\n")?;
    let o = child.wait_with_output()?;
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("Cursor keeps secret values in plain text")
            && out.contains("--to switchboard"),
        "warns and offers Switchboard's list:\n{out}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(
        home.path().join(".cursor/mcp.json"),
    )?)?;
    let e = &v["mcpServers"]["weather"];
    assert_eq!(e["command"], "npx");
    let argv: Vec<&str> = e["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        argv,
        [
            "-y",
            "@switchboard-fixtures/weather@1.2.0",
            "--require-env",
            "WEATHER_API_KEY",
            "--name",
            "weather-slow",
            data.to_str().unwrap()
        ]
    );
    assert_eq!(e["env"]["WEATHER_API_KEY"], "plain-77");
    assert_eq!(e["env"]["WEATHER_UNITS"], "imperial");

    // The name is taken there now: refused with a suggestion, unless --replace or --name.
    let mut again = args.clone();
    again.extend(["--env", "WEATHER_API_KEY=x"]);
    let o = cmd(home.path(), &path, &again).output()?;
    assert!(
        !o.status.success()
            && text(&o).contains("Server \"weather\" already exists")
            && text(&o).contains("weather-2"),
        "{}",
        text(&o)
    );
    let mut renamed = base.to_vec();
    renamed.extend([
        "--env",
        "WEATHER_API_KEY=x",
        "--name",
        "weather-2",
        "--package",
        "pypi",
    ]);
    let o = cmd(home.path(), &path, &renamed).output()?;
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(
        home.path().join(".cursor/mcp.json"),
    )?)?;
    assert_eq!(
        v["mcpServers"]["weather-2"]["args"],
        serde_json::json!(["switchboard-fixtures-weather==1.2.0"])
    );
    assert_eq!(
        v["mcpServers"]["weather"]["env"]["WEATHER_API_KEY"], "plain-77",
        "the first one is untouched"
    );
    let mut replace = again.clone();
    replace.push("--replace");
    let o = cmd(home.path(), &path, &replace).output()?;
    assert!(
        o.status.success() && text(&o).contains("Replaced \"weather\""),
        "{}",
        text(&o)
    );
    Ok(())
}

#[tokio::test]
async fn a_missing_runtime_or_an_uninstallable_package_is_explained() -> anyhow::Result<()> {
    let reg = spawn_registry_server::<&str>(&[]).await?;
    let home = tempfile::tempdir()?;
    let path = stub_bin(home.path());
    // dnx is not on this PATH (nor on a login shell's: SHELL is unset).
    let o = cmd(
        home.path(),
        &path,
        &[
            "install",
            "io.github.switchboard-fixtures/dotnet-notes",
            "--registry",
            &reg.url,
            "--to",
            "cursor-user",
        ],
    )
    .output()?;
    let out = text(&o);
    assert!(
        !o.status.success()
            && out.contains("runs with dnx, which is not installed here")
            && out.contains(".NET"),
        "{out}"
    );
    assert!(
        !home.path().join(".cursor/mcp.json").exists(),
        "nothing is written"
    );
    let o = cmd(
        home.path(),
        &path,
        &[
            "install",
            "io.github.switchboard-fixtures/toolbox",
            "--package",
            "mcpb",
            "--registry",
            &reg.url,
        ],
    )
    .output()?;
    assert!(
        !o.status.success() && text(&o).contains("MCP bundle (.mcpb)"),
        "{}",
        text(&o)
    );
    let o = cmd(
        home.path(),
        &path,
        &[
            "install",
            "com.example/gone-weather",
            "--registry",
            &reg.url,
        ],
    )
    .output()?;
    assert!(
        !o.status.success() && text(&o).contains("was deleted from the registry"),
        "{}",
        text(&o)
    );
    Ok(())
}
