//! What Switchboard lets the OS open. A link a server chose (the
//! sign-in page from its OAuth metadata) goes to the system opener only when
//! it is a web page: `https:`, or `http:` to this computer. Anything else
//! (`file:`, `smb:`, `javascript:`, an app's own scheme) would make the OS
//! run whatever handler the server picked.

use std::net::IpAddr;

/// Where a sign-in link comes from, for [`RefusedLink`]'s message.
pub const SIGN_IN_METADATA: &str = "the server's sign-in metadata";

/// A link Switchboard will not open; the message names the scheme.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefusedLink {
    #[error("Refusing to open a link from {from} that is not a valid URL: only https (or http on this computer) is opened.")]
    NotAUrl { from: String },
    #[error("Refusing to open \"{scheme}:\" link from {from}: only https (or http on this computer) is opened.")]
    Scheme { scheme: String, from: String },
    #[error("Refusing to open \"http:\" link to {host} from {from}: only https (or http on this computer) is opened.")]
    NotLoopback { host: String, from: String },
    // `https://trusted.example@evil.example/` shows one host and opens another.
    #[error("Refusing to open \"{scheme}:\" link with a user name or password in it from {from}: such a link can hide where it leads.")]
    Userinfo { scheme: String, from: String },
}

/// The URL to hand to the OS opener, if `link` (from `from`, e.g.
/// [`SIGN_IN_METADATA`]) is `https:`, or `http:` to a loopback host
/// (127.0.0.0/8, `::1`, `localhost`), without a user name or password.
/// Open the returned URL, not `link`: it is exactly what was checked.
pub fn check_link(link: &str, from: &str) -> Result<url::Url, RefusedLink> {
    let url = url::Url::parse(link).map_err(|_| RefusedLink::NotAUrl { from: from.into() })?;
    let scheme = url.scheme(); // the parser lower-cases it
    if scheme != "https" && scheme != "http" {
        return Err(RefusedLink::Scheme {
            scheme: scheme.into(),
            from: from.into(),
        });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(RefusedLink::Userinfo {
            scheme: scheme.into(),
            from: from.into(),
        });
    }
    if scheme == "http" && !is_loopback(&url) {
        let host = url.host_str().unwrap_or_default().to_string();
        return Err(RefusedLink::NotLoopback {
            host,
            from: from.into(),
        });
    }
    Ok(url)
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(link: &str) -> String {
        check_link(link, SIGN_IN_METADATA)
            .expect_err(link)
            .to_string()
    }

    #[test]
    fn web_pages_are_opened() {
        for link in [
            "https://auth.example.com/authorize?client_id=x&state=y",
            "HTTPS://Auth.Example.com/authorize",
            "https://127.0.0.1:8443/a",
            "https://[2001:db8::1]/a",
            "http://127.0.0.1:4567/authorize?state=s",
            "http://127.9.8.7/a",
            "http://localhost:3000/authorize",
            "HTTP://LOCALHOST/a",
            "http://[::1]:8080/authorize",
        ] {
            let url = check_link(link, SIGN_IN_METADATA).unwrap_or_else(|e| panic!("{link}: {e}"));
            assert!(
                url.scheme() == "https" || url.scheme() == "http",
                "{link} -> {url}"
            );
        }
    }

    #[test]
    fn other_schemes_are_refused_with_the_scheme_named() {
        for (link, scheme) in [
            ("file:///etc/passwd", "file"),
            ("FILE:///C:/Windows/System32/calc.exe", "file"),
            ("smb://attacker.example/share", "smb"),
            ("javascript:alert(1)", "javascript"),
            ("data:text/html,<script>alert(1)</script>", "data"),
            ("vbscript:msgbox", "vbscript"),
            ("ms-settings:privacy", "ms-settings"),
            ("slack://open?team=T1", "slack"),
            ("x-myapp:do-something", "x-myapp"),
            ("ftp://example.com/file", "ftp"),
            ("ws://127.0.0.1/socket", "ws"),
            ("mailto:someone@example.com", "mailto"),
        ] {
            assert_eq!(
                refused(link),
                format!("Refusing to open \"{scheme}:\" link from the server's sign-in metadata: only https (or http on this computer) is opened."),
                "{link}"
            );
        }
    }

    #[test]
    fn http_is_refused_unless_it_stays_on_this_computer() {
        for (link, host) in [
            ("http://example.com/authorize", "example.com"),
            ("http://localhost.evil.com/authorize", "localhost.evil.com"),
            ("http://evil-localhost/a", "evil-localhost"),
            ("http://127.0.0.1.nip.io/a", "127.0.0.1.nip.io"),
            ("http://10.0.0.1/a", "10.0.0.1"),
            ("http://0.0.0.0/a", "0.0.0.0"),
            ("http://[::]/a", "[::]"),
            ("http://[::ffff:8.8.8.8]/a", "[::ffff:808:808]"),
            ("http://[2001:db8::1]/a", "[2001:db8::1]"),
        ] {
            assert_eq!(
                refused(link),
                format!("Refusing to open \"http:\" link to {host} from the server's sign-in metadata: only https (or http on this computer) is opened."),
                "{link}"
            );
        }
    }

    #[test]
    fn links_with_a_user_name_or_password_are_refused() {
        for link in [
            "https://accounts.example.com@evil.example/login",
            "https://user:pass@example.com/",
            "http://me@127.0.0.1/a",
        ] {
            let msg = refused(link);
            assert!(
                msg.contains("user name or password") && msg.starts_with("Refusing to open \"http"),
                "{link}: {msg}"
            );
        }
    }

    #[test]
    fn what_is_not_a_url_is_refused() {
        for link in [
            "",
            "not a link",
            "/authorize?x=1",
            "//evil.example/a",
            "https://",
            "http://[::1/a",
        ] {
            assert_eq!(refused(link), "Refusing to open a link from the server's sign-in metadata that is not a valid URL: only https (or http on this computer) is opened.", "{link:?}");
        }
    }

    #[test]
    fn the_checked_url_is_what_gets_opened() {
        // Whitespace and control characters are encoded or dropped by the
        // parser, so an opener that runs through a shell never sees them raw.
        let url = check_link(" https://example.com/a b\n?x=\"y\"", SIGN_IN_METADATA).unwrap();
        assert_eq!(url.as_str(), "https://example.com/a%20b?x=%22y%22");
    }
}
