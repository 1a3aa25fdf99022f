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
    /// Every value set here is also added there (the manager's redactor of
    /// every server's secrets, for the call journal and result checks).
    also: Option<std::sync::Arc<Redactor>>,
}

impl Redactor {
    /// A redactor whose values are also added to `all`, which only grows
    /// (a secret of an earlier launch stays masked there).
    pub fn feeding(all: std::sync::Arc<Redactor>) -> Redactor {
        Redactor {
            values: RwLock::default(),
            also: Some(all),
        }
    }

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
        if let Some(all) = &self.also {
            if !v.iter().all(|x| all.has(x)) {
                all.add(v.iter().cloned());
            }
        }
        *self.values.write().unwrap_or_else(|p| p.into_inner()) = v;
    }

    fn has(&self, value: &str) -> bool {
        self.values
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|v| v == value)
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

    /// Whether `text` holds any of the values (without copying it).
    pub fn finds(&self, text: &str) -> bool {
        let values = self.values.read().unwrap_or_else(|p| p.into_inner());
        values.iter().any(|v| text.contains(v.as_str()))
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

/// Names (of env variables, headers, query parameters, flags) that say
/// "this is a credential": one of these words anywhere in the name, and
/// `PAT` as a word of its own (`GITHUB_PAT`, `githubPat`; not `PATH`).
pub fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    let word_pat = words(name).iter().any(|w| w.eq_ignore_ascii_case("PAT"));
    word_pat
        || [
            "KEY",
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "AUTH",
            "COOKIE",
            "SESSION",
        ]
        .iter()
        .any(|w| n.contains(w))
}

/// The words of a name: split at anything but letters and digits, and
/// where a lower-case letter meets an upper-case one (`githubPat`).
fn words(name: &str) -> Vec<&str> {
    let b = name.as_bytes();
    let mut cuts = vec![0];
    cuts.extend(
        (1..b.len()).filter(|&i| b[i - 1].is_ascii_lowercase() && b[i].is_ascii_uppercase()),
    );
    cuts.push(b.len());
    cuts.windows(2)
        .flat_map(|w| name[w[0]..w[1]].split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Schemes a credential follows in a header value (`Bearer TOKEN`).
const AUTH_SCHEMES: &[&str] = &["Bearer", "Basic", "Token", "Bot", "Digest", "ApiKey"];

/// Prefixes of well-known credentials (GitHub, GitLab, OpenAI and
/// Anthropic, Stripe, Slack, Hugging Face, npm, PyPI, Shopify, Linear,
/// Notion, DigitalOcean, Grafana, Figma, Perplexity, Groq, Google, AWS,
/// SendGrid), each followed by at least [`MIN_AFTER_PREFIX`] characters.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glrt-",
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxr-",
    "xoxs-",
    "xapp-",
    "hf_",
    "npm_",
    "pypi-",
    "shpat_",
    "shpss_",
    "lin_api_",
    "ntn_",
    "dop_v1_",
    "glsa_",
    "figd_",
    "pplx-",
    "gsk_",
    "AIza",
    "AKIA",
    "ASIA",
    "SG.",
];
const MIN_AFTER_PREFIX: usize = 16;

/// Whether `word` has the shape of a well-known credential: a known
/// prefix followed by a long run of token characters, or a JSON Web Token.
pub fn token_shaped(word: &str) -> bool {
    let w = word.trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | ';' | '(' | ')'));
    let token_char = |c: char| c.is_ascii_alphanumeric() || "-_.=+/".contains(c);
    if !w.chars().all(token_char) {
        return false;
    }
    if TOKEN_PREFIXES
        .iter()
        .any(|p| w.starts_with(p) && w.len() >= p.len() + MIN_AFTER_PREFIX)
    {
        return true;
    }
    // A JWT: three base64url parts, the first a JSON object (`eyJ`).
    let parts: Vec<&str> = w.split('.').collect();
    w.starts_with("eyJ") && parts.len() == 3 && parts.iter().all(|p| p.len() >= 8)
}

/// `value` with its `${…}` references taken out (a `${VAR:-default}`
/// leaves its default: that is literal text); an unterminated `${` stays.
pub fn literal_text(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let body = &rest[start + 2..];
        let Some(end) = body.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        if let Some((_, default)) = body[..end].split_once(":-") {
            out.push_str(default);
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Values that a credential's name may hold without being one: switches,
/// small numbers, and the name of a variable (`GITHUB_TOKEN` as the value
/// of `--token-env`).
fn plain_setting(literal: &str) -> bool {
    let l = literal.to_ascii_lowercase();
    matches!(
        l.as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "none" | "null"
    ) || (literal.len() <= 6 && literal.chars().all(|c| c.is_ascii_digit()))
        || (literal.contains('_')
            && literal
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
}

/// Whether a value written in a server's definition carries a credential
/// as literal text, judged as the masking judges launches: with its `${…}`
/// references taken out, what is left follows an auth scheme (`Bearer x`),
/// has a known token's shape, or is the value of a name that says
/// credential ([`looks_secret`]: an env variable, header, query parameter
/// or flag named `name`). Returns where the credential starts (after the
/// scheme); `None` when the value is only references or plain text.
pub fn literal_secret(name: &str, value: &str) -> Option<usize> {
    let lead = value.len() - value.trim_start().len();
    let after_lead = &value[lead..];
    let scheme = AUTH_SCHEMES.iter().find_map(|s| {
        let head = after_lead.get(..s.len())?;
        let rest = &after_lead[s.len()..];
        (head.eq_ignore_ascii_case(s) && rest.starts_with(' '))
            .then(|| s.len() + rest.len() - rest.trim_start().len())
    });
    let start = lead + scheme.unwrap_or(0);
    let literal = literal_text(&value[start..]);
    let literal = literal.trim();
    if literal.chars().count() < MIN_SECRET_LEN {
        return None;
    }
    let shaped = literal
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .any(token_shaped);
    let named = looks_secret(name) && !plain_setting(literal);
    (shaped || scheme.is_some() || named).then_some(start)
}

/// The parts of a URL as written that carry a credential as literal text:
/// the password of its user info (or a user name shaped like a token), a
/// path segment shaped like a token, a query value judged by
/// [`literal_secret`] with its parameter's name. Each with a short name for
/// it (`password`, `user`, `path`, or the query parameter's name) and its
/// byte range in `url`.
pub fn url_literal_secrets(url: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut out = vec![];
    let Some(scheme) = url.find("://") else {
        return out;
    };
    let host_at = scheme + 3;
    let authority_end = url[host_at..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| host_at + i);
    let authority = &url[host_at..authority_end];
    if let Some(at) = authority.rfind('@') {
        let info = &authority[..at];
        match info.find(':') {
            Some(colon) => {
                let range = host_at + colon + 1..host_at + at;
                if !literal_text(&url[range.clone()]).trim().is_empty() {
                    out.push(("password".to_string(), range));
                }
            }
            None if token_shaped(&literal_text(info)) => {
                out.push(("user".to_string(), host_at..host_at + at));
            }
            None => {}
        }
    }
    let fragment = url[authority_end..]
        .find('#')
        .map_or(url.len(), |i| authority_end + i);
    let query = url[authority_end..fragment]
        .find('?')
        .map(|i| authority_end + i);
    let mut at = authority_end;
    for seg in url[authority_end..query.unwrap_or(fragment)].split('/') {
        if !seg.is_empty() && token_shaped(&literal_text(seg)) {
            out.push(("path".to_string(), at..at + seg.len()));
        }
        at += seg.len() + 1;
    }
    if let Some(q) = query {
        let mut at = q + 1;
        for pair in url[q + 1..fragment].split('&') {
            if let Some((k, v)) = pair.split_once('=') {
                let (key, value) = url::form_urlencoded::parse(pair.as_bytes())
                    .next()
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .unwrap_or_default();
                if literal_secret(&key, &value).is_some() {
                    let from = at + k.len() + 1;
                    out.push((key, from..from + v.len()));
                }
            }
            at += pair.len() + 1;
        }
    }
    out
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
    fn credential_names_are_words_not_any_letters() {
        for yes in [
            "GITHUB_TOKEN",
            "apiKey",
            "X-API-Key",
            "Authorization",
            "GITHUB_PAT",
            "githubPat",
            "PAT",
            "db_password",
        ] {
            assert!(looks_secret(yes), "{yes} names a credential");
        }
        for no in [
            "PATH",
            "PATTERN",
            "DISPATCH_MODE",
            "DEBUG",
            "Accept",
            "region",
        ] {
            assert!(!looks_secret(no), "{no} does not name a credential");
        }
    }

    #[test]
    fn literal_secrets_are_found_by_name_shape_and_scheme() {
        let gh = "ghp_0123456789abcdefghijABCDEFGHIJ";
        assert_eq!(literal_secret("GITHUB_TOKEN", "hunter2-value"), Some(0));
        assert_eq!(literal_secret("Authorization", "Bearer abcd1234"), Some(7));
        assert_eq!(
            literal_secret("X-Anything", "Bearer abcd1234"),
            Some(7),
            "a scheme says credential whatever the name"
        );
        assert_eq!(
            literal_secret("", gh),
            Some(0),
            "a token's shape says credential without a name"
        );
        assert_eq!(literal_secret("NOTE", &format!("use {gh} here")), Some(0));
        for (name, value) in [
            ("GITHUB_TOKEN", "${GITHUB_TOKEN}"),
            ("GITHUB_TOKEN", "${keychain:github.GITHUB_TOKEN}"),
            ("Authorization", "Bearer ${env:TOKEN}"),
            ("API_KEY", "true"),
            ("API_KEY_ENV", "OPENAI_API_KEY"),
            ("AUTH_PORT", "8080"),
            ("Accept", "application/json"),
            ("DEBUG", "verbose-mode-on"),
            ("TOKEN", "abc"),
        ] {
            assert_eq!(
                literal_secret(name, value),
                None,
                "{name}={value} holds no literal credential"
            );
        }
        assert_eq!(
            literal_secret("TOKEN", "${TOKEN:-s3cr3t-default}"),
            Some(0),
            "a default is literal text"
        );
        assert!(token_shaped("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"));
        assert!(!token_shaped("sk-short") && !token_shaped("ghp_") && !token_shaped("@scope/pkg"));
    }

    #[test]
    fn url_secrets_are_the_literal_credential_parts() {
        let url = "https://me:pw-123456@h.example/ghp_0123456789abcdefghijABCD/mcp?api_key=k-123456&mode=fast&token=${T}";
        let found = url_literal_secrets(url);
        let parts: Vec<(&str, &str)> = found
            .iter()
            .map(|(k, r)| (k.as_str(), &url[r.clone()]))
            .collect();
        assert_eq!(
            parts,
            vec![
                ("password", "pw-123456"),
                ("path", "ghp_0123456789abcdefghijABCD"),
                ("api_key", "k-123456"),
            ]
        );
        assert!(url_literal_secrets("https://h.example/mcp?mode=fast&key=${KEY}").is_empty());
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
