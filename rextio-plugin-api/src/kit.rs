//! Scaffolding a backend would otherwise write again: marker-type families by rank, the claim
//! answer from a plan, rejections, a device lane's claim-side checks ([`DeviceForms`]), the
//! platform table's shape, the marker-types module as a
//! table ([`MarkerModule`]), and helpers for a plugin's own
//! unit tests ([`testing`]). Both first-party backends use it; a third-party backend may.

mod declared;
mod device_forms;
mod markers;

pub use declared::{Declared, DeviceLane};
pub use device_forms::DeviceForms;
pub use markers::{Boundary, Marker, MarkerModule};

use crate::diagnostic::Diagnostic;
use crate::plugin::{PlatformCell, PlatformState};
use crate::rules::{RuleOutcome, RuleRecord};
use crate::site::{ClaimOutcome, ClaimSite, Operand};
use crate::types::{TypeKey, ValueType};

/// Marker types that differ only in rank: `keys[r - 1]` is the type key of rank `r`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankFamily {
    keys: &'static [&'static str],
}

impl RankFamily {
    /// The family whose rank-`r` key is `keys[r - 1]`.
    pub const fn new(keys: &'static [&'static str]) -> Self {
        Self { keys }
    }

    /// The rank of `key`, if it belongs to the family.
    pub fn rank(&self, key: &TypeKey) -> Option<u8> {
        let i = self.keys.iter().position(|k| *k == key.as_str())?;
        u8::try_from(i + 1).ok()
    }

    /// The type of rank `rank`, if the family has one.
    pub fn ty(&self, rank: u8) -> Option<ValueType> {
        let i = usize::from(rank).checked_sub(1)?;
        self.keys
            .get(i)
            .map(|k| ValueType::Plugin(TypeKey::new(*k)))
    }

    /// The type of rank `rank` as a claim's result: [`ClaimOutcome::NotCovered`] when the
    /// family has no such rank.
    pub fn result(&self, rank: u8) -> Result<ValueType, ClaimOutcome> {
        self.ty(rank).ok_or(ClaimOutcome::NotCovered)
    }

    /// The rank of an operand that is a non-literal value of the family.
    pub fn operand_rank(&self, op: &Operand) -> Option<u8> {
        if op.literal.is_some() {
            return None;
        }
        op.key().and_then(|k| self.rank(k))
    }

    /// Whether any operand of `site` (receiver, positional, keyword, or an element of a tuple
    /// operand, at any depth) has a type of the family.
    pub fn touches(&self, site: &ClaimSite) -> bool {
        site.nested_type_keys().any(|k| self.rank(k).is_some())
    }

    /// Whether `site` also holds (at any depth) a type of `namespace` outside the family: a
    /// device lane's values mixed with the backend's other tensors.
    pub fn mixed(&self, site: &ClaimSite, namespace: &str) -> bool {
        site.nested_type_keys()
            .any(|k| k.namespace() == namespace && self.rank(k).is_none())
    }
}

/// The claim answer for a planned site: `Claimed` with the plan's rule and result type, or the
/// planner's own answer (`Rejected` or `NotCovered`).
pub fn decide(plan: Result<(String, ValueType), ClaimOutcome>) -> ClaimOutcome {
    match plan {
        Ok((rule_id, result_type)) => ClaimOutcome::Claimed {
            rule_id,
            result_type,
        },
        Err(outcome) => outcome,
    }
}

/// A claimed site planned again at lowering, as a lowering must before it emits anything: the
/// plan, while `of(plan)` (its rule id and result type) is still what the claim said; otherwise
/// the lowering error (the site no longer plans, or plans to another rule or result type), so
/// the function fails closed instead of lowering a site its claim did not prove.
pub fn replanned<P, E>(
    site: &crate::site::ClaimedSite,
    plan: Result<P, E>,
    of: impl Fn(&P) -> (&str, &ValueType),
) -> Result<P, crate::lowering::LowerError> {
    let drift = |reason: &str| crate::lowering::LowerError::new(&site.rule_id, reason);
    let plan = plan.map_err(|_| drift("the site no longer matches any rule"))?;
    let (rule, result) = of(&plan);
    if rule != site.rule_id || *result != site.result_type {
        return Err(drift(
            "the site now plans to a different rule or result type",
        ));
    }
    Ok(plan)
}

/// The ids of the native rules among `records`, in order.
pub fn native_ids(records: &[RuleRecord]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.outcome == RuleOutcome::Native)
        .map(|r| r.id.clone())
        .collect()
}

/// A rejection with `code`, `message` and a suggestion.
pub fn reject(code: &str, message: impl Into<String>, suggestion: &str) -> ClaimOutcome {
    ClaimOutcome::Rejected(Diagnostic::error(code, message).with_suggestion(suggestion))
}

/// The operating systems and architectures every platform table states, one cell each, plus
/// one `windows`/`*` cell.
pub const PLATFORM_GRID: (&[&str], &[&str]) =
    (&["linux", "macos"], &["x86_64", "aarch64", "x86", "arm32"]);

/// The cells every platform table states the same way, whatever the framework: no modern macOS
/// runs on i686 or ARMv7. Reason codes `<prefix>-impossible-target`.
pub fn impossible_platform_cells(prefix: &str) -> [PlatformCell; 2] {
    let reason = format!("{prefix}-impossible-target");
    [
        PlatformCell::new(
            "macos",
            "x86",
            PlatformState::Unsupported,
            &reason,
            "no modern macOS runs on i686",
        ),
        PlatformCell::new(
            "macos",
            "arm32",
            PlatformState::Unsupported,
            &reason,
            "no modern macOS runs on ARMv7",
        ),
    ]
}

/// Why a platform table is malformed: a grid cell missing or stated twice, no deferred Windows
/// cell, not exactly one certifiable cell, or a reason code outside `<prefix>-`.
pub fn check_platform_table(table: &[PlatformCell], prefix: &str) -> Result<(), String> {
    let (oses, arches) = PLATFORM_GRID;
    for os in oses {
        for arch in arches {
            let n = table
                .iter()
                .filter(|c| c.os == *os && c.arch == *arch)
                .count();
            if n != 1 {
                return Err(format!("{os}/{arch} is stated {n} times"));
            }
        }
    }
    if !table
        .iter()
        .any(|c| c.os == "windows" && c.status == PlatformState::Deferred)
    {
        return Err("no deferred windows cell".to_owned());
    }
    let certifiable = table
        .iter()
        .filter(|c| c.status == PlatformState::Certifiable)
        .count();
    if certifiable != 1 {
        return Err(format!("{certifiable} certifiable cells, expected 1"));
    }
    match table
        .iter()
        .find(|c| !c.reason_code.starts_with(&format!("{prefix}-")))
    {
        Some(c) => Err(format!("reason `{}` is outside `{prefix}-`", c.reason_code)),
        None => Ok(()),
    }
}

/// Helpers for a plugin's unit tests of its claims and lowerings.
pub mod testing {
    use crate::device::DeviceAuthorization;
    use crate::lowering::{LowerError, LoweredExpr, LoweredOperand, LoweringContext};
    use crate::site::{ClaimOutcome, ClaimSite, ClaimedSite};
    use crate::syntax::{format_ident, quote, Code};

    /// The claimed site `plugin` lowers, when `outcome` claims `site`.
    pub fn claimed(plugin: &str, site: &ClaimSite, outcome: ClaimOutcome) -> Option<ClaimedSite> {
        let ClaimOutcome::Claimed {
            rule_id,
            result_type,
        } = outcome
        else {
            return None;
        };
        Some(ClaimedSite {
            site: site.clone(),
            plugin_id: plugin.to_owned(),
            rule_id,
            result_type,
        })
    }

    /// An operand named `v{i}`.
    pub fn operand(i: usize, owned_temp: bool) -> LoweredOperand {
        let v = format_ident!("v{i}");
        LoweredOperand::new(quote!(#v), owned_temp)
    }

    /// A CPU lowering context for `site`: positional operands `v0, v1, ...`, the receiver
    /// `v99`, keyword operands `v100, v101, ...`, all with the given ownership.
    pub fn context(site: &ClaimSite, owned_temp: bool) -> LoweringContext {
        LoweringContext::new(
            site.receiver.as_ref().map(|_| operand(99, owned_temp)),
            (0..site.args.len())
                .map(|i| operand(i, owned_temp))
                .collect(),
            site.keywords
                .iter()
                .enumerate()
                .map(|(i, k)| (k.name.clone(), operand(100 + i, owned_temp)))
                .collect(),
        )
    }

    /// `cx` targeting `capability` under `provider`'s authorisation of it.
    pub fn authorised(
        mut cx: LoweringContext,
        provider: &str,
        capability: &str,
    ) -> LoweringContext {
        cx.target = capability.to_owned();
        cx.device_authorization = Some(DeviceAuthorization {
            provider: provider.to_owned(),
            capability: capability.to_owned(),
        });
        cx
    }

    /// The lowering of a device rule's `site` under `provider`'s exact authorisation of
    /// `capability`, after checking that `lower` refuses it everywhere else: with no
    /// authorisation (a CPU target; the error names the capability), under each of `others`
    /// (provider, capability), and under the right authorisation with a CPU target.
    pub fn exact_authorisation<F>(
        lower: F,
        site: &ClaimedSite,
        provider: &str,
        capability: &str,
        others: &[(&str, &str)],
    ) -> Result<LoweredExpr, String>
    where
        F: Fn(&ClaimedSite, &mut LoweringContext) -> Result<LoweredExpr, LowerError>,
    {
        let base = || context(&site.site, false);
        match lower(site, &mut base()) {
            Ok(e) => return Err(format!("lowered without authorisation: {}", e.expr)),
            Err(e) if !e.reason.contains(capability) => {
                return Err(format!("the refusal does not name `{capability}`: {e}"))
            }
            Err(_) => {}
        }
        for (p, c) in others {
            if let Ok(e) = lower(site, &mut authorised(base(), p, c)) {
                return Err(format!("lowered under `{c}` from `{p}`: {}", e.expr));
            }
        }
        let mut cpu = authorised(base(), provider, capability);
        cpu.target = "cpu".to_owned();
        if let Ok(e) = lower(site, &mut cpu) {
            return Err(format!("lowered for a CPU target: {}", e.expr));
        }
        lower(site, &mut authorised(base(), provider, capability)).map_err(|e| e.to_string())
    }

    /// Code as text without spaces, for comparing with an expected spelling.
    pub fn compact(code: &Code) -> String {
        code.to_string().replace(' ', "")
    }

    /// `region` as `lower` (a plugin's `lower_region`) lowers it for the CPU, checked to parse as
    /// one expression the way the host parses it, as compact text (see [`compact`]); the
    /// plugin's error, or why it is not a fused lowering, otherwise.
    #[cfg(feature = "check")]
    pub fn cpu_region_text<F>(lower: F, region: &crate::lowering::Region) -> Result<String, String>
    where
        F: Fn(
            &crate::lowering::Region,
            &crate::lowering::RegionContext,
        ) -> Result<Option<crate::lowering::LoweredRegion>, LowerError>,
    {
        let cx = crate::lowering::RegionContext {
            target: "cpu".to_owned(),
            device_authorization: None,
        };
        let lowered = lower(region, &cx)
            .map_err(|e| e.to_string())?
            .ok_or("the plugin kept the region per op")?;
        lowered
            .expr
            .expr()
            .map_err(|e| format!("{e}: {}", lowered.expr))?;
        Ok(compact(&lowered.expr))
    }

    /// The sites of a test table whose rows are (site, expected outcome).
    pub fn sites(rows: Vec<(ClaimSite, &str)>) -> Vec<ClaimSite> {
        rows.into_iter().map(|(s, _)| s).collect()
    }

    /// The sites of the rows whose expected outcome is a plugin code (refused, not uncovered).
    pub fn refused(rows: Vec<(ClaimSite, &str)>) -> Vec<ClaimSite> {
        rows.into_iter()
            .filter(|(_, want)| crate::diagnostic::is_plugin_code(want))
            .map(|(s, _)| s)
            .collect()
    }

    /// Claim sites and operands as a backend's claim tests write their tables: `call(target,
    /// args, keywords)`, `method(receiver, name, args, keywords)`, `binop`, `compare`, `attr`,
    /// literal operands (`int`, `flt`, `boolean`, `none`, `string`), `kw`, and [`forms::outcome`],
    /// the one-line summary of a claim that table rows expect.
    pub mod forms {
        use crate::site::{ClaimOutcome, ClaimSite, Keyword, Literal, Operand, SiteKind};

        /// An int literal.
        pub fn int(v: i64) -> Operand {
            Operand::literal(Literal::Int(v))
        }
        /// A float literal.
        pub fn flt(v: f64) -> Operand {
            Operand::literal(Literal::Float(v))
        }
        /// A bool literal.
        pub fn boolean(v: bool) -> Operand {
            Operand::literal(Literal::Bool(v))
        }
        /// The literal `None`.
        pub fn none() -> Operand {
            Operand::literal(Literal::None)
        }
        /// A str literal.
        pub fn string(s: &str) -> Operand {
            Operand::literal(Literal::Str(s.into()))
        }
        /// A keyword argument.
        pub fn kw(name: &str, value: Operand) -> Keyword {
            Keyword {
                name: name.into(),
                value,
            }
        }

        fn site(
            kind: SiteKind,
            target: &str,
            receiver: Option<Operand>,
            args: Vec<Operand>,
        ) -> ClaimSite {
            ClaimSite {
                kind,
                target: target.into(),
                receiver,
                args,
                keywords: vec![],
            }
        }

        /// `target(*args, **keywords)`.
        pub fn call(target: &str, args: Vec<Operand>, keywords: Vec<Keyword>) -> ClaimSite {
            ClaimSite {
                keywords,
                ..site(SiteKind::Call, target, None, args)
            }
        }
        /// `receiver.name(*args, **keywords)`.
        pub fn method(
            receiver: Operand,
            name: &str,
            args: Vec<Operand>,
            keywords: Vec<Keyword>,
        ) -> ClaimSite {
            ClaimSite {
                keywords,
                ..site(SiteKind::MethodCall, name, Some(receiver), args)
            }
        }
        /// `a <op> b`.
        pub fn binop(op: &str, a: Operand, b: Operand) -> ClaimSite {
            site(SiteKind::BinOp, op, None, vec![a, b])
        }
        /// `a <op> b`, a comparison.
        pub fn compare(op: &str, a: Operand, b: Operand) -> ClaimSite {
            site(SiteKind::Compare, op, None, vec![a, b])
        }
        /// `receiver.name`, an attribute read.
        pub fn attr(receiver: Operand, name: &str) -> ClaimSite {
            site(SiteKind::Attribute, name, Some(receiver), vec![])
        }

        /// A claim as one line: `rule -> type` (the rule without `namespace/`, every type key of
        /// the result without `namespace/tensor-`), `rejected CODE` or `not-covered`.
        pub fn outcome(namespace: &str, outcome: ClaimOutcome) -> String {
            match outcome {
                ClaimOutcome::Claimed {
                    rule_id,
                    result_type,
                } => {
                    let rule = rule_id
                        .strip_prefix(&format!("{namespace}/"))
                        .unwrap_or(&rule_id);
                    let ty = result_type
                        .to_string()
                        .replace(&format!("{namespace}/tensor-"), "");
                    format!("{rule} -> {ty}")
                }
                ClaimOutcome::Rejected(d) => format!("rejected {}", d.code),
                ClaimOutcome::NotCovered => "not-covered".into(),
            }
        }
    }

    /// The rows of a claim-test table whose claim (by `claim`) is not what the row expects: an
    /// [`forms::outcome`] line, or a plugin code for a refusal with that code. One line per
    /// mismatch; none when the table holds.
    pub fn mismatches(
        namespace: &str,
        claim: impl Fn(&ClaimSite) -> ClaimOutcome,
        rows: Vec<(ClaimSite, &str)>,
    ) -> Vec<String> {
        rows.into_iter()
            .filter_map(|(site, want)| {
                let want = if crate::diagnostic::is_plugin_code(want) {
                    format!("rejected {want}")
                } else {
                    want.to_owned()
                };
                let got = forms::outcome(namespace, claim(&site));
                (got != want).then(|| format!("{site:?}: {got}, expected {want}"))
            })
            .collect()
    }

    /// A backend's own forms, for [`backend_invariants`].
    #[derive(Debug, Clone, Default)]
    pub struct Forms {
        /// CPU sites it claims.
        pub cpu: Vec<ClaimSite>,
        /// Sites of its device lane it claims (empty without one).
        pub device: Vec<ClaimSite>,
        /// Sites it refuses with a diagnostic.
        pub rejected: Vec<ClaimSite>,
        /// Decorators it takes (`Plugin::native_decorator`'s path and whether it is called).
        pub decorators: Vec<(&'static str, bool)>,
        /// A value type of its device lane and the codes the lane refuses with, if it has one.
        pub device_lane: Option<(crate::types::ValueType, Vec<&'static str>)>,
        /// The prefix of its platform table's reason codes (`torch`), if it states one: the
        /// table is then checked with [`check_platform_table`](super::check_platform_table).
        pub platform_reasons: Option<&'static str>,
    }

    impl Forms {
        /// The forms of a backend's claim tables (rows of site and expected outcome, as
        /// [`mismatches`] reads them): the accepted CPU and device rows, and the rows of
        /// `rejected` that expect a plugin code. No decorators, platform table or device lane:
        /// set those fields when the backend has them.
        pub fn tables(
            cpu: Vec<(ClaimSite, &str)>,
            device: Vec<(ClaimSite, &str)>,
            rejected: Vec<(ClaimSite, &str)>,
        ) -> Self {
            Self {
                cpu: sites(cpu),
                device: sites(device),
                rejected: refused(rejected),
                ..Self::default()
            }
        }
    }

    /// What every backend promises about its claims, checked over its own forms; one line per
    /// broken promise, none when it keeps them all:
    /// - each accepted site and decorator is taken, and every native rule by at least one of
    ///   them;
    /// - its coverage symbols are unique and name every accepted call form's target (the host
    ///   offers a call only for a covered symbol);
    /// - a CPU form never claims a device rule, and a device form claims only device rules;
    /// - each refused site is refused with a code the backend explains (`rextio explain`);
    /// - a CPU form given a device-lane value inside a tuple operand reaches the device lane
    ///   (refused with one of its codes), so no CPU rule sees a device value, however nested;
    /// - its platform table, when it states one, has every grid cell once, a deferred Windows
    ///   cell, one certifiable cell and reasons in its namespace.
    pub fn backend_invariants(plugin: &dyn crate::plugin::Plugin, forms: &Forms) -> Vec<String> {
        use crate::site::Operand;
        use crate::types::ValueType;
        let mut out = Vec::new();
        let claimed_rule = |site: &ClaimSite| match plugin.claim(site) {
            ClaimOutcome::Claimed { rule_id, .. } => Ok(rule_id),
            other => Err(other),
        };
        for (sites, device) in [(&forms.cpu, false), (&forms.device, true)] {
            for site in sites {
                match claimed_rule(site) {
                    Ok(rule) if plugin.rule_device(&rule).is_some() != device => out.push(format!(
                        "{} form {site:?} claims {} rule {rule}",
                        if device { "a device" } else { "a CPU" },
                        if device { "the CPU" } else { "the device" },
                    )),
                    Ok(_) => {}
                    Err(other) => out.push(format!("accepted form {site:?} is {other:?}")),
                }
            }
        }
        let mut decorated = Vec::new();
        for &(path, called) in &forms.decorators {
            match plugin.native_decorator(path, called) {
                Some(rule) => decorated.push(rule),
                None => out.push(format!(
                    "accepted decorator {path} (called: {called}) is refused"
                )),
            }
        }
        let symbols = plugin.coverage().symbols;
        let mut unique = symbols.clone();
        unique.sort();
        unique.dedup();
        if unique.len() != symbols.len() {
            out.push(format!("coverage symbols repeat: {symbols:?}"));
        }
        let all: Vec<ClaimSite> = forms.cpu.iter().chain(&forms.device).cloned().collect();
        for site in all.iter().filter(|s| s.kind == crate::site::SiteKind::Call) {
            if !symbols.contains(&site.target) {
                out.push(format!(
                    "accepted call form {site:?} has a target outside the coverage symbols"
                ));
            }
        }
        for rule in crate::validate::rules_without_accepted_form(plugin, plugin.rules(), &all) {
            if !decorated.contains(&rule) {
                out.push(format!("native rule {rule} has no accepted form"));
            }
        }
        let explained = |code: &str| plugin.diagnostic_codes().iter().any(|c| c.code == code);
        for site in &forms.rejected {
            match plugin.claim(site) {
                ClaimOutcome::Rejected(d) if explained(&d.code) => {}
                ClaimOutcome::Rejected(d) => out.push(format!(
                    "{site:?} is refused with {}, which has no explanation",
                    d.code
                )),
                other => out.push(format!("refused form {site:?} is {other:?}")),
            }
        }
        if let Some(prefix) = forms.platform_reasons {
            if let Err(why) = super::check_platform_table(&plugin.platforms(), prefix) {
                out.push(format!("the platform table: {why}"));
            }
        }
        if let Some((value, codes)) = &forms.device_lane {
            for site in &forms.cpu {
                let mut nested = site.clone();
                nested.args.push(Operand::typed(ValueType::Tuple(vec![
                    ValueType::Int,
                    value.clone(),
                ])));
                match plugin.claim(&nested) {
                    ClaimOutcome::Rejected(d) if codes.contains(&d.code.as_str()) => {}
                    other => out.push(format!(
                        "{site:?} with a device value inside a tuple operand is {other:?}, not the device lane's refusal"
                    )),
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::Literal;

    #[test]
    fn a_claim_table_reports_each_row_whose_claim_differs() {
        use testing::forms::{call, int};
        let claim = |site: &ClaimSite| match site.target.as_str() {
            "ns.f" => ClaimOutcome::Claimed {
                rule_id: "ns/f-rule".into(),
                result_type: ValueType::Tuple(vec![
                    ValueType::Plugin(TypeKey::new("ns/tensor-f32-2d")),
                    ValueType::Int,
                ]),
            },
            "ns.g" => reject("RXTP-NS-001", "no", "write it otherwise"),
            _ => ClaimOutcome::NotCovered,
        };
        let f = || call("ns.f", vec![int(1)], vec![]);
        let g = || call("ns.g", vec![], vec![]);
        let h = || call("other.h", vec![], vec![]);
        let holds = vec![
            (f(), "f-rule -> tuple[f32-2d, int]"),
            (g(), "RXTP-NS-001"),
            (h(), "not-covered"),
        ];
        assert_eq!(
            testing::mismatches("ns", claim, holds),
            Vec::<String>::new()
        );
        let broken = vec![
            (f(), "f-rule -> f32-2d"),
            (g(), "RXTP-NS-002"),
            (h(), "RXTP-NS-001"),
            (g(), "not-covered"),
        ];
        let bad = testing::mismatches("ns", claim, broken);
        assert_eq!(bad.len(), 4, "{bad:#?}");
        assert!(
            bad[1].ends_with("rejected RXTP-NS-001, expected rejected RXTP-NS-002"),
            "{}",
            bad[1]
        );
    }

    const F32: RankFamily = RankFamily::new(&["p/f32-1d", "p/f32-2d"]);

    #[test]
    fn a_family_maps_ranks_and_keys_both_ways() {
        for r in 1..=2u8 {
            let ty = F32.ty(r).unwrap();
            assert_eq!(F32.rank(ty.plugin_key().unwrap()), Some(r));
            assert_eq!(F32.operand_rank(&Operand::typed(ty)), Some(r));
        }
        assert_eq!(F32.ty(0), None);
        assert_eq!(F32.ty(3), None);
        assert_eq!(F32.rank(&TypeKey::new("p/other")), None);
        assert_eq!(F32.operand_rank(&Operand::literal(Literal::Int(1))), None);
        let site = ClaimSite {
            kind: crate::site::SiteKind::Call,
            target: "f".into(),
            receiver: None,
            args: vec![Operand::typed(ValueType::Tuple(vec![
                ValueType::Int,
                F32.ty(2).unwrap(),
            ]))],
            keywords: vec![],
        };
        assert!(F32.touches(&site), "inside a tuple operand");
        assert!(!RankFamily::new(&["p/x"]).touches(&site));
        assert!(!F32.mixed(&site, "p"));
        let mut with_other = site.clone();
        with_other
            .args
            .push(Operand::typed(ValueType::Tuple(vec![ValueType::Plugin(
                TypeKey::new("p/bool-1d"),
            )])));
        assert!(
            F32.mixed(&with_other, "p"),
            "another type of p inside a tuple"
        );
        assert!(
            !F32.mixed(&with_other, "q"),
            "only the namespace given counts"
        );
    }

    #[test]
    fn a_platform_table_states_each_cell_once() {
        let cell = |os: &str, arch: &str, status| {
            PlatformCell::new(os, arch, status, "p-reason", "detail")
        };
        let mut table = vec![cell("windows", "*", PlatformState::Deferred)];
        for os in PLATFORM_GRID.0 {
            for arch in PLATFORM_GRID.1 {
                table.push(cell(os, arch, PlatformState::Unsupported));
            }
        }
        assert!(check_platform_table(&table, "p")
            .unwrap_err()
            .contains("0 certifiable"));
        table[1].status = PlatformState::Certifiable;
        assert_eq!(check_platform_table(&table, "p"), Ok(()));
        assert!(check_platform_table(&table, "q").is_err());
        table.push(cell("linux", "x86", PlatformState::Unsupported));
        assert!(check_platform_table(&table, "p")
            .unwrap_err()
            .contains("linux/x86"));
    }
}
