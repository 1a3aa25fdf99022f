//! The encodings install links use: percent-encoding (a whole query, or
//! `key=value` pairs) and base64 in either alphabet. Each decoder returns
//! bytes or says what is wrong; nothing is decoded lossily, so text that is
//! not UTF-8 after decoding is an error, not replacement characters.

/// Percent-decode `s`. With `plus_is_space`, `+` means a space (query
/// parameters as browsers write them); without, it stays (VS Code's
/// `vscode:mcp/install?{…}`, made with `encodeURIComponent`).
pub fn percent(s: &str, plus_is_space: bool) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = b.get(i + 1..i + 3).and_then(|h| {
                    let h = std::str::from_utf8(h).ok()?;
                    u8::from_str_radix(h, 16).ok()
                });
                match hex {
                    Some(v) => out.push(v),
                    None => {
                        let seen: String = s[i..].chars().take(3).collect();
                        return Err(format!(
                            "\"{seen}\" at character {} is not a percent-escape (% and two hex digits)",
                            s[..i].chars().count() + 1
                        ));
                    }
                }
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// One query parameter, decoded. `value` is still bytes: some are base64,
/// and a text value is checked for UTF-8 where it is used.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub key: String,
    pub value: Vec<u8>,
}

/// The `key=value` pairs of a query (without the `?`). A key given twice is
/// an error: which one a client would use is not defined.
pub fn query(q: &str) -> Result<Vec<Param>, String> {
    let mut out: Vec<Param> = vec![];
    for pair in q.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let key = String::from_utf8(percent(k, true)?)
            .map_err(|_| "a parameter name is not UTF-8 after decoding".to_string())?;
        if out.iter().any(|p| p.key == key) {
            return Err(format!("\"{key}\" is given twice"));
        }
        out.push(Param {
            key,
            value: percent(v, true)?,
        });
    }
    Ok(out)
}

/// Base64 as links carry it: the standard or the URL-safe alphabet,
/// padding optional, a space read as `+` (a `+` the link did not escape
/// arrives as a space), line breaks ignored.
pub fn base64(s: &[u8]) -> Result<Vec<u8>, String> {
    let mut sextets = Vec::with_capacity(s.len());
    let mut padding = 0;
    for (i, &c) in s.iter().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' | b' ' => 62,
            b'/' | b'_' => 63,
            b'=' => {
                padding += 1;
                continue;
            }
            b'\n' | b'\r' | b'\t' => continue,
            _ => {
                let shown = if c.is_ascii_graphic() {
                    format!("\"{}\"", c as char)
                } else {
                    format!("byte 0x{c:02x}")
                };
                return Err(format!(
                    "{shown} at position {} is not a base64 character",
                    i + 1
                ));
            }
        };
        if padding > 0 {
            return Err("\"=\" padding is followed by more data".into());
        }
        sextets.push(v);
    }
    if padding > 2 || sextets.len() % 4 == 1 {
        return Err(format!(
            "{} characters cannot be base64 (a character is missing or extra)",
            sextets.len()
        ));
    }
    let mut out = Vec::with_capacity(sextets.len() * 3 / 4);
    for chunk in sextets.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &v)| n | (u32::from(v) << (18 - 6 * i)));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decodes_and_refuses_bad_escapes() {
        assert_eq!(percent("%7B%22a%22+b%7D", false).unwrap(), b"{\"a\"+b}");
        assert_eq!(percent("a+b", true).unwrap(), b"a b");
        assert!(percent("%zz", false).unwrap_err().contains("\"%zz\""));
        assert!(percent("abc%4", false).is_err());
        // Two bytes that are not UTF-8 decode to bytes; the caller refuses them.
        assert_eq!(percent("%ff%fe", false).unwrap(), vec![0xff, 0xfe]);
    }

    #[test]
    fn query_pairs_and_duplicates() {
        let q = query("name=a%20b&config=eyJ9&flag").unwrap();
        assert_eq!(q[0].value, b"a b");
        assert_eq!(q[2].key, "flag");
        assert!(query("name=a&name=b").unwrap_err().contains("twice"));
    }

    #[test]
    fn base64_both_alphabets_padding_optional() {
        assert_eq!(base64(b"eyJhIjoxfQ==").unwrap(), b"{\"a\":1}");
        assert_eq!(base64(b"eyJhIjoxfQ").unwrap(), b"{\"a\":1}");
        // 0xfb 0xff: "+/8" standard, "-_8" URL-safe, " /8" when + became a space.
        for s in ["-_8", "+/8=", " /8"] {
            assert_eq!(base64(s.as_bytes()).unwrap(), vec![0xfb, 0xff], "{s}");
        }
        assert!(base64(b"abcde").unwrap_err().contains("missing or extra"));
        assert!(base64(b"ab*d").unwrap_err().contains("\"*\" at position 3"));
        assert!(base64(b"ab==cd").is_err());
    }
}
