//! Install links and pasted snippets: what "Add to VS Code", "Add to
//! Cursor", "Add to LM Studio" and "Add to Switchboard" buttons carry, and a
//! server entry pasted as-is, read into server definitions for the install
//! form. [`read`] is the one entry point. Nothing here runs, fetches or
//! writes anything; a link only ever fills a form.
//!
//! Recognised (each with the documentation its format comes from):
//!
//! | Link | Source |
//! |---|---|
//! | `vscode:mcp/install?{URL-encoded JSON}`, `vscode-insiders:…` | code.visualstudio.com/docs/copilot/guides/mcp-developer-guide, "MCP URL handler": the `--add-mcp` object (`name`, `command`/`args`/`env` or `type`/`url`/`headers`, `inputs`) |
//! | `https://vscode.dev/redirect/mcp/install?name=…&config={URL-encoded JSON}[&inputs=[…]][&quality=insiders]`, `insiders.vscode.dev` | the "Install in VS Code" badges of server READMEs (e.g. github/github-mcp-server) |
//! | `https://vscode.dev/redirect?url={URL-encoded vscode: link}` | the same README badges' older form |
//! | `cursor://anysphere.cursor-deeplink/mcp/install?name=…&config={base64 JSON entry}`, `https://cursor.com/[en/]install-mcp?…` | cursor.com/docs/mcp/install-links |
//! | `lmstudio://add_mcp?name=…&config={base64 JSON entry}`, `https://lmstudio.ai/install-mcp?…` | lmstudio.ai/docs/app/mcp/deeplink |
//! | `switchboard://install?…`, `switchboard://import?url=…` | below |
//! | a JSON(C) snippet: one entry, `{"NAME": {entry}}`, `{"mcpServers": …}`, `{"servers": …, "inputs": …}`, `{"mcp": {"servers": …}}`, `{"context_servers": …}`; Codex's TOML `[mcp_servers.NAME]` | each client's file format (`sources`) |
//!
//! # Switchboard's own links
//!
//! ```text
//! switchboard://install?name=NAME&config=BASE64URL(ENTRY)[&inputs=BASE64URL(INPUTS)]
//! switchboard://install?registry=REGISTRY_NAME[&version=VERSION]
//! switchboard://import?url=URL_ENCODED_LINK
//! ```
//!
//! - `ENTRY` is one server entry as JSON in Switchboard's own spelling
//!   (the `mcpServers` entries of `servers.json`: `command`, `args`, `env`,
//!   `cwd`, or `type` `http`/`sse` with `url` and `headers`; `timeout` in
//!   milliseconds), e.g. `{"command":"npx","args":["-y","@scope/server"]}`.
//!   Base64 in the URL-safe alphabet without padding is preferred; the
//!   standard alphabet and padding are read too.
//! - Values the user must give are written `${input:ID}`; `INPUTS` (optional)
//!   describes them as VS Code does: `[{"id":"ID","description":"…","password":true}]`.
//! - `registry=` names a server of the MCP Registry (`io.github.user/weather`);
//!   the app opens its catalog page (pinned to `version` if given).
//! - `import?url=` carries another client's install link (VS Code, Cursor,
//!   LM Studio), so a page can offer one button for all of them.
//!
//! Links are limited to [`MAX_LINK_BYTES`]; a longer text is refused before
//! anything is decoded.

mod checks;
mod decode;
mod entry;

use serde::Serialize;

pub use checks::{shell_command, shell_syntax, temp_path};
pub use entry::valid_name;

use crate::config::ServerDef;
use crate::sources::Dialect;
use checks::Declared;
use decode::Param;

/// The longest link or snippet read (64 KiB).
pub const MAX_LINK_BYTES: usize = 64 * 1024;

/// Which kind of link (or paste) a definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum LinkKind {
    Vscode,
    VscodeInsiders,
    Cursor,
    LmStudio,
    Switchboard,
    /// A server entry or client file pasted as text.
    Snippet,
}

impl LinkKind {
    pub fn label(self) -> &'static str {
        match self {
            LinkKind::Vscode => "VS Code install link",
            LinkKind::VscodeInsiders => "VS Code Insiders install link",
            LinkKind::Cursor => "Cursor install link",
            LinkKind::LmStudio => "LM Studio install link",
            LinkKind::Switchboard => "Switchboard link",
            LinkKind::Snippet => "pasted server entry",
        }
    }
}

impl std::fmt::Display for LinkKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// How a pasted snippet was laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum SnippetShape {
    /// One entry, without its name (unless it carries `name`, as VS Code's `--add-mcp` does).
    SingleEntry,
    /// `{"NAME": {entry}, …}`.
    NamedEntries,
    /// `{"mcpServers": …}` (Claude, Cursor, Windsurf, Gemini, Cline, Roo, LM Studio, Continue).
    McpServers,
    /// `{"servers": …}` or settings.json's `{"mcp": {"servers": …}}` (VS Code).
    VscodeServers,
    /// `{"context_servers": …}` (Zed).
    ZedContextServers,
    /// `[mcp_servers.NAME]` (Codex).
    CodexMcpServers,
    /// `{"extensions": …}` (goose).
    GooseExtensions,
}

/// Where a definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "LinkOrigin"))]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    pub kind: LinkKind,
    /// Reached through a web page's address (`https://cursor.com/…`, `vscode.dev/redirect…`).
    pub web: bool,
    /// Opened through `switchboard://import?url=…`.
    pub imported: bool,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<SnippetShape>,
}

/// Whether a value the user gives was described by the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "LinkInputKind"))]
#[serde(rename_all = "camelCase")]
pub enum InputKind {
    /// `${input:id}` with the link's description of it.
    Declared,
    /// `${input:id}` the link does not describe.
    Undeclared,
    /// Text such as `<YOUR_TOKEN>` a README says to replace.
    Placeholder,
}

/// A value the user must give before installing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "LinkInput"))]
#[serde(rename_all = "camelCase")]
pub struct Input {
    /// The input's id (`apiKey`), or `FIELD:TOKEN` for a placeholder.
    pub id: String,
    /// The exact text in the definition the value replaces (`${input:apiKey}`, `<YOUR_TOKEN>`).
    pub token: String,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A secret: a password field, kept in the keychain.
    pub password: bool,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// A `pickString` input's choices.
    pub options: Vec<String>,
    pub kind: InputKind,
}

/// A credential the link writes as literal text: `field` is `env`,
/// `headers`, `url` or `args`; `key` the variable, header, URL part or
/// argument index. The caller offers to keep it in the keychain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct InlineSecret {
    pub field: String,
    pub key: String,
}

/// What a warning is about, for the UI to group and the CLI to word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "LinkWarningKind"))]
#[serde(rename_all = "camelCase")]
pub enum WarningKind {
    /// The program or an argument is in a temporary folder.
    TempPath,
    /// `;`, `|`, `&&`, backticks, `$(` in the command or an argument.
    ShellSyntax,
    /// A shell given a command line (`bash -c`, `cmd /c`, `powershell -Command`).
    ShellCommand,
    /// A credential written inline.
    InlineSecret,
    /// Parameters or keys that are not used.
    Ignored,
    /// The link's name is not a valid server name.
    Renamed,
    /// An input that is undescribed or cannot be asked for as described.
    Input,
    /// What the client's dialect says about the entry.
    Entry,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "LinkWarning"))]
#[serde(rename_all = "camelCase")]
pub struct LinkWarning {
    /// The server it is about, as the link names it.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// `command`, `args[2]`, `env.API_KEY`, `headers.Authorization`, `url`, `name`, `inputs`.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub kind: WarningKind,
    pub message: String,
}

/// One server a link or snippet describes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LinkServer {
    /// The name as the link gives it (it may hold spaces); `None`: the
    /// caller asks for one.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The definition, raw (`${input:…}` and placeholders as written).
    /// `def.name` is `name` made valid ([`valid_name`]), empty when `name`
    /// is `None`.
    pub def: ServerDef,
    pub inputs: Vec<Input>,
    pub inline_secrets: Vec<InlineSecret>,
}

impl LinkServer {
    /// The definition with each input's token replaced by `value(input)`
    /// (the user's value, or a `${keychain:…}` reference for a secret).
    /// Inputs `value` has no answer for stay as written.
    pub fn fill(&self, value: impl Fn(&Input) -> Option<String>) -> ServerDef {
        let mut def = self.def.clone();
        for input in &self.inputs {
            let Some(v) = value(input) else { continue };
            let put = |s: &mut String| {
                if s.contains(&input.token) {
                    *s = s.replace(&input.token, &v);
                }
            };
            def.command.iter_mut().for_each(put);
            def.args.iter_mut().for_each(put);
            def.cwd.iter_mut().for_each(put);
            def.url.iter_mut().for_each(put);
            def.env.values_mut().for_each(put);
            def.headers.values_mut().for_each(put);
        }
        def
    }
}

/// A server of the MCP Registry a Switchboard link names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RegistryRef {
    pub name: String,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// What a link or snippet asks to install: servers to show in the form, or
/// a registry server to look up. Every warning is also in `warnings`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LinkInstall {
    pub origin: Origin,
    /// Empty when `registry` is set.
    pub servers: Vec<LinkServer>,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry: Option<RegistryRef>,
    pub warnings: Vec<LinkWarning>,
}

impl LinkInstall {
    /// The server of a link that describes exactly one.
    pub fn single(&self) -> Option<&LinkServer> {
        match self.servers.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinkError {
    #[error("the text is empty")]
    Empty,
    #[error("the text is {size} bytes; links and snippets over {limit} bytes are refused")]
    TooLarge { size: usize, limit: usize },
    #[error("the text is not UTF-8")]
    NotUtf8Text,
    #[error("not an install link or server entry: {reason}")]
    Unknown { reason: String },
    #[error("{kind}: the link is malformed: {reason}")]
    Malformed { kind: LinkKind, reason: String },
    #[error("{kind}: \"{param}\" is missing ({hint})")]
    Missing {
        kind: LinkKind,
        param: &'static str,
        hint: &'static str,
    },
    #[error("{kind}: {what} is not valid base64: {reason}")]
    BadBase64 {
        kind: LinkKind,
        what: String,
        reason: String,
    },
    #[error("{kind}: {what} is not UTF-8 after decoding")]
    NotUtf8 { kind: LinkKind, what: String },
    #[error("{kind}: {what} is not valid JSON: {reason}")]
    BadJson {
        kind: LinkKind,
        what: String,
        reason: String,
    },
    #[error("{kind}{}: {message}", server.as_ref().map(|s| format!(", server \"{s}\"")).unwrap_or_default())]
    Invalid {
        kind: LinkKind,
        server: Option<String>,
        message: String,
    },
}

pub type Result<T> = std::result::Result<T, LinkError>;

/// Read an install link or a pasted server entry. See the module's
/// documentation for what is recognised.
pub fn read(text: &str) -> Result<LinkInstall> {
    if text.len() > MAX_LINK_BYTES {
        return Err(LinkError::TooLarge {
            size: text.len(),
            limit: MAX_LINK_BYTES,
        });
    }
    read_at(text, 0)
}

/// [`read`] of bytes (a drop, a file): refused over the limit before the
/// UTF-8 check.
pub fn read_bytes(bytes: &[u8]) -> Result<LinkInstall> {
    if bytes.len() > MAX_LINK_BYTES {
        return Err(LinkError::TooLarge {
            size: bytes.len(),
            limit: MAX_LINK_BYTES,
        });
    }
    read(std::str::from_utf8(bytes).map_err(|_| LinkError::NotUtf8Text)?)
}

fn read_at(text: &str, depth: u8) -> Result<LinkInstall> {
    let t = unwrap_paste(text);
    if t.is_empty() {
        return Err(LinkError::Empty);
    }
    if t.starts_with('{') || t.starts_with('[') || (t.contains('\n') && !t.contains("://")) {
        let (shape, servers, warnings) = entry::snippet(t)?;
        return Ok(LinkInstall {
            origin: Origin {
                kind: LinkKind::Snippet,
                web: false,
                imported: false,
                shape: Some(shape),
            },
            servers,
            registry: None,
            warnings,
        });
    }
    let Some((scheme, rest)) = t.split_once(':').filter(|(s, _)| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    }) else {
        return Err(LinkError::Unknown {
            reason: "expected a link (vscode:, cursor://, lmstudio://, switchboard://, https://) or a JSON server entry".into(),
        });
    };
    match scheme.to_ascii_lowercase().as_str() {
        "vscode" => vscode(LinkKind::Vscode, rest, false),
        "vscode-insiders" => vscode(LinkKind::VscodeInsiders, rest, false),
        "cursor" => {
            let (host, path, query) = split_hier(LinkKind::Cursor, rest)?;
            if !host.eq_ignore_ascii_case("anysphere.cursor-deeplink") || path != "/mcp/install" {
                return Err(unknown_target("cursor://", host, path));
            }
            name_and_base64(LinkKind::Cursor, query, false)
        }
        "lmstudio" => {
            let (host, path, query) = split_hier(LinkKind::LmStudio, rest)?;
            if !host.eq_ignore_ascii_case("add_mcp") || !matches!(path, "" | "/") {
                return Err(unknown_target("lmstudio://", host, path));
            }
            name_and_base64(LinkKind::LmStudio, query, false)
        }
        "switchboard" => switchboard(rest, depth),
        "https" | "http" => web(t, depth),
        other => Err(LinkError::Unknown {
            reason: format!("links with \"{other}:\" are not install links Switchboard knows"),
        }),
    }
}

/// Quotes or angle brackets a paste often keeps around a link.
fn unwrap_paste(text: &str) -> &str {
    let t = text.trim();
    for (open, close) in [('"', '"'), ('\'', '\''), ('<', '>'), ('`', '`')] {
        if let Some(inner) = t.strip_prefix(open).and_then(|s| s.strip_suffix(close)) {
            if !inner.starts_with('{') && inner.contains(':') {
                return inner.trim();
            }
        }
    }
    t
}

fn unknown_target(scheme: &str, host: &str, path: &str) -> LinkError {
    LinkError::Unknown {
        reason: format!("{scheme}{host}{path} is not an MCP install link"),
    }
}

/// `//host/path?query#fragment` → host, path, query (the fragment dropped).
fn split_hier(kind: LinkKind, rest: &str) -> Result<(&str, &str, &str)> {
    let Some(after) = rest.strip_prefix("//") else {
        return Err(LinkError::Malformed {
            kind,
            reason: "expected \"//\" after the scheme".into(),
        });
    };
    let after = after.split('#').next().unwrap_or(after);
    let (hier, query) = after.split_once('?').unwrap_or((after, ""));
    let (host, path) = hier.find('/').map_or((hier, ""), |i| hier.split_at(i));
    Ok((host, path, query))
}

fn params(kind: LinkKind, query: &str) -> Result<Vec<Param>> {
    decode::query(query).map_err(|reason| LinkError::Malformed { kind, reason })
}

fn text_of(kind: LinkKind, what: &str, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|_| LinkError::NotUtf8 {
        kind,
        what: what.into(),
    })
}

fn json_of(kind: LinkKind, what: &str, text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| LinkError::BadJson {
        kind,
        what: what.into(),
        reason: e.to_string(),
    })
}

fn take(params: &mut Vec<Param>, key: &str) -> Option<Vec<u8>> {
    let i = params.iter().position(|p| p.key == key)?;
    Some(params.remove(i).value)
}

fn ignored_params(params: &[Param], known_extra: &[&str]) -> Vec<LinkWarning> {
    let left: Vec<String> = params
        .iter()
        .filter(|p| !known_extra.contains(&p.key.as_str()))
        .map(|p| format!("\"{}\"", p.key))
        .collect();
    if left.is_empty() {
        return vec![];
    }
    vec![LinkWarning {
        server: None,
        field: None,
        kind: WarningKind::Ignored,
        message: format!("the link's parameters {} are not used", left.join(", ")),
    }]
}

fn origin(kind: LinkKind, web: bool) -> Origin {
    Origin {
        kind,
        web,
        imported: false,
        shape: None,
    }
}

/// A link's one server: `entry` read with `dialect` under `name`.
fn one_server(
    origin: Origin,
    dialect: Dialect,
    name: Option<&str>,
    entry: &serde_json::Value,
    declared: &[Declared],
    mut warnings: Vec<LinkWarning>,
) -> Result<LinkInstall> {
    let (server, w) = entry::server(origin.kind, dialect, name, entry, declared)?;
    warnings.extend(w);
    Ok(LinkInstall {
        origin,
        servers: vec![server],
        registry: None,
        warnings,
    })
}

/// `vscode:mcp/install?{…}`: the `--add-mcp` object, URL-encoded whole.
fn vscode(kind: LinkKind, rest: &str, web: bool) -> Result<LinkInstall> {
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    if !path
        .trim_end_matches('/')
        .eq_ignore_ascii_case("mcp/install")
    {
        return Err(LinkError::Unknown {
            reason: format!(
                "{}:{path} is not VS Code's MCP install link (mcp/install)",
                scheme_of(kind)
            ),
        });
    }
    if query.is_empty() {
        return Err(LinkError::Missing {
            kind,
            param: "config",
            hint: "the server's JSON after \"?\"",
        });
    }
    let bytes =
        decode::percent(query, false).map_err(|reason| LinkError::Malformed { kind, reason })?;
    let text = text_of(kind, "the server's JSON", bytes)?;
    let value = json_of(kind, "the server's JSON", &text)?;
    vscode_object(origin(kind, web), value, None, None)
}

fn scheme_of(kind: LinkKind) -> &'static str {
    if kind == LinkKind::VscodeInsiders {
        "vscode-insiders"
    } else {
        "vscode"
    }
}

/// VS Code's object: an entry that carries its `name` (or gets it from the
/// redirect's `name=`) and its `inputs` (or the redirect's `inputs=`).
fn vscode_object(
    origin: Origin,
    value: serde_json::Value,
    name: Option<String>,
    inputs: Option<serde_json::Value>,
) -> Result<LinkInstall> {
    let kind = origin.kind;
    let Some(obj) = value.as_object() else {
        return Err(LinkError::Invalid {
            kind,
            server: name,
            message: "the server's JSON should be an object".into(),
        });
    };
    let name = name.or_else(|| obj.get("name").and_then(|n| n.as_str()).map(String::from));
    let Some(name) = name.filter(|n| !n.trim().is_empty()) else {
        return Err(LinkError::Missing {
            kind,
            param: "name",
            hint: "VS Code's links name their server",
        });
    };
    let mut warnings = vec![];
    let declared = match inputs.as_ref().or(obj.get("inputs")) {
        Some(v) => {
            let mut w = vec![];
            let d = checks::declared_inputs(v, &mut w);
            warnings.extend(
                w.into_iter()
                    .map(|m| entry::input_warning(Some(name.clone()), m)),
            );
            d
        }
        None => vec![],
    };
    one_server(
        origin,
        Dialect::Vscode,
        Some(&name),
        &value,
        &declared,
        warnings,
    )
}

/// Cursor's and LM Studio's `name=…&config=BASE64(entry)`.
fn name_and_base64(kind: LinkKind, query: &str, web: bool) -> Result<LinkInstall> {
    let mut ps = params(kind, query)?;
    let name = take(&mut ps, "name");
    let config = take(&mut ps, "config");
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return Err(LinkError::Missing {
            kind,
            param: "name",
            hint: "the server's name",
        });
    };
    let name = text_of(kind, "\"name\"", name)?;
    let Some(config) = config.filter(|c| !c.is_empty()) else {
        return Err(LinkError::Missing {
            kind,
            param: "config",
            hint: "the server's entry as base64 JSON",
        });
    };
    let value = base64_json(kind, "\"config\"", &config)?;
    let value = unwrap_named(value, &name);
    let warnings = ignored_params(&ps, &["utm_source", "utm_medium", "utm_campaign"]);
    let dialect = value.as_object().map_or(Dialect::Standard, entry::sniff);
    one_server(
        origin(kind, web),
        dialect,
        Some(&name),
        &value,
        &[],
        warnings,
    )
}

fn base64_json(kind: LinkKind, what: &str, raw: &[u8]) -> Result<serde_json::Value> {
    let bytes = decode::base64(raw).map_err(|reason| LinkError::BadBase64 {
        kind,
        what: what.into(),
        reason,
    })?;
    let text = text_of(kind, &format!("{what} (decoded)"), bytes)?;
    json_of(kind, &format!("{what} (decoded)"), &text)
}

/// Some link generators encode `{"NAME": {entry}}` instead of the entry.
fn unwrap_named(value: serde_json::Value, name: &str) -> serde_json::Value {
    match value {
        serde_json::Value::Object(ref m) if m.len() == 1 && !entry::is_entry(m) => {
            let (k, v) = m.iter().next().expect("one member");
            if k == name && v.as_object().is_some_and(entry::is_entry) {
                return v.clone();
            }
            value
        }
        other => other,
    }
}

/// `switchboard://install?…` and `switchboard://import?url=…`.
fn switchboard(rest: &str, depth: u8) -> Result<LinkInstall> {
    let kind = LinkKind::Switchboard;
    let (host, path, query) = split_hier(kind, rest)?;
    if !matches!(path, "" | "/") {
        return Err(unknown_target("switchboard://", host, path));
    }
    let mut ps = params(kind, query)?;
    match host.to_ascii_lowercase().as_str() {
        "import" => {
            let Some(url) = take(&mut ps, "url").filter(|u| !u.is_empty()) else {
                return Err(LinkError::Missing {
                    kind,
                    param: "url",
                    hint: "the other client's install link, URL-encoded",
                });
            };
            let url = text_of(kind, "\"url\"", url)?;
            let inner_scheme = url
                .trim()
                .split(':')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            if depth > 0 || inner_scheme == "switchboard" {
                return Err(LinkError::Invalid {
                    kind,
                    server: None,
                    message: "an import carries another client's link, not a Switchboard link"
                        .into(),
                });
            }
            let mut got = read_at(&url, depth + 1)?;
            got.origin.imported = true;
            got.warnings.extend(ignored_params(&ps, &[]));
            Ok(got)
        }
        "install" => {
            if let Some(reg) = take(&mut ps, "registry") {
                let name = text_of(kind, "\"registry\"", reg)?;
                let ok = !name.is_empty()
                    && name.len() <= 200
                    && name.contains('/')
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
                if !ok {
                    return Err(LinkError::Invalid {
                        kind,
                        server: None,
                        message: format!("\"{name}\" is not a registry server name (like io.github.user/weather)"),
                    });
                }
                let version = take(&mut ps, "version")
                    .map(|v| text_of(kind, "\"version\"", v))
                    .transpose()?
                    .filter(|v| !v.is_empty());
                return Ok(LinkInstall {
                    origin: origin(kind, false),
                    servers: vec![],
                    registry: Some(RegistryRef { name, version }),
                    warnings: ignored_params(&ps, &[]),
                });
            }
            let name = take(&mut ps, "name");
            let config = take(&mut ps, "config");
            let inputs = take(&mut ps, "inputs");
            let Some(name) = name.filter(|n| !n.is_empty()) else {
                return Err(LinkError::Missing {
                    kind,
                    param: "name",
                    hint: "the server's name, or registry=NAME",
                });
            };
            let name = text_of(kind, "\"name\"", name)?;
            let Some(config) = config.filter(|c| !c.is_empty()) else {
                return Err(LinkError::Missing {
                    kind,
                    param: "config",
                    hint: "the server's entry as base64url JSON",
                });
            };
            let value = base64_json(kind, "\"config\"", &config)?;
            let mut warnings = vec![];
            let declared = match inputs {
                Some(raw) => {
                    let v = base64_json(kind, "\"inputs\"", &raw)?;
                    let mut w = vec![];
                    let d = checks::declared_inputs(&v, &mut w);
                    warnings.extend(
                        w.into_iter()
                            .map(|m| entry::input_warning(Some(name.clone()), m)),
                    );
                    d
                }
                None => vec![],
            };
            warnings.extend(ignored_params(&ps, &[]));
            one_server(
                origin(kind, false),
                Dialect::Switchboard,
                Some(&name),
                &value,
                &declared,
                warnings,
            )
        }
        other => Err(LinkError::Unknown {
            reason: format!("switchboard://{other} is not a Switchboard link (install or import)"),
        }),
    }
}

/// The web addresses install buttons point to.
fn web(t: &str, depth: u8) -> Result<LinkInstall> {
    let u = url::Url::parse(t).map_err(|e| LinkError::Unknown {
        reason: format!("the web address is malformed ({e})"),
    })?;
    let host = u.host_str().unwrap_or("").to_ascii_lowercase();
    let path = u.path().trim_end_matches('/');
    let query = u.query().unwrap_or("");
    match host.as_str() {
        "vscode.dev" | "insiders.vscode.dev" => {
            let kind = if host.starts_with("insiders") {
                LinkKind::VscodeInsiders
            } else {
                LinkKind::Vscode
            };
            let mut ps = params(kind, query)?;
            if path == "/redirect" {
                let Some(inner) = take(&mut ps, "url") else {
                    return Err(LinkError::Missing {
                        kind,
                        param: "url",
                        hint: "the vscode: link the page opens",
                    });
                };
                let inner = text_of(kind, "\"url\"", inner)?;
                let lower = inner.to_ascii_lowercase();
                if depth > 1 || !(lower.starts_with("vscode:") || lower.starts_with("vscode-insiders:")) {
                    return Err(LinkError::Unknown {
                        reason: format!("{host}/redirect opens \"{}\", not a VS Code MCP install link", shorten(&inner)),
                    });
                }
                let mut got = read_at(&inner, depth + 1)?;
                got.origin.web = true;
                return Ok(got);
            }
            if path != "/redirect/mcp/install" {
                return Err(unknown_target("https://", &host, path));
            }
            let insiders = take(&mut ps, "quality").is_some_and(|q| q == b"insiders");
            let kind = if insiders { LinkKind::VscodeInsiders } else { kind };
            let name = take(&mut ps, "name").map(|n| text_of(kind, "\"name\"", n)).transpose()?;
            let Some(config) = take(&mut ps, "config").filter(|c| !c.is_empty()) else {
                return Err(LinkError::Missing {
                    kind,
                    param: "config",
                    hint: "the server's JSON, URL-encoded",
                });
            };
            let config = text_of(kind, "\"config\"", config)?;
            let value = json_of(kind, "\"config\"", &config)?;
            let inputs = match take(&mut ps, "inputs") {
                Some(raw) => Some(json_of(kind, "\"inputs\"", &text_of(kind, "\"inputs\"", raw)?)?),
                None => None,
            };
            let mut got = vscode_object(origin(kind, true), value, name, inputs)?;
            got.warnings.extend(ignored_params(&ps, &[]));
            Ok(got)
        }
        "cursor.com" | "www.cursor.com" => {
            // `/install-mcp`, or under a language (`/en/install-mcp`).
            let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
            let ok = matches!(segs.as_slice(), ["install-mcp"] | [_, "install-mcp"]);
            if !ok {
                return Err(unknown_target("https://", &host, path));
            }
            name_and_base64(LinkKind::Cursor, query, true)
        }
        "lmstudio.ai" | "www.lmstudio.ai" => {
            if path != "/install-mcp" {
                return Err(unknown_target("https://", &host, path));
            }
            name_and_base64(LinkKind::LmStudio, query, true)
        }
        _ => Err(LinkError::Unknown {
            reason: format!("{host} is not a site whose install links Switchboard knows (vscode.dev, cursor.com, lmstudio.ai)"),
        }),
    }
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 60 {
        s.chars().take(60).collect::<String>() + "…"
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_links_lose_their_quotes() {
        assert_eq!(
            unwrap_paste("  \"vscode:mcp/install?x\" "),
            "vscode:mcp/install?x"
        );
        assert_eq!(
            unwrap_paste("<https://cursor.com/x>"),
            "https://cursor.com/x"
        );
        assert_eq!(unwrap_paste("\"{}\""), "\"{}\"");
    }

    #[test]
    fn names_made_valid() {
        assert_eq!(valid_name("AWS Pricing  MCP"), "AWS-Pricing-MCP");
        assert_eq!(valid_name("@scope/pkg"), "scope-pkg");
        assert_eq!(valid_name("  "), "server");
        assert_eq!(valid_name(&"x".repeat(300)).len(), 100);
    }

    #[test]
    fn a_named_wrapper_is_unwrapped_only_for_its_own_name() {
        let v = serde_json::json!({"a": {"command": "x"}});
        assert_eq!(
            unwrap_named(v.clone(), "a"),
            serde_json::json!({"command": "x"})
        );
        assert_eq!(unwrap_named(v.clone(), "b"), v);
    }

    #[test]
    fn an_import_may_carry_a_badge_address() {
        let inner = "https%3A%2F%2Fvscode.dev%2Fredirect%3Furl%3Dvscode%253Amcp%252Finstall%253F%257B%2522name%2522%253A%2522a%2522%252C%2522command%2522%253A%2522b%2522%257D";
        let got = read(&format!("switchboard://import?url={inner}")).unwrap();
        assert!(got.origin.imported && got.origin.web);
        assert_eq!(got.single().unwrap().def, ServerDef::stdio("a", "b", &[]));
    }
}
