//! Variable expansion in string fields. Which forms a string may
//! use depends on the client whose file the server came from: each source
//! declares an `Expansion` (the table is `sources::Client::expansion`), and
//! a form that client does not know is plain text, never a reference.
//! Forms: `${VAR}`, `${VAR:-default}`, `$VAR`, `${env:VAR}`,
//! `${workspaceFolder}`, `${userHome}`, `${input:id}` (VS Code inputs).
//! Unresolved references stay literal and are returned so they can be shown
//! as warnings.

use std::collections::HashMap;

/// Which references a client expands in a server's strings, and whether
/// Switchboard's own secret forms (`!command`, bare variable names,
/// `${keychain:NAME}`; see `auth::secrets`) apply to its `env`/`headers`
/// values. The default is `NONE`: a literal stays literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Expansion {
    /// `${VAR}`, for any text between the braces that no other enabled form
    /// claims (so `${workspaceFolder}` is a variable name to Claude Code).
    pub braced: bool,
    /// `${VAR:-default}`.
    pub default: bool,
    /// `$VAR` without braces, `VAR` being letters, digits and `_` (Gemini CLI).
    pub dollar: bool,
    /// `${env:VAR}`.
    pub env_prefix: bool,
    /// `${workspaceFolder}`: the project folder of a project-level source.
    pub workspace_folder: bool,
    /// `${userHome}`.
    pub user_home: bool,
    /// `${input:id}`: the client asks the user for it when it starts the
    /// server; Switchboard cannot ask, so it is reported as needing input.
    pub inputs: bool,
    /// A header value that is exactly `${VAR}` (or `Bearer ${VAR}` for
    /// `Authorization`) reads `VAR`: that is how Codex's `env_http_headers`
    /// and `bearer_token_env_var` fields look in the model. Nothing else.
    pub header_env_refs: bool,
    /// An `env`/header value `!command` is the command's trimmed stdout.
    pub commands: bool,
    /// An `env`/header value that is exactly the name of a set environment
    /// variable is that variable's value.
    pub env_names: bool,
}

impl Expansion {
    /// Nothing expands.
    pub const NONE: Expansion = Expansion {
        braced: false,
        default: false,
        dollar: false,
        env_prefix: false,
        workspace_folder: false,
        user_home: false,
        inputs: false,
        header_env_refs: false,
        commands: false,
        env_names: false,
    };

    /// Switchboard's own file: every `${…}` form and both secret forms. Not
    /// `$VAR`: a `$` in a password or a shell snippet stays as written.
    pub const SWITCHBOARD: Expansion = Expansion {
        braced: true,
        default: true,
        dollar: false,
        env_prefix: true,
        workspace_folder: true,
        user_home: true,
        inputs: true,
        header_env_refs: false,
        commands: true,
        env_names: true,
    };
}

/// What variables can resolve to, for one source.
#[derive(Debug, Clone, Default)]
pub struct VarContext {
    pub env: HashMap<String, String>,
    pub workspace_folder: Option<String>,
    pub user_home: Option<String>,
    /// Answers to `${input:id}`. Nothing fills it yet: inputs are reported
    /// as needing input.
    pub inputs: HashMap<String, String>,
    /// The forms the source's client expands.
    pub expansion: Expansion,
}

impl VarContext {
    /// A set, non-empty environment variable.
    fn var(&self, name: &str) -> Option<String> {
        self.env.get(name).filter(|v| !v.is_empty()).cloned()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    pub value: String,
    /// The references that did not resolve, as written.
    pub unresolved: Vec<String>,
}

/// A reference in one of the enabled forms.
enum Ref<'a> {
    Var(&'a str),
    VarOr(&'a str, &'a str),
    WorkspaceFolder,
    UserHome,
    Input(&'a str),
}

/// What `${inner}` means to a client with these rules; `None` = plain text.
fn braced_ref(inner: &str, rules: Expansion) -> Option<Ref<'_>> {
    if rules.env_prefix {
        if let Some(name) = inner.strip_prefix("env:") {
            return Some(Ref::Var(name));
        }
    }
    if rules.inputs {
        if let Some(id) = inner.strip_prefix("input:") {
            return Some(Ref::Input(id));
        }
    }
    match inner {
        "workspaceFolder" if rules.workspace_folder => return Some(Ref::WorkspaceFolder),
        "userHome" if rules.user_home => return Some(Ref::UserHome),
        _ => {}
    }
    if rules.default {
        if let Some((name, default)) = inner.split_once(":-") {
            return Some(Ref::VarOr(name, default));
        }
    }
    rules.braced.then_some(Ref::Var(inner))
}

fn resolve(r: Ref<'_>, cx: &VarContext) -> Option<String> {
    match r {
        Ref::Var(name) if is_name(name) => cx.var(name),
        Ref::Var(_) => None,
        Ref::VarOr(name, default) => Some(cx.var(name).unwrap_or_else(|| default.to_string())),
        Ref::WorkspaceFolder => cx.workspace_folder.clone(),
        Ref::UserHome => cx.user_home.clone(),
        Ref::Input(id) => cx.inputs.get(id).cloned(),
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Expands the references `cx.expansion` enables; everything else is copied.
pub fn expand(input: &str, cx: &VarContext) -> Expanded {
    let rules = cx.expansion;
    let mut out = String::with_capacity(input.len());
    let mut unresolved = vec![];
    let mut rest = input;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                out.push_str(&rest[start..]);
                rest = "";
                break;
            };
            let whole = &rest[start..start + 2 + end + 1];
            match braced_ref(&body[..end], rules) {
                None => out.push_str(whole),
                Some(r) => match resolve(r, cx) {
                    Some(v) => out.push_str(&v),
                    None => {
                        out.push_str(whole);
                        unresolved.push(whole.to_string());
                    }
                },
            }
            rest = &body[end + 1..];
            continue;
        }
        let name_len = after
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if rules.dollar && name_len > 0 {
            let whole = &rest[start..start + 1 + name_len];
            match cx.var(&after[..name_len]) {
                Some(v) => out.push_str(&v),
                None => {
                    out.push_str(whole);
                    unresolved.push(whole.to_string());
                }
            }
            rest = &after[name_len..];
            continue;
        }
        out.push('$');
        rest = after;
    }
    out.push_str(rest);
    Expanded {
        value: out,
        unresolved,
    }
}

/// The variable a Codex header names, as the model spells it: `${VAR}`, or
/// `Bearer ${VAR}` for `Authorization` (from `bearer_token_env_var`).
/// Returns the text before the reference and the variable's name.
pub fn header_env_ref<'a>(header: &str, value: &'a str) -> Option<(&'a str, &'a str)> {
    let (prefix, reference) = match value.strip_prefix("Bearer ") {
        Some(r) if header.eq_ignore_ascii_case("authorization") => ("Bearer ", r),
        _ => ("", value),
    };
    let inner = reference.strip_prefix("${")?.strip_suffix('}')?;
    let name = inner.strip_prefix("env:").unwrap_or(inner);
    is_name(name).then_some((prefix, name))
}

/// A header value: as `expand`, plus Codex's whole-value references where
/// the rules have `header_env_refs`.
pub fn expand_header(header: &str, value: &str, cx: &VarContext) -> Expanded {
    if cx.expansion.header_env_refs {
        if let Some((prefix, name)) = header_env_ref(header, value) {
            return match cx.var(name) {
                Some(v) => Expanded {
                    value: format!("{prefix}{v}"),
                    unresolved: vec![],
                },
                None => Expanded {
                    value: value.to_string(),
                    unresolved: vec![format!("${{{name}}}")],
                },
            };
        }
    }
    expand(value, cx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx(expansion: Expansion) -> VarContext {
        let mut c = VarContext {
            expansion,
            ..Default::default()
        };
        c.env.insert("HOME".into(), "/home/me".into());
        c.env.insert("TOKEN".into(), "t0k".into());
        c.workspace_folder = Some("/w".into());
        c.user_home = Some("/home/me".into());
        c
    }

    #[test]
    fn expands_every_form() {
        let e = expand(
            "${HOME}/a:${env:TOKEN}:${workspaceFolder}:${userHome}:${NOPE:-dflt}",
            &cx(Expansion::SWITCHBOARD),
        );
        assert_eq!(e.value, "/home/me/a:t0k:/w:/home/me:dflt");
        assert!(e.unresolved.is_empty());
    }

    #[test]
    fn unresolved_stay_literal_and_are_reported() {
        let e = expand(
            "x ${MISSING} ${env:ALSO} ${input:key} ${bad name}",
            &cx(Expansion::SWITCHBOARD),
        );
        assert_eq!(e.value, "x ${MISSING} ${env:ALSO} ${input:key} ${bad name}");
        assert_eq!(
            e.unresolved,
            vec!["${MISSING}", "${env:ALSO}", "${input:key}", "${bad name}"]
        );
    }

    #[test]
    fn unterminated_reference_is_kept() {
        let e = expand("a ${HOME", &cx(Expansion::SWITCHBOARD));
        assert_eq!(e.value, "a ${HOME");
    }

    #[test]
    fn nothing_expands_without_rules() {
        let raw = "${HOME} ${env:TOKEN} ${userHome} ${X:-d} $HOME ${input:k}";
        let e = expand(raw, &cx(Expansion::NONE));
        assert_eq!(e.value, raw);
        assert!(
            e.unresolved.is_empty(),
            "a form the client does not know is text, not a missing variable"
        );
    }

    #[test]
    fn a_form_the_client_lacks_is_text() {
        let env_only = Expansion {
            env_prefix: true,
            user_home: true,
            ..Expansion::NONE
        };
        let e = expand("${env:TOKEN} ${HOME} ${X:-d} ${userHome}", &cx(env_only));
        assert_eq!(e.value, "t0k ${HOME} ${X:-d} /home/me");
        assert!(e.unresolved.is_empty());
        // To a client with only `${VAR}`, `${userHome}` is a variable name.
        let braced = Expansion {
            braced: true,
            default: true,
            ..Expansion::NONE
        };
        let e = expand("${HOME} ${env:TOKEN} ${userHome} ${X:-d}", &cx(braced));
        assert_eq!(e.value, "/home/me ${env:TOKEN} ${userHome} d");
        assert_eq!(e.unresolved, vec!["${env:TOKEN}", "${userHome}"]);
    }

    #[test]
    fn dollar_names_expand_only_where_enabled() {
        let gemini = Expansion {
            braced: true,
            dollar: true,
            ..Expansion::NONE
        };
        let e = expand("$HOME/x:${TOKEN}:$NOPE:$:$1a:${X:-d}", &cx(gemini));
        assert_eq!(e.value, "/home/me/x:t0k:$NOPE:$:$1a:${X:-d}");
        assert_eq!(e.unresolved, vec!["$NOPE", "$1a", "${X:-d}"]);
        assert_eq!(expand("$HOME", &cx(Expansion::SWITCHBOARD)).value, "$HOME");
    }

    #[test]
    fn codex_header_references_are_whole_values() {
        let codex = cx(Expansion {
            header_env_refs: true,
            ..Expansion::NONE
        });
        assert_eq!(
            expand_header("Authorization", "Bearer ${TOKEN}", &codex).value,
            "Bearer t0k"
        );
        assert_eq!(expand_header("X-Key", "${TOKEN}", &codex).value, "t0k");
        for (h, v) in [
            ("X-Key", "Bearer ${TOKEN}"),
            ("X-Key", "a ${TOKEN}"),
            ("X-Key", "TOKEN"),
            ("X-Key", "$TOKEN"),
        ] {
            assert_eq!(expand_header(h, v, &codex).value, v, "{h}: {v}");
        }
        let e = expand_header("X-Key", "${UNSET}", &codex);
        assert_eq!(
            (e.value.as_str(), e.unresolved),
            ("${UNSET}", vec!["${UNSET}".to_string()])
        );
        // Without the rule a whole-value reference is text too.
        assert_eq!(
            expand_header("X-Key", "${TOKEN}", &cx(Expansion::NONE)).value,
            "${TOKEN}"
        );
    }
}
