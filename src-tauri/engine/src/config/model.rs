//! `ServerDef`: one MCP server definition as Switchboard understands it,
//! whatever client file it came from. Strings stay raw (`${env:X}`, `!cmd`):
//! they are resolved only to display or to launch.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// File format of a config source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Jsonc,
    Toml,
    Yaml,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    #[default]
    Stdio,
    Http,
    Sse,
}

impl Transport {
    /// Every spelling clients use (SOURCES.md A3), case-insensitive.
    pub fn parse_alias(s: &str) -> Option<Transport> {
        match s.to_ascii_lowercase().as_str() {
            "stdio" | "local" | "command" => Some(Transport::Stdio),
            "http" | "streamable-http" | "streamablehttp" | "streamable_http" | "streamable" => {
                Some(Transport::Http)
            }
            "sse" => Some(Transport::Sse),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
            Transport::Sse => "sse",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthConfig {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestartPolicy {
    pub initial_delay_ms: u64,
    pub max_delay_ms: u64,
    pub backoff_multiplier: f64,
    pub max_restart_attempts: u32,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            initial_delay_ms: 500,
            max_delay_ms: 15_000,
            backoff_multiplier: 2.0,
            max_restart_attempts: 5,
        }
    }
}

/// One server definition (SPEC C1). `Debug` redacts env and header values.
#[derive(Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ServerDef {
    pub name: String,
    pub transport: Transport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub env: IndexMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub headers: IndexMap<String, String>,
    pub enabled: bool,
    /// Milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<RestartPolicy>,
    /// Kept on round-trip; never used to grant anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auto_approve: Vec<String>,
}

impl ServerDef {
    pub fn stdio(name: &str, command: &str, args: &[&str]) -> ServerDef {
        ServerDef {
            name: name.into(),
            transport: Transport::Stdio,
            command: Some(command.into()),
            args: args.iter().map(|s| s.to_string()).collect(),
            enabled: true,
            ..Default::default()
        }
    }
    pub fn remote(name: &str, transport: Transport, url: &str) -> ServerDef {
        ServerDef {
            name: name.into(),
            transport,
            url: Some(url.into()),
            enabled: true,
            ..Default::default()
        }
    }
}

impl std::fmt::Debug for ServerDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redact = |m: &IndexMap<String, String>| m.keys().map(|k| format!("{k}=<redacted>")).collect::<Vec<_>>();
        f.debug_struct("ServerDef")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &redact(&self.env))
            .field("cwd", &self.cwd)
            .field("url", &self.url)
            .field("headers", &redact(&self.headers))
            .field("enabled", &self.enabled)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}
