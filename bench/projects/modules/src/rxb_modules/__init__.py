"""The `module-mlp` workload of `cargo xtask bench`: an nn.Module classifier and its
free-function twin (`rxb_modules.model`)."""
