//! Switchboard's own settings file (`<config dir>/switchboard/settings.json`):
//! source priority, project folders and their trust, parked entries.
//! Unknown keys are kept so newer versions' settings survive older ones.
//!
//! The app and the CLI may change this file at the same moment, and the user
//! may edit it by hand. So a change is a function applied to the newest file
//! (`Settings::update`), written only if the file still holds the bytes it was
//! applied to, and applied again on top of the newer file when it did not; a
//! file that does not parse is reported with its line and never written until
//! the user fixes it (writing defaults would lose the priority order, the
//! trusted folders and the parked definitions).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::{RestartPolicy, ServerDef};
use crate::host::Host;
use crate::profile::ProfileSettings;
use crate::writer::atomic::WriteError;
use crate::writer::atomic::{content_hash, write_private, ContentHash, Expected};
use crate::writer::history::{FileWrite, Label, Recording};

/// How often a change is applied again when another process wrote the file
/// between our read and our write. Writes by Switchboard processes are
/// serialized, so running out takes a file that changes continuously.
const UPDATE_ATTEMPTS: usize = 20;

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file does not parse: it is left exactly as it is.
    #[error("cannot change {}: it does not parse ({message}); fix the file, then try again (Switchboard never replaces it with defaults)", path.display())]
    Broken {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A change of the profiles that does not apply (unknown profile, name taken, …).
    #[error(transparent)]
    Profile(#[from] crate::profile::ProfileError),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProjectFolder {
    pub path: PathBuf,
    #[serde(default)]
    pub trusted: bool,
}

/// An entry removed from a client file that has no off switch (see
/// `EnableFlag::Park`), kept here verbatim until it is enabled again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParkedEntry {
    pub source: String,
    pub name: String,
    pub entry: Value,
    /// The bytes taking it out removed from the file, when a profile parked
    /// it: applying another profile puts them back where they were
    /// (`profile_apply`), while the file around them is unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// Source ids, highest priority first. Empty means the default order.
    #[serde(default)]
    pub priority: Vec<String>,
    #[serde(default)]
    pub projects: Vec<ProjectFolder>,
    /// Global switch for project-level sources (a project folder's client files).
    #[serde(default = "yes")]
    pub enable_project_config: bool,
    #[serde(default)]
    pub parked: Vec<ParkedEntry>,
    /// What each trusted folder's servers ran when the user trusted it or
    /// approved a change (`trust::Pin`), by folder. A trusted folder with no
    /// entry was trusted before content was pinned: nothing of it is held
    /// until its servers are pinned.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub trusted_servers: std::collections::BTreeMap<PathBuf, crate::trust::FolderPins>,
    /// Tools switched off, by server name and raw tool names: the
    /// gateway does not offer them. Kept by raw name, so a switch survives
    /// restarts and changes of the sanitized name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub disabled_tools: std::collections::BTreeMap<String, Vec<String>>,
    /// Servers the gateway does not serve (they still run for the app).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gateway_excluded: Vec<String>,
    /// How the desktop app runs its HTTP gateway.
    #[serde(default, skip_serializing_if = "GatewaySettings::is_default")]
    pub gateway: GatewaySettings,
    /// What `switchboard connect` did in each client (by client id, e.g.
    /// `cursor`) that `disconnect` must undo: servers it disabled there,
    /// copies it made in Switchboard's own file, what it created.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub connections: Connections,
    /// How the gateway treats each server's tools that differ from what the
    /// user approved (`tool_trust`), by server name; absent: the default.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tool_approval: std::collections::BTreeMap<String, ApprovalMode>,
    /// The MCP Registry the Catalog reads (a company's subregistry, say);
    /// absent: `SWITCHBOARD_REGISTRY_URL`, else the official registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_url: Option<String>,
    /// The desktop app: closing its window while the gateway serves keeps
    /// it running in the tray (off: closing the window quits).
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub keep_in_tray: bool,
    /// Timeout, restart policy and health checks of every server whose
    /// definition sets none of its own.
    #[serde(default, skip_serializing_if = "ServerDefaults::is_default")]
    pub server_defaults: ServerDefaults,
    /// Profiles: named sets of servers and tools, which one the switch is
    /// on, which clients and project folders follow one, token budgets.
    #[serde(default, skip_serializing_if = "ProfileSettings::is_default")]
    pub profiles: ProfileSettings,
    /// What the call journal keeps (Activity).
    #[serde(default, skip_serializing_if = "JournalSettings::is_default")]
    pub journal: JournalSettings,
    /// The journal's calls exported as OpenTelemetry spans (off unless set).
    #[serde(default, skip_serializing_if = "TelemetrySettings::is_default")]
    pub telemetry: TelemetrySettings,
    /// What the gateway does when what a server returns has a finding, by
    /// server name; absent: `warn`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub result_checks: std::collections::BTreeMap<String, ResultMode>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
    /// Why the file could not be used (file and line): these are then the
    /// defaults, shown with this message, and the file is not written.
    #[serde(skip)]
    pub problem: Option<String>,
    /// Hash of the bytes these settings were read from (`None`: no file).
    #[serde(skip)]
    read_from: Option<ContentHash>,
}

/// What the gateway holds back of a server's tools until the user approves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Tools that changed since they were approved, and never-approved tools
    /// with a high-severity finding.
    #[default]
    HoldChanged,
    /// Nothing is held; changes and findings are only shown.
    Warn,
    /// Also every tool never approved.
    HoldNew,
}

/// What the gateway does when what a server returns has a finding
/// (`tool_trust::results`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ResultMode {
    /// Recorded in the journal only.
    Log,
    /// The client gets the result with a visible note before it; the app
    /// notifies.
    #[default]
    Warn,
    /// The client gets an error that says what was found and how to allow it.
    Block,
}

impl ResultMode {
    pub const ALL: [ResultMode; 3] = [ResultMode::Log, ResultMode::Warn, ResultMode::Block];

    /// The spelling in the settings file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultMode::Log => "log",
            ResultMode::Warn => "warn",
            ResultMode::Block => "block",
        }
    }

    pub fn parse(s: &str) -> Option<ResultMode> {
        ResultMode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// How much the call journal keeps (Settings → Activity); `journal`
/// re-exports it. Each limit is at least 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct JournalSettings {
    /// Entries older than this many days are removed.
    #[serde(default = "default_keep_days")]
    pub keep_days: u32,
    /// The journal is kept under this many megabytes (oldest removed first).
    #[serde(default = "default_keep_mb")]
    pub keep_mb: u32,
}

fn default_keep_days() -> u32 {
    30
}

fn default_keep_mb() -> u32 {
    200
}

impl Default for JournalSettings {
    fn default() -> Self {
        JournalSettings {
            keep_days: default_keep_days(),
            keep_mb: default_keep_mb(),
        }
    }
}

impl JournalSettings {
    pub fn is_default(&self) -> bool {
        *self == JournalSettings::default()
    }
}

/// Each call of the journal exported as an OpenTelemetry span (OTLP over
/// HTTP) to a collector (Settings → Activity). Off unless turned on; the
/// calls' arguments and results are sent only with `include_payloads`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TelemetrySettings {
    #[serde(default)]
    pub enabled: bool,
    /// The collector's OTLP/HTTP traces URL.
    #[serde(default = "default_telemetry_endpoint")]
    pub endpoint: String,
    /// Also send each call's arguments and result (masked, capped).
    #[serde(default)]
    pub include_payloads: bool,
}

/// Where an OpenTelemetry Collector on this machine takes traces over HTTP.
pub const DEFAULT_TELEMETRY_ENDPOINT: &str = "http://localhost:4318/v1/traces";

fn default_telemetry_endpoint() -> String {
    DEFAULT_TELEMETRY_ENDPOINT.to_string()
}

impl Default for TelemetrySettings {
    fn default() -> Self {
        TelemetrySettings {
            enabled: false,
            endpoint: default_telemetry_endpoint(),
            include_payloads: false,
        }
    }
}

impl TelemetrySettings {
    pub fn is_default(&self) -> bool {
        *self == TelemetrySettings::default()
    }

    /// Refuses an endpoint that is not an http(s) URL with a host, naming
    /// the field as the settings file spells it.
    pub fn check(&self) -> Result<(), String> {
        let bad = |why: &str| Err(format!("telemetry.endpoint: \"{}\" {why}", self.endpoint));
        match url::Url::parse(self.endpoint.trim()) {
            Err(e) => bad(&format!("is not a URL ({e})")),
            Ok(u) if !matches!(u.scheme(), "http" | "https") => {
                bad("is not an http:// or https:// URL")
            }
            Ok(u) if u.host_str().is_none_or(str::is_empty) => bad("names no host"),
            Ok(_) => Ok(()),
        }
    }
}

/// The port the app's gateway listens on unless Settings name another. Fixed,
/// so the entries written into other clients stay valid across restarts;
/// below Linux's ephemeral range (32768+), so no outgoing connection holds it.
pub const DEFAULT_GATEWAY_PORT: u16 = 27182;

/// What a server gets when its definition does not say: how long it has to
/// answer, how it is restarted after it stops, and how often it is pinged.
/// A change applies from each server's next start (health checks from the
/// next ping); running servers are not restarted for it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct ServerDefaults {
    /// Milliseconds a server has for its handshake and each request.
    pub timeout_ms: u64,
    pub restart_policy: RestartPolicy,
    /// Milliseconds between two health checks (MCP `ping`) of a connected server.
    pub health_interval_ms: u64,
}

impl Default for ServerDefaults {
    fn default() -> Self {
        ServerDefaults {
            timeout_ms: 30_000,
            restart_policy: RestartPolicy::default(),
            health_interval_ms: 15_000,
        }
    }
}

impl ServerDefaults {
    fn is_default(&self) -> bool {
        *self == ServerDefaults::default()
    }

    /// Refuses values no server could work with, naming the field (as the
    /// Settings screen labels it) and the range it accepts.
    pub fn check(&self) -> Result<(), String> {
        let p = &self.restart_policy;
        let secs = |ms: u64| ms as f64 / 1000.0;
        if !(1_000..=600_000).contains(&self.timeout_ms) {
            return Err(format!(
                "Timeout: {} s is outside 1–600 seconds",
                secs(self.timeout_ms)
            ));
        }
        if !(5_000..=3_600_000).contains(&self.health_interval_ms) {
            return Err(format!(
                "Health check interval: {} s is outside 5–3600 seconds",
                secs(self.health_interval_ms)
            ));
        }
        if p.max_restart_attempts > 100 {
            return Err(format!(
                "Restarts: {} is more than 100",
                p.max_restart_attempts
            ));
        }
        if !(100..=600_000).contains(&p.initial_delay_ms) {
            return Err(format!(
                "First restart after: {} s is outside 0.1–600 seconds",
                secs(p.initial_delay_ms)
            ));
        }
        if p.max_delay_ms < p.initial_delay_ms || p.max_delay_ms > 3_600_000 {
            return Err(format!(
                "Longest wait between restarts: {} s must be at least the first wait ({} s) and at most 3600 seconds",
                secs(p.max_delay_ms),
                secs(p.initial_delay_ms)
            ));
        }
        if !(1.0..=10.0).contains(&p.backoff_multiplier) {
            return Err(format!(
                "Backoff multiplier: {} is outside 1–10",
                p.backoff_multiplier
            ));
        }
        Ok(())
    }
}

/// The desktop app's HTTP gateway (`http://127.0.0.1:PORT/mcp`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct GatewaySettings {
    /// `None` (or 0, which no client entry could name): [`DEFAULT_GATEWAY_PORT`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub port: Option<u16>,
    /// The app does not serve the gateway while it runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(as = "Option<bool>", optional))]
    pub off: bool,
    /// Offer `search_tools` and `call_tool` instead of every tool.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(as = "Option<bool>", optional))]
    pub tool_search: bool,
}

impl GatewaySettings {
    fn is_default(&self) -> bool {
        *self == GatewaySettings::default()
    }

    pub fn port(&self) -> u16 {
        self.port
            .filter(|p| *p != 0)
            .unwrap_or(DEFAULT_GATEWAY_PORT)
    }
}

fn is_yes(b: &bool) -> bool {
    *b
}

fn yes() -> bool {
    true
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            priority: vec![],
            projects: vec![],
            enable_project_config: true,
            parked: vec![],
            trusted_servers: Default::default(),
            disabled_tools: Default::default(),
            gateway_excluded: vec![],
            connections: Default::default(),
            tool_approval: Default::default(),
            gateway: GatewaySettings::default(),
            registry_url: None,
            keep_in_tray: true,
            server_defaults: ServerDefaults::default(),
            profiles: ProfileSettings::default(),
            journal: Default::default(),
            telemetry: Default::default(),
            result_checks: Default::default(),
            other: Map::new(),
            problem: None,
            read_from: None,
        }
    }
}

pub fn settings_path(host: &Host) -> PathBuf {
    host.join(&host.switchboard_dir(), "settings.json")
}

/// A source order with `ids` moved to the front, in the order given; ids
/// that are not in `current` are left out, the rest keep their order.
pub fn put_first(ids: &[String], current: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for id in ids {
        if current.contains(id) && !out.contains(id) {
            out.push(id.clone());
        }
    }
    out.extend(current.into_iter().filter(|id| !ids.contains(id)));
    out
}

/// What `path` holds now: nothing, settings (with the hash of their bytes),
/// or a reason it cannot be used.
enum OnDisk {
    Absent,
    Parsed(Box<Settings>),
    Broken {
        line: Option<usize>,
        message: String,
    },
}

fn read(path: &Path) -> Result<OnDisk, std::io::Error> {
    let bytes = match std::fs::read(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OnDisk::Absent),
        Err(e) => return Err(e),
        Ok(bytes) => bytes,
    };
    let hash = content_hash(&bytes);
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(OnDisk::Broken {
            line: None,
            message: "it is not UTF-8 text".into(),
        });
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Ok(OnDisk::Parsed(Box::new(Settings {
            read_from: Some(hash),
            ..Settings::default()
        })));
    }
    match serde_json::from_str::<Settings>(text) {
        Ok(s) => Ok(OnDisk::Parsed(Box::new(Settings {
            read_from: Some(hash),
            ..s
        }))),
        Err(e) => Ok(OnDisk::Broken {
            line: Some(e.line()).filter(|l| *l > 0),
            message: e.to_string(),
        }),
    }
}

fn broken_message(path: &Path, line: Option<usize>, message: &str) -> String {
    let at = line.map(|l| format!(":{l}")).unwrap_or_default();
    format!(
        "{}{at}: Switchboard's settings do not parse ({message}); until the file is fixed, the default source order is used, no project folder is read, and Switchboard will not change the file",
        path.display()
    )
}

impl Settings {
    /// Load the settings; a missing file is the default, a broken one is the
    /// default plus a message naming the file and line (also in `problem`).
    pub fn load(host: &Host) -> (Settings, Option<String>) {
        Self::load_from(&settings_path(host))
    }

    pub fn load_from(path: &Path) -> (Settings, Option<String>) {
        let problem = match read(path) {
            Ok(OnDisk::Absent) => return (Settings::default(), None),
            Ok(OnDisk::Parsed(s)) => return (*s, None),
            Ok(OnDisk::Broken { line, message }) => broken_message(path, line, &message),
            Err(e) => format!("{}: cannot read Switchboard's settings ({e}); using the defaults, and the file will not be changed", path.display()),
        };
        (
            Settings {
                problem: Some(problem.clone()),
                ..Settings::default()
            },
            Some(problem),
        )
    }

    /// Apply `change` to the newest settings file and write it, hash-checked:
    /// if another process wrote it in between, `change` is applied again on
    /// top of that. Returns the settings as written. A file that does not
    /// parse is refused and left untouched.
    pub fn update(host: &Host, change: impl Fn(&mut Settings)) -> Result<Settings, SettingsError> {
        Self::try_update(host, |s| {
            change(s);
            Ok(())
        })
    }

    /// `update` for a change that may find it no longer applies (what it
    /// changes is gone from the newest file): its error is returned and
    /// nothing is written.
    pub fn try_update(
        host: &Host,
        change: impl Fn(&mut Settings) -> Result<(), SettingsError>,
    ) -> Result<Settings, SettingsError> {
        let path = settings_path(host);
        let _recording = Recording::begin(host, history_label());
        for _ in 0..UPDATE_ATTEMPTS {
            let (mut s, expected) = match read(&path).map_err(|source| WriteError::Io {
                path: path.clone(),
                source,
            })? {
                OnDisk::Absent => (Settings::default(), Expected::Absent),
                OnDisk::Parsed(s) => {
                    let hash = s.read_from.expect("parsed settings carry their hash");
                    (*s, Expected::Hash(hash))
                }
                OnDisk::Broken { line, message } => {
                    return Err(SettingsError::Broken {
                        path,
                        line,
                        message,
                    })
                }
            };
            change(&mut s)?;
            let text = s.to_text();
            match write_private(&path, text.as_bytes(), expected) {
                Ok(()) => {
                    s.read_from = Some(content_hash(text.as_bytes()));
                    return Ok(s);
                }
                Err(WriteError::Conflict { .. }) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(WriteError::Conflict { path }.into())
    }

    /// Save these settings as a whole, only if the file still holds what they
    /// were loaded from (prefer `update`, which re-applies one change).
    pub fn save(&self, host: &Host) -> Result<(), SettingsError> {
        let path = settings_path(host);
        let _recording = Recording::begin(host, history_label());
        if self.problem.is_some() {
            if let Ok(OnDisk::Broken { line, message }) = read(&path) {
                return Err(SettingsError::Broken {
                    path,
                    line,
                    message,
                });
            }
            return Err(WriteError::Conflict { path }.into());
        }
        let expected = self
            .read_from
            .map(Expected::Hash)
            .unwrap_or(Expected::Absent);
        write_private(&path, self.to_text().as_bytes(), expected)?;
        Ok(())
    }

    /// Park `entry` in the newest file, and take that file as ours. Refused
    /// with a conflict when another process parked the same server meanwhile.
    pub fn park(&mut self, host: &Host, entry: ParkedEntry) -> Result<(), SettingsError> {
        *self = Settings::try_update(host, |s| {
            if s.parked
                .iter()
                .any(|p| p.source == entry.source && p.name == entry.name)
            {
                return Err(WriteError::Conflict {
                    path: settings_path(host),
                }
                .into());
            }
            s.parked.push(entry.clone());
            Ok(())
        })?;
        Ok(())
    }

    /// Drop the parked entry of `name` in `source` (gone already is fine).
    pub fn unpark(&mut self, host: &Host, source: &str, name: &str) -> Result<(), SettingsError> {
        *self = Settings::update(host, |s| {
            s.parked.retain(|p| !(p.source == source && p.name == name))
        })?;
        Ok(())
    }

    /// Change the parked entry of `name` in `source` as the newest file has
    /// it; refused with a conflict when it is no longer parked there.
    pub fn edit_parked(
        &mut self,
        host: &Host,
        source: &str,
        name: &str,
        change: impl Fn(&mut ParkedEntry),
    ) -> Result<(), SettingsError> {
        *self = Settings::try_update(host, |s| {
            let p = s
                .parked
                .iter_mut()
                .find(|p| p.source == source && p.name == name);
            change(p.ok_or_else(|| WriteError::Conflict {
                path: settings_path(host),
            })?);
            Ok(())
        })?;
        Ok(())
    }

    fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("settings serialize");
        text.push('\n');
        text
    }

    /// Trusted project folders, honouring the global switch.
    pub fn trusted_projects(&self) -> Vec<PathBuf> {
        if !self.enable_project_config {
            return vec![];
        }
        self.projects
            .iter()
            .filter(|p| p.trusted)
            .map(|p| p.path.clone())
            .collect()
    }
}

/// Followers in this process, by settings file: a change written here
/// reaches them without waiting for the file watcher (see [`nudge`]).
static LOCAL: std::sync::Mutex<Vec<(PathBuf, std::sync::Weak<tokio::sync::Notify>)>> =
    std::sync::Mutex::new(Vec::new());

/// The settings file was just written by this process: every follower of it
/// here reads it now (a profile switch reaches open sessions in
/// milliseconds, not after the watcher's event and settle time). Changes
/// from other processes still arrive through the watcher.
pub fn nudge(host: &Host) {
    let path = settings_path(host);
    let mut local = LOCAL.lock().unwrap();
    local.retain(|(_, w)| w.strong_count() > 0);
    for (p, w) in local.iter() {
        if *p == path {
            if let Some(n) = w.upgrade() {
                n.notify_one();
            }
        }
    }
}

/// Follows the settings file: the receiver holds what `pick` takes of the
/// newest settings, changed only when that differs. A file that stops
/// parsing keeps the last good value. Stops when every receiver is gone.
/// Needs a tokio runtime.
pub fn follow<T>(
    host: &Host,
    pick: impl Fn(&Settings) -> T + Send + 'static,
) -> tokio::sync::watch::Receiver<std::sync::Arc<T>>
where
    T: PartialEq + Send + Sync + 'static,
{
    use std::sync::Arc;
    use std::time::Duration;
    let path = settings_path(host);
    let (settings, _) = Settings::load(host);
    let (tx, rx) = tokio::sync::watch::channel(Arc::new(pick(&settings)));
    let wake = Arc::new(tokio::sync::Notify::new());
    let watcher = crate::file_watch::watch_file(&path, wake.clone());
    let nudged = Arc::new(tokio::sync::Notify::new());
    LOCAL
        .lock()
        .unwrap()
        .push((path.clone(), Arc::downgrade(&nudged)));
    tokio::spawn(async move {
        // Held for as long as anyone listens.
        let _watcher = watcher;
        loop {
            tokio::select! {
                _ = tx.closed() => return,
                _ = wake.notified() => {
                    // Editors and our own writer replace the file in steps:
                    // read once it settled, or at once when this process
                    // says it wrote it (our writes are atomic renames).
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                        _ = nudged.notified() => {}
                    }
                }
                // Written by this process, atomically: it is complete now.
                _ = nudged.notified() => {}
            }
            let (s, problem) = Settings::load_from(&path);
            if problem.is_some() {
                continue;
            }
            let next = pick(&s);
            tx.send_if_modified(|cur| {
                if **cur == next {
                    return false;
                }
                *cur = Arc::new(next);
                true
            });
        }
    });
    rx
}

/// What connect remembers per client in Switchboard's settings, so
/// disconnect undoes exactly that.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionRecord {
    /// Servers connect disabled in the client.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<String>,
    /// Servers connect copied into Switchboard's own file, as copied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copied: Vec<ServerDef>,
    /// Connect created the client's file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created_file: bool,
    /// Connect created the servers' container (`mcpServers`) in the file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created_container: bool,
}

impl ConnectionRecord {
    pub fn is_empty(&self) -> bool {
        *self == ConnectionRecord::default()
    }
}

/// Each client's record, for the settings field (`Settings::connections`).
pub type Connections = std::collections::BTreeMap<String, ConnectionRecord>;

/// Settings saved on their own: what changed, by top-level key.
fn history_label() -> Label {
    Label {
        server: None,
        describe: Box::new(|writes| {
            let keys: Vec<String> = writes.first().map(changed_top_keys).unwrap_or_default();
            match keys
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice()
            {
                ["priority"] => "change source priority".to_string(),
                ["projects"] => "change project folders".to_string(),
                [] => "update Switchboard settings".to_string(),
                _ => format!(
                    "update Switchboard settings ({})",
                    keys.iter()
                        .map(|k| setting_words(k))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }),
    }
}

/// A settings key as people say it; keys this version does not know as they are.
fn setting_words(key: &str) -> &str {
    match key {
        "priority" => "source priority",
        "projects" => "project folders",
        "trustedServers" => "trusted project servers",
        "parked" => "disabled servers kept aside",
        "enableProjectConfig" => "project config switch",
        "profiles" => "profiles",
        "resultChecks" => "checks on what servers return",
        "telemetry" => "OpenTelemetry export",
        other => other,
    }
}

fn changed_top_keys(w: &FileWrite) -> Vec<String> {
    // No file reads as the defaults: a first save changes only what it sets.
    let defaults = serde_json::to_value(Settings::default()).unwrap_or_default();
    let obj = |b: &Option<Vec<u8>>| -> Map<String, Value> {
        let v = match b.as_deref() {
            Some(b) => serde_json::from_slice::<Value>(b).ok(),
            None => Some(defaults.clone()),
        };
        v.and_then(|v| v.as_object().cloned()).unwrap_or_default()
    };
    let (a, b) = (obj(&w.before), obj(&w.after));
    a.keys()
        .chain(b.keys().filter(|k| !a.contains_key(*k)))
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}
