//! The zip part of a bundle: every entry checked from the central directory
//! before anything is written (paths that stay in their folder, plain files
//! and folders only, counts, sizes, compression ratios, duplicates), then
//! unpacked by streaming with the real bytes counted, into a temporary folder
//! renamed into place.

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use zip::read::ZipArchive;
use zip::CompressionMethod;

use super::{Bundle, BundleError, Result};

/// What a bundle may hold. The defaults suit any real extension (the
/// largest published ones are tens of MB).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_entries: usize,
    /// Bytes of all entries unpacked.
    pub max_total: u64,
    /// Bytes of one entry unpacked.
    pub max_entry: u64,
    /// Unpacked / compressed, for entries of at least `ratio_floor` bytes.
    pub max_ratio: u64,
    pub ratio_floor: u64,
    /// Bytes of `manifest.json`.
    pub max_manifest: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_entries: 10_000,
            max_total: 500 * 1024 * 1024,
            max_entry: 500 * 1024 * 1024,
            max_ratio: 100,
            ratio_floor: 1024 * 1024,
            max_manifest: 1024 * 1024,
        }
    }
}

/// One entry as the central directory describes it (path checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryInfo {
    /// The path inside the bundle, `/`-separated, without a trailing `/`.
    pub path: String,
    pub is_dir: bool,
    pub size: u64,
    pub compressed_size: u64,
    /// Whether the file is marked executable (unix mode).
    pub executable: bool,
}

/// Unpacking's progress: bytes written of the total declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnpackOptions {
    /// Replace a folder of the same version already there (otherwise it is
    /// left as it is and reused).
    pub replace: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unpacked {
    /// `<data>/bundles/<name>/<version>`, absolute when `data` was.
    pub dir: PathBuf,
    /// The same version was there already and was left alone.
    pub reused: bool,
}

pub(super) struct Checked {
    pub entries: Vec<EntryInfo>,
    pub total: u64,
    pub manifest_text: String,
}

/// A file seen only up to `len` bytes: the zip without the signature block
/// appended after it.
struct Bounded {
    inner: File,
    len: u64,
    pos: u64,
}

impl Bounded {
    fn new(mut inner: File, len: u64) -> std::io::Result<Bounded> {
        inner.seek(SeekFrom::Start(0))?;
        Ok(Bounded { inner, len, pos: 0 })
    }
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.len.saturating_sub(self.pos);
        let want = (buf.len() as u64).min(left) as usize;
        if want == 0 {
            return Ok(0);
        }
        let n = self.inner.read(&mut buf[..want])?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Bounded {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        let target = target.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        self.pos = self.inner.seek(SeekFrom::Start(target))?;
        Ok(self.pos)
    }
}

fn open_zip(file: &Path, f: &File, zip_len: u64) -> Result<ZipArchive<Bounded>> {
    let io = |e: std::io::Error| BundleError::Io {
        file: file.to_path_buf(),
        message: e.to_string(),
    };
    let clone = f.try_clone().map_err(io)?;
    ZipArchive::new(Bounded::new(clone, zip_len).map_err(io)?).map_err(|e| BundleError::NotZip {
        file: file.to_path_buf(),
        reason: e.to_string(),
    })
}

/// The entry's path checked to stay inside its folder: `/`-separated
/// components, none of them `..`, no absolute path, drive or UNC prefix, no
/// backslash (a separator on Windows) and no NUL or other control character.
pub(super) fn check_path(name: &str) -> std::result::Result<String, String> {
    if name.contains('\\') {
        return Err("its path uses a backslash, which is a folder separator on Windows".into());
    }
    if name.starts_with('/') {
        return Err("its path is absolute".into());
    }
    let b = name.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Err("its path starts with a drive letter".into());
    }
    if name.chars().any(|c| c.is_control()) {
        return Err("its path holds a control character".into());
    }
    let mut parts = vec![];
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("its path leaves the bundle's folder (\"..\")".into()),
            p if p.contains(':') => {
                return Err("its path holds ':' (a drive or stream name on Windows)".into())
            }
            p if p.ends_with('.') || p.ends_with(' ') => {
                return Err(format!(
                    "\"{p}\" ends with a dot or a space, which Windows drops"
                ))
            }
            p if windows_device(p) => return Err(format!("\"{p}\" is a device name on Windows")),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err("its path is empty".into());
    }
    Ok(parts.join("/"))
}

/// `CON`, `nul.txt`, `COM1`…: names Windows opens as devices.
fn windows_device(part: &str) -> bool {
    let stem = part
        .split('.')
        .next()
        .unwrap_or_default()
        .to_ascii_uppercase();
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || ((stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit())
}

/// A manifest's name or version as one folder name: characters outside
/// `[A-Za-z0-9._-]` become `_`, and it never starts with a dot.
pub(super) fn folder_name(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with('.') {
        out.insert(0, '_');
    }
    out.truncate(100);
    out
}

const S_IFMT: u32 = 0o170000;
const S_IFREG: u32 = 0o100000;
const S_IFDIR: u32 = 0o040000;
const S_IFLNK: u32 = 0o120000;

/// Checks every entry from the central directory and reads `manifest.json`.
pub(super) fn check(file: &Path, f: &File, zip_len: u64, limits: &Limits) -> Result<Checked> {
    let mut zip = open_zip(file, f, zip_len)?;
    let refuse = |entry: &str, reason: String| BundleError::UnsafeEntry {
        file: file.to_path_buf(),
        entry: entry.to_string(),
        reason,
    };
    let too_large = |reason: String| BundleError::TooLarge {
        file: file.to_path_buf(),
        reason,
    };
    if zip.len() > limits.max_entries {
        return Err(too_large(format!(
            "it holds {} entries, more than the {} allowed",
            zip.len(),
            limits.max_entries
        )));
    }
    let mut entries = Vec::with_capacity(zip.len());
    let mut seen = HashSet::new();
    let mut total: u64 = 0;
    let mut manifest_index = None;
    for i in 0..zip.len() {
        let e = zip.by_index_raw(i).map_err(|e| BundleError::NotZip {
            file: file.to_path_buf(),
            reason: format!("entry {i}: {e}"),
        })?;
        let name = String::from_utf8_lossy(e.name_raw()).into_owned();
        let path = check_path(&name).map_err(|r| refuse(&name, r))?;
        let mode = e.unix_mode().unwrap_or(0);
        let kind = mode & S_IFMT;
        if kind == S_IFLNK || e.is_symlink() {
            return Err(refuse(
                &name,
                "it is a symbolic link, which could point outside the bundle".into(),
            ));
        }
        if kind != 0 && kind != S_IFREG && kind != S_IFDIR {
            return Err(refuse(
                &name,
                format!("it is a special file (mode {mode:o})"),
            ));
        }
        if e.encrypted() {
            return Err(refuse(&name, "it is encrypted".into()));
        }
        let is_dir = e.is_dir() || kind == S_IFDIR;
        if !matches!(
            e.compression(),
            CompressionMethod::Stored | CompressionMethod::Deflated
        ) {
            return Err(refuse(
                &name,
                format!(
                    "it is compressed with {:?}; Switchboard reads only stored and deflated entries (repack it with `mcpb pack`)",
                    e.compression()
                ),
            ));
        }
        // Case-insensitive: on macOS and Windows `A` and `a` are one file.
        if !seen.insert(path.to_lowercase()) {
            return Err(refuse(&name, "its path appears twice in the bundle".into()));
        }
        let (size, compressed) = (e.size(), e.compressed_size());
        if size > limits.max_entry {
            return Err(too_large(format!(
                "entry \"{name}\" unpacks to {size} bytes, more than the {} allowed",
                limits.max_entry
            )));
        }
        if size >= limits.ratio_floor && size / compressed.max(1) > limits.max_ratio {
            return Err(too_large(format!(
                "entry \"{name}\" is compressed {}×, more than {}× (a zip bomb)",
                size / compressed.max(1),
                limits.max_ratio
            )));
        }
        total = total.saturating_add(size);
        if total > limits.max_total {
            return Err(too_large(format!(
                "its entries unpack to more than the {} bytes allowed",
                limits.max_total
            )));
        }
        if path == "manifest.json" && !is_dir {
            manifest_index = Some(i);
        }
        entries.push(EntryInfo {
            path,
            is_dir,
            size,
            compressed_size: compressed,
            executable: !is_dir && mode & 0o111 != 0,
        });
    }
    // A file where another entry needs a folder (`a` and `a/b`) would fail
    // halfway through unpacking: refused before anything is written.
    let files: HashSet<String> = entries
        .iter()
        .filter(|e| !e.is_dir)
        .map(|e| e.path.to_lowercase())
        .collect();
    for e in &entries {
        let lower = e.path.to_lowercase();
        let mut at = 0;
        while let Some(i) = lower[at..].find('/') {
            let parent = &lower[..at + i];
            if files.contains(parent) {
                return Err(refuse(
                    &e.path,
                    format!(
                        "its folder \"{}\" is also a file in the bundle",
                        &e.path[..at + i]
                    ),
                ));
            }
            at += i + 1;
        }
    }
    let manifest_problem = |problem: String| BundleError::Manifest {
        file: file.to_path_buf(),
        field: "(file)".into(),
        problem,
    };
    let Some(i) = manifest_index else {
        return Err(manifest_problem(
            "missing: a bundle has manifest.json at its top level".into(),
        ));
    };
    let mut bytes = vec![];
    let entry = zip
        .by_index(i)
        .map_err(|e| manifest_problem(format!("cannot be read: {e}")))?;
    entry
        .take(limits.max_manifest + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| manifest_problem(format!("cannot be read: {e}")))?;
    if bytes.len() as u64 > limits.max_manifest {
        return Err(manifest_problem(format!(
            "larger than {} bytes",
            limits.max_manifest
        )));
    }
    let manifest_text =
        String::from_utf8(bytes).map_err(|_| manifest_problem("not UTF-8 text".into()))?;
    Ok(Checked {
        entries,
        total,
        manifest_text,
    })
}

/// `.<what>-<pid>-<n>` in `dir`: unique within this process (a counter),
/// and the pid tells [`remove_stale`] whose it is.
fn unique_sibling(dir: &Path, what: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(format!(".{what}-{}-{n:x}", std::process::id()))
}

/// Removes staging folders in `data_dir` left by a process that is gone (a
/// crash while unpacking). Returns how many were removed. On systems
/// without `/proc` only this process's own leftovers are recognised.
pub fn remove_stale(data_dir: &Path) -> usize {
    let Ok(read) = std::fs::read_dir(data_dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in read.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(".mcpb-unpack-") else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let alive = if pid == std::process::id() {
            true
        } else {
            Path::new("/proc").is_dir() && Path::new("/proc").join(pid.to_string()).exists()
        };
        if !alive && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

pub(super) fn unpack(
    bundle: &Bundle,
    data_dir: &Path,
    limits: &Limits,
    options: UnpackOptions,
    progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<Unpacked> {
    let target = bundle.target_dir(data_dir);
    if target.exists() && !options.replace {
        return Ok(Unpacked {
            dir: target,
            reused: true,
        });
    }
    stage(bundle, data_dir, limits, progress)?.commit()
}

/// A bundle unpacked into a hidden folder in the data folder, not yet in
/// its place: [`Staged::commit`] moves it there; dropping it removes it.
/// The app unpacks while the user fills in the form, and only Install
/// commits, so a cancelled install leaves nothing.
#[derive(Debug)]
pub struct Staged {
    path: Option<PathBuf>,
    target: PathBuf,
    file: PathBuf,
}

impl Staged {
    /// `<data>/bundles/<name>/<version>`, where [`Staged::commit`] puts it.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Moves the unpacked folder into its place, replacing a folder of the
    /// same version already there (put aside first, and back on failure).
    pub fn commit(mut self) -> Result<Unpacked> {
        let staging_path = self.path.clone().expect("not committed yet");
        let target = self.target.clone();
        let failed = |message: String| BundleError::Unpack {
            file: self.file.clone(),
            dir: target.clone(),
            message,
        };
        let parent = target.parent().expect("target has a parent");
        std::fs::create_dir_all(parent).map_err(|e| failed(e.to_string()))?;
        let mut old = None;
        if target.exists() {
            let aside = unique_sibling(parent, "mcpb-old");
            std::fs::rename(&target, &aside).map_err(|e| failed(e.to_string()))?;
            old = Some(aside);
        }
        if let Err(e) = std::fs::rename(&staging_path, &target) {
            if let Some(aside) = &old {
                let _ = std::fs::rename(aside, &target);
            }
            return Err(failed(e.to_string()));
        }
        self.path = None;
        if let Some(aside) = old {
            let _ = std::fs::remove_dir_all(aside);
        }
        Ok(Unpacked {
            dir: target,
            reused: false,
        })
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

/// Unpacks every entry into a new hidden folder in `data_dir` (same file
/// system as the target, so the commit is a rename), counting the real
/// bytes against `limits`. On any error or cancel nothing is left.
pub(super) fn stage(
    bundle: &Bundle,
    data_dir: &Path,
    limits: &Limits,
    progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<Staged> {
    let file = bundle.file.as_path();
    let target = bundle.target_dir(data_dir);
    let failed = |message: String| BundleError::Unpack {
        file: file.to_path_buf(),
        dir: target.clone(),
        message,
    };
    // The staging folder sits in `data_dir` itself, so the rename stays on
    // one file system and a refused bundle leaves no `bundles/` folder.
    std::fs::create_dir_all(data_dir).map_err(|e| failed(e.to_string()))?;
    let staging_path = unique_sibling(data_dir, "mcpb-unpack");
    std::fs::create_dir(&staging_path).map_err(|e| failed(e.to_string()))?;
    let staging = Staged {
        path: Some(staging_path.clone()),
        target: target.clone(),
        file: file.to_path_buf(),
    };

    let f = File::open(file).map_err(|e| BundleError::Io {
        file: file.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut zip = open_zip(file, &f, bundle.zip_len)?;
    if zip.len() != bundle.entries.len() {
        return Err(failed("the file changed since it was opened".into()));
    }
    let too_large = |reason: String| BundleError::TooLarge {
        file: file.to_path_buf(),
        reason,
    };
    let total_declared = bundle.unpacked_size;
    let mut done: u64 = 0;
    let cancelled = || BundleError::Cancelled {
        file: file.to_path_buf(),
    };
    if progress(Progress {
        done,
        total: total_declared,
    })
    .is_break()
    {
        return Err(cancelled());
    }
    let mut buf = vec![0u8; 64 * 1024];
    for (i, info) in bundle.entries.iter().enumerate() {
        let mut entry = zip.by_index(i).map_err(|e| failed(e.to_string()))?;
        // The file may have changed since `open`: the name must be the one checked.
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        if check_path(&name).ok().as_deref() != Some(info.path.as_str()) {
            return Err(failed("the file changed since it was opened".into()));
        }
        let dest = staging_path.join(&info.path);
        if info.is_dir {
            std::fs::create_dir_all(&dest).map_err(|e| failed(format!("{}: {e}", info.path)))?;
            continue;
        }
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| failed(format!("{}: {e}", info.path)))?;
        }
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&dest)
            .map_err(|e| failed(format!("{}: {e}", info.path)))?;
        let mut written: u64 = 0;
        loop {
            let n = entry
                .read(&mut buf)
                .map_err(|e| failed(format!("{}: {e}", info.path)))?;
            if n == 0 {
                break;
            }
            written += n as u64;
            done += n as u64;
            // The real bytes, not what the directory declared.
            if written > info.size {
                return Err(too_large(format!(
                    "entry \"{}\" unpacks to more than the {} bytes it declares",
                    info.path, info.size
                )));
            }
            if written > limits.max_entry || done > limits.max_total {
                return Err(too_large(format!(
                    "entry \"{}\" takes the bundle past the unpacked size allowed",
                    info.path
                )));
            }
            if written >= limits.ratio_floor
                && written / info.compressed_size.max(1) > limits.max_ratio
            {
                return Err(too_large(format!(
                    "entry \"{}\" is compressed more than {}× (a zip bomb)",
                    info.path, limits.max_ratio
                )));
            }
            out.write_all(&buf[..n])
                .map_err(|e| failed(format!("{}: {e}", info.path)))?;
            if progress(Progress {
                done,
                total: total_declared,
            })
            .is_break()
            {
                return Err(cancelled());
            }
        }
        if written != info.size {
            return Err(failed(format!(
                "{}: {written} bytes unpacked, {} declared",
                info.path, info.size
            )));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = if info.executable { 0o755 } else { 0o644 };
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(mode))
                .map_err(|e| failed(format!("{}: {e}", info.path)))?;
        }
    }

    Ok(staging)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_the_folder_are_refused() {
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "C:/x",
            "c:x",
            "a\\..\\x",
            "\\\\server\\share\\x",
            "a/b:stream",
            "a/\u{0}b",
            "server/CON",
            "nul.txt",
            "com1.js",
            "a./b",
            "a /b",
            "",
            "./",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?} should be refused");
        }
        assert_eq!(check_path("server/index.js").unwrap(), "server/index.js");
        assert_eq!(check_path("./a//b/").unwrap(), "a/b");
        assert_eq!(check_path("a/..b/c").unwrap(), "a/..b/c");
        assert_eq!(check_path("console/com10.js").unwrap(), "console/com10.js");
    }

    #[test]
    fn folder_names_are_plain() {
        assert_eq!(folder_name("hello-world"), "hello-world");
        assert_eq!(folder_name("../x"), "_.._x");
        assert_eq!(folder_name(".."), "_..");
        assert_eq!(folder_name("@scope/pkg"), "_scope_pkg");
    }
}
