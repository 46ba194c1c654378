//! Temporary projects for host tests.
#![allow(clippy::unwrap_used)]

use std::path::Path;

/// Header shared by the test modules.
#[allow(dead_code)]
pub const HEADER: &str = "import torch\nimport torch.nn.functional as F\nfrom rextio_torch.types import TensorF32Cpu1D as V, TensorF32Cpu2D as M, TensorI64Cpu1D as L\nfrom rextio_torch import types as torch_types\n\n";

/// A project with `rextio.toml` enabling rextio-torch and the given files under `src/`.
pub fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rextio.toml"),
        "[project]\nname = \"t\"\n[plugins]\nenabled = [\"rextio-torch\"]\n",
    )
    .unwrap();
    for (rel, text) in files {
        let path = dir.path().join("src").join(rel);
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}
