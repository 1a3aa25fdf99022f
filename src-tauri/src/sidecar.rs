//! The `switchboard` command-line binary shipped beside the app (a Tauri
//! sidecar: `bundle.externalBin` in `tauri.bundle.json`, installed next to
//! `switchboard-app`). A client connected over stdio runs `<it> serve`, so
//! before writing such an entry the app starts it exactly that way, through
//! tauri-plugin-shell's sidecar API, and completes an MCP handshake and a
//! `tools/list` with it. Only Rust starts it: the window is granted no shell
//! permission at all.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};
use tauri::Runtime;
use tauri_plugin_shell::process::CommandEvent;
use tauri_plugin_shell::ShellExt;

/// The sidecar's name (its file next to the app's executable).
pub const NAME: &str = "switchboard";
/// Longest wait for each answer of the check.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(15);

/// What the check found, for the Connect dialog.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SidecarCheck {
    pub ok: bool,
    /// The binary a stdio entry runs.
    pub path: String,
    /// From the handshake: the gateway's name and version.
    pub server: Option<String>,
    /// Tools it listed (servers still starting may add more later).
    pub tools: Option<usize>,
    /// For people: what worked, or what failed and what to do.
    pub message: String,
}

/// The absolute path of the sidecar: beside this executable. Refused when
/// that path will not exist later (an AppImage's files vanish when it exits).
pub fn path() -> Result<PathBuf, String> {
    if std::env::var_os("APPIMAGE").is_some() {
        return Err("Switchboard runs from an AppImage, whose files disappear when it quits: connect over HTTP instead, or install the .deb".to_string());
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot tell where Switchboard is installed: {e}"))?;
    let dir = exe
        .parent()
        .ok_or("cannot tell where Switchboard is installed")?;
    let dir = if dir.ends_with("deps") {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    let p = dir.join(if cfg!(windows) {
        "switchboard.exe"
    } else {
        NAME
    });
    if !p.is_file() {
        return Err(format!("the switchboard command-line program is missing at {} (reinstall Switchboard, or build it: cargo build -p switchboard-engine --bin switchboard)", p.display()));
    }
    Ok(p)
}

/// Start `switchboard serve` as a client would and talk MCP with it.
pub async fn check<R: Runtime>(app: &tauri::AppHandle<R>) -> SidecarCheck {
    let path = match path() {
        Ok(p) => p,
        Err(message) => {
            return SidecarCheck {
                ok: false,
                path: String::new(),
                server: None,
                tools: None,
                message,
            }
        }
    };
    let shown = path.display().to_string();
    match handshake(app).await {
        Ok((server, tools)) => SidecarCheck {
            ok: true,
            path: shown.clone(),
            message: format!("{shown} serve answered as {server} with {tools} tools."),
            server: Some(server),
            tools: Some(tools),
        },
        Err(e) => SidecarCheck {
            ok: false,
            path: shown.clone(),
            server: None,
            tools: None,
            message: format!("{shown} serve did not work: {e}"),
        },
    }
}

async fn handshake<R: Runtime>(app: &tauri::AppHandle<R>) -> Result<(String, usize), String> {
    let cmd = app
        .shell()
        .sidecar(NAME)
        .map_err(|e| e.to_string())?
        .args(["serve"])
        .set_raw_out(false);
    let (mut events, mut child) = cmd.spawn().map_err(|e| format!("cannot start it: {e}"))?;
    // Each step goes to the app's log: a check that hangs says where.
    let (started, pid) = (std::time::Instant::now(), child.pid());
    let step = |what: &str| {
        eprintln!(
            "switchboard: sidecar check (pid {pid}): {what} after {} ms",
            started.elapsed().as_millis()
        )
    };
    step("started");
    let result = async {
        let mut send = |v: Value| child.write(format!("{v}\n").as_bytes()).map_err(|e| format!("cannot write to it: {e}"));
        send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "switchboard-app-check", "version": env!("CARGO_PKG_VERSION")}
        }}))?;
        let init = answer(&mut events, 1).await?;
        step("initialize answered");
        let info = &init["serverInfo"];
        let server = format!("{} {}", info["name"].as_str().unwrap_or("?"), info["version"].as_str().unwrap_or(""));
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))?;
        let tools = answer(&mut events, 2).await?["tools"].as_array().map_or(0, Vec::len);
        step(&format!("tools/list answered ({tools} tools)"));
        Ok((server.trim().to_string(), tools))
    }
    .await;
    if let Err(e) = &result {
        step(&format!("failed: {e}"));
    }
    // It started servers of its own for the check: its process group goes.
    let _ = child.kill();
    result
}

/// The result of request `id`, skipping notifications; stderr is kept for the error.
async fn answer(
    events: &mut tauri::async_runtime::Receiver<CommandEvent>,
    id: u64,
) -> Result<Value, String> {
    let mut stderr = String::new();
    let wait = async {
        while let Some(ev) = events.recv().await {
            match ev {
                CommandEvent::Stdout(line) => {
                    let Ok(v) = serde_json::from_slice::<Value>(&line) else {
                        continue;
                    };
                    if v["id"].as_u64() == Some(id) {
                        if let Some(e) = v.get("error") {
                            return Err(format!(
                                "it answered with an error: {}",
                                e["message"].as_str().unwrap_or("?")
                            ));
                        }
                        return Ok(v["result"].clone());
                    }
                }
                CommandEvent::Stderr(line) if stderr.len() < 2000 => {
                    stderr.push_str(&String::from_utf8_lossy(&line));
                    stderr.push('\n');
                }
                CommandEvent::Terminated(t) => {
                    return Err(format!("it exited (code {:?}): {}", t.code, stderr.trim()))
                }
                CommandEvent::Error(e) => return Err(e),
                _ => {}
            }
        }
        Err(format!("it closed its output: {}", stderr.trim()))
    };
    tokio::time::timeout(ANSWER_TIMEOUT, wait)
        .await
        .map_err(|_| format!("no answer within {} s", ANSWER_TIMEOUT.as_secs()))?
}
