//! `switchboard connect [CLIENT]` and `switchboard disconnect CLIENT`: use
//! Switchboard's gateway in another client (engine: `connect`).

use switchboard_engine::connect::{
    self, ClientConnection, ConnectOptions, ConnectPlan, EntryAction, EntryState, HttpSupport,
    HttpTarget, Via,
};
use switchboard_engine::discovery::{discover, DiscoverOptions};
use switchboard_engine::gateway::token::GatewayToken;
use switchboard_engine::host::Host;
use switchboard_engine::settings::Settings;

pub struct Connect {
    pub client: Option<String>,
    /// `Some("")`: `--http` without an address.
    pub http: Option<String>,
    pub disable_duplicates: bool,
    pub dry_run: bool,
    /// Serve only this profile (`serve --profile NAME`, `/mcp/p/NAME`).
    pub profile: Option<String>,
    pub json: bool,
}

pub fn connect(
    host: &Host,
    settings: &mut Settings,
    o: &DiscoverOptions,
    c: Connect,
) -> anyhow::Result<()> {
    let d = discover(host, settings, o);
    let Some(id) = c.client else {
        let list = connect::connections(host, settings, &d);
        if c.json {
            println!("{}", serde_json::to_string_pretty(&list)?);
        } else {
            print_list(&list);
        }
        return Ok(());
    };
    let client = connect::parse_client(&id)?;
    let via = match c.http {
        None => Via::Stdio {
            binary: std::env::current_exe().map_err(|e| {
                anyhow::anyhow!("cannot find the switchboard binary's own path: {e}")
            })?,
        },
        Some(addr) => {
            // By default the app's gateway, on the port in Switchboard's settings.
            let addr = if addr.is_empty() {
                format!("127.0.0.1:{}", settings.gateway.port())
            } else {
                addr
            };
            let a = switchboard_engine::gateway::http::loopback_addr(&addr)
                .map_err(|e| anyhow::anyhow!("connect --http: {e}"))?;
            // Only a client that writes the header needs the token itself.
            let token = match connect::http_support(client) {
                HttpSupport::Headers => GatewayToken::for_this_machine()?.reveal().to_string(),
                HttpSupport::TokenEnvVar | HttpSupport::None => String::new(),
            };
            Via::Http(HttpTarget {
                url: format!("http://{a}/mcp"),
                token,
            })
        }
    };
    let opts = ConnectOptions {
        via,
        disable_duplicates: c.disable_duplicates,
    };
    if c.dry_run {
        let plan =
            connect::plan_connect_to(host, settings, &d, client, &opts, c.profile.as_deref())?;
        if c.json {
            println!("{}", serde_json::to_string_pretty(&plan)?);
        } else {
            print_plan(&plan, c.disable_duplicates, true);
        }
        return Ok(());
    }
    let report = connect::connect_to(host, settings, &d, client, &opts, c.profile.as_deref())?;
    if c.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    print_plan(&report.plan, c.disable_duplicates, false);
    if let Some(n) = report.history_id {
        println!("Recorded as #{n} in `switchboard history`; `switchboard disconnect {id}` (or `switchboard undo {n}`) takes it back");
    }
    Ok(())
}

pub fn disconnect(
    host: &Host,
    settings: &mut Settings,
    o: &DiscoverOptions,
    id: &str,
    json: bool,
) -> anyhow::Result<()> {
    let d = discover(host, settings, o);
    let client = connect::parse_client(id)?;
    let r = connect::disconnect(host, settings, &d, client)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    if r.removed_file {
        println!(
            "Disconnected {}: removed {} (Switchboard had created it and nothing else was in it)",
            r.label,
            r.path.display()
        );
    } else if r.removed_entry {
        println!(
            "Disconnected {}: removed \"{}\" from {}",
            r.label,
            connect::ENTRY_NAME,
            r.path.display()
        );
    } else {
        println!(
            "{} had no \"{}\" entry in {} any more",
            r.label,
            connect::ENTRY_NAME,
            r.path.display()
        );
    }
    if !r.re_enabled.is_empty() {
        println!("Enabled again in {}: {}", r.label, r.re_enabled.join(", "));
    }
    if !r.removed_copies.is_empty() {
        println!(
            "Removed the copies connect made in Switchboard's own file: {}",
            r.removed_copies.join(", ")
        );
    }
    for k in &r.kept {
        println!("Left \"{}\" as it is: {}", k.name, k.reason);
    }
    Ok(())
}

fn state(e: &EntryState) -> String {
    match e {
        EntryState::Absent => "not connected".into(),
        EntryState::Connected {
            transport,
            enabled: true,
            ..
        } => format!("connected ({})", transport.as_str()),
        EntryState::Connected {
            transport,
            enabled: false,
            ..
        } => format!("connected ({}), switched off", transport.as_str()),
        EntryState::Foreign { .. } => "\"switchboard\" is another server".into(),
    }
}

fn print_list(list: &[ClientConnection]) {
    println!("{:<16} {:<30} {:<8} FILE", "CLIENT", "STATE", "HTTP");
    for c in list {
        let http = match c.http {
            HttpSupport::Headers => "yes",
            HttpSupport::TokenEnvVar => "env var",
            HttpSupport::None => "no",
        };
        let absent = if c.exists { "" } else { " (absent)" };
        println!(
            "{:<16} {:<30} {:<8} {}{absent}",
            c.client,
            state(&c.entry),
            http,
            c.path.display()
        );
        if !c.duplicates.is_empty() {
            println!(
                "{:<16} also served by the gateway: {}",
                "",
                c.duplicates.join(", ")
            );
        }
        if let Some(p) = &c.problem {
            println!("{:<16} ! {p}", "");
        }
    }
    println!();
    println!("Connect one: switchboard connect CLIENT [--http [ADDR]] [--disable-duplicates] [--dry-run]");
}

fn print_plan(p: &ConnectPlan, asked_to_disable: bool, dry_run: bool) {
    let (add, update, same) = if dry_run {
        ("Would add", "Would update", "Nothing to change:")
    } else {
        ("Added", "Updated", "Already connected:")
    };
    let verb = match p.action {
        EntryAction::Add => format!("{add} \"{}\" to", connect::ENTRY_NAME),
        EntryAction::Update => format!("{update} \"{}\" in", connect::ENTRY_NAME),
        EntryAction::Unchanged => format!("{same} \"{}\" in", connect::ENTRY_NAME),
    };
    let created = if p.creates_file && dry_run {
        " (a new file)"
    } else {
        ""
    };
    println!(
        "{verb} {} ({}){created}, over {}:",
        p.label,
        p.path.display(),
        p.transport.as_str()
    );
    for line in p.entry_text.lines() {
        println!("    {line}");
    }
    if !p.duplicates.is_empty() && !asked_to_disable {
        println!("{} also runs {} itself, which the gateway serves too: --disable-duplicates disables them in {} so they do not run twice (disconnect turns them back on)", p.label, p.duplicates.join(", "), p.label);
    }
    if !p.disable.is_empty() {
        let names: Vec<String> =
            p.disable.iter().map(|d| if d.copy_to_switchboard { format!("{} (copied into Switchboard's own file first, so the gateway keeps serving it)", d.name) } else { d.name.clone() }).collect();
        println!(
            "{} in {}: {}",
            if dry_run { "Would disable" } else { "Disabled" },
            p.label,
            names.join(", ")
        );
    }
    for k in &p.kept {
        println!("Left on in {}: {} ({})", p.label, k.name, k.reason);
    }
    for n in &p.notes {
        println!("note: {n}");
    }
}
