//! Secrets stay out of text: every string a person or a log sees
//! about a server — log lines, status errors, warnings, `lastError` — passes
//! through that server's `Redactor`, which replaces each secret value resolved
//! for its current launch (env and header values, URL parts that came from a
//! variable, tokens) with `•••`.

use std::sync::RwLock;

use indexmap::IndexMap;

/// What a secret is replaced with.
pub const MASK: &str = "•••";

/// Values shorter than this are not masked: replacing every `1` or `yes` in a
/// log would make it unreadable and such values are not secrets.
const MIN_SECRET_LEN: usize = 4;

/// The secret values of one server's current launch.
#[derive(Debug, Default)]
pub struct Redactor {
    /// Longest first, so a secret that contains another is masked whole.
    values: RwLock<Vec<String>>,
}

impl Redactor {
    /// Replace the set of values to mask (each launch resolves them anew).
    pub fn set(&self, values: impl IntoIterator<Item = String>) {
        let mut v: Vec<String> = values
            .into_iter()
            .filter(|s| s.chars().count() >= MIN_SECRET_LEN)
            .collect();
        // URL-encoded forms appear in request URLs and error texts.
        let encoded: Vec<String> = v
            .iter()
            .map(|s| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>())
            .collect();
        v.extend(encoded);
        v.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        v.dedup();
        *self.values.write().unwrap_or_else(|p| p.into_inner()) = v;
    }

    /// Add values (e.g. a token injected after the variables were resolved).
    pub fn add(&self, values: impl IntoIterator<Item = String>) {
        let mut all = self
            .values
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        all.extend(values);
        self.set(all);
    }

    /// `text` with every secret value replaced by [`MASK`].
    pub fn apply(&self, text: &str) -> String {
        let values = self.values.read().unwrap_or_else(|p| p.into_inner());
        let mut out = text.to_string();
        for v in values.iter() {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), MASK);
            }
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.values
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }
}

/// The values of one launch that must never be shown: every header value
/// (and the token of `Bearer …`), every env value that differs from what the
/// file says (it came from a variable, `!cmd` or an env-name lookup) or whose
/// name says it is a secret, and every part of the URL that a variable
/// supplied (query values, user info, path segments).
pub fn secret_values(
    raw_env: &IndexMap<String, String>,
    env: &IndexMap<String, String>,
    headers: &IndexMap<String, String>,
    raw_url: Option<&str>,
    url: Option<&str>,
) -> Vec<String> {
    let mut out = vec![];
    for v in headers.values() {
        out.push(v.clone());
        if let Some((_, token)) = v.split_once(' ') {
            out.push(token.trim().to_string());
        }
    }
    for (k, v) in env {
        if raw_env.get(k) != Some(v) || looks_secret(k) {
            out.push(v.clone());
        }
    }
    if let (Some(raw), Some(url)) = (raw_url, url) {
        out.extend(url_secrets(raw, url));
    }
    out
}

/// Names that say "this is a credential".
fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
        "PAT",
        "COOKIE",
        "SESSION",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// Parts of an expanded URL that a variable supplied: for each query pair,
/// path segment and the user info, a value that differs from the raw URL's.
fn url_secrets(raw: &str, expanded: &str) -> Vec<String> {
    let mut out = vec![];
    let Ok(u) = url::Url::parse(expanded) else {
        // Not a URL (it is refused elsewhere): mask what the variables added.
        if raw != expanded {
            out.push(expanded.to_string());
        }
        return out;
    };
    if let Some(p) = u.password() {
        out.push(p.to_string());
    }
    if !u.username().is_empty() && !raw.contains(u.username()) {
        out.push(u.username().to_string());
    }
    for (k, v) in u.query_pairs() {
        // A literal value is in the raw URL as written; a variable's is not.
        let literal = format!("{k}={v}");
        if !raw.contains(&literal)
            && !raw.contains(&format!(
                "{}={}",
                k,
                url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
            ))
        {
            out.push(v.to_string());
        }
    }
    if let Some(segs) = u.path_segments() {
        for s in segs {
            if !s.is_empty() && !raw.contains(s) {
                out.push(s.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> IndexMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn masks_every_secret_including_url_encoded_and_longest_first() {
        let r = Redactor::default();
        r.set([
            "s3cret/value+x".to_string(),
            "s3cret".to_string(),
            "ok".to_string(),
        ]);
        assert_eq!(r.apply("a s3cret/value+x b"), "a ••• b");
        assert_eq!(r.apply("url?k=s3cret%2Fvalue%2Bx"), "url?k=•••");
        assert_eq!(r.apply("just s3cret"), "just •••");
        assert_eq!(
            r.apply("ok stays"),
            "ok stays",
            "short values are not masked"
        );
    }

    #[test]
    fn launch_secrets_are_headers_expanded_env_and_url_variables() {
        let raw_env = map(&[
            ("API_KEY", "${KEY}"),
            ("DEBUG", "true"),
            ("GITHUB_TOKEN", "ghp_literal"),
        ]);
        let env = map(&[
            ("API_KEY", "expanded-key"),
            ("DEBUG", "true"),
            ("GITHUB_TOKEN", "ghp_literal"),
        ]);
        let headers = map(&[("Authorization", "Bearer tok-123456")]);
        let v = secret_values(
            &raw_env,
            &env,
            &headers,
            Some("https://h.example/mcp?key=${K}&mode=fast"),
            Some("https://h.example/mcp?key=url-secret-9&mode=fast"),
        );
        for want in [
            "expanded-key",
            "ghp_literal",
            "Bearer tok-123456",
            "tok-123456",
            "url-secret-9",
        ] {
            assert!(v.iter().any(|x| x == want), "{want} missing from {v:?}");
        }
        assert!(
            !v.iter().any(|x| x == "true" || x == "fast" || x == "mcp"),
            "{v:?}"
        );
    }
}
