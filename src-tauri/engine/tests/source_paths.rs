//! Where each client's file is on Linux, macOS and Windows, resolved from an
//! injected host so all three are checked on any machine.

use std::collections::HashMap;
use std::path::PathBuf;

use switchboard_engine::host::{Host, Os};
use switchboard_engine::sources::{default_order, SourceSpec};

fn host(os: Os, home: &str, vars: &[(&str, &str)]) -> Host {
    Host {
        os,
        home: PathBuf::from(home),
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<HashMap<_, _>>(),
        system_root: PathBuf::from(if os == Os::Windows { "C:\\" } else { "/" }),
    }
}

fn path_of(sources: &[SourceSpec], id: &str) -> String {
    sources
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no source {id}"))
        .path
        .to_string_lossy()
        .to_string()
}

#[test]
fn linux_paths_follow_xdg() {
    let h = host(
        Os::Linux,
        "/home/me",
        &[("XDG_CONFIG_HOME", "/home/me/.xdg")],
    );
    let s = default_order(&h, &[]);
    assert_eq!(
        path_of(&s, "switchboard"),
        "/home/me/.xdg/switchboard/servers.json"
    );
    assert_eq!(
        path_of(&s, "claude-desktop"),
        "/home/me/.xdg/Claude/claude_desktop_config.json"
    );
    assert_eq!(path_of(&s, "claude-code-user"), "/home/me/.claude.json");
    assert_eq!(
        path_of(&s, "claude-code-managed"),
        "/etc/claude-code/managed-mcp.json"
    );
    assert_eq!(
        path_of(&s, "vscode-user"),
        "/home/me/.xdg/Code/User/mcp.json"
    );
    assert_eq!(path_of(&s, "zed-user"), "/home/me/.xdg/zed/settings.json");
    assert_eq!(path_of(&s, "cline"), "/home/me/.xdg/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json");
    assert_eq!(path_of(&s, "codex-user"), "/home/me/.codex/config.toml");
    assert_eq!(
        path_of(&s, "gemini-system"),
        "/etc/gemini-cli/settings.json"
    );
    assert_eq!(path_of(&s, "goose"), "/home/me/.config/goose/config.yaml");
}

#[test]
fn client_specific_overrides_are_honoured() {
    let h = host(
        Os::Linux,
        "/home/me",
        &[
            ("CODEX_HOME", "/opt/codex"),
            ("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "/srv/gemini.json"),
        ],
    );
    let s = default_order(&h, &[]);
    assert_eq!(path_of(&s, "codex-user"), "/opt/codex/config.toml");
    assert_eq!(path_of(&s, "gemini-system"), "/srv/gemini.json");
}

#[test]
fn macos_paths_use_application_support_where_clients_do() {
    let h = host(Os::Macos, "/Users/me", &[]);
    let s = default_order(&h, &[]);
    assert_eq!(
        path_of(&s, "switchboard"),
        "/Users/me/Library/Application Support/Switchboard/servers.json"
    );
    assert_eq!(
        path_of(&s, "claude-desktop"),
        "/Users/me/Library/Application Support/Claude/claude_desktop_config.json"
    );
    assert_eq!(
        path_of(&s, "claude-code-managed"),
        "/Library/Application Support/ClaudeCode/managed-mcp.json"
    );
    assert_eq!(
        path_of(&s, "vscode-user"),
        "/Users/me/Library/Application Support/Code/User/mcp.json"
    );
    assert_eq!(
        path_of(&s, "zed-user"),
        "/Users/me/.config/zed/settings.json",
        "Zed uses ~/.config on macOS"
    );
    assert_eq!(path_of(&s, "goose"), "/Users/me/.config/goose/config.yaml");
    assert_eq!(
        path_of(&s, "gemini-system"),
        "/Library/Application Support/GeminiCli/settings.json"
    );
}

#[test]
fn windows_paths_use_appdata_and_backslashes() {
    let h = host(
        Os::Windows,
        "C:\\Users\\me",
        &[("APPDATA", "C:\\Users\\me\\AppData\\Roaming")],
    );
    let s = default_order(&h, &[]);
    assert_eq!(
        path_of(&s, "switchboard"),
        "C:\\Users\\me\\AppData\\Roaming\\Switchboard\\servers.json"
    );
    assert_eq!(
        path_of(&s, "claude-desktop"),
        "C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json"
    );
    assert_eq!(
        path_of(&s, "claude-code-user"),
        "C:\\Users\\me\\.claude.json"
    );
    assert_eq!(
        path_of(&s, "claude-code-managed"),
        "C:\\Program Files\\ClaudeCode\\managed-mcp.json"
    );
    assert_eq!(
        path_of(&s, "cursor-user"),
        "C:\\Users\\me\\.cursor\\mcp.json"
    );
    assert_eq!(
        path_of(&s, "vscode-user"),
        "C:\\Users\\me\\AppData\\Roaming\\Code\\User\\mcp.json"
    );
    assert_eq!(
        path_of(&s, "zed-user"),
        "C:\\Users\\me\\AppData\\Roaming\\Zed\\settings.json"
    );
    assert_eq!(
        path_of(&s, "goose"),
        "C:\\Users\\me\\AppData\\Roaming\\Block\\goose\\config\\config.yaml"
    );
    assert_eq!(
        path_of(&s, "gemini-system"),
        "C:\\ProgramData\\gemini-cli\\settings.json"
    );
}

#[test]
fn project_sources_hang_off_the_project_folder() {
    let h = host(Os::Linux, "/home/me", &[]);
    let s = default_order(&h, &[PathBuf::from("/work/app")]);
    assert_eq!(
        path_of(&s, "claude-code-project@/work/app"),
        "/work/app/.mcp.json"
    );
    assert_eq!(
        path_of(&s, "vscode-project@/work/app"),
        "/work/app/.vscode/mcp.json"
    );
    assert_eq!(
        path_of(&s, "codex-project@/work/app"),
        "/work/app/.codex/config.toml"
    );
    assert_eq!(path_of(&s, "fallback@/work/app"), "/work/app/mcp.json");
    assert_eq!(
        s.last().unwrap().id,
        "fallback@/work/app",
        "the fallback is the lowest priority"
    );
    let local = s
        .iter()
        .find(|x| x.id == "claude-code-local@/work/app")
        .unwrap();
    assert_eq!(
        local.path,
        PathBuf::from("/home/me/.claude.json"),
        "local scope lives in ~/.claude.json"
    );
}
