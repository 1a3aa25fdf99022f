//! `.mcpb` bundles (Claude Desktop extensions): a zip with a `manifest.json`,
//! optionally followed by a PKCS#7 signature block. This module owns reading
//! one safely — the archive's checks and atomic unpacking (`archive.rs`), the
//! manifest and the machine's compatibility (`manifest.rs`), the signature
//! (`signature.rs`), the stdio definition its `user_config` values make
//! (`config.rs`), what removing an installed one leaves unused
//! (`installed.rs`), and installing one through the engine, for the app and
//! the command line (`install.rs`). Nothing here starts the server.

mod archive;
mod config;
mod install;
mod installed;
mod manifest;
mod signature;

use std::path::{Path, PathBuf};

pub use archive::{remove_stale, EntryInfo, Limits, Progress, Staged, UnpackOptions, Unpacked};
pub use config::{field_defaults, parse_config_flags, server_def, ConfigValues, Places};
pub use install::{
    clean_up, origin, BundleField, BundleInstallError, BundleInstallRequest, BundleInstalled,
    BundleInstaller, BundleOrigin, BundlePreview, BundleProgress, BundleView, CleanedUp,
    InstalledCopy, UnpackState,
};
pub use installed::{bundle_dir, keychain_names, leftovers, Leftovers};
pub use manifest::{
    check_compatibility, this_platform, Author, Compatibility, CompatibilityVerdict, ConfigType,
    Manifest, McpConfig, PlatformOverride, Runtimes, Server, ServerType, UserConfigField,
    SUPPORTED_MANIFEST_VERSIONS,
};
pub use signature::{SignatureStatus, TrustRoots};

/// Why a bundle was refused. Every message names the bundle's file and, where
/// there is one, the entry or manifest field, and says what the user can do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BundleError {
    #[error("{file}: cannot read it: {message}")]
    Io { file: PathBuf, message: String },
    #[error("{file}: not a .mcpb bundle (not a zip archive: {reason}); check that you picked the right file")]
    NotZip { file: PathBuf, reason: String },
    #[error("{file}: entry \"{entry}\": {reason}; the bundle is refused and nothing was unpacked — ask its author for a fixed bundle")]
    UnsafeEntry {
        file: PathBuf,
        entry: String,
        reason: String,
    },
    #[error("{file}: {reason}; the bundle is refused and nothing was unpacked")]
    TooLarge { file: PathBuf, reason: String },
    #[error("{file}: its signature is invalid: {reason}; it is refused and nothing was unpacked (get the file again from where it is published)")]
    Signature { file: PathBuf, reason: String },
    #[error("{file}: manifest.json: {field}: {problem}")]
    Manifest {
        file: PathBuf,
        field: String,
        problem: String,
    },
    #[error("{file}: version {version} of \"{name}\" is already unpacked in {dir}; install it again with replace to overwrite it")]
    AlreadyUnpacked {
        file: PathBuf,
        name: String,
        version: String,
        dir: PathBuf,
    },
    #[error("{file}: could not unpack into {dir}: {message}; nothing was left behind")]
    Unpack {
        file: PathBuf,
        dir: PathBuf,
        message: String,
    },
    /// The definition would mean something else in Switchboard's file (a
    /// `${…}` it expands, a `!command`): refused rather than run differently.
    #[error("{field}: {problem}")]
    Definition { field: String, problem: String },
    #[error("{file}: unpacking was cancelled; nothing was left behind")]
    Cancelled { file: PathBuf },
    #[error("user_config.{key}: {problem}")]
    Config { key: String, problem: String },
}

pub type Result<T> = std::result::Result<T, BundleError>;

/// The status of `file`'s signature alone, without reading the zip.
pub fn signature_status(file: &Path, roots: &TrustRoots) -> Result<SignatureStatus> {
    let mut f = std::fs::File::open(file).map_err(|e| BundleError::Io {
        file: file.to_path_buf(),
        message: e.to_string(),
    })?;
    signature::read(&mut f, roots)
        .map(|(_, status)| status)
        .map_err(|e| BundleError::Io {
            file: file.to_path_buf(),
            message: e.to_string(),
        })
}

/// A bundle checked and read without writing anything: its manifest, the
/// signature's status and the entries it would unpack.
#[derive(Debug, Clone)]
pub struct Bundle {
    pub file: PathBuf,
    pub manifest: Manifest,
    /// `manifest.json` as it is in the bundle.
    pub manifest_text: String,
    pub signature: SignatureStatus,
    pub entries: Vec<EntryInfo>,
    /// Bytes the entries take once unpacked (as declared; unpacking counts
    /// the real bytes and stops past the limits).
    pub unpacked_size: u64,
    /// Length of the zip part of the file (before any signature block).
    zip_len: u64,
}

impl Bundle {
    /// Reads and checks `file`: a signature that does not match refuses it;
    /// then its signature block (stripped before the zip
    /// is read), every entry's path, type, size and compression ratio, and
    /// the manifest. Nothing is written.
    pub fn open(file: &Path, limits: &Limits) -> Result<Bundle> {
        Bundle::open_trusting(file, limits, &TrustRoots::system())
    }

    /// [`Bundle::open`] with the signer's chain checked against `roots`.
    pub fn open_trusting(file: &Path, limits: &Limits, roots: &TrustRoots) -> Result<Bundle> {
        let io = |e: std::io::Error| BundleError::Io {
            file: file.to_path_buf(),
            message: e.to_string(),
        };
        let mut f = std::fs::File::open(file).map_err(io)?;
        let (zip_len, signature) = signature::read(&mut f, roots).map_err(io)?;
        if let SignatureStatus::Invalid { reason } = &signature {
            return Err(BundleError::Signature {
                file: file.to_path_buf(),
                reason: reason.clone(),
            });
        }
        let checked = archive::check(file, &f, zip_len, limits)?;
        let manifest = manifest::parse(file, &checked.manifest_text)?;
        let entry = manifest.server.entry_point.trim_start_matches("./");
        if !entry.is_empty() && !checked.entries.iter().any(|e| !e.is_dir && e.path == entry) {
            return Err(BundleError::Manifest {
                file: file.to_path_buf(),
                field: "server.entry_point".into(),
                problem: format!("\"{entry}\" is not in the bundle"),
            });
        }
        Ok(Bundle {
            file: file.to_path_buf(),
            manifest,
            manifest_text: checked.manifest_text,
            signature,
            entries: checked.entries,
            unpacked_size: checked.total,
            zip_len,
        })
    }

    /// The folder this bundle unpacks into under `data_dir`:
    /// `<data_dir>/bundles/<name>/<version>`.
    pub fn target_dir(&self, data_dir: &Path) -> PathBuf {
        data_dir
            .join("bundles")
            .join(archive::folder_name(&self.manifest.name))
            .join(archive::folder_name(&self.manifest.version))
    }

    /// Unpacks into [`Bundle::target_dir`]: into a temporary folder beside
    /// it first, renamed into place once every entry is written and checked.
    /// On any error nothing is left. `progress` gets bytes written / total
    /// after each chunk; `ControlFlow::Break` cancels (nothing left either).
    pub fn unpack(
        &self,
        data_dir: &Path,
        limits: &Limits,
        options: UnpackOptions,
        progress: &mut dyn FnMut(Progress) -> std::ops::ControlFlow<()>,
    ) -> Result<Unpacked> {
        archive::unpack(self, data_dir, limits, options, progress)
    }

    /// Unpacks into a hidden folder in `data_dir` without putting it in
    /// place: [`Staged::commit`] does that (replacing a folder of the same
    /// version), and dropping the [`Staged`] removes it. Same checks and
    /// progress as [`Bundle::unpack`].
    pub fn stage(
        &self,
        data_dir: &Path,
        limits: &Limits,
        progress: &mut dyn FnMut(Progress) -> std::ops::ControlFlow<()>,
    ) -> Result<Staged> {
        archive::stage(self, data_dir, limits, progress)
    }
}
