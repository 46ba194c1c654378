//! A backend's annotation markers as one table: the Python `types` module its users import is
//! rendered from the rows (and checked in beside the backend, so that pip can package it), and
//! the backend builds its type vocabulary from the same rows. A new marker is one row.

use std::fmt::Write as _;
use std::path::Path;

use crate::types::{PluginType, TypeKey};

/// One marker class: `class TensorF32Cpu1D(_TensorMarker)` with its dtype, device and rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// The class name (`TensorF32Cpu1D`).
    pub class: &'static str,
    /// Its type key (`rextio-torch/tensor-f32-cpu-1d`).
    pub key: &'static str,
    /// The dtype it proves, as the framework spells it (`float32`).
    pub dtype: &'static str,
    /// The device it proves, as the framework spells it (`cpu`, `cuda:0`, `CPU:0`).
    pub device: &'static str,
    /// The rank it proves.
    pub rank: u8,
    /// What values of it are for, when that is narrower than "any such tensor" (`classification
    /// result`): said in its docstring and its description.
    pub role: Option<&'static str>,
    /// Further docstring lines (already wrapped), e.g. how a device lane is authorised.
    pub note: &'static [&'static str],
    /// How diagnostics name a value of it, when not the default (see
    /// [`MarkerModule::describe_key`]).
    pub phrase: Option<&'static str>,
}

impl Marker {
    /// A table row: `class`, whose type key is `key`, proves `dtype` on `device` at `rank`.
    pub const fn new(
        class: &'static str,
        key: &'static str,
        dtype: &'static str,
        device: &'static str,
        rank: u8,
    ) -> Self {
        Self {
            class,
            key,
            dtype,
            device,
            rank,
            role: None,
            note: &[],
            phrase: None,
        }
    }

    /// The same row, for values narrower than "any such tensor" (see [`Marker::role`]).
    pub const fn for_role(self, role: &'static str) -> Self {
        Self {
            role: Some(role),
            ..self
        }
    }

    /// The same row with further docstring lines (see [`Marker::note`]).
    pub const fn with_note(self, note: &'static [&'static str]) -> Self {
        Self { note, ..self }
    }

    /// The same row, named `phrase` in diagnostics (see [`Marker::phrase`]).
    pub const fn described(self, phrase: &'static str) -> Self {
        Self {
            phrase: Some(phrase),
            ..self
        }
    }

    /// The part of the key after `tensor-`, with `_` for `-` (`f32_cpu_1d`): the suffix backends
    /// give their boundary functions.
    pub fn key_suffix(&self) -> String {
        let tail = self.key.rsplit('/').next().unwrap_or(self.key);
        tail.strip_prefix("tensor-")
            .unwrap_or(tail)
            .replace('-', "_")
    }
}

/// How generated code receives and returns the values of one marker (Rust paths).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boundary {
    /// The Rust type of its values.
    pub rust_type: String,
    /// The function turning a Python argument into one.
    pub extract_fn: String,
    /// The function turning one into a Python result.
    pub wrap_fn: String,
}

/// A backend's `types` module.
#[derive(Debug, Clone, Copy)]
pub struct MarkerModule {
    /// The backend (`rextio-torch`).
    pub backend: &'static str,
    /// Its Python package (`rextio_torch`): the markers are `<package>.types.<class>`.
    pub package: &'static str,
    /// The framework the module does not import (`torch`).
    pub framework: &'static str,
    /// What values at run time are (`ordinary ``torch.Tensor`` objects`).
    pub values: &'static str,
    /// The host device as the markers spell it (`cpu`, `CPU:0`): diagnostics leave it unsaid.
    pub host_device: &'static str,
    /// The Rust source holding the table (for the generated file's header).
    pub source: &'static str,
    /// The markers, in the order of `__all__`.
    pub markers: &'static [Marker],
}

impl MarkerModule {
    /// How diagnostics name a value of type `key`, when a row of this module has it: the row's
    /// phrase, else `a rank-<r> <dtype> tensor`, with the device before `tensor` when it is not
    /// the host (`a rank-2 float32 GPU:0 tensor`).
    pub fn describe_key(&self, key: &TypeKey) -> Option<String> {
        let m = self.markers.iter().find(|m| m.key == key.as_str())?;
        Some(match m.phrase {
            Some(p) => p.to_owned(),
            None if m.device == self.host_device => {
                format!("a rank-{} {} tensor", m.rank, m.dtype)
            }
            None => format!("a rank-{} {} {} tensor", m.rank, m.dtype, m.device),
        })
    }

    /// The dotted annotation of `m` (`rextio_torch.types.TensorF32Cpu1D`).
    pub fn annotation(&self, m: &Marker) -> String {
        format!("{}.types.{}", self.package, m.class)
    }

    /// The type vocabulary: one entry per row, described as `<value>, <dtype>, <device>, rank
    /// <r> (<role>)`, with the Rust boundary `boundary` gives it.
    pub fn vocabulary(
        &self,
        value: &str,
        boundary: impl Fn(&Marker) -> Boundary,
    ) -> Vec<PluginType> {
        self.markers
            .iter()
            .map(|m| {
                let role = m.role.map(|r| format!(" ({r})")).unwrap_or_default();
                let Boundary {
                    rust_type,
                    extract_fn,
                    wrap_fn,
                } = boundary(m);
                PluginType {
                    annotation: self.annotation(m),
                    key: TypeKey::new(m.key),
                    rust_type,
                    extract_fn,
                    wrap_fn,
                    description: format!(
                        "{value}, {}, {}, rank {}{role}",
                        m.dtype, m.device, m.rank
                    ),
                }
            })
            .collect()
    }

    /// The module's Python source.
    pub fn render(&self) -> String {
        let mut py = String::new();
        let _ = write!(
            py,
            "\"\"\"Annotation markers understood by the {} backend.\n\n\
             They prove dtype, device and rank only; at run time, values stay\n{}.\n\
             This module imports neither {} nor rextio.\n\n\
             Generated from the marker table in `{}`: edit the table, not this file.\n\"\"\"\n\n",
            self.backend, self.values, self.framework, self.source
        );
        py.push_str("__all__ = [\n");
        for m in self.markers {
            let _ = writeln!(py, "    \"{}\",", m.class);
        }
        py.push_str(
            "]\n\n\n\
             class _TensorMarker:\n    \
             \"\"\"Base of the marker classes; never instantiated.\"\"\"\n\n    \
             dtype = \"\"\n    \
             device = \"\"\n    \
             rank = 0\n\n    \
             def __new__(cls, *args, **kwargs):\n        \
             raise TypeError(f\"{cls.__name__} is an annotation marker, not a tensor constructor\")\n",
        );
        for m in self.markers {
            let article = if m.dtype.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "An"
            } else {
                "A"
            };
            let role = m.role.map(|r| format!(", {r}")).unwrap_or_default();
            let _ = write!(
                py,
                "\n\nclass {}(_TensorMarker):\n    \"\"\"{article} {} tensor of rank {} on ``{}``{role}.\n\n    \
                 Type key ``{}``.\n",
                m.class, m.dtype, m.rank, m.device, m.key
            );
            for line in m.note {
                let _ = writeln!(py, "    {line}");
            }
            let _ = write!(
                py,
                "    \"\"\"\n\n    dtype = \"{}\"\n    device = \"{}\"\n    rank = {}\n",
                m.dtype, m.device, m.rank
            );
        }
        py.push_str(
            "\n\ndef __getattr__(name):\n    \
             # A misspelled annotation fails like any missing module attribute, never silently.\n    \
             raise AttributeError(f\"module {__name__!r} has no attribute {name!r}\")\n",
        );
        py
    }

    /// Compare the checked-in module at `path` with [`render`](Self::render); with
    /// `REXTIO_BLESS=1` in the environment, write it instead.
    pub fn check_file(&self, path: &Path) -> Result<(), String> {
        let want = self.render();
        if std::env::var_os("REXTIO_BLESS").is_some_and(|v| v == "1") {
            return std::fs::write(path, &want).map_err(|e| format!("{}: {e}", path.display()));
        }
        let have = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if have == want {
            return Ok(());
        }
        Err(format!(
            "{} is not the module rendered from {}'s marker table; run the backend's tests with \
             REXTIO_BLESS=1 to rewrite it",
            path.display(),
            self.backend
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: MarkerModule = MarkerModule {
        backend: "rextio-demo",
        package: "rextio_demo",
        framework: "demo",
        host_device: "cpu",
        values: "demo arrays",
        source: "src/types.rs",
        markers: &[
            Marker::new(
                "TensorF32Cpu1D",
                "rextio-demo/tensor-f32-cpu-1d",
                "float32",
                "cpu",
                1,
            ),
            Marker::new(
                "TensorI64Cpu1D",
                "rextio-demo/tensor-i64-cpu-1d",
                "int64",
                "cpu",
                1,
            )
            .for_role("a classification result")
            .with_note(&["Second paragraph."])
            .described("an int64 rank-1 tensor"),
        ],
    };

    #[test]
    fn a_value_is_described_by_its_row() {
        let key = |k: &str| TypeKey::new(k);
        assert_eq!(
            MODULE.describe_key(&key("rextio-demo/tensor-f32-cpu-1d")),
            Some("a rank-1 float32 tensor".to_owned())
        );
        assert_eq!(
            MODULE.describe_key(&key("rextio-demo/tensor-i64-cpu-1d")),
            Some("an int64 rank-1 tensor".to_owned())
        );
        assert_eq!(MODULE.describe_key(&key("rextio-demo/other")), None);
        const GPU: &[Marker] = &[Marker::new("G", "rextio-demo/g", "float32", "GPU:0", 2)];
        let device = MarkerModule {
            markers: GPU,
            ..MODULE
        };
        assert_eq!(
            device.describe_key(&key("rextio-demo/g")),
            Some("a rank-2 float32 GPU:0 tensor".to_owned())
        );
    }

    #[test]
    fn the_rendered_module_lists_every_row_with_its_attributes() {
        let py = MODULE.render();
        assert!(py.contains("__all__ = [\n    \"TensorF32Cpu1D\",\n    \"TensorI64Cpu1D\",\n]"));
        assert!(py.contains(
            "class TensorF32Cpu1D(_TensorMarker):\n    \"\"\"A float32 tensor of rank 1 on \
             ``cpu``.\n\n    Type key ``rextio-demo/tensor-f32-cpu-1d``.\n    \"\"\"\n\n    \
             dtype = \"float32\"\n    device = \"cpu\"\n    rank = 1\n"
        ));
        assert!(py.contains(
            "\"\"\"An int64 tensor of rank 1 on ``cpu``, a classification result.\n\n    \
             Type key ``rextio-demo/tensor-i64-cpu-1d``.\n    Second paragraph.\n    \"\"\""
        ));
        assert!(py.contains("imports neither demo nor rextio"));
        assert!(py.ends_with("has no attribute {name!r}\")\n"));
        assert_eq!(
            MODULE.annotation(&MODULE.markers[1]),
            "rextio_demo.types.TensorI64Cpu1D"
        );
        assert_eq!(MODULE.markers[1].key_suffix(), "i64_cpu_1d");
        let v = MODULE.vocabulary("demo.Array", |m| Boundary {
            rust_type: "Demo".into(),
            extract_fn: format!("extract_{}", m.key_suffix()),
            wrap_fn: "wrap".into(),
        });
        assert_eq!(v[1].annotation, "rextio_demo.types.TensorI64Cpu1D");
        assert_eq!(v[1].key.as_str(), "rextio-demo/tensor-i64-cpu-1d");
        assert_eq!(v[1].extract_fn, "extract_i64_cpu_1d");
        assert_eq!(
            v[1].description,
            "demo.Array, int64, cpu, rank 1 (a classification result)"
        );
    }

    #[test]
    fn a_stale_checked_in_module_is_refused() {
        let dir = std::env::temp_dir().join(format!("rextio-markers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("types.py");
        std::fs::write(&path, MODULE.render()).unwrap();
        if std::env::var_os("REXTIO_BLESS").is_none() {
            assert_eq!(MODULE.check_file(&path), Ok(()));
            std::fs::write(&path, MODULE.render().replace("rank = 1", "rank = 2")).unwrap();
            let err = MODULE.check_file(&path).unwrap_err();
            assert!(err.contains("REXTIO_BLESS=1"), "{err}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
