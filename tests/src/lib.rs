//! Shared helpers for the workspace end-to-end tests.
