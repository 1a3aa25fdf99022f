//! What a failed command sends to the UI: `{ code, message }`, mirrored by
//! `CommandErrorPayload` in ui/src/lib/types and turned into a `CommandError`
//! by ui/src/lib/api.ts.

use serde::Serialize;
use switchboard_engine::manager::{CallError, RegistryError};
use switchboard_engine::writer::edit::EditError;
use switchboard_engine::writer::history::UndoError;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct CommandError {
    /// Stable, machine-readable: the UI may branch on it (`config_invalid`, `not_found`, …).
    pub code: String,
    /// For people: names the file, server and field involved.
    pub message: String,
}

impl CommandError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for CommandError {}

impl From<EditError> for CommandError {
    fn from(e: EditError) -> Self {
        CommandError::new(e.code(), e.to_string())
    }
}

impl From<UndoError> for CommandError {
    fn from(e: UndoError) -> Self {
        CommandError::new(e.code(), e.to_string())
    }
}

impl From<RegistryError> for CommandError {
    fn from(e: RegistryError) -> Self {
        let code = match &e {
            RegistryError::Unknown(_) => "not-found",
            RegistryError::NotConnected(_) => "not-connected",
            RegistryError::UpdateFailed { .. } => "connect-failed",
            RegistryError::Mcp(_) => "mcp",
        };
        CommandError::new(code, e.to_string())
    }
}

impl From<CallError> for CommandError {
    fn from(e: CallError) -> Self {
        let code = match &e {
            CallError::UnknownTool(_) => "not-found",
            CallError::Disabled(_) => "disabled",
            CallError::Mcp(_) => "mcp",
            CallError::Aborted => "aborted",
        };
        CommandError::new(code, e.to_string())
    }
}

impl From<switchboard_engine::auth::oauth::SignInError> for CommandError {
    fn from(e: switchboard_engine::auth::oauth::SignInError) -> Self {
        CommandError::new(e.code(), e.to_string())
    }
}

impl From<switchboard_engine::auth::vault::VaultError> for CommandError {
    fn from(e: switchboard_engine::auth::vault::VaultError) -> Self {
        CommandError::new("keychain", e.to_string())
    }
}

/// Result type of fallible commands.
pub type CommandResult<T> = std::result::Result<T, CommandError>;

impl From<switchboard_engine::connect::ConnectError> for CommandError {
    fn from(e: switchboard_engine::connect::ConnectError) -> Self {
        CommandError::new(e.code(), e.to_string())
    }
}

impl From<switchboard_engine::approvals::ApproveError> for CommandError {
    fn from(e: switchboard_engine::approvals::ApproveError) -> Self {
        CommandError::new(e.code(), e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_as_code_and_message_for_the_ui() {
        let json =
            serde_json::to_value(CommandError::new("not_found", "no server named \"x\"")).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"code": "not_found", "message": "no server named \"x\""})
        );
    }
}
