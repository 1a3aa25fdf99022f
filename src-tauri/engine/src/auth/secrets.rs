//! Secret values in a server's `headers` and `env`, resolved at connect time.
//!
//! The config keeps the raw string (`!op read …`, `GITHUB_TOKEN`,
//! `Bearer ${env:TOKEN}`); the resolved value exists only in memory for one
//! launch. Nothing here prints a resolved value: not `Debug`, not warnings.
//!
//! What a raw value may use depends on the file it came from
//! (`VarContext::expansion`): `!command` and bare variable names are
//! Switchboard's own forms and apply to Switchboard's file only, so a
//! literal `!hunter2` password in another client's file is never run.
//! `${keychain:NAME}` (Switchboard's file only) is the value kept in the OS
//! keychain under NAME (`Vault::secret`), read at each launch; the rest of
//! such a value expands as usual, and the keychain's value is never expanded
//! or run itself.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use tokio::sync::{Mutex, OnceCell};

use crate::config::vars::{expand, expand_header, Expansion, VarContext};

/// The start of a reference to a value kept in the keychain.
pub const KEYCHAIN_REF: &str = "${keychain:";
/// The start of a reference to a file's content (`${file:/run/secrets/token}`):
/// a mounted secret, such as a Kubernetes Secret's key mounted as a file.
pub const FILE_REF: &str = "${file:";
/// Largest secret file read (a token or a key, not a document).
pub const MAX_SECRET_FILE: u64 = 64 * 1024;

/// Whether `raw` refers to a kept secret (`${keychain:…}` or `${file:…}`).
pub fn has_secret_ref(raw: &str) -> bool {
    raw.contains(KEYCHAIN_REF) || raw.contains(FILE_REF)
}

/// The next `${keychain:` or `${file:` in `s`: its offset and prefix.
fn next_ref(s: &str) -> Option<(usize, &'static str)> {
    [KEYCHAIN_REF, FILE_REF]
        .into_iter()
        .filter_map(|p| s.find(p).map(|i| (i, p)))
        .min_by_key(|(i, _)| *i)
}

/// The content of a secret file, without its final line break. The reason
/// names the file, never its content.
fn read_secret_file(path: &str) -> Result<String, String> {
    use std::io::Read;
    let p = std::path::Path::new(path);
    if !p.is_absolute() {
        return Err(format!("${{file:{path}}} (give an absolute path)"));
    }
    let f = std::fs::File::open(p).map_err(|e| format!("${{file:{path}}} ({e})"))?;
    let mut buf = Vec::new();
    f.take(MAX_SECRET_FILE + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("${{file:{path}}} ({e})"))?;
    if buf.len() as u64 > MAX_SECRET_FILE {
        return Err(format!(
            "${{file:{path}}} (larger than {} KiB: not a secret)",
            MAX_SECRET_FILE / 1024
        ));
    }
    let mut text =
        String::from_utf8(buf).map_err(|_| format!("${{file:{path}}} (not UTF-8 text)"))?;
    while text.ends_with('\n') || text.ends_with('\r') {
        text.pop();
    }
    Ok(text)
}

pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// What a raw header/env value resolved to.
#[derive(Clone, PartialEq, Eq)]
pub enum Resolution {
    Value(String),
    /// Dropped from the connection; `reason` never contains a secret.
    Unresolved {
        reason: String,
    },
}

impl Resolution {
    pub fn value(&self) -> Option<&str> {
        match self {
            Resolution::Value(v) => Some(v),
            Resolution::Unresolved { .. } => None,
        }
    }
}

impl fmt::Debug for Resolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resolution::Value(_) => f.write_str("Value(<redacted>)"),
            Resolution::Unresolved { reason } => f
                .debug_struct("Unresolved")
                .field("reason", reason)
                .finish(),
        }
    }
}

/// Resolves raw values; one per app, so command results are cached across
/// servers and reconnects.
pub struct SecretResolver {
    env: HashMap<String, String>,
    timeout: Duration,
    /// One cell per raw `!command`. Only successes are stored: a failed command
    /// (not signed in to the password manager yet) runs again on the next
    /// connect. The map lock is held only to fetch the cell, so different
    /// commands run in parallel while the same command runs once.
    commands: Mutex<HashMap<String, Arc<OnceCell<String>>>>,
    /// Where `${keychain:NAME}` values are read (`None`: they stay unresolved).
    keychain: std::sync::RwLock<Option<crate::auth::vault::Vault>>,
}

impl fmt::Debug for SecretResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretResolver")
            .field("env", &format_args!("<{} variables>", self.env.len()))
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for SecretResolver {
    fn default() -> Self {
        Self::new()
    }
}

impl SecretResolver {
    /// Uses the process environment.
    pub fn new() -> Self {
        Self::with_env(std::env::vars().collect())
    }

    /// Uses `env` instead of the process environment for variable lookups;
    /// commands also see these variables (on top of the process environment).
    pub fn with_env(env: HashMap<String, String>) -> Self {
        Self {
            env,
            timeout: DEFAULT_COMMAND_TIMEOUT,
            commands: Mutex::new(HashMap::new()),
            keychain: Default::default(),
        }
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Where `${keychain:NAME}` values are read from.
    pub fn set_keychain(&self, vault: Option<crate::auth::vault::Vault>) {
        *self.keychain.write().unwrap() = vault;
    }

    /// A value with `${keychain:NAME}` references (an argument of a server
    /// in Switchboard's own file): each replaced by the kept value, the
    /// text between expanded as usual. `None` when it has no such reference.
    pub async fn resolve_keychain_refs(&self, raw: &str, cx: &VarContext) -> Option<Resolution> {
        if !cx.expansion.commands || !has_secret_ref(raw) {
            return None;
        }
        Some(self.with_keychain(None, raw, cx).await)
    }

    async fn with_keychain(&self, header: Option<&str>, raw: &str, cx: &VarContext) -> Resolution {
        let vault = self.keychain.read().unwrap().clone();
        let mut out = String::new();
        let mut unresolved: Vec<String> = vec![];
        let mut rest = raw;
        let text = |t: &str, out: &mut String, unresolved: &mut Vec<String>| {
            let e = match header {
                Some(name) => expand_header(name, t, cx),
                None => expand(t, cx),
            };
            out.push_str(&e.value);
            unresolved.extend(e.unresolved);
        };
        while let Some((start, prefix)) = next_ref(rest) {
            text(&rest[..start], &mut out, &mut unresolved);
            let after = &rest[start + prefix.len()..];
            let Some(end) = after.find('}') else {
                text(&rest[start..], &mut out, &mut unresolved);
                rest = "";
                break;
            };
            let name = after[..end].to_string();
            if prefix == FILE_REF {
                let path = name.clone();
                match tokio::task::spawn_blocking(move || read_secret_file(&path)).await {
                    Ok(Ok(value)) => out.push_str(&value),
                    Ok(Err(reason)) => unresolved.push(reason),
                    Err(e) => unresolved.push(format!("${{file:{name}}} ({e})")),
                }
                rest = &after[end + 1..];
                continue;
            }
            let got = match vault.clone() {
                Some(v) => {
                    let n = name.clone();
                    tokio::task::spawn_blocking(move || v.secret(&n))
                        .await
                        .unwrap_or(Ok(None))
                }
                None => Ok(None),
            };
            match got {
                Ok(Some(value)) => out.push_str(&value),
                Ok(None) => unresolved.push(format!("${{keychain:{name}}} (not in the keychain: enter the value again in Switchboard)")),
                Err(e) => unresolved.push(format!("${{keychain:{name}}} ({e})")),
            }
            rest = &after[end + 1..];
        }
        text(rest, &mut out, &mut unresolved);
        if unresolved.is_empty() {
            Resolution::Value(out)
        } else {
            Resolution::Unresolved {
                reason: unresolved_reason(&unresolved),
            }
        }
    }

    /// A value of Switchboard's own file (`Expansion::SWITCHBOARD`), looked
    /// up in the resolver's environment: `!cmd` → the command's trimmed
    /// stdout; a value that is exactly the name of a set environment
    /// variable → that variable; anything else → itself, with `${VAR}`,
    /// `${env:VAR}` and `${VAR:-default}` expanded.
    pub async fn resolve(&self, raw: &str) -> Resolution {
        self.resolve_value(None, raw, &self.var_context()).await
    }

    /// Resolves every value of a server's `headers` (`kind` = "header") or
    /// `env` (`kind` = "env") of Switchboard's own file; see `resolve_map_in`.
    pub async fn resolve_map(
        &self,
        kind: &str,
        map: &IndexMap<String, String>,
    ) -> (IndexMap<String, String>, Vec<String>) {
        self.resolve_map_in(kind, map, &self.var_context()).await
    }

    /// Resolves every value of a server's `headers` (`kind` = "header") or
    /// `env` (`kind` = "env") with the forms `cx.expansion` allows, looking
    /// variables up in `cx.env`. Unresolved entries are left out, each with
    /// a warning such as `header Authorization resolved to nothing (…)`.
    pub async fn resolve_map_in(
        &self,
        kind: &str,
        map: &IndexMap<String, String>,
        cx: &VarContext,
    ) -> (IndexMap<String, String>, Vec<String>) {
        let header = kind == "header";
        let resolutions = futures::future::join_all(
            map.iter()
                .map(|(k, raw)| self.resolve_value(header.then_some(k.as_str()), raw, cx)),
        )
        .await;
        let mut out = IndexMap::with_capacity(map.len());
        let mut warnings = vec![];
        for (key, resolution) in map.keys().zip(resolutions) {
            match resolution {
                Resolution::Value(v) => {
                    out.insert(key.clone(), v);
                }
                Resolution::Unresolved { reason } => {
                    warnings.push(format!("{kind} {key} resolved to nothing ({reason})"));
                }
            }
        }
        (out, warnings)
    }

    /// One value; `header` is the header's name, `None` for an env value.
    async fn resolve_value(&self, header: Option<&str>, raw: &str, cx: &VarContext) -> Resolution {
        let rules = cx.expansion;
        // Switchboard's own forms: a kept secret is never run as `!command`.
        if rules.commands && has_secret_ref(raw) {
            return self.with_keychain(header, raw, cx).await;
        }
        if rules.commands {
            if let Some(command) = raw.strip_prefix('!') {
                // Handed to the shell as written: it expands its own `${VAR}`
                // (the child gets our variables) and we must not break its quoting.
                return self.run_cached(command.trim()).await;
            }
        }
        if rules.env_names && is_var_name(raw) {
            if let Some(v) = cx.env.get(raw).filter(|v| !v.is_empty()) {
                return Resolution::Value(v.clone());
            }
        }
        let expanded = match header {
            Some(name) => expand_header(name, raw, cx),
            None => expand(raw, cx),
        };
        if expanded.unresolved.is_empty() {
            Resolution::Value(expanded.value)
        } else {
            // Name only the references: the rest of the value may be a secret.
            Resolution::Unresolved {
                reason: unresolved_reason(&expanded.unresolved),
            }
        }
    }

    /// Switchboard's own rules over the resolver's environment.
    fn var_context(&self) -> VarContext {
        let user_home = self
            .env
            .get("HOME")
            .or_else(|| self.env.get("USERPROFILE"))
            .cloned();
        VarContext {
            env: self.env.clone(),
            user_home,
            expansion: Expansion::SWITCHBOARD,
            ..Default::default()
        }
    }

    async fn run_cached(&self, command: &str) -> Resolution {
        if command.is_empty() {
            return Resolution::Unresolved {
                reason: "empty command after `!`".into(),
            };
        }
        let cell = self
            .commands
            .lock()
            .await
            .entry(command.to_string())
            .or_default()
            .clone();
        match cell.get_or_try_init(|| self.run(command)).await {
            Ok(v) => Resolution::Value(v.clone()),
            Err(reason) => Resolution::Unresolved { reason },
        }
    }

    async fn run(&self, command: &str) -> Result<String, String> {
        let mut cmd = shell(command);
        cmd.envs(&self.env)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        #[cfg(windows)]
        cmd.creation_flags(0x0800_0000); // CREATE_NO_WINDOW: no console flashing up in the GUI.

        let child = cmd
            .spawn()
            .map_err(|e| format!("could not run command: {e}"))?;
        let pid = child.id();
        let output = match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Ok(output) => output.map_err(|e| format!("command failed: {e}"))?,
            Err(_) => {
                // The shell is killed on drop; its own children (a pipeline,
                // `sleep`) share its process group.
                #[cfg(unix)]
                if let Some(pid) = pid {
                    let _ = nix::sys::signal::killpg(
                        nix::unistd::Pid::from_raw(pid as i32),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                let _ = pid;
                return Err(format!(
                    "command timed out after {}",
                    fmt_duration(self.timeout)
                ));
            }
        };
        if !output.status.success() {
            let status = match output.status.code() {
                Some(code) => format!("command exited with status {code}"),
                None => "command was killed by a signal".to_string(),
            };
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(match first_line(&stderr) {
                Some(line) => format!("{status}: {line}"),
                None => status,
            });
        }
        let stdout = String::from_utf8(output.stdout)
            .map_err(|_| "command output is not UTF-8".to_string())?;
        let value = stdout.trim();
        if value.is_empty() {
            return Err("command printed nothing".into());
        }
        Ok(value.to_string())
    }
}

fn shell(command: &str) -> tokio::process::Command {
    #[cfg(windows)]
    {
        let mut c = tokio::process::Command::new("cmd");
        c.arg("/C").arg(command);
        c
    }
    #[cfg(not(windows))]
    {
        let mut c = tokio::process::Command::new("sh");
        c.arg("-c").arg(command);
        c
    }
}

/// `unresolved ${A}, ${B}`; a VS Code `${input:id}` is not missing but
/// needs an answer only the client asks for.
fn unresolved_reason(refs: &[String]) -> String {
    let (inputs, vars): (Vec<&str>, Vec<&str>) = refs
        .iter()
        .map(String::as_str)
        .partition(|r| r.starts_with("${input:"));
    let mut parts = vec![];
    if !vars.is_empty() {
        parts.push(format!("unresolved {}", vars.join(", ")));
    }
    if !inputs.is_empty() {
        parts.push(format!(
            "{} needs input, which VS Code asks for and Switchboard cannot",
            inputs.join(", ")
        ));
    }
    parts.join("; ")
}

fn is_var_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn first_line(s: &str) -> Option<String> {
    let line = s.lines().map(str::trim).find(|l| !l.is_empty())?;
    const MAX: usize = 200;
    Some(match line.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    })
}

fn fmt_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}
