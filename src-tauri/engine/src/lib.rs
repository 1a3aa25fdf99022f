//! Switchboard's engine: everything the app does, without a GUI.
//!
//! files → `sources` → `discovery` → manager → events; changes go back to
//! files only through `writer`.

pub mod config;
pub mod discovery;
pub mod host;
pub mod settings;
pub mod sources;
pub mod writer;
pub mod naming;
pub mod auth;
pub mod opener;
pub mod launch;
pub mod events;
pub mod redact;
pub mod manager;
pub mod sse_client;
pub mod watch;
pub mod trust;
pub mod projects;
pub mod engine;
pub mod gateway;
pub mod ports;
pub mod connect;
pub mod tool_trust;
pub mod doctor;
pub mod approvals;
pub mod registry;
