//! The emitter parses what plugins hand it: an answer that is not Rust demotes only its
//! function (RXT014); identifiers and literals from user source reach the crate escaped.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rextio_host::{Project, Registry};
use rextio_plugin_api::*;

/// Lowers `textlib.good(n)` to valid Rust and `textlib.bad(n)` to code that does not parse,
/// as text or (third field) as tokens; declares a module-init step and Python requirements (API
/// 1.8 hooks) under the API version in its second field.
struct Text(Vec<RuleRecord>, &'static str, bool);

impl Plugin for Text {
    fn id(&self) -> &str {
        "text"
    }
    fn api_version(&self) -> &str {
        self.1
    }
    fn module_init(&self) -> Option<ModuleInit> {
        Some(ModuleInit {
            expr: if self.2 {
                syntax::quote!(textrt::init(py)).into()
            } else {
                "textrt::init(py)".into()
            },
        })
    }
    fn python_requirements(&self) -> Vec<PythonRequirement> {
        vec![PythonRequirement {
            requirement: "textlib==1.0".into(),
            distribution: "textlib".into(),
            editable_path: None,
        }]
    }
    fn detached_body(&self, _f: &FunctionScope) -> Option<DetachedBody> {
        Some(DetachedBody {
            runner: if self.2 {
                syntax::quote!(textrt::run_body).into()
            } else {
                "textrt::run_body".into()
            },
        })
    }
    fn coverage(&self) -> Coverage {
        Coverage {
            packages: vec!["textlib".into()],
            ..Coverage::default()
        }
    }
    fn rules(&self) -> &[RuleRecord] {
        &self.0
    }
    fn diagnostic_codes(&self) -> &[CodeDoc] {
        &[]
    }
    fn type_vocabulary(&self) -> &[PluginType] {
        &[]
    }
    fn claim(&self, site: &ClaimSite) -> ClaimOutcome {
        let rule_id = match site.target.as_str() {
            "textlib.good" => "text/good",
            "textlib.bad" => "text/bad",
            _ => return ClaimOutcome::NotCovered,
        };
        ClaimOutcome::Claimed {
            rule_id: rule_id.into(),
            result_type: ValueType::Int,
        }
    }
    fn lower(
        &self,
        site: &ClaimedSite,
        cx: &mut LoweringContext,
    ) -> Result<LoweredExpr, LowerError> {
        let n = &cx.args[0].expr;
        let good = site.rule_id == "text/good";
        if self.2 {
            // Balanced (as `quote!` must be), yet not one expression when bad.
            return Ok(LoweredExpr::tokens(if good {
                syntax::quote!(::rextio_plugin_api::runtime::int_add(#n, 1)?)
            } else {
                syntax::quote!(#n + ; drop_tables())
            }));
        }
        let expr = if good {
            format!("::rextio_plugin_api::runtime::int_add({n}, 1)?")
        } else {
            format!("{n} + ) ; drop_tables(")
        };
        Ok(LoweredExpr {
            expr: expr.into(),
            uses: vec![],
        })
    }
    fn runtime_crate(&self) -> Option<CrateDependency> {
        None
    }
}

fn plugin() -> Text {
    let rule = |id: &str| RuleRecord {
        id: id.into(),
        scope: RuleScope::Call,
        pattern: id.into(),
        constraint: String::new(),
        outcome: RuleOutcome::Native,
        diagnostic_code: None,
        guidance: String::new(),
        stability: Stability::Experimental,
        verified: false,
    };
    Text(vec![rule("text/good"), rule("text/bad")], "1.8.0", false)
}

/// A project enabling the `text` plugin with `src` as `src/m.py`.
fn text_project(src: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rextio.toml"),
        "[plugins]\nenabled = [\"text\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/m.py"), src).unwrap();
    dir
}

/// The generated lines of the native function `qualname` (by the crate's line map).
fn function_text(lib_rs: &str, function_lines: &[(String, u32, u32)], qualname: &str) -> String {
    let (_, a, b) = function_lines
        .iter()
        .find(|(q, _, _)| q == qualname)
        .unwrap_or_else(|| panic!("{qualname} placed"));
    let lines: Vec<&str> = lib_rs.lines().collect();
    lines[*a as usize - 1..*b as usize].join("\n")
}

#[test]
fn an_expression_that_does_not_parse_demotes_only_its_function() {
    let src = "import textlib\n\n\ndef bad(n: int) -> int:\n    return textlib.bad(n)\n\n\ndef good(n: int, match: int) -> int:\n    return textlib.good(n + match)\n\n\ndef uni(n_\u{e9}: int) -> int:\n    return textlib.good(n_\u{e9})\n";
    let dir = text_project(src);
    let registry = Registry::builder().plugin(plugin()).build().unwrap();
    let g = Project::open(dir.path())
        .unwrap()
        .generate(&registry)
        .unwrap();
    let routes = g.check.report.routes();
    assert_eq!(
        routes,
        vec![
            ("m.bad".to_owned(), "fallback-python".to_owned()),
            ("m.good".to_owned(), "native-plugin:text".to_owned()),
            ("m.uni".to_owned(), "fallback-python".to_owned()),
        ],
        "{:#?}",
        g.check.report
    );
    let diag = |i: usize, code: &str| {
        let f = &g.check.report.modules[0].functions[i];
        assert_eq!(f.diagnostics.len(), 1, "{:?}", f.diagnostics);
        assert_eq!(f.diagnostics[0].code, code);
        f.diagnostics[0].message.clone()
    };
    let bad = diag(0, "RXT014");
    assert!(
        bad.contains("text/bad") && bad.contains("does not parse"),
        "{bad}"
    );
    // A parameter name Rust cannot spell as a keyword argument stays Python (the analysis
    // refuses it before the emitter, which refuses it again).
    diag(2, "RXT010");
    // The crate holds only `good`, with its Python keyword name kept as a raw identifier, and
    // it is one well-formed Rust file.
    let krate = g.crate_.expect("good is native");
    assert!(
        krate
            .lib_rs
            .contains("r#match: &::pyo3::Bound<'py, ::pyo3::PyAny>")
            && krate
                .lib_rs
                .contains("let l_match: i64 = match ::pyo3::types::PyAnyMethods::extract(r#match)"),
        "{}",
        krate.lib_rs
    );
    assert!(!krate.lib_rs.contains("drop_tables"));
    syn::parse_file(&krate.lib_rs).expect("generated lib.rs parses");
    assert_eq!(krate.function_lines.len(), 1);
    assert_eq!(krate.function_lines[0].0, "m.good");
    assert!(function_text(&krate.lib_rs, &krate.function_lines, "m.good").contains("fn __rx_fn_0"));
}

/// API 1.14: tokens are spliced as they are and a malformed expression demotes its function
/// as text does; text from a plugin that declared 1.14 is refused.
#[test]
fn a_plugin_of_api_1_14_returns_tokens_and_its_text_is_refused() {
    let dir = text_project(
        "import textlib\n\n\ndef bad(n: int) -> int:\n    return textlib.bad(n)\n\n\ndef good(n: int) -> int:\n    return textlib.good(n)\n",
    );
    let generate = |tokens: bool| {
        let mut p = plugin();
        p.1 = "1.14.0";
        p.2 = tokens;
        let registry = Registry::builder().plugin(p).build().unwrap();
        Project::open(dir.path())
            .unwrap()
            .generate(&registry)
            .unwrap()
    };
    let g = generate(true);
    let routes = g.check.report.routes();
    assert_eq!(
        routes,
        vec![
            ("m.bad".to_owned(), "fallback-python".to_owned()),
            ("m.good".to_owned(), "native-plugin:text".to_owned()),
        ]
    );
    let bad = &g.check.report.modules[0].functions[0].diagnostics[0];
    assert_eq!(bad.code, "RXT014");
    assert!(bad.message.contains("does not parse"), "{}", bad.message);
    let lib = g.crate_.expect("good is native").lib_rs;
    assert!(
        lib.contains("::rextio_plugin_api::runtime::int_add(l_n, 1)?"),
        "{lib}"
    );
    assert!(!lib.contains("drop_tables"));

    let g = generate(false);
    let routes = g.check.report.routes();
    assert!(
        routes.iter().all(|(_, r)| r == "fallback-python"),
        "{routes:?}"
    );
    for f in &g.check.report.modules[0].functions {
        let d = &f.diagnostics[0];
        assert_eq!(d.code, "RXT014");
        assert!(d.message.contains("token streams"), "{}", d.message);
    }
    assert!(g.crate_.is_none());
}

#[test]
fn module_init_and_requirements_are_used_only_from_plugins_that_negotiated_them() {
    let dir =
        text_project("import textlib\n\n\ndef good(n: int) -> int:\n    return textlib.good(n)\n");
    for (version, expected) in [("1.8.0", true), ("1.7.0", false)] {
        let mut p = plugin();
        p.1 = version;
        let registry = Registry::builder().plugin(p).build().unwrap();
        let g = Project::open(dir.path())
            .unwrap()
            .generate(&registry)
            .unwrap();
        let lib = g.crate_.expect("native").lib_rs;
        assert_eq!(
            lib.contains("textrt::init(py)"),
            expected,
            "{version}: {lib}"
        );
        assert_eq!(
            g.requires_dist == vec!["textlib==1.0".to_owned()],
            expected,
            "{version}"
        );
        if expected {
            // The step runs before any function is added, and its failure is an ImportError.
            let init = lib.find("textrt::init(py)").unwrap();
            assert!(init < lib.find("m.add(").unwrap());
            assert!(lib.contains("PyImportError::new_err"));
        }
    }
}

#[test]
fn bodies_run_through_the_runner_only_when_the_plugin_negotiated_it_and_calls_nothing_native() {
    let generate = |version: &'static str| {
        let dir = text_project("import textlib\n\n\ndef leaf(n: int) -> int:\n    return textlib.good(n)\n\n\ndef caller(n: int) -> int:\n    return textlib.good(leaf(n))\n");
        let mut p = plugin();
        p.1 = version;
        let registry = Registry::builder().plugin(p).build().unwrap();
        let g = Project::open(dir.path())
            .unwrap()
            .generate(&registry)
            .unwrap();
        let routes = g.check.report.routes();
        assert!(
            routes.iter().all(|(_, r)| r == "native-plugin:text"),
            "{routes:?}"
        );
        let krate = g.crate_.expect("both functions are native");
        syn::parse_file(&krate.lib_rs).expect("generated lib.rs parses");
        let body = |q: &str| function_text(&krate.lib_rs, &krate.function_lines, q);
        (body("m.leaf"), body("m.caller"))
    };
    // API 1.10: the leaf's body runs through the runner; the caller's, which calls another
    // native body (whose plugins it does not see), is called directly.
    let (leaf, caller) = generate("1.10.0");
    assert!(leaf.contains("textrt::run_body(__rx_py, move ||"), "{leaf}");
    assert!(!caller.contains("run_body"), "{caller}");
    // A plugin written for 1.9 is never asked.
    let (leaf, caller) = generate("1.9.0");
    assert!(
        !leaf.contains("run_body") && !caller.contains("run_body"),
        "{leaf}"
    );
}
