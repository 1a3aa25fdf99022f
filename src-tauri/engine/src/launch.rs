//! Finding a stdio server's executable the way the user's terminal would.
//!
//! An app started from the Dock, a desktop launcher or Explorer does not get
//! the PATH the user's shell profile sets up, so `npx`, `uvx` or `bun` "are not
//! installed" although they work in a terminal. [`CommandResolver`] searches
//! the process PATH, the login shell's PATH and the places version managers
//! and installers usually put binaries, and hands the same PATH to the child
//! (so `npx` in turn finds `node`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the login shell may take to print its PATH.
pub const LOGIN_SHELL_TIMEOUT: Duration = Duration::from_secs(3);

/// Where version managers and installers put executables, relative to the
/// home folder; the newest nvm node version is added after these.
const HOME_DIRS: &[&str] = &[
    ".local/bin",
    ".cargo/bin",
    ".bun/bin",
    ".volta/bin",
    ".deno/bin",
];
const SYSTEM_DIRS: &[&str] = &["/opt/homebrew/bin", "/usr/local/bin"];
const HOME_DIRS_LAST: &[&str] = &[".npm-global/bin"];
/// The system's own folders, searched last: the PATH a desktop session, a
/// service manager or `env -i` may start Switchboard with can lack them, and
/// without a login shell to ask (no `$SHELL`, or it timed out) a server's
/// `sh -c "env …"` would then find neither `env` nor `mv`. These are the
/// folders launchd and a shell without PATH fall back to.
#[cfg(unix)]
const BASE_DIRS: &[&str] = &["/usr/bin", "/bin", "/usr/sbin", "/sbin"];
#[cfg(not(unix))]
const BASE_DIRS: &[&str] = &[];

#[derive(Debug, Clone)]
pub struct CommandResolver {
    dirs: Vec<PathBuf>,
    home: Option<PathBuf>,
}

impl CommandResolver {
    /// From this process: its PATH, `HOME`, and the login shell's PATH.
    ///
    /// The first call may block up to [`LOGIN_SHELL_TIMEOUT`] while the login
    /// shell runs (once per process); call it from a blocking context.
    pub fn from_env() -> Self {
        Self::new(
            std::env::var_os("PATH"),
            home_dir(),
            login_shell_path().map(str::to_string),
        )
    }

    /// Builds the search PATH from the given parts without spawning anything:
    /// the process PATH first, then the login shell's, then the usual extra
    /// places under `home` and the system that exist, then the system's own
    /// folders. Duplicates, empty and
    /// relative entries are dropped.
    pub fn new(
        process_path: Option<OsString>,
        home: Option<PathBuf>,
        login_shell_path: Option<String>,
    ) -> Self {
        let mut dirs: Vec<PathBuf> = vec![];
        let mut push = |dir: PathBuf| {
            // A relative entry would search whatever folder the app runs in.
            if dir.is_absolute() && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        };
        if let Some(p) = &process_path {
            std::env::split_paths(p).for_each(&mut push);
        }
        if let Some(p) = &login_shell_path {
            std::env::split_paths(p).for_each(&mut push);
        }
        let existing = |d: PathBuf| d.is_dir().then_some(d);
        if let Some(home) = &home {
            HOME_DIRS
                .iter()
                .filter_map(|d| existing(home.join(d)))
                .for_each(&mut push);
            if let Some(nvm) = newest_nvm_bin(home) {
                push(nvm);
            }
        }
        SYSTEM_DIRS
            .iter()
            .filter_map(|d| existing(PathBuf::from(d)))
            .for_each(&mut push);
        if let Some(home) = &home {
            HOME_DIRS_LAST
                .iter()
                .filter_map(|d| existing(home.join(d)))
                .for_each(&mut push);
        }
        BASE_DIRS
            .iter()
            .filter_map(|d| existing(PathBuf::from(d)))
            .for_each(&mut push);
        Self { dirs, home }
    }

    /// The folders searched, in order.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// A PATH value for the child process containing every searched folder.
    pub fn search_path(&self) -> OsString {
        // `join_paths` refuses entries containing the separator; leave those out.
        let usable = self
            .dirs
            .iter()
            .filter(|d| std::env::join_paths([d]).is_ok());
        std::env::join_paths(usable).unwrap_or_default()
    }

    /// The executable to start for `command`. A command containing a path
    /// separator is taken as is (relative to `cwd` when given); a bare name is
    /// looked up in the search PATH.
    pub fn resolve(&self, command: &str, cwd: Option<&Path>) -> Result<PathBuf, String> {
        if command.trim().is_empty() {
            return Err("command is empty".into());
        }
        if has_separator(command) {
            let path = PathBuf::from(command);
            return Ok(match cwd {
                Some(cwd) if path.is_relative() => cwd.join(path),
                _ => path,
            });
        }
        let not_found = || {
            format!(
                "command \"{command}\" was not found on PATH (searched: {})",
                self.describe_dirs()
            )
        };
        let path = self.search_path();
        if path.is_empty() {
            // An empty PATH would make `which` look in the working folder.
            return Err(not_found());
        }
        // `which` searches the folders in order (with PATHEXT on Windows) and
        // takes only files this process may execute. The folders are all
        // absolute: the working folder it asks for is never used.
        which::which_in(command, Some(path), cwd.unwrap_or(Path::new("/"))).map_err(|_| not_found())
    }

    /// The searched folders for an error message: `~` for home, at most a dozen.
    pub fn describe_dirs(&self) -> String {
        const SHOWN: usize = 12;
        if self.dirs.is_empty() {
            return "nothing, PATH is empty".into();
        }
        let mut parts: Vec<String> = self
            .dirs
            .iter()
            .take(SHOWN)
            .map(
                |d| match self.home.as_deref().and_then(|h| d.strip_prefix(h).ok()) {
                    Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
                    Some(rest) => format!("~{}{}", std::path::MAIN_SEPARATOR, rest.display()),
                    None => d.display().to_string(),
                },
            )
            .collect();
        if self.dirs.len() > SHOWN {
            parts.push(format!("and {} more", self.dirs.len() - SHOWN));
        }
        parts.join(", ")
    }
}

fn has_separator(command: &str) -> bool {
    command.contains('/') || (cfg!(windows) && command.contains('\\'))
}

fn home_dir() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var)
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `~/.nvm/versions/node/<newest>/bin`, comparing `vX.Y.Z` numerically.
fn newest_nvm_bin(home: &Path) -> Option<PathBuf> {
    let versions = home.join(".nvm/versions/node");
    std::fs::read_dir(&versions)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let version = parse_version(&name)?;
            let bin = e.path().join("bin");
            bin.is_dir().then_some((version, bin))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, bin)| bin)
}

fn parse_version(name: &str) -> Option<Vec<u64>> {
    let digits = name.strip_prefix('v').unwrap_or(name);
    digits.split('.').map(|p| p.parse().ok()).collect()
}

/// The PATH the user's login shell sets up (`$SHELL -ilc`), asked once per
/// process; `None` when there is no `$SHELL`, it fails, or it takes longer
/// than [`LOGIN_SHELL_TIMEOUT`].
pub fn login_shell_path() -> Option<&'static str> {
    static PATH: OnceLock<Option<String>> = OnceLock::new();
    PATH.get_or_init(|| {
        let shell = std::env::var_os("SHELL").filter(|s| !s.is_empty())?;
        query_login_shell(Path::new(&shell), LOGIN_SHELL_TIMEOUT)
    })
    .as_deref()
}

#[cfg(unix)]
fn query_login_shell(shell: &Path, timeout: Duration) -> Option<String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    // Markers, because profiles may print banners to stdout.
    const START: &str = "__SWITCHBOARD_PATH_START__";
    const END: &str = "__SWITCHBOARD_PATH_END__";
    let script = format!("printf '%s%s%s' '{START}' \"$PATH\" '{END}'");
    let mut cmd = Command::new(shell);
    cmd.arg("-ilc")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // A new session without a controlling terminal: an interactive shell in
    // the background would otherwise be stopped by SIGTTOU when it grabs the
    // terminal, and hang until the timeout. Its children share the group we kill.
    // SAFETY: the hook runs in the forked child before exec and only calls
    // setsid(2), which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()?;
            Ok(())
        });
    }
    let mut child = cmd.spawn().ok()?;
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let mut stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => break None,
        }
    };
    // Whatever the shell left running (or the shell itself, on timeout) would
    // keep the pipe open; the session's group goes with it.
    let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
    let _ = child.kill();
    let _ = child.wait();
    status.filter(|s| s.success())?;
    // Something that left the session could still hold the pipe open.
    let out = String::from_utf8(rx.recv_timeout(Duration::from_millis(200)).ok()?).ok()?;
    let start = out.find(START)? + START.len();
    let end = start + out[start..].find(END)?;
    let path = out[start..end].trim();
    (!path.is_empty()).then(|| path.to_string())
}

#[cfg(not(unix))]
fn query_login_shell(_shell: &Path, _timeout: Duration) -> Option<String> {
    None
}

/// Environment variables this process set for itself (the desktop app's
/// webview settings) that the programs it starts must not inherit.
static OWN_VARS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Marks `names` as set for this process only: MCP servers started from
/// here get the environment without them (unless their definition sets them).
pub fn keep_to_this_process(names: &[&str]) {
    let mut own = OWN_VARS.lock().unwrap_or_else(|e| e.into_inner());
    own.extend(names.iter().map(|n| n.to_string()));
}

/// The variables [`keep_to_this_process`] named.
pub fn own_vars() -> Vec<String> {
    OWN_VARS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}
