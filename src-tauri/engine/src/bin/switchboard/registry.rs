//! `switchboard registry search|show` and `switchboard install`: the MCP
//! Registry from the command line, through the same engine code the app's
//! Catalog uses (`switchboard_engine::registry`).

use std::collections::HashMap;
use std::io::{IsTerminal, Read};

use serde_json::{json, Value};
use switchboard_engine::discovery::{discover, DiscoverOptions};
use switchboard_engine::host::Host;
use switchboard_engine::registry::apply::{self, InstallRequest};
use switchboard_engine::registry::client::{choose_base_url, Offline};
use switchboard_engine::registry::install::{self, Choice, InstallForm};
use switchboard_engine::registry::{RegistryClient, ServerResponse, REGISTRY_ENV};
use switchboard_engine::settings::Settings;
use switchboard_engine::writer::edit::Writer;

pub struct Install {
    pub name: String,
    pub version: Option<String>,
    pub package: Option<String>,
    pub remote: Option<usize>,
    pub to: String,
    pub as_name: Option<String>,
    pub env: Vec<(String, String)>,
    pub args: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub replace: bool,
    pub skip_runtime_check: bool,
    pub registry: Option<String>,
}

fn client(host: &Host, settings: &Settings, flag: Option<&str>) -> anyhow::Result<RegistryClient> {
    let url = choose_base_url(
        flag,
        host.var(REGISTRY_ENV),
        settings.registry_url.as_deref(),
    );
    Ok(RegistryClient::new(
        &url,
        Some(host.cache_dir().join("switchboard").join("registry")),
    )?)
}

fn note_offline(c: &RegistryClient, offline: &Option<Offline>) {
    if let Some(o) = offline {
        eprintln!(
            "offline: {} could not be reached ({}); showing what was fetched at {}",
            c.base_url(),
            o.reason,
            crate::history::local(o.fetched_at_ms)
        );
    }
}

/// The search result shape `--json` prints (one entry).
pub fn summary(e: &ServerResponse) -> Value {
    let s = &e.server;
    json!({
        "name": s.name,
        "title": s.title,
        "description": s.description,
        "version": s.version,
        "status": e.official().status,
        "packages": s.packages.iter().map(|p| json!({
            "registryType": p.registry_type,
            "identifier": p.identifier,
            "version": p.version,
            "transport": p.transport.kind,
        })).collect::<Vec<_>>(),
        "remotes": s.remotes.iter().map(|r| json!({"type": r.kind, "url": r.url})).collect::<Vec<_>>(),
    })
}

pub async fn search(
    host: &Host,
    settings: &Settings,
    registry: Option<&str>,
    query: &str,
    limit: u32,
    cursor: Option<&str>,
    as_json: bool,
) -> anyhow::Result<()> {
    let c = client(host, settings, registry)?;
    let got = c.search(query, cursor, limit).await?;
    note_offline(&c, &got.offline);
    if as_json {
        let mut out = json!({"servers": got.value.servers.iter().map(summary).collect::<Vec<_>>(), "nextCursor": got.value.next_cursor});
        if let Some(o) = &got.offline {
            out["offline"] = serde_json::to_value(o)?;
        }
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if got.value.servers.is_empty() {
        println!("No servers match \"{query}\" in {}", c.base_url());
    }
    for e in &got.value.servers {
        let s = &e.server;
        let mut kinds: Vec<String> = s.packages.iter().map(|p| p.registry_type.clone()).collect();
        kinds.extend(s.remotes.iter().map(|r| format!("remote {}", r.kind)));
        let status = e.official().status;
        let flag = if status == "active" {
            String::new()
        } else {
            format!(" [{status}]")
        };
        println!(
            "{:<48} {:<10} {:<28} {}{flag}",
            s.name,
            s.version,
            kinds.join(", "),
            s.title.as_deref().unwrap_or(&s.description)
        );
    }
    if let Some(c) = &got.value.next_cursor {
        println!("(more: --cursor '{c}')");
    }
    Ok(())
}

pub async fn show(
    host: &Host,
    settings: &Settings,
    registry: Option<&str>,
    name: &str,
    version: Option<&str>,
    as_json: bool,
) -> anyhow::Result<()> {
    let c = client(host, settings, registry)?;
    let got = c.version(name, version.unwrap_or("latest")).await?;
    note_offline(&c, &got.offline);
    let versions = c.versions(name).await.map(|v| v.value).unwrap_or_default();
    let e = got.value;
    let forms = install::forms(&e.server);
    if as_json {
        let out = json!({
            "server": e.server,
            "status": e.official(),
            "versions": versions.iter().map(|v| json!({"version": v.server.version, "status": v.official().status, "publishedAt": v.official().published_at})).collect::<Vec<_>>(),
            "forms": forms,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let s = &e.server;
    let o = e.official();
    println!(
        "{} {}{}",
        s.name,
        s.version,
        if o.status == "active" {
            String::new()
        } else {
            format!(" [{}]", o.status)
        }
    );
    if let Some(t) = &s.title {
        println!("  {t}");
    }
    println!("  {}", s.description);
    if let Some(m) = &o.status_message {
        println!("  status: {m}");
    }
    if let Some(r) = &s.repository {
        println!("  repository: {}", r.url);
    }
    if let Some(w) = &s.website_url {
        println!("  website: {w}");
    }
    if !versions.is_empty() {
        let list: Vec<String> = versions.iter().map(|v| v.server.version.clone()).collect();
        println!("  versions: {}", list.join(", "));
    }
    for f in &forms {
        print_form(f);
    }
    Ok(())
}

fn print_form(f: &InstallForm) {
    let which = match f.choice {
        Choice::Package { index } => format!("--package {}", index + 1),
        Choice::Remote { index } => format!("--remote {}", index + 1),
    };
    println!();
    println!("  {} ({which})", f.label);
    if let Some(r) = &f.not_installable {
        println!("    not installable: {r}");
        return;
    }
    if let Some(r) = &f.runtime {
        println!("    runs with: {r}");
    }
    for x in &f.fields {
        let flag = match x.group {
            install::FieldGroup::Env => "--env",
            install::FieldGroup::Header => "--header",
            _ => "--arg",
        };
        let mut notes = vec![];
        if x.required {
            notes.push("required".to_string());
        }
        if x.secret {
            notes.push("secret".into());
        }
        if x.repeated {
            notes.push("repeatable".into());
        }
        if x.format != "string" {
            notes.push(x.format.clone());
        }
        if let Some(d) = &x.default {
            notes.push(format!("default {d}"));
        }
        if !x.choices.is_empty() {
            notes.push(format!("one of {}", x.choices.join("|")));
        }
        let of = x
            .variable_of
            .as_ref()
            .map(|p| format!(" (in {p})"))
            .unwrap_or_default();
        println!(
            "    {flag} {}=…{of}  [{}]  {}",
            x.key.trim_start_matches('-'),
            notes.join(", "),
            x.description.as_deref().unwrap_or("")
        );
    }
}

/// Which package or remote `--package`/`--remote` names; by default the
/// first installable package, else the first installable remote.
fn choose(
    server: &switchboard_engine::registry::ServerJson,
    package: Option<&str>,
    remote: Option<usize>,
) -> anyhow::Result<Choice> {
    if let Some(n) = remote {
        if n == 0 || n > server.remotes.len() {
            anyhow::bail!(
                "\"{}\" has {} remote(s); --remote takes 1..{}",
                server.name,
                server.remotes.len(),
                server.remotes.len().max(1)
            );
        }
        return Ok(Choice::Remote { index: n - 1 });
    }
    if let Some(p) = package {
        if let Ok(n) = p.parse::<usize>() {
            if n == 0 || n > server.packages.len() {
                anyhow::bail!(
                    "\"{}\" has {} package(s); --package takes 1..{} or a registry type",
                    server.name,
                    server.packages.len(),
                    server.packages.len().max(1)
                );
            }
            return Ok(Choice::Package { index: n - 1 });
        }
        return server
            .packages
            .iter()
            .position(|x| x.registry_type.eq_ignore_ascii_case(p) || x.identifier == p)
            .map(|index| Choice::Package { index })
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "\"{}\" has no {p} package (see `switchboard registry show {}`)",
                    server.name,
                    server.name
                )
            });
    }
    install::forms(server)
        .into_iter()
        .find(|f| f.not_installable.is_none())
        .map(|f| f.choice)
        .ok_or_else(|| anyhow::anyhow!("\"{}\" has no package or remote Switchboard can install (see `switchboard registry show {}`)", server.name, server.name))
}

/// Values of secret fields not given as flags: typed at a prompt that does
/// not echo them, or from standard input as `KEY=VALUE` lines (so they are
/// not in shell history or `ps`).
fn secrets_from_stdin(
    form: &InstallForm,
    values: &mut HashMap<String, String>,
) -> anyhow::Result<()> {
    let wanted: Vec<&install::Field> = form
        .fields
        .iter()
        .filter(|f| {
            f.secret && f.default.is_none() && values.get(&f.id).is_none_or(|v| v.is_empty())
        })
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        for f in wanted.iter().filter(|f| f.required) {
            let v = crate::token::prompt(&format!("{} (secret, not shown): ", f.key))?;
            values.insert(f.id.clone(), v.trim_end_matches(['\r', '\n']).to_string());
        }
        return Ok(());
    }
    let mut text = String::new();
    stdin.lock().take(1 << 20).read_to_string(&mut text)?;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some((k, v)) = line.split_once('=') else {
            anyhow::bail!(
                "standard input should hold secret values as KEY=VALUE lines (one per secret)"
            );
        };
        let k = k.trim();
        match wanted.iter().find(|f| f.key == k || f.key.trim_start_matches('-') == k) {
            Some(f) => {
                values.insert(f.id.clone(), v.to_string());
            }
            None => anyhow::bail!("standard input names {k}, which is not a secret this server asks for (it asks for: {})", wanted.iter().map(|f| f.key.as_str()).collect::<Vec<_>>().join(", ")),
        }
    }
    Ok(())
}

pub async fn install(
    host: &Host,
    settings: &mut Settings,
    o: &DiscoverOptions,
    i: Install,
) -> anyhow::Result<()> {
    let c = client(host, settings, i.registry.as_deref())?;
    let got = c
        .version(&i.name, i.version.as_deref().unwrap_or("latest"))
        .await?;
    note_offline(&c, &got.offline);
    let entry = got.value;
    let status = entry.official();
    if status.status == "deleted" {
        anyhow::bail!(
            "\"{}\" {} was deleted from the registry by its publisher; it cannot be installed",
            entry.server.name,
            entry.server.version
        );
    }
    if status.status == "deprecated" {
        eprintln!(
            "warning: \"{}\" is deprecated{}",
            entry.server.name,
            status
                .status_message
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        );
    }
    let choice = choose(&entry.server, i.package.as_deref(), i.remote)?;
    let form = install::form(&entry.server, choice)?;
    if let Some(reason) = &form.not_installable {
        anyhow::bail!(
            "\"{}\" cannot be installed as {}: {reason}",
            entry.server.name,
            form.label
        );
    }
    let (mut values, extra_env, extra_headers) =
        install::values_from_flags(&form, &i.env, &i.headers, &i.args)
            .map_err(anyhow::Error::msg)?;
    secrets_from_stdin(&form, &mut values)?;
    if let (Some(runtime), false) = (&form.runtime, i.skip_runtime_check) {
        let r = switchboard_engine::launch::CommandResolver::new(
            std::env::var_os("PATH"),
            Some(host.home.clone()),
            switchboard_engine::launch::login_shell_path().map(String::from),
        );
        if r.resolve(runtime, None).is_err() {
            anyhow::bail!("\"{}\" runs with {runtime}, which is not installed here (not on your PATH or your login shell's): {}. Then install again (or pass --skip-runtime-check to write it anyway)", entry.server.name, apply::runtime_hint(runtime));
        }
    }
    let d = discover(host, settings, o);
    let req = InstallRequest {
        server: entry.server.clone(),
        choice,
        name: i.as_name.clone(),
        target: i.to.clone(),
        values,
        replace: i.replace,
        extra_env,
        extra_headers,
    };
    let prepared = apply::prepare(&d, &req)?;
    let vault = switchboard_engine::auth::vault::Vault::keychain();
    let spec = keep_and_write(host, settings, &d, &vault, &prepared).await?;
    let r = &prepared.report;
    println!(
        "{} \"{}\" ({}) in {}",
        if r.replaced { "Replaced" } else { "Installed" },
        r.name,
        form.label,
        r.path.display()
    );
    if !r.kept_in_keychain.is_empty() {
        println!(
            "Secrets kept in the OS keychain ({}), not in the file: {}",
            vault.describe(),
            r.kept_in_keychain.join(", ")
        );
    }
    if r.plain_text_secrets {
        eprintln!(
            "warning: {} keeps secret values in plain text in {}; install into Switchboard's own list (--to switchboard, served to every client through the gateway) to keep them in the OS keychain",
            spec.client.display_name(),
            r.path.display()
        );
    }
    Ok(())
}

/// Writes a prepared install (registry, bundle or link) the one way: its
/// secrets into the keychain first, then the server through the writer; if
/// the write fails the secrets kept for it go again.
pub(crate) async fn keep_and_write(
    host: &Host,
    settings: &mut Settings,
    d: &switchboard_engine::discovery::Discovery,
    vault: &switchboard_engine::auth::vault::Vault,
    prepared: &apply::Prepared,
) -> anyhow::Result<switchboard_engine::sources::SourceSpec> {
    let to = &prepared.report.source;
    let spec = d
        .source(to)
        .and_then(|s| s.spec.clone())
        .ok_or_else(|| anyhow::anyhow!("unknown source \"{to}\""))?;
    apply::keep_secrets(vault, prepared).await?;
    let seen = d.source(to).and_then(|s| s.hash);
    if let Err(e) = Writer::new(host, settings).apply(&spec, prepared.edit(), seen) {
        apply::forget_secrets(vault, prepared).await;
        return Err(e.into());
    }
    Ok(spec)
}

/// `switchboard keychain keep SERVER --env KEY | --header NAME`.
pub async fn keep(
    host: &Host,
    settings: &mut Settings,
    o: &DiscoverOptions,
    server: &str,
    group: &str,
    key: &str,
) -> anyhow::Result<()> {
    let d = discover(host, settings, o);
    let keep = apply::prepare_keep(&d, server, group, key)?;
    let vault = switchboard_engine::auth::vault::Vault::keychain();
    apply::keep_value(&vault, &keep).await?;
    let spec = d
        .source(&keep.source)
        .and_then(|s| s.spec.clone())
        .ok_or_else(|| anyhow::anyhow!("Switchboard's own file is not among the sources"))?;
    let seen = d.source(&keep.source).and_then(|s| s.hash);
    Writer::new(host, settings).apply(&spec, keep.edit(), seen)?;
    println!(
        "Kept {group} {key} of \"{server}\" in the OS keychain ({}); {} now holds ${{keychain:{}}}",
        vault.describe(),
        keep.path.display(),
        keep.name
    );
    Ok(())
}
