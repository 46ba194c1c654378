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
    /// A Rust type or path the plugin declares (a type record's Rust type, extractor or
    /// wrapper; a module support check) that does not parse: generated code naming it would not
    /// build. Checked when the crate's `check` feature is on (the host, and plugins' tests).
    #[error("plugin `{plugin}`: {what} `{text}` is not valid Rust: {error}")]
    BadSyntax {
        /// Plugin id.
        plugin: String,
        /// Which declaration.
        what: String,
        /// The text declared.
        text: String,
        /// The parser's message.
        error: String,
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
    #[cfg(feature = "check")]
    declared_syntax(plugin)?;
    Ok(())
}

/// Every Rust type and path the plugin declares as text parses as one.
#[cfg(feature = "check")]
fn declared_syntax(plugin: &dyn Plugin) -> Result<(), ValidationError> {
    fn parses<T: syn::parse::Parse>(
        plugin: &dyn Plugin,
        what: impl FnOnce() -> String,
        text: &str,
    ) -> Result<(), ValidationError> {
        syn::parse_str::<T>(text)
            .map(drop)
            .map_err(|e| ValidationError::BadSyntax {
                plugin: plugin.id().to_owned(),
                what: what(),
                text: text.to_owned(),
                error: e.to_string(),
            })
    }
    for ty in plugin.type_vocabulary() {
        let key = &ty.key;
        parses::<syn::Type>(
            plugin,
            || format!("the Rust type of `{key}`"),
            &ty.rust_type,
        )?;
        parses::<syn::Path>(
            plugin,
            || format!("the extractor of `{key}`"),
            &ty.extract_fn,
        )?;
        parses::<syn::Path>(plugin, || format!("the wrapper of `{key}`"), &ty.wrap_fn)?;
    }
    if let Some(m) = plugin.module_support() {
        for (what, path) in [
            ("the module call check", &m.call_check_fn),
            ("the module global check", &m.global_check_fn),
            ("the module admission check", &m.admit_fn),
        ] {
            parses::<syn::Path>(plugin, || what.to_owned(), path)?;
        }
    }
    if let Some(path) = plugin.symbolic_check() {
        parses::<syn::Path>(plugin, || "the symbolic-value check".to_owned(), &path)?;
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

#[cfg(all(test, feature = "check"))]
mod tests {
    use super::*;
    use crate::*;

    /// A plugin that declares one type and claims nothing.
    struct Typed(PluginType);

    impl Plugin for Typed {
        fn id(&self) -> &str {
            "typed"
        }
        fn api_version(&self) -> &str {
            "1.15.0"
        }
        fn coverage(&self) -> Coverage {
            Coverage::default()
        }
        fn rules(&self) -> &[RuleRecord] {
            &[]
        }
        fn diagnostic_codes(&self) -> &[CodeDoc] {
            &[]
        }
        fn type_vocabulary(&self) -> &[PluginType] {
            std::slice::from_ref(&self.0)
        }
        fn claim(&self, _site: &ClaimSite) -> ClaimOutcome {
            ClaimOutcome::NotCovered
        }
        fn lower(
            &self,
            site: &ClaimedSite,
            _cx: &mut LoweringContext,
        ) -> Result<LoweredExpr, LowerError> {
            Err(LowerError::new(&site.rule_id, "claims nothing"))
        }
        fn runtime_crate(&self) -> Option<CrateDependency> {
            None
        }
    }

    fn ty(rust_type: &str, extract_fn: &str, wrap_fn: &str) -> Typed {
        Typed(PluginType {
            annotation: "typed.types.Thing".into(),
            key: TypeKey::new("typed/thing"),
            rust_type: rust_type.into(),
            extract_fn: extract_fn.into(),
            wrap_fn: wrap_fn.into(),
            description: "a thing".into(),
        })
    }

    #[test]
    fn a_declared_rust_type_or_path_that_does_not_parse_fails_validation() {
        assert_eq!(
            validate_plugin(&ty(
                "::typed_rt::Thing<f32>",
                "::typed_rt::extract",
                "::typed_rt::wrap"
            )),
            Ok(())
        );
        for (plugin, what) in [
            (
                ty(
                    "::typed_rt::Thing<f32",
                    "::typed_rt::extract",
                    "::typed_rt::wrap",
                ),
                "the Rust type of `typed/thing`",
            ),
            (
                ty(
                    "::typed_rt::Thing",
                    "::typed_rt:extract",
                    "::typed_rt::wrap",
                ),
                "the extractor of `typed/thing`",
            ),
            (
                ty(
                    "::typed_rt::Thing",
                    "::typed_rt::extract",
                    "typed_rt::wrap()",
                ),
                "the wrapper of `typed/thing`",
            ),
        ] {
            match validate_plugin(&plugin) {
                Err(ValidationError::BadSyntax { what: w, .. }) => assert_eq!(w, what),
                other => panic!("{what}: {other:?}"),
            }
        }
    }
}
