//! Finding stdio servers' executables without the shell's PATH.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use switchboard_engine::launch::{login_shell_path, CommandResolver};

fn mkdir(p: &Path) -> PathBuf {
    std::fs::create_dir_all(p).unwrap();
    p.to_path_buf()
}

#[cfg(unix)]
fn script(path: &Path, executable: bool) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, "#!/bin/sh\necho hi\n").unwrap();
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn path_of(dirs: &[&Path]) -> OsString {
    std::env::join_paths(dirs).unwrap()
}

#[cfg(unix)]
#[test]
fn finds_a_command_in_an_extra_dir() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let bin = mkdir(&home.path().join(".bun/bin"));
    script(&bin.join("bunx-tool"), true);
    let empty = tempfile::tempdir()?;

    let r = CommandResolver::new(
        Some(path_of(&[empty.path()])),
        Some(home.path().into()),
        None,
    );
    assert_eq!(
        r.resolve("bunx-tool", None).map_err(anyhow::Error::msg)?,
        bin.join("bunx-tool")
    );
    Ok(())
}

#[cfg(unix)]
#[test]
fn skips_files_that_are_not_executable() -> anyhow::Result<()> {
    let a = tempfile::tempdir()?;
    let b = tempfile::tempdir()?;
    script(&a.path().join("tool"), false);
    script(&b.path().join("tool"), true);
    mkdir(&a.path().join("dir-named-tool"));

    let r = CommandResolver::new(Some(path_of(&[a.path(), b.path()])), None, None);
    assert_eq!(
        r.resolve("tool", None).map_err(anyhow::Error::msg)?,
        b.path().join("tool")
    );
    let err = r.resolve("dir-named-tool", None).unwrap_err();
    assert!(err.contains("was not found"), "{err}");

    let only_plain = CommandResolver::new(Some(path_of(&[a.path()])), None, None);
    assert!(
        only_plain.resolve("tool", None).is_err(),
        "a non-executable file is not a command"
    );
    Ok(())
}

#[test]
fn not_found_names_the_command_and_the_searched_dirs() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let local = mkdir(&home.path().join(".local/bin"));
    let other = tempfile::tempdir()?;
    let r = CommandResolver::new(
        Some(path_of(&[other.path()])),
        Some(home.path().into()),
        None,
    );
    let err = r.resolve("mcp-server-nowhere", None).unwrap_err();
    assert!(
        err.starts_with("command \"mcp-server-nowhere\" was not found on PATH (searched: "),
        "{err}"
    );
    assert!(err.contains(&other.path().display().to_string()), "{err}");
    let home_relative = format!(
        "~{}{}",
        std::path::MAIN_SEPARATOR,
        local.strip_prefix(home.path())?.display()
    );
    assert!(
        err.contains(&home_relative),
        "home dirs are shown with ~: {err}"
    );
    Ok(())
}

#[test]
fn newest_nvm_version_is_chosen() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let versions = home.path().join(".nvm/versions/node");
    for v in [
        "v9.11.2",
        "v18.2.0",
        "v18.10.0",
        "v16.20.1",
        "not-a-version",
    ] {
        mkdir(&versions.join(v).join("bin"));
    }
    let r = CommandResolver::new(None, Some(home.path().into()), None);
    let nvm: Vec<_> = r
        .dirs()
        .iter()
        .filter(|d| d.starts_with(&versions))
        .collect();
    assert_eq!(
        nvm,
        [&versions.join("v18.10.0/bin")],
        "numeric, not lexical, comparison"
    );
    Ok(())
}

#[test]
fn order_is_process_then_login_shell_then_extras_without_duplicates() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let cargo = mkdir(&home.path().join(".cargo/bin"));
    let local = mkdir(&home.path().join(".local/bin"));
    let missing = home.path().join(".deno/bin"); // not created: left out
    let p1 = tempfile::tempdir()?;
    let s1 = tempfile::tempdir()?;

    let process = path_of(&[
        p1.path(),
        cargo.as_path(),
        Path::new(""),
        Path::new("relative/bin"),
    ]);
    let login = path_of(&[s1.path(), p1.path()]).into_string().unwrap();
    let r = CommandResolver::new(Some(process), Some(home.path().into()), Some(login));
    let dirs = r.dirs();
    assert_eq!(
        &dirs[..4],
        [p1.path(), cargo.as_path(), s1.path(), local.as_path()]
    );
    assert!(!dirs.contains(&missing));
    assert!(
        dirs.iter().all(|d| d.is_absolute()),
        "empty and relative entries are dropped: {dirs:?}"
    );
    let unique: std::collections::HashSet<_> = dirs.iter().collect();
    assert_eq!(unique.len(), dirs.len());

    let search: Vec<PathBuf> = std::env::split_paths(&r.search_path()).collect();
    assert_eq!(search, dirs);
    Ok(())
}

/// Started with no PATH and no login shell to ask (a service manager, `env -i`,
/// a CI runner without `$SHELL`), a server still finds the system's tools, and
/// so does the `sh -c` it may be: the system folders come last, after
/// everything the user set up.
#[cfg(unix)]
#[test]
fn without_path_or_login_shell_the_system_folders_are_searched_last() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let r = CommandResolver::new(None, Some(home.path().into()), None);
    let env = r.resolve("env", None).map_err(anyhow::Error::msg)?;
    assert!(env.ends_with("env") && env.is_absolute(), "{env:?}");
    let search: Vec<PathBuf> = std::env::split_paths(&r.search_path()).collect();
    assert!(search.contains(&PathBuf::from("/usr/bin")), "{search:?}");

    let mine = tempfile::tempdir()?;
    let r = CommandResolver::new(
        Some(path_of(&[mine.path(), Path::new("/usr/bin")])),
        None,
        None,
    );
    assert_eq!(
        r.dirs()[..2],
        [mine.path(), Path::new("/usr/bin")],
        "the user's own order is kept"
    );
    Ok(())
}

#[test]
fn paths_are_used_as_is_and_relative_ones_against_cwd() -> anyhow::Result<()> {
    let r = CommandResolver::new(None, None, None);
    let cwd = Path::new("/projects/app");
    assert_eq!(
        r.resolve("./bin/server", Some(cwd))
            .map_err(anyhow::Error::msg)?,
        cwd.join("./bin/server")
    );
    assert_eq!(
        r.resolve("bin/server", None).map_err(anyhow::Error::msg)?,
        PathBuf::from("bin/server")
    );
    #[cfg(unix)]
    assert_eq!(
        r.resolve("/usr/bin/env", Some(cwd))
            .map_err(anyhow::Error::msg)?,
        PathBuf::from("/usr/bin/env")
    );
    assert!(r.resolve("  ", None).is_err());
    Ok(())
}

#[test]
fn login_shell_query_is_bounded_and_cached() {
    let start = Instant::now();
    let first = login_shell_path();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    let again = Instant::now();
    assert_eq!(login_shell_path(), first);
    assert!(
        again.elapsed() < Duration::from_millis(50),
        "the second call must use the cache"
    );
    if let Some(p) = first {
        assert!(!p.is_empty() && !p.contains('\n'), "{p:?}");
    }
}
