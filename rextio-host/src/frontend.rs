//! Frontend: find the project's Python modules, parse them with `ruff_python_parser`, and
//! resolve module-level imports into a table of local name -> fully qualified dotted path.

use rextio_plugin_api::Span;
use ruff_python_ast::{ModModule, Stmt};
use ruff_source_file::LineIndex;
use ruff_text_size::TextSize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A parsed module.
pub struct SourceModule {
    /// Dotted module name (`scoring.kernels`).
    pub name: String,
    /// Path relative to the project root (`src/scoring/kernels.py`).
    pub rel_path: PathBuf,
    /// The source text.
    pub source: String,
    /// The syntax tree.
    pub ast: ModModule,
    /// Module-level import bindings: local name -> dotted path.
    pub imports: BTreeMap<String, String>,
    /// Module constants native functions may read.
    pub constants: crate::constants::ModuleConstants,
    line_index: LineIndex,
}

impl SourceModule {
    /// 1-based line and column of a byte offset.
    pub fn span(&self, offset: TextSize) -> Span {
        let lc = self.line_index.line_column(offset, &self.source);
        Span {
            line: lc.line.get() as u32,
            column: lc.column.get() as u32,
        }
    }

    /// The text of a 1-based source line.
    pub fn line_text(&self, line: u32) -> &str {
        self.source
            .lines()
            .nth(line.saturating_sub(1) as usize)
            .unwrap_or("")
    }

    /// Whether this module is a package `__init__`.
    pub fn is_package(&self) -> bool {
        self.rel_path
            .file_name()
            .is_some_and(|f| f == "__init__.py")
    }
}

/// A problem reading or parsing sources.
#[derive(Debug, Error)]
pub enum FrontendError {
    /// No `src/` directory.
    #[error("no source directory '{0}': put the project's Python packages under ROOT/src/")]
    NoSources(PathBuf),
    /// I/O.
    #[error("cannot read '{path}': {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A syntax error.
    #[error("syntax error in '{path}' at {line}:{column}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// The parser's message.
        message: String,
    },
}

fn collect_py(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), FrontendError> {
    let entries = std::fs::read_dir(dir).map_err(|source| FrontendError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| FrontendError::Io {
            path: dir.to_owned(),
            source,
        })?;
        paths.push(entry.path());
    }
    paths.sort();
    for path in paths {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name == "__pycache__" {
            continue;
        }
        if path.is_dir() {
            collect_py(&path, out)?;
        } else if name.ends_with(".py") {
            out.push(path);
        }
    }
    Ok(())
}

/// Dotted module name of a file relative to `src/`.
fn module_name(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".py").to_owned();
    }
    if parts.last().is_some_and(|p| p == "__init__") {
        parts.pop();
    }
    parts.join(".")
}

/// Parse every module under `ROOT/src`, in path order.
pub fn parse_project(root: &Path) -> Result<Vec<SourceModule>, FrontendError> {
    let src = root.join("src");
    if !src.is_dir() {
        return Err(FrontendError::NoSources(src));
    }
    let mut files = Vec::new();
    collect_py(&src, &mut files)?;
    files
        .into_iter()
        .map(|path| {
            let source = std::fs::read_to_string(&path).map_err(|source| FrontendError::Io {
                path: path.clone(),
                source,
            })?;
            let rel_src = path.strip_prefix(&src).unwrap_or(&path).to_owned();
            let rel_path = path.strip_prefix(root).unwrap_or(&path).to_owned();
            parse_module(&module_name(&rel_src), rel_path, source)
        })
        .collect()
}

/// Parse one module's source.
pub fn parse_module(
    name: &str,
    rel_path: PathBuf,
    source: String,
) -> Result<SourceModule, FrontendError> {
    let line_index = LineIndex::from_source_text(&source);
    let parsed = match ruff_python_parser::parse_module(&source) {
        Ok(p) => p,
        Err(e) => {
            let lc = line_index.line_column(e.location.start(), &source);
            return Err(FrontendError::Syntax {
                path: rel_path,
                line: lc.line.get() as u32,
                column: lc.column.get() as u32,
                message: e.error.to_string(),
            });
        }
    };
    let ast = parsed.into_syntax();
    let is_package = rel_path.file_name().is_some_and(|f| f == "__init__.py");
    let imports = resolve_imports(name, is_package, &ast.body);
    let constants = crate::constants::module_constants(&ast.body);
    Ok(SourceModule {
        name: name.to_owned(),
        rel_path,
        source,
        ast,
        imports,
        constants,
        line_index,
    })
}

/// Module-level imports as local name -> dotted path. Later bindings win, as in Python.
/// Names re-bound by other module-level statements are removed: they no longer denote the import.
pub fn resolve_imports(module: &str, is_package: bool, body: &[Stmt]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut assigned = std::collections::BTreeSet::new();
    for stmt in body {
        match stmt {
            Stmt::Import(imp) => {
                for alias in &imp.names {
                    let full = alias.name.as_str();
                    match &alias.asname {
                        Some(asname) => {
                            out.insert(asname.as_str().to_owned(), full.to_owned());
                        }
                        None => {
                            let top = full.split('.').next().unwrap_or(full);
                            out.insert(top.to_owned(), top.to_owned());
                        }
                    }
                }
            }
            Stmt::ImportFrom(imp) => {
                let base = if imp.level > 0 {
                    let mut pkg: Vec<&str> = module.split('.').collect();
                    if !is_package {
                        pkg.pop();
                    }
                    for _ in 1..imp.level {
                        pkg.pop();
                    }
                    let mut base = pkg.join(".");
                    if let Some(m) = &imp.module {
                        if !base.is_empty() {
                            base.push('.');
                        }
                        base.push_str(m.as_str());
                    }
                    base
                } else {
                    imp.module
                        .as_ref()
                        .map(|m| m.as_str().to_owned())
                        .unwrap_or_default()
                };
                for alias in &imp.names {
                    if alias.name.as_str() == "*" {
                        continue;
                    }
                    let local = alias
                        .asname
                        .as_ref()
                        .unwrap_or(&alias.name)
                        .as_str()
                        .to_owned();
                    out.insert(local, format!("{base}.{}", alias.name.as_str()));
                }
            }
            Stmt::Assign(a) => {
                // `Alias = some.imported.Name` binds an alias once; any other assignment, or a
                // second one, means the name no longer denotes an import.
                let target = match a.targets.as_slice() {
                    [ruff_python_ast::Expr::Name(n)] => Some(n.id.as_str().to_owned()),
                    _ => None,
                };
                let value = dotted(&out, &a.value);
                for t in &a.targets {
                    if let ruff_python_ast::Expr::Name(n) = t {
                        out.remove(n.id.as_str());
                    }
                }
                if let (Some(target), Some(value)) = (target, value) {
                    if assigned.insert(target.clone()) {
                        out.insert(target, value);
                    }
                } else {
                    for t in &a.targets {
                        if let ruff_python_ast::Expr::Name(n) = t {
                            assigned.insert(n.id.as_str().to_owned());
                        }
                    }
                }
            }
            Stmt::FunctionDef(f) => {
                out.remove(f.name.as_str());
            }
            Stmt::ClassDef(c) => {
                out.remove(c.name.as_str());
            }
            _ => {}
        }
    }
    out
}

/// A dotted path through the bindings so far.
fn dotted(bindings: &BTreeMap<String, String>, e: &ruff_python_ast::Expr) -> Option<String> {
    match e {
        ruff_python_ast::Expr::Name(n) => bindings.get(n.id.as_str()).cloned(),
        ruff_python_ast::Expr::Attribute(a) => Some(format!(
            "{}.{}",
            dotted(bindings, &a.value)?,
            a.attr.as_str()
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imports(src: &str) -> BTreeMap<String, String> {
        parse_module("pkg.mod", PathBuf::from("src/pkg/mod.py"), src.to_owned())
            .unwrap()
            .imports
    }

    #[test]
    fn import_forms_resolve() {
        let m = imports(
            "import torch\nimport torch.nn.functional as F\nfrom torch.nn import functional as G\n\
             from torch.nn.functional import linear as lin, relu\nimport os.path\nfrom . import sibling\nfrom .x import y\n",
        );
        assert_eq!(m["torch"], "torch");
        assert_eq!(m["F"], "torch.nn.functional");
        assert_eq!(m["G"], "torch.nn.functional");
        assert_eq!(m["lin"], "torch.nn.functional.linear");
        assert_eq!(m["relu"], "torch.nn.functional.relu");
        assert_eq!(m["os"], "os");
        assert_eq!(m["sibling"], "pkg.sibling");
        assert_eq!(m["y"], "pkg.x.y");
    }

    #[test]
    fn rebinding_removes_an_import() {
        let m = imports("import torch.nn.functional as F\nF = None\n");
        assert!(!m.contains_key("F"));
    }

    #[test]
    fn single_module_level_aliases_resolve() {
        let m = imports("from rextio_torch import types\nMat = types.TensorF32Cpu2D\nG = Mat\nX = types.A\nX = types.B\n");
        assert_eq!(m["Mat"], "rextio_torch.types.TensorF32Cpu2D");
        assert_eq!(m["G"], "rextio_torch.types.TensorF32Cpu2D");
        assert!(
            !m.contains_key("X"),
            "an alias assigned twice is not an alias"
        );
    }

    #[test]
    fn syntax_errors_name_file_and_position() {
        let e = parse_module("m", PathBuf::from("src/m.py"), "def f(:\n".into())
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(msg.contains("src/m.py") && msg.contains("1:"), "{msg}");
    }
}
