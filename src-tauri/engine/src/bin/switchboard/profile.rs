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
        /// A project folder instead: its clients' project files follow the profile.
        #[arg(long, value_name = "DIR", conflicts_with = "client")]
        project: Option<std::path::PathBuf>,
        #[arg(long, value_enum, default_value = "file")]
        via: ViaArg,
        /// The client moves with `profile use` (the app's profile switch).
        #[arg(long)]
        follow: bool,
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
            change(host, settings, d, ProfileChange::Create { name: name.clone(), servers: servers.clone() })?;
            println!("Created profile \"{name}\" with {} servers", servers.len());
        }
        ProfileAction::Delete { name } => {
            change(host, settings, d, ProfileChange::Delete { name: name.clone() })?;
            println!("Deleted profile \"{name}\"");
        }
        ProfileAction::Rename { name, new_name } => {
            change(host, settings, d, ProfileChange::Rename { name: name.clone(), new_name: new_name.clone() })?;
            println!("Renamed profile \"{name}\" to \"{new_name}\"");
        }
        ProfileAction::Add { name, servers } => {
            change(host, settings, d, ProfileChange::Add { name: name.clone(), servers: servers.clone() })?;
            println!("Added {} to profile \"{name}\"", servers.join(", "));
        }
        ProfileAction::Remove { name, servers } => {
            change(host, settings, d, ProfileChange::Remove { name: name.clone(), servers: servers.clone() })?;
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
            change(host, settings, d, ProfileChange::SetRule { name: name.clone(), server: server.clone(), rule })?;
            println!("Profile \"{name}\": tools of {server} changed");
        }
        ProfileAction::Use { name } => {
            *settings = profiles::change(host, |p| p.switch_to(&name))?;
            println!("Switched to profile \"{}\"", settings.profiles.active_name());
        }
        ProfileAction::Budget { tokens, client } => {
            let who = client.clone().unwrap_or_else(|| "every other client".into());
            change(host, settings, d, ProfileChange::Budget { client, tokens })?;
            println!("Token budget of {who}: {tokens}");
        }
        ProfileAction::Show { .. } => unreachable!("run by the runtime"),
        ProfileAction::Apply { .. } | ProfileAction::Export { .. } | ProfileAction::Import { .. } => {
            anyhow::bail!("not available yet")
        }
    }
    Ok(())
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
        println!("{}", serde_json::to_string_pretty(&json!({ "profiles": rows }))?);
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
                let missing = r["missing"].as_array().is_some_and(|m| m.iter().any(|x| x == s));
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
        let top: Vec<String> = o.biggest.iter().map(|(n, t)| format!("{n} ({t})")).collect();
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
