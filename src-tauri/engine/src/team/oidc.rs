//! TEMPORARY stand-in while the validator is written (replaced before commit).
use std::time::Duration;
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);
#[derive(Clone, Debug)]
pub struct OidcSettings {
    pub issuer: String,
    pub resource: String,
    pub groups_claim: String,
    pub leeway: Duration,
}
pub struct Validator;
#[derive(Debug, Clone)]
pub struct Identity {
    pub subject: String,
    pub groups: Vec<String>,
    pub scopes: Vec<String>,
    pub expires_at: u64,
}
#[derive(Debug)]
pub enum Refusal {
    Malformed,
    KeysUnavailable,
}
impl Refusal {
    pub fn label(&self) -> &'static str {
        "x"
    }
    pub fn reason(&self) -> String {
        String::new()
    }
    pub fn oauth_error(&self) -> &'static str {
        "invalid_token"
    }
}
pub fn http_client() -> reqwest::Client {
    reqwest::Client::new()
}
impl Validator {
    pub async fn discover(_s: OidcSettings, _h: reqwest::Client) -> Result<Validator, String> {
        Err("x".into())
    }
    pub async fn validate(&self, _t: &str) -> Result<Identity, Refusal> {
        Err(Refusal::Malformed)
    }
}
