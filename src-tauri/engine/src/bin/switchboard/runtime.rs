//! The CLI commands that run servers: they start the manager on the
//! discovered servers, do one thing, and always shut every server down —
//! also on Ctrl-C or SIGTERM, so no process is left behind.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_engine::discovery::Discovery;
use switchboard_engine::events::ServerStatus;
use switchboard_engine::host::Host;
use switchboard_engine::manager::{CallError, Manager, ManagerOptions, Wanted};
use switchboard_engine::tool_trust::{ItemKind, PinState, Severity};

use crate::Command;

pub struct Options {
    pub accept_defaults: bool,
    /// Trusted project folders, offered to servers as roots.
    pub roots: Vec<std::path::PathBuf>,
    /// `--project` folders, for re-discovery when watching.
    pub projects: Vec<std::path::PathBuf>,
}

pub async fn run(host: Host, d: Discovery, cmd: Command, o: Options) -> anyhow::Result<()> {
    let manager = Manager::new(ManagerOptions::for_host(&host));
    // Servers signed in with `switchboard login` (or the app) get their tokens.
    manager.set_vault(Some(switchboard_engine::auth::vault::Vault::keychain()));
    manager.set_roots(&o.roots).await;
    // Tool approvals (pins) and approval modes, as the app and `serve` keep them.
    manager.set_trust(Some(switchboard_engine::tool_trust::TrustCell::for_host(
        &host,
    )));
    if o.accept_defaults {
        manager.set_elicitation_handler(Some(
            switchboard_engine::manager::connection::accept_defaults_handler("switchboard"),
        ));
    }
    // `watch` runs until interrupted: that is its normal end.
    let watching = matches!(cmd, Command::Watch { .. });
    let work = async {
        match cmd {
            Command::Watch { json } => watch(&manager, &host, &d, json, &o.projects).await,
            Command::Login {
                server,
                no_browser,
                timeout,
            } => {
                login(
                    &manager,
                    &d,
                    &server,
                    no_browser,
                    Duration::from_secs(timeout),
                )
                .await
            }
            Command::Logout { server } => logout(&d, &server).await,
            Command::Profile {
                action: crate::profile::ProfileAction::Show { name, json },
            } => {
                let (settings, _) = switchboard_engine::settings::Settings::load(&host);
                // Refused before any server starts.
                settings.profiles.filter(&name)?;
                manager.start(Wanted::from_discovery(&d)).await;
                first_use(&manager).await;
                crate::profile::show(&host, &manager, &d, &name, json).await
            }
            c => work(&manager, &d, c).await,
        }
    };
    let result = tokio::select! {
        r = work => r,
        _ = interrupted() => if watching { Ok(()) } else { Err(anyhow::anyhow!("interrupted")) },
    };
    manager.shutdown().await;
    result
}

/// A server that is not connected, for the `errors` of `tools --json`: its
/// status, the class of its failure and what to do (a server still starting
/// says so).
fn not_running(s: &switchboard_engine::manager::ServerState) -> Option<Value> {
    if matches!(s.status, ServerStatus::Connected | ServerStatus::Disabled) {
        return None;
    }
    let error = match &s.status {
        ServerStatus::Failed { error } => error.clone(),
        ServerStatus::NeedsAuth { message } => message.clone(),
        _ => s
            .last_error
            .clone()
            .unwrap_or_else(|| "still starting".into()),
    };
    let (class, summary, message) = match &s.diagnosis {
        Some(d) => (json!(d.class), d.summary.clone(), d.detail.clone()),
        None if s.status.is_pending() => (
            Value::Null,
            "still starting".to_string(),
            format!("It had not answered yet ({}).", s.status.label()),
        ),
        None => (Value::Null, error.clone(), error.clone()),
    };
    Some(
        json!({"server": s.name, "status": s.status.label(), "class": class, "summary": summary, "message": message, "error": error}),
    )
}

pub(crate) async fn interrupted() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("signal handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

fn pick(d: &Discovery, only: &[String]) -> anyhow::Result<Vec<Wanted>> {
    let all = Wanted::from_discovery(d);
    for n in only {
        if !all.iter().any(|w| &w.def.name == n) {
            anyhow::bail!("no runnable server named \"{n}\" (see `switchboard discover`)");
        }
    }
    Ok(all
        .into_iter()
        .filter(|w| only.is_empty() || only.contains(&w.def.name))
        .collect())
}

async fn work(m: &Manager, d: &Discovery, cmd: Command) -> anyhow::Result<()> {
    match cmd {
        Command::Status { json, servers } => {
            let wanted = pick(d, &servers)?;
            m.start(wanted).await;
            m.settle().await;
            let states = m.states();
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({ "servers": states }))?
                );
            } else {
                for s in states {
                    let detail = match (&s.status, &s.diagnosis) {
                        (ServerStatus::Connected, _) => format!("{} tools", s.tool_count),
                        (_, Some(d)) => format!("[{}] {}", d.class.label(), d.detail),
                        (ServerStatus::Failed { error }, None) => error.clone(),
                        (ServerStatus::NeedsAuth { message }, None) => message.clone(),
                        _ => format!("{} tools", s.tool_count),
                    };
                    println!("  {:<28} {:<13} {}", s.name, s.status.label(), detail);
                }
            }
        }
        Command::Tools {
            json,
            servers,
            wait,
            changed,
        } => {
            let report = m.start(pick(d, &servers)?).await;
            if wait {
                m.settle().await;
            }
            first_use(m).await;
            let trust = switchboard_engine::tool_trust::review(
                &m.trust_inputs(),
                &m.trust().expect("set in run").basis(),
                false,
            );
            let mut index = (*m.tools()).clone();
            if changed {
                index.tools.retain(|t| {
                    trust
                        .item(&t.server, ItemKind::Tool, &t.tool)
                        .is_some_and(|i| i.pin == PinState::Changed)
                });
            }
            let index = std::sync::Arc::new(index);
            let errors: Vec<Value> = m.states().iter().filter_map(not_running).collect();
            if json {
                let tokens: std::collections::HashMap<String, u32> =
                    switchboard_engine::profiles::tool_costs(m)
                        .into_iter()
                        .map(|c| (c.name, c.tokens))
                        .collect();
                let tools: Vec<Value> = index
                    .tools
                    .iter()
                    .map(|t| {
                        let mut v = serde_json::to_value(t).unwrap_or_default();
                        v["tokens"] = json!(tokens.get(&t.name).copied().unwrap_or_default());
                        let r = trust.item(&t.server, ItemKind::Tool, &t.tool);
                        v["pin"] = json!(r.map(|r| r.pin).unwrap_or(PinState::New));
                        v["held"] = json!(r.is_some_and(|r| r.held));
                        v["findings"] = json!(r.map(|r| r.findings.clone()).unwrap_or_default());
                        v
                    })
                    .collect();
                println!(
                    "{}",
                    serde_json::to_string_pretty(
                        &json!({"tools": tools, "tokenizer": switchboard_engine::tokens::TOKENIZER, "collisions": index.collisions, "errors": errors})
                    )?
                );
            } else {
                for t in &index.tools {
                    let deferred = if t.deferred { " (cached)" } else { "" };
                    let r = trust.item(&t.server, ItemKind::Tool, &t.tool);
                    let pin = match r.map(|r| r.pin) {
                        Some(PinState::Changed) => " [changed]",
                        Some(PinState::New) | None => " [new]",
                        Some(PinState::Approved) => "",
                    };
                    let held = if r.is_some_and(|r| r.held) {
                        " [held]"
                    } else {
                        ""
                    };
                    let worst = r
                        .and_then(|r| r.findings.first())
                        .map(|f| format!(" [{}: {}]", severity(f.severity), f.rule))
                        .unwrap_or_default();
                    println!(
                        "  {:<48} {}/{}{deferred}{pin}{held}{worst}",
                        t.name, t.server, t.tool
                    );
                }
                for c in &index.collisions {
                    println!("  collision: {} → {}", c.name, c.resolved.join(", "));
                }
                for e in &errors {
                    println!(
                        "  error: {}: {}",
                        e["server"].as_str().unwrap_or(""),
                        e["error"].as_str().unwrap_or("")
                    );
                }
                println!(
                    "{} tools from {} servers in {} ms",
                    index.tools.len(),
                    report.connected.len() + report.deferred.len(),
                    report.elapsed_ms
                );
            }
        }
        Command::Approve { server, tools } => {
            m.start(pick(d, std::slice::from_ref(&server))?).await;
            m.settle().await;
            if let Some(switchboard_engine::events::ServerStatus::Failed { error }) =
                m.status(&server)
            {
                anyhow::bail!("Failed to connect to \"{server}\": {error}");
            }
            let done = switchboard_engine::approvals::approve(m, &server, &tools).await?;
            for k in &done.approved {
                println!(
                    "Approved {} of \"{server}\"",
                    switchboard_engine::approvals::describe(k)
                );
            }
            for k in &done.forgotten {
                println!(
                    "Forgot {} of \"{server}\" (no longer offered)",
                    switchboard_engine::approvals::describe(k)
                );
            }
        }
        Command::Scan { json, servers } => {
            m.start(pick(d, &servers)?).await;
            m.settle().await;
            first_use(m).await;
            let report = switchboard_engine::approvals::report(m).await;
            let high = report
                .servers
                .iter()
                .flat_map(|s| {
                    s.findings
                        .iter()
                        .chain(s.items.iter().flat_map(|i| i.findings.iter()))
                })
                .filter(|f| f.severity == Severity::High)
                .count();
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print_scan(&report);
            }
            if high > 0 {
                anyhow::bail!(
                    "{high} high-severity finding{} (see above)",
                    if high == 1 { "" } else { "s" }
                );
            }
        }
        Command::Call {
            name,
            args,
            json,
            servers,
        } => {
            let args: Value = serde_json::from_str(&args)
                .map_err(|e| anyhow::anyhow!("--args is not valid JSON: {e}"))?;
            let Value::Object(args) = args else {
                anyhow::bail!("--args must be a JSON object")
            };
            m.start(pick(d, &servers)?).await;
            match m.call_tool(&name, Some(args), None).await {
                Ok(out) => {
                    if json {
                        println!(
                            "{}",
                            serde_json::to_string_pretty(
                                &json!({"text": out.text, "isError": out.is_error, "content": out.content, "structuredContent": out.structured_content})
                            )?
                        );
                    } else {
                        println!("{}", out.text);
                    }
                }
                Err(e @ CallError::UnknownTool(_)) => {
                    anyhow::bail!("{e} (see `switchboard tools`)")
                }
                Err(e) => anyhow::bail!("{e}"),
            }
        }
        Command::Logs { server, follow } => {
            m.start(pick(d, std::slice::from_ref(&server))?).await;
            m.settle().await;
            for l in m.logs(&server).unwrap_or_default() {
                println!("{} {:<9} {}", l.at, l.kind, l.text);
            }
            if follow {
                let mut rx = m.subscribe();
                while let Ok(ev) = rx.recv().await {
                    if let switchboard_engine::events::EngineEvent::Log { server: s, lines } = ev {
                        if s == server {
                            for line in lines {
                                println!("{} {:<9} {}", line.at, line.kind, line.text);
                            }
                        }
                    }
                }
            } else {
                tokio::time::sleep(Duration::from_millis(0)).await;
            }
        }
        Command::Resources { server } => {
            let s = server.clone();
            let v = one(m, d, &server, |m| async move { m.list_resources(&s).await }).await?;
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Command::Read { server, uri } => {
            let s = server.clone();
            let v = one(
                m,
                d,
                &server,
                |m| async move { m.read_resource(&s, &uri).await },
            )
            .await?;
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Command::Prompts { server } => {
            let s = server.clone();
            let v = one(m, d, &server, |m| async move { m.list_prompts(&s).await }).await?;
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Command::Prompt { server, name, args } => {
            let args: Value = serde_json::from_str(&args)
                .map_err(|e| anyhow::anyhow!("--args is not valid JSON: {e}"))?;
            let Value::Object(args) = args else {
                anyhow::bail!("--args must be a JSON object")
            };
            let s = server.clone();
            let v = one(m, d, &server, |m| async move {
                m.get_prompt(&s, &name, Some(args)).await
            })
            .await?;
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        _ => unreachable!("not a runtime command"),
    }
    Ok(())
}

/// Trust on first use for every connected server (as the app does).
async fn first_use(m: &Manager) {
    use switchboard_engine::approvals::{connected, first_use_of};
    first_use_of(m, &connected(m), None).await;
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::High => "high",
        Severity::Medium => "medium",
        Severity::Low => "low",
    }
}

/// `switchboard scan`: each finding under its server and item.
fn print_scan(report: &switchboard_engine::tool_trust::TrustReport) {
    if let Some(p) = &report.problem {
        println!("warning: {p}");
    }
    let mut total = 0;
    for s in &report.servers {
        let print = |f: &switchboard_engine::tool_trust::Finding| {
            println!(
                "    {:<6} {:<24} {}",
                severity(f.severity),
                f.rule,
                f.message
            );
            if let Some(v) = &f.visible {
                println!("           as read: {v}");
            }
        };
        for f in &s.findings {
            println!("  {}", s.server);
            print(f);
            total += 1;
        }
        for i in &s.items {
            if i.findings.is_empty() {
                continue;
            }
            let pin = match i.pin {
                PinState::Approved => "approved",
                PinState::New => "new",
                PinState::Changed => "changed",
            };
            println!(
                "  {}/{} ({}, {pin}{})",
                s.server,
                i.name,
                i.kind.word(),
                if i.held {
                    ", held from the gateway"
                } else {
                    ""
                }
            );
            for f in &i.findings {
                print(f);
                total += 1;
            }
        }
    }
    let items: usize = report.servers.iter().map(|s| s.items.len()).sum();
    println!(
        "{total} finding{} in {items} tools, prompts and templates of {} servers",
        if total == 1 { "" } else { "s" },
        report.servers.len()
    );
}

/// The URL of a remote server, for signing in.
fn remote_url(d: &Discovery, server: &str) -> anyhow::Result<String> {
    let s = d.server(server).ok_or_else(|| {
        anyhow::anyhow!("no server named \"{server}\" was found (see `switchboard discover`)")
    })?;
    match (&s.winner.def.transport, &s.winner.def.url) {
        (t, Some(u)) if *t != switchboard_engine::config::Transport::Stdio => Ok(u.clone()),
        _ => anyhow::bail!("\"{server}\" is not a remote (http or sse) server; only remote servers sign in with OAuth"),
    }
}

/// `switchboard login SERVER`: the OAuth flow, then a connection to show it works.
async fn login(
    m: &Manager,
    d: &Discovery,
    server: &str,
    no_browser: bool,
    timeout: Duration,
) -> anyhow::Result<()> {
    use switchboard_engine::auth::oauth;
    let url = remote_url(d, server)?;
    let vault = m.vault().expect("the CLI always has the keychain");
    // A pre-registered OAuth app in the definition (`claude mcp add
    // --client-id … --callback-port …`) is used instead of registering.
    let app = d.server(server).and_then(|s| s.winner.def.oauth.clone());
    let options = oauth::SignInOptions::for_app(server, app.as_ref(), &vault).await?;
    let pending = oauth::begin_with(server, &url, &vault, options).await?;
    // `begin` refuses a link that is not a web page; checked again before it is shown or opened.
    let link = switchboard_engine::opener::check_link(
        &pending.url,
        switchboard_engine::opener::SIGN_IN_METADATA,
    )?;
    println!("To sign in to \"{server}\", open this link in your browser:\n\n  {link}\n");
    if !no_browser && open::that_detached(link.as_str()).is_ok() {
        println!("(opened in your browser)");
    }
    println!(
        "Waiting for the browser to come back to {} ...",
        pending.redirect_uri
    );
    pending.finish(timeout).await?;
    println!(
        "Signed in to \"{server}\"; the tokens are in the {}.",
        vault.describe()
    );
    m.start(pick(d, &[server.to_string()])?).await;
    m.settle().await;
    let state = m
        .state(server)
        .ok_or_else(|| anyhow::anyhow!("\"{server}\" is not running"))?;
    match &state.status {
        switchboard_engine::events::ServerStatus::Connected => {
            println!("Connected: {} tools.", state.tool_count);
            Ok(())
        }
        switchboard_engine::events::ServerStatus::Failed { error } => {
            anyhow::bail!("signed in, but \"{server}\" did not connect: {error}")
        }
        switchboard_engine::events::ServerStatus::NeedsAuth { message } => {
            anyhow::bail!("signed in, but \"{server}\" still refuses: {message}")
        }
        other => anyhow::bail!("signed in, but \"{server}\" is {}", other.label()),
    }
}

async fn logout(d: &Discovery, server: &str) -> anyhow::Result<()> {
    use switchboard_engine::auth::{oauth, vault::Vault};
    remote_url(d, server)?;
    let vault = Vault::keychain();
    oauth::sign_out(server, &vault).await?;
    println!(
        "Signed out of \"{server}\": its tokens were removed from the {}.",
        vault.describe()
    );
    Ok(())
}

/// Start just `server`, wait for it, and run `f` on the manager.
async fn one<F, Fut>(m: &Manager, d: &Discovery, server: &str, f: F) -> anyhow::Result<Value>
where
    F: FnOnce(Manager) -> Fut,
    Fut: std::future::Future<Output = Result<Value, switchboard_engine::manager::RegistryError>>,
{
    let report = m.start(pick(d, &[server.to_string()])?).await;
    if let Some(e) = report.failed.first() {
        anyhow::bail!("Failed to connect to \"{}\": {}", e.server, e.error);
    }
    Ok(f(m.clone()).await?)
}

/// `switchboard watch`: start every server (startup gate), then follow the
/// config files and print every engine event until interrupted.
async fn watch(
    m: &Manager,
    host: &Host,
    d: &Discovery,
    json: bool,
    projects: &[std::path::PathBuf],
) -> anyhow::Result<()> {
    use switchboard_engine::events::EngineEvent;
    use switchboard_engine::watch::{settings_from_disk, Live, WatchOptions};
    use tokio::sync::broadcast::error::RecvError;

    // Subscribed before anything starts, so no status change is missed.
    let mut manager_events = m.subscribe();
    let report = m.start(Wanted::from_discovery(d)).await;
    if json {
        println!("{}", json!({"type": "started", "report": report}));
    } else {
        println!(
            "started {} servers ({} connected, {} failed) in {} ms",
            report.connected.len() + report.failed.len() + report.deferred.len(),
            report.connected.len(),
            report.failed.len(),
            report.elapsed_ms
        );
    }
    let opts = WatchOptions {
        discover: switchboard_engine::discovery::DiscoverOptions {
            extra_projects: projects.to_vec(),
        },
        ..WatchOptions::default()
    };
    let live = Live::start(
        host.clone(),
        settings_from_disk(host),
        m.clone(),
        d.clone(),
        opts,
    )
    .await?;
    let mut watch_events = live.subscribe();
    let folders = live.watched_folders();
    if json {
        println!("{}", json!({"type": "watching", "folders": folders}));
    } else {
        println!("watching {} folders (Ctrl-C to stop)", folders.len());
    }
    for e in live.errors() {
        eprintln!("warning: {e}");
    }
    loop {
        let ev = tokio::select! {
            e = manager_events.recv() => e,
            e = watch_events.recv() => e,
        };
        let ev = match ev {
            Ok(ev) => ev,
            Err(RecvError::Lagged(n)) => {
                eprintln!("warning: {n} events were dropped (output too slow)");
                continue;
            }
            Err(RecvError::Closed) => break,
        };
        if json {
            let mut v = serde_json::to_value(&ev)?;
            if let EngineEvent::Reconciled { report } = &ev {
                // Each server's fate, and whether it kept its connection.
                let mut servers = vec![];
                for (list, action) in [
                    (&report.kept, "kept"),
                    (&report.updated, "updated"),
                    (&report.started, "started"),
                    (&report.stopped, "stopped"),
                ] {
                    for n in list {
                        servers.push(json!({"name": n, "action": action, "keptConnection": action == "kept", "pid": m.state(n).and_then(|s| s.pid)}));
                    }
                }
                for f in &report.failed {
                    servers.push(json!({"name": f.server, "action": "failed", "keptConnection": false, "error": f.error}));
                }
                v["servers"] = Value::Array(servers);
            }
            println!("{v}");
        } else {
            match &ev {
                EngineEvent::Status { server, status } => println!(
                    "{server}: {}",
                    match status {
                        switchboard_engine::events::ServerStatus::Failed { error } =>
                            format!("failed: {error}"),
                        s => s.label().to_string(),
                    }
                ),
                EngineEvent::Reconciled { report } => {
                    let f = |l: &Vec<String>| {
                        if l.is_empty() {
                            "-".to_string()
                        } else {
                            l.join(", ")
                        }
                    };
                    println!(
                        "reconciled: started {}; updated {}; stopped {}; kept {}",
                        f(&report.started),
                        f(&report.updated),
                        f(&report.stopped),
                        f(&report.kept)
                    );
                    for e in &report.failed {
                        println!("  failed {}: {}", e.server, e.error);
                    }
                }
                EngineEvent::SourceChanged { source, path } => {
                    println!("changed: {source} ({})", path.display())
                }
                EngineEvent::DiscoveryChanged { servers, warnings } => {
                    println!("discovered {servers} servers, {warnings} warnings")
                }
                EngineEvent::Log { .. } | EngineEvent::Tools { .. } => {}
                other => println!("{}", serde_json::to_string(other)?),
            }
        }
    }
    Ok(())
}
