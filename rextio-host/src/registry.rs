//! The plugin registry: discovery (first-party features, builder), negotiation, validation,
//! deterministic order, and the offering of claim sites.

use rextio_plugin_api::{
    negotiate, validate_plugin, ClaimOutcome, ClaimSite, DeviceProvider, Diagnostic, Negotiated,
    NegotiationError, Plugin, PluginType, RuleOutcome, SiteKind, ValidationError, API_VERSION,
    DEVICE_PROVIDER_API_VERSION,
};
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

/// Why a registry could not be built.
#[derive(Debug, Error)]
pub enum RegistrationError {
    /// Version negotiation failed.
    #[error("cannot register plugin: {0}")]
    Negotiation(NegotiationError),
    /// The plugin's declarations are invalid.
    #[error("cannot register plugin: {0}")]
    Validation(#[from] ValidationError),
    /// Two plugins with one id.
    #[error("two plugins declare the id `{0}`; ids must be unique")]
    DuplicateId(String),
    /// A device provider's version negotiation failed.
    #[error("cannot register device provider: {0}")]
    ProviderNegotiation(NegotiationError),
    /// A device provider's declarations are invalid.
    #[error("cannot register device provider `{provider}`: {message}")]
    ProviderValidation {
        /// Provider id.
        provider: String,
        /// What is wrong.
        message: String,
    },
    /// Two device providers with one id.
    #[error("two device providers declare the id `{0}`; ids must be unique")]
    DuplicateProviderId(String),
    /// Two plugins claim one annotation spelling.
    #[error("annotation `{annotation}` is declared by both `{first}` and `{second}`")]
    AnnotationConflict {
        /// The spelling.
        annotation: String,
        /// One plugin.
        first: String,
        /// The other.
        second: String,
    },
}

/// A registered plugin with what negotiation allowed.
pub struct Registered {
    /// The plugin.
    pub plugin: Box<dyn Plugin>,
    /// Negotiated hooks.
    pub negotiated: Negotiated,
    /// Its native rule ids: the only rules a claim may name.
    native_rules: BTreeSet<String>,
    /// Its native rules whose eager result is always a new tensor (`Plugin::fresh_result`).
    fresh_rules: BTreeSet<String>,
    /// Its documented diagnostic codes: the only codes a rejection may carry.
    codes: BTreeSet<&'static str>,
}

/// A registered device provider.
pub struct RegisteredProvider {
    /// The provider.
    pub provider: Box<dyn DeviceProvider>,
    /// Negotiated version.
    pub negotiated: Negotiated,
}

/// All plugins and providers, ordered by id.
pub struct Registry {
    plugins: Vec<Registered>,
    providers: Vec<RegisteredProvider>,
    annotations: BTreeMap<String, (usize, PluginType)>,
}

/// Collects plugins before negotiation.
#[derive(Default)]
pub struct RegistryBuilder {
    plugins: Vec<Box<dyn Plugin>>,
    providers: Vec<Box<dyn DeviceProvider>>,
}

impl RegistryBuilder {
    /// Add the first-party plugins compiled in through cargo features.
    #[allow(unused_mut)]
    pub fn with_default_plugins(mut self) -> Self {
        #[cfg(feature = "torch")]
        {
            self.plugins
                .push(Box::new(rextio_torch::TorchPlugin::new()));
        }
        #[cfg(feature = "tensorflow")]
        {
            self.plugins
                .push(Box::new(rextio_tensorflow::TensorflowPlugin::new()));
        }
        #[cfg(feature = "device-cuda")]
        {
            self.providers
                .push(Box::new(rextio_device_cuda::CudaDeviceProvider::new()));
        }
        self
    }

    /// Add a third-party plugin.
    pub fn plugin(mut self, plugin: impl Plugin + 'static) -> Self {
        self.plugins.push(Box::new(plugin));
        self
    }

    /// Add a boxed plugin.
    pub fn boxed_plugin(mut self, plugin: Box<dyn Plugin>) -> Self {
        self.plugins.push(plugin);
        self
    }

    /// Add a device provider.
    pub fn provider(mut self, provider: impl DeviceProvider + 'static) -> Self {
        self.providers.push(Box::new(provider));
        self
    }

    /// Add a device provider in place of any already added with the same id (for example the
    /// first-party one from [`RegistryBuilder::with_default_plugins`], replaced by the same
    /// provider configured differently, as tests do with a synthetic probe report).
    pub fn replace_provider(mut self, provider: impl DeviceProvider + 'static) -> Self {
        let id = provider.id().to_owned();
        self.providers.retain(|p| p.id() != id);
        self.providers.push(Box::new(provider));
        self
    }

    /// Negotiate, validate and order everything.
    pub fn build(self) -> Result<Registry, RegistrationError> {
        let mut plugins = Vec::with_capacity(self.plugins.len());
        for plugin in self.plugins {
            let negotiated = negotiate(plugin.id(), plugin.api_version(), &API_VERSION)
                .map_err(RegistrationError::Negotiation)?;
            validate_plugin(plugin.as_ref())?;
            let native_rules: BTreeSet<String> = plugin
                .rules()
                .iter()
                .filter(|r| r.outcome == RuleOutcome::Native)
                .map(|r| r.id.clone())
                .collect();
            let fresh_rules = native_rules
                .iter()
                .filter(|id| plugin.fresh_result(id))
                .cloned()
                .collect();
            let codes = plugin.diagnostic_codes().iter().map(|c| c.code).collect();
            plugins.push(Registered {
                plugin,
                negotiated,
                native_rules,
                fresh_rules,
                codes,
            });
        }
        plugins.sort_by(|a, b| a.plugin.id().cmp(b.plugin.id()));
        for pair in plugins.windows(2) {
            if pair[0].plugin.id() == pair[1].plugin.id() {
                return Err(RegistrationError::DuplicateId(
                    pair[0].plugin.id().to_owned(),
                ));
            }
        }
        let mut annotations: BTreeMap<String, (usize, PluginType)> = BTreeMap::new();
        for (i, r) in plugins.iter().enumerate() {
            for ty in r.plugin.type_vocabulary() {
                if let Some((j, _)) = annotations.get(&ty.annotation) {
                    return Err(RegistrationError::AnnotationConflict {
                        annotation: ty.annotation.clone(),
                        first: plugins[*j].plugin.id().to_owned(),
                        second: r.plugin.id().to_owned(),
                    });
                }
                annotations.insert(ty.annotation.clone(), (i, ty.clone()));
            }
        }
        let mut providers = Vec::with_capacity(self.providers.len());
        for provider in self.providers {
            let negotiated = negotiate(
                provider.id(),
                provider.api_version(),
                &DEVICE_PROVIDER_API_VERSION,
            )
            .map_err(RegistrationError::ProviderNegotiation)?;
            validate_provider(provider.as_ref())?;
            providers.push(RegisteredProvider {
                provider,
                negotiated,
            });
        }
        providers.sort_by(|a, b| a.provider.id().cmp(b.provider.id()));
        for pair in providers.windows(2) {
            if pair[0].provider.id() == pair[1].provider.id() {
                return Err(RegistrationError::DuplicateProviderId(
                    pair[0].provider.id().to_owned(),
                ));
            }
        }
        Ok(Registry {
            plugins,
            providers,
            annotations,
        })
    }
}

/// A provider's declarations: a valid id that its manifest repeats, and at least one
/// capability, each declared once.
fn validate_provider(provider: &dyn DeviceProvider) -> Result<(), RegistrationError> {
    let id = provider.id();
    let fail = |message: String| RegistrationError::ProviderValidation {
        provider: id.to_owned(),
        message,
    };
    let valid_id = !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
        && !id.ends_with('-');
    if !valid_id {
        return Err(fail(
            "the id must be lowercase letters, digits and `-`, not empty".into(),
        ));
    }
    let manifest = provider.manifest();
    if manifest.id != id {
        return Err(fail(format!("its manifest names the id `{}`", manifest.id)));
    }
    if manifest.capabilities.is_empty() {
        return Err(fail("its manifest declares no capability".into()));
    }
    let mut seen = BTreeSet::new();
    for c in &manifest.capabilities {
        if !seen.insert(c.as_str()) {
            return Err(fail(format!(
                "its manifest declares capability `{c}` twice"
            )));
        }
    }
    Ok(())
}

/// The registry's answer for one site.
#[derive(Debug, Clone, PartialEq)]
pub enum SiteResolution {
    /// Exactly one plugin claimed it.
    Claimed {
        /// The plugin.
        plugin_id: String,
        /// The rule.
        rule_id: String,
        /// Result type.
        result_type: rextio_plugin_api::ValueType,
    },
    /// Two or more plugins claimed it: an error naming them.
    Conflict(Vec<(String, String)>),
    /// No claim; at least one plugin rejected it.
    Rejected {
        /// The rejecting plugin.
        plugin_id: String,
        /// Its diagnostic.
        diagnostic: Diagnostic,
    },
    /// Nobody covers it.
    NotCovered,
    /// A plugin answered outside its declared contract: it claimed a rule that is not among
    /// its native `rules()`, or rejected with a code that is not among its `diagnostic_codes()`.
    /// Nothing it said about the site is used.
    ContractViolation {
        /// The plugin.
        plugin_id: String,
        /// What it did.
        message: String,
    },
}

impl Registry {
    /// Start a builder.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// Plugins in id order.
    pub fn plugins(&self) -> &[Registered] {
        &self.plugins
    }

    /// Device providers in id order.
    pub fn providers(&self) -> &[RegisteredProvider] {
        &self.providers
    }

    /// Whether plugin `plugin_id` declares that rule `rule_id`'s eager result is always a new
    /// tensor ([`rextio_plugin_api::Plugin::fresh_result`]).
    pub fn fresh_result(&self, plugin_id: &str, rule_id: &str) -> bool {
        self.plugin(plugin_id)
            .is_some_and(|r| r.fresh_rules.contains(rule_id))
    }

    /// A plugin by id.
    pub fn plugin(&self, id: &str) -> Option<&Registered> {
        self.plugins.iter().find(|r| r.plugin.id() == id)
    }

    /// What to write instead of an annotation no enabled plugin reads, spelled `path` when it
    /// names something through the module's imports: the marker types of the enabled plugins
    /// covering its package (`torch.Tensor` says nothing of the dtype, device and rank the
    /// compiled code is specialised for), else of every enabled plugin; a plugin's first two
    /// markers are shown, with their import.
    pub fn marker_help(&self, path: Option<&str>, enabled: &[String]) -> String {
        let on: Vec<usize> = (0..self.plugins.len())
            .filter(|&i| enabled.iter().any(|e| e == self.plugins[i].plugin.id()))
            .collect();
        let top = path.and_then(|p| p.split('.').next());
        let covering: Vec<usize> = on
            .iter()
            .copied()
            .filter(|&i| {
                top.is_some_and(|t| {
                    self.plugins[i]
                        .plugin
                        .coverage()
                        .packages
                        .iter()
                        .any(|p| p == t)
                })
            })
            .collect();
        let shown = if covering.is_empty() { &on } else { &covering };
        let examples: Vec<String> = shown
            .iter()
            .filter_map(|&i| {
                let mut types: Vec<&PluginType> = self
                    .annotations
                    .values()
                    .filter(|(j, _)| *j == i)
                    .map(|(_, t)| t)
                    .collect();
                // Declaration order, not the map's alphabetical one.
                let order = self.plugins[i].plugin.type_vocabulary();
                types.sort_by_key(|t| order.iter().position(|o| o.annotation == t.annotation));
                let picked: Vec<String> = types
                    .iter()
                    .take(2)
                    .filter_map(|t| {
                        let (module, name) = t.annotation.rsplit_once('.')?;
                        Some(format!("`from {module} import {name}` ({})", t.description))
                    })
                    .collect();
                (!picked.is_empty())
                    .then(|| format!("{}: {}", self.plugins[i].plugin.id(), picked.join(" or ")))
            })
            .collect();
        match (path, covering.is_empty(), examples.is_empty()) {
            (_, _, true) => "annotate it with int, float or bool".to_owned(),
            (Some(p), false, false) => format!(
                "`{p}` does not say the dtype, device and rank the native code is built for: annotate it with a marker type imported at module level ({})",
                examples.join("; ")
            ),
            _ => format!(
                "annotate it with int, float, bool or a marker type imported at module level ({})",
                examples.join("; ")
            ),
        }
    }

    /// The plugin type (and owning plugin id) of a fully qualified annotation spelling, among
    /// the enabled plugins.
    pub fn annotation(&self, dotted: &str, enabled: &[String]) -> Option<(&str, &PluginType)> {
        let (i, ty) = self.annotations.get(dotted)?;
        let id = self.plugins[*i].plugin.id();
        enabled.iter().any(|e| e == id).then_some((id, ty))
    }

    /// The plugin type of a type key.
    pub fn plugin_type(&self, key: &rextio_plugin_api::TypeKey) -> Option<&PluginType> {
        self.annotations
            .values()
            .map(|(_, t)| t)
            .find(|t| &t.key == key)
    }

    /// The enabled plugin (covering the decorator's package, API >= 1.8) that takes the
    /// decorator `@path` / `@path()`, with its rule: `Ok(None)` when none does, `Err` when a
    /// plugin answers with a rule it did not declare native.
    pub fn decorator(
        &self,
        path: &str,
        called: bool,
        enabled: &[String],
    ) -> Result<Option<(String, String)>, String> {
        let top = path.split('.').next().unwrap_or("");
        for r in &self.plugins {
            let id = r.plugin.id();
            if !enabled.iter().any(|e| e == id)
                || !r.negotiated.module_init
                || !r.plugin.coverage().packages.iter().any(|p| p == top)
            {
                continue;
            }
            if let Some(rule) = r.plugin.native_decorator(path, called) {
                if !r.native_rules.contains(&rule) {
                    return Err(format!(
                        "plugin `{id}` took decorator `@{path}` with rule `{rule}`, which is not one of its declared native rules"
                    ));
                }
                return Ok(Some((id.to_owned(), rule)));
            }
        }
        Ok(None)
    }

    /// Whether an enabled plugin covers the top-level package of a dotted path.
    pub fn covers(&self, path: &str, enabled: &[String]) -> bool {
        let top = path.split('.').next().unwrap_or("");
        self.plugins.iter().any(|r| {
            enabled.iter().any(|e| e == r.plugin.id())
                && r.plugin.coverage().packages.iter().any(|p| p == top)
        })
    }

    /// Offer a site to every enabled plugin that covers its target's package or owns one of its
    /// operand types, in id order.
    pub fn offer(&self, site: &ClaimSite, enabled: &[String]) -> SiteResolution {
        let mut claims = Vec::new();
        let mut rejection = None;
        for r in &self.plugins {
            let id = r.plugin.id();
            if !enabled.iter().any(|e| e == id) {
                continue;
            }
            let by_package = site.kind == SiteKind::Call && {
                let top = site.target.split('.').next().unwrap_or("");
                r.plugin.coverage().packages.iter().any(|p| p == top)
            };
            let by_type = site.operand_keys().any(|k| k.namespace() == id);
            if !(by_package || by_type) {
                continue;
            }
            match r.plugin.claim(site) {
                ClaimOutcome::Claimed { rule_id, .. } if !r.native_rules.contains(&rule_id) => {
                    return SiteResolution::ContractViolation {
                        plugin_id: id.to_owned(),
                        message: format!(
                            "plugin `{id}` claimed a site with rule `{rule_id}`, which is not one of its declared native rules"
                        ),
                    };
                }
                ClaimOutcome::Rejected(d) if !r.codes.contains(d.code.as_str()) => {
                    return SiteResolution::ContractViolation {
                        plugin_id: id.to_owned(),
                        message: format!(
                            "plugin `{id}` rejected a site with diagnostic code `{}`, which is not in its documented code table",
                            d.code
                        ),
                    };
                }
                ClaimOutcome::Claimed {
                    rule_id,
                    result_type,
                } => claims.push((id.to_owned(), rule_id, result_type)),
                ClaimOutcome::Rejected(d) => {
                    if rejection.is_none() {
                        rejection = Some((id.to_owned(), d));
                    }
                }
                ClaimOutcome::NotCovered => {}
            }
        }
        if claims.len() > 1 {
            return SiteResolution::Conflict(claims.into_iter().map(|(p, r, _)| (p, r)).collect());
        }
        if let Some((plugin_id, rule_id, result_type)) = claims.pop() {
            return SiteResolution::Claimed {
                plugin_id,
                rule_id,
                result_type,
            };
        }
        match rejection {
            Some((plugin_id, diagnostic)) => SiteResolution::Rejected {
                plugin_id,
                diagnostic,
            },
            None => SiteResolution::NotCovered,
        }
    }
}
