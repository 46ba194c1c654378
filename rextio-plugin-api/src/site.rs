//! Claim sites and claim outcomes.

use crate::diagnostic::Diagnostic;
use crate::types::{TypeKey, ValueType};
use serde::{Deserialize, Serialize};

/// The [`SiteKind::Call`] target of a unary minus on a plugin value: the host offers `-t` as the
/// call `operator.neg(t)` with the one operand (Python defines `-t` as that call), as it offers
/// `len(t)` and `abs(t)` as `builtins.len` and `builtins.abs`. A plugin that does not know the
/// target answers `NotCovered` and the function stays on Python.
pub const NEG_TARGET: &str = "operator.neg";

/// What syntactic form a site has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SiteKind {
    /// `target(args...)` where target resolves to a dotted path.
    Call,
    /// `receiver.method(args...)`.
    MethodCall,
    /// `left <op> right`; target is the operator (`+`, `@`, ...).
    BinOp,
    /// `left <cmp> right`.
    Compare,
    /// `receiver.name`, an attribute read (no call); target is the name (`T`, `ndim`,
    /// `shape`). API >= 1.8.
    Attribute,
}

/// A static literal value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Literal {
    /// Integer literal (including negated literals such as `-1`).
    Int(i64),
    /// Float literal.
    Float(f64),
    /// `True` / `False`.
    Bool(bool),
    /// String literal.
    Str(String),
    /// `None`.
    None,
}

/// One operand of a site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Operand {
    /// Static type, or `None` when the host could not resolve it.
    pub ty: Option<ValueType>,
    /// The literal value, when the operand is a static literal.
    pub literal: Option<Literal>,
    /// The host proved the operand is a tensor the function made itself that nothing else
    /// refers to, in eager mode, from here on (API >= 1.15): the result of a site whose rule is
    /// [`crate::Plugin::fresh_result`], written in place, or a local bound to such a
    /// result, read nowhere since, whose name the statement rebinds or the function returns
    /// with this as its only read (`h = F.relu(h, inplace=True)`). Writing into such a tensor
    /// in place is invisible to the caller, so a plugin may lower an in-place form (`inplace=True`)
    /// as the out-of-place one. `false` when not proven, and from older hosts.
    #[serde(default)]
    pub private: bool,
}

impl Operand {
    /// An operand of known type that is not a literal.
    pub fn typed(ty: ValueType) -> Self {
        Self {
            ty: Some(ty),
            literal: None,
            private: false,
        }
    }
    /// An operand of a plugin type.
    pub fn plugin(key: &str) -> Self {
        Self::typed(ValueType::Plugin(TypeKey::new(key)))
    }
    /// A literal operand.
    pub fn literal(lit: Literal) -> Self {
        let ty = match &lit {
            Literal::Int(_) => ValueType::Int,
            Literal::Float(_) => ValueType::Float,
            Literal::Bool(_) => ValueType::Bool,
            Literal::Str(_) => ValueType::Str,
            Literal::None => ValueType::NoneType,
        };
        Self {
            ty: Some(ty),
            literal: Some(lit),
            private: false,
        }
    }
    /// An operand the host could not type.
    pub fn unknown() -> Self {
        Self {
            ty: None,
            literal: None,
            private: false,
        }
    }
    /// The plugin type key, if any.
    pub fn key(&self) -> Option<&TypeKey> {
        self.ty.as_ref().and_then(ValueType::plugin_key)
    }
    /// The operand as diagnostics name it: `int literal 3`, `float literal 0.5`, `None`, `an
    /// unresolved value`, `a float`, ...; a plugin type as `plugin_type` describes it.
    pub fn describe(&self, plugin_type: impl Fn(&TypeKey) -> String) -> String {
        match (&self.literal, &self.ty) {
            (Some(Literal::Int(v)), _) => format!("int literal {v}"),
            (Some(Literal::Float(v)), _) => format!("float literal {v:?}"),
            (Some(Literal::Bool(v)), _) => format!("bool literal {v}"),
            (Some(Literal::Str(s)), _) => format!("str literal {s:?}"),
            (Some(Literal::None), _) => "None".to_owned(),
            (None, None) => "an unresolved value".to_owned(),
            (None, Some(ValueType::Plugin(k))) => plugin_type(k),
            (None, Some(t)) => format!("a {t}"),
        }
    }
    /// The plugin type keys the operand carries: its own, or each element's (recursively) when
    /// it is a tuple.
    pub fn type_keys(&self) -> Vec<&TypeKey> {
        fn walk<'a>(t: &'a ValueType, out: &mut Vec<&'a TypeKey>) {
            match t {
                ValueType::Plugin(k) => out.push(k),
                ValueType::Tuple(items) => items.iter().for_each(|i| walk(i, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        if let Some(t) = &self.ty {
            walk(t, &mut out);
        }
        out
    }
}

/// A keyword argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Keyword {
    /// The keyword name.
    pub name: String,
    /// Its value.
    pub value: Operand,
}

/// A site offered to plugins. It carries no file position: claims must not depend on where the
/// code is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimSite {
    /// Syntactic form.
    pub kind: SiteKind,
    /// Resolved dotted path for calls (`torch.nn.functional.linear`), the method name for method
    /// calls (`relu`), or the operator for binary operations and comparisons (`@`, `+`, `<`).
    pub target: String,
    /// The receiver of a method call.
    pub receiver: Option<Operand>,
    /// Positional operands (for binary operations: left, right).
    pub args: Vec<Operand>,
    /// Keyword operands in source order.
    pub keywords: Vec<Keyword>,
}

impl ClaimSite {
    /// Look up a keyword by name.
    pub fn keyword(&self, name: &str) -> Option<&Operand> {
        self.keywords
            .iter()
            .find(|k| k.name == name)
            .map(|k| &k.value)
    }
    /// Every operand: the receiver, then positional, then keyword values.
    pub fn operands(&self) -> impl Iterator<Item = &Operand> {
        self.receiver
            .iter()
            .chain(self.args.iter())
            .chain(self.keywords.iter().map(|k| &k.value))
    }
    /// Every plugin type key of every operand, the elements of tuple operands included (a list
    /// argument such as `torch.cat([a, b])`): what a device check must look at.
    pub fn nested_type_keys(&self) -> impl Iterator<Item = &TypeKey> {
        self.operands().flat_map(Operand::type_keys)
    }
    /// Every type key mentioned by the site's operands.
    pub fn operand_keys(&self) -> impl Iterator<Item = &TypeKey> {
        self.receiver
            .iter()
            .chain(self.args.iter())
            .chain(self.keywords.iter().map(|k| &k.value))
            .filter_map(Operand::key)
    }
}

/// A plugin's answer to a site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ClaimOutcome {
    /// The plugin can lower this site by `rule_id`, producing `result_type`.
    Claimed {
        /// `<plugin-id>/<rule-name>`.
        rule_id: String,
        /// The static type of the result.
        result_type: ValueType,
    },
    /// Recognised form with a wrong shape: the function stays Python with this diagnostic.
    Rejected(Diagnostic),
    /// Not this plugin's business.
    NotCovered,
}

/// A site together with the claim the registry accepted for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimedSite {
    /// The site as offered.
    pub site: ClaimSite,
    /// The plugin that claimed it.
    pub plugin_id: String,
    /// The rule it claimed with.
    pub rule_id: String,
    /// The claimed result type.
    pub result_type: ValueType,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_type_keys_look_inside_tuples_and_every_operand() {
        let tuple = Operand::typed(ValueType::Tuple(vec![
            ValueType::Plugin(TypeKey::new("p/a")),
            ValueType::Tuple(vec![ValueType::Plugin(TypeKey::new("p/b"))]),
            ValueType::Int,
        ]));
        let site = ClaimSite {
            kind: SiteKind::Call,
            target: "m.f".into(),
            receiver: Some(Operand::plugin("p/r")),
            args: vec![tuple],
            keywords: vec![Keyword {
                name: "k".into(),
                value: Operand::plugin("p/k"),
            }],
        };
        let keys: Vec<&str> = site.nested_type_keys().map(TypeKey::as_str).collect();
        assert_eq!(keys, ["p/r", "p/a", "p/b", "p/k"]);
        let flat: Vec<&str> = site.operand_keys().map(TypeKey::as_str).collect();
        assert_eq!(flat, ["p/r", "p/k"], "operand_keys stays one level");
    }
}
