//! Discovery: read every source in priority order, dedupe by
//! name (the first *valid* definition wins), keep the rest as shadowed, and
//! report every problem with file, line and field while everything else
//! still loads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::config::vars::{expand, Expansion, VarContext};
use crate::config::{ServerDef, Transport};
use crate::host::Host;
use crate::settings::Settings;
use crate::sources::read::{escape_pointer, parse_parts, LocatedDoc};
use crate::sources::{apply_priority, default_order, Client, Container, Level, SourceSpec};
use crate::trust::{self, ClaudeApprovals};
use crate::writer::atomic::{content_hash, ContentHash};
use crate::writer::doc::{Format, PathSeg};

/// Files larger than this are not read (a config file this big is a mistake).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// Project folders trusted for this run only (`--project`).
    pub extra_projects: Vec<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    pub id: String,
    pub client: Client,
    pub client_name: &'static str,
    pub level: Level,
    pub path: PathBuf,
    pub format: Format,
    pub exists: bool,
    pub read_only: bool,
    pub priority: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub project: Option<PathBuf>,
    pub server_count: usize,
    pub warnings: Vec<String>,
    /// Hex SHA-256 of the bytes read, for conflict checks on write.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub content_hash: Option<String>,
    /// When its client only reads the file at start: what to do after a
    /// change for the client to use it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub restart_hint: Option<&'static str>,
    /// The `ServerDef` fields (camelCase) this source's client can store,
    /// then the `oauth.*` members it has a place for; a form offers only these.
    pub fields: Vec<&'static str>,
    #[serde(skip)]
    pub hash: Option<ContentHash>,
    #[serde(skip)]
    pub spec: Option<SourceSpec>,
    /// Set while the file exists but cannot be read or parsed; its servers
    /// then come from its last good version, if Switchboard saw one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub parse_error: Option<ParseError>,
    /// When the version of the file whose servers count was saved
    /// (milliseconds since the Unix epoch); `None`: no version has parsed
    /// since Switchboard started, or the file does not exist.
    #[serde(skip)]
    pub good_version_at: Option<u64>,
}

/// Why a source file does not parse right now, and what is used instead.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ParseError {
    /// The whole message, starting with the file (and line).
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub column: Option<usize>,
    /// When the last good version, whose servers keep running, was saved
    /// (milliseconds since the Unix epoch); absent: there is none, so no
    /// server of this file runs until it parses.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub last_good_at: Option<u64>,
}

/// One definition of a name in one source.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    #[serde(flatten)]
    pub def: ServerDef,
    pub source: String,
    #[cfg_attr(feature = "ts", ts(as = "String"))]
    pub path: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub line: Option<usize>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    /// Set for entries only their client can run (a Zed extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub not_runnable: Option<String>,
    /// Parked by Switchboard (disabled in a client without an off switch).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(as = "Option<bool>", optional))]
    pub parked: bool,
    /// Its file does not parse right now: this definition is from the last
    /// good version, saved at this time (milliseconds since the Unix epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub last_good_at: Option<u64>,
    /// Valid and enabled, but not started until the user approves it (a
    /// project server Claude Code would not run, or one that changed since
    /// its folder was trusted).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub held: Option<crate::trust::Held>,
    /// What this definition's strings may use, as its source's client
    /// expands them; launching applies exactly these.
    #[serde(skip)]
    pub expansion: Expansion,
}

impl Definition {
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ShadowedDef {
    pub source: String,
    pub path: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub line: Option<usize>,
    pub transport: crate::config::Transport,
    pub enabled: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub errors: Vec<String>,
}

/// A server name with its winning definition and every shadowed one.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DiscoveredServer {
    #[serde(flatten)]
    pub winner: Definition,
    pub shadowed: Vec<ShadowedDef>,
    /// Every definition in priority order (the winner included); not printed.
    #[serde(skip)]
    pub definitions: Vec<Definition>,
}

impl DiscoveredServer {
    pub fn name(&self) -> &str {
        &self.winner.def.name
    }
}

#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Discovery {
    pub sources: Vec<SourceInfo>,
    pub servers: Vec<DiscoveredServer>,
    pub errors: Vec<String>,
}

impl Discovery {
    pub fn server(&self, name: &str) -> Option<&DiscoveredServer> {
        self.servers.iter().find(|s| s.name() == name)
    }
    pub fn source(&self, id: &str) -> Option<&SourceInfo> {
        self.sources.iter().find(|s| s.id == id)
    }

    /// The trusted project folders this discovery read, each once, sorted:
    /// what servers get as roots (`roots/list`).
    pub fn project_folders(&self) -> Vec<PathBuf> {
        self.sources
            .iter()
            .filter_map(|s| s.project.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }
}

/// The ordered source list for these settings (no file is read).
pub fn ordered_sources(
    host: &Host,
    settings: &Settings,
    opts: &DiscoverOptions,
) -> Vec<SourceSpec> {
    let mut projects = settings.trusted_projects();
    for p in &opts.extra_projects {
        let abs = absolute(p);
        if !projects.contains(&abs) {
            projects.push(abs);
        }
    }
    apply_priority(default_order(host, &projects), &settings.priority)
}

pub fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|d| d.join(p))
                .unwrap_or_else(|_| p.to_path_buf())
        }
    })
}

/// Run discovery. Never panics: a failure as a whole yields an empty result
/// with one error.
pub fn discover(host: &Host, settings: &Settings, opts: &DiscoverOptions) -> Discovery {
    discover_after(host, settings, opts, None)
}

/// Discovery that follows `previous`: a source file that exists but does not
/// parse (an editor's save caught halfway) keeps the servers it had in
/// `previous`, so they keep running instead of stopping and starting again.
pub fn discover_after(
    host: &Host,
    settings: &Settings,
    opts: &DiscoverOptions,
    previous: Option<&Discovery>,
) -> Discovery {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        discover_inner(host, settings, opts, previous)
    })) {
        Ok(d) => d,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown failure".into());
            Discovery {
                errors: vec![format!("Discovery failed: {msg}")],
                ..Default::default()
            }
        }
    }
}

/// A file read once per discovery, shared by the sources that live in it.
struct FileRead {
    exists: bool,
    hash: Option<ContentHash>,
    doc: Result<LocatedDoc, ParseError>,
    /// Nothing but white space: most likely a save caught halfway.
    empty: bool,
    /// Modification time, milliseconds since the Unix epoch.
    modified: Option<u64>,
}

fn unreadable(message: String) -> ParseError {
    ParseError {
        message,
        line: None,
        column: None,
        last_good_at: None,
    }
}

/// Read `path`; of a JSON(C) file only the values at `wanted` are parsed
/// (see `parse_parts`).
fn read_file(path: &Path, format: Format, wanted: &[Vec<PathSeg>]) -> FileRead {
    let modified = |m: &std::fs::Metadata| {
        m.modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64)
    };
    let meta = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return FileRead {
                exists: false,
                hash: None,
                doc: Ok(LocatedDoc::default()),
                empty: false,
                modified: None,
            }
        }
        Ok(m) if m.len() > MAX_FILE_BYTES => {
            let doc = Err(unreadable(format!(
                "{}: file is larger than 64 MiB; not read",
                path.display()
            )));
            return FileRead {
                exists: true,
                hash: None,
                doc,
                empty: false,
                modified: modified(&m),
            };
        }
        m => m.ok(),
    };
    let modified = meta.as_ref().and_then(modified);
    match std::fs::read(path) {
        Err(e) => FileRead {
            exists: path.exists(),
            hash: None,
            doc: Err(unreadable(format!("{}: cannot read: {e}", path.display()))),
            empty: false,
            modified,
        },
        Ok(bytes) => {
            let empty = bytes.iter().all(u8::is_ascii_whitespace);
            let parse = |bytes: &[u8]| match std::str::from_utf8(bytes) {
                Err(_) => Err(unreadable(format!(
                    "{}: not valid UTF-8 text",
                    path.display()
                ))),
                Ok(text) => {
                    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
                    let wanted: Vec<&[PathSeg]> = wanted.iter().map(Vec::as_slice).collect();
                    parse_parts(format, text, &wanted).map_err(|f| ParseError {
                        message: match f.line {
                            Some(l) => {
                                format!("{}:{l}: cannot parse: {}", path.display(), f.message)
                            }
                            None => format!("{}: cannot parse: {}", path.display(), f.message),
                        },
                        line: f.line,
                        column: f.column,
                        last_good_at: None,
                    })
                }
            };
            // A large file's hash is worked out beside its parse (a 5 MB
            // `~/.claude.json`: ~4 ms of SHA-256, about what the parse takes).
            let (hash, doc) = if bytes.len() >= crate::writer::atomic::ASIDE_FROM {
                std::thread::scope(|aside| {
                    let hash = aside.spawn(|| content_hash(&bytes));
                    let doc = parse(&bytes);
                    let hash = hash.join().unwrap_or_else(|_| content_hash(&bytes));
                    (hash, doc)
                })
            } else {
                (content_hash(&bytes), parse(&bytes))
            };
            let hash = Some(hash);
            FileRead {
                exists: true,
                hash,
                doc,
                empty,
                modified,
            }
        }
    }
}

/// The definitions a source had in `previous` that came from its file
/// (parked ones come from the settings), with when that version was saved.
fn last_good(previous: Option<&Discovery>, id: &str) -> (Vec<Definition>, Option<u64>) {
    let Some(p) = previous else {
        return (vec![], None);
    };
    let Some(at) = p.source(id).and_then(|s| s.good_version_at) else {
        return (vec![], None);
    };
    let mut defs: Vec<Definition> = p
        .servers
        .iter()
        .flat_map(|s| s.definitions.iter())
        .filter(|d| d.source == id && !d.parked)
        .cloned()
        .collect();
    defs.sort_by_key(|d| d.line.unwrap_or(usize::MAX));
    for d in &mut defs {
        d.last_good_at = Some(at);
    }
    (defs, Some(at))
}

/// JSON pointer of a container path.
pub fn pointer(path: &[PathSeg]) -> String {
    path.iter()
        .map(|s| match s {
            PathSeg::Key(k) => format!("/{}", escape_pointer(k)),
            PathSeg::Index(i) => format!("/{i}"),
        })
        .collect()
}

pub fn value_at<'a>(root: &'a Value, path: &[PathSeg]) -> Option<&'a Value> {
    path.iter().try_fold(root, |v, seg| match seg {
        PathSeg::Key(k) => v.get(k),
        PathSeg::Index(i) => v.get(*i),
    })
}

/// A raw entry found in a source: name, value, JSON pointer.
pub struct RawEntry<'a> {
    pub name: String,
    pub value: &'a Value,
    pub pointer: String,
}

/// The entries of one source's container, in file order.
pub fn entries<'a>(
    spec: &SourceSpec,
    doc: &'a Value,
    warnings: &mut Vec<String>,
) -> Vec<RawEntry<'a>> {
    let base = pointer(spec.container.path());
    let Some(container) = value_at(doc, spec.container.path()) else {
        return vec![];
    };
    match (&spec.container, container) {
        (Container::Map(_), Value::Object(m)) => m
            .iter()
            .map(|(k, v)| RawEntry {
                name: k.clone(),
                value: v,
                pointer: format!("{base}/{}", escape_pointer(k)),
            })
            .collect(),
        (Container::List(_), Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let name = v.get("name").and_then(Value::as_str);
                if name.is_none() {
                    warnings.push(format!(
                        "{}: entry {base}/{i} has no \"name\"; skipped",
                        spec.path.display()
                    ));
                }
                Some(RawEntry {
                    name: name?.to_string(),
                    value: v,
                    pointer: format!("{base}/{i}"),
                })
            })
            .collect(),
        (Container::Map(_), Value::Null) | (Container::List(_), Value::Null) => vec![],
        (c, other) => {
            let want = if matches!(c, Container::Map(_)) {
                "an object"
            } else {
                "a list"
            };
            warnings.push(format!(
                "{}: \"{}\" should be {want} of servers, found {}; ignored",
                spec.path.display(),
                base.trim_start_matches('/'),
                crate::sources::dialect::kind(other)
            ));
            vec![]
        }
    }
}

/// No `inputs`: VS Code asks for `${input:id}` each time it starts the
/// server (a default only pre-fills the prompt), so they are reported as
/// needing input, as they are at launch.
fn var_context(host: &Host, spec: &SourceSpec) -> VarContext {
    VarContext {
        env: host.vars.clone(),
        workspace_folder: spec
            .project
            .as_ref()
            .map(|p| p.to_string_lossy().to_string()),
        user_home: Some(host.home.to_string_lossy().to_string()),
        inputs: HashMap::new(),
        expansion: spec.expansion(),
    }
}

/// Warnings for references, in the forms `cx.expansion` knows, that do not
/// resolve here. (Codex's header variables are not checked: its own
/// fields, resolved or reported at connect time.)
/// A `${keychain:NAME}` in an env or header value of Switchboard's own file
/// is read from the keychain at launch (`auth::secrets`), and a `${file:PATH}`
/// from that file, not from the environment: neither is an unresolved reference.
pub fn unresolved_warnings(def: &ServerDef, cx: &VarContext) -> Vec<(String, String)> {
    let mut out = vec![];
    let secret_forms = cx.expansion.commands;
    let mut check = |field: String, v: &str| {
        let secret_field = field.starts_with("env.") || field.starts_with("headers.");
        for r in expand(v, cx).unresolved {
            if secret_forms && secret_field && crate::auth::secrets::has_secret_ref(&r) {
                continue;
            }
            let w = if r.starts_with("${input:") {
                format!("{field}: {r} needs input, which VS Code asks for when it starts the server; Switchboard cannot ask")
            } else {
                format!("{field}: {r} is not set; it stays literal")
            };
            out.push((field.clone(), w));
        }
    };
    if let Some(c) = &def.command {
        check("command".into(), c);
    }
    for (i, a) in def.args.iter().enumerate() {
        check(format!("args[{i}]"), a);
    }
    for (k, v) in &def.env {
        check(format!("env.{k}"), v);
    }
    if let Some(c) = &def.cwd {
        check("cwd".into(), c);
    }
    if let Some(u) = &def.url {
        check("url".into(), u);
    }
    for (k, v) in &def.headers {
        check(format!("headers.{k}"), v);
    }
    out
}

/// Gemini keeps "disabled" outside the entry: `mcp-server-enablement.json`
/// next to the user settings, and `mcp.excluded` in any settings file.
fn gemini_disabled(host: &Host, doc: &Value) -> Vec<String> {
    let mut names = vec![];
    if let Some(Value::Array(ex)) = doc.get("mcp").and_then(|m| m.get("excluded")) {
        names.extend(ex.iter().filter_map(Value::as_str).map(String::from));
    }
    let path = gemini_enablement_path(host);
    if let Ok(text) = std::fs::read_to_string(&path) {
        if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(&text) {
            for (k, v) in m {
                if v.get("enabled") == Some(&Value::Bool(false)) {
                    names.push(k);
                }
            }
        }
    }
    names
}

pub fn gemini_enablement_path(host: &Host) -> PathBuf {
    host.home_join(".gemini/mcp-server-enablement.json")
}

fn discover_inner(
    host: &Host,
    settings: &Settings,
    opts: &DiscoverOptions,
    previous: Option<&Discovery>,
) -> Discovery {
    let specs = ordered_sources(host, settings, opts);
    // What discovery reads of each file: the servers of every source in it,
    // and Gemini's `mcp.excluded` (see `gemini_disabled`).
    let mut wanted: HashMap<(PathBuf, Format), Vec<Vec<PathSeg>>> = HashMap::new();
    // Claude Code's answers for a project's `.mcp.json` are read from
    // `~/.claude.json` in the same pass as its servers: a several-MB file is
    // gone over once.
    let claude_json = (host.home_join(".claude.json"), Format::Json);
    for spec in &specs {
        let parts = wanted.entry((spec.path.clone(), spec.format)).or_default();
        parts.push(spec.container.path().to_vec());
        if spec.client == Client::Gemini {
            parts.push(vec![PathSeg::Key("mcp".into())]);
        }
        if let (Some(p), true) = (&spec.project, trust::is_mcpjson(spec)) {
            let answers = trust::claude_json_answers(p);
            wanted
                .entry(claude_json.clone())
                .or_default()
                .extend(answers);
        }
    }
    let mut files: HashMap<(PathBuf, Format), FileRead> = HashMap::new();
    let mut out = Discovery::default();
    let mut by_name: IndexMap<String, Vec<Definition>> = IndexMap::new();

    for (priority, spec) in specs.iter().enumerate() {
        let claude_answers = match (&spec.project, trust::is_mcpjson(spec)) {
            (Some(p), true) => {
                let claude = files.entry(claude_json.clone()).or_insert_with(|| {
                    read_file(&claude_json.0, claude_json.1, &wanted[&claude_json])
                });
                let folder = p.to_string_lossy();
                let doc = claude.doc.as_ref().ok();
                Some(doc.and_then(|d| d.value.get("projects")?.get(folder.as_ref()).cloned()))
            }
            _ => None,
        };
        let file = files
            .entry((spec.path.clone(), spec.format))
            .or_insert_with(|| {
                let parts = &wanted[&(spec.path.clone(), spec.format)];
                read_file(&spec.path, spec.format, parts)
            });
        let mut info = SourceInfo {
            id: spec.id.clone(),
            client: spec.client,
            client_name: spec.client.display_name(),
            level: spec.level,
            path: spec.path.clone(),
            format: spec.format,
            exists: file.exists,
            read_only: spec.read_only,
            priority,
            project: spec.project.clone(),
            server_count: 0,
            warnings: vec![],
            content_hash: file.hash.map(|h| hex::encode(h.0)),
            restart_hint: spec.client.restart_hint(),
            fields: spec
                .dialect
                .fields()
                .iter()
                .map(|f| f.as_str())
                .chain(spec.dialect.oauth_fields())
                .collect(),
            hash: file.hash,
            spec: Some(spec.clone()),
            parse_error: None,
            good_version_at: None,
        };
        if spec.client == Client::Switchboard {
            // A settings.json that does not parse is shown with Switchboard's
            // own source: that is where users look for Switchboard's files.
            info.warnings.extend(settings.problem.clone());
        }
        let cx = var_context(host, spec);
        // Claude Code's answers for a project's `.mcp.json`, and the pins of a
        // trusted folder: what is held rather than started.
        let approvals = match (&spec.project, trust::is_mcpjson(spec)) {
            (Some(p), true) if file.exists => Some(ClaudeApprovals::read_with(
                host,
                p,
                claude_answers.flatten(),
            )),
            _ => None,
        };
        let pins = spec
            .project
            .as_ref()
            .filter(|_| trust::is_pinned_source(spec))
            .and_then(|p| settings.trusted_servers.get(p));
        let hold = |def: &ServerDef| {
            approvals
                .as_ref()
                .and_then(|a| a.verdict(&def.name))
                .or_else(|| trust::check_pin(pins, spec, def))
        };
        let (mut kept, kept_at) = last_good(previous, &spec.id);
        for d in &mut kept {
            d.held = hold(&d.def);
        }
        let broken = match &file.doc {
            Err(e) => Some(e.clone()),
            // Emptied while it had servers: a save caught between truncating and writing.
            Ok(_) if file.empty && !kept.is_empty() => Some(unreadable(format!(
                "{}: the file is empty (a save still in progress?)",
                spec.path.display()
            ))),
            Ok(_) => None,
        };
        let mut seen_here = 0;
        if let Some(mut e) = broken {
            e.last_good_at = kept_at;
            info.warnings.push(match kept_at {
                Some(_) => format!("{}; its servers keep running from the last good version", e.message),
                None => format!("{}; there is no last good version (it did not parse since Switchboard started), so none of its servers run until it parses", e.message),
            });
            info.parse_error = Some(e);
            info.good_version_at = kept_at;
            seen_here = kept.len();
            for d in kept {
                by_name.entry(d.def.name.clone()).or_default().push(d);
            }
        }
        if file.exists && info.parse_error.is_none() {
            info.good_version_at = Some(file.modified.unwrap_or_else(crate::events::now_ms));
        }
        let nothing = LocatedDoc::default();
        let doc = match (&file.doc, &info.parse_error) {
            (Ok(doc), None) => doc,
            _ => &nothing,
        };
        let switched_off = match spec.client {
            Client::Gemini => gemini_disabled(host, &doc.value),
            _ => vec![],
        };
        for e in entries(spec, &doc.value, &mut info.warnings) {
            seen_here += 1;
            let line = doc.line(&e.pointer);
            let parsed = spec.dialect.parse_entry(&e.name, e.value);
            if spec.dialect == crate::sources::Dialect::Goose && parsed.not_runnable.is_some() {
                // goose's builtin/platform extensions run inside goose; they are not MCP servers.
                seen_here -= 1;
                continue;
            }
            let loc = |field: &Option<String>| {
                let l = field
                    .as_ref()
                    .and_then(|f| {
                        doc.line(&format!(
                            "{}/{}",
                            e.pointer,
                            escape_pointer(f.split(['.', '[']).next().unwrap_or(f))
                        ))
                    })
                    .or(line);
                match l {
                    Some(l) => format!("{}:{l}", spec.path.display()),
                    None => spec.path.display().to_string(),
                }
            };
            let mut def = parsed.def;
            if switched_off.contains(&e.name)
                || approvals
                    .as_ref()
                    .is_some_and(|a| a.rejected(&e.name).is_some())
            {
                def.enabled = false;
            }
            let held = hold(&def);
            // A client's entry for Switchboard's gateway would start Switchboard inside itself.
            let not_runnable = parsed.not_runnable.or_else(|| gateway_note(&e.name, &def));
            let mut d = Definition {
                source: spec.id.clone(),
                path: spec.path.clone(),
                line,
                errors: vec![],
                warnings: vec![],
                not_runnable,
                parked: false,
                last_good_at: None,
                held,
                expansion: cx.expansion,
                def,
            };
            for i in parsed.issues {
                let msg = format!("{}: server \"{}\": {}", loc(&i.field), e.name, i.message);
                if i.is_error {
                    d.errors.push(msg);
                } else {
                    d.warnings.push(msg);
                }
            }
            if let Err(msg) = crate::config::validate::validate_name(&e.name) {
                let msg = msg.trim_start_matches("Invalid server config: ");
                d.warnings.push(format!(
                    "{}: {msg}; it runs, but edits must rename it",
                    loc(&None)
                ));
            }
            for (field, w) in unresolved_warnings(&d.def, &cx) {
                d.warnings
                    .push(format!("{}: server \"{}\": {w}", loc(&Some(field)), e.name));
            }
            by_name.entry(e.name.clone()).or_default().push(d);
        }
        for p in settings.parked.iter().filter(|p| p.source == spec.id) {
            seen_here += 1;
            let parsed = spec.dialect.parse_entry(&p.name, &p.entry);
            let mut def = parsed.def;
            def.enabled = false;
            let d = Definition {
                source: spec.id.clone(),
                path: spec.path.clone(),
                line: None,
                errors: parsed
                    .issues
                    .iter()
                    .filter(|i| i.is_error)
                    .map(|i| {
                        format!(
                            "{}: server \"{}\": {}",
                            spec.path.display(),
                            p.name,
                            i.message
                        )
                    })
                    .collect(),
                warnings: vec![],
                not_runnable: parsed.not_runnable,
                parked: true,
                last_good_at: None,
                held: None,
                expansion: cx.expansion,
                def,
            };
            by_name.entry(p.name.clone()).or_default().push(d);
        }
        info.server_count = seen_here;
        out.sources.push(info);
    }

    for (_, defs) in by_name {
        // A held definition does not win over one that may run.
        let win = defs
            .iter()
            .position(|d| d.is_valid() && d.held.is_none())
            .or_else(|| defs.iter().position(Definition::is_valid))
            .unwrap_or(0);
        let mut winner = defs[win].clone();
        for skipped in defs[..win].iter() {
            let why = match &skipped.held {
                Some(h) if skipped.is_valid() => format!("is held and was skipped: {}", h.reason()),
                _ => format!("is invalid and was skipped: {}", skipped.errors.join("; ")),
            };
            winner.warnings.push(format!(
                "the definition in {} ({}) {why}",
                skipped.path.display(),
                skipped.source
            ));
        }
        let shadowed = defs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != win)
            .map(|(_, d)| ShadowedDef {
                source: d.source.clone(),
                path: d.path.clone(),
                line: d.line,
                transport: d.def.transport,
                enabled: d.def.enabled,
                errors: d.errors.clone(),
            })
            .collect();
        out.servers.push(DiscoveredServer {
            winner,
            shadowed,
            definitions: defs,
        });
    }
    out
}

/// The name of the entry `switchboard connect` writes into a client's file.
pub const GATEWAY_ENTRY_NAME: &str = "switchboard";

/// Why discovery lists a gateway entry as not runnable (see `is_gateway_entry`).
pub fn gateway_note(name: &str, def: &ServerDef) -> Option<String> {
    is_gateway_entry(name, def).then(|| "Switchboard's own gateway (as `switchboard connect` writes it): the client runs it; Switchboard does not run itself".to_string())
}

/// Whether an entry is Switchboard's own gateway: a stdio entry running
/// `switchboard serve` (under any name), or an entry named `switchboard`
/// pointing at `/mcp` on loopback. Switchboard never runs such an entry
/// itself: it would start itself again, without end.
pub fn is_gateway_entry(name: &str, def: &ServerDef) -> bool {
    match def.transport {
        Transport::Stdio => {
            def.command.as_deref().is_some_and(is_switchboard_binary)
                && def.args.first().map(String::as_str) == Some("serve")
        }
        _ => name == GATEWAY_ENTRY_NAME && def.url.as_deref().is_some_and(is_gateway_url),
    }
}

/// `…/switchboard`, `switchboard.exe`, or the app's bundled sidecar
/// `switchboard-<target triple>`.
fn is_switchboard_binary(command: &str) -> bool {
    let file = command
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(command)
        .to_ascii_lowercase();
    let stem = file.strip_suffix(".exe").unwrap_or(&file);
    stem == "switchboard" || stem.starts_with("switchboard-")
}

pub(crate) fn is_gateway_url(u: &str) -> bool {
    let Ok(url) = url::Url::parse(u) else {
        return false;
    };
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    loopback && (url.path() == "/mcp" || url.path().starts_with("/mcp/"))
}
