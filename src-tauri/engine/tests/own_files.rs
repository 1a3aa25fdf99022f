//! Switchboard's own files (`settings.json`, `servers.json`): a settings file
//! that does not parse is shown with its line and never replaced with
//! defaults; the app and the CLI changing the priority at the same time lose
//! none of each other's changes; the files and their folder are private.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::json;
use switchboard_engine::discovery::{discover, ordered_sources, DiscoverOptions};
use switchboard_engine::engine::Engine;
use switchboard_engine::host::Host;
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::settings::{settings_path, Settings};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

/// A fake home that the CLI (through its environment) and an `Engine` in
/// this process (through `host`) both see as the machine.
struct Home {
    temp: switchboard_tests::TempHome,
    home: PathBuf,
    host: Host,
}

impl Home {
    fn new() -> Home {
        let temp = switchboard_tests::TempHome::empty();
        Home {
            home: temp.path().to_path_buf(),
            host: temp.host(),
            temp,
        }
    }

    fn cli(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .env_clear()
            .envs(self.temp.vars())
            .output()
            .unwrap()
    }

    fn engine(&self) -> Arc<Engine> {
        let opts = ManagerOptions {
            cache_path: None,
            home: self.home.clone(),
            ..ManagerOptions::default()
        };
        Arc::new(Engine::new(self.host.clone(), opts, vec![]))
    }

    fn settings_file(&self) -> PathBuf {
        settings_path(&self.host)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        self.temp.write(rel, text)
    }

    /// Source ids in the order the newest settings give.
    fn order(&self) -> Vec<String> {
        ordered_sources(
            &self.host,
            &Settings::load(&self.host).0,
            &DiscoverOptions::default(),
        )
        .into_iter()
        .map(|s| s.id)
        .collect()
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Line 4 is where the parser gives up (a missing comma).
const BROKEN_SETTINGS: &str = "{\n  \"priority\": [\"cursor-user\", \"claude-desktop\"],\n  \"projects\": [\n    {\"path\": \"/work/a\" \"trusted\": true}\n  ],\n  \"parked\": []\n}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_settings_file_is_shown_with_its_line_and_never_replaced() -> anyhow::Result<()> {
    let h = Home::new();
    let settings = h.write(".config/switchboard/settings.json", BROKEN_SETTINGS);
    // A client without an off switch: disabling parks the entry in the settings.
    let desktop_text =
        serde_json::to_string_pretty(&json!({ "mcpServers": { "a": { "command": "a-server" } } }))?;
    let desktop = h.write(".config/Claude/claude_desktop_config.json", &desktop_text);
    let shown = format!("{}:4:", settings.display());

    // Shown: in discovery, with Switchboard's own source, and by the CLI.
    let d = discover(
        &h.host,
        &Settings::load(&h.host).0,
        &DiscoverOptions::default(),
    );
    let own = d.source("switchboard").unwrap();
    assert!(
        own.warnings
            .iter()
            .any(|w| w.starts_with(&shown) && w.contains("do not parse")),
        "the Sources view shows file and line: {:?}",
        own.warnings
    );
    let o = h.cli(&["discover"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&shown),
        "`discover` shows file and line:\n{}",
        String::from_utf8_lossy(&o.stdout)
    );

    // Refused by the CLI, with what to do.
    for args in [
        &["priority", "codex-user"][..],
        &["project", "add", "/tmp"],
        &["disable", "a", "--source", "claude-desktop"],
    ] {
        let o = h.cli(args);
        assert!(!o.status.success(), "{args:?} must fail");
        let e = stderr(&o);
        assert!(
            e.contains(&settings.display().to_string())
                && e.contains("line 4")
                && e.contains("fix the file"),
            "{args:?}: the error names file, line and what to do: {e}"
        );
        assert_eq!(
            std::fs::read_to_string(&settings)?,
            BROKEN_SETTINGS,
            "{args:?} left settings.json byte for byte"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&desktop)?,
        desktop_text,
        "the entry was not taken out of Claude Desktop's file either"
    );

    // Refused by the app's engine.
    let engine = h.engine();
    engine.start().await;
    let err = engine
        .set_priority(vec!["codex-user".into()])
        .await
        .unwrap_err();
    assert_eq!(err.code(), "unparsable");
    let msg = err.to_string();
    assert!(
        msg.contains(&settings.display().to_string())
            && msg.contains("line 4")
            && msg.contains("never replaces it with defaults"),
        "{msg}"
    );
    assert!(engine.add_project(&h.home, true).await.is_err());
    assert_eq!(
        std::fs::read_to_string(&settings)?,
        BROKEN_SETTINGS,
        "the engine left settings.json byte for byte"
    );
    engine.shutdown().await;

    // Once fixed, changes go through again, on top of what the user wrote.
    std::fs::write(
        &settings,
        BROKEN_SETTINGS.replace("\"/work/a\" \"trusted\"", "\"/work/a\", \"trusted\""),
    )?;
    let o = h.cli(&["priority", "codex-user"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = Settings::load(&h.host).0;
    let at = |id: &str| s.priority.iter().position(|p| p == id).unwrap();
    assert_eq!(s.priority[0], "codex-user");
    assert!(
        at("cursor-user") < at("claude-desktop"),
        "the user's order is kept under the new first: {:?}",
        s.priority
    );
    assert_eq!(s.projects.len(), 1, "the user's project folder is kept");
    Ok(())
}

#[test]
fn a_broken_servers_json_is_shown_with_its_line_and_not_written() {
    let h = Home::new();
    let text = "{\n  \"mcpServers\": {\n    \"a\": { \"command\": \"x\" }\n    \"b\": { \"command\": \"y\" }\n  }\n}\n";
    let own = h.write(".config/switchboard/servers.json", text);
    let o = h.cli(&["discover"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    // The parser stops right after the entry that lacks its comma.
    assert!(
        out.contains(&format!("{}:3:", own.display())),
        "`discover` names file and line:\n{out}"
    );
    for args in [
        &["add", "c", "--", "some-server"][..],
        &["remove", "a", "--source", "switchboard"],
        &["disable", "a", "--source", "switchboard"],
    ] {
        let o = h.cli(args);
        assert!(!o.status.success(), "{args:?} must fail");
        let e = stderr(&o);
        assert!(
            e.contains(&format!("cannot edit {}: it does not parse", own.display()))
                && e.contains("line 3")
                && e.contains("fix the file first"),
            "{args:?}: {e}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&own).unwrap(),
        text,
        "servers.json is byte for byte what the user wrote"
    );
}

/// Two processes, the CLI (`switchboard priority ID`) and an `Engine` in this
/// process (`set_priority`), each move 50 different sources to the top,
/// interleaved. A move lost to the other process's write would leave its
/// source below the top; so every move reported done must be in the final
/// order, newest first, each process's moves in the order it made them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_and_the_app_changing_priority_together_lose_no_change() -> anyhow::Result<()> {
    let h = Home::new();
    // Ten trusted project folders give more than 100 sources to move.
    let projects: Vec<_> = (0..10)
        .map(|i| {
            let p = h.home.join(format!("projects/p{i}"));
            std::fs::create_dir_all(&p).unwrap();
            json!({ "path": p, "trusted": true })
        })
        .collect();
    h.write(
        ".config/switchboard/settings.json",
        &serde_json::to_string_pretty(&json!({ "projects": projects }))?,
    );
    let order = h.order();
    assert!(order.len() >= 100, "{} sources", order.len());
    let ids: Vec<String> = order.iter().rev().take(100).cloned().collect();
    let cli_ids: Vec<String> = ids.iter().step_by(2).cloned().collect();
    let app_ids: Vec<String> = ids.iter().skip(1).step_by(2).cloned().collect();

    let engine = h.engine();
    engine.start().await;

    // The CLI runs in a thread, one process after another; the app makes one
    // change each time a CLI run ends, so it always races the next run.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let cli = {
        let ids = cli_ids.clone();
        let env = (h.home.clone(),);
        std::thread::spawn(move || {
            let mut applied = vec![];
            let mut refused = 0;
            for id in ids {
                let o = Command::new(BIN)
                    .args(["priority", &id])
                    .env_clear()
                    .env("HOME", &env.0)
                    .env("PATH", std::env::var("PATH").unwrap_or_default())
                    .env("SWITCHBOARD_SYSTEM_ROOT", env.0.join("sys"))
                    .output()
                    .unwrap();
                if o.status.success() {
                    applied.push(id);
                } else {
                    let e = stderr(&o);
                    assert!(
                        e.contains("changed since"),
                        "a CLI change failed other than by a conflict: {e}"
                    );
                    refused += 1;
                }
                let _ = done_tx.send(());
            }
            (applied, refused)
        })
    };
    let mut app_applied = vec![];
    let mut app_refused = 0;
    for id in &app_ids {
        let rx = &done_rx;
        tokio::task::block_in_place(|| rx.recv().ok());
        match engine.set_priority(vec![id.clone()]).await {
            Ok(_) => app_applied.push(id.clone()),
            Err(e) => {
                assert_eq!(
                    e.code(),
                    "conflict",
                    "an app change failed other than by a conflict: {e}"
                );
                app_refused += 1;
            }
        }
    }
    let (cli_applied, cli_refused) = cli.join().unwrap();
    engine.shutdown().await;

    let total = cli_applied.len() + app_applied.len();
    assert_eq!(
        total + cli_refused + app_refused,
        100,
        "every change was either applied or refused"
    );
    let finale = h.order();
    let top = &finale[..total];
    let mut top_cli: Vec<&String> = top.iter().filter(|id| cli_ids.contains(id)).collect();
    let mut top_app: Vec<&String> = top.iter().filter(|id| app_ids.contains(id)).collect();
    top_cli.reverse();
    top_app.reverse();
    assert_eq!(
        top_cli,
        cli_applied.iter().collect::<Vec<_>>(),
        "every CLI change is in the final order, in the order it was made"
    );
    assert_eq!(
        top_app,
        app_applied.iter().collect::<Vec<_>>(),
        "every app change is in the final order, in the order it was made"
    );
    eprintln!(
        "applied: {} by the CLI, {} by the app; refused with a conflict: {} and {}",
        cli_applied.len(),
        app_applied.len(),
        cli_refused,
        app_refused
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_priority_change_in_the_app_keeps_a_folder_the_cli_added_meanwhile() -> anyhow::Result<()>
{
    let h = Home::new();
    let engine = h.engine();
    engine.start().await;
    // The engine read the settings before the CLI changed them.
    let o = h.cli(&["project", "add", h.home.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    engine.set_priority(vec!["codex-user".into()]).await?;
    let s = Settings::load(&h.host).0;
    assert_eq!(
        s.projects.len(),
        1,
        "the CLI's folder survived the app's write"
    );
    assert_eq!(s.priority[0], "codex-user");
    engine.shutdown().await;
    Ok(())
}

#[cfg(unix)]
#[test]
fn own_files_and_their_folder_are_created_private() -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let h = Home::new();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let o = h.cli(&["add", "fx", "--", "some-server", "--flag"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let own_dir = h.home.join(".config/switchboard");
    assert_eq!(mode(&own_dir), 0o700, "Switchboard's folder");
    assert_eq!(mode(&own_dir.join("servers.json")), 0o600, "servers.json");
    let o = h.cli(&["priority", "codex-user"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(mode(&h.settings_file()), 0o600, "settings.json");
    // The tool cache (what each server offers) too.
    let fixture = switchboard_tests::fixture_server_path()
        .to_string_lossy()
        .to_string();
    let o = h.cli(&["add", "fx2", "--", &fixture, "--name", "fx2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = h.cli(&["status", "--server", "fx2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        mode(&h.home.join(".cache/switchboard/tool-cache.json")),
        0o600,
        "tool-cache.json"
    );
    // A client's file Switchboard creates is an ordinary one.
    let o = h.cli(&["add", "fx", "--source", "cursor-user", "--", "some-server"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        mode(&h.home.join(".cursor/mcp.json")) & 0o077 != 0,
        "a client's new file is not made private"
    );
    Ok(())
}
