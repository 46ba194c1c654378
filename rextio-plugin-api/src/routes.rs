//! Claim dispatch as data: a backend states, row by row, which of its planners answers a site of
//! a given kind and target, instead of writing the dispatch as `match` arms that nothing checks.
//!
//! Where a specific form and a general one share a target (`t.mean(dim=1, keepdim=False)` has
//! its own rule id beside the general static-dim mean), the specific row has a higher priority
//! and a guard saying which sites it takes; a site its guard refuses goes on to the next row.
//! Two rows of one kind, target and priority are an overlap: [`Routes::new`] refuses the table
//! with an error naming both rows, so a backend's unit test fails the moment a row is added
//! that another row already answers.
//!
//! The same table gives a backend's coverage symbols ([`Routes::targets`]), so the documented
//! symbol list cannot drift from what claim dispatch reaches.

use crate::diagnostic::Diagnostic;
use crate::{ClaimOutcome, ClaimSite, SiteKind};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

/// One row: sites of `kind` whose target is `target` are planned by `plan`, if `when` (when
/// given) takes them.
pub struct Route<T> {
    /// The site kind.
    pub kind: SiteKind,
    /// The site's target as the host gives it: a resolved call target (`torch.sqrt`), a method
    /// or attribute name (`sqrt`, `T`), an operator (`+`, `<`).
    pub target: Cow<'static, str>,
    /// Rows of one kind and target are tried from the highest priority down.
    pub priority: u8,
    /// Which sites the row takes; `None` takes every site of its kind and target.
    pub when: Option<fn(&ClaimSite) -> bool>,
    /// The planner.
    pub plan: fn(&ClaimSite) -> T,
    /// The row's name in messages (the planner and the form it stands for).
    pub name: Cow<'static, str>,
}

impl<T> Route<T> {
    /// A row of priority 0 taking every site of its kind and target.
    pub fn new(
        kind: SiteKind,
        target: impl Into<Cow<'static, str>>,
        name: impl Into<Cow<'static, str>>,
        plan: fn(&ClaimSite) -> T,
    ) -> Self {
        Self {
            kind,
            target: target.into(),
            priority: 0,
            when: None,
            plan,
            name: name.into(),
        }
    }

    /// The same row at `priority`, taking only the sites `when` accepts.
    pub fn guarded(mut self, priority: u8, when: fn(&ClaimSite) -> bool) -> Self {
        self.priority = priority;
        self.when = Some(when);
        self
    }
}

impl<T> std::fmt::Debug for Route<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route")
            .field("kind", &self.kind)
            .field("target", &self.target)
            .field("priority", &self.priority)
            .field("guarded", &self.when.is_some())
            .field("name", &self.name)
            .finish()
    }
}

/// Two rows answering the same sites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    /// The earlier row's name.
    pub first: String,
    /// The later row's name.
    pub second: String,
    /// Their kind, target and priority, as text.
    pub at: String,
}

impl std::fmt::Display for Overlap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "claim rows `{}` and `{}` both answer {}; give one a higher priority and a guard",
            self.first, self.second, self.at
        )
    }
}

impl std::error::Error for Overlap {}

/// A checked dispatch table.
#[derive(Debug)]
pub struct Routes<T> {
    rows: Vec<Route<T>>,
    /// Row indices by kind and target, highest priority first.
    index: HashMap<(SiteKind, Cow<'static, str>), Vec<usize>>,
}

impl<T> Routes<T> {
    /// Check `rows` for overlaps and index them.
    pub fn new(rows: Vec<Route<T>>) -> Result<Self, Overlap> {
        let mut index: HashMap<(SiteKind, Cow<'static, str>), Vec<usize>> = HashMap::new();
        for (i, row) in rows.iter().enumerate() {
            let slot = index.entry((row.kind, row.target.clone())).or_default();
            if let Some(&j) = slot.iter().find(|&&j| rows[j].priority == row.priority) {
                return Err(Overlap {
                    first: rows[j].name.to_string(),
                    second: row.name.to_string(),
                    at: format!(
                        "{:?} sites of `{}` at priority {}",
                        row.kind, row.target, row.priority
                    ),
                });
            }
            slot.push(i);
        }
        for slot in index.values_mut() {
            slot.sort_by_key(|&i| std::cmp::Reverse(rows[i].priority));
        }
        Ok(Self { rows, index })
    }

    /// The row that answers `site`: among the rows of its kind and target, the first (highest
    /// priority) whose guard takes it. `None` when no row does.
    pub fn route(&self, site: &ClaimSite) -> Option<&Route<T>> {
        let key = (site.kind, Cow::Borrowed(site.target.as_str()));
        self.index
            .get(&key)?
            .iter()
            .map(|&i| &self.rows[i])
            .find(|r| r.when.is_none_or(|w| w(site)))
    }

    /// Plan `site` with the row that answers it.
    pub fn plan(&self, site: &ClaimSite) -> Option<T> {
        self.route(site).map(|r| (r.plan)(site))
    }

    /// Every target of `kind`, once each, in table order.
    pub fn targets(&self, kind: SiteKind) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for r in self.rows.iter().filter(|r| r.kind == kind) {
            if !out.contains(&r.target.as_ref()) {
                out.push(r.target.as_ref());
            }
        }
        out
    }

    /// Every row, in table order.
    pub fn rows(&self) -> &[Route<T>] {
        &self.rows
    }
}

/// What a backend's planner answers: its plan, or why it has none (a rejection, or
/// `NotCovered`).
pub type Planned<P> = Result<P, ClaimOutcome>;

/// An operator site (a binary operation or a comparison) as `plan` answers it when one of its
/// operands is the backend's (`ours`); otherwise `NotCovered`: operators belong to no backend,
/// and a site of another backend's values is that backend's to take.
pub fn operator<P>(
    site: &ClaimSite,
    ours: impl Fn(&crate::Operand) -> bool,
    plan: impl FnOnce(&ClaimSite) -> Planned<P>,
) -> Planned<P> {
    if site.args.iter().any(ours) {
        plan(site)
    } else {
        Err(ClaimOutcome::NotCovered)
    }
}

/// A backend's claim table as a `static`: its rows are checked and indexed on first use. A table
/// with an overlap claims nothing: every site one of its rows would answer is refused with the
/// backend's `code`, naming both rows (the backend's unit test of [`ClaimTable::routes`] fails
/// first, so no build ships one).
pub struct ClaimTable<P: 'static> {
    backend: &'static str,
    code: &'static str,
    rows: fn() -> Vec<Route<Planned<P>>>,
    built: OnceLock<Result<Routes<Planned<P>>, Overlap>>,
}

impl<P> ClaimTable<P> {
    /// The table of `backend` (its plugin id, for messages) built from `rows`; `code` is the
    /// backend's code for a site it cannot lower.
    pub const fn new(
        backend: &'static str,
        code: &'static str,
        rows: fn() -> Vec<Route<Planned<P>>>,
    ) -> Self {
        Self {
            backend,
            code,
            rows,
            built: OnceLock::new(),
        }
    }

    /// The checked table, or the overlap that makes it unusable.
    pub fn routes(&self) -> &Result<Routes<Planned<P>>, Overlap> {
        self.built.get_or_init(|| Routes::new((self.rows)()))
    }

    /// The overlap adding `extra` to the table's rows would make, naming both rows (`None`
    /// when it joins cleanly): how a backend's test shows its table refusing a second answer.
    pub fn overlap_with(&self, extra: Route<Planned<P>>) -> Option<Overlap> {
        let mut rows = (self.rows)();
        rows.push(extra);
        Routes::new(rows).err()
    }

    /// Plan `site` with the row that answers it (`None` when no row does).
    pub fn plan(&self, site: &ClaimSite) -> Option<Planned<P>> {
        match self.routes() {
            Ok(routes) => routes.plan(site),
            Err(overlap) => Some(Err(ClaimOutcome::Rejected(
                Diagnostic::error(
                    self.code,
                    format!("{}'s claim table is inconsistent: {overlap}", self.backend),
                )
                .with_suggestion(format!(
                    "keep this function in Python and report the {} build",
                    self.backend
                )),
            ))),
        }
    }

    /// Every target of `kind`, once each, in table order (none when the table overlaps).
    pub fn targets(&self, kind: SiteKind) -> Vec<&str> {
        match self.routes() {
            Ok(routes) => routes.targets(kind),
            Err(_) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Operand, ValueType};

    fn site(kind: SiteKind, target: &str, args: usize) -> ClaimSite {
        ClaimSite {
            kind,
            target: target.into(),
            receiver: None,
            args: (0..args).map(|_| Operand::typed(ValueType::Int)).collect(),
            keywords: vec![],
        }
    }

    #[test]
    fn an_operator_site_is_planned_only_when_an_operand_is_ours() {
        let mut ours = site(SiteKind::BinOp, "+", 0);
        ours.args = vec![Operand::typed(ValueType::Int), Operand::plugin("me/T")];
        let is_mine = |o: &Operand| o.key().is_some_and(|k| k.namespace() == "me");
        let planned = |s: &ClaimSite| -> Planned<String> { Ok(s.target.clone()) };
        assert_eq!(operator(&ours, is_mine, planned), Ok("+".to_owned()));
        let mut theirs = ours.clone();
        theirs.args[1] = Operand::plugin("other/T");
        let never = |_: &ClaimSite| -> Planned<String> { panic!("planned another's site") };
        assert_eq!(
            operator(&theirs, is_mine, never),
            Err(ClaimOutcome::NotCovered)
        );
        assert_eq!(
            operator(&site(SiteKind::Compare, "<", 2), is_mine, never),
            Err(ClaimOutcome::NotCovered)
        );
    }

    fn general(_: &ClaimSite) -> &'static str {
        "general"
    }
    fn specific(_: &ClaimSite) -> &'static str {
        "specific"
    }
    fn one_arg(s: &ClaimSite) -> bool {
        s.args.len() == 1
    }

    #[test]
    fn the_highest_priority_row_whose_guard_takes_the_site_answers_it() {
        let routes = Routes::new(vec![
            Route::new(SiteKind::Call, "m.f", "general f", general),
            Route::new(SiteKind::Call, "m.f", "f(x)", specific).guarded(1, one_arg),
            Route::new(SiteKind::MethodCall, "f", "t.f()", general),
        ])
        .unwrap();
        assert_eq!(
            routes.plan(&site(SiteKind::Call, "m.f", 1)),
            Some("specific")
        );
        assert_eq!(
            routes.plan(&site(SiteKind::Call, "m.f", 2)),
            Some("general")
        );
        assert_eq!(
            routes.plan(&site(SiteKind::MethodCall, "f", 0)),
            Some("general")
        );
        assert_eq!(routes.plan(&site(SiteKind::Call, "m.g", 1)), None);
        assert_eq!(routes.plan(&site(SiteKind::MethodCall, "m.f", 1)), None);
        assert_eq!(routes.targets(SiteKind::Call), vec!["m.f"]);
    }

    #[test]
    fn two_rows_of_one_kind_target_and_priority_are_an_error_naming_both() {
        let err = Routes::new(vec![
            Route::new(SiteKind::Call, "m.f", "f, first", general),
            Route::new(SiteKind::Call, "m.g", "g", general),
            Route::new(SiteKind::Call, "m.f", "f, second", specific),
        ])
        .unwrap_err();
        assert_eq!(
            (err.first.as_str(), err.second.as_str()),
            ("f, first", "f, second")
        );
        let text = err.to_string();
        assert!(
            text.contains("`f, first`") && text.contains("`f, second`"),
            "{text}"
        );
        assert!(text.contains("`m.f` at priority 0"), "{text}");
        // Guards do not make two rows of one priority distinct: the table cannot prove the
        // guards disjoint, so it refuses them.
        let err = Routes::new(vec![
            Route::new(SiteKind::Call, "m.f", "a", general).guarded(2, one_arg),
            Route::new(SiteKind::Call, "m.f", "b", specific).guarded(2, one_arg),
        ])
        .unwrap_err();
        assert_eq!((err.first.as_str(), err.second.as_str()), ("a", "b"));
    }

    fn planned_one(_: &ClaimSite) -> Planned<u8> {
        Ok(1)
    }

    fn good_rows() -> Vec<Route<Planned<u8>>> {
        vec![
            Route::new(SiteKind::Call, "m.f", "f", planned_one),
            Route::new(SiteKind::MethodCall, "g", "t.g()", planned_one),
        ]
    }

    fn overlapping_rows() -> Vec<Route<Planned<u8>>> {
        let mut rows = good_rows();
        rows.push(Route::new(SiteKind::Call, "m.f", "f again", planned_one));
        rows
    }

    #[test]
    fn a_claim_table_plans_through_its_rows_and_an_overlapping_one_refuses_naming_both() {
        static GOOD: ClaimTable<u8> = ClaimTable::new("rextio-x", "RXTP-X-001", good_rows);
        assert_eq!(GOOD.plan(&site(SiteKind::Call, "m.f", 1)), Some(Ok(1)));
        assert_eq!(GOOD.plan(&site(SiteKind::Call, "m.h", 1)), None);
        assert_eq!(GOOD.targets(SiteKind::MethodCall), vec!["g"]);

        static BAD: ClaimTable<u8> = ClaimTable::new("rextio-x", "RXTP-X-001", overlapping_rows);
        assert!(BAD.routes().is_err());
        assert!(BAD.targets(SiteKind::Call).is_empty());
        let Some(Err(ClaimOutcome::Rejected(d))) = BAD.plan(&site(SiteKind::Call, "m.f", 1)) else {
            panic!("an overlapping table must refuse the site");
        };
        assert_eq!(d.code, "RXTP-X-001");
        assert!(
            d.message
                .starts_with("rextio-x's claim table is inconsistent"),
            "{}",
            d.message
        );
        assert!(
            d.message.contains("`f`") && d.message.contains("`f again`"),
            "{}",
            d.message
        );
    }
}
