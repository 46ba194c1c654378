//! `rextio.toml`: the project configuration. Unknown keys are errors.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The parsed `rextio.toml`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    /// `[project]`.
    #[serde(default)]
    pub project: ProjectSection,
    /// `[plugins]`.
    #[serde(default)]
    pub plugins: PluginsSection,
    /// `[toolchain]`.
    #[serde(default)]
    pub toolchain: ToolchainSection,
    /// `[target]`, only for accelerator lanes.
    pub target: Option<TargetSection>,
}

/// `[project]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ProjectSection {
    /// Project name; defaults to the directory name.
    pub name: Option<String>,
    /// Version of the built wheel; defaults to `0.0.0`.
    pub version: Option<String>,
}

/// `[plugins]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PluginsSection {
    /// Plugin ids that may claim sites in this project.
    #[serde(default)]
    pub enabled: Vec<String>,
}

/// `[toolchain]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ToolchainSection {
    /// The Python interpreter, relative to the project root or absolute.
    pub python: Option<PathBuf>,
}

/// `[target]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TargetSection {
    /// Device provider id.
    pub device_provider: Option<String>,
    /// Capability requested from it.
    pub device_capability: Option<String>,
    /// Provider options.
    #[serde(default)]
    pub device_options: BTreeMap<String, String>,
}

/// A configuration that cannot be used.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// No `rextio.toml`.
    #[error("no rextio.toml in '{0}': a Rextio project needs ROOT/rextio.toml and Python packages under ROOT/src/ (run `rextio init` to create one)")]
    Missing(PathBuf),
    /// Unreadable file.
    #[error("cannot read '{path}': {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Invalid TOML or unknown keys.
    #[error("invalid '{path}': {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

impl ProjectConfig {
    /// Parse configuration text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Invalid {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// Load `ROOT/rextio.toml`.
    pub fn load(root: &Path) -> Result<Self, ConfigError> {
        let path = root.join("rextio.toml");
        if !path.is_file() {
            return Err(ConfigError::Missing(root.to_owned()));
        }
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Io {
            path: path.clone(),
            source,
        })?;
        Self::parse(&text, &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_config_parses() {
        let c = ProjectConfig::parse(
            "[project]\nname = \"scoring\"\n[plugins]\nenabled = [\"rextio-torch\"]\n[toolchain]\npython = \".venv/bin/python\"\n\
             [target]\ndevice_provider = \"rextio-device-cuda\"\n[target.device_options]\nsm = \"sm_90\"\n",
            Path::new("rextio.toml"),
        )
        .unwrap();
        assert_eq!(c.project.name.as_deref(), Some("scoring"));
        assert_eq!(c.plugins.enabled, vec!["rextio-torch"]);
        assert_eq!(c.target.unwrap().device_options["sm"], "sm_90");
    }

    #[test]
    fn unknown_keys_are_errors() {
        for text in [
            "[project]\nnmae = \"x\"\n",
            "[plugin]\nenabled = []\n",
            "[plugins]\nenable = []\n",
            "foo = 1\n",
        ] {
            let e = ProjectConfig::parse(text, Path::new("rextio.toml")).unwrap_err();
            assert!(e.to_string().contains("rextio.toml"), "{e}");
        }
    }
}
