//! The canonical server model (SPEC C1), transport inference (C2),
//! validation (C3) and variable expansion (C7).

pub mod model;
pub mod patch;
pub mod validate;
pub mod vars;

pub use model::*;
pub use patch::{Field, ServerPatch};
