//! Installing a bundle as an ordinary stdio server, one path for the app and
//! the command line:
//!
//! - [`BundleInstaller::open`] checks the file (archive, manifest,
//!   signature, compatibility) and returns what the form shows
//!   ([`BundleView`]) at once, while the bundle is unpacked in the
//!   background into a hidden folder in the data folder, with progress.
//! - [`BundleInstaller::preview`] builds the exact definition the values
//!   typed so far make (secret values masked) and says where it goes.
//! - [`BundleInstaller::install`] waits for the unpacking, moves the folder
//!   into `<data>/bundles/<name>/<version>`, keeps sensitive values in the
//!   keychain and writes the definition through the engine. An update (a
//!   newer bundle over a server installed from an older one) then removes
//!   the old version's folder and keychain items nothing uses any more.
//! - [`BundleInstaller::cancel`] (or dropping the installer) removes the
//!   hidden folder: a bundle the user did not install leaves nothing.
//!
//! [`Engine::remove_server`] removes a server and, for one installed from a
//! bundle, its folder and keychain items when nothing else uses them.
//! Nothing here starts a server.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::config::{field_defaults, server_def, ConfigValues, Places};
use super::installed::{bundle_dir, leftovers, Leftovers};
use super::manifest::{check_compatibility, this_platform, ConfigType, Manifest};
use super::{archive, Bundle, BundleError, Limits, SignatureStatus, Staged, TrustRoots};
use crate::auth::vault::Vault;
use crate::config::ServerDef;
use crate::discovery::Discovery;
use crate::engine::Engine;
use crate::registry::apply::{slot, InstallFailure, InstallReport, Prepared};
use crate::writer::edit::{EditError, ServerEdit};

/// Bundles open at once (forms on screen); opening one more closes the oldest.
const MAX_OPEN: usize = 8;
/// Progress is reported at most this often (and when unpacking ends).
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

#[derive(Debug, thiserror::Error)]
pub enum BundleInstallError {
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error(transparent)]
    Install(#[from] InstallFailure),
    #[error("{file}: cannot run on this machine: {problems}; nothing was unpacked or written (install what it needs, or install it anyway)")]
    Incompatible { file: PathBuf, problems: String },
    #[error("this bundle is no longer open (it was installed or closed): open the file again")]
    NotOpen,
    #[error("{0}")]
    Unpack(String),
}

impl From<EditError> for BundleInstallError {
    fn from(e: EditError) -> Self {
        BundleInstallError::Install(e.into())
    }
}

/// One `user_config` setting as the form shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BundleField {
    pub key: String,
    pub kind: ConfigType,
    pub title: String,
    pub description: String,
    pub required: bool,
    /// The default, `${HOME}`-style variables resolved (several for `multiple`).
    pub defaults: Vec<String>,
    /// Kept in the keychain (Switchboard's own file) and never shown.
    pub sensitive: bool,
    pub multiple: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max: Option<f64>,
}

/// A server already installed from a bundle of the same name: updating it
/// replaces it, with its settings filled in.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct InstalledCopy {
    pub server: String,
    /// Source id.
    pub source: String,
    pub version: String,
    /// Its settings as they are now, by key (sensitive ones are not given).
    #[cfg_attr(feature = "ts", ts(type = "Record<string, string[]>"))]
    pub values: ConfigValues,
    /// Settings with a value kept as it is when the field is left empty
    /// (sensitive ones: in the keychain or in the client's file).
    pub kept: Vec<String>,
}

/// What the install form shows about an opened bundle.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BundleView {
    /// Names this opened bundle in preview, install, cancel and progress.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub id: u64,
    pub file: PathBuf,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub display_name: Option<String>,
    pub version: String,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub author: Option<String>,
    pub signature: SignatureStatus,
    /// The signature in a sentence (`signed by X (trusted)`, `unsigned`).
    pub signature_text: String,
    pub compatible: bool,
    /// Why it may not run here (platform, runtimes).
    pub problems: Vec<String>,
    /// Runtimes found (`node 22.3.0`).
    pub found: Vec<String>,
    pub fields: Vec<BundleField>,
    pub files: usize,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub unpacked_size: u64,
    /// Where it will be unpacked.
    pub unpack_dir: PathBuf,
    pub installed: Vec<InstalledCopy>,
}

/// Unpacking's state, reported while the form is open.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BundleProgress {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub id: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub done: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub total: u64,
    pub state: UnpackState,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum UnpackState {
    Unpacking,
    Ready,
    Failed,
}

/// What the form sends to preview or install.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleInstallRequest {
    pub id: u64,
    /// The name in Switchboard; default: the bundle's.
    #[serde(default)]
    pub name: Option<String>,
    /// Source id to write to (`switchboard`: Switchboard's own file).
    pub target: String,
    /// Values by `user_config` key; an empty list leaves the default (or,
    /// for an update, the value the server has now).
    #[serde(default)]
    pub values: HashMap<String, Vec<String>>,
    /// Replace a server of the same name in the target (an update).
    #[serde(default)]
    pub replace: bool,
    /// Install even though the compatibility check found problems.
    #[serde(default)]
    pub skip_runtime_check: bool,
}

impl std::fmt::Debug for BundleInstallRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BundleInstallRequest")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("target", &self.target)
            .field("values", &self.values.keys().collect::<Vec<_>>())
            .field("replace", &self.replace)
            .finish_non_exhaustive()
    }
}

/// The definition a request makes, secret values masked, and where it goes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BundlePreview {
    pub def: ServerDef,
    pub report: InstallReport,
    pub unpack_dir: PathBuf,
    /// Required settings without a value yet: shown as `<KEY>` in `def`.
    pub missing: Vec<String>,
}

/// What removing a server (or replacing an older bundle) cleaned up.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CleanedUp {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub removed_dir: Option<PathBuf>,
    pub removed_secrets: Vec<String>,
    /// What could not be removed, each in a sentence saying what to do.
    pub problems: Vec<String>,
}

/// What an install did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BundleInstalled {
    pub report: InstallReport,
    /// The definition as written, secret values given as text masked.
    pub def: ServerDef,
    pub dir: PathBuf,
    /// An update: the older version's folder and secrets no longer used.
    pub cleaned: CleanedUp,
}

type OnProgress = Arc<dyn Fn(BundleProgress) + Send + Sync>;

struct Opened {
    bundle: Bundle,
    compatible: bool,
    problems: Vec<String>,
    cancel: Arc<AtomicBool>,
    progress: tokio::sync::watch::Receiver<BundleProgress>,
    staged: Arc<Mutex<Option<Staged>>>,
}

/// The bundles open in install forms. Cheap to share (`Arc` inside).
#[derive(Clone)]
pub struct BundleInstaller {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Arc<Engine>,
    limits: Limits,
    roots: OnceLock<TrustRoots>,
    next: AtomicU64,
    open: Mutex<Vec<(u64, Arc<Opened>)>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for (_, o) in self.open.lock().unwrap().drain(..) {
            o.cancel.store(true, Ordering::Relaxed);
        }
    }
}

impl BundleInstaller {
    /// Also removes staging folders a crashed process left in the data folder.
    pub fn new(engine: Arc<Engine>) -> BundleInstaller {
        archive::remove_stale(&engine.host().switchboard_data_dir());
        BundleInstaller {
            inner: Arc::new(Inner {
                engine,
                limits: Limits::default(),
                roots: OnceLock::new(),
                next: AtomicU64::new(1),
                open: Mutex::new(vec![]),
            }),
        }
    }

    /// Signatures checked against `roots` instead of the system's.
    pub fn with_roots(engine: Arc<Engine>, roots: TrustRoots) -> BundleInstaller {
        let me = BundleInstaller::new(engine);
        let _ = me.inner.roots.set(roots);
        me
    }

    /// Checks `file` and starts unpacking it in the background; `progress`
    /// hears how far unpacking is (at most every 100 ms, and at its end).
    /// Nothing is written where a client or Switchboard reads it.
    pub async fn open(
        &self,
        file: &Path,
        progress: impl Fn(BundleProgress) + Send + Sync + 'static,
    ) -> Result<BundleView, BundleInstallError> {
        let me = self.clone();
        let file = file.to_path_buf();
        let on: OnProgress = Arc::new(progress);
        tokio::task::spawn_blocking(move || me.open_blocking(&file, on))
            .await
            .map_err(|e| BundleInstallError::Unpack(e.to_string()))?
    }

    fn open_blocking(&self, file: &Path, on: OnProgress) -> Result<BundleView, BundleInstallError> {
        let inner = &self.inner;
        if !file.is_file() {
            return Err(BundleError::Io {
                file: file.to_path_buf(),
                message: "no such file; pick a .mcpb bundle".into(),
            }
            .into());
        }
        let roots = inner.roots.get_or_init(TrustRoots::system).clone();
        let bundle = Bundle::open_trusting(file, &inner.limits, &roots)?;
        let verdict = check_compatibility(&bundle.manifest);
        let id = inner.next.fetch_add(1, Ordering::Relaxed);
        let data = inner.engine.host().switchboard_data_dir();
        let total = bundle.unpacked_size;
        let first = BundleProgress {
            id,
            done: 0,
            total,
            state: UnpackState::Unpacking,
            error: None,
        };
        let (tx, rx) = tokio::sync::watch::channel(first);
        let opened = Arc::new(Opened {
            bundle,
            compatible: verdict.compatible,
            problems: verdict.problems.clone(),
            cancel: Arc::new(AtomicBool::new(false)),
            progress: rx,
            staged: Arc::new(Mutex::new(None)),
        });
        let view = self.view(id, &opened, &verdict.found);
        {
            let mut open = inner.open.lock().unwrap();
            if open.len() >= MAX_OPEN {
                let (_, oldest) = open.remove(0);
                oldest.cancel.store(true, Ordering::Relaxed);
            }
            open.push((id, opened.clone()));
        }
        let limits = inner.limits;
        std::thread::Builder::new()
            .name("mcpb-unpack".into())
            .spawn(move || {
                let mut last = Instant::now();
                let cancel = opened.cancel.clone();
                let result = opened.bundle.stage(&data, &limits, &mut |p| {
                    if cancel.load(Ordering::Relaxed) {
                        return ControlFlow::Break(());
                    }
                    if last.elapsed() >= PROGRESS_EVERY {
                        last = Instant::now();
                        let now = BundleProgress {
                            id,
                            done: p.done,
                            total: p.total,
                            state: UnpackState::Unpacking,
                            error: None,
                        };
                        let _ = tx.send(now.clone());
                        on(now);
                    }
                    ControlFlow::Continue(())
                });
                let end = match result {
                    Ok(staged) => {
                        *opened.staged.lock().unwrap() = Some(staged);
                        // Closed while unpacking: nothing is kept.
                        if cancel.load(Ordering::Relaxed) {
                            opened.staged.lock().unwrap().take();
                        }
                        BundleProgress {
                            id,
                            done: total,
                            total,
                            state: UnpackState::Ready,
                            error: None,
                        }
                    }
                    Err(e) => BundleProgress {
                        id,
                        done: 0,
                        total,
                        state: UnpackState::Failed,
                        error: Some(e.to_string()),
                    },
                };
                let _ = tx.send(end.clone());
                on(end);
            })
            .map_err(|e| BundleInstallError::Unpack(e.to_string()))?;
        Ok(view)
    }

    /// How far unpacking of bundle `id` is.
    pub fn progress(&self, id: u64) -> Result<BundleProgress, BundleInstallError> {
        Ok(self.get(id)?.progress.borrow().clone())
    }

    /// Closes bundle `id` without installing it: unpacking stops and its
    /// hidden folder is removed.
    pub fn cancel(&self, id: u64) {
        let mut open = self.inner.open.lock().unwrap();
        if let Some(i) = open.iter().position(|(x, _)| *x == id) {
            let (_, o) = open.remove(i);
            o.cancel.store(true, Ordering::Relaxed);
            o.staged.lock().unwrap().take();
        }
    }

    /// The definition `req` would write (secret values masked), checked as
    /// install checks it; nothing is written. Required settings not filled
    /// in yet are shown as `<KEY>` and listed in `missing`, so the form shows
    /// the command from the start.
    pub fn preview(&self, req: &BundleInstallRequest) -> Result<BundlePreview, BundleInstallError> {
        let opened = self.get(req.id)?;
        let snap = self.inner.engine.snapshot();
        let m = &opened.bundle.manifest;
        let mut req = req.clone();
        // The form shows the command even for a bundle that may not run here.
        req.skip_runtime_check = true;
        // An update keeps what the server has now for settings left empty.
        let name = req.name.clone().unwrap_or_else(|| m.name.clone());
        let kept: Vec<String> = definition(&snap, &req.target, name.trim())
            .filter(|_| req.replace)
            .and_then(|old| current_values(&old, &self.data_dir()))
            .map(|c| {
                c.kept_raw
                    .into_iter()
                    .map(|(k, _)| k)
                    .chain(c.values.into_keys())
                    .collect()
            })
            .unwrap_or_default();
        let mut missing = vec![];
        for (key, f) in &m.user_config {
            let given = req
                .values
                .get(key)
                .is_some_and(|v| v.iter().any(|x| !x.is_empty()));
            let default = f.default.as_ref().is_some_and(|d| !d.is_null());
            if f.required && !given && !default && !kept.contains(key) {
                let stand_in = match f.kind {
                    ConfigType::Number => f.min.unwrap_or(0.0).to_string(),
                    ConfigType::Boolean => "false".into(),
                    _ => format!("<{key}>"),
                };
                req.values.insert(key.clone(), vec![stand_in]);
                missing.push(key.clone());
            }
        }
        let (prepared, secrets) =
            self.prepare(&opened, &req, &snap, &mut |_| Ok(Some(MASK.to_string())))?;
        let secrets: Vec<String> = secrets
            .into_iter()
            .filter(|s| !missing.iter().any(|k| *s == format!("<{k}>")))
            .collect();
        Ok(BundlePreview {
            def: masked(&prepared.built.def, &secrets),
            report: prepared.report,
            unpack_dir: opened.bundle.target_dir(&self.data_dir()),
            missing,
        })
    }

    /// Installs bundle `id` as `req` says: waits for unpacking, moves the
    /// folder into place, keeps secrets in the keychain, writes the
    /// definition. On a failure nothing this install made is left.
    pub async fn install(
        &self,
        req: BundleInstallRequest,
    ) -> Result<BundleInstalled, BundleInstallError> {
        let opened = self.get(req.id)?;
        let engine = &self.inner.engine;
        let snap = engine.snapshot();
        let vault = engine.manager().vault().unwrap_or_else(Vault::keychain);
        // Kept values of an update: the keychain item, or the value in the file.
        let mut kept_refs: Vec<(String, String)> = vec![];
        self.prepare(&opened, &req, &snap, &mut |v| {
            kept_refs.push((v.to_string(), String::new()));
            Ok(Some(MASK.to_string()))
        })?;
        for (reference, value) in kept_refs.iter_mut() {
            *value = match keychain_ref_name(reference) {
                Some(name) => {
                    let v = vault.clone();
                    let n = name.to_string();
                    tokio::task::spawn_blocking(move || v.secret(&n))
                        .await
                        .map_err(|e| BundleInstallError::Unpack(e.to_string()))?
                        .map_err(|e| {
                            BundleInstallError::Unpack(format!(
                                "cannot read the kept value {name} from the keychain: {e}; type the value again"
                            ))
                        })?
                        .ok_or_else(|| {
                            BundleInstallError::Unpack(format!(
                                "the keychain has no {name} any more: type the value again"
                            ))
                        })?
                }
                None => reference.clone(),
            };
        }
        let mut kept = kept_refs.into_iter();
        let (prepared, secrets) = self.prepare(&opened, &req, &snap, &mut |_| {
            Ok(kept.next().map(|(_, v)| v))
        })?;
        let before = prepared
            .report
            .replaced
            .then(|| definition(&snap, &prepared.report.source, &prepared.report.name))
            .flatten();

        // The form may be filled in before unpacking ends: wait for it.
        let mut rx = opened.progress.clone();
        let end = rx
            .wait_for(|p| p.state != UnpackState::Unpacking)
            .await
            .map_err(|_| BundleInstallError::NotOpen)?
            .clone();
        if let Some(e) = end.error {
            self.cancel(req.id);
            return Err(BundleInstallError::Unpack(e));
        }
        let staged = opened
            .staged
            .lock()
            .unwrap()
            .take()
            .ok_or(BundleInstallError::NotOpen)?;
        let dir = staged.target().to_path_buf();
        let existed = dir.exists();
        tokio::task::spawn_blocking(move || staged.commit())
            .await
            .map_err(|e| BundleInstallError::Unpack(e.to_string()))??;
        self.forget(req.id);
        if let Err(e) = engine.write_prepared(&prepared).await {
            if !existed {
                let _ = std::fs::remove_dir_all(&dir);
                if let Some(parent) = dir.parent() {
                    let _ = std::fs::remove_dir(parent);
                }
            }
            return Err(e.into());
        }
        let cleaned = match before {
            Some(old) => {
                let left = leftovers(&old, &engine.snapshot(), &self.data_dir());
                clean_up(&left, &vault).await
            }
            None => CleanedUp::default(),
        };
        Ok(BundleInstalled {
            def: masked(&prepared.built.def, &secrets),
            report: prepared.report,
            dir,
            cleaned,
        })
    }

    fn data_dir(&self) -> PathBuf {
        self.inner.engine.host().switchboard_data_dir()
    }

    fn get(&self, id: u64) -> Result<Arc<Opened>, BundleInstallError> {
        self.inner
            .open
            .lock()
            .unwrap()
            .iter()
            .find(|(x, _)| *x == id)
            .map(|(_, o)| o.clone())
            .ok_or(BundleInstallError::NotOpen)
    }

    fn forget(&self, id: u64) {
        self.inner.open.lock().unwrap().retain(|(x, _)| *x != id);
    }

    fn view(&self, id: u64, o: &Opened, found: &[String]) -> BundleView {
        let m = &o.bundle.manifest;
        let places = places(&self.inner.engine);
        let data = self.data_dir();
        BundleView {
            id,
            file: o.bundle.file.clone(),
            name: m.name.clone(),
            display_name: m.display_name.clone(),
            version: m.version.clone(),
            description: m.description.clone(),
            author: m.author.as_ref().map(|a| a.name.clone()),
            signature_text: o.bundle.signature.to_string(),
            signature: o.bundle.signature.clone(),
            compatible: o.compatible,
            problems: o.problems.clone(),
            found: found.to_vec(),
            fields: m
                .user_config
                .iter()
                .map(|(key, f)| BundleField {
                    key: key.clone(),
                    kind: f.kind,
                    title: f.title.clone(),
                    description: f.description.clone(),
                    required: f.required,
                    defaults: field_defaults(f, &places),
                    sensitive: f.sensitive,
                    multiple: f.multiple,
                    min: f.min,
                    max: f.max,
                })
                .collect(),
            files: o.bundle.entries.iter().filter(|e| !e.is_dir).count(),
            unpacked_size: o.bundle.unpacked_size,
            unpack_dir: o.bundle.target_dir(&data),
            installed: installed_copies(&self.inner.engine.snapshot(), m, &data),
        }
    }

    /// Builds the install `req` asks for. A setting left empty that an
    /// update keeps asks `kept` for its value, given the value the server
    /// has now (a `${keychain:…}` reference or the text in its file).
    fn prepare(
        &self,
        o: &Opened,
        req: &BundleInstallRequest,
        snap: &Discovery,
        kept: &mut dyn FnMut(&str) -> Result<Option<String>, BundleInstallError>,
    ) -> Result<(Prepared, Vec<String>), BundleInstallError> {
        let m = &o.bundle.manifest;
        if !o.compatible && !req.skip_runtime_check {
            return Err(BundleInstallError::Incompatible {
                file: o.bundle.file.clone(),
                problems: o.problems.join("; "),
            });
        }
        let name = req
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or(&m.name);
        let slot = slot(snap, &req.target, name, req.replace)?;
        let data = self.data_dir();
        let mut values = ConfigValues::new();
        for (key, list) in &req.values {
            let list: Vec<String> = list.iter().filter(|v| !v.is_empty()).cloned().collect();
            if !list.is_empty() {
                values.insert(key.clone(), list);
            }
        }
        // An update: settings left empty keep what the server has now.
        if slot.replaced {
            if let Some(old) = definition(snap, &slot.source, &slot.name) {
                if let Some(now) = current_values(&old, &data) {
                    for (key, value) in now.kept_raw {
                        if !values.contains_key(&key) {
                            if let Some(v) = kept(&value)? {
                                values.insert(key, vec![v]);
                            }
                        }
                    }
                    for (key, list) in now.values {
                        if !values.contains_key(&key) && m.user_config.contains_key(&key) {
                            values.insert(key, list);
                        }
                    }
                }
            }
        }
        values.retain(|k, _| m.user_config.contains_key(k) || req.values.contains_key(k));
        let secrets: Vec<String> = m
            .user_config
            .iter()
            .filter(|(_, f)| f.sensitive)
            .filter_map(|(k, _)| values.get(k))
            .flatten()
            .cloned()
            .collect();
        let dir = o.bundle.target_dir(&data);
        let built = server_def(
            m,
            &slot.name,
            &dir,
            &values,
            &places(&self.inner.engine),
            &slot.secrets(),
        )
        .map_err(|e| match e {
            BundleError::Config { key, problem } => BundleError::Config {
                key: format!("{key} (of {})", o.bundle.file.display()),
                problem,
            },
            other => other,
        })?;
        Ok((slot.prepared(built), secrets))
    }
}

const MASK: &str = "••••";

fn places(engine: &Engine) -> Places {
    let mut p = Places::of(engine.host());
    p.platform = this_platform().into();
    p
}

/// The name in `${keychain:NAME}` when `text` is exactly such a reference.
fn keychain_ref_name(text: &str) -> Option<&str> {
    text.strip_prefix("${keychain:")?.strip_suffix('}')
}

/// `def` with every secret value given replaced by `••••`.
fn masked(def: &ServerDef, secrets: &[String]) -> ServerDef {
    let mut def = def.clone();
    let mask = |s: &mut String| {
        for v in secrets
            .iter()
            .filter(|v| !v.is_empty() && v.as_str() != MASK)
        {
            *s = s.replace(v.as_str(), MASK);
        }
    };
    def.args.iter_mut().for_each(mask);
    def.env.values_mut().for_each(mask);
    def
}

/// The definition of `name` in source `source`.
fn definition(snap: &Discovery, source: &str, name: &str) -> Option<ServerDef> {
    snap.servers
        .iter()
        .flat_map(|s| s.definitions.iter())
        .find(|d| d.source == source && d.def.name == name)
        .map(|d| d.def.clone())
}

struct Current {
    version: String,
    values: ConfigValues,
    /// Sensitive settings, by key, with the text the definition holds.
    kept_raw: Vec<(String, String)>,
}

/// The settings a server installed from a bundle has now, read back from
/// its definition through the manifest it was installed from: a setting
/// that is a whole argument or a whole environment value is found.
fn current_values(def: &ServerDef, data_dir: &Path) -> Option<Current> {
    let dir = bundle_dir(def, data_dir)?;
    let text = std::fs::read_to_string(dir.join("manifest.json")).ok()?;
    let manifest: Manifest = serde_json::from_str(&text).ok()?;
    let mcp = manifest.server.mcp_config.as_ref()?;
    let mut args = mcp.args.clone();
    let mut env = mcp.env.clone();
    if let Some(o) = mcp.platform_overrides.get(this_platform()) {
        args = o.args.clone().unwrap_or(args);
        env = o.env.clone().unwrap_or(env);
    }
    let whole = |t: &str| {
        t.trim()
            .strip_prefix("${user_config.")
            .and_then(|r| r.strip_suffix('}'))
            .map(String::from)
    };
    let mut found: Vec<(String, String)> = vec![];
    if args.len() == def.args.len() {
        for (t, v) in args.iter().zip(&def.args) {
            if let Some(k) = whole(t) {
                found.push((k, v.clone()));
            }
        }
    }
    for (k, t) in &env {
        if let (Some(key), Some(v)) = (whole(t), def.env.get(k)) {
            found.push((key, v.clone()));
        }
    }
    let mut values = ConfigValues::new();
    let mut kept_raw = vec![];
    for (key, v) in found {
        let sensitive = manifest.user_config.get(&key).is_some_and(|f| f.sensitive);
        if sensitive || keychain_ref_name(&v).is_some() {
            if !kept_raw.iter().any(|(k, _)| k == &key) {
                kept_raw.push((key, v));
            }
        } else if !values.contains_key(&key) {
            values.insert(key, vec![v]);
        }
    }
    Some(Current {
        version: manifest.version,
        values,
        kept_raw,
    })
}

/// Servers installed from a bundle named like `m`.
fn installed_copies(snap: &Discovery, m: &Manifest, data_dir: &Path) -> Vec<InstalledCopy> {
    let want = archive::folder_name(&m.name);
    let mut out = vec![];
    for d in snap.servers.iter().flat_map(|s| s.definitions.iter()) {
        let Some(dir) = bundle_dir(&d.def, data_dir) else {
            continue;
        };
        let named = dir
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n.to_string_lossy() == want);
        if !named {
            continue;
        }
        let Some(now) = current_values(&d.def, data_dir) else {
            continue;
        };
        out.push(InstalledCopy {
            server: d.def.name.clone(),
            source: d.source.clone(),
            version: now.version,
            values: now.values,
            kept: now.kept_raw.into_iter().map(|(k, _)| k).collect(),
        });
    }
    out
}

/// The bundle a server runs from: its name, version and folder.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BundleOrigin {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub display_name: Option<String>,
    pub version: String,
    pub dir: PathBuf,
}

/// Which bundle `def` was installed from, if any.
pub fn origin(def: &ServerDef, data_dir: &Path) -> Option<BundleOrigin> {
    let dir = bundle_dir(def, data_dir)?;
    let text = std::fs::read_to_string(dir.join("manifest.json")).ok()?;
    let m: Manifest = serde_json::from_str(&text).ok()?;
    Some(BundleOrigin {
        name: m.name,
        display_name: m.display_name,
        version: m.version,
        dir,
    })
}

/// Removes what `left` names: the unpacked folder (and its name folder once
/// empty) and the keychain items. What cannot be removed is reported.
pub async fn clean_up(left: &Leftovers, vault: &Vault) -> CleanedUp {
    let mut out = CleanedUp::default();
    if let Some(dir) = &left.dir {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => {
                if let Some(parent) = dir.parent() {
                    let _ = std::fs::remove_dir(parent);
                }
                out.removed_dir = Some(dir.clone());
            }
            Err(e) => out.problems.push(format!(
                "could not remove its unpacked bundle {}: {e}; delete the folder by hand",
                dir.display()
            )),
        }
    }
    if !left.secrets.is_empty() {
        let names = left.secrets.clone();
        let v = vault.clone();
        let results: Vec<(String, bool)> = tokio::task::spawn_blocking(move || {
            names
                .into_iter()
                .map(|n| {
                    let ok = v.remove_secret(&n).is_ok();
                    (n, ok)
                })
                .collect()
        })
        .await
        .unwrap_or_default();
        let failed: Vec<String> = results
            .iter()
            .filter(|(_, ok)| !ok)
            .map(|(n, _)| n.clone())
            .collect();
        out.removed_secrets = results
            .into_iter()
            .filter(|(_, ok)| *ok)
            .map(|(n, _)| n)
            .collect();
        if !failed.is_empty() {
            out.problems.push(format!(
                "could not remove {} from the OS keychain; remove them there by hand",
                failed.join(", ")
            ));
        }
    }
    out
}

impl Engine {
    /// Removes server `name` from `source` (checked against `content_hash`
    /// as the user saw the file); for a server installed from a bundle, its
    /// unpacked folder and keychain items go too when nothing else uses them.
    pub async fn remove_server(
        &self,
        source: &str,
        name: &str,
        content_hash: Option<&str>,
    ) -> Result<CleanedUp, EditError> {
        let removed = definition(&self.snapshot(), source, name);
        self.edit_seen(
            source,
            ServerEdit::Remove {
                name: name.to_string(),
            },
            content_hash,
        )
        .await?;
        let Some(removed) = removed else {
            return Ok(CleanedUp::default());
        };
        let data = self.host().switchboard_data_dir();
        let left = leftovers(&removed, &self.snapshot(), &data);
        if left == Leftovers::default() {
            return Ok(CleanedUp::default());
        }
        let vault = self.manager().vault().unwrap_or_else(Vault::keychain);
        Ok(clean_up(&left, &vault).await)
    }
}
