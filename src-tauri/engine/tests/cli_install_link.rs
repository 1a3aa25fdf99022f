//! `switchboard install 'LINK'`: VS Code's and Switchboard's install links
//! are shown (origin, warnings, the exact command, masked secrets, where it
//! goes) and written like a registry install; a missing input and a
//! malformed link are refused with nothing written; into Switchboard's own
//! file a password input goes to the keychain (`keychain-tests`).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

fn cli(home: &Path, args: &[&str], stdin: &str) -> anyhow::Result<(Output, String)> {
    let mut child = Command::new(BIN)
        .args(args)
        .env("HOME", home)
        .env("SWITCHBOARD_SYSTEM_ROOT", home.join("sys"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child.stdin.take().unwrap().write_all(stdin.as_bytes())?;
    let o = child.wait_with_output()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    Ok((o, text))
}

/// Base64 in the URL-safe alphabet without padding, as links carry it.
fn b64url(s: &str) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in s.as_bytes().chunks(3) {
        let n = chunk.iter().fold(0u32, |n, &b| n << 8 | b as u32) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// A Switchboard link for `node -e 1` with API_KEY from a password input.
fn own_link() -> String {
    format!(
        "switchboard://install?name=my-node&config={}&inputs={}",
        b64url(r#"{"command":"node","args":["-e","1"],"env":{"API_KEY":"${input:apiKey}"}}"#),
        b64url(r#"[{"id":"apiKey","description":"API key","password":true}]"#)
    )
}

#[test]
fn links_are_shown_then_written_and_bad_ones_refused() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let home = home.path();
    let claude = home.join(".claude.json");
    std::fs::write(&claude, "{\n  \"theme\": \"dark\"\n}\n")?;

    // VS Code's link, as its MCP developer guide shows it.
    let vscode = "vscode:mcp/install?%7B%22name%22%3A%22memory%22%2C%22command%22%3A%22npx%22%2C%22args%22%3A%5B%22-y%22%2C%22%40modelcontextprotocol%2Fserver-memory%22%5D%7D";
    let (o, out) = cli(
        home,
        &[
            "install",
            vscode,
            "--to",
            "claude-code-user",
            "--skip-runtime-check",
        ],
        "",
    )?;
    assert!(o.status.success(), "{out}");
    for want in [
        "VS Code install link for \"memory\"",
        "will run: npx",
        "arg: @modelcontextprotocol/server-memory",
        "Installed \"memory\"",
    ] {
        assert!(out.contains(want), "prints {want:?}:\n{out}");
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&claude)?)?;
    assert_eq!(v["mcpServers"]["memory"]["command"], "npx");
    assert_eq!(
        v["mcpServers"]["memory"]["args"],
        serde_json::json!(["-y", "@modelcontextprotocol/server-memory"])
    );
    assert_eq!(v["theme"], "dark");

    // A password input with no value (standard input empty): refused naming it.
    let before = std::fs::read_to_string(&claude)?;
    let (o, out) = cli(
        home,
        &["install", &own_link(), "--to", "claude-code-user"],
        "",
    )?;
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("apiKey (API key)") && out.contains("--input"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&claude)?, before);

    // Given on standard input: written as given into Claude Code's file, masked in the output.
    let (o, out) = cli(
        home,
        &["install", &own_link(), "--to", "claude-code-user"],
        "apiKey=link-secret-81\n",
    )?;
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("env: API_KEY=••••") && !out.contains("link-secret-81"),
        "{out}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&claude)?)?;
    assert_eq!(
        v["mcpServers"]["my-node"]["env"]["API_KEY"],
        "link-secret-81"
    );

    // A program in a temporary folder is shown with a warning; a script
    // (no terminal) must say --yes, else nothing is written.
    let tmp_link = format!(
        "switchboard://install?name=tmp-one&config={}",
        b64url(r#"{"command":"/tmp/x/run.sh"}"#)
    );
    let args = [
        "install",
        &tmp_link,
        "--to",
        "claude-code-user",
        "--skip-runtime-check",
    ];
    let (o, out) = cli(home, &args, "")?;
    assert!(
        !o.status.success() && out.contains("warning:") && out.contains("--yes"),
        "{out}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&claude)?)?;
    assert!(v["mcpServers"].get("tmp-one").is_none(), "nothing written");
    let (o, out) = cli(home, &[&args[..], &["--yes"]].concat(), "")?;
    assert!(o.status.success() && out.contains("warning:"), "{out}");

    // Malformed: refused, nothing written.
    let before = std::fs::read_to_string(&claude)?;
    let (o, out) = cli(
        home,
        &[
            "install",
            "cursor://anysphere.cursor-deeplink/mcp/install?name=x&config=%%%",
            "--to",
            "claude-code-user",
        ],
        "",
    )?;
    assert!(!o.status.success() && out.contains("Cursor"), "{out}");
    assert_eq!(std::fs::read_to_string(&claude)?, before);
    Ok(())
}

#[cfg(feature = "keychain-tests")]
#[test]
fn into_switchboards_file_a_password_input_goes_to_the_keychain() -> anyhow::Result<()> {
    use switchboard_engine::auth::vault::Vault;
    let home = tempfile::tempdir()?;
    let (o, out) = cli(
        home.path(),
        &["install", &own_link(), "--input", "apiKey=kc-link-55"],
        "",
    )?;
    assert!(o.status.success(), "{out}");
    assert!(!out.contains("kc-link-55"), "{out}");
    let own: Value = serde_json::from_str(&std::fs::read_to_string(
        home.path().join(".config/switchboard/servers.json"),
    )?)?;
    assert_eq!(
        own["mcpServers"]["my-node"]["env"]["API_KEY"],
        "${keychain:my-node.apiKey}"
    );
    assert_eq!(
        Vault::keychain().secret("my-node.apiKey")?.as_deref(),
        Some("kc-link-55")
    );
    Vault::keychain().remove_secret("my-node.apiKey")?;
    Ok(())
}

#[tokio::test]
async fn a_registry_link_is_the_registry_install() -> anyhow::Result<()> {
    let reg = switchboard_tests::spawn_registry_server::<&str>(&[]).await?;
    let home = tempfile::tempdir()?;
    let data = home.path().join("data");
    let data_arg = format!("data_dir={}", data.display());
    let link =
        "switchboard://install?registry=io.github.switchboard-fixtures/weather&version=1.2.0";
    let (o, out) = cli(
        home.path(),
        &[
            "install",
            link,
            "--registry",
            &reg.url,
            "--to",
            "cursor-user",
            "--arg",
            "name=weather-slow",
            "--arg",
            &data_arg,
            "--skip-runtime-check",
        ],
        "WEATHER_API_KEY=plain-77\n",
    )?;
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("names io.github.switchboard-fixtures/weather"),
        "{out}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(
        home.path().join(".cursor/mcp.json"),
    )?)?;
    let e = &v["mcpServers"]["weather"];
    assert_eq!(e["command"], "npx");
    assert_eq!(e["args"][1], "@switchboard-fixtures/weather@1.2.0");
    assert_eq!(e["env"]["WEATHER_API_KEY"], "plain-77");

    // A registry flag with a link that carries an entry is refused.
    let (o, out) = cli(home.path(), &["install", &own_link(), "--env", "A=1"], "")?;
    assert!(
        !o.status.success() && out.contains("--env is for registry installs"),
        "{out}"
    );
    Ok(())
}
