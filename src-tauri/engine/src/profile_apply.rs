//! Applying a profile to a client (issue 28): afterwards exactly the
//! profile's servers are on for that client.
//!
//! - In the client's own file (`Via::File`): each server the file defines
//!   is on if the profile has it and off otherwise, through the client's
//!   own switch (`enabled = false`, `"disabled": true`, Gemini's enablement
//!   file) or parked in Switchboard's settings for clients without one, as
//!   the writer disables; each profile server the file lacks gets its
//!   winning definition added, in the client's dialect. The `switchboard`
//!   gateway entry is never touched.
//! - Through the gateway (`Via::Gateway`): the file gets one `switchboard`
//!   entry serving the profile (`serve --profile NAME`, `…/mcp/p/NAME`),
//!   written by `connect`.
//!
//! What a profile changed in a file is remembered (`FileChanges` in
//! Switchboard's settings), so applying another profile, or Everything,
//! takes back exactly that: Everything turns back on what profiles turned
//! off, turns off what they turned on and removes what they added. What the
//! user changed by hand since is theirs: a server they turned back on (or
//! off, or removed) is dropped from the record and left as it is.
//!
//! Byte for byte: each change is also kept as a `Splice` (where it sits,
//! relative to the servers' container, and hashes of the bytes around it),
//! so taking it back puts back the very bytes it replaced (an entry parked
//! from the middle of `mcpServers` comes back there, a Codex flag the
//! profile added goes away instead of becoming `enabled = true`), checked
//! to mean what the writer's own edit would; when the bytes around moved
//! it is taken back by meaning instead.
//!
//! One apply is one history entry (`switchboard undo` gives back every file
//! it wrote, byte for byte); a file that changed since discovery read it is
//! refused before anything is written; the edits of one file are made in
//! memory and written once (of a large JSON file, only the servers'
//! container and the objects around it are edited, as the writer does).

use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::config::ServerDef;
use crate::connect::{self, ConnectError, ConnectOptions, EntryState, ENTRY_NAME};
use crate::discovery::{absolute, discover, is_gateway_entry, DiscoverOptions, Discovery};
use crate::error_code::ErrorCode;
use crate::host::Host;
use crate::profile::{
    ClientProfile, FileChanges, Profile, ProfileError, ProjectProfile, Splice, Via, EVERYTHING,
};
use crate::settings::{ParkedEntry, Settings};
use crate::sources::dialect::EnableFlag;
use crate::sources::read::parse;
use crate::sources::{Client, Container, Level, SourceSpec};
use crate::writer::atomic::{write_over, WriteError};
use crate::writer::diff::{common_prefix, common_suffix};
use crate::writer::doc::{scan, DocError};
use crate::writer::edit::{entry_path, in_entry_enable, EditError, ServerEdit, Writer};
use crate::writer::history::{remove_checked, Label, Recording};
use crate::writer::{apply_edits, content_hash, ContentHash, DocEdit, Expected, Format, PathSeg};

/// What applying a profile did to one file.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApplyReport {
    /// The client's id (`cursor`).
    pub client: String,
    pub label: &'static str,
    /// The profile applied (its own spelling), or `Everything`.
    pub profile: String,
    pub via: Via,
    /// The source id of the file (`cursor-user`, `cursor-project@/dir`).
    pub source: String,
    pub path: PathBuf,
    /// Servers turned on (in the client's own way, or brought back from
    /// where Switchboard parked them).
    pub enabled: Vec<String>,
    /// Servers turned off (or parked).
    pub disabled: Vec<String>,
    /// Servers the file did not define, added with their winning definition.
    pub added: Vec<String>,
    /// Servers a profile had added, taken out again.
    pub removed: Vec<String>,
    /// What the user should know (servers left out and why, an entry the
    /// gateway also serves, …).
    pub notes: Vec<String>,
    /// The client reads its file only when it starts: what to do for the
    /// change to count (set only when the file changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub restart_hint: Option<String>,
    /// The history entry (`switchboard undo ID`), if anything was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub history_id: Option<u64>,
}

impl ApplyReport {
    /// Whether the file (or the files it switches through) changed.
    pub fn changed(&self) -> bool {
        !(self.enabled.is_empty()
            && self.disabled.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error(transparent)]
    Edit(#[from] EditError),
    #[error("{} is not a project folder Switchboard reads: add and trust it first (`switchboard project add {}`)", .0.display(), .0.display())]
    UntrustedProject(PathBuf),
    #[error("{} has no MCP file of any client (.mcp.json, .cursor/mcp.json, .vscode/mcp.json, …) with servers in it", .0.display())]
    NoProjectFiles(PathBuf),
    #[error("applying through the gateway needs to know how {0} reaches it (the switchboard binary or the gateway's URL)")]
    NoGatewayTarget(&'static str),
}

impl ApplyError {
    /// Stable code for the UI (`{code, message}`).
    pub fn code(&self) -> ErrorCode {
        match self {
            ApplyError::Profile(ProfileError::Unknown { .. }) => ErrorCode::NotFound,
            ApplyError::Profile(_) => ErrorCode::Invalid,
            ApplyError::Connect(e) => e.code(),
            ApplyError::Edit(e) => e.code(),
            ApplyError::UntrustedProject(_) | ApplyError::NoProjectFiles(_) => ErrorCode::NotFound,
            ApplyError::NoGatewayTarget(_) => ErrorCode::Invalid,
        }
    }
}

/// For callers that speak the writer's errors (`Engine::switch_profile`).
impl From<ApplyError> for EditError {
    fn from(e: ApplyError) -> Self {
        match e {
            ApplyError::Edit(e) | ApplyError::Connect(ConnectError::Edit(e)) => e,
            ApplyError::Profile(p) => EditError::Profile(p),
            other => EditError::Invalid(other.to_string()),
        }
    }
}

impl From<crate::settings::SettingsError> for ApplyError {
    fn from(e: crate::settings::SettingsError) -> Self {
        ApplyError::Edit(e.into())
    }
}

pub type Result<T, E = ApplyError> = std::result::Result<T, E>;

fn via_word(via: Via) -> &'static str {
    match via {
        Via::File => "file",
        Via::Gateway => "gateway",
    }
}

/// Apply `profile` (a profile's name, or Everything) to `client`'s user
/// file. `gateway` says how the client reaches the gateway; it is needed
/// for `Via::Gateway` only. `follow`: the client moves with the profile
/// switch (`switch`). `discovery` is what the user saw: the files must
/// still hold those bytes. One history entry.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    host: &Host,
    settings: &mut Settings,
    discovery: &Discovery,
    client: Client,
    profile: &str,
    via: Via,
    follow: bool,
    gateway: Option<&ConnectOptions>,
) -> Result<ApplyReport> {
    let filter = settings.profiles.filter(profile)?.cloned();
    let name = filter
        .as_ref()
        .map(|p| p.name.clone())
        .unwrap_or_else(|| EVERYTHING.to_string());
    let recording = Recording::begin(
        host,
        Label::fixed(
            None,
            format!(
                "apply profile \"{name}\" to {} ({})",
                client.display_name(),
                via_word(via)
            ),
        ),
    );
    let mut report = apply_unrecorded(
        host,
        settings,
        discovery,
        client,
        filter.as_ref(),
        &name,
        via,
        follow,
        gateway,
        None,
    )?;
    report.history_id = recording.finish().map(|e| e.id);
    Ok(report)
}

/// `apply` inside a recording opened by the caller.
#[allow(clippy::too_many_arguments)]
fn apply_unrecorded(
    host: &Host,
    settings: &mut Settings,
    discovery: &Discovery,
    client: Client,
    filter: Option<&Profile>,
    name: &str,
    via: Via,
    follow: bool,
    gateway: Option<&ConnectOptions>,
    was: Option<&str>,
) -> Result<ApplyReport> {
    let id = connect::client_id(client);
    let spec = connect::source_for(host, discovery, client)?;
    let mut previous = settings.profiles.clients.get(&id).cloned();
    // The profile the client had before a switch renamed it.
    if let (Some(p), Some(was)) = (previous.as_mut(), was) {
        p.profile = was.to_string();
    }
    let mut notes = vec![];
    let mut discovery = Cow::Borrowed(discovery);
    match via {
        Via::File => {
            // From the gateway back to the file: the entry applying put
            // there goes, with what it disabled.
            if previous.as_ref().is_some_and(|p| p.via == Via::Gateway)
                && matches!(
                    connect::entry_state(settings, &spec)?,
                    EntryState::Connected { .. }
                )
            {
                connect::disconnect(host, settings, &discovery, client)?;
                notes.push(format!(
                    "Took the \"{ENTRY_NAME}\" gateway entry out of {}",
                    spec.path.display()
                ));
                discovery = Cow::Owned(rediscover(host, settings, &discovery));
            }
            let previous = previous.filter(|p| p.via == Via::File);
            let same_profile = previous
                .as_ref()
                .is_some_and(|p| p.profile.eq_ignore_ascii_case(name));
            let job = Job {
                spec: spec.clone(),
                record: previous.map(|p| p.changes).unwrap_or_default(),
                same_profile,
            };
            let (name_owned, id_owned) = (name.to_string(), id.clone());
            let mut outcomes = run_files(
                host,
                settings,
                &discovery,
                vec![job],
                filter,
                move |s: &mut Settings, done: &[Outcome]| {
                    let changes = done.first().map(|o| o.changes.clone()).unwrap_or_default();
                    if crate::profile::is_everything(&name_owned) && !follow && changes.is_empty() {
                        s.profiles.clients.remove(&id_owned);
                    } else {
                        s.profiles.clients.insert(
                            id_owned.clone(),
                            ClientProfile {
                                profile: name_owned.clone(),
                                via: Via::File,
                                follow,
                                changes,
                            },
                        );
                    }
                },
                None,
            )?;
            let o = outcomes.remove(0);
            if let EntryState::Connected { .. } = connect::entry_state(settings, &spec)? {
                notes.push(format!("{} also has the \"{ENTRY_NAME}\" entry, through which the gateway serves it the servers switched on there; `switchboard disconnect {id}` leaves the file alone to decide", client.display_name()));
            }
            let mut report = o.report(client, name, Via::File);
            notes.append(&mut report.notes);
            report.notes = notes;
            Ok(report)
        }
        Via::Gateway => {
            let derived = match gateway {
                Some(_) => None,
                None => current_target(settings, &spec),
            };
            let opts = gateway
                .or(derived.as_ref())
                .ok_or(ApplyError::NoGatewayTarget(client.display_name()))?;
            let mut report = ApplyReport {
                client: id.clone(),
                label: client.display_name(),
                profile: name.to_string(),
                via: Via::Gateway,
                source: spec.id.clone(),
                path: spec.path.clone(),
                enabled: vec![],
                disabled: vec![],
                added: vec![],
                removed: vec![],
                notes: vec![],
                restart_hint: None,
                history_id: None,
            };
            // What profiles did in the file is taken back first: from now on
            // the gateway decides what the client gets.
            if let Some(p) = previous.filter(|p| p.via == Via::File && !p.changes.is_empty()) {
                let job = Job {
                    spec: spec.clone(),
                    record: p.changes,
                    same_profile: false,
                };
                let id_owned = id.clone();
                let mut back = run_files(
                    host,
                    settings,
                    &discovery,
                    vec![job],
                    None,
                    move |s: &mut Settings, _: &[Outcome]| {
                        s.profiles.clients.remove(&id_owned);
                    },
                    None,
                )?;
                let back = back.remove(0);
                report.enabled = back.enabled;
                report.disabled = back.disabled;
                report.removed = back.removed;
                report.notes = back.notes;
                discovery = Cow::Owned(rediscover(host, settings, &discovery));
            }
            // Following the switch, on the profile switched to: the plain
            // entry, which serves the active profile and follows each
            // switch at once (the gateway tells the client).
            let active = settings.profiles.active_name().to_string();
            let entry_profile = (!(follow && active.eq_ignore_ascii_case(name))).then_some(name);
            let c = connect::connect_to(host, settings, &discovery, client, opts, entry_profile)?;
            for d in &c.plan.disable {
                if !report.disabled.contains(&d.name) {
                    report.disabled.push(d.name.clone());
                }
            }
            report.notes.extend(c.plan.notes.iter().cloned());
            for k in &c.plan.kept {
                report
                    .notes
                    .push(format!("Left \"{}\" on: {}", k.name, k.reason));
            }
            let entry_changed = c.plan.action != connect::EntryAction::Unchanged;
            let serving = match entry_profile {
                Some(p) => format!("profile \"{p}\""),
                None => "the profile switched to".to_string(),
            };
            report.notes.insert(
                0,
                format!(
                    "{} \"{ENTRY_NAME}\" in {}, serving {serving}",
                    match c.plan.action {
                        connect::EntryAction::Add => "Added",
                        connect::EntryAction::Update => "Updated",
                        connect::EntryAction::Unchanged => "Kept",
                    },
                    spec.path.display()
                ),
            );
            if entry_profile.is_none() {
                report.notes.push(format!(
                    "The entry serves the profile switched to (now \"{active}\"); each switch reaches {} at once",
                    client.display_name()
                ));
            }
            let (name_owned, id_owned) = (name.to_string(), id.clone());
            *settings = Settings::update(host, move |s| {
                s.profiles.clients.insert(
                    id_owned.clone(),
                    ClientProfile {
                        profile: name_owned.clone(),
                        via: Via::Gateway,
                        follow,
                        changes: FileChanges::default(),
                    },
                );
            })?;
            if report.changed() || entry_changed {
                report.restart_hint = client.restart_hint().map(str::to_string);
            }
            Ok(report)
        }
    }
}

/// Bind the project folder `dir` to `profile`: its clients' project files
/// (`.mcp.json`, `.cursor/mcp.json`, …, the ones that hold servers) hold
/// exactly the profile's servers, as `apply` does for a user file. One
/// history entry; one report per file.
pub fn apply_project(
    host: &Host,
    settings: &mut Settings,
    discovery: &Discovery,
    dir: &Path,
    profile: &str,
) -> Result<Vec<ApplyReport>> {
    let filter = settings.profiles.filter(profile)?.cloned();
    let name = filter
        .as_ref()
        .map(|p| p.name.clone())
        .unwrap_or_else(|| EVERYTHING.to_string());
    let dir = absolute(dir);
    if !discovery.project_folders().contains(&dir) {
        return Err(ApplyError::UntrustedProject(dir));
    }
    let record = settings.profiles.projects.get(&dir).cloned();
    let mut jobs: Vec<Job> = vec![];
    for s in &discovery.sources {
        let ours = s.project.as_deref() == Some(dir.as_path())
            && s.level == Level::Project
            && !matches!(s.client, Client::Fallback | Client::Switchboard)
            && !s.read_only;
        let recorded = record.as_ref().and_then(|r| r.changes.get(&s.id)).cloned();
        // Files that hold servers (or that a profile changed): no client's
        // file is created for a profile.
        let takes_part = recorded.is_some() || (s.exists && s.server_count > 0);
        if let (true, true, Some(spec)) = (ours, takes_part, s.spec.clone()) {
            jobs.push(Job {
                spec,
                record: recorded.unwrap_or_default(),
                same_profile: record
                    .as_ref()
                    .is_some_and(|r| r.profile.eq_ignore_ascii_case(&name)),
            });
        }
    }
    if jobs.is_empty() {
        return Err(ApplyError::NoProjectFiles(dir));
    }
    let recording = Recording::begin(
        host,
        Label::fixed(
            None,
            format!("apply profile \"{name}\" to project {}", dir.display()),
        ),
    );
    let sources: Vec<String> = jobs.iter().map(|j| j.spec.id.clone()).collect();
    let (name_owned, dir_owned) = (name.clone(), dir.clone());
    let outcomes = run_files(
        host,
        settings,
        discovery,
        jobs,
        filter.as_ref(),
        move |s: &mut Settings, done: &[Outcome]| {
            let mut p = s
                .profiles
                .projects
                .remove(&dir_owned)
                .unwrap_or(ProjectProfile {
                    profile: name_owned.clone(),
                    changes: Default::default(),
                });
            p.profile = name_owned.clone();
            for o in done {
                if o.changes.is_empty() {
                    p.changes.remove(&o.source);
                } else {
                    p.changes.insert(o.source.clone(), o.changes.clone());
                }
            }
            if !(crate::profile::is_everything(&name_owned) && p.changes.is_empty()) {
                s.profiles.projects.insert(dir_owned.clone(), p);
            }
        },
        None,
    )?;
    // Servers written into a trusted folder by the user are trusted as written.
    let after = rediscover(host, settings, discovery);
    for id in &sources {
        if let Some(s) = crate::projects::pin_own_edit(host, discovery, &after, id)? {
            *settings = s;
        }
    }
    let history_id = recording.finish().map(|e| e.id);
    Ok(outcomes
        .into_iter()
        .map(|o| {
            let client = o.client;
            let mut r = o.report(client, &name, Via::File);
            r.history_id = history_id;
            r
        })
        .collect())
}

/// Switch to `profile` (what the gateway's `/mcp` serves) and bring every
/// client that follows the switch to it: their files (or gateway entries)
/// follow. One history entry. A client whose file cannot be applied now
/// does not stop the others; the first such error is returned after.
pub fn switch(
    host: &Host,
    settings: &mut Settings,
    discovery: &Discovery,
    profile: &str,
) -> Result<Vec<ApplyReport>> {
    let name = match settings.profiles.filter(profile)? {
        Some(p) => p.name.clone(),
        None => EVERYTHING.to_string(),
    };
    let recording = Recording::begin(
        host,
        Label::fixed(None, format!("switch to profile \"{name}\"")),
    );
    let was: Vec<(String, String)> = settings
        .profiles
        .clients
        .iter()
        .map(|(id, c)| (id.clone(), c.profile.clone()))
        .collect();
    *settings = crate::profiles::change(host, |p| p.switch_to(&name))?;
    let followers: Vec<(String, ClientProfile)> = settings
        .profiles
        .clients
        .iter()
        .filter(|(_, c)| c.follow)
        .map(|(id, c)| (id.clone(), c.clone()))
        .collect();
    let mut reports = vec![];
    let mut errors: Vec<ApplyError> = vec![];
    let filter = settings.profiles.filter(&name)?.cloned();
    // Files that follow: all in one go (one settings write before the
    // files, one after), each file still refused alone if it changed.
    let mut jobs = vec![];
    let mut gateways = vec![];
    for (id, c) in followers {
        let client = match connect::parse_client(&id) {
            Ok(c) => c,
            Err(e) => {
                errors.push(e.into());
                continue;
            }
        };
        if c.via == Via::Gateway {
            gateways.push((id, client));
            continue;
        }
        let spec = match connect::source_for(host, discovery, client) {
            Ok(s) => s,
            Err(e) => {
                errors.push(e.into());
                continue;
            }
        };
        let before = was.iter().find(|(x, _)| *x == id).map(|(_, p)| p.as_str());
        jobs.push(Job {
            spec,
            record: c.changes,
            same_profile: before.is_some_and(|p| p.eq_ignore_ascii_case(&name)),
        });
    }
    if !jobs.is_empty() {
        let name_owned = name.clone();
        let outcomes = run_files(
            host,
            settings,
            discovery,
            jobs,
            filter.as_ref(),
            move |s: &mut Settings, done: &[Outcome]| {
                for o in done {
                    let id = connect::client_id(o.client);
                    if let Some(c) = s.profiles.clients.get_mut(&id) {
                        c.profile = name_owned.clone();
                        c.changes = o.changes.clone();
                    }
                }
            },
            Some(&mut errors),
        );
        match outcomes {
            Ok(done) => reports.extend(done.into_iter().map(|o| {
                let client = o.client;
                o.report(client, &name, Via::File)
            })),
            Err(e) => errors.push(e),
        }
    }
    // A gateway entry is pointed anew the way it reaches the gateway now.
    for (id, client) in gateways {
        let before = was.iter().find(|(x, _)| *x == id).map(|(_, p)| p.as_str());
        match apply_unrecorded(
            host,
            settings,
            discovery,
            client,
            filter.as_ref(),
            &name,
            Via::Gateway,
            true,
            None,
            before,
        ) {
            Ok(r) => reports.push(r),
            Err(e) => errors.push(e),
        }
    }
    let first_error = errors.into_iter().next();
    let history_id = recording.finish().map(|e| e.id);
    for r in &mut reports {
        r.history_id = history_id;
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(reports),
    }
}

/// How `spec`'s `switchboard` entry reaches the gateway now (to point it
/// at another profile the same way).
fn current_target(settings: &Settings, spec: &SourceSpec) -> Option<ConnectOptions> {
    let def = crate::writer::edit::read_def(settings, spec, ENTRY_NAME).ok()?;
    if !is_gateway_entry(ENTRY_NAME, &def) {
        return None;
    }
    let via = match def.transport {
        crate::config::Transport::Stdio => connect::Via::Stdio {
            binary: PathBuf::from(def.command?),
        },
        _ => {
            let url = def.url?;
            let base = match url.find("/mcp/p/") {
                Some(i) => url[..i + "/mcp".len()].to_string(),
                None => url,
            };
            let token = def
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                .and_then(|(_, v)| v.strip_prefix("Bearer "))
                .filter(|t| !t.starts_with("${"))
                .unwrap_or_default()
                .to_string();
            connect::Via::Http(connect::HttpTarget { url: base, token })
        }
    };
    Some(ConnectOptions {
        via,
        disable_duplicates: false,
    })
}

/// Discovery again after Switchboard wrote files (same project folders).
fn rediscover(host: &Host, settings: &Settings, before: &Discovery) -> Discovery {
    discover(
        host,
        settings,
        &DiscoverOptions {
            extra_projects: before.project_folders(),
        },
    )
}

// ---- one file ------------------------------------------------------------

/// A file to bring to a profile, with what profiles changed in it so far.
struct Job {
    spec: SourceSpec,
    record: FileChanges,
    /// The profile applied is the one recorded for the file: what the user
    /// changed by hand since stays as they left it.
    same_profile: bool,
}

/// What applying did to one file.
struct Outcome {
    source: String,
    path: PathBuf,
    client: Client,
    /// What profiles have changed in it now.
    changes: FileChanges,
    enabled: Vec<String>,
    disabled: Vec<String>,
    added: Vec<String>,
    removed: Vec<String>,
    notes: Vec<String>,
}

impl Outcome {
    fn report(self, client: Client, profile: &str, via: Via) -> ApplyReport {
        let mut r = ApplyReport {
            client: connect::client_id(client),
            label: client.display_name(),
            profile: profile.to_string(),
            via,
            source: self.source,
            path: self.path,
            enabled: self.enabled,
            disabled: self.disabled,
            added: self.added,
            removed: self.removed,
            notes: self.notes,
            restart_hint: None,
            history_id: None,
        };
        if r.changed() {
            r.restart_hint = client.restart_hint().map(str::to_string);
        }
        r
    }
}

/// How a file's servers are switched on and off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Switch {
    /// A key inside the entry (`enabled = false`, `"disabled": true`).
    InEntry,
    /// No switch: off is parked in Switchboard's settings.
    Park,
    /// Kept in another file (Gemini's enablement file, Claude Code's
    /// answers for a project's `.mcp.json`): switched through the writer
    /// once the file is written.
    Elsewhere,
}

fn switch_of(spec: &SourceSpec) -> Switch {
    match spec.dialect.enable_flag() {
        EnableFlag::InEntry { .. } => Switch::InEntry,
        EnableFlag::GeminiEnablementFile => Switch::Elsewhere,
        EnableFlag::Park
            if spec.client == Client::ClaudeCode
                && spec.level == Level::Project
                && spec.container.path() == [PathSeg::Key("mcpServers".into())] =>
        {
            Switch::Elsewhere
        }
        EnableFlag::Park => Switch::Park,
    }
}

/// What one step does to a server.
#[derive(Debug, Clone)]
enum Kind {
    Enable,
    Disable,
    Add(Box<ServerDef>),
    Remove,
}

#[derive(Debug, Clone)]
struct Step {
    server: String,
    kind: Kind,
    /// Taking back a change a profile made (else: a new one, recorded).
    undo: bool,
}

fn step(server: &str, kind: Kind, undo: bool) -> Step {
    Step {
        server: server.to_string(),
        kind,
        undo,
    }
}

/// A server's state in one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    On,
    /// Switched off, or parked.
    Off,
    Absent,
}

/// The servers `source` defines (parked ones too), each on or off, in
/// discovery's order; gateway entries left out.
fn servers_here(discovery: &Discovery, source: &str) -> Vec<(String, State)> {
    let mut out: Vec<(String, State)> = vec![];
    for s in &discovery.servers {
        for d in s.definitions.iter().filter(|d| d.source == source) {
            if d.def.name == ENTRY_NAME || is_gateway_entry(&d.def.name, &d.def) {
                continue;
            }
            if !out.iter().any(|(n, _)| *n == d.def.name) {
                let on = d.def.enabled && !d.parked;
                out.push((d.def.name.clone(), if on { State::On } else { State::Off }));
            }
        }
    }
    out
}

/// How a file stands before an apply.
struct Plan {
    here: Vec<(String, State)>,
    /// What profiles changed, less what the user changed by hand since.
    rec: FileChanges,
    /// Taking back every change profiles made, newest first: a new profile
    /// is applied to the file as it was without profiles, so each change
    /// is always taken back onto the bytes it left (byte for byte).
    undo: Vec<Step>,
    /// Servers the user changed by hand since the profile was applied:
    /// applying that same profile again leaves them as they are.
    kept: Vec<String>,
}

fn plan(spec: &SourceSpec, discovery: &Discovery, record: &FileChanges, same: bool) -> Plan {
    let here = servers_here(discovery, &spec.id);
    let state = |n: &str| {
        here.iter()
            .find(|(x, _)| x == n)
            .map(|(_, s)| *s)
            .unwrap_or(State::Absent)
    };
    let mut rec = record.clone();
    rec.disabled.retain(|n| state(n) == State::Off);
    rec.enabled.retain(|n| state(n) == State::On);
    rec.added.retain(|n| state(n) == State::On);
    let listed = |r: &FileChanges, n: &str| {
        r.disabled
            .iter()
            .chain(&r.enabled)
            .chain(&r.added)
            .any(|x| x == n)
    };
    let kept: Vec<String> = match same {
        true => record
            .disabled
            .iter()
            .chain(&record.enabled)
            .chain(&record.added)
            .filter(|n| !listed(&rec, n))
            .cloned()
            .collect(),
        false => vec![],
    };
    let pruned = rec.clone();
    rec.exact.retain(|s| listed(&pruned, &s.server));
    let mut undo: Vec<Step> = vec![];
    undo.extend(rec.disabled.iter().map(|n| step(n, Kind::Enable, true)));
    undo.extend(rec.enabled.iter().map(|n| step(n, Kind::Disable, true)));
    undo.extend(rec.added.iter().map(|n| step(n, Kind::Remove, true)));
    let order = |s: &Step| {
        rec.exact
            .iter()
            .rposition(|x| x.server == s.server)
            .map(|i| i as isize)
            .unwrap_or(-1)
    };
    undo.sort_by_key(|s| std::cmp::Reverse(order(s)));
    Plan {
        here,
        rec,
        undo,
        kept,
    }
}

/// The winning definition of `name`, as `spec`'s client can hold it, or why
/// it is not added.
fn addable(
    spec: &SourceSpec,
    discovery: &Discovery,
    name: &str,
) -> std::result::Result<ServerDef, String> {
    let label = spec.client.display_name();
    let Some(s) = discovery.server(name) else {
        return Err(format!(
            "\"{name}\" is missing (no source defines it now), so it is not added to {label}"
        ));
    };
    let w = &s.winner;
    let why = if !w.is_valid() {
        Some(format!(
            "its definition has errors: {}",
            w.errors.join("; ")
        ))
    } else if is_gateway_entry(name, &w.def) {
        Some("it is Switchboard's own gateway entry".to_string())
    } else if let Some(n) = &w.not_runnable {
        Some(n.clone())
    } else if w.held.is_some() {
        Some("it is held for approval in its project folder".to_string())
    } else {
        crate::config::validate::validate_name(name).err()
    };
    if let Some(why) = why {
        return Err(format!("\"{name}\" is not added to {label}: {why}"));
    }
    let def = ServerDef {
        enabled: true,
        ..spec.dialect.storable(&w.def)
    };
    if let Err(u) = spec.dialect.to_entry(&def) {
        return Err(format!(
            "\"{name}\" is not added to {label}: {}",
            u.message(label)
        ));
    }
    Ok(def)
}

/// Bring each job's file to `profile` (`None`: Everything): every file is
/// read and changed in memory first (a file changed since `discovery`
/// refuses the whole apply, before anything is written); then entries to
/// park are parked, the files written (each once), switches kept elsewhere
/// switched, and one settings write unparks what came back and records
/// what each file now owes to profiles (`record`).
fn run_files(
    host: &Host,
    settings: &mut Settings,
    discovery: &Discovery,
    jobs: Vec<Job>,
    profile: Option<&Profile>,
    record: impl Fn(&mut Settings, &[Outcome]),
    mut skipped: Option<&mut Vec<ApplyError>>,
) -> Result<Vec<Outcome>> {
    // Each file is read and edited on its own (on every core); only the
    // writes below go one after the other.
    let prepared = {
        let settings = &*settings;
        crate::parallel::map(jobs, |job: Job| -> Result<Session> {
            let p = plan(&job.spec, discovery, &job.record, job.same_profile);
            if p.undo.is_empty() && profile.is_none() {
                return Ok(Session::untouched(job.spec, p.rec));
            }
            let whole = p.rec.exact.iter().any(|s| s.whole);
            let prepare = |safe: bool| -> Result<Session> {
                let mut s = Session::open(job.spec.clone(), p.rec.clone(), whole, safe)?;
                // What the user saw must still be there.
                if let Some(info) = discovery.source(&s.spec.id) {
                    if info.hash != s.hash {
                        return Err(EditError::Write(WriteError::Conflict {
                            path: s.spec.path.clone(),
                        })
                        .into());
                    }
                }
                s.start(&p.here, settings);
                for st in &p.undo {
                    s.run(discovery, st)?;
                }
                // Entries put back where they were: the members' order as the
                // text has it, for the quick edits that follow.
                if s.touched && !s.safe {
                    s.value = s.parse(&s.work)?;
                }
                if let Some(profile) = profile {
                    for st in s.steps_for(profile, discovery, &p.kept) {
                        s.run(discovery, &st)?;
                    }
                }
                Ok(s)
            };
            // The quick way, checked once at the end; else step by step.
            let ready = match prepare(false) {
                Ok(s) if s.verify() => Ok(s),
                _ => prepare(true),
            };
            ready.and_then(|s| match s.touched && s.spec.read_only {
                true => Err(EditError::ReadOnly {
                    path: s.spec.path.clone(),
                }
                .into()),
                false => Ok(s),
            })
        })
    };
    let mut sessions = vec![];
    for ready in prepared {
        // A file that cannot be done: the whole apply is refused, or (a
        // switch over several clients) that file is left as it is.
        match (ready, skipped.as_deref_mut()) {
            (Ok(s), _) => sessions.push(s),
            (Err(e), Some(errors)) => errors.push(e),
            (Err(e), None) => return Err(e),
        }
    }

    // Parked first, written second: a failed write leaves an entry in both
    // places, never in neither.
    let parks: Vec<(ParkedEntry, bool)> = sessions.iter().flat_map(|s| s.parks()).collect();
    if !parks.is_empty() {
        *settings = Settings::try_update(host, |s| {
            for (p, new) in &parks {
                let at = s
                    .parked
                    .iter()
                    .position(|x| x.source == p.source && x.name == p.name);
                match (at, new) {
                    (Some(_), true) | (None, false) => {
                        return Err(WriteError::Conflict {
                            path: crate::settings::settings_path(host),
                        }
                        .into())
                    }
                    (Some(i), false) => s.parked[i] = p.clone(),
                    (None, true) => s.parked.push(p.clone()),
                }
            }
            Ok(())
        })?;
    }

    let mut failed: Option<ApplyError> = None;
    let mut written = vec![false; sessions.len()];
    for (i, s) in sessions.iter().enumerate() {
        if failed.is_some() {
            break;
        }
        match s.write() {
            Ok(()) => written[i] = true,
            Err(e) => failed = Some(e.into()),
        }
    }
    for (i, s) in sessions.iter_mut().enumerate() {
        if written[i] {
            s.switch_elsewhere(host, settings);
        }
    }

    let outcomes: Vec<Outcome> = sessions
        .iter()
        .zip(&written)
        .filter(|(_, w)| **w)
        .map(|(s, _)| s.outcome())
        .collect();
    // Unparked: what came back into a written file; and what was parked
    // for a file that could not be written.
    let mut unpark: Vec<(String, String)> = vec![];
    for (s, w) in sessions.iter().zip(&written) {
        match w {
            true => unpark.extend(s.unparks().into_iter().map(|n| (s.spec.id.clone(), n))),
            false => unpark.extend(
                s.parks()
                    .into_iter()
                    .filter(|(_, new)| *new)
                    .map(|(p, _)| (p.source, p.name)),
            ),
        }
    }
    *settings = Settings::update(host, |s| {
        s.parked
            .retain(|p| !unpark.contains(&(p.source.clone(), p.name.clone())));
        record(s, &outcomes);
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(outcomes),
    }
}

fn doc_error(path: &Path, e: DocError) -> EditError {
    match e {
        DocError::Unsupported(what) => EditError::Unsupported {
            path: path.to_path_buf(),
            message: format!(
                "Switchboard does not edit {what} files yet (it would lose their comments)"
            ),
        },
        dup @ DocError::Duplicate { .. } => EditError::Unsupported {
            path: path.to_path_buf(),
            message: dup.to_string(),
        },
        other => EditError::Unparsable {
            path: path.to_path_buf(),
            message: other.to_string(),
        },
    }
}

/// A short hash of some bytes (which bytes are around a change).
fn short_hash(bytes: &[u8]) -> String {
    hex::encode(&content_hash(bytes).0[..8])
}

/// Where `before` and `after` differ: the offset, the bytes taken out and
/// how many were put in (on character boundaries).
fn hunk(before: &str, after: &str) -> (usize, String, usize) {
    let (a, b) = (before.as_bytes(), after.as_bytes());
    let mut p = common_prefix(a, b);
    while !before.is_char_boundary(p) || !after.is_char_boundary(p) {
        p -= 1;
    }
    let mut s = common_suffix(a, b).min(a.len() - p).min(b.len() - p);
    while !before.is_char_boundary(a.len() - s) || !after.is_char_boundary(b.len() - s) {
        s -= 1;
    }
    (p, before[p..a.len() - s].to_string(), b.len() - s - p)
}

/// The entry of `name` taken out of `doc` (compared apart from the rest).
fn take_entry(spec: &SourceSpec, doc: &mut Value, name: &str) -> Option<Value> {
    let mut at = doc;
    for seg in spec.container.path() {
        at = match seg {
            PathSeg::Key(k) => at.get_mut(k.as_str())?,
            PathSeg::Index(i) => at.get_mut(*i)?,
        };
    }
    match &spec.container {
        Container::Map(_) => at.as_object_mut()?.remove(name),
        Container::List(_) => {
            let list = at.as_array_mut()?;
            let i = list
                .iter()
                .position(|e| e.get("name").and_then(Value::as_str) == Some(name))?;
            Some(list.remove(i))
        }
    }
}

/// The key path of a TOML table header line (`[a."b.c"]  # note`);
/// `None` for what this reading is not sure of (arrays of tables, escapes).
fn toml_header(line: &str) -> Option<Vec<String>> {
    let inner = line.strip_prefix('[')?;
    if inner.starts_with('[') {
        return None;
    }
    let mut path = vec![];
    let mut cur = String::new();
    let mut chars = inner.chars();
    loop {
        match chars.next()? {
            ' ' | '\t' => {}
            '.' => path.push(std::mem::take(&mut cur)),
            ']' => {
                path.push(cur);
                return Some(path);
            }
            q @ ('"' | '\'') => loop {
                match chars.next()? {
                    '\\' => return None,
                    c if c == q => break,
                    c => cur.push(c),
                }
            },
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' => cur.push(c),
            _ => return None,
        }
    }
}

fn value_at_path<'a>(doc: &'a Value, path: &[PathSeg]) -> Option<&'a Value> {
    let mut at = doc;
    for seg in path {
        at = match seg {
            PathSeg::Key(k) => at.get(k.as_str())?,
            PathSeg::Index(i) => at.get(*i)?,
        };
    }
    Some(at)
}

/// `DocEdit::Set` on a value: parents made as objects, the value replaced.
fn set_at(doc: &mut Value, path: &[PathSeg], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        *doc = value;
        return;
    };
    let mut at = doc;
    for seg in parents {
        at = match seg {
            PathSeg::Key(k) => {
                if !at.is_object() {
                    *at = Value::Object(Default::default());
                }
                at.as_object_mut()
                    .expect("an object")
                    .entry(k.clone())
                    .or_insert(Value::Object(Default::default()))
            }
            PathSeg::Index(i) => match at.get_mut(*i) {
                Some(v) => v,
                None => return,
            },
        };
    }
    match last {
        PathSeg::Key(k) => {
            if !at.is_object() {
                *at = Value::Object(Default::default());
            }
            at.as_object_mut()
                .expect("an object")
                .insert(k.clone(), value);
        }
        PathSeg::Index(i) => {
            if let Some(a) = at.as_array_mut() {
                if *i < a.len() {
                    a[*i] = value;
                } else if *i == a.len() {
                    a.push(value);
                }
            }
        }
    }
}

/// `DocEdit::Remove` on a value (keeping the order of what stays).
fn remove_at(doc: &mut Value, path: &[PathSeg]) {
    take_at(doc, path);
}

fn take_at(doc: &mut Value, path: &[PathSeg]) -> Option<Value> {
    let (last, parents) = path.split_last()?;
    let mut at = doc;
    for seg in parents {
        at = match seg {
            PathSeg::Key(k) => at.get_mut(k.as_str())?,
            PathSeg::Index(i) => at.get_mut(*i)?,
        };
    }
    match last {
        PathSeg::Key(k) => at.as_object_mut()?.shift_remove(k.as_str()),
        PathSeg::Index(i) => {
            let a = at.as_array_mut()?;
            (*i < a.len()).then(|| a.remove(*i))
        }
    }
}

/// One file being brought to a profile, changed in memory until `write`.
struct Session {
    spec: SourceSpec,
    /// The file as read (`None`: it does not exist), byte order mark apart.
    read: Option<String>,
    bom: bool,
    hash: Option<ContentHash>,
    /// What the edits apply to: the file, or its skeleton around the
    /// servers' container (a large JSON file, as the writer edits it).
    work: String,
    /// Where the container's bytes are in `work` (splices count from its
    /// start); `whole`: all of `work`.
    frame: Range<usize>,
    whole: bool,
    /// The skeleton's container in the file as read, and how many bytes
    /// follow it in the skeleton.
    skeleton: Option<(Range<usize>, usize)>,
    /// `work` parsed.
    value: Value,
    rec: FileChanges,
    /// Each server's state before, and now.
    before: Vec<(String, State)>,
    now: Vec<(String, State)>,
    /// This file's entries parked in Switchboard's settings, before and now.
    parked_before: Vec<ParkedEntry>,
    parked_now: Vec<ParkedEntry>,
    created_file: bool,
    /// Taking back the change that created the file empties it: delete it.
    delete_if_empty: bool,
    notes: Vec<String>,
    touched: bool,
    /// Each step checked as it is made, every edit on the whole text (after
    /// the quick way did not check out).
    safe: bool,
}

impl Session {
    /// A file no step changes.
    fn untouched(spec: SourceSpec, rec: FileChanges) -> Session {
        Session {
            spec,
            read: None,
            bom: false,
            hash: None,
            work: String::new(),
            frame: 0..0,
            whole: true,
            skeleton: None,
            value: Value::Null,
            rec,
            before: vec![],
            now: vec![],
            parked_before: vec![],
            parked_now: vec![],
            created_file: false,
            delete_if_empty: false,
            notes: vec![],
            touched: false,
            safe: false,
        }
    }

    fn open(
        spec: SourceSpec,
        rec: FileChanges,
        whole: bool,
        safe: bool,
    ) -> Result<Session, EditError> {
        let path = spec.path.clone();
        let bytes = match std::fs::read(&path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(WriteError::Io { path, source: e }.into()),
        };
        let hash = bytes.as_deref().map(content_hash);
        let text = match bytes {
            None => None,
            Some(b) => Some(String::from_utf8(b).map_err(|_| EditError::Unparsable {
                path: path.clone(),
                message: "not UTF-8 text".into(),
            })?),
        };
        let bom = text.as_deref().is_some_and(|t| t.starts_with('\u{feff}'));
        let read = text.map(|t| match bom {
            true => t['\u{feff}'.len_utf8()..].to_string(),
            false => t,
        });
        let body = read.clone().unwrap_or_default();
        let json = matches!(spec.format, Format::Json | Format::Jsonc);
        let container = spec.container.path();
        let mut s = Session {
            created_file: read.is_none(),
            read,
            bom,
            hash,
            frame: 0..body.len(),
            work: body,
            safe,
            ..Session::untouched(spec.clone(), rec)
        };
        if json && !whole && !container.is_empty() && !s.work.is_empty() {
            let located =
                scan::locate_around(&s.work, spec.format == Format::Jsonc, &[container], 0);
            if let Ok((found, skeleton)) = located {
                if let Some(f) = found.into_iter().next().flatten() {
                    s.whole = false;
                    match skeleton.filter(|k| k.depth == container.len() && k.kept == f.value) {
                        Some(k) => {
                            let after = k.text.len() - k.kept_in_skeleton.end;
                            s.skeleton = Some((k.kept.clone(), after));
                            s.frame = k.kept_in_skeleton.clone();
                            s.work = k.text;
                        }
                        None => s.frame = f.value,
                    }
                }
            }
        }
        s.value = s.parse(&s.work)?;
        Ok(s)
    }

    /// Where each server stands before the steps.
    fn start(&mut self, here: &[(String, State)], settings: &Settings) {
        self.before = here.to_vec();
        self.now = here.to_vec();
        self.parked_before = settings
            .parked
            .iter()
            .filter(|p| p.source == self.spec.id)
            .cloned()
            .collect();
        self.parked_now = self.parked_before.clone();
    }

    fn state(&self, name: &str) -> State {
        self.now
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
            .unwrap_or(State::Absent)
    }

    fn set_state(&mut self, name: &str, state: State) {
        match self.now.iter_mut().find(|(n, _)| n == name) {
            Some(x) => x.1 = state,
            None => self.now.push((name.to_string(), state)),
        }
    }

    /// The steps that make exactly `profile`'s servers on, from where the
    /// file stands now; `kept` are left as they are.
    fn steps_for(
        &mut self,
        profile: &Profile,
        discovery: &Discovery,
        kept: &[String],
    ) -> Vec<Step> {
        let mut steps = vec![];
        for (n, s) in &self.now {
            if kept.contains(n) {
                continue;
            }
            match (profile.includes(n), s) {
                (true, State::Off) => steps.push(step(n, Kind::Enable, false)),
                (false, State::On) => steps.push(step(n, Kind::Disable, false)),
                _ => {}
            }
        }
        for s in &profile.servers {
            if kept.contains(&s.name) || self.state(&s.name) != State::Absent {
                continue;
            }
            match addable(&self.spec, discovery, &s.name) {
                Ok(def) => steps.push(step(&s.name, Kind::Add(Box::new(def)), false)),
                Err(why) => self.notes.push(why),
            }
        }
        for n in kept {
            self.notes.push(format!(
                "\"{n}\" stays as you changed it by hand since this profile was applied"
            ));
        }
        steps
    }

    fn parse(&self, text: &str) -> Result<Value, EditError> {
        parse(self.spec.format, text)
            .map(|d| d.value)
            .map_err(|f| EditError::Unparsable {
                path: self.spec.path.clone(),
                message: f.message,
            })
    }

    fn edit(&self, edits: &[DocEdit]) -> Result<String, EditError> {
        if edits.is_empty() {
            return Ok(self.work.clone());
        }
        apply_edits(self.spec.format, &self.work, edits).map_err(|e| doc_error(&self.spec.path, e))
    }

    /// `edit` of `name`'s entry, made quickly where it can be: on the
    /// document without the container's members away from the entry (the
    /// edit depends only on its neighbours and the layout around), spliced
    /// back. Unsure cases, and
    /// every edit in safe mode, go through the whole text.
    fn edit_at(&self, name: &str, edits: &[DocEdit]) -> Result<String, EditError> {
        if edits.is_empty() {
            return Ok(self.work.clone());
        }
        match self.safe {
            false => match self.edit_near(name, edits) {
                Some(new) => Ok(new),
                None => self.edit(edits),
            },
            true => self.edit(edits),
        }
    }

    fn edit_near(&self, name: &str, edits: &[DocEdit]) -> Option<String> {
        let Container::Map(container) = &self.spec.container else {
            return None;
        };
        if self.whole && self.spec.format == Format::Toml {
            return self.edit_near_toml(container, name, edits);
        }
        if self.whole || !matches!(self.spec.format, Format::Json | Format::Jsonc) {
            return None;
        }
        let members: Vec<&String> = value_at_path(&self.value, container)?
            .as_object()?
            .keys()
            .collect();
        let last = members.len().checked_sub(1)?;
        if members.len() < 4 {
            return None;
        }
        let at = members.iter().position(|m| *m == name);
        let (lo, hi) = match at {
            Some(i) => (i.saturating_sub(1), (i + 1).min(last)),
            None => (last, last),
        };
        let path = |n: &str| {
            let mut p = container.clone();
            p.push(PathSeg::Key(n.to_string()));
            p
        };
        let wanted = [
            path(members[0]),
            path(members[lo]),
            path(members[hi]),
            path(members[last]),
            path(name),
        ];
        let refs: Vec<&[PathSeg]> = wanted.iter().map(Vec::as_slice).collect();
        let found = scan::locate(&self.work, self.spec.format == Format::Jsonc, &refs).ok()?;
        let key = |f: &Option<scan::Found>| f.as_ref().and_then(|f| f.keys.last().copied());
        let end = |f: &Option<scan::Found>| f.as_ref().map(|f| f.value.end);
        let (first_key, lo_key, hi_end, last_end) = (
            key(&found[0])?,
            key(&found[1])?,
            end(&found[2])?,
            end(&found[3])?,
        );
        let f = &self.frame;
        if !(f.start < first_key && first_key <= lo_key && lo_key < hi_end && hi_end <= last_end)
            || last_end > f.end
        {
            return None;
        }
        // The entry is inside the window (the members' order as the text has it).
        match (at, &found[4]) {
            (Some(_), Some(x)) if lo_key <= *x.keys.last()? && x.value.end <= hi_end => {}
            (None, None) => {}
            _ => return None,
        }
        self.edit_window(
            edits,
            first_key,
            lo_key..hi_end,
            last_end,
            lo == 0,
            hi == last,
        )
    }

    /// `edits` made on the document without the members between `first`
    /// (where the first member starts) and `window`, and between `window`
    /// and `last_end` (where the last member ends); the change spliced back.
    /// `joined_*`: the window starts at the first member, ends at the last.
    fn edit_window(
        &self,
        edits: &[DocEdit],
        first: usize,
        window: Range<usize>,
        last_end: usize,
        joined_left: bool,
        joined_right: bool,
    ) -> Option<String> {
        let lo_key = window.start;
        // Everything before the first member, the members around, and
        // everything after the last member.
        let (l, w, r) = (
            &self.work[..first],
            &self.work[window],
            &self.work[last_end..],
        );
        let mini = format!("{l}{w}{r}");
        if edits.iter().any(|e| matches!(e, DocEdit::RenameKey { .. })) {
            return None;
        }
        let result = apply_edits(self.spec.format, &mini, edits).ok()?;
        let (p, taken, put) = hunk(&mini, &result);
        let q_end = p + taken.len();
        let (ll, lw) = (l.len(), w.len());
        let q = if p >= ll && q_end <= ll + lw {
            lo_key + (p - ll)
        } else if joined_left && q_end <= ll + lw {
            p
        } else if joined_right && p >= ll {
            lo_key + (p - ll)
        } else if joined_left && joined_right {
            p
        } else if p >= ll + lw {
            last_end + (p - ll - lw)
        } else if q_end <= ll {
            p
        } else {
            return None;
        };
        if self.work.get(q..q + taken.len())? != taken {
            return None;
        }
        Some(format!(
            "{}{}{}",
            &self.work[..q],
            &result[p..p + put],
            &self.work[q + taken.len()..]
        ))
    }

    /// `edit_near` in a TOML file, whose servers are `[mcp_servers.NAME]`
    /// tables: a member runs from its header to the next header of
    /// another table. Only when the servers' tables stand together.
    fn edit_near_toml(
        &self,
        container: &[PathSeg],
        name: &str,
        edits: &[DocEdit],
    ) -> Option<String> {
        // (member, where its first header starts)
        let mut starts: Vec<(String, usize)> = vec![];
        let mut run_end = None;
        let mut offset = 0;
        for line in self.work.split_inclusive('\n') {
            let at = offset;
            offset += line.len();
            let t = line.trim_start();
            if !t.starts_with('[') {
                continue;
            }
            if run_end.is_some() {
                continue;
            }
            let path = toml_header(t)?;
            let member = (path.len() > container.len()
                && path
                    .iter()
                    .zip(container)
                    .all(|(a, b)| matches!(b, PathSeg::Key(k) if k == a)))
            .then(|| path[container.len()].clone());
            match (member, starts.is_empty()) {
                (Some(m), _) => {
                    if starts.last().is_none_or(|(l, _)| *l != m) {
                        if starts.iter().any(|(x, _)| *x == m) {
                            return None;
                        }
                        starts.push((m, at));
                    }
                }
                (None, true) => {}
                (None, false) => run_end = Some(at),
            }
        }
        let run_end = run_end.unwrap_or(self.work.len());
        // Another `[mcp_servers.…]` table after the run: not one block.
        if starts.len() < 4 || self.work[run_end..].contains("[mcp_servers") {
            return None;
        }
        let last = starts.len() - 1;
        let end_of = |i: usize| starts.get(i + 1).map(|(_, a)| *a).unwrap_or(run_end);
        let (lo, hi) = match starts.iter().position(|(m, _)| m == name) {
            Some(i) => (i.saturating_sub(1), (i + 1).min(last)),
            None => (last, last),
        };
        self.edit_window(
            edits,
            starts[0].1,
            starts[lo].1..end_of(hi),
            run_end,
            lo == 0,
            hi == last,
        )
    }

    /// Follow `edits` in `value`, as the text now has them.
    fn track(&mut self, edits: &[DocEdit]) {
        for e in edits {
            match e {
                DocEdit::Set { path, value } => set_at(&mut self.value, path, value.clone()),
                DocEdit::Remove { path } => remove_at(&mut self.value, path),
                DocEdit::RenameKey { .. } => {}
            }
        }
    }

    /// Whether the text means what the steps meant (`value`): checked once
    /// after the quick way, which then stands, or is done again safely.
    fn verify(&self) -> bool {
        if !self.touched {
            return true;
        }
        match self.parse(&self.work) {
            Ok(v) => self.same_doc(&v, &self.value),
            Err(_) => false,
        }
    }

    /// The same document, servers' entries compared as `same_entry` does.
    fn same_doc(&self, a: &Value, b: &Value) -> bool {
        let (mut a, mut b) = (a.clone(), b.clone());
        let path = self.spec.container.path();
        let (ca, cb) = (take_at(&mut a, path), take_at(&mut b, path));
        if a != b {
            return false;
        }
        match (ca, cb) {
            (Some(Value::Object(x)), Some(Value::Object(y))) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| self.same_entry(k, v, w)))
            }
            (x, y) => x == y,
        }
    }

    /// One server's entry, the same, or differing only in how its enable
    /// flag says the same (absent or `true`).
    fn same_entry(&self, server: &str, x: &Value, y: &Value) -> bool {
        if x == y {
            return true;
        }
        let d = &self.spec.dialect;
        if d.parse_entry(server, x).def != d.parse_entry(server, y).def {
            return false;
        }
        let (mut x, mut y) = (x.clone(), y.clone());
        if let EnableFlag::InEntry { key, .. } = d.enable_flag() {
            for v in [&mut x, &mut y] {
                if let Some(m) = v.as_object_mut() {
                    m.remove(key);
                }
            }
        }
        x == y
    }

    /// Follow a change at `p` (in `work`) that took out `taken` bytes and
    /// put in `put`: the container's end moves. The splices do not: each
    /// counts in the text as it left it, and changes are always taken back
    /// newest first (`plan`), onto exactly that text.
    fn moved(&mut self, p: usize, taken: usize, put: usize) -> Result<(), EditError> {
        if !self.whole && (p < self.frame.start || p + taken > self.frame.end) {
            return Err(EditError::Unsupported {
                path: self.spec.path.clone(),
                message: "an edit reached outside the servers' container".into(),
            });
        }
        self.frame.end = self.frame.end + put - taken;
        Ok(())
    }

    /// Take in `new` as the text; a new change of `server` is recorded as a
    /// splice (`Some(keep)`: with the bytes it took out). Returns those bytes.
    fn take(
        &mut self,
        server: &str,
        new: String,
        record: Option<bool>,
    ) -> Result<String, EditError> {
        let (p, taken, put) = hunk(&self.work, &new);
        self.moved(p, taken.len(), put)?;
        if self.whole {
            self.frame = 0..new.len();
        }
        if let Some(keep) = record {
            let f = self.frame.clone();
            let b = new.as_bytes();
            let left = &b[p.saturating_sub(Splice::CONTEXT).max(f.start)..p];
            let right = &b[p + put..(p + put + Splice::CONTEXT).min(f.end)];
            self.rec.exact.push(Splice {
                server: server.to_string(),
                at: p - f.start,
                removed: keep.then(|| taken.clone()),
                put_len: put,
                put: short_hash(&b[p..p + put]),
                left: short_hash(left),
                right: short_hash(right),
                whole: self.whole,
                created_file: self.created_file && self.work.is_empty() && p == 0,
            });
        }
        if new != self.work {
            self.touched = true;
            self.work = new;
        }
        Ok(taken)
    }

    /// The text with `s` taken back, if the bytes it left are still there.
    fn spliced(&self, s: &Splice, removed: Option<&str>) -> Option<String> {
        if s.whole != self.whole {
            return None;
        }
        let removed = s.removed.as_deref().or(removed)?;
        let f = &self.frame;
        let at = f.start.checked_add(s.at)?;
        let end = at.checked_add(s.put_len)?;
        if end > f.end || !self.work.is_char_boundary(at) || !self.work.is_char_boundary(end) {
            return None;
        }
        let b = self.work.as_bytes();
        let left = &b[at.saturating_sub(Splice::CONTEXT).max(f.start)..at];
        let right = &b[end..(end + Splice::CONTEXT).min(f.end)];
        if short_hash(&b[at..end]) != s.put
            || short_hash(left) != s.left
            || short_hash(right) != s.right
        {
            return None;
        }
        Some(format!(
            "{}{removed}{}",
            &self.work[..at],
            &self.work[end..]
        ))
    }

    /// Whether `a` and `b` mean the same: the same document apart from
    /// `server`'s entry, and that entry the same (or differing only in its
    /// enable flag, with the same meaning).
    fn same_meaning(&self, a: &str, b: &str, server: &str) -> bool {
        let (Ok(mut a), Ok(mut b)) = (self.parse(a), self.parse(b)) else {
            return false;
        };
        let (ea, eb) = (
            take_entry(&self.spec, &mut a, server),
            take_entry(&self.spec, &mut b, server),
        );
        if a != b {
            return false;
        }
        match (ea, eb) {
            (None, None) => true,
            (Some(x), Some(y)) => self.same_entry(server, &x, &y),
            _ => false,
        }
    }

    /// Take back `server`'s change: by its splice when the bytes around are
    /// as it left them and the result means what `edits` (the writer's way
    /// of taking it back) would; by `edits` otherwise. Returns the bytes
    /// taken out.
    fn take_back(
        &mut self,
        server: &str,
        edits: &[DocEdit],
        removed: Option<&str>,
    ) -> Result<String, EditError> {
        let splice = self
            .rec
            .exact
            .iter()
            .rposition(|s| s.server == server)
            .map(|i| self.rec.exact.remove(i));
        let exact = splice.as_ref().and_then(|s| self.spliced(s, removed));
        if !self.safe {
            // Checked once the file is done (`verify`).
            let new = match exact {
                Some(e) => {
                    if splice.as_ref().is_some_and(|s| s.created_file) {
                        self.delete_if_empty = true;
                    }
                    e
                }
                None => self.edit_at(server, edits)?,
            };
            self.track(edits);
            return self.take(server, new, None);
        }
        let by_meaning = self.edit(edits)?;
        self.track(edits);
        let new = match exact {
            Some(e) if e == by_meaning || self.same_meaning(&e, &by_meaning, server) => {
                if splice.as_ref().is_some_and(|s| s.created_file) {
                    self.delete_if_empty = true;
                }
                e
            }
            _ => by_meaning,
        };
        self.take(server, new, None)
    }

    /// A change: new (recorded, with the bytes it took out), or taken back
    /// (`undo`; `removed`: a parked entry's bytes).
    fn change(
        &mut self,
        server: &str,
        edits: &[DocEdit],
        undo: bool,
        removed: Option<&str>,
    ) -> Result<(), EditError> {
        if undo {
            self.take_back(server, edits, removed)?;
        } else {
            let new = self.edit_at(server, edits)?;
            self.track(edits);
            self.take(server, new, Some(true))?;
        }
        Ok(())
    }

    /// Do one step in memory.
    fn run(&mut self, discovery: &Discovery, st: &Step) -> Result<(), EditError> {
        let n = st.server.as_str();
        let (path, existing) = entry_path(&self.spec, &self.value, n);
        match (&st.kind, switch_of(&self.spec)) {
            // Switched through the writer once the file is written.
            (Kind::Enable | Kind::Disable, Switch::Elsewhere) => {}
            (Kind::Enable, Switch::InEntry) => {
                let edits = in_entry_enable(&self.spec, &path, true, existing.as_ref());
                self.change(n, &edits, st.undo, None)?;
            }
            (Kind::Disable, Switch::InEntry) => {
                let edits = in_entry_enable(&self.spec, &path, false, existing.as_ref());
                self.change(n, &edits, st.undo, None)?;
            }
            (Kind::Enable, Switch::Park) => {
                let Some(i) = self.parked_now.iter().position(|p| p.name == n) else {
                    self.notes.push(format!(
                        "\"{n}\" is no longer parked by Switchboard for {}; left as it is",
                        self.spec.client.display_name()
                    ));
                    self.forget(n);
                    return Ok(());
                };
                let p = self.parked_now.remove(i);
                let edits = [DocEdit::Set {
                    path,
                    value: p.entry.clone(),
                }];
                self.change(n, &edits, st.undo, p.text.as_deref())?;
            }
            (Kind::Disable, Switch::Park) => {
                let Some(entry) = existing else {
                    self.forget(n);
                    return Ok(());
                };
                let edits = [DocEdit::Remove { path }];
                let text = match st.undo {
                    true => self.take_back(n, &edits, None)?,
                    false => {
                        let new = self.edit_at(n, &edits)?;
                        self.track(&edits);
                        self.take(n, new, Some(false))?
                    }
                };
                self.parked_now.push(ParkedEntry {
                    source: self.spec.id.clone(),
                    name: n.to_string(),
                    entry,
                    text: Some(text),
                });
            }
            (Kind::Add(def), _) => {
                let entry =
                    self.spec.dialect.to_entry(def).map_err(|u| {
                        EditError::Invalid(u.message(self.spec.client.display_name()))
                    })?;
                let edits = [DocEdit::Set {
                    path,
                    value: Value::Object(entry),
                }];
                self.change(n, &edits, false, None)?;
            }
            (Kind::Remove, _) => {
                if existing.is_none() {
                    self.forget(n);
                    return Ok(());
                }
                // Its bytes as the profile wrote them, or (when they moved)
                // a definition as the one it was copied from.
                let as_written = self
                    .rec
                    .exact
                    .iter()
                    .rfind(|s| s.server == n)
                    .is_some_and(|s| self.spliced(s, None).is_some());
                if !as_written && !self.still_as_added(discovery, n, existing.as_ref()) {
                    self.notes.push(format!(
                        "\"{n}\" changed in {} since a profile added it; it stays there",
                        self.spec.path.display()
                    ));
                    self.forget(n);
                    return Ok(());
                }
                self.take_back(n, &[DocEdit::Remove { path }], None)?;
            }
        }
        let state = match &st.kind {
            Kind::Enable | Kind::Add(_) => State::On,
            Kind::Disable => State::Off,
            Kind::Remove => State::Absent,
        };
        self.set_state(n, state);
        if st.undo {
            self.forget(n);
        } else {
            let r = &mut self.rec;
            match &st.kind {
                Kind::Enable => r.enabled.push(n.to_string()),
                Kind::Disable => r.disabled.push(n.to_string()),
                Kind::Add(_) => r.added.push(n.to_string()),
                Kind::Remove => {}
            }
        }
        Ok(())
    }

    /// Drop `server` from what profiles owe the file.
    fn forget(&mut self, server: &str) {
        let r = &mut self.rec;
        for l in [&mut r.disabled, &mut r.enabled, &mut r.added] {
            l.retain(|n| n != server);
        }
        r.exact.retain(|s| s.server != server);
    }

    /// Whether the entry a profile added is still what it added: as a
    /// definition of that name elsewhere has it (the one that was copied).
    fn still_as_added(&self, discovery: &Discovery, name: &str, entry: Option<&Value>) -> bool {
        let Some(entry) = entry else { return false };
        let d = &self.spec.dialect;
        let here = d.parse_entry(name, entry).def;
        discovery.server(name).is_some_and(|s| {
            s.definitions
                .iter()
                .filter(|x| x.source != self.spec.id)
                .any(|x| {
                    ServerDef {
                        enabled: true,
                        ..d.storable(&x.def)
                    } == here
                })
        })
    }

    /// Entries to park before the file is written: (entry, newly parked;
    /// else a parked entry whose bytes changed).
    fn parks(&self) -> Vec<(ParkedEntry, bool)> {
        self.parked_now
            .iter()
            .filter_map(
                |p| match self.parked_before.iter().find(|b| b.name == p.name) {
                    None => Some((p.clone(), true)),
                    Some(b) if b != p => Some((p.clone(), false)),
                    Some(_) => None,
                },
            )
            .collect()
    }

    /// Parked entries that are back in the file.
    fn unparks(&self) -> Vec<String> {
        self.parked_before
            .iter()
            .filter(|b| !self.parked_now.iter().any(|p| p.name == b.name))
            .map(|b| b.name.clone())
            .collect()
    }

    /// The whole file as it will be written.
    fn text(&self) -> String {
        let body = match (&self.skeleton, &self.read) {
            (Some((kept, after)), Some(read)) => format!(
                "{}{}{}",
                &read[..kept.start],
                &self.work[self.frame.start..self.work.len() - after],
                &read[kept.end..]
            ),
            _ => self.work.clone(),
        };
        match self.bom {
            true => format!("\u{feff}{body}"),
            false => body,
        }
    }

    /// Write the file (once), checked against what was read.
    fn write(&self) -> Result<(), EditError> {
        if !self.touched {
            return Ok(());
        }
        let path = &self.spec.path;
        let expected = match self.hash {
            Some(h) => Expected::Hash(h),
            None => Expected::Absent,
        };
        let text = self.text();
        if self.delete_if_empty && text.trim().is_empty() {
            if let Some(h) = self.hash {
                remove_checked(path, Expected::Hash(h))?;
            }
            return Ok(());
        }
        let read = match (&self.read, self.bom) {
            (Some(r), true) => format!("\u{feff}{r}"),
            (Some(r), false) => r.clone(),
            (None, _) => String::new(),
        };
        if self.read.is_some() && text == read {
            return Ok(());
        }
        write_over(path, text.into_bytes(), expected, read.as_bytes(), false)?;
        Ok(())
    }

    /// Switches kept in another file, through the writer (those that end
    /// up other than they were); one that fails is said in the notes and
    /// not recorded.
    fn switch_elsewhere(&mut self, host: &Host, settings: &mut Settings) {
        if switch_of(&self.spec) != Switch::Elsewhere {
            return;
        }
        let changed: Vec<(String, bool)> = self
            .now
            .iter()
            .filter_map(|(n, s)| {
                let was = self.before.iter().find(|(b, _)| b == n).map(|(_, s)| *s);
                match (was, s) {
                    (Some(State::On), State::Off) => Some((n.clone(), false)),
                    (Some(State::Off), State::On) => Some((n.clone(), true)),
                    _ => None,
                }
            })
            .collect();
        for (name, on) in changed {
            let edit = ServerEdit::SetEnabled {
                name: name.clone(),
                enabled: on,
            };
            if let Err(e) = Writer::new(host, settings).apply(&self.spec, edit, None) {
                self.notes.push(format!(
                    "\"{name}\" was not switched {}: {e}",
                    if on { "on" } else { "off" }
                ));
                self.forget(&name);
                let was = if on { State::Off } else { State::On };
                self.set_state(&name, was);
            }
        }
    }

    fn outcome(&self) -> Outcome {
        let mut o = Outcome {
            source: self.spec.id.clone(),
            path: self.spec.path.clone(),
            client: self.spec.client,
            changes: self.rec.clone(),
            enabled: vec![],
            disabled: vec![],
            added: vec![],
            removed: vec![],
            notes: self.notes.clone(),
        };
        for (n, now) in &self.now {
            let was = self
                .before
                .iter()
                .find(|(b, _)| b == n)
                .map(|(_, s)| *s)
                .unwrap_or(State::Absent);
            let list = match (was, now) {
                (State::Off, State::On) => &mut o.enabled,
                (State::On, State::Off) => &mut o.disabled,
                (State::Absent, State::On | State::Off) => &mut o.added,
                (State::On | State::Off, State::Absent) => &mut o.removed,
                _ => continue,
            };
            list.push(n.clone());
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_for(
        client: Client,
        format: Format,
        key: &str,
        dialect: crate::sources::Dialect,
    ) -> SourceSpec {
        SourceSpec {
            id: "t".into(),
            client,
            level: Level::User,
            path: PathBuf::from("/nonexistent/t"),
            format,
            read_only: false,
            project: None,
            container: Container::Map(vec![PathSeg::Key(key.into())]),
            dialect,
        }
    }

    fn session(spec: SourceSpec, text: &str) -> Session {
        let mut s = Session {
            read: Some(text.to_string()),
            frame: 0..text.len(),
            work: text.to_string(),
            ..Session::untouched(spec, FileChanges::default())
        };
        if s.spec.format != Format::Toml {
            let container = s.spec.container.path().to_vec();
            let refs: Vec<&[PathSeg]> = vec![container.as_slice()];
            let found = scan::locate(&s.work, s.spec.format == Format::Jsonc, &refs).unwrap();
            s.frame = found[0].clone().unwrap().value;
            s.whole = false;
        }
        s.value = s.parse(&s.work).unwrap();
        s
    }

    /// The quick edit on the members around an entry gives the very text
    /// the whole-document edit gives, for every kind of step on every
    /// member (first, middle, last) and for an entry added at the end.
    #[test]
    fn edits_near_an_entry_equal_edits_of_the_whole_document() {
        let json = "{\n  \"other\": 1,\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n    \"b\": {\n      \"command\": \"y\",\n      \"args\": [\"1\"]\n    },\n    \"c\": { \"url\": \"https://c.example/mcp\" },\n    \"d\": {\"command\": \"z\", \"enabled\": false},\n    \"e\": {\"command\": \"w\"}\n  },\n  \"after\": true\n}\n";
        let jsonc = "{\n\t// servers\n\t\"servers\": {\n\t\t// first\n\t\t\"a\": { \"type\": \"stdio\", \"command\": \"x\" },\n\t\t\"b\": { \"type\": \"stdio\", \"command\": \"y\" }, // trailing\n\t\t\"c\": { \"type\": \"stdio\", \"command\": \"z\" },\n\t\t\"d\": { \"type\": \"stdio\", \"command\": \"v\" },\n\t},\n\t\"inputs\": []\n}\n";
        let pretty = {
            let servers: serde_json::Map<String, Value> = (0..6)
                .map(|i| {
                    (
                        format!("srv-{i:02}"),
                        serde_json::json!({"type": "stdio", "command": "npx", "args": ["-y", format!("p{i}")], "env": {"T": format!("t{i}")}}),
                    )
                })
                .collect();
            let mut t =
                serde_json::to_string_pretty(&serde_json::json!({"servers": servers})).unwrap();
            t.push('\n');
            t
        };
        let toml = "# Codex\nmodel = \"gpt-5\"\n\n[mcp_servers.a]\ncommand = \"x\"\n\n# second\n[mcp_servers.b] # b\ncommand = \"y\"\nargs = [\n  \"1\",\n]\nenabled = true\n\n[mcp_servers.\"c.d\"]\nurl = \"https://c.example/mcp\"\n\n[mcp_servers.e]\ncommand = \"z\"\nenabled = false\n[mcp_servers.e.env]\nK = \"v\"\n\n[mcp_servers.f]\ncommand = \"w\"\n\n# fast\n[profiles.fast]\nmodel = \"mini\"\n";
        let cases = [
            (
                spec_for(
                    Client::Codex,
                    Format::Toml,
                    "mcp_servers",
                    crate::sources::Dialect::Codex,
                ),
                toml,
            ),
            (
                spec_for(
                    Client::Vscode,
                    Format::Jsonc,
                    "servers",
                    crate::sources::Dialect::Vscode,
                ),
                pretty.as_str(),
            ),
            (
                spec_for(
                    Client::Cursor,
                    Format::Json,
                    "mcpServers",
                    crate::sources::Dialect::Standard,
                ),
                json,
            ),
            (
                spec_for(
                    Client::Zed,
                    Format::Json,
                    "mcpServers",
                    crate::sources::Dialect::Zed,
                ),
                json,
            ),
            (
                spec_for(
                    Client::Vscode,
                    Format::Jsonc,
                    "servers",
                    crate::sources::Dialect::Vscode,
                ),
                jsonc,
            ),
        ];
        let mut quick = 0;
        for (spec, text) in cases {
            let s = session(spec.clone(), text);
            let names: Vec<String> = value_at_path(&s.value, spec.container.path())
                .and_then(Value::as_object)
                .unwrap()
                .keys()
                .cloned()
                .collect();
            let mut all: Vec<(String, Vec<DocEdit>)> = vec![];
            for n in &names {
                let (path, existing) = entry_path(&spec, &s.value, n);
                all.push((n.clone(), vec![DocEdit::Remove { path: path.clone() }]));
                all.push((
                    n.clone(),
                    in_entry_enable(&spec, &path, false, existing.as_ref()),
                ));
                all.push((
                    n.clone(),
                    in_entry_enable(&spec, &path, true, existing.as_ref()),
                ));
            }
            let (path, _) = entry_path(&spec, &s.value, "new");
            all.push((
                "new".into(),
                vec![DocEdit::Set {
                    path,
                    value: serde_json::json!({"command": "n", "args": ["a", "b"]}),
                }],
            ));
            for (n, edits) in all {
                if edits.is_empty() {
                    continue;
                }
                let whole = s.edit(&edits).unwrap();
                if let Some(near) = s.edit_near(&n, &edits) {
                    quick += 1;
                    assert_eq!(near, whole, "{n}: {edits:?}");
                }
            }
        }
        assert!(quick >= 40, "the quick way was taken ({quick} times)");
    }
}
