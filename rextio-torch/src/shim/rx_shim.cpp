// The boundary shim of rextio-torch's runtime: one call per tensor argument instead of one
// libtorch C API call per property, and output allocation without the dispatcher.
//
// Every entry point catches every C++ exception and reports it through its return code; the
// message is kept per thread for `rx_last_error`. Nothing here throws across the C boundary.

#include <ATen/Context.h>
#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/elu.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/softplus.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/frontend/tracer.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <new>
#include <string>

// Status codes of the entry points (mirrored in shim.rs).
enum {
  RX_OK = 0,
  RX_NOT_A_TENSOR = 1,
  RX_ERROR = 2,
};

namespace {
thread_local std::string rx_error;

void rx_remember(const char* what) { rx_error = what == nullptr ? "" : what; }

// Run `body` (which returns a status code), turning any C++ exception into `RX_ERROR` with its
// message kept for `rx_last_error`.
template <class F>
int rx_guarded(F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    rx_remember(e.what());
  } catch (...) {
    rx_remember("unknown C++ exception");
  }
  return RX_ERROR;
}
// Dead intermediates kept for reuse on this thread (see `rx_release`): a serving loop calls the
// same function with the same shapes, so the tensor a call frees is the one the next call
// allocates. Only tensors nothing else can reach go in; they are freed when the thread ends.
constexpr size_t RX_POOL_SLOTS = 16;
// Larger allocations cost little next to the work on them, and 16 slots of 256 KiB bound what a
// thread holds to 4 MiB.
constexpr size_t RX_POOL_MAX_BYTES = size_t{1} << 18;

struct rx_pool {
  at::Tensor* slots[RX_POOL_SLOTS] = {};
  size_t len = 0;
  ~rx_pool() {
    for (size_t i = 0; i < len; ++i) delete slots[i];
  }
};
thread_local rx_pool pool;

// What a fresh `empty_cpu` tensor looks like: its dispatch keys and its storage's deleter.
struct rx_fresh {
  c10::DispatchKeySet keys;
  c10::DeleterFnPtr deleter;
};

rx_fresh make_fresh(bool inference) {
  c10::InferenceMode mode(inference);
  at::TensorBase t = at::detail::empty_cpu({1}, at::kFloat, false, c10::nullopt);
  return rx_fresh{t.key_set(), t.storage().data_ptr().get_deleter()};
}

// A fresh tensor made inside `torch.inference_mode()` (an inference tensor: no version counter,
// no autograd keys) or outside it (a normal tensor): the two have different dispatch keys.
const rx_fresh& fresh(bool inference) {
  static const rx_fresh normal = make_fresh(false);
  static const rx_fresh in_inference = make_fresh(true);
  return inference ? in_inference : normal;
}

// Whether a handle the runtime is dropping can be reused without anyone noticing: the only
// reference to its TensorImpl (no Python object, no autograd graph, no weak reference) and to
// its storage (no view), a plain contiguous CPU tensor as `empty_cpu` makes them, with memory
// from the CPU allocator.
bool reusable(const at::Tensor& t) {
  if (!t.defined() || t.use_count() != 1 || t.weak_use_count() != 1) return false;
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (impl->autograd_meta() != nullptr || !impl->allow_tensor_metadata_change()) return false;
  if (t.key_set() != fresh(t.is_inference()).keys) return false;
  if (t.layout() != at::kStrided || !t.device().is_cpu() || t.is_neg() || t.is_conj()) {
    return false;
  }
  if (!t.has_storage() || t.storage_offset() != 0 || !t.is_contiguous()) return false;
  const c10::Storage& st = t.storage();
  if (st.use_count() != 1 || !st.resizable()) return false;
  if (st.data_ptr().get_deleter() != fresh(t.is_inference()).deleter) return false;
  const size_t nbytes = st.nbytes();
  return nbytes > 0 && nbytes <= RX_POOL_MAX_BYTES;
}

// A pooled tensor of `scalar_type` whose storage holds `nbytes` (and is not more than twice
// that), reshaped to `shape`; null when none. Only one made in the same mode as now: inside
// `torch.inference_mode()` eager makes inference tensors and outside it normal ones, and an
// inference tensor handed out elsewhere refuses in-place updates (ours and the user's).
at::Tensor* take_pooled(at::IntArrayRef shape, at::ScalarType scalar_type, size_t nbytes) {
  if (nbytes == 0 || nbytes > RX_POOL_MAX_BYTES) return nullptr;
  const bool inference = c10::InferenceMode::is_enabled();
  for (size_t i = pool.len; i-- > 0;) {
    at::Tensor* t = pool.slots[i];
    const size_t have = t->storage().nbytes();
    if (t->scalar_type() != scalar_type || have < nbytes || have > 2 * nbytes) continue;
    if (t->is_inference() != inference) continue;
    pool.slots[i] = pool.slots[--pool.len];
    t->unsafeGetTensorImpl()->set_sizes_contiguous(shape);
    return t;
  }
  return nullptr;
}

// Results handed to Python that a later result of the same size may take over once Python has
// dropped them (`take_lent`): a loop that lets go of each result before, or soon after, the
// next call gets its result in a tensor object Python already allocated, instead of allocating
// a tensor, its storage and its Python object and freeing the previous ones (about 8% of a
// batch-1 call of a small model). The table holds a handle to each result it keeps, which keeps
// the Python object alive after Python drops it (a tensor's C++ references keep its Python
// object), so only small results are kept and only a few; one that can never be taken over
// (an attribute, a weak reference, grad state, a version bump) is let go at the next call.
// Only `rx_wrap_owned` touches the table, with the GIL held; it is never freed (its handles may
// only be dropped with the GIL). CPython 3.12 and later keep weak references and instance
// dictionaries where these checks do not look, so there nothing is kept.
#if PY_VERSION_HEX < 0x030C0000
constexpr bool RX_LEND = true;
#else
constexpr bool RX_LEND = false;
#endif
constexpr size_t RX_LENT_SLOTS = 4;
// A result this size costs little to allocate next to computing it; the table holds at most
// 64 KiB of results Python dropped.
constexpr size_t RX_LENT_MAX_BYTES = size_t{1} << 14;

struct rx_lent_table {
  at::Tensor* slots[RX_LENT_SLOTS];
  size_t next;
};
rx_lent_table lent = {};

// Whether the Python object of a kept result has nothing of its own that a fresh one lacks:
// exactly `torch.Tensor`, with no attributes, weak references or hooks.
bool lent_object_plain(PyObject* obj) {
  if (Py_TYPE(obj) != reinterpret_cast<PyTypeObject*>(THPVariableClass)) return false;
  const THPVariable* var = reinterpret_cast<const THPVariable*>(obj);
  if (var->backward_hooks != nullptr || var->post_accumulate_grad_hooks != nullptr) return false;
#if PY_VERSION_HEX < 0x030C0000
  const Py_ssize_t weak = Py_TYPE(obj)->tp_weaklistoffset;
  if (weak < 0) return false;
  if (weak > 0 && *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + weak) != nullptr) {
    return false;
  }
  PyObject** dict = _PyObject_GetDictPtr(obj);
  return dict == nullptr || *dict == nullptr || PyDict_GET_SIZE(*dict) == 0;
#else
  return false;
#endif
}

// Whether the tensor of a kept result can never look fresh again: grad state, or a version
// counter that moved (an in-place write by the user).
bool lent_tensor_marked(const at::Tensor& t) {
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  return impl->autograd_meta() != nullptr || !impl->allow_tensor_metadata_change() ||
         (impl->version_counter().enabled() && impl->version_counter().current_version() != 0);
}

// Whether the tensor of a kept result Python dropped, not `lent_tensor_marked`, is as a fresh
// result of `type` and `nbytes` bytes made now would be, apart from its values and shape: no
// reference but the table's handle and its Python object's, none to its storage (no view), the
// dispatch keys of a tensor made in the current inference mode, memory from the CPU allocator,
// exactly `nbytes`.
bool lent_tensor_fits(const at::Tensor& t, at::ScalarType type, size_t nbytes) {
  if (t.use_count() != 2 || t.weak_use_count() != 1) return false;
  const bool inference = c10::InferenceMode::is_enabled();
  if (t.is_inference() != inference || t.key_set() != fresh(inference).keys) return false;
  if (t.scalar_type() != type || t.layout() != at::kStrided || !t.device().is_cpu()) return false;
  if (!t.has_storage() || t.storage_offset() != 0) return false;
  const c10::Storage& st = t.storage();
  return st.use_count() == 1 && st.resizable() && st.nbytes() == nbytes &&
         st.data_ptr().get_deleter() == fresh(inference).deleter;
}

// Whether `t`, a result about to be handed to Python, is one the table may hold: small, plain,
// and the only reference to its tensor and storage with no Python object yet (anything else
// would make eager's aliases differ: the same object twice, views sharing memory, or an object
// the user already has).
bool lendable(const at::Tensor& t) {
  if (!RX_LEND || !t.defined() || t.use_count() != 1 || t.weak_use_count() != 1) return false;
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (impl->pyobj_slot()->load_pyobj() != nullptr || t.layout() != at::kStrided ||
      !t.device().is_cpu() || !t.is_contiguous() || !t.has_storage() ||
      t.storage().use_count() != 1) {
    return false;
  }
  const size_t nbytes = t.nbytes();
  return nbytes > 0 && nbytes <= RX_LENT_MAX_BYTES;
}

// A kept result's Python object, with a new reference, now holding the values and shape of `t`
// (`lendable`); null when none fits. Kept results Python dropped that can never fit are taken
// out of the table into `gone` (`*n_gone` of them), for the caller to drop once it is done.
// GIL held.
PyObject* take_lent(const at::Tensor& t, at::Tensor** gone, size_t* n_gone) {
  const size_t nbytes = t.nbytes();
  const at::ScalarType type = t.scalar_type();
  for (size_t i = 0; i < RX_LENT_SLOTS; ++i) {
    at::Tensor* e = lent.slots[i];
    if (e == nullptr) continue;
    PyObject* obj = e->unsafeGetTensorImpl()->pyobj_slot()->load_pyobj();
    if (obj == nullptr || Py_REFCNT(obj) != 1) continue;  // Python still refers to it
    if (!lent_object_plain(obj) || lent_tensor_marked(*e)) {
      gone[(*n_gone)++] = e;
      lent.slots[i] = nullptr;
      continue;
    }
    if (!lent_tensor_fits(*e, type, nbytes)) continue;
    e->unsafeGetTensorImpl()->set_sizes_contiguous(t.sizes());
    std::memcpy(e->mutable_data_ptr(), t.const_data_ptr(), nbytes);
    Py_INCREF(obj);
    return obj;
  }
  return nullptr;
}

// Keep a handle to `obj`, the Python object just made for a `lendable` result, for
// `take_lent`, in a free slot or else the oldest one's; the handle it replaces comes back, for
// the caller to drop once it is done. GIL held.
at::Tensor* lend(PyObject* obj) noexcept {
  at::Tensor* keep = new (std::nothrow) at::Tensor(THPVariable_Unpack(obj));
  if (keep == nullptr) return nullptr;
  size_t at = lent.next;
  for (size_t i = 0; i < RX_LENT_SLOTS; ++i) {
    if (lent.slots[i] == nullptr) {
      at = i;
      break;
    }
  }
  at::Tensor* old = lent.slots[at];
  lent.slots[at] = keep;
  lent.next = (at + 1) % RX_LENT_SLOTS;
  return old;
}
}  // namespace

extern "C" {

// Mirrors `RxMeta` in shim.rs (repr(C)). Sizes beyond the second dimension are not reported
// (`rank` is); `numel` and `contiguous` describe the whole tensor.
struct rx_meta {
  void* data;
  int64_t sizes[2];
  int64_t numel;
  int32_t rank;
  int8_t scalar_type;
  int8_t device_type;
  int8_t device_index;
  int8_t layout;
  uint8_t contiguous;
  uint8_t neg_or_conj;
  uint8_t pad[6];
};

static void rx_fill(const at::Tensor& t, rx_meta* m, bool writable) {
  const auto layout = t.layout();
  const auto device = t.device();
  m->layout = static_cast<int8_t>(layout);
  m->scalar_type = static_cast<int8_t>(t.scalar_type());
  m->device_type = static_cast<int8_t>(device.type());
  m->device_index = static_cast<int8_t>(device.index());
  const int64_t rank = t.dim();
  m->rank = static_cast<int32_t>(rank);
  m->data = nullptr;
  m->sizes[0] = 0;
  m->sizes[1] = 0;
  m->numel = 0;
  m->contiguous = 0;
  m->neg_or_conj = 0;
  if (layout != at::kStrided) return;
  const auto sizes = t.sizes();
  for (int64_t d = 0; d < rank && d < 2; ++d) m->sizes[d] = sizes[d];
  m->numel = t.numel();
  m->contiguous = t.is_contiguous() ? 1 : 0;
  m->neg_or_conj = (t.is_neg() || t.is_conj()) ? 1 : 0;
  // Read-only access must not materialise a copy-on-write storage; a handle the runtime may
  // write through (its own temporaries) asks for the mutable pointer.
  if (!t.has_storage() || m->numel == 0) {
    m->data = nullptr;
  } else if (writable) {
    m->data = t.mutable_data_ptr();
  } else {
    m->data = const_cast<void*>(t.const_data_ptr());
  }
}

// The message of the last failed call on this thread (empty when none); valid until the next
// call into the shim on this thread.
const char* rx_last_error() { return rx_error.c_str(); }

// Borrow the `at::Tensor` a Python tensor holds (no new reference: valid while the object is)
// and describe it. `RX_NOT_A_TENSOR` when it is not a torch.Tensor.
int rx_borrow(PyObject* obj, void** out, rx_meta* meta) {
  *out = nullptr;
  const int rc = rx_guarded([&] {
    if (!THPVariable_Check(obj)) return RX_NOT_A_TENSOR;
    const at::Tensor& t = THPVariable_Unpack(obj);
    rx_fill(t, meta, false);
    *out = const_cast<at::Tensor*>(&t);
    return RX_OK;
  });
  // A failed isinstance check leaves a Python error set; the caller reports its own.
  if (rc == RX_ERROR && PyErr_Occurred()) PyErr_Clear();
  return rc;
}

// What converting a Python tensor (`rx_borrow`, then the fused path's view of it) and admitting
// it into a compiled module method depend on, in `RX_STAMP_WORDS` words each, for `n` objects at
// once: the object's class, its `TensorImpl`, its storage's data address and its offset, its
// first two sizes, its dispatch keys (layout, negation, conjugation, wrappers), and its dtype,
// device, rank, contiguity, emptiness, whether it has a storage, and whether admission refuses
// it (grad recorded, or a running trace). Everything `rx_fill` reads is either here or fixed
// for one `TensorImpl`, so two equal stamps of one object mean the same conversion and
// admission; read with inline accessors only (no describe). `tensor[i]` is 0 (and the stamp
// zero) for an object that is not a torch.Tensor; builtin scalars are told apart without asking
// Python's `isinstance`. Only the first two sizes are kept: the backend converts tensors of rank
// 1 or 2 only (any other rank is refused at conversion and never kept), and strides matter only
// through contiguity (the fused path views contiguous tensors alone; any other is read through
// the live handle at every call).
constexpr int64_t RX_STAMP_WORDS = 8;

// Whether `obj` is a torch.Tensor, and if so each word of its stamp given to `put(index,
// word)` (`grad`: grad mode is on; `tracing`: a trace records). Builtin scalars are told apart
// without asking Python. Inlined into both users: checking compares each word as it is read
// (a stamp written to memory and read back at once stalls on the store).
extern "C++" {
template <class Put>
__attribute__((always_inline)) static inline bool rx_stamp_of(PyObject* obj, bool grad,
                                                              bool tracing, Put&& put) {
  if (obj == Py_None || PyFloat_CheckExact(obj) || PyLong_CheckExact(obj) || PyBool_Check(obj) ||
      PyUnicode_CheckExact(obj) || PyTuple_CheckExact(obj) || !THPVariable_Check(obj)) {
    return false;
  }
  const at::Tensor& t = THPVariable_Unpack(obj);
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  const int64_t rank = impl->dim();
  const c10::IntArrayRef sizes = impl->sizes();
  const c10::Storage& storage = impl->unsafe_storage();
  const c10::Device device = impl->device();
  const bool refuse = (grad && t.requires_grad()) || tracing;
  put(0, reinterpret_cast<uintptr_t>(Py_TYPE(obj)));
  put(1, reinterpret_cast<uintptr_t>(impl));
  put(2, storage ? reinterpret_cast<uintptr_t>(storage.data()) : 0);
  put(3, static_cast<uint64_t>(impl->storage_offset()));
  put(4, rank > 0 ? static_cast<uint64_t>(sizes[0]) : 0);
  put(5, rank > 1 ? static_cast<uint64_t>(sizes[1]) : 0);
  put(6, impl->key_set().raw_repr());
  put(7, uint64_t{static_cast<uint8_t>(t.scalar_type())} |
             (uint64_t{static_cast<uint8_t>(device.type())} << 8) |
             (uint64_t{static_cast<uint8_t>(device.index())} << 16) |
             (uint64_t{static_cast<uint8_t>(std::min<int64_t>(rank, 255))} << 24) |
             (uint64_t{impl->is_contiguous()} << 32) | (uint64_t{impl->numel() == 0} << 33) |
             (uint64_t{static_cast<bool>(storage)} << 34) | (uint64_t{refuse} << 35));
  return true;
}
}  // extern "C++"

// The stamps of `n` objects into `out`; `tensor[i]` is 0 (and the stamp zero) for an object
// that is not a torch.Tensor.
int rx_stamps(PyObject* const* objs, int64_t n, uint64_t* out, uint8_t* tensor) {
  const int rc = rx_guarded([&] {
    const bool grad = c10::GradMode::is_enabled();
    const bool tracing = torch::jit::tracer::isTracing();
    for (int64_t i = 0; i < n; ++i) {
      uint64_t* o = out + RX_STAMP_WORDS * i;
      std::memset(o, 0, RX_STAMP_WORDS * sizeof(uint64_t));
      tensor[i] = rx_stamp_of(objs[i], grad, tracing, [o](int w, uint64_t v) { o[w] = v; });
    }
    return RX_OK;
  });
  if (rc == RX_ERROR && PyErr_Occurred()) PyErr_Clear();
  return rc;
}

// Whether each of `n` objects still has the stamp `rx_stamps` gave it (`expect`, the same
// layout): 1 when all do, 0 when one differs (checked in order, stopping at the first) or
// libtorch failed. A null object is skipped (the caller knows its stamp cannot change). Nothing
// is written: a kept state's check costs the reads alone.
int rx_stamps_match(PyObject* const* objs, int64_t n, const uint64_t* expect) {
  int same = 0;
  const int rc = rx_guarded([&] {
    const bool grad = c10::GradMode::is_enabled();
    const bool tracing = torch::jit::tracer::isTracing();
    for (int64_t i = 0; i < n; ++i) {
      if (objs[i] == nullptr) continue;
      const uint64_t* e = expect + RX_STAMP_WORDS * i;
      uint64_t diff = 0;
      const bool tensor =
          rx_stamp_of(objs[i], grad, tracing, [&diff, e](int w, uint64_t v) { diff |= v ^ e[w]; });
      if (!tensor || diff != 0) return RX_OK;
    }
    same = 1;
    return RX_OK;
  });
  if (rc == RX_ERROR && PyErr_Occurred()) PyErr_Clear();
  return rc == RX_OK ? same : 0;
}

// Describe a tensor handle; `writable` asks for the mutable data pointer.
int rx_describe(void* tensor, rx_meta* meta, int32_t writable) {
  return rx_guarded([&] {
    rx_fill(*static_cast<at::Tensor*>(tensor), meta, writable != 0);
    return RX_OK;
  });
}

// A new contiguous CPU tensor of `scalar_type` (uninitialised) as an owned `at::Tensor*`, and
// its data pointer (null when empty).
int rx_empty_cpu(int32_t rank, const int64_t* sizes, int32_t scalar_type, void** out,
                 void** data) {
  *out = nullptr;
  *data = nullptr;
  return rx_guarded([&] {
    at::IntArrayRef shape(sizes, static_cast<size_t>(rank));
    const auto type = static_cast<at::ScalarType>(scalar_type);
    // Sizes a pooled tensor could take (anything else goes to `empty_cpu` and its errors).
    size_t nbytes = c10::elementSize(type);
    for (const int64_t s : shape) {
      if (s < 0 || (s != 0 && nbytes > RX_POOL_MAX_BYTES / static_cast<size_t>(s))) {
        nbytes = 0;
        break;
      }
      nbytes *= static_cast<size_t>(s);
    }
    at::Tensor* t = take_pooled(shape, type, nbytes);
    if (t == nullptr) {
      at::TensorBase base = at::detail::empty_cpu(shape, type, false, c10::nullopt);
      t = new at::Tensor(std::move(base));
    }
    *data = t->numel() > 0 ? t->mutable_data_ptr() : nullptr;
    *out = t;
    return RX_OK;
  });
}

// The end of an owned `at::Tensor*` handle of the runtime's: kept for `rx_empty_cpu` to reuse
// when nothing else can reach it (see `reusable`), else freed.
void rx_release(void* tensor) {
  at::Tensor* t = static_cast<at::Tensor*>(tensor);
  try {
    if (pool.len < RX_POOL_SLOTS && reusable(*t)) {
      pool.slots[pool.len++] = t;
      return;
    }
  } catch (...) {
    // Not reusable after all: freed below.
  }
  delete t;
}

// Hand an owned `at::Tensor*` to Python: the new reference to its Python object (the handle
// is consumed either way), or null with a Python error set.
PyObject* rx_wrap_owned(void* tensor) {
  at::Tensor* t = static_cast<at::Tensor*>(tensor);
  // Handles taken out of the kept results' table, dropped last: dropping one may free a Python
  // object, which may run Python code (a weak reference's callback), after the table is whole.
  at::Tensor* gone[RX_LENT_SLOTS + 1] = {};
  size_t n_gone = 0;
  PyObject* out = nullptr;
  try {
    const bool lending = lendable(*t);
    if (lending) out = take_lent(*t, gone, &n_gone);
    if (out != nullptr) {
      // The values went to a kept object: the tensor goes back to the pool.
      rx_release(t);
      t = nullptr;
    } else {
      out = THPVariable_Wrap(std::move(*t));
      if (out != nullptr && lending) gone[n_gone++] = lend(out);
    }
  } catch (const std::exception& e) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, e.what());
    out = nullptr;
  } catch (...) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
    out = nullptr;
  }
  delete t;
  for (size_t i = 0; i < n_gone; ++i) delete gone[i];
  return out;
}

// Whether autograd's grad mode is on for this thread (1 enabled, 0 disabled).
int32_t rx_grad_enabled() { return c10::GradMode::is_enabled() ? 1 : 0; }

// Whether `torch.jit.trace` is recording on this thread (1) or not (0): what
// `torch._C._get_tracing_state()` answers with a state or `None`.
int32_t rx_is_tracing() {
  try {
    return torch::jit::tracer::isTracing() ? 1 : 0;
  } catch (...) {
    return 1;  // unknown: the caller takes the path that asks Python
  }
}

// Set autograd's grad mode on this thread; returns the previous mode (1 enabled, 0 disabled).
int32_t rx_set_grad_enabled(int32_t enabled) {
  const bool previous = c10::GradMode::is_enabled();
  c10::GradMode::set_enabled(enabled != 0);
  return previous ? 1 : 0;
}

// Whether eager may hand float32 CPU ops to oneDNN now: libtorch was built with it and the
// program has not turned it off (`torch.backends.mkldnn.enabled = False`). 1 yes, 0 no.
int32_t rx_mkldnn_enabled() {
  try {
    return at::hasMKLDNN() && at::globalContext().userEnabledMkldnn() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

// `at::elu(t, alpha)` and `at::softplus(t, beta, threshold)`: eager's kernels for the forms tch
// exposes only with their default parameters. A new owned `at::Tensor*` goes to `out`.
int rx_elu(void* tensor, double alpha, void** out) {
  *out = nullptr;
  return rx_guarded([&] {
    *out = new at::Tensor(at::elu(*static_cast<at::Tensor*>(tensor), alpha));
    return RX_OK;
  });
}

int rx_softplus(void* tensor, double beta, double threshold, void** out) {
  *out = nullptr;
  return rx_guarded([&] {
    *out = new at::Tensor(at::softplus(*static_cast<at::Tensor*>(tensor), beta, threshold));
    return RX_OK;
  });
}

// Exact GELU of `n` floats as eager computes it on this host, for the runtime's probe of
// host-dependent special values: with `one_by_one`, each value as a one-element tensor (torch's
// own kernel); else all of them as one contiguous tensor (oneDNN where eager would call it).
// Python dispatch keys are excluded, so no Python mode the program has active sees the probe.
int32_t rx_probe_gelu(const float* xs, float* ys, int64_t n, int32_t one_by_one) {
  return rx_guarded([&] {
    c10::InferenceMode inference;
    c10::impl::ExcludeDispatchKeyGuard no_python(
        c10::DispatchKeySet(c10::DispatchKey::Python) |
        c10::DispatchKeySet(c10::DispatchKey::PythonTLSSnapshot));
    auto run = [&](int64_t offset, int64_t len) {
      at::Tensor x(at::detail::empty_cpu({len}, at::kFloat, false, c10::nullopt));
      std::memcpy(x.mutable_data_ptr<float>(), xs + offset, static_cast<size_t>(len) * sizeof(float));
      at::Tensor y = at::gelu(x, "none").contiguous();
      if (y.scalar_type() != at::kFloat || y.numel() != len) {
        throw std::runtime_error("gelu returned an unexpected tensor");
      }
      std::memcpy(ys + offset, y.const_data_ptr<float>(), static_cast<size_t>(len) * sizeof(float));
    };
    if (n <= 0) return RX_OK;
    if (one_by_one != 0) {
      for (int64_t i = 0; i < n; ++i) run(i, 1);
    } else {
      run(0, n);
    }
    return RX_OK;
  });
}

}  // extern "C"
