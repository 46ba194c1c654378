//! The claim side of a build-only device lane: which sites it owns, and its two refusals.
//!
//! A device lane claims a few exact forms on its marker types and refuses everything else that
//! touches them, so a device value never reaches a CPU rule or a host/device copy. What differs
//! between backends is only wording and codes; [`DeviceForms`] holds those, and its methods are
//! the checks every lane's planner makes.

use crate::kit::{reject, RankFamily};
use crate::site::{ClaimOutcome, ClaimSite, Operand};
use crate::types::ValueType;

/// A device lane's marker family and the codes and texts of its refusals.
#[derive(Debug, Clone, Copy)]
pub struct DeviceForms {
    /// The lane's marker types.
    pub family: RankFamily,
    /// The backend's type namespace: its other types in a lane site are host values.
    pub namespace: &'static str,
    /// What starts every message of the backend (`"rextio-tensorflow: "`, or empty).
    pub prefix: &'static str,
    /// The code of a form outside the lane.
    pub form_code: &'static str,
    /// What a form is outside of: `"<what> is outside <lane>"`.
    pub lane: &'static str,
    /// The suggestion with a form outside the lane.
    pub form_hint: &'static str,
    /// The code of a site that mixes the lane's values with host values.
    pub mix_code: &'static str,
    /// The message of such a site.
    pub mix_message: &'static str,
    /// The suggestion with such a site.
    pub mix_hint: &'static str,
}

impl DeviceForms {
    /// Whether any operand of `site` (at any depth, tuples included) is a value of the lane:
    /// such a site is the lane's to plan or refuse, never a CPU rule's.
    pub fn owns(&self, site: &ClaimSite) -> bool {
        self.family.touches(site)
    }

    /// The lane rank of a non-literal operand.
    pub fn rank(&self, op: &Operand) -> Option<u8> {
        self.family.operand_rank(op)
    }

    /// The refusal of `what` as outside the lane.
    pub fn outside(&self, what: impl Into<String>) -> ClaimOutcome {
        reject(
            self.form_code,
            format!("{}{} is outside {}", self.prefix, what.into(), self.lane),
            self.form_hint,
        )
    }

    /// The refusal of a site holding host values next to the lane's, if it does.
    pub fn unmixed(&self, site: &ClaimSite) -> Result<(), ClaimOutcome> {
        if self.family.mixed(site, self.namespace) {
            return Err(reject(
                self.mix_code,
                format!("{}{}", self.prefix, self.mix_message),
                self.mix_hint,
            ));
        }
        Ok(())
    }

    /// The lane type of rank `rank` (a result), or the refusal of that rank.
    pub fn result(&self, rank: u8) -> Result<ValueType, ClaimOutcome> {
        self.family
            .ty(rank)
            .ok_or_else(|| self.outside("a result rank"))
    }
}

#[cfg(test)]
mod tests {
    use super::DeviceForms;
    use crate::kit::RankFamily;
    use crate::site::{ClaimOutcome, ClaimSite, Operand, SiteKind};
    use crate::types::{TypeKey, ValueType};

    const LANE: DeviceForms = DeviceForms {
        family: RankFamily::new(&["ns/Dev1", "ns/Dev2"]),
        namespace: "ns",
        prefix: "ns: ",
        form_code: "NS-1",
        lane: "the lane (f on dev)",
        form_hint: "write f",
        mix_code: "NS-2",
        mix_message: "this site mixes dev and host values",
        mix_hint: "keep it in Python",
    };

    fn value(key: &str) -> Operand {
        Operand::plugin(key)
    }

    fn tuple(keys: &[&str]) -> Operand {
        Operand::typed(ValueType::Tuple(
            keys.iter()
                .map(|k| ValueType::Plugin(TypeKey::new(*k)))
                .collect(),
        ))
    }

    fn site(args: Vec<Operand>) -> ClaimSite {
        ClaimSite {
            kind: SiteKind::Call,
            target: "f".into(),
            receiver: None,
            args,
            keywords: vec![],
        }
    }

    fn refusal(o: ClaimOutcome) -> (String, String) {
        match o {
            ClaimOutcome::Rejected(d) => (d.code.clone(), d.message.clone()),
            other => panic!("not a refusal: {other:?}"),
        }
    }

    #[test]
    fn a_lane_owns_its_values_anywhere_and_refuses_them_mixed_with_host_values() {
        let dev = site(vec![value("ns/Dev2"), value("ns/Dev1")]);
        assert!(LANE.owns(&dev) && LANE.unmixed(&dev).is_ok());
        let nested = site(vec![tuple(&["ns/Host", "ns/Dev1"])]);
        assert!(LANE.owns(&nested));
        assert_eq!(
            refusal(LANE.unmixed(&nested).unwrap_err()),
            (
                "NS-2".into(),
                "ns: this site mixes dev and host values".into()
            )
        );
        // Another backend's values are not this backend's host values.
        let foreign = site(vec![value("other/T"), value("ns/Dev1")]);
        assert!(LANE.unmixed(&foreign).is_ok());
        assert!(!LANE.owns(&site(vec![value("ns/Host")])));
        assert_eq!(LANE.rank(&value("ns/Dev2")), Some(2));
        assert_eq!(LANE.rank(&value("ns/Host")), None);
    }

    #[test]
    fn a_lane_states_what_is_outside_it_and_its_result_types() {
        assert_eq!(
            refusal(LANE.outside("`g`")),
            (
                "NS-1".into(),
                "ns: `g` is outside the lane (f on dev)".into()
            )
        );
        assert_eq!(
            LANE.result(1).unwrap(),
            ValueType::Plugin(TypeKey::new("ns/Dev1"))
        );
        assert_eq!(
            refusal(LANE.result(3).unwrap_err()),
            (
                "NS-1".into(),
                "ns: a result rank is outside the lane (f on dev)".into()
            )
        );
    }
}
