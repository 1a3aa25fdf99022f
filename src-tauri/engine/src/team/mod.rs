//! The team gateway: the gateway as a headless service for a team, e.g. on
//! Kubernetes (`switchboard serve --http 0.0.0.0:8080 --config DIR
//! --oidc-issuer URL --resource URL`; see `src-tauri/engine/deploy/`).
//!
//! - Servers come from `DIR/servers.json` (Switchboard's own format),
//!   profiles and tool switches from `DIR/settings.json`, and who may use
//!   which profiles from `DIR/team.json` ([`access`]). The folder is
//!   followed: a ConfigMap update or a git-sync checkout applies without a
//!   restart. Secrets come from the environment (`${env:NAME}`) or mounted
//!   files (`${file:/path}`); no keychain, no display.
//! - Each person signs in with the team's identity provider: the gateway is
//!   an OAuth 2.1 protected resource ([`http`]: RFC 9728 metadata, `401`
//!   with `WWW-Authenticate`), validating access tokens as JWTs ([`oidc`]).
//!   The token stays here: upstream servers get the gateway's own secrets.
//! - Replicas share nothing: every MCP request is answered statelessly
//!   (no `Mcp-Session-Id`), so any replica answers any request.
//! - `/healthz`, `/readyz`, `/metrics` ([`metrics`]), and a graceful stop on
//!   SIGTERM (running calls finish, new requests get 503, servers stop).

pub mod access;
pub mod folder;
pub mod http;
pub mod metrics;
pub mod oidc;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::host::Host;

/// What `serve` needs to run as a team gateway.
#[derive(Debug, Clone)]
pub struct TeamOptions {
    /// The folder with `servers.json`, `settings.json` and `team.json`.
    pub config_dir: PathBuf,
    /// Writable: the call journal, caches, and `HOME` for the servers.
    pub state_dir: PathBuf,
    /// The identity provider's issuer URL (its tokens' `iss`).
    pub issuer: String,
    /// This gateway's public URL (tokens' `aud`, RFC 8707).
    pub resource: String,
    /// The token claim that lists a person's groups.
    pub groups_claim: String,
    /// How long running calls may go on after SIGTERM.
    pub shutdown_grace: Duration,
    /// How long a request's head, and an MCP request's body, may take to
    /// arrive (slow clients are cut off, not waited for).
    pub request_timeout: Duration,
}

/// The default `--shutdown-grace`: Kubernetes waits 30 s before SIGKILL.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(25);
/// The default `--request-timeout`.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

impl TeamOptions {
    /// Checks the folder before anything starts and gives its access rules;
    /// the error names the file or flag and says what to do.
    pub fn check(&self) -> Result<access::Access, String> {
        let dir = &self.config_dir;
        if !dir.is_dir() {
            return Err(format!(
                "--config {}: not a folder; give the folder with servers.json, settings.json and team.json (a mounted ConfigMap or a git checkout)",
                dir.display()
            ));
        }
        let servers = dir.join("servers.json");
        if let Err(e) = std::fs::metadata(&servers) {
            return Err(format!(
                "{}: cannot be read ({e}); it lists the team's servers: {{\"mcpServers\": {{\"NAME\": {{\"command\": …}} }} }}",
                servers.display()
            ));
        }
        let access = access::Access::load(dir)?;
        oidc_url("--oidc-issuer", &self.issuer)?;
        oidc_url("--resource", &self.resource)?;
        std::fs::create_dir_all(&self.state_dir).map_err(|e| {
            format!(
                "--state {}: cannot be created ({e}); give a writable folder (an emptyDir volume)",
                self.state_dir.display()
            )
        })?;
        Ok(access)
    }

    /// The machine as the team gateway sees it: `HOME` is the state folder
    /// (nothing of the machine's own clients is read), Switchboard's own
    /// folder is `--config`, the environment is the process's (secrets).
    pub fn host(&self) -> Host {
        let mut vars: std::collections::HashMap<String, String> = std::env::vars().collect();
        for v in [
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_CACHE_HOME",
            "XDG_STATE_HOME",
        ] {
            vars.remove(v);
        }
        let home = absolute(&self.state_dir);
        vars.insert("HOME".into(), home.to_string_lossy().into_owned());
        vars.insert(
            crate::host::CONFIG_DIR_VAR.into(),
            absolute(&self.config_dir).to_string_lossy().into_owned(),
        );
        Host {
            os: crate::host::Os::Linux,
            // System-wide client files (/etc/…) are not the team's.
            system_root: home.join("no-system-files"),
            home,
            vars,
        }
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// An `https` URL (or `http` on a loopback host, for tests), without a fragment.
pub fn oidc_url(flag: &str, raw: &str) -> Result<url::Url, String> {
    let u = url::Url::parse(raw).map_err(|e| format!("{flag} {raw}: not a URL ({e})"))?;
    let loopback = match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    };
    match u.scheme() {
        "https" => {}
        "http" if loopback => {}
        _ => {
            return Err(format!(
                "{flag} {raw}: must be an https URL (http only on this machine, for tests)"
            ))
        }
    }
    if u.fragment().is_some() || u.query().is_some() {
        return Err(format!(
            "{flag} {raw}: must not have a query or fragment (RFC 8707, RFC 9728)"
        ));
    }
    Ok(u)
}

/// Runs the team gateway on `listener` until `shutdown` resolves (SIGTERM),
/// then drains: `/readyz` and new MCP requests answer 503, running calls get
/// `opts.shutdown_grace` to finish, connections close, servers stop.
/// `listening` is told the gateway's URL once it accepts connections.
pub async fn run(
    opts: TeamOptions,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    use std::sync::Arc;
    let access = opts.check().map_err(anyhow::Error::msg)?;
    let host = opts.host();
    let (settings, problem) = crate::settings::Settings::load(&host);
    if let Some(p) = problem {
        anyhow::bail!("{p}");
    }
    let unknown = access.unknown_profiles(|p| {
        p.eq_ignore_ascii_case(crate::profile::EVERYTHING)
            || settings
                .profiles
                .list
                .iter()
                .any(|x| x.name.eq_ignore_ascii_case(p))
    });
    if !unknown.is_empty() {
        eprintln!(
            "switchboard: {}: no profile named {} in settings.json yet; it serves nothing until it is added",
            opts.config_dir.join(access::FILE).display(),
            unknown.join(", ")
        );
    }
    let engine = Arc::new(crate::engine::Engine::new(
        host.clone(),
        crate::manager::ManagerOptions::for_host(&host),
        vec![],
    ));
    let manager = engine.manager().clone();
    let journal = manager.open_journal(&host, &settings);
    journal.follow_settings(&host);
    let d = engine.rediscover();
    for s in &d.servers {
        for w in &s.winner.warnings {
            eprintln!("switchboard: {}: {w}", s.name());
        }
    }
    let gateway = crate::gateway::Gateway::new(
        manager.clone(),
        crate::gateway::switches::follow(&host),
        crate::gateway::GatewayOptions::default(),
    );
    let metrics = metrics::Metrics::new();
    let stop = tokio_util::sync::CancellationToken::new();
    let team = http::TeamHttp::new(
        gateway.clone(),
        metrics.clone(),
        access,
        &opts,
        stop.clone(),
    )
    .map_err(anyhow::Error::msg)?;
    // Servers start now; MCP requests wait at most the startup gate.
    let starting = {
        let (engine, gateway) = (engine.clone(), gateway.clone());
        tokio::spawn(async move {
            let report = engine
                .manager()
                .start(crate::manager::Wanted::from_discovery(&d))
                .await;
            gateway.set_ready();
            for f in &report.failed {
                eprintln!("switchboard: {} did not start: {}", f.server, f.error);
            }
            if let Err(e) = engine.watch().await {
                eprintln!("switchboard: not following servers.json: {e}");
            }
        })
    };
    // The identity provider's metadata and keys, retried until read.
    let discovering = {
        let team = team.clone();
        let settings = oidc::OidcSettings {
            issuer: opts.issuer.clone(),
            // As the operator wrote it: the URL crate would add a "/" to a
            // bare origin, and `aud` is compared as a string.
            resource: opts.resource.clone(),
            groups_claim: opts.groups_claim.clone(),
            leeway: oidc::DEFAULT_LEEWAY,
        };
        tokio::spawn(async move {
            let mut wait = Duration::from_secs(1);
            loop {
                match oidc::Validator::discover(settings.clone(), oidc::http_client()).await {
                    Ok(v) => {
                        team.set_validator(Arc::new(v));
                        eprintln!("switchboard: signing in with {}", settings.issuer);
                        return;
                    }
                    Err(e) => {
                        let why = format!(
                            "the identity provider {} cannot be used yet: {e}",
                            settings.issuer
                        );
                        eprintln!("switchboard: {why}; trying again in {} s", wait.as_secs());
                        team.set_auth_problem(why);
                    }
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(30));
            }
        })
    };
    // The folder: new access rules at once; servers and profiles through
    // the engine's own re-reading.
    let following = {
        let (team, engine, host, dir) = (
            team.clone(),
            engine.clone(),
            host.clone(),
            opts.config_dir.clone(),
        );
        folder::follow(opts.config_dir.clone(), move || {
            let (team, engine, host, dir) =
                (team.clone(), engine.clone(), host.clone(), dir.clone());
            async move {
                match access::Access::load(&dir) {
                    Ok(a) => {
                        team.set_access(a);
                        team.metrics().config_reloaded(true);
                    }
                    Err(e) => {
                        team.metrics().config_reloaded(false);
                        eprintln!("switchboard: {e}; the previous access rules stay");
                    }
                }
                crate::settings::nudge(&host);
                engine.refresh().await;
                eprintln!("switchboard: {} changed: applied", dir.display());
            }
        })
    };
    let serving = tokio::spawn(http::serve(
        listener,
        team.router(),
        metrics.clone(),
        opts.request_timeout,
        stop.clone(),
    ));
    shutdown.await;
    eprintln!(
        "switchboard: stopping: new requests get 503, running calls have {} s to finish",
        opts.shutdown_grace.as_secs()
    );
    team.start_draining();
    if !team.wait_idle(opts.shutdown_grace).await {
        eprintln!(
            "switchboard: {} calls still running after {} s; stopping anyway",
            metrics.requests_in_flight(),
            opts.shutdown_grace.as_secs()
        );
    }
    stop.cancel();
    let _ = serving.await;
    drop(following);
    discovering.abort();
    starting.abort();
    manager.shutdown().await;
    journal.flush_within(Duration::from_secs(3));
    eprintln!("switchboard: stopped");
    Ok(())
}
