//! Authentication and secrets: OAuth sign-in to remote servers, where its
//! tokens are kept, and secret values in `env` and `headers`.

pub mod accounts;
pub mod keepalive;
pub mod oauth;
pub mod secrets;
pub mod vault;
