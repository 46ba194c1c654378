//! `rextio-example`: a third-party plugin for the `mathx` package of the e2e fixture.
//!
//! It claims `mathx.triple(n: int) -> int` and `mathx.fma(a, b, c: float) -> float` and lowers
//! them to plain Rust (no runtime crate of its own), showing that a backend needs nothing from
//! the host but the plugin API.

use rextio_plugin_api::{
    ClaimOutcome, ClaimSite, ClaimedSite, CodeDoc, Coverage, CrateDependency, Diagnostic,
    LowerError, LoweredExpr, LoweringContext, Plugin, PluginType, RuleOutcome, RuleRecord,
    RuleScope, SiteKind, Stability, ValueType,
};

/// The plugin.
pub struct ExamplePlugin {
    rules: Vec<RuleRecord>,
}

const TRIPLE: &str = "rextio-example/triple-int";
const FMA: &str = "rextio-example/fma-float";
const CODES: &[CodeDoc] = &[CodeDoc {
    code: "RXTP-EXAMPLE-001",
    summary: "mathx call with the wrong operand types",
    explanation: "mathx.triple takes one int; mathx.fma takes three floats.",
}];

impl Default for ExamplePlugin {
    fn default() -> Self {
        let rule = |id: &str, pattern: &str| RuleRecord {
            id: id.into(),
            scope: RuleScope::Call,
            pattern: pattern.into(),
            constraint: "positional scalars only".into(),
            outcome: RuleOutcome::Native,
            diagnostic_code: None,
            guidance: String::new(),
            stability: Stability::Experimental,
            verified: false,
        };
        Self {
            rules: vec![
                rule(TRIPLE, "mathx.triple(n)"),
                rule(FMA, "mathx.fma(a, b, c)"),
            ],
        }
    }
}

impl Plugin for ExamplePlugin {
    fn id(&self) -> &str {
        "rextio-example"
    }
    fn api_version(&self) -> &str {
        "1.5.0"
    }
    fn coverage(&self) -> Coverage {
        Coverage {
            packages: vec!["mathx".into()],
            symbols: vec!["mathx.triple".into(), "mathx.fma".into()],
            preload_modules: vec![],
        }
    }
    fn rules(&self) -> &[RuleRecord] {
        &self.rules
    }
    fn diagnostic_codes(&self) -> &[CodeDoc] {
        CODES
    }
    fn type_vocabulary(&self) -> &[PluginType] {
        &[]
    }
    fn claim(&self, site: &ClaimSite) -> ClaimOutcome {
        if site.kind != SiteKind::Call || !site.keywords.is_empty() {
            return ClaimOutcome::NotCovered;
        }
        let types: Vec<Option<&ValueType>> = site.args.iter().map(|a| a.ty.as_ref()).collect();
        match site.target.as_str() {
            "mathx.triple" if types == [Some(&ValueType::Int)] => ClaimOutcome::Claimed {
                rule_id: TRIPLE.into(),
                result_type: ValueType::Int,
            },
            "mathx.fma" if types == [Some(&ValueType::Float); 3] => ClaimOutcome::Claimed {
                rule_id: FMA.into(),
                result_type: ValueType::Float,
            },
            "mathx.triple" | "mathx.fma" => ClaimOutcome::Rejected(Diagnostic::error(
                "RXTP-EXAMPLE-001",
                format!("{} with operands {types:?}", site.target),
            )),
            _ => ClaimOutcome::NotCovered,
        }
    }
    fn lower(
        &self,
        site: &ClaimedSite,
        cx: &mut LoweringContext,
    ) -> Result<LoweredExpr, LowerError> {
        let expr = match (site.rule_id.as_str(), cx.args.as_slice()) {
            (TRIPLE, [n]) => format!("::rextio_plugin_api::runtime::int_mul({}, 3)?", n.expr),
            (FMA, [a, b, c]) => format!("({} * {} + {})", a.expr, b.expr, c.expr),
            _ => {
                return Err(LowerError::new(
                    &site.rule_id,
                    "operands do not match the claim",
                ))
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use rextio_plugin_api::kit::testing::{self, forms};
    use rextio_plugin_api::Operand;

    fn site(target: &str, args: Vec<Operand>) -> ClaimSite {
        forms::call(target, args, vec![])
    }

    #[test]
    fn declarations_validate() {
        assert_eq!(
            rextio_plugin_api::validate_plugin(&ExamplePlugin::default()),
            Ok(())
        );
    }

    /// Every claimed form lowers to one expression, checked as the host checks it.
    #[test]
    fn every_claimed_form_lowers_to_one_expression() {
        let p = ExamplePlugin::default();
        let int = || Operand::typed(ValueType::Int);
        let float = || Operand::typed(ValueType::Float);
        for (s, want) in [
            (
                site("mathx.triple", vec![int()]),
                "::rextio_plugin_api::runtime::int_mul(v0,3)?",
            ),
            (
                site("mathx.fma", vec![float(), float(), float()]),
                "(v0*v1+v2)",
            ),
        ] {
            let claimed = testing::claimed(p.id(), &s, p.claim(&s)).expect("claimed");
            let lowered = p.lower(&claimed, &mut testing::context(&s, false)).unwrap();
            lowered.expr.expr().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(testing::compact(&lowered.expr), want);
        }
        // The claim table, as the first-party backends state theirs.
        let table = vec![
            (site("mathx.triple", vec![int()]), "triple-int -> int"),
            (
                site("mathx.triple", vec![forms::flt(1.0)]),
                "RXTP-EXAMPLE-001",
            ),
            (site("mathx.other", vec![int()]), "not-covered"),
        ];
        let bad = testing::mismatches(p.id(), |s| p.claim(s), table);
        assert!(bad.is_empty(), "{bad:#?}");
    }

    /// The promises every backend keeps (the same check the first-party backends run).
    #[test]
    fn the_plugin_keeps_every_backend_invariant() {
        let int = || Operand::typed(ValueType::Int);
        let float = || Operand::typed(ValueType::Float);
        let forms = testing::Forms {
            cpu: vec![
                site("mathx.triple", vec![int()]),
                site("mathx.fma", vec![float(), float(), float()]),
            ],
            rejected: vec![site("mathx.fma", vec![int()])],
            ..testing::Forms::default()
        };
        let violations = testing::backend_invariants(&ExamplePlugin::default(), &forms);
        assert!(violations.is_empty(), "{violations:#?}");
    }
}
