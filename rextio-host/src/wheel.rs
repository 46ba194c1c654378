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
    /// `Summary`.
    pub summary: Option<String>,
}

/// One file of a wheel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelFile {
    /// Its path in the archive (`/`-separated, relative, e.g. `pkg/mod.py` or
    /// `rextio-0.1.0.data/scripts/rextio`).
    pub name: String,
    /// Its contents.
    pub bytes: Vec<u8>,
    /// Installed with the executable bit (mode 0o755 instead of 0o644).
    pub executable: bool,
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
    /// A file name that is not a relative `/`-separated path inside the archive.
    #[error("cannot write wheel '{path}': '{name}' is not a relative path inside the archive")]
    BadName {
        /// Path.
        path: PathBuf,
        /// The file name.
        name: String,
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
    let mut entries = Vec::new();
    files(python_dir, python_dir, &mut entries).map_err(io(python_dir))?;
    let mut out = Vec::with_capacity(entries.len());
    for (name, path) in entries {
        let bytes = std::fs::read(&path).map_err(io(&path))?;
        out.push(WheelFile {
            name,
            bytes,
            executable: false,
        });
    }
    write_wheel_files(dist_dir, info, &out)
}

/// Write `dist_dir/<name>-<version>-<tags>.whl` holding `files`, then `METADATA`, `WHEEL` and
/// `RECORD` (every file's urlsafe-base64 SHA-256 and size) in `<name>-<version>.dist-info/`.
pub fn write_wheel_files(
    dist_dir: &Path,
    info: &WheelInfo,
    files: &[WheelFile],
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
    for f in files {
        let bad = f.name.is_empty()
            || f.name.starts_with('/')
            || f.name.contains('\\')
            || f.name
                .split('/')
                .any(|c| c.is_empty() || c == "." || c == "..");
        if bad {
            return Err(WheelError::BadName {
                path: file.clone(),
                name: f.name.clone(),
            });
        }
    }
    let zip_err = |e: zip::result::ZipError| WheelError::Zip {
        path: file.clone(),
        message: e.to_string(),
    };
    let info_dir = format!("{dist}-{}.dist-info", info.version);
    let mut metadata = format!(
        "Metadata-Version: 2.1\nName: {}\nVersion: {}\n",
        info.name, info.version
    );
    if let Some(summary) = &info.summary {
        metadata.push_str(&format!("Summary: {summary}\n"));
    }
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
                   bytes: &[u8],
                   mode: u32|
     -> Result<(), WheelError> {
        zip.start_file(name, options.unix_permissions(mode))
            .map_err(zip_err)?;
        zip.write_all(bytes).map_err(io(&file))?;
        let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(bytes));
        record.push_str(&format!("{name},sha256={digest},{}\n", bytes.len()));
        Ok(())
    };
    for f in files {
        let mode = if f.executable { 0o755 } else { 0o644 };
        add(&mut zip, &f.name, &f.bytes, mode)?;
    }
    add(
        &mut zip,
        &format!("{info_dir}/METADATA"),
        metadata.as_bytes(),
        0o644,
    )?;
    add(
        &mut zip,
        &format!("{info_dir}/WHEEL"),
        wheel.as_bytes(),
        0o644,
    )?;
    record.push_str(&format!("{info_dir}/RECORD,,\n"));
    zip.start_file(format!("{info_dir}/RECORD"), options)
        .map_err(zip_err)?;
    zip.write_all(record.as_bytes()).map_err(io(&file))?;
    zip.finish().map_err(zip_err)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use std::io::Read as _;

    fn info(platform_tag: &str) -> WheelInfo {
        WheelInfo {
            name: "rextio-cli".into(),
            version: "1.2.3".into(),
            python_tag: "py3".into(),
            abi_tag: "none".into(),
            platform_tag: platform_tag.into(),
            requires_python: Some(">=3.10".into()),
            requires_dist: vec!["torch==2.13.0".into()],
            summary: Some("a tool".into()),
        }
    }

    #[test]
    fn files_keep_their_mode_and_record_lists_every_digest() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            WheelFile {
                name: "rextio_cli-1.2.3.data/scripts/tool".into(),
                bytes: b"\x7fELF...".to_vec(),
                executable: true,
            },
            WheelFile {
                name: "pkg/__init__.py".into(),
                bytes: b"x = 1\n".to_vec(),
                executable: false,
            },
        ];
        let path = write_wheel_files(dir.path(), &info("linux_x86_64"), &files).unwrap();
        assert_eq!(
            path.file_name().unwrap(),
            "rextio_cli-1.2.3-py3-none-linux_x86_64.whl"
        );
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
        let mode = |zip: &mut zip::ZipArchive<std::fs::File>, name: &str| {
            zip.by_name(name).unwrap().unix_mode().unwrap() & 0o777
        };
        assert_eq!(mode(&mut zip, "rextio_cli-1.2.3.data/scripts/tool"), 0o755);
        assert_eq!(mode(&mut zip, "pkg/__init__.py"), 0o644);
        let read = |zip: &mut zip::ZipArchive<std::fs::File>, name: &str| {
            let mut s = String::new();
            zip.by_name(name).unwrap().read_to_string(&mut s).unwrap();
            s
        };
        let metadata = read(&mut zip, "rextio_cli-1.2.3.dist-info/METADATA");
        assert!(metadata.contains("Name: rextio-cli\nVersion: 1.2.3\nSummary: a tool\n"));
        assert!(metadata.contains("Requires-Python: >=3.10\nRequires-Dist: torch==2.13.0\n"));
        let wheel = read(&mut zip, "rextio_cli-1.2.3.dist-info/WHEEL");
        assert!(wheel.contains("Root-Is-Purelib: false\nTag: py3-none-linux_x86_64\n"));
        let record = read(&mut zip, "rextio_cli-1.2.3.dist-info/RECORD");
        let digest =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(b"x = 1\n"));
        assert!(
            record.contains(&format!("pkg/__init__.py,sha256={digest},6\n")),
            "{record}"
        );
        // Every archive member but RECORD itself has a digest line.
        for i in 0..zip.len() {
            let name = zip.by_index(i).unwrap().name().unwrap().to_string();
            if !name.ends_with("/RECORD") {
                assert!(record.contains(&format!("{name},sha256=")), "{name}");
            }
        }
        assert!(record.ends_with("rextio_cli-1.2.3.dist-info/RECORD,,\n"));

        let pure = write_wheel_files(dir.path(), &info("any"), &files[1..]).unwrap();
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&pure).unwrap()).unwrap();
        let wheel = read(&mut zip, "rextio_cli-1.2.3.dist-info/WHEEL");
        assert!(wheel.contains("Root-Is-Purelib: true\nTag: py3-none-any\n"));
    }

    #[test]
    fn names_outside_the_archive_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["/etc/passwd", "../x.py", "a//b.py", "a/./b.py", ""] {
            let f = WheelFile {
                name: name.into(),
                bytes: Vec::new(),
                executable: false,
            };
            let err = write_wheel_files(dir.path(), &info("any"), &[f]).unwrap_err();
            assert!(matches!(err, WheelError::BadName { .. }), "{name}: {err}");
        }
    }
}
