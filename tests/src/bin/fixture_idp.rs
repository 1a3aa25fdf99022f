//! `fixture-idp`: the stand-in identity provider of `switchboard_tests::idp`
//! as a program, for the Python tests of team mode. Prints one JSON line,
//! `{"url": ISSUER, "control": URL}`, on stdout once listening, then serves
//! until killed; tests steer it over HTTP at `/_control/…` (see the module
//! documentation of `switchboard_tests::idp`). For tests only; not secure.

use std::io::Write as _;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use switchboard_tests::idp::{Idp, IdpOptions, KeyKind, User};

/// A stand-in OAuth 2.1 / OpenID Connect provider issuing JWT access tokens.
#[derive(Parser, Debug)]
#[command(name = "fixture-idp", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: String,
    /// Who signs in at /authorize: `sub` or `sub:group1,group2`.
    #[arg(long, default_value = "alice:engineering")]
    user: String,
    /// `aud` of tokens requested without `resource`, and of minted tokens.
    #[arg(long)]
    resource: Option<String>,
    /// A path for the issuer URL, e.g. `/tenant`.
    #[arg(long, default_value = "")]
    issuer_path: String,
    /// Access token lifetime in seconds.
    #[arg(long, default_value_t = 3600)]
    token_ttl: u64,
    /// Serve no `/.well-known/openid-configuration` (RFC 8414 metadata only).
    #[arg(long)]
    no_openid_configuration: bool,
    /// Claim this `issuer` in the metadata instead of the real one.
    #[arg(long)]
    metadata_issuer: Option<String>,
    /// The first signing key: RS256, ES256 or EdDSA.
    #[arg(long, default_value = "RS256")]
    key: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut options = IdpOptions {
        addr: args.addr.parse().context("--addr")?,
        user: User::parse(&args.user).context("--user must be sub or sub:group1,group2")?,
        token_ttl: Duration::from_secs(args.token_ttl),
        issuer_path: args.issuer_path,
        openid_configuration: !args.no_openid_configuration,
        metadata_issuer: args.metadata_issuer,
        first_key: KeyKind::parse(&args.key).context("--key must be RS256, ES256 or EdDSA")?,
        ..IdpOptions::default()
    };
    if let Some(resource) = args.resource {
        options.default_resource = resource;
    }
    let idp = Idp::try_start(options).await?;
    let line = serde_json::json!({ "url": idp.url, "control": format!("{}/_control", idp.base) });
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()?;
    drop(out);
    tokio::signal::ctrl_c().await?;
    drop(idp);
    Ok(())
}
