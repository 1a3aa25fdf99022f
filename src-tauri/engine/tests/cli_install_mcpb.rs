//! `switchboard install ./x.mcpb`: bundles packed (and signed) by the real
//! `@anthropic-ai/mcpb` CLI install as stdio servers. Into Switchboard's own
//! file the sensitive value goes to the keychain (a private Secret Service,
//! `keychain-tests`) and the server, a node MCP server, connects and lists
//! its tools; into Claude Code's file it is written there, the rest of the
//! file untouched. A tampered bundle and a missing required value are
//! refused with nothing unpacked or written. `switchboard remove` takes the
//! unpacked folder and the keychain item along once nothing uses them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use switchboard_tests::mcpb::{hello_bundles, hello_manifest, mcpb, mcpb_cli, HELLO_SECRET};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const SECRET: &str = HELLO_SECRET;

/// Packs the hello extension into `unsigned.mcpb` and a self-signed copy
/// `signed.mcpb` in `dir`.
fn bundles(cli: &Path, dir: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    hello_bundles(cli, dir, "1.2.0")
}

fn cli(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    // The keychain's D-Bus session (keychain-tests) comes from the test's environment.
    c.args(args)
        .env("HOME", home)
        .env("SWITCHBOARD_SYSTEM_ROOT", home.join("sys"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("SHELL");
    c
}

/// Runs with `stdin` on standard input.
fn run(mut c: Command, stdin: &str) -> anyhow::Result<(Output, String)> {
    let mut child = c
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

fn grep_tree(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut hits = vec![];
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            hits.extend(grep_tree(&p, needle));
        } else if std::fs::read(&p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle)) {
            hits.push(p);
        }
    }
    hits
}

fn unpacked(home: &Path) -> PathBuf {
    home.join(".local/share/switchboard/bundles/hello-bundle/1.2.0")
}

#[test]
fn tampered_bundles_and_missing_values_are_refused_with_nothing_written() -> anyhow::Result<()> {
    let Some(mcpb_bin) = mcpb_cli("tampered_bundles_and_missing_values_are_refused") else {
        return Ok(());
    };
    let tmp = tempfile::tempdir()?;
    let (_, signed) = bundles(&mcpb_bin, tmp.path())?;
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home)?;

    // One byte of the signed zip changed: the signature no longer matches.
    let mut bytes = std::fs::read(&signed)?;
    let at = bytes
        .windows(12)
        .position(|w| w == b"manifest.jso")
        .unwrap()
        + 40;
    bytes[at] ^= 0x20;
    let tampered = tmp.path().join("tampered.mcpb");
    std::fs::write(&tampered, bytes)?;
    let (o, out) = run(
        cli(
            &home,
            &[
                "install",
                tampered.to_str().unwrap(),
                "--config",
                "api_key=x",
            ],
        ),
        "",
    )?;
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("tampered.mcpb") && out.contains("signature is invalid"),
        "names the file and why:\n{out}"
    );
    assert!(
        grep_tree(&home, "hello").is_empty(),
        "nothing written or unpacked: {:?}",
        grep_tree(&home, "")
    );
    assert!(!home.join(".local/share/switchboard/bundles").exists());

    // No value for the required, sensitive api_key (standard input is empty).
    let (o, out) = run(cli(&home, &["install", signed.to_str().unwrap()]), "")?;
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("user_config.api_key") && out.contains("required"),
        "names the setting:\n{out}"
    );
    assert!(!home.join(".local/share/switchboard/bundles").exists());
    assert!(!home.join(".config/switchboard/servers.json").exists());

    // A setting the bundle does not have.
    let (o, out) = run(
        cli(
            &home,
            &[
                "install",
                signed.to_str().unwrap(),
                "--config",
                "api_key=x",
                "--config",
                "colour=red",
            ],
        ),
        "",
    )?;
    assert!(!o.status.success() && out.contains("colour"), "{out}");
    assert!(!home.join(".local/share/switchboard/bundles").exists());

    // The target file cannot be edited: the folder just unpacked goes again.
    let broken = "{ \"mcpServers\": { not json\n";
    std::fs::write(home.join(".claude.json"), broken)?;
    let (o, out) = run(
        cli(
            &home,
            &[
                "install",
                signed.to_str().unwrap(),
                "--to",
                "claude-code-user",
                "--config",
                "api_key=x",
            ],
        ),
        "",
    )?;
    assert!(!o.status.success() && out.contains("Unpacked"), "{out}");
    assert!(
        !unpacked(&home).exists(),
        "nothing left half-done: {:?}",
        grep_tree(&home.join(".local"), "")
    );
    assert_eq!(std::fs::read_to_string(home.join(".claude.json"))?, broken);

    // Not a file.
    let (o, out) = run(cli(&home, &["install", "./nowhere.mcpb"]), "")?;
    assert!(
        !o.status.success() && out.contains("nowhere.mcpb: no such file"),
        "{out}"
    );
    Ok(())
}

#[test]
fn into_claude_codes_file_the_rest_of_it_stays_as_it_was() -> anyhow::Result<()> {
    let Some(mcpb_bin) = mcpb_cli("into_claude_codes_file") else {
        return Ok(());
    };
    let tmp = tempfile::tempdir()?;
    let (unsigned, _) = bundles(&mcpb_bin, tmp.path())?;
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home)?;
    let before = "{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"other\": { \"command\": \"x\", \"args\": [\"1\"] }\n  },\n  \"theme\": \"dark\"\n}\n";
    std::fs::write(home.join(".claude.json"), before)?;

    let (o, out) = run(
        cli(
            &home,
            &[
                "install",
                unsigned.to_str().unwrap(),
                "--to",
                "claude-code-user",
                "--name",
                "hello",
                "--config",
                "greeting=hi there",
            ],
        ),
        &format!("api_key={SECRET}\n"),
    )?;
    assert!(o.status.success(), "{out}");
    for want in [
        "Bundle Hello bundle (hello-bundle) 1.2.0",
        "author: Switchboard tests",
        "signature: unsigned",
        "compatibility: runs here",
        "will run: node",
        "env: API_KEY=••••",
        "arg: hi there",
        "keeps secret values in plain text",
    ] {
        assert!(out.contains(want), "prints {want:?}:\n{out}");
    }
    assert!(!out.contains(SECRET), "the secret is masked:\n{out}");
    let after = std::fs::read_to_string(home.join(".claude.json"))?;
    let v: Value = serde_json::from_str(&after)?;
    let e = &v["mcpServers"]["hello"];
    let dir = unpacked(&home);
    assert_eq!(e["command"], "node");
    assert_eq!(
        e["args"],
        serde_json::json!([
            format!("{}/server/index.js", dir.display()),
            "--greeting",
            "hi there"
        ])
    );
    assert_eq!(
        e["env"]["API_KEY"], SECRET,
        "Claude Code reads only its file"
    );
    assert!(dir.join("server/index.js").is_file());
    // Everything else byte for byte: the other server, the keys around it.
    assert!(
        after.starts_with("{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"other\": { \"command\": \"x\", \"args\": [\"1\"] }"),
        "{after}"
    );
    assert!(after.ends_with("  \"theme\": \"dark\"\n}\n"), "{after}");

    // Again: the name is taken.
    let (o, out) = run(
        cli(
            &home,
            &[
                "install",
                unsigned.to_str().unwrap(),
                "--to",
                "claude-code-user",
                "--name",
                "hello",
            ],
        ),
        &format!("api_key={SECRET}\n"),
    )?;
    assert!(
        !o.status.success() && out.contains("already exists"),
        "{out}"
    );

    // A second server from the same bundle reuses its folder.
    let (o, out) = run(
        cli(
            &home,
            &[
                "install",
                unsigned.to_str().unwrap(),
                "--to",
                "claude-code-user",
                "--name",
                "hello2",
            ],
        ),
        &format!("api_key={SECRET}\n"),
    )?;
    assert!(o.status.success(), "{out}");
    // A newer version replaces "hello"; 1.2.0 stays while "hello2" runs from it.
    let ext = tmp.path().join("ext");
    std::fs::write(ext.join("manifest.json"), hello_manifest("1.3.0"))?;
    mcpb(&mcpb_bin, tmp.path(), &["pack", "ext", "newer.mcpb"]);
    let newer = tmp.path().join("newer.mcpb");
    let (o, out) = run(
        cli(
            &home,
            &[
                "install",
                newer.to_str().unwrap(),
                "--to",
                "claude-code-user",
                "--name",
                "hello",
                "--replace",
            ],
        ),
        &format!("api_key={SECRET}\n"),
    )?;
    assert!(
        o.status.success() && out.contains("Replaced \"hello\""),
        "{out}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(home.join(".claude.json"))?)?;
    let dir13 = dir.with_file_name("1.3.0");
    assert_eq!(
        v["mcpServers"]["hello"]["args"][0],
        format!("{}/server/index.js", dir13.display())
    );
    assert!(dir.join("server/index.js").is_file() && dir13.is_dir());

    // Removing "hello2" takes 1.2.0, now unused; removing "hello" the rest.
    let o = cli(&home, &["remove", "hello2"]).output()?;
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success() && out.contains("Removed its unpacked bundle"),
        "{out}"
    );
    assert!(!dir.exists() && dir13.is_dir());
    let o = cli(&home, &["remove", "hello"]).output()?;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!home
        .join(".local/share/switchboard/bundles/hello-bundle")
        .exists());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(home.join(".claude.json"))?)?;
    assert!(v["mcpServers"].get("hello").is_none() && v["mcpServers"]["other"]["command"] == "x");
    Ok(())
}

#[cfg(feature = "keychain-tests")]
#[test]
fn into_switchboards_file_the_secret_is_in_the_keychain_and_the_server_connects(
) -> anyhow::Result<()> {
    use switchboard_engine::auth::vault::Vault;
    let Some(mcpb_bin) = mcpb_cli("into_switchboards_file") else {
        return Ok(());
    };
    let tmp = tempfile::tempdir()?;
    let (_, signed) = bundles(&mcpb_bin, tmp.path())?;
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home)?;

    let (o, out) = run(
        cli(&home, &["install", signed.to_str().unwrap()]),
        &format!("api_key={SECRET}\n"),
    )?;
    assert!(o.status.success(), "{out}");
    for want in [
        "signature: signed (self-signed",
        "env: API_KEY=${keychain:hello-bundle.api_key}",
        "Secrets kept in the OS keychain",
        "Installed \"hello-bundle\"",
    ] {
        assert!(out.contains(want), "prints {want:?}:\n{out}");
    }
    assert!(!out.contains(SECRET));
    let own: Value = serde_json::from_str(&std::fs::read_to_string(
        home.join(".config/switchboard/servers.json"),
    )?)?;
    assert_eq!(
        own["mcpServers"]["hello-bundle"]["env"]["API_KEY"],
        "${keychain:hello-bundle.api_key}"
    );
    assert!(unpacked(&home).join("server/index.js").is_file());
    assert_eq!(
        Vault::keychain().secret("hello-bundle.api_key")?.as_deref(),
        Some(SECRET)
    );
    assert!(
        grep_tree(&home, SECRET).is_empty(),
        "the secret is in no file: {:?}",
        grep_tree(&home, SECRET)
    );

    // A separate process resolves the secret at launch; the server checks it.
    let o = cli(
        &home,
        &["tools", "--json", "--wait", "--server", "hello-bundle"],
    )
    .output()?;
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("say_hello"), "lists its tools:\n{out}");
    assert!(!out.contains(SECRET));
    let o = cli(&home, &["status", "--json", "--server", "hello-bundle"]).output()?;
    let v: Value = serde_json::from_slice(&o.stdout)?;
    let s = v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "hello-bundle")
        .expect("hello-bundle in status");
    assert_eq!(s["status"]["state"], "connected", "{v}");

    // Removed: the definition, its unpacked folder and its keychain item.
    let o = cli(&home, &["remove", "hello-bundle"]).output()?;
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("hello-bundle.api_key"), "{out}");
    assert!(!unpacked(&home).exists());
    assert_eq!(Vault::keychain().secret("hello-bundle.api_key")?, None);
    Ok(())
}
