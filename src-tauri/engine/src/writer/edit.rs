//! Server-level edits: add, update, remove, enable, disable,
//! rename, copy or move between sources. Each edit becomes format-level
//! `DocEdit`s on the file the server lives in, written atomically and only
//! if the file still has the bytes the caller last saw.

use crate::error_code::ErrorCode;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::config::validate::{validate_def, validate_name};
use crate::config::{Field, ServerDef, ServerPatch, Transport};
use crate::discovery::{entries, gemini_enablement_path, value_at};
use crate::host::Host;
use crate::settings::{ParkedEntry, Settings, SettingsError};
use crate::sources::dialect::{EnableFlag, EntryEdit, Unstorable};
use crate::sources::read::parse_parts_around;
use crate::sources::{Client, Container, Level, SourceSpec};
use crate::writer::atomic::{write_over, WriteError};
use crate::writer::doc::DocError;
use crate::writer::doc::{apply_edits_around, Around};
use crate::writer::history::{Label, Recording};
use crate::writer::summary;
use crate::writer::{content_hash, ContentHash, DocEdit, Expected, Format, PathSeg};

#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// Already phrased for users: starts with `Invalid server config: `.
    #[error("{0}")]
    Invalid(String),
    #[error("Server \"{name}\" already exists in {}", path.display())]
    AlreadyExists { name: String, path: PathBuf },
    #[error("Server \"{name}\" was not found in {}", path.display())]
    NotFound { name: String, path: PathBuf },
    #[error("{} is managed by your administrator and is read-only", path.display())]
    ReadOnly { path: PathBuf },
    #[error("cannot edit {}: {message}", path.display())]
    Unsupported { path: PathBuf, message: String },
    #[error("cannot edit {}: it does not parse ({message}); fix the file first", path.display())]
    Unparsable { path: PathBuf, message: String },
    #[error("{}", write_message(.0))]
    Write(#[from] WriteError),
    #[error("unknown source \"{0}\"")]
    UnknownSource(String),
    /// A profile change that does not apply (unknown profile, name taken, …).
    #[error(transparent)]
    Profile(#[from] crate::profile::ProfileError),
}

impl EditError {
    /// Stable code for the UI (`{code, message}`).
    pub fn code(&self) -> ErrorCode {
        match self {
            EditError::Invalid(_) => ErrorCode::Invalid,
            EditError::AlreadyExists { .. } => ErrorCode::AlreadyExists,
            EditError::NotFound { .. } => ErrorCode::NotFound,
            EditError::ReadOnly { .. } => ErrorCode::ReadOnly,
            EditError::Unsupported { .. } => ErrorCode::Unsupported,
            EditError::Unparsable { .. } => ErrorCode::Unparsable,
            EditError::Write(WriteError::Conflict { .. }) => ErrorCode::Conflict,
            EditError::Write(WriteError::ReadOnly { .. }) => ErrorCode::ReadOnly,
            EditError::Write(_) => ErrorCode::Io,
            EditError::UnknownSource(_) => ErrorCode::UnknownSource,
            EditError::Profile(crate::profile::ProfileError::Unknown { .. }) => ErrorCode::NotFound,
            EditError::Profile(crate::profile::ProfileError::Exists(_)) => ErrorCode::AlreadyExists,
            EditError::Profile(_) => ErrorCode::Invalid,
        }
    }
}

pub type Result<T> = std::result::Result<T, EditError>;

/// Switchboard's own settings: a file that does not parse is the user's to
/// fix, and stays as it is.
impl From<SettingsError> for EditError {
    fn from(e: SettingsError) -> Self {
        match e {
            SettingsError::Broken { path, message, .. } => EditError::Unparsable {
                path,
                message: format!(
                    "{message}; Switchboard leaves it as it is and never replaces it with defaults"
                ),
            },
            SettingsError::Write(w) => EditError::Write(w),
            SettingsError::Profile(p) => EditError::Profile(p),
        }
    }
}

/// A conflict is said the way the user lived it: they opened the server,
/// someone else saved the file, and their edit did not happen.
fn write_message(e: &WriteError) -> String {
    match e {
        WriteError::Conflict { path } => format!(
            "{} changed since you opened it; your edit was not saved",
            path.display()
        ),
        other => other.to_string(),
    }
}

fn unstorable(spec: &SourceSpec) -> impl Fn(Unstorable) -> EditError + '_ {
    move |u| EditError::Invalid(u.message(spec.client.display_name()))
}

/// Entry-relative edits as document edits under `entry`.
fn doc_edits(entry: &[PathSeg], edits: Vec<EntryEdit>) -> Vec<DocEdit> {
    let at = |rel: Vec<String>| {
        entry
            .iter()
            .cloned()
            .chain(rel.into_iter().map(PathSeg::Key))
            .collect::<Vec<_>>()
    };
    edits
        .into_iter()
        .map(|e| match e {
            EntryEdit::Set(p, value) => DocEdit::Set { path: at(p), value },
            EntryEdit::Remove(p) => DocEdit::Remove { path: at(p) },
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
pub enum ServerEdit {
    Add(ServerDef),
    /// Make `name` read as `def` (a different `def.name` renames it): the
    /// fields that differ from what the file holds now are written, every
    /// other key stays. For a form, `Patch` is better: it changes only what
    /// the user changed, even where the file changed meanwhile.
    Update {
        name: String,
        def: ServerDef,
    },
    /// Change only the patch's fields of `name`, in the client's own keys.
    Patch {
        name: String,
        patch: ServerPatch,
    },
    Remove {
        name: String,
    },
    SetEnabled {
        name: String,
        enabled: bool,
    },
    Rename {
        from: String,
        to: String,
    },
}

/// One file as read for editing.
struct Loaded {
    path: PathBuf,
    format: Format,
    text: String,
    hash: Option<ContentHash>,
    value: Value,
    /// What the read found for an edit under the container it was read for.
    around: Option<Around>,
    /// Switchboard's own file: created 0600 in a 0700 folder.
    private: bool,
}

/// Read `path` for editing; of a JSON(C) file only the values at `wanted`
/// are parsed into `value` (the rest is checked), see `parse_parts_around`. A
/// large file's hash is worked out on another thread while its text is
/// parsed (a 5 MB file: ~4 ms of SHA-256).
fn load(path: &Path, format: Format, wanted: &[&[PathSeg]]) -> Result<Loaded> {
    let text = match std::fs::read(path) {
        Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| EditError::Unparsable {
            path: path.into(),
            message: "not UTF-8 text".into(),
        })?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(WriteError::Io {
                path: path.into(),
                source: e,
            }
            .into())
        }
    };
    let parse = |text: &str| {
        parse_parts_around(
            format,
            text.strip_prefix('\u{feff}').unwrap_or(text),
            wanted,
        )
        .map(|(p, around)| (p.value, around))
        .map_err(|f| EditError::Unparsable {
            path: path.into(),
            message: f.message,
        })
    };
    let (hash, value) = match text.as_deref() {
        Some(t) if t.len() >= super::ASIDE_FROM => std::thread::scope(|aside| {
            let hash = aside.spawn(|| content_hash(t.as_bytes()));
            let value = parse(t);
            let hash = hash.join().unwrap_or_else(|_| content_hash(t.as_bytes()));
            (Some(hash), value)
        }),
        t => (
            t.map(|t| content_hash(t.as_bytes())),
            parse(t.unwrap_or("")),
        ),
    };
    let (text, (value, around)) = (text.unwrap_or_default(), value?);
    Ok(Loaded {
        path: path.into(),
        format,
        text,
        hash,
        value,
        around,
        private: false,
    })
}

impl Loaded {
    /// Apply `edits` and write, refusing if the file changed since `seen`
    /// (the caller's snapshot) or since we read it.
    fn commit(&self, edits: &[DocEdit], seen: Option<ContentHash>) -> Result<()> {
        if edits.is_empty() {
            return Ok(());
        }
        if let Some(seen) = seen {
            if self.hash != Some(seen) {
                return Err(WriteError::Conflict {
                    path: self.path.clone(),
                }
                .into());
            }
        }
        let new_text = apply_edits_around(self.format, &self.text, edits, self.around.as_ref()).map_err(|e| match e {
            DocError::Unsupported(what) => EditError::Unsupported {
                path: self.path.clone(),
                message: format!("Switchboard does not edit {what} files yet (it would lose their comments); copy the server to another source instead"),
            },
            dup @ DocError::Duplicate { .. } => EditError::Unsupported { path: self.path.clone(), message: dup.to_string() },
            other => EditError::Unparsable { path: self.path.clone(), message: other.to_string() },
        })?;
        let expected = match self.hash {
            Some(h) => Expected::Hash(h),
            None => Expected::Absent,
        };
        write_over(
            &self.path,
            new_text.into_bytes(),
            expected,
            self.text.as_bytes(),
            self.private,
        )?;
        Ok(())
    }
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// Path of `name`'s entry in `spec`, and its current value if present.
pub(crate) fn entry_path(
    spec: &SourceSpec,
    doc: &Value,
    name: &str,
) -> (Vec<PathSeg>, Option<Value>) {
    let mut p = spec.container.path().to_vec();
    match &spec.container {
        Container::Map(_) => {
            p.push(key(name));
            let v = value_at(doc, &p).cloned();
            (p, v)
        }
        Container::List(_) => {
            let list = value_at(doc, spec.container.path()).and_then(Value::as_array);
            let items = list.map(|l| l.as_slice()).unwrap_or(&[]);
            match items
                .iter()
                .position(|e| e.get("name").and_then(Value::as_str) == Some(name))
            {
                Some(i) => {
                    p.push(PathSeg::Index(i));
                    (p, Some(items[i].clone()))
                }
                None => {
                    p.push(PathSeg::Index(items.len()));
                    (p, None)
                }
            }
        }
    }
}

fn check_def(def: &ServerDef) -> Result<()> {
    validate_name(&def.name).map_err(EditError::Invalid)?;
    if let Some(e) = validate_def(def).into_iter().find(|i| i.is_error) {
        return Err(EditError::Invalid(e.message));
    }
    Ok(())
}

/// Applies server edits to sources. Holds the settings because parking
/// (disabling in a client with no off switch) writes them.
pub struct Writer<'a> {
    pub host: &'a Host,
    pub settings: &'a mut Settings,
}

impl<'a> Writer<'a> {
    pub fn new(host: &'a Host, settings: &'a mut Settings) -> Self {
        Writer { host, settings }
    }

    /// The Team source lists team gateways: remote servers, by URL. A server
    /// that runs a command (a copy, a move, an install, an edit) belongs in
    /// another source.
    fn check_team_gateway(&self, spec: &SourceSpec, edit: &ServerEdit) -> Result<()> {
        let def = match edit {
            ServerEdit::Add(def) | ServerEdit::Update { def, .. } => def.clone(),
            ServerEdit::Patch { name, patch }
                if patch.changes(Field::Command) || patch.changes(Field::Transport) =>
            {
                let file = load(&spec.path, spec.format, &[spec.container.path()])?;
                patch.apply_to(&self.current_def(spec, &file, name)?)
            }
            _ => return Ok(()),
        };
        if def.transport != Transport::Stdio {
            return Ok(());
        }
        Err(EditError::Unsupported {
            path: spec.path.clone(),
            message: format!(
                "the Team source lists team gateways only, by URL, and \"{}\" runs a command on this machine; put it in another source, such as Switchboard's own list",
                def.name
            ),
        })
    }

    /// Apply `edit` to `spec`'s file. `seen` is the content hash the caller's
    /// view was built from (from discovery); `None` checks only against
    /// changes since this call read the file.
    pub fn apply(
        &mut self,
        spec: &SourceSpec,
        edit: ServerEdit,
        seen: Option<ContentHash>,
    ) -> Result<()> {
        // Every file this edit writes becomes one history entry.
        let _recording = Recording::begin(self.host, summary::for_edit(spec, &edit));
        if spec.read_only {
            return Err(EditError::ReadOnly {
                path: spec.path.clone(),
            });
        }
        if spec.client == Client::Team {
            self.check_team_gateway(spec, &edit)?;
        }
        let file = Loaded {
            private: matches!(spec.client, Client::Switchboard | Client::Team),
            ..load(&spec.path, spec.format, &[spec.container.path()])?
        };
        let parked_idx = |s: &Settings, name: &str| {
            s.parked
                .iter()
                .position(|p| p.source == spec.id && p.name == name)
        };
        match edit {
            ServerEdit::Add(def) => {
                check_def(&def)?;
                let (path, existing) = entry_path(spec, &file.value, &def.name);
                if existing.is_some() || parked_idx(self.settings, &def.name).is_some() {
                    return Err(EditError::AlreadyExists {
                        name: def.name.clone(),
                        path: spec.path.clone(),
                    });
                }
                let entry = Value::Object(spec.dialect.to_entry(&def).map_err(unstorable(spec))?);
                if !def.enabled && spec.dialect.enable_flag() == EnableFlag::Park {
                    // Added disabled to a client without an off switch: park it directly.
                    self.settings.park(
                        self.host,
                        ParkedEntry {
                            source: spec.id.clone(),
                            name: def.name.clone(),
                            entry,
                            text: None,
                        },
                    )?;
                    return Ok(());
                }
                let mut edits = vec![DocEdit::Set {
                    path: path.clone(),
                    value: entry,
                }];
                if !def.enabled {
                    edits.extend(self.in_entry_enable(spec, &path, false, None));
                }
                file.commit(&edits, seen)?;
                if !def.enabled {
                    self.external_enable(spec, &def.name, false)?;
                }
                Ok(())
            }
            ServerEdit::Update { name, def } => {
                let current = self.current_def(spec, &file, &name)?;
                self.apply_patch(
                    spec,
                    file,
                    &name,
                    ServerPatch::between(&current, &def),
                    seen,
                )
            }
            ServerEdit::Patch { name, patch } => self.apply_patch(spec, file, &name, patch, seen),
            ServerEdit::Remove { name } => {
                if parked_idx(self.settings, &name).is_some() {
                    self.settings.unpark(self.host, &spec.id, &name)?;
                    return Ok(());
                }
                let (path, existing) = entry_path(spec, &file.value, &name);
                if existing.is_none() {
                    return Err(EditError::NotFound {
                        name,
                        path: spec.path.clone(),
                    });
                }
                file.commit(&[DocEdit::Remove { path }], seen)
            }
            ServerEdit::Rename { from, to } => {
                validate_name(&to).map_err(EditError::Invalid)?;
                let (path, existing) = entry_path(spec, &file.value, &from);
                if existing.is_none() {
                    return Err(EditError::NotFound {
                        name: from,
                        path: spec.path.clone(),
                    });
                }
                if entry_path(spec, &file.value, &to).1.is_some() {
                    return Err(EditError::AlreadyExists {
                        name: to,
                        path: spec.path.clone(),
                    });
                }
                let mut edits = vec![];
                let mut entry_at = path.clone();
                if let Container::Map(_) = spec.container {
                    edits.push(DocEdit::RenameKey {
                        path: path.clone(),
                        new_key: to.clone(),
                    });
                    entry_at.pop();
                    entry_at.push(key(&to));
                }
                if existing.as_ref().and_then(|e| e.get("name")).is_some() {
                    entry_at.push(key("name"));
                    edits.push(DocEdit::Set {
                        path: entry_at,
                        value: json!(to),
                    });
                }
                file.commit(&edits, seen)
            }
            ServerEdit::SetEnabled { name, enabled } => {
                self.set_enabled(spec, file, &name, enabled, seen)
            }
        }
    }

    /// What `name` holds in `spec` now (a parked entry counts, disabled).
    fn current_def(&self, spec: &SourceSpec, file: &Loaded, name: &str) -> Result<ServerDef> {
        if let Some(p) = self
            .settings
            .parked
            .iter()
            .find(|p| p.source == spec.id && p.name == name)
        {
            return Ok(ServerDef {
                enabled: false,
                ..spec.dialect.parse_entry(name, &p.entry).def
            });
        }
        match entry_path(spec, &file.value, name).1 {
            Some(e) => Ok(spec.dialect.parse_entry(name, &e).def),
            None => Err(EditError::NotFound {
                name: name.into(),
                path: spec.path.clone(),
            }),
        }
    }

    /// Write the patch's fields of `name`, each in the client's own key and
    /// place; every other key, comment and byte stays.
    fn apply_patch(
        &mut self,
        spec: &SourceSpec,
        file: Loaded,
        name: &str,
        patch: ServerPatch,
        seen: Option<ContentHash>,
    ) -> Result<()> {
        let current = self.current_def(spec, &file, name)?;
        let merged = patch.apply_to(&current);
        check_def(&merged)?;
        let new_name = merged.name.clone();
        let renamed = new_name != name;
        if renamed
            && (entry_path(spec, &file.value, &new_name).1.is_some()
                || self
                    .settings
                    .parked
                    .iter()
                    .any(|p| p.source == spec.id && p.name == new_name))
        {
            return Err(EditError::AlreadyExists {
                name: new_name,
                path: spec.path.clone(),
            });
        }
        let parked = self
            .settings
            .parked
            .iter()
            .position(|p| p.source == spec.id && p.name == name);
        let (mut path, existing) = entry_path(spec, &file.value, name);
        let entry = match parked {
            Some(i) => self.settings.parked[i].entry.clone(),
            None => existing.unwrap_or_default(),
        };
        let mut entry_edits = spec
            .dialect
            .patch_edits(entry.as_object(), &patch)
            .map_err(unstorable(spec))?;
        if renamed && (spec.dialect.spelling().name.is_some() || entry.get("name").is_some()) {
            entry_edits.push(EntryEdit::Set(vec!["name".into()], json!(new_name)));
        }
        let enable = patch.changes(Field::Enabled).then_some(merged.enabled);

        if parked.is_some() {
            // A parked server is edited where it is parked.
            self.settings.edit_parked(self.host, &spec.id, name, |p| {
                crate::sources::dialect::apply_entry_edits(&mut p.entry, entry_edits.clone());
                p.name = new_name.clone();
            })?;
            if enable == Some(true) {
                return self.apply(
                    spec,
                    ServerEdit::SetEnabled {
                        name: new_name,
                        enabled: true,
                    },
                    seen,
                );
            }
            return Ok(());
        }

        let mut edits = vec![];
        if renamed {
            if let Container::Map(_) = spec.container {
                edits.push(DocEdit::RenameKey {
                    path: path.clone(),
                    new_key: new_name.clone(),
                });
                path.pop();
                path.push(key(&new_name));
            }
        }
        edits.extend(doc_edits(&path, entry_edits));
        let in_entry = matches!(spec.dialect.enable_flag(), EnableFlag::InEntry { .. });
        match enable {
            Some(on) if in_entry => {
                edits.extend(self.in_entry_enable(spec, &path, on, Some(&entry)))
            }
            // Only the switch changes: it is the whole edit, checked against what the user saw.
            Some(on) if edits.is_empty() => {
                return self.set_enabled(spec, file, &new_name, on, seen)
            }
            _ => {}
        }
        file.commit(&edits, seen)?;
        match enable {
            Some(on) if !in_entry => {
                let file = load(&spec.path, spec.format, &[spec.container.path()])?;
                self.set_enabled(spec, file, &new_name, on, None)
            }
            _ => Ok(()),
        }
    }

    fn set_enabled(
        &mut self,
        spec: &SourceSpec,
        file: Loaded,
        name: &str,
        enabled: bool,
        seen: Option<ContentHash>,
    ) -> Result<()> {
        let (path, existing) = entry_path(spec, &file.value, name);
        let parked = self
            .settings
            .parked
            .iter()
            .position(|p| p.source == spec.id && p.name == name);
        if existing.is_none() && parked.is_none() {
            return Err(EditError::NotFound {
                name: name.into(),
                path: spec.path.clone(),
            });
        }
        match spec.dialect.enable_flag() {
            EnableFlag::InEntry { .. } => {
                let edits = self.in_entry_enable(spec, &path, enabled, existing.as_ref());
                file.commit(&edits, seen)
            }
            EnableFlag::GeminiEnablementFile => self.external_enable(spec, name, enabled),
            EnableFlag::Park
                if spec.client == Client::ClaudeCode
                    && spec.level == Level::Project
                    && spec.container.path() == [key("mcpServers")] =>
            {
                self.external_enable(spec, name, enabled)
            }
            EnableFlag::Park => match (enabled, parked, existing) {
                (false, None, Some(entry)) => {
                    // Park first, then remove: if the file write fails the
                    // entry is in both places, never in neither.
                    self.settings.park(
                        self.host,
                        ParkedEntry {
                            source: spec.id.clone(),
                            name: name.into(),
                            entry,
                            text: None,
                        },
                    )?;
                    if let Err(e) = file.commit(&[DocEdit::Remove { path }], seen) {
                        self.settings.unpark(self.host, &spec.id, name)?;
                        return Err(e);
                    }
                    Ok(())
                }
                (true, Some(i), None) => {
                    let entry = self.settings.parked[i].entry.clone();
                    file.commit(&[DocEdit::Set { path, value: entry }], seen)?;
                    self.settings.unpark(self.host, &spec.id, name)?;
                    Ok(())
                }
                // Already in the requested state.
                _ => Ok(()),
            },
        }
    }

    /// Edits for an enable flag that lives inside the entry.
    fn in_entry_enable(
        &self,
        spec: &SourceSpec,
        entry: &[PathSeg],
        enabled: bool,
        existing: Option<&Value>,
    ) -> Vec<DocEdit> {
        in_entry_enable(spec, entry, enabled, existing)
    }

    /// Enable flags kept outside the entry: Gemini's enablement file and
    /// `mcp.excluded`; Claude Code's per-project `.mcp.json` approval lists.
    fn external_enable(&mut self, spec: &SourceSpec, name: &str, enabled: bool) -> Result<()> {
        match spec.dialect.enable_flag() {
            EnableFlag::GeminiEnablementFile => {
                let ef = load(&gemini_enablement_path(self.host), Format::Json, &[&[]])?;
                let present = ef.value.get(name).is_some();
                let edits = match (enabled, present) {
                    (true, true) => vec![DocEdit::Remove {
                        path: vec![key(name)],
                    }],
                    (false, _) => vec![DocEdit::Set {
                        path: vec![key(name)],
                        value: json!({"enabled": false}),
                    }],
                    (true, false) => vec![],
                };
                ef.commit(&edits, None)?;
                if enabled {
                    let main = load(&spec.path, spec.format, &[&[key("mcp")]])?;
                    if let Some(Value::Array(ex)) =
                        main.value.get("mcp").and_then(|m| m.get("excluded"))
                    {
                        if let Some(i) = ex.iter().position(|v| v.as_str() == Some(name)) {
                            main.commit(
                                &[DocEdit::Remove {
                                    path: vec![key("mcp"), key("excluded"), PathSeg::Index(i)],
                                }],
                                None,
                            )?;
                        }
                    }
                }
                Ok(())
            }
            EnableFlag::Park
                if spec.client == Client::ClaudeCode && spec.level == Level::Project =>
            {
                let Some(project) = &spec.project else {
                    return Ok(());
                };
                let base = vec![key("projects"), key(&project.to_string_lossy())];
                let claude = load(&self.host.home_join(".claude.json"), Format::Json, &[&base])?;
                let list = |k: &str| -> Vec<String> {
                    let mut p = base.clone();
                    p.push(key(k));
                    value_at(&claude.value, &p)
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let (mut on, mut off) = (
                    list("enabledMcpjsonServers"),
                    list("disabledMcpjsonServers"),
                );
                on.retain(|n| n != name);
                off.retain(|n| n != name);
                if enabled {
                    on.push(name.into())
                } else {
                    off.push(name.into())
                }
                let set = |k: &str, v: Vec<String>| {
                    let mut p = base.clone();
                    p.push(key(k));
                    DocEdit::Set {
                        path: p,
                        value: json!(v),
                    }
                };
                claude.commit(
                    &[
                        set("enabledMcpjsonServers", on),
                        set("disabledMcpjsonServers", off),
                    ],
                    None,
                )
            }
            _ => Ok(()),
        }
    }

    /// Copy (or move) `name` from one source to another, written in the
    /// target client's own format. Adds first, removes second, so
    /// a failure never loses the server.
    pub fn copy_server(
        &mut self,
        from: &SourceSpec,
        to: &SourceSpec,
        name: &str,
        remove_source: bool,
    ) -> Result<()> {
        let _recording =
            Recording::begin(self.host, summary::for_copy(from, to, name, remove_source));
        // What the target client cannot store stays behind in the source.
        let def = to.dialect.storable(&read_def(self.settings, from, name)?);
        self.apply(to, ServerEdit::Add(def), None)?;
        if remove_source {
            self.apply(from, ServerEdit::Remove { name: name.into() }, None)?;
        }
        Ok(())
    }

    /// Save a new source priority order (ids, highest first).
    pub fn reorder(&mut self, ids: Vec<String>) -> Result<()> {
        let _recording = Recording::begin(self.host, Label::fixed(None, "change source priority"));
        *self.settings = Settings::update(self.host, |s| s.priority = ids.clone())?;
        Ok(())
    }
}

/// Edits that switch the enable flag inside the entry at `entry` (none for
/// a client whose switch lives elsewhere).
pub(crate) fn in_entry_enable(
    spec: &SourceSpec,
    entry: &[PathSeg],
    enabled: bool,
    existing: Option<&Value>,
) -> Vec<DocEdit> {
    let EnableFlag::InEntry { key: k, inverted } = spec.dialect.enable_flag() else {
        return vec![];
    };
    let mut p = entry.to_vec();
    p.push(key(k));
    let present = existing.and_then(|e| e.get(k)).is_some();
    if enabled && !present {
        return vec![];
    }
    if enabled && inverted {
        // `disabled: true` → drop the key rather than write `disabled: false`.
        return vec![DocEdit::Remove { path: p }];
    }
    vec![DocEdit::Set {
        path: p,
        value: Value::Bool(enabled != inverted),
    }]
}

/// The current definition of `name` in `spec` (parked entries included).
pub fn read_def(settings: &Settings, spec: &SourceSpec, name: &str) -> Result<ServerDef> {
    if let Some(p) = settings
        .parked
        .iter()
        .find(|p| p.source == spec.id && p.name == name)
    {
        let mut def = spec.dialect.parse_entry(name, &p.entry).def;
        def.enabled = false;
        return Ok(def);
    }
    let file = load(&spec.path, spec.format, &[spec.container.path()])?;
    let mut sink = vec![];
    let found = entries(spec, &file.value, &mut sink)
        .into_iter()
        .find(|e| e.name == name);
    match found {
        Some(e) => Ok(spec.dialect.parse_entry(name, e.value).def),
        None => Err(EditError::NotFound {
            name: name.into(),
            path: spec.path.clone(),
        }),
    }
}
