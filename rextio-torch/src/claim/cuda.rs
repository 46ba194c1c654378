//! The build-only CUDA lane: `rank2 @ rank2 + rank1 -> relu -> mean(dim=1)` on
//! `cuda:0`, and nothing else. Every site with a `TensorF32Cuda0_*` operand comes here; the four
//! forms of the chain are claimed, every other form (functional spellings, reverse or same-rank
//! addition, mixed ranks, other dims, keywords, scalars, CPU operands) is rejected, so a CUDA
//! value can never reach a CPU rule or a host/device transfer.
//!
//! A claim is only half of the gate: lowering these rules also needs the exact device
//! authorisation (see `lower.rs`), and the host keeps the function on Python (RXT019) unless the
//! target authorised [`crate::CUDA_CAPABILITY`].

use super::{int_literal, Arg, NoPlan, Op, Plan, Src};
use crate::codes;
use crate::entry::Rt;
use crate::rules;
use crate::types::F32_CUDA0;
use rextio_plugin_api::kit::DeviceForms;
use rextio_plugin_api::{ClaimSite, SiteKind};

/// The lane's marker types and the wording of its refusals.
pub(crate) static LANE: DeviceForms = DeviceForms {
    family: F32_CUDA0,
    namespace: crate::PLUGIN_ID,
    prefix: "",
    form_code: codes::CUDA_FORM,
    lane: "the build-only CUDA E2 slice (a @ b, h + bias, h.relu(), h.mean(dim=1) on cuda:0)",
    form_hint: "keep this function in Python, or write the slice exactly: `h = x @ w`, `h = h + b`, `h = h.relu()`, `return h.mean(dim=1)`",
    mix_code: codes::CUDA_DEVICE_MIX,
    mix_message: "this site mixes cuda:0 and CPU tensors; the CUDA E2 slice never transfers between host and device",
    mix_hint: "annotate every tensor of the native function with TensorF32Cuda0_* types, or keep it in Python",
};

fn plan_cuda(rule: &str, rank: u8, f: Rt, args: Vec<Arg>) -> Result<Plan, NoPlan> {
    Ok(Plan {
        rule_id: rule.to_owned(),
        result: LANE.result(rank)?,
        op: Op::Call { f, args },
    })
}

/// Plan a site that touches a `cuda:0` tensor.
pub(crate) fn plan(site: &ClaimSite) -> Result<Plan, NoPlan> {
    LANE.unmixed(site)?;
    match site.kind {
        SiteKind::BinOp => {
            let (Some(a), Some(b), 2) = (site.args.first(), site.args.get(1), site.args.len())
            else {
                return Err(LANE.outside("this operator form"));
            };
            match (site.target.as_str(), LANE.rank(a), LANE.rank(b)) {
                ("@", Some(2), Some(2)) => plan_cuda(
                    rules::CUDA_MATMUL,
                    2,
                    Rt::CudaMatmul,
                    vec![Arg::Tensor(Src::Arg(0)), Arg::Tensor(Src::Arg(1))],
                ),
                ("+", Some(2), Some(1)) => plan_cuda(
                    rules::CUDA_ADD_BIAS,
                    2,
                    Rt::CudaAddBias,
                    vec![Arg::Tensor(Src::Arg(0)), Arg::Tensor(Src::Arg(1))],
                ),
                ("@", _, _) => Err(LANE.outside("matmul of ranks other than 2 x 2 on cuda:0")),
                ("+", _, _) => Err(LANE.outside(
                    "addition other than rank-2 + rank-1 bias (reverse, same-rank or scalar) on cuda:0",
                )),
                (op, _, _) => Err(LANE.outside(format!("operator `{op}` on cuda:0 tensors"))),
            }
        }
        SiteKind::MethodCall => {
            let recv = site.receiver.as_ref().and_then(|r| LANE.rank(r));
            match (site.target.as_str(), recv) {
                ("relu", Some(2)) if site.args.is_empty() && site.keywords.is_empty() => {
                    plan_cuda(
                        rules::CUDA_RELU,
                        2,
                        Rt::CudaRelu,
                        vec![Arg::Tensor(Src::Recv)],
                    )
                }
                ("mean", Some(2))
                    if site.args.is_empty()
                        && site.keywords.len() == 1
                        && site.keywords[0].name == "dim"
                        && int_literal(Some(&site.keywords[0].value)) == Some(1) =>
                {
                    plan_cuda(
                        rules::CUDA_MEAN_DIM1,
                        1,
                        Rt::CudaMeanDim1,
                        vec![Arg::Tensor(Src::Recv)],
                    )
                }
                ("relu", _) => Err(LANE.outside("`.relu()` other than on rank 2 without arguments")),
                ("mean", _) => Err(LANE.outside(
                    "`.mean()` other than `.mean(dim=1)` on rank 2 (keyword dim, literal 1, no keepdim)",
                )),
                (m, _) => Err(LANE.outside(format!("tensor method `.{m}()` on cuda:0"))),
            }
        }
        SiteKind::Call => Err(LANE.outside(format!(
            "the call `{}` (functional spellings are not part of the slice)",
            site.target
        ))),
        SiteKind::Attribute => Err(LANE.outside(format!("attribute `.{}`", site.target))),
        SiteKind::Compare => Err(LANE.outside("a comparison")),
    }
}
