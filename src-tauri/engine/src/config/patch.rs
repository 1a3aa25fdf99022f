//! `ServerPatch`: an edit as the fields it changes. A form shows some of a
//! definition's fields; replacing the whole definition with what the form
//! rebuilt would drop the rest (and every key the client has that Switchboard
//! does not know). A patch carries only what the user changed, so the writer
//! touches only those keys.

use serde::{Deserialize, Serialize};

use crate::config::ServerDef;

/// A field of `ServerDef`, by its serialized (camelCase) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Field {
    Name,
    Transport,
    Command,
    Args,
    Env,
    Cwd,
    Url,
    Headers,
    Enabled,
    Timeout,
    AutoApprove,
    Auth,
    #[serde(rename = "oauth")]
    OAuth,
    RestartPolicy,
}

impl Field {
    pub const ALL: [Field; 14] = [
        Field::Name,
        Field::Transport,
        Field::Command,
        Field::Args,
        Field::Env,
        Field::Cwd,
        Field::Url,
        Field::Headers,
        Field::Enabled,
        Field::Timeout,
        Field::AutoApprove,
        Field::Auth,
        Field::OAuth,
        Field::RestartPolicy,
    ];

    /// The name as `ServerDef` serializes it (what the UI uses).
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Transport => "transport",
            Field::Command => "command",
            Field::Args => "args",
            Field::Env => "env",
            Field::Cwd => "cwd",
            Field::Url => "url",
            Field::Headers => "headers",
            Field::Enabled => "enabled",
            Field::Timeout => "timeout",
            Field::AutoApprove => "autoApprove",
            Field::Auth => "auth",
            Field::OAuth => "oauth",
            Field::RestartPolicy => "restartPolicy",
        }
    }

    /// Whether `a` and `b` differ in this field.
    pub fn differs(self, a: &ServerDef, b: &ServerDef) -> bool {
        match self {
            Field::Name => a.name != b.name,
            Field::Transport => a.transport != b.transport,
            Field::Command => a.command != b.command,
            Field::Args => a.args != b.args,
            // Order matters to the file (and to people reading it), so a
            // reordered map is a change even though IndexMap equality ignores order.
            Field::Env => !a.env.iter().eq(b.env.iter()),
            Field::Cwd => a.cwd != b.cwd,
            Field::Url => a.url != b.url,
            Field::Headers => !a.headers.iter().eq(b.headers.iter()),
            Field::Enabled => a.enabled != b.enabled,
            Field::Timeout => a.timeout != b.timeout,
            Field::AutoApprove => a.auto_approve != b.auto_approve,
            Field::Auth => a.auth != b.auth,
            Field::OAuth => a.oauth != b.oauth,
            Field::RestartPolicy => a.restart_policy != b.restart_policy,
        }
    }

    /// Whether `def` has no value for this field (nothing to store).
    pub fn is_empty_in(self, def: &ServerDef) -> bool {
        match self {
            Field::Name | Field::Transport | Field::Enabled => false,
            Field::Command => def.command.is_none(),
            Field::Args => def.args.is_empty(),
            Field::Env => def.env.is_empty(),
            Field::Cwd => def.cwd.is_none(),
            Field::Url => def.url.is_none(),
            Field::Headers => def.headers.is_empty(),
            Field::Timeout => def.timeout.is_none(),
            Field::AutoApprove => def.auto_approve.is_empty(),
            Field::Auth => def.auth.is_none(),
            Field::OAuth => def.oauth.as_ref().is_none_or(|o| o.is_empty()),
            Field::RestartPolicy => def.restart_policy.is_none(),
        }
    }

    /// Copy this field's value from `from` into `to`.
    pub fn copy(self, from: &ServerDef, to: &mut ServerDef) {
        match self {
            Field::Name => to.name = from.name.clone(),
            Field::Transport => to.transport = from.transport,
            Field::Command => to.command = from.command.clone(),
            Field::Args => to.args = from.args.clone(),
            Field::Env => to.env = from.env.clone(),
            Field::Cwd => to.cwd = from.cwd.clone(),
            Field::Url => to.url = from.url.clone(),
            Field::Headers => to.headers = from.headers.clone(),
            Field::Enabled => to.enabled = from.enabled,
            Field::Timeout => to.timeout = from.timeout,
            Field::AutoApprove => to.auto_approve = from.auto_approve.clone(),
            Field::Auth => to.auth = from.auth.clone(),
            Field::OAuth => to.oauth = from.oauth.clone(),
            Field::RestartPolicy => to.restart_policy = from.restart_policy,
        }
    }
}

/// The fields an edit changes, with their new values in `def`. Fields not
/// listed are left as they are in the file, whatever `def` says about them.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerPatch {
    pub fields: Vec<Field>,
    pub def: ServerDef,
}

impl ServerPatch {
    /// What changed from `original` (the definition the user started from)
    /// to `def` (what they saved).
    pub fn between(original: &ServerDef, def: &ServerDef) -> ServerPatch {
        let fields = Field::ALL
            .into_iter()
            .filter(|f| f.differs(original, def))
            .collect();
        ServerPatch {
            fields,
            def: def.clone(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    pub fn changes(&self, field: Field) -> bool {
        self.fields.contains(&field)
    }

    /// `current` with this patch's fields replaced.
    pub fn apply_to(&self, current: &ServerDef) -> ServerDef {
        let mut out = current.clone();
        for f in &self.fields {
            f.copy(&self.def, &mut out);
        }
        out
    }
}
