//! `switchboard checks`: what the gateway does when what a server returns
//! has a finding (`log`, `warn`, `block`), per server.

use clap::Subcommand;
use switchboard_engine::discovery::Discovery;
use switchboard_engine::host::Host;
use switchboard_engine::settings::{ResultMode, Settings};
use switchboard_engine::tool_trust::results::{mode_of, save_mode};
use switchboard_engine::writer::edit::EditError;

#[derive(Subcommand)]
pub(crate) enum ChecksAction {
    /// Each server's mode (`warn` unless set).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Set a server's mode: `log` (only recorded), `warn` (a note before
    /// the answer; the default) or `block` (the client gets an error).
    Set {
        server: String,
        #[arg(value_parser = ["log", "warn", "block"])]
        mode: String,
    },
}

pub(crate) fn run(
    host: &Host,
    settings: &Settings,
    d: &Discovery,
    action: ChecksAction,
) -> anyhow::Result<()> {
    match action {
        ChecksAction::List { json } => {
            // Servers found, then servers the settings name that are not.
            let mut names: Vec<&str> = d.servers.iter().map(|s| s.name()).collect();
            names.extend(
                settings
                    .result_checks
                    .keys()
                    .map(String::as_str)
                    .filter(|n| d.server(n).is_none()),
            );
            let rows: Vec<(&str, ResultMode, bool, bool)> = names
                .into_iter()
                .map(|n| {
                    let set = settings.result_checks.contains_key(n);
                    (n, mode_of(settings, n), set, d.server(n).is_some())
                })
                .collect();
            if json {
                let v: Vec<serde_json::Value> = rows
                    .iter()
                    .map(|(n, m, set, found)| {
                        serde_json::json!({ "server": n, "mode": m, "default": !set, "configured": found })
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&v)?);
                return Ok(());
            }
            if rows.is_empty() {
                println!("No servers found (see `switchboard discover`).");
                return Ok(());
            }
            println!("{:<32}  MODE", "SERVER");
            for (n, m, set, found) in rows {
                let note = match (set, found) {
                    (_, false) => "  (no such server is configured)",
                    (false, true) => "  (default)",
                    (true, true) => "",
                };
                println!("{n:<32}  {}{note}", m.as_str());
            }
        }
        ChecksAction::Set { server, mode } => {
            let mode = ResultMode::parse(&mode).expect("clap checked the mode");
            if d.server(&server).is_none() && !settings.result_checks.contains_key(&server) {
                anyhow::bail!(
                    "no server named \"{server}\" was found (see `switchboard discover`)"
                );
            }
            save_mode(host, &server, mode).map_err(EditError::from)?;
            println!(
                "Checks on what \"{server}\" returns: {}{}",
                mode.as_str(),
                match mode {
                    ResultMode::Log => " (findings are only recorded)",
                    ResultMode::Warn => " (a note goes before an answer with findings)",
                    ResultMode::Block => " (an answer with findings is refused)",
                }
            );
        }
    }
    Ok(())
}
