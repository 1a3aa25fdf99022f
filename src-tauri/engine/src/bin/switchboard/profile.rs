//! `switchboard profile …`: named sets of servers and tools, kept in
//! Switchboard's settings (every change in `switchboard history`).
//! `profile show` starts the servers (startup gate) to count what the
//! profile's tool definitions cost.

use clap::Subcommand;
use serde_json::json;
use switchboard_engine::discovery::Discovery;
use switchboard_engine::host::Host;
use switchboard_engine::manager::Manager;
use switchboard_engine::profile::{ProfileChange, ToolRule, Via};
use switchboard_engine::profile_share::{
    self, ImportOptions, SecretKind, SecretToEnter, ServerAction,
};
use switchboard_engine::profiles::{self, ProfileView};
use switchboard_engine::settings::Settings;

#[derive(Subcommand)]
pub(crate) enum ProfileAction {
    /// Every profile (Everything first), its servers and which clients use it.
    List {
        #[arg(long)]
        json: bool,
    },
    /// One profile: its servers and tools and the tokens their definitions
    /// cost (starts the servers to list their tools).
    Show {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Make a profile, with the SERVERs named (more with `profile add`).
    Create { name: String, servers: Vec<String> },
    /// Delete a profile (refused while a client follows it).
    Delete { name: String },
    /// Rename a profile (clients following it follow the new name).
    Rename { name: String, new_name: String },
    /// Add servers (by name; the winning definition is used).
    Add {
        name: String,
        #[arg(required = true)]
        servers: Vec<String>,
    },
    /// Take servers out of a profile.
    Remove {
        name: String,
        #[arg(required = true)]
        servers: Vec<String>,
    },
    /// Which of SERVER's tools the profile keeps: --allow TOOL… (only
    /// these), --deny TOOL… (all but these), or --all.
    Tools {
        name: String,
        server: String,
        #[arg(long, num_args = 1.., conflicts_with_all = ["deny", "all"])]
        allow: Vec<String>,
        #[arg(long, num_args = 1.., conflicts_with = "all")]
        deny: Vec<String>,
        #[arg(long)]
        all: bool,
    },
    /// Switch to a profile: what the gateway's /mcp serves, and the profile
    /// of every client applied with --follow.
    Use { name: String },
    /// The token budget of a client (or of every client without its own):
    /// Switchboard warns when a client's profile costs more.
    Budget {
        tokens: u32,
        #[arg(long, value_name = "ID")]
        client: Option<String>,
    },
    /// Apply a profile to a client: in its own file (--via file, the
    /// default: exactly the profile's servers on) or through the gateway
    /// (--via gateway: one `switchboard` entry serving the profile).
    Apply {
        name: String,
        #[arg(long, value_name = "ID")]
        client: Option<String>,
        /// A project folder instead: its clients' project files follow the
        /// profile. (The same id as the global `--project`, which then reads
        /// the folder as trusted for this run.)
        #[arg(
            long = "project",
            id = "projects",
            value_name = "DIR",
            conflicts_with = "client"
        )]
        project: Option<std::path::PathBuf>,
        #[arg(long, value_enum, default_value = "file")]
        via: ViaArg,
        /// The client moves with `profile use` (the app's profile switch).
        #[arg(long)]
        follow: bool,
        /// With --via gateway: also disable, in that client, the servers
        /// the gateway serves (as `connect --disable-duplicates`).
        #[arg(long)]
        disable_duplicates: bool,
        #[arg(long)]
        json: bool,
    },
    /// Write a profile and its servers' definitions to FILE (every secret
    /// replaced by a reference; values never leave this machine).
    Export {
        name: String,
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
    /// Read a profile exported on another machine: shows what it adds and
    /// what is missing here; --yes writes it.
    Import {
        file: std::path::PathBuf,
        #[arg(long)]
        yes: bool,
        #[arg(long)]
        json: bool,
        /// Make the profile under this name (when the document's is taken
        /// or not valid here).
        #[arg(long = "as", value_name = "NEW-NAME")]
        as_name: Option<String>,
        /// Servers defined here differently: write the document's
        /// definitions into Switchboard's own file (else nothing is written).
        #[arg(long)]
        replace: bool,
        /// With --yes: the secrets to enter as NAME=VALUE lines on standard
        /// input, instead of being asked for them.
        #[arg(long, requires = "yes")]
        secrets_stdin: bool,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum ViaArg {
    File,
    Gateway,
}

impl From<ViaArg> for Via {
    fn from(v: ViaArg) -> Via {
        match v {
            ViaArg::File => Via::File,
            ViaArg::Gateway => Via::Gateway,
        }
    }
}

/// The actions that only change settings.
pub(crate) fn run(
    host: &Host,
    settings: &mut Settings,
    d: &Discovery,
    action: ProfileAction,
) -> anyhow::Result<()> {
    match action {
        ProfileAction::List { json } => list(settings, d, json)?,
        ProfileAction::Create { name, servers } => {
            change(
                host,
                settings,
                d,
                ProfileChange::Create {
                    name: name.clone(),
                    servers: servers.clone(),
                },
            )?;
            println!("Created profile \"{name}\" with {} servers", servers.len());
        }
        ProfileAction::Delete { name } => {
            change(
                host,
                settings,
                d,
                ProfileChange::Delete { name: name.clone() },
            )?;
            println!("Deleted profile \"{name}\"");
        }
        ProfileAction::Rename { name, new_name } => {
            change(
                host,
                settings,
                d,
                ProfileChange::Rename {
                    name: name.clone(),
                    new_name: new_name.clone(),
                },
            )?;
            println!("Renamed profile \"{name}\" to \"{new_name}\"");
        }
        ProfileAction::Add { name, servers } => {
            change(
                host,
                settings,
                d,
                ProfileChange::Add {
                    name: name.clone(),
                    servers: servers.clone(),
                },
            )?;
            println!("Added {} to profile \"{name}\"", servers.join(", "));
        }
        ProfileAction::Remove { name, servers } => {
            change(
                host,
                settings,
                d,
                ProfileChange::Remove {
                    name: name.clone(),
                    servers: servers.clone(),
                },
            )?;
            println!("Removed {} from profile \"{name}\"", servers.join(", "));
        }
        ProfileAction::Tools {
            name,
            server,
            allow,
            deny,
            all,
        } => {
            let rule = match (allow.is_empty(), deny.is_empty(), all) {
                (false, _, _) => Some(ToolRule::Allow(allow)),
                (_, false, _) => Some(ToolRule::Deny(deny)),
                (_, _, true) => None,
                _ => anyhow::bail!("give --allow TOOL…, --deny TOOL… or --all"),
            };
            change(
                host,
                settings,
                d,
                ProfileChange::SetRule {
                    name: name.clone(),
                    server: server.clone(),
                    rule,
                },
            )?;
            println!("Profile \"{name}\": tools of {server} changed");
        }
        ProfileAction::Use { name } => {
            // Clients applied with --follow follow, in their files too.
            let reports = switchboard_engine::profile_apply::switch(host, settings, d, &name)?;
            println!(
                "Switched to profile \"{}\"",
                settings.profiles.active_name()
            );
            for r in &reports {
                print_applied(r);
            }
        }
        ProfileAction::Budget { tokens, client } => {
            let who = client
                .clone()
                .unwrap_or_else(|| "every other client".into());
            change(host, settings, d, ProfileChange::Budget { client, tokens })?;
            println!("Token budget of {who}: {tokens}");
        }
        ProfileAction::Show { .. } => unreachable!("run by the runtime"),
        ProfileAction::Export { name, output } => export(host, settings, d, &name, output)?,
        ProfileAction::Import {
            file,
            yes,
            json,
            as_name,
            replace,
            secrets_stdin,
        } => {
            let opts = ImportOptions { as_name, replace };
            import(host, settings, d, &file, &opts, yes, json, secrets_stdin)?
        }
        ProfileAction::Apply {
            name,
            client,
            project,
            via,
            follow,
            disable_duplicates,
            json,
        } => {
            use switchboard_engine::{connect, profile_apply};
            let via = Via::from(via);
            let reports = match (client, project) {
                (Some(id), None) => {
                    let client = connect::parse_client(&id)?;
                    // Over stdio, this binary serves the profile.
                    let gateway = match via {
                        Via::Gateway => Some(connect::ConnectOptions {
                            via: connect::Via::Stdio {
                                binary: std::env::current_exe().map_err(|e| {
                                    anyhow::anyhow!("cannot find the switchboard binary's own path: {e}")
                                })?,
                            },
                            disable_duplicates,
                        }),
                        Via::File => None,
                    };
                    let r = profile_apply::apply(
                        host,
                        settings,
                        d,
                        client,
                        &name,
                        via,
                        follow,
                        gateway.as_ref(),
                    )?;
                    if json {
                        println!("{}", serde_json::to_string_pretty(&r)?);
                        return Ok(());
                    }
                    vec![r]
                }
                (None, Some(dir)) => {
                    if via == Via::Gateway || follow {
                        anyhow::bail!("a project folder follows its profile in its own files: --project takes neither --via gateway nor --follow");
                    }
                    let r = profile_apply::apply_project(host, settings, d, &dir, &name)?;
                    if json {
                        println!("{}", serde_json::to_string_pretty(&r)?);
                        return Ok(());
                    }
                    r
                }
                _ => anyhow::bail!("give --client ID (a client's user file) or --project DIR (a project folder's files)"),
            };
            for r in &reports {
                print_applied(r);
            }
            if let Some(n) = reports.iter().find_map(|r| r.history_id) {
                println!("Recorded as #{n} in `switchboard history`; `switchboard undo {n}` takes it back (applying \"Everything\" takes back what profiles changed)");
            }
        }
    }
    Ok(())
}

/// What applying a profile did to one file, for people.
fn print_applied(r: &switchboard_engine::profile_apply::ApplyReport) {
    let via = match r.via {
        Via::File => "in its file",
        Via::Gateway => "through the gateway",
    };
    println!(
        "{}: profile \"{}\" {via} ({})",
        r.label,
        r.profile,
        r.path.display()
    );
    for (what, list) in [
        ("switched on", &r.enabled),
        ("switched off", &r.disabled),
        ("added", &r.added),
        ("taken out", &r.removed),
    ] {
        if !list.is_empty() {
            println!("  {what}: {}", list.join(", "));
        }
    }
    if !r.changed() && r.via == Via::File {
        println!("  nothing to change");
    }
    for n in &r.notes {
        println!("  note: {n}");
    }
    if let Some(h) = &r.restart_hint {
        println!("  {h}");
    }
}

/// One change through the same path as the app's (servers added must exist).
fn change(
    host: &Host,
    settings: &mut Settings,
    d: &Discovery,
    c: ProfileChange,
) -> anyhow::Result<()> {
    profiles::unknown_servers(d, c.added_servers())?;
    *settings = profiles::change(host, |p| c.apply(p))?;
    Ok(())
}

fn list(settings: &Settings, d: &Discovery, json: bool) -> anyhow::Result<()> {
    let p = &settings.profiles;
    let rows: Vec<serde_json::Value> = std::iter::once(json!({
        "name": switchboard_engine::profile::EVERYTHING,
        "builtIn": true,
        "active": p.active.is_none(),
        "servers": d.servers.iter().map(|s| s.name()).collect::<Vec<_>>(),
        "missing": [],
        "usedBy": p.users_of(switchboard_engine::profile::EVERYTHING),
    }))
    .chain(p.list.iter().map(|x| {
        json!({
            "name": x.name,
            "builtIn": false,
            "active": p.active_name().eq_ignore_ascii_case(&x.name),
            "servers": x.servers.iter().map(|s| &s.name).collect::<Vec<_>>(),
            "missing": x.servers.iter().filter(|s| d.server(&s.name).is_none()).map(|s| &s.name).collect::<Vec<_>>(),
            "usedBy": p.users_of(&x.name),
        })
    }))
    .collect();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "profiles": rows }))?
        );
        return Ok(());
    }
    for r in rows {
        let mark = if r["active"] == true { "*" } else { " " };
        let servers: Vec<String> = r["servers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                let s = s.as_str().unwrap_or_default();
                let missing = r["missing"]
                    .as_array()
                    .is_some_and(|m| m.iter().any(|x| x == s));
                if missing {
                    format!("{s} (missing)")
                } else {
                    s.to_string()
                }
            })
            .collect();
        println!(
            "{mark} {:<20} {}",
            r["name"].as_str().unwrap_or_default(),
            servers.join(", ")
        );
    }
    Ok(())
}

/// `profile show NAME`: after the startup gate, the profile's servers,
/// tools and tokens.
pub(crate) async fn show(
    host: &Host,
    m: &Manager,
    d: &Discovery,
    name: &str,
    json: bool,
) -> anyhow::Result<()> {
    let (settings, _) = Settings::load(host);
    let profile = settings.profiles.filter(name)?;
    let costs = profiles::tool_costs(m);
    let v: ProfileView = profiles::view(profile, &settings.profiles, d, m, &costs);
    if json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "{}{}: {} tokens of tool definitions ({})",
        v.name,
        if v.active { " (active)" } else { "" },
        v.tokens,
        v.tokenizer
    );
    for s in &v.servers {
        let state = if s.missing {
            " — missing: no source defines it now".to_string()
        } else {
            format!(" — {} tools", s.tools.len())
        };
        println!("  {:<24} {:>7} tokens{state}", s.name, s.tokens);
        for t in &s.tools {
            println!("      {:<40} {:>6}", t.name, t.tokens);
        }
        if !s.left_out.is_empty() {
            let names: Vec<&str> = s.left_out.iter().map(|t| t.tool.as_str()).collect();
            println!("      left out: {}", names.join(", "));
        }
    }
    if let Some(o) = &v.over_budget {
        let top: Vec<String> = o
            .biggest
            .iter()
            .map(|(n, t)| format!("{n} ({t})"))
            .collect();
        println!(
            "Over the budget of {} tokens; biggest: {}. Tool search (`serve --tool-search`) would cost {} tokens instead.",
            o.budget,
            top.join(", "),
            o.tool_search_tokens
        );
    }
    if !v.used_by.is_empty() {
        println!("Used by: {}", v.used_by.join(", "));
    }
    Ok(())
}

/// `profile export NAME [-o FILE]`: the document on standard output, or in
/// FILE; what the importer must enter on standard error.
fn export(
    host: &Host,
    settings: &Settings,
    d: &Discovery,
    name: &str,
    output: Option<std::path::PathBuf>,
) -> anyhow::Result<()> {
    let doc = profile_share::export(host, settings, d, name)?;
    let text = doc.to_text();
    match &output {
        Some(path) => {
            std::fs::write(path, &text)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
            eprintln!(
                "Exported profile \"{}\" ({} servers) to {}",
                doc.profile.name,
                doc.servers.len(),
                path.display()
            );
        }
        None => print!("{text}"),
    }
    if !doc.secrets.is_empty() {
        eprintln!(
            "Secrets are references, never values ({}); whoever imports it enters them: {}",
            doc.secrets.len(),
            doc.secrets
                .iter()
                .map(|s| format!("{} {}", s.server, s.field))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

/// `profile import FILE`: the preview; with --yes the secrets (asked for,
/// or NAME=VALUE lines with --secrets-stdin) and the writes.
#[allow(clippy::too_many_arguments)]
fn import(
    host: &Host,
    settings: &mut Settings,
    d: &Discovery,
    file: &std::path::Path,
    opts: &ImportOptions,
    yes: bool,
    json: bool,
    secrets_stdin: bool,
) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let text = profile_share::read_document(file)?;
    let resolver = profile_share::resolver_for(host);
    let preview = profile_share::preview(host, settings, d, &text, opts, &resolver)?;
    if !yes {
        if json {
            println!("{}", serde_json::to_string_pretty(&preview)?);
        } else {
            print_preview(&preview, file);
            println!("Nothing written; run again with --yes to import.");
        }
        return Ok(());
    }
    if !preview.conflicts.is_empty() {
        // Refused before any secret is asked for.
        return Err(profile_share::ShareError::Conflicts(preview.conflicts.clone()).into());
    }
    let enterable: Vec<&SecretToEnter> = preview
        .secrets
        .iter()
        .filter(|s| s.kind != SecretKind::Variable)
        .collect();
    let mut values = std::collections::BTreeMap::new();
    if secrets_stdin {
        let mut input = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(std::io::stdin().lock(), 1 << 20),
            &mut input,
        )?;
        for line in input.lines().filter(|l| !l.trim().is_empty()) {
            let Some((k, v)) = line.split_once('=') else {
                anyhow::bail!(
                    "standard input should hold secrets as NAME=VALUE lines (one per secret)"
                );
            };
            values.insert(k.trim().to_string(), v.to_string());
        }
    } else if !json && !enterable.is_empty() && std::io::stdin().is_terminal() {
        eprintln!("Secrets this profile needs (kept in the OS keychain; press Enter to skip one and enter it later):");
        for s in &enterable {
            let v = crate::token::prompt(&format!("  {} ({} of {}): ", s.name, s.field, s.server))?;
            let v = v.trim_end_matches(['\r', '\n']);
            if !v.is_empty() {
                values.insert(s.name.clone(), v.to_string());
            }
        }
    }
    let vault = (!values.is_empty()).then(switchboard_engine::auth::vault::Vault::keychain);
    let report = profile_share::import(
        host,
        settings,
        d,
        &text,
        opts,
        &resolver,
        &values,
        vault.as_ref(),
    )?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    print_preview(&report.preview, file);
    match (&report.preview.profile, report.history_id) {
        (_, None) => println!("Nothing to write: all of it is here already."),
        (Some(p), Some(id)) => println!(
            "Imported profile \"{p}\" (history #{id}; `switchboard undo {id}` takes it back)."
        ),
        (None, Some(id)) => println!(
            "Imported the servers (history #{id}; `switchboard undo {id}` takes them back)."
        ),
    }
    if !report.kept.is_empty() {
        println!("Kept in the OS keychain: {}", report.kept.join(", "));
    }
    let names = |kind: fn(SecretKind) -> bool| {
        report
            .to_enter
            .iter()
            .filter(|s| kind(s.kind) && !s.set)
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (asked, variables) = (
        names(|k| k != SecretKind::Variable),
        names(|k| k == SecretKind::Variable),
    );
    if !asked.is_empty() {
        println!(
            "Still to enter: {asked}; `switchboard profile import {} --yes` asks for them again.",
            file.display()
        );
    }
    if !variables.is_empty() {
        println!("Environment variables to set where Switchboard starts: {variables}.");
    }
    Ok(())
}

fn print_preview(p: &profile_share::ImportPreview, file: &std::path::Path) {
    match &p.profile {
        Some(name) if p.profile_exists => println!("Profile \"{name}\" from {}: here already, the same servers and tools.", file.display()),
        Some(name) => println!("Profile \"{name}\" from {}: {} servers.", file.display(), p.profile_servers.len()),
        None => println!("All the servers of another machine (Everything) from {}; they join Everything here (--as NAME makes them a profile).", file.display()),
    }
    println!("Servers, into {}:", p.file.display());
    for s in &p.servers {
        let here = s.existing.as_deref().unwrap_or("");
        let what = match s.action {
            ServerAction::Add => "adds it".to_string(),
            ServerAction::Reuse => format!("the same definition is here already ({here}): used as it is"),
            ServerAction::Replace => format!("replaces the one here ({here}) with the document's"),
            ServerAction::Conflict => format!("CONFLICT: defined differently here ({here}); kept, nothing is written (--replace writes the document's)"),
        };
        println!("  {:<24} {what}", s.name);
        if let Some(n) = &s.note {
            println!("  {:<24} note: {n}", "");
        }
    }
    if !p.missing_runtimes.is_empty() {
        println!("Missing on this machine (the servers are written anyway; they start once it is installed):");
        for m in &p.missing_runtimes {
            let runtime = m
                .runtime
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            println!("  {:<24} {}{runtime}: {}", m.server, m.program, m.install);
        }
    }
    if !p.secrets.is_empty() {
        println!("Secrets to enter (the document holds references, never values):");
        for s in &p.secrets {
            let how = match s.kind {
                SecretKind::Keychain => format!("keychain {}: asked for by --yes (or {}=VALUE on standard input with --secrets-stdin)", s.name, s.name),
                SecretKind::OauthAppSecret => format!("the OAuth app's client secret: asked for by --yes (or {}=VALUE with --secrets-stdin), or in the app's sign-in settings", s.name),
                SecretKind::Variable if s.set => format!("environment variable {}: set here", s.name),
                SecretKind::Variable => format!("environment variable {}: set it where Switchboard starts", s.name),
            };
            let reference = s
                .reference
                .as_deref()
                .map(|r| format!(" = {r}"))
                .unwrap_or_default();
            println!("  {:<24} {}{reference} — {how}", s.server, s.field);
        }
    }
}
