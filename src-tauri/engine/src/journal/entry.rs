//! One recorded call, as the gateway or the app's tool explorer hands it
//! over and as queries give it back.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::cap::cap_json;
use crate::tool_trust::scan::Finding;

/// The error class of an answer Switchboard refused ([`Entry::refused_by_checks`]).
pub const BLOCKED: &str = "blocked";

/// Where a call came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "CallVia"))]
#[serde(rename_all = "camelCase")]
pub enum Via {
    /// The gateway over streamable HTTP (the app's, or `serve --http`).
    Http,
    /// The gateway over stdio (`switchboard serve` started by a client).
    Stdio,
    /// The app's own tool explorer.
    App,
}

/// What was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    /// `tools/call`; the name is the server's own tool name.
    Tool,
    /// `resources/read`; the name is the resource's URI.
    Resource,
    /// `prompts/get`; the name is the prompt's name.
    Prompt,
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    Ok,
    /// The server answered with a result marked `isError`.
    ToolError,
    /// The request failed: an MCP error, a lost connection, a refusal.
    ProtocolError,
    /// No answer in time.
    Timeout,
}

macro_rules! spelled {
    ($t:ty { $($v:ident = $s:literal),+ $(,)? }) => {
        impl $t {
            /// The spelling in JSON, in the database and on the command line.
            pub fn as_str(self) -> &'static str {
                match self { $(<$t>::$v => $s),+ }
            }
            pub fn parse(s: &str) -> Option<$t> {
                match s { $($s => Some(<$t>::$v),)+ _ => None }
            }
        }
    };
}
spelled!(Via { Http = "http", Stdio = "stdio", App = "app" });
spelled!(Kind { Tool = "tool", Resource = "resource", Prompt = "prompt" });
spelled!(Outcome {
    Ok = "ok",
    ToolError = "toolError",
    ProtocolError = "protocolError",
    Timeout = "timeout",
});

/// One call. Arguments and result are JSON text, masked (no secret value
/// is stored) and capped at [`super::CAP_BYTES`] each when the journal
/// writes them; `…Bytes` is the full size before capping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Given by the journal when written (0 before); grows with each entry.
    pub id: u64,
    /// When the call started, in ms since the Unix epoch.
    pub time: u64,
    pub via: Via,
    /// The client's name and version from its `initialize` (for a request
    /// without a session: from its `_meta` or `User-Agent`).
    pub client: String,
    pub client_version: Option<String>,
    /// The signed-in person (the team gateway), when there is one.
    pub user: Option<String>,
    /// The profile whose gateway served the call.
    pub profile: Option<String>,
    pub server: String,
    pub kind: Kind,
    /// The tool's name, the resource's URI or the prompt's name.
    pub name: String,
    pub arguments: String,
    pub arguments_cut: bool,
    pub arguments_bytes: u64,
    /// The start of the result (or resource contents, or prompt messages).
    pub result: String,
    pub result_cut: bool,
    pub result_bytes: u64,
    pub duration_us: u64,
    pub outcome: Outcome,
    /// The doctor's class of the failure (`auth`, `timeout`, …).
    pub error_class: Option<String>,
    pub error: Option<String>,
    /// What the checks on results found.
    pub findings: Vec<Finding>,
}

impl Entry {
    /// A call to `name` of `server` that starts now and went well so far;
    /// the `with_…` methods fill in the rest.
    pub fn new(via: Via, server: impl Into<String>, kind: Kind, name: impl Into<String>) -> Entry {
        Entry {
            id: 0,
            time: crate::events::now_ms(),
            via,
            client: String::new(),
            client_version: None,
            user: None,
            profile: None,
            server: server.into(),
            kind,
            name: name.into(),
            arguments: String::new(),
            arguments_cut: false,
            arguments_bytes: 0,
            result: String::new(),
            result_cut: false,
            result_bytes: 0,
            duration_us: 0,
            outcome: Outcome::Ok,
            error_class: None,
            error: None,
            findings: vec![],
        }
    }

    /// The client as its `initialize` named itself.
    pub fn with_client(mut self, name: impl Into<String>, version: Option<String>) -> Entry {
        self.client = name.into();
        self.client_version = version;
        self
    }

    pub fn with_user(mut self, user: Option<String>) -> Entry {
        self.user = user;
        self
    }

    pub fn with_profile(mut self, profile: Option<String>) -> Entry {
        self.profile = profile;
        self
    }

    /// The request's arguments, serialized and capped ([`cap_json`]).
    pub fn with_arguments(mut self, arguments: &impl Serialize) -> Entry {
        let c = cap_json(arguments);
        self.arguments_cut = c.cut;
        self.arguments_bytes = c.full_bytes;
        self.arguments = c.text;
        self
    }

    /// What came back, serialized and capped ([`cap_json`]).
    pub fn with_result(mut self, result: &impl Serialize) -> Entry {
        let c = cap_json(result);
        self.result_cut = c.cut;
        self.result_bytes = c.full_bytes;
        self.result = c.text;
        self
    }

    pub fn with_duration(mut self, took: Duration) -> Entry {
        self.duration_us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self
    }

    /// How the call failed: the outcome, the doctor's class and the
    /// message (cut at [`super::ERROR_BYTES`] when written).
    pub fn with_error(
        mut self,
        outcome: Outcome,
        class: Option<String>,
        message: impl Into<String>,
    ) -> Entry {
        self.outcome = outcome;
        self.error_class = class;
        self.error = Some(message.into());
        self
    }

    /// The answer was refused by the server's checks on what comes back
    /// (`block`): the client got an error — a tool error for a tool call,
    /// an MCP error otherwise — and the entry says so, with the class
    /// `blocked`. The result stays as the server gave it.
    pub fn refused_by_checks(self) -> Entry {
        let outcome = match self.kind {
            Kind::Tool => Outcome::ToolError,
            Kind::Resource | Kind::Prompt => Outcome::ProtocolError,
        };
        self.with_error(
            outcome,
            Some(BLOCKED.into()),
            "refused by Switchboard: the server's answer has findings and its checks are set to block",
        )
    }

    pub fn with_findings(mut self, findings: Vec<Finding>) -> Entry {
        self.findings = findings;
        self
    }

    /// About how much memory the entry holds (for the queue's bound).
    pub(crate) fn weight(&self) -> usize {
        let findings: usize = self
            .findings
            .iter()
            .map(|f| {
                f.message.len()
                    + f.rule.len()
                    + f.at.len()
                    + f.visible.as_ref().map_or(0, String::len)
            })
            .sum();
        std::mem::size_of::<Entry>()
            + self.client.len()
            + self.server.len()
            + self.name.len()
            + self.arguments.len()
            + self.result.len()
            + self.error.as_ref().map_or(0, String::len)
            + findings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip_and_match_serde() {
        for o in [
            Outcome::Ok,
            Outcome::ToolError,
            Outcome::ProtocolError,
            Outcome::Timeout,
        ] {
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
        for k in [Kind::Tool, Kind::Resource, Kind::Prompt] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
        for v in [Via::Http, Via::Stdio, Via::App] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
    }

    #[test]
    fn builder_fills_in_a_call() {
        let e = Entry::new(Via::Http, "github", Kind::Tool, "create_issue")
            .with_client("claude-code", Some("1.0".into()))
            .with_arguments(&serde_json::json!({"title": "x"}))
            .with_result(&serde_json::json!({"content": []}))
            .with_duration(Duration::from_millis(12))
            .with_error(Outcome::ToolError, None, "no");
        assert_eq!(e.arguments, r#"{"title":"x"}"#);
        assert_eq!(e.arguments_bytes, 13);
        assert!(!e.arguments_cut);
        assert_eq!(e.duration_us, 12_000);
        assert_eq!(e.outcome, Outcome::ToolError);
        assert!(e.time > 0);
    }
}
