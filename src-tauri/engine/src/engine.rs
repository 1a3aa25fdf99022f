//! `Engine`: the one object a front end (the app, the CLI's long-running
//! commands) holds. It owns the settings, the latest discovery, the manager,
//! and routes every change through the writer, then reconciles.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde::Serialize;

use crate::config::ServerDef;
use crate::discovery::{absolute, discover_after, DiscoverOptions, DiscoveredServer, Discovery};
use crate::host::Host;
use crate::manager::{Manager, ManagerOptions, ServerState, StartupReport, Wanted};
use crate::settings::Settings;
use crate::sources::text::EntryText;
use crate::sources::SourceSpec;
use crate::writer::edit::{EditError, ServerEdit, Writer};
use crate::writer::history::{History, HistoryEntry, UndoError, UndoReport};
use crate::writer::ContentHash;

/// A server as the UI shows it: its definitions (winner first) and, when
/// it is managed, its runtime state.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerView {
    #[serde(flatten)]
    pub discovered: DiscoveredServer,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub runtime: Option<ServerState>,
    /// A connected team gateway's team servers and their tools (`team_servers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub team_servers: Option<Vec<crate::team_servers::TeamServer>>,
}

/// A `contentHash` as `SourceInfo` shows it (hex SHA-256).
fn seen_hash(hex: &str) -> Result<ContentHash, EditError> {
    let bytes = hex::decode(hex)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok());
    bytes.map(ContentHash).ok_or_else(|| {
        EditError::Invalid(format!(
            "Invalid server config: \"{hex}\" is not a content hash from list_sources"
        ))
    })
}

/// The manager's defaults as Settings keeps them.
fn server_defaults(d: &crate::settings::ServerDefaults) -> crate::manager::ManagerDefaults {
    crate::manager::ManagerDefaults {
        timeout: std::time::Duration::from_millis(d.timeout_ms),
        restart_policy: d.restart_policy,
        health_interval: std::time::Duration::from_millis(d.health_interval_ms),
    }
}

/// The defaults settings.json keeps, unless a hand edit put a value there
/// that no server could work with (a timeout of 0, say): then they are not
/// used, and stderr says which field and why.
fn saved_defaults(d: &crate::settings::ServerDefaults) -> Option<crate::manager::ManagerDefaults> {
    match d.check() {
        Ok(()) => Some(server_defaults(d)),
        Err(why) => {
            eprintln!("switchboard: settings.json: serverDefaults not used: {why}");
            None
        }
    }
}

pub struct Engine {
    host: Host,
    settings: RwLock<Settings>,
    discovery: RwLock<Arc<Discovery>>,
    manager: Manager,
    /// Projects trusted for this run only (CLI `--project`).
    extra_projects: Vec<PathBuf>,
    /// Serializes edits: read-modify-write of settings and files.
    edits: tokio::sync::Mutex<()>,
    /// The file watcher, once `watch` started it.
    /// Once running, its discovery is the engine's snapshot (one source of
    /// truth: the server list never lags behind a reconcile).
    live: RwLock<Option<Arc<crate::watch::Live>>>,
    /// Sign-ins waiting for the browser, by server: a new one cancels the old.
    sign_ins: std::sync::Mutex<
        std::collections::HashMap<String, (u64, tokio_util::sync::CancellationToken)>,
    >,
    /// Pins and approval modes (`tool_trust`), shared with the manager's gateways.
    trust: Arc<crate::tool_trust::TrustCell>,
    /// Servers added or edited here: their next connect is approved.
    approve_next: crate::approvals::ApproveNext,
    /// Ends trust on first use (started once, by `start` or `watch`).
    keeper: tokio_util::sync::CancellationToken,
    keeping: std::sync::atomic::AtomicBool,
    /// How clients' `switchboard` entries reach the gateway when a profile
    /// is applied through it (`set_gateway_target`).
    gateway_target: RwLock<Option<crate::connect::Via>>,
}

impl Engine {
    pub fn new(host: Host, manager_opts: ManagerOptions, extra_projects: Vec<PathBuf>) -> Engine {
        let (settings, _warning) = Settings::load(&host);
        let manager = Manager::new(manager_opts);
        // Defaults changed in Settings replace the options' (a server's own
        // values still win).
        if settings.server_defaults != crate::settings::ServerDefaults::default() {
            if let Some(d) = saved_defaults(&settings.server_defaults) {
                manager.set_defaults(d);
            }
        }
        // Stored sign-ins come from the OS keychain.
        manager.set_vault(Some(crate::auth::vault::Vault::keychain()));
        let trust = crate::tool_trust::TrustCell::for_host(&host);
        manager.set_trust(Some(trust.clone()));
        Engine {
            trust,
            approve_next: Default::default(),
            keeper: Default::default(),
            keeping: Default::default(),
            gateway_target: RwLock::new(None),
            manager,
            settings: RwLock::new(settings),
            discovery: RwLock::new(Arc::new(Discovery::default())),
            host,
            extra_projects,
            edits: tokio::sync::Mutex::new(()),
            live: RwLock::new(None),
            sign_ins: Default::default(),
        }
    }

    pub fn for_host(host: Host) -> Engine {
        let o = ManagerOptions::for_host(&host);
        Engine::new(host, o, vec![])
    }

    pub fn host(&self) -> &Host {
        &self.host
    }
    pub fn manager(&self) -> &Manager {
        &self.manager
    }
    pub fn settings(&self) -> Settings {
        self.settings.read().unwrap().clone()
    }
    pub fn snapshot(&self) -> Arc<Discovery> {
        if let Some(live) = self.live.read().unwrap().clone() {
            return live.discovery();
        }
        self.discovery.read().unwrap().clone()
    }

    fn options(&self) -> DiscoverOptions {
        DiscoverOptions {
            extra_projects: self.extra_projects.clone(),
        }
    }

    /// Re-read every source (cheap: tens of milliseconds for hundreds of
    /// servers). A file that does not parse keeps its servers from the
    /// previous snapshot (its last good version).
    pub fn rediscover(&self) -> Arc<Discovery> {
        let settings = self.settings();
        let previous = self.snapshot();
        let d = Arc::new(discover_after(
            &self.host,
            &settings,
            &self.options(),
            Some(&previous),
        ));
        *self.discovery.write().unwrap() = d.clone();
        d
    }

    /// `def` as the manager would run it from `source` (Switchboard's own file
    /// when `None`): that client's variable rules and project folder, so a
    /// definition is tested exactly as it would start.
    pub fn wanted_for(&self, def: ServerDef, source: Option<&str>) -> Wanted {
        let d = self.snapshot();
        let src = source.and_then(|id| d.source(id));
        Wanted {
            source: src.map(|s| s.id.clone()),
            project: src.and_then(|s| s.project.clone()),
            expansion: src
                .map(|s| s.client.expansion())
                .unwrap_or(crate::config::vars::Expansion::SWITCHBOARD),
            ..Wanted::new(def)
        }
    }

    /// Follow the approvals files and approve servers on first use (once;
    /// needs the tokio runtime, hence not in `new`).
    fn keep_trust(&self) {
        if self.keeping.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        self.trust.follow();
        crate::approvals::keep(
            self.manager.clone(),
            self.approve_next.clone(),
            self.keeper.clone(),
        );
    }

    /// Discover and start every server behind the startup gate.
    pub async fn start(&self) -> StartupReport {
        self.keep_trust();
        let mut d = self.rediscover();
        // Folders trusted before trust was tied to content: pinned as they
        // are now (a broken settings file is reported elsewhere).
        if let Ok(Some(s)) = crate::projects::pin_unpinned(&self.host, &self.settings(), &d) {
            *self.settings.write().unwrap() = s;
            d = self.rediscover();
        }
        self.manager.set_roots(&d.project_folders()).await;
        self.manager.start(Wanted::from_discovery(&d)).await
    }

    /// Start watching every source file: changes made in other apps are
    /// reconciled within a fraction of a second. Returns the watcher's own
    /// events (`SourceChanged`, `DiscoveryChanged`); the engine's snapshot
    /// follows each re-discovery.
    pub async fn watch(
        self: &Arc<Self>,
    ) -> Result<
        tokio::sync::broadcast::Receiver<crate::events::EngineEvent>,
        crate::watch::WatchError,
    > {
        self.keep_trust();
        let opts = crate::watch::WatchOptions {
            discover: self.options(),
            initial_settings: Some(self.settings()),
            ..Default::default()
        };
        let live = crate::watch::Live::start(
            self.host.clone(),
            crate::watch::settings_from_disk(&self.host),
            self.manager.clone(),
            (*self.snapshot()).clone(),
            opts,
        )
        .await?;
        let rx = live.subscribe();
        let mut sync = live.subscribe();
        *self.live.write().unwrap() = Some(Arc::new(live));
        // Settings edited elsewhere (priority, projects) become ours too.
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                let reread = match sync.recv().await {
                    Ok(crate::events::EngineEvent::DiscoveryChanged { .. }) => true,
                    Ok(_) => false,
                    // Events were missed: one of them may have been a change.
                    Err(RecvError::Lagged(_)) => true,
                    Err(RecvError::Closed) => break,
                };
                let Some(engine) = me.upgrade() else { break };
                if reread {
                    // Between an edit's write and its keeping the settings it
                    // wrote, a read here would put the older file back.
                    let _g = engine.edits.lock().await;
                    let (settings, _) = Settings::load(&engine.host);
                    engine.keep_settings(settings);
                }
            }
        });
        Ok(rx)
    }

    /// Re-discover, then reconcile in the background: returns once the new
    /// snapshot is in place; only changed servers are touched, and their
    /// starts and handshakes arrive as events (`Reconciled` when done). With
    /// the watcher running this goes through it, so the file event for our
    /// own write finds nothing new (no second reconcile, no loop).
    pub async fn refresh(&self) {
        let live = self.live.read().unwrap().clone();
        if let Some(live) = live {
            live.refresh().await;
            return;
        }
        let d = self.rediscover();
        self.manager.set_roots(&d.project_folders()).await;
        self.manager
            .reconcile_in_background(Wanted::from_discovery(&d));
    }

    /// Every server with its definitions and runtime state.
    pub fn servers(&self) -> Vec<ServerView> {
        let d = self.snapshot();
        d.servers
            .iter()
            .map(|s| {
                let runtime = self.manager.state(s.name());
                let peer = runtime.as_ref().and_then(|r| r.server_info.as_ref());
                let team_servers = peer.and_then(|p| {
                    let tools = self.manager.server_tools(s.name())?;
                    crate::team_servers::team_servers(Some(&p.name), &tools)
                });
                ServerView {
                    runtime,
                    team_servers,
                    discovered: s.clone(),
                }
            })
            .collect()
    }

    fn spec(&self, source: &str) -> Result<(SourceSpec, Option<ContentHash>), EditError> {
        let d = self.snapshot();
        let s = d
            .source(source)
            .ok_or_else(|| EditError::UnknownSource(source.into()))?;
        Ok((
            s.spec.clone().expect("discovered sources carry their spec"),
            s.hash,
        ))
    }

    /// `def` as an entry of `source`'s file, in its client's format and keys.
    pub fn entry_text(&self, source: &str, def: &ServerDef) -> Result<EntryText, EditError> {
        let (spec, _) = self.spec(source)?;
        crate::sources::text::entry_text(&spec, def).map_err(EditError::Invalid)
    }

    /// An entry typed in `source`'s format, read as the definition of `name`.
    pub fn parse_entry_text(
        &self,
        source: &str,
        name: &str,
        text: &str,
    ) -> Result<ServerDef, EditError> {
        let (spec, _) = self.spec(source)?;
        crate::sources::text::parse_entry_text(&spec, name, text)
            .map_err(|m| EditError::Invalid(format!("Invalid server config: {m}")))
    }

    /// Apply one edit to a source's file (conflict-checked against what the
    /// last discovery read). Returns once the file is written and the
    /// snapshot follows it; servers restart in the background.
    pub async fn edit(&self, source: &str, edit: ServerEdit) -> Result<(), EditError> {
        self.edit_seen(source, edit, None).await
    }

    /// `edit`, checked against the file as the user saw it: `content_hash`
    /// is the source's `contentHash` as the UI showed it (`None`: the newest
    /// snapshot's), so a change another program made while a form was open
    /// is refused as a conflict instead of overwritten.
    pub async fn edit_seen(
        &self,
        source: &str,
        edit: ServerEdit,
        content_hash: Option<&str>,
    ) -> Result<(), EditError> {
        let _g = self.edits.lock().await;
        // A server the user adds or edits here: what its next connect shows is approved.
        let written = match &edit {
            ServerEdit::Add(def) | ServerEdit::Update { def, .. } => Some(def.name.clone()),
            ServerEdit::Patch { name, .. } => Some(name.clone()),
            _ => None,
        };
        let before = self.snapshot();
        {
            let (spec, newest) = self.spec(source)?;
            let seen = match content_hash {
                Some(hex) => Some(seen_hash(hex)?),
                None => newest,
            };
            let mut settings = self.settings();
            Writer::new(&self.host, &mut settings).apply(&spec, edit, seen)?;
            *self.settings.write().unwrap() = settings;
        }
        if let Some(def) =
            written.and_then(|n| self.snapshot().server(&n).map(|s| s.winner.def.clone()))
        {
            self.approve_next
                .lock()
                .unwrap()
                .insert(def.name.clone(), crate::tool_trust::pins::identity(&def));
        }
        self.refresh().await;
        // A trusted folder's server the user wrote here runs as written.
        if let Some(s) =
            crate::projects::pin_own_edit(&self.host, &before, &self.snapshot(), source)?
        {
            *self.settings.write().unwrap() = s;
            self.refresh().await;
        }
        Ok(())
    }

    /// What copying `name` from `from` to `to` would write, before anything
    /// is written: the entry in the target client's format, or why that
    /// client cannot hold this server.
    pub fn plan_copy(&self, name: &str, from: &str, to: &str) -> Result<CopyPlan, EditError> {
        let d = self.snapshot();
        let target = d
            .source(to)
            .ok_or_else(|| EditError::UnknownSource(to.into()))?;
        let defs = || {
            d.servers
                .iter()
                .filter(|s| s.name() == name)
                .flat_map(|s| s.definitions.iter())
        };
        let def = defs()
            .find(|def| def.source == from)
            .map(|def| def.def.clone())
            .ok_or_else(|| EditError::Invalid(format!("\"{name}\" is not defined in {from}")))?;
        let taken = defs().any(|def| def.source == to);
        let (entry, refusal) = match self.entry_text(to, &def) {
            Ok(e) => (Some(e.text), None),
            Err(e) => (
                None,
                Some(format!(
                    "{} cannot hold \"{name}\": {e}",
                    target.client_name
                )),
            ),
        };
        let refusal = refusal.or_else(|| {
            target.read_only.then(|| {
                format!(
                    "{} is read-only here ({})",
                    target.client_name,
                    target.path.display()
                )
            })
        });
        Ok(CopyPlan {
            to: to.to_string(),
            client: target.client_name.to_string(),
            path: target.path.display().to_string(),
            creates_file: !target.exists,
            entry,
            refusal,
            name_taken: taken,
            restart_hint: target.restart_hint.map(str::to_string),
        })
    }

    /// Copy or move a server to another source, in that client's format.
    pub async fn copy_server(
        &self,
        name: &str,
        from: &str,
        to: &str,
        remove_source: bool,
    ) -> Result<(), EditError> {
        let _g = self.edits.lock().await;
        let before = self.snapshot();
        let (from, _) = self.spec(from)?;
        let (to, _) = self.spec(to)?;
        let mut settings = self.settings();
        Writer::new(&self.host, &mut settings).copy_server(&from, &to, name, remove_source)?;
        *self.settings.write().unwrap() = settings;
        self.refresh().await;
        // Copied into a trusted folder by the user: trusted as copied.
        if let Some(s) =
            crate::projects::pin_own_edit(&self.host, &before, &self.snapshot(), &to.id)?
        {
            *self.settings.write().unwrap() = s;
            self.refresh().await;
        }
        Ok(())
    }

    /// Apply `f` to the newest settings file (another process may have
    /// changed it since we read it) and keep what was written.
    fn save_settings(&self, f: impl Fn(&mut Settings)) -> Result<(), EditError> {
        let s = Settings::update(&self.host, f)?;
        *self.settings.write().unwrap() = s;
        // Gateways in this process follow at once (tool switches, exclusions).
        crate::gateway::switches::nudge(&self.host);
        Ok(())
    }

    /// Change the source priority as `f` says, given the newest order (ids,
    /// highest first), so a change made meanwhile by the CLI or another
    /// window is built on, not overwritten.
    fn change_priority(&self, f: impl Fn(Vec<String>) -> Vec<String>) -> Result<(), EditError> {
        let opts = self.options();
        self.save_settings(|s| {
            let current = crate::discovery::ordered_sources(&self.host, s, &opts)
                .into_iter()
                .map(|spec| spec.id)
                .collect();
            s.priority = f(current);
        })
    }

    /// New source priority: `ids` first, in this order, then every other
    /// source in its current order. A full list is a full new order.
    pub async fn set_priority(&self, ids: Vec<String>) -> Result<(), EditError> {
        {
            let _g = self.edits.lock().await;
            self.change_priority(|current| crate::settings::put_first(&ids, current))?;
        }
        let _: () = self.refresh().await;
        Ok(())
    }

    /// "Use this one": move the shadowed definition's source right above
    /// the current winner's source.
    pub async fn promote(&self, name: &str, source: &str) -> Result<(), EditError> {
        let d = self.snapshot();
        let winner = d
            .server(name)
            .map(|s| s.winner.source.clone())
            .ok_or_else(|| EditError::NotFound {
                name: name.into(),
                path: PathBuf::new(),
            })?;
        {
            let _g = self.edits.lock().await;
            self.change_priority(|current| {
                let mut ids: Vec<String> = current.into_iter().filter(|id| id != source).collect();
                let at = ids.iter().position(|id| *id == winner).unwrap_or(0);
                ids.insert(at, source.to_string());
                ids
            })?;
        }
        let _: () = self.refresh().await;
        Ok(())
    }

    pub async fn add_project(&self, dir: &Path, trusted: bool) -> Result<(), EditError> {
        let abs = absolute(dir);
        {
            let _g = self.edits.lock().await;
            // Trusting pins what the folder's servers run now.
            *self.settings.write().unwrap() =
                crate::projects::set_trust(&self.host, &abs, trusted)?;
        }
        let _: () = self.refresh().await;
        Ok(())
    }

    pub async fn remove_project(&self, dir: &Path) -> Result<(), EditError> {
        let abs = absolute(dir);
        {
            let _g = self.edits.lock().await;
            *self.settings.write().unwrap() = crate::projects::remove(&self.host, &abs)?;
        }
        let _: () = self.refresh().await;
        Ok(())
    }

    /// Approve the held servers of a project folder (all, or only `server`):
    /// ones Claude Code has not approved are approved there too, and what
    /// each runs now becomes what the folder is trusted with.
    pub async fn approve_project(
        &self,
        dir: &Path,
        server: Option<&str>,
    ) -> Result<crate::projects::Approved, EditError> {
        let abs = absolute(dir);
        let done = {
            let _g = self.edits.lock().await;
            let mut settings = self.settings();
            let done = crate::projects::approve(
                &self.host,
                &mut settings,
                &self.snapshot(),
                &abs,
                server,
            )?;
            *self.settings.write().unwrap() = settings;
            done
        };
        self.refresh().await;
        Ok(done)
    }

    /// Switch one tool on or off for the gateway, by server name
    /// and raw tool name; running gateways follow the settings file at once.
    pub async fn set_tool_enabled(
        &self,
        server: &str,
        tool: &str,
        on: bool,
    ) -> Result<(), EditError> {
        let _g = self.edits.lock().await;
        self.save_settings(|s| crate::gateway::switches::set_tool(s, server, tool, on))
    }

    /// Every profile (Everything first) with its servers, tools and costs.
    pub fn profiles(&self) -> Vec<crate::profiles::ProfileView> {
        crate::profiles::views(&self.profile_settings(), &self.snapshot(), &self.manager)
    }

    /// What each client's tool definitions cost, against its budget.
    pub fn client_costs(&self) -> Vec<crate::profiles::ClientCost> {
        crate::profiles::client_costs(&self.profile_settings(), &self.snapshot(), &self.manager)
    }

    /// The settings with the profiles (and budgets) as the file has them: a
    /// change made in another process (the CLI) shows before the watcher's
    /// re-discovery re-reads the settings.
    fn profile_settings(&self) -> Settings {
        let mut settings = self.settings();
        if let (disk, None) = Settings::load(&self.host) {
            settings.profiles = disk.profiles;
        }
        settings
    }

    /// Every tool with the tokens its definition costs.
    pub fn tool_costs(&self) -> Vec<crate::profiles::ToolCost> {
        crate::profiles::tool_costs(&self.manager)
    }

    /// Change the profiles (servers added must exist); running gateways
    /// follow the settings file at once.
    pub async fn change_profiles(
        &self,
        change: crate::profile::ProfileChange,
    ) -> Result<(), EditError> {
        crate::profiles::unknown_servers(&self.snapshot(), change.added_servers())?;
        let _g = self.edits.lock().await;
        let s = crate::profiles::change(&self.host, |p| change.apply(p))?;
        *self.settings.write().unwrap() = s;
        Ok(())
    }

    /// Switch to a profile: the gateway's `/mcp` serves it at once (clients
    /// hear `list_changed`), and the clients that follow the switch get it.
    pub async fn switch_profile(&self, name: &str) -> Result<(), EditError> {
        self.switch_profile_applied(name).await?;
        Ok(())
    }

    /// `switch_profile`, with what it did to each following client's file
    /// (restart notices included). One history entry.
    pub async fn switch_profile_applied(
        &self,
        name: &str,
    ) -> Result<Vec<crate::profile_apply::ApplyReport>, crate::profile_apply::ApplyError> {
        let result = {
            let _g = self.edits.lock().await;
            let mut settings = self.settings();
            let r = crate::profile_apply::switch(&self.host, &mut settings, &self.snapshot(), name);
            *self.settings.write().unwrap() = settings;
            r
        };
        self.refresh().await;
        result
    }

    /// How clients' `switchboard` entries reach the gateway when a profile
    /// is applied through it: the app's bundled `switchboard` (stdio) or its
    /// HTTP gateway. Unset, an entry already there is pointed anew the way
    /// it reaches the gateway now, and a client without one is refused.
    pub fn set_gateway_target(&self, target: Option<crate::connect::Via>) {
        *self.gateway_target.write().unwrap() = target;
    }

    /// Apply a profile (or Everything) to a client: in its own file
    /// (`Via::File`: exactly the profile's servers on) or through the
    /// gateway (`Via::Gateway`: one `switchboard` entry serving the
    /// profile). `follow`: the client moves with `switch_profile`. One
    /// history entry; `undo` takes it back byte for byte.
    pub async fn apply_profile(
        &self,
        client_id: &str,
        profile: &str,
        via: crate::profile::Via,
        follow: bool,
    ) -> Result<crate::profile_apply::ApplyReport, crate::profile_apply::ApplyError> {
        let client = crate::connect::parse_client(client_id)?;
        let target =
            self.gateway_target
                .read()
                .unwrap()
                .clone()
                .map(|via| crate::connect::ConnectOptions {
                    via,
                    disable_duplicates: false,
                });
        let result = {
            let _g = self.edits.lock().await;
            let mut settings = self.settings();
            let r = crate::profile_apply::apply(
                &self.host,
                &mut settings,
                &self.snapshot(),
                client,
                profile,
                via,
                follow,
                target.as_ref(),
            );
            *self.settings.write().unwrap() = settings;
            r
        };
        self.refresh().await;
        result
    }

    /// Bind a project folder to a profile: its clients' project files hold
    /// exactly the profile's servers. One report per file.
    pub async fn apply_profile_to_project(
        &self,
        dir: &Path,
        profile: &str,
    ) -> Result<Vec<crate::profile_apply::ApplyReport>, crate::profile_apply::ApplyError> {
        let result = {
            let _g = self.edits.lock().await;
            let mut settings = self.settings();
            let r = crate::profile_apply::apply_project(
                &self.host,
                &mut settings,
                &self.snapshot(),
                dir,
                profile,
            );
            *self.settings.write().unwrap() = settings;
            r
        };
        self.refresh().await;
        result
    }

    /// Leave a server out of the gateway, or serve it again (it keeps
    /// running for the app either way).
    pub async fn set_gateway_excluded(
        &self,
        server: &str,
        excluded: bool,
    ) -> Result<(), EditError> {
        let _g = self.edits.lock().await;
        self.save_settings(|s| crate::gateway::switches::set_excluded(s, server, excluded))
    }

    /// Every server's tools, prompts and templates against what the user
    /// approved, with findings and diffs.
    pub async fn tool_review(&self) -> crate::tool_trust::TrustReport {
        crate::approvals::report(&self.manager).await
    }

    /// Approve `names` of `server` (all when empty) as offered now; gateways
    /// then offer them (with `list_changed`).
    pub async fn approve_tools(
        &self,
        server: &str,
        names: &[String],
    ) -> Result<crate::approvals::Approved, crate::approvals::ApproveError> {
        crate::approvals::approve(&self.manager, server, names).await
    }

    /// What the gateway holds back of `server` until approved.
    pub async fn set_approval_mode(
        &self,
        server: &str,
        mode: crate::settings::ApprovalMode,
    ) -> Result<(), EditError> {
        {
            let _g = self.edits.lock().await;
            self.save_settings(|s| {
                if mode == crate::settings::ApprovalMode::default() {
                    s.tool_approval.remove(server);
                } else {
                    s.tool_approval.insert(server.to_string(), mode);
                }
            })?;
        }
        self.trust.reload();
        Ok(())
    }

    /// "Use Switchboard in…": each client with a user file, and whether
    /// it has the gateway entry.
    pub fn connections(&self) -> Vec<crate::connect::ClientConnection> {
        crate::connect::connections(&self.host, &self.settings(), &self.snapshot())
    }

    /// What connecting `client` would write (nothing is written).
    pub fn plan_connect(
        &self,
        client: &str,
        opts: &crate::connect::ConnectOptions,
    ) -> Result<crate::connect::ConnectPlan, crate::connect::ConnectError> {
        let client = crate::connect::parse_client(client)?;
        crate::connect::plan_connect(&self.host, &self.settings(), &self.snapshot(), client, opts)
    }

    /// Write the gateway entry into `client`'s user file (and disable its
    /// duplicates when asked), through the writer and the history.
    pub async fn connect_client(
        &self,
        client: &str,
        opts: &crate::connect::ConnectOptions,
    ) -> Result<crate::connect::ConnectReport, crate::connect::ConnectError> {
        let client = crate::connect::parse_client(client)?;
        let report = {
            let _g = self.edits.lock().await;
            let mut settings = self.settings();
            let report =
                crate::connect::connect(&self.host, &mut settings, &self.snapshot(), client, opts)?;
            *self.settings.write().unwrap() = settings;
            report
        };
        self.refresh().await;
        Ok(report)
    }

    /// Undo what connect did in `client`'s file.
    pub async fn disconnect_client(
        &self,
        client: &str,
    ) -> Result<crate::connect::DisconnectReport, crate::connect::ConnectError> {
        let client = crate::connect::parse_client(client)?;
        let report = {
            let _g = self.edits.lock().await;
            let mut settings = self.settings();
            let report =
                crate::connect::disconnect(&self.host, &mut settings, &self.snapshot(), client)?;
            *self.settings.write().unwrap() = settings;
            report
        };
        self.refresh().await;
        Ok(report)
    }

    /// Whether closing the app's window keeps it running in the tray.
    /// Timeout, restart policy and health-check interval of the servers whose
    /// definitions set none: checked, saved, and used from each server's
    /// next start (running servers are not restarted for it).
    pub async fn set_server_defaults(
        &self,
        defaults: crate::settings::ServerDefaults,
    ) -> Result<(), EditError> {
        defaults.check().map_err(|m| {
            EditError::Invalid(format!(
                "{m}. Nothing was saved in {}.",
                crate::settings::settings_path(&self.host).display()
            ))
        })?;
        let _g = self.edits.lock().await;
        self.save_settings(|s| s.server_defaults = defaults)?;
        self.manager.set_defaults(server_defaults(&defaults));
        Ok(())
    }

    /// How much the call journal keeps (Settings → Activity): checked,
    /// saved, and applied at once to the open journal (entries past the new
    /// limits are pruned now, not at the next write).
    pub async fn set_journal_limits(
        &self,
        limits: crate::settings::JournalSettings,
    ) -> Result<(), EditError> {
        let path = crate::settings::settings_path(&self.host);
        for (field, value) in [("keepDays", limits.keep_days), ("keepMb", limits.keep_mb)] {
            if value == 0 {
                return Err(EditError::Invalid(format!(
                    "journal.{field}: must be at least 1. Nothing was saved in {}.",
                    path.display()
                )));
            }
        }
        let _g = self.edits.lock().await;
        self.save_settings(|s| s.journal = limits.clone())?;
        if let Some(j) = self.manager.journal() {
            j.set_limits(limits);
        }
        Ok(())
    }

    /// The OpenTelemetry export (Settings → Activity): checked (an http(s)
    /// URL, the field named, nothing written otherwise), saved, and applied
    /// to the open journal at once.
    pub async fn set_telemetry(
        &self,
        telemetry: crate::settings::TelemetrySettings,
    ) -> Result<(), EditError> {
        telemetry.check().map_err(|m| {
            EditError::Invalid(format!(
                "{m}. Nothing was saved in {}.",
                crate::settings::settings_path(&self.host).display()
            ))
        })?;
        let _g = self.edits.lock().await;
        self.save_settings(|s| s.telemetry = telemetry.clone())?;
        if let Some(j) = self.manager.journal() {
            j.set_telemetry(&telemetry);
        }
        Ok(())
    }

    /// What the gateways and the app's tool explorer do when `server`'s
    /// answer has a finding (`tool_trust::results`): saved, and followed at
    /// once by every gateway in this process (others within a moment).
    pub async fn set_result_mode(
        &self,
        server: &str,
        mode: crate::settings::ResultMode,
    ) -> Result<(), EditError> {
        let _g = self.edits.lock().await;
        let s = crate::tool_trust::results::save_mode(&self.host, server, mode)?;
        *self.settings.write().unwrap() = s;
        crate::gateway::switches::nudge(&self.host);
        Ok(())
    }

    /// A tool call made by a person in `client` (the app's tool explorer):
    /// its answer checked with the server's mode like the gateway's (a
    /// note before it, or refused), and recorded in the call journal.
    pub async fn call_tool(
        &self,
        name: &str,
        args: Option<serde_json::Map<String, serde_json::Value>>,
        cancel: Option<tokio_util::sync::CancellationToken>,
        client: &str,
    ) -> Result<crate::manager::CallOutcome, crate::manager::CallError> {
        let checks = self.settings.read().unwrap().result_checks.clone();
        let mode = |server: &str| checks.get(server).copied().unwrap_or_default();
        self.manager
            .call_tool_recorded(name, args, cancel, client, mode)
            .await
    }

    /// `resources/read` from the app's Resources view: checked with the
    /// server's mode and recorded, like [`Engine::call_tool`].
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        client: &str,
    ) -> Result<serde_json::Value, crate::manager::RegistryError> {
        let mode = self.result_mode(server);
        self.manager
            .read_resource_recorded(server, uri, client, mode)
            .await
    }

    /// `prompts/get` from the app's Resources view: checked with the
    /// server's mode and recorded, like [`Engine::call_tool`].
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        args: Option<serde_json::Map<String, serde_json::Value>>,
        client: &str,
    ) -> Result<serde_json::Value, crate::manager::RegistryError> {
        let mode = self.result_mode(server);
        self.manager
            .get_prompt_recorded(server, name, args, client, mode)
            .await
    }

    /// What the checks on answers do for `server` (absent: `warn`).
    fn result_mode(&self, server: &str) -> crate::settings::ResultMode {
        let settings = self.settings.read().unwrap();
        settings
            .result_checks
            .get(server)
            .copied()
            .unwrap_or_default()
    }

    /// Settings read again from the file (written by another process, or by
    /// an undo): server defaults, journal limits and the OpenTelemetry
    /// export that changed there apply too.
    fn keep_settings(&self, settings: Settings) {
        let mut current = self.settings.write().unwrap();
        if current.server_defaults != settings.server_defaults {
            let built_in = crate::settings::ServerDefaults::default();
            self.manager.set_defaults(
                saved_defaults(&settings.server_defaults)
                    .unwrap_or_else(|| server_defaults(&built_in)),
            );
        }
        if current.journal != settings.journal {
            if let Some(j) = self.manager.journal() {
                j.set_limits(settings.journal.clone());
            }
        }
        if current.telemetry != settings.telemetry {
            if let Some(j) = self.manager.journal() {
                j.set_telemetry(&settings.telemetry);
            }
        }
        *current = settings;
    }

    pub async fn set_keep_in_tray(&self, keep: bool) -> Result<(), EditError> {
        let _g = self.edits.lock().await;
        self.save_settings(|s| s.keep_in_tray = keep)
    }

    /// The master switch for project config files (`.mcp.json`,
    /// `.cursor/mcp.json`, … in trusted folders): off, none is read.
    pub async fn set_project_config(&self, enabled: bool) -> Result<(), EditError> {
        {
            let _g = self.edits.lock().await;
            self.save_settings(|s| s.enable_project_config = enabled)?;
        }
        self.refresh().await;
        Ok(())
    }

    /// How the app runs its HTTP gateway (port, off, tool search mode).
    pub async fn set_gateway_settings(
        &self,
        gateway: crate::settings::GatewaySettings,
    ) -> Result<(), EditError> {
        let _g = self.edits.lock().await;
        self.save_settings(|s| s.gateway = gateway.clone())
    }

    /// Sign in to a remote server (its progress published as `SignIn` events):
    /// discover, register, open the
    /// authorization page with `open` (the system browser), wait up to
    /// `timeout` for the redirect, keep the tokens in the keychain, and
    /// connect that server at once (others are not touched). Progress goes
    /// out as `SignIn` events. Also `reauth`: signing in again replaces the tokens.
    /// An authorization page that is not https (or http on this computer)
    /// fails the sign-in and is neither opened nor shown.
    pub async fn sign_in(
        &self,
        name: &str,
        open: Option<crate::auth::oauth::BrowserOpener>,
        timeout: std::time::Duration,
    ) -> Result<(), crate::auth::oauth::SignInError> {
        use crate::auth::oauth::{self, SignInError};
        use crate::events::{EngineEvent, SignInPhase};
        let url = self.manager.resolved_url(name).or_else(|| {
            self.snapshot()
                .server(name)
                .and_then(|s| s.winner.def.url.clone())
        });
        let remote = self
            .snapshot()
            .server(name)
            .is_some_and(|s| s.winner.def.transport != crate::config::model::Transport::Stdio);
        let (Some(url), true) = (url, remote) else {
            return Err(SignInError::NotRemote(name.into()));
        };
        let vault = self
            .manager
            .vault()
            .unwrap_or_else(crate::auth::vault::Vault::keychain);
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cancel = tokio_util::sync::CancellationToken::new();
        if let Some((_, old)) = self
            .sign_ins
            .lock()
            .unwrap()
            .insert(name.to_string(), (id, cancel.clone()))
        {
            old.cancel();
        }
        let publish = |phase: SignInPhase| {
            self.manager.publish(EngineEvent::SignIn {
                server: name.into(),
                phase,
            })
        };
        let run = async {
            // Discovery starts at the server's own challenge (its metadata
            // location and scope) when it sent one.
            // A pre-registered OAuth app in the server's definition (client id,
            // callback port, scopes, its secret from the keychain) is used
            // instead of registering.
            let app = self
                .snapshot()
                .server(name)
                .and_then(|s| s.winner.def.oauth.clone());
            let options = oauth::SignInOptions {
                challenge: self.manager.auth_challenge(name),
                ..oauth::SignInOptions::for_app(name, app.as_ref(), &vault).await?
            };
            let pending = oauth::begin_with(name, &url, &vault, options).await?;
            // `begin_with` checked it already; this is the last stop before the OS.
            let link = crate::opener::check_link(&pending.url, crate::opener::SIGN_IN_METADATA)?;
            publish(SignInPhase::Waiting {
                url: link.to_string(),
            });
            if let Some(open) = &open {
                if open(link.as_str()).is_err() {
                    self.manager.note(name, "could not open a web browser; open the sign-in link shown in Switchboard yourself");
                }
            }
            pending.finish(timeout).await
        };
        let result = tokio::select! {
            r = run => r,
            _ = cancel.cancelled() => Err(SignInError::Cancelled(name.into())),
        };
        {
            let mut map = self.sign_ins.lock().unwrap();
            if map.get(name).is_some_and(|(i, _)| *i == id) {
                map.remove(name);
            }
        }
        match &result {
            Ok(()) => {
                publish(SignInPhase::SignedIn);
                self.manager.note(name, "signed in; connecting");
                let _ = self.manager.restart(name).await;
            }
            Err(e) => publish(SignInPhase::Failed {
                error: e.to_string(),
            }),
        }
        result
    }

    /// Give up a sign-in that is waiting for the browser.
    pub fn cancel_sign_in(&self, name: &str) {
        if let Some((_, c)) = self.sign_ins.lock().unwrap().remove(name) {
            c.cancel();
        }
    }

    /// Sign out (`unauth`): the tokens and the client registration leave the
    /// keychain, and the server reconnects without them.
    pub async fn sign_out(&self, name: &str) -> Result<(), crate::auth::vault::VaultError> {
        let vault = self
            .manager
            .vault()
            .unwrap_or_else(crate::auth::vault::Vault::keychain);
        crate::auth::oauth::sign_out(name, &vault).await?;
        self.manager.publish(crate::events::EngineEvent::SignIn {
            server: name.into(),
            phase: crate::events::SignInPhase::SignedOut,
        });
        self.manager.note(name, "signed out");
        let _ = self.manager.restart(name).await;
        Ok(())
    }

    /// Every sign-in Switchboard holds for a server it knows (issue 17):
    /// what it is for, when it was made and expires, whether it can be
    /// refreshed, which servers use it. Nothing secret.
    pub async fn accounts(&self) -> Vec<crate::auth::accounts::Account> {
        let Some(vault) = self.manager.vault() else {
            return vec![];
        };
        let snap = self.snapshot();
        let servers: Vec<(String, crate::config::ServerDef)> = snap
            .servers
            .iter()
            .map(|s| (s.winner.def.name.clone(), s.winner.def.clone()))
            .collect();
        crate::auth::accounts::list(&servers, &vault).await
    }

    /// Sign out of every sign-in [`accounts`](Self::accounts) lists.
    pub async fn sign_out_everywhere(&self) -> Result<Vec<String>, crate::auth::vault::VaultError> {
        let mut done = vec![];
        for a in self.accounts().await {
            self.sign_out(&a.server).await?;
            done.push(a.server);
        }
        Ok(done)
    }

    /// Keep (or with `None`, delete) the client secret of `name`'s
    /// pre-registered OAuth app in the keychain; it is never written to a file.
    pub async fn set_oauth_client_secret(
        &self,
        name: &str,
        secret: Option<String>,
    ) -> Result<(), crate::auth::vault::VaultError> {
        let vault = self
            .manager
            .vault()
            .unwrap_or_else(crate::auth::vault::Vault::keychain);
        let n = name.to_string();
        tokio::task::spawn_blocking(move || match secret.filter(|s| !s.is_empty()) {
            Some(s) => vault.put_app_secret(&n, &s),
            None => vault.remove_app_secret(&n),
        })
        .await
        .map_err(|e| crate::auth::vault::VaultError::Keychain(e.to_string()))?
    }

    /// Whether a client secret is kept in the keychain for `name`'s OAuth app.
    pub async fn has_oauth_client_secret(&self, name: &str) -> bool {
        let vault = self
            .manager
            .vault()
            .unwrap_or_else(crate::auth::vault::Vault::keychain);
        let n = name.to_string();
        tokio::task::spawn_blocking(move || vault.app_secret(&n).ok().flatten().is_some())
            .await
            .unwrap_or(false)
    }

    /// Why the server asks to sign in again, when it asked for more scopes
    /// (a 403 `insufficient_scope`): the scopes and its explanation.
    pub fn step_up(&self, name: &str) -> Option<crate::auth::accounts::StepUp> {
        crate::auth::accounts::StepUp::from_challenge(&self.manager.auth_challenge(name)?)
    }

    /// Whether a sign-in is stored for this server at its current URL.
    pub async fn is_signed_in(&self, name: &str) -> bool {
        let (Some(url), Some(vault)) = (self.manager.resolved_url(name), self.manager.vault())
        else {
            return false;
        };
        crate::auth::oauth::is_signed_in(name, &url, &vault).await
    }

    /// Every write Switchboard made to a file, newest first, with whether
    /// it can still be undone.
    pub fn history(&self) -> Vec<HistoryEntry> {
        History::for_host(&self.host).list()
    }

    /// Undo history entry `id` (the newest when `None`): its files get their
    /// earlier content back unless one changed since Switchboard wrote it.
    /// The restored files are then picked up as after any edit.
    pub async fn undo(&self, id: Option<u64>) -> Result<UndoReport, UndoError> {
        let _g = self.edits.lock().await;
        let before = self.snapshot();
        let report = History::for_host(&self.host).undo(id)?;
        // The entry may have written Switchboard's settings too.
        let (settings, _) = Settings::load(&self.host);
        self.keep_settings(settings);
        self.refresh().await;
        // Like an edit, an undo is the user's own change: a trusted folder's
        // server runs as restored instead of being held as changed. Should
        // pinning fail, the server is held with the reason shown, as for any
        // change; the undo itself stands.
        let restored: Vec<String> = self
            .snapshot()
            .sources
            .iter()
            .filter(|s| report.restored.contains(&s.path))
            .map(|s| s.id.clone())
            .collect();
        for source in restored {
            if let Ok(Some(s)) =
                crate::projects::pin_own_edit(&self.host, &before, &self.snapshot(), &source)
            {
                *self.settings.write().unwrap() = s;
                self.refresh().await;
            }
        }
        Ok(report)
    }

    pub async fn shutdown(&self) {
        self.keeper.cancel();
        let live = self.live.write().unwrap().take();
        if let Some(live) = live {
            match Arc::try_unwrap(live) {
                Ok(l) => l.stop().await,
                Err(shared) => drop(shared), // dropping the last handle stops it
            }
        }
        self.manager.shutdown().await;
    }
}

/// What "Copy to…" / "Move to…" would write (see [`Engine::plan_copy`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CopyPlan {
    pub to: String,
    pub client: String,
    pub path: String,
    pub creates_file: bool,
    /// The entry as it will appear in the target file.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub entry: Option<String>,
    /// Why it cannot be written there.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub refusal: Option<String>,
    /// The target already defines a server of this name (it would be refused).
    pub name_taken: bool,
    /// The target client reads its file only at start: what to do then.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub restart_hint: Option<String>,
}
