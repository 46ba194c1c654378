//! The type vocabulary: how annotations map to type keys, Rust types and boundary code.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A plugin-owned type, `<plugin-id>/<name>` (for example `rextio-torch/tensor-f32-cpu-2d`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TypeKey(pub String);

impl TypeKey {
    /// Build a key from its text.
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }
    /// The key's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The plugin id part (before the first `/`).
    pub fn namespace(&self) -> &str {
        self.0.split('/').next().unwrap_or("")
    }
}

impl fmt::Display for TypeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The static type of a value as the host knows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ValueType {
    /// Python `int` (lowered as checked `i64`).
    Int,
    /// Python `float` (`f64`).
    Float,
    /// Python `bool`.
    Bool,
    /// Python `str` (only as static literals).
    Str,
    /// `None`.
    NoneType,
    /// A plugin-owned type.
    Plugin(TypeKey),
    /// A fixed-length tuple (`tuple[int, int]`, `(values, indices)`); in generated code a Rust
    /// tuple of the elements' Rust types. A list literal written directly as an argument of a
    /// site (`torch.cat([a, b])`) is offered with this type too, as the tuple of its elements:
    /// Python calls taking a sequence take either. API >= 1.8.
    Tuple(Vec<ValueType>),
    /// A sequence of run-time length whose elements have one type; in generated code a
    /// `Vec` of the element's Rust type. The host uses it only for the states of a module list's
    /// elements (API >= 1.11) and never offers it to plugins.
    List(Box<ValueType>),
}

impl ValueType {
    /// The plugin type key, if this is a plugin type.
    pub fn plugin_key(&self) -> Option<&TypeKey> {
        match self {
            ValueType::Plugin(k) => Some(k),
            _ => None,
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueType::Int => f.write_str("int"),
            ValueType::Float => f.write_str("float"),
            ValueType::Bool => f.write_str("bool"),
            ValueType::Str => f.write_str("str"),
            ValueType::NoneType => f.write_str("None"),
            ValueType::Plugin(k) => write!(f, "{k}"),
            ValueType::Tuple(items) => {
                f.write_str("tuple[")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str("]")
            }
            ValueType::List(item) => write!(f, "list[{item}]"),
        }
    }
}

/// One entry of a plugin's type vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginType {
    /// Fully qualified annotation spelling, e.g. `rextio_torch.types.TensorF32Cpu2D`.
    pub annotation: String,
    /// The key used in claim sites.
    pub key: TypeKey,
    /// The Rust type of a value of this type inside generated code.
    pub rust_type: String,
    /// Rust path of the boundary extractor, called as
    /// `extract(&Bound<PyAny>, "param_name") -> PyResult<rust_type>`.
    pub extract_fn: String,
    /// Rust path of the boundary wrapper, called as `wrap(py, value) -> PyResult<Py<PyAny>>`.
    pub wrap_fn: String,
    /// Short human description (dtype, device, rank).
    pub description: String,
}
