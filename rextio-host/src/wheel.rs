//! `dist/*.whl`: the built Python tree (wrappers + native extension) as an installable wheel.

use base64::Engine as _;
use sha2::{Digest, Sha256};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// What names and tags the wheel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelInfo {
    /// Project name (normalised for the file name).
    pub name: String,
    /// Version.
    pub version: String,
    /// `cp311`, or `py3` for a pure wheel.
    pub python_tag: String,
    /// `cp311`, or `none`.
    pub abi_tag: String,
    /// `linux_x86_64`, or `any`.
    pub platform_tag: String,
    /// `Requires-Python`.
    pub requires_python: Option<String>,
    /// `Requires-Dist`, one per requirement (from the plugins the project uses).
    pub requires_dist: Vec<String>,
}

/// Writing the wheel failed.
#[derive(Debug, Error)]
pub enum WheelError {
    /// I/O.
    #[error("cannot write wheel '{path}': {source}")]
    Io {
        /// Path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Zip.
    #[error("cannot write wheel '{path}': {message}")]
    Zip {
        /// Path.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// Distribution name as wheel file names spell it.
pub fn normalize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.to_ascii_lowercase()
}

fn files(dir: &Path, base: &Path, out: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "__pycache__" {
            continue;
        }
        if path.is_dir() {
            files(&path, base, out)?;
        } else {
            let rel = path
                .strip_prefix(base)
                .unwrap_or(&path)
                .iter()
                .map(|p| p.to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, path));
        }
    }
    Ok(())
}

/// Write `dist_dir/<name>-<version>-<tags>.whl` from the contents of `python_dir`.
pub fn write_wheel(
    python_dir: &Path,
    dist_dir: &Path,
    info: &WheelInfo,
) -> Result<PathBuf, WheelError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| WheelError::Io { path, source }
    };
    std::fs::create_dir_all(dist_dir).map_err(io(dist_dir))?;
    let dist = normalize(&info.name);
    let file = dist_dir.join(format!(
        "{dist}-{}-{}-{}-{}.whl",
        info.version, info.python_tag, info.abi_tag, info.platform_tag
    ));
    let zip_err = |e: zip::result::ZipError| WheelError::Zip {
        path: file.clone(),
        message: e.to_string(),
    };
    let mut entries = Vec::new();
    files(python_dir, python_dir, &mut entries).map_err(io(python_dir))?;
    let info_dir = format!("{dist}-{}.dist-info", info.version);
    let mut metadata = format!(
        "Metadata-Version: 2.1\nName: {}\nVersion: {}\n",
        info.name, info.version
    );
    if let Some(rp) = &info.requires_python {
        metadata.push_str(&format!("Requires-Python: {rp}\n"));
    }
    for r in &info.requires_dist {
        metadata.push_str(&format!("Requires-Dist: {r}\n"));
    }
    let wheel = format!(
        "Wheel-Version: 1.0\nGenerator: rextio {}\nRoot-Is-Purelib: {}\nTag: {}-{}-{}\n",
        env!("CARGO_PKG_VERSION"),
        info.platform_tag == "any",
        info.python_tag,
        info.abi_tag,
        info.platform_tag
    );
    let out = std::fs::File::create(&file).map_err(io(&file))?;
    let mut zip = zip::ZipWriter::new(out);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o644);
    let mut record = String::new();
    let mut add = |zip: &mut zip::ZipWriter<std::fs::File>,
                   name: &str,
                   bytes: &[u8]|
     -> Result<(), WheelError> {
        zip.start_file(name, options).map_err(zip_err)?;
        zip.write_all(bytes).map_err(io(&file))?;
        let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(bytes));
        record.push_str(&format!("{name},sha256={digest},{}\n", bytes.len()));
        Ok(())
    };
    for (rel, path) in &entries {
        let bytes = std::fs::read(path).map_err(io(path))?;
        add(&mut zip, rel, &bytes)?;
    }
    add(
        &mut zip,
        &format!("{info_dir}/METADATA"),
        metadata.as_bytes(),
    )?;
    add(&mut zip, &format!("{info_dir}/WHEEL"), wheel.as_bytes())?;
    record.push_str(&format!("{info_dir}/RECORD,,\n"));
    zip.start_file(format!("{info_dir}/RECORD"), options)
        .map_err(zip_err)?;
    zip.write_all(record.as_bytes()).map_err(io(&file))?;
    zip.finish().map_err(zip_err)?;
    Ok(file)
}
