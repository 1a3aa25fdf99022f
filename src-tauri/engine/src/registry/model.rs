//! The shapes the MCP Registry publishes: `server.json` (schemas 2025-09-29
//! through 2025-12-11) and the v0.1 API's responses around it. Every field
//! is optional where a registry could leave it out, and unknown fields are
//! ignored: a registry is a stranger's server, so reading one entry never
//! fails because another field changed.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// The key of the registry's own metadata in an API response's `_meta`.
pub const OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";

/// One `server.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Reverse-DNS name with one `/`: `io.github.user/weather`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Repository>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<Package>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remotes: Vec<Remote>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Repository {
    #[serde(default)]
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subfolder: Option<String>,
}

/// How to run the server locally from a package registry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// `npm`, `pypi`, `oci`, `nuget`, `mcpb`.
    pub registry_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_base_url: Option<String>,
    /// Package name; for `oci` the image reference, for `mcpb` a download URL.
    pub identifier: String,
    /// Required for npm/pypi/nuget; optional since 2025-10-11 for oci (the
    /// tag is in the identifier) and mcpb.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_sha256: Option<String>,
    /// `npx`, `uvx`, `docker`, `dnx`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_hint: Option<String>,
    #[serde(default)]
    pub transport: PackageTransport,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runtime_arguments: Vec<Argument>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub package_arguments: Vec<Argument>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment_variables: Vec<KeyValueInput>,
}

/// A package's transport: `stdio`, or a local `streamable-http` / `sse`
/// endpoint the package serves once started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageTransport {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<KeyValueInput>,
}

impl Default for PackageTransport {
    fn default() -> Self {
        PackageTransport {
            kind: "stdio".into(),
            url: None,
            headers: vec![],
        }
    }
}

/// How to reach a hosted server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remote {
    /// `streamable-http` or `sse`.
    #[serde(rename = "type")]
    pub kind: String,
    /// May hold `{variables}` (2025-12-11).
    pub url: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<KeyValueInput>,
    /// URL template variables (2025-12-11).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub variables: IndexMap<String, Input>,
}

/// One value the user may be asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub is_required: bool,
    /// `string` (default), `number`, `boolean`, `filepath`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Set by the publisher: not for the user to change (its `{variables}` are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default)]
    pub is_secret: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
}

/// An input whose `value` may hold `{variables}`, each an input itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputWithVariables {
    #[serde(flatten)]
    pub input: Input,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub variables: IndexMap<String, Input>,
}

/// An environment variable or a header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyValueInput {
    pub name: String,
    #[serde(flatten)]
    pub input: InputWithVariables,
}

/// A command-line argument: `positional` (the value alone) or `named`
/// (`--flag value`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The flag of a named argument, with its dashes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A positional argument's label (not part of the command line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_hint: Option<String>,
    #[serde(default)]
    pub is_repeated: bool,
    #[serde(flatten)]
    pub input: InputWithVariables,
}

/// `active`, `deprecated` or `deleted` (the registry's own word; anything
/// else it may add later is shown as it is).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfficialMeta {
    #[serde(default = "active")]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    #[serde(default)]
    pub is_latest: bool,
}

fn active() -> String {
    "active".into()
}

/// One entry of an API response: the `server.json` and the registry's
/// metadata about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerResponse {
    pub server: ServerJson,
    #[serde(rename = "_meta", default)]
    pub meta: serde_json::Map<String, serde_json::Value>,
}

impl ServerResponse {
    /// The registry's status metadata (an entry without it is active).
    pub fn official(&self) -> OfficialMeta {
        self.meta
            .get(OFFICIAL_META)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_else(|| OfficialMeta {
                status: active(),
                ..Default::default()
            })
    }
}

/// `GET /v0.1/servers` and `/versions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerList {
    #[serde(default)]
    pub servers: Vec<serde_json::Value>,
    #[serde(default)]
    pub metadata: ListMetadata,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}
