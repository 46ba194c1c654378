//! Registration-time validation of a plugin's declarations.

use crate::diagnostic::is_plugin_code;
use crate::plugin::{CrateSource, Plugin};
use crate::rules::{RuleOutcome, RuleRecord};
use crate::site::{ClaimOutcome, ClaimSite};
use std::collections::BTreeSet;
use thiserror::Error;

/// A declaration that makes a plugin unfit for registration.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ValidationError {
    /// Empty or malformed id.
    #[error("plugin id `{0}` is invalid: expected lowercase letters, digits and `-`, not empty")]
    BadId(String),
    /// A rule id outside `<plugin-id>/`.
    #[error("plugin `{plugin}` declares rule `{rule}` outside its namespace `{plugin}/`")]
    RuleNamespace {
        /// Plugin id.
        plugin: String,
        /// Offending rule id.
        rule: String,
    },
    /// A rule id declared twice.
    #[error("plugin `{plugin}` declares rule `{rule}` twice")]
    DuplicateRule {
        /// Plugin id.
        plugin: String,
        /// Offending rule id.
        rule: String,
    },
    /// A type key outside `<plugin-id>/`.
    #[error("plugin `{plugin}` declares type `{key}` outside its namespace `{plugin}/`")]
    TypeNamespace {
        /// Plugin id.
        plugin: String,
        /// Offending key.
        key: String,
    },
    /// A code not of the form `RXTP-<SEG>-NNN`.
    #[error(
        "plugin `{plugin}` declares diagnostic code `{code}`, expected the form RXTP-<SEG>-NNN"
    )]
    BadCode {
        /// Plugin id.
        plugin: String,
        /// Offending code.
        code: String,
    },
    /// A code documented twice.
    #[error("plugin `{plugin}` declares diagnostic code `{code}` twice")]
    DuplicateCode {
        /// Plugin id.
        plugin: String,
        /// Offending code.
        code: String,
    },
    /// A rule names a code that has no documentation.
    #[error("plugin `{plugin}`: rule `{rule}` names diagnostic code `{code}`, which is not in its code table")]
    UndocumentedCode {
        /// Plugin id.
        plugin: String,
        /// Rule id.
        rule: String,
        /// The code.
        code: String,
    },
    /// A runtime dependency that is not pinned.
    #[error("plugin `{plugin}`: runtime crate `{name}` must be pinned to an exact version (`=x.y.z`) or an absolute path, got `{found}`")]
    UnpinnedCrate {
        /// Plugin id.
        plugin: String,
        /// Crate name.
        name: String,
        /// What was declared.
        found: String,
    },
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
        && !id.ends_with('-')
}

/// Check a plugin's declarations: id, rule and type namespaces, diagnostic codes, crate pins.
pub fn validate_plugin(plugin: &dyn Plugin) -> Result<(), ValidationError> {
    let id = plugin.id();
    if !valid_id(id) {
        return Err(ValidationError::BadId(id.to_owned()));
    }
    let prefix = format!("{id}/");
    let mut codes = BTreeSet::new();
    for doc in plugin.diagnostic_codes() {
        if !is_plugin_code(doc.code) {
            return Err(ValidationError::BadCode {
                plugin: id.to_owned(),
                code: doc.code.to_owned(),
            });
        }
        if !codes.insert(doc.code) {
            return Err(ValidationError::DuplicateCode {
                plugin: id.to_owned(),
                code: doc.code.to_owned(),
            });
        }
    }
    let mut rules = BTreeSet::new();
    for rule in plugin.rules() {
        if !rule.id.starts_with(&prefix) || rule.id.len() == prefix.len() {
            return Err(ValidationError::RuleNamespace {
                plugin: id.to_owned(),
                rule: rule.id.clone(),
            });
        }
        if !rules.insert(rule.id.as_str()) {
            return Err(ValidationError::DuplicateRule {
                plugin: id.to_owned(),
                rule: rule.id.clone(),
            });
        }
        if let Some(code) = &rule.diagnostic_code {
            if !codes.contains(code.as_str()) {
                return Err(ValidationError::UndocumentedCode {
                    plugin: id.to_owned(),
                    rule: rule.id.clone(),
                    code: code.clone(),
                });
            }
        }
    }
    for ty in plugin.type_vocabulary() {
        if !ty.key.as_str().starts_with(&prefix) {
            return Err(ValidationError::TypeNamespace {
                plugin: id.to_owned(),
                key: ty.key.to_string(),
            });
        }
    }
    for dep in plugin
        .runtime_crate()
        .into_iter()
        .chain(plugin.runtime_support_crates())
    {
        let ok = match &dep.source {
            CrateSource::Registry(v) => v
                .strip_prefix('=')
                .is_some_and(|rest| semver::Version::parse(rest.trim()).is_ok()),
            CrateSource::Path(p) => std::path::Path::new(p).is_absolute(),
            CrateSource::Embedded(files) => files.iter().any(|(f, _)| f == "Cargo.toml"),
        };
        if !ok {
            let found = match &dep.source {
                CrateSource::Registry(v) | CrateSource::Path(v) => v.clone(),
                CrateSource::Embedded(_) => "embedded sources without a Cargo.toml".to_owned(),
            };
            return Err(ValidationError::UnpinnedCrate {
                plugin: id.to_owned(),
                name: dep.name.clone(),
                found,
            });
        }
    }
    Ok(())
}

/// The native rules among `rules` (a backend's claim rules: decorator rules are proved another
/// way) that no site of `accepted` is claimed by through `plugin`, in order: a backend's table of
/// accepted forms should leave none (each backend's claim tests assert it).
pub fn rules_without_accepted_form(
    plugin: &dyn Plugin,
    rules: &[RuleRecord],
    accepted: &[ClaimSite],
) -> Vec<String> {
    let claimed: BTreeSet<String> = accepted
        .iter()
        .filter_map(|s| match plugin.claim(s) {
            ClaimOutcome::Claimed { rule_id, .. } => Some(rule_id),
            _ => None,
        })
        .collect();
    rules
        .iter()
        .filter(|r| r.outcome == RuleOutcome::Native && !claimed.contains(&r.id))
        .map(|r| r.id.clone())
        .collect()
}
