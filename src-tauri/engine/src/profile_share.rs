//! Sharing a profile with another machine: export it to one JSON document,
//! import that document there with a preview first.
//!
//! The document (`"switchboardProfile": 1`) holds the profile (its name, its
//! servers with their tool rules) and, for each server, its winning
//! definition as an entry of Switchboard's own `servers.json`, with every
//! secret replaced by a reference: a value already written as a reference
//! (`${keychain:…}`, `${VAR}`) stays; a literal credential (judged by
//! `redact::literal_secret`, the masking's judgement: names such as TOKEN,
//! KEY, SECRET, PASSWORD, AUTH, auth schemes, known token shapes) becomes
//! `${keychain:SERVER.KEY}` (env, headers, arguments: Switchboard reads the
//! keychain there at launch) or `${SERVER_KEY}` (a URL's parts, which are
//! expanded from the environment only); a `!command` of Switchboard's own
//! file becomes a keychain reference too (the command is this machine's).
//! The `secrets` section names what the importer must enter; no value is
//! ever in the document.
//!
//! Everything can be exported too, as "all my servers": its document names
//! every enabled server; imported without `--as NAME` its servers join the
//! importer's own Everything and no profile is made.
//!
//! Import refuses, with the field named and nothing written: a file that is
//! not such a document (not JSON, no marker, another version, over
//! [`MAX_DOCUMENT_BYTES`], unknown fields), an entry that is not a valid
//! definition, a profile name that is not valid or is taken here, a profile
//! naming a server the document does not define (or the reverse), and any
//! literal secret value. The preview says which servers it adds to
//! Switchboard's own file, which exist here already (the same definition
//! once shared: reused; another: a conflict, written only with `replace`),
//! which runtimes are missing here, and which secrets to enter. Writing
//! adds the servers through the writer and the profile to the settings as
//! one history entry.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::auth::vault::{Vault, VaultError};
use crate::config::vars::Expansion;
use crate::config::ServerDef;
use crate::discovery::{Discovery, SourceInfo};
use crate::engine::Engine;
use crate::error_code::ErrorCode;
use crate::host::Host;
use crate::launch::CommandResolver;
use crate::profile::{is_everything, Profile, ProfileError, ProfileServer, EVERYTHING};
use crate::redact::{literal_secret, literal_text, looks_secret, url_literal_secrets};
use crate::registry::install::{keychain_name, keychain_ref};
use crate::settings::Settings;
use crate::sources::{Client, Dialect};
use crate::writer::edit::{EditError, ServerEdit, Writer};
use crate::writer::history::{History, Label, Recording};

/// The key that marks a profile document; its value is the format version.
pub const FORMAT_KEY: &str = "switchboardProfile";
/// The version this Switchboard writes and reads.
pub const FORMAT_VERSION: u64 = 1;
/// A profile document is at most this large (a few hundred servers take
/// well under 1 MiB).
pub const MAX_DOCUMENT_BYTES: u64 = 4 * 1024 * 1024;

/// An exported profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileDocument {
    #[serde(rename = "switchboardProfile")]
    pub version: u64,
    pub profile: Profile,
    /// Each server's definition as an entry of Switchboard's own file, by name.
    pub servers: IndexMap<String, Value>,
    /// What the importer must enter, in the order met.
    pub secrets: Vec<SecretRef>,
}

impl ProfileDocument {
    /// The document as written to a file: pretty JSON and a newline.
    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).expect("a profile document serializes") + "\n"
    }
}

/// A secret a definition refers to, which the importer must enter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    pub server: String,
    /// `env.GITHUB_TOKEN`, `headers.Authorization`, `args[3]`, `url`,
    /// `oauth.clientSecret`.
    pub field: String,
    /// What the definition holds instead of the value (`${keychain:NAME}`,
    /// `${VAR}`); absent for an OAuth app's client secret, which is kept in
    /// the keychain beside the sign-in and never in a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reference: Option<String>,
}

impl SecretRef {
    pub fn kind(&self) -> SecretKind {
        match self.reference.as_deref() {
            None => SecretKind::OauthAppSecret,
            Some(r) if r.starts_with(crate::auth::secrets::KEYCHAIN_REF) => SecretKind::Keychain,
            Some(_) => SecretKind::Variable,
        }
    }
}

/// Where a secret to enter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum SecretKind {
    /// The OS keychain, under the name in `${keychain:NAME}`.
    Keychain,
    /// An environment variable Switchboard starts with.
    Variable,
    /// The keychain item of the server's pre-registered OAuth app.
    OauthAppSecret,
}

/// Why an export or import was refused, or what failed while writing.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    /// The document was refused; the message names the field and what to do.
    #[error("{0}")]
    Refused(String),
    /// Servers here differ from the document's; nothing was written.
    #[error("{} defined here differently (kept as they are; nothing was written); import with --replace to write the document's definitions into Switchboard's own file", conflict_list(.0))]
    Conflicts(Vec<String>),
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Edit(#[from] EditError),
    #[error("could not keep the secrets in the keychain: {0}; nothing was written")]
    Keychain(#[from] VaultError),
    #[error("cannot read {}: {message}", path.display())]
    Read { path: PathBuf, message: String },
}

fn conflict_list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    match quoted.len() {
        1 => format!("server {} is", quoted[0]),
        _ => format!("servers {} are", quoted.join(", ")),
    }
}

impl ShareError {
    /// Stable code for the UI (`{code, message}`).
    pub fn code(&self) -> ErrorCode {
        match self {
            ShareError::Refused(_) => ErrorCode::Invalid,
            ShareError::Conflicts(_) => ErrorCode::NameTaken,
            ShareError::Profile(ProfileError::Unknown { .. }) => ErrorCode::NotFound,
            ShareError::Profile(ProfileError::Exists(_)) => ErrorCode::AlreadyExists,
            ShareError::Profile(_) => ErrorCode::Invalid,
            ShareError::Edit(e) => e.code(),
            ShareError::Keychain(VaultError::Unavailable(_)) => ErrorCode::NoKeychain,
            ShareError::Keychain(_) => ErrorCode::Keychain,
            ShareError::Read { .. } => ErrorCode::Io,
        }
    }
}

fn refused(message: impl Into<String>) -> ShareError {
    ShareError::Refused(message.into())
}

// ---- export ------------------------------------------------------------

/// The document for profile `name` ([`EVERYTHING`]: every enabled server):
/// each server's winning definition with its secrets replaced by
/// references. A profile naming a server that no source defines now is
/// refused (the document would name an unknown server), as is one whose
/// server cannot run outside its own client.
pub fn export(
    host: &Host,
    settings: &Settings,
    d: &Discovery,
    name: &str,
) -> Result<ProfileDocument, ShareError> {
    let profile = if is_everything(name) {
        Profile {
            name: EVERYTHING.to_string(),
            servers: d
                .servers
                .iter()
                .filter(|s| {
                    let w = &s.winner;
                    w.is_valid()
                        && w.def.enabled
                        && w.not_runnable.is_none()
                        && !crate::discovery::is_gateway_entry(s.name(), &w.def)
                })
                .map(|s| ProfileServer {
                    name: s.name().to_string(),
                    tools: None,
                })
                .collect(),
        }
    } else {
        let p = settings.profiles.filter(name)?.expect("not Everything");
        let missing: Vec<String> = p
            .servers
            .iter()
            .filter(|s| d.server(&s.name).is_none())
            .map(|s| format!("\"{}\"", s.name))
            .collect();
        if !missing.is_empty() {
            return Err(refused(format!(
                "profile \"{}\" names {} that no source defines here now; add {} back, or take {} out of the profile (`switchboard profile remove {} NAME`), then export again",
                p.name,
                missing.join(", "),
                if missing.len() == 1 { "it" } else { "them" },
                if missing.len() == 1 { "it" } else { "them" },
                p.name
            )));
        }
        p.clone()
    };
    let mut servers = IndexMap::new();
    let mut secrets = vec![];
    for s in &profile.servers {
        let found = d.server(&s.name).expect("checked above");
        let w = &found.winner;
        if !w.is_valid() {
            return Err(refused(format!(
                "server \"{}\" has no valid definition ({}; `switchboard discover` says what is wrong); fix it, then export again",
                s.name,
                w.path.display(),
            )));
        }
        if let Some(why) = &w.not_runnable {
            return Err(refused(format!(
                "server \"{}\" is {why}: only its own client can run it, so it cannot be shared; take it out of the profile, then export again",
                s.name
            )));
        }
        let (def, found_secrets) = share_def(&w.def, w.expansion, &host.vars);
        servers.insert(s.name.clone(), Value::Object(entry_of(&def)));
        secrets.extend(found_secrets);
    }
    Ok(ProfileDocument {
        version: FORMAT_VERSION,
        profile,
        servers,
        secrets,
    })
}

/// `def` as an entry of Switchboard's own file (with `enabled: false` when
/// it is off).
fn entry_of(def: &ServerDef) -> Map<String, Value> {
    let own = Dialect::Switchboard;
    let mut entry = own
        .to_entry(&own.storable(def))
        .expect("Switchboard's own format stores every field");
    if !def.enabled {
        entry.insert("enabled".into(), Value::Bool(false));
    }
    entry
}

/// `def` with every secret replaced by a reference, and the references the
/// importer must fill. `expansion` is the rules of the file it came from
/// (its forms of variables become Switchboard's `${VAR}`), `vars` this
/// machine's environment (a bare variable name in Switchboard's own file is
/// a reference only when that variable is set).
pub fn share_def(
    def: &ServerDef,
    expansion: Expansion,
    vars: &HashMap<String, String>,
) -> (ServerDef, Vec<SecretRef>) {
    let mut s = Sharing {
        server: &def.name,
        expansion,
        vars,
        secrets: vec![],
        variables: vec![],
    };
    let mut out = def.clone();
    for (k, v) in out.env.iter_mut() {
        *v = s.value(&format!("env.{k}"), k, k, v);
    }
    for (k, v) in out.headers.iter_mut() {
        *v = s.value(&format!("headers.{k}"), k, &format!("header.{k}"), v);
    }
    out.args = s.args(&def.args);
    if let Some(url) = &def.url {
        out.url = Some(s.url(url));
    }
    if let Some(o) = out.oauth.as_mut() {
        if o.client_secret.take().is_some() {
            s.secrets.push(SecretRef {
                server: def.name.clone(),
                field: "oauth.clientSecret".into(),
                reference: None,
            });
        }
    }
    (out, s.secrets)
}

struct Sharing<'a> {
    server: &'a str,
    expansion: Expansion,
    vars: &'a HashMap<String, String>,
    secrets: Vec<SecretRef>,
    /// Variables named for URL parts so far (each name once).
    variables: Vec<String>,
}

impl Sharing<'_> {
    /// One env or header value (`field` as the document names it, `name`
    /// the variable or header, `label` its keychain name's key).
    fn value(&mut self, field: &str, name: &str, label: &str, raw: &str) -> String {
        let raw = self.reference_form(raw);
        let shared = if self.expansion.commands && raw.starts_with('!') {
            keychain_ref(&keychain_name(self.server, label))
        } else {
            match literal_secret(name, &raw) {
                Some(start) => format!(
                    "{}{}",
                    &raw[..start],
                    keychain_ref(&keychain_name(self.server, label))
                ),
                None => raw,
            }
        };
        let header = field.starts_with("headers.");
        self.note_refs(field, &shared, header || looks_secret(name));
        shared
    }

    /// A value in Switchboard's spelling of the references its file's
    /// client reads: `$VAR` (Gemini CLI) and a bare variable name
    /// (Switchboard's own file, when set here) become `${VAR}`.
    fn reference_form(&self, raw: &str) -> String {
        if self.expansion.env_names
            && is_var_name(raw)
            && self.vars.get(raw).is_some_and(|v| !v.is_empty())
        {
            return format!("${{{raw}}}");
        }
        if !self.expansion.dollar {
            return raw.to_string();
        }
        let mut out = String::with_capacity(raw.len() + 4);
        let mut rest = raw;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            let n = after
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            if n > 0 {
                out.push_str(&format!("${{{}}}", &after[..n]));
            } else {
                out.push('$');
            }
            rest = &after[n..];
        }
        out.push_str(rest);
        out
    }

    /// The arguments: `--flag=VALUE`, `--flag VALUE` and `Name: VALUE`
    /// judged by the flag's or header's name, any other by its shape.
    fn args(&mut self, args: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(args.len());
        for (i, raw) in args.iter().enumerate() {
            let raw = self.reference_form(raw);
            let field = format!("args[{i}]");
            let flag_before = i
                .checked_sub(1)
                .map(|j| args[j].as_str())
                .filter(|a| a.starts_with('-') && !a.contains('='))
                .map(|a| a.trim_start_matches('-').to_string());
            let (prefix, name, value) = if let Some((flag, value)) = raw
                .strip_prefix('-')
                .and_then(|_| raw.split_once('='))
                .filter(|(f, _)| !f.contains(' '))
            {
                (
                    format!("{flag}="),
                    flag.trim_start_matches('-').to_string(),
                    value.to_string(),
                )
            } else if let Some((header, value)) = raw.split_once(": ").filter(|(h, _)| {
                !h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            }) {
                (
                    format!("{header}: "),
                    format!("header.{header}"),
                    value.to_string(),
                )
            } else if let Some(flag) = flag_before.filter(|_| !raw.starts_with('-')) {
                (String::new(), flag, raw.clone())
            } else {
                (String::new(), String::new(), raw.clone())
            };
            let judged = name.strip_prefix("header.").unwrap_or(&name);
            let shared = match literal_secret(judged, &value) {
                Some(start) => {
                    let label = if name.is_empty() {
                        format!("arg{i}")
                    } else {
                        name.clone()
                    };
                    format!(
                        "{prefix}{}{}",
                        &value[..start],
                        keychain_ref(&keychain_name(self.server, &label))
                    )
                }
                None => raw.clone(),
            };
            let secret_place = !name.is_empty() && looks_secret(judged);
            self.note_refs(&field, &shared, secret_place);
            out.push(shared);
        }
        out
    }

    /// The URL with its literal credential parts as `${SERVER_KEY}`.
    fn url(&mut self, raw: &str) -> String {
        let raw = self.reference_form(raw);
        let mut url = raw.clone();
        // From the end, so the earlier ranges stay where they are.
        for (key, range) in url_literal_secrets(&raw).into_iter().rev() {
            let key = match key.as_str() {
                "path" => "path_token".to_string(),
                _ => key,
            };
            let var = self.variable_name(&key);
            url.replace_range(range, &format!("${{{var}}}"));
        }
        self.note_refs("url", &url, true);
        url
    }

    /// `SERVER_KEY` in upper case, made unique among this server's.
    fn variable_name(&mut self, key: &str) -> String {
        let clean = |s: &str| {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_uppercase()
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        };
        let base = format!("{}_{}", clean(self.server), clean(key));
        let mut name = base.clone();
        let mut n = 2;
        while self.variables.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.variables.push(name.clone());
        name
    }

    /// Every keychain reference in `value`, and its variables when the
    /// place holds a credential, go to the secrets to enter.
    fn note_refs(&mut self, field: &str, value: &str, secret_place: bool) {
        for r in references(value) {
            let keychain = r.starts_with(crate::auth::secrets::KEYCHAIN_REF);
            let builtin = matches!(
                r.as_str(),
                "${workspaceFolder}" | "${userHome}" | "${HOME}" | "${USER}" | "${PATH}"
            ) || r.starts_with("${input:");
            if keychain || (secret_place && !builtin) {
                let item = SecretRef {
                    server: self.server.to_string(),
                    field: field.to_string(),
                    reference: Some(r),
                };
                if !self.secrets.contains(&item) {
                    self.secrets.push(item);
                }
            }
        }
    }
}

/// The `${…}` references in `value`, as written.
fn references(value: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        out.push(rest[start..start + end + 1].to_string());
        rest = &rest[start + end + 1..];
    }
    out
}

fn is_var_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// ---- import ------------------------------------------------------------

/// How to import.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ImportOptions {
    /// The name of the profile made here (default: the document's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub as_name: Option<String>,
    /// Write the document's definition of a server defined here
    /// differently into Switchboard's own file.
    #[serde(default)]
    pub replace: bool,
}

/// What importing a document would do here.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ImportPreview {
    /// The profile it makes; absent for an export of Everything imported
    /// without a name (its servers join Everything here).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub profile: Option<String>,
    /// The same profile (servers and tool rules) is here already.
    pub profile_exists: bool,
    /// The profile's servers with their tool rules, in its order.
    pub profile_servers: Vec<ProfileServer>,
    /// Switchboard's own file, where the servers go.
    #[cfg_attr(feature = "ts", ts(as = "String"))]
    pub file: PathBuf,
    pub servers: Vec<ServerPlan>,
    /// Servers defined here differently (written only with `replace`).
    pub conflicts: Vec<String>,
    pub missing_runtimes: Vec<MissingRuntime>,
    pub secrets: Vec<SecretToEnter>,
    /// Whether importing would write anything.
    pub writes: bool,
}

/// What importing does with one server.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerPlan {
    pub name: String,
    pub action: ServerAction,
    /// Where the server is defined here now (client and file).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub existing: Option<String>,
    /// Something to know about it (a definition that still wins over it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub note: Option<String>,
    /// The definition the document gives.
    pub def: ServerDef,
    #[serde(skip)]
    in_own_file: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ServerAction {
    /// Added to Switchboard's own file.
    Add,
    /// Defined here the same way (once its secrets are references): used as it is.
    Reuse,
    /// Defined here differently; the document's goes into Switchboard's own file (`replace`).
    Replace,
    /// Defined here differently; kept, and nothing is written (without `replace`).
    Conflict,
}

/// A program a server starts that this machine does not have.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MissingRuntime {
    pub server: String,
    pub program: String,
    /// What it comes with (`Node.js`), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub runtime: Option<String>,
    /// How to install it on this system.
    pub install: String,
}

/// A secret the importer enters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SecretToEnter {
    pub server: String,
    pub field: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reference: Option<String>,
    pub kind: SecretKind,
    /// What to give its value as (`NAME=VALUE`): the keychain name, the
    /// variable, or `SERVER.oauth.clientSecret`.
    pub name: String,
    /// A variable already set in this process's environment.
    pub set: bool,
}

/// What an import wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub preview: ImportPreview,
    /// The history entry of the writes (undo it to take the import back).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub history_id: Option<u64>,
    /// Secrets entered and kept in the keychain, by name.
    pub kept: Vec<String>,
    /// Secrets still to enter.
    pub to_enter: Vec<SecretToEnter>,
}

/// Read a document from `path`, refusing a file over [`MAX_DOCUMENT_BYTES`]
/// before reading it.
pub fn read_document(path: &Path) -> Result<String, ShareError> {
    use std::io::Read;
    let failed = |e: std::io::Error| ShareError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let f = std::fs::File::open(path).map_err(failed)?;
    let too_big = |n: u64| {
        refused(format!(
            "{} is not a Switchboard profile document: it is {n} bytes, and a profile document is at most {} MiB; export the profile again (`switchboard profile export NAME -o FILE`)",
            path.display(),
            MAX_DOCUMENT_BYTES / (1024 * 1024)
        ))
    };
    let len = f.metadata().map_err(failed)?.len();
    if len > MAX_DOCUMENT_BYTES {
        return Err(too_big(len));
    }
    let mut bytes = vec![];
    f.take(MAX_DOCUMENT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| {
        refused(format!(
            "{} is not a Switchboard profile document: it is not UTF-8 text",
            path.display()
        ))
    })
}

/// A document read and checked: the profile and each server's definition.
struct Checked {
    profile: Profile,
    servers: Vec<ServerDef>,
    /// Servers whose OAuth app's client secret the importer enters.
    app_secrets: Vec<String>,
}

const NOT_A_DOCUMENT: &str = "not a Switchboard profile document";

/// Parse and check a document; every refusal names the field.
fn check_document(text: &str) -> Result<Checked, ShareError> {
    if text.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(refused(format!(
            "{NOT_A_DOCUMENT}: it is {} bytes, and a profile document is at most {} MiB",
            text.len(),
            MAX_DOCUMENT_BYTES / (1024 * 1024)
        )));
    }
    let doc: Value = serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(text))
        .map_err(|e| {
            refused(format!(
                "{NOT_A_DOCUMENT}: it is not JSON (line {}, column {}: {}); a profile export is the JSON `switchboard profile export NAME` writes",
                e.line(),
                e.column(),
                e.to_string().split(" at line").next().unwrap_or_default()
            ))
        })?;
    let Value::Object(top) = doc else {
        return Err(refused(format!(
            "{NOT_A_DOCUMENT}: it is {}, not an object with \"{FORMAT_KEY}\"",
            crate::sources::dialect::kind(&doc)
        )));
    };
    match top.get(FORMAT_KEY) {
        None => {
            return Err(refused(format!(
                "{NOT_A_DOCUMENT}: \"{FORMAT_KEY}\" is missing (a profile export starts with \"{FORMAT_KEY}\": {FORMAT_VERSION}); export the profile with `switchboard profile export NAME -o FILE`"
            )))
        }
        Some(v) if v.as_u64() == Some(FORMAT_VERSION) => {}
        Some(v) => {
            return Err(refused(format!(
                "\"{FORMAT_KEY}\" is {v}; this Switchboard reads version {FORMAT_VERSION} only: export the profile again with this version, or update Switchboard"
            )))
        }
    }
    const TOP: &[&str] = &[FORMAT_KEY, "profile", "servers", "secrets"];
    if let Some(k) = top.keys().find(|k| !TOP.contains(&k.as_str())) {
        return Err(refused(format!(
            "\"{k}\" is not a field of a profile document (it has {}); remove it",
            TOP.join(", ")
        )));
    }
    let profile = check_profile(top.get("profile"))?;
    let Some(Value::Object(entries)) = top.get("servers") else {
        return Err(refused(match top.get("servers") {
            None => "\"servers\" is missing: the document holds no definitions; export the profile again".to_string(),
            Some(v) => format!("\"servers\" should be an object of definitions by name, found {}", crate::sources::dialect::kind(v)),
        }));
    };
    for (i, s) in profile.servers.iter().enumerate() {
        if !entries.contains_key(&s.name) {
            return Err(refused(format!(
                "profile.servers[{i}] names server \"{}\", which is not in \"servers\": the document names a server it does not define; export it again on the machine it came from",
                s.name
            )));
        }
    }
    if let Some(name) = entries.keys().find(|n| !profile.includes(n)) {
        return Err(refused(format!(
            "servers.{name} is not one of the profile's servers (profile.servers); remove it, or add it to the profile"
        )));
    }
    let servers = profile
        .servers
        .iter()
        .map(|s| check_entry(&s.name, &entries[&s.name]))
        .collect::<Result<Vec<_>, _>>()?;
    let listed = check_secrets_section(top.get("secrets"), entries)?;
    // An OAuth app's client secret is never in a definition: only the
    // section says the server needs one.
    let app_secrets = listed
        .into_iter()
        .filter(|r| r.kind() == SecretKind::OauthAppSecret)
        .filter(|r| {
            servers
                .iter()
                .any(|d| d.name == r.server && d.oauth.is_some())
        })
        .map(|r| r.server)
        .collect();
    Ok(Checked {
        profile,
        servers,
        app_secrets,
    })
}

fn check_profile(v: Option<&Value>) -> Result<Profile, ShareError> {
    let Some(Value::Object(p)) = v else {
        return Err(refused(match v {
            None => "\"profile\" is missing; export the profile again".to_string(),
            Some(v) => format!(
                "\"profile\" should be an object with \"name\" and \"servers\", found {}",
                crate::sources::dialect::kind(v)
            ),
        }));
    };
    if let Some(k) = p
        .keys()
        .find(|k| !["name", "servers"].contains(&k.as_str()))
    {
        return Err(refused(format!(
            "profile.{k} is not a field of a profile (it has name and servers); remove it"
        )));
    }
    let Some(Value::String(name)) = p.get("name") else {
        return Err(refused("profile.name is missing or not text"));
    };
    let list = match p.get("servers") {
        Some(Value::Array(l)) => l.as_slice(),
        None => &[],
        Some(v) => {
            return Err(refused(format!(
                "profile.servers should be a list of servers, found {}",
                crate::sources::dialect::kind(v)
            )))
        }
    };
    let mut servers: Vec<ProfileServer> = vec![];
    for (i, s) in list.iter().enumerate() {
        let at = format!("profile.servers[{i}]");
        if let Value::Object(m) = s {
            if let Some(k) = m.keys().find(|k| !["name", "tools"].contains(&k.as_str())) {
                return Err(refused(format!(
                    "{at}.{k} is not a field of a profile's server (it has name and tools); remove it"
                )));
            }
        }
        // serde's message may quote the value: it is left out.
        let server: ProfileServer = serde_json::from_value(s.clone()).map_err(|_| {
            refused(format!(
                "{at} is not a profile's server: it is {{\"name\": SERVER}}, with \"tools\": {{\"allow\": [TOOL, …]}} or {{\"deny\": [TOOL, …]}} if some tools are left out"
            ))
        })?;
        if let Err(e) = crate::config::validate::validate_name(&server.name) {
            return Err(refused(format!("{at}.name: {e}")));
        }
        if servers.iter().any(|x| x.name == server.name) {
            return Err(refused(format!(
                "{at}.name: server \"{}\" is in the profile twice",
                server.name
            )));
        }
        servers.push(server);
    }
    Ok(Profile {
        name: name.clone(),
        servers,
    })
}

/// The `secrets` section is for people; it is checked only for its shape
/// and for values where references belong.
fn check_secrets_section(
    v: Option<&Value>,
    servers: &Map<String, Value>,
) -> Result<Vec<SecretRef>, ShareError> {
    let list = match v {
        None => return Ok(vec![]),
        Some(Value::Array(l)) => l,
        Some(v) => {
            return Err(refused(format!(
                "\"secrets\" should be a list, found {}",
                crate::sources::dialect::kind(v)
            )))
        }
    };
    let mut out = vec![];
    for (i, s) in list.iter().enumerate() {
        let item: SecretRef = serde_json::from_value(s.clone()).map_err(|_| {
            refused(format!(
                "secrets[{i}] is not a secret reference: it is {{\"server\": text, \"field\": text, \"reference\": text}}"
            ))
        })?;
        if let Value::Object(m) = s {
            if let Some(k) = m
                .keys()
                .find(|k| !["server", "field", "reference"].contains(&k.as_str()))
            {
                return Err(refused(format!(
                    "secrets[{i}].{k} is not a field of a secret reference (it has server, field and reference); exports hold references only, never values: remove it"
                )));
            }
        }
        if let Some(r) = &item.reference {
            if literal_secret("reference", r).is_some() || literal_text(r).trim() == r.trim() {
                return Err(refused(format!(
                    "secrets[{i}].reference of server \"{}\" is not a reference (${{keychain:NAME}} or ${{VAR}}); exports hold references only, never values",
                    item.server
                )));
            }
        }
        for (field, text) in [("server", &item.server), ("field", &item.field)] {
            if literal_secret("", text).is_some() {
                return Err(refused(format!(
                    "secrets[{i}].{field} carries a secret value; exports hold references only, never values"
                )));
            }
        }
        if !servers.contains_key(&item.server) {
            return Err(refused(format!(
                "secrets[{i}].server names server \"{}\", which is not in \"servers\"; remove it",
                item.server
            )));
        }
        out.push(item);
    }
    Ok(out)
}

/// One server's entry: known keys, a valid definition, no literal secret.
fn check_entry(name: &str, entry: &Value) -> Result<ServerDef, ShareError> {
    crate::config::validate::validate_name(name)
        .map_err(|e| refused(format!("servers.{name}: {e}")))?;
    let own = Dialect::Switchboard;
    let Value::Object(m) = entry else {
        return Err(refused(format!(
            "servers.{name} should be a server definition (an object), found {}",
            crate::sources::dialect::kind(entry)
        )));
    };
    let owned = own.owned_keys();
    if let Some(k) = m.keys().find(|k| !owned.contains(&k.as_str())) {
        return Err(refused(format!(
            "servers.{name}.{k} is not a field of Switchboard's server format; remove it"
        )));
    }
    let parsed = own.parse_entry(name, entry);
    // Secrets first: an issue's message may quote the value it is about.
    refuse_literal_secrets(&parsed.def)?;
    if let Some(issue) = parsed.issues.first() {
        let field = issue
            .field
            .as_deref()
            .map(|f| format!(".{f}"))
            .unwrap_or_default();
        return Err(refused(format!(
            "servers.{name}{field}: {}; fix the definition or export it again",
            issue.message
        )));
    }
    if let Some(why) = parsed.not_runnable {
        return Err(refused(format!("servers.{name} is {why}")));
    }
    Ok(parsed.def)
}

/// Any literal secret in a definition refuses the document: the same
/// judgement the export replaced values by.
fn refuse_literal_secrets(def: &ServerDef) -> Result<(), ShareError> {
    let carries = |field: &str| {
        refused(format!(
            "field {field} of server \"{}\" carries a secret value; exports hold references only (${{keychain:NAME}} or ${{VAR}}), never values: replace it with a reference, and do not pass the value around in files",
            def.name
        ))
    };
    let command = |field: &str| {
        refused(format!(
            "field {field} of server \"{}\" runs a command (a value starting with \"!\"); exports hold references only (${{keychain:NAME}} or ${{VAR}}): replace it with a reference",
            def.name
        ))
    };
    for (group, map) in [("env", &def.env), ("headers", &def.headers)] {
        for (k, v) in map {
            let field = format!("{group}.{k}");
            if v.starts_with('!') {
                return Err(command(&field));
            }
            if literal_secret(k, v).is_some() {
                return Err(carries(&field));
            }
        }
    }
    // The export's own judgement of arguments: anything it would replace is a value.
    let (shared, _) = share_def(
        &ServerDef {
            name: def.name.clone(),
            args: def.args.clone(),
            url: def.url.clone(),
            ..Default::default()
        },
        Expansion::NONE,
        &HashMap::new(),
    );
    if let Some(i) = (0..def.args.len()).find(|i| shared.args[*i] != def.args[*i]) {
        return Err(carries(&format!("args[{i}]")));
    }
    if shared.url != def.url {
        return Err(carries("url"));
    }
    if def
        .oauth
        .as_ref()
        .is_some_and(|o| o.client_secret.is_some())
    {
        return Err(carries("oauth.clientSecret"));
    }
    Ok(())
}

/// The preview of importing `text` here. `resolver` finds the programs
/// servers start (missing ones are reported, not refused).
pub fn preview(
    host: &Host,
    settings: &Settings,
    d: &Discovery,
    text: &str,
    opts: &ImportOptions,
    resolver: &CommandResolver,
) -> Result<ImportPreview, ShareError> {
    let checked = check_document(text)?;
    let own = own_source(d)?;
    let name = match &opts.as_name {
        Some(n) => Some(n.trim().to_string()),
        None if is_everything(&checked.profile.name) => None,
        None => Some(checked.profile.name.clone()),
    };
    let mut profile_exists = false;
    if let Some(n) = &name {
        let field = if opts.as_name.is_some() {
            "--as"
        } else {
            "profile.name"
        };
        if is_everything(n) {
            return Err(refused(format!(
                "{field}: \"{n}\" is the built-in profile (every server); import under another name (--as NEW-NAME)"
            )));
        }
        if let Err(e) = crate::profile::check_name(n) {
            return Err(refused(format!(
                "{field}: {e}; import under another name (--as NEW-NAME)"
            )));
        }
        if let Some(here) = settings.profiles.get(n) {
            if here.servers != checked.profile.servers {
                return Err(refused(format!(
                    "{field}: a profile named \"{}\" exists here already, with other servers or tool rules; import under another name (--as NEW-NAME)",
                    here.name
                )));
            }
            profile_exists = true;
        }
    }
    let mut servers = vec![];
    let mut conflicts = vec![];
    for def in checked.servers {
        let found = d.server(&def.name);
        let in_own_file = found.is_some_and(|s| s.definitions.iter().any(|x| x.source == own.id));
        let (action, existing, note) = match found {
            None => (ServerAction::Add, None, None),
            Some(s) => {
                let w = &s.winner;
                let (shared_here, _) = share_def(&w.def, w.expansion, &host.vars);
                let existing = d
                    .source(&w.source)
                    .map(|src| format!("{} ({})", src.client_name, src.path.display()));
                if w.is_valid() && same_definition(&shared_here, &def) {
                    (ServerAction::Reuse, existing, None)
                } else if opts.replace {
                    let still_wins = d
                        .source(&w.source)
                        .filter(|src| src.id != own.id && src.priority < own.priority)
                        .map(|src| format!("{}'s definition still wins: its file comes before Switchboard's own in the source order", src.client_name));
                    (ServerAction::Replace, existing, still_wins)
                } else {
                    conflicts.push(def.name.clone());
                    (ServerAction::Conflict, existing, None)
                }
            }
        };
        servers.push(ServerPlan {
            name: def.name.clone(),
            action,
            existing,
            note,
            def,
            in_own_file,
        });
    }
    let missing_runtimes = servers
        .iter()
        .filter_map(|s| missing_runtime(&s.def, resolver))
        .collect();
    let secrets = secrets_to_enter(host, servers.iter().map(|s| &s.def), &checked.app_secrets);
    let writes = servers
        .iter()
        .any(|s| matches!(s.action, ServerAction::Add | ServerAction::Replace))
        || (name.is_some() && !profile_exists);
    Ok(ImportPreview {
        profile: name,
        profile_exists,
        profile_servers: checked.profile.servers,
        file: own.path.clone(),
        servers,
        conflicts,
        missing_runtimes,
        secrets,
        writes,
    })
}

fn own_source(d: &Discovery) -> Result<&SourceInfo, ShareError> {
    d.sources
        .iter()
        .find(|s| s.client == Client::Switchboard)
        .ok_or_else(|| ShareError::Edit(EditError::UnknownSource("switchboard".into())))
}

/// Two definitions as Switchboard's own file would hold them, on or off alike.
fn same_definition(a: &ServerDef, b: &ServerDef) -> bool {
    let norm = |d: &ServerDef| {
        let mut d = Dialect::Switchboard
            .parse_entry(&d.name, &Value::Object(entry_of(d)))
            .def;
        d.enabled = true;
        d
    };
    norm(a) == norm(b)
}

/// The program a stdio server starts, when this machine does not have it.
fn missing_runtime(def: &ServerDef, resolver: &CommandResolver) -> Option<MissingRuntime> {
    if def.transport != crate::config::Transport::Stdio {
        return None;
    }
    let command = def.command.as_deref()?.trim();
    if command.is_empty() || command.contains("${") {
        return None;
    }
    let has_separator = command.contains('/') || (cfg!(windows) && command.contains('\\'));
    let found = if has_separator {
        Path::new(command).is_absolute() && Path::new(command).exists()
    } else {
        resolver.resolve(command, None).is_ok()
    };
    if found || (has_separator && !Path::new(command).is_absolute()) {
        // A relative path depends on the working folder: not judged here.
        return None;
    }
    let program = command
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(command)
        .to_string();
    let hint = crate::doctor::runtime_hint(&program, crate::doctor::this_os());
    Some(MissingRuntime {
        server: def.name.clone(),
        install: hint
            .as_ref()
            .map(|h| h.install.clone())
            .unwrap_or_else(|| format!("Install {program} so that it is on your PATH.")),
        runtime: hint.map(|h| h.runtime.to_string()),
        program: command.to_string(),
    })
}

/// The secrets the definitions refer to, as the importer enters them.
fn secrets_to_enter<'a>(
    host: &Host,
    defs: impl Iterator<Item = &'a ServerDef>,
    app_secrets: &[String],
) -> Vec<SecretToEnter> {
    let mut out: Vec<SecretToEnter> = vec![];
    for def in defs {
        // As the export judged them (Switchboard's own rules: the file they go to).
        let (_, mut refs) = share_def(def, Expansion::SWITCHBOARD, &HashMap::new());
        if app_secrets.contains(&def.name) {
            refs.push(SecretRef {
                server: def.name.clone(),
                field: "oauth.clientSecret".into(),
                reference: None,
            });
        }
        for r in refs {
            let kind = r.kind();
            let name = match (&kind, r.reference.as_deref()) {
                (SecretKind::OauthAppSecret, _) | (_, None) => {
                    format!("{}.oauth.clientSecret", r.server)
                }
                (_, Some(reference)) => reference_name(reference),
            };
            if out.iter().any(|x| x.name == name && x.kind == kind) {
                continue;
            }
            out.push(SecretToEnter {
                set: kind == SecretKind::Variable && host.var(&name).is_some(),
                server: r.server,
                field: r.field,
                reference: r.reference,
                kind,
                name,
            });
        }
    }
    out
}

/// `NAME` of `${keychain:NAME}`, `VAR` of `${VAR}`, `${env:VAR}` or `${VAR:-x}`.
fn reference_name(reference: &str) -> String {
    let inner = reference
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .unwrap_or(reference);
    let inner = inner
        .strip_prefix("keychain:")
        .or_else(|| inner.strip_prefix("env:"))
        .unwrap_or(inner);
    inner.split(":-").next().unwrap_or(inner).to_string()
}

/// Import `text`: check it and plan as [`preview`] does, keep the secret
/// `values` given (by [`SecretToEnter::name`]) in `vault`, then write the
/// servers into Switchboard's own file and the profile into the settings,
/// all recorded as one history entry. Refused (nothing written, no secret
/// kept) while servers conflict without `replace`, or when a value names
/// no secret the document asks for. A write that fails half-way is undone.
#[allow(clippy::too_many_arguments)]
pub fn import(
    host: &Host,
    settings: &mut Settings,
    d: &Discovery,
    text: &str,
    opts: &ImportOptions,
    resolver: &CommandResolver,
    values: &BTreeMap<String, String>,
    vault: Option<&Vault>,
) -> Result<ImportReport, ShareError> {
    let plan = preview(host, settings, d, text, opts, resolver)?;
    if !plan.conflicts.is_empty() {
        return Err(ShareError::Conflicts(plan.conflicts.clone()));
    }
    let enterable = |s: &SecretToEnter| s.kind != SecretKind::Variable;
    for k in values.keys() {
        if !plan.secrets.iter().any(|s| enterable(s) && &s.name == k) {
            let names: Vec<&str> = plan
                .secrets
                .iter()
                .filter(|s| enterable(s))
                .map(|s| s.name.as_str())
                .collect();
            return Err(refused(format!(
                "{k} is not a secret this profile asks for (it asks for: {}); nothing was written",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        }
    }
    let given: Vec<(&SecretToEnter, &String)> = plan
        .secrets
        .iter()
        .filter(|s| enterable(s))
        .filter_map(|s| {
            values
                .get(&s.name)
                .filter(|v| !v.is_empty())
                .map(|v| (s, v))
        })
        .collect();
    let mut kept: Vec<&SecretToEnter> = vec![];
    if !given.is_empty() {
        let vault = vault.ok_or_else(|| {
            ShareError::Keychain(VaultError::Unavailable("no keychain was given".into()))
        })?;
        for (s, v) in &given {
            let r = match s.kind {
                SecretKind::OauthAppSecret => vault.put_app_secret(&s.server, v),
                _ => vault.put_secret(&s.name, v),
            };
            if let Err(e) = r {
                forget(vault, &kept);
                return Err(e.into());
            }
            kept.push(s);
        }
    }
    let label = match &plan.profile {
        Some(p) => format!("import profile \"{p}\""),
        None => "import servers".to_string(),
    };
    let recording = Recording::begin(host, Label::fixed(None, label));
    let written = write_plan(host, settings, d, &plan);
    let entry = recording.finish();
    match written {
        Ok(()) => {}
        Err(e) => {
            if let Some(entry) = &entry {
                let _ = History::for_host(host).undo(Some(entry.id));
            }
            if let Some(vault) = vault {
                forget(vault, &kept);
            }
            return Err(e);
        }
    }
    let to_enter = plan
        .secrets
        .iter()
        .filter(|s| !kept.iter().any(|k| k.name == s.name && k.kind == s.kind))
        .cloned()
        .collect();
    Ok(ImportReport {
        history_id: entry.map(|e| e.id),
        kept: kept.iter().map(|s| s.name.clone()).collect(),
        to_enter,
        preview: plan,
    })
}

fn forget(vault: &Vault, kept: &[&SecretToEnter]) {
    for s in kept {
        let _ = match s.kind {
            SecretKind::OauthAppSecret => vault.remove_app_secret(&s.server),
            _ => vault.remove_secret(&s.name),
        };
    }
}

fn write_plan(
    host: &Host,
    settings: &mut Settings,
    d: &Discovery,
    plan: &ImportPreview,
) -> Result<(), ShareError> {
    let own = own_source(d)?;
    let spec = own
        .spec
        .clone()
        .ok_or_else(|| EditError::UnknownSource(own.id.clone()))?;
    // The first write checks the file against what the preview read; the
    // next ones against what the one before wrote.
    let mut seen = own.hash;
    for s in &plan.servers {
        let edit = match (s.action, s.in_own_file) {
            (ServerAction::Add, _) | (ServerAction::Replace, false) => {
                ServerEdit::Add(s.def.clone())
            }
            (ServerAction::Replace, true) => ServerEdit::Update {
                name: s.name.clone(),
                def: s.def.clone(),
            },
            (ServerAction::Reuse | ServerAction::Conflict, _) => continue,
        };
        Writer::new(host, settings).apply(&spec, edit, seen.take())?;
    }
    if let (Some(name), false) = (&plan.profile, plan.profile_exists) {
        let servers = plan.profile_servers.clone();
        *settings = crate::profiles::change(host, |p| {
            p.create(name)?.servers = servers.clone();
            Ok(())
        })
        .map_err(EditError::from)?;
    }
    Ok(())
}

/// How servers' commands are found here, as the manager finds them: this
/// host's PATH, then the login shell's (which runs once per process).
pub fn resolver_for(host: &Host) -> CommandResolver {
    CommandResolver::new(
        host.var("PATH").map(Into::into),
        Some(host.home.clone()),
        crate::launch::login_shell_path().map(String::from),
    )
}

// ---- for the app ---------------------------------------------------------

impl Engine {
    /// The snapshot, discovered first when nothing has been yet.
    fn discovered(&self) -> std::sync::Arc<Discovery> {
        let d = self.snapshot();
        if d.sources.is_empty() {
            return self.rediscover();
        }
        d
    }

    /// Profile `name` (Everything: every enabled server) as a document to
    /// share; [`ProfileDocument::to_text`] is what a file holds.
    pub fn export_profile(&self, name: &str) -> Result<ProfileDocument, ShareError> {
        let (settings, _) = Settings::load(self.host());
        export(self.host(), &settings, &self.discovered(), name)
    }

    /// What importing the document `text` would do here; nothing is written.
    pub async fn preview_import(
        &self,
        text: String,
        opts: ImportOptions,
    ) -> Result<ImportPreview, ShareError> {
        let (host, d) = (self.host().clone(), self.discovered());
        tokio::task::spawn_blocking(move || {
            let (settings, _) = Settings::load(&host);
            preview(&host, &settings, &d, &text, &opts, &resolver_for(&host))
        })
        .await
        .map_err(|e| refused(format!("the import stopped: {e}")))?
    }

    /// Import the document `text`; `values` are the secrets the user
    /// entered, by [`SecretToEnter::name`] (kept in the keychain first).
    /// The servers it adds start as after any edit.
    pub async fn import_profile(
        &self,
        text: String,
        opts: ImportOptions,
        values: BTreeMap<String, String>,
    ) -> Result<ImportReport, ShareError> {
        let (host, d) = (self.host().clone(), self.discovered());
        let vault = self.manager().vault().unwrap_or_else(Vault::keychain);
        let report = tokio::task::spawn_blocking(move || {
            let (mut settings, _) = Settings::load(&host);
            import(
                &host,
                &mut settings,
                &d,
                &text,
                &opts,
                &resolver_for(&host),
                &values,
                Some(&vault),
            )
        })
        .await
        .map_err(|e| refused(format!("the import stopped: {e}")))??;
        self.refresh().await;
        Ok(report)
    }
}
