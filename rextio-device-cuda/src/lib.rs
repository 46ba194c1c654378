//! # rextio-device-cuda: the CUDA device provider (under construction).
