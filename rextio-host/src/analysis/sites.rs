//! Calls, method calls and operators on plugin values: each becomes a [`ClaimSite`] offered to
//! the registry, post-order, and its answer becomes an IR site or a diagnostic.

use super::*;

impl Fx<'_> {
    pub(super) fn call(&mut self, c: &ast::ExprCall, at: Span) -> R<Expr> {
        let (kind, target, receiver) = if let Some(path) = self.dotted_global(&c.func) {
            (SiteKind::Call, path, None)
        } else if let ast::Expr::Attribute(a) = c.func.as_ref() {
            let recv = self.expr(&a.value)?;
            (SiteKind::MethodCall, a.attr.as_str().to_owned(), Some(recv))
        } else {
            let what = match c.func.as_ref() {
                ast::Expr::Name(n) => format!("call to `{}`", n.id.as_str()),
                _ => "this call".to_owned(),
            };
            return Err(self.error(
                codes::UNSUPPORTED_EXPRESSION,
                at,
                format!("{what} is not lowered (only operations of enabled plugins are)"),
                None,
            ));
        };
        let mut args = Vec::new();
        let mut failed = false;
        for a in c.arguments.args.iter() {
            if matches!(a, ast::Expr::Starred(_)) {
                return Err(self.error(
                    codes::UNSUPPORTED_EXPRESSION,
                    at,
                    "starred arguments are not lowered",
                    None,
                ));
            }
            match self.expr(a) {
                Ok(v) => args.push(v),
                Err(_) => failed = true,
            }
        }
        let mut keywords = Vec::new();
        let mut opaque = Vec::new();
        for k in c.arguments.keywords.iter() {
            let Some(name) = &k.arg else {
                return Err(self.error(
                    codes::UNSUPPORTED_EXPRESSION,
                    at,
                    "`**` arguments are not lowered",
                    None,
                ));
            };
            // A keyword whose value names a module-level object (`output_type=tf.int32`) is
            // offered as an operand of unknown type, so the plugin can reject the form with its
            // own code; such a site is never lowered.
            if let ast::Expr::Attribute(_) = &k.value {
                if let Some(path) = self.dotted_global(&k.value) {
                    opaque.push((name.as_str().to_owned(), path));
                    continue;
                }
            }
            match self.expr(&k.value) {
                Ok(v) => keywords.push((name.as_str().to_owned(), v)),
                Err(_) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        self.site_with(kind, target, receiver, args, keywords, &opaque, at)
    }

    pub(super) fn operand(e: &Expr) -> Operand {
        match &e.kind {
            ExprKind::Lit(l) => Operand::literal(l.clone()),
            _ => Operand::typed(e.ty.clone()),
        }
    }

    pub(super) fn site(
        &mut self,
        kind: SiteKind,
        target: String,
        receiver: Option<Expr>,
        args: Vec<Expr>,
        keywords: Vec<(String, Expr)>,
        at: Span,
    ) -> R<Expr> {
        self.site_with(kind, target, receiver, args, keywords, &[], at)
    }

    /// [`Fx::site`] with keywords whose values are references to module-level objects
    /// (`(name, dotted path)`), offered with an unknown type and never lowered.
    #[allow(clippy::too_many_arguments)]
    fn site_with(
        &mut self,
        kind: SiteKind,
        target: String,
        receiver: Option<Expr>,
        args: Vec<Expr>,
        keywords: Vec<(String, Expr)>,
        opaque: &[(String, String)],
        at: Span,
    ) -> R<Expr> {
        let site = ClaimSite {
            kind,
            target: target.clone(),
            receiver: receiver.as_ref().map(Self::operand),
            args: args.iter().map(Self::operand).collect(),
            keywords: keywords
                .iter()
                .map(|(n, e)| Keyword {
                    name: n.clone(),
                    value: Self::operand(e),
                })
                .chain(opaque.iter().map(|(n, _)| Keyword {
                    name: n.clone(),
                    value: Operand {
                        ty: None,
                        literal: None,
                    },
                }))
                .collect(),
        };
        let resolution = self.registry.offer(&site, self.enabled);
        if let (Some((name, path)), false) = (
            opaque.first(),
            matches!(resolution, SiteResolution::Rejected { .. }),
        ) {
            // Only the plugin's own rejection is worth more than the host's reason.
            let msg = format!(
                "keyword `{name}={path}` refers to a module-level object, which is not lowered"
            );
            return Err(self.error(codes::UNSUPPORTED_EXPRESSION, at, msg, None));
        }
        match resolution {
            SiteResolution::Claimed {
                plugin_id,
                rule_id,
                result_type,
            } => {
                self.claims.push(ClaimRecord {
                    rule_id: rule_id.clone(),
                    plugin_id: plugin_id.clone(),
                    span: at,
                });
                self.plugins.insert(plugin_id.clone());
                Ok(Expr {
                    ty: result_type.clone(),
                    span: at,
                    kind: ExprKind::Site {
                        claimed: Box::new(ClaimedSite {
                            site,
                            plugin_id,
                            rule_id,
                            result_type,
                        }),
                        receiver: receiver.map(Box::new),
                        args,
                        keywords,
                    },
                })
            }
            SiteResolution::Rejected { diagnostic, .. } => {
                self.diags.push(diagnostic.at(at));
                Err(Failed)
            }
            SiteResolution::ContractViolation { message, .. } => {
                Err(self.error(codes::PLUGIN_CONTRACT, at, message, None))
            }
            SiteResolution::Conflict(claims) => {
                let names: Vec<String> =
                    claims.iter().map(|(p, r)| format!("`{p}` ({r})")).collect();
                let msg = format!(
                    "`{}` is claimed by more than one plugin: {}",
                    describe_site(&site),
                    names.join(" and ")
                );
                Err(self.error(
                    codes::CLAIM_CONFLICT,
                    at,
                    msg,
                    Some("disable one of these plugins in rextio.toml"),
                ))
            }
            SiteResolution::NotCovered => {
                let msg = format!("no enabled plugin claims `{}`", describe_site(&site));
                Err(self.error(
                    codes::UNCLAIMED_SITE,
                    at,
                    msg,
                    Some("see `rextio capabilities` for the native surface"),
                ))
            }
        }
    }
}

/// A short rendering of a site for messages: `torch.softmax(rank-2, dim=int)`.
pub fn describe_site(site: &ClaimSite) -> String {
    let op = |o: &Operand| match (&o.literal, &o.ty) {
        (Some(Literal::Int(v)), _) => v.to_string(),
        (Some(Literal::Float(v)), _) => format!("{v:?}"),
        (Some(Literal::Bool(v)), _) => {
            if *v {
                "True".into()
            } else {
                "False".into()
            }
        }
        (Some(Literal::Str(s)), _) => format!("{s:?}"),
        (Some(Literal::None), _) => "None".into(),
        (None, Some(t)) => t.to_string(),
        (None, None) => "?".into(),
    };
    let mut parts: Vec<String> = site.args.iter().map(op).collect();
    parts.extend(
        site.keywords
            .iter()
            .map(|k| format!("{}={}", k.name, op(&k.value))),
    );
    match site.kind {
        SiteKind::Call => format!("{}({})", site.target, parts.join(", ")),
        SiteKind::MethodCall => {
            let recv = site.receiver.as_ref().map(op).unwrap_or_default();
            format!("({recv}).{}({})", site.target, parts.join(", "))
        }
        SiteKind::BinOp | SiteKind::Compare => {
            let l = site.args.first().map(op).unwrap_or_default();
            let r = site.args.get(1).map(op).unwrap_or_default();
            format!("{l} {} {r}", site.target)
        }
        SiteKind::Attribute => {
            let recv = site.receiver.as_ref().map(op).unwrap_or_default();
            format!("({recv}).{}", site.target)
        }
    }
}
