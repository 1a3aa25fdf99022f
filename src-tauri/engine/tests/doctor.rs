//! Every way a server fails to start, produced for real, is explained in its
//! class with a sentence that says what to do; failures that retrying cannot
//! heal are not retried.

use std::time::{Duration, Instant};

use switchboard_engine::config::{RestartPolicy, ServerDef, Transport};
use switchboard_engine::doctor::FailureClass;
use switchboard_engine::events::ServerStatus;
use switchboard_engine::manager::{Manager, ManagerOptions, ServerState, Wanted};
use switchboard_tests::fixture_server_path;

fn opts() -> ManagerOptions {
    ManagerOptions {
        grace: Duration::from_millis(200),
        default_timeout: Duration::from_secs(10),
        ..ManagerOptions::default()
    }
}

fn wanted(mut def: ServerDef) -> Wanted {
    def.restart_policy = Some(RestartPolicy {
        initial_delay_ms: 50,
        max_delay_ms: 100,
        backoff_multiplier: 1.0,
        max_restart_attempts: 1,
    });
    Wanted::new(def)
}

/// Starts `def` alone and waits until it settled as failed (or needs a sign-in).
async fn settle(def: ServerDef) -> ServerState {
    let name = def.name.clone();
    let m = Manager::new(opts());
    m.start(vec![wanted(def)]).await;
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let st = m.state(&name).unwrap();
        if matches!(
            st.status,
            ServerStatus::Failed { .. } | ServerStatus::NeedsAuth { .. }
        ) && st.diagnosis.is_some()
        {
            m.shutdown().await;
            return st;
        }
        assert!(
            Instant::now() < end,
            "{name} did not settle: {:?}",
            st.status
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn sh(name: &str, script: &str) -> ServerDef {
    ServerDef::stdio(name, "/bin/sh", &["-c", script])
}

#[tokio::test]
async fn a_command_that_does_not_exist_says_which_runtime_and_is_never_restarted() {
    let st = settle(ServerDef::stdio("gone", "uvx", &["mcp-server-nowhere"])).await;
    let d = st.diagnosis.unwrap();
    // uvx exists on some machines; a name that exists nowhere is the real test.
    let st2 = settle(ServerDef::stdio("gone2", "mcp-doctor-no-such-command", &[])).await;
    let d2 = st2.diagnosis.unwrap();
    assert_eq!(d2.class, FailureClass::CommandNotFound, "{d2:?}");
    assert!(
        d2.detail.contains("was not found") && d2.detail.contains("Searched:"),
        "{}",
        d2.detail
    );
    assert_eq!(st2.restarts, 0, "not found is not retried");
    if d.class == FailureClass::CommandNotFound {
        assert!(d.summary.contains("install uv"), "{}", d.summary);
        assert_eq!(st.restarts, 0);
    }
}

#[tokio::test]
async fn a_file_that_is_not_executable() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("server.js");
    std::fs::write(&file, "console.log('hi')\n").unwrap();
    let st = settle(ServerDef::stdio("noexec", file.to_str().unwrap(), &[])).await;
    let d = st.diagnosis.unwrap();
    assert_eq!(d.class, FailureClass::NotExecutable, "{d:?}");
    assert!(d.detail.contains("chmod +x"), "{}", d.detail);
    assert_eq!(st.restarts, 0);
}

#[tokio::test]
async fn an_instant_exit_quotes_what_it_said() {
    let st = settle(sh(
        "quits",
        "echo 'starting up' >&2; echo 'Error: BRAVE_API_KEY is required' >&2; exit 3",
    ))
    .await;
    let d = st.diagnosis.unwrap();
    assert_eq!(d.class, FailureClass::ExitedAtOnce, "{d:?}");
    assert_eq!(
        d.summary,
        "exited at once: Error: BRAVE_API_KEY is required"
    );
    assert!(
        d.detail.contains("BRAVE_API_KEY is required"),
        "{}",
        d.detail
    );
    assert_eq!(
        st.restarts, 1,
        "it may heal (a network blip): the policy's restarts are tried"
    );
}

#[tokio::test]
async fn a_variable_that_is_not_set() {
    let mut def = sh(
        "needs-env",
        "test -n \"$TOKEN\" || { echo 'TOKEN missing' >&2; exit 1; }; sleep 30",
    );
    def.env
        .insert("TOKEN".into(), "${SB_DOCTOR_DEFINITELY_UNSET}".into());
    let st = settle(def).await;
    let d = st.diagnosis.unwrap();
    assert_eq!(
        d.class,
        FailureClass::MissingValue,
        "{d:?} warnings {:?}",
        st.warnings
    );
    assert!(d.summary.contains("TOKEN"), "{}", d.summary);
}

#[tokio::test]
async fn a_working_folder_that_does_not_exist() {
    let mut def = ServerDef::stdio(
        "nocwd",
        fixture_server_path().to_str().unwrap(),
        &["--name", "nocwd"],
    );
    def.cwd = Some("/nonexistent/switchboard-doctor".into());
    let st = settle(def).await;
    let d = st.diagnosis.unwrap();
    assert_eq!(d.class, FailureClass::BadFolder, "{d:?}");
    assert!(
        d.detail.contains("/nonexistent/switchboard-doctor") && d.detail.contains("cwd"),
        "{}",
        d.detail
    );
    assert_eq!(st.restarts, 0);
}

#[tokio::test]
async fn a_slow_handshake_names_the_timeout() {
    let mut def = ServerDef::stdio(
        "slow",
        fixture_server_path().to_str().unwrap(),
        &["--name", "slow", "--init-delay-ms", "5000"],
    );
    def.timeout = Some(500);
    let st = settle(def).await;
    let d = st.diagnosis.unwrap();
    assert_eq!(d.class, FailureClass::HandshakeTimeout, "{d:?}");
    assert_eq!(d.summary, "no answer within 0.5 s");
    assert!(d.detail.contains("raise \"timeout\""), "{}", d.detail);
}

#[tokio::test]
async fn text_on_stdout_is_not_mcp() {
    let mut def = sh(
        "chatty",
        "echo 'Server listening on http://localhost:3000'; sleep 30",
    );
    def.timeout = Some(1000);
    let st = settle(def).await;
    let d = st.diagnosis.unwrap();
    assert_eq!(d.class, FailureClass::NotMcp, "{d:?}");
    assert!(
        d.detail
            .contains("Server listening on http://localhost:3000"),
        "{}",
        d.detail
    );
}

/// The two tests of HTTP servers run one at a time: in a full run, with both
/// at once, the refused server was now and then diagnosed with the other
/// one's 401.
static HTTP_ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test]
async fn a_port_where_nothing_listens() {
    let _one = HTTP_ONE_AT_A_TIME.lock().await;
    // Bound but not listening: connections are refused. On 127.0.0.2, which
    // no other test listens on: a listener another test binds to port 0 on
    // 127.0.0.1 (with SO_REUSEADDR, as tokio's are) can be given this port.
    // A program listening on every address (`0.0.0.0`, `::`, as node does
    // by default) answers on 127.0.0.2 too: a port one answers on is given
    // back and another taken.
    let mut tries = 0;
    let (held, port) = loop {
        let held = tokio::net::TcpSocket::new_v4().unwrap();
        held.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        let port = held.local_addr().unwrap().port();
        if tokio::net::TcpStream::connect(("127.0.0.2", port))
            .await
            .is_err()
        {
            break (held, port);
        }
        tries += 1;
        assert!(tries < 20, "every port tried on 127.0.0.2 answers");
    };
    let def = ServerDef::remote(
        "refused",
        Transport::Http,
        &format!("http://127.0.0.2:{port}/mcp"),
    );
    let st = settle(def).await;
    let d = st.diagnosis.unwrap();
    assert_eq!(d.class, FailureClass::ConnectionRefused, "{d:?}");
    assert_eq!(d.summary, format!("nothing listens at 127.0.0.2:{port}"));
    drop(held);
}

#[tokio::test]
async fn a_server_that_answers_401() {
    let _one = HTTP_ONE_AT_A_TIME.lock().await;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
            });
        }
    });
    let def = ServerDef::remote(
        "locked",
        Transport::Http,
        &format!("http://127.0.0.1:{port}/mcp"),
    );
    let st = settle(def).await;
    assert!(
        matches!(st.status, ServerStatus::NeedsAuth { .. }),
        "{:?}",
        st.status
    );
    let d = st.diagnosis.unwrap();
    assert_eq!(d.class, FailureClass::Unauthorized, "{d:?}");
    assert_eq!(d.summary, "sign-in needed");
}

#[tokio::test]
async fn the_diagnostic_report_explains_and_holds_no_secret() {
    let mut def = sh(
        "leaky",
        "echo \"Error: key $API_KEY was rejected\" >&2; exit 1",
    );
    def.args.push("--token=sk-doctor-secret-123".into());
    def.env
        .insert("API_KEY".into(), "sk-doctor-secret-123".into());
    let name = def.name.clone();
    let m = Manager::new(opts());
    m.start(vec![wanted(def)]).await;
    let end = Instant::now() + Duration::from_secs(20);
    while !matches!(m.state(&name).unwrap().status, ServerStatus::Failed { .. }) {
        assert!(Instant::now() < end, "did not fail");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let report = m.diagnostic_report(&name).unwrap();
    m.shutdown().await;
    assert!(
        report.contains("Server: leaky") && report.contains("[exited at once]"),
        "{report}"
    );
    assert!(
        report.contains("Environment variables (values not shown): API_KEY"),
        "{report}"
    );
    assert!(
        report.contains("was rejected"),
        "its stderr is in the report: {report}"
    );
    assert!(
        !report.contains("sk-doctor-secret-123"),
        "a secret in the report:\n{report}"
    );
}
