//! `make install DESTDIR=…` lays out the binaries, the bundled plugins, the systemd unit and its
//! user; the unit is hardened, `Type=notify` with a watchdog, and `systemd-analyze verify`
//! accepts it without a single warning.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_owned()
}

fn bin_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_hearthd"))
        .parent()
        .expect("target dir")
        .to_owned();
    for plugin in ["hearth-files", "hearth-timer"] {
        assert!(
            dir.join(plugin).exists(),
            "{plugin} is missing in {}: cargo build --workspace --bins",
            dir.display()
        );
    }
    dir
}

fn install(dest: &Path) -> String {
    let out = Command::new("make")
        .arg("-s")
        .arg("install")
        .arg("NO_BUILD=1")
        .arg(format!("BIN_DIR={}", bin_dir().display()))
        .arg(format!("DESTDIR={}", dest.display()))
        .current_dir(repo())
        .output()
        .expect("make runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "make install failed: {text}");
    text
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn make_install_lays_out_binaries_plugins_and_a_hardened_unit() {
    let dest = tempfile::tempdir().expect("destdir");
    let said = install(dest.path());
    assert!(said.contains("systemctl enable --now hearthd"), "{said}");
    let root = dest.path();
    for (file, want) in [
        ("usr/local/bin/hearthd", 0o755),
        ("usr/local/bin/hearth", 0o755),
        // Beside hearthd, which installs the page from it on start.
        ("usr/local/bin/hearth-web", 0o755),
        ("usr/local/lib/hearth/plugins/files/hearth-files", 0o755),
        ("usr/local/lib/hearth/plugins/files/plugin.json", 0o644),
        ("usr/local/lib/hearth/plugins/timer/hearth-timer", 0o755),
        ("usr/local/lib/hearth/plugins/timer/plugin.json", 0o644),
        ("etc/systemd/system/hearthd.service", 0o644),
        ("etc/sysusers.d/hearth.conf", 0o644),
    ] {
        assert_eq!(mode(&root.join(file)), want, "{file}");
    }
    // The installed plugin directories are valid plugins: the manifest's entry is beside it.
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("usr/local/lib/hearth/plugins/files/plugin.json"))
            .expect("manifest"),
    )
    .expect("json");
    assert_eq!(manifest["entry"], "hearth-files");
    assert!(
        std::fs::read_to_string(root.join("etc/sysusers.d/hearth.conf"))
            .expect("sysusers")
            .contains("u hearth -")
    );

    let unit =
        std::fs::read_to_string(root.join("etc/systemd/system/hearthd.service")).expect("unit");
    assert!(!unit.contains('@'), "every placeholder written: {unit}");
    for line in [
        "Type=notify",
        "WatchdogSec=30",
        "Restart=on-failure",
        "ExecStart=/usr/local/bin/hearthd --config /etc/hearth/hearth.toml --data-dir /var/lib/hearth",
        "User=hearth",
        "StateDirectory=hearth",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "NoNewPrivileges=yes",
    ] {
        assert!(unit.lines().any(|l| l == line), "the unit lacks {line:?}");
    }
    verify(root, &unit);
}

/// `systemd-analyze verify` on the installed unit, its ExecStart pointed into DESTDIR (verify
/// checks that the binary is there). Any warning fails: verify exits 0 on many of them.
fn verify(root: &Path, unit: &str) {
    if !analyzer("the unit was not verified") {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let unit = unit.replace(
        "/usr/local/bin/hearthd",
        &root.join("usr/local/bin/hearthd").display().to_string(),
    );
    let path = dir.path().join("hearthd.service");
    std::fs::write(&path, unit).expect("write");
    let (ok, said) = analyze(&path);
    assert!(ok && said.trim().is_empty(), "{said}");
}

/// Whether `systemd-analyze` is there; says what is skipped when it is not.
fn analyzer(skipped: &str) -> bool {
    let there = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok();
    if !there {
        eprintln!("SKIPPED: systemd-analyze is not installed; {skipped}");
    }
    there
}

/// `systemd-analyze verify UNIT`: whether it exited 0, and all it printed.
fn analyze(unit: &Path) -> (bool, String) {
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(unit)
        .output()
        .expect("systemd-analyze runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[test]
fn systemd_analyze_catches_a_broken_unit() {
    // The check above is only worth something if a bad unit makes it speak.
    if !analyzer("a broken unit was not tried") {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("broken.service");
    std::fs::write(
        &path,
        "[Service]\nType=notfy\nExecStart=/bin/true\nProtectSystem=bogus\n",
    )
    .expect("write");
    let (_, said) = analyze(&path);
    assert!(said.contains("notfy"), "{said}");
}
