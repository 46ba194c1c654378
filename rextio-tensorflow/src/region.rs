//! TensorFlow's mapping onto the fusion crate: a straight-line region of CPU claims becomes one
//! [`rextio_fusion::Program`] that the runtime runs on the EagerTensors' host memory with the
//! fusion crate's kernels, instead of one `TFE_Execute` per op.
//!
//! Each mapping is one whose kernel answers as TensorFlow 2.21 eager does on this surface, once
//! the kernels run with denormals flushed (as TensorFlow's CPU kernels run; see
//! `runtime/fused.rs`), specials included:
//! - `Relu` is [`UnaryF::ReluPlusZero`] (TensorFlow's relu of `-0` is `+0`, torch's is `-0`);
//! - `Elu` is [`UnaryF::EluExpMinusOne`] (TensorFlow computes `exp(x) - 1`, torch `expm1(x)`);
//! - `BiasAdd` is an add of a row;
//! - `Softmax` and `ArgMax` are the kernels' only on finite operands (TensorFlow's softmax of a
//!   row holding NaN or ±inf, and its argmax over NaN, follow rules of their own): they are
//!   marked `finite_only`, so a call meeting such a row declines after the run and the per-op
//!   path answers, TensorFlow itself;
//! - `Maximum` / `Minimum` stay per-op: on a tie of zeros TensorFlow answers the second operand
//!   in its vectorised body and the first in its scalar tail, so the zero returned depends on the
//!   element's position.
//!
//! Inputs the host proved owned are marked so; the runtime overwrites one in place only when its
//! buffer is provably its own (see `runtime/fused.rs`), since TensorFlow may share one buffer
//! between handles.

use crate::claim::{self, Src};
use crate::entry::Rt;
use crate::types::F32_CPU;
use rextio_fusion::kernels::Binary;
use rextio_fusion::{Ins, ProgramBuf, ReduceF, UnaryF, V};
use rextio_plugin_api::syntax::quote;
use rextio_plugin_api::{LowerError, LoweredRegion, Region, RegionContext, RegionRef, ValueType};

/// The instruction of runtime entry `f` over `ops` (the plan's tensor operands, in order);
/// `None` for an entry the kernels do not run as TFE does (every entry is decided here).
fn instruction(f: Rt, ops: &[V]) -> Option<Ins> {
    let unary = |f: UnaryF| match ops {
        [t] => Some(Ins::Unary { f, t: *t }),
        _ => None,
    };
    let binary = |f: Binary| match ops {
        [a, b] => Some(Ins::Binary {
            f,
            a: *a,
            b: *b,
            keep: false,
        }),
        _ => None,
    };
    let reduce = |f: ReduceF, dim: u8, keepdim: bool| match ops {
        [t] => Some(Ins::Reduce {
            f,
            t: *t,
            dim,
            keepdim,
        }),
        _ => None,
    };
    let softmax = |dim: u8| match ops {
        [t] => Some(Ins::Softmax {
            t: *t,
            dim,
            log: false,
            finite_only: true,
        }),
        _ => None,
    };
    let argmax = |dim: u8| match ops {
        [t] => Some(Ins::Argmax {
            t: *t,
            dim,
            keepdim: false,
            finite_only: true,
        }),
        _ => None,
    };
    match f {
        Rt::Matmul => match ops {
            [a, b] => Some(Ins::Matmul { a: *a, b: *b }),
            _ => None,
        },
        Rt::Transpose => match ops {
            [t] => Some(Ins::Transpose { t: *t }),
            _ => None,
        },
        Rt::Relu => unary(UnaryF::ReluPlusZero),
        Rt::Sigmoid => unary(UnaryF::Sigmoid),
        Rt::Tanh => unary(UnaryF::Tanh),
        Rt::Abs => unary(UnaryF::Abs),
        Rt::Negative => unary(UnaryF::Neg),
        Rt::Square => unary(UnaryF::Square),
        Rt::Exp => unary(UnaryF::Exp),
        Rt::Log => unary(UnaryF::Log),
        Rt::Sqrt => unary(UnaryF::Sqrt),
        // `exp(x) - 1` below zero, as TensorFlow computes it.
        Rt::Elu => unary(UnaryF::EluExpMinusOne),
        Rt::Add | Rt::BiasAdd => binary(Binary::Add),
        Rt::Sub => binary(Binary::Sub),
        Rt::Mul => binary(Binary::Mul),
        Rt::Div => binary(Binary::Div),
        Rt::ReduceMeanAxis0 => reduce(ReduceF::Mean, 0, false),
        Rt::ReduceMeanAxis0Keepdims => reduce(ReduceF::Mean, 0, true),
        Rt::ReduceMeanAxis1 => reduce(ReduceF::Mean, 1, false),
        Rt::ReduceMeanAxis1Keepdims => reduce(ReduceF::Mean, 1, true),
        Rt::ReduceSumAxis0 => reduce(ReduceF::Sum, 0, false),
        Rt::ReduceSumAxis0Keepdims => reduce(ReduceF::Sum, 0, true),
        Rt::ReduceSumAxis1 => reduce(ReduceF::Sum, 1, false),
        Rt::ReduceSumAxis1Keepdims => reduce(ReduceF::Sum, 1, true),
        // Rank 1: its only axis; rank 2: the last.
        Rt::SoftmaxAxis0 => softmax(0),
        Rt::SoftmaxAxis1 => softmax(1),
        Rt::ArgmaxAxis0 => argmax(0),
        Rt::ArgmaxAxis1 => argmax(1),
        // No fused form: maximum and minimum are not mapped onto the kernels, and the CUDA
        // lane's tensors live on GPU:0. The per-op TFE call runs.
        Rt::Maximum
        | Rt::Minimum
        | Rt::CudaMatmul
        | Rt::CudaBiasAdd
        | Rt::CudaRelu
        | Rt::CudaReduceMeanAxis1 => None,
    }
}

fn is_f32_cpu(ty: &ValueType) -> bool {
    (1..=2).any(|r| F32_CPU.ty(r).as_ref() == Some(ty))
}

/// The plugin's fused lowering of a region (see [`rextio_plugin_api::Plugin::lower_region`]).
pub fn lower_region(
    region: &Region,
    _cx: &RegionContext,
) -> Result<Option<LoweredRegion>, LowerError> {
    // Every input is a tensor operand: the TF surface fuses no scalars.
    let operands: Vec<_> = region
        .inputs
        .iter()
        .map(|r| r.operand.expr.clone())
        .collect();
    Ok(build(region)?.map(|prog| {
        LoweredRegion::tokens(rextio_fusion::render_region_call(
            &prog,
            &quote!(::rextio_tensorflow),
            &operands,
        ))
    }))
}

/// Translate a region into a program; `Ok(None)` when some claim has no fused form.
pub fn build(region: &Region) -> Result<Option<ProgramBuf>, LowerError> {
    let n_in = region.inputs.len();
    if n_in + region.nodes.len() > usize::from(V::MAX) {
        return Ok(None);
    }
    let mut ins = Vec::with_capacity(region.nodes.len());
    let mut tensor_in = vec![false; n_in];
    for (j, node) in region.nodes.iter().enumerate() {
        let c = &node.claimed;
        let drift = |why: &str| LowerError::new(c.rule_id.clone(), why.to_owned());
        if c.plugin_id != crate::PLUGIN_ID {
            return Err(drift("the site was claimed by another plugin"));
        }
        if claim::is_cuda_rule(&c.rule_id) {
            return Ok(None);
        }
        let plan =
            claim::plan(&c.site).map_err(|_| drift("the site no longer matches any rule"))?;
        if plan.rule_id != c.rule_id || plan.result != c.result_type {
            return Err(drift(
                "the site now plans to a different rule or result type",
            ));
        }
        if node.receiver.is_some() {
            return Err(drift(
                "method-style receivers are never lowered (functional TensorFlow calls only)",
            ));
        }
        let mut ops = Vec::with_capacity(plan.operands.len());
        for src in &plan.operands {
            let Src::Arg(i) = *src;
            let r = *node
                .args
                .get(i)
                .ok_or_else(|| drift("an operand of the plan is missing"))?;
            let (v, ty) = match r {
                RegionRef::Input(i) if i < n_in => (i, &region.inputs[i].ty),
                RegionRef::Node(k) if k < j => (n_in + k, &region.nodes[k].claimed.result_type),
                _ => return Err(drift("an operand refers to a missing or later value")),
            };
            if !is_f32_cpu(ty) {
                return Ok(None);
            }
            if let RegionRef::Input(i) = r {
                tensor_in[i] = true;
            }
            // In range: checked against V::MAX above.
            ops.push(v as V);
        }
        match instruction(plan.f, &ops) {
            Some(i) => ins.push(i),
            None => return Ok(None),
        }
    }
    let inputs = rextio_fusion::region_inputs(n_in, &tensor_in, &[], |i| {
        region.inputs[i].operand.owned_temp
    });
    Ok(ProgramBuf::assemble(inputs, ins, &region.outputs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::tests::{binop, call, t1, t2};
    use rextio_plugin_api::kit::testing::cpu_region_text;
    use rextio_plugin_api::{
        ClaimSite, ClaimedSite, Literal, LoweredOperand, Operand, RegionInput, RegionNode,
    };

    fn claimed(site: ClaimSite) -> ClaimedSite {
        rextio_plugin_api::kit::testing::claimed(crate::PLUGIN_ID, &site, claim::claim(&site))
            .expect("claimed")
    }

    fn input(ty: ValueType, expr: &str) -> RegionInput {
        let expr = rextio_plugin_api::syntax::format_ident!("{expr}");
        RegionInput {
            ty,
            operand: LoweredOperand::new(quote!(#expr), true),
        }
    }

    fn node(site: ClaimSite, args: Vec<RegionRef>) -> RegionNode {
        RegionNode {
            claimed: claimed(site),
            receiver: None,
            args,
            keywords: vec![],
        }
    }

    #[test]
    fn entries_without_a_kernel_keep_their_region_per_op() {
        assert_eq!(instruction(Rt::Maximum, &[0, 1]), None);
        assert_eq!(instruction(Rt::CudaRelu, &[0]), None);
        assert!(matches!(
            instruction(Rt::Elu, &[0]),
            Some(Ins::Unary {
                f: UnaryF::EluExpMinusOne,
                t: 0
            })
        ));
        assert!(matches!(
            instruction(Rt::Relu, &[0]),
            Some(Ins::Unary {
                f: UnaryF::ReluPlusZero,
                t: 0
            })
        ));
    }

    /// `softmax(relu(x @ w + b))`: one program whose inputs are owned as the host says.
    #[test]
    fn a_dense_head_is_one_program_that_borrows_its_inputs() {
        let f2 = F32_CPU.ty(2).unwrap();
        let f1 = F32_CPU.ty(1).unwrap();
        let region = Region {
            qualname: "m.f".into(),
            inputs: vec![
                input(f2.clone(), "x"),
                input(f2.clone(), "w"),
                input(f1, "b"),
            ],
            nodes: vec![
                node(
                    call("tensorflow.matmul", vec![t2(), t2()], vec![]),
                    vec![RegionRef::Input(0), RegionRef::Input(1)],
                ),
                node(
                    binop("+", t2(), t1()),
                    vec![RegionRef::Node(0), RegionRef::Input(2)],
                ),
                node(
                    call("tensorflow.nn.relu", vec![t2()], vec![]),
                    vec![RegionRef::Node(1)],
                ),
                node(
                    call(
                        "tensorflow.nn.softmax",
                        vec![t2(), Operand::literal(Literal::Int(1))],
                        vec![],
                    ),
                    vec![RegionRef::Node(2)],
                ),
            ],
            outputs: vec![3],
        };
        let prog = build(&region).unwrap().unwrap();
        assert!(prog
            .inputs
            .iter()
            .all(|i| matches!(i, rextio_fusion::Input::Tensor { owned: true, .. })));
        assert_eq!(prog.ins[0], Ins::Matmul { a: 0, b: 1 });
        assert_eq!(
            prog.ins[2],
            Ins::Unary {
                f: UnaryF::ReluPlusZero,
                t: 4
            }
        );
        assert!(matches!(
            prog.ins[3],
            Ins::Softmax {
                dim: 1,
                finite_only: true,
                ..
            }
        ));
        let text = cpu_region_text(lower_region, &region).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            text.contains(
                "::rextio_tensorflow::runtime::fused::<1>(&__RX_PROGRAM,&[&(x),&(w),&(b)],&[])?"
            ),
            "{text}"
        );
        // maximum has no fused form: the whole region stays per op.
        let mut max = region.clone();
        max.nodes[2] = node(
            call("tensorflow.maximum", vec![t2(), t2()], vec![]),
            vec![RegionRef::Node(1), RegionRef::Node(1)],
        );
        assert_eq!(
            cpu_region_text(lower_region, &max),
            Err("the plugin kept the region per op".to_owned())
        );
        // A drifted claim fails closed.
        let mut drifted = region.clone();
        drifted.nodes[1].claimed.rule_id = "rextio-tensorflow/mul-binop-f32-cpu".into();
        assert!(build(&drifted).is_err());
        let mut later = region;
        later.nodes[0].args[0] = RegionRef::Node(2);
        assert!(build(&later).is_err());
    }
}
