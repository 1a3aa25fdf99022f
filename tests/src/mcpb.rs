//! The real `@anthropic-ai/mcpb` CLI from tests/npm, for tests that pack and
//! sign `.mcpb` bundles.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The mcpb CLI from tests/npm, or `None` (skip) locally; panics under CI.
pub fn mcpb_cli(test: &str) -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("npm/node_modules/.bin/mcpb");
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if bin.exists() && node {
        return Some(bin);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{test}: {} or node is missing; .ci/test runs npm ci in tests/npm",
            bin.display()
        );
    }
    eprintln!("SKIPPED {test}: run `npm ci` in tests/npm (and have node on PATH)");
    None
}

/// Runs `mcpb ARGS` in `cwd`; panics with its output when it fails.
pub fn mcpb(cli: &Path, cwd: &Path, args: &[&str]) {
    let out = Command::new(cli)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run mcpb");
    assert!(
        out.status.success(),
        "mcpb {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The API key the hello bundle's server starts with.
pub const HELLO_SECRET: &str = "mcpb-secret-4c1f";

const HELLO_MANIFEST: &str = r#"{
  "manifest_version": "0.3",
  "name": "hello-bundle",
  "display_name": "Hello bundle",
  "version": "1.2.0",
  "description": "A fixture for Switchboard's tests",
  "author": { "name": "Switchboard tests" },
  "server": {
    "type": "node",
    "entry_point": "server/index.js",
    "mcp_config": {
      "command": "node",
      "args": ["${__dirname}/server/index.js", "--greeting", "${user_config.greeting}"],
      "env": { "API_KEY": "${user_config.api_key}" }
    }
  },
  "user_config": {
    "api_key": { "type": "string", "title": "API key", "description": "The key", "sensitive": true, "required": true },
    "greeting": { "type": "string", "title": "Greeting", "description": "Said first", "default": "hello" }
  },
  "compatibility": { "platforms": ["darwin", "win32", "linux"], "runtimes": { "node": ">=16.0.0" } }
}"#;

/// A newline-delimited JSON-RPC MCP server that starts only with the right
/// API_KEY (checked by its hash, so the secret is in no file).
pub fn hello_server_js() -> String {
    use sha2::Digest;
    let hash: String = sha2::Sha256::digest(HELLO_SECRET.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        r#"const key = process.env.API_KEY || "";
if (require("crypto").createHash("sha256").update(key).digest("hex") !== "{hash}") {{
  process.stderr.write("API_KEY is missing or wrong\n");
  process.exit(3);
}}
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
require("readline").createInterface({{ input: process.stdin }}).on("line", (line) => {{
  let m;
  try {{ m = JSON.parse(line); }} catch {{ return; }}
  if (m.id === undefined) return;
  if (m.method === "initialize") send({{ jsonrpc: "2.0", id: m.id, result: {{ protocolVersion: m.params.protocolVersion, capabilities: {{ tools: {{}} }}, serverInfo: {{ name: "hello-bundle", version: "1.2.0" }} }} }});
  else if (m.method === "tools/list") send({{ jsonrpc: "2.0", id: m.id, result: {{ tools: [{{ name: "say_hello", description: "Says hello", inputSchema: {{ type: "object", properties: {{}} }} }}] }} }});
  else if (m.method === "ping") send({{ jsonrpc: "2.0", id: m.id, result: {{}} }});
  else send({{ jsonrpc: "2.0", id: m.id, error: {{ code: -32601, message: "no such method" }} }});
}});
"#
    )
}

/// The hello bundle's manifest at `version` (`hello-bundle`: a sensitive
/// required `api_key` in the environment, a `greeting` argument with a default).
pub fn hello_manifest(version: &str) -> String {
    HELLO_MANIFEST.replace("\"1.2.0\"", &format!("\"{version}\""))
}

/// Packs the hello extension at `version` into `unsigned.mcpb` and a
/// self-signed copy `signed.mcpb` in `dir` (its sources in `dir/ext`).
pub fn hello_bundles(cli: &Path, dir: &Path, version: &str) -> anyhow::Result<(PathBuf, PathBuf)> {
    let ext = dir.join("ext");
    std::fs::create_dir_all(ext.join("server"))?;
    std::fs::write(ext.join("manifest.json"), hello_manifest(version))?;
    std::fs::write(ext.join("server/index.js"), hello_server_js())?;
    mcpb(cli, dir, &["pack", "ext", "unsigned.mcpb"]);
    std::fs::copy(dir.join("unsigned.mcpb"), dir.join("signed.mcpb"))?;
    mcpb(cli, dir, &["sign", "signed.mcpb", "--self-signed"]);
    Ok((dir.join("unsigned.mcpb"), dir.join("signed.mcpb")))
}
