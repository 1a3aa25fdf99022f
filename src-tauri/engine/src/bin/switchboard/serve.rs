//! `switchboard serve`: the gateway as a process. Over stdio it
//! speaks MCP on stdin/stdout and writes nothing else there (logs go to
//! stderr); with `--http ADDR` it serves streamable HTTP on loopback and
//! prints one JSON line, `{"url": ..., "pid": ...}`, once listening. Also
//! `switchboard gateway token` and `switchboard tool on|off NAME…`.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::ServiceExt;
use serde_json::json;
use switchboard_engine::discovery::Discovery;
use switchboard_engine::engine::Engine;
use switchboard_engine::gateway::token::{GatewayToken, TokenOrigin};
use switchboard_engine::gateway::{http, switches, Gateway, GatewayOptions};
use switchboard_engine::host::Host;
use switchboard_engine::manager::{ManagerOptions, Wanted};
use tokio_util::sync::CancellationToken;

pub struct Serve {
    pub http: Option<String>,
    pub server: Option<String>,
    pub profile: Option<String>,
    pub tool_search: bool,
    pub accept_defaults: bool,
    pub projects: Vec<PathBuf>,
}

pub async fn serve(host: Host, o: Serve) -> anyhow::Result<()> {
    // Everything that can be refused is refused before any server starts.
    if let Some(p) = &o.profile {
        if o.server.is_some() {
            anyhow::bail!("serve: give --server or --profile, not both");
        }
        let (settings, _) = switchboard_engine::settings::Settings::load(&host);
        settings
            .profiles
            .filter(p)
            .map_err(|e| anyhow::anyhow!("serve --profile: {e}"))?;
    }
    let listen = match &o.http {
        Some(addr) => {
            let a = http::loopback_addr(addr).map_err(|e| anyhow::anyhow!("serve --http: {e}"))?;
            let token = GatewayToken::for_this_machine()?;
            if token.origin == TokenOrigin::Created {
                eprintln!("switchboard: created the gateway token (kept in the OS keychain; `switchboard gateway token` prints it)");
            }
            Some((a, token))
        }
        None => None,
    };
    let engine = Arc::new(Engine::new(
        host.clone(),
        ManagerOptions::for_host(&host),
        o.projects.clone(),
    ));
    let manager = engine.manager().clone();
    // Every call through this gateway goes into the call journal (Activity),
    // which the app and other `serve` processes write too.
    // Its limits and its OpenTelemetry export follow the settings file.
    let journal = {
        let (settings, _) = switchboard_engine::settings::Settings::load(&host);
        let j = manager.open_journal(&host, &settings);
        j.follow_settings(&host);
        j
    };
    if o.accept_defaults {
        manager.set_elicitation_handler(Some(
            switchboard_engine::manager::connection::accept_defaults_handler("switchboard serve"),
        ));
    }
    let d = engine.rediscover();
    let wanted = pick(&d, o.server.as_deref())?;
    let gateway = Gateway::new(
        manager.clone(),
        switches::follow(&host),
        GatewayOptions {
            tool_search: o.tool_search,
            ..Default::default()
        },
    );
    let gateway = match (&o.server, &o.profile) {
        (Some(s), _) => gateway.scoped(s),
        (None, Some(p)) => gateway.for_profile(p),
        (None, None) => gateway,
    };
    // Servers start now; a client's first list waits at most the startup gate.
    let starting = {
        let (engine, gateway, follow) = (engine.clone(), gateway.clone(), o.server.is_none());
        let roots = d.project_folders();
        tokio::spawn(async move {
            let m = engine.manager();
            m.set_roots(&roots).await;
            let report = m.start(wanted).await;
            gateway.set_ready();
            for f in &report.failed {
                eprintln!("switchboard: {} did not start: {}", f.server, f.error);
            }
            // The aggregate follows the config files, like the app.
            if follow {
                if let Err(e) = engine.watch().await {
                    eprintln!("switchboard: not following config changes: {e}");
                }
            }
        })
    };
    let result = match listen {
        None => {
            let session = gateway.session().serve(rmcp::transport::stdio()).await;
            match session {
                Ok(running) => {
                    tokio::select! {
                        _ = running.waiting() => Ok(()),
                        _ = crate::runtime::interrupted() => Ok(()),
                    }
                }
                Err(e) => Err(anyhow::anyhow!(
                    "the MCP client on stdin/stdout did not initialize: {e}"
                )),
            }
        }
        Some((addr, token)) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
            let bound = listener.local_addr()?;
            let stop = CancellationToken::new();
            let router = http::router(gateway.clone(), token, bound, stop.clone());
            let path = match (&o.server, &o.profile) {
                (Some(s), _) => format!("/mcp/{s}"),
                (None, Some(p)) => format!("/mcp/p/{}", profile_path(p)),
                (None, None) => "/mcp".to_string(),
            };
            let url = format!("http://{bound}{path}");
            {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                writeln!(out, "{}", json!({ "url": url, "pid": std::process::id() }))?;
                out.flush()?;
            }
            eprintln!("switchboard: gateway listening at {url}");
            let serving = http::serve(listener, router, stop.clone());
            tokio::pin!(serving);
            tokio::select! {
                r = &mut serving => r.map_err(Into::into),
                _ = crate::runtime::interrupted() => {
                    stop.cancel();
                    let _ = serving.await;
                    Ok(())
                }
            }
        }
    };
    starting.abort();
    manager.shutdown().await;
    // A few seconds at most: a journal another program keeps locked does
    // not hold the exit up.
    journal.flush_within(std::time::Duration::from_secs(3));
    result
}

/// `serve --config DIR --http ADDR …`: the team gateway (any address; every
/// request needs a token from the team's identity provider). Prints
/// {"url": ..., "pid": ...} once listening, like `serve --http`.
pub async fn serve_team(
    addr: String,
    o: switchboard_engine::team::TeamOptions,
) -> anyhow::Result<()> {
    o.check()
        .map_err(|e| anyhow::anyhow!("serve --config: {e}"))?;
    let a: std::net::SocketAddr = addr.parse().map_err(|_| {
        anyhow::anyhow!("serve --http {addr}: not an address with a port (e.g. 0.0.0.0:8080)")
    })?;
    let listener = tokio::net::TcpListener::bind(a)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {a}: {e}"))?;
    let bound = listener.local_addr()?;
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "{}",
            json!({ "url": format!("http://{bound}/mcp"), "pid": std::process::id() })
        )?;
        out.flush()?;
    }
    eprintln!(
        "switchboard: team gateway listening on {bound} (public URL {})",
        o.resource
    );
    switchboard_engine::team::run(o, listener, crate::runtime::interrupted()).await
}

/// The servers to run: every runnable winner (the aggregate serves all but
/// the excluded ones, which still run as they do in the app), or just one.
fn pick(d: &Discovery, only: Option<&str>) -> anyhow::Result<Vec<Wanted>> {
    let all = Wanted::from_discovery(d);
    match only {
        None => Ok(all),
        Some(n) => {
            let w: Vec<Wanted> = all.into_iter().filter(|w| w.def.name == n).collect();
            if w.is_empty() {
                anyhow::bail!("no runnable server named \"{n}\" (see `switchboard discover`)");
            }
            Ok(w)
        }
    }
}

/// `switchboard gateway token`.
pub fn print_token() -> anyhow::Result<()> {
    let t = GatewayToken::for_this_machine()?;
    println!("{}", t.reveal());
    match t.origin {
        TokenOrigin::Environment => {
            eprintln!("(from {})", switchboard_engine::gateway::token::TOKEN_ENV)
        }
        TokenOrigin::Created => eprintln!("(created now; kept in the OS keychain)"),
        TokenOrigin::Keychain => {}
    }
    Ok(())
}

/// `switchboard tool off|on NAME…`: NAME is a gateway (sanitized) tool name,
/// or SERVER/TOOL with the raw names. Names are found in the tool cache; if
/// one is not there, the servers are started to list their tools.
pub async fn switch_tools(
    host: Host,
    d: Discovery,
    on: bool,
    names: Vec<String>,
) -> anyhow::Result<()> {
    let opts = ManagerOptions::for_host(&host);
    let wanted = Wanted::from_discovery(&d);
    let mut index = cached_index(&opts, &wanted).await;
    let mut started = None;
    if names.iter().any(|n| resolve(&index, &wanted, n).is_none()) {
        let m = switchboard_engine::manager::Manager::new(opts);
        m.set_vault(Some(switchboard_engine::auth::vault::Vault::keychain()));
        m.start(wanted.clone()).await;
        m.settle().await;
        index = m
            .tools()
            .tools
            .iter()
            .map(|t| (t.name.clone(), (t.server.clone(), t.tool.clone())))
            .collect();
        started = Some(m);
    }
    let mut found = vec![];
    let mut unknown = vec![];
    for n in &names {
        match resolve(&index, &wanted, n) {
            Some(r) => found.push((n.clone(), r)),
            None => unknown.push(n.clone()),
        }
    }
    if let Some(m) = started {
        m.shutdown().await;
    }
    if !unknown.is_empty() {
        anyhow::bail!("Unknown tool {} (see `switchboard tools`; SERVER/TOOL names a tool by its server's own name)", unknown.iter().map(|u| format!("\"{u}\"")).collect::<Vec<_>>().join(", "));
    }
    let pairs: Vec<(String, String)> = found.iter().map(|(_, r)| r.clone()).collect();
    switches::save_tools(&host, &pairs, on)
        .map_err(switchboard_engine::writer::edit::EditError::from)?;
    for (n, (server, tool)) in &found {
        if on {
            println!("Switched on {n} ({server}/{tool}): the gateway offers it again");
        } else {
            println!("Switched off {n} ({server}/{tool}): the gateway no longer offers it");
        }
    }
    Ok(())
}

type Index = std::collections::HashMap<String, (String, String)>;

/// Gateway names from the tool cache, as the manager would assign them.
async fn cached_index(opts: &ManagerOptions, wanted: &[Wanted]) -> Index {
    let cache = switchboard_engine::manager::tool_cache::ToolCache::new(opts.cache_path.clone());
    let mut refs = vec![];
    for w in wanted {
        let hash = switchboard_engine::manager::tool_cache::config_hash(&w.def);
        for t in cache
            .get(&w.def.name, &hash)
            .await
            .unwrap_or_default()
            .iter()
        {
            refs.push(switchboard_engine::naming::ToolRef::new(
                w.def.name.clone(),
                t.name.to_string(),
            ));
        }
    }
    let naming = switchboard_engine::naming::assign_names(&refs);
    refs.into_iter()
        .zip(naming.names)
        .map(|(r, n)| (n, (r.server, r.tool)))
        .collect()
}

fn resolve(index: &Index, wanted: &[Wanted], name: &str) -> Option<(String, String)> {
    if let Some(r) = index.get(name) {
        return Some(r.clone());
    }
    let (server, tool) = name.split_once('/')?;
    let known = wanted.iter().any(|w| w.def.name == server)
        && index.values().any(|(s, t)| s == server && t == tool);
    known.then(|| (server.to_string(), tool.to_string()))
}

/// A profile's name as a URL path segment (spaces and the like escaped).
pub fn profile_path(name: &str) -> String {
    url::form_urlencoded::byte_serialize(name.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}
