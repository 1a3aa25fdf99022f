//! Authentication and secrets (SPEC A, C9).

pub mod accounts;
pub mod keepalive;
pub mod oauth;
pub mod secrets;
pub mod vault;
