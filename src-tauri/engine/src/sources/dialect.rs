//! Dialects: how each client spells a server entry. Parsing maps a client's
//! entry onto `ServerDef`; `to_entry` writes a `ServerDef` back in the
//! client's own field names, and `merge_entry` keeps every key we do not own.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::config::{AuthConfig, RestartPolicy, ServerDef, Transport};

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

#[derive(Debug, Clone, PartialEq)]
pub struct FieldIssue {
    /// The entry's field the issue is about, e.g. `timeout` or `args[2]`.
    pub field: Option<String>,
    pub message: String,
    pub is_error: bool,
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
        self.issues.push(FieldIssue { field: Some(field.into()), message, is_error: false });
    }
    fn error(&mut self, field: Option<&str>, message: String) {
        self.issues.push(FieldIssue { field: field.map(Into::into), message, is_error: true });
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
                self.warn(key, format!("\"{key}\" should be a string, found {}; ignored", kind(other)));
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
                        other => self.warn(&format!("{key}[{i}]"), format!("\"{key}[{i}]\" should be a string, found {}; ignored", kind(other))),
                    }
                }
                out
            }
            Some(Value::String(s)) => {
                self.warn(key, format!("\"{key}\" should be a list of strings, found a string; read as one item"));
                vec![s.clone()]
            }
            Some(other) => {
                self.warn(key, format!("\"{key}\" should be a list of strings, found {}; ignored", kind(other)));
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
                self.warn(key, format!("\"{key}\" should be true or false, found {}; ignored", kind(other)));
                None
            }
        }
    }
    /// A timeout in `unit_ms` milliseconds per unit (1 for ms, 1000 for s).
    fn timeout(&mut self, key: &str, unit_ms: u64) -> Option<u64> {
        match self.entry.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f >= 0.0) => {
                Some((n.as_f64().unwrap_or(0.0) * unit_ms as f64) as u64)
            }
            Some(other) => {
                let unit = if unit_ms == 1 { "milliseconds" } else { "seconds" };
                self.warn(key, format!("\"{key}\" should be a number of {unit}, found {}; the default is used", kind(other)));
                None
            }
        }
    }
    fn transport(&mut self, keys: &[&str]) -> Option<Transport> {
        for key in keys {
            if let Some(t) = self.str(key) {
                match Transport::parse_alias(&t) {
                    Some(t) => return Some(t),
                    None => {
                        self.error(Some(key), format!("Invalid server config: unknown {key} \"{t}\" (expected stdio, http or sse)"));
                        return None;
                    }
                }
            }
        }
        None
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
                        message: format!("\"{key}.{k}\" should be a string, found {}; ignored", kind(other)),
                        is_error: false,
                    }),
                }
            }
        }
        Some(other) => issues.push(FieldIssue {
            field: Some(key.into()),
            message: format!("\"{key}\" should be an object of strings, found {}; ignored", kind(other)),
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

impl Dialect {
    pub fn enable_flag(self) -> EnableFlag {
        match self {
            Dialect::Switchboard | Dialect::Zed | Dialect::Codex | Dialect::Goose => {
                EnableFlag::InEntry { key: "enabled", inverted: false }
            }
            Dialect::Windsurf | Dialect::Cline | Dialect::Roo => EnableFlag::InEntry { key: "disabled", inverted: true },
            Dialect::Gemini => EnableFlag::GeminiEnablementFile,
            Dialect::Standard | Dialect::ClaudeCode | Dialect::Vscode | Dialect::Continue => EnableFlag::Park,
        }
    }

    /// Parse one entry. `name` is the map key (or the list entry's `name`).
    pub fn parse_entry(self, name: &str, entry: &Value) -> Parsed {
        let empty = Map::new();
        let obj = match entry {
            Value::Object(m) => m,
            other => {
                return Parsed {
                    def: ServerDef { name: name.into(), enabled: true, ..Default::default() },
                    issues: vec![FieldIssue {
                        field: None,
                        message: format!("Invalid server config: the entry should be an object, found {}", kind(other)),
                        is_error: true,
                    }],
                    not_runnable: None,
                }
            }
        };
        let _ = &empty;
        let mut cx = Cx { entry: obj, issues: vec![] };
        let mut def = ServerDef { name: name.into(), enabled: true, ..Default::default() };
        let mut not_runnable = None;
        let mut explicit: Option<Transport> = None;

        match self {
            Dialect::Switchboard | Dialect::Standard | Dialect::ClaudeCode | Dialect::Vscode | Dialect::Roo | Dialect::Continue => {
                explicit = cx.transport(&["type", "transport"]);
                def.command = cx.str("command");
                def.args = cx.list("args");
                def.env = cx.map("env");
                def.cwd = cx.str("cwd");
                def.url = cx.str("url");
                def.headers = cx.map("headers");
            }
            Dialect::Windsurf => {
                explicit = cx.transport(&["type", "transport"]);
                def.command = cx.str("command");
                def.args = cx.list("args");
                def.env = cx.map("env");
                def.url = cx.str("serverUrl").or_else(|| cx.str("url"));
                def.headers = cx.map("headers");
            }
            Dialect::Cline => {
                explicit = cx.transport(&["type", "transportType"]);
                def.command = cx.str("command");
                def.args = cx.list("args");
                def.env = cx.map("env");
                def.cwd = cx.str("cwd");
                def.url = cx.str("url");
                def.headers = cx.map("headers");
                // Cline reads a url with no type as the legacy SSE transport.
                if explicit.is_none() && def.url.is_some() && def.command.is_none() {
                    explicit = Some(Transport::Sse);
                }
            }
            Dialect::Zed => {
                if cx.has("settings") && !cx.has("command") && !cx.has("url") {
                    not_runnable = Some("provided by a Zed extension; only Zed can start it".into());
                }
                match obj.get("command") {
                    // Legacy shape: "command": {"path", "args", "env"}.
                    Some(Value::Object(c)) => {
                        let mut inner = Cx { entry: c, issues: vec![] };
                        def.command = inner.str("path");
                        def.args = inner.list("args");
                        def.env = inner.map("env");
                        cx.issues.extend(inner.issues);
                    }
                    _ => {
                        def.command = cx.str("command");
                        def.args = cx.list("args");
                        def.env = cx.map("env");
                    }
                }
                def.url = cx.str("url");
                def.headers = cx.map("headers");
            }
            Dialect::Gemini => {
                explicit = cx.transport(&["type"]);
                def.command = cx.str("command");
                def.args = cx.list("args");
                def.env = cx.map("env");
                def.cwd = cx.str("cwd");
                def.headers = cx.map("headers");
                if let Some(u) = cx.str("httpUrl") {
                    def.url = Some(u);
                    explicit = explicit.or(Some(Transport::Http));
                } else if let Some(u) = cx.str("url") {
                    def.url = Some(u);
                    explicit = explicit.or(Some(Transport::Sse));
                }
            }
            Dialect::Codex => {
                def.command = cx.str("command");
                def.args = cx.list("args");
                def.env = cx.map("env");
                def.cwd = cx.str("cwd");
                def.url = cx.str("url");
                def.headers = cx.map("http_headers");
                for (h, v) in &def.headers {
                    // The model spells `env_http_headers` this way; a literal
                    // spelled the same cannot be told apart.
                    if crate::config::vars::header_env_ref(h, v).is_some() {
                        cx.warn("http_headers", format!("\"http_headers.{h}\" looks like a variable; Codex sends it as written, Switchboard reads the variable (as if it were in env_http_headers)"));
                    }
                }
                for (h, var) in cx.map("env_http_headers") {
                    def.headers.insert(h, format!("${{{var}}}"));
                }
                if let Some(var) = cx.str("bearer_token_env_var") {
                    def.headers.insert("Authorization".into(), format!("Bearer ${{{var}}}"));
                }
                if def.command.is_some() && def.url.is_some() {
                    // Codex itself rejects this; C3 reports it below.
                }
            }
            Dialect::Goose => {
                let t = cx.str("type");
                match t.as_deref() {
                    Some("stdio") | None => explicit = Some(Transport::Stdio),
                    Some("streamable_http") | Some("streamable-http") | Some("http") => explicit = Some(Transport::Http),
                    Some("sse") => explicit = Some(Transport::Sse),
                    Some(other) => not_runnable = Some(format!("a goose \"{other}\" extension; only goose can run it")),
                }
                def.command = cx.str("cmd").or_else(|| cx.str("command"));
                def.args = cx.list("args");
                def.env = cx.map("envs");
                def.url = cx.str("uri").or_else(|| cx.str("url"));
                def.headers = cx.map("headers");
                if not_runnable.is_some() {
                    explicit = Some(Transport::Stdio);
                }
            }
        }

        // Enable flag.
        match self.enable_flag() {
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

        // Timeout, in the client's unit.
        def.timeout = match self {
            Dialect::Switchboard | Dialect::Gemini | Dialect::Zed | Dialect::Standard | Dialect::ClaudeCode | Dialect::Vscode => cx.timeout("timeout", 1),
            Dialect::Cline | Dialect::Roo | Dialect::Goose => cx.timeout("timeout", 1000),
            Dialect::Codex => cx.timeout("startup_timeout_ms", 1).or_else(|| cx.timeout("startup_timeout_sec", 1000)),
            Dialect::Windsurf | Dialect::Continue => None,
        };

        // Extras kept on round trip.
        match self {
            Dialect::Switchboard => {
                def.auto_approve = cx.list("autoApprove");
                if let Some(a) = obj.get("auth") {
                    match serde_json::from_value::<AuthConfig>(a.clone()) {
                        Ok(a) => def.auth = Some(a),
                        Err(e) => cx.warn("auth", format!("\"auth\" is not valid ({e}); ignored")),
                    }
                }
                if let Some(r) = obj.get("restartPolicy") {
                    match serde_json::from_value::<RestartPolicy>(r.clone()) {
                        Ok(r) => def.restart_policy = Some(r),
                        Err(e) => cx.warn("restartPolicy", format!("\"restartPolicy\" is not valid ({e}); the default is used")),
                    }
                }
            }
            Dialect::Cline => def.auto_approve = cx.list("autoApprove"),
            Dialect::Roo => def.auto_approve = cx.list("alwaysAllow"),
            _ => {}
        }

        // C2: explicit type wins; command ⇒ stdio; url ⇒ http; neither ⇒ stdio.
        def.transport = explicit.unwrap_or(if def.command.is_some() {
            Transport::Stdio
        } else if def.url.is_some() {
            Transport::Http
        } else {
            Transport::Stdio
        });

        if not_runnable.is_none() {
            for issue in crate::config::validate::validate_def(&def) {
                cx.issues.push(issue);
            }
        }
        Parsed { def, issues: cx.issues, not_runnable }
    }

    /// The keys this dialect owns in an entry; everything else is kept as is.
    pub fn owned_keys(self) -> &'static [&'static str] {
        match self {
            Dialect::Switchboard => &["type", "transport", "command", "args", "env", "cwd", "url", "headers", "enabled", "timeout", "auth", "restartPolicy", "autoApprove"],
            Dialect::Standard | Dialect::ClaudeCode | Dialect::Vscode => &["type", "transport", "command", "args", "env", "cwd", "url", "headers"],
            Dialect::Continue => &["name", "type", "command", "args", "env", "cwd", "url", "headers"],
            Dialect::Windsurf => &["type", "command", "args", "env", "serverUrl", "url", "headers"],
            Dialect::Zed => &["command", "args", "env", "url", "headers", "timeout"],
            Dialect::Cline => &["type", "transportType", "command", "args", "env", "cwd", "url", "headers", "timeout", "autoApprove"],
            Dialect::Roo => &["type", "command", "args", "env", "cwd", "url", "headers", "timeout", "alwaysAllow"],
            Dialect::Gemini => &["type", "command", "args", "env", "cwd", "url", "httpUrl", "headers", "timeout"],
            Dialect::Codex => &["command", "args", "env", "cwd", "url", "http_headers", "env_http_headers", "bearer_token_env_var", "startup_timeout_sec", "startup_timeout_ms"],
            Dialect::Goose => &["name", "type", "cmd", "args", "envs", "uri", "headers", "timeout"],
        }
    }

    /// `def` in this client's own field names (without the enable flag, which
    /// `set_enabled` handles). Errors when the client cannot express it.
    pub fn to_entry(self, def: &ServerDef) -> Result<Map<String, Value>, String> {
        let mut m = Map::new();
        let s = |v: &str| Value::String(v.to_string());
        let list = |v: &[String]| Value::Array(v.iter().map(|x| s(x)).collect());
        let obj = |v: &IndexMap<String, String>| Value::Object(v.iter().map(|(k, x)| (k.clone(), s(x))).collect());
        let remote = def.transport != Transport::Stdio;
        let put_stdio = |m: &mut Map<String, Value>, cmd_key: &str, env_key: &str| {
            if let Some(c) = &def.command {
                m.insert(cmd_key.into(), s(c));
            }
            if !def.args.is_empty() {
                m.insert("args".into(), list(&def.args));
            }
            if !def.env.is_empty() {
                m.insert(env_key.into(), obj(&def.env));
            }
        };
        let secs = |ms: u64| if ms % 1000 == 0 { Value::from(ms / 1000) } else { Value::from(ms as f64 / 1000.0) };
        match self {
            Dialect::Switchboard | Dialect::Standard | Dialect::ClaudeCode | Dialect::Vscode | Dialect::Roo | Dialect::Cline | Dialect::Continue => {
                if self == Dialect::Continue {
                    m.insert("name".into(), s(&def.name));
                }
                let explicit_type = match self {
                    // Roo requires a type for url servers; Cline reads a bare url as SSE.
                    Dialect::Roo | Dialect::Cline => remote,
                    Dialect::Vscode | Dialect::ClaudeCode | Dialect::Continue => true,
                    _ => def.transport == Transport::Sse,
                };
                if explicit_type {
                    let t = match (self, def.transport) {
                        (Dialect::Cline, Transport::Http) => "streamableHttp",
                        (Dialect::Roo | Dialect::Continue, Transport::Http) => "streamable-http",
                        (_, t) => t.as_str(),
                    };
                    m.insert("type".into(), s(t));
                }
                if remote {
                    m.insert("url".into(), s(def.url.as_deref().unwrap_or_default()));
                    if !def.headers.is_empty() {
                        m.insert("headers".into(), obj(&def.headers));
                    }
                } else {
                    put_stdio(&mut m, "command", "env");
                    if let Some(c) = &def.cwd {
                        m.insert("cwd".into(), s(c));
                    }
                }
                if let Some(t) = def.timeout {
                    match self {
                        Dialect::Switchboard | Dialect::Standard | Dialect::ClaudeCode | Dialect::Vscode => {
                            if self == Dialect::Switchboard {
                                m.insert("timeout".into(), Value::from(t));
                            }
                        }
                        Dialect::Roo | Dialect::Cline => {
                            m.insert("timeout".into(), secs(t));
                        }
                        _ => {}
                    }
                }
                if self == Dialect::Switchboard {
                    if let Some(a) = &def.auth {
                        m.insert("auth".into(), serde_json::to_value(a).unwrap_or_default());
                    }
                    if let Some(r) = &def.restart_policy {
                        m.insert("restartPolicy".into(), serde_json::to_value(r).unwrap_or_default());
                    }
                }
                if !def.auto_approve.is_empty() {
                    match self {
                        Dialect::Switchboard | Dialect::Cline => {
                            m.insert("autoApprove".into(), list(&def.auto_approve));
                        }
                        Dialect::Roo => {
                            m.insert("alwaysAllow".into(), list(&def.auto_approve));
                        }
                        _ => {}
                    }
                }
            }
            Dialect::Windsurf => {
                if remote {
                    m.insert("serverUrl".into(), s(def.url.as_deref().unwrap_or_default()));
                    if !def.headers.is_empty() {
                        m.insert("headers".into(), obj(&def.headers));
                    }
                } else {
                    put_stdio(&mut m, "command", "env");
                }
            }
            Dialect::Zed => {
                if def.transport == Transport::Sse {
                    return Err("Zed has no SSE transport; use http".into());
                }
                if remote {
                    m.insert("url".into(), s(def.url.as_deref().unwrap_or_default()));
                    if !def.headers.is_empty() {
                        m.insert("headers".into(), obj(&def.headers));
                    }
                } else {
                    put_stdio(&mut m, "command", "env");
                }
                if let Some(t) = def.timeout {
                    // Zed's per-server timeout is in milliseconds.
                    m.insert("timeout".into(), Value::from(t));
                }
            }
            Dialect::Gemini => {
                match def.transport {
                    Transport::Http => {
                        m.insert("httpUrl".into(), s(def.url.as_deref().unwrap_or_default()));
                    }
                    Transport::Sse => {
                        m.insert("url".into(), s(def.url.as_deref().unwrap_or_default()));
                    }
                    Transport::Stdio => {
                        put_stdio(&mut m, "command", "env");
                        if let Some(c) = &def.cwd {
                            m.insert("cwd".into(), s(c));
                        }
                    }
                }
                if remote && !def.headers.is_empty() {
                    m.insert("headers".into(), obj(&def.headers));
                }
                if let Some(t) = def.timeout {
                    m.insert("timeout".into(), Value::from(t));
                }
            }
            Dialect::Codex => {
                if def.transport == Transport::Sse {
                    return Err("Codex has no SSE transport; use http".into());
                }
                if remote {
                    m.insert("url".into(), s(def.url.as_deref().unwrap_or_default()));
                    let mut plain = Map::new();
                    let mut from_env = Map::new();
                    for (k, v) in &def.headers {
                        if let Some(var) = k.eq_ignore_ascii_case("authorization").then(|| env_ref(v.strip_prefix("Bearer ")?)).flatten() {
                            m.insert("bearer_token_env_var".into(), s(var));
                        } else if let Some(var) = env_ref(v) {
                            from_env.insert(k.clone(), s(var));
                        } else {
                            plain.insert(k.clone(), s(v));
                        }
                    }
                    if !plain.is_empty() {
                        m.insert("http_headers".into(), Value::Object(plain));
                    }
                    if !from_env.is_empty() {
                        m.insert("env_http_headers".into(), Value::Object(from_env));
                    }
                } else {
                    put_stdio(&mut m, "command", "env");
                    if let Some(c) = &def.cwd {
                        m.insert("cwd".into(), s(c));
                    }
                }
                if let Some(t) = def.timeout {
                    if t % 1000 == 0 {
                        m.insert("startup_timeout_sec".into(), Value::from(t / 1000));
                    } else {
                        m.insert("startup_timeout_ms".into(), Value::from(t));
                    }
                }
            }
            Dialect::Goose => {
                m.insert("name".into(), s(&def.name));
                let t = match def.transport {
                    Transport::Stdio => "stdio",
                    Transport::Http => "streamable_http",
                    Transport::Sse => "sse",
                };
                m.insert("type".into(), s(t));
                if remote {
                    m.insert("uri".into(), s(def.url.as_deref().unwrap_or_default()));
                    if !def.headers.is_empty() {
                        m.insert("headers".into(), obj(&def.headers));
                    }
                } else {
                    put_stdio(&mut m, "cmd", "envs");
                }
                if let Some(t) = def.timeout {
                    m.insert("timeout".into(), Value::from(t / 1000));
                }
            }
        }
        // Args on a remote server mean nothing to us, but they are the user's:
        // keep them rather than silently dropping them on the next write.
        if remote && !def.args.is_empty() && !m.contains_key("args") {
            m.insert("args".into(), list(&def.args));
        }
        Ok(m)
    }

    /// The new entry for `def`, keeping every key of `existing` this dialect
    /// does not own, in its original position.
    pub fn merge_entry(self, existing: Option<&Value>, def: &ServerDef) -> Result<Value, String> {
        let mut fresh = self.to_entry(def)?;
        let owned = self.owned_keys();
        let mut out = Map::new();
        if let Some(Value::Object(old)) = existing {
            for (k, v) in old {
                if owned.contains(&k.as_str()) {
                    if let Some(nv) = fresh.remove(k) {
                        out.insert(k.clone(), nv);
                    }
                } else {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        for (k, v) in fresh {
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// `${VAR}` or `${env:VAR}` → `VAR`.
fn env_ref(v: &str) -> Option<&str> {
    let inner = v.strip_prefix("${")?.strip_suffix('}')?;
    let inner = inner.strip_prefix("env:").unwrap_or(inner);
    (!inner.is_empty() && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(inner)
}
