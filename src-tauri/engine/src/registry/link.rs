//! Installing an install link's server (or a pasted entry's): its inputs
//! filled, a password input kept in the keychain when the target is
//! Switchboard's own file, then written as a registry install is (the name
//! check, the keychain, the writer). The CLI's `switchboard install 'LINK'`
//! and the app's Add dialog both go through [`prepare_link`].

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::apply::{slot, InstallFailure, InstallReport, Prepared};
use super::install::{keychain_name, keychain_ref, Built, InstallError, KeptSecret};
use crate::config::ServerDef;
use crate::engine::Engine;
use crate::install_link::{self, LinkServer};

/// What the Add dialog sends to install a link's server.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkInstallRequest {
    /// The link or entry as pasted (read again here: the UI's copy is not trusted).
    pub text: String,
    /// Which of the link's servers (0 for a link with one).
    #[serde(default)]
    pub server_index: usize,
    /// The name in Switchboard; default: the link's.
    #[serde(default)]
    pub name: Option<String>,
    /// Values by input id.
    #[serde(default)]
    pub inputs: HashMap<String, String>,
    /// Source id to write to (`switchboard`: Switchboard's own file).
    pub target: String,
    #[serde(default)]
    pub replace: bool,
}

impl std::fmt::Debug for LinkInstallRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkInstallRequest")
            .field("server_index", &self.server_index)
            .field("name", &self.name)
            .field("inputs", &self.inputs.keys().collect::<Vec<_>>())
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// What installing a link's server wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LinkInstalled {
    pub report: InstallReport,
    /// The definition as written, password values given as text masked (`••••`).
    pub def: ServerDef,
}

/// `server` of a link as an install into `target` under `name`: each input
/// takes its value from `values` or its default (an input left without one
/// is an error naming it); a password input into Switchboard's own file is
/// kept in the keychain and the file holds `${keychain:NAME.ID}`; into a
/// client's file every value is written as given.
pub fn prepare_link(
    snap: &crate::discovery::Discovery,
    server: &LinkServer,
    name: &str,
    target: &str,
    values: &HashMap<String, String>,
    replace: bool,
) -> Result<Prepared, InstallFailure> {
    let slot = slot(snap, target, name, replace)?;
    let ids: Vec<&str> = server.inputs.iter().map(|i| i.id.as_str()).collect();
    if let Some(k) = values.keys().find(|k| !ids.contains(&k.as_str())) {
        return Err(InstallError::Invalid {
            server: slot.name.clone(),
            message: format!(
                "the link has no input \"{k}\"{}",
                if ids.is_empty() {
                    String::new()
                } else {
                    format!(" (it has: {})", ids.join(", "))
                }
            ),
        }
        .into());
    }
    let mut missing = vec![];
    let mut fill: HashMap<&str, String> = HashMap::new();
    let mut kept = vec![];
    for input in &server.inputs {
        let given = values
            .get(&input.id)
            .filter(|v| !v.is_empty())
            .or(input.default.as_ref());
        let Some(v) = given else {
            missing.push(match &input.description {
                Some(d) => format!("{} ({d})", input.id),
                None => input.id.clone(),
            });
            continue;
        };
        if input.password && slot.own {
            let kc = keychain_name(&slot.name, &input.id);
            fill.insert(&input.id, keychain_ref(&kc));
            kept.push(KeptSecret {
                name: kc,
                value: v.clone(),
            });
        } else {
            fill.insert(&input.id, v.clone());
        }
    }
    if !missing.is_empty() {
        return Err(InstallError::Missing {
            server: slot.name.clone(),
            missing,
        }
        .into());
    }
    let mut def = server.fill(|i| fill.get(i.id.as_str()).cloned());
    def.name = slot.name.clone();
    let has_secrets = server.inputs.iter().any(|x| x.password);
    Ok(slot.prepared(Built {
        def,
        secrets: kept,
        has_secrets,
    }))
}

/// The link's server at `index`, and its name: `name` if given, else the
/// link's (a link that names none needs one).
pub fn pick<'a>(
    link: &'a install_link::LinkInstall,
    index: usize,
    name: Option<&str>,
) -> Result<(&'a LinkServer, String), InstallFailure> {
    let kind = link.origin.kind;
    if let Some(r) = &link.registry {
        return Err(InstallFailure::NotKept(format!(
            "{kind} names {} of the MCP Registry: install it from the Catalog",
            r.name
        )));
    }
    let server = link.servers.get(index).ok_or_else(|| {
        InstallFailure::NotKept(format!(
            "{kind} describes {} server(s); there is no server number {}",
            link.servers.len(),
            index + 1
        ))
    })?;
    let name = name
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(String::from)
        .or_else(|| Some(server.def.name.clone()).filter(|n| !n.is_empty()))
        .ok_or(InstallFailure::NoName { kind })?;
    Ok((server, name))
}

impl Engine {
    /// Install one server of an install link or pasted entry (see
    /// [`prepare_link`]), through the same keychain-then-writer path as a
    /// registry install.
    pub async fn install_from_link(
        &self,
        req: LinkInstallRequest,
    ) -> Result<LinkInstalled, InstallFailure> {
        let link = install_link::read(&req.text)?;
        let (server, name) = pick(&link, req.server_index, req.name.as_deref())?;
        let prepared = prepare_link(
            &self.snapshot(),
            server,
            &name,
            &req.target,
            &req.inputs,
            req.replace,
        )?;
        self.write_prepared(&prepared).await?;
        let secrets: Vec<&String> = server
            .inputs
            .iter()
            .filter(|i| i.password)
            .filter_map(|i| req.inputs.get(&i.id))
            .filter(|v| !v.is_empty())
            .collect();
        let mut def = prepared.built.def.clone();
        let mask = |s: &mut String| {
            for v in &secrets {
                *s = s.replace(v.as_str(), "••••");
            }
        };
        def.args.iter_mut().for_each(mask);
        def.url.iter_mut().for_each(mask);
        def.env.values_mut().for_each(mask);
        def.headers.values_mut().for_each(mask);
        Ok(LinkInstalled {
            report: prepared.report,
            def,
        })
    }
}
