//! What Switchboard does not do to a file: rewrite it when nothing changes,
//! replace one the user made read-only, edit the wrong copy of a server
//! defined twice, or write a token the user typed into it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::json;
use switchboard_engine::config::patch::{Field, ServerPatch};
use switchboard_engine::discovery::{discover, DiscoverOptions};
use switchboard_engine::host::Host;
use switchboard_engine::settings::Settings;
use switchboard_engine::sources::SourceSpec;
use switchboard_engine::writer::edit::{ServerEdit, Writer};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

struct Home {
    temp: switchboard_tests::TempHome,
    home: PathBuf,
    host: Host,
}

impl Home {
    fn new() -> Home {
        let temp = switchboard_tests::TempHome::empty();
        Home {
            home: temp.path().to_path_buf(),
            host: temp.host(),
            temp,
        }
    }

    /// The CLI on this home, with no keychain reachable.
    fn cli(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env_clear()
            .envs(self.temp.vars())
            .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus");
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cli(args).output().unwrap()
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        self.temp.write(rel, text)
    }

    fn spec(&self, id: &str) -> (SourceSpec, Option<switchboard_engine::writer::ContentHash>) {
        let d = discover(
            &self.host,
            &Settings::load(&self.host).0,
            &DiscoverOptions::default(),
        );
        let s = d.source(id).unwrap();
        (s.spec.clone().unwrap(), s.hash)
    }

    fn edit(
        &self,
        id: &str,
        edit: ServerEdit,
    ) -> Result<(), switchboard_engine::writer::edit::EditError> {
        let (spec, seen) = self.spec(id);
        let mut settings = Settings::load(&self.host).0;
        Writer::new(&self.host, &mut settings).apply(&spec, edit, seen)
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// A file's identity and timestamp: a rewrite (even of the same bytes) makes
/// a new inode through the rename, and a new mtime.
#[cfg(unix)]
fn stamp(p: &Path) -> (u64, SystemTime) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).unwrap();
    (m.ino(), m.modified().unwrap())
}

/// Set a file's mtime well in the past, so a rewrite could not go unseen.
fn age(p: &Path) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000))
        .unwrap();
}

const CURSOR: &str = "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"server-a\"]\n    },\n    \"b\": { \"url\": \"https://b.example/mcp\" }\n  }\n}\n";

#[cfg(unix)]
#[test]
fn an_edit_that_changes_nothing_writes_nothing() {
    let h = Home::new();
    let cursor = h.write(".cursor/mcp.json", CURSOR);
    age(&cursor);
    let before = stamp(&cursor);

    // The form saved with the same arguments; enabling an enabled server.
    let (spec, _) = h.spec("cursor-user");
    let mut def =
        switchboard_engine::writer::edit::read_def(&Settings::default(), &spec, "a").unwrap();
    def.args = vec!["-y".into(), "server-a".into()];
    h.edit(
        "cursor-user",
        ServerEdit::Patch {
            name: "a".into(),
            patch: ServerPatch {
                fields: vec![Field::Args, Field::Command],
                def,
            },
        },
    )
    .unwrap();
    let o = h.run(&["enable", "a", "--source", "cursor-user"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stamp(&cursor), before, "Cursor's file was not rewritten");
    assert_eq!(std::fs::read_to_string(&cursor).unwrap(), CURSOR);

    // The same priority again: settings.json is not rewritten either.
    let o = h.run(&["priority", "codex-user"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let settings = h.home.join(".config/switchboard/settings.json");
    age(&settings);
    let before = stamp(&settings);
    let o = h.run(&["priority", "codex-user"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stamp(&settings), before, "settings.json was not rewritten");
}

#[cfg(unix)]
#[test]
fn a_file_the_user_made_read_only_is_refused_not_replaced() {
    use std::os::unix::fs::PermissionsExt;
    let h = Home::new();
    let cursor = h.write(".cursor/mcp.json", CURSOR);
    std::fs::set_permissions(&cursor, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = stamp(&cursor);
    let expected = format!(
        "{} is read-only; make it writable to let Switchboard edit it",
        cursor.display()
    );

    let o = h.run(&["remove", "a", "--source", "cursor-user"]);
    assert!(!o.status.success());
    assert_eq!(stderr(&o).trim(), format!("switchboard: {expected}"));
    let err = h
        .edit(
            "cursor-user",
            ServerEdit::SetEnabled {
                name: "a".into(),
                enabled: false,
            },
        )
        .unwrap_err();
    assert_eq!(
        (err.code().as_str(), err.to_string()),
        ("read-only", expected.clone())
    );

    assert_eq!(
        std::fs::read_to_string(&cursor).unwrap(),
        CURSOR,
        "not a byte changed"
    );
    assert_eq!(stamp(&cursor), before, "the file was not replaced");
    assert_eq!(
        std::fs::metadata(&cursor).unwrap().permissions().mode() & 0o777,
        0o444,
        "and is still read-only"
    );

    // Writable again: the same edit goes through.
    std::fs::set_permissions(&cursor, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = h.run(&["remove", "a", "--source", "cursor-user"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Two entries named `a`: readers (and Switchboard's own discovery) use the
/// last. An edit would land on the first, and removing or parking both would
/// lose the one the user keeps, so every edit of `a` is refused naming both
/// lines until the user deletes one.
#[test]
fn a_server_defined_twice_in_one_file_is_refused_naming_the_lines() {
    let h = Home::new();
    let text = "{\n  \"mcpServers\": {\n    \"a\": { \"command\": \"old-a\" },\n    \"b\": { \"command\": \"b\" },\n    \"a\": { \"command\": \"new-a\" }\n  }\n}\n";
    let cursor = h.write(".cursor/mcp.json", text);
    let d = discover(&h.host, &Settings::default(), &DiscoverOptions::default());
    assert_eq!(
        d.server("a").unwrap().winner.def.command.as_deref(),
        Some("new-a"),
        "the last copy is the one in effect"
    );
    let expected = format!("cannot edit {}: mcpServers.a is in the file 2 times (lines 3, 5); clients use the last one. Delete the copies you do not want, then try again", cursor.display());

    let (spec, _) = h.spec("cursor-user");
    let mut def =
        switchboard_engine::writer::edit::read_def(&Settings::default(), &spec, "a").unwrap();
    def.args = vec!["--verbose".into()];
    let err = h
        .edit(
            "cursor-user",
            ServerEdit::Patch {
                name: "a".into(),
                patch: ServerPatch {
                    fields: vec![Field::Args],
                    def,
                },
            },
        )
        .unwrap_err();
    assert_eq!(err.to_string(), expected);
    for args in [
        &["disable", "a", "--source", "cursor-user"][..],
        &["rename", "a", "c", "--source", "cursor-user"],
        &["remove", "a", "--source", "cursor-user"],
    ] {
        let o = h.run(args);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(
            stderr(&o).trim(),
            format!("switchboard: {expected}"),
            "{args:?}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&cursor).unwrap(),
        text,
        "not a byte changed"
    );

    // Another server of the same file is edited as usual.
    let o = h.run(&["remove", "b", "--source", "cursor-user"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!std::fs::read_to_string(&cursor).unwrap().contains("\"b\""));
}

#[test]
fn a_token_on_the_command_line_is_refused_and_written_nowhere() {
    let h = Home::new();
    let own = h.write(
        ".config/switchboard/servers.json",
        "{ \"mcpServers\": {} }\n",
    );
    let o = h.run(&[
        "add",
        "remote",
        "--url",
        "https://mcp.example.com/mcp",
        "--token",
        "s3cr3t-t0ken",
    ]);
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o).trim(),
        "switchboard: --token would leave the token in your shell history and in `ps`; pass it on standard input instead: `switchboard add remote --url URL --token-stdin` (Switchboard keeps it in the OS keychain)"
    );
    assert_eq!(
        std::fs::read_to_string(&own).unwrap(),
        "{ \"mcpServers\": {} }\n"
    );

    // On stdin, with no keychain to keep it: refused before anything is written.
    let mut child = h
        .cli(&[
            "add",
            "remote",
            "--url",
            "https://mcp.example.com/mcp",
            "--token-stdin",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"s3cr3t-t0ken\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("cannot keep the token of \"remote\": no OS keychain is available"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(&own).unwrap(),
        "{ \"mcpServers\": {} }\n",
        "the server was not added without its token"
    );
    let o = h.run(&["add", "local", "--token-stdin", "--", "some-server"]);
    assert!(stderr(&o).contains("A token needs a URL"), "{}", stderr(&o));

    let mut stack = vec![h.home.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                assert!(
                    !String::from_utf8_lossy(&std::fs::read(&p).unwrap()).contains("s3cr3t"),
                    "the token is in {}",
                    p.display()
                );
            }
        }
    }
    let _ = json!({});
}
