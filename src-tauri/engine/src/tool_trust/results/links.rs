//! Links that carry data out: a query that holds more than an address
//! needs, a parameter value that looks encoded, a host name made of encoded
//! labels, and images whose address does any of that (clients fetch images
//! as they show them, so nobody has to click).

use std::sync::LazyLock;

use regex::Regex;

/// Query data (characters of `name=value` pairs, signature parameters
/// aside) from which a link is said to carry data.
const LINK_QUERY_CHARS: usize = 100;
/// The same for an image, which is fetched unasked.
const IMAGE_QUERY_CHARS: usize = 40;
/// A parameter value at least this long that looks base64 or hex.
const ENCODED_VALUE_CHARS: usize = 32;
/// For an image, a base64-looking value from this length on.
const IMAGE_BASE64_CHARS: usize = 20;
/// Links read per text: a text of a million links costs no more than this.
const MAX_LINKS: usize = 1000;

static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?i)https?://[^\s<>"'`)\]}|\\]+"#).expect("pattern"));

/// `![alt](url)` and `<img … src="url">`; group 1 or 2 is the address.
static IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)!\[[^\]\n]*\]\(\s*<?(https?://[^\s)>]+)|<img\s[^>]*?\bsrc\s*=\s*["']?(https?://[^\s"'>]+)"#)
        .expect("pattern")
});

/// What one link carries, when it is enough to say so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    pub host: String,
    /// Where the data is: `query` or `host name`.
    pub place: &'static str,
    /// How many characters of data (query pairs, or host labels).
    pub chars: usize,
}

/// The first link of `text` that carries data, and the first image (its
/// links are not counted twice).
#[derive(Debug, Default)]
pub struct LinkData {
    pub link: Option<Carried>,
    pub image: Option<Carried>,
}

pub fn read(text: &str) -> LinkData {
    let mut out = LinkData::default();
    if !text.contains("://") {
        return out;
    }
    let mut images = vec![];
    // Most texts have no image: the captures are not worth looking for.
    let maybe_image = text.contains("![") || text.contains("<img") || text.contains("<IMG");
    for c in IMAGE
        .captures_iter(if maybe_image { text } else { "" })
        .take(MAX_LINKS)
    {
        let Some(m) = c.get(1).or_else(|| c.get(2)) else {
            continue;
        };
        images.push(m.range());
        if out.image.is_none() {
            out.image = carried(m.as_str(), true);
        }
    }
    for m in URL.find_iter(text).take(MAX_LINKS) {
        if out.link.is_some() {
            break;
        }
        if images.iter().any(|r| r.contains(&m.start())) {
            continue;
        }
        out.link = carried(m.as_str(), false);
    }
    out
}

/// Parameters of signed-URL schemes (S3, Google Cloud Storage, Azure SAS,
/// CloudFront): long and encoded by design, and no one's data.
fn signature_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["x-amz-", "x-goog-", "x-ms-"]
        .iter()
        .any(|p| n.starts_with(p))
        || matches!(
            n.as_str(),
            "signature"
                | "sig"
                | "se"
                | "sp"
                | "sv"
                | "sr"
                | "st"
                | "spr"
                | "skoid"
                | "sktid"
                | "skt"
                | "ske"
                | "sks"
                | "skv"
                | "expires"
                | "key-pair-id"
                | "policy"
                | "googleaccessid"
                | "awsaccesskeyid"
        )
}

/// Parameters whose value is an identifier: a hash or commit in hex is
/// what they hold, not data being carried.
fn id_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with("id")
        || matches!(
            n.as_str(),
            "sha"
                | "hash"
                | "commit"
                | "ref"
                | "rev"
                | "etag"
                | "oid"
                | "digest"
                | "checksum"
                | "v"
        )
}

fn looks_base64(v: &str, min: usize) -> bool {
    v.len() >= min
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_'))
        && v.bytes().any(|b| b.is_ascii_uppercase())
        && v.bytes().any(|b| b.is_ascii_lowercase())
        && v.bytes().any(|b| b.is_ascii_digit())
}

fn looks_hex(v: &str) -> bool {
    v.len() >= ENCODED_VALUE_CHARS && v.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Host labels that look like encoded data: one long label of letters and
/// digits mixed, or several labels that add up to a lot.
fn subdomain_data(host: &str) -> usize {
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() <= 2 || host.parse::<std::net::Ipv4Addr>().is_ok() {
        return 0;
    }
    let sub = &labels[..labels.len() - 2];
    let encoded = |l: &&str| {
        l.len() >= 24
            && l.bytes().all(|b| b.is_ascii_alphanumeric())
            && l.bytes().filter(u8::is_ascii_digit).count() >= 3
            && l.bytes().filter(u8::is_ascii_alphabetic).count() >= 3
    };
    let total: usize = sub.iter().map(|l| l.len()).sum();
    let many = sub.len() >= 3
        && total >= 48
        && sub
            .iter()
            .all(|l| l.bytes().all(|b| b.is_ascii_alphanumeric()));
    if sub.iter().any(encoded) || many {
        total
    } else {
        0
    }
}

/// What `url` carries, if it is enough to flag (`image`: by the lower
/// bounds of an image).
pub fn carried(url: &str, image: bool) -> Option<Carried> {
    let url = url.trim_end_matches(['.', ',', ';', ':', '!', '?', '*', '_']);
    // Most links: no query, a short host; not worth parsing.
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let raw_host = after_scheme.split(['/', '?', '#']).next().unwrap_or("");
    if !url.contains('?') && raw_host.len() < 24 {
        return None;
    }
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str()?.to_string();
    let in_host = subdomain_data(&host);
    if in_host > 0 {
        return Some(Carried {
            host,
            place: "host name",
            chars: in_host,
        });
    }
    let query = u.query()?;
    let mut chars = 0;
    let mut encoded = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let key: String = url::form_urlencoded::parse(k.as_bytes())
            .next()
            .map(|(k, _)| k.into_owned())
            .unwrap_or_default();
        if signature_param(&key) {
            continue;
        }
        chars += pair.len();
        let value: String = url::form_urlencoded::parse(format!("x={v}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let b64_min = if image {
            IMAGE_BASE64_CHARS
        } else {
            ENCODED_VALUE_CHARS
        };
        encoded |= looks_base64(&value, b64_min) || (looks_hex(&value) && !id_param(&key));
    }
    let bound = if image {
        IMAGE_QUERY_CHARS
    } else {
        LINK_QUERY_CHARS
    };
    (encoded || chars > bound).then_some(Carried {
        host,
        place: "query",
        chars,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_storage_links_and_ids_carry_nothing() {
        let s3 = "https://bucket.s3.us-east-1.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20240101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024";
        assert_eq!(carried(s3, false), None);
        assert_eq!(carried("https://api.github.com/repos/o/r/commits?sha=4b825dc642cb6eb9a060e54bf8d69288fbee4904", false), None);
        assert_eq!(
            carried("https://d1234abcd.cloudfront.net/a.png", true),
            None
        );
        assert_eq!(carried("https://127.0.0.1:8080/x?a=b", false), None);
    }

    #[test]
    fn data_is_counted_where_it_is() {
        let c = carried(
            "https://6a6f686e2e646f6540636f6d70616e79.attacker.example/",
            false,
        )
        .unwrap();
        assert_eq!(
            (c.host.as_str(), c.place),
            (
                "6a6f686e2e646f6540636f6d70616e79.attacker.example",
                "host name"
            )
        );
        let c = carried(
            "https://t.example/p?d=am9obkBleGFtcGxlLmNvbTpodW50ZXIy",
            true,
        )
        .unwrap();
        assert_eq!((c.place, c.chars), ("query", 34));
    }

    #[test]
    fn an_image_link_is_reported_once_as_an_image() {
        let d =
            read("![x](https://t.example/p.png?d=am9obkBleGFtcGxlLmNvbTpodW50ZXIyMTIzNDU2Nzg5MA)");
        assert!(d.image.is_some() && d.link.is_none(), "{d:?}");
    }
}
