//! `docs/diagnostics.md` is generated from the code tables; this fails when it is stale.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

#[test]
fn diagnostics_reference_is_up_to_date() {
    let registry = rextio_host::Registry::builder()
        .with_default_plugins()
        .build()
        .unwrap();
    let expected = rextio_host::docs::diagnostics_markdown(&registry);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/diagnostics.md");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "docs/diagnostics.md is stale (or missing): a code table changed. Regenerate it from the \
         workspace root with\n\n    {}\n\nand commit the result.",
        rextio_host::docs::REGENERATE_DIAGNOSTICS
    );
    // Every code `rextio explain` knows is in the reference.
    for d in rextio_host::codes::CODES {
        assert!(
            committed.contains(&format!("### {}\n", d.code)),
            "{}",
            d.code
        );
    }
    for r in registry.plugins() {
        for d in r.plugin.diagnostic_codes() {
            assert!(
                committed.contains(&format!("### {}\n", d.code)),
                "{}",
                d.code
            );
        }
    }
    assert!(committed.contains("| `driver-missing` | unavailable |"));
}

#[test]
fn the_hidden_docs_command_checks_and_writes_the_same_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("diagnostics.md");
    let bin = env!("CARGO_BIN_EXE_rextio");
    let status = |args: &[&str]| std::process::Command::new(bin).args(args).output().unwrap();
    let o = out.to_str().unwrap();
    let stale = status(&["docs", "diagnostics", "--out", o, "--check"]);
    assert!(!stale.status.success());
    assert!(String::from_utf8_lossy(&stale.stderr).contains("regenerate it with: cargo run"));
    assert!(status(&["docs", "diagnostics", "--out", o])
        .status
        .success());
    assert!(status(&["docs", "diagnostics", "--out", o, "--check"])
        .status
        .success());
    let registry = rextio_host::Registry::builder()
        .with_default_plugins()
        .build()
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        rextio_host::docs::diagnostics_markdown(&registry)
    );
}
