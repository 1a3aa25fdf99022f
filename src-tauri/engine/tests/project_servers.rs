//! Project servers run as their client would run them: in the project
//! folder (a relative `cwd` against the defining file's folder), only when
//! Claude Code would run a `.mcp.json` server, and only with the content the
//! user trusted — a server that changed or appeared since is held, with the
//! difference, until the user approves it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_engine::config::ServerDef;
use switchboard_engine::engine::Engine;
use switchboard_engine::events::ServerStatus;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::trust::Held;
use switchboard_engine::writer::edit::ServerEdit;

const WAIT: Duration = Duration::from_secs(20);

struct Machine {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    engine: Arc<Engine>,
}

fn machine() -> Machine {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = home.join("code/webapp");
    std::fs::create_dir_all(project.join("tools")).unwrap();
    // `sh ./tools/server.sh NAME ARGS…`: notes the folder it runs in, then becomes the fixture server.
    let script = format!(
        "#!/bin/sh\npwd > \"$PWD_OUT\"\nname=$1\nshift\nexec '{}' --name \"$name\" \"$@\"\n",
        switchboard_tests::fixture_server_path().display()
    );
    std::fs::write(project.join("tools/server.sh"), &script).unwrap();
    std::fs::write(project.join("server.sh"), &script).unwrap();
    let host = Host {
        os: Os::Linux,
        home: home.clone(),
        vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
        system_root: dir.path().join("sys"),
    };
    let opts = ManagerOptions {
        cache_path: None,
        home: home.clone(),
        grace: Duration::from_millis(200),
        ..ManagerOptions::default()
    };
    let engine = Arc::new(Engine::new(host, opts, vec![]));
    let project = std::fs::canonicalize(&project).unwrap();
    Machine {
        _dir: dir,
        home,
        project,
        engine,
    }
}

fn write(path: &Path, v: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// A server that runs `sh <script> NAME` and notes its folder in `out`.
fn script_server(name: &str, script: &str, out: &Path) -> Value {
    json!({ "command": "sh", "args": [script, name], "env": { "PWD_OUT": out.to_string_lossy() } })
}

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    let end = tokio::time::Instant::now() + WAIT;
    while !f() {
        assert!(
            tokio::time::Instant::now() < end,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn held(e: &Engine, name: &str) -> Option<Held> {
    e.snapshot()
        .server(name)
        .and_then(|s| s.winner.held.clone())
}

fn pids(e: &Engine) -> HashMap<String, u32> {
    e.manager()
        .states()
        .into_iter()
        .filter_map(|s| Some((s.name.clone(), s.pid?)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_servers_run_in_their_folder_and_a_relative_cwd_is_the_files() -> anyhow::Result<()>
{
    let m = machine();
    let out = m.home.join("out");
    std::fs::create_dir_all(&out)?;
    write(
        &m.project.join(".cursor/mcp.json"),
        &json!({ "mcpServers": {
        // Like `node ./tools/server.js` in a project's config.
        "in-project": script_server("in-project", "./tools/server.sh", &out.join("in-project")),
        // A relative cwd is relative to the folder of the file: `.cursor/..`.
        "relative-cwd": { "cwd": "../tools", "command": "sh", "args": ["./server.sh", "relative-cwd"], "env": { "PWD_OUT": out.join("relative-cwd").to_string_lossy() } },
        "missing-cwd": { "cwd": "nowhere", "command": "sh", "args": ["./server.sh", "missing-cwd"] },
    } }),
    );
    m.engine.add_project(&m.project, true).await?;
    m.engine.start().await;
    until("both servers to connect", || {
        ["in-project", "relative-cwd"]
            .iter()
            .all(|n| m.engine.manager().status(n) == Some(ServerStatus::Connected))
    })
    .await;
    let folder = |n: &str| {
        std::fs::read_to_string(out.join(n))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(
        folder("in-project"),
        m.project.to_string_lossy(),
        "a project server runs in its project folder"
    );
    assert_eq!(
        folder("relative-cwd"),
        m.project.join("tools").to_string_lossy(),
        "cwd ../tools from .cursor/mcp.json"
    );
    until("missing-cwd to fail", || {
        matches!(
            m.engine.manager().status("missing-cwd"),
            Some(ServerStatus::Failed { .. } | ServerStatus::Restarting { .. })
        )
    })
    .await;
    let err = m
        .engine
        .manager()
        .state("missing-cwd")
        .unwrap()
        .last_error
        .unwrap_or_default();
    let want = format!("its working folder {} does not exist (\"cwd\": \"nowhere\"); fix \"cwd\" in its config file", m.project.join(".cursor/nowhere").display());
    assert!(err.contains(&want), "{err}");
    m.engine.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mcp_json_server_runs_only_when_claude_code_would() -> anyhow::Result<()> {
    let m = machine();
    let out = m.home.join("out");
    let server = |n: &str| script_server(n, "./tools/server.sh", &out.join(n));
    write(
        &m.project.join(".mcp.json"),
        &json!({ "mcpServers": { "approved": server("approved"), "rejected": server("rejected"), "pending": server("pending") } }),
    );
    let p = m.project.to_string_lossy().to_string();
    write(
        &m.home.join(".claude.json"),
        &json!({ "projects": { p.clone(): { "enabledMcpjsonServers": ["approved"], "disabledMcpjsonServers": [] } } }),
    );
    write(
        &m.project.join(".claude/settings.local.json"),
        &json!({ "disabledMcpjsonServers": ["rejected"] }),
    );
    m.engine.add_project(&m.project, true).await?;
    m.engine.start().await;
    let _w = m.engine.watch().await?;
    until("approved to connect", || {
        m.engine.manager().status("approved") == Some(ServerStatus::Connected)
    })
    .await;

    let local = m.project.join(".claude/settings.local.json");
    match held(&m.engine, "rejected") {
        Some(Held::NotApproved { reason }) => assert_eq!(
            reason,
            format!("Claude Code does not run it: it is rejected for this project (disabledMcpjsonServers in {}); approve it to run it", local.display())
        ),
        other => panic!("rejected: {other:?}"),
    }
    match held(&m.engine, "pending") {
        Some(Held::NotApproved { reason }) => assert_eq!(
            reason,
            "Claude Code has not approved it for this project (it asks when the project is opened); approve it here or in Claude Code to run it"
        ),
        other => panic!("pending: {other:?}"),
    }
    assert!(
        m.engine.manager().state("rejected").is_none()
            && m.engine.manager().state("pending").is_none(),
        "held servers are not started"
    );

    // Approving the pending one records it where Claude Code keeps its list, and starts it.
    let done = m
        .engine
        .approve_project(&m.project, Some("pending"))
        .await?;
    assert_eq!(
        (done.servers.clone(), done.for_claude_code.clone()),
        (vec!["pending".to_string()], vec!["pending".to_string()])
    );
    until("pending to connect", || {
        m.engine.manager().status("pending") == Some(ServerStatus::Connected)
    })
    .await;
    let claude: Value =
        serde_json::from_str(&std::fs::read_to_string(m.home.join(".claude.json"))?)?;
    assert_eq!(
        claude["projects"][&p]["enabledMcpjsonServers"],
        json!(["approved", "pending"])
    );

    // A rejection in Claude Code's settings file is the user's to lift there.
    let err = m
        .engine
        .approve_project(&m.project, Some("rejected"))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(err, format!("cannot edit {}: server \"rejected\" is rejected for this project there (disabledMcpjsonServers); remove it from that list to approve it", local.display()));
    // enableAllProjectMcpServers approves every server; a rejection still wins.
    write(
        &local,
        &json!({ "enableAllProjectMcpServers": true, "disabledMcpjsonServers": [] }),
    );
    until("rejected to connect once the rejection is lifted", || {
        m.engine.manager().status("rejected") == Some(ServerStatus::Connected)
    })
    .await;
    m.engine.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_or_added_server_of_a_trusted_folder_is_held_until_approved() -> anyhow::Result<()>
{
    let m = machine();
    let out = m.home.join("out");
    let file = m.project.join(".cursor/mcp.json");
    let mut one = script_server("one", "./tools/server.sh", &out.join("one"));
    one["env"]["API_KEY"] = json!("sk-secret-value");
    let two = script_server("two", "./tools/server.sh", &out.join("two"));
    write(
        &file,
        &json!({ "mcpServers": { "one": one.clone(), "two": two.clone() } }),
    );
    m.engine.add_project(&m.project, true).await?;
    m.engine.start().await;
    let _w = m.engine.watch().await?;
    until("both to connect", || {
        ["one", "two"]
            .iter()
            .all(|n| m.engine.manager().status(n) == Some(ServerStatus::Connected))
    })
    .await;
    let settings = std::fs::read_to_string(m.home.join(".config/switchboard/settings.json"))?;
    assert!(
        settings.contains("trustedServers") && !settings.contains("sk-secret-value"),
        "pinned, without the secret: {settings}"
    );
    let before = pids(&m.engine);

    // A pull changes what `one` runs and adds `three`.
    let mut changed = one.clone();
    changed["args"] = json!(["./tools/server.sh", "one", "--tool", "extra"]);
    changed["env"]["API_KEY"] = json!("sk-other-secret");
    let three = script_server("three", "./tools/server.sh", &out.join("three"));
    write(
        &file,
        &json!({ "mcpServers": { "one": changed, "two": two.clone(), "three": three } }),
    );
    until("one to be held and stopped", || {
        held(&m.engine, "one").is_some() && m.engine.manager().state("one").is_none()
    })
    .await;
    match held(&m.engine, "one") {
        Some(Held::Changed { reason, changes }) => {
            assert_eq!(
                reason,
                "changed since you trusted this folder; approve the change to run it"
            );
            let shown: Vec<(String, Option<String>, Option<String>)> = changes
                .into_iter()
                .map(|c| (c.field, c.before, c.after))
                .collect();
            assert_eq!(
                shown,
                vec![
                    (
                        "args".to_string(),
                        Some("./tools/server.sh one".to_string()),
                        Some("./tools/server.sh one --tool extra".to_string())
                    ),
                    (
                        "env.API_KEY".to_string(),
                        Some("a value".to_string()),
                        Some("another value".to_string())
                    ),
                ]
            );
        }
        other => panic!("one: {other:?}"),
    }
    match held(&m.engine, "three") {
        Some(Held::Changed { reason, .. }) => assert_eq!(
            reason,
            "added to this folder since you trusted it; approve it to run it"
        ),
        other => panic!("three: {other:?}"),
    }
    assert!(m.engine.manager().state("three").is_none());
    assert_eq!(
        pids(&m.engine).get("two"),
        before.get("two"),
        "an unchanged server keeps running"
    );

    // Approving one server runs it; the other stays held.
    let done = m.engine.approve_project(&m.project, Some("one")).await?;
    assert_eq!(done.servers, ["one"]);
    until("one to run its new content", || {
        m.engine.manager().tools().get("mcp_one_extra").is_some()
    })
    .await;
    assert!(held(&m.engine, "three").is_some());

    // What the user writes through Switchboard is trusted as written.
    let mut edited = ServerDef::stdio("two", "sh", &["./tools/server.sh", "two", "--tool", "more"]);
    edited.env.insert(
        "PWD_OUT".into(),
        out.join("two").to_string_lossy().to_string(),
    );
    m.engine
        .edit(
            &format!("cursor-project@{}", m.project.display()),
            ServerEdit::Update {
                name: "two".into(),
                def: edited,
            },
        )
        .await?;
    assert!(
        held(&m.engine, "two").is_none(),
        "an edit made in Switchboard is not held"
    );
    until("two to restart with its new args", || {
        m.engine.manager().tools().get("mcp_two_more").is_some()
    })
    .await;

    // Copied into the folder through Switchboard: trusted as copied.
    let own = m.home.join(".config/switchboard/servers.json");
    write(
        &own,
        &json!({ "mcpServers": { "mine": script_server("mine", "./tools/server.sh", &out.join("mine")) } }),
    );
    let project_source = format!("cursor-project@{}", m.project.display());
    until("mine to be discovered", || {
        m.engine.snapshot().server("mine").is_some()
    })
    .await;
    m.engine
        .copy_server("mine", "switchboard", &project_source, false)
        .await?;
    let d = m.engine.snapshot();
    let copy = d
        .server("mine")
        .unwrap()
        .definitions
        .iter()
        .find(|def| def.source == project_source)
        .cloned()
        .expect("the copy is listed");
    assert!(copy.held.is_none(), "{:?}", copy.held);

    // Approving the whole folder takes the rest.
    let done = m.engine.approve_project(&m.project, None).await?;
    assert_eq!(done.servers, ["three"]);
    until("three to connect", || {
        m.engine.manager().status("three") == Some(ServerStatus::Connected)
    })
    .await;
    m.engine.shutdown().await;
    Ok(())
}
