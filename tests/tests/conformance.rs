//! Invariants every backend keeps, checked the same way for each registered plugin (the
//! first-party backends and the example third-party plugin), without building anything:
//! - its declarations validate (namespaces, codes, pins);
//! - every code a rule names has an `explain` text;
//! - every native CPU rule is claimed by some function of its certification kit's project, so
//!   `cargo xtask certify` exercises it (rules needing a device are certified on such a host);
//! - no function of that CPU kit claims a device rule;
//! - every device rule's capability is one the plugin's device requirements state for a type of
//!   its vocabulary, with the device facts a provider checks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_host::{Project, Registry};
use rextio_plugin_api::{Plugin, RuleOutcome, TypeKey};
use std::collections::BTreeSet;
use std::path::Path;

fn registry() -> Registry {
    Registry::builder()
        .with_default_plugins()
        .plugin(rextio_example_plugin::ExamplePlugin::default())
        .build()
        .unwrap()
}

/// The rules each function of a plugin's certification project claims, by `rextio check` of a
/// copy (the kit's own directory is never written to).
fn kit_claims(registry: &Registry, plugin: &dyn Plugin) -> Option<Vec<(String, Vec<String>)>> {
    let kit = plugin.certification_kit()?;
    let dir = tempfile::tempdir().unwrap();
    rextio_tests::copy_dir(Path::new(&kit.project_dir), dir.path());
    let out = Project::open(dir.path()).unwrap().check(registry).unwrap();
    Some(
        out.report
            .modules
            .iter()
            .flat_map(|m| &m.functions)
            .map(|f| {
                let rules = f
                    .plugin_claims
                    .iter()
                    .filter(|c| c.rule_id.starts_with(&format!("{}/", plugin.id())))
                    .map(|c| c.rule_id.clone())
                    .collect();
                (f.qualname.clone(), rules)
            })
            .collect(),
    )
}

#[test]
fn every_backend_keeps_the_shared_invariants() {
    let registry = registry();
    let mut kits = 0;
    for reg in registry.plugins() {
        let plugin = reg.plugin.as_ref();
        let id = plugin.id();
        rextio_plugin_api::validate_plugin(plugin).unwrap_or_else(|e| panic!("{id}: {e}"));

        for rule in plugin.rules() {
            if let Some(code) = &rule.diagnostic_code {
                let doc = plugin
                    .diagnostic_codes()
                    .iter()
                    .find(|d| d.code == code.as_str())
                    .unwrap_or_else(|| panic!("{id}: {code} has no documentation"));
                assert!(
                    !doc.summary.trim().is_empty() && !doc.explanation.trim().is_empty(),
                    "{id}: {code} has no explain text"
                );
            }
        }

        let device_rules: BTreeSet<&str> = plugin
            .rules()
            .iter()
            .filter(|r| plugin.rule_device(&r.id).is_some())
            .map(|r| r.id.as_str())
            .collect();
        if let Some(claims) = kit_claims(&registry, plugin) {
            kits += 1;
            let claimed: BTreeSet<&str> = claims
                .iter()
                .flat_map(|(_, rules)| rules.iter().map(String::as_str))
                .collect();
            let uncertified: Vec<&str> = plugin
                .rules()
                .iter()
                .filter(|r| r.outcome == RuleOutcome::Native)
                .map(|r| r.id.as_str())
                .filter(|r| !device_rules.contains(r) && !claimed.contains(r))
                .collect();
            assert!(
                uncertified.is_empty(),
                "{id}: native rules no kit function claims: {uncertified:?}"
            );
            for (function, rules) in &claims {
                for rule in rules {
                    assert!(
                        !device_rules.contains(rule.as_str()),
                        "{id}: CPU kit function {function} claims device rule {rule}"
                    );
                }
            }
        }

        // A device rule's capability is stated by the plugin for one of its own types, with the
        // facts a provider checks.
        for rule in &device_rules {
            let capability = plugin.rule_device(rule).unwrap();
            let stated = plugin.type_vocabulary().iter().any(|t| {
                plugin
                    .device_requirements(&[TypeKey::new(t.key.as_str())])
                    .iter()
                    .any(|req| req.capability == capability && req.device.is_some())
            });
            assert!(
                stated,
                "{id}: device rule {rule} needs `{capability}`, which no type's requirement states"
            );
        }
    }
    assert_eq!(kits, 2, "the torch and TensorFlow kits were checked");
}
