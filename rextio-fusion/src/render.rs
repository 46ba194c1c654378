//! A program as Rust tokens for a generated crate: a `static` [`Program`] and the call that runs
//! it. Every path is spelled under the path by which the generated crate reaches this crate, and
//! every op is named by an exhaustive match, so a variant the IR gains cannot be rendered by a
//! stale name.

use crate::ir::{Input, Ins, ProgramBuf, ReduceF, UnaryF, V};
use crate::kernels::Binary;
use proc_macro2::{Literal, TokenStream};
use quote::{quote, ToTokens};

/// An integer as an unsuffixed literal: the field it fills gives its type.
struct N(u64);

impl ToTokens for N {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        Literal::u64_unsuffixed(self.0).to_tokens(tokens);
    }
}

fn n(v: impl Into<u64>) -> N {
    N(v.into())
}

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
        UnaryF::Elu => quote!(Elu),
        UnaryF::EluExpMinusOne => quote!(EluExpMinusOne),
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
        Some(v) => {
            let v = n(v);
            quote!(::std::option::Option::Some(#v))
        }
        None => quote!(::std::option::Option::None),
    }
}

fn ins(p: &TokenStream, i: &Ins) -> TokenStream {
    match *i {
        Ins::Linear { x, w, b } => {
            let (x, w, b) = (n(x), n(w), opt(b));
            quote!(#p::Ins::Linear { x: #x, w: #w, b: #b })
        }
        Ins::Matmul { a, b } => {
            let (a, b) = (n(a), n(b));
            quote!(#p::Ins::Matmul { a: #a, b: #b })
        }
        Ins::Transpose { t } => {
            let t = n(t);
            quote!(#p::Ins::Transpose { t: #t })
        }
        Ins::Unary { f, t } => {
            let (f, t) = (unary(p, f), n(t));
            quote!(#p::Ins::Unary { f: #f, t: #t })
        }
        Ins::Binary { f, a, b, keep } => {
            let (f, a, b) = (binary(p, f), n(a), n(b));
            quote!(#p::Ins::Binary { f: #f, a: #a, b: #b, keep: #keep })
        }
        Ins::Scalar { f, t, s, rev } => {
            let (f, t, s) = (binary(p, f), n(t), n(s));
            quote!(#p::Ins::Scalar { f: #f, t: #t, s: #s, rev: #rev })
        }
        Ins::Softmax {
            t,
            dim,
            log,
            finite_only,
        } => {
            let (t, dim) = (n(t), n(dim));
            quote!(#p::Ins::Softmax { t: #t, dim: #dim, log: #log, finite_only: #finite_only })
        }
        Ins::Reduce { f, t, dim, keepdim } => {
            let (f, t, dim) = (reduce(p, f), n(t), n(dim));
            quote!(#p::Ins::Reduce { f: #f, t: #t, dim: #dim, keepdim: #keepdim })
        }
        Ins::Argmax {
            t,
            dim,
            keepdim,
            finite_only,
        } => {
            let (t, dim) = (n(t), n(dim));
            quote!(#p::Ins::Argmax { t: #t, dim: #dim, keepdim: #keepdim, finite_only: #finite_only })
        }
        Ins::LayerNorm {
            x,
            n: size,
            w,
            b,
            eps,
        } => {
            let (x, size, w, b, eps) = (n(x), n(size), opt(w), opt(b), opt(eps));
            quote!(#p::Ins::LayerNorm { x: #x, n: #size, w: #w, b: #b, eps: #eps })
        }
    }
}

fn input(p: &TokenStream, i: &Input) -> TokenStream {
    match *i {
        Input::Tensor { slot, owned } => {
            let slot = n(slot);
            quote!(#p::Input::Tensor { slot: #slot, owned: #owned })
        }
        Input::Scalar { slot } => {
            let slot = n(slot);
            quote!(#p::Input::Scalar { slot: #slot })
        }
        Input::Unused => quote!(#p::Input::Unused),
    }
}

/// `prog` as a `Program` value, every path under `krate` (the path by which the generated crate
/// reaches this crate, e.g. `::rextio_torch::fusion`).
pub fn render(prog: &ProgramBuf, krate: &TokenStream) -> TokenStream {
    let inputs = prog.inputs.iter().map(|i| input(krate, i));
    let instructions = prog.ins.iter().map(|i| ins(krate, i));
    let outputs = prog.outputs.iter().map(|&v| n(v));
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
    let outputs = prog.outputs.len();
    let names: Vec<proc_macro2::Ident> = (0..outputs)
        .map(|i| quote::format_ident!("__rx_o{i}"))
        .collect();
    let count = Literal::usize_unsuffixed(outputs);
    let program = render(prog, krate);
    quote!({
        static __RX_PROGRAM: #krate::Program = #program;
        #run::<#count>(&__RX_PROGRAM, &[#(#tensors),*], &[#(#scalars),*])?
            .map(|[#(#names),*]| (#(#names,)*))
    })
}

/// [`render_call`] for a backend crate at path `backend` that follows the convention of both
/// first-party backends: it re-exports this crate as `fusion` and runs programs with
/// `runtime::fused`. The arguments come from `operands`, one expression per program input in
/// order: a tensor input's is passed by reference, a scalar input's as `f64` (int and float
/// scalars alike), and an unused input's not at all.
pub fn render_region_call(
    prog: &ProgramBuf,
    backend: &TokenStream,
    operands: &[TokenStream],
) -> TokenStream {
    let mut tensors = Vec::new();
    let mut scalars = Vec::new();
    for (input, e) in prog.inputs.iter().zip(operands) {
        match input {
            Input::Tensor { .. } => tensors.push(quote!(&(#e))),
            Input::Scalar { .. } => scalars.push(quote!(((#e) as f64))),
            Input::Unused => {}
        }
    }
    render_call(
        prog,
        &quote!(#backend::fusion),
        &quote!(#backend::runtime::fused),
        &tensors,
        &scalars,
    )
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
        ins.extend(Binary::ALL.iter().map(|&f| Ins::Binary {
            f,
            a: 0,
            b: 2,
            keep: false,
        }));
        ins.push(Ins::Binary {
            f: Binary::Add,
            a: 0,
            b: 2,
            keep: true,
        });
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
        assert!(text.contains("Input::Tensor{slot:0,owned:true}"), "{text}");
        assert!(text.contains("outputs:&[5,9]"), "{text}");
        assert!(
            text.contains("eps:::std::option::Option::Some(3)"),
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
        assert!(text.contains("::backend::fused::<2>(&__RX_PROGRAM,&[&(x)],&[(sasf64)])?.map(|[__rx_o0,__rx_o1]|(__rx_o0,__rx_o1,))"), "{text}");
    }

    #[test]
    fn a_region_call_passes_tensors_by_reference_scalars_as_f64_and_skips_unused_inputs() {
        let prog = every_form();
        let operands = [
            quote!(a),
            quote!(b),
            quote!(c),
            quote!(n.0),
            quote!(never_read),
        ];
        let call = render_region_call(&prog, &quote!(::backend), &operands);
        syn::parse2::<syn::Expr>(call.clone()).unwrap_or_else(|e| panic!("{e}: {call}"));
        let text = call.to_string().replace(' ', "");
        assert!(
            text.contains("static__RX_PROGRAM:::backend::fusion::Program="),
            "{text}"
        );
        assert!(
            text.contains(
                "::backend::runtime::fused::<2>(&__RX_PROGRAM,&[&(a),&(b),&(c)],&[((n.0)asf64)])?"
            ),
            "{text}"
        );
        assert!(!text.contains("never_read"), "{text}");
    }
}
