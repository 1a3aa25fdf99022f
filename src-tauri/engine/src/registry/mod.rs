//! The MCP Registry: finding servers in the official registry (or
//! a company's subregistry with the same v0.1 API) and installing them.
//!
//! - `model`: `server.json` and the API's responses, read leniently.
//! - `client`: the HTTP client (timeouts, polite retries, disk cache,
//!   offline answers from the cache).
//! - `install`: a server.json's package or remote as a form and, with the
//!   user's values, as a `ServerDef` (exact versions, argv lists).
//! - `apply`: the engine's install and "keep in keychain" operations.
//! - `link`: an install link's (or pasted entry's) server installed the same way.

pub mod apply;
pub mod client;
pub mod install;
pub mod link;
pub mod model;

pub use client::{RegistryClient, RegistryError, DEFAULT_REGISTRY, REGISTRY_ENV};
pub use install::{Choice, InstallForm};
pub use model::{ServerJson, ServerResponse};
