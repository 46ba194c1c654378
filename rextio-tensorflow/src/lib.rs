//! # rextio-tensorflow: the TensorFlow backend (under construction).
