//! A program as Rust tokens for a generated crate: a `static` [`Program`] and the call that runs
//! it. Every path is spelled under the path by which the generated crate reaches this crate, and
//! every op is named by an exhaustive match, so a variant the IR gains cannot be rendered by a
//! stale name.

use crate::ir::{Input, Ins, ProgramBuf, ReduceF, UnaryF, V};
use crate::kernels::Binary;
use proc_macro2::TokenStream;
use quote::quote;

fn unary(p: &TokenStream, f: UnaryF) -> TokenStream {
    let v = match f {
        UnaryF::Relu => quote!(Relu),
        UnaryF::ReluPlusZero => quote!(ReluPlusZero),
        UnaryF::Tanh => quote!(Tanh),
        UnaryF::Sigmoid => quote!(Sigmoid),
        UnaryF::Exp => quote!(Exp),
        UnaryF::Log => quote!(Log),
        UnaryF::Neg => quote!(Neg),
        UnaryF::Abs => quote!(Abs),
        UnaryF::Sqrt => quote!(Sqrt),
        UnaryF::Square => quote!(Square),
        UnaryF::Erf => quote!(Erf),
        UnaryF::Gelu => quote!(Gelu),
        UnaryF::Silu => quote!(Silu),
    };
    quote!(#p::UnaryF::#v)
}

fn binary(p: &TokenStream, f: Binary) -> TokenStream {
    let v = match f {
        Binary::Add => quote!(Add),
        Binary::Sub => quote!(Sub),
        Binary::Mul => quote!(Mul),
        Binary::Div => quote!(Div),
        Binary::Max => quote!(Max),
        Binary::Min => quote!(Min),
    };
    quote!(#p::kernels::Binary::#v)
}

fn reduce(p: &TokenStream, f: ReduceF) -> TokenStream {
    let v = match f {
        ReduceF::Sum => quote!(Sum),
        ReduceF::Mean => quote!(Mean),
        ReduceF::Amax => quote!(Amax),
        ReduceF::Amin => quote!(Amin),
    };
    quote!(#p::ReduceF::#v)
}

fn opt(v: Option<V>) -> TokenStream {
    match v {
        Some(v) => quote!(::std::option::Option::Some(#v)),
        None => quote!(::std::option::Option::None),
    }
}

fn ins(p: &TokenStream, i: &Ins) -> TokenStream {
    match *i {
        Ins::Linear { x, w, b } => {
            let b = opt(b);
            quote!(#p::Ins::Linear { x: #x, w: #w, b: #b })
        }
        Ins::Matmul { a, b } => quote!(#p::Ins::Matmul { a: #a, b: #b }),
        Ins::Transpose { t } => quote!(#p::Ins::Transpose { t: #t }),
        Ins::Unary { f, t } => {
            let f = unary(p, f);
            quote!(#p::Ins::Unary { f: #f, t: #t })
        }
        Ins::Binary { f, a, b } => {
            let f = binary(p, f);
            quote!(#p::Ins::Binary { f: #f, a: #a, b: #b })
        }
        Ins::Scalar { f, t, s, rev } => {
            let f = binary(p, f);
            quote!(#p::Ins::Scalar { f: #f, t: #t, s: #s, rev: #rev })
        }
        Ins::Softmax {
            t,
            dim,
            log,
            finite_only,
        } => quote!(#p::Ins::Softmax { t: #t, dim: #dim, log: #log, finite_only: #finite_only }),
        Ins::Reduce { f, t, dim, keepdim } => {
            let f = reduce(p, f);
            quote!(#p::Ins::Reduce { f: #f, t: #t, dim: #dim, keepdim: #keepdim })
        }
        Ins::Argmax {
            t,
            dim,
            keepdim,
            finite_only,
        } => {
            quote!(#p::Ins::Argmax { t: #t, dim: #dim, keepdim: #keepdim, finite_only: #finite_only })
        }
        Ins::LayerNorm { x, n, w, b, eps } => {
            let (w, b, eps) = (opt(w), opt(b), opt(eps));
            quote!(#p::Ins::LayerNorm { x: #x, n: #n, w: #w, b: #b, eps: #eps })
        }
    }
}

fn input(p: &TokenStream, i: &Input) -> TokenStream {
    match *i {
        Input::Tensor { slot, owned } => quote!(#p::Input::Tensor { slot: #slot, owned: #owned }),
        Input::Scalar { slot } => quote!(#p::Input::Scalar { slot: #slot }),
        Input::Unused => quote!(#p::Input::Unused),
    }
}

/// `prog` as a `Program` value, every path under `krate` (the path by which the generated crate
/// reaches this crate, e.g. `::rextio_torch::fusion`).
pub fn render(prog: &ProgramBuf, krate: &TokenStream) -> TokenStream {
    let inputs = prog.inputs.iter().map(|i| input(krate, i));
    let instructions = prog.ins.iter().map(|i| ins(krate, i));
    let outputs = &prog.outputs;
    quote!(#krate::Program {
        inputs: &[#(#inputs),*],
        ins: &[#(#instructions),*],
        outputs: &[#(#outputs),*],
    })
}

/// One fused call: `prog` as a `static` program (see [`render`]) passed to `run` (the backend's
/// runtime entry point, returning `PyResult<Option<[T; N]>>`) with the tensor and scalar
/// argument expressions; the result is an `Option` of an `N`-tuple.
pub fn render_call(
    prog: &ProgramBuf,
    krate: &TokenStream,
    run: &TokenStream,
    tensors: &[TokenStream],
    scalars: &[TokenStream],
) -> TokenStream {
    let n = prog.outputs.len();
    let names: Vec<proc_macro2::Ident> =
        (0..n).map(|i| quote::format_ident!("__rx_o{i}")).collect();
    let program = render(prog, krate);
    quote!({
        static __RX_PROGRAM: #krate::Program = #program;
        #run::<#n>(&__RX_PROGRAM, &[#(#tensors),*], &[#(#scalars),*])?
            .map(|[#(#names),*]| (#(#names,)*))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One program holding every instruction form and every op name.
    fn every_form() -> ProgramBuf {
        let mut ins = vec![
            Ins::Linear {
                x: 0,
                w: 1,
                b: Some(2),
            },
            Ins::Linear {
                x: 0,
                w: 1,
                b: None,
            },
            Ins::Matmul { a: 0, b: 1 },
            Ins::Transpose { t: 1 },
            Ins::Scalar {
                f: Binary::Sub,
                t: 0,
                s: 3,
                rev: true,
            },
            Ins::Softmax {
                t: 0,
                dim: 1,
                log: true,
                finite_only: false,
            },
            Ins::Argmax {
                t: 0,
                dim: 0,
                keepdim: true,
                finite_only: true,
            },
            Ins::LayerNorm {
                x: 0,
                n: 3,
                w: Some(2),
                b: None,
                eps: Some(3),
            },
        ];
        ins.extend(UnaryF::ALL.iter().map(|&f| Ins::Unary { f, t: 0 }));
        ins.extend(Binary::ALL.iter().map(|&f| Ins::Binary { f, a: 0, b: 2 }));
        for f in [ReduceF::Sum, ReduceF::Mean, ReduceF::Amax, ReduceF::Amin] {
            ins.push(Ins::Reduce {
                f,
                t: 0,
                dim: 1,
                keepdim: false,
            });
        }
        ProgramBuf {
            inputs: vec![
                Input::Tensor {
                    slot: 0,
                    owned: true,
                },
                Input::Tensor {
                    slot: 1,
                    owned: false,
                },
                Input::Tensor {
                    slot: 2,
                    owned: false,
                },
                Input::Scalar { slot: 0 },
                Input::Unused,
            ],
            ins,
            outputs: vec![5, 9],
        }
    }

    #[test]
    fn a_program_renders_as_one_expression_naming_each_op_as_the_ir_does() {
        let prog = every_form();
        let krate = quote!(::backend::fusion);
        let text = render(&prog, &krate).to_string().replace(' ', "");
        assert!(text.starts_with("::backend::fusion::Program{"), "{text}");
        // The compiler's own names for the variants (their `Debug`) are what is rendered.
        for f in UnaryF::ALL {
            assert!(
                text.contains(&format!("::backend::fusion::UnaryF::{f:?},")),
                "{f:?}"
            );
        }
        for f in Binary::ALL {
            assert!(
                text.contains(&format!("::backend::fusion::kernels::Binary::{f:?},")),
                "{f:?}"
            );
        }
        for f in [ReduceF::Sum, ReduceF::Mean, ReduceF::Amax, ReduceF::Amin] {
            assert!(
                text.contains(&format!("::backend::fusion::ReduceF::{f:?},")),
                "{f:?}"
            );
        }
        assert!(
            text.contains("Input::Tensor{slot:0u16,owned:true}"),
            "{text}"
        );
        assert!(text.contains("outputs:&[5u16,9u16]"), "{text}");
        assert!(
            text.contains("eps:::std::option::Option::Some(3u16)"),
            "{text}"
        );

        let call = render_call(
            &prog,
            &krate,
            &quote!(::backend::fused),
            &[quote!(&(x))],
            &[quote!((s as f64))],
        );
        let parsed: syn::Expr = syn::parse2(call.clone()).unwrap_or_else(|e| panic!("{e}: {call}"));
        assert!(matches!(parsed, syn::Expr::Block(_)));
        let text = call.to_string().replace(' ', "");
        assert!(
            text.contains("static__RX_PROGRAM:::backend::fusion::Program="),
            "{text}"
        );
        assert!(text.contains("::backend::fused::<2usize>(&__RX_PROGRAM,&[&(x)],&[(sasf64)])?.map(|[__rx_o0,__rx_o1]|(__rx_o0,__rx_o1,))"), "{text}");
    }
}
