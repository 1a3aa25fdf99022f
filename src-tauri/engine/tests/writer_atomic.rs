//! `writer::atomic::write_atomic` on real files: conflicts, permissions,
//! symlinks, and that a failed write leaves the original and no temp file.

use std::fs;
use std::path::Path;

use switchboard_engine::writer::atomic::{
    content_hash, fail_next_write_before_rename, write_atomic, Expected, WriteError,
};

const ORIGINAL: &[u8] = b"{\n  \"mcpServers\": {}\n}\n";
const NEW: &[u8] = b"{\n  \"mcpServers\": { \"a\": { \"command\": \"x\" } }\n}\n";

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn writes_when_hash_matches() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("mcp.json");
    fs::write(&path, ORIGINAL)?;
    write_atomic(&path, NEW, Expected::Hash(content_hash(ORIGINAL)))?;
    assert_eq!(fs::read(&path)?, NEW, "new contents written");
    assert_eq!(entries(dir.path()), ["mcp.json"], "no temp file left");
    Ok(())
}

#[test]
fn conflict_when_file_changed_since_read() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("mcp.json");
    fs::write(&path, ORIGINAL)?;
    let read_hash = content_hash(&fs::read(&path)?);
    // another program saves the file between our read and our write
    fs::write(&path, b"{\"edited\": \"elsewhere\"}")?;
    let err = write_atomic(&path, NEW, Expected::Hash(read_hash)).unwrap_err();
    assert!(
        matches!(err, WriteError::Conflict { .. }),
        "expected a conflict, got {err:?}"
    );
    assert!(
        err.to_string().contains("changed on disk"),
        "message: {err}"
    );
    assert_eq!(
        fs::read(&path)?,
        b"{\"edited\": \"elsewhere\"}",
        "the other program's save survives"
    );
    assert_eq!(entries(dir.path()), ["mcp.json"], "no temp file left");
    Ok(())
}

#[test]
fn conflict_when_absent_expected_but_file_exists() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("mcp.json");
    fs::write(&path, ORIGINAL)?;
    let err = write_atomic(&path, NEW, Expected::Absent).unwrap_err();
    assert!(
        matches!(err, WriteError::Conflict { .. }),
        "expected a conflict, got {err:?}"
    );
    assert_eq!(fs::read(&path)?, ORIGINAL, "existing file untouched");
    Ok(())
}

#[test]
fn conflict_when_hash_expected_but_file_is_gone() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("mcp.json");
    let err = write_atomic(&path, NEW, Expected::Hash(content_hash(ORIGINAL))).unwrap_err();
    assert!(
        matches!(err, WriteError::Conflict { .. }),
        "expected a conflict, got {err:?}"
    );
    assert!(!path.exists(), "nothing created");
    Ok(())
}

#[test]
fn creates_missing_file_and_parent_dirs_when_absent() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join(".cursor").join("nested").join("mcp.json");
    write_atomic(&path, NEW, Expected::Absent)?;
    assert_eq!(fs::read(&path)?, NEW, "file created");
    Ok(())
}

#[test]
fn any_skips_the_check() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("settings.json");
    fs::write(&path, ORIGINAL)?;
    write_atomic(&path, NEW, Expected::Any)?;
    assert_eq!(fs::read(&path)?, NEW);
    Ok(())
}

#[cfg(unix)]
#[test]
fn keeps_file_permissions() -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("secrets.json");
    fs::write(&path, ORIGINAL)?;
    for mode in [0o600, 0o640, 0o755] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode))?;
        let current = fs::read(&path)?;
        write_atomic(&path, NEW, Expected::Hash(content_hash(&current)))?;
        let after = fs::metadata(&path)?.permissions().mode() & 0o7777;
        assert_eq!(
            after, mode,
            "mode {mode:o} must survive the write, got {after:o}"
        );
        fs::write(&path, ORIGINAL)?;
    }
    Ok(())
}

#[cfg(unix)]
#[test]
fn new_file_gets_ordinary_permissions_not_temp_file_ones() -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("new.json");
    write_atomic(&path, NEW, Expected::Absent)?;
    let reference = dir.path().join("reference");
    fs::write(&reference, b"")?;
    let mode = fs::metadata(&path)?.permissions().mode() & 0o777;
    let expected = fs::metadata(&reference)?.permissions().mode() & 0o777;
    assert_eq!(
        mode, expected,
        "a new file gets what File::create gives (umask applied), got {mode:o}"
    );
    Ok(())
}

#[cfg(unix)]
#[test]
fn follows_symlink_and_keeps_it() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let dotfiles = dir.path().join("dotfiles");
    fs::create_dir(&dotfiles)?;
    let target = dotfiles.join("claude_desktop_config.json");
    fs::write(&target, ORIGINAL)?;
    let link = dir.path().join("config.json");
    std::os::unix::fs::symlink(&target, &link)?;

    write_atomic(&link, NEW, Expected::Hash(content_hash(ORIGINAL)))?;

    assert!(
        fs::symlink_metadata(&link)?.file_type().is_symlink(),
        "the link is still a link"
    );
    assert_eq!(
        fs::read_link(&link)?,
        target,
        "the link still points at the same file"
    );
    assert_eq!(
        fs::read(&target)?,
        NEW,
        "the real file got the new contents"
    );
    assert_eq!(
        entries(dir.path()),
        ["config.json", "dotfiles"],
        "no temp file next to the link"
    );
    assert_eq!(
        entries(&dotfiles),
        ["claude_desktop_config.json"],
        "no temp file next to the target"
    );
    Ok(())
}

#[cfg(unix)]
#[test]
fn follows_relative_symlink_chains() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    fs::create_dir(dir.path().join("real"))?;
    let target = dir.path().join("real").join("mcp.json");
    fs::write(&target, ORIGINAL)?;
    // a -> b -> real/mcp.json, all relative
    std::os::unix::fs::symlink("real/mcp.json", dir.path().join("b"))?;
    std::os::unix::fs::symlink("b", dir.path().join("a"))?;

    write_atomic(
        &dir.path().join("a"),
        NEW,
        Expected::Hash(content_hash(ORIGINAL)),
    )?;

    assert_eq!(fs::read(&target)?, NEW, "the end of the chain was written");
    assert!(
        fs::symlink_metadata(dir.path().join("a"))?
            .file_type()
            .is_symlink(),
        "a is still a link"
    );
    assert!(
        fs::symlink_metadata(dir.path().join("b"))?
            .file_type()
            .is_symlink(),
        "b is still a link"
    );
    Ok(())
}

#[cfg(unix)]
#[test]
fn symlink_conflict_checks_the_target_bytes() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let target = dir.path().join("target.json");
    fs::write(&target, ORIGINAL)?;
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link)?;
    let err = write_atomic(&link, NEW, Expected::Absent).unwrap_err();
    assert!(
        matches!(err, WriteError::Conflict { .. }),
        "the link's target exists: {err:?}"
    );
    assert_eq!(fs::read(&target)?, ORIGINAL);
    Ok(())
}

#[cfg(unix)]
#[test]
fn symlink_loop_is_an_error_not_a_hang() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    std::os::unix::fs::symlink("b", dir.path().join("a"))?;
    std::os::unix::fs::symlink("a", dir.path().join("b"))?;
    let err = write_atomic(&dir.path().join("a"), NEW, Expected::Any).unwrap_err();
    assert!(matches!(err, WriteError::Io { .. }), "{err:?}");
    Ok(())
}

#[test]
fn failure_before_rename_keeps_original_and_leaves_no_temp_file() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("mcp.json");
    fs::write(&path, ORIGINAL)?;
    fail_next_write_before_rename();
    let err = write_atomic(&path, NEW, Expected::Hash(content_hash(ORIGINAL))).unwrap_err();
    assert!(matches!(err, WriteError::Io { .. }), "{err:?}");
    assert_eq!(
        fs::read(&path)?,
        ORIGINAL,
        "original bytes survive a failed write"
    );
    assert_eq!(
        entries(dir.path()),
        ["mcp.json"],
        "no temp file left behind"
    );
    // the hook fires once; the next write goes through
    write_atomic(&path, NEW, Expected::Hash(content_hash(ORIGINAL)))?;
    assert_eq!(fs::read(&path)?, NEW);
    Ok(())
}

#[test]
fn failure_when_parent_is_a_file_changes_nothing() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let blocker = dir.path().join("not-a-dir");
    fs::write(&blocker, ORIGINAL)?;
    let err = write_atomic(&blocker.join("mcp.json"), NEW, Expected::Any).unwrap_err();
    assert!(matches!(err, WriteError::Io { .. }), "{err:?}");
    assert_eq!(
        fs::read(&blocker)?,
        ORIGINAL,
        "the file in the way is untouched"
    );
    assert_eq!(
        entries(dir.path()),
        ["not-a-dir"],
        "no temp file left behind"
    );
    Ok(())
}

#[test]
fn failure_when_target_is_a_directory_changes_nothing() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let target = dir.path().join("mcp.json");
    fs::create_dir(&target)?;
    fs::write(target.join("inside"), b"x")?;
    let err = write_atomic(&target, NEW, Expected::Any).unwrap_err();
    assert!(matches!(err, WriteError::Io { .. }), "{err:?}");
    assert_eq!(
        entries(dir.path()),
        ["mcp.json"],
        "no temp file left behind"
    );
    assert_eq!(fs::read(target.join("inside"))?, b"x");
    Ok(())
}
