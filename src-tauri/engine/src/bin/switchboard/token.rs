//! `add --url URL --token-stdin`: a static bearer token, read from standard
//! input (or a prompt that does not echo it) and kept in the OS keychain, so
//! it is in no config file, shell history or process list.

use std::io::{IsTerminal, Read, Write};

use switchboard_engine::auth::vault::Vault;
use switchboard_engine::config::ServerDef;

/// The token for `name`: a prompt on a terminal, otherwise all of stdin.
/// Checks first that the keychain can take it, so nothing is written when
/// it cannot.
pub fn read(name: &str, def: &ServerDef) -> anyhow::Result<String> {
    if def
        .headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        anyhow::bail!("--token-stdin and an Authorization --header both set the Authorization header; give one");
    }
    Vault::keychain()
        .probe_writable()
        .map_err(|e| anyhow::anyhow!("cannot keep the token of \"{name}\": {e}"))?;
    let stdin = std::io::stdin();
    let raw = if stdin.is_terminal() {
        prompt(&format!("Bearer token for \"{name}\" (not shown): "))?
    } else {
        let mut s = String::new();
        stdin.lock().read_to_string(&mut s)?;
        s
    };
    let token = raw.trim();
    // A pasted header value works too.
    let token = token
        .strip_prefix("Bearer ")
        .or_else(|| token.strip_prefix("bearer "))
        .unwrap_or(token)
        .trim();
    if token.is_empty() {
        anyhow::bail!("no token was given on standard input for \"{name}\" (try: `printf %s \"$TOKEN\" | switchboard add {name} --url URL --token-stdin`)");
    }
    if token.chars().any(char::is_control) || token.contains(char::is_whitespace) {
        anyhow::bail!(
            "the token for \"{name}\" has spaces or line breaks inside; give only the token itself"
        );
    }
    Ok(token.to_string())
}

/// Keep `token` in the keychain as the bearer token of `name` at `url`.
pub fn keep(name: &str, url: &str, token: &str) -> anyhow::Result<()> {
    Vault::keychain()
        .put_token(name, url, token)
        .map_err(|e| anyhow::anyhow!("cannot keep the token of \"{name}\": {e}"))
}

/// One line from the terminal with echo off.
pub(crate) fn prompt(question: &str) -> anyhow::Result<String> {
    let mut err = std::io::stderr();
    write!(err, "{question}")?;
    err.flush()?;
    let _quiet = NoEcho::start();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    writeln!(err)?;
    Ok(line)
}

/// Terminal echo off until dropped.
struct NoEcho {
    #[cfg(unix)]
    saved: Option<nix::sys::termios::Termios>,
}

impl NoEcho {
    #[cfg(unix)]
    fn start() -> NoEcho {
        use nix::sys::termios::{tcgetattr, tcsetattr, LocalFlags, SetArg};
        let Ok(saved) = tcgetattr(std::io::stdin()) else {
            return NoEcho { saved: None };
        };
        let mut quiet = saved.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        let _ = tcsetattr(std::io::stdin(), SetArg::TCSANOW, &quiet);
        NoEcho { saved: Some(saved) }
    }

    #[cfg(not(unix))]
    fn start() -> NoEcho {
        NoEcho {}
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(saved) = &self.saved {
            let _ = nix::sys::termios::tcsetattr(
                std::io::stdin(),
                nix::sys::termios::SetArg::TCSANOW,
                saved,
            );
        }
    }
}
