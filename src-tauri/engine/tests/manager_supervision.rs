//! Supervision against real crashing servers: restarts with
//! the policy's backoff, giving up, isolation, update rollback, reconcile
//! keeping processes, resources/prompts/subscriptions, roots, elicitation.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_engine::config::{RestartPolicy, ServerDef};
use switchboard_engine::events::{EngineEvent, ServerStatus};
use switchboard_engine::manager::{
    backoff, ElicitAnswer, Manager, ManagerOptions, RegistryError, Wanted,
};
use switchboard_tests::fixture_server_path;

fn opts() -> ManagerOptions {
    ManagerOptions {
        grace: Duration::from_millis(300),
        default_timeout: Duration::from_secs(20),
        ..ManagerOptions::default()
    }
}

fn fixture(name: &str, args: &[&str]) -> Wanted {
    let bin = fixture_server_path();
    let mut def = ServerDef::stdio(name, bin.to_str().unwrap(), &["--name", name]);
    def.args.extend(args.iter().map(|s| s.to_string()));
    def.restart_policy = Some(RestartPolicy {
        initial_delay_ms: 100,
        max_delay_ms: 400,
        backoff_multiplier: 2.0,
        max_restart_attempts: 3,
    });
    Wanted::new(def)
}

fn alive(pid: u32) -> bool {
    // Reaped processes have no /proc entry; a zombie would still show "Z".
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .split(") ")
            .nth(1)
            .is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => false,
    }
}

fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')))
}

async fn until(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn backoff_follows_the_policy() {
    let p = RestartPolicy::default();
    let ms: Vec<u128> = (1..=7).map(|a| backoff(&p, a).as_millis()).collect();
    assert_eq!(ms, [500, 1000, 2000, 4000, 8000, 15000, 15000]);
}

#[tokio::test]
async fn a_crash_restarts_with_the_policy_delay_and_reconnects() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    let mut events = m.subscribe();
    m.start(vec![fixture("crashy", &[])]).await;
    let pid1 = m.state("crashy").unwrap().pid.unwrap();
    let _ = m.call_tool("mcp_crashy_crash", None, None).await;
    let t_crash = Instant::now();
    let mut saw_restarting = None;
    let mut reconnected = None;
    while reconnected.is_none() {
        let ev = tokio::time::timeout(Duration::from_secs(10), events.recv()).await??;
        if let EngineEvent::Status { server, status } = ev {
            if server != "crashy" {
                continue;
            }
            match status {
                ServerStatus::Restarting { attempt, of } => {
                    saw_restarting = Some((attempt, of, Instant::now()))
                }
                ServerStatus::Connected if saw_restarting.is_some() => {
                    reconnected = Some(Instant::now())
                }
                _ => {}
            }
        }
    }
    let (attempt, of, _) = saw_restarting.unwrap();
    assert_eq!((attempt, of), (1, 3));
    let waited = reconnected.unwrap() - t_crash;
    assert!(
        waited >= Duration::from_millis(100),
        "the first restart waits initialDelayMs (took {waited:?})"
    );
    let pid2 = m.state("crashy").unwrap().pid.unwrap();
    assert_ne!(pid1, pid2, "a new process");
    until("the crashed process to be reaped", 5, || {
        !alive(pid1) && !zombie(pid1)
    })
    .await;
    assert_eq!(
        m.call_tool(
            "mcp_crashy_echo",
            json!({"text": "back"}).as_object().cloned(),
            None
        )
        .await?
        .text,
        "back"
    );
    assert_eq!(m.state("crashy").unwrap().restarts, 1);
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_crash_loop_gives_up_after_the_policy_attempts_and_stays_failed() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    let mut events = m.subscribe();
    let t0 = Instant::now();
    m.add_all(vec![fixture("loop", &["--fail-start"])]);
    let mut attempts = vec![];
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(15), events.recv()).await??;
        if let EngineEvent::Status { server, status } = ev {
            if server != "loop" {
                continue;
            }
            match status {
                ServerStatus::Restarting { attempt, .. } => attempts.push((attempt, t0.elapsed())),
                ServerStatus::Failed { error } => {
                    assert!(error.contains("gave up after 3 restarts"), "{error}");
                    break;
                }
                _ => {}
            }
        }
    }
    assert_eq!(attempts.iter().map(|a| a.0).collect::<Vec<_>>(), [1, 2, 3]);
    // Delays 100, 200, 400 ms: the whole loop takes at least their sum.
    assert!(
        t0.elapsed() >= Duration::from_millis(700),
        "{:?}",
        t0.elapsed()
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        matches!(m.status("loop"), Some(ServerStatus::Failed { .. })),
        "stays failed until the user acts"
    );
    // The user acts: a manual restart tries again from attempt 0.
    m.restart("loop").await?;
    assert!(matches!(
        m.status("loop"),
        Some(
            ServerStatus::Connecting
                | ServerStatus::Restarting { .. }
                | ServerStatus::Failed { .. }
        )
    ));
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn one_crashing_server_does_not_delay_another() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    m.add_all(vec![fixture("bad", &["--fail-start"])]);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let t0 = Instant::now();
    let r = m.start(vec![fixture("good", &[])]).await;
    assert_eq!(r.connected, ["good"]);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    // Status reads are never blocked by the crash loop.
    for _ in 0..100 {
        let _ = m.status("bad");
        let _ = m.states();
    }
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_deliberate_stop_never_restarts() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    m.start(vec![fixture("calm", &[])]).await;
    let pid = m.state("calm").unwrap().pid.unwrap();
    m.stop("calm").await?;
    assert_eq!(m.status("calm"), Some(ServerStatus::Disconnected));
    until("the process to exit", 5, || !alive(pid)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        m.status("calm"),
        Some(ServerStatus::Disconnected),
        "no restart after a stop"
    );
    m.start_server("calm").await?;
    until("reconnect", 10, || {
        m.status("calm") == Some(ServerStatus::Connected)
    })
    .await;
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_failed_update_restores_the_previous_definition() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    m.start(vec![fixture("upd", &[])]).await;
    let mut bad = fixture("upd", &["--fail-start"]);
    bad.def.restart_policy = Some(RestartPolicy {
        max_restart_attempts: 0,
        ..RestartPolicy::default()
    });
    let err = m.update(bad).await.unwrap_err();
    assert!(matches!(err, RegistryError::UpdateFailed { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("Failed to connect to \"upd\": "),
        "{err}"
    );
    until("the old definition to reconnect", 10, || {
        m.status("upd") == Some(ServerStatus::Connected)
    })
    .await;
    assert_eq!(
        m.call_tool(
            "mcp_upd_echo",
            json!({"text": "old"}).as_object().cloned(),
            None
        )
        .await?
        .text,
        "old"
    );
    // A good update replaces it.
    m.update(fixture("upd", &["--tool", "fresh"])).await?;
    assert!(m.tools().get("mcp_upd_fresh").is_some());
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn reconcile_touches_only_changed_servers() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    m.start(vec![
        fixture("keep", &[]),
        fixture("change", &[]),
        fixture("drop", &[]),
    ])
    .await;
    let pid = |n: &str| m.state(n).and_then(|s| s.pid);
    let (keep, change, dropped) = (
        pid("keep").unwrap(),
        pid("change").unwrap(),
        pid("drop").unwrap(),
    );
    let report = m
        .reconcile(vec![
            fixture("keep", &[]),
            fixture("change", &["--tool", "extra"]),
            fixture("new", &[]),
        ])
        .await;
    assert_eq!(report.kept, ["keep"]);
    assert_eq!(report.updated, ["change"]);
    assert_eq!(report.stopped, ["drop"]);
    assert_eq!(report.started, ["new"]);
    assert_eq!(
        pid("keep"),
        Some(keep),
        "untouched servers keep their process"
    );
    assert_ne!(pid("change"), Some(change));
    assert!(m.status("drop").is_none());
    until("the removed server's process to exit", 5, || {
        !alive(dropped)
    })
    .await;
    m.settle().await;
    assert!(m.tools().get("mcp_change_extra").is_some());
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn shutdown_leaves_no_process_and_no_zombie() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    m.start(vec![
        fixture("a", &[]),
        fixture("b", &[]),
        fixture("c", &["--ignore-pings"]),
    ])
    .await;
    let mut pids: Vec<u32> = ["a", "b", "c"]
        .iter()
        .map(|n| m.state(n).unwrap().pid.unwrap())
        .collect();
    for n in ["a", "b"] {
        let c: u32 = m
            .call_tool(&format!("mcp_{n}_spawn_child"), None, None)
            .await?
            .text
            .trim()
            .parse()?;
        pids.push(c);
    }
    m.shutdown().await;
    for p in pids {
        until(&format!("pid {p} to be gone"), 5, || !alive(p)).await;
        assert!(
            !zombie(p) || !std::path::Path::new(&format!("/proc/{p}")).exists(),
            "pid {p} is a zombie"
        );
    }
    Ok(())
}

#[tokio::test]
async fn tools_list_changed_relists_and_renames() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    m.start(vec![fixture("dyn", &[])]).await;
    let before = m.tools().tools.len();
    m.call_tool("mcp_dyn_change_tools", None, None).await?;
    until("the new tool to appear", 5, || {
        m.tools().tools.len() > before
    })
    .await;
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn resources_prompts_and_subscriptions_survive_a_restart() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    let mut events = m.subscribe();
    m.start(vec![fixture("res", &["--resources"])]).await;
    let list = m.list_resources("res").await?;
    assert!(
        list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["uri"] == "fixture://greeting"),
        "{list}"
    );
    assert!(
        list["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["uriTemplate"] == "fixture://item/{id}"),
        "{list}"
    );
    let read = m.read_resource("res", "fixture://greeting").await?;
    assert!(read.to_string().contains("text"), "{read}");
    let prompts = m.list_prompts("res").await?;
    assert!(prompts["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "greet"));
    let got = m
        .get_prompt("res", "greet", json!({"name": "Ada"}).as_object().cloned())
        .await?;
    assert!(got.to_string().contains("Ada"), "{got}");
    m.subscribe_resource("res", "fixture://counter").await?;
    let wait_update = |events: &mut tokio::sync::broadcast::Receiver<EngineEvent>| {
        let mut events = events.resubscribe();
        async move {
            loop {
                if let EngineEvent::ResourceUpdated { server, uri } = events.recv().await.unwrap() {
                    if server == "res" && uri == "fixture://counter" {
                        return;
                    }
                }
            }
        }
    };
    let w = wait_update(&mut events);
    m.call_tool("mcp_res_bump_counter", None, None).await?;
    tokio::time::timeout(Duration::from_secs(5), w)
        .await
        .expect("resources/updated arrives");
    // Crash it: the supervisor restarts it and restores the subscription.
    let _ = m.call_tool("mcp_res_crash", None, None).await;
    until("restart", 10, || {
        m.state("res")
            .is_some_and(|s| s.restarts == 1 && s.status == ServerStatus::Connected)
    })
    .await;
    let w = wait_update(&mut events);
    m.call_tool("mcp_res_bump_counter", None, None).await?;
    tokio::time::timeout(Duration::from_secs(5), w)
        .await
        .expect("the subscription was restored after the restart");
    assert!(matches!(
        m.list_resources("nope").await,
        Err(RegistryError::Unknown(_))
    ));
    m.stop("res").await?;
    assert_eq!(
        m.list_resources("res").await.unwrap_err(),
        RegistryError::NotConnected("res".into())
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn roots_come_from_project_folders() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    m.set_roots(&[PathBuf::from("/work/app")]).await;
    m.start(vec![fixture("rt", &[])]).await;
    // The fixture's `roots` tool asks us for roots/list.
    let out = m.call_tool("mcp_rt_roots", None, None).await?;
    assert_eq!(out.text, "file:///work/app");
    m.set_roots(&[PathBuf::from("/work/app"), PathBuf::from("/work/lib")])
        .await;
    let out = m.call_tool("mcp_rt_roots", None, None).await?;
    assert_eq!(
        out.text, "file:///work/app\nfile:///work/lib",
        "changes reach live sessions"
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn elicitation_is_answered_by_the_hook() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    let seen = Arc::new(std::sync::Mutex::new(vec![]));
    let s2 = seen.clone();
    m.set_elicitation_handler(Some(Arc::new(move |req| {
        s2.lock().unwrap().push(req.message.clone());
        Box::pin(async move { ElicitAnswer::Accept(json!({"name": "Ada"})) })
    })));
    m.start(vec![fixture("el", &[])]).await;
    let out = m.call_tool("mcp_el_elicit", None, None).await?;
    assert!(
        out.text.contains("\"accept\"") && out.text.contains("Ada"),
        "{}",
        out.text
    );
    assert_eq!(seen.lock().unwrap().as_slice(), ["What is your name?"]);
    // Without a handler (headless default) the request is declined.
    m.set_elicitation_handler(None);
    let out = m.call_tool("mcp_el_elicit", None, None).await?;
    assert!(out.text.contains("\"decline\""), "{}", out.text);
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn sampling_is_refused_with_a_clear_error() -> anyhow::Result<()> {
    // Checked at the handler: Switchboard offers no model.
    let caps = serde_json::to_value(
        switchboard_engine::manager::connection::SwitchboardClient::capabilities(),
    )?;
    assert!(caps.get("sampling").is_none(), "{caps}");
    assert!(
        caps.get("roots").is_some() && caps.get("elicitation").is_some(),
        "{caps}"
    );
    Ok(())
}
