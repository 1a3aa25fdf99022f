//! Config sources: one provider per client config file. A provider knows where its file lives on each OS, its level,
//! its format, where the servers sit inside the document, and its dialect
//! (field names, transport spelling, enable flag).

pub mod dialect;
pub mod read;
pub mod text;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use dialect::Dialect;

use crate::config::vars::Expansion;
use crate::host::{Host, Os};
use crate::writer::doc::{Format, PathSeg};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    Switchboard,
    /// Switchboard's list of team gateways (`team-gateways.json`): remote
    /// servers the person signs in to with their team account.
    Team,
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Windsurf,
    Zed,
    Cline,
    Roo,
    Gemini,
    Codex,
    Goose,
    Lmstudio,
    Continue,
    Fallback,
}

impl Client {
    /// When this client reads its MCP servers from its files: the one table
    /// the app's "restart to use it" notices come from. `None`: it notices
    /// a change by itself. Where it could not be confirmed that a client
    /// watches its file, it is taken to read it at start.
    pub fn restart_hint(self) -> Option<&'static str> {
        match self {
            // Watch their files and reload servers on change.
            Client::Switchboard | Client::Team | Client::Cursor | Client::Vscode | Client::Zed | Client::Cline | Client::Roo | Client::Continue => None,
            Client::ClaudeDesktop => Some("Claude Desktop reads its config only when it starts: quit it completely and open it again"),
            Client::ClaudeCode => Some("Claude Code reads its config when a session starts: start a new session (or run /mcp)"),
            Client::Windsurf => Some("Windsurf reads its config at start: press Refresh in its MCP panel, or restart it"),
            Client::Gemini => Some("Gemini CLI reads its config when it starts: start a new session"),
            Client::Codex => Some("Codex reads its config when it starts: start a new session"),
            Client::Goose => Some("goose reads its config when it starts: restart it"),
            Client::Lmstudio => Some("LM Studio reads its config when it starts: restart it"),
            Client::Fallback => None,
        }
    }

    pub fn display_name(self) -> &'static str {
        match self {
            Client::Switchboard => "Switchboard",
            Client::Team => "Team",
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
            Client::Windsurf => "Windsurf",
            Client::Zed => "Zed",
            Client::Cline => "Cline",
            Client::Roo => "Roo Code",
            Client::Gemini => "Gemini CLI",
            Client::Codex => "Codex CLI",
            Client::Goose => "goose",
            Client::Lmstudio => "LM Studio",
            Client::Continue => "Continue",
            Client::Fallback => "mcp.json",
        }
    }

    /// What this client itself expands in its servers' strings (`${VAR}`, …),
    /// so Switchboard launches a server as its own client would. Where a
    /// client's behaviour could not be confirmed, nothing expands: a literal
    /// stays literal. Only Switchboard's own file has `!command` and bare
    /// variable-name secrets. README, "Variables", has this as a table.
    pub fn expansion(self) -> Expansion {
        const NONE: Expansion = Expansion::NONE;
        match self {
            // The Team list is Switchboard's own file too.
            Client::Switchboard | Client::Team => Expansion::SWITCHBOARD,
            // code.claude.com/docs/en/mcp: command, args, env, url, headers
            // of `.mcp.json`; its loader expands the user, local and managed
            // scopes the same way.
            Client::ClaudeCode => Expansion {
                braced: true,
                default: true,
                ..NONE
            },
            // cursor.com/docs/mcp "Config interpolation". Also
            // `${workspaceFolderBasename}` and `${pathSeparator}`, which
            // Switchboard does not know: they stay literal.
            Client::Cursor => Expansion {
                env_prefix: true,
                workspace_folder: true,
                user_home: true,
                ..NONE
            },
            // VS Code's variable resolver (vscode-docs mcp-configuration.md);
            // its other predefined variables stay literal here.
            Client::Vscode => Expansion {
                env_prefix: true,
                workspace_folder: true,
                user_home: true,
                inputs: true,
                ..NONE
            },
            // docs.windsurf.com cascade/mcp "Config interpolation";
            // `${file:…}` is not read and stays literal.
            Client::Windsurf => Expansion {
                env_prefix: true,
                ..NONE
            },
            // Roo-Code `src/utils/config.ts` `injectVariables`.
            Client::Roo => Expansion {
                env_prefix: true,
                workspace_folder: true,
                ..NONE
            },
            // gemini-cli `packages/cli/src/utils/envVarResolver.ts`, over the
            // whole settings file: `$VAR` and `${VAR}`, no default syntax.
            Client::Gemini => Expansion {
                braced: true,
                dollar: true,
                ..NONE
            },
            // Codex interpolates nothing; its `env_http_headers` and
            // `bearer_token_env_var` fields name variables instead.
            Client::Codex => Expansion {
                header_env_refs: true,
                ..NONE
            },
            // None documented (Claude Desktop) or none found in the client
            // (Zed, Cline, goose, LM Studio); Continue's `${{ secrets.X }}` is
            // not supported; the fallback `mcp.json` has no client.
            Client::ClaudeDesktop
            | Client::Zed
            | Client::Cline
            | Client::Goose
            | Client::Lmstudio
            | Client::Continue
            | Client::Fallback => NONE,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Level {
    User,
    Project,
    /// System-wide, administrator-managed; read-only.
    Managed,
}

/// Where a source's servers live inside its document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Container {
    /// A map from server name to entry at this path.
    Map(Vec<PathSeg>),
    /// A list of entries carrying a `name` field (Continue).
    List(Vec<PathSeg>),
}

impl Container {
    pub fn path(&self) -> &[PathSeg] {
        match self {
            Container::Map(p) | Container::List(p) => p,
        }
    }
}

/// One config source: a file (or a part of one) a client reads servers from.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceSpec {
    /// Stable id: `cursor-user`, or `cursor-project@/abs/project` for project sources.
    pub id: String,
    pub client: Client,
    pub level: Level,
    pub path: PathBuf,
    pub format: Format,
    pub read_only: bool,
    pub project: Option<PathBuf>,
    pub container: Container,
    pub dialect: Dialect,
}

impl SourceSpec {
    /// The expansion rules of this source's servers (its client's).
    pub fn expansion(&self) -> Expansion {
        self.client.expansion()
    }
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

fn spec(
    id: String,
    client: Client,
    level: Level,
    path: PathBuf,
    format: Format,
    root: &[&str],
    dialect: Dialect,
) -> SourceSpec {
    SourceSpec {
        id,
        client,
        level,
        path,
        format,
        read_only: level == Level::Managed,
        project: None,
        container: Container::Map(root.iter().map(|k| key(k)).collect()),
        dialect,
    }
}

/// The VS Code user folder (`Code/User`), which also holds Cline's and Roo's
/// extension storage.
fn vscode_user_dir(host: &Host) -> PathBuf {
    match host.os {
        Os::Linux => host.join(&host.xdg_config_dir(), "Code/User"),
        Os::Macos => host.home_join("Library/Application Support/Code/User"),
        Os::Windows => host.join(&host.appdata(), "Code/User"),
    }
}

/// Switchboard's own server file.
pub fn switchboard_source(host: &Host) -> SourceSpec {
    let path = host.join(&host.switchboard_dir(), "servers.json");
    spec(
        "switchboard".into(),
        Client::Switchboard,
        Level::User,
        path,
        Format::Json,
        &["mcpServers"],
        Dialect::Switchboard,
    )
}

/// Switchboard's list of team gateways, shown as the source "Team". Named
/// so it cannot be taken for the `team.json` a team gateway's own folder
/// holds (its access rules). Same format as `servers.json`:
/// `{"mcpServers": {"acme": {"url": "https://mcp.acme.example/mcp"}}}`.
pub fn team_source(host: &Host) -> SourceSpec {
    let path = host.join(&host.switchboard_dir(), "team-gateways.json");
    spec(
        TEAM_SOURCE_ID.into(),
        Client::Team,
        Level::User,
        path,
        Format::Json,
        &["mcpServers"],
        Dialect::Switchboard,
    )
}

/// The id of the Team source ([`team_source`]).
pub const TEAM_SOURCE_ID: &str = "team";

/// Administrator-managed files: highest priority after Switchboard's own, read-only.
pub fn managed_sources(host: &Host) -> Vec<SourceSpec> {
    let claude = match host.os {
        Os::Linux => host.system_join("etc/claude-code/managed-mcp.json"),
        Os::Macos => host.system_join("Library/Application Support/ClaudeCode/managed-mcp.json"),
        Os::Windows => host.system_join("Program Files/ClaudeCode/managed-mcp.json"),
    };
    let gemini = host
        .var("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| match host.os {
            Os::Linux => host.system_join("etc/gemini-cli/settings.json"),
            Os::Macos => host.system_join("Library/Application Support/GeminiCli/settings.json"),
            Os::Windows => host.system_join("ProgramData/gemini-cli/settings.json"),
        });
    let codex = match host.os {
        Os::Windows => host.system_join("ProgramData/codex/managed_config.toml"),
        _ => host.system_join("etc/codex/managed_config.toml"),
    };
    vec![
        spec(
            "claude-code-managed".into(),
            Client::ClaudeCode,
            Level::Managed,
            claude,
            Format::Json,
            &["mcpServers"],
            Dialect::ClaudeCode,
        ),
        spec(
            "gemini-system".into(),
            Client::Gemini,
            Level::Managed,
            gemini,
            Format::Jsonc,
            &["mcpServers"],
            Dialect::Gemini,
        ),
        spec(
            "codex-managed".into(),
            Client::Codex,
            Level::Managed,
            codex,
            Format::Toml,
            &["mcp_servers"],
            Dialect::Codex,
        ),
    ]
}

/// Project-level sources of one project folder, in the default order
/// (Claude Code local > Claude Code project > the others).
pub fn project_sources(host: &Host, project: &Path) -> Vec<SourceSpec> {
    let p = project.to_string_lossy().to_string();
    let id = |kind: &str| format!("{kind}@{p}");
    let at = |rel: &str| host.join(project, rel);
    let mut local = spec(
        id("claude-code-local"),
        Client::ClaudeCode,
        Level::Project,
        host.home_join(".claude.json"),
        Format::Json,
        &[],
        Dialect::ClaudeCode,
    );
    local.container = Container::Map(vec![key("projects"), key(&p), key("mcpServers")]);
    let mut list = vec![
        local,
        spec(
            id("claude-code-project"),
            Client::ClaudeCode,
            Level::Project,
            at(".mcp.json"),
            Format::Json,
            &["mcpServers"],
            Dialect::ClaudeCode,
        ),
        spec(
            id("cursor-project"),
            Client::Cursor,
            Level::Project,
            at(".cursor/mcp.json"),
            Format::Json,
            &["mcpServers"],
            Dialect::Standard,
        ),
        spec(
            id("vscode-project"),
            Client::Vscode,
            Level::Project,
            at(".vscode/mcp.json"),
            Format::Jsonc,
            &["servers"],
            Dialect::Vscode,
        ),
        spec(
            id("zed-project"),
            Client::Zed,
            Level::Project,
            at(".zed/settings.json"),
            Format::Jsonc,
            &["context_servers"],
            Dialect::Zed,
        ),
        spec(
            id("roo-project"),
            Client::Roo,
            Level::Project,
            at(".roo/mcp.json"),
            Format::Json,
            &["mcpServers"],
            Dialect::Roo,
        ),
        spec(
            id("gemini-project"),
            Client::Gemini,
            Level::Project,
            at(".gemini/settings.json"),
            Format::Jsonc,
            &["mcpServers"],
            Dialect::Gemini,
        ),
        spec(
            id("codex-project"),
            Client::Codex,
            Level::Project,
            at(".codex/config.toml"),
            Format::Toml,
            &["mcp_servers"],
            Dialect::Codex,
        ),
    ];
    for s in &mut list {
        s.project = Some(project.to_path_buf());
    }
    list
}

/// The low-priority fallback `mcp.json` at a project's root.
pub fn fallback_source(host: &Host, project: &Path) -> SourceSpec {
    let mut s = spec(
        format!("fallback@{}", project.to_string_lossy()),
        Client::Fallback,
        Level::Project,
        host.join(project, "mcp.json"),
        Format::Json,
        &["mcpServers"],
        Dialect::Standard,
    );
    s.project = Some(project.to_path_buf());
    s
}

/// User-level sources, in their default order.
pub fn user_sources(host: &Host) -> Vec<SourceSpec> {
    let code = vscode_user_dir(host);
    let claude_desktop = match host.os {
        Os::Linux => host.join(&host.xdg_config_dir(), "Claude/claude_desktop_config.json"),
        Os::Macos => {
            host.home_join("Library/Application Support/Claude/claude_desktop_config.json")
        }
        Os::Windows => host.join(&host.appdata(), "Claude/claude_desktop_config.json"),
    };
    let codex_home = host
        .var("CODEX_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| host.home_join(".codex"));
    let zed = match host.os {
        Os::Linux => {
            let base = host
                .var("FLATPAK_XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| host.xdg_config_dir());
            host.join(&base, "zed/settings.json")
        }
        Os::Macos => host.home_join(".config/zed/settings.json"),
        Os::Windows => host.join(&host.appdata(), "Zed/settings.json"),
    };
    let goose = match host.os {
        Os::Windows => host.join(&host.appdata(), "Block/goose/config/config.yaml"),
        _ => host
            .var("GOOSE_PATH_ROOT")
            .map(|r| host.join(Path::new(r), "config/config.yaml"))
            .unwrap_or_else(|| host.home_join(".config/goose/config.yaml")),
    };
    let mut continue_src = spec(
        "continue".into(),
        Client::Continue,
        Level::User,
        host.home_join(".continue/config.yaml"),
        Format::Yaml,
        &[],
        Dialect::Continue,
    );
    continue_src.container = Container::List(vec![key("mcpServers")]);
    vec![
        spec(
            "claude-code-user".into(),
            Client::ClaudeCode,
            Level::User,
            host.home_join(".claude.json"),
            Format::Json,
            &["mcpServers"],
            Dialect::ClaudeCode,
        ),
        spec(
            "claude-desktop".into(),
            Client::ClaudeDesktop,
            Level::User,
            claude_desktop,
            Format::Json,
            &["mcpServers"],
            Dialect::Standard,
        ),
        spec(
            "codex-user".into(),
            Client::Codex,
            Level::User,
            host.join(&codex_home, "config.toml"),
            Format::Toml,
            &["mcp_servers"],
            Dialect::Codex,
        ),
        spec(
            "gemini-user".into(),
            Client::Gemini,
            Level::User,
            host.home_join(".gemini/settings.json"),
            Format::Jsonc,
            &["mcpServers"],
            Dialect::Gemini,
        ),
        spec(
            "cursor-user".into(),
            Client::Cursor,
            Level::User,
            host.home_join(".cursor/mcp.json"),
            Format::Json,
            &["mcpServers"],
            Dialect::Standard,
        ),
        spec(
            "windsurf".into(),
            Client::Windsurf,
            Level::User,
            host.home_join(".codeium/windsurf/mcp_config.json"),
            Format::Json,
            &["mcpServers"],
            Dialect::Windsurf,
        ),
        spec(
            "zed-user".into(),
            Client::Zed,
            Level::User,
            zed,
            Format::Jsonc,
            &["context_servers"],
            Dialect::Zed,
        ),
        spec(
            "cline".into(),
            Client::Cline,
            Level::User,
            host.join(
                &code,
                "globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            ),
            Format::Json,
            &["mcpServers"],
            Dialect::Cline,
        ),
        spec(
            "roo-user".into(),
            Client::Roo,
            Level::User,
            host.join(
                &code,
                "globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
            ),
            Format::Json,
            &["mcpServers"],
            Dialect::Roo,
        ),
        spec(
            "vscode-user".into(),
            Client::Vscode,
            Level::User,
            host.join(&code, "mcp.json"),
            Format::Jsonc,
            &["servers"],
            Dialect::Vscode,
        ),
        spec(
            "goose".into(),
            Client::Goose,
            Level::User,
            goose,
            Format::Yaml,
            &["extensions"],
            Dialect::Goose,
        ),
        spec(
            "lmstudio".into(),
            Client::Lmstudio,
            Level::User,
            host.home_join(".lmstudio/mcp.json"),
            Format::Json,
            &["mcpServers"],
            Dialect::Standard,
        ),
        continue_src,
    ]
}

/// Every source in the default priority order, for the given trusted
/// project folders: Switchboard's own file, its Team list, managed (system-wide) files,
/// each project's client files, the user-level files, then each project's
/// fallback `mcp.json`. The first valid definition of a name wins.
pub fn default_order(host: &Host, trusted_projects: &[PathBuf]) -> Vec<SourceSpec> {
    let mut all = vec![switchboard_source(host), team_source(host)];
    all.extend(managed_sources(host));
    for p in trusted_projects {
        all.extend(project_sources(host, p));
    }
    all.extend(user_sources(host));
    for p in trusted_projects {
        all.push(fallback_source(host, p));
    }
    all
}

/// Apply the user's saved order to the default one. Ids in `saved` come
/// first in that order; a source the saved list does not know (a new client,
/// a newly trusted project) goes right after its default predecessor.
pub fn apply_priority(default: Vec<SourceSpec>, saved: &[String]) -> Vec<SourceSpec> {
    if saved.is_empty() {
        return default;
    }
    let mut out: Vec<SourceSpec> = saved
        .iter()
        .filter_map(|id| default.iter().find(|s| &s.id == id).cloned())
        .collect();
    for (i, s) in default.iter().enumerate() {
        if out.iter().any(|o| o.id == s.id) {
            continue;
        }
        let pos = default[..i]
            .iter()
            .rev()
            .find_map(|prev| out.iter().position(|o| o.id == prev.id))
            .map(|p| p + 1)
            .unwrap_or(0);
        out.insert(pos, s.clone());
    }
    out
}
