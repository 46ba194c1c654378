//! Compiles `rx_shim.cpp` (the runtime's boundary shim) against the headers of the libtorch
//! that `torch-sys` links: the PyTorch wheel of the Python interpreter the build uses (the
//! same discovery as `torch-sys` with `LIBTORCH_USE_PYTORCH`), or `$LIBTORCH` when that is set
//! instead. Shared by this crate's build script and the build script of its embedded copy.

use std::path::{Path, PathBuf};
use std::process::Command;

const PROBE: &str = r"
import sysconfig
print('PYTHON_INCLUDE:', sysconfig.get_path('include'))
try:
    import torch
    from torch.utils import cpp_extension
except Exception:
    pass
else:
    print('TORCH_CXX11:', int(torch._C._GLIBCXX_USE_CXX11_ABI))
    for p in cpp_extension.include_paths():
        print('TORCH_INCLUDE:', p)
";

fn python() -> PathBuf {
    for var in ["PYO3_PYTHON", "PYTHON_SYS_EXECUTABLE"] {
        println!("cargo:rerun-if-env-changed={var}");
        if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
            return PathBuf::from(p);
        }
    }
    println!("cargo:rerun-if-env-changed=VIRTUAL_ENV");
    match std::env::var_os("VIRTUAL_ENV") {
        Some(venv) if Path::new(&venv).join("bin/python").exists() => {
            Path::new(&venv).join("bin/python")
        }
        _ => PathBuf::from("python3"),
    }
}

/// Compile and link the shim; the error says what was missing.
pub fn compile(shim_dir: &Path) -> Result<(), String> {
    let py = python();
    let out = Command::new(&py)
        .arg("-c")
        .arg(PROBE)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", py.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut includes: Vec<PathBuf> = Vec::new();
    let mut python_include = None;
    let mut cxx11 = None;
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("PYTHON_INCLUDE: ") {
            python_include = Some(PathBuf::from(p));
        } else if let Some(p) = line.strip_prefix("TORCH_INCLUDE: ") {
            includes.push(PathBuf::from(p));
        } else if let Some(v) = line.strip_prefix("TORCH_CXX11: ") {
            cxx11 = Some(v.trim().to_owned());
        }
    }
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    println!("cargo:rerun-if-env-changed=LIBTORCH_USE_PYTORCH");
    let use_pytorch = std::env::var_os("LIBTORCH_USE_PYTORCH").is_some();
    if let (false, Some(root)) = (use_pytorch, std::env::var_os("LIBTORCH")) {
        let root = PathBuf::from(root);
        includes = vec![
            root.join("include"),
            root.join("include/torch/csrc/api/include"),
        ];
        println!("cargo:rerun-if-env-changed=LIBTORCH_CXX11_ABI");
        cxx11 = Some(std::env::var("LIBTORCH_CXX11_ABI").unwrap_or_else(|_| "1".into()));
    }
    let python_include = python_include.ok_or_else(|| {
        format!(
            "{} did not report its include directory (stdout: {text:?}, stderr: {:?})",
            py.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    if includes.is_empty() {
        return Err(format!(
            "{} cannot import torch; install the pinned torch wheel in that environment",
            py.display()
        ));
    }
    let cxx11 = cxx11.unwrap_or_else(|| "1".into());
    let src = shim_dir.join("rx_shim.cpp");
    println!("cargo:rerun-if-changed={}", src.display());
    // The build script also reruns when any other source changes (the embedding); the shim is
    // recompiled only when its source, headers or flags changed.
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR unset")?);
    let code =
        std::fs::read_to_string(&src).map_err(|e| format!("cannot read {}: {e}", src.display()))?;
    // The stamp is the flags and the source itself: any change to either recompiles.
    let stamp_text = format!("{includes:?}|{python_include:?}|{cxx11}\n{code}");
    let stamp = out_dir.join("rextio_torch_shim.stamp");
    let lib = out_dir.join("librextio_torch_shim.a");
    if lib.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&stamp_text) {
        println!("cargo:rustc-link-search=native={}", out_dir.display());
        println!("cargo:rustc-link-lib=static=rextio_torch_shim");
        println!("cargo:rustc-link-lib=stdc++");
        return Ok(());
    }
    let _ = std::fs::remove_file(&stamp);
    cc::Build::new()
        .cpp(true)
        .pic(true)
        .warnings(false)
        .includes(&includes)
        .include(python_include)
        .flag("-std=c++17")
        .flag(format!("-D_GLIBCXX_USE_CXX11_ABI={cxx11}"))
        .flag("-DGLOG_USE_GLOG_EXPORT")
        .opt_level(2)
        .file(src)
        .try_compile("rextio_torch_shim")
        .map_err(|e| format!("cannot compile the boundary shim: {e}"))?;
    std::fs::write(&stamp, stamp_text).map_err(|e| format!("cannot write {}: {e}", stamp.display()))
}
