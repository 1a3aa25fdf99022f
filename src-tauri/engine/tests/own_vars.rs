//! Variables the app set for itself only (its webview settings) do not reach
//! the MCP servers it starts; everything else in its environment does.

use std::time::Duration;

use switchboard_engine::config::ServerDef;
use switchboard_engine::events::ServerStatus;
use switchboard_engine::launch::keep_to_this_process;
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted};
use switchboard_tests::fixture_server_path;

#[tokio::test]
async fn a_var_kept_to_this_process_is_not_in_a_servers_environment() {
    // The only test in this binary: nothing else reads the environment yet.
    std::env::set_var("SWITCHBOARD_TEST_OWN_ONLY", "1");
    std::env::set_var("SWITCHBOARD_TEST_PASSED_ON", "1");
    keep_to_this_process(&["SWITCHBOARD_TEST_OWN_ONLY"]);

    let m = Manager::new(ManagerOptions {
        grace: Duration::from_millis(300),
        default_timeout: Duration::from_secs(20),
        ..ManagerOptions::default()
    });
    let bin = fixture_server_path();
    let def = ServerDef::stdio("envy", bin.to_str().unwrap(), &["--name", "envy"]);
    let r = m.start(vec![Wanted::new(def)]).await;
    assert_eq!(r.connected, ["envy"], "{r:?}");
    assert_eq!(m.status("envy"), Some(ServerStatus::Connected));
    let pid = m.state("envy").unwrap().pid.expect("a process");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let vars: Vec<String> = environ
        .split(|b| *b == 0)
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    assert!(
        vars.iter().any(|v| v == "SWITCHBOARD_TEST_PASSED_ON=1"),
        "{vars:?}"
    );
    assert!(
        !vars
            .iter()
            .any(|v| v.starts_with("SWITCHBOARD_TEST_OWN_ONLY=")),
        "{vars:?}"
    );
    m.shutdown().await;
}
