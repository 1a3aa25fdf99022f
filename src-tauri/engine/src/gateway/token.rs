//! The HTTP gateway's bearer token: generated once, kept in the OS
//! keychain (never in a file), overridable with `SWITCHBOARD_GATEWAY_TOKEN`
//! for machines without a keychain. Compared in constant time; never logged
//! (its `Debug` shows no value).

use sha2::{Digest, Sha256};

use crate::auth::vault::{SecretBackend, VaultError};

/// Environment variable that, when set and not empty, is the token.
pub const TOKEN_ENV: &str = "SWITCHBOARD_GATEWAY_TOKEN";
/// Keychain account of the generated token (service `Switchboard MCP
/// sign-in`, like sign-ins; no server's items start with `gateway:`).
pub const TOKEN_ACCOUNT: &str = "gateway:token";
/// A token given in the environment must be at least this long.
const MIN_LEN: usize = 16;

#[derive(Clone)]
pub struct GatewayToken {
    value: String,
    /// Where it came from, for messages.
    pub origin: TokenOrigin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenOrigin {
    Environment,
    Keychain,
    /// Generated now and stored in the keychain.
    Created,
}

impl std::fmt::Debug for GatewayToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayToken")
            .field("value", &"•••")
            .field("origin", &self.origin)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "{TOKEN_ENV} is too short: use at least {MIN_LEN} characters (e.g. `openssl rand -hex 32`)"
    )]
    TooShort,
    #[error("cannot keep the gateway token: {0}. Set {TOKEN_ENV} to a long random value instead (e.g. `export {TOKEN_ENV}=$(openssl rand -hex 32)`)")]
    Keychain(VaultError),
    #[error("cannot generate a random token: {0}")]
    Random(String),
}

impl GatewayToken {
    /// The token for this machine: `env` (the value of [`TOKEN_ENV`]) when
    /// set, else the one in the keychain, generated and stored on first use.
    pub fn resolve(
        env: Option<String>,
        keychain: &dyn SecretBackend,
    ) -> Result<GatewayToken, TokenError> {
        if let Some(v) = env.map(|v| v.trim().to_string()).filter(|v| !v.is_empty()) {
            if v.len() < MIN_LEN {
                return Err(TokenError::TooShort);
            }
            return Ok(GatewayToken {
                value: v,
                origin: TokenOrigin::Environment,
            });
        }
        if let Some(v) = keychain
            .get(TOKEN_ACCOUNT)
            .map_err(TokenError::Keychain)?
            .filter(|v| !v.is_empty())
        {
            return Ok(GatewayToken {
                value: v,
                origin: TokenOrigin::Keychain,
            });
        }
        let value = generate()?;
        keychain
            .set(TOKEN_ACCOUNT, &value)
            .map_err(TokenError::Keychain)?;
        Ok(GatewayToken {
            value,
            origin: TokenOrigin::Created,
        })
    }

    /// This process's token: the environment, else the OS keychain.
    pub fn for_this_machine() -> Result<GatewayToken, TokenError> {
        Self::resolve(std::env::var(TOKEN_ENV).ok(), &crate::auth::vault::Keychain)
    }

    /// A token that is exactly `value` (tests, the app's own settings).
    pub fn fixed(value: impl Into<String>) -> GatewayToken {
        GatewayToken {
            value: value.into(),
            origin: TokenOrigin::Environment,
        }
    }

    /// The value, to print for the user (`switchboard gateway token`) or to
    /// write into a client's entry. Nowhere else.
    pub fn reveal(&self) -> &str {
        &self.value
    }

    /// Whether an `Authorization` header value carries this token. Both sides
    /// are hashed first, so the comparison takes the same time whatever the
    /// length or the first differing byte.
    pub fn accepts(&self, authorization: Option<&str>) -> bool {
        let Some(h) = authorization else { return false };
        let Some((scheme, presented)) = h.trim().split_once(' ') else {
            return false;
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            return false;
        }
        let a = Sha256::digest(presented.trim().as_bytes());
        let b = Sha256::digest(self.value.as_bytes());
        a.iter()
            .zip(b.iter())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
    }
}

/// 32 random bytes as 64 hex digits.
fn generate() -> Result<String, TokenError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    Ok(hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::vault::MemoryBackend;

    #[test]
    fn generated_once_then_read_back_and_the_environment_wins() {
        let store = MemoryBackend::default();
        let first = GatewayToken::resolve(None, &store).unwrap();
        assert_eq!(first.origin, TokenOrigin::Created);
        assert_eq!(first.reveal().len(), 64);
        let again = GatewayToken::resolve(None, &store).unwrap();
        assert_eq!(
            (again.origin, again.reveal()),
            (TokenOrigin::Keychain, first.reveal())
        );
        let env = GatewayToken::resolve(Some("0123456789abcdef-env".into()), &store).unwrap();
        assert_eq!(
            (env.origin, env.reveal()),
            (TokenOrigin::Environment, "0123456789abcdef-env")
        );
        assert!(matches!(
            GatewayToken::resolve(Some("short".into()), &store),
            Err(TokenError::TooShort)
        ));
        assert!(!format!("{first:?}").contains(first.reveal()));
    }

    #[test]
    fn only_the_exact_bearer_token_is_accepted() {
        let t = GatewayToken::fixed("s3cret-token-value");
        assert!(t.accepts(Some("Bearer s3cret-token-value")));
        assert!(t.accepts(Some("bearer s3cret-token-value")));
        for bad in [
            None,
            Some(""),
            Some("Bearer"),
            Some("Bearer s3cret-token-valu"),
            Some("Bearer s3cret-token-value2"),
            Some("Basic s3cret-token-value"),
            Some("s3cret-token-value"),
        ] {
            assert!(!t.accepts(bad), "{bad:?}");
        }
    }
}
