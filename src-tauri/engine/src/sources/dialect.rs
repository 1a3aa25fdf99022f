//! Dialects: how each client spells a server entry.
//!
//! Each client is described once, as data (`Spelling`): the key of every
//! canonical field, the unit of its timeout, how it names the transport, where
//! it keeps "off". Parsing an entry, writing one, the keys Switchboard owns in
//! an entry and the fields a client can store are all derived from that one
//! description, so they cannot disagree (three hand-kept lists once did, and
//! edits dropped users' fields). The few shapes that are not a key per field
//! (Zed's legacy command object, Codex's header variables, goose's extension
//! types) are small hooks beside it.

use indexmap::IndexMap;
use serde_json::{Map, Value};

pub use crate::config::validate::FieldIssue;
use crate::config::{
    AuthConfig, Field, OAuthApp, RestartPolicy, ServerDef, ServerPatch, Transport,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// Switchboard's own file: the canonical fields.
    Switchboard,
    /// Claude Desktop, Cursor, LM Studio, the fallback `mcp.json`.
    Standard,
    ClaudeCode,
    Vscode,
    Windsurf,
    Zed,
    Cline,
    Roo,
    Gemini,
    Codex,
    Goose,
    Continue,
}

impl Dialect {
    pub const ALL: [Dialect; 12] = [
        Dialect::Switchboard,
        Dialect::Standard,
        Dialect::ClaudeCode,
        Dialect::Vscode,
        Dialect::Windsurf,
        Dialect::Zed,
        Dialect::Cline,
        Dialect::Roo,
        Dialect::Gemini,
        Dialect::Codex,
        Dialect::Goose,
        Dialect::Continue,
    ];
}

/// How a client measures a timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Milliseconds,
    /// Seconds, fractions allowed.
    Seconds,
    /// Seconds as an integer: a timeout that is not whole seconds cannot be stored.
    WholeSeconds,
}

impl Unit {
    fn ms(self) -> u64 {
        match self {
            Unit::Milliseconds => 1,
            Unit::Seconds | Unit::WholeSeconds => 1000,
        }
    }
    /// `ms` in this unit, or `None` when the unit cannot hold it exactly.
    fn write(self, ms: u64) -> Option<Value> {
        match self {
            Unit::Milliseconds => Some(Value::from(ms)),
            _ if ms.is_multiple_of(1000) => Some(Value::from(ms / 1000)),
            Unit::Seconds => Some(Value::from(ms as f64 / 1000.0)),
            Unit::WholeSeconds => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeoutKey {
    pub key: &'static str,
    pub unit: Unit,
}

/// When a client's entry carries its transport key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeWhen {
    Always,
    /// Only for http and sse (stdio is implied by `command`).
    Remote,
    /// Only for sse (http is implied by `url`).
    Sse,
    /// The client has no transport key; the other keys imply it.
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeSpelling {
    /// Keys read, in order; the first is written (an entry keeps the key it has).
    pub keys: &'static [&'static str],
    pub stdio: &'static str,
    /// `None`: the client has no such transport.
    pub http: Option<&'static str>,
    pub sse: Option<&'static str>,
    pub when: TypeWhen,
}

impl TypeSpelling {
    fn value(&self, t: Transport) -> Option<&'static str> {
        match t {
            Transport::Stdio => Some(self.stdio),
            Transport::Http => self.http,
            Transport::Sse => self.sse,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlSpelling {
    /// Keys read, in order; the first is written.
    Keys(&'static [&'static str]),
    /// The key says the transport (Gemini: `httpUrl` is http, `url` is sse).
    ByTransport {
        http: &'static str,
        sse: &'static str,
    },
}

/// How a client writes a list of OAuth scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopesAs {
    List,
    /// One space-separated string (RFC 6749 §3.3), as Claude Code keeps it.
    Spaced,
}

/// Where a client keeps a pre-registered OAuth app ([`OAuthApp`]): an object
/// under `key` with these member names. Members Switchboard does not know
/// (Claude Code's `authServerMetadataUrl`, Gemini's `authorizationUrl`, …)
/// are the user's and stay as they are on every edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OAuthSpelling {
    pub key: &'static str,
    pub client_id: &'static str,
    /// `None`: the client keeps the port only inside `redirect_uri`, or nowhere.
    pub callback_port: Option<&'static str>,
    pub scopes: Option<(&'static str, ScopesAs)>,
    pub redirect_uri: Option<&'static str>,
    /// Read (a secret the user wrote there), never written by Switchboard.
    pub client_secret: Option<&'static str>,
    /// A switch written `true` when Switchboard creates the object (Gemini's `enabled`).
    pub enabled: Option<&'static str>,
    /// The redirect URI the client uses when its object names none (Gemini:
    /// http://localhost:7777/oauth/callback): an app registered for that
    /// client was registered with it. Not written back unless the file had it.
    pub default_redirect: Option<&'static str>,
}

const CLAUDE_CODE_OAUTH: OAuthSpelling = OAuthSpelling {
    key: "oauth",
    client_id: "clientId",
    callback_port: Some("callbackPort"),
    scopes: Some(("scopes", ScopesAs::Spaced)),
    redirect_uri: None,
    client_secret: None,
    enabled: None,
    default_redirect: None,
};

/// Shapes that are not "one key per field".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// Zed's legacy `"command": {"path", "args", "env"}`; and an entry with
    /// only `settings` is an extension only Zed can run.
    ZedCommandObject,
    /// Codex's `env_http_headers` (header → variable name) and
    /// `bearer_token_env_var` beside `http_headers`.
    CodexHeaderVars,
    /// goose's `type` also names extensions that are not MCP servers
    /// (builtin, platform, …): listed, never started.
    GooseExtensionTypes,
}

/// One client's entry format.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spelling {
    /// Key that repeats the server's name inside the entry.
    pub name: Option<&'static str>,
    pub transport: TypeSpelling,
    /// A url with no transport key means this (http by default; Cline reads sse).
    pub bare_url: Transport,
    /// Keys read, in order; the first is written.
    pub command: &'static [&'static str],
    pub args: &'static str,
    pub env: &'static str,
    pub cwd: Option<&'static str>,
    pub url: UrlSpelling,
    pub headers: Option<&'static str>,
    /// Read in order; written to the key the entry has, else the first that
    /// holds the value exactly.
    pub timeout: &'static [TimeoutKey],
    pub auto_approve: Option<&'static str>,
    pub auth: Option<&'static str>,
    pub restart_policy: Option<&'static str>,
    pub oauth: Option<OAuthSpelling>,
    pub enable: EnableFlag,
    pub hook: Option<Hook>,
}

const TYPE_OR_TRANSPORT: &[&str] = &["type", "transport"];
const CANONICAL_TYPES: TypeSpelling = TypeSpelling {
    keys: TYPE_OR_TRANSPORT,
    stdio: "stdio",
    http: Some("http"),
    sse: Some("sse"),
    when: TypeWhen::Sse,
};

/// Claude Desktop, Cursor, LM Studio: `mcpServers` entries as the MCP docs show them.
const STANDARD: Spelling = Spelling {
    name: None,
    transport: CANONICAL_TYPES,
    bare_url: Transport::Http,
    command: &["command"],
    args: "args",
    env: "env",
    cwd: Some("cwd"),
    url: UrlSpelling::Keys(&["url"]),
    headers: Some("headers"),
    timeout: &[],
    auto_approve: None,
    auth: None,
    restart_policy: None,
    oauth: None,
    enable: EnableFlag::Park,
    hook: None,
};

const TIMEOUT_MS: &[TimeoutKey] = &[TimeoutKey {
    key: "timeout",
    unit: Unit::Milliseconds,
}];
const TIMEOUT_SECONDS: &[TimeoutKey] = &[TimeoutKey {
    key: "timeout",
    unit: Unit::Seconds,
}];

impl Dialect {
    /// The one description of this client's entries.
    pub fn spelling(self) -> Spelling {
        match self {
            Dialect::Switchboard => Spelling {
                timeout: TIMEOUT_MS,
                auto_approve: Some("autoApprove"),
                auth: Some("auth"),
                restart_policy: Some("restartPolicy"),
                oauth: Some(OAuthSpelling {
                    scopes: Some(("scopes", ScopesAs::List)),
                    redirect_uri: Some("redirectUri"),
                    client_secret: Some("clientSecret"),
                    ..CLAUDE_CODE_OAUTH
                }),
                enable: EnableFlag::InEntry {
                    key: "enabled",
                    inverted: false,
                },
                ..STANDARD
            },
            Dialect::Standard => STANDARD,
            Dialect::ClaudeCode => Spelling {
                transport: TypeSpelling {
                    when: TypeWhen::Always,
                    ..CANONICAL_TYPES
                },
                oauth: Some(CLAUDE_CODE_OAUTH),
                ..STANDARD
            },
            // VS Code's `oauth` holds only the client id.
            Dialect::Vscode => Spelling {
                transport: TypeSpelling {
                    when: TypeWhen::Always,
                    ..CANONICAL_TYPES
                },
                oauth: Some(OAuthSpelling {
                    callback_port: None,
                    scopes: None,
                    ..CLAUDE_CODE_OAUTH
                }),
                ..STANDARD
            },
            Dialect::Continue => Spelling {
                name: Some("name"),
                transport: TypeSpelling {
                    http: Some("streamable-http"),
                    when: TypeWhen::Always,
                    ..CANONICAL_TYPES
                },
                ..STANDARD
            },
            Dialect::Windsurf => Spelling {
                cwd: None,
                url: UrlSpelling::Keys(&["serverUrl", "url"]),
                enable: EnableFlag::InEntry {
                    key: "disabled",
                    inverted: true,
                },
                ..STANDARD
            },
            Dialect::Zed => Spelling {
                // Untagged: `command` means stdio, `url` means http.
                transport: TypeSpelling {
                    keys: &[],
                    sse: None,
                    when: TypeWhen::Never,
                    ..CANONICAL_TYPES
                },
                cwd: None,
                // Zed's per-server timeout is in milliseconds.
                timeout: TIMEOUT_MS,
                oauth: Some(OAuthSpelling {
                    key: "oauth",
                    client_id: "client_id",
                    callback_port: None,
                    scopes: None,
                    redirect_uri: None,
                    client_secret: Some("client_secret"),
                    enabled: None,
                    default_redirect: None,
                }),
                enable: EnableFlag::InEntry {
                    key: "enabled",
                    inverted: false,
                },
                hook: Some(Hook::ZedCommandObject),
                ..STANDARD
            },
            Dialect::Cline => Spelling {
                transport: TypeSpelling {
                    keys: &["type", "transportType"],
                    http: Some("streamableHttp"),
                    when: TypeWhen::Remote,
                    ..CANONICAL_TYPES
                },
                bare_url: Transport::Sse,
                timeout: TIMEOUT_SECONDS,
                auto_approve: Some("autoApprove"),
                enable: EnableFlag::InEntry {
                    key: "disabled",
                    inverted: true,
                },
                ..STANDARD
            },
            Dialect::Roo => Spelling {
                // Roo refuses a url without an explicit type.
                transport: TypeSpelling {
                    http: Some("streamable-http"),
                    when: TypeWhen::Remote,
                    ..CANONICAL_TYPES
                },
                timeout: TIMEOUT_SECONDS,
                auto_approve: Some("alwaysAllow"),
                enable: EnableFlag::InEntry {
                    key: "disabled",
                    inverted: true,
                },
                ..STANDARD
            },
            Dialect::Gemini => Spelling {
                transport: TypeSpelling {
                    keys: &["type"],
                    when: TypeWhen::Never,
                    ..CANONICAL_TYPES
                },
                url: UrlSpelling::ByTransport {
                    http: "httpUrl",
                    sse: "url",
                },
                timeout: TIMEOUT_MS,
                // Gemini keeps the whole redirect URI (default
                // http://localhost:7777/oauth/callback), not a port.
                oauth: Some(OAuthSpelling {
                    key: "oauth",
                    client_id: "clientId",
                    callback_port: None,
                    scopes: Some(("scopes", ScopesAs::List)),
                    redirect_uri: Some("redirectUri"),
                    client_secret: Some("clientSecret"),
                    enabled: Some("enabled"),
                    default_redirect: Some("http://localhost:7777/oauth/callback"),
                }),
                enable: EnableFlag::GeminiEnablementFile,
                ..STANDARD
            },
            Dialect::Codex => Spelling {
                // `command` means stdio, `url` streamable HTTP; Codex has no SSE.
                transport: TypeSpelling {
                    keys: &[],
                    sse: None,
                    when: TypeWhen::Never,
                    ..CANONICAL_TYPES
                },
                headers: Some("http_headers"),
                timeout: &[
                    TimeoutKey {
                        key: "startup_timeout_sec",
                        unit: Unit::WholeSeconds,
                    },
                    TimeoutKey {
                        key: "startup_timeout_ms",
                        unit: Unit::Milliseconds,
                    },
                ],
                enable: EnableFlag::InEntry {
                    key: "enabled",
                    inverted: false,
                },
                hook: Some(Hook::CodexHeaderVars),
                ..STANDARD
            },
            Dialect::Goose => Spelling {
                name: Some("name"),
                transport: TypeSpelling {
                    keys: &["type"],
                    stdio: "stdio",
                    http: Some("streamable_http"),
                    sse: Some("sse"),
                    when: TypeWhen::Always,
                },
                command: &["cmd", "command"],
                env: "envs",
                cwd: None,
                url: UrlSpelling::Keys(&["uri", "url"]),
                timeout: &[TimeoutKey {
                    key: "timeout",
                    unit: Unit::WholeSeconds,
                }],
                enable: EnableFlag::InEntry {
                    key: "enabled",
                    inverted: false,
                },
                hook: Some(Hook::GooseExtensionTypes),
                ..STANDARD
            },
        }
    }

    pub fn enable_flag(self) -> EnableFlag {
        self.spelling().enable
    }

    /// Whether this client can store `field` (Name, Transport and Enabled
    /// always: the key, the shape of the entry, the enable flag).
    pub fn can_store(self, field: Field) -> bool {
        let s = self.spelling();
        match field {
            Field::Name
            | Field::Transport
            | Field::Enabled
            | Field::Command
            | Field::Args
            | Field::Env
            | Field::Url => true,
            Field::Cwd => s.cwd.is_some(),
            Field::Headers => s.headers.is_some(),
            Field::Timeout => !s.timeout.is_empty(),
            Field::AutoApprove => s.auto_approve.is_some(),
            Field::Auth => s.auth.is_some(),
            Field::OAuth => s.oauth.is_some(),
            Field::RestartPolicy => s.restart_policy.is_some(),
        }
    }

    /// The canonical fields this client can store, in `ServerDef` order.
    pub fn fields(self) -> Vec<Field> {
        Field::ALL
            .into_iter()
            .filter(|f| self.can_store(*f))
            .collect()
    }

    /// The members of `oauth` this client's file has a place for, as
    /// `oauth.clientId`, `oauth.callbackPort`, `oauth.scopes`,
    /// `oauth.redirectUri` (a form offers only these; the secret is never
    /// written, so it is not one of them).
    pub fn oauth_fields(self) -> Vec<&'static str> {
        let Some(o) = self.spelling().oauth else {
            return vec![];
        };
        let mut out = vec!["oauth.clientId"];
        out.extend(o.callback_port.map(|_| "oauth.callbackPort"));
        out.extend(o.scopes.map(|_| "oauth.scopes"));
        out.extend(o.redirect_uri.map(|_| "oauth.redirectUri"));
        out
    }

    /// Every key of an entry this dialect reads; everything else is the
    /// user's (or the client's) and is never touched.
    pub fn owned_keys(self) -> Vec<&'static str> {
        let s = self.spelling();
        let mut keys: Vec<&'static str> = s.name.into_iter().collect();
        for f in Field::ALL {
            keys.extend(self.field_keys(f));
        }
        match s.enable {
            EnableFlag::InEntry { key, .. } => keys.push(key),
            // An explicit off is honoured where the client has no switch of its own.
            _ => keys.extend(["disabled", "enabled"]),
        }
        let mut seen = std::collections::HashSet::new();
        keys.retain(|k| seen.insert(*k));
        keys
    }

    /// The top-level keys `field` may be read from.
    fn field_keys(self, field: Field) -> Vec<&'static str> {
        let s = self.spelling();
        match field {
            Field::Name | Field::Enabled => vec![],
            Field::Transport => s.transport.keys.to_vec(),
            Field::Command => s.command.to_vec(),
            Field::Args => vec![s.args],
            Field::Env => vec![s.env],
            Field::Cwd => s.cwd.into_iter().collect(),
            Field::Url => match s.url {
                UrlSpelling::Keys(k) => k.to_vec(),
                UrlSpelling::ByTransport { http, sse } => vec![http, sse],
            },
            Field::Headers => {
                let mut k: Vec<&'static str> = s.headers.into_iter().collect();
                if s.hook == Some(Hook::CodexHeaderVars) {
                    k.extend(["env_http_headers", "bearer_token_env_var"]);
                }
                k
            }
            Field::Timeout => s.timeout.iter().map(|t| t.key).collect(),
            Field::AutoApprove => s.auto_approve.into_iter().collect(),
            Field::Auth => s.auth.into_iter().collect(),
            Field::OAuth => s.oauth.map(|o| o.key).into_iter().collect(),
            Field::RestartPolicy => s.restart_policy.into_iter().collect(),
        }
    }

    /// Where `key` (a top-level key of `field`) lives in `existing`: Zed's
    /// legacy command object holds the command, args and env inside it.
    fn locate(
        self,
        existing: Option<&Map<String, Value>>,
        field: Field,
        key: &'static str,
    ) -> Vec<String> {
        let legacy = self.spelling().hook == Some(Hook::ZedCommandObject)
            && existing
                .and_then(|e| e.get("command"))
                .is_some_and(Value::is_object);
        match (legacy, field) {
            (true, Field::Command) => vec!["command".into(), "path".into()],
            (true, Field::Args | Field::Env) => vec!["command".into(), key.into()],
            _ => vec![key.into()],
        }
    }
}

/// Where a dialect keeps "this server is off".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnableFlag {
    /// A boolean in the entry; `inverted` for `disabled: true`.
    InEntry { key: &'static str, inverted: bool },
    /// Outside the entry (Gemini's `mcp-server-enablement.json`).
    GeminiEnablementFile,
    /// The client has no off switch: Switchboard parks the entry in its own
    /// settings and removes it from the file, so the client stops running it
    /// too; enabling puts it back byte-for-byte in content.
    Park,
}

#[derive(Debug, Clone)]
pub struct Parsed {
    pub def: ServerDef,
    pub issues: Vec<FieldIssue>,
    /// Set when the entry is not a server Switchboard can run (a Zed
    /// extension, a goose builtin): it is listed with this note, never started.
    pub not_runnable: Option<String>,
}

struct Cx<'a> {
    entry: &'a Map<String, Value>,
    issues: Vec<FieldIssue>,
}

impl<'a> Cx<'a> {
    fn warn(&mut self, field: &str, message: String) {
        self.issues.push(FieldIssue {
            field: Some(field.into()),
            message,
            is_error: false,
        });
    }
    fn error(&mut self, field: Option<&str>, message: String) {
        self.issues.push(FieldIssue {
            field: field.map(Into::into),
            message,
            is_error: true,
        });
    }
    fn has(&self, key: &str) -> bool {
        self.entry.get(key).is_some_and(|v| !v.is_null())
    }
    fn str(&mut self, key: &str) -> Option<String> {
        match self.entry.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(other) => {
                self.warn(
                    key,
                    format!(
                        "\"{key}\" should be a string, found {}; ignored",
                        kind(other)
                    ),
                );
                None
            }
        }
    }
    fn list(&mut self, key: &str) -> Vec<String> {
        match self.entry.get(key) {
            None | Some(Value::Null) => vec![],
            Some(Value::Array(items)) => {
                let mut out = vec![];
                for (i, v) in items.iter().enumerate() {
                    match v {
                        Value::String(s) => out.push(s.clone()),
                        Value::Number(_) | Value::Bool(_) => out.push(v.to_string()),
                        other => self.warn(
                            &format!("{key}[{i}]"),
                            format!(
                                "\"{key}[{i}]\" should be a string, found {}; ignored",
                                kind(other)
                            ),
                        ),
                    }
                }
                out
            }
            Some(Value::String(s)) => {
                self.warn(
                    key,
                    format!(
                        "\"{key}\" should be a list of strings, found a string; read as one item"
                    ),
                );
                vec![s.clone()]
            }
            Some(other) => {
                self.warn(
                    key,
                    format!(
                        "\"{key}\" should be a list of strings, found {}; ignored",
                        kind(other)
                    ),
                );
                vec![]
            }
        }
    }
    fn map(&mut self, key: &str) -> IndexMap<String, String> {
        map_of(self.entry.get(key), key, &mut self.issues)
    }
    fn bool(&mut self, key: &str) -> Option<bool> {
        match self.entry.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.warn(
                    key,
                    format!(
                        "\"{key}\" should be true or false, found {}; ignored",
                        kind(other)
                    ),
                );
                None
            }
        }
    }
    /// A timeout in `unit`, as milliseconds.
    fn timeout(&mut self, key: &str, unit: Unit) -> Option<u64> {
        match self.entry.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f >= 0.0) => {
                Some((n.as_f64().unwrap_or(0.0) * unit.ms() as f64).round() as u64)
            }
            Some(other) => {
                let unit = if unit == Unit::Milliseconds {
                    "milliseconds"
                } else {
                    "seconds"
                };
                self.warn(
                    key,
                    format!(
                        "\"{key}\" should be a number of {unit}, found {}; the default is used",
                        kind(other)
                    ),
                );
                None
            }
        }
    }
}

fn map_of(v: Option<&Value>, key: &str, issues: &mut Vec<FieldIssue>) -> IndexMap<String, String> {
    let mut out = IndexMap::new();
    match v {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                match v {
                    Value::String(s) => {
                        out.insert(k.clone(), s.clone());
                    }
                    Value::Number(_) | Value::Bool(_) => {
                        out.insert(k.clone(), v.to_string());
                    }
                    // VS Code: null unsets an inherited variable.
                    Value::Null => {}
                    other => issues.push(FieldIssue {
                        field: Some(format!("{key}.{k}")),
                        message: format!(
                            "\"{key}.{k}\" should be a string, found {}; ignored",
                            kind(other)
                        ),
                        is_error: false,
                    }),
                }
            }
        }
        Some(other) => issues.push(FieldIssue {
            field: Some(key.into()),
            message: format!(
                "\"{key}\" should be an object of strings, found {}; ignored",
                kind(other)
            ),
            is_error: false,
        }),
    }
    out
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A value a client cannot store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unstorable {
    /// The client has no key for this field.
    Field(Field),
    /// The client has no such transport.
    Transport(Transport),
    /// The client keeps this timeout key in whole seconds.
    WholeSeconds { key: &'static str },
}

impl Unstorable {
    /// The message users see, naming the client (`Cursor`, `goose`).
    pub fn message(&self, client: &str) -> String {
        match self {
            Unstorable::Field(f) => format!("Invalid server config: {client} has no field for {}", f.as_str()),
            Unstorable::Transport(t) => format!("Invalid server config: {client} has no {} transport; use http", t.as_str().to_uppercase()),
            Unstorable::WholeSeconds { key } => format!("Invalid server config: {client} stores \"{key}\" in whole seconds; use a timeout that is a whole number of seconds"),
        }
    }
}

/// One change inside an entry, at a path relative to the entry.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryEdit {
    Set(Vec<String>, Value),
    Remove(Vec<String>),
}

/// Apply entry edits to an entry held in memory (a parked one).
pub fn apply_entry_edits(entry: &mut Value, edits: Vec<EntryEdit>) {
    fn at<'v>(v: &'v mut Value, path: &[String]) -> Option<&'v mut Map<String, Value>> {
        match path.split_first() {
            None => v.as_object_mut(),
            Some((k, rest)) => at(
                v.as_object_mut()?
                    .entry(k.clone())
                    .or_insert_with(|| Value::Object(Map::new())),
                rest,
            ),
        }
    }
    for e in edits {
        let (path, value) = match e {
            EntryEdit::Set(p, v) => (p, Some(v)),
            EntryEdit::Remove(p) => (p, None),
        };
        let Some((last, parents)) = path.split_last() else {
            continue;
        };
        let Some(obj) = at(entry, parents) else {
            continue;
        };
        match value {
            Some(v) => {
                obj.insert(last.clone(), v);
            }
            None => {
                obj.remove(last);
            }
        }
    }
}

fn get_in<'a>(entry: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter().try_fold(entry.get(first)?, |v, k| v.get(k))
}

fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().map(|x| Value::String(x.clone())).collect())
}

fn string_map(v: &IndexMap<String, String>) -> Value {
    Value::Object(
        v.iter()
            .map(|(k, x)| (k.clone(), Value::String(x.clone())))
            .collect(),
    )
}

/// The members of a client's OAuth object that Switchboard writes (the
/// secret and unknown members never).
fn oauth_written_keys(o: &OAuthSpelling) -> Vec<&'static str> {
    let mut k = vec![o.client_id];
    k.extend(o.callback_port);
    k.extend(o.scopes.map(|(k, _)| k));
    k.extend(o.redirect_uri);
    k
}

/// `app` as the members of this client's OAuth object. Scopes keep the form
/// (`existing` list or string) the file has.
fn oauth_members(
    o: &OAuthSpelling,
    app: &OAuthApp,
    existing: Option<&Value>,
) -> Vec<(&'static str, Value)> {
    let mut out = vec![];
    if let Some(id) = &app.client_id {
        out.push((o.client_id, Value::String(id.clone())));
    }
    match (o.callback_port, o.redirect_uri) {
        (Some(pk), Some(rk)) => {
            if let Some(p) = app.callback_port {
                out.push((pk, Value::from(p)));
            }
            if let Some(r) = &app.redirect_uri {
                out.push((rk, Value::String(r.clone())));
            }
        }
        (Some(pk), None) => {
            if let Some(p) = app.port() {
                out.push((pk, Value::from(p)));
            }
        }
        (None, Some(rk)) => {
            let had = existing.and_then(|e| e.get(rk)).is_some();
            if let Some(r) = app
                .redirect()
                .filter(|r| had || Some(r.as_str()) != o.default_redirect)
            {
                out.push((rk, Value::String(r)));
            }
        }
        (None, None) => {}
    }
    if let (Some((k, form)), false) = (o.scopes, app.scopes.is_empty()) {
        let form = match existing.and_then(|e| e.get(k)) {
            Some(Value::String(_)) => ScopesAs::Spaced,
            Some(Value::Array(_)) => ScopesAs::List,
            _ => form,
        };
        out.push((
            k,
            if form == ScopesAs::Spaced {
                Value::String(app.scopes.join(" "))
            } else {
                strings(&app.scopes)
            },
        ));
    }
    out
}

/// A client's OAuth object as an [`OAuthApp`]; `None` when it names nothing
/// Switchboard uses. Wrong types are warnings naming the member.
fn parse_oauth(
    o: &OAuthSpelling,
    v: Option<&Value>,
    issues: &mut Vec<FieldIssue>,
) -> Option<OAuthApp> {
    let warn = |issues: &mut Vec<FieldIssue>, member: &str, message: String| {
        issues.push(FieldIssue {
            field: Some(format!("{}.{member}", o.key)),
            message,
            is_error: false,
        })
    };
    let m = match v {
        None | Some(Value::Null) => return None,
        Some(Value::Object(m)) => m,
        Some(other) => {
            issues.push(FieldIssue {
                field: Some(o.key.into()),
                message: format!(
                    "\"{}\" should be an object, found {}; ignored",
                    o.key,
                    kind(other)
                ),
                is_error: false,
            });
            return None;
        }
    };
    let text = |issues: &mut Vec<FieldIssue>, member: Option<&'static str>| -> Option<String> {
        match m.get(member?)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::String(_) | Value::Null => None,
            other => {
                warn(
                    issues,
                    member?,
                    format!(
                        "\"{}.{}\" should be a string, found {}; ignored",
                        o.key,
                        member?,
                        kind(other)
                    ),
                );
                None
            }
        }
    };
    let mut app = OAuthApp {
        client_id: text(issues, Some(o.client_id)),
        redirect_uri: text(issues, o.redirect_uri),
        client_secret: text(issues, o.client_secret),
        ..Default::default()
    };
    if let Some(k) = o.callback_port {
        match m.get(k) {
            None | Some(Value::Null) => {}
            Some(v) => match v.as_u64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok())).and_then(|n| u16::try_from(n).ok()).filter(|n| *n > 0) {
                Some(p) => app.callback_port = Some(p),
                None => warn(issues, k, format!("\"{}.{k}\" should be a port number from 1 to 65535, found {v}; a free port is used instead", o.key)),
            },
        }
    }
    if let Some((k, _)) = o.scopes {
        match m.get(k) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => {
                app.scopes = s.split_whitespace().map(str::to_string).collect()
            }
            Some(Value::Array(items)) => {
                app.scopes = items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_string))
                    .collect()
            }
            Some(other) => warn(
                issues,
                k,
                format!(
                    "\"{}.{k}\" should be a list of scopes, found {}; ignored",
                    o.key,
                    kind(other)
                ),
            ),
        }
    }
    if app.client_id.is_some() && app.redirect_uri.is_none() && app.callback_port.is_none() {
        app.redirect_uri = o.default_redirect.map(str::to_string);
    }
    if let (Some(r), Some(k)) = (&app.redirect_uri, o.redirect_uri) {
        if crate::config::loopback_redirect(r).is_none() {
            warn(issues, k, format!("\"{}.{k}\" is {r}; Switchboard can only receive a sign-in at http://localhost:PORT/… or http://127.0.0.1:PORT/… on this computer, so signing in from Switchboard fails until it names one", o.key));
        }
    }
    (!app.is_empty()).then_some(app)
}

/// Codex headers in its three keys: `Authorization: Bearer ${VAR}` as
/// `bearer_token_env_var`, a whole-value `${VAR}` as `env_http_headers`,
/// the rest as `http_headers`.
fn codex_headers(headers: &IndexMap<String, String>) -> Vec<(&'static str, Value)> {
    let (mut plain, mut from_env, mut bearer) = (Map::new(), Map::new(), None);
    for (k, v) in headers {
        match crate::config::vars::header_env_ref(k, v) {
            Some(("Bearer ", var)) => bearer = Some(Value::String(var.into())),
            Some((_, var)) => {
                from_env.insert(k.clone(), Value::String(var.into()));
            }
            None => {
                plain.insert(k.clone(), Value::String(v.clone()));
            }
        }
    }
    let mut out = vec![];
    if !plain.is_empty() {
        out.push(("http_headers", Value::Object(plain)));
    }
    if !from_env.is_empty() {
        out.push(("env_http_headers", Value::Object(from_env)));
    }
    if let Some(b) = bearer {
        out.push(("bearer_token_env_var", b));
    }
    out
}

impl Dialect {
    /// Parse one entry. `name` is the map key (or the list entry's `name`).
    pub fn parse_entry(self, name: &str, entry: &Value) -> Parsed {
        let obj = match entry {
            Value::Object(m) => m,
            other => {
                return Parsed {
                    def: ServerDef {
                        name: name.into(),
                        enabled: true,
                        ..Default::default()
                    },
                    issues: vec![FieldIssue {
                        field: None,
                        message: format!(
                            "Invalid server config: the entry should be an object, found {}",
                            kind(other)
                        ),
                        is_error: true,
                    }],
                    not_runnable: None,
                }
            }
        };
        let s = self.spelling();
        let mut cx = Cx {
            entry: obj,
            issues: vec![],
        };
        let mut def = ServerDef {
            name: name.into(),
            enabled: true,
            ..Default::default()
        };
        let mut not_runnable = None;

        let mut explicit = None;
        if let Some(key) = s.transport.keys.iter().find(|k| cx.has(k)) {
            if let Some(t) = cx.str(key) {
                match Transport::parse_alias(&t) {
                    Some(t) => explicit = Some(t),
                    None if s.hook == Some(Hook::GooseExtensionTypes) => {
                        not_runnable = Some(format!("a goose \"{t}\" extension; only goose can run it"));
                    }
                    None => cx.error(Some(key), format!("Invalid server config: unknown {key} \"{t}\" (expected stdio, http or sse)")),
                }
            }
        }

        match obj.get("command") {
            Some(Value::Object(c)) if s.hook == Some(Hook::ZedCommandObject) => {
                let mut inner = Cx {
                    entry: c,
                    issues: vec![],
                };
                def.command = inner.str("path");
                def.args = inner.list("args");
                def.env = inner.map("env");
                cx.issues
                    .extend(inner.issues.into_iter().map(|i| FieldIssue {
                        field: Some("command".into()),
                        ..i
                    }));
            }
            _ => {
                def.command = s.command.iter().find(|k| cx.has(k)).and_then(|k| cx.str(k));
                def.args = cx.list(s.args);
                def.env = cx.map(s.env);
            }
        }
        if s.hook == Some(Hook::ZedCommandObject)
            && cx.has("settings")
            && !cx.has("command")
            && !cx.has("url")
        {
            not_runnable = Some("provided by a Zed extension; only Zed can start it".into());
        }
        def.cwd = s.cwd.and_then(|k| cx.str(k));

        let mut implied = None;
        match s.url {
            UrlSpelling::Keys(keys) => {
                def.url = keys.iter().find(|k| cx.has(k)).and_then(|k| cx.str(k))
            }
            UrlSpelling::ByTransport { http, sse } => {
                if let Some(u) = cx.str(http) {
                    (def.url, implied) = (Some(u), Some(Transport::Http));
                } else if let Some(u) = cx.str(sse) {
                    (def.url, implied) = (Some(u), Some(Transport::Sse));
                }
            }
        }
        if let Some(h) = s.headers {
            def.headers = cx.map(h);
        }
        if s.hook == Some(Hook::CodexHeaderVars) {
            for (h, v) in &def.headers {
                // A literal spelled like a variable cannot be told apart from
                // one Switchboard would have written to `env_http_headers`.
                if crate::config::vars::header_env_ref(h, v).is_some() {
                    cx.warn("http_headers", format!("\"http_headers.{h}\" looks like a variable; Codex sends it as written, Switchboard reads the variable (as if it were in env_http_headers)"));
                }
            }
            for (h, var) in cx.map("env_http_headers") {
                def.headers.insert(h, format!("${{{var}}}"));
            }
            if let Some(var) = cx.str("bearer_token_env_var") {
                def.headers
                    .insert("Authorization".into(), format!("Bearer ${{{var}}}"));
            }
        }

        match s.enable {
            EnableFlag::InEntry { key, inverted } => {
                if let Some(b) = cx.bool(key) {
                    def.enabled = b != inverted;
                }
            }
            _ => {
                // Some users add `disabled`/`enabled` to clients without a
                // documented switch; honour an explicit off.
                if cx.bool("disabled") == Some(true) || cx.bool("enabled") == Some(false) {
                    def.enabled = false;
                }
            }
        }

        if let Some(t) = s.timeout.iter().find(|t| cx.has(t.key)) {
            def.timeout = cx.timeout(t.key, t.unit);
        } else if s.timeout.is_empty() && cx.has("timeout") {
            cx.warn("timeout", "\"timeout\" is not a setting this client has; Switchboard ignores it and uses its default".into());
        }
        if let Some(k) = s.auto_approve {
            def.auto_approve = cx.list(k);
        }
        if let Some(a) = s.auth.and_then(|k| obj.get(k)) {
            match serde_json::from_value::<AuthConfig>(a.clone()) {
                Ok(a) => def.auth = Some(a),
                Err(e) => cx.warn("auth", format!("\"auth\" is not valid ({e}); ignored")),
            }
        }
        if let Some(o) = s.oauth {
            def.oauth = parse_oauth(&o, obj.get(o.key), &mut cx.issues);
        }
        if let Some(r) = s.restart_policy.and_then(|k| obj.get(k)) {
            match serde_json::from_value::<RestartPolicy>(r.clone()) {
                Ok(r) => def.restart_policy = Some(r),
                Err(e) => cx.warn(
                    "restartPolicy",
                    format!("\"restartPolicy\" is not valid ({e}); the default is used"),
                ),
            }
        }

        // The transport: an explicit type wins; then what the keys imply; command ⇒
        // stdio; url ⇒ http (or the client's own reading); neither ⇒ stdio.
        def.transport = explicit.or(implied).unwrap_or(if def.command.is_some() {
            Transport::Stdio
        } else if def.url.is_some() {
            s.bare_url
        } else {
            Transport::Stdio
        });

        if not_runnable.is_none() {
            cx.issues
                .extend(crate::config::validate::validate_def(&def));
        }
        Parsed {
            def,
            issues: cx.issues,
            not_runnable,
        }
    }

    /// `field` of `def` as keys and values of this client's entry. With
    /// `existing`, a field keeps the key (and place) it has there: an entry
    /// with `transportType` keeps it, Zed's legacy command object stays one.
    fn write_field(
        self,
        field: Field,
        def: &ServerDef,
        existing: Option<&Map<String, Value>>,
    ) -> Result<Vec<(Vec<String>, Value)>, Unstorable> {
        let s = self.spelling();
        if !self.can_store(field) {
            return if field.is_empty_in(def) {
                Ok(vec![])
            } else {
                Err(Unstorable::Field(field))
            };
        }
        let has = |p: &[String]| existing.is_some_and(|e| get_in(e, p).is_some());
        // The key this field already uses in the entry, else the first one.
        let key_of = |keys: &[&'static str]| -> Vec<String> {
            keys.iter()
                .map(|k| self.locate(existing, field, k))
                .find(|p| has(p))
                .unwrap_or_else(|| self.locate(existing, field, keys[0]))
        };
        let one = |keys: &[&'static str], v: Value| Ok(vec![(key_of(keys), v)]);
        match field {
            Field::Enabled => Ok(vec![]),
            Field::Name => match s.name {
                Some(k) => one(&[k], Value::String(def.name.clone())),
                None => Ok(vec![]),
            },
            Field::Transport => {
                let t = &s.transport;
                let Some(v) = t.value(def.transport) else {
                    return Err(Unstorable::Transport(def.transport));
                };
                if t.keys.is_empty() {
                    return Ok(vec![]);
                }
                let present = t.keys.iter().any(|k| has(&[k.to_string()]));
                let wanted = match t.when {
                    TypeWhen::Always => true,
                    TypeWhen::Remote => def.transport != Transport::Stdio,
                    TypeWhen::Sse => def.transport == Transport::Sse,
                    TypeWhen::Never => false,
                };
                if present || wanted {
                    one(t.keys, Value::String(v.into()))
                } else {
                    Ok(vec![])
                }
            }
            Field::Command => match &def.command {
                Some(c) => one(s.command, Value::String(c.clone())),
                None => Ok(vec![]),
            },
            Field::Args if !def.args.is_empty() => one(&[s.args], strings(&def.args)),
            Field::Env if !def.env.is_empty() => one(&[s.env], string_map(&def.env)),
            Field::Cwd => match (&def.cwd, s.cwd) {
                (Some(c), Some(k)) => one(&[k], Value::String(c.clone())),
                _ => Ok(vec![]),
            },
            Field::Url => match (&def.url, s.url) {
                (None, _) => Ok(vec![]),
                (Some(u), UrlSpelling::Keys(keys)) => one(keys, Value::String(u.clone())),
                (Some(u), UrlSpelling::ByTransport { http, sse }) => {
                    let k = if def.transport == Transport::Http {
                        http
                    } else {
                        sse
                    };
                    one(&[k], Value::String(u.clone()))
                }
            },
            Field::Headers if !def.headers.is_empty() => match (s.hook, s.headers) {
                (Some(Hook::CodexHeaderVars), _) => Ok(codex_headers(&def.headers)
                    .into_iter()
                    .map(|(k, v)| (vec![k.to_string()], v))
                    .collect()),
                (_, Some(k)) => one(&[k], string_map(&def.headers)),
                (_, None) => Err(Unstorable::Field(field)),
            },
            Field::Timeout => {
                let Some(ms) = def.timeout else {
                    return Ok(vec![]);
                };
                let fits = |t: &&TimeoutKey| t.unit.write(ms).is_some();
                let chosen = s
                    .timeout
                    .iter()
                    .filter(fits)
                    .find(|t| has(&[t.key.to_string()]))
                    .or_else(|| s.timeout.iter().find(fits));
                match chosen {
                    Some(t) => one(&[t.key], t.unit.write(ms).unwrap_or_default()),
                    None => Err(Unstorable::WholeSeconds {
                        key: s.timeout[0].key,
                    }),
                }
            }
            Field::AutoApprove => match (def.auto_approve.is_empty(), s.auto_approve) {
                (false, Some(k)) => one(&[k], strings(&def.auto_approve)),
                _ => Ok(vec![]),
            },
            Field::Auth => match (&def.auth, s.auth) {
                (Some(a), Some(k)) => one(&[k], serde_json::to_value(a).unwrap_or_default()),
                _ => Ok(vec![]),
            },
            Field::RestartPolicy => match (&def.restart_policy, s.restart_policy) {
                (Some(r), Some(k)) => one(&[k], serde_json::to_value(r).unwrap_or_default()),
                _ => Ok(vec![]),
            },
            Field::OAuth => {
                let (Some(app), Some(o)) = (def.oauth.as_ref().filter(|a| !a.is_empty()), s.oauth)
                else {
                    return Ok(vec![]);
                };
                let members = oauth_members(&o, app, existing.and_then(|e| e.get(o.key)));
                match existing.and_then(|e| e.get(o.key)) {
                    // Member by member: the object's other members stay.
                    Some(Value::Object(_)) => Ok(members
                        .into_iter()
                        .map(|(k, v)| (vec![o.key.to_string(), k.to_string()], v))
                        .collect()),
                    _ => {
                        let mut m: Map<String, Value> = members
                            .into_iter()
                            .map(|(k, v)| (k.to_string(), v))
                            .collect();
                        if let Some(e) = o.enabled {
                            m.insert(e.into(), Value::Bool(true));
                        }
                        Ok(vec![(vec![o.key.to_string()], Value::Object(m))])
                    }
                }
            }
            Field::Args | Field::Env | Field::Headers => Ok(vec![]),
        }
    }

    /// `def` in this client's own field names, without the enable flag
    /// (which `Writer` handles: it may live outside the entry). Errors name
    /// what the client cannot store.
    pub fn to_entry(self, def: &ServerDef) -> Result<Map<String, Value>, Unstorable> {
        let mut m = Map::new();
        for f in Field::ALL {
            for (path, v) in self.write_field(f, def, None)? {
                m.insert(path.join("."), v);
            }
        }
        Ok(m)
    }

    /// The edits that make `existing` (an entry of this dialect) carry the
    /// patch's fields, in their keys and places; every other key stays.
    /// Name and enabled are not in here: renaming moves the entry and the
    /// enable flag may live outside it, so `Writer` does both.
    pub fn patch_edits(
        self,
        existing: Option<&Map<String, Value>>,
        patch: &ServerPatch,
    ) -> Result<Vec<EntryEdit>, Unstorable> {
        let mut fields = patch.fields.clone();
        if patch.changes(Field::Transport) {
            // The url's key may say the transport (Gemini), and a transport
            // change may need a type key written.
            fields.extend([Field::Url, Field::Headers]);
        }
        fields.sort();
        fields.dedup();
        let s = self.spelling();
        let (mut removes, mut sets) = (vec![], vec![]);
        for f in fields {
            if matches!(f, Field::Name | Field::Enabled) {
                continue;
            }
            let new = self.write_field(f, &patch.def, existing)?;
            if let (Field::OAuth, Some(o), Some(Value::Object(old))) = (
                f,
                s.oauth,
                existing.and_then(|e| e.get(s.oauth.map_or("", |o| o.key))),
            ) {
                // Only the members Switchboard writes go; the rest stay, and
                // so does the object while anything is left in it.
                let kept: Vec<&String> = old
                    .keys()
                    .filter(|k| {
                        !oauth_written_keys(&o).contains(&k.as_str())
                            || new.iter().any(|(np, _)| np.get(1) == Some(*k))
                    })
                    .collect();
                if kept.is_empty() && new.is_empty() {
                    removes.push(EntryEdit::Remove(vec![o.key.into()]));
                } else {
                    for k in old.keys().filter(|k| !kept.contains(k)) {
                        removes.push(EntryEdit::Remove(vec![o.key.into(), k.clone()]));
                    }
                }
                sets.extend(new.into_iter().map(|(p, v)| EntryEdit::Set(p, v)));
                continue;
            }
            for k in self.field_keys(f) {
                let p = self.locate(existing, f, k);
                if existing.is_some_and(|e| get_in(e, &p).is_some())
                    && !new.iter().any(|(np, _)| *np == p)
                {
                    removes.push(EntryEdit::Remove(p));
                }
            }
            sets.extend(new.into_iter().map(|(p, v)| EntryEdit::Set(p, v)));
        }
        removes.extend(sets);
        Ok(removes)
    }

    /// `def` with what this client cannot store left out (a timeout rounded
    /// up to what its unit holds), for copying a server between clients.
    pub fn storable(self, def: &ServerDef) -> ServerDef {
        let mut out = def.clone();
        let blank = ServerDef::default();
        for f in Field::ALL {
            if !self.can_store(f) {
                f.copy(&blank, &mut out);
            }
        }
        if let (Some(ms), Some(t)) = (out.timeout, self.spelling().timeout.first()) {
            if self.write_field(Field::Timeout, &out, None).is_err() {
                out.timeout = Some(ms.div_ceil(t.unit.ms()) * t.unit.ms());
            }
        }
        out
    }
}
