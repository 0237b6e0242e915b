use super::*;

#[test]
fn integrity_is_base64_of_sha384() {
    // sha384("abc"), as `openssl dgst -sha384 -binary | base64` prints it.
    assert_eq!(integrity(b"abc"), "sha384-ywB1P0WjXou1oD1pmsZQBycsMqsO3tFjGotgWkP/W+2AhgcroefMI1i67KE0yCWn");
    assert_eq!(base64(b"a"), "YQ==");
    assert_eq!(base64(b"ab"), "YWI=");
    assert_eq!(content_hash(&[b"abc"]).len(), 16);
    assert_ne!(content_hash(&[b"ab", b"c"]), content_hash(&[b"a", b"bc"]));
}

#[test]
fn a_failed_build_keeps_the_last_good_dist_and_leaves_nothing_beside_it() {
    let dir = std::env::temp_dir().join(format!("xtask-failed-build-{}", std::process::id()));
    let dist = dir.join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "the last good build").unwrap();
    let page = dir.join("index.html");
    for html in [
        r#"<head><link data-trunk rel="sass" href="a.scss"></head>"#,
        // No crate to build: refused before cargo runs.
        r#"<head><link data-trunk rel="copy-file" href="a.txt"></head>"#,
    ] {
        std::fs::write(&page, html).unwrap();
        let err = build(&page, &dist, &dir.join("target"), |_| Ok(())).unwrap_err();
        assert!(format!("{err:#}").contains("index.html"), "{err:#}");
        assert_eq!(std::fs::read_to_string(dist.join("index.html")).unwrap(), "the last good build");
        assert!(!sibling(&dist, "staging").unwrap().exists() && !sibling(&dist, "old").unwrap().exists());
    }
    // A finished build replaces dist/ whole.
    let stage = sibling(&dist, "staging").unwrap();
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::write(stage.join("index.html"), "a new build").unwrap();
    replace(&dist, &stage).unwrap();
    assert_eq!(std::fs::read_to_string(dist.join("index.html")).unwrap(), "a new build");
    assert!(!stage.exists() && !sibling(&dist, "old").unwrap().exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_package_name_is_read_from_the_manifest() {
    let dir = std::env::temp_dir().join(format!("xtask-manifest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("Cargo.toml");
    std::fs::write(
        &manifest,
        "[package]\nname = \"flint-app\"\nversion = \"0.1.0\"\n[dependencies]\nname = \"x\"\n",
    )
    .unwrap();
    assert_eq!(package_name(&manifest).unwrap(), "flint-app");
    std::fs::remove_dir_all(dir).unwrap();
}
