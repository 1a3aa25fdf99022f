//! Switchboard's engine: everything the app does, without a GUI.
//!
//! files → `sources` → `discovery` → manager → events; changes go back to
//! files only through `writer`.

pub mod config;
pub mod writer;
