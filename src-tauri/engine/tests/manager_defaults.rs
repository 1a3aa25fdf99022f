//! The manager's live defaults (timeout, restart policy, health interval)
//! and registry operations that never wait for another one's handshake.
//! Every wait is for a condition, bounded generously; no fixed sleeps.

use std::time::{Duration, Instant};

use switchboard_engine::config::{RestartPolicy, ServerDef};
use switchboard_engine::doctor::FailureClass;
use switchboard_engine::events::{EngineEvent, ServerStatus};
use switchboard_engine::manager::orphans::{this_owner, OWNER_VAR};
use switchboard_engine::manager::{Manager, ManagerDefaults, ManagerOptions, Wanted};
use switchboard_tests::fixture_server_path;

fn opts() -> ManagerOptions {
    ManagerOptions {
        grace: Duration::from_millis(300),
        default_timeout: Duration::from_secs(20),
        ..ManagerOptions::default()
    }
}

/// A fixture server without a timeout or restart policy of its own.
fn fixture(name: &str, args: &[&str]) -> Wanted {
    let bin = fixture_server_path();
    let mut def = ServerDef::stdio(name, bin.to_str().unwrap(), &["--name", name]);
    def.args.extend(args.iter().map(|s| s.to_string()));
    Wanted::new(def)
}

fn quick_policy(max_restart_attempts: u32) -> RestartPolicy {
    RestartPolicy {
        initial_delay_ms: 20,
        max_delay_ms: 50,
        backoff_multiplier: 1.0,
        max_restart_attempts,
    }
}

async fn until(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The error of `server`'s `Failed` event, and the attempts of its
/// `Restarting` events before it.
async fn until_failed(
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    server: &str,
) -> (String, Vec<u32>) {
    let mut attempts = vec![];
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("an event within 30 s")
            .expect("the event channel is open");
        if let EngineEvent::Status { server: s, status } = ev {
            if s != server {
                continue;
            }
            match status {
                ServerStatus::Restarting { attempt, .. } => attempts.push(attempt),
                ServerStatus::Failed { error } => return (error, attempts),
                _ => {}
            }
        }
    }
}

#[tokio::test]
async fn the_options_are_the_first_defaults_and_set_defaults_replaces_them() {
    let m = Manager::new(ManagerOptions {
        restart_policy: quick_policy(7),
        health_interval: Duration::from_secs(9),
        ..opts()
    });
    let first = m.defaults();
    assert_eq!(
        first,
        ManagerDefaults {
            timeout: Duration::from_secs(20),
            restart_policy: quick_policy(7),
            health_interval: Duration::from_secs(9),
        }
    );
    let next = ManagerDefaults {
        timeout: Duration::from_secs(3),
        ..first
    };
    m.set_defaults(next.clone());
    assert_eq!(m.defaults(), next);
    assert_eq!(
        ManagerOptions::default().restart_policy,
        RestartPolicy::default()
    );
}

#[tokio::test]
async fn a_new_default_restart_policy_applies_to_servers_without_their_own() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    m.set_defaults(ManagerDefaults {
        restart_policy: quick_policy(1),
        ..m.defaults()
    });
    let mut events = m.subscribe();
    let mut own = fixture("own", &["--fail-start"]);
    own.def.restart_policy = Some(quick_policy(2));
    m.add_all(vec![fixture("plain", &["--fail-start"]), own]);

    let (error, attempts) = until_failed(&mut events, "plain").await;
    assert!(error.contains("gave up after 1 restarts"), "{error}");
    assert_eq!(attempts, [1]);
    assert_eq!(m.state("plain").unwrap().restarts, 1);

    until("own to give up", 30, || {
        matches!(m.status("own"), Some(ServerStatus::Failed { .. }))
    })
    .await;
    match m.status("own") {
        Some(ServerStatus::Failed { error }) => {
            assert!(error.contains("gave up after 2 restarts"), "{error}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        m.state("own").unwrap().restarts,
        2,
        "a server's own policy wins"
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_crash_loop_follows_the_new_default_policy_from_its_next_restart() -> anyhow::Result<()> {
    // Started under a policy that would try a hundred times.
    let m = Manager::new(ManagerOptions {
        restart_policy: quick_policy(100),
        ..opts()
    });
    let mut events = m.subscribe();
    m.add_all(vec![fixture("loop", &["--fail-start"])]);
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), events.recv()).await??;
        if matches!(ev, EngineEvent::Status { ref server, status: ServerStatus::Restarting { .. } } if server == "loop")
        {
            break;
        }
    }
    m.set_defaults(ManagerDefaults {
        restart_policy: quick_policy(2),
        ..m.defaults()
    });
    let (error, attempts) = until_failed(&mut events, "loop").await;
    assert!(error.contains("gave up after 2 restarts"), "{error}");
    assert!(
        attempts.iter().all(|a| *a < 100),
        "gave up long before the first policy's end: {attempts:?}"
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_new_default_timeout_applies_from_the_next_connect() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    // Both answer `initialize` after 1.5 s; one has a timeout of its own.
    let slow = |name: &str| {
        let mut w = fixture(name, &["--init-delay-ms", "1500"]);
        w.def.restart_policy = Some(quick_policy(0));
        w
    };
    let mut own = slow("own");
    own.def.timeout = Some(20_000);
    let r = m.start(vec![slow("plain"), own]).await;
    assert_eq!(r.connected.len(), 2, "{r:?}");
    let plain_pid = m.state("plain").unwrap().pid;

    m.set_defaults(ManagerDefaults {
        timeout: Duration::from_millis(300),
        ..m.defaults()
    });
    // Running servers are not restarted.
    assert_eq!(m.status("plain"), Some(ServerStatus::Connected));
    assert_eq!(m.state("plain").unwrap().pid, plain_pid);

    // Their next connect uses it, unless they have their own.
    m.restart("plain").await?;
    m.restart("own").await?;
    until("plain to fail and own to connect", 30, || {
        matches!(m.status("plain"), Some(ServerStatus::Failed { .. }))
            && m.status("own") == Some(ServerStatus::Connected)
    })
    .await;
    let st = m.state("plain").unwrap();
    let d = st.diagnosis.expect("a diagnosis");
    assert_eq!(d.class, FailureClass::HandshakeTimeout, "{d:?}");
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_new_health_interval_applies_from_the_next_check() -> anyhow::Result<()> {
    let m = Manager::new(ManagerOptions {
        health_interval: Duration::from_secs(3600),
        ping_timeout: Duration::from_millis(200),
        ..opts()
    });
    let mut w = fixture("deaf", &["--ignore-pings"]);
    w.def.restart_policy = Some(quick_policy(0));
    let r = m.start(vec![w]).await;
    assert_eq!(r.connected, ["deaf"]);
    // Checked hourly, a server that ignores pings would stay connected for
    // an hour; checked every 50 ms it misses two pings and is restarted.
    m.set_defaults(ManagerDefaults {
        health_interval: Duration::from_millis(50),
        ..m.defaults()
    });
    until("the missed pings to end the connection", 30, || {
        matches!(m.status("deaf"), Some(ServerStatus::Failed { .. }))
    })
    .await;
    let st = m.state("deaf").unwrap();
    assert!(
        st.last_error
            .as_deref()
            .is_some_and(|e| e.contains("stopped answering pings")),
        "{st:?}"
    );
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_stop_during_an_updates_handshake_does_not_wait_for_it() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    m.start(vec![fixture("upd", &[])]).await;
    // The new definition takes 15 s to answer `initialize` (the timeout is 20 s).
    let m2 = m.clone();
    let update = tokio::spawn(async move {
        m2.update(fixture("upd", &["--init-delay-ms", "15000"]))
            .await
    });
    until("the new definition to be connecting", 10, || {
        m.status("upd") == Some(ServerStatus::Connecting)
            && m.server_def("upd")
                .is_some_and(|d| d.args.iter().any(|a| a == "--init-delay-ms"))
    })
    .await;
    // Status reads and a stop go through while the handshake runs.
    assert!(m.state("upd").is_some());
    tokio::time::timeout(Duration::from_secs(10), m.stop("upd"))
        .await
        .expect("stop did not wait for the update's handshake")?;
    assert_eq!(m.status("upd"), Some(ServerStatus::Disconnected));
    // The update ends too, and does not bring the old definition back over the stop.
    tokio::time::timeout(Duration::from_secs(10), update)
        .await
        .expect("the update ended with the stop")??;
    assert_eq!(m.status("upd"), Some(ServerStatus::Disconnected));
    assert!(m
        .server_def("upd")
        .is_some_and(|d| d.args.iter().any(|a| a == "--init-delay-ms")));
    m.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn concurrent_restarts_and_updates_leave_one_process() -> anyhow::Result<()> {
    let m = Manager::new(opts());
    m.start(vec![fixture("busy", &[])]).await;
    let ops = (0..6).map(|i| {
        let m = m.clone();
        tokio::spawn(async move {
            if i % 2 == 0 {
                m.restart("busy").await.map(|_| ())
            } else {
                let tool = format!("t{i}");
                let _ = m.update(fixture("busy", &["--tool", &tool])).await;
                Ok(())
            }
        })
    });
    for op in futures::future::join_all(ops).await {
        op??;
    }
    m.settle().await;
    assert_eq!(m.status("busy"), Some(ServerStatus::Connected));
    let pid = m.state("busy").unwrap().pid.expect("a process");
    // One living process started by this test process runs `busy` (one
    // stopped in the middle of its handshake is killed as its start is
    // dropped, and may take a moment to go).
    let marker = format!("{OWNER_VAR}={}", this_owner());
    let running = || -> Vec<u32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return vec![];
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|p| {
                let named = std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                    let args: Vec<&[u8]> = c.split(|x| *x == 0).collect();
                    args.windows(2)
                        .any(|w| w[0] == b"--name" && w[1] == b"busy")
                });
                let ours = std::fs::read(format!("/proc/{p}/environ"))
                    .is_ok_and(|e| e.split(|x| *x == 0).any(|v| v == marker.as_bytes()));
                let zombie = std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .is_ok_and(|s| s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')));
                named && ours && !zombie
            })
            .collect()
    };
    until("one process for one server", 10, || running() == [pid]).await;
    m.shutdown().await;
    Ok(())
}
