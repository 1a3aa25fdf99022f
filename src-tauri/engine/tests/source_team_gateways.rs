//! The Team source: Switchboard's list of team gateways
//! (`<config>/switchboard/team-gateways.json`), a source of its own next to
//! Switchboard's `servers.json`. Discovery lists it under its own id and
//! name; adding a team gateway writes there, through the same writer as every
//! edit (nothing else in the file changes, the change is in the history, and
//! it can be undone).

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use switchboard_engine::config::{ServerDef, ServerPatch, Transport};
use switchboard_engine::engine::Engine;
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::ManagerOptions;
use switchboard_engine::sources::{default_order, team_source, Client, Level, TEAM_SOURCE_ID};
use switchboard_engine::writer::edit::ServerEdit;

fn host(home: &Path) -> Host {
    Host {
        os: Os::Linux,
        home: home.to_path_buf(),
        vars: [("HOME".to_string(), home.to_string_lossy().to_string())].into(),
        system_root: home.join("sys"),
    }
}

fn engine(home: &Path) -> Engine {
    let opts = ManagerOptions {
        gate: Duration::from_millis(100),
        grace: Duration::from_millis(200),
        home: home.to_path_buf(),
        ..ManagerOptions::default()
    };
    Engine::new(host(home), opts, vec![])
}

#[test]
fn the_team_list_is_its_own_source_right_after_switchboards_file() {
    let dir = tempfile::tempdir().unwrap();
    let h = host(dir.path());
    let order = default_order(&h, &[]);
    assert_eq!(order[0].id, "switchboard");
    let team = &order[1];
    assert_eq!(team.id, TEAM_SOURCE_ID);
    assert_eq!(team.client, Client::Team);
    assert_eq!(team.level, Level::User);
    assert!(!team.read_only);
    assert_eq!(
        team.path,
        dir.path().join(".config/switchboard/team-gateways.json"),
        "next to servers.json, not called team.json (a team gateway's access rules)"
    );
    assert_eq!(team_source(&h), *team);
    assert_eq!(Client::Team.display_name(), "Team");
    assert_eq!(
        serde_json::to_value(Client::Team).unwrap(),
        json!("team"),
        "the UI's client id"
    );
    assert_eq!(Client::Team.restart_hint(), None, "Switchboard follows it");

    // A priority saved before the Team source existed: it comes right after
    // Switchboard's own file, wherever that was moved.
    let ids = ["claude-code-user", "switchboard", "cursor-user"].map(String::from);
    let saved = switchboard_engine::sources::apply_priority(order.clone(), &ids);
    let pos = |id: &str| saved.iter().position(|s| s.id == id).unwrap();
    assert_eq!(pos(TEAM_SOURCE_ID), pos("switchboard") + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_lists_the_team_source_and_its_gateways() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join(".config/switchboard/team-gateways.json");
    std::fs::create_dir_all(path.parent().unwrap())?;
    std::fs::write(
        &path,
        r#"{"mcpServers": {"acme": {"url": "https://mcp.acme.example/mcp"}}}"#,
    )?;
    let e = engine(dir.path());
    let d = e.rediscover();
    let s = d.source(TEAM_SOURCE_ID).expect("the Team source is listed");
    assert_eq!(s.client, Client::Team);
    assert_eq!(s.client_name, "Team");
    assert_eq!(s.path, path);
    assert!(s.exists && !s.read_only);
    assert_eq!(s.server_count, 1);
    assert_eq!(s.priority, 1, "right after Switchboard's own file");
    assert!(
        s.fields.contains(&"oauth.clientId"),
        "a team gateway can be given the OAuth app the identity provider wants: {:?}",
        s.fields
    );
    let acme = d.server("acme").expect("acme is discovered");
    assert_eq!(acme.winner.source, TEAM_SOURCE_ID);
    assert_eq!(acme.winner.def.transport, Transport::Http);
    assert_eq!(
        acme.winner.def.url.as_deref(),
        Some("https://mcp.acme.example/mcp")
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adding_a_team_gateway_writes_the_team_list_losslessly_and_is_undoable(
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let cfg = dir.path().join(".config/switchboard");
    std::fs::create_dir_all(&cfg)?;
    let team = cfg.join("team-gateways.json");
    let own = cfg.join("servers.json");
    // Laid out by hand, with a key Switchboard does not know.
    let before = "{\n  \"note\": \"ours\",\n  \"mcpServers\": {\n    \"acme\": {\n      \"url\": \"https://mcp.acme.example/mcp\",\n      \"x-owner\": \"platform team\"\n    }\n  }\n}\n";
    std::fs::write(&team, before)?;
    let own_before = r#"{"mcpServers": {"local": {"command": "true"}}}"#;
    std::fs::write(&own, own_before)?;

    let e = engine(dir.path());
    e.rediscover();
    e.edit(
        TEAM_SOURCE_ID,
        ServerEdit::Add(ServerDef::remote(
            "globex",
            Transport::Http,
            "https://gw.globex.example/mcp",
        )),
    )
    .await?;

    let after = std::fs::read_to_string(&team)?;
    assert!(
        after.starts_with(
            "{\n  \"note\": \"ours\",\n  \"mcpServers\": {\n    \"acme\": {\n      \"url\": \"https://mcp.acme.example/mcp\",\n      \"x-owner\": \"platform team\"\n    },"
        ),
        "everything before the new entry is as it was:\n{after}"
    );
    let v: serde_json::Value = serde_json::from_str(&after)?;
    assert_eq!(
        v["mcpServers"]["globex"],
        json!({"url": "https://gw.globex.example/mcp"}),
        "a URL alone: streamable HTTP"
    );
    assert_eq!(v["note"], "ours");
    assert_eq!(
        std::fs::read_to_string(&own)?,
        own_before,
        "Switchboard's own servers.json is not touched"
    );

    let d = e.snapshot();
    assert_eq!(d.server("globex").unwrap().winner.source, TEAM_SOURCE_ID);

    let history = e.history();
    let last = history.first().expect("the add is in the history");
    assert_eq!(last.server.as_deref(), Some("globex"));
    assert_eq!(last.files.len(), 1);
    assert_eq!(last.files[0].path, team);
    assert!(last.summary.contains("Team"), "{}", last.summary);

    e.undo(None).await?;
    assert_eq!(
        std::fs::read_to_string(&team)?,
        before,
        "undo gives the file back byte for byte"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_team_gateway_creates_the_file() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let e = engine(dir.path());
    let d = e.rediscover();
    let s = d.source(TEAM_SOURCE_ID).unwrap();
    assert!(!s.exists);
    e.edit(
        TEAM_SOURCE_ID,
        ServerEdit::Add(ServerDef::remote(
            "acme",
            Transport::Http,
            "https://mcp.acme.example/mcp",
        )),
    )
    .await?;
    let team = dir.path().join(".config/switchboard/team-gateways.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&team)?)?;
    assert_eq!(
        v,
        json!({"mcpServers": {"acme": {"url": "https://mcp.acme.example/mcp"}}})
    );
    assert!(
        !dir.path().join(".config/switchboard/servers.json").exists(),
        "nothing is written to servers.json"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&team)?.permissions().mode() & 0o077,
            0,
            "made private, as Switchboard's own files are"
        );
    }
    Ok(())
}

/// The Team source holds team gateways, by URL: a server that runs a command
/// (added, installed, copied or edited into it) is refused with the file and
/// the server named, and the file is left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_runs_a_command_is_refused_in_the_team_list() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let team = dir.path().join(".config/switchboard/team-gateways.json");
    std::fs::create_dir_all(team.parent().unwrap())?;
    let before = "{\"mcpServers\": {\"acme\": {\"url\": \"https://mcp.acme.example/mcp\"}}}\n";
    std::fs::write(&team, before)?;
    let e = engine(dir.path());
    e.rediscover();

    let refused = e
        .edit(
            TEAM_SOURCE_ID,
            ServerEdit::Add(ServerDef::stdio("files", "npx", &["-y", "files-mcp"])),
        )
        .await
        .expect_err("a command is not a team gateway");
    let message = refused.to_string();
    assert!(message.contains(&team.display().to_string()), "{message}");
    assert!(message.contains("\"files\" runs a command"), "{message}");
    assert!(message.contains("another source"), "{message}");

    // An edit that turns the gateway into a command is refused the same way.
    let current = e.snapshot().server("acme").unwrap().winner.def.clone();
    let mut local = ServerDef::stdio("acme", "acme-mcp", &[]);
    local.enabled = current.enabled;
    let refused = e
        .edit(
            TEAM_SOURCE_ID,
            ServerEdit::Patch {
                name: "acme".into(),
                patch: ServerPatch::between(&current, &local),
            },
        )
        .await
        .expect_err("a gateway edited into a command");
    assert!(
        refused.to_string().contains("\"acme\" runs a command"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_to_string(&team)?,
        before,
        "the file is as it was"
    );
    assert!(e.history().is_empty(), "nothing was written");

    // Edits that keep it a URL go through.
    let mut moved = current.clone();
    moved.url = Some("https://mcp2.acme.example/mcp".into());
    e.edit(
        TEAM_SOURCE_ID,
        ServerEdit::Patch {
            name: "acme".into(),
            patch: ServerPatch::between(&current, &moved),
        },
    )
    .await?;
    assert!(std::fs::read_to_string(&team)?.contains("mcp2.acme.example"));
    Ok(())
}
