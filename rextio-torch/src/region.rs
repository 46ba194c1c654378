//! torch's mapping onto the fusion crate: a straight-line region of claims becomes one
//! [`rextio_fusion::Program`] that the runtime runs with the fusion crate's kernels, instead of
//! one libtorch call (and one allocation) per site.
//!
//! [`lower_region`] translates the region's claims, re-planned from their sites, into
//! instructions, or declines the whole region when one of them has no fused form. Every mapping
//! here is one whose kernel has torch's float32 semantics (the kernels are written to eager
//! PyTorch's answers, specials included). At run time the fusion crate plans each call from its
//! shapes and declines what the kernels cannot do; the per-site path then runs, with libtorch's
//! exact errors.

use crate::claim::{self, Arg, Op, Src};
use crate::entry::Rt;
use rextio_fusion::kernels::Binary;
use rextio_fusion::{Ins, ProgramBuf, ReduceF, UnaryF, V};
use rextio_plugin_api::syntax::quote;
use rextio_plugin_api::{LowerError, LoweredRegion, Region, RegionContext, RegionRef, ValueType};

const F32_TYPES: [&str; 2] = [crate::types::F32_CPU_1D, crate::types::F32_CPU_2D];

fn is_f32_cpu(ty: &ValueType) -> bool {
    matches!(ty, ValueType::Plugin(k) if F32_TYPES.contains(&k.0.as_str()))
}

/// The fused form of a unary runtime function outside the unary table (whose rows name their
/// own, [`crate::rules::UnaryOp::fused`]).
fn unary(f: Rt) -> Option<UnaryF> {
    Some(match f {
        Rt::GeluNone => UnaryF::Gelu,
        Rt::Silu => UnaryF::Silu,
        Rt::Elu => UnaryF::Elu,
        _ => return None,
    })
}

fn binary(f: Rt) -> Option<Binary> {
    Some(match f {
        Rt::Add => Binary::Add,
        Rt::Sub => Binary::Sub,
        Rt::Mul => Binary::Mul,
        Rt::Div => Binary::Div,
        _ => return None,
    })
}

fn scalar(f: Rt) -> Option<(Binary, bool)> {
    Some(match f {
        Rt::AddScalar => (Binary::Add, false),
        Rt::SubScalar => (Binary::Sub, false),
        Rt::RsubScalar => (Binary::Sub, true),
        Rt::MulScalar => (Binary::Mul, false),
        Rt::DivScalar => (Binary::Div, false),
        Rt::RdivScalar => (Binary::Div, true),
        _ => return None,
    })
}

fn reduce(f: Rt) -> Option<ReduceF> {
    crate::rules::ReductionOp::of_entry(f).and_then(|r| r.fused)
}

/// Translate a region into a program; `Ok(None)` when some claim has no fused form.
pub fn build(region: &Region) -> Result<Option<ProgramBuf>, LowerError> {
    let n_in = region.inputs.len();
    if n_in + region.nodes.len() > usize::from(V::MAX) {
        return Ok(None);
    }
    let mut uses = Uses {
        tensor: vec![false; n_in],
        scalar: vec![false; n_in],
    };
    let mut ins = Vec::with_capacity(region.nodes.len());
    for (j, node) in region.nodes.iter().enumerate() {
        let c = &node.claimed;
        let mut n = NodeReader {
            region,
            j,
            node,
            uses: &mut uses,
        };
        let plan =
            claim::plan(&c.site).map_err(|_| n.drift("the site no longer matches any rule"))?;
        if plan.rule_id != c.rule_id || plan.result != c.result_type {
            return Err(n.drift("the site now plans to a different rule or result type"));
        }
        if !is_f32_cpu(&c.result_type) && !matches!(plan.op, Op::Argmax { .. }) {
            return Ok(None);
        }
        match n.instruction(&plan.op)? {
            Some(i) => ins.push(i),
            None => return Ok(None),
        }
    }
    let inputs = rextio_fusion::region_inputs(n_in, &uses.tensor, &uses.scalar, |i| {
        region.inputs[i].operand.owned_temp
    });
    Ok(ProgramBuf::assemble(inputs, ins, &region.outputs))
}

/// Which region inputs the program reads as tensors and as scalars.
struct Uses {
    tensor: Vec<bool>,
    scalar: Vec<bool>,
}

/// Node `j` of a region, as [`build`] reads its operands into program values.
struct NodeReader<'a, 'u> {
    region: &'a Region,
    j: usize,
    node: &'a rextio_plugin_api::RegionNode,
    uses: &'u mut Uses,
}

impl NodeReader<'_, '_> {
    /// The node's claim no longer says what its site plans: a bug or a stale claim.
    fn drift(&self, why: &str) -> LowerError {
        LowerError::new(self.node.claimed.rule_id.clone(), why.to_owned())
    }

    /// The program value of a region operand (in range: `build` checked the count).
    fn value(&self, r: RegionRef) -> V {
        match r {
            RegionRef::Input(i) => i as V,
            RegionRef::Node(k) => (self.region.inputs.len() + k) as V,
        }
    }

    /// The region operand a plan operand names: an input, or an earlier node.
    fn pick(&self, s: Src) -> Result<RegionRef, LowerError> {
        let node = self.node;
        let r = match s {
            Src::Recv => node.receiver,
            Src::Arg(i) => node.args.get(i).copied(),
            Src::Kw(i) => node.keywords.get(i).map(|(_, r)| *r),
        };
        let r = r.ok_or_else(|| self.drift("an operand of the plan is missing"))?;
        match r {
            RegionRef::Node(k) if k >= self.j => {
                Err(self.drift("an operand refers to a later node"))
            }
            RegionRef::Input(i) if i >= self.region.inputs.len() => {
                Err(self.drift("an operand refers to a missing input"))
            }
            _ => Ok(r),
        }
    }

    /// A tensor operand's value; `None` unless it is a float32 CPU value.
    fn tensor(&mut self, s: Src) -> Result<Option<V>, LowerError> {
        let r = self.pick(s)?;
        let ty = match r {
            RegionRef::Input(i) => &self.region.inputs[i].ty,
            RegionRef::Node(k) => &self.region.nodes[k].claimed.result_type,
        };
        if !is_f32_cpu(ty) {
            return Ok(None);
        }
        if let RegionRef::Input(i) = r {
            self.uses.tensor[i] = true;
        }
        Ok(Some(self.value(r)))
    }

    /// A scalar operand's value: an input whose type `ok` accepts, else `None`.
    fn scalar(&mut self, s: Src, ok: impl Fn(&ValueType) -> bool) -> Result<Option<V>, LowerError> {
        let RegionRef::Input(si) = self.pick(s)? else {
            return Ok(None);
        };
        if !ok(&self.region.inputs[si].ty) {
            return Ok(None);
        }
        self.uses.scalar[si] = true;
        Ok(Some(si as V))
    }

    /// The instruction of the node's plan; `None` when it has no fused form.
    fn instruction(&mut self, op: &Op) -> Result<Option<Ins>, LowerError> {
        macro_rules! t {
            ($s:expr) => {
                match self.tensor($s)? {
                    Some(v) => v,
                    None => return Ok(None),
                }
            };
        }
        let dim = |d: i64| u8::try_from(d).ok();
        Ok(Some(match *op {
            Op::Linear { x, w, b } => Ins::Linear {
                x: t!(x),
                w: t!(w),
                b: match b {
                    Some(b) => Some(t!(b)),
                    None => None,
                },
            },
            Op::Matmul { a, b } => Ins::Matmul { a: t!(a), b: t!(b) },
            Op::Math { op, t } => match op.row().fused {
                Some(f) => Ins::Unary { f, t: t!(t) },
                None => return Ok(None),
            },
            Op::Unary { f, t } => match unary(f) {
                Some(f) => Ins::Unary { f, t: t!(t) },
                None => return Ok(None),
            },
            Op::Binary { f, a, b, keep } => match binary(f) {
                Some(f) => Ins::Binary {
                    f,
                    a: t!(a),
                    b: t!(b),
                    keep,
                },
                None => return Ok(None),
            },
            Op::Scalar { f, t, s } => {
                let Some((f, rev)) = scalar(f) else {
                    return Ok(None);
                };
                let t = t!(t);
                let Some(s) =
                    self.scalar(s, |ty| matches!(ty, ValueType::Int | ValueType::Float))?
                else {
                    return Ok(None);
                };
                Ins::Scalar { f, t, s, rev }
            }
            Op::Softmax { t, dim: d } => match dim(d) {
                Some(dim) => Ins::Softmax {
                    t: t!(t),
                    dim,
                    log: false,
                    finite_only: false,
                },
                None => return Ok(None),
            },
            Op::Call {
                f: Rt::LogSoftmax,
                ref args,
            } => match args.as_slice() {
                [Arg::Tensor(t), Arg::Int(d)] => match dim(*d) {
                    Some(dim) => Ins::Softmax {
                        t: t!(*t),
                        dim,
                        log: true,
                        finite_only: false,
                    },
                    None => return Ok(None),
                },
                _ => return Ok(None),
            },
            Op::Reduce {
                f,
                t,
                dim: d,
                keepdim,
            } => match (reduce(f), dim(d)) {
                (Some(f), Some(dim)) => Ins::Reduce {
                    f,
                    t: t!(t),
                    dim,
                    keepdim,
                },
                _ => return Ok(None),
            },
            Op::Argmax { t, dim: d, keepdim } => match dim(d) {
                Some(dim) => Ins::Argmax {
                    t: t!(t),
                    dim,
                    keepdim,
                    finite_only: false,
                },
                None => return Ok(None),
            },
            Op::Call {
                f: Rt::LayerNorm,
                ref args,
            } => return self.layer_norm(args),
            // `torch.maximum` / `torch.minimum` stay per-op: on a tie of zeros eager answers the
            // second operand in its vectorised body and the first in its scalar tail, so which
            // zero comes back depends on the element's position and the host's vector width.
            Op::Call {
                f: Rt::Transpose,
                ref args,
            } => match args.as_slice() {
                // A rank-2 swap; a transpose onto itself is a copy the per-site path makes.
                [Arg::Tensor(t), Arg::Int(0), Arg::Int(1)]
                | [Arg::Tensor(t), Arg::Int(1), Arg::Int(0)] => Ins::Transpose { t: t!(*t) },
                _ => return Ok(None),
            },
            Op::Call { .. } => return Ok(None),
        }))
    }

    /// `F.layer_norm(x, (n,), w, b, eps)`: the normalised size and eps reach the program as
    /// scalar inputs (eps omitted when it is the default literal).
    fn layer_norm(&mut self, args: &[Arg]) -> Result<Option<Ins>, LowerError> {
        let [Arg::Tensor(x), Arg::TupleFirst(ns), Arg::OptTensor(w), Arg::OptTensor(b), eps] = args
        else {
            return Ok(None);
        };
        let Some(x) = self.tensor(*x)? else {
            return Ok(None);
        };
        let Some(n) = self.scalar(*ns, |t| t == &ValueType::Tuple(vec![ValueType::Int]))? else {
            return Ok(None);
        };
        let eps = match eps {
            Arg::Float(e) if *e == 1e-5 => None,
            Arg::Scalar(s) => {
                match self.scalar(*s, |t| matches!(t, ValueType::Float | ValueType::Int))? {
                    Some(v) => Some(v),
                    None => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        let (Some(w), Some(b)) = (self.optional_tensor(*w)?, self.optional_tensor(*b)?) else {
            return Ok(None);
        };
        Ok(Some(Ins::LayerNorm { x, n, w, b, eps }))
    }

    /// An optional tensor operand: `Some(None)` when absent, `Some(Some(v))` for a float32 CPU
    /// value, `None` for anything else.
    fn optional_tensor(&mut self, s: Option<Src>) -> Result<Option<Option<V>>, LowerError> {
        match s {
            None => Ok(Some(None)),
            Some(s) => Ok(self.tensor(s)?.map(Some)),
        }
    }
}

/// The plugin's fused lowering of a region (see [`rextio_plugin_api::Plugin::lower_region`]).
pub fn lower_region(
    region: &Region,
    cx: &RegionContext,
) -> Result<Option<LoweredRegion>, LowerError> {
    if cx.target != "cpu" {
        return Ok(None);
    }
    let Some(prog) = build(region)? else {
        return Ok(None);
    };
    // A program that would not fuse anything beyond what one libtorch call does is still worth
    // it: the fused path skips the dispatcher and, for owned operands, the allocation.
    let operands: Vec<_> = region
        .inputs
        .iter()
        .map(|r| {
            let e = &r.operand.expr;
            match r.ty {
                // A one-element int tuple (layer_norm's normalized_shape): its element.
                ValueType::Tuple(_) => quote!((#e).0),
                _ => e.clone(),
            }
        })
        .collect();
    let call = rextio_fusion::render_region_call(&prog, &quote!(::rextio_torch), &operands);
    Ok(Some(LoweredRegion::tokens(call)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region_of(src: &str) -> Region {
        // Build a region from claims of the real claim table.
        use crate::claim::tests::{binop, t1, t2};
        use rextio_plugin_api::{LoweredOperand, RegionInput, RegionNode};
        let claimed = |site: rextio_plugin_api::ClaimSite| {
            rextio_plugin_api::kit::testing::claimed(crate::PLUGIN_ID, &site, claim::claim(&site))
                .expect("claimed")
        };
        let input = |ty: ValueType, owned: bool| RegionInput {
            operand: LoweredOperand::new(quote!(l_v), owned),
            ty,
        };
        let ty = |o: &rextio_plugin_api::Operand| o.ty.clone().unwrap_or(ValueType::Int);
        match src {
            // x - mean (2-D minus 1-D)
            "sub" => Region {
                qualname: "m.f".into(),
                inputs: vec![input(ty(&t2()), false), input(ty(&t1()), false)],
                nodes: vec![RegionNode {
                    claimed: claimed(binop("-", t2(), t1())),
                    receiver: None,
                    args: vec![RegionRef::Input(0), RegionRef::Input(1)],
                    keywords: vec![],
                }],
                outputs: vec![0],
            },
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_region_renders_as_a_static_program_with_a_fallback_option() {
        let region = region_of("sub");
        // One expression (the plugin's own check, as the host's), with the program and call.
        let text = rextio_plugin_api::kit::testing::cpu_region_text(lower_region, &region)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(text.contains("static__RX_PROGRAM"), "{text}");
        assert!(
            text.contains("fused::<1>(&__RX_PROGRAM,&[&(l_v),&(l_v)],&[])?"),
            "{text}"
        );
        // Another target: declined, never CPU code.
        let cx = RegionContext {
            target: crate::CUDA_CAPABILITY.into(),
            device_authorization: None,
        };
        assert_eq!(lower_region(&region, &cx).unwrap(), None);
        // A drifted claim fails closed.
        let mut drifted = region.clone();
        drifted.nodes[0].claimed.rule_id = "rextio-torch/tensor-add-f32-cpu-same-rank".into();
        assert!(lower_region(
            &drifted,
            &RegionContext {
                target: "cpu".into(),
                device_authorization: None
            }
        )
        .is_err());
        // An operand pointing past the inputs fails closed too.
        let mut bad = region;
        bad.nodes[0].args[1] = RegionRef::Input(7);
        assert!(build(&bad).is_err());
    }
}
