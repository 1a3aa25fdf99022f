//! The TypeScript contract: `ui/src/lib/types/generated.ts`, declared once.
//!
//! Every type a command returns or takes, and every event payload, derives
//! `ts_rs::TS` where it is defined: the engine's types behind the engine's
//! `ts` feature (this crate turns it on), the app's own in their modules.
//! The only shapes declared here are MCP's own objects (resources, prompts)
//! that reach the UI as the JSON a server sent. A test regenerates the file
//! and fails when the committed one differs.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// One entry of `list_resources().resources`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
    /// Bytes, when the server says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub size: Option<u64>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// One entry of `list_resources().resourceTemplates` (RFC 6570 `uriTemplate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateInfo {
    pub uri_template: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// `list_resources`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceList {
    pub resources: Vec<ResourceInfo>,
    pub resource_templates: Vec<ResourceTemplateInfo>,
}

/// One item of `read_resource().contents`: `text`, or base64 `blob`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContent {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub blob: Option<String>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// `read_resource`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ResourceRead {
    pub contents: Vec<ResourceContent>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PromptArgumentInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub required: Option<bool>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// One entry of `list_prompts().prompts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PromptInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub arguments: Option<Vec<PromptArgumentInfo>>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// `list_prompts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PromptList {
    pub prompts: Vec<PromptInfo>,
}

/// One message of a prompt; `content` is MCP content (`text`, `image`, `audio`, `resource`, `resource_link`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PromptMessageInfo {
    pub role: String,
    #[ts(type = "{ type: string; text?: string; mimeType?: string; [key: string]: unknown }")]
    pub content: Value,
}

/// `get_prompt`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PromptResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    pub messages: Vec<PromptMessageInfo>,
    #[serde(flatten)]
    #[ts(skip)]
    pub rest: serde_json::Map<String, Value>,
}

/// The whole of `ui/src/lib/types/generated.ts`.
pub fn typescript() -> String {
    let cfg = ts_rs::Config::new().with_large_int("number");
    let decls = [
        <switchboard_engine::config::Transport as TS>::decl(&cfg),
        <switchboard_engine::sources::Level as TS>::decl(&cfg),
        <switchboard_engine::writer::Format as TS>::decl(&cfg),
        <switchboard_engine::sources::Client as TS>::decl(&cfg),
        <switchboard_engine::config::AuthConfig as TS>::decl(&cfg),
        <switchboard_engine::config::OAuthApp as TS>::decl(&cfg),
        <switchboard_engine::config::RestartPolicy as TS>::decl(&cfg),
        <switchboard_engine::config::ServerDef as TS>::decl(&cfg),
        <switchboard_engine::events::ServerStatus as TS>::decl(&cfg),
        <switchboard_engine::manager::ServerState as TS>::decl(&cfg),
        <switchboard_engine::manager::PeerInfo as TS>::decl(&cfg),
        <switchboard_engine::team_servers::TeamServer as TS>::decl(&cfg),
        <switchboard_engine::team_servers::TeamTool as TS>::decl(&cfg),
        <switchboard_engine::doctor::FailureClass as TS>::decl(&cfg),
        <switchboard_engine::engine::CopyPlan as TS>::decl(&cfg),
        <switchboard_engine::doctor::Diagnosis as TS>::decl(&cfg),
        <switchboard_engine::discovery::ShadowedDef as TS>::decl(&cfg),
        <switchboard_engine::trust::TrustChange as TS>::decl(&cfg),
        <switchboard_engine::trust::Held as TS>::decl(&cfg),
        <switchboard_engine::engine::ServerView as TS>::decl(&cfg),
        <switchboard_engine::discovery::ParseError as TS>::decl(&cfg),
        <switchboard_engine::discovery::SourceInfo as TS>::decl(&cfg),
        <switchboard_engine::projects::Approved as TS>::decl(&cfg),
        <switchboard_engine::settings::ProjectFolder as TS>::decl(&cfg),
        <switchboard_engine::naming::ToolRef as TS>::decl(&cfg),
        <switchboard_engine::naming::Collision as TS>::decl(&cfg),
        <switchboard_engine::manager::ToolEntry as TS>::decl(&cfg),
        <switchboard_engine::manager::ToolIndex as TS>::decl(&cfg),
        <switchboard_engine::manager::CallOutcome as TS>::decl(&cfg),
        <switchboard_engine::manager::ServerError as TS>::decl(&cfg),
        <switchboard_engine::manager::ReconcileReport as TS>::decl(&cfg),
        <switchboard_engine::manager::StartupReport as TS>::decl(&cfg),
        <switchboard_engine::events::LogLine as TS>::decl(&cfg),
        <switchboard_engine::events::SignInPhase as TS>::decl(&cfg),
        <crate::commands::SignInStatus as TS>::decl(&cfg),
        <switchboard_engine::auth::accounts::Account as TS>::decl(&cfg),
        <crate::commands::AccountList as TS>::decl(&cfg),
        <crate::commands::ClientSecretStatus as TS>::decl(&cfg),
        <switchboard_engine::auth::accounts::StepUp as TS>::decl(&cfg),
        <switchboard_engine::events::EngineEvent as TS>::decl(&cfg),
        <crate::drops::Dropped as TS>::decl(&cfg),
        <crate::events::AppEvent as TS>::decl(&cfg),
        ResourceInfo::decl(&cfg),
        ResourceTemplateInfo::decl(&cfg),
        ResourceList::decl(&cfg),
        ResourceContent::decl(&cfg),
        ResourceRead::decl(&cfg),
        PromptArgumentInfo::decl(&cfg),
        PromptInfo::decl(&cfg),
        PromptList::decl(&cfg),
        PromptMessageInfo::decl(&cfg),
        PromptResult::decl(&cfg),
        <crate::probe::ProbeReport as TS>::decl(&cfg),
        <switchboard_engine::sources::text::EntryText as TS>::decl(&cfg),
        <switchboard_engine::writer::diff::LineKind as TS>::decl(&cfg),
        <switchboard_engine::writer::diff::DiffLine as TS>::decl(&cfg),
        <switchboard_engine::writer::history::FileChange as TS>::decl(&cfg),
        <switchboard_engine::writer::history::UndoState as TS>::decl(&cfg),
        <switchboard_engine::writer::history::HistoryEntry as TS>::decl(&cfg),
        <switchboard_engine::writer::history::UndoReport as TS>::decl(&cfg),
        <switchboard_engine::connect::HttpSupport as TS>::decl(&cfg),
        <switchboard_engine::connect::EntryState as TS>::decl(&cfg),
        <switchboard_engine::connect::ClientConnection as TS>::decl(&cfg),
        <switchboard_engine::connect::EntryAction as TS>::decl(&cfg),
        <switchboard_engine::connect::DuplicateServer as TS>::decl(&cfg),
        <switchboard_engine::connect::KeptServer as TS>::decl(&cfg),
        <switchboard_engine::connect::ConnectPlan as TS>::decl(&cfg),
        <switchboard_engine::connect::ConnectReport as TS>::decl(&cfg),
        <switchboard_engine::connect::DisconnectReport as TS>::decl(&cfg),
        <crate::sidecar::SidecarCheck as TS>::decl(&cfg),
        <crate::commands::Connected as TS>::decl(&cfg),
        <crate::commands::AppSettings as TS>::decl(&cfg),
        <crate::gateway::GatewayState as TS>::decl(&cfg),
        <switchboard_engine::settings::GatewaySettings as TS>::decl(&cfg),
        <switchboard_engine::settings::ServerDefaults as TS>::decl(&cfg),
        <switchboard_engine::gateway::SessionInfo as TS>::decl(&cfg),
        <switchboard_engine::gateway::activity::ToolCalls as TS>::decl(&cfg),
        <crate::gateway::GatewayStatus as TS>::decl(&cfg),
        <switchboard_engine::tool_trust::pins::ItemKind as TS>::decl(&cfg),
        <switchboard_engine::tool_trust::PinState as TS>::decl(&cfg),
        <switchboard_engine::tool_trust::scan::Severity as TS>::decl(&cfg),
        <switchboard_engine::settings::ApprovalMode as TS>::decl(&cfg),
        <switchboard_engine::tool_trust::scan::Finding as TS>::decl(&cfg),
        <switchboard_engine::tool_trust::ItemChanges as TS>::decl(&cfg),
        <switchboard_engine::tool_trust::ItemReview as TS>::decl(&cfg),
        <switchboard_engine::tool_trust::RemovedItem as TS>::decl(&cfg),
        <switchboard_engine::tool_trust::ServerReview as TS>::decl(&cfg),
        <switchboard_engine::tool_trust::TrustReport as TS>::decl(&cfg),
        <switchboard_engine::approvals::Approved as TS>::decl(&cfg),
        <switchboard_engine::profile::ToolRule as TS>::decl(&cfg),
        <switchboard_engine::profile::ProfileChange as TS>::decl(&cfg),
        <switchboard_engine::profiles::ToolCost as TS>::decl(&cfg),
        <switchboard_engine::profiles::ProfileServerView as TS>::decl(&cfg),
        <switchboard_engine::profiles::OverBudget as TS>::decl(&cfg),
        <switchboard_engine::profiles::ProfileView as TS>::decl(&cfg),
        <switchboard_engine::profile::Via as TS>::decl(&cfg),
        <switchboard_engine::profile_apply::ApplyReport as TS>::decl(&cfg),
        <switchboard_engine::profiles::ClientCost as TS>::decl(&cfg),
        <switchboard_engine::profile::ProfileServer as TS>::decl(&cfg),
        <switchboard_engine::profile_share::SecretRef as TS>::decl(&cfg),
        <switchboard_engine::profile_share::SecretKind as TS>::decl(&cfg),
        <switchboard_engine::profile_share::ImportOptions as TS>::decl(&cfg),
        <switchboard_engine::profile_share::ServerAction as TS>::decl(&cfg),
        <switchboard_engine::profile_share::ServerPlan as TS>::decl(&cfg),
        <switchboard_engine::profile_share::MissingRuntime as TS>::decl(&cfg),
        <switchboard_engine::profile_share::SecretToEnter as TS>::decl(&cfg),
        <switchboard_engine::profile_share::ImportPreview as TS>::decl(&cfg),
        <switchboard_engine::profile_share::ImportReport as TS>::decl(&cfg),
        <crate::share::ProfileSource as TS>::decl(&cfg),
        <crate::share::Exported as TS>::decl(&cfg),
        <switchboard_engine::registry::client::Offline as TS>::decl(&cfg),
        <switchboard_engine::journal::Via as TS>::decl(&cfg),
        <switchboard_engine::journal::Kind as TS>::decl(&cfg),
        <switchboard_engine::journal::Outcome as TS>::decl(&cfg),
        <switchboard_engine::journal::Entry as TS>::decl(&cfg),
        <switchboard_engine::journal::Filter as TS>::decl(&cfg),
        <switchboard_engine::journal::Page as TS>::decl(&cfg),
        <switchboard_engine::journal::ServerSeries as TS>::decl(&cfg),
        <switchboard_engine::journal::Latency as TS>::decl(&cfg),
        <switchboard_engine::journal::Aggregates as TS>::decl(&cfg),
        <switchboard_engine::journal::Stats as TS>::decl(&cfg),
        <switchboard_engine::journal::Format as TS>::decl(&cfg),
        <crate::activity::ActivityExport as TS>::decl(&cfg),
        <switchboard_engine::settings::JournalSettings as TS>::decl(&cfg),
        <crate::activity::JournalStatus as TS>::decl(&cfg),
        <switchboard_engine::settings::TelemetrySettings as TS>::decl(&cfg),
        <switchboard_engine::journal::TelemetryStats as TS>::decl(&cfg),
        <crate::activity::TelemetryStatus as TS>::decl(&cfg),
        <switchboard_engine::settings::ResultMode as TS>::decl(&cfg),
        <crate::catalog::CatalogEntry as TS>::decl(&cfg),
        <crate::catalog::CatalogPage as TS>::decl(&cfg),
        <crate::catalog::CatalogVersion as TS>::decl(&cfg),
        <switchboard_engine::registry::install::Choice as TS>::decl(&cfg),
        <switchboard_engine::registry::install::FieldGroup as TS>::decl(&cfg),
        <switchboard_engine::registry::install::Field as TS>::decl(&cfg),
        <switchboard_engine::registry::install::InstallForm as TS>::decl(&cfg),
        <crate::catalog::CatalogServer as TS>::decl(&cfg),
        <switchboard_engine::registry::apply::RuntimeCheck as TS>::decl(&cfg),
        <switchboard_engine::registry::apply::InstallReport as TS>::decl(&cfg),
        <switchboard_engine::install_link::LinkKind as TS>::decl(&cfg),
        <switchboard_engine::install_link::SnippetShape as TS>::decl(&cfg),
        <switchboard_engine::install_link::Origin as TS>::decl(&cfg),
        <switchboard_engine::install_link::InputKind as TS>::decl(&cfg),
        <switchboard_engine::install_link::Input as TS>::decl(&cfg),
        <switchboard_engine::install_link::InlineSecret as TS>::decl(&cfg),
        <switchboard_engine::install_link::WarningKind as TS>::decl(&cfg),
        <switchboard_engine::install_link::LinkWarning as TS>::decl(&cfg),
        <switchboard_engine::install_link::LinkServer as TS>::decl(&cfg),
        <switchboard_engine::install_link::RegistryRef as TS>::decl(&cfg),
        <switchboard_engine::install_link::LinkInstall as TS>::decl(&cfg),
        <switchboard_engine::registry::link::LinkInstalled as TS>::decl(&cfg),
        <switchboard_engine::bundle::SignatureStatus as TS>::decl(&cfg),
        <switchboard_engine::bundle::ConfigType as TS>::decl(&cfg),
        <switchboard_engine::bundle::BundleField as TS>::decl(&cfg),
        <switchboard_engine::bundle::InstalledCopy as TS>::decl(&cfg),
        <switchboard_engine::bundle::BundleView as TS>::decl(&cfg),
        <switchboard_engine::bundle::UnpackState as TS>::decl(&cfg),
        <switchboard_engine::bundle::BundleProgress as TS>::decl(&cfg),
        <switchboard_engine::bundle::BundlePreview as TS>::decl(&cfg),
        <switchboard_engine::bundle::CleanedUp as TS>::decl(&cfg),
        <switchboard_engine::bundle::BundleInstalled as TS>::decl(&cfg),
        <switchboard_engine::bundle::BundleOrigin as TS>::decl(&cfg),
        <crate::catalog::RegistrySettings as TS>::decl(&cfg),
        <crate::commands::AppInfo as TS>::decl(&cfg),
        <switchboard_engine::error_code::ErrorCode as TS>::decl(&cfg),
        <crate::error::CommandError as TS>::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from the Rust types by `cargo test -p switchboard-app types`.\n\
         // Do not edit: change the Rust side and run that test with UPDATE_TYPES=1.\n\n\
         /** A JSON Schema object (tool input, elicitation request). */\n\
         export type JsonSchema = { [key: string]: unknown };\n\n\
         /** Everything on the app's event channel: the engine's events and the app's own. */\n\
         export type ChannelEvent = EngineEvent | AppEvent;\n",
    );
    for d in decls {
        out.push_str("\nexport ");
        out.push_str(&d);
        out.push('\n');
    }
    // The codes as values too, so the UI names them (`ErrorCode.NameTaken`)
    // instead of repeating their spelling.
    out.push_str("\n/** Every `ErrorCode` by its Rust name. */\nexport const ErrorCode = {\n");
    for c in switchboard_engine::error_code::ErrorCode::ALL {
        out.push_str(&format!("  {c:?}: '{}',\n", c.as_str()));
    }
    out.push_str("} as const;\n");
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::PathBuf;

    fn generated_path() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/types/generated.ts")
    }

    /// Fails when the committed TypeScript differs from the Rust types;
    /// `UPDATE_TYPES=1` rewrites it instead.
    #[test]
    fn generated_typescript_is_up_to_date() {
        let want = typescript();
        let path = generated_path();
        if std::env::var_os("UPDATE_TYPES").is_some() {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(have == want, "{} is out of date: run `UPDATE_TYPES=1 cargo test -p switchboard-app types` and commit it", path.display());
    }

    /// `engine` serialized, read as the mirror `T`, serialized again: equal.
    pub(crate) fn assert_mirrors<T: serde::de::DeserializeOwned + Serialize>(
        what: &str,
        engine: Value,
    ) {
        let mirror: T = serde_json::from_value(engine.clone())
            .unwrap_or_else(|e| panic!("{what}: the TS mirror cannot read {engine}: {e}"));
        let back = serde_json::to_value(&mirror).unwrap();
        assert_eq!(
            back, engine,
            "{what}: the TS mirror loses or renames fields"
        );
    }
}
