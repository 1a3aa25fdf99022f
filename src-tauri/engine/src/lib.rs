//! Switchboard's engine: everything the app does, without a GUI.
//!
//! files → `sources` → `discovery` → manager → events; changes go back to
//! files only through `writer`.

pub mod approvals;
pub mod auth;
pub mod bundle;
pub mod config;
pub mod connect;
pub mod discovery;
pub mod doctor;
pub mod engine;
pub mod error_code;
pub mod events;
pub mod file_watch;
pub mod gateway;
pub mod host;
pub mod install_link;
pub mod journal;
pub mod launch;
pub mod manager;
pub mod memory;
pub mod naming;
pub mod opener;
pub mod parallel;
pub mod ports;
pub mod profile;
pub mod profile_apply;
pub mod profile_share;
pub mod profiles;
pub mod projects;
pub mod redact;
pub mod registry;
pub mod settings;
pub mod sources;
pub mod sse_client;
pub mod team;
pub mod team_servers;
pub mod tokens;
pub mod tool_trust;
pub mod trust;
pub mod watch;
pub mod writer;
