//! From a `server.json` to a server definition: the form to show (one field
//! per value the user may give), and the definition those values make.
//!
//! One walk over the chosen package or remote does both, so the form and
//! the definition cannot disagree about what a field is. Versions are
//! pinned exactly (`npx -y pkg@1.2.3`, `uvx pkg==1.2.3`, `dnx pkg@1.2.3`,
//! the image's tag); arguments stay a list (`args`), never a shell line.
//!
//! Field ids: `env:NAME`, `header:NAME`, `arg:FLAG` (named, e.g.
//! `arg:--port`), `arg:HINT` (positional, its `valueHint`), `rtarg:…` for
//! runtime arguments, `url:VAR` (a remote's URL variable), and
//! `<parent id>/VAR` for a `{VAR}` inside a publisher-set value. A repeated
//! field's values are separated by line breaks.

use std::collections::HashMap;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::model::{Argument, InputWithVariables, KeyValueInput, Package, Remote, ServerJson};
use crate::config::{ServerDef, Transport};

/// Which way of running the server the user picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "InstallChoice"))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Choice {
    Package { index: usize },
    Remote { index: usize },
}

/// Where a field's value goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "InstallFieldGroup"))]
#[serde(rename_all = "camelCase")]
pub enum FieldGroup {
    Env,
    Header,
    Argument,
    Url,
}

/// One value the form asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "InstallField"))]
#[serde(rename_all = "camelCase")]
pub struct Field {
    pub id: String,
    /// What the user calls it: the variable, header, flag, hint or `{VAR}` name.
    pub key: String,
    pub group: FieldGroup,
    /// The env/header/argument it is a `{variable}` of, if it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub variable_of: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub description: Option<String>,
    pub required: bool,
    pub secret: bool,
    /// `string`, `number`, `boolean` or `filepath`.
    pub format: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub default: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub placeholder: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub choices: Vec<String>,
    /// Several values (one per line).
    pub repeated: bool,
}

/// The form for one package or remote of a server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct InstallForm {
    pub choice: Choice,
    /// `npm @scope/pkg 1.2.3`, `streamable-http https://…`.
    pub label: String,
    /// The program the definition runs (`npx`, `uvx`, `docker`, `dnx`); `None` for remotes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub runtime: Option<String>,
    /// Why this one cannot be installed (then there is no definition).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub not_installable: Option<String>,
    /// The name the server gets unless the user picks another.
    pub suggested_name: String,
    pub fields: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InstallError {
    #[error("\"{server}\" has no {what}")]
    NoSuchChoice { server: String, what: String },
    #[error("\"{server}\" cannot be installed this way: {reason}")]
    NotInstallable { server: String, reason: String },
    #[error("missing required values for \"{server}\": {}", missing.join(", "))]
    Missing {
        server: String,
        missing: Vec<String>,
    },
    #[error("invalid value for \"{server}\": {message}")]
    Invalid { server: String, message: String },
}

/// How secret values end up in the definition.
#[derive(Debug, Clone)]
pub enum Secrets {
    /// Written as given (a client that keeps them in its own file).
    Plain,
    /// Kept in the OS keychain under `<server>.<key>`; the definition holds
    /// `${keychain:<server>.<key>}` (Switchboard's own file).
    Keychain { server: String },
}

/// A secret the caller must put in the keychain before writing the definition.
#[derive(Clone, PartialEq, Eq)]
pub struct KeptSecret {
    /// The keychain name (`weather.API_KEY`), as in `${keychain:NAME}`.
    pub name: String,
    pub value: String,
}

impl std::fmt::Debug for KeptSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptSecret")
            .field("name", &self.name)
            .field("value", &"<redacted>")
            .finish()
    }
}

/// The definition the values make, and what goes to the keychain.
#[derive(Debug, Clone)]
pub struct Built {
    pub def: ServerDef,
    pub secrets: Vec<KeptSecret>,
    /// Whether any value given was secret (written as given when `Secrets::Plain`).
    pub has_secrets: bool,
}

/// The reference Switchboard's own file holds for a kept secret.
pub fn keychain_ref(name: &str) -> String {
    format!("${{keychain:{name}}}")
}

/// A keychain name for `key` of `server`: `server.key`, with every
/// character outside `[A-Za-z0-9_.-]` made `_`.
pub fn keychain_name(server: &str, key: &str) -> String {
    let clean = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    format!("{}.{}", clean(server), clean(key.trim_start_matches('-')))
}

/// The server's name in Switchboard: the part after `/` of the registry
/// name, made valid (`[A-Za-z0-9_.-]`, at most 100 characters).
pub fn suggested_name(registry_name: &str) -> String {
    let tail = registry_name.rsplit('/').next().unwrap_or(registry_name);
    let mut s: String = tail
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(100)
        .collect();
    if s.is_empty() {
        s = "server".into();
    }
    s
}

/// Every way `server` can be run or reached, as forms: packages first, then remotes.
pub fn forms(server: &ServerJson) -> Vec<InstallForm> {
    let packages = (0..server.packages.len()).map(|index| Choice::Package { index });
    let remotes = (0..server.remotes.len()).map(|index| Choice::Remote { index });
    packages
        .chain(remotes)
        .filter_map(|c| form(server, c).ok())
        .collect()
}

/// The form for one package or remote.
pub fn form(server: &ServerJson, choice: Choice) -> Result<InstallForm, InstallError> {
    let mut w = Walk::new(server, None, &Secrets::Plain);
    w.run(choice)?;
    Ok(InstallForm {
        choice,
        label: w.label,
        runtime: w.runtime,
        not_installable: w.not_installable,
        suggested_name: suggested_name(&server.name),
        fields: w.fields,
    })
}

/// The definition `values` (by field id) make of `choice`, named `name`.
/// Missing required values are one error naming each of them.
pub fn build(
    server: &ServerJson,
    choice: Choice,
    name: &str,
    values: &HashMap<String, String>,
    secrets: &Secrets,
) -> Result<Built, InstallError> {
    let mut w = Walk::new(server, Some(values), secrets);
    w.run(choice)?;
    if let Some(reason) = w.not_installable {
        return Err(InstallError::NotInstallable {
            server: server.name.clone(),
            reason,
        });
    }
    if !w.missing.is_empty() {
        return Err(InstallError::Missing {
            server: server.name.clone(),
            missing: w.missing,
        });
    }
    if !w.invalid.is_empty() {
        return Err(InstallError::Invalid {
            server: server.name.clone(),
            message: w.invalid.join("; "),
        });
    }
    let mut def = match &w.url {
        Some(url) => ServerDef::remote(name, w.transport, url),
        None => {
            let mut d = ServerDef::stdio(name, w.runtime.as_deref().unwrap_or_default(), &[]);
            d.args = w.args;
            d
        }
    };
    def.env = w.env;
    def.headers = w.headers;
    Ok(Built {
        def,
        secrets: w.kept,
        has_secrets: w.has_secrets,
    })
}

/// A version that names exactly one release (not `latest`, a range or a wildcard).
fn exact_version(v: &str) -> bool {
    let v = v.trim();
    !v.is_empty()
        && !v.eq_ignore_ascii_case("latest")
        && !v.contains(['^', '~', '>', '<', '=', '*', ' ', '|'])
        && !v.split('.').any(|p| p.eq_ignore_ascii_case("x"))
}

/// An image reference that names its tag or digest already.
fn has_tag(image: &str) -> bool {
    image.contains('@')
        || image
            .rsplit('/')
            .next()
            .is_some_and(|last| last.contains(':'))
}

/// `{VAR}` in `template` replaced from `vars`; unknown ones stay as they are.
fn substitute(template: &str, vars: &IndexMap<String, String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) if vars.contains_key(&after[..end]) => {
                out.push_str(&vars[&after[..end]]);
                rest = &after[end + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

struct Walk<'a> {
    server: &'a ServerJson,
    values: Option<&'a HashMap<String, String>>,
    secrets: &'a Secrets,
    fields: Vec<Field>,
    missing: Vec<String>,
    invalid: Vec<String>,
    kept: Vec<KeptSecret>,
    has_secrets: bool,
    label: String,
    runtime: Option<String>,
    not_installable: Option<String>,
    transport: Transport,
    url: Option<String>,
    args: Vec<String>,
    env: IndexMap<String, String>,
    headers: IndexMap<String, String>,
}

/// What describes one field before it is added.
struct Ask<'i> {
    id: String,
    key: String,
    group: FieldGroup,
    variable_of: Option<String>,
    input: &'i super::model::Input,
    repeated: bool,
    /// How the CLI names it, for "missing" messages.
    flag: String,
}

impl<'a> Walk<'a> {
    fn new(
        server: &'a ServerJson,
        values: Option<&'a HashMap<String, String>>,
        secrets: &'a Secrets,
    ) -> Self {
        Walk {
            server,
            values,
            secrets,
            fields: vec![],
            missing: vec![],
            invalid: vec![],
            kept: vec![],
            has_secrets: false,
            label: String::new(),
            runtime: None,
            not_installable: None,
            transport: Transport::Stdio,
            url: None,
            args: vec![],
            env: IndexMap::new(),
            headers: IndexMap::new(),
        }
    }

    fn run(&mut self, choice: Choice) -> Result<(), InstallError> {
        let none = |what: String| InstallError::NoSuchChoice {
            server: self.server.name.clone(),
            what,
        };
        match choice {
            Choice::Package { index } => {
                let p = self
                    .server
                    .packages
                    .get(index)
                    .ok_or_else(|| none(format!("package {}", index + 1)))?;
                self.package(p);
            }
            Choice::Remote { index } => {
                let r = self
                    .server
                    .remotes
                    .get(index)
                    .ok_or_else(|| none(format!("remote {}", index + 1)))?;
                self.remote(r);
            }
        }
        Ok(())
    }

    /// The values of one field: the user's (or the default); checked.
    fn ask(&mut self, a: Ask<'_>) -> Vec<String> {
        let input = a.input;
        let format = input.format.clone().unwrap_or_else(|| "string".into());
        self.fields.push(Field {
            id: a.id.clone(),
            key: a.key.clone(),
            group: a.group,
            variable_of: a.variable_of.clone(),
            description: input.description.clone(),
            required: input.is_required,
            secret: input.is_secret,
            format: format.clone(),
            default: input.default.clone(),
            placeholder: input.placeholder.clone(),
            choices: input.choices.clone(),
            repeated: a.repeated,
        });
        let Some(values) = self.values else {
            return vec![];
        };
        let given = values
            .get(&a.id)
            .map(|v| v.as_str())
            .filter(|v| !v.trim().is_empty())
            .or(input.default.as_deref())
            .unwrap_or("");
        let list: Vec<String> = if a.repeated {
            given
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect()
        } else if given.is_empty() {
            vec![]
        } else {
            vec![given.to_string()]
        };
        if list.is_empty() && input.is_required {
            self.missing.push(a.flag);
            return vec![];
        }
        for v in &list {
            if !input.choices.is_empty() && !input.choices.iter().any(|c| c == v) {
                self.invalid.push(format!(
                    "{} must be one of {}",
                    a.key,
                    input.choices.join(", ")
                ));
            } else if format == "number" && v.trim().parse::<f64>().is_err() {
                self.invalid.push(format!("{} must be a number", a.key));
            } else if format == "boolean" && v != "true" && v != "false" {
                self.invalid
                    .push(format!("{} must be true or false", a.key));
            }
        }
        if input.is_secret && !list.is_empty() {
            self.has_secrets = true;
            if let Secrets::Keychain { server } = self.secrets {
                return list
                    .into_iter()
                    .enumerate()
                    .map(|(i, value)| {
                        let key = if i == 0 {
                            a.key.clone()
                        } else {
                            format!("{}.{}", a.key, i + 1)
                        };
                        let key = match &a.variable_of {
                            Some(parent) => format!("{parent}.{key}"),
                            None => key,
                        };
                        let name = keychain_name(server, &key);
                        self.kept.push(KeptSecret {
                            name: name.clone(),
                            value,
                        });
                        keychain_ref(&name)
                    })
                    .collect();
            }
        }
        list
    }

    /// The values of an input that may be publisher-set with `{variables}`.
    fn input(
        &mut self,
        id: &str,
        key: &str,
        group: FieldGroup,
        iv: &InputWithVariables,
        repeated: bool,
        flag: &str,
    ) -> Vec<String> {
        match &iv.input.value {
            Some(template) => {
                let mut vars = IndexMap::new();
                for (var, input) in &iv.variables {
                    let got = self.ask(Ask {
                        id: format!("{id}/{var}"),
                        key: var.clone(),
                        group,
                        variable_of: Some(key.to_string()),
                        input,
                        repeated: false,
                        flag: format!("{var} (in {key}; {} {var}=…)", flag_of(group)),
                    });
                    if let Some(v) = got.into_iter().next() {
                        vars.insert(var.clone(), v);
                    }
                }
                vec![substitute(template, &vars)]
            }
            None => self.ask(Ask {
                id: id.to_string(),
                key: key.to_string(),
                group,
                variable_of: None,
                input: &iv.input,
                repeated,
                flag: flag.to_string(),
            }),
        }
    }

    fn arguments(&mut self, args: &[Argument], prefix: &str) -> Vec<String> {
        let mut out = vec![];
        for (i, a) in args.iter().enumerate() {
            let named = a.kind == "named";
            let key = if named {
                a.name.clone().unwrap_or_default()
            } else {
                a.value_hint
                    .clone()
                    .or_else(|| a.name.clone())
                    .unwrap_or_else(|| format!("#{}", i + 1))
            };
            let bare = key.trim_start_matches('-').to_string();
            let flag = format!("{bare} (argument; --arg {bare}=…)");
            let values = self.input(
                &format!("{prefix}{key}"),
                &key,
                FieldGroup::Argument,
                &a.input,
                a.is_repeated,
                &flag,
            );
            for v in values {
                if named {
                    out.push(key.clone());
                }
                out.push(v);
            }
            // A named flag with no value at all (`--stdio`): the flag alone.
            if named
                && a.input.input.value.is_none()
                && a.input.input.default.is_none()
                && a.input.input.choices.is_empty()
                && !a.input.input.is_required
                && a.input.input.format.is_none()
                && a.input.input.description.is_none()
                && a.value_hint.is_none()
            {
                self.fields.pop();
                out.push(key.clone());
            }
        }
        out
    }

    fn key_values(
        &mut self,
        items: &[KeyValueInput],
        group: FieldGroup,
    ) -> IndexMap<String, String> {
        let mut out = IndexMap::new();
        for kv in items {
            let (prefix, cli) = match group {
                FieldGroup::Header => ("header", "header"),
                _ => ("env", "env"),
            };
            let flag = format!("{} ({cli}; --{cli} {}=…)", kv.name, kv.name);
            if let Some(v) = self
                .input(
                    &format!("{prefix}:{}", kv.name),
                    &kv.name,
                    group,
                    &kv.input,
                    false,
                    &flag,
                )
                .into_iter()
                .next()
            {
                out.insert(kv.name.clone(), v);
            }
        }
        out
    }

    fn package(&mut self, p: &Package) {
        let version = p.version.clone().filter(|v| !v.trim().is_empty());
        self.label = format!(
            "{} {}{}",
            p.registry_type,
            p.identifier,
            version
                .as_ref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default()
        );
        let kind = p.registry_type.to_ascii_lowercase();
        let need_version = matches!(kind.as_str(), "npm" | "pypi" | "nuget");
        let (runtime, why_not) = match kind.as_str() {
            "npm" => (Some("npx"), None),
            "pypi" => (Some("uvx"), None),
            "oci" => (Some("docker"), None),
            "nuget" => (Some("dnx"), None),
            "mcpb" => (None, Some(format!("it is an MCP bundle (.mcpb), a file to download and unpack, which Switchboard cannot install yet; open {} in a client that installs bundles (e.g. Claude Desktop), or pick another package or remote", p.identifier))),
            other => (None, Some(format!("packages of type \"{other}\" are not known to Switchboard; pick another package or remote"))),
        };
        self.runtime = runtime.map(String::from);
        self.not_installable = why_not;
        if self.not_installable.is_none() && need_version {
            match &version {
                None => self.not_installable = Some(format!("the registry names no version for {}; Switchboard installs exact versions only", p.identifier)),
                Some(v) if !exact_version(v) => self.not_installable = Some(format!("version \"{v}\" of {} is not one exact version; Switchboard installs exact versions only", p.identifier)),
                _ => {}
            }
        }
        if self.not_installable.is_none() && p.transport.kind != "stdio" {
            self.not_installable = Some(format!(
                "this package serves {} on this computer once started ({}); Switchboard runs stdio packages and connects to hosted remotes, so start it yourself and add its URL",
                p.transport.kind,
                p.transport.url.as_deref().unwrap_or("no URL given")
            ));
        }
        let runtime_args = self.arguments(&p.runtime_arguments, "rtarg:");
        let package_args = self.arguments(&p.package_arguments, "arg:");
        let env = self.key_values(&p.environment_variables, FieldGroup::Env);
        let v = version.unwrap_or_default();
        let mut args: Vec<String> = vec![];
        match kind.as_str() {
            "npm" => {
                if !runtime_args.iter().any(|a| a == "-y" || a == "--yes") {
                    args.push("-y".into());
                }
                args.extend(runtime_args);
                args.push(format!("{}@{v}", p.identifier));
                args.extend(package_args);
            }
            "pypi" => {
                args.extend(runtime_args);
                args.push(format!("{}=={v}", p.identifier));
                args.extend(package_args);
            }
            "oci" => {
                args.extend(["run", "-i", "--rm"].map(String::from));
                args.extend(runtime_args);
                // `-e NAME` passes the variable from Switchboard's environment
                // for the container: its value is never on the command line.
                for k in env.keys() {
                    args.push("-e".into());
                    args.push(k.clone());
                }
                let image = if !v.is_empty() && !has_tag(&p.identifier) {
                    format!("{}:{v}", p.identifier)
                } else {
                    p.identifier.clone()
                };
                args.push(image);
                args.extend(package_args);
            }
            "nuget" => {
                args.extend(runtime_args);
                args.push(format!("{}@{v}", p.identifier));
                args.push("--yes".into());
                if !package_args.is_empty() {
                    args.push("--".into());
                    args.extend(package_args);
                }
            }
            _ => {}
        }
        self.args = args;
        self.env = env;
    }

    fn remote(&mut self, r: &Remote) {
        self.label = format!("{} {}", r.kind, r.url);
        self.transport = match r.kind.as_str() {
            "sse" => Transport::Sse,
            "streamable-http" | "http" => Transport::Http,
            other => {
                self.not_installable = Some(format!(
                    "remotes of type \"{other}\" are not known to Switchboard"
                ));
                Transport::Http
            }
        };
        let mut vars = IndexMap::new();
        for (var, input) in &r.variables {
            let got = self.ask(Ask {
                id: format!("url:{var}"),
                key: var.clone(),
                group: FieldGroup::Url,
                variable_of: None,
                input,
                repeated: false,
                flag: format!("{var} (URL; --arg {var}=…)"),
            });
            if let Some(v) = got.into_iter().next() {
                vars.insert(var.clone(), v);
            }
        }
        self.headers = self.key_values(&r.headers, FieldGroup::Header);
        let url = substitute(&r.url, &vars);
        if self.values.is_some() && self.missing.is_empty() {
            if let Err(e) = crate::config::validate::check_url(&url) {
                self.invalid.push(format!("the URL {e}"));
            }
        }
        self.url = Some(url);
    }
}

fn flag_of(group: FieldGroup) -> &'static str {
    match group {
        FieldGroup::Env => "--env",
        FieldGroup::Header => "--header",
        FieldGroup::Argument | FieldGroup::Url => "--arg",
    }
}

/// Field values by id, extra env vars, extra headers.
type FlagValues = (
    HashMap<String, String>,
    Vec<(String, String)>,
    Vec<(String, String)>,
);

/// The field ids the CLI's `--env`, `--header` and `--arg NAME=VALUE` mean
/// for `form`: `NAME` is a field's key (a flag with or without its dashes).
/// Values of repeated fields are joined by line breaks. Env vars and headers
/// the server.json does not declare are returned as extras.
pub fn values_from_flags(
    form: &InstallForm,
    env: &[(String, String)],
    headers: &[(String, String)],
    args: &[(String, String)],
) -> Result<FlagValues, String> {
    let mut values: HashMap<String, String> = HashMap::new();
    let (mut extra_env, mut extra_headers) = (vec![], vec![]);
    let mut put = |id: &str, v: &str, repeated: bool| match values.get_mut(id) {
        Some(old) if repeated => {
            old.push('\n');
            old.push_str(v);
        }
        _ => {
            values.insert(id.to_string(), v.to_string());
        }
    };
    let find = |groups: &[FieldGroup], k: &str| {
        form.fields.iter().find(|f| {
            groups.contains(&f.group)
                && (f.key == k || f.key.trim_start_matches('-') == k.trim_start_matches('-'))
        })
    };
    for (k, v) in env {
        match find(&[FieldGroup::Env], k) {
            Some(f) => put(&f.id, v, f.repeated),
            None => extra_env.push((k.clone(), v.clone())),
        }
    }
    for (k, v) in headers {
        match find(&[FieldGroup::Header], k) {
            Some(f) => put(&f.id, v, f.repeated),
            None => extra_headers.push((k.clone(), v.clone())),
        }
    }
    for (k, v) in args {
        match find(&[FieldGroup::Argument, FieldGroup::Url], k) {
            Some(f) => put(&f.id, v, f.repeated),
            None => {
                let known: Vec<&str> = form
                    .fields
                    .iter()
                    .filter(|f| matches!(f.group, FieldGroup::Argument | FieldGroup::Url))
                    .map(|f| f.key.as_str())
                    .collect();
                return Err(format!(
                    "--arg {k}: this server takes no argument or URL variable named \"{k}\"{}",
                    if known.is_empty() {
                        String::new()
                    } else {
                        format!(" (it takes: {})", known.join(", "))
                    }
                ));
            }
        }
    }
    Ok((values, extra_env, extra_headers))
}
