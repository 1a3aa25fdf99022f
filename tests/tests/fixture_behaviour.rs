//! Behaviour of the fixture's notifications and process handling, seen through
#![allow(deprecated)] // resources/subscribe is legacy-only in rmcp 3.11, but 2025-11-25 sessions use it
//! rmcp's client. Also documents client-side recipes (process groups, handlers).

use std::time::{Duration, Instant};

use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::{
    model::{CallToolRequestParams, ResourceUpdatedNotificationParam, SubscribeRequestParams},
    service::{NotificationContext, RunningService},
    transport::{StreamableHttpClientTransport, TokioChildProcess},
    ClientHandler, RoleClient, ServiceExt,
};
use serde_json::json;
use switchboard_tests::spawn_http_fixture;
use tokio::{process::Command, sync::mpsc};

const BIN: &str = env!("CARGO_BIN_EXE_fixture-server");
const T: Duration = Duration::from_secs(20);

/// A client handler that forwards the notifications we care about to a channel.
#[derive(Clone)]
struct Recorder(mpsc::UnboundedSender<String>);

impl ClientHandler for Recorder {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(format!("updated {}", params.uri));
    }
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send("tools changed".into());
    }
}

async fn recv(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("no notification within 5 s")
        .expect("channel closed")
}

async fn notifications_roundtrip(
    client: &RunningService<RoleClient, Recorder>,
    rx: &mut mpsc::UnboundedReceiver<String>,
) {
    // change_tools -> notifications/tools/list_changed, and the new tool is listed.
    let before = client.list_all_tools().await.unwrap().len();
    client
        .call_tool(CallToolRequestParams::new("change_tools"))
        .await
        .unwrap();
    assert_eq!(recv(rx).await, "tools changed");
    let after = client.list_all_tools().await.unwrap();
    assert_eq!(
        after.len(),
        before + 1,
        "rmcp's list cache should be invalidated by list_changed"
    );
    assert!(after.iter().any(|t| t.name == "dynamic_0"));

    // subscribe + bump_counter -> notifications/resources/updated.
    client
        .subscribe(SubscribeRequestParams::new("fixture://counter"))
        .await
        .unwrap();
    client
        .call_tool(CallToolRequestParams::new("bump_counter"))
        .await
        .unwrap();
    assert_eq!(recv(rx).await, "updated fixture://counter");
}

#[tokio::test]
async fn stdio_notifications() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut cmd = Command::new(BIN);
    cmd.arg("--resources");
    let client = Recorder(tx)
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    notifications_roundtrip(&client, &mut rx).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn http_notifications() {
    let fx = spawn_http_fixture(&["--resources"]).await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = Recorder(tx)
        .serve(StreamableHttpClientTransport::from_uri(fx.url.clone()))
        .await
        .unwrap();
    notifications_roundtrip(&client, &mut rx).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn notify_every_ms_ticks() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut cmd = Command::new(BIN);
    cmd.args(["--resources", "--notify-every-ms", "50"]);
    let client = Recorder(tx)
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    client
        .subscribe(SubscribeRequestParams::new("fixture://counter"))
        .await
        .unwrap();
    let start = Instant::now();
    for _ in 0..3 {
        assert_eq!(recv(&mut rx).await, "updated fixture://counter");
    }
    assert!(start.elapsed() < Duration::from_secs(2));
    client.cancel().await.unwrap();
}

fn alive(pid: u32) -> bool {
    // A zombie still has /proc/<pid>; treat state Z as dead.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .chars()
                .next();
            state != Some('Z')
        }
        Err(_) => false,
    }
}

async fn wait_dead(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

async fn spawn_grandchild(client: &RunningService<RoleClient, ()>) -> u32 {
    let r = client
        .call_tool(CallToolRequestParams::new("spawn_child"))
        .await
        .unwrap();
    let pid = r.structured_content.unwrap()["pid"].as_u64().unwrap() as u32;
    assert!(alive(pid));
    pid
}

/// Recipe: spawn the server as a process-group leader with process-wrap, so the
/// whole group (npx/uvx grandchildren) can be signalled with killpg.
#[tokio::test]
async fn process_group_cleanup() {
    let mut cmd = CommandWrap::with_new(BIN, |c| {
        c.arg("--name").arg("grouped");
    });
    cmd.wrap(ProcessGroup::leader());
    let transport = TokioChildProcess::new(cmd).unwrap();
    let pgid = transport.id().unwrap(); // leader pid == pgid
    let client = ().serve(transport).await.unwrap();
    let grandchild = spawn_grandchild(&client).await;
    let server_pid: u32 = client
        .call_tool(CallToolRequestParams::new("pid"))
        .await
        .unwrap()
        .content[0]
        .as_text()
        .unwrap()
        .text
        .parse()
        .unwrap();
    assert_eq!(server_pid, pgid);

    // Graceful shutdown closes stdin; the fixture exits 0 by itself. rmcp then
    // forgets the child, so nothing signals the group: the grandchild survives.
    client.cancel().await.unwrap();
    assert!(wait_dead(server_pid).await);
    let survived_graceful = alive(grandchild);
    // The engine must signal the group itself after shutdown:
    unsafe { libc::killpg(pgid as libc::pid_t, libc::SIGKILL) };
    assert!(
        wait_dead(grandchild).await,
        "grandchild {grandchild} survived killpg"
    );
    assert!(
        survived_graceful,
        "expected grandchild to outlive a graceful shutdown"
    );
}

/// Without a process group, killing the server leaves the grandchild running.
#[tokio::test]
async fn without_process_group_grandchild_survives() {
    let client = ().serve(TokioChildProcess::new(Command::new(BIN)).unwrap()).await.unwrap();
    let grandchild = spawn_grandchild(&client).await;
    let _ = tokio::time::timeout(T, client.call_tool(CallToolRequestParams::new("crash"))).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(alive(grandchild));
    unsafe { libc::kill(grandchild as libc::pid_t, libc::SIGKILL) };
    assert!(wait_dead(grandchild).await);
}

#[tokio::test]
async fn http_never_answer_hangs_initialize() {
    let fx = spawn_http_fixture(&["--never-answer"]).await.unwrap();
    let r = tokio::time::timeout(
        Duration::from_millis(500),
        ().serve(StreamableHttpClientTransport::from_uri(fx.url.clone())),
    )
    .await;
    assert!(r.is_err(), "initialize should hang");
}

#[tokio::test]
async fn sse_and_streamable_together() {
    let fx = switchboard_tests::spawn_sse_fixture(&["--with-streamable"])
        .await
        .unwrap();
    assert!(fx.url.ends_with("/sse"));
    let mcp = format!("{}/mcp", fx.base_url());
    let client = ().serve(StreamableHttpClientTransport::from_uri(mcp)).await.unwrap();
    let r = client
        .call_tool(
            CallToolRequestParams::new("echo")
                .with_arguments(json!({"text": "both"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text().unwrap().text, "both");
    client.cancel().await.unwrap();
}

/// 2026-07-28 (no initialize; server/discover + subscriptions/listen).
#[tokio::test]
async fn discover_lifecycle_and_listen() {
    use rmcp::{
        model::{ProtocolVersion, ServerNotification, SubscriptionFilter},
        service::{serve_client_with_lifecycle, ClientLifecycleMode},
    };
    let mut cmd = Command::new(BIN);
    cmd.args(["--resources", "--name", "modern"]);
    let client = serve_client_with_lifecycle(
        (),
        TokioChildProcess::new(cmd).unwrap(),
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    let filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .resource_subscriptions(["fixture://counter".to_string()])
        .build();
    let mut sub = client.listen(filter).await.unwrap();
    // The listen body subscribes to the server's events only after the ack is sent:
    // give it a moment (without this the first bump was missed).
    tokio::time::sleep(Duration::from_millis(100)).await;
    client
        .call_tool(CallToolRequestParams::new("bump_counter"))
        .await
        .unwrap();
    let n = tokio::time::timeout(Duration::from_secs(3), sub.next())
        .await
        .unwrap();
    let n = n
        .unwrap_or_else(|e| panic!("listen stream error: {e:?}"))
        .expect("stream ended");
    assert!(
        matches!(n, ServerNotification::ResourceUpdatedNotification(_)),
        "{n:?}"
    );
    client
        .call_tool(CallToolRequestParams::new("change_tools"))
        .await
        .unwrap();
    let n = tokio::time::timeout(Duration::from_secs(3), sub.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        matches!(n, ServerNotification::ToolListChangedNotification(_)),
        "{n:?}"
    );
    sub.cancel().await.unwrap();
    client.cancel().await.unwrap();
}
