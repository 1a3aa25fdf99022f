//! Variable expansion in string fields (SPEC C7): `${VAR}`,
//! `${VAR:-default}`, `${env:VAR}`, `${workspaceFolder}`, `${userHome}`,
//! `${input:id}` (VS Code inputs). Unresolved references stay literal and
//! are returned so they can be shown as warnings.

use std::collections::HashMap;

/// What variables can resolve to, for one source.
#[derive(Debug, Clone, Default)]
pub struct VarContext {
    pub env: HashMap<String, String>,
    pub workspace_folder: Option<String>,
    pub user_home: Option<String>,
    /// VS Code `inputs` with a default value.
    pub inputs: HashMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    pub value: String,
    /// The `${...}` references that did not resolve, as written.
    pub unresolved: Vec<String>,
}

pub fn expand(input: &str, cx: &VarContext) -> Expanded {
    let mut out = String::with_capacity(input.len());
    let mut unresolved = vec![];
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = &after[..end];
        let whole = &rest[start..start + 2 + end + 1];
        match resolve(inner, cx) {
            Some(v) => out.push_str(&v),
            None => {
                out.push_str(whole);
                unresolved.push(whole.to_string());
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Expanded { value: out, unresolved }
}

fn resolve(inner: &str, cx: &VarContext) -> Option<String> {
    let env = |k: &str| cx.env.get(k).filter(|v| !v.is_empty()).cloned();
    if let Some(name) = inner.strip_prefix("env:") {
        return env(name);
    }
    if let Some(id) = inner.strip_prefix("input:") {
        return cx.inputs.get(id).cloned();
    }
    match inner {
        "workspaceFolder" => return cx.workspace_folder.clone(),
        "userHome" => return cx.user_home.clone(),
        _ => {}
    }
    if let Some((name, default)) = inner.split_once(":-") {
        return Some(env(name).unwrap_or_else(|| default.to_string()));
    }
    if inner.is_empty() || !inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    env(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> VarContext {
        let mut c = VarContext::default();
        c.env.insert("HOME".into(), "/home/me".into());
        c.env.insert("TOKEN".into(), "t0k".into());
        c.workspace_folder = Some("/w".into());
        c.user_home = Some("/home/me".into());
        c
    }

    #[test]
    fn expands_every_form() {
        let e = expand("${HOME}/a:${env:TOKEN}:${workspaceFolder}:${userHome}:${NOPE:-dflt}", &cx());
        assert_eq!(e.value, "/home/me/a:t0k:/w:/home/me:dflt");
        assert!(e.unresolved.is_empty());
    }

    #[test]
    fn unresolved_stay_literal_and_are_reported() {
        let e = expand("x ${MISSING} ${env:ALSO} ${input:key} ${bad name}", &cx());
        assert_eq!(e.value, "x ${MISSING} ${env:ALSO} ${input:key} ${bad name}");
        assert_eq!(e.unresolved, vec!["${MISSING}", "${env:ALSO}", "${input:key}", "${bad name}"]);
    }

    #[test]
    fn unterminated_reference_is_kept() {
        let e = expand("a ${HOME", &cx());
        assert_eq!(e.value, "a ${HOME");
    }
}
