//! Team mode's per-request token check: `cargo bench --bench team_token`.
//!
//! `Validator::validate` of a genuine access token whose key is cached (the
//! case of every request after the first): base64, header, signature,
//! claims. Goal: median ≤ 50 µs for RS256 (RSA 2048), the usual algorithm of
//! identity providers. ES256 is reported alongside. The tokens come from the
//! stand-in identity provider (`switchboard_tests::idp`) on loopback; no
//! network I/O happens during the timed calls.

use std::time::{Duration, Instant};

use switchboard_engine::team::oidc::{OidcSettings, Validator};
use switchboard_tests::bench::{ms_stats, record, Goal};
use switchboard_tests::idp::{Idp, KeyKind, Mint};

const RUNS: usize = 2000;
const RESOURCE: &str = "http://127.0.0.1/mcp";

/// Times `RUNS` validations of `token` after a warm-up; in µs: median,
/// 90th and 99th percentile.
async fn time_validations(v: &Validator, token: &str) -> (f64, f64, f64) {
    for _ in 0..200 {
        v.validate(token).await.expect("a valid token");
    }
    let mut samples: Vec<Duration> = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let id = v.validate(token).await;
        samples.push(t.elapsed());
        assert!(id.is_ok());
    }
    let (median, p90) = ms_stats(&samples);
    samples.sort();
    let p99 = samples[(RUNS - 1) * 99 / 100].as_secs_f64() * 1e6;
    (median * 1000.0, p90 * 1000.0, p99)
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let idp = Idp::start().await; // RS256 first
        let v = Validator::discover(
            OidcSettings::new(&idp.url, RESOURCE),
            reqwest::Client::new(),
        )
        .await
        .unwrap();
        let rs256 = idp.mint(Mint::new());
        idp.rotate(KeyKind::Es256, true).await;
        let es256 = idp.mint(Mint::new());
        v.validate(&es256).await.unwrap(); // fetches the new key once

        for (alg, token, goal) in [
            ("RS256", &rs256, Goal::Max(50.0)),
            ("ES256", &es256, Goal::None),
        ] {
            let (median, p90, p99) = time_validations(&v, token).await;
            record(
                "Team mode",
                &format!("Validate a {alg} access token (key cached)"),
                median,
                Some(p90),
                "µs",
                goal,
                &format!("{RUNS} runs, {} byte token, p99 {p99:.1} µs", token.len()),
            );
        }
    });
}
