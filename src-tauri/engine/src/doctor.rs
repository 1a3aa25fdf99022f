//! Why a server is not running, in plain words, with what to do about it.
//!
//! Every failure of a server's start is put in one class ([`FailureClass`])
//! from what Switchboard saw: the command lookup, the error of starting the
//! process, the server's last lines on stderr, non-MCP text on its stdout,
//! and what the transport reported. A [`Diagnosis`] holds a short line for
//! the server's row, a full explanation with the fix for its detail, and the
//! technical error for the log. Failures that retrying cannot heal (a command
//! that does not exist, a file that is not a program, a folder or URL that is
//! wrong) are not restarted; the manager marks them failed at once.

use std::time::Duration;

use serde::Serialize;

use crate::config::Transport;
use crate::host::Os;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum FailureClass {
    /// The command is not on the search PATH, or the path does not exist.
    CommandNotFound,
    /// The file exists but cannot be run (permissions, not a program).
    NotExecutable,
    /// The process ended before it answered `initialize`.
    ExitedAtOnce,
    /// A `${VAR}`, `!command` or input in its env/headers gave nothing, and it failed.
    MissingValue,
    /// Its working folder does not exist.
    BadFolder,
    /// No answer to `initialize` within the timeout.
    HandshakeTimeout,
    /// It printed text that is not MCP (JSON-RPC) on stdout.
    NotMcp,
    /// Nothing listens at the remote server's address.
    ConnectionRefused,
    /// The remote server's host name cannot be resolved.
    HostNotFound,
    /// The secure connection failed (certificate, TLS).
    Tls,
    /// The URL answered, but not as an MCP endpoint (404, 405, HTML…).
    WrongUrl,
    /// The server wants a sign-in or rejected the credentials.
    Unauthorized,
    /// Client and server found no protocol version in common.
    ProtocolMismatch,
    /// The definition itself is unusable (URL, header, …).
    InvalidConfig,
    /// It was running and stopped.
    Crashed,
    /// Anything else; the technical error says what.
    Other,
}

impl FailureClass {
    /// Whether starting again can help; if not, no restarts are tried.
    pub fn heals(self) -> bool {
        !matches!(
            self,
            FailureClass::CommandNotFound
                | FailureClass::NotExecutable
                | FailureClass::BadFolder
                | FailureClass::InvalidConfig
        )
    }

    pub fn label(self) -> &'static str {
        match self {
            FailureClass::CommandNotFound => "command not found",
            FailureClass::NotExecutable => "not executable",
            FailureClass::ExitedAtOnce => "exited at once",
            FailureClass::MissingValue => "missing value",
            FailureClass::BadFolder => "wrong folder",
            FailureClass::HandshakeTimeout => "no answer",
            FailureClass::NotMcp => "not an MCP server",
            FailureClass::ConnectionRefused => "connection refused",
            FailureClass::HostNotFound => "host not found",
            FailureClass::Tls => "secure connection failed",
            FailureClass::WrongUrl => "wrong URL",
            FailureClass::Unauthorized => "sign-in needed",
            FailureClass::ProtocolMismatch => "protocol mismatch",
            FailureClass::InvalidConfig => "invalid config",
            FailureClass::Crashed => "crashed",
            FailureClass::Other => "failed",
        }
    }
}

/// What is wrong with a server, for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    pub class: FailureClass,
    /// One short line for the server's row.
    pub summary: String,
    /// The whole explanation: what happened and what to do.
    pub detail: String,
    /// What the transport or the system said, as it said it.
    pub error: String,
}

/// What Switchboard knew about the server when it failed.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub os: Option<Os>,
    pub transport: Option<Transport>,
    /// The command as configured (stdio), and its arguments.
    pub command: Option<String>,
    pub args: Vec<String>,
    pub url: Option<String>,
    pub timeout: Option<Duration>,
    /// The server's last lines on stderr, oldest first.
    pub stderr_tail: Vec<String>,
    /// Lines it printed on stdout that are not JSON-RPC.
    pub stdout_noise: Vec<String>,
    /// Values in its env/headers that resolved to nothing (the warnings).
    pub unresolved: Vec<String>,
}

/// How a start failed, as the manager saw it.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The command lookup failed (`message` names it); `searched` lists the
    /// folders, `login_shell` whether the login shell's PATH was among them.
    NotFound {
        searched: String,
        message: String,
        login_shell: bool,
    },
    /// Starting the process failed.
    Spawn {
        kind: std::io::ErrorKind,
        raw_os: Option<i32>,
        message: String,
    },
    /// The working folder does not exist (`message` names it and the field).
    Folder { message: String },
    /// The definition is unusable (`message` says why).
    Invalid { message: String },
    /// No answer to `initialize` in time.
    Timeout,
    /// `initialize` failed with this error.
    Handshake { message: String },
    /// The server wants a sign-in.
    Auth { message: String },
    /// It connected, then ended.
    Ended { message: String },
    /// Something after the handshake (listing tools) failed.
    Later { message: String },
}

impl Failure {
    pub fn error_text(&self) -> String {
        match self {
            Failure::NotFound { message, .. }
            | Failure::Spawn { message, .. }
            | Failure::Folder { message }
            | Failure::Invalid { message }
            | Failure::Handshake { message }
            | Failure::Auth { message }
            | Failure::Ended { message }
            | Failure::Later { message } => message.clone(),
            Failure::Timeout => "timed out waiting for the server to initialize".into(),
        }
    }
}

/// The diagnosis of `failure` given `facts`.
pub fn diagnose(failure: &Failure, facts: &Facts) -> Diagnosis {
    let error = failure.error_text();
    let d = |class: FailureClass, summary: String, detail: String| Diagnosis {
        class,
        summary,
        detail,
        error: error.clone(),
    };
    let command = facts.command.clone().unwrap_or_default();
    let program = program_name(&command);
    let timeout_s = facts.timeout.map(|t| t.as_secs_f64()).unwrap_or(30.0);
    let last_err = last_meaningful(&facts.stderr_tail);
    let missing = || -> Option<Diagnosis> {
        (!facts.unresolved.is_empty()).then(|| {
            d(
                FailureClass::MissingValue,
                format!("missing value: {}", facts.unresolved.join(", ")),
                format!(
                    "It failed, and {} of its settings gave no value: {}. Set {} (in the environment Switchboard starts with, or in the server's env), then restart it.{}",
                    if facts.unresolved.len() == 1 { "one" } else { "some" },
                    facts.unresolved.join(", "),
                    if facts.unresolved.len() == 1 { "it" } else { "them" },
                    stderr_sentence(&facts.stderr_tail)
                ),
            )
        })
    };
    match failure {
        Failure::NotFound { searched, login_shell, .. } => {
            let how = runtime_hint(&program, facts.os.unwrap_or(Os::Linux));
            let (summary, first) = match &how {
                Some(h) => (format!("{program} not found — install {}", h.runtime), format!("\"{program}\" was not found: it comes with {}. {}", h.runtime, h.install)),
                None if command.contains('/') || command.contains('\\') => (format!("{command} does not exist"), format!("{command} does not exist. Check the path in the server's \"command\".")),
                None => (format!("{program} not found"), format!("\"{program}\" was not found. Install it, or put its full path in the server's \"command\".")),
            };
            let shell = if *login_shell { " (your login shell's PATH included)" } else { " (Switchboard could not ask your login shell for its PATH: $SHELL is not set or did not answer)" };
            d(FailureClass::CommandNotFound, summary, format!("{first} Searched: {searched}{shell}. Switchboard does not retry this: restart the server once it is installed."))
        }
        Failure::Spawn { kind, raw_os, message } => {
            let not_exec = *kind == std::io::ErrorKind::PermissionDenied || *raw_os == Some(8 /* ENOEXEC */);
            if *kind == std::io::ErrorKind::NotFound {
                d(FailureClass::CommandNotFound, format!("{command} does not exist"), format!("{command} does not exist, or a program it needs to start (its #! line) is missing. Check the server's \"command\". ({message})"))
            } else if not_exec {
                let fix = if *raw_os == Some(8) { "It is not a program this system can run (wrong platform, or a script without a #! line).".to_string() } else { format!("It is not marked executable: run `chmod +x {command}`, or start it through its interpreter (e.g. \"command\": \"node\", \"args\": [\"{command}\"]).") };
                d(FailureClass::NotExecutable, format!("{program} is not executable"), format!("{command} cannot be run. {fix} ({message})"))
            } else {
                d(FailureClass::Other, format!("cannot start {program}"), format!("Starting {command} failed: {message}"))
            }
        }
        Failure::Folder { message } => d(FailureClass::BadFolder, "working folder missing".into(), format!("{} Switchboard does not retry this.", capitalize(message))),
        Failure::Invalid { message } => d(FailureClass::InvalidConfig, "invalid config".into(), format!("Its definition cannot be used: {message}. Fix it in its config file; Switchboard does not retry this.")),
        Failure::Auth { message } => d(FailureClass::Unauthorized, "sign-in needed".into(), capitalize(message)),
        Failure::Timeout => {
            if !facts.stdout_noise.is_empty() {
                return not_mcp(facts, &error);
            }
            if let Some(m) = missing() {
                return m;
            }
            let what = match facts.transport {
                Some(Transport::Stdio) => " A first start that downloads a package (npx, uvx, docker) can take longer; start it once in a terminal to see what it does.",
                _ => " Check that the server is up and the URL is right.",
            };
            d(
                FailureClass::HandshakeTimeout,
                format!("no answer within {}", secs(timeout_s)),
                format!("It did not answer within {} (its timeout).{what} To wait longer, raise \"timeout\" in its settings.{}", secs(timeout_s), stderr_sentence(&facts.stderr_tail)),
            )
        }
        Failure::Handshake { message } => {
            let lower = message.to_lowercase();
            if facts.transport == Some(Transport::Stdio) {
                if !facts.stdout_noise.is_empty() {
                    return not_mcp(facts, &error);
                }
                if lower.contains("protocol version") {
                    return d(FailureClass::ProtocolMismatch, "protocol version not supported".into(), format!("It and Switchboard have no MCP protocol version in common: update the server. ({message})"));
                }
                if let Some(m) = missing() {
                    return m;
                }
                let summary = match &last_err {
                    Some(l) => format!("exited at once: {}", shorten(l, 90)),
                    None => "exited at once".into(),
                };
                return d(
                    FailureClass::ExitedAtOnce,
                    summary,
                    format!("It ended before it answered.{} Fix what it says, or run `{}` in a terminal to see more, then restart it.", stderr_sentence(&facts.stderr_tail), shorten(&command_line(&command, &facts.args), 160)),
                );
            }
            remote(message, facts, &error)
        }
        Failure::Ended { message } => {
            let summary = match &last_err {
                Some(l) => format!("stopped: {}", shorten(l, 90)),
                None => "stopped".into(),
            };
            d(FailureClass::Crashed, summary, format!("It was running and stopped ({message}).{} Switchboard restarts it.", stderr_sentence(&facts.stderr_tail)))
        }
        Failure::Later { message } => d(FailureClass::Other, shorten(message, 90), format!("It answered, then: {message}.{}", stderr_sentence(&facts.stderr_tail))),
    }
}

fn not_mcp(facts: &Facts, error: &str) -> Diagnosis {
    let shown: Vec<String> = facts
        .stdout_noise
        .iter()
        .take(3)
        .map(|l| format!("«{}»", shorten(l, 100)))
        .collect();
    Diagnosis {
        class: FailureClass::NotMcp,
        summary: "not an MCP server: it printed text".into(),
        detail: format!(
            "It printed {} on its output, where an MCP server speaks only JSON-RPC. Either it is not an MCP server (check \"command\" and \"args\"), or it needs an argument to start in MCP/stdio mode (see its documentation), or it logs to stdout instead of stderr.",
            shown.join(", ")
        ),
        error: error.to_string(),
    }
}

fn remote(message: &str, facts: &Facts, error: &str) -> Diagnosis {
    let lower = message.to_lowercase();
    let url = facts.url.clone().unwrap_or_default();
    let host = url::Url::parse(&url).ok().and_then(|u| {
        u.host_str().map(|h| match u.port() {
            Some(p) => format!("{h}:{p}"),
            None => h.to_string(),
        })
    });
    let host = host.unwrap_or_else(|| url.clone());
    let d = |class: FailureClass, summary: String, detail: String| Diagnosis {
        class,
        summary,
        detail,
        error: error.to_string(),
    };
    if lower.contains("connection refused") {
        return d(FailureClass::ConnectionRefused, format!("nothing listens at {host}"), format!("Nothing answers at {host}: the server is not running there, or the port is wrong. Start it, or fix the URL ({url})."));
    }
    if lower.contains("lookup address")
        || lower.contains("dns error")
        || lower.contains("name or service not known")
        || lower.contains("no such host")
        || lower.contains("nodename nor servname")
    {
        return d(FailureClass::HostNotFound, format!("host {host} not found"), format!("The name {host} cannot be found. Check the URL for typos; if it is a company server, connect to its network or VPN first."));
    }
    if lower.contains("certificate")
        || lower.contains("tls")
        || lower.contains("ssl")
        || lower.contains("handshake failure")
    {
        return d(FailureClass::Tls, format!("secure connection to {host} failed"), format!("The secure (HTTPS) connection to {host} failed: {message}. The server's certificate may be expired, self-signed or for another name; check the URL, or ask its operator."));
    }
    if lower.contains("protocol version") {
        return d(FailureClass::ProtocolMismatch, "protocol version not supported".into(), format!("The server and Switchboard have no MCP protocol version in common ({message}). Ask its operator, or update Switchboard."));
    }
    let status = ["404", "405", "410", "400"].into_iter().find(|c| {
        lower.contains(&format!("status {c}"))
            || lower.contains(&format!("{c} not found"))
            || lower.contains(&format!(" {c} "))
    });
    if let Some(code) = status {
        return d(FailureClass::WrongUrl, format!("{url} answered {code}"), format!("{url} answered HTTP {code}: it is not an MCP endpoint. Check the path (servers usually serve MCP at /mcp, older ones at /sse) and the transport (\"type\": \"http\" or \"sse\")."));
    }
    if lower.contains("text/html")
        || lower.contains("unexpected content type")
        || lower.contains("content-type")
    {
        return d(FailureClass::WrongUrl, format!("{url} is not an MCP endpoint"), format!("{url} answered with a web page, not MCP. Check the path (usually /mcp, or /sse for older servers)."));
    }
    d(
        FailureClass::Other,
        shorten(message, 90),
        format!("Connecting to {url} failed: {message}"),
    )
}

/// What a diagnostic report shows (secrets already masked by the caller).
#[derive(Debug, Clone)]
pub struct ReportInput {
    pub name: String,
    pub source: Option<String>,
    pub status: String,
    pub diagnosis: Option<Diagnosis>,
    pub last_error: Option<String>,
    pub transport: Transport,
    pub command: Option<String>,
    pub program: Option<String>,
    pub args: Vec<String>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    pub env_keys: Vec<String>,
    pub header_keys: Vec<String>,
    pub timeout_ms: u64,
    pub search_path: Option<String>,
    pub restarts: u32,
    pub warnings: Vec<String>,
    pub log: Vec<String>,
}

/// A plain-text report on one server, for a bug report or a chat: nothing
/// in it is a secret (env and header values are never included).
pub fn report(r: &ReportInput) -> String {
    let mut out = format!(
        "Switchboard diagnostic report\nSwitchboard {} on {} ({})\n\nServer: {}\n",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH,
        r.name
    );
    let mut line = |k: &str, v: &str| {
        if !v.is_empty() {
            out.push_str(&format!("{k}: {v}\n"));
        }
    };
    line("Defined in", r.source.as_deref().unwrap_or(""));
    line(
        "Status",
        &format!("{} (restarts: {})", r.status, r.restarts),
    );
    if let Some(d) = &r.diagnosis {
        line("Problem", &format!("[{}] {}", d.class.label(), d.summary));
        line("What to do", &d.detail);
        line("Error", &d.error);
    } else {
        line("Error", r.last_error.as_deref().unwrap_or(""));
    }
    line("Transport", &format!("{:?}", r.transport).to_lowercase());
    line("Command", r.command.as_deref().unwrap_or(""));
    line("Started as", r.program.as_deref().unwrap_or(""));
    line(
        "Arguments",
        &r.args
            .iter()
            .map(|a| format!("{a:?}"))
            .collect::<Vec<_>>()
            .join(" "),
    );
    line("Working folder", r.cwd.as_deref().unwrap_or(""));
    line("URL", r.url.as_deref().unwrap_or(""));
    line(
        "Environment variables (values not shown)",
        &r.env_keys.join(", "),
    );
    line("Headers (values not shown)", &r.header_keys.join(", "));
    line("Timeout", &format!("{} ms", r.timeout_ms));
    line(
        "Command search PATH",
        r.search_path.as_deref().unwrap_or(""),
    );
    for w in &r.warnings {
        line("Warning", w);
    }
    if !r.log.is_empty() {
        out.push_str("\nLast log lines:\n");
        for l in &r.log {
            out.push_str("  ");
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// The system this build runs on.
pub fn this_os() -> Os {
    if cfg!(target_os = "macos") {
        Os::Macos
    } else if cfg!(windows) {
        Os::Windows
    } else {
        Os::Linux
    }
}

/// How to get the runtime a command comes with, on one OS.
pub struct RuntimeHint {
    pub runtime: &'static str,
    pub install: String,
}

/// What `program` (a bare name such as `npx`) comes with, and how to install it.
pub fn runtime_hint(program: &str, os: Os) -> Option<RuntimeHint> {
    let p = program
        .trim_end_matches(".exe")
        .trim_end_matches(".cmd")
        .to_ascii_lowercase();
    let (runtime, linux, mac, win): (&str, &str, &str, &str) = match p.as_str() {
        "npx" | "npm" | "node" | "pnpm" | "yarn" => (
            "Node.js",
            "Install Node.js 20 or newer: your distribution's nodejs and npm packages (e.g. `sudo apt install nodejs npm`), or https://nodejs.org.",
            "Install Node.js 20 or newer: `brew install node`, or https://nodejs.org.",
            "Install Node.js 20 or newer: `winget install OpenJS.NodeJS.LTS`, or https://nodejs.org.",
        ),
        "uvx" | "uv" => (
            "uv (Astral's Python tool runner)",
            "Install uv: `curl -LsSf https://astral.sh/uv/install.sh | sh`.",
            "Install uv: `brew install uv`.",
            "Install uv: `winget install astral-sh.uv`.",
        ),
        "python" | "python3" | "pip" | "pip3" | "pipx" => (
            "Python",
            "Install Python 3: e.g. `sudo apt install python3 python3-pip`.",
            "Install Python 3: `brew install python`.",
            "Install Python 3: `winget install Python.Python.3.12`.",
        ),
        "docker" => (
            "Docker",
            "Install Docker Engine (https://docs.docker.com/engine/install/) and make sure your user may run it.",
            "Install Docker Desktop (https://docs.docker.com/desktop/) and start it.",
            "Install Docker Desktop (https://docs.docker.com/desktop/) and start it.",
        ),
        "bun" | "bunx" => ("Bun", "Install Bun: `curl -fsSL https://bun.sh/install | bash`.", "Install Bun: `brew install oven-sh/bun/bun`.", "Install Bun: `powershell -c \"irm bun.sh/install.ps1 | iex\"`."),
        "deno" => ("Deno", "Install Deno: `curl -fsSL https://deno.land/install.sh | sh`.", "Install Deno: `brew install deno`.", "Install Deno: `winget install DenoLand.Deno`."),
        "dnx" | "dotnet" => (
            "the .NET SDK (10 or newer for dnx)",
            "Install the .NET SDK: https://dotnet.microsoft.com/download.",
            "Install the .NET SDK: `brew install --cask dotnet-sdk`.",
            "Install the .NET SDK: `winget install Microsoft.DotNet.SDK.10`.",
        ),
        "go" => ("Go", "Install Go: https://go.dev/dl/ or your distribution's golang package.", "Install Go: `brew install go`.", "Install Go: `winget install GoLang.Go`."),
        "java" => ("Java", "Install a Java runtime: e.g. `sudo apt install default-jre`.", "Install Java: `brew install openjdk`.", "Install Java: `winget install Microsoft.OpenJDK.21`."),
        _ => return None,
    };
    let install = match os {
        Os::Linux => linux,
        Os::Macos => mac,
        Os::Windows => win,
    };
    Some(RuntimeHint {
        runtime,
        install: install.to_string(),
    })
}

/// `npx` of `npx`, `/usr/bin/npx`, `C:\\x\\npx.cmd`.
fn program_name(command: &str) -> String {
    command
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(command)
        .to_string()
}

/// The command line as a person would type it (arguments with spaces quoted).
fn command_line(command: &str, args: &[String]) -> String {
    let quote = |a: &str| {
        if a.is_empty()
            || a.chars()
                .any(|c| c.is_whitespace() || "'\"$`\\".contains(c))
        {
            format!("'{}'", a.replace('\'', "'\\''"))
        } else {
            a.to_string()
        }
    };
    std::iter::once(quote(command))
        .chain(args.iter().map(|a| quote(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn last_meaningful(lines: &[String]) -> Option<String> {
    lines
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

fn stderr_sentence(lines: &[String]) -> String {
    let shown: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if shown.is_empty() {
        return String::new();
    }
    let tail = &shown[shown.len().saturating_sub(3)..];
    format!(
        " Its last output: «{}».",
        tail.iter()
            .map(|l| shorten(l, 200))
            .collect::<Vec<_>>()
            .join(" / ")
    )
}

fn secs(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{} s", s as u64)
    } else {
        format!("{s:.1} s")
    }
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A reader of a stdio server's stdout that keeps the first lines that are
/// not JSON-RPC (a program that is not an MCP server, or one that logs to
/// stdout), and passes every byte on unchanged.
pub mod stdout_watch {
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll};

    use tokio::io::{AsyncRead, ReadBuf};

    /// Lines kept, and the longest part of each.
    const KEEP: usize = 5;
    const LINE: usize = 300;

    #[derive(Debug, Default, Clone)]
    pub struct Noise(Arc<Mutex<Vec<String>>>);

    impl Noise {
        pub fn lines(&self) -> Vec<String> {
            self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
        }
    }

    pub struct Watch<R> {
        inner: R,
        noise: Noise,
        /// The start of the current line (up to LINE bytes), while it may be noise.
        line: Vec<u8>,
        /// The current line started with `{` or `[` (JSON): not kept.
        json: Option<bool>,
    }

    impl<R> Watch<R> {
        pub fn new(inner: R) -> (Watch<R>, Noise) {
            let noise = Noise::default();
            (
                Watch {
                    inner,
                    noise: noise.clone(),
                    line: vec![],
                    json: None,
                },
                noise,
            )
        }

        fn see(&mut self, bytes: &[u8]) {
            for &b in bytes {
                if b == b'\n' {
                    self.end_line();
                    continue;
                }
                if self.json.is_none() {
                    if b.is_ascii_whitespace() {
                        continue;
                    }
                    self.json = Some(b == b'{' || b == b'[');
                }
                if self.json == Some(false) && self.line.len() < LINE {
                    self.line.push(b);
                }
            }
        }

        fn end_line(&mut self) {
            if self.json == Some(false) {
                let mut kept = self.noise.0.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() < KEEP {
                    kept.push(
                        String::from_utf8_lossy(&self.line)
                            .trim_end_matches('\r')
                            .to_string(),
                    );
                }
            }
            self.line.clear();
            self.json = None;
        }
    }

    impl<R: AsyncRead + Unpin> AsyncRead for Watch<R> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let before = buf.filled().len();
            let r = Pin::new(&mut self.inner).poll_read(cx, buf);
            if let Poll::Ready(Ok(())) = &r {
                let new = buf.filled()[before..].to_vec();
                if new.is_empty() {
                    // End of output: a last line without a newline counts too.
                    self.end_line();
                } else {
                    self.see(&new);
                }
            }
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(transport: Transport) -> Facts {
        Facts {
            os: Some(Os::Linux),
            transport: Some(transport),
            command: Some("npx".into()),
            timeout: Some(Duration::from_secs(30)),
            ..Default::default()
        }
    }

    #[test]
    fn not_found_names_the_runtime_and_does_not_heal() {
        let d = diagnose(
            &Failure::NotFound {
                searched: "/usr/bin, ~/.local/bin".into(),
                message: "command \"npx\" was not found on PATH".into(),
                login_shell: true,
            },
            &facts(Transport::Stdio),
        );
        assert_eq!(d.class, FailureClass::CommandNotFound);
        assert!(!d.class.heals());
        assert_eq!(d.summary, "npx not found — install Node.js");
        assert!(
            d.detail.contains("apt install nodejs npm")
                && d.detail.contains("/usr/bin, ~/.local/bin"),
            "{}",
            d.detail
        );
        let mac = runtime_hint("uvx", Os::Macos).unwrap();
        assert!(mac.install.contains("brew install uv"));
        assert!(runtime_hint("my-server", Os::Linux).is_none());
    }

    #[test]
    fn an_early_exit_quotes_its_last_stderr_line() {
        let mut f = facts(Transport::Stdio);
        f.stderr_tail = vec![
            "starting".into(),
            "Error: GITHUB_TOKEN is required".into(),
            "".into(),
        ];
        let d = diagnose(
            &Failure::Handshake {
                message: "Broken pipe (os error 32)".into(),
            },
            &f,
        );
        assert_eq!(d.class, FailureClass::ExitedAtOnce);
        assert_eq!(d.summary, "exited at once: Error: GITHUB_TOKEN is required");
        assert!(d.class.heals());
    }

    #[test]
    fn text_on_stdout_is_not_mcp_even_when_it_times_out() {
        let mut f = facts(Transport::Stdio);
        f.stdout_noise = vec!["Server listening on port 3000".into()];
        let d = diagnose(&Failure::Timeout, &f);
        assert_eq!(d.class, FailureClass::NotMcp);
        assert!(d.detail.contains("Server listening on port 3000"));
    }

    #[test]
    fn remote_errors_by_cause() {
        let mut f = facts(Transport::Http);
        f.url = Some("http://127.0.0.1:9/mcp".into());
        let refused = diagnose(&Failure::Handshake { message: "Client error: error sending request (when the client tried to initialize): Connection refused (os error 111)".into() }, &f);
        assert_eq!(
            (refused.class, refused.summary.as_str()),
            (
                FailureClass::ConnectionRefused,
                "nothing listens at 127.0.0.1:9"
            )
        );
        f.url = Some("https://nope.invalid/mcp".into());
        let dns = diagnose(
            &Failure::Handshake {
                message: "failed to lookup address information: Name or service not known".into(),
            },
            &f,
        );
        assert_eq!(dns.class, FailureClass::HostNotFound);
        let timeout = diagnose(&Failure::Timeout, &f);
        assert_eq!(
            (timeout.class, timeout.summary.as_str()),
            (FailureClass::HandshakeTimeout, "no answer within 30 s")
        );
    }

    #[test]
    fn unresolved_values_explain_a_failure() {
        let mut f = facts(Transport::Stdio);
        f.unresolved = vec!["GITHUB_TOKEN".into()];
        let d = diagnose(
            &Failure::Handshake {
                message: "connection closed".into(),
            },
            &f,
        );
        assert_eq!(d.class, FailureClass::MissingValue);
        assert!(d.summary.contains("GITHUB_TOKEN"));
    }

    #[tokio::test]
    async fn the_stdout_watch_keeps_non_json_lines_and_passes_everything_on() {
        use tokio::io::AsyncReadExt;
        let input: &[u8] = b"hello there\n{\"jsonrpc\":\"2.0\"}\n  [1]\nno newline at the end";
        let (mut w, noise) = stdout_watch::Watch::new(input);
        let mut out = vec![];
        w.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, input);
        assert_eq!(noise.lines(), ["hello there", "no newline at the end"]);
    }
}
