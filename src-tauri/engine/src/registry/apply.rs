//! Installing from the registry through the engine: the name check, the
//! keychain, the write (through the writer, like any edit), and "keep this
//! value in the keychain" for values already in Switchboard's own file.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::client::{choose_base_url, RegistryClient, RegistryError, REGISTRY_ENV};
use super::install::{self, Choice, InstallError, Secrets};
use super::model::ServerJson;
use crate::auth::vault::{Vault, VaultError};
use crate::engine::Engine;
use crate::sources::Client;
use crate::writer::edit::{EditError, ServerEdit};

/// What to install, and where.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallRequest {
    pub server: ServerJson,
    pub choice: Choice,
    /// The name in Switchboard (default: the part after `/`).
    #[serde(default)]
    pub name: Option<String>,
    /// Source id to write to (`switchboard`: Switchboard's own file).
    pub target: String,
    /// Field values by field id (see `install`).
    #[serde(default)]
    pub values: HashMap<String, String>,
    /// Replace a server of the same name in the target.
    #[serde(default)]
    pub replace: bool,
    /// Env vars / headers the server.json does not declare.
    #[serde(default)]
    pub extra_env: Vec<(String, String)>,
    #[serde(default)]
    pub extra_headers: Vec<(String, String)>,
}

impl std::fmt::Debug for InstallRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstallRequest")
            .field("server", &self.server.name)
            .field("choice", &self.choice)
            .field("name", &self.name)
            .field("target", &self.target)
            .field("values", &self.values.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// What an install did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct InstallReport {
    pub name: String,
    pub source: String,
    pub path: PathBuf,
    /// Keychain names of the secrets kept (`weather.API_KEY`).
    pub kept_in_keychain: Vec<String>,
    /// Secret values were written into the target file as given (a client's file).
    pub plain_text_secrets: bool,
    pub replaced: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum InstallFailure {
    #[error(transparent)]
    Install(#[from] InstallError),
    #[error("Server \"{name}\" already exists in {}; pick another name (e.g. \"{suggestion}\") or replace it", path.display())]
    NameTaken {
        name: String,
        path: PathBuf,
        suggestion: String,
    },
    #[error("Invalid server config: {0}")]
    InvalidName(String),
    #[error(transparent)]
    Edit(#[from] EditError),
    #[error("cannot keep the secrets of \"{name}\" in the keychain: {error}; nothing was written to a file")]
    Keychain { name: String, error: VaultError },
    #[error("{0}")]
    NotKept(String),
    #[error(transparent)]
    Link(#[from] crate::install_link::LinkError),
    #[error("the {kind} gives the server no name: enter one")]
    NoName { kind: crate::install_link::LinkKind },
}

/// Whether a runtime program is there, and what to install when it is not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RuntimeCheck {
    pub program: String,
    /// Where it was found (the app's PATH, then the login shell's).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub found: Option<PathBuf>,
    /// What to install to get it (set when not found).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub install_hint: Option<String>,
}

/// What provides `program`, in a sentence.
pub fn runtime_hint(program: &str) -> String {
    match program {
        "npx" => "npx comes with Node.js: install Node.js (https://nodejs.org, or your package manager), then open Switchboard again".into(),
        "uvx" => "uvx comes with uv: install uv (https://docs.astral.sh/uv/, or `pip install uv`), then open Switchboard again".into(),
        "docker" => "install Docker (Docker Desktop, or the docker engine from your package manager) and start it".into(),
        "dnx" => "dnx comes with the .NET 10 SDK: install it (https://dotnet.microsoft.com/download), then open Switchboard again".into(),
        other => format!("install {other} so that it is on your PATH"),
    }
}

impl Engine {
    /// The registry client: `flag` (`--registry`), else
    /// `SWITCHBOARD_REGISTRY_URL`, else Settings' `registryUrl`, else the
    /// official registry; answers are cached under the user cache folder.
    pub fn registry(&self, flag: Option<&str>) -> Result<RegistryClient, RegistryError> {
        let settings = crate::settings::Settings::load(self.host()).0;
        let url = choose_base_url(
            flag,
            self.host().var(REGISTRY_ENV),
            settings.registry_url.as_deref(),
        );
        RegistryClient::new(
            &url,
            Some(self.host().cache_dir().join("switchboard").join("registry")),
        )
    }

    /// Save (or with `None`, clear) the registry URL in Settings; checked first.
    pub fn set_registry_url(&self, url: Option<String>) -> Result<(), InstallFailure> {
        let url = url.map(|u| u.trim().to_string()).filter(|u| !u.is_empty());
        if let Some(u) = &url {
            super::client::check_base_url(u).map_err(|e| InstallFailure::NotKept(e.to_string()))?;
        }
        crate::settings::Settings::update(self.host(), |s| s.registry_url = url.clone())
            .map_err(EditError::from)?;
        Ok(())
    }

    /// Whether `program` can be started: on the app's PATH or the login
    /// shell's, as servers are started (`launch::CommandResolver`).
    pub async fn check_runtime(&self, program: &str) -> RuntimeCheck {
        let path = self.host().var("PATH").map(std::ffi::OsString::from);
        let home = Some(self.host().home.clone());
        let p = program.to_string();
        let found = tokio::task::spawn_blocking(move || {
            let r = crate::launch::CommandResolver::new(
                path,
                home,
                crate::launch::login_shell_path().map(String::from),
            );
            r.resolve(&p, None).ok()
        })
        .await
        .ok()
        .flatten();
        let install_hint = found.is_none().then(|| runtime_hint(program));
        RuntimeCheck {
            program: program.to_string(),
            found,
            install_hint,
        }
    }

    /// Install a server from its server.json into `req.target`. Into
    /// Switchboard's own file, secret values go to the keychain first and
    /// the file holds `${keychain:NAME}`; into a client's file they are
    /// written as given (that client reads only its own file). A server of
    /// the same name in the target is replaced only when `req.replace`.
    pub async fn install(&self, req: InstallRequest) -> Result<InstallReport, InstallFailure> {
        let prepared = prepare(&self.snapshot(), &req)?;
        self.write_prepared(&prepared).await?;
        Ok(prepared.report)
    }

    /// Write a prepared install (registry, link): its secrets into the
    /// keychain first, then the server through the writer; if the write
    /// fails the secrets kept for it go again.
    pub async fn write_prepared(&self, prepared: &Prepared) -> Result<(), InstallFailure> {
        let vault = self.manager().vault().unwrap_or_else(Vault::keychain);
        keep_secrets(&vault, prepared).await?;
        if let Err(e) = self.edit(&prepared.report.source, prepared.edit()).await {
            forget_secrets(&vault, prepared).await;
            return Err(e.into());
        }
        Ok(())
    }

    /// Move the value of env var or header `key` (`group`: `env` or
    /// `header`) of `server` in Switchboard's own file into the keychain;
    /// the file then holds `${keychain:NAME}`. Returns NAME.
    pub async fn keep_in_keychain(
        &self,
        server: &str,
        group: &str,
        key: &str,
    ) -> Result<String, InstallFailure> {
        let keep = prepare_keep(&self.snapshot(), server, group, key)?;
        let vault = self.manager().vault().unwrap_or_else(Vault::keychain);
        keep_value(&vault, &keep).await?;
        self.edit(&keep.source, keep.edit()).await?;
        Ok(keep.name)
    }
}

/// An install checked and built, not yet written.
pub struct Prepared {
    pub built: install::Built,
    pub report: InstallReport,
}

impl Prepared {
    /// The writer's edit: add, or replace the server of the same name.
    pub fn edit(&self) -> ServerEdit {
        if self.report.replaced {
            ServerEdit::Update {
                name: self.report.name.clone(),
                def: self.built.def.clone(),
            }
        } else {
            ServerEdit::Add(self.built.def.clone())
        }
    }
}

/// Where an install goes: the target source checked and the name free there
/// (or taken and to be replaced). Any installer (registry, bundle) builds its
/// definition for a slot, with [`Slot::secrets`], then [`Slot::prepared`].
#[derive(Debug, Clone)]
pub struct Slot {
    pub name: String,
    /// Source id.
    pub source: String,
    pub path: PathBuf,
    /// Switchboard's own file: secrets go to the keychain.
    pub own: bool,
    pub replaced: bool,
}

impl Slot {
    /// How secret values are written into this target.
    pub fn secrets(&self) -> Secrets {
        if self.own {
            Secrets::Keychain {
                server: self.name.clone(),
            }
        } else {
            Secrets::Plain
        }
    }

    /// The install, ready to keep its secrets and be written.
    pub fn prepared(self, built: install::Built) -> Prepared {
        let report = InstallReport {
            kept_in_keychain: built.secrets.iter().map(|s| s.name.clone()).collect(),
            plain_text_secrets: built.has_secrets && !self.own,
            name: self.name,
            source: self.source,
            path: self.path,
            replaced: self.replaced,
        };
        Prepared { built, report }
    }
}

/// Check `target` and `name` in `snap`: a server of that name in the target
/// is an error unless `replace`.
pub fn slot(
    snap: &crate::discovery::Discovery,
    target: &str,
    name: &str,
    replace: bool,
) -> Result<Slot, InstallFailure> {
    let source = snap
        .source(target)
        .ok_or_else(|| EditError::UnknownSource(target.to_string()))?;
    let name = name.trim().to_string();
    crate::config::validate::validate_name(&name).map_err(InstallFailure::InvalidName)?;
    let taken = |n: &str| {
        snap.servers
            .iter()
            .flat_map(|s| s.definitions.iter())
            .any(|d| d.source == source.id && d.def.name == n)
    };
    let replaced = taken(&name);
    if replaced && !replace {
        let suggestion = (2..)
            .map(|i| format!("{name}-{i}"))
            .find(|n| !taken(n))
            .unwrap_or_default();
        return Err(InstallFailure::NameTaken {
            name,
            path: source.path.clone(),
            suggestion,
        });
    }
    Ok(Slot {
        name,
        source: source.id.clone(),
        path: source.path.clone(),
        own: source.client == Client::Switchboard,
        replaced,
    })
}

/// Check the name against `req.target` in `snap` and build the definition
/// (secrets as keychain references when the target is Switchboard's own file).
pub fn prepare(
    snap: &crate::discovery::Discovery,
    req: &InstallRequest,
) -> Result<Prepared, InstallFailure> {
    let name = req
        .name
        .clone()
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| install::suggested_name(&req.server.name));
    let slot = slot(snap, &req.target, &name, req.replace)?;
    let mut built = install::build(
        &req.server,
        req.choice,
        &slot.name,
        &req.values,
        &slot.secrets(),
    )?;
    for (k, v) in &req.extra_env {
        built.def.env.insert(k.clone(), v.clone());
    }
    for (k, v) in &req.extra_headers {
        built.def.headers.insert(k.clone(), v.clone());
    }
    Ok(slot.prepared(built))
}

/// Put the prepared secrets in the keychain (before the file names them).
pub async fn keep_secrets(vault: &Vault, p: &Prepared) -> Result<(), InstallFailure> {
    if p.built.secrets.is_empty() {
        return Ok(());
    }
    let (v, items) = (vault.clone(), p.built.secrets.clone());
    tokio::task::spawn_blocking(move || {
        items
            .iter()
            .try_for_each(|s| v.put_secret(&s.name, &s.value))
    })
    .await
    .map_err(|e| VaultError::Keychain(e.to_string()))
    .and_then(|r| r)
    .map_err(|error| InstallFailure::Keychain {
        name: p.report.name.clone(),
        error,
    })
}

/// The write failed: the secrets kept for it go again (unless a replaced
/// server already used them).
pub async fn forget_secrets(vault: &Vault, p: &Prepared) {
    if p.report.replaced {
        return;
    }
    let (v, names) = (vault.clone(), p.report.kept_in_keychain.clone());
    let _ =
        tokio::task::spawn_blocking(move || names.iter().for_each(|n| drop(v.remove_secret(n))))
            .await;
}

/// A value of Switchboard's own file about to move into the keychain.
pub struct Keep {
    /// The keychain name (`${keychain:NAME}`).
    pub name: String,
    pub server: String,
    /// Switchboard's own source id.
    pub source: String,
    pub path: PathBuf,
    value: String,
    before: crate::config::ServerDef,
    after: crate::config::ServerDef,
}

impl Keep {
    /// The writer's edit: only that value changes.
    pub fn edit(&self) -> ServerEdit {
        ServerEdit::Patch {
            name: self.server.clone(),
            patch: crate::config::ServerPatch::between(&self.before, &self.after),
        }
    }
}

/// Check that env var or header `key` (`group`: `env` or `header`) of
/// `server` is a value in Switchboard's own file that can be kept in the
/// keychain (not a reference, a command or kept already).
pub fn prepare_keep(
    snap: &crate::discovery::Discovery,
    server: &str,
    group: &str,
    key: &str,
) -> Result<Keep, InstallFailure> {
    let own = snap
        .sources
        .iter()
        .find(|s| s.client == Client::Switchboard)
        .ok_or_else(|| EditError::UnknownSource("switchboard".into()))?;
    let def = snap
        .servers
        .iter()
        .flat_map(|s| s.definitions.iter())
        .find(|d| d.source == own.id && d.def.name == server)
        .map(|d| d.def.clone())
        .ok_or_else(|| InstallFailure::NotKept(format!("\"{server}\" is not in Switchboard's own file ({}); only values there can be kept in the keychain (copy the server there first)", own.path.display())))?;
    let map = match group {
        "env" => &def.env,
        "header" => &def.headers,
        other => {
            return Err(InstallFailure::NotKept(format!(
                "\"{other}\" is neither env nor header"
            )))
        }
    };
    let raw = map.get(key).cloned().ok_or_else(|| {
        InstallFailure::NotKept(format!(
            "\"{server}\" has no {group} value named {key} in {}",
            own.path.display()
        ))
    })?;
    if raw.contains(crate::auth::secrets::KEYCHAIN_REF) {
        return Err(InstallFailure::NotKept(format!(
            "{group} {key} of \"{server}\" is kept in the keychain already"
        )));
    }
    let only_ref = raw.starts_with("${") && raw.ends_with('}') && raw.matches("${").count() == 1;
    if raw.trim().is_empty() || raw.starts_with('!') || only_ref {
        return Err(InstallFailure::NotKept(format!("{group} {key} of \"{server}\" is a reference or a command, not a value: there is nothing to keep")));
    }
    let label = if group == "header" {
        format!("header.{key}")
    } else {
        key.to_string()
    };
    let name = install::keychain_name(server, &label);
    let mut after = def.clone();
    let target = if group == "env" {
        &mut after.env
    } else {
        &mut after.headers
    };
    target.insert(key.to_string(), install::keychain_ref(&name));
    Ok(Keep {
        name,
        server: server.into(),
        source: own.id.clone(),
        path: own.path.clone(),
        value: raw,
        before: def,
        after,
    })
}

/// Put the value in the keychain (before the file refers to it).
pub async fn keep_value(vault: &Vault, keep: &Keep) -> Result<(), InstallFailure> {
    let (v, n, value) = (vault.clone(), keep.name.clone(), keep.value.clone());
    tokio::task::spawn_blocking(move || v.put_secret(&n, &value))
        .await
        .map_err(|e| VaultError::Keychain(e.to_string()))
        .and_then(|r| r)
        .map_err(|error| InstallFailure::Keychain {
            name: keep.server.clone(),
            error,
        })
}
