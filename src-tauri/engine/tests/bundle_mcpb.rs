//! `.mcpb` bundles: ones packed and signed by the real `@anthropic-ai/mcpb`
//! CLI (tests/npm) open, unpack and make the right stdio definition, with
//! their signature's status; hostile archives built here are refused with
//! their reason and nothing written.

use std::io::{Cursor, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Command;

use switchboard_engine::bundle::{
    parse_config_flags, server_def, signature_status, Bundle, BundleError, Limits, Places,
    SignatureStatus, TrustRoots, UnpackOptions,
};
use switchboard_engine::registry::install::{KeptSecret, Secrets};
use switchboard_tests::mcpb::{mcpb, mcpb_cli};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// Writes ca.pem, ca.der, leaf.pem and leaf.key: "Test Publisher" issued by
/// "Test CA" for code signing; web.pem: the same key, for web servers only.
const MAKE_CA: &str = r#"
const forge = require("node-forge");
const fs = require("fs");
function cert(cn, keys, issuerCn, signKey, isCa, purpose = { codeSigning: true }) {
  const c = forge.pki.createCertificate();
  c.publicKey = keys.publicKey;
  c.serialNumber = isCa ? "01" : "02";
  c.validity.notBefore = new Date(Date.now() - 60000);
  c.validity.notAfter = new Date(Date.now() + 86400000);
  c.setSubject([{ name: "commonName", value: cn }]);
  c.setIssuer([{ name: "commonName", value: issuerCn }]);
  c.setExtensions(
    isCa
      ? [{ name: "basicConstraints", cA: true }, { name: "keyUsage", keyCertSign: true, cRLSign: true }]
      : [
          { name: "basicConstraints", cA: false },
          { name: "keyUsage", digitalSignature: true },
          { name: "extKeyUsage", ...purpose },
        ],
  );
  c.sign(signKey, forge.md.sha256.create());
  return c;
}
const ca = forge.pki.rsa.generateKeyPair(2048);
const leaf = forge.pki.rsa.generateKeyPair(2048);
const caCert = cert("Test CA", ca, "Test CA", ca.privateKey, true);
fs.writeFileSync("ca.pem", forge.pki.certificateToPem(caCert));
fs.writeFileSync("ca.der", Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(caCert)).getBytes(), "binary"));
fs.writeFileSync("leaf.pem", forge.pki.certificateToPem(cert("Test Publisher", leaf, "Test CA", ca.privateKey, false)));
fs.writeFileSync("leaf.key", forge.pki.privateKeyToPem(leaf.privateKey));
const web = cert("Web Server", leaf, "Test CA", ca.privateKey, false, { serverAuth: true });
web.serialNumber = "03";
web.sign(ca.privateKey, forge.md.sha256.create());
fs.writeFileSync("web.pem", forge.pki.certificateToPem(web));
"#;

const MANIFEST: &str = r#"{
  "manifest_version": "0.3",
  "name": "hello-bundle",
  "display_name": "Hello bundle",
  "version": "1.2.0",
  "description": "A fixture for Switchboard's tests",
  "author": { "name": "Switchboard tests" },
  "server": {
    "type": "node",
    "entry_point": "server/index.js",
    "mcp_config": {
      "command": "node",
      "args": ["${__dirname}/server/index.js", "--root", "${user_config.root}"],
      "env": { "API_KEY": "${user_config.api_key}" }
    }
  },
  "user_config": {
    "api_key": { "type": "string", "title": "API key", "description": "The key", "sensitive": true, "required": true },
    "root": { "type": "directory", "title": "Root", "description": "A folder", "default": "${HOME}/work" }
  },
  "compatibility": { "platforms": ["darwin", "win32", "linux"], "runtimes": { "node": ">=16.0.0" } }
}"#;

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            out.push(e.path());
            if e.path().is_dir() {
                out.extend(files_under(&e.path()));
            }
        }
    }
    out
}

#[test]
fn bundles_from_the_real_cli() -> anyhow::Result<()> {
    let Some(cli) = mcpb_cli("bundles_from_the_real_cli") else {
        return Ok(());
    };
    let tmp = tempfile::tempdir()?;
    let ext = tmp.path().join("ext");
    std::fs::create_dir_all(ext.join("server"))?;
    std::fs::write(ext.join("manifest.json"), MANIFEST)?;
    std::fs::write(
        ext.join("server/index.js"),
        "process.stdout.write(JSON.stringify(process.argv) + '\\n');\n",
    )?;
    mcpb(&cli, tmp.path(), &["pack", "ext", "plain.mcpb"]);
    std::fs::copy(
        tmp.path().join("plain.mcpb"),
        tmp.path().join("signed.mcpb"),
    )?;
    mcpb(&cli, tmp.path(), &["sign", "signed.mcpb", "--self-signed"]);

    // Unsigned: opens, unpacks, makes the definition with the secret kept aside.
    let limits = Limits::default();
    let plain = Bundle::open(&tmp.path().join("plain.mcpb"), &limits)?;
    assert_eq!(plain.signature, SignatureStatus::Unsigned);
    assert_eq!(plain.manifest.name, "hello-bundle");
    assert_eq!(plain.manifest.display_name.as_deref(), Some("Hello bundle"));
    let data = tmp.path().join("data");
    let mut seen = vec![];
    let unpacked = plain.unpack(&data, &limits, UnpackOptions::default(), &mut |p| {
        seen.push(p);
        ControlFlow::Continue(())
    })?;
    assert_eq!(unpacked.dir, data.join("bundles/hello-bundle/1.2.0"));
    assert!(!unpacked.reused);
    assert!(unpacked.dir.join("server/index.js").is_file());
    assert_eq!(
        std::fs::read_to_string(unpacked.dir.join("manifest.json"))?,
        MANIFEST
    );
    let last = seen.last().expect("progress reported");
    assert_eq!(
        last.done, last.total,
        "progress ends at the total: {seen:?}"
    );
    // Only the bundle's folder is left in the data folder.
    assert_eq!(
        std::fs::read_dir(&data)?.count(),
        1,
        "{:?}",
        files_under(&data)
    );

    // Cancelled from the progress callback: an error, and nothing left.
    let elsewhere = tmp.path().join("data-cancelled");
    let err = plain
        .unpack(&elsewhere, &limits, UnpackOptions::default(), &mut |p| {
            if p.done > 0 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap_err();
    assert!(matches!(err, BundleError::Cancelled { .. }), "{err}");
    assert!(
        files_under(&elsewhere).is_empty(),
        "{:?}",
        files_under(&elsewhere)
    );

    let again = plain.unpack(&data, &limits, UnpackOptions::default(), &mut |_| {
        ControlFlow::Continue(())
    })?;
    assert!(again.reused, "the same version is left alone");
    let replaced = plain.unpack(&data, &limits, UnpackOptions { replace: true }, &mut |_| {
        ControlFlow::Continue(())
    })?;
    assert!(!replaced.reused);
    assert!(replaced.dir.join("server/index.js").is_file());

    let values = parse_config_flags(&["api_key=sk-test-123".into()])?;
    let mut places = Places::current();
    places.home = PathBuf::from("/home/someone");
    let built = server_def(
        &plain.manifest,
        "hello",
        &unpacked.dir,
        &values,
        &places,
        &Secrets::Keychain {
            server: "hello".into(),
        },
    )?;
    let dir = unpacked.dir.to_string_lossy().into_owned();
    assert_eq!(built.def.command.as_deref(), Some("node"));
    assert_eq!(
        built.def.args,
        [
            format!("{dir}/server/index.js"),
            "--root".into(),
            "/home/someone/work".into()
        ]
    );
    assert_eq!(built.def.env["API_KEY"], "${keychain:hello.api_key}");
    assert_eq!(
        built.secrets,
        [KeptSecret {
            name: "hello.api_key".into(),
            value: "sk-test-123".into()
        }]
    );
    assert!(!format!("{:?}", built.def).contains("sk-test-123"));
    // The definition runs the unpacked server.
    let out = Command::new("node").args(&built.def.args).output()?;
    assert!(String::from_utf8_lossy(&out.stdout).contains("/home/someone/work"));

    let verdict = switchboard_engine::bundle::check_compatibility(&plain.manifest);
    assert!(verdict.compatible, "{:?}", verdict.problems);
    assert!(verdict.found[0].starts_with("node "), "{:?}", verdict.found);

    // Self-signed by the CLI: valid, named, not trusted.
    let signed = Bundle::open(&tmp.path().join("signed.mcpb"), &limits)?;
    match &signed.signature {
        SignatureStatus::SelfSigned { fingerprint, .. } => assert_eq!(fingerprint.len(), 64),
        other => panic!("expected self-signed, got {other:?}"),
    }
    assert!(signed
        .signature
        .to_string()
        .starts_with("signed (self-signed"));
    assert_eq!(signed.manifest, plain.manifest);

    // Signed by a certificate a test CA issued for code signing, the CA
    // passed along as the CLI's intermediate: valid and named; not trusted
    // with the system's roots, trusted when the CA is a root.
    {
        // The CA and the publisher's certificate, made with node-forge (the
        // library the CLI signs with, installed beside it in tests/npm).
        let out = Command::new("node")
            .arg("-e")
            .arg(MAKE_CA)
            .env(
                "NODE_PATH",
                cli.parent().and_then(Path::parent).expect("node_modules"),
            )
            .current_dir(tmp.path())
            .output()?;
        assert!(
            out.status.success(),
            "making the test CA: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::copy(tmp.path().join("plain.mcpb"), tmp.path().join("ca.mcpb"))?;
        mcpb(
            &cli,
            tmp.path(),
            &[
                "sign", "ca.mcpb", "-c", "leaf.pem", "-k", "leaf.key", "-i", "ca.pem",
            ],
        );
        let ca = Bundle::open(&tmp.path().join("ca.mcpb"), &limits)?;
        match &ca.signature {
            SignatureStatus::Signed {
                subject,
                issuer,
                trusted,
                ..
            } => {
                assert_eq!(
                    (subject.as_str(), issuer.as_str(), *trusted),
                    ("Test Publisher", "Test CA", false)
                );
            }
            other => panic!("expected signed, got {other:?}"),
        }
        assert_eq!(
            ca.signature.to_string(),
            "signed by Test Publisher (not trusted: its issuer is not a trusted root)"
        );
        let roots = TrustRoots::from_der(vec![std::fs::read(tmp.path().join("ca.der"))?]);
        let trusted = Bundle::open_trusting(&tmp.path().join("ca.mcpb"), &limits, &roots)?;
        assert_eq!(
            trusted.signature.to_string(),
            "signed by Test Publisher (trusted)",
            "{:?}",
            trusted.signature
        );
        // A certificate for web servers is not one for signing code.
        std::fs::copy(tmp.path().join("plain.mcpb"), tmp.path().join("web.mcpb"))?;
        mcpb(
            &cli,
            tmp.path(),
            &[
                "sign", "web.mcpb", "-c", "web.pem", "-k", "leaf.key", "-i", "ca.pem",
            ],
        );
        let web = Bundle::open_trusting(&tmp.path().join("web.mcpb"), &limits, &roots)?;
        assert_eq!(
            web.signature.to_string(),
            "signed by Web Server (not trusted: a certificate of the chain is not for code signing)"
        );
        // A self-signed certificate is never trusted, whatever the roots.
        let selfsigned = Bundle::open_trusting(&tmp.path().join("signed.mcpb"), &limits, &roots)?;
        assert!(matches!(
            selfsigned.signature,
            SignatureStatus::SelfSigned { .. }
        ));
    }

    // Tampered: a byte of the zip (a file's time in its local header), then
    // a byte of the signature itself. Both invalid, both refused.
    let bytes = std::fs::read(tmp.path().join("signed.mcpb"))?;
    let mut content = bytes.clone();
    content[10] ^= 0x01;
    let mut sig = bytes.clone();
    let n = sig.len();
    sig[n - "MCPB_SIG_END".len() - 5] ^= 0x01;
    for (name, data, why) in [
        ("tampered.mcpb", content, "content does not match"),
        ("badsig.mcpb", sig, "signature does not match"),
    ] {
        let path = tmp.path().join(name);
        std::fs::write(&path, data)?;
        match signature_status(&path, &TrustRoots::system())? {
            SignatureStatus::Invalid { reason } => {
                assert!(reason.contains(why), "{name}: {reason}")
            }
            other => panic!("{name}: expected invalid, got {other:?}"),
        }
        let err = Bundle::open(&path, &limits).unwrap_err();
        assert!(
            matches!(err, BundleError::Signature { .. }),
            "{name}: {err}"
        );
        assert!(err.to_string().contains(name), "{err}");
    }
    Ok(())
}

// ---- hostile archives -------------------------------------------------------

enum Entry<'a> {
    File(&'a str, &'a [u8]),
    Symlink(&'a str, &'a str),
}

const GOOD_MANIFEST: &[u8] = br#"{"manifest_version":"0.3","name":"evil","version":"1.0.0","author":{"name":"x"},"server":{"type":"node","entry_point":"server/index.js","mcp_config":{"command":"node","args":["${__dirname}/server/index.js"]}}}"#;

fn zip_of(entries: &[Entry]) -> Vec<u8> {
    let mut w = ZipWriter::new(Cursor::new(vec![]));
    let opts = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for e in entries {
        match e {
            Entry::File(name, data) => {
                w.start_file(*name, opts).expect("start file");
                w.write_all(data).expect("write");
            }
            Entry::Symlink(name, target) => {
                w.add_symlink(*name, *target, opts).expect("symlink");
            }
        }
    }
    w.finish().expect("finish").into_inner()
}

/// Writes `bytes` as a bundle, opens and unpacks it; returns the error and
/// checks that nothing is left in the data folder.
fn refused(tmp: &Path, name: &str, bytes: &[u8], limits: &Limits) -> String {
    let file = tmp.join(name);
    std::fs::write(&file, bytes).expect("write bundle");
    let data = tmp.join(format!("data-{name}"));
    let err = Bundle::open(&file, limits)
        .and_then(|b| {
            b.unpack(&data, limits, UnpackOptions::default(), &mut |_| {
                ControlFlow::Continue(())
            })
        })
        .map(|u| panic!("{name} should be refused, got {u:?}"))
        .unwrap_err();
    let left = files_under(&data);
    assert!(left.is_empty(), "{name}: left behind {left:?}");
    let msg = err.to_string();
    assert!(
        msg.contains(name),
        "{name}: the error names the file: {msg}"
    );
    msg
}

#[test]
fn hostile_archives_are_refused_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = Limits::default();
    let with = |e: Entry| zip_of(&[Entry::File("manifest.json", GOOD_MANIFEST), e]);

    let msg = refused(
        tmp.path(),
        "dotdot.mcpb",
        &with(Entry::File("../escape.txt", b"x")),
        &limits,
    );
    assert!(
        msg.contains("\"../escape.txt\"") && msg.contains("leaves the bundle's folder"),
        "{msg}"
    );
    let msg = refused(
        tmp.path(),
        "deep.mcpb",
        &with(Entry::File("server/../../escape.txt", b"x")),
        &limits,
    );
    assert!(msg.contains("leaves the bundle's folder"), "{msg}");
    let msg = refused(
        tmp.path(),
        "absolute.mcpb",
        &with(Entry::File("/tmp/escape.txt", b"x")),
        &limits,
    );
    assert!(msg.contains("absolute"), "{msg}");
    let msg = refused(
        tmp.path(),
        "drive.mcpb",
        &with(Entry::File("C:/escape.txt", b"x")),
        &limits,
    );
    assert!(msg.contains("drive letter"), "{msg}");
    let msg = refused(
        tmp.path(),
        "backslash.mcpb",
        &with(Entry::File("..\\escape.txt", b"x")),
        &limits,
    );
    assert!(msg.contains("backslash"), "{msg}");
    let msg = refused(
        tmp.path(),
        "symlink.mcpb",
        &with(Entry::Symlink("server/link", "/etc/passwd")),
        &limits,
    );
    assert!(
        msg.contains("\"server/link\"") && msg.contains("symbolic link"),
        "{msg}"
    );
    let msg = refused(
        tmp.path(),
        "dup.mcpb",
        &zip_of(&[
            Entry::File("manifest.json", GOOD_MANIFEST),
            Entry::File("README.md", b"a"),
            Entry::File("readme.md", b"b"),
        ]),
        &limits,
    );
    assert!(msg.contains("appears twice"), "{msg}");

    let msg = refused(
        tmp.path(),
        "fileasfolder.mcpb",
        &zip_of(&[
            Entry::File("manifest.json", GOOD_MANIFEST),
            Entry::File("server", b"a"),
            Entry::File("server/index.js", b"b"),
        ]),
        &limits,
    );
    assert!(msg.contains("is also a file"), "{msg}");
    let msg = refused(
        tmp.path(),
        "noentry.mcpb",
        &zip_of(&[Entry::File("manifest.json", GOOD_MANIFEST)]),
        &limits,
    );
    assert!(
        msg.ends_with(
            "manifest.json: server.entry_point: \"server/index.js\" is not in the bundle"
        ),
        "{msg}"
    );
    let msg = refused(
        tmp.path(),
        "text.mcpb",
        b"this is not a zip file at all",
        &limits,
    );
    assert!(msg.contains("not a zip archive"), "{msg}");
    let msg = refused(
        tmp.path(),
        "nomanifest.mcpb",
        &zip_of(&[Entry::File("server/index.js", b"x")]),
        &limits,
    );
    assert!(
        msg.contains("manifest.json") && msg.contains("missing"),
        "{msg}"
    );
    let bad = br#"{"manifest_version":"0.3","name":"x","version":"1","server":{"type":"node","entry_point":"i.js","mcp_config":{"args":[]}}}"#;
    let msg = refused(
        tmp.path(),
        "badmanifest.mcpb",
        &zip_of(&[Entry::File("manifest.json", bad)]),
        &limits,
    );
    assert!(
        msg.ends_with("badmanifest.mcpb: manifest.json: server.mcp_config.command: missing"),
        "{msg}"
    );
    let msg = refused(
        tmp.path(),
        "notjson.mcpb",
        &zip_of(&[Entry::File("manifest.json", b"{nope")]),
        &limits,
    );
    assert!(msg.contains("not valid JSON"), "{msg}");

    let many: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
    let mut entries = vec![Entry::File("manifest.json", GOOD_MANIFEST)];
    entries.extend(many.iter().map(|n| Entry::File(n, b"x")));
    let small = Limits {
        max_entries: 10,
        ..Limits::default()
    };
    let msg = refused(tmp.path(), "many.mcpb", &zip_of(&entries), &small);
    assert!(msg.contains("21 entries"), "{msg}");
}

#[test]
fn zip_bombs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = Limits::default();

    // 1 GB of zeros, deflated to about a megabyte.
    let mut w = ZipWriter::new(Cursor::new(vec![]));
    let opts = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(1))
        .large_file(true);
    w.start_file("manifest.json", opts).unwrap();
    w.write_all(GOOD_MANIFEST).unwrap();
    w.start_file("server/index.js", opts).unwrap();
    w.write_all(b"// server").unwrap();
    w.start_file("zeros.bin", opts).unwrap();
    let mb = vec![0u8; 1024 * 1024];
    for _ in 0..1024 {
        w.write_all(&mb).unwrap();
    }
    let bomb = w.finish().unwrap().into_inner();
    let msg = refused(tmp.path(), "bomb.mcpb", &bomb, &limits);
    assert!(msg.contains("\"zeros.bin\""), "{msg}");
    assert!(
        msg.contains("zip bomb") || msg.contains("more than"),
        "{msg}"
    );

    // A bomb that lies about its size: 3 MB of zeros declared as 4000 bytes
    // (a harmless ratio). The real bytes are counted while unpacking.
    let mut w = ZipWriter::new(Cursor::new(vec![]));
    let opts = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    w.start_file("manifest.json", opts).unwrap();
    w.write_all(GOOD_MANIFEST).unwrap();
    w.start_file("server/index.js", opts).unwrap();
    w.write_all(b"// server").unwrap();
    w.start_file("liar.bin", opts).unwrap();
    w.write_all(&vec![0u8; 3 * 1024 * 1024]).unwrap();
    let mut liar = w.finish().unwrap().into_inner();
    let size = (3u32 * 1024 * 1024).to_le_bytes();
    let fake = 4000u32.to_le_bytes();
    let mut patched = 0;
    for i in 0..liar.len().saturating_sub(4) {
        if liar[i..i + 4] == size {
            liar[i..i + 4].copy_from_slice(&fake);
            patched += 1;
        }
    }
    assert_eq!(
        patched, 2,
        "the local header's and central directory's sizes"
    );
    let msg = refused(tmp.path(), "liar.mcpb", &liar, &limits);
    assert!(msg.contains("liar.bin"), "{msg}");
    assert!(
        msg.contains("larger than its declared") || msg.contains("more than the"),
        "{msg}"
    );
}

/// How long opening and unpacking a 50 MB bundle takes (run by hand:
/// `cargo test -p switchboard-engine --test bundle_mcpb -- --ignored --nocapture`).
#[test]
#[ignore]
fn fifty_megabytes_timing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = ZipWriter::new(Cursor::new(vec![]));
    let opts = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    w.start_file("manifest.json", opts).unwrap();
    w.write_all(GOOD_MANIFEST).unwrap();
    w.start_file("server/index.js", opts).unwrap();
    w.write_all(b"// server").unwrap();
    let mut x: u64 = 0x9E3779B97F4A7C15;
    for f in 0..50 {
        w.start_file(format!("node_modules/pkg{f}/data.bin"), opts)
            .unwrap();
        let chunk: Vec<u8> = (0..1024 * 1024)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        w.write_all(&chunk).unwrap();
    }
    let bytes = w.finish().unwrap().into_inner();
    let file = tmp.path().join("big.mcpb");
    std::fs::write(&file, &bytes).unwrap();
    let start = std::time::Instant::now();
    let b = Bundle::open(&file, &Limits::default()).unwrap();
    let opened = start.elapsed();
    b.unpack(
        &tmp.path().join("data"),
        &Limits::default(),
        UnpackOptions::default(),
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap();
    eprintln!(
        "50 MB bundle ({} bytes): open {:?}, open + unpack {:?}",
        bytes.len(),
        opened,
        start.elapsed()
    );
}
