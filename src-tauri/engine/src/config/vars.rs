//! Variable expansion (SPEC C7).
