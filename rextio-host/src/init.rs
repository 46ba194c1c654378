//! `rextio init DIR`: a starter project whose package is named after `DIR` and whose example
//! function routes native with the chosen backend.
//!
//! ```text
//! DIR/rextio.toml                   [project] name, [plugins] enabled = [<backend plugin>]
//! DIR/requirements.txt              the backend's Python requirements (Plugin::python_requirements)
//! DIR/src/<package>/__init__.py
//! DIR/src/<package>/kernels.py      a typed inference function every enabled check proves native
//! DIR/example.py                    calls it on random inputs and compares with the Python body
//! ```
//!
//! With `--template module` (PyTorch), `kernels.py` is replaced by `model.py`: an `nn.Module`
//! classifier (residual blocks in a `ModuleList`, a `Sequential` head) whose methods compile.

use crate::registry::Registry;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A backend a starter project can be written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// PyTorch through `rextio-torch`.
    Torch,
    /// TensorFlow through `rextio-tensorflow`.
    Tensorflow,
}

impl Backend {
    /// The plugin id the template enables.
    pub fn plugin_id(self) -> &'static str {
        match self {
            Self::Torch => "rextio-torch",
            Self::Tensorflow => "rextio-tensorflow",
        }
    }

    fn kernels(self) -> &'static str {
        match self {
            Self::Torch => TORCH_KERNELS,
            Self::Tensorflow => TF_KERNELS,
        }
    }

    fn example(self) -> &'static str {
        match self {
            Self::Torch => TORCH_EXAMPLE,
            Self::Tensorflow => TF_EXAMPLE,
        }
    }
}

/// What the starter package contains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Template {
    /// Typed functions taking the weights as parameters.
    #[default]
    Function,
    /// An `nn.Module` model class whose methods compile (PyTorch only).
    Module,
}

/// Why a starter project was not written.
#[derive(Debug, Error)]
pub enum InitError {
    /// `DIR/rextio.toml` exists.
    #[error("'{0}' already exists; not overwriting it")]
    Exists(PathBuf),
    /// The backend's plugin is not registered in this `rextio`.
    #[error("backend plugin `{0}` is not registered in this rextio (built without its feature?)")]
    NotRegistered(&'static str),
    /// The template does not exist for this backend.
    #[error("the `module` template is a PyTorch nn.Module model; `{0}` has no module classes (use --backend torch, or the function template)")]
    NoModuleTemplate(&'static str),
    /// File system.
    #[error("cannot write '{path}': {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// What `init` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Initialized {
    /// The Python package (and project) name.
    pub package: String,
    /// Every file written, in order.
    pub files: Vec<PathBuf>,
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Top-level modules a starter package must not shadow (beyond the plugins' covered packages).
const SHADOWED: &[&str] = &[
    "numpy",
    "math",
    "os",
    "sys",
    "types",
    "typing",
    "test",
    "tests",
    "example",
    "rextio_torch",
    "rextio_tensorflow",
];

/// A Python identifier made from any name: lowercase ASCII letters, digits and `_` (every other
/// character becomes `_`), never starting with a digit, never a keyword, never empty.
pub fn python_identifier(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.chars().all(|c| c == '_') {
        return "project".to_owned();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// The package name for `dir`, which need not exist: the last component of its absolute,
/// normalised path (`.` and `..` resolved), as a Python identifier.
pub fn package_name(dir: &Path) -> String {
    let absolute = std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_owned());
    let mut parts: Vec<std::ffi::OsString> = Vec::new();
    for c in absolute.components() {
        match c {
            std::path::Component::Normal(n) => parts.push(n.to_owned()),
            std::path::Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    parts
        .last()
        .map(|n| python_identifier(&n.to_string_lossy()))
        .unwrap_or_else(|| "project".to_owned())
}

/// Write a starter project for `backend` into `dir` (created when missing).
pub fn init(dir: &Path, backend: Backend, registry: &Registry) -> Result<Initialized, InitError> {
    init_with(dir, backend, Template::Function, registry)
}

/// Write a starter project for `backend` from `template` into `dir` (created when missing).
pub fn init_with(
    dir: &Path,
    backend: Backend,
    template: Template,
    registry: &Registry,
) -> Result<Initialized, InitError> {
    if template == Template::Module && backend != Backend::Torch {
        return Err(InitError::NoModuleTemplate(backend.plugin_id()));
    }
    let toml_path = dir.join("rextio.toml");
    if toml_path.exists() {
        return Err(InitError::Exists(toml_path));
    }
    let plugin = registry
        .plugin(backend.plugin_id())
        .ok_or(InitError::NotRegistered(backend.plugin_id()))?;
    let mut package = package_name(dir);
    // A package named like a framework or the standard library would shadow it on import.
    let taken = registry
        .plugins()
        .iter()
        .flat_map(|r| r.plugin.coverage().packages)
        .chain(SHADOWED.iter().map(|s| (*s).to_owned()))
        .any(|p| p == package);
    if taken {
        package.push_str("_project");
    }
    let pkg_dir = dir.join("src").join(&package);
    std::fs::create_dir_all(&pkg_dir).map_err(|source| InitError::Io {
        path: pkg_dir.clone(),
        source,
    })?;
    let requirements: String = plugin
        .plugin
        .python_requirements()
        .iter()
        .map(|r| format!("{}\n", r.requirement))
        .collect();
    let files = [
        (
            toml_path,
            format!(
                "[project]\nname = \"{package}\"\nversion = \"0.1.0\"\n\n[plugins]\nenabled = [\"{}\"]\n",
                backend.plugin_id()
            ),
        ),
        (dir.join("requirements.txt"), requirements),
        (pkg_dir.join("__init__.py"), String::new()),
        match template {
            Template::Function => (pkg_dir.join("kernels.py"), backend.kernels().to_owned()),
            Template::Module => (pkg_dir.join("model.py"), TORCH_MODEL.to_owned()),
        },
        (
            dir.join("example.py"),
            match template {
                Template::Function => backend.example(),
                Template::Module => TORCH_MODEL_EXAMPLE,
            }
            .replace("PACKAGE", &package),
        ),
    ];
    let mut written = Vec::new();
    for (path, text) in files {
        std::fs::write(&path, text).map_err(|source| InitError::Io {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(Initialized {
        package,
        files: written,
    })
}

const TORCH_KERNELS: &str = r#""""Starter kernels: a small classifier head, written as ordinary PyTorch.

`rextio check` proves every call below against rextio-torch's rules, so `rextio build` runs
`inference` and `classify` natively; `rextio capabilities` lists what else may be used.
"""

import torch
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


@torch.inference_mode()
def inference(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu2D:
    """Class probabilities of each row of `x` (weight is `(classes, features)`)."""
    hidden = F.linear(x, weight, bias).relu()
    return hidden.softmax(dim=-1)


def classify(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorI64Cpu1D:
    """The most probable class of each row."""
    return inference(x, weight, bias).argmax(dim=1)
"#;

const TORCH_EXAMPLE: &str = r#""""Run the starter kernels natively after `rextio develop` (or with .rextio/build/python on
sys.path after `rextio build`), and compare them with their Python bodies."""

import torch

from PACKAGE import kernels

x = torch.randn(4, 8)
weight = torch.randn(3, 8)
bias = torch.randn(3)

native = kernels.inference(x, weight, bias)
python = getattr(kernels, "__rextio_fallback__", {}).get("inference", kernels.inference)(x, weight, bias)
print("native:", type(kernels.inference).__name__ == "builtin_function_or_method")
print("probabilities:", native)
print("classes:", kernels.classify(x, weight, bias))
print("native and Python agree:", torch.allclose(native, python, rtol=1e-5, atol=1e-6))
"#;

const TORCH_MODEL: &str = r#""""Starter model: an `nn.Module` classifier, written as ordinary PyTorch.

`__init__` stays Python; `rextio build` compiles `forward` and `classify`: each call reads the
live weights from the model, checks them, and runs natively under `torch.inference_mode()` (or
`torch.no_grad()`); anything it was not proven for (grad recording, training mode with dropout,
hooks on submodules, `.double()`) runs this Python code instead. `rextio check` says per method.
"""

import torch
from rextio_torch.types import TensorF32Cpu2D, TensorI64Cpu1D
from torch import nn


class Block(nn.Module):
    """A residual MLP block: LayerNorm, Linear, GELU, Linear, added to its input."""

    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, hidden)
        self.act = nn.GELU()
        self.down = nn.Linear(hidden, width)

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return x + self.down(self.act(self.up(self.norm(x))))


class Classifier(nn.Module):
    def __init__(self, features: int = 8, width: int = 16, classes: int = 3, depth: int = 2):
        super().__init__()
        self.inp = nn.Linear(features, width)
        self.blocks = nn.ModuleList([Block(width, 2 * width) for _ in range(depth)])
        self.head = nn.Sequential(nn.ReLU(), nn.Dropout(0.1), nn.Linear(width, classes))

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)

    def classify(self, x: TensorF32Cpu2D) -> TensorI64Cpu1D:
        return torch.argmax(self.forward(x), dim=1)
"#;

const TORCH_MODEL_EXAMPLE: &str = r#""""Run the starter model natively after `rextio develop` (or with .rextio/build/python on
sys.path after `rextio build`), and compare it with its Python forward."""

import torch

from PACKAGE import model as models

torch.manual_seed(0)
model = models.Classifier().eval()
x = torch.randn(4, 8)
with torch.inference_mode():
    logits = model(x)
    classes = model.classify(x)
    # The original Python forward, kept by the compiled one.
    python = getattr(models.Classifier.forward, "__wrapped__", models.Classifier.forward)(model, x)
stats = getattr(models, "__rextio_method_stats__", None)
print("native runs:", stats()["PACKAGE.model.Classifier.forward"]["native"] if stats else 0)
print("logits:", logits)
print("classes:", classes)
print("native and Python agree:", torch.allclose(logits, python, rtol=1e-5, atol=1e-6))
"#;

const TF_KERNELS: &str = r#""""Starter kernels: a small dense classifier head, written as ordinary TensorFlow.

`rextio check` proves every call below against rextio-tensorflow's rules, so `rextio build`
runs `inference` and `classify` natively; `rextio capabilities` lists what else may be used.
"""

import tensorflow as tf
from rextio_tensorflow.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D


def inference(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorF32Cpu2D:
    """Class probabilities of each row of `x` (weight is `(features, classes)`)."""
    hidden = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, weight), bias))
    return tf.nn.softmax(hidden, axis=1)


def classify(x: TensorF32Cpu2D, weight: TensorF32Cpu2D, bias: TensorF32Cpu1D) -> TensorI64Cpu1D:
    """The most probable class of each row."""
    return tf.argmax(inference(x, weight, bias), axis=1)
"#;

const TF_EXAMPLE: &str = r#""""Run the starter kernels natively after `rextio develop` (or with .rextio/build/python on
sys.path after `rextio build`), and compare them with their Python bodies."""

import numpy as np
import tensorflow as tf

from PACKAGE import kernels

rng = np.random.default_rng(0)
x = tf.constant(rng.standard_normal((4, 8)), dtype=tf.float32)
weight = tf.constant(rng.standard_normal((8, 3)), dtype=tf.float32)
bias = tf.constant(rng.standard_normal(3), dtype=tf.float32)

native = kernels.inference(x, weight, bias)
python = getattr(kernels, "__rextio_fallback__", {}).get("inference", kernels.inference)(x, weight, bias)
print("native:", type(kernels.inference).__name__ == "builtin_function_or_method")
print("probabilities:", native.numpy())
print("classes:", kernels.classify(x, weight, bias).numpy())
print("native and Python agree:", np.allclose(native.numpy(), python.numpy(), rtol=1e-5, atol=1e-6))
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_valid_python_names() {
        assert_eq!(python_identifier("newproj"), "newproj");
        assert_eq!(python_identifier("My-Proj.v2"), "my_proj_v2");
        assert_eq!(python_identifier("2fast"), "_2fast");
        assert_eq!(python_identifier("class"), "class_");
        assert_eq!(python_identifier("---"), "project");
        assert_eq!(python_identifier(""), "project");
    }

    #[test]
    fn package_name_comes_from_a_directory_that_does_not_exist_yet() {
        let tmp = std::env::temp_dir().join("rextio-init-name-test-does-not-exist");
        assert_eq!(package_name(&tmp.join("New-Proj")), "new_proj");
        assert_eq!(package_name(&tmp.join("a").join("..").join("b c")), "b_c");
        assert_eq!(package_name(Path::new("/")), "project");
    }
}
