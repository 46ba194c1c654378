//! Region formation with the real torch plugin (plugin API 1.9): straight-line runs of claims
//! become one fused program with the per-site statements as its run-time fallback; only values
//! read outside a run leave it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use rextio_host::{Generated, Project, Registry};

/// `src` as `src/m.py` of a project enabling rextio-torch, generated.
fn generated(src: &str) -> Generated {
    let dir = support::project(&[("m.py", src)]);
    let registry = Registry::builder()
        .plugin(rextio_torch::TorchPlugin::new())
        .build()
        .unwrap();
    Project::open(dir.path())
        .unwrap()
        .generate(&registry)
        .unwrap()
}

/// The generated `lib.rs` of `src`, whose every function must route native.
fn generate(src: &str) -> String {
    let g = generated(src);
    let routes = g.check.report.routes();
    assert!(
        routes
            .iter()
            .all(|(_, r)| r == "native-plugin:rextio-torch"),
        "{:#?}",
        g.check.report
    );
    g.crate_.unwrap().lib_rs
}

/// The check report of `src`, as debug text (routes and diagnostics).
fn report(src: &str) -> String {
    format!("{:#?}", generated(src).check.report)
}

const HEADER: &str = "import torch\nimport torch.nn.functional as F\nfrom rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D\n\n\n";

#[test]
fn a_pipeline_with_a_loop_becomes_three_kinds_of_regions() {
    let src = format!(
        "{HEADER}def f(x: TensorF32Cpu2D, mean: TensorF32Cpu1D, w1: TensorF32Cpu2D, b1: TensorF32Cpu1D, w2: TensorF32Cpu2D, rounds: int) -> TensorI64Cpu1D:\n    centered = x - mean\n    normalized = centered / 2.0\n    hidden = F.linear(normalized, w1, b1)\n    for step in range(rounds):\n        if step % 2 == 0:\n            hidden = hidden.relu()\n        else:\n            hidden = hidden.tanh()\n    logits = F.linear(hidden, w2)\n    probs = torch.softmax(logits, dim=1)\n    return torch.argmax(probs, dim=1)\n"
    );
    let rs = generate(&src);
    // Four regions: the prologue, each branch of the loop, the head.
    assert_eq!(rs.matches("static __RX_PROGRAM").count(), 4, "{rs}");
    assert_eq!(
        rs.matches("::rextio_torch::runtime::fused::<").count(),
        4,
        "{rs}"
    );
    // The prologue yields only `hidden` (read by the loop); `centered`/`normalized` stay inside.
    let prologue = rs.split("static __RX_PROGRAM").nth(1).unwrap();
    let prologue = &prologue[..prologue.find("} else {").unwrap()];
    assert!(prologue.contains("l_hidden = __rx_out_1_0;"), "{prologue}");
    assert!(!prologue.contains("l_centered ="), "{prologue}");
    // The scalar divisor is a scalar input of the program.
    assert!(prologue.contains("Input::Scalar"), "{prologue}");
    // In the loop, `hidden` is an owned input (written in place) and the region's output.
    let branch = rs.split("static __RX_PROGRAM").nth(2).unwrap();
    assert!(branch.contains("owned: true"), "{branch}");
    // The head returns from both paths.
    let head = rs.split("static __RX_PROGRAM").nth(4).unwrap();
    assert!(head.contains("return Ok(__rx_out_4_0);"), "{head}");
    // The per-site fallback is still there, once per statement.
    assert_eq!(
        rs.matches("::rextio_torch::runtime::linear(").count(),
        2,
        "{rs}"
    );
    assert_eq!(
        rs.matches("::rextio_torch::runtime::argmax(").count(),
        1,
        "{rs}"
    );
}

#[test]
fn values_read_later_or_twice_are_outputs_and_unsupported_claims_decline() {
    let src = format!(
        "{HEADER}def g(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    a = F.linear(x, w)\n    b = a.relu()\n    c = b * a\n    return c + b\n\n\ndef h(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    y = x.relu()\n    z = torch.maximum(y, x)\n    return z\n"
    );
    let rs = generate(&src);
    // g: one region of four nodes ending in the return; nothing but the result leaves it.
    let g = &rs[rs.find("Native body of `m.g`").unwrap()..];
    let g = &g[..g.find("Native body of `m.h`").unwrap_or(g.len())];
    assert_eq!(g.matches("static __RX_PROGRAM").count(), 1, "{g}");
    assert!(g.contains("runtime::fused::<"), "{g}");
    assert!(!g.contains("l_a = __rx_out"), "{g}");
    // h: torch.maximum has no fused form (eager's answer on a tie of zeros depends on the
    // element's position), so the whole run stays per site.
    let h = &rs[rs.find("Native body of `m.h`").unwrap()..];
    assert!(!h.contains("static __RX_PROGRAM"), "{h}");
    assert!(h.contains("::rextio_torch::runtime::maximum("), "{h}");
}

#[test]
fn a_shape_element_leaf_joins_a_run_only_where_python_reads_it_first() {
    // `(x.shape[-1],)` is read before anything else of the run: the layer norm is in the
    // region, with the normalised size a scalar input evaluated before it.
    let src = format!(
        "{HEADER}def ln(x: TensorF32Cpu2D, w: TensorF32Cpu1D, b: TensorF32Cpu1D, up: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    h = F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)\n    return F.gelu(F.linear(h, up))\n"
    );
    let rs = generate(&src);
    assert_eq!(rs.matches("static __RX_PROGRAM").count(), 1, "{rs}");
    let program = rs.split("static __RX_PROGRAM").nth(1).unwrap();
    assert!(program.contains("Ins::LayerNorm"), "{program}");
    assert!(program.contains("Ins::Linear"), "{program}");
    // Later in a run the same read would be hoisted above a node that may raise first (the
    // linear, on a width mismatch): the run ends before that statement, and the next run starts
    // with it.
    let src = format!(
        "{HEADER}def late(x: TensorF32Cpu2D, w: TensorF32Cpu1D, b: TensorF32Cpu1D, up: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    h = F.linear(x, up)\n    g = F.layer_norm(h, (h.shape[-1],), w, b, 1e-5)\n    return g.relu()\n"
    );
    let rs = generate(&src);
    let programs: Vec<&str> = rs.split("static __RX_PROGRAM").skip(1).collect();
    assert_eq!(programs.len(), 2, "{rs}");
    let ins = |p: &str| p[..p.find("outputs:").unwrap()].to_owned();
    assert!(ins(programs[0]).contains("Ins::Linear"), "{rs}");
    assert!(!ins(programs[0]).contains("Ins::LayerNorm"), "{rs}");
    assert!(ins(programs[1]).contains("Ins::LayerNorm"), "{rs}");
}

const MODULES: &str = "import torch\nimport torch.nn.functional as F\nfrom rextio_torch.types import TensorF32Cpu2D\nfrom torch import nn\n\n\nclass Block(nn.Module):\n    def __init__(self, width: int):\n        super().__init__()\n        self.norm = nn.LayerNorm(width)\n        self.up = nn.Linear(width, width)\n        self.act = nn.GELU()\n\n    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n        return x + self.act(self.up(self.norm(x)))\n\n\n";

/// The module's source with `blocks` built by `blocks_init` and the loop in `forward`.
fn module_src(params: &str, blocks_init: &str) -> String {
    format!(
        "{MODULES}class Net(nn.Module):\n    def __init__(self{params}):\n        super().__init__()\n        self.inp = nn.Linear(4, 8)\n        self.blocks = {blocks_init}\n        self.out = nn.Linear(8, 3)\n\n    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n        h = self.inp(x)\n        for block in self.blocks:\n            h = block(h)\n        return torch.softmax(self.out(h), dim=1)\n"
    )
}

#[test]
fn a_module_list_of_stated_length_runs_as_one_region_with_the_loop_behind_a_length_check() {
    let rs = generate(&module_src(
        ", depth: int = 3",
        "nn.ModuleList([Block(8) for _ in range(depth)])",
    ));
    let body = &rs[rs.find("fn __rx_body_1(").unwrap()..];
    let (then, orelse) = body
        .split_once(".len() as i64) == 3i64)")
        .expect("a length check for the stated depth")
        .1
        .split_once("\n    } else {\n")
        .unwrap();
    // With three blocks: one region from the input layer through the head.
    assert_eq!(then.matches("static __RX_PROGRAM").count(), 1, "{then}");
    assert_eq!(then.matches("Ins::LayerNorm").count(), 3, "{then}");
    assert_eq!(then.matches("Ins::Linear").count(), 5, "{then}");
    assert_eq!(then.matches("list_item(").count(), 3, "{then}");
    // Any other length: the loop as written (input layer, the loop body, the head).
    assert_eq!(orelse.matches("static __RX_PROGRAM").count(), 3, "{orelse}");
    assert_eq!(orelse.matches("list_item(").count(), 0, "{orelse}");

    // A list literal states its length too.
    let rs = generate(&module_src("", "nn.ModuleList([Block(8), Block(8)])"));
    assert!(rs.contains(".len() as i64) == 2i64)"), "{rs}");
}

#[test]
fn a_module_list_of_unknown_length_or_a_loop_that_leaves_early_keeps_its_loop() {
    // The depth is an argument without a default: nothing states the length.
    let rs = generate(&module_src(
        ", depth: int",
        "nn.ModuleList([Block(8) for _ in range(depth)])",
    ));
    assert!(!rs.contains(".len() as i64) =="), "{rs}");
    let body = &rs[rs.find("fn __rx_body_1(").unwrap()..];
    assert_eq!(body.matches("static __RX_PROGRAM").count(), 3, "{body}");
    // More copies than the limit.
    let rs = generate(&module_src(
        "",
        "nn.ModuleList([Block(8) for _ in range(17)])",
    ));
    assert!(!rs.contains(".len() as i64) =="), "{rs}");
    // A loop with `break` is not written out.
    let src = module_src("", "nn.ModuleList([Block(8) for _ in range(2)])").replace(
        "            h = block(h)\n",
        "            h = block(h)\n            if h.shape[0] > 4:\n                break\n",
    );
    let rs = generate(&src);
    assert!(!rs.contains(".len() as i64) =="), "{rs}");
}

#[test]
fn a_module_list_filled_by_appends_in_init_states_its_length_when_they_can_be_counted() {
    // One append at the top level and one per iteration of `range(depth)`: 1 + 3.
    let init = "nn.ModuleList()\n        self.blocks.append(Block(8))\n        for _ in range(depth):\n            self.blocks.append(Block(8))";
    let rs = generate(&module_src(", depth: int = 3", init));
    assert!(rs.contains(".len() as i64) == 4i64)"), "{rs}");
    // An append under a branch is still read (the elements' kind), but not counted.
    let init = "nn.ModuleList([])\n        if depth:\n            self.blocks.append(Block(8))";
    let rs = generate(&module_src(", depth: int = 3", init));
    assert!(!rs.contains(".len() as i64) =="), "{rs}");
    let body = &rs[rs.find("fn __rx_body_1(").unwrap()..];
    assert_eq!(body.matches("static __RX_PROGRAM").count(), 3, "{body}");
}

#[test]
fn enumerate_over_a_module_list_counts_from_its_start_in_both_forms() {
    let src = module_src("", "nn.ModuleList([Block(8), Block(8)])").replace(
        "        for block in self.blocks:\n            h = block(h)\n",
        "        for i, block in enumerate(self.blocks, 1):\n            h = block(h) * i\n",
    );
    let rs = generate(&src);
    let body = &rs[rs.find("fn __rx_body_1(").unwrap()..];
    // The counter starts at 1 before the loop, in the written-out copies and in the loop.
    assert!(body.contains(".len() as i64) == 2i64)"), "{body}");
    assert!(body.matches("= 1i64;").count() >= 2, "{body}");
}

#[test]
fn a_sequential_call_checks_how_many_modules_the_container_holds() {
    let src = format!(
        "{MODULES}class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.head = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), Block(8))\n\n    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n        return self.head(x)\n"
    );
    let rs = generate(&src);
    assert!(rs.contains(" modules, not 3"), "{rs}");
    // `*[Block(w) for _ in range(n)]` with `n` stated is n copies; the count is checked as well.
    let src = src
        .replace("def __init__(self):", "def __init__(self, depth: int = 4):")
        .replace(
            "nn.Sequential(nn.Linear(4, 8), nn.Tanh(), Block(8))",
            "nn.Sequential(*[nn.Linear(4, 8), nn.Tanh()], *[Block(8) for _ in range(depth)])",
        );
    let rs = generate(&src);
    assert!(rs.contains(" modules, not 6"), "{rs}");
}

#[test]
fn statements_that_rebind_a_parameter_join_a_run() {
    // `x = ...` on a parameter: one region (the parameter is read, never written in place).
    let src = format!(
        "{HEADER}def g(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    x = F.linear(x, w)\n    x = x.relu()\n    return x * 2.0\n"
    );
    let rs = generate(&src);
    assert_eq!(rs.matches("static __RX_PROGRAM").count(), 1, "{rs}");
    let program = rs.split("static __RX_PROGRAM").nth(1).unwrap();
    assert!(!program.contains("owned: true"), "{program}");

    // So does a module whose loop rebinds its `forward`'s parameter, written out or not.
    let src = format!(
        "{MODULES}class Stack(nn.Module):\n    def __init__(self, depth: int = 2):\n        super().__init__()\n        self.blocks = nn.ModuleList([Block(8) for _ in range(depth)])\n\n    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n        for block in self.blocks:\n            x = block(x)\n        return x\n"
    );
    let rs = generate(&src);
    let body = &rs[rs.find("fn __rx_body_1(").unwrap()..];
    let (then, orelse) = body
        .split_once(".len() as i64) == 2i64)")
        .unwrap()
        .1
        .split_once("\n    } else {\n")
        .unwrap();
    assert_eq!(then.matches("static __RX_PROGRAM").count(), 1, "{then}");
    assert_eq!(then.matches("Ins::LayerNorm").count(), 2, "{then}");
    assert_eq!(orelse.matches("static __RX_PROGRAM").count(), 1, "{orelse}");
}

#[test]
fn two_module_lists_and_a_state_flag_are_specialised_into_one_region_per_variant() {
    let src = format!("{MODULES}class Two(nn.Module):\n    def __init__(self, flag: bool = True):\n        super().__init__()\n        self.pre = nn.ModuleList([nn.Sequential(nn.Linear(8, 8), nn.ReLU()) for _ in range(3)])\n        self.post = nn.ModuleList([Block(8), Block(8)])\n        self.flag = flag\n\n    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n        h = x\n        for layer in self.pre:\n            h = layer(h)\n            if self.flag:\n                h = h * 0.5\n        for block in self.post:\n            h = block(h)\n        return h\n");
    let rs = generate(&src);
    let body = &rs[rs.find("fn __rx_body_1(").unwrap()..];
    let body = &body[..body.find("\n}\n").unwrap()];
    // The flag first (it cannot change during the call), then both lengths in one condition.
    let (flag_on, flag_off) = body
        .split_once("if lu_self_x2e_flag {")
        .expect("the body is unswitched on the flag")
        .1
        .split_once("\n    } else {\n")
        .unwrap();
    for variant in [flag_on, flag_off] {
        assert!(
            variant.contains(
                "((((lu_self_x2e_pre_x5b__x5d_).len() as i64) == 3i64)\n            && (((lu_self_x2e_post_x5b__x5d_).len() as i64) == 2i64))"
            ),
            "{variant}"
        );
        assert!(!variant.contains("if lu_self_x2e_flag"), "{variant}");
        // Written out: the three Sequential layers and the two blocks are one region.
        let (then, orelse) = variant.split_once("\n        } else {\n").unwrap();
        assert_eq!(then.matches("static __RX_PROGRAM").count(), 1, "{then}");
        assert_eq!(then.matches("Ins::LayerNorm").count(), 2, "{then}");
        assert_eq!(orelse.matches("for __rx_e").count(), 2, "{orelse}");
    }
    // Only the flag-on variant halves.
    let halves = |v: &str| {
        v.split_once("\n        } else {\n")
            .unwrap()
            .0
            .matches("Ins::Scalar")
            .count()
    };
    assert_eq!(halves(flag_on), 3, "{flag_on}");
    assert_eq!(halves(flag_off), 0, "{flag_off}");
}

#[test]
fn an_indexed_module_list_element_is_read_live_and_counting_from_the_end_checks_the_length() {
    let src = module_src(
        ", depth: int = 3",
        "nn.ModuleList([Block(8) for _ in range(depth)])",
    )
    .replace(
        "        return torch.softmax(self.out(h), dim=1)\n",
        "        return torch.softmax(self.out(self.blocks[-1](self.blocks[0](h))), dim=1)\n",
    );
    let rs = generate(&src);
    assert!(rs.contains(" modules, not 3"), "{rs}");
    // Without a stated length, counting from the end is refused; so is an index that is not an
    // int literal, and one past the end of a Sequential.
    let unknown = report(&src.replace("depth: int = 3", "depth: int"));
    assert!(
        unknown.contains("`self.blocks[-1]` counts from the end of a module list whose length `__init__` does not state"),
        "{unknown}"
    );
    let dynamic = report(&src.replace("self.blocks[0]", "self.blocks[self.k]"));
    assert!(
        dynamic.contains("`self.blocks[...]` is indexed by other than an int literal"),
        "{dynamic}"
    );
    let seq = report(
        &src.replace(
            "nn.ModuleList([Block(8) for _ in range(depth)])",
            "nn.Sequential(Block(8), Block(8))",
        )
        .replace("self.blocks[-1]", "self.blocks[2]"),
    );
    assert!(
        seq.contains("`self.blocks[2]` is past the end of its 2 modules"),
        "{seq}"
    );
}

#[test]
fn a_comprehension_over_a_module_list_of_stated_length_is_written_out_as_a_tuple() {
    let src = module_src(
        ", depth: int = 3",
        "nn.ModuleList([Block(8) for _ in range(depth)])",
    )
    .replace(
        "        return torch.softmax(self.out(h), dim=1)\n",
        "        return torch.cat([b(h) for b in self.blocks], dim=1)\n",
    );
    let rs = generate(&src);
    assert!(rs.contains(" modules, not 3"), "{rs}");
    let unknown = report(&src.replace("depth: int = 3", "depth: int"));
    assert!(
        unknown.contains("`self.blocks` is written out once per element here, so it needs the length `__init__` states"),
        "{unknown}"
    );
    // The comprehension's name may not be a local too (`h` would read the local tensor).
    let shadow = report(&src.replace("[b(h) for b in self.blocks]", "[h(x) for h in self.blocks]"));
    assert!(
        shadow.contains("the comprehension's name `h` is also a local of the method"),
        "{shadow}"
    );
}

#[test]
fn a_range_len_loop_indexing_its_list_is_the_module_loop() {
    let src = module_src(
        ", depth: int = 3",
        "nn.ModuleList([Block(8) for _ in range(depth)])",
    )
    .replace(
        "        for block in self.blocks:\n            h = block(h)\n",
        "        for i in range(len(self.blocks)):\n            h = self.blocks[i](h) * (i + 1)\n",
    );
    let rs = generate(&src);
    // Written out at the stated length and looped otherwise, as `for block in self.blocks`.
    assert!(rs.contains(".len() as i64) == 3i64)"), "{rs}");
    // Another list indexed by the loop's variable is refused, naming the form that is lowered.
    let other = report(&src.replace(
        "self.blocks[i](h)",
        "self.blocks[i](h) + self.others[i](h)",
    ).replace(
        "        self.out = nn.Linear(8, 3)\n",
        "        self.out = nn.Linear(8, 3)\n        self.others = nn.ModuleList([Block(8) for _ in range(depth)])\n",
    ));
    assert!(
        other.contains("`self.others[i]` is indexed by a variable, which is lowered only as the element of `for i in range(len(self.others)):`"),
        "{other}"
    );
}

#[test]
fn a_zip_of_module_lists_of_stated_length_is_written_out_pair_by_pair() {
    let src = module_src(", depth: int = 3", "nn.ModuleList([Block(8) for _ in range(depth)])")
        .replace(
            "        self.out = nn.Linear(8, 3)\n",
            "        self.out = nn.Linear(8, 3)\n        self.norms = nn.ModuleList([nn.LayerNorm(8), nn.LayerNorm(8)])\n",
        )
        .replace(
            "        for block in self.blocks:\n            h = block(h)\n",
            "        for norm, block in zip(self.norms, self.blocks):\n            h = block(norm(h))\n",
        );
    let rs = generate(&src);
    let body = &rs[rs.find("fn __rx_body_1(").unwrap()..];
    // Two pairs (zip stops at the shorter list), each list's count checked.
    assert!(rs.contains(" modules, not 3"), "{rs}");
    assert!(rs.contains(" modules, not 2"), "{rs}");
    assert_eq!(body.matches("static __RX_PROGRAM").count(), 1, "{body}");
    // Unknown lengths, or a body that breaks out, are refused with their reasons.
    let unknown = report(&src.replace("depth: int = 3", "depth: int"));
    assert!(
        unknown.contains("`self.blocks` is written out once per element here, so it needs the length `__init__` states"),
        "{unknown}"
    );
    let early = report(&src.replace(
        "            h = block(norm(h))\n",
        "            h = block(norm(h))\n            if h.shape[0] > 4:\n                break\n",
    ));
    assert!(early.contains("may not `break`, `continue`"), "{early}");
}
