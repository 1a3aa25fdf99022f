//! `switchboard install` into Switchboard's own file with the real OS
//! keychain (issue 13): the secret goes to a private Secret Service
//! (gnome-keyring on its own D-Bus session, as `.ci/test` runs keychain
//! tests), the file holds `${keychain:NAME}`, and a separate `switchboard
//! status` resolves it at launch: the installed server (the fixture server
//! behind a stub `npx`, which refuses to start without the variable)
//! connects. The value is in no file and no output.
#![cfg(feature = "keychain-tests")]

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;
use switchboard_engine::auth::vault::Vault;
use switchboard_tests::{fixture_server_path, spawn_registry_server};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const SECRET: &str = "kc-secret-9d1e";

fn grep_tree(dir: &std::path::Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut hits = vec![];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            hits.extend(grep_tree(&p, needle));
        } else if std::fs::read(&p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle)) {
            hits.push(p);
        }
    }
    hits
}

#[tokio::test]
async fn install_keeps_the_secret_in_the_keychain_and_the_server_connects() -> anyhow::Result<()> {
    let reg = spawn_registry_server::<&str>(&[]).await?;
    let home = tempfile::tempdir()?;
    // `npx -y @switchboard-fixtures/weather@1.2.0 ARGS…` runs the fixture server with ARGS.
    let bin = home.path().join("stub-bin");
    std::fs::create_dir_all(&bin)?;
    std::fs::write(
        bin.join("npx"),
        format!(
            "#!/bin/sh\nshift 2\nexec '{}' \"$@\"\n",
            fixture_server_path().display()
        ),
    )?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("npx"), std::fs::Permissions::from_mode(0o755))?;
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let cli = |args: &[&str]| {
        let mut c = Command::new(BIN);
        // The keychain's D-Bus session comes from the test's environment.
        c.args(args)
            .env("HOME", home.path())
            .env("PATH", &path)
            .env("SWITCHBOARD_SYSTEM_ROOT", home.path().join("sys"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("SHELL");
        c
    };
    let data = home.path().join("data");
    std::fs::create_dir_all(&data)?;
    let data_arg = format!("data_dir={}", data.display());
    let mut child = cli(&[
        "install",
        "io.github.switchboard-fixtures/weather",
        "--registry",
        &reg.url,
        "--arg",
        "name=weather-fast",
        "--arg",
        &data_arg,
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("WEATHER_API_KEY={SECRET}\n").as_bytes())?;
    let o = child.wait_with_output()?;
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("Secrets kept in the OS keychain") && out.contains("weather.WEATHER_API_KEY"),
        "{out}"
    );
    assert!(!out.contains(SECRET));
    let own: Value = serde_json::from_str(&std::fs::read_to_string(
        home.path().join(".config/switchboard/servers.json"),
    )?)?;
    assert_eq!(
        own["mcpServers"]["weather"]["env"]["WEATHER_API_KEY"],
        "${keychain:weather.WEATHER_API_KEY}"
    );
    assert_eq!(
        Vault::keychain()
            .secret("weather.WEATHER_API_KEY")?
            .as_deref(),
        Some(SECRET)
    );
    assert!(
        grep_tree(home.path(), SECRET).is_empty(),
        "the secret is in no file: {:?}",
        grep_tree(home.path(), SECRET)
    );

    // A separate process resolves it at launch; the fixture server exits without it.
    let o = cli(&["status", "--json", "--server", "weather"]).output()?;
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}");
    let v: Value = serde_json::from_slice(&o.stdout)?;
    let s = v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "weather")
        .expect("weather in status");
    assert_eq!(s["status"]["state"], "connected", "{out}");
    assert!(!out.contains(SECRET));

    // Without the keychain item the variable resolves to nothing, visibly.
    Vault::keychain().remove_secret("weather.WEATHER_API_KEY")?;
    let o = cli(&["status", "--json", "--server", "weather"]).output()?;
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(out.contains("not in the keychain"), "{out}");
    Ok(())
}

#[test]
fn keychain_keep_moves_a_value_of_the_own_file_into_the_keychain() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let own = home.path().join(".config/switchboard/servers.json");
    std::fs::create_dir_all(own.parent().unwrap())?;
    std::fs::write(
        &own,
        r#"{"mcpServers": {"notes": {"command": "x", "env": {"NOTES_TOKEN": "kept-9f2"}, "headers": {"Authorization": "Bearer hdr-77"}}}}"#,
    )?;
    let cli = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env("HOME", home.path())
            .env("SWITCHBOARD_SYSTEM_ROOT", home.path().join("sys"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_CACHE_HOME")
            .output()
            .unwrap()
    };
    let o = cli(&["keychain", "keep", "notes", "--env", "NOTES_TOKEN"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = cli(&["keychain", "keep", "notes", "--header", "Authorization"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&own)?)?;
    assert_eq!(
        v["mcpServers"]["notes"]["env"]["NOTES_TOKEN"],
        "${keychain:notes.NOTES_TOKEN}"
    );
    assert_eq!(
        v["mcpServers"]["notes"]["headers"]["Authorization"],
        "${keychain:notes.header.Authorization}"
    );
    assert!(
        grep_tree(home.path(), "kept-9f2").is_empty()
            && grep_tree(home.path(), "hdr-77").is_empty()
    );
    assert_eq!(
        Vault::keychain().secret("notes.NOTES_TOKEN")?.as_deref(),
        Some("kept-9f2")
    );
    assert_eq!(
        Vault::keychain()
            .secret("notes.header.Authorization")?
            .as_deref(),
        Some("Bearer hdr-77")
    );
    let o = cli(&["keychain", "keep", "notes", "--env", "NOTES_TOKEN"]);
    assert!(
        !o.status.success()
            && String::from_utf8_lossy(&o.stderr).contains("kept in the keychain already")
    );
    Vault::keychain().remove_secret("notes.NOTES_TOKEN")?;
    Vault::keychain().remove_secret("notes.header.Authorization")?;
    Ok(())
}
