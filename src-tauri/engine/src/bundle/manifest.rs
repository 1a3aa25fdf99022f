//! `manifest.json` of a bundle (MCPB manifest versions 0.1 to 0.4, also
//! spelled `dxt_version`): the fields Switchboard uses, typed, with every
//! other field kept; validation that names the field; and the check of its
//! `compatibility` against this machine.

use std::path::Path;
use std::process::Command;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{BundleError, Result};

pub const SUPPORTED_MANIFEST_VERSIONS: &[&str] = &["0.1", "0.2", "0.3", "0.4"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dxt_version: Option<String>,
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
    pub server: Server,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub user_config: IndexMap<String, UserConfigField>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<Compatibility>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<Value>,
    /// Every field not named above, kept as it was.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Manifest {
    /// `manifest_version`, or the older `dxt_version`.
    pub fn spec_version(&self) -> Option<&str> {
        self.manifest_version
            .as_deref()
            .or(self.dxt_version.as_deref())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Author {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerType {
    Node,
    Python,
    Binary,
    Uv,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Server {
    #[serde(rename = "type")]
    pub kind: ServerType,
    #[serde(default)]
    pub entry_point: String,
    /// Absent only for `uv` servers (the app runs `uv run` itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_config: Option<McpConfig>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpConfig {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// Per platform (`darwin`, `win32`, `linux`): command, args or env that
    /// replace the general ones.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub platform_overrides: IndexMap<String, PlatformOverride>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlatformOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<IndexMap<String, String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ConfigType {
    String,
    Number,
    Boolean,
    File,
    Directory,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserConfigField {
    #[serde(rename = "type")]
    pub kind: ConfigType,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub required: bool,
    /// A string, number, boolean or list of strings; strings may use `${HOME}`-style variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(default)]
    pub sensitive: bool,
    #[serde(default)]
    pub multiple: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Compatibility {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_desktop: Option<String>,
    /// `darwin`, `win32`, `linux`; empty means any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub platforms: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtimes: Option<Runtimes>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Runtimes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// Parses and validates `text`, naming the first field that is wrong.
pub(super) fn parse(file: &Path, text: &str) -> Result<Manifest> {
    let bad = |field: &str, problem: String| BundleError::Manifest {
        file: file.to_path_buf(),
        field: field.to_string(),
        problem,
    };
    let value: Value =
        serde_json::from_str(text).map_err(|e| bad("(file)", format!("not valid JSON: {e}")))?;
    validate(&value).map_err(|(field, problem)| bad(&field, problem))?;
    serde_json::from_value(value).map_err(|e| bad("(file)", e.to_string()))
}

type Problem = (String, String);

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn string_at<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
    required: bool,
) -> std::result::Result<Option<&'a str>, Problem> {
    let field = if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    };
    match obj.get(key) {
        None | Some(Value::Null) if required => Err((field, "missing".into())),
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if required && s.trim().is_empty() => Err((field, "empty".into())),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err((field, format!("must be a string, not {}", kind_of(v)))),
    }
}

fn object_at<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    field: &str,
    required: bool,
) -> std::result::Result<Option<&'a Map<String, Value>>, Problem> {
    match obj.get(key) {
        None | Some(Value::Null) if required => Err((field.into(), "missing".into())),
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(v) => Err((
            field.into(),
            format!("must be an object, not {}", kind_of(v)),
        )),
    }
}

fn strings_at(
    obj: &Map<String, Value>,
    key: &str,
    field: &str,
) -> std::result::Result<(), Problem> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                if !item.is_string() {
                    return Err((
                        format!("{field}[{i}]"),
                        format!("must be a string, not {}", kind_of(item)),
                    ));
                }
            }
            Ok(())
        }
        Some(v) => Err((
            field.into(),
            format!("must be a list of strings, not {}", kind_of(v)),
        )),
    }
}

fn string_map_at(
    obj: &Map<String, Value>,
    key: &str,
    field: &str,
) -> std::result::Result<(), Problem> {
    if let Some(env) = object_at(obj, key, field, false)? {
        for (k, v) in env {
            if !v.is_string() {
                return Err((
                    format!("{field}.{k}"),
                    format!("must be a string, not {}", kind_of(v)),
                ));
            }
        }
    }
    Ok(())
}

fn validate(v: &Value) -> std::result::Result<(), Problem> {
    let Value::Object(root) = v else {
        return Err((
            "(file)".into(),
            format!("must be an object, not {}", kind_of(v)),
        ));
    };
    let version = match (
        string_at(root, "manifest_version", "", false)?,
        string_at(root, "dxt_version", "", false)?,
    ) {
        (Some(v), _) => ("manifest_version", v),
        (None, Some(v)) => ("dxt_version", v),
        (None, None) => return Err(("manifest_version".into(), "missing".into())),
    };
    if !SUPPORTED_MANIFEST_VERSIONS.contains(&version.1) {
        return Err((
            version.0.into(),
            format!(
                "\"{}\" is not a version Switchboard reads ({})",
                version.1,
                SUPPORTED_MANIFEST_VERSIONS.join(", ")
            ),
        ));
    }
    string_at(root, "name", "", true)?;
    string_at(root, "version", "", true)?;
    string_at(root, "display_name", "", false)?;
    string_at(root, "description", "", false)?;
    if let Some(author) = root.get("author") {
        match author {
            Value::Object(a) => {
                string_at(a, "name", "author", true)?;
            }
            v => {
                return Err((
                    "author".into(),
                    format!("must be an object, not {}", kind_of(v)),
                ))
            }
        }
    }
    let server = object_at(root, "server", "server", true)?.expect("required");
    let kind = string_at(server, "type", "server", true)?.expect("required");
    if !["node", "python", "binary", "uv"].contains(&kind) {
        return Err((
            "server.type".into(),
            format!("\"{kind}\" is not one of node, python, binary, uv"),
        ));
    }
    string_at(server, "entry_point", "server", kind != "uv")?;
    if let Some(mcp) = object_at(server, "mcp_config", "server.mcp_config", kind != "uv")? {
        string_at(mcp, "command", "server.mcp_config", true)?;
        strings_at(mcp, "args", "server.mcp_config.args")?;
        string_map_at(mcp, "env", "server.mcp_config.env")?;
        if let Some(overrides) = object_at(
            mcp,
            "platform_overrides",
            "server.mcp_config.platform_overrides",
            false,
        )? {
            for (platform, o) in overrides {
                let field = format!("server.mcp_config.platform_overrides.{platform}");
                let Value::Object(o) = o else {
                    return Err((field, format!("must be an object, not {}", kind_of(o))));
                };
                string_at(o, "command", &field, false)?;
                strings_at(o, "args", &format!("{field}.args"))?;
                string_map_at(o, "env", &format!("{field}.env"))?;
            }
        }
    }
    if let Some(fields) = object_at(root, "user_config", "user_config", false)? {
        for (key, f) in fields {
            let path = format!("user_config.{key}");
            let Value::Object(f) = f else {
                return Err((path, format!("must be an object, not {}", kind_of(f))));
            };
            let t = string_at(f, "type", &path, true)?.expect("required");
            if !["string", "number", "boolean", "file", "directory"].contains(&t) {
                return Err((
                    format!("{path}.type"),
                    format!("\"{t}\" is not one of string, number, boolean, file, directory"),
                ));
            }
            for flag in ["required", "sensitive", "multiple"] {
                if let Some(v) = f.get(flag).filter(|v| !v.is_boolean() && !v.is_null()) {
                    return Err((
                        format!("{path}.{flag}"),
                        format!("must be true or false, not {}", kind_of(v)),
                    ));
                }
            }
            for bound in ["min", "max"] {
                if let Some(v) = f.get(bound).filter(|v| !v.is_number() && !v.is_null()) {
                    return Err((
                        format!("{path}.{bound}"),
                        format!("must be a number, not {}", kind_of(v)),
                    ));
                }
            }
            if let Some(d) = f.get("default").filter(|d| !d.is_null()) {
                let ok = match d {
                    Value::Array(items) => items.iter().all(|i| i.is_string()),
                    Value::Object(_) => false,
                    _ => true,
                };
                if !ok {
                    return Err((
                        format!("{path}.default"),
                        "must be a string, number, boolean or list of strings".into(),
                    ));
                }
            }
        }
    }
    if let Some(c) = object_at(root, "compatibility", "compatibility", false)? {
        string_at(c, "claude_desktop", "compatibility", false)?;
        strings_at(c, "platforms", "compatibility.platforms")?;
        if let Some(r) = object_at(c, "runtimes", "compatibility.runtimes", false)? {
            for rt in ["node", "python"] {
                if let Some(range) = string_at(r, rt, "compatibility.runtimes", false)? {
                    if matches_npm_range(range, &semver::Version::new(0, 0, 0)).is_none() {
                        return Err((
                            format!("compatibility.runtimes.{rt}"),
                            format!("\"{range}\" is not a version range"),
                        ));
                    }
                }
            }
        }
    }
    for list in ["tools", "prompts"] {
        if let Some(v) = root.get(list).filter(|v| !v.is_array() && !v.is_null()) {
            return Err((list.into(), format!("must be a list, not {}", kind_of(v))));
        }
    }
    Ok(())
}

/// One npm-style alternative (`>=18.0.0 <23`) in the `semver` crate's
/// syntax: comparators separated by commas.
fn npm_range(alternative: &str) -> String {
    alternative
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `version` is in `range` (alternatives separated by `||`);
/// `None` when the range cannot be read.
fn matches_npm_range(range: &str, version: &semver::Version) -> Option<bool> {
    let mut any = false;
    for alt in range.split("||") {
        let req = semver::VersionReq::parse(&npm_range(alt.trim())).ok()?;
        any |= req.matches(version);
    }
    Some(any)
}

/// Whether this machine can run the bundle, and why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompatibilityVerdict {
    pub compatible: bool,
    /// One line per problem: the platform, or a runtime missing or of a version outside the range.
    pub problems: Vec<String>,
    /// What was found: `node 22.3.0`, `python 3.12.1`.
    pub found: Vec<String>,
}

/// The MCPB name of this platform: `linux`, `darwin` or `win32`.
pub fn this_platform() -> &'static str {
    if cfg!(target_os = "macos") {
        "darwin"
    } else if cfg!(windows) {
        "win32"
    } else {
        "linux"
    }
}

/// `node --version` / `python3 --version` as a version, `None` when missing.
fn runtime_version(program: &str) -> Option<semver::Version> {
    let out = Command::new(program).arg("--version").output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let word = text.split_whitespace().find(|w| {
        w.trim_start_matches('v')
            .starts_with(|c: char| c.is_ascii_digit())
    })?;
    let v = word.trim_start_matches('v');
    let mut parts: Vec<&str> = v.split('.').take(3).collect();
    while parts.len() < 3 {
        parts.push("0");
    }
    let digits = |p: &str| {
        p.chars()
            .take_while(|c| c.is_ascii_digit())
            .collect::<String>()
    };
    semver::Version::parse(
        &parts
            .iter()
            .map(|p| digits(p))
            .collect::<Vec<_>>()
            .join("."),
    )
    .ok()
}

/// Checks platform and runtimes against this machine. A runtime is looked
/// for only when the manifest names a range for it, or its server type is
/// that runtime's (`node` needs node, `python` needs python3, `uv` needs
/// uv). `compatibility.claude_desktop` is about Claude Desktop and is not
/// checked.
pub fn check_compatibility(manifest: &Manifest) -> CompatibilityVerdict {
    check_compatibility_with(manifest, this_platform(), &runtime_version)
}

pub(super) fn check_compatibility_with(
    manifest: &Manifest,
    platform: &str,
    version_of: &dyn Fn(&str) -> Option<semver::Version>,
) -> CompatibilityVerdict {
    let mut problems = vec![];
    let mut found = vec![];
    let compat = manifest.compatibility.clone().unwrap_or_default();
    if !compat.platforms.is_empty() && !compat.platforms.iter().any(|p| p == platform) {
        problems.push(format!(
            "made for {} only; this machine is {platform}",
            compat.platforms.join(", ")
        ));
    }
    let runtimes = compat.runtimes.unwrap_or_default();
    let wanted = [
        (
            "node",
            "node",
            runtimes.node,
            manifest.server.kind == ServerType::Node,
        ),
        (
            "python",
            "python3",
            runtimes.python,
            manifest.server.kind == ServerType::Python,
        ),
        // A `uv` server is run by uv, which brings its own Python.
        ("uv", "uv", None, manifest.server.kind == ServerType::Uv),
    ];
    for (name, program, range, by_type) in wanted {
        if range.is_none() && !by_type {
            continue;
        }
        match version_of(program) {
            None => problems.push(format!(
                "needs {name}, which is not installed (`{program}` was not found)"
            )),
            Some(v) => {
                found.push(format!("{name} {v}"));
                if let Some(range) = range {
                    if matches_npm_range(&range, &v) == Some(false) {
                        problems.push(format!("needs {name} {range}; this machine has {v}"));
                    }
                }
            }
        }
    }
    CompatibilityVerdict {
        compatible: problems.is_empty(),
        problems,
        found,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(extra: &str) -> std::result::Result<Manifest, String> {
        let text = format!(
            r#"{{"manifest_version":"0.3","name":"x","version":"1.0.0","author":{{"name":"a"}},
               "server":{{"type":"node","entry_point":"server/index.js",
               "mcp_config":{{"command":"node","args":["${{__dirname}}/server/index.js"]}}}}{extra}}}"#
        );
        parse(Path::new("x.mcpb"), &text).map_err(|e| e.to_string())
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse(
            Path::new("x.mcpb"),
            r#"{"manifest_version":"0.3","name":"x","version":"1","server":{"type":"node","entry_point":"i.js","mcp_config":{"args":[]}}}"#,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "x.mcpb: manifest.json: server.mcp_config.command: missing"
        );
        let e = manifest(r#","user_config":{"k":{"type":"color"}}"#).unwrap_err();
        assert!(e.contains("user_config.k.type: \"color\""), "{e}");
        let e = parse(
            Path::new("x.mcpb"),
            r#"{"manifest_version":"9","name":"x"}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("manifest_version: \"9\""), "{e}");
    }

    #[test]
    fn unknown_fields_are_kept() {
        let m = manifest(r#","icon":"icon.png","keywords":["a"]"#).unwrap();
        assert_eq!(m.other["icon"], "icon.png");
        let back = serde_json::to_value(&m).unwrap();
        assert_eq!(back["keywords"][0], "a");
    }

    #[test]
    fn compatibility_verdicts() {
        let m = manifest(
            r#","compatibility":{"platforms":["darwin"],"runtimes":{"node":">=16.0.0 <20"}}"#,
        )
        .unwrap();
        let v = check_compatibility_with(&m, "linux", &|_| Some(semver::Version::new(22, 1, 0)));
        assert!(!v.compatible);
        assert_eq!(v.problems.len(), 2, "{:?}", v.problems);
        let v = check_compatibility_with(&m, "darwin", &|_| Some(semver::Version::new(18, 2, 0)));
        assert!(v.compatible, "{:?}", v.problems);
        let v = check_compatibility_with(&m, "darwin", &|_| None);
        assert!(v.problems[0].contains("not installed"), "{:?}", v.problems);
        assert_eq!(
            matches_npm_range("^3.10 || >=3.12", &semver::Version::new(3, 13, 0)),
            Some(true)
        );
        let uv = parse(
            Path::new("x.mcpb"),
            r#"{"manifest_version":"0.4","name":"x","version":"1","server":{"type":"uv","entry_point":"src/server.py"}}"#,
        )
        .unwrap();
        let v = check_compatibility_with(&uv, "linux", &|p| {
            (p != "uv").then(|| semver::Version::new(3, 12, 0))
        });
        assert_eq!(
            v.problems,
            ["needs uv, which is not installed (`uv` was not found)"]
        );
    }
}
