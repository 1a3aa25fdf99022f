//! "Test connection" in the Add server form: start one definition in a throwaway
//! `Manager`, report its tools or the exact failure with a hint, and tear
//! it down again. Nothing is written and the app's servers are untouched.

use std::time::Duration;
use switchboard_engine::error_code::ErrorCode;

use serde::Serialize;
use switchboard_engine::config::RestartPolicy;
use switchboard_engine::events::ServerStatus;
use switchboard_engine::host::Host;
use switchboard_engine::manager::{Manager, ManagerOptions, Wanted, DEFAULT_TIMEOUT};

use crate::error::CommandError;

/// A definition that connected.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ProbeReport {
    pub message: String,
    pub tool_count: usize,
    pub tools: Vec<String>,
}

pub async fn probe(host: &Host, wanted: Wanted) -> Result<ProbeReport, CommandError> {
    let Wanted { mut def, .. } = wanted.clone();
    let name = def.name.clone();
    def.enabled = true;
    // One attempt: a test that restarts with backoff would look like a hang.
    def.restart_policy = Some(RestartPolicy {
        max_restart_attempts: 0,
        ..RestartPolicy::default()
    });
    let limit = def
        .timeout
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_TIMEOUT)
        + Duration::from_secs(2);
    let manager = Manager::new(ManagerOptions {
        cache_path: None,
        ..ManagerOptions::for_host(host)
    });
    // Values kept in the keychain (`${keychain:NAME}`) and sign-ins resolve as at a real start.
    manager.set_vault(Some(switchboard_engine::auth::vault::Vault::keychain()));
    let outcome = tokio::time::timeout(limit, async {
        manager.start(vec![Wanted { def, ..wanted }]).await;
        manager.settle().await;
        manager.state(&name)
    })
    .await;
    let tools: Vec<String> = manager
        .tools()
        .tools
        .iter()
        .map(|t| t.tool.clone())
        .collect();
    manager.shutdown().await;
    let state = match outcome {
        Err(_) => {
            return Err(failure(
                &name,
                &format!("timed out after {} ms", limit.as_millis()),
                false,
            ))
        }
        Ok(None) => return Err(failure(&name, "the server was not started", false)),
        Ok(Some(s)) => s,
    };
    match state.status {
        ServerStatus::Connected => Ok(ProbeReport {
            message: format!("Connected to \"{name}\": {} tools", tools.len()),
            tool_count: tools.len(),
            tools,
        }),
        ServerStatus::NeedsAuth { message } => Err(failure(&name, &message, true)),
        ServerStatus::Failed { error } => Err(failure(&name, &error, false)),
        other => Err(failure(
            &name,
            &state
                .last_error
                .unwrap_or_else(|| other.label().to_string()),
            false,
        )),
    }
}

/// `Failed to connect to "<name>": <error>` plus what to try next.
pub fn failure(name: &str, error: &str, needs_auth: bool) -> CommandError {
    let lower = error.to_ascii_lowercase();
    let hint = if needs_auth
        || ["401", "403", "unauthorized", "forbidden"]
            .iter()
            .any(|k| lower.contains(k))
    {
        Some("this server needs sign-in or an Authorization header")
    } else if ["timed out", "timeout", "did not connect within", "deadline"]
        .iter()
        .any(|k| lower.contains(k))
    {
        Some("raise the timeout")
    } else {
        None
    };
    let message = match hint {
        Some(h) => format!("Failed to connect to \"{name}\": {error} (hint: {h})"),
        None => format!("Failed to connect to \"{name}\": {error}"),
    };
    CommandError::new(ErrorCode::ConnectFailed, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_follow_the_error() {
        let t = failure("slow", "request timed out after 30s", false).message;
        assert!(
            t.starts_with("Failed to connect to \"slow\": request timed out")
                && t.contains("raise the timeout"),
            "{t}"
        );
        let a = failure("gh", "HTTP status 401 Unauthorized", false).message;
        assert!(
            a.contains("needs sign-in or an Authorization header"),
            "{a}"
        );
        let p = failure("x", "No such file or directory", false).message;
        assert_eq!(p, "Failed to connect to \"x\": No such file or directory");
    }
}
