//! Validation (SPEC C3).
