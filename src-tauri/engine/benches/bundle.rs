//! Opening a 50 MB `.mcpb` in the app: `cargo bench --bench bundle`.
//!
//! 1. `BundleInstaller::open` of a 50 MB bundle (51 entries, incompressible):
//!    the archive and manifest checked, the signature read, the machine's
//!    runtimes checked, the form's facts returned. Goal: ≤ 1 s from the
//!    click to the form; this is all the engine does before the form shows
//!    (the unpacking goes on in the background).
//! 2. From open to unpacked in its hidden folder (progress shown meanwhile).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use switchboard_engine::bundle::{BundleInstaller, UnpackState};
use switchboard_engine::engine::Engine;
use switchboard_tests::bench::{ms_stats, record, Goal};
use switchboard_tests::TempHome;

const RUNS: usize = 10;
const MB: usize = 1024 * 1024;

/// A bundle of `files` × 1 MB of incompressible bytes plus a node entry point.
fn write_bundle(path: &Path, files: usize) {
    let manifest = r#"{"manifest_version":"0.3","name":"big-bundle","version":"1.0.0",
      "author":{"name":"bench"},"server":{"type":"node","entry_point":"server/index.js",
      "mcp_config":{"command":"node","args":["${__dirname}/server/index.js"],
      "env":{"TOKEN":"${user_config.token}"}}},
      "user_config":{"token":{"type":"string","title":"Token","sensitive":true,"required":true}}}"#;
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("manifest.json", stored).unwrap();
    zip.write_all(manifest.as_bytes()).unwrap();
    zip.start_file("server/index.js", stored).unwrap();
    zip.write_all(b"process.stdin.resume();\n").unwrap();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut chunk = vec![0u8; MB];
    for i in 0..files {
        for b in chunk.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *b = state as u8;
        }
        zip.start_file(format!("server/data/{i}.bin"), stored)
            .unwrap();
        zip.write_all(&chunk).unwrap();
    }
    zip.finish().unwrap();
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.mcpb");
    write_bundle(&file, 50);
    let size = std::fs::metadata(&file).unwrap().len();
    let home = TempHome::with_servers(serde_json::json!({}));
    let engine = Arc::new(Engine::for_host(home.host()));
    let installer = BundleInstaller::new(engine);

    let mut open_times = vec![];
    let mut ready_times = vec![];
    for _ in 0..RUNS {
        let t = Instant::now();
        let view = rt.block_on(installer.open(&file, |_| {})).unwrap();
        open_times.push(t.elapsed());
        let end = Instant::now() + Duration::from_secs(60);
        while installer.progress(view.id).unwrap().state == UnpackState::Unpacking {
            assert!(Instant::now() < end, "not unpacked within 60 s");
            std::thread::sleep(Duration::from_millis(1));
        }
        ready_times.push(t.elapsed());
        assert_eq!(
            installer.progress(view.id).unwrap().state,
            UnpackState::Ready
        );
        installer.cancel(view.id);
    }
    let note = format!(
        "{RUNS} runs, {:.0} MB bundle, 52 entries",
        size as f64 / MB as f64
    );
    let (median, p90) = ms_stats(&open_times);
    record(
        "Bundles",
        "Open a 50 MB .mcpb: checked, form's facts ready (unpacking goes on)",
        median,
        Some(p90),
        "ms",
        Goal::Max(1000.0),
        &note,
    );
    let (median, p90) = ms_stats(&ready_times);
    record(
        "Bundles",
        "Open a 50 MB .mcpb until unpacked in the background",
        median,
        Some(p90),
        "ms",
        Goal::None,
        &note,
    );
}
