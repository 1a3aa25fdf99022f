//! `ServerDef`: one MCP server definition as Switchboard understands it,
//! whatever client file it came from. Strings stay raw (`${env:X}`, `!cmd`):
//! they are resolved only to display or to launch.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    #[default]
    Stdio,
    Http,
    Sse,
}

impl Transport {
    /// Every spelling clients use for a transport, case-insensitive.
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AuthConfig {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub credential_id: Option<String>,
}

/// An OAuth app registered in advance with a remote server's authorization
/// server (MCP "pre-registration"), for servers that offer no dynamic client
/// registration: its client id, the loopback port its redirect URI names,
/// the scopes to ask for. Read from each client's own field (Claude Code's
/// `oauth.clientId` / `oauth.callbackPort`, Gemini CLI's `oauth`, …).
///
/// `client_secret` is only ever read: a secret the user wrote into a
/// client's file themselves (Gemini's `oauth.clientSecret`, raw, e.g.
/// `${VAR}`). Switchboard never writes one to a file; a secret entered in
/// the app is kept in the keychain beside the sign-in.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct OAuthApp {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub client_id: Option<String>,
    /// The 127.0.0.1/localhost port of the registered redirect URI
    /// (`http://localhost:PORT/callback`, Claude Code's convention).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub callback_port: Option<u16>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub scopes: Vec<String>,
    /// The exact registered redirect URI, when the client's file names one
    /// (Gemini's `redirectUri`, e.g. `http://localhost:7777/oauth/callback`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub redirect_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub client_secret: Option<String>,
}

impl OAuthApp {
    pub fn is_empty(&self) -> bool {
        self.client_id.is_none()
            && self.callback_port.is_none()
            && self.scopes.is_empty()
            && self.redirect_uri.is_none()
            && self.client_secret.is_none()
    }

    /// The redirect URI a sign-in uses: the one written in the file, else
    /// `http://localhost:PORT/callback` for a fixed port; `None`: any free port.
    pub fn redirect(&self) -> Option<String> {
        self.redirect_uri.clone().or_else(|| {
            self.callback_port
                .map(|p| format!("http://localhost:{p}/callback"))
        })
    }

    /// The port the sign-in listens on: the configured one, else the one in
    /// the redirect URI.
    pub fn port(&self) -> Option<u16> {
        self.callback_port.or_else(|| {
            self.redirect_uri
                .as_deref()
                .and_then(|u| url::Url::parse(u).ok())
                .and_then(|u| u.port())
        })
    }
}

/// The port and path of a redirect URI Switchboard can receive: `http` on
/// `localhost`, `127.0.0.1` or `[::1]` with an explicit port.
pub fn loopback_redirect(uri: &str) -> Option<(u16, String)> {
    let u = url::Url::parse(uri).ok()?;
    let loopback = matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    (u.scheme() == "http" && loopback).then_some(())?;
    Some((u.port()?, u.path().to_string()))
}

impl std::fmt::Debug for OAuthApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthApp")
            .field("client_id", &self.client_id)
            .field("callback_port", &self.callback_port)
            .field("scopes", &self.scopes)
            .field("redirect_uri", &self.redirect_uri)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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

/// One server definition, whatever client file it came from. `Debug` redacts env and header values.
#[derive(Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerDef {
    pub name: String,
    pub transport: Transport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, type = "Record<string, string>"))]
    pub env: IndexMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, type = "Record<string, string>"))]
    pub headers: IndexMap<String, String>,
    pub enabled: bool,
    /// Milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub timeout: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub auth: Option<AuthConfig>,
    /// A pre-registered OAuth app (remote servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub oauth: Option<OAuthApp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub restart_policy: Option<RestartPolicy>,
    /// Kept on round-trip; never used to grant anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
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
        let redact = |m: &IndexMap<String, String>| {
            m.keys()
                .map(|k| format!("{k}=<redacted>"))
                .collect::<Vec<_>>()
        };
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
            .field("oauth", &self.oauth)
            .finish_non_exhaustive()
    }
}
