//! Live config watching against real files in temp dirs
//! and real fixture servers: atomic saves, in-place writes, delete and
//! recreate, files and folders appearing, symlinks, bursts, settings, the
//! app's own writes, and `switchboard watch --json` end to end.
//!
//! Every test asserts the exact reconcile (which servers restarted, which
//! kept their process). Timeouts are generous; no wall-clock bound is asserted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_engine::discovery::discover;
use switchboard_engine::events::{EngineEvent, ServerStatus};
use switchboard_engine::host::{Host, Os};
use switchboard_engine::manager::{Manager, ManagerOptions, ReconcileReport, Wanted};
use switchboard_engine::settings::Settings;
use switchboard_engine::watch::{settings_from_disk, Live, WatchOptions};
use switchboard_engine::writer::edit::{ServerEdit, Writer};
use tokio::sync::broadcast;

const WAIT: Duration = Duration::from_secs(30);
/// How long "nothing more happens" is watched for.
const QUIET: Duration = Duration::from_millis(1500);

fn fixture() -> String {
    switchboard_tests::fixture_server_path()
        .to_string_lossy()
        .to_string()
}

/// A stdio fixture server entry; `extra` args make a different definition.
fn entry(name: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--name".to_string(), name.to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    json!({ "command": fixture(), "args": args })
}

fn config(servers: &[(&str, &[&str])]) -> String {
    let m: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(n, a)| (n.to_string(), entry(n, a)))
        .collect();
    serde_json::to_string_pretty(&json!({ "mcpServers": m })).unwrap()
}

struct Env {
    _dir: tempfile::TempDir,
    host: Host,
    home: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut vars = HashMap::new();
        vars.insert("HOME".to_string(), home.to_string_lossy().to_string());
        let host = Host {
            os: Os::Linux,
            home: home.clone(),
            vars,
            system_root: dir.path().join("system"),
        };
        Env {
            _dir: dir,
            host,
            home,
        }
    }
    /// Switchboard's own source file.
    fn own(&self) -> PathBuf {
        self.home.join(".config/switchboard/servers.json")
    }
    fn cursor(&self) -> PathBuf {
        self.home.join(".cursor/mcp.json")
    }
}

/// An editor's save: write a temp file next to the target, rename it over.
fn save_atomic(path: &Path, text: &str) {
    let tmp = path.with_file_name(format!(
        ".{}.swp{}",
        path.file_name().unwrap().to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn write_new(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

struct Running {
    m: Manager,
    live: Live,
    /// Manager events (Reconciled, Status), subscribed before any change.
    rx: broadcast::Receiver<EngineEvent>,
    /// Watcher events (SourceChanged, DiscoveryChanged).
    wrx: broadcast::Receiver<EngineEvent>,
}

fn manager(env: &Env) -> Manager {
    Manager::new(ManagerOptions {
        grace: Duration::from_millis(300),
        default_timeout: Duration::from_secs(20),
        home: env.home.clone(),
        ..ManagerOptions::default()
    })
}

async fn wait_connected(m: &Manager, names: &[&str]) {
    let end = tokio::time::Instant::now() + WAIT;
    for n in names {
        while m.status(n) != Some(ServerStatus::Connected)
            || m.state(n).and_then(|s| s.pid).is_none()
        {
            assert!(
                tokio::time::Instant::now() < end,
                "{n} never connected: {:?}",
                m.state(n)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Discover, start the manager on it, wait for `names`, start watching.
async fn start(env: &Env, names: &[&str]) -> Running {
    start_with(env, names, WatchOptions::default()).await
}

async fn start_with(env: &Env, names: &[&str], opts: WatchOptions) -> Running {
    let d = discover(&env.host, &Settings::load(&env.host).0, &opts.discover);
    let m = manager(env);
    m.start(Wanted::from_discovery(&d)).await;
    wait_connected(&m, names).await;
    let live = Live::start(
        env.host.clone(),
        settings_from_disk(&env.host),
        m.clone(),
        d,
        opts,
    )
    .await
    .unwrap();
    let rx = m.subscribe();
    let wrx = live.subscribe();
    assert_eq!(live.errors(), Vec::<String>::new());
    Running { m, live, rx, wrx }
}

fn pids(m: &Manager) -> HashMap<String, u32> {
    m.states()
        .into_iter()
        .filter_map(|s| Some((s.name.clone(), s.pid?)))
        .collect()
}

async fn next_reconcile(rx: &mut broadcast::Receiver<EngineEvent>) -> ReconcileReport {
    let end = tokio::time::Instant::now() + WAIT;
    loop {
        match tokio::time::timeout_at(end, rx.recv())
            .await
            .expect("no reconcile within the timeout")
            .unwrap()
        {
            EngineEvent::Reconciled { report } => return report,
            _ => continue,
        }
    }
}

/// Nothing else is reconciled for a while.
async fn no_more_reconciles(rx: &mut broadcast::Receiver<EngineEvent>) {
    let end = tokio::time::Instant::now() + QUIET;
    while let Ok(ev) = tokio::time::timeout_at(end, rx.recv()).await {
        if let EngineEvent::Reconciled { report } = ev.unwrap() {
            panic!("an extra reconcile: {report:?}");
        }
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn names(v: &[&str]) -> Vec<String> {
    sorted(v.iter().map(|s| s.to_string()).collect())
}

/// The report, with its lists sorted, as (started, stopped, updated, kept).
fn actions(r: &ReconcileReport) -> (Vec<String>, Vec<String>, Vec<String>, Vec<String>) {
    assert!(r.failed.is_empty(), "failures: {:?}", r.failed);
    (
        sorted(r.started.clone()),
        sorted(r.stopped.clone()),
        sorted(r.updated.clone()),
        sorted(r.kept.clone()),
    )
}

fn expect(
    r: &ReconcileReport,
    started: &[&str],
    stopped: &[&str],
    updated: &[&str],
    kept: &[&str],
) {
    assert_eq!(
        actions(r),
        (names(started), names(stopped), names(updated), names(kept)),
        "report: {r:?}"
    );
}

/// `kept` kept their process; `restarted` have a new, connected one.
async fn check_pids(m: &Manager, before: &HashMap<String, u32>, kept: &[&str], restarted: &[&str]) {
    wait_connected(m, restarted).await;
    let now = pids(m);
    for k in kept {
        assert_eq!(now.get(*k), before.get(*k), "{k} kept its process");
    }
    for r in restarted {
        assert!(
            now.contains_key(*r) && now.get(*r) != before.get(*r),
            "{r} got a new process ({:?} → {:?})",
            before.get(*r),
            now.get(*r)
        );
    }
}

/// The SourceChanged events seen so far, as source ids.
fn changed_sources(wrx: &mut broadcast::Receiver<EngineEvent>) -> Vec<String> {
    let mut out = vec![];
    while let Ok(ev) = wrx.try_recv() {
        if let EngineEvent::SourceChanged { source, .. } = ev {
            out.push(source);
        }
    }
    out
}

async fn stop(r: Running) {
    r.live.stop().await;
    r.m.shutdown().await;
}

#[tokio::test]
async fn an_atomic_save_restarts_only_the_changed_server() {
    let env = Env::new();
    write_new(&env.own(), &config(&[("a", &[]), ("b", &[])]));
    let mut r = start(&env, &["a", "b"]).await;
    assert!(
        r.live
            .watched_folders()
            .contains(&env.own().parent().unwrap().to_path_buf()),
        "{:?}",
        r.live.watched_folders()
    );
    let before = pids(&r.m);
    save_atomic(&env.own(), &config(&[("a", &[]), ("b", &["--tools", "2"])]));
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &[], &["b"], &["a"]);
    check_pids(&r.m, &before, &["a"], &["b"]).await;
    assert_eq!(
        r.m.state("b").unwrap().tool_count,
        switchboard_tests::FIXED_TOOLS.len() + 2
    );
    assert_eq!(changed_sources(&mut r.wrx), ["switchboard"]);
    // A second atomic save still works: the folder watch survived the rename.
    let before = pids(&r.m);
    save_atomic(
        &env.own(),
        &config(&[("a", &["--tools", "1"]), ("b", &["--tools", "2"])]),
    );
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &[], &["a"], &["b"]);
    check_pids(&r.m, &before, &["b"], &["a"]).await;
    no_more_reconciles(&mut r.rx).await;
    stop(r).await;
}

#[tokio::test]
async fn an_in_place_truncate_and_write_adds_and_removes() {
    let env = Env::new();
    write_new(&env.own(), &config(&[("a", &[]), ("b", &[])]));
    let mut r = start(&env, &["a", "b"]).await;
    let before = pids(&r.m);
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(env.own())
            .unwrap();
        f.write_all(config(&[("a", &[]), ("c", &[])]).as_bytes())
            .unwrap();
    }
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &["c"], &["b"], &[], &["a"]);
    check_pids(&r.m, &before, &["a"], &["c"]).await;
    assert!(r.m.state("b").is_none(), "b is gone");
    no_more_reconciles(&mut r.rx).await;
    stop(r).await;
}

#[tokio::test]
async fn a_touch_or_a_save_with_the_same_bytes_does_nothing() {
    let env = Env::new();
    let text = config(&[("a", &[])]);
    write_new(&env.own(), &text);
    let mut r = start(&env, &["a"]).await;
    let before = pids(&r.m);
    let checks = r.live.stats().checks;
    save_atomic(&env.own(), &text);
    std::fs::OpenOptions::new()
        .append(true)
        .open(env.own())
        .unwrap(); // open + close, no bytes
    let end = tokio::time::Instant::now() + WAIT;
    while r.live.stats().checks == checks {
        assert!(
            tokio::time::Instant::now() < end,
            "the save was never looked at"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    no_more_reconciles(&mut r.rx).await;
    assert_eq!(r.live.stats().reconciles, 0);
    assert_eq!(pids(&r.m), before);
    assert!(changed_sources(&mut r.wrx).is_empty());
    // The watcher's own reads do not wake it up again and again.
    let checks = r.live.stats().checks;
    tokio::time::sleep(QUIET).await;
    assert_eq!(r.live.stats().checks, checks, "idle: no more checks");
    stop(r).await;
}

#[tokio::test]
async fn delete_then_recreate_the_file_and_its_folder() {
    let env = Env::new();
    write_new(&env.own(), &config(&[("a", &[])]));
    write_new(&env.cursor(), &config(&[("c", &[]), ("d", &[])]));
    let mut r = start(&env, &["a", "c", "d"]).await;
    let before = pids(&r.m);

    std::fs::remove_file(env.cursor()).unwrap();
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &["c", "d"], &[], &["a"]);
    write_new(&env.cursor(), &config(&[("c", &[])]));
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &["c"], &[], &[], &["a"]);
    check_pids(&r.m, &before, &["a"], &["c"]).await;

    // The whole folder goes (its watch dies with it), then comes back.
    let before = pids(&r.m);
    std::fs::remove_dir_all(env.cursor().parent().unwrap()).unwrap();
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &["c"], &[], &["a"]);
    write_new(&env.cursor(), &config(&[("d", &[])]));
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &["d"], &[], &[], &["a"]);
    check_pids(&r.m, &before, &["a"], &["d"]).await;
    // …and the recreated folder is watched again.
    let before = pids(&r.m);
    save_atomic(&env.cursor(), &config(&[("d", &["--tools", "1"])]));
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &[], &["d"], &["a"]);
    check_pids(&r.m, &before, &["a"], &["d"]).await;
    no_more_reconciles(&mut r.rx).await;
    stop(r).await;
}

#[tokio::test]
async fn a_source_file_appearing_in_folders_that_did_not_exist() {
    let env = Env::new();
    write_new(&env.own(), &config(&[("a", &[])]));
    let mut r = start(&env, &["a"]).await;
    // Windsurf's file is two missing folders deep: the home folder is watched.
    let windsurf = env.home.join(".codeium/windsurf/mcp_config.json");
    assert!(
        r.live.watched_folders().contains(&env.home),
        "{:?}",
        r.live.watched_folders()
    );
    let before = pids(&r.m);
    write_new(&windsurf, &config(&[("w", &[])]));
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &["w"], &[], &[], &["a"]);
    check_pids(&r.m, &before, &["a"], &["w"]).await;
    assert!(
        r.live
            .watched_folders()
            .contains(&windsurf.parent().unwrap().to_path_buf()),
        "re-armed: {:?}",
        r.live.watched_folders()
    );
    assert!(changed_sources(&mut r.wrx).contains(&"windsurf".to_string()));
    // Edits inside the new folder are seen.
    let before = pids(&r.m);
    save_atomic(&windsurf, &config(&[("w", &["--tools", "3"])]));
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &[], &["w"], &["a"]);
    check_pids(&r.m, &before, &["a"], &["w"]).await;
    no_more_reconciles(&mut r.rx).await;
    stop(r).await;
}

#[tokio::test]
async fn a_symlinked_config_follows_edits_to_its_target() {
    let env = Env::new();
    write_new(&env.own(), &config(&[("a", &[])]));
    let target = env.home.join("dotfiles/cursor-mcp.json");
    write_new(&target, &config(&[("c", &[])]));
    std::fs::create_dir_all(env.cursor().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&target, env.cursor()).unwrap();
    let mut r = start(&env, &["a", "c"]).await;
    assert!(
        r.live
            .watched_folders()
            .contains(&target.parent().unwrap().to_path_buf()),
        "{:?}",
        r.live.watched_folders()
    );

    let before = pids(&r.m);
    save_atomic(&target, &config(&[("c", &["--tools", "1"])]));
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &[], &["c"], &["a"]);
    check_pids(&r.m, &before, &["a"], &["c"]).await;

    let before = pids(&r.m);
    std::fs::write(&target, config(&[("c", &["--tools", "1"]), ("e", &[])])).unwrap();
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &["e"], &[], &[], &["a", "c"]);
    check_pids(&r.m, &before, &["a", "c"], &["e"]).await;
    assert!(std::fs::symlink_metadata(env.cursor())
        .unwrap()
        .file_type()
        .is_symlink());
    no_more_reconciles(&mut r.rx).await;
    stop(r).await;
}

#[tokio::test]
async fn a_burst_of_fifty_saves_is_one_reconcile() {
    let env = Env::new();
    write_new(&env.own(), &config(&[("a", &[]), ("b", &[])]));
    // Saves closer together than `settle` are one reconcile; a roomy settle
    // keeps a scheduler stall on this noisy machine from splitting the burst.
    let opts = WatchOptions {
        settle: Duration::from_millis(200),
        ..WatchOptions::default()
    };
    let mut r = start_with(&env, &["a", "b"], opts).await;
    let before = pids(&r.m);
    for i in 1..=50 {
        let n = i.to_string();
        let text = config(&[("a", &[]), ("b", &["--tools", &n])]);
        if i % 2 == 0 {
            save_atomic(&env.own(), &text);
        } else {
            std::fs::write(env.own(), text).unwrap();
        }
    }
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &[], &["b"], &["a"]);
    check_pids(&r.m, &before, &["a"], &["b"]).await;
    assert_eq!(
        r.m.state("b").unwrap().tool_count,
        switchboard_tests::FIXED_TOOLS.len() + 50,
        "the last save won"
    );
    no_more_reconciles(&mut r.rx).await;
    assert_eq!(r.live.stats().reconciles, 1, "{:?}", r.live.stats());
    stop(r).await;
}

#[tokio::test]
async fn an_edit_through_the_writer_is_one_reconcile_and_restarts_nothing_else() {
    let env = Env::new();
    write_new(&env.own(), &config(&[("a", &[]), ("b", &[]), ("c", &[])]));
    // A long debounce so that in part 2 `refresh()` surely comes first.
    let opts = WatchOptions {
        debounce: Duration::from_millis(400),
        ..WatchOptions::default()
    };
    let mut r = start_with(&env, &["a", "b", "c"], opts).await;

    // 1. The watcher alone picks the write up.
    let before = pids(&r.m);
    let d = r.live.discovery();
    let spec = d.source("switchboard").unwrap().spec.clone().unwrap();
    let mut def = d.server("b").unwrap().winner.def.clone();
    def.args.extend(["--tools".to_string(), "4".to_string()]);
    let mut settings = Settings::load(&env.host).0;
    Writer::new(&env.host, &mut settings)
        .apply(
            &spec,
            ServerEdit::Update {
                name: "b".into(),
                def,
            },
            d.source("switchboard").unwrap().hash,
        )
        .unwrap();
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &[], &["b"], &["a", "c"]);
    check_pids(&r.m, &before, &["a", "c"], &["b"]).await;
    no_more_reconciles(&mut r.rx).await;

    // 2. The app applies its write at once with refresh(); the watcher's
    //    event for it then finds the same bytes and does nothing.
    let before = pids(&r.m);
    let d = r.live.discovery();
    let mut def = d.server("c").unwrap().winner.def.clone();
    def.args.extend(["--tools".to_string(), "1".to_string()]);
    Writer::new(&env.host, &mut settings)
        .apply(
            &spec,
            ServerEdit::Update {
                name: "c".into(),
                def,
            },
            d.source("switchboard").unwrap().hash,
        )
        .unwrap();
    let d = r.live.refresh().await.expect("refresh saw the write");
    assert!(
        d.server("c")
            .unwrap()
            .winner
            .def
            .args
            .ends_with(&["1".to_string()]),
        "refresh returns the new discovery"
    );
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &[], &["c"], &["a", "b"]);
    check_pids(&r.m, &before, &["a", "b"], &["c"]).await;
    no_more_reconciles(&mut r.rx).await;
    assert_eq!(r.live.stats().reconciles, 2, "{:?}", r.live.stats());
    // Nothing left to do.
    assert!(r.live.refresh().await.is_none());
    stop(r).await;
}

#[tokio::test]
async fn a_settings_change_rediscovers_and_the_watched_set_follows() {
    let env = Env::new();
    write_new(&env.own(), &config(&[("a", &[])]));
    let project = env.home.join("work/app");
    // Cursor's project file: no Claude Code approval is involved.
    let project_file = project.join(".cursor/mcp.json");
    write_new(&project_file, &config(&[("p", &[])]));
    let mut r = start(&env, &["a"]).await;
    assert!(!r.live.watched_folders().contains(&project.join(".cursor")));

    // Trust the project (as `switchboard project add` would).
    let before = pids(&r.m);
    let mut s = Settings::load(&env.host).0;
    s.projects
        .push(switchboard_engine::settings::ProjectFolder {
            path: project.clone(),
            trusted: true,
        });
    s.save(&env.host).unwrap();
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &["p"], &[], &[], &["a"]);
    check_pids(&r.m, &before, &["a"], &["p"]).await;
    assert!(
        r.live.watched_folders().contains(&project.join(".cursor")),
        "{:?}",
        r.live.watched_folders()
    );
    assert!(changed_sources(&mut r.wrx).contains(&"settings".to_string()));

    // The project's file is now watched.
    let before = pids(&r.m);
    save_atomic(&project_file, &config(&[("p", &["--tools", "2"])]));
    let rep = next_reconcile(&mut r.rx).await;
    expect(&rep, &[], &[], &["p"], &["a"]);
    check_pids(&r.m, &before, &["a"], &["p"]).await;
    no_more_reconciles(&mut r.rx).await;
    stop(r).await;
}

// ---------------------------------------------------------------- the CLI

fn read_until(
    lines: &std::sync::mpsc::Receiver<Value>,
    what: &str,
    mut f: impl FnMut(&Value) -> bool,
) -> Value {
    let end = std::time::Instant::now() + WAIT;
    loop {
        let left = end.saturating_duration_since(std::time::Instant::now());
        let v = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no {what} line"));
        if f(&v) {
            return v;
        }
    }
}

#[test]
fn switchboard_watch_json_prints_events_and_shuts_down_cleanly() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join(".config/switchboard/servers.json");
    write_new(&own, &config(&[("a", &[]), ("b", &[])]));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["watch", "--json"])
        .env_clear()
        .env("HOME", dir.path())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SWITCHBOARD_SYSTEM_ROOT", dir.path().join("sys"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let v: Value =
                serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}"));
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    read_until(&lines, "started", |v| v["type"] == "started");
    let watching = read_until(&lines, "watching", |v| v["type"] == "watching");
    assert!(
        watching["folders"]
            .as_array()
            .unwrap()
            .contains(&json!(own.parent().unwrap())),
        "{watching}"
    );

    save_atomic(&own, &config(&[("a", &[]), ("b", &["--tools", "1"])]));
    let changed = read_until(&lines, "source-changed", |v| v["type"] == "source-changed");
    assert_eq!(changed["source"], "switchboard");
    let rec = read_until(&lines, "reconciled", |v| v["type"] == "reconciled");
    assert_eq!(rec["report"]["updated"], json!(["b"]), "{rec}");
    assert_eq!(rec["report"]["kept"], json!(["a"]), "{rec}");
    let servers = rec["servers"].as_array().unwrap();
    let a = servers.iter().find(|s| s["name"] == "a").unwrap();
    let b = servers.iter().find(|s| s["name"] == "b").unwrap();
    assert_eq!(
        (a["action"].as_str(), a["keptConnection"].as_bool()),
        (Some("kept"), Some(true))
    );
    assert_eq!(
        (b["action"].as_str(), b["keptConnection"].as_bool()),
        (Some("updated"), Some(false))
    );
    let pids: Vec<u32> = servers
        .iter()
        .filter_map(|s| s["pid"].as_u64())
        .map(|p| p as u32)
        .collect();
    assert_eq!(pids.len(), 2, "{rec}");

    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "SIGTERM is watch's normal end: {status:?}"
    );
    for p in pids {
        let gone = std::time::Instant::now() + Duration::from_secs(5);
        while PathBuf::from(format!("/proc/{p}")).exists() {
            assert!(
                std::time::Instant::now() < gone,
                "server process {p} outlived the CLI"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A settings save that lands while a check is reading the files (after the
/// settings were read, before the check ends) is seen by the next check. The
/// check used to hash the settings file after its discovery, so it took that
/// save as already read: the new source priority on disk never reached the
/// server list, and saving the same priority again wrote nothing new.
#[tokio::test]
async fn a_settings_save_during_a_check_is_not_lost() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let env = Env::new();
    write_new(&env.own(), &config(&[("x", &[])]));
    write_new(&env.cursor(), &config(&[("x", &["--tools", "2"])]));
    let d = discover(&env.host, &Settings::load(&env.host).0, &Default::default());
    assert_eq!(d.server("x").unwrap().winner.source, "switchboard");
    let m = manager(&env);
    // The settings as the watcher reads them; armed, another program saves
    // a new priority right after the read.
    let armed = Arc::new(AtomicBool::new(false));
    let provider: switchboard_engine::watch::SettingsProvider = {
        let (host, armed) = (env.host.clone(), armed.clone());
        Arc::new(move || {
            let read = Settings::load(&host).0;
            if armed.swap(false, Ordering::SeqCst) {
                let mut next = read.clone();
                next.priority = vec!["cursor-user".into(), "switchboard".into()];
                next.save(&host).unwrap();
            }
            read
        })
    };
    let live = Live::start(
        env.host.clone(),
        provider,
        m.clone(),
        d,
        WatchOptions::default(),
    )
    .await
    .unwrap();

    // A first save (same winner) starts a check; during it, the second lands.
    armed.store(true, Ordering::SeqCst);
    let mut s = Settings::load(&env.host).0;
    s.priority = vec!["switchboard".into(), "cursor-user".into()];
    s.save(&env.host).unwrap();
    let end = tokio::time::Instant::now() + WAIT;
    loop {
        live.refresh().await;
        let winner = live.discovery().server("x").unwrap().winner.source.clone();
        if !armed.load(Ordering::SeqCst) && winner == "cursor-user" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < end,
            "the priority saved during a check never reached discovery: x is still won by {winner}; settings.json says {:?}",
            Settings::load(&env.host).0.priority
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    live.stop().await;
    m.shutdown().await;
}

/// A priority another program saves after the settings were read for the
/// first discovery, but before the watch starts (the app reads settings.json
/// when its engine is made and watches only after the servers started), is
/// seen when the watch starts. It used to be hashed as already read: the
/// server list kept the old order until some other file changed.
#[tokio::test]
async fn a_settings_save_before_the_watch_starts_is_not_lost() {
    let env = Env::new();
    write_new(&env.own(), &config(&[("x", &[])]));
    write_new(&env.cursor(), &config(&[("x", &["--tools", "2"])]));
    let read = Settings::load(&env.host).0;
    let d = discover(&env.host, &read, &Default::default());
    assert_eq!(d.server("x").unwrap().winner.source, "switchboard");
    let m = manager(&env);
    // Another program moves Cursor first.
    let mut other = read.clone();
    other.priority = vec!["cursor-user".into(), "switchboard".into()];
    other.save(&env.host).unwrap();

    let live = Live::start(
        env.host.clone(),
        switchboard_engine::watch::settings_from_disk(&env.host),
        m.clone(),
        d,
        WatchOptions {
            initial_settings: Some(read),
            ..WatchOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        live.discovery().server("x").unwrap().winner.source,
        "cursor-user",
        "the priority saved before the watch started reached discovery"
    );
    live.stop().await;
    m.shutdown().await;
}
