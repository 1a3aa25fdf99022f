//! Sampling through the gateway: a server's `sampling/createMessage` during
//! a call goes to the gateway client that made the call when that client
//! declared sampling, and its answer goes back to the server; without such
//! a client the server gets an error saying why. The server is
//! `conformance-server` (tests/src/bin), whose `test_sampling` tool asks
//! for a sample only when its client (the gateway's manager) offers it.
#![allow(deprecated)] // sampling is what 2025 clients and servers use.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::*;
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
/// Every wait in these tests ends by this deadline.
const T: Duration = Duration::from_secs(20);

/// A gateway client that may offer sampling, answers with a fixed text and
/// keeps the prompts it was asked.
#[derive(Clone)]
struct Client {
    sampling: bool,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities = if self.sampling {
            serde_json::from_value(json!({ "sampling": {} })).unwrap()
        } else {
            Default::default()
        };
        ClientConfig::new(caps, Implementation::new("gateway-sampling-test", "1.0"))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _cx: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        self.asked
            .lock()
            .unwrap()
            .push(serde_json::to_value(&params).unwrap());
        Ok(serde_json::from_value(json!({ "role": "assistant", "content": { "type": "text", "text": "forty-two" }, "model": "test-model", "stopReason": "endTurn" })).unwrap())
    }
}

/// A temporary HOME whose Switchboard file defines `conf` as conformance-server.
fn home() -> switchboard_tests::TempHome {
    switchboard_tests::TempHome::with_servers(
        json!({ "conf": { "command": switchboard_tests::conformance_server_path(), "args": [] } }),
    )
}

/// `switchboard serve --server conf` (stdio) in `home`, with `client`.
async fn serve(
    home: &switchboard_tests::TempHome,
    client: Client,
) -> RunningService<RoleClient, Client> {
    let mut cmd = home.command(BIN);
    cmd.args(["serve", "--server", "conf"])
        .stderr(std::process::Stdio::null());
    tokio::time::timeout(T, client.serve(TokioChildProcess::new(cmd).unwrap()))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

fn sample(prompt: &str) -> CallToolRequestParams {
    let mut p = CallToolRequestParams::new("test_sampling");
    p.arguments = json!({ "prompt": prompt }).as_object().cloned();
    p
}

#[tokio::test]
async fn a_servers_sampling_request_reaches_the_calling_client_and_its_answer_the_server(
) -> anyhow::Result<()> {
    let home = home();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = serve(
        &home,
        Client {
            sampling: true,
            asked: asked.clone(),
        },
    )
    .await;
    let r = tokio::time::timeout(T, client.call_tool(sample("What is six times seven?"))).await??;
    let text: Vec<String> = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert_eq!(r.is_error, Some(false), "{r:?}");
    // The server got the client's answer...
    assert_eq!(text, ["LLM response: forty-two"], "{r:?}");
    // ...to the server's own request, as it sent it.
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        asked[0]["messages"],
        json!([{ "role": "user", "content": { "type": "text", "text": "What is six times seven?" } }]),
        "{}",
        asked[0]
    );
    assert_eq!(asked[0]["maxTokens"], json!(100), "{}", asked[0]);
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn without_a_client_that_samples_the_server_hears_why() -> anyhow::Result<()> {
    let home = home();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = serve(
        &home,
        Client {
            sampling: false,
            asked: asked.clone(),
        },
    )
    .await;
    // conformance-server asks (the gateway offered sampling upstream) and
    // turns the gateway's refusal into its tool's error.
    let err = tokio::time::timeout(T, client.call_tool(sample("hello")))
        .await?
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("sampling/createMessage failed")
            && err.contains("nobody to answer sampling/createMessage"),
        "{err}"
    );
    assert!(asked.lock().unwrap().is_empty());
    client.cancel().await?;
    Ok(())
}
