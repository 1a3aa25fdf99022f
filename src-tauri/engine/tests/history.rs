//! History and undo: every file Switchboard writes is recorded with its
//! content before and after; undo gives a file its earlier bytes back, and
//! refuses (writing nothing) when the file changed since Switchboard wrote it.

mod common;

use common::{fixture_home, FixtureHome};
use switchboard_engine::config::ServerPatch;
use switchboard_engine::sources::SourceSpec;
use switchboard_engine::writer::diff::LineKind;
use switchboard_engine::writer::edit::{read_def, ServerEdit, Writer};
use switchboard_engine::writer::history::{History, UndoError, UndoState, MAX_ENTRIES};

fn spec(f: &FixtureHome, id: &str) -> SourceSpec {
    f.discover_untrusted()
        .source(id)
        .unwrap_or_else(|| panic!("source {id}"))
        .spec
        .clone()
        .unwrap()
}

/// Edit `name` in source `id` the way the form does: the fields changed by
/// `change`, checked against the file as discovery read it.
fn edit(
    f: &FixtureHome,
    id: &str,
    name: &str,
    change: impl FnOnce(&mut switchboard_engine::config::ServerDef),
) {
    let d = f.discover_untrusted();
    let s = d.source(id).unwrap().spec.clone().unwrap();
    let mut settings = f.settings();
    let original = read_def(&settings, &s, name).unwrap();
    let mut def = original.clone();
    change(&mut def);
    let patch = ServerPatch::between(&original, &def);
    Writer::new(&f.host, &mut settings)
        .apply(
            &s,
            ServerEdit::Patch {
                name: name.into(),
                patch,
            },
            d.source(id).unwrap().hash,
        )
        .unwrap();
}

#[test]
fn an_edit_is_recorded_with_its_file_server_summary_and_diff() {
    let f = fixture_home();
    let cursor = spec(&f, "cursor-user");
    let before = std::fs::read(&cursor.path).unwrap();
    edit(&f, "cursor-user", "cursor-user-only", |d| {
        d.args.push("--verbose".into())
    });
    let after = std::fs::read(&cursor.path).unwrap();

    let list = History::for_host(&f.host).list();
    assert_eq!(list.len(), 1, "one edit, one entry: {list:#?}");
    let e = &list[0];
    assert_eq!(e.server.as_deref(), Some("cursor-user-only"));
    assert_eq!(e.summary, "update \"cursor-user-only\" in Cursor (args)");
    assert_eq!(e.state, UndoState::Ready);
    assert_eq!(e.files.len(), 1);
    assert_eq!(e.files[0].path, cursor.path);
    let added: Vec<&str> = e.files[0]
        .diff
        .iter()
        .filter(|l| l.kind == LineKind::Added)
        .map(|l| l.text.as_str())
        .collect();
    let removed: Vec<&str> = e.files[0]
        .diff
        .iter()
        .filter(|l| l.kind == LineKind::Removed)
        .map(|l| l.text.as_str())
        .collect();
    assert!(
        added.iter().any(|l| l.contains("--verbose")),
        "the new argument is an added line: {:#?}",
        e.files[0].diff
    );
    assert!(!removed.is_empty(), "the old args line is a removed line");
    assert!(
        e.at > 1_600_000_000_000,
        "the time is milliseconds since the epoch: {}",
        e.at
    );

    // What is kept for undo is the exact bytes.
    let content = std::fs::read_to_string(
        History::for_host(&f.host)
            .dir()
            .join(format!("{}.content.json", e.id)),
    )
    .unwrap();
    let stored: serde_json::Value = serde_json::from_str(&content).unwrap();
    assert_eq!(
        stored["files"][0]["before"]["text"]
            .as_str()
            .unwrap()
            .as_bytes(),
        &before[..]
    );
    assert_eq!(
        stored["files"][0]["after"]["text"]
            .as_str()
            .unwrap()
            .as_bytes(),
        &after[..]
    );
}

#[test]
fn undo_restores_the_file_byte_for_byte_and_is_itself_an_entry_that_can_be_undone() {
    let f = fixture_home();
    let cursor = spec(&f, "cursor-user");
    let before = std::fs::read(&cursor.path).unwrap();
    edit(&f, "cursor-user", "filesystem", |d| {
        d.args[2] = "/srv/shared".into()
    });
    let after = std::fs::read(&cursor.path).unwrap();
    assert_ne!(before, after);

    let history = History::for_host(&f.host);
    let report = history.undo(None).unwrap();
    assert_eq!(report.undone, 1);
    assert_eq!(report.restored, vec![cursor.path.clone()]);
    assert_eq!(
        std::fs::read(&cursor.path).unwrap(),
        before,
        "undo gives back the exact bytes"
    );

    let list = history.list();
    assert_eq!(list.len(), 2, "the undo is recorded too");
    assert_eq!(list[0].id, report.recorded_as.unwrap());
    assert_eq!(list[0].undo_of, Some(1));
    assert_eq!(
        list[0].summary,
        "undo #1: update \"filesystem\" in Cursor (args)"
    );
    assert_eq!(list[0].server.as_deref(), Some("filesystem"));
    assert_eq!(list[1].state, UndoState::Undone, "the edit shows as undone");

    let again = history.undo(Some(1)).unwrap_err();
    assert_eq!(again.code(), "already-undone");
    assert_eq!(
        again.to_string(),
        format!(
            "Change #1 is already undone: {} has the content from before it",
            cursor.path.display()
        )
    );

    // Undoing the undo is a redo.
    history.undo(None).unwrap();
    assert_eq!(std::fs::read(&cursor.path).unwrap(), after);
}

#[test]
fn undo_after_an_external_change_refuses_with_the_conflict_and_writes_nothing() {
    let f = fixture_home();
    let cursor = spec(&f, "cursor-user");
    edit(&f, "cursor-user", "cursor-user-only", |d| {
        d.args.push("--verbose".into())
    });
    // The user edits the file in Cursor afterwards.
    let theirs = std::fs::read_to_string(&cursor.path)
        .unwrap()
        .replace("context7-mcp", "context7-mcp@2");
    std::fs::write(&cursor.path, &theirs).unwrap();

    let history = History::for_host(&f.host);
    assert_eq!(
        history.list()[0].state,
        UndoState::Changed,
        "the list says undo would conflict"
    );
    let err = history.undo(None).unwrap_err();
    assert!(matches!(err, UndoError::Conflict { .. }), "{err:?}");
    assert_eq!(err.code(), "conflict");
    assert_eq!(
        err.to_string(),
        format!(
            "{} changed since Switchboard wrote it; undo would overwrite those changes",
            cursor.path.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&cursor.path).unwrap(),
        theirs,
        "the user's change is untouched"
    );
    assert_eq!(history.list().len(), 1, "a refused undo records nothing");
}

#[test]
fn a_disable_that_parks_the_entry_is_one_entry_for_both_files_and_undo_restores_both() {
    let f = fixture_home();
    let cursor = spec(&f, "cursor-user");
    let settings_path = switchboard_engine::settings::settings_path(&f.host);
    let cursor_before = std::fs::read(&cursor.path).unwrap();
    assert!(
        !settings_path.exists(),
        "the fixture has no settings.json yet"
    );

    let mut settings = f.settings();
    Writer::new(&f.host, &mut settings)
        .apply(
            &cursor,
            ServerEdit::SetEnabled {
                name: "cursor-user-only".into(),
                enabled: false,
            },
            None,
        )
        .unwrap();
    assert!(
        settings_path.exists(),
        "the entry is parked in Switchboard's settings"
    );

    let history = History::for_host(&f.host);
    let list = history.list();
    assert_eq!(list.len(), 1, "one action, one entry: {list:#?}");
    assert_eq!(list[0].summary, "disable \"cursor-user-only\" in Cursor");
    let mut paths: Vec<_> = list[0].files.iter().map(|c| c.path.clone()).collect();
    paths.sort();
    let mut want = vec![cursor.path.clone(), settings_path.clone()];
    want.sort();
    assert_eq!(paths, want);

    history.undo(Some(list[0].id)).unwrap();
    assert_eq!(
        std::fs::read(&cursor.path).unwrap(),
        cursor_before,
        "Cursor's file has the server back, byte for byte"
    );
    assert!(
        !settings_path.exists(),
        "settings.json did not exist before, so undo removes it"
    );
}

#[test]
fn settings_changes_are_recorded_too() {
    let f = fixture_home();
    let mut s = f.settings();
    s.priority = vec!["cursor-user".into()];
    s.save(&f.host).unwrap();
    let list = History::for_host(&f.host).list();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].summary, "change source priority");
    assert_eq!(list[0].server, None);
    assert_eq!(
        list[0].files[0].path,
        switchboard_engine::settings::settings_path(&f.host)
    );

    let mut s = f.settings();
    s.priority = vec!["claude-desktop".into()];
    s.projects
        .push(switchboard_engine::settings::ProjectFolder {
            path: f.project.clone(),
            trusted: false,
        });
    s.save(&f.host).unwrap();
    let list = History::for_host(&f.host).list();
    assert_eq!(
        list[0].summary, "update Switchboard settings (source priority, project folders)",
        "keys named as people say them"
    );
}

#[test]
fn diffs_mask_env_and_header_values_but_undo_keeps_the_real_bytes() {
    let f = fixture_home();
    let own = spec(&f, "switchboard");
    let before = std::fs::read(&own.path).unwrap();
    edit(&f, "switchboard", "github", |d| {
        d.env.insert(
            "GITHUB_PERSONAL_ACCESS_TOKEN".into(),
            "ghp_literal_secret_123".into(),
        );
    });
    let history = History::for_host(&f.host);
    let e = &history.list()[0];
    let shown: String = e.files[0]
        .diff
        .iter()
        .map(|l| format!("{}\n", l.text))
        .collect();
    assert!(
        !shown.contains("ghp_literal_secret_123"),
        "the token is not in the diff:\n{shown}"
    );
    assert!(
        !shown.contains("${GITHUB_TOKEN}"),
        "nor the old value:\n{shown}"
    );
    assert!(
        shown.contains("\"GITHUB_PERSONAL_ACCESS_TOKEN\": \"•••\""),
        "{shown}"
    );
    let meta = std::fs::read_to_string(history.dir().join(format!("{}.json", e.id))).unwrap();
    assert!(
        !meta.contains("ghp_literal_secret_123"),
        "the listing file holds no secret"
    );

    history.undo(None).unwrap();
    assert_eq!(std::fs::read(&own.path).unwrap(), before);
}

#[cfg(unix)]
#[test]
fn the_history_folder_is_0700_and_its_files_0600() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture_home();
    edit(&f, "cursor-user", "cursor-user-only", |d| {
        d.args.push("--verbose".into())
    });
    let dir = History::for_host(&f.host).dir().to_path_buf();
    assert_eq!(
        dir,
        f.home.join(".local/share/switchboard/history"),
        "the data folder, not the config folder"
    );
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    for p in files {
        assert_eq!(mode(&p), 0o600, "{}", p.display());
    }
}

#[test]
fn at_most_200_entries_are_kept_and_the_oldest_go_first() {
    let f = fixture_home();
    let cursor = spec(&f, "cursor-user");
    let total = MAX_ENTRIES + 5;
    for i in 0..total {
        let mut settings = f.settings();
        let args = vec!["-y".to_string(), format!("pkg-{i}")];
        let mut def = read_def(&settings, &cursor, "cursor-user-only").unwrap();
        def.args = args;
        Writer::new(&f.host, &mut settings)
            .apply(
                &cursor,
                ServerEdit::Update {
                    name: "cursor-user-only".into(),
                    def,
                },
                None,
            )
            .unwrap();
    }
    let list = History::for_host(&f.host).list();
    assert_eq!(list.len(), MAX_ENTRIES);
    assert_eq!(list.first().unwrap().id, total as u64, "the newest is kept");
    assert_eq!(list.last().unwrap().id, 6, "entries 1 to 5 were dropped");
    let files = std::fs::read_dir(History::for_host(&f.host).dir())
        .unwrap()
        .count();
    assert_eq!(files, 2 * MAX_ENTRIES, "their files are gone too");
}

#[test]
fn at_most_20_mb_are_kept_and_the_newest_always_stays() {
    let f = fixture_home();
    let own = spec(&f, "switchboard");
    // A 3 MB file (a key Switchboard does not know, kept as it is) where each
    // edit replaces a 3 MB argument: a large file's entry keeps only what
    // changed, here 3 MB before and 3 MB after, so the 20 MB bound keeps
    // three of five.
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&own.path).unwrap()).unwrap();
    doc["notes"] = serde_json::Value::String("x".repeat(3 << 20));
    std::fs::write(&own.path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    for i in 0..5 {
        edit(&f, "switchboard", "github", |d| {
            d.args = vec![format!("{i}{}", "y".repeat(3 << 20))]
        });
    }
    let history = History::for_host(&f.host);
    let ids: Vec<u64> = history.list().iter().map(|e| e.id).collect();
    assert_eq!(ids, vec![5, 4, 3], "the two oldest were dropped");
    let bytes: u64 = std::fs::read_dir(history.dir())
        .unwrap()
        .flatten()
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(bytes <= 20 << 20, "{bytes} bytes kept");
}

/// `path` (a JSON file) with a few hundred KB of history-like lines added,
/// as a long-used `~/.claude.json` has; its value.
fn made_large(path: &std::path::Path) -> serde_json::Value {
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    doc["history"] = serde_json::json!((0..6000)
        .map(|i| format!("prompt {i}: a line of history that makes the file large"))
        .collect::<Vec<_>>());
    std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
    doc
}

/// A file of several hundred KB takes the path where the new content's hash
/// and secret values are worked out beside the write (while the disk syncs):
/// the entry's hash is still the file's, the diff still masks the secret, and
/// undo still gives the bytes back.
#[test]
fn a_large_file_is_recorded_with_its_hash_and_masked_diff_and_undone() {
    let f = fixture_home();
    let own = spec(&f, "switchboard");
    made_large(&own.path);
    let before = std::fs::read(&own.path).unwrap();
    assert!(before.len() > 256 * 1024, "{} bytes", before.len());

    edit(&f, "switchboard", "github", |d| {
        d.env.insert(
            "GITHUB_PERSONAL_ACCESS_TOKEN".into(),
            "ghp_large_file_secret_456".into(),
        );
    });
    let after = std::fs::read(&own.path).unwrap();
    let history = History::for_host(&f.host);
    let e = &history.list()[0];
    assert_eq!(e.state, UndoState::Ready);
    let hex = |b: &[u8]| {
        switchboard_engine::writer::content_hash(b)
            .0
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<String>()
    };
    assert_eq!(e.files[0].after_hash.as_deref(), Some(hex(&after).as_str()));
    assert_eq!(
        e.files[0].before_hash.as_deref(),
        Some(hex(&before).as_str())
    );
    let shown: String = e.files[0]
        .diff
        .iter()
        .map(|l| format!("{}\n", l.text))
        .collect();
    assert!(!shown.contains("ghp_large_file_secret_456"), "{shown}");
    assert!(
        shown.contains("\"GITHUB_PERSONAL_ACCESS_TOKEN\": \"•••\""),
        "{shown}"
    );

    history.undo(None).unwrap();
    assert_eq!(std::fs::read(&own.path).unwrap(), before);
}

/// A large file that another program saved after Switchboard read it: the
/// edit is refused (its hash and secret values were being worked out beside
/// the check, and are dropped), the other program's bytes stay, and nothing
/// is recorded.
#[test]
fn a_large_file_saved_by_another_program_is_neither_overwritten_nor_recorded() {
    let f = fixture_home();
    let own = spec(&f, "switchboard");
    let mut doc = made_large(&own.path);
    let d = f.discover_untrusted();
    let s = d.source("switchboard").unwrap().spec.clone().unwrap();
    let seen = d.source("switchboard").unwrap().hash;

    doc["theirs"] = serde_json::json!(true);
    let theirs = serde_json::to_string_pretty(&doc).unwrap();
    assert!(theirs.len() > 256 * 1024, "{} bytes", theirs.len());
    std::fs::write(&own.path, &theirs).unwrap();

    let mut settings = f.settings();
    let original = read_def(&settings, &s, "github").unwrap();
    let mut def = original.clone();
    def.args.push("--read-only".into());
    let refused = Writer::new(&f.host, &mut settings).apply(
        &s,
        ServerEdit::Patch {
            name: "github".into(),
            patch: ServerPatch::between(&original, &def),
        },
        seen,
    );
    assert!(refused.is_err(), "the stale edit is refused");
    let message = refused.unwrap_err().to_string();
    assert!(
        message.contains("changed since you opened it"),
        "it says why: {message}"
    );
    assert_eq!(std::fs::read_to_string(&own.path).unwrap(), theirs);
    assert!(
        History::for_host(&f.host).list().is_empty(),
        "nothing recorded"
    );
}
