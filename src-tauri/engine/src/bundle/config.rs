//! A bundle's `server.mcp_config` and the user's `user_config` values made
//! into the stdio definition Switchboard runs, with the MCPB spec's
//! variables: `${__dirname}` (the unpacked folder), `${user_config.KEY}`,
//! `${HOME}`, `${DESKTOP}`, `${DOCUMENTS}`, `${DOWNLOADS}`,
//! `${pathSeparator}` and `${/}`. Sensitive values are kept as the registry
//! installs keep them: in the keychain, with `${keychain:NAME}` in the
//! definition (`registry::install::Secrets`).

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::Value;

use super::manifest::{this_platform, ConfigType, Manifest, ServerType, UserConfigField};
use super::{BundleError, Result};
use crate::config::ServerDef;
use crate::host::{Host, Os};
use crate::registry::install::{keychain_name, keychain_ref, Built, KeptSecret, Secrets};

/// The values the user gave, by `user_config` key; a `multiple` field may
/// have several.
pub type ConfigValues = IndexMap<String, Vec<String>>;

/// `KEY=VALUE` strings (the CLI's `--config`) as values; a key given twice
/// has two values.
pub fn parse_config_flags(flags: &[String]) -> Result<ConfigValues> {
    let mut values = ConfigValues::new();
    for flag in flags {
        let Some((k, v)) = flag.split_once('=') else {
            return Err(BundleError::Config {
                key: flag.clone(),
                problem: "write it as KEY=VALUE".into(),
            });
        };
        values
            .entry(k.trim().to_string())
            .or_default()
            .push(v.to_string());
    }
    Ok(values)
}

/// The user's folders and platform the variables stand for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    pub home: PathBuf,
    pub desktop: PathBuf,
    pub documents: PathBuf,
    pub downloads: PathBuf,
    /// `/` or `\`.
    pub path_separator: String,
    /// `linux`, `darwin` or `win32` (for `platform_overrides`).
    pub platform: String,
}

impl Places {
    /// The folders of `host`'s user (`~/Desktop` and so on).
    pub fn of(host: &Host) -> Places {
        let platform = match host.os {
            Os::Linux => "linux",
            Os::Macos => "darwin",
            Os::Windows => "win32",
        };
        Places {
            home: host.home.clone(),
            desktop: host.home_join("Desktop"),
            documents: host.home_join("Documents"),
            downloads: host.home_join("Downloads"),
            path_separator: if host.os == Os::Windows { "\\" } else { "/" }.into(),
            platform: platform.into(),
        }
    }

    /// This machine's.
    pub fn current() -> Places {
        let mut p = Places::of(&Host::current());
        p.platform = this_platform().into();
        p
    }

    fn system_vars(&self) -> Vec<(&'static str, String)> {
        let s = |p: &Path| p.to_string_lossy().into_owned();
        vec![
            ("HOME", s(&self.home)),
            ("DESKTOP", s(&self.desktop)),
            ("DOCUMENTS", s(&self.documents)),
            ("DOWNLOADS", s(&self.downloads)),
            ("pathSeparator", self.path_separator.clone()),
            ("/", self.path_separator.clone()),
        ]
    }
}

/// Replaces `${NAME}` for each known name; others stay as written.
fn replace(text: &str, vars: &[(String, Vec<String>)]) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = &after[..end];
        match vars.iter().find(|(n, _)| n == name) {
            // Several values in one string: joined by commas.
            Some((_, values)) => out.push_str(&values.join(",")),
            None if name.starts_with("user_config.") => {
                return Err(name.trim_start_matches("user_config.").to_string())
            }
            None => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Switchboard's own file expands `${…}` (environment, `${keychain:…}`),
/// runs an env value `!command` and reads an env value that is exactly a set
/// variable's name. What a bundle or its values hold must stay the literal
/// text Claude Desktop would pass, so any of those is refused — except the
/// keychain references made here for its sensitive values.
fn guard(field: &str, value: &str, ours: &[String], is_env: bool) -> Result<()> {
    let refuse = |problem: String| {
        Err(BundleError::Definition {
            field: field.to_string(),
            problem,
        })
    };
    let mut rest = value.to_string();
    for r in ours {
        rest = rest.replace(r.as_str(), "");
    }
    if let Some(at) = rest.find("${") {
        let var: String = rest[at..].chars().take_while(|&c| c != '}').collect();
        return refuse(format!(
            "\"{var}}}\" is not an MCPB variable, and Switchboard would expand it when it starts the server; the bundle cannot be installed as it is"
        ));
    }
    if is_env && value.starts_with('!') {
        return refuse(
            "starts with '!', which Switchboard would run as a command; the bundle cannot be installed as it is".into(),
        );
    }
    let looks_like_name = !value.is_empty()
        && !value.starts_with(|c: char| c.is_ascii_digit())
        && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if is_env && looks_like_name && std::env::var_os(value).is_some() {
        return refuse(format!(
            "\"{value}\" is the name of an environment variable, which Switchboard would read in its place"
        ));
    }
    Ok(())
}

fn default_values(field: &UserConfigField, system: &[(String, Vec<String>)]) -> Vec<String> {
    let one = |v: &Value| match v {
        Value::String(s) => replace(s, system).unwrap_or_else(|_| s.clone()),
        other => other.to_string(),
    };
    match &field.default {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(items)) => items.iter().map(one).collect(),
        Some(v) => vec![one(v)],
    }
}

/// The values `field` starts with in a form: its default, with `${HOME}`-style
/// variables resolved (what [`server_def`] uses when no value is given).
pub fn field_defaults(field: &UserConfigField, places: &Places) -> Vec<String> {
    let vars: Vec<(String, Vec<String>)> = places
        .system_vars()
        .into_iter()
        .map(|(k, v)| (k.to_string(), vec![v]))
        .collect();
    default_values(field, &vars)
}

/// The stdio definition named `name` for the bundle unpacked in `dir`, with
/// `values` for its `user_config` (defaults for the rest). Sensitive values
/// go to `Built::secrets` when `secrets` is `Keychain`.
pub fn server_def(
    manifest: &Manifest,
    name: &str,
    dir: &Path,
    values: &ConfigValues,
    places: &Places,
    secrets: &Secrets,
) -> Result<Built> {
    let config_err = |key: &str, problem: String| BundleError::Config {
        key: key.to_string(),
        problem,
    };
    for key in values.keys() {
        if !manifest.user_config.contains_key(key) {
            let known: Vec<&str> = manifest.user_config.keys().map(|k| k.as_str()).collect();
            return Err(config_err(
                key,
                if known.is_empty() {
                    "this bundle has no settings".into()
                } else {
                    format!(
                        "not a setting of this bundle (it has: {})",
                        known.join(", ")
                    )
                },
            ));
        }
    }
    let dirname = dir.to_string_lossy().into_owned();
    let mut vars: Vec<(String, Vec<String>)> = places
        .system_vars()
        .into_iter()
        .map(|(k, v)| (k.to_string(), vec![v]))
        .collect();
    vars.push(("__dirname".into(), vec![dirname.clone()]));

    let mut kept = vec![];
    let mut has_secrets = false;
    let mut missing = vec![];
    for (key, field) in &manifest.user_config {
        let given = values.get(key).filter(|v| !v.is_empty());
        let list = match given {
            Some(v) => v.clone(),
            None => default_values(field, &vars),
        };
        if list.is_empty() || list.iter().all(|v| v.is_empty()) {
            if field.required {
                missing.push(key.clone());
            }
            vars.push((format!("user_config.{key}"), vec![]));
            continue;
        }
        if list.len() > 1 && !field.multiple {
            return Err(config_err(
                key,
                format!("takes one value, {} were given", list.len()),
            ));
        }
        for v in &list {
            match field.kind {
                ConfigType::Number => {
                    let n: f64 = v
                        .trim()
                        .parse()
                        .map_err(|_| config_err(key, format!("\"{v}\" is not a number")))?;
                    if field.min.is_some_and(|min| n < min) || field.max.is_some_and(|max| n > max)
                    {
                        let bound = |b: Option<f64>| b.map(|b| b.to_string()).unwrap_or("…".into());
                        return Err(config_err(
                            key,
                            format!(
                                "{v} is outside {} to {}",
                                bound(field.min),
                                bound(field.max)
                            ),
                        ));
                    }
                }
                ConfigType::Boolean if v != "true" && v != "false" => {
                    return Err(config_err(key, format!("\"{v}\" is not true or false")));
                }
                _ => {}
            }
        }
        let list = if field.sensitive {
            has_secrets = true;
            match secrets {
                Secrets::Plain => list,
                Secrets::Keychain { server } => list
                    .into_iter()
                    .enumerate()
                    .map(|(i, value)| {
                        let k = if i == 0 {
                            key.clone()
                        } else {
                            format!("{key}.{}", i + 1)
                        };
                        let kc = keychain_name(server, &k);
                        kept.push(KeptSecret {
                            name: kc.clone(),
                            value,
                        });
                        keychain_ref(&kc)
                    })
                    .collect(),
            }
        } else {
            list
        };
        vars.push((format!("user_config.{key}"), list));
    }
    if !missing.is_empty() {
        return Err(config_err(
            &missing.join(", "),
            "required, and no value was given".into(),
        ));
    }

    let (mut command, mut args, mut env) = match &manifest.server.mcp_config {
        Some(mcp) => (mcp.command.clone(), mcp.args.clone(), mcp.env.clone()),
        // A `uv` server without mcp_config: the app runs it with uv.
        None if manifest.server.kind == ServerType::Uv => (
            "uv".to_string(),
            vec![
                "run".into(),
                "--directory".into(),
                "${__dirname}".into(),
                manifest.server.entry_point.clone(),
            ],
            IndexMap::new(),
        ),
        None => {
            return Err(config_err(
                "(server.mcp_config)",
                "the manifest does not say how to run the server".into(),
            ))
        }
    };
    if let Some(o) = manifest
        .server
        .mcp_config
        .as_ref()
        .and_then(|m| m.platform_overrides.get(&places.platform))
    {
        command = o.command.clone().unwrap_or(command);
        args = o.args.clone().unwrap_or(args);
        env = o.env.clone().unwrap_or(env);
    }
    let undeclared = |k: String| {
        config_err(
            &k,
            "used in server.mcp_config but not declared in user_config".into(),
        )
    };
    let mut out_args = vec![];
    for a in &args {
        // An argument that is exactly one setting becomes one argument per value.
        if let Some(key) = a
            .strip_prefix("${user_config.")
            .and_then(|r| r.strip_suffix('}'))
        {
            match vars
                .iter()
                .find(|(n, _)| n == &format!("user_config.{key}"))
            {
                Some((_, values)) => out_args.extend(values.iter().cloned()),
                None => return Err(undeclared(key.to_string())),
            }
            continue;
        }
        out_args.push(replace(a, &vars).map_err(undeclared)?);
    }
    let mut out_env = IndexMap::new();
    for (k, v) in &env {
        out_env.insert(k.clone(), replace(v, &vars).map_err(undeclared)?);
    }
    let mut command = replace(&command, &vars).map_err(undeclared)?;
    // A binary named relative to the bundle runs from the bundle.
    if manifest.server.kind == ServerType::Binary && Path::new(&command).is_relative() {
        command = dir.join(&command).to_string_lossy().into_owned();
        if places.platform == "win32" && !command.to_ascii_lowercase().ends_with(".exe") {
            command.push_str(".exe");
        }
    }
    let ours: Vec<String> = kept.iter().map(|k| keychain_ref(&k.name)).collect();
    guard("server.mcp_config.command", &command, &ours, false)?;
    for (i, a) in out_args.iter().enumerate() {
        guard(&format!("server.mcp_config.args[{i}]"), a, &ours, false)?;
    }
    for (k, v) in &out_env {
        guard(&format!("server.mcp_config.env.{k}"), v, &ours, true)?;
    }
    let mut def = ServerDef::stdio(name, &command, &[]);
    def.args = out_args;
    def.env = out_env;
    // Manifests also name files relative to the bundle (`server/index.js`).
    def.cwd = Some(dirname);
    Ok(Built {
        def,
        secrets: kept,
        has_secrets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places {
            home: "/home/u".into(),
            desktop: "/home/u/Desktop".into(),
            documents: "/home/u/Documents".into(),
            downloads: "/home/u/Downloads".into(),
            path_separator: "/".into(),
            platform: "linux".into(),
        }
    }

    fn manifest(json: Value) -> Manifest {
        super::super::manifest::parse(Path::new("t.mcpb"), &json.to_string()).unwrap()
    }

    fn sample() -> Manifest {
        manifest(serde_json::json!({
            "manifest_version": "0.3", "name": "files", "version": "1.0.0",
            "server": {"type": "node", "entry_point": "server/index.js", "mcp_config": {
                "command": "node",
                "args": ["${__dirname}${/}server/index.js", "${user_config.dirs}", "--limit=${user_config.limit}"],
                "env": {"API_KEY": "${user_config.api_key}", "RO": "${user_config.ro}"},
                "platform_overrides": {"win32": {"command": "node.exe"}}
            }},
            "user_config": {
                "dirs": {"type": "directory", "multiple": true, "required": true, "default": ["${HOME}/Desktop"]},
                "limit": {"type": "number", "min": 1, "max": 10, "default": 5},
                "api_key": {"type": "string", "sensitive": true, "required": true},
                "ro": {"type": "boolean", "default": true}
            }
        }))
    }

    #[test]
    fn variables_defaults_arrays_and_secrets() {
        let m = sample();
        let values =
            parse_config_flags(&["api_key=sk-1".into(), "dirs=/a".into(), "dirs=/b c".into()])
                .unwrap();
        let secrets = Secrets::Keychain {
            server: "files".into(),
        };
        let b = server_def(
            &m,
            "files",
            Path::new("/d/files/1.0.0"),
            &values,
            &places(),
            &secrets,
        )
        .unwrap();
        assert_eq!(b.def.command.as_deref(), Some("node"));
        assert_eq!(
            b.def.args,
            ["/d/files/1.0.0/server/index.js", "/a", "/b c", "--limit=5"]
        );
        assert_eq!(b.def.env["API_KEY"], "${keychain:files.api_key}");
        assert_eq!(b.def.env["RO"], "true");
        assert_eq!(
            b.secrets,
            [KeptSecret {
                name: "files.api_key".into(),
                value: "sk-1".into()
            }]
        );
        assert!(b.has_secrets);

        let defaults = parse_config_flags(&["api_key=k".into()]).unwrap();
        let mut win = places();
        win.platform = "win32".into();
        let b = server_def(
            &m,
            "files",
            Path::new("/d"),
            &defaults,
            &win,
            &Secrets::Plain,
        )
        .unwrap();
        assert_eq!(b.def.command.as_deref(), Some("node.exe"));
        assert_eq!(b.def.args[1], "/home/u/Desktop");
        assert_eq!(b.def.env["API_KEY"], "k");
    }

    #[test]
    fn bad_values_are_refused_naming_the_key() {
        let m = sample();
        let run = |flags: &[&str]| {
            let v = parse_config_flags(&flags.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
            server_def(&m, "files", Path::new("/d"), &v, &places(), &Secrets::Plain)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            run(&[]),
            "user_config.api_key: required, and no value was given"
        );
        assert!(
            run(&["api_key=k", "limit=11"]).contains("user_config.limit: 11 is outside 1 to 10")
        );
        assert!(run(&["api_key=k", "limit=x"]).contains("not a number"));
        assert!(
            run(&["api_key=k", "ro=yes"]).contains("user_config.ro: \"yes\" is not true or false")
        );
        assert!(run(&["api_key=k", "nope=1"]).contains("user_config.nope: not a setting"));
        assert!(run(&["api_key=k", "limit=1", "limit=2"]).contains("takes one value"));
        assert!(parse_config_flags(&["novalue".into()]).is_err());
    }

    #[test]
    fn what_switchboard_would_expand_is_refused() {
        let m = |env: Value| {
            manifest(serde_json::json!({
                "manifest_version": "0.3", "name": "x", "version": "1",
                "server": {"type": "node", "entry_point": "i.js",
                    "mcp_config": {"command": "node", "args": ["i.js", "${user_config.v}"], "env": env}},
                "user_config": {"v": {"type": "string"}}
            }))
        };
        let run = |m: &Manifest, flags: &[&str]| {
            let v = parse_config_flags(&flags.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
            server_def(m, "x", Path::new("/d"), &v, &places(), &Secrets::Plain)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        let stolen = m(serde_json::json!({"T": "${keychain:github.token}"}));
        assert!(
            run(&stolen, &[]).starts_with("server.mcp_config.env.T: \"${keychain:github.token}\"")
        );
        let cmd = m(serde_json::json!({"T": "!curl example.com"}));
        assert!(run(&cmd, &[]).contains("run as a command"));
        let plain = m(serde_json::json!({}));
        assert!(run(&plain, &["v=${env:SECRET}"]).starts_with("server.mcp_config.args[1]"));
        let named = m(serde_json::json!({"P": "PATH"}));
        assert!(run(&named, &[]).contains("name of an environment variable"));
    }

    #[test]
    fn uv_servers_without_mcp_config_run_with_uv() {
        let m = manifest(serde_json::json!({
            "manifest_version": "0.4", "name": "u", "version": "1",
            "server": {"type": "uv", "entry_point": "src/server.py"}
        }));
        let b = server_def(
            &m,
            "u",
            Path::new("/d"),
            &ConfigValues::new(),
            &places(),
            &Secrets::Plain,
        )
        .unwrap();
        assert_eq!(b.def.command.as_deref(), Some("uv"));
        assert_eq!(b.def.args, ["run", "--directory", "/d", "src/server.py"]);
    }

    #[test]
    fn binaries_run_from_the_bundle() {
        let m = manifest(serde_json::json!({
            "manifest_version": "0.2", "name": "b", "version": "1",
            "server": {"type": "binary", "entry_point": "server/b", "mcp_config": {"command": "server/b"}}
        }));
        let b = server_def(
            &m,
            "b",
            Path::new("/d"),
            &ConfigValues::new(),
            &places(),
            &Secrets::Plain,
        )
        .unwrap();
        assert_eq!(b.def.command.as_deref(), Some("/d/server/b"));
        assert_eq!(b.def.cwd.as_deref(), Some("/d"));
    }
}
