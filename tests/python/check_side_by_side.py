"""Both backends in one project: each native function matches its own framework's eager."""

import numpy as np
import tensorflow as tf
import torch

from rxcheck import assert_same, is_native, load_eager
from both import ops

eager = load_eager("both.ops")
assert is_native(ops.torch_head) and is_native(ops.tf_head)
assert not is_native(ops.mixed)

x, w, b = torch.randn(4, 6), torch.randn(5, 6), torch.randn(5)
assert_same(ops.torch_head(x, w, b), eager.torch_head(x, w, b), "torch_head")

tx, tw, tb = (tf.constant(a.numpy()) for a in (x, w.t().contiguous(), b))
got, want = ops.tf_head(tx, tw, tb), eager.tf_head(tx, tw, tb)
assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
assert np.allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
# The same computation in both frameworks agrees too.
assert np.allclose(got.numpy(), ops.torch_head(x, w, b).numpy(), rtol=1e-5, atol=1e-5)
print("side_by_side ok")
