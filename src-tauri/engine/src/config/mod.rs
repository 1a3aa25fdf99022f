//! The canonical server model (`ServerDef`), transport inference, validation
//! of structure and variable expansion. It names no other engine module.

pub mod model;
pub mod patch;
pub mod validate;
pub mod vars;

pub use model::*;
pub use patch::{Field, ServerPatch};
