//! What a failed command sends to the UI: `{ code, message }`, declared for
//! TypeScript as `CommandErrorPayload` and turned into a `CommandError` by
//! ui/src/lib/api.ts.

use serde::Serialize;
use switchboard_engine::error_code::ErrorCode;
use switchboard_engine::manager::{CallError, RegistryError};
use switchboard_engine::writer::edit::EditError;
use switchboard_engine::writer::history::UndoError;

#[derive(Debug, Clone, Serialize, PartialEq, Eq, ts_rs::TS)]
#[ts(rename = "CommandErrorPayload")]
pub struct CommandError {
    /// Stable, machine-readable: the UI may branch on it (`ErrorCode.NotFound`).
    pub code: ErrorCode,
    /// For people: names the file, server and field involved.
    pub message: String,
}

impl CommandError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
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

impl From<switchboard_engine::profile_apply::ApplyError> for CommandError {
    fn from(e: switchboard_engine::profile_apply::ApplyError) -> Self {
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
            RegistryError::Unknown(_) => ErrorCode::NotFound,
            RegistryError::NotConnected(_) => ErrorCode::NotConnected,
            RegistryError::UpdateFailed { .. } => ErrorCode::ConnectFailed,
            RegistryError::Mcp(_) => ErrorCode::Mcp,
            RegistryError::Refused(_) => ErrorCode::Refused,
        };
        CommandError::new(code, e.to_string())
    }
}

impl From<CallError> for CommandError {
    fn from(e: CallError) -> Self {
        let code = match &e {
            CallError::UnknownTool(_) => ErrorCode::NotFound,
            CallError::Disabled(_) => ErrorCode::Disabled,
            CallError::Mcp(_) => ErrorCode::Mcp,
            CallError::Aborted => ErrorCode::Aborted,
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
        CommandError::new(ErrorCode::Keychain, e.to_string())
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
        let json = serde_json::to_value(CommandError::new(
            ErrorCode::NotFound,
            "no server named \"x\"",
        ))
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"code": "not-found", "message": "no server named \"x\""})
        );
    }
}
