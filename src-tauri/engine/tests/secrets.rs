//! Secret values in headers/env, resolved at connect time.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use switchboard_engine::auth::secrets::{Resolution, SecretResolver};

fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn unresolved_reason(r: Resolution) -> String {
    match r {
        Resolution::Unresolved { reason } => reason,
        other => panic!("expected unresolved, got {other:?}"),
    }
}

#[cfg(unix)]
#[tokio::test]
async fn command_output_is_trimmed() -> anyhow::Result<()> {
    let r = SecretResolver::with_env(env(&[]));
    assert_eq!(
        r.resolve("!echo tok").await,
        Resolution::Value("tok".into())
    );
    assert_eq!(
        r.resolve("!printf '  spaced tok \\n\\n'").await,
        Resolution::Value("spaced tok".into())
    );
    Ok(())
}

#[cfg(unix)]
#[tokio::test]
async fn command_runs_once_per_value() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("runs");
    let raw = format!("!echo run >> '{}'; echo tok", log.display());
    let r = SecretResolver::with_env(env(&[]));
    let (a, b) = tokio::join!(r.resolve(&raw), r.resolve(&raw));
    let c = r.resolve(&raw).await;
    for v in [a, b, c] {
        assert_eq!(v, Resolution::Value("tok".into()));
    }
    assert_eq!(
        std::fs::read_to_string(&log)?,
        "run\n",
        "the command must run exactly once"
    );
    Ok(())
}

#[cfg(unix)]
#[tokio::test]
async fn failed_command_is_not_cached() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let flag = dir.path().join("signed-in");
    let raw = format!("!cat '{}'", flag.display());
    let r = SecretResolver::with_env(env(&[]));
    assert!(r.resolve(&raw).await.value().is_none());
    std::fs::write(&flag, "tok\n")?;
    assert_eq!(
        r.resolve(&raw).await,
        Resolution::Value("tok".into()),
        "a later connect retries the command"
    );
    Ok(())
}

#[cfg(unix)]
#[tokio::test]
async fn failing_command_is_unresolved_with_status_and_stderr() -> anyhow::Result<()> {
    let r = SecretResolver::with_env(env(&[]));
    let reason = unresolved_reason(r.resolve("!false").await);
    assert!(reason.contains("exited with status 1"), "{reason}");
    let reason = unresolved_reason(r.resolve("!echo 'not signed in' >&2; exit 3").await);
    assert_eq!(reason, "command exited with status 3: not signed in");
    Ok(())
}

#[cfg(unix)]
#[tokio::test]
async fn empty_output_is_unresolved() -> anyhow::Result<()> {
    let r = SecretResolver::with_env(env(&[]));
    assert_eq!(
        unresolved_reason(r.resolve("!printf '  \\n'").await),
        "command printed nothing"
    );
    assert!(r.resolve("!").await.value().is_none());
    Ok(())
}

#[cfg(unix)]
#[tokio::test]
async fn slow_command_times_out_and_is_killed() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let marker = dir.path().join("survived");
    let r = SecretResolver::with_env(env(&[])).with_timeout(Duration::from_millis(200));
    let start = Instant::now();
    let reason = unresolved_reason(r.resolve("!sleep 5").await);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(reason, "command timed out after 200 ms");

    // A pipeline's other processes go too, not only the shell.
    // The subshell is its own process: killing only `sh` would leave it to run on.
    let raw = format!("!(sleep 1; touch '{}'); echo tok", marker.display());
    assert!(r.resolve(&raw).await.value().is_none());
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert!(!marker.exists(), "the timed-out command kept running");
    Ok(())
}

#[cfg(unix)]
#[tokio::test]
async fn command_sees_the_resolver_environment() -> anyhow::Result<()> {
    let r = SecretResolver::with_env(env(&[("SB_TEST_SECRET_REF", "op://vault/item")]));
    assert_eq!(
        r.resolve("!printf %s \"$SB_TEST_SECRET_REF\"").await,
        Resolution::Value("op://vault/item".into())
    );
    Ok(())
}

#[tokio::test]
async fn environment_variable_name_resolves() -> anyhow::Result<()> {
    let r = SecretResolver::with_env(env(&[("GITHUB_TOKEN", "ghp_123"), ("EMPTY", "")]));
    assert_eq!(
        r.resolve("GITHUB_TOKEN").await,
        Resolution::Value("ghp_123".into())
    );
    // Not set (or empty): the name is a literal, as in the seed.
    assert_eq!(
        r.resolve("OTHER_TOKEN").await,
        Resolution::Value("OTHER_TOKEN".into())
    );
    assert_eq!(r.resolve("EMPTY").await, Resolution::Value("EMPTY".into()));
    Ok(())
}

#[tokio::test]
async fn literals_pass_through() -> anyhow::Result<()> {
    let r = SecretResolver::with_env(env(&[("GITHUB_TOKEN", "ghp_123")]));
    for raw in [
        "Bearer abc",
        "application/json",
        "",
        "GITHUB_TOKEN ",
        "$GITHUB_TOKEN",
    ] {
        assert_eq!(
            r.resolve(raw).await,
            Resolution::Value(raw.into()),
            "{raw:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn variables_are_expanded_inside_values() -> anyhow::Result<()> {
    let r = SecretResolver::with_env(env(&[("TOKEN", "t0k")]));
    assert_eq!(
        r.resolve("Bearer ${TOKEN}").await,
        Resolution::Value("Bearer t0k".into())
    );
    assert_eq!(
        r.resolve("Bearer ${env:TOKEN}").await,
        Resolution::Value("Bearer t0k".into())
    );
    assert_eq!(r.resolve("${X:-d}").await, Resolution::Value("d".into()));
    assert_eq!(
        r.resolve("${TOKEN:-d}").await,
        Resolution::Value("t0k".into())
    );
    let reason = unresolved_reason(r.resolve("Bearer sk-literal-${MISSING}").await);
    assert_eq!(reason, "unresolved ${MISSING}");
    Ok(())
}

#[tokio::test]
async fn resolve_map_drops_unresolved_with_a_warning() -> anyhow::Result<()> {
    let r = SecretResolver::with_env(env(&[("GITHUB_TOKEN", "ghp_secret_value")]));
    let headers: IndexMap<String, String> = [
        ("Authorization", "Bearer ${API_KEY}"),
        ("X-Token", "GITHUB_TOKEN"),
        ("Accept", "application/json"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let (resolved, warnings) = r.resolve_map("header", &headers).await;
    assert_eq!(
        resolved.keys().collect::<Vec<_>>(),
        ["X-Token", "Accept"],
        "order kept, unresolved dropped"
    );
    assert_eq!(resolved["X-Token"], "ghp_secret_value");
    assert_eq!(
        warnings,
        ["header Authorization resolved to nothing (unresolved ${API_KEY})"]
    );
    Ok(())
}

#[cfg(unix)]
#[tokio::test]
async fn env_warnings_name_the_variable_and_never_the_value() -> anyhow::Result<()> {
    let secret = "sk-very-secret-0123";
    let r = SecretResolver::with_env(env(&[("SB_SECRET", secret)]));
    let map: IndexMap<String, String> = [
        ("GITHUB_TOKEN", "!false"),
        ("API_KEY", "SB_SECRET"),
        ("OTHER", "!printf %s \"$SB_SECRET\"; exit 1"),
        ("PREFIXED", "sk-very-secret-0123${NOPE}"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let (resolved, warnings) = r.resolve_map("env", &map).await;
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved["API_KEY"], secret);
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert_eq!(
        warnings[0],
        "env GITHUB_TOKEN resolved to nothing (command exited with status 1)"
    );
    assert!(
        warnings[1].starts_with("env OTHER resolved to nothing ("),
        "{}",
        warnings[1]
    );
    assert_eq!(
        warnings[2],
        "env PREFIXED resolved to nothing (unresolved ${NOPE})"
    );
    for w in &warnings {
        assert!(!w.contains(secret), "a warning leaked the secret: {w}");
    }
    let debug = format!("{:?} {:?}", r, r.resolve("SB_SECRET").await);
    assert!(!debug.contains(secret), "Debug leaked the secret: {debug}");
    Ok(())
}
