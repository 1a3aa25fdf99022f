//! Discovery (SPEC C5–C8): read every source in priority order, dedupe by
//! name (the first *valid* definition wins), keep the rest as shadowed, and
//! report every problem with file, line and field while everything else
//! still loads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::config::vars::{expand, Expansion, VarContext};
use crate::config::{Format, ServerDef};
use crate::host::Host;
use crate::settings::Settings;
use crate::sources::read::{escape_pointer, parse, LocatedDoc};
use crate::sources::{apply_priority, default_order, Client, Container, Level, SourceSpec};
use crate::writer::{content_hash, ContentHash, PathSeg};

/// Files larger than this are not read (a config file this big is a mistake).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// Project folders trusted for this run only (`--project`).
    pub extra_projects: Vec<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
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
    pub project: Option<PathBuf>,
    pub server_count: usize,
    pub warnings: Vec<String>,
    /// Hex SHA-256 of the bytes read, for conflict checks on write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    /// The `ServerDef` fields (camelCase) this source's client can store;
    /// a form offers only these.
    pub fields: Vec<&'static str>,
    #[serde(skip)]
    pub hash: Option<ContentHash>,
    #[serde(skip)]
    pub spec: Option<SourceSpec>,
}

/// One definition of a name in one source.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    #[serde(flatten)]
    pub def: ServerDef,
    pub source: String,
    pub path: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    /// Set for entries only their client can run (a Zed extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_runnable: Option<String>,
    /// Parked by Switchboard (disabled in a client without an off switch).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub parked: bool,
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
#[serde(rename_all = "camelCase")]
pub struct ShadowedDef {
    pub source: String,
    pub path: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub transport: crate::config::Transport,
    pub enabled: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// A server name with its winning definition and every shadowed one.
#[derive(Debug, Clone, Serialize)]
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
    /// what servers get as roots (SPEC M13).
    pub fn project_folders(&self) -> Vec<PathBuf> {
        self.sources.iter().filter_map(|s| s.project.clone()).collect::<std::collections::BTreeSet<_>>().into_iter().collect()
    }
}

/// The ordered source list for these settings (no file is read).
pub fn ordered_sources(host: &Host, settings: &Settings, opts: &DiscoverOptions) -> Vec<SourceSpec> {
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
            std::env::current_dir().map(|d| d.join(p)).unwrap_or_else(|_| p.to_path_buf())
        }
    })
}

/// Run discovery. Never panics: a failure as a whole yields an empty result
/// with one error.
pub fn discover(host: &Host, settings: &Settings, opts: &DiscoverOptions) -> Discovery {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| discover_inner(host, settings, opts))) {
        Ok(d) => d,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown failure".into());
            Discovery { errors: vec![format!("Discovery failed: {msg}")], ..Default::default() }
        }
    }
}

/// A file read once per discovery, shared by the sources that live in it.
struct FileRead {
    exists: bool,
    hash: Option<ContentHash>,
    doc: Result<LocatedDoc, String>,
}

fn read_file(path: &Path, format: Format) -> FileRead {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return FileRead { exists: false, hash: None, doc: Ok(LocatedDoc::default()) }
        }
        Ok(m) if m.len() > MAX_FILE_BYTES => {
            return FileRead { exists: true, hash: None, doc: Err(format!("{}: file is larger than 64 MiB; not read", path.display())) }
        }
        _ => {}
    }
    match std::fs::read(path) {
        Err(e) => FileRead { exists: path.exists(), hash: None, doc: Err(format!("{}: cannot read: {e}", path.display())) },
        Ok(bytes) => {
            let hash = Some(content_hash(&bytes));
            let doc = match String::from_utf8(bytes) {
                Err(_) => Err(format!("{}: not valid UTF-8 text", path.display())),
                Ok(text) => {
                    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                    parse(format, text).map_err(|f| match f.line {
                        Some(l) => format!("{}:{l}: cannot parse: {}", path.display(), f.message),
                        None => format!("{}: cannot parse: {}", path.display(), f.message),
                    })
                }
            };
            FileRead { exists: true, hash, doc }
        }
    }
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
pub fn entries<'a>(spec: &SourceSpec, doc: &'a Value, warnings: &mut Vec<String>) -> Vec<RawEntry<'a>> {
    let base = pointer(spec.container.path());
    let Some(container) = value_at(doc, spec.container.path()) else {
        return vec![];
    };
    match (&spec.container, container) {
        (Container::Map(_), Value::Object(m)) => m
            .iter()
            .map(|(k, v)| RawEntry { name: k.clone(), value: v, pointer: format!("{base}/{}", escape_pointer(k)) })
            .collect(),
        (Container::List(_), Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let name = v.get("name").and_then(Value::as_str);
                if name.is_none() {
                    warnings.push(format!("{}: entry {base}/{i} has no \"name\"; skipped", spec.path.display()));
                }
                Some(RawEntry { name: name?.to_string(), value: v, pointer: format!("{base}/{i}") })
            })
            .collect(),
        (Container::Map(_), Value::Null) | (Container::List(_), Value::Null) => vec![],
        (c, other) => {
            let want = if matches!(c, Container::Map(_)) { "an object" } else { "a list" };
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
        workspace_folder: spec.project.as_ref().map(|p| p.to_string_lossy().to_string()),
        user_home: Some(host.home.to_string_lossy().to_string()),
        inputs: HashMap::new(),
        expansion: spec.expansion(),
    }
}

/// Warnings for references, in the forms `cx.expansion` knows, that do not
/// resolve here. (Codex's header variables are not checked: its own
/// fields, resolved or reported at connect time.)
pub fn unresolved_warnings(def: &ServerDef, cx: &VarContext) -> Vec<(String, String)> {
    let mut out = vec![];
    let mut check = |field: String, v: &str| {
        for r in expand(v, cx).unresolved {
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

/// Claude Code asks before using a project's `.mcp.json` servers; the answer
/// is kept in `~/.claude.json` under `projects[<path>].disabledMcpjsonServers`.
fn mcpjson_disabled(host: &Host, spec: &SourceSpec) -> Vec<String> {
    let (Some(project), true) = (&spec.project, spec.container.path() == [PathSeg::Key("mcpServers".into())]) else {
        return vec![];
    };
    let Ok(text) = std::fs::read_to_string(host.home_join(".claude.json")) else { return vec![] };
    let Ok(v) = serde_json::from_str::<Value>(&text) else { return vec![] };
    v.get("projects")
        .and_then(|p| p.get(project.to_string_lossy().as_ref()))
        .and_then(|p| p.get("disabledMcpjsonServers"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

pub fn gemini_enablement_path(host: &Host) -> PathBuf {
    host.home_join(".gemini/mcp-server-enablement.json")
}

fn discover_inner(host: &Host, settings: &Settings, opts: &DiscoverOptions) -> Discovery {
    let specs = ordered_sources(host, settings, opts);
    let mut files: HashMap<(PathBuf, Format), FileRead> = HashMap::new();
    let mut out = Discovery::default();
    let mut by_name: IndexMap<String, Vec<Definition>> = IndexMap::new();

    for (priority, spec) in specs.iter().enumerate() {
        let file = files.entry((spec.path.clone(), spec.format)).or_insert_with(|| read_file(&spec.path, spec.format));
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
            fields: spec.dialect.fields().iter().map(|f| f.as_str()).collect(),
            hash: file.hash,
            spec: Some(spec.clone()),
        };
        if spec.client == Client::Switchboard {
            // A settings.json that does not parse is shown with Switchboard's
            // own source: that is where users look for Switchboard's files.
            info.warnings.extend(settings.problem.clone());
        }
        let doc = match &file.doc {
            Ok(doc) => doc,
            Err(e) => {
                info.warnings.push(e.clone());
                out.sources.push(info);
                continue;
            }
        };
        let cx = var_context(host, spec);
        let switched_off = match spec.client {
            Client::Gemini => gemini_disabled(host, &doc.value),
            Client::ClaudeCode if spec.level == Level::Project => mcpjson_disabled(host, spec),
            _ => vec![],
        };
        let mut seen_here = 0;
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
                    .and_then(|f| doc.line(&format!("{}/{}", e.pointer, escape_pointer(f.split(['.', '[']).next().unwrap_or(f)))))
                    .or(line);
                match l {
                    Some(l) => format!("{}:{l}", spec.path.display()),
                    None => spec.path.display().to_string(),
                }
            };
            let mut def = parsed.def;
            if switched_off.contains(&e.name) {
                def.enabled = false;
            }
            let mut d = Definition {
                source: spec.id.clone(),
                path: spec.path.clone(),
                line,
                errors: vec![],
                warnings: vec![],
                not_runnable: parsed.not_runnable,
                parked: false,
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
                d.warnings.push(format!("{}: {msg}; it runs, but edits must rename it", loc(&None)));
            }
            for (field, w) in unresolved_warnings(&d.def, &cx) {
                d.warnings.push(format!("{}: server \"{}\": {w}", loc(&Some(field)), e.name));
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
                errors: parsed.issues.iter().filter(|i| i.is_error).map(|i| format!("{}: server \"{}\": {}", spec.path.display(), p.name, i.message)).collect(),
                warnings: vec![],
                not_runnable: parsed.not_runnable,
                parked: true,
                expansion: cx.expansion,
                def,
            };
            by_name.entry(p.name.clone()).or_default().push(d);
        }
        info.server_count = seen_here;
        out.sources.push(info);
    }

    for (_, defs) in by_name {
        let win = defs.iter().position(Definition::is_valid).unwrap_or(0);
        let mut winner = defs[win].clone();
        for skipped in defs[..win].iter() {
            winner.warnings.push(format!(
                "the definition in {} ({}) is invalid and was skipped: {}",
                skipped.path.display(),
                skipped.source,
                skipped.errors.join("; ")
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
        out.servers.push(DiscoveredServer { winner, shadowed, definitions: defs });
    }
    out
}
