//! No secret value reaches the journal (P2): every text it stores passes
//! the redactor (the secret values Switchboard resolved), the token-shape
//! check of `redact` (`ghp_…`, `sk-…`, JWTs, … anywhere in the text) and
//! the masking's judgement of a named value (`"password": "…"`,
//! `"Authorization": "Bearer …"`: `redact::literal_secret`). Runs on the
//! journal's writer thread, never on a call's path.

use std::borrow::Cow;

use super::cap::{cut_at_char, TAIL_BYTES};
use crate::redact::{literal_secret, token_shaped, Redactor, MASK};

/// `text` with every secret value replaced by [`MASK`].
pub(crate) fn mask(text: &str, redactor: &Redactor) -> String {
    let known = if redactor.is_empty() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(redactor.apply(text))
    };
    // Tokens first: the judgement of named values then sees only names
    // and schemes, and a value that merely contains a token keeps its text.
    let tokens = mask_tokens(&known);
    match mask_named_values(&tokens) {
        Cow::Borrowed(_) => tokens.into_owned(),
        Cow::Owned(s) => s,
    }
}

/// Masks `text` and cuts it at `cap`. `partial`: the text is the start of a
/// longer value with [`TAIL_BYTES`] beyond the cap; a secret cut in two at
/// its end is not recognized, so after masking the end of the text that
/// masking left as it was is dropped (up to [`TAIL_BYTES`]), and so is a
/// run of token characters that the final cut goes through. Returns the
/// text and whether it was cut.
pub(crate) fn mask_capped(
    text: &str,
    partial: bool,
    cap: usize,
    redactor: &Redactor,
) -> (String, bool) {
    let mut m = mask(text, redactor);
    if partial {
        let same_end = text
            .bytes()
            .rev()
            .zip(m.bytes().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let mut keep = (m.len() - same_end.min(TAIL_BYTES)).min(cap);
        while !m.is_char_boundary(keep) {
            keep -= 1;
        }
        let b = m.as_bytes();
        if keep > 0 && keep < b.len() && token_char(b[keep - 1]) && token_char(b[keep]) {
            while keep > 0 && token_char(b[keep - 1]) {
                keep -= 1;
            }
        }
        m.truncate(keep);
        (m, true)
    } else if m.len() > cap {
        cut_at_char(&mut m, cap);
        (m, true)
    } else {
        (m, false)
    }
}

/// The characters `redact::token_shaped` accepts in a token.
fn token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'=' | b'+' | b'/')
}

/// The shortest token `token_shaped` accepts (`sk-` and 16 more).
const MIN_TOKEN: usize = 19;

/// Masks every token-shaped word: runs of token characters, also where a
/// token follows `=` or `/` inside a run (`GITHUB_TOKEN=ghp_…`,
/// `…/ghp_…`) or a JSON escape (`\nghp_…`).
fn mask_tokens(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if !token_char(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && token_char(b[i]) {
            i += 1;
        }
        if i - start < MIN_TOKEN {
            continue;
        }
        let escaped = start > 0 && b[start - 1] == b'\\';
        if let Some((from, to)) = token_in(&text[start..i], escaped) {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[copied..start + from]);
            o.push_str(MASK);
            copied = start + to;
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
    }
}

/// Where a token lies in a run of token characters (ASCII): from its
/// start, from after a JSON escape letter, or from after a `=`, `/` or `+`.
fn token_in(run: &str, escaped: bool) -> Option<(usize, usize)> {
    let b = run.as_bytes();
    let first = match (escaped, b[0]) {
        (true, b'u') => 5.min(b.len()),
        (true, b'n' | b't' | b'r' | b'b' | b'f') => 1,
        _ => 0,
    };
    // Every known token starts with a letter; a long base64 run has many
    // `/` and `+`, so only the first few places are tried.
    let starts = std::iter::once(0).chain(std::iter::once(first)).chain(
        (1..b.len())
            .filter(|&i| matches!(b[i - 1], b'=' | b'/' | b'+') && b[i].is_ascii_alphabetic())
            .take(32),
    );
    for s in starts {
        if b.len() - s < MIN_TOKEN {
            continue;
        }
        // A sentence's full stop after a token is not part of it.
        let end = run.trim_end_matches('.').len().max(s);
        if token_shaped(&run[s..end]) || token_shaped(&run[s..]) {
            return Some((s, b.len()));
        }
    }
    None
}

/// Masks JSON string values that the masking judges a credential by their
/// key (`"apiKey": "…"`, `"password": "…"`) or by an auth scheme
/// (`"Bearer …"`). Reads JSON text that may be cut anywhere.
fn mask_named_values(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    // The previous string and where it ended, while it may be a key.
    let mut key: Option<(usize, usize)> = None;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let (start, end) = (i + 1, string_end(b, i + 1));
                i = (end + 1).min(b.len());
                match key.take() {
                    Some((ks, ke)) if after_colon(b, ke) => {
                        let k = unescape(&text[ks..ke]);
                        let v = unescape(&text[start..end]);
                        if literal_secret(&k, &v).is_some() {
                            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                            o.push_str(&text[copied..start]);
                            o.push_str(MASK);
                            copied = end;
                        }
                    }
                    _ => key = Some((start, end)),
                }
            }
            b':' | b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            _ => {
                key = None;
                i += 1;
            }
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
    }
}

/// The index of the closing quote of a string whose content starts at
/// `from` (or the end of the text when it is cut).
fn string_end(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

/// Whether a `:` follows the string that ended at `end` (its closing quote).
fn after_colon(b: &[u8], end: usize) -> bool {
    b.get(end + 1..)
        .unwrap_or_default()
        .iter()
        .find(|c| !c.is_ascii_whitespace())
        == Some(&b':')
}

fn unescape(raw: &str) -> Cow<'_, str> {
    if !raw.contains('\\') {
        return Cow::Borrowed(raw);
    }
    serde_json::from_str::<String>(&format!("\"{raw}\""))
        .map(Cow::Owned)
        .unwrap_or(Cow::Borrowed(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GH: &str = "ghp_0123456789abcdefghijABCDEFGHIJ";

    fn r(secrets: &[&str]) -> Redactor {
        let r = Redactor::default();
        r.set(secrets.iter().map(|s| s.to_string()));
        r
    }

    #[test]
    fn known_secrets_and_tokens_anywhere_are_masked() {
        let r = r(&["hunter2-secret"]);
        let text = serde_json::json!({
            "q": "pw is hunter2-secret ok",
            "env": format!("GITHUB_TOKEN={GH}"),
            "lines": format!("token:\n{GH}\nend"),
            "url": format!("https://h.example/{GH}/x"),
            "plain": format!("use {GH}."),
        })
        .to_string();
        let m = mask(&text, &r);
        assert!(!m.contains("hunter2-secret"), "{m}");
        assert!(!m.contains("0123456789abcdefghij"), "{m}");
        assert!(m.contains("GITHUB_TOKEN=•••"), "{m}");
        assert!(m.contains(r#"token:\n•••\nend"#), "{m}");
        assert!(m.contains("use •••"), "the text around a token stays: {m}");
        assert!(
            serde_json::from_str::<serde_json::Value>(&m).is_ok(),
            "still JSON: {m}"
        );
    }

    #[test]
    fn named_credentials_are_masked_and_plain_values_kept() {
        let text = serde_json::json!({
            "password": "correct horse battery",
            "headers": {"Authorization": "Bearer abcd1234efgh"},
            "max_tokens": "1000",
            "title": "a normal title",
            "list": ["password", "x"],
        })
        .to_string();
        let m = mask(&text, &Redactor::default());
        assert!(!m.contains("correct horse"), "{m}");
        assert!(!m.contains("abcd1234efgh"), "{m}");
        assert!(m.contains(r#""max_tokens":"1000""#), "{m}");
        assert!(m.contains("a normal title"), "{m}");
        assert!(m.contains(r#"["password","x"]"#), "{m}");
    }

    #[test]
    fn a_secret_across_the_cut_is_masked_whole_then_the_tail_dropped() {
        let r = r(&["the-long-secret-value"]);
        let cap = 100;
        // The secret starts 10 bytes before the cap.
        let text = format!(
            "{}the-long-secret-value{}",
            "a".repeat(90),
            "b".repeat(TAIL_BYTES)
        );
        let (m, cut) = mask_capped(&text, true, cap, &r);
        assert!(cut && m.len() <= cap);
        assert!(!m.contains("the-long"), "{m}");
        // A token that masking replaced up to the end leaves nothing to drop.
        let text = format!("{} {GH}{}", "a".repeat(90), "c".repeat(TAIL_BYTES));
        let (m, _) = mask_capped(&text, true, cap, &Redactor::default());
        assert_eq!(m, format!("{} •••", "a".repeat(90)));
        // A run of token characters through the cut is left out entirely
        // (here a JWT whose signature is beyond the kept bytes).
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0";
        let text = format!("{} {jwt}{}", "a".repeat(90), "c".repeat(TAIL_BYTES));
        let (m, _) = mask_capped(&text, true, cap, &Redactor::default());
        assert_eq!(m, format!("{} ", "a".repeat(90)));
        // A secret cut at the very end of the kept bytes goes with the tail.
        let text = format!("{}the-long-sec", " ".repeat(cap + TAIL_BYTES - 12));
        let (m, _) = mask_capped(&text, true, cap, &r);
        assert_eq!(m, " ".repeat(cap));
    }
}
