//! Authentication and secrets (SPEC A, C9).

pub mod secrets;
