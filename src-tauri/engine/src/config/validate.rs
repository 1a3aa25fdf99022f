//! Validation of structure, not reachability: a definition is checked for
//! what it says, never by connecting.

use crate::config::{ServerDef, Transport};

/// A problem with one field of an entry, found while reading or validating it.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldIssue {
    /// The entry's field the issue is about, e.g. `timeout` or `args[2]`.
    pub field: Option<String>,
    pub message: String,
    pub is_error: bool,
}

pub const MAX_NAME_LEN: usize = 100;

/// Server names accepted on every write path: non-empty, at most 100
/// characters, only `[A-Za-z0-9_.-]`.
pub fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("Invalid server config: the server name is empty".into());
    }
    if name.chars().count() > MAX_NAME_LEN {
        return Err(format!(
            "Invalid server config: the server name is longer than {MAX_NAME_LEN} characters"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(format!(
            "Invalid server config: the server name \"{name}\" contains \"{c}\"; use only letters, digits, '_', '.' and '-'"
        ));
    }
    Ok(())
}

fn error(field: Option<&str>, message: String) -> FieldIssue {
    FieldIssue {
        field: field.map(Into::into),
        message,
        is_error: true,
    }
}

/// Structural errors of a definition (an empty list means valid).
pub fn validate_def(def: &ServerDef) -> Vec<FieldIssue> {
    let mut out = vec![];
    if def.command.is_some() && def.url.is_some() {
        out.push(error(None, "Invalid server config: both \"command\" and \"url\" are set; a server is either a command or a URL".into()));
        return out;
    }
    match def.transport {
        Transport::Stdio => {
            if def.command.as_deref().is_none_or(|c| c.trim().is_empty()) {
                let msg = if def.url.is_some() {
                    "Invalid server config: type \"stdio\" needs \"command\", but only \"url\" is set".to_string()
                } else {
                    "Invalid server config: \"command\" is missing (a stdio server needs a command; a remote server needs \"url\")".to_string()
                };
                out.push(error(Some("command"), msg));
            }
        }
        Transport::Http | Transport::Sse => match def.url.as_deref() {
            None => out.push(error(
                Some("url"),
                format!(
                    "Invalid server config: type \"{}\" needs \"url\"",
                    def.transport.as_str()
                ),
            )),
            Some(u) => {
                if let Err(e) = check_url(u) {
                    out.push(error(
                        Some("url"),
                        format!("Invalid server config: \"url\" {e}"),
                    ));
                }
            }
        },
    }
    out
}

/// An absolute http(s) URL that `url::Url` parses, with a host. Values still
/// holding `${...}` are checked after expansion, at launch.
pub fn check_url(u: &str) -> Result<(), String> {
    if u.contains("${") {
        return Ok(());
    }
    let no_host = || format!("\"{u}\" has no host");
    // The form as written: `Url` would also read `HTTP://x`, `http:x` and
    // `http:///x`, and drop tabs, newlines and spaces around the host.
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"))
        .ok_or_else(|| format!("\"{u}\" is not an absolute http:// or https:// URL"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains(char::is_whitespace) {
        return Err(no_host());
    }
    match url::Url::parse(u) {
        Ok(url) if url.host_str().is_some_and(|h| !h.is_empty()) => Ok(()),
        Ok(_) | Err(url::ParseError::EmptyHost) => Err(no_host()),
        Err(e) => Err(format!("\"{u}\" is not a valid URL: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::check_url;

    #[test]
    fn urls_are_absolute_http_with_a_host() {
        for ok in [
            "https://example.com/mcp",
            "http://127.0.0.1:3000/mcp?x=1#f",
            "http://[::1]:8080/",
            "https://user@example.com",
            "https://${env:HOST}/mcp",
        ] {
            assert_eq!(check_url(ok), Ok(()), "{ok}");
        }
        let err = |u: &str| check_url(u).unwrap_err();
        for not_http in ["ftp://x", "HTTP://x", "http:x", "example.com", " http://x"] {
            assert!(err(not_http).ends_with("is not an absolute http:// or https:// URL"));
        }
        for no_host in [
            "http://",
            "https:///path",
            "http://ex ample.com",
            "http://x\t/",
            "http://@/",
        ] {
            assert!(
                err(no_host).ends_with("has no host"),
                "{no_host}: {}",
                err(no_host)
            );
        }
        for invalid in ["http://x:99999/", "http://[::1/", "http://exa<mple.com/"] {
            assert!(
                err(invalid).contains("is not a valid URL: "),
                "{invalid}: {}",
                err(invalid)
            );
        }
    }
}
