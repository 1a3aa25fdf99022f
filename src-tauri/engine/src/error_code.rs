//! The one list of machine-readable error codes: what a failed command tells
//! the UI (`{ code, message }`) besides the sentence for people. Each error
//! type's `code()` returns one of these; the UI branches on them through the
//! generated TypeScript (`ErrorCode.NameTaken`), so a code cannot be misspelt
//! on either side. Serialized in kebab-case (`name-taken`).

use serde::{Deserialize, Serialize};

macro_rules! codes {
    ($($(#[$doc:meta])* $name:ident = $text:literal,)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        pub enum ErrorCode {
            $($(#[$doc])* #[serde(rename = $text)] $name,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$name,)*];

            /// The code as it is sent (`name-taken`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$name => $text,)*
                }
            }
        }
    };
}

codes! {
    /// Something the command was given is not valid (names the field).
    Invalid = "invalid",
    /// A file could not be read, written or opened.
    Io = "io",
    /// No server, source, entry or history item of that name or id.
    NotFound = "not-found",
    /// A server of that name is already defined there.
    AlreadyExists = "already-exists",
    /// The name is taken by a server the action may not replace.
    NameTaken = "name-taken",
    /// The file changed since it was read; nothing was written.
    Conflict = "conflict",
    /// The file does not parse; nothing was written.
    Unparsable = "unparsable",
    /// The file is one Switchboard only reads (managed, or another program's).
    ReadOnly = "read-only",
    /// The target cannot express what was asked (a transport, a field).
    Unsupported = "unsupported",
    /// A history entry's files are not as it left them.
    Damaged = "damaged",
    /// That history entry was undone already.
    AlreadyUndone = "already-undone",
    /// No such source id.
    UnknownSource = "unknown-source",
    /// No such client id.
    UnknownClient = "unknown-client",
    /// The client cannot reach the gateway over HTTP.
    NoHttp = "no-http",
    /// The server is not connected now.
    NotConnected = "not-connected",
    /// Connecting to the server failed.
    ConnectFailed = "connect-failed",
    /// The server answered with an MCP error.
    Mcp = "mcp",
    /// The tool or server is switched off.
    Disabled = "disabled",
    /// The user cancelled the call.
    Aborted = "aborted",
    /// The keychain refused or failed.
    Keychain = "keychain",
    /// There is no keychain on this machine (or it is locked).
    NoKeychain = "no-keychain",
    /// The bundled `switchboard` binary is missing.
    NoSidecar = "no-sidecar",
    /// The bundled `switchboard` binary did not answer as a gateway should.
    SidecarFailed = "sidecar-failed",
    /// A link Switchboard will not open.
    Refused = "refused",
    /// A port clients cannot be configured with.
    InvalidPort = "invalid-port",
    /// The MCP registry could not be reached (cached results shown).
    Offline = "offline",
    /// The MCP registry answered with an error.
    Registry = "registry",
    /// An install form lacks required values.
    MissingValues = "missing-values",
    /// Sign-in: the browser did not come back in time.
    OauthTimeout = "oauth-timeout",
    /// Sign-in failed (names the step).
    OauthFailed = "oauth-failed",
    /// Sign-in was cancelled.
    OauthCancelled = "oauth-cancelled",
    /// The server offers no authorization endpoints.
    OauthNoEndpoints = "oauth-no-endpoints",
    /// The server allows no dynamic registration and no client id is set.
    OauthNoRegistration = "oauth-no-registration",
    /// Only remote servers sign in.
    OauthNotRemote = "oauth-not-remote",
    /// The registered callback port is taken.
    OauthPortTaken = "oauth-port-taken",
    /// The registered redirect URI cannot be served.
    OauthBadRedirect = "oauth-bad-redirect",
    /// The authorization link is not one Switchboard opens.
    OauthRefusedLink = "oauth-refused-link",
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_kebab_case_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorCode::ALL {
            let s = c.as_str();
            assert!(
                s.chars().all(|ch| ch.is_ascii_lowercase() || ch == '-'),
                "{c:?} is sent as {s}"
            );
            assert!(seen.insert(s), "{s} twice");
            let back: ErrorCode = serde_json::from_value(serde_json::json!(s)).unwrap();
            assert_eq!(back, *c);
        }
        assert_eq!(ErrorCode::NameTaken, "name-taken");
        assert_eq!(
            ErrorCode::OauthNoRegistration.to_string(),
            "oauth-no-registration"
        );
    }
}
