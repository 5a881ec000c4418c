// The only translation unit that sees both torch and pybind11: keep it small.
#include "python_host.hpp"

#include <ATen/ATen.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace py = pybind11;

namespace flce {

std::string_view name(SubjectStatus s) {
  switch (s) {
    case SubjectStatus::OK: return "ok";
    case SubjectStatus::ERROR: return "error";
    case SubjectStatus::UNSUPPORTED: return "unsupported";
  }
  return "?";
}

std::string Environment::to_json() const {
  nlohmann::ordered_json j{{"python", python}, {"torch", torch}, {"triton", triton}, {"cuda", cuda},
                           {"gpu", gpu},       {"capability", capability}, {"platform", platform}, {"liger", liger}};
  return j.dump();
}

namespace {

at::ScalarType scalar_type(DType d) {
  switch (d) {
    case DType::F32: return at::kFloat;
    case DType::F16: return at::kHalf;
    case DType::BF16: return at::kBFloat16;
    case DType::F64: return at::kDouble;
    case DType::I64: return at::kLong;
  }
  return at::kFloat;
}

DType dtype_of(at::ScalarType s) {
  switch (s) {
    case at::kFloat: return DType::F32;
    case at::kHalf: return DType::F16;
    case at::kBFloat16: return DType::BF16;
    case at::kDouble: return DType::F64;
    default: return DType::I64;
  }
}

// Host values (exact in `d`) -> tensor of dtype d on `device`. The fp32 staging copy is
// the one copy flce makes; GPU-generated inputs replace it in kernels/.
at::Tensor make_tensor(const std::vector<float>& v, std::vector<int64_t> shape, DType d, const at::Device& device) {
  at::Tensor staged = at::from_blob(const_cast<float*>(v.data()), shape, at::kFloat).clone();
  return staged.to(device, scalar_type(d));
}

Tensor64 to_tensor64(const at::Tensor& t) {
  Tensor64 out;
  out.dtype = dtype_of(t.scalar_type());
  for (auto s : t.sizes()) out.shape.push_back(s);
  at::Tensor h = t.detach().to(at::kCPU, at::kDouble).contiguous();
  out.data.assign(h.data_ptr<double>(), h.data_ptr<double>() + h.numel());
  return out;
}

py::object wrap(const at::Tensor& t) { return py::reinterpret_steal<py::object>(THPVariable_Wrap(t)); }

at::Tensor unwrap(const py::handle& o) {
  if (!THPVariable_Check(o.ptr())) throw std::runtime_error("runner returned a non-tensor output");
  return THPVariable_Unpack(o.ptr());
}

std::string str_or(const py::dict& d, const char* k, const std::string& dflt = "") {
  return d.contains(k) && !d[k].is_none() ? py::str(d[k]).cast<std::string>() : dflt;
}

}  // namespace

struct __attribute__((visibility("hidden"))) PythonHost::Impl {
  py::module_ runner;
};

PythonHost::PythonHost() : impl_(std::make_unique<Impl>()) {
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  // Behave as the venv's interpreter: its site-packages, and a real sys.executable so
  // Inductor's compile workers start.
  PyConfig_SetBytesString(&config, &config.program_name, FLCE_PYTHON_EXECUTABLE);
  PyConfig_SetBytesString(&config, &config.executable, FLCE_PYTHON_EXECUTABLE);
  config.install_signal_handlers = 0;  // Ctrl-C and campaign timeouts belong to the host
  config.parse_argv = 0;
  py::initialize_interpreter(&config, 0, nullptr, false);
  try {
    py::module_::import("sys").attr("path").attr("insert")(0, FLCE_SUBJECTS_DIR);
    py::module_::import("torch");
    impl_->runner = py::module_::import("flce_subjects.host_api");
  } catch (const py::error_already_set& e) {
    throw std::runtime_error(std::string("embedded Python: cannot import the subject runner: ") + e.what());
  }
}

PythonHost& PythonHost::instance() {
  // Never destroyed: finalizing CPython with torch loaded is not safe at exit.
  static PythonHost* host = new PythonHost();
  return *host;
}

SubjectResult PythonHost::run(const Case& c, const Inputs& in, const std::string& subject, const std::string& mode,
                              const std::optional<Backend>& backend, const std::string& subject_path) {
  SubjectResult r;
  auto t0 = std::chrono::steady_clock::now();
  try {
    const bool cuda = c.device == Device::CUDA;
    if (cuda && !at::hasCUDA()) {
      r.status = SubjectStatus::UNSUPPORTED;
      r.reason = "case asks for device cuda, but no CUDA device is available here";
      return r;
    }
    at::Device dev = cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
    py::dict tensors;
    auto put = [&](const char* k, const at::Tensor& t) { tensors[k] = wrap(t); };
    if (c.is_op()) {
      const int64_t B = c.batch;
      auto sh = [&](int64_t a, int64_t b) {
        return c.batched() ? std::vector<int64_t>{B, a, b} : std::vector<int64_t>{a, b};
      };
      put("a", make_tensor(in.op_a, sh(c.V, c.BT), c.input_dtype, dev));
      put("b", make_tensor(in.x, sh(c.BT, c.H), c.input_dtype, dev));
      if (c.has_accumulator()) put("c", make_tensor(in.op_c, sh(c.V, c.H), c.op_out_dtype(), dev));
    } else {
      auto flce_tensors = [&](const Inputs& inp, const std::string& suffix) {
        put(("x" + suffix).c_str(), make_tensor(inp.x, {inp.BT, c.H}, c.input_dtype, dev));
        at::Tensor tgt = at::from_blob(const_cast<int64_t*>(inp.target.data()), {inp.BT}, at::kLong).clone().to(dev);
        put(("target" + suffix).c_str(), tgt);
        put(("token_grad" + suffix).c_str(), make_tensor(inp.token_grad, {inp.BT}, DType::F32, dev));
      };
      flce_tensors(in, "");
      for (int64_t bt : c.extra_BT) flce_tensors(make_inputs(c, bt), "@" + std::to_string(bt));
      put("w", make_tensor(in.w, {c.V, c.H}, c.weight_dtype, dev));
      if (c.bias) put("bias", make_tensor(in.bias, {c.V}, c.weight_dtype, dev));
      if (c.ce_weight) put("ce_weight", make_tensor(in.ce_weight, {c.V}, DType::F32, dev));
    }
    py::object case_dict = py::module_::import("json").attr("loads")(to_json(c, -1));
    py::object be = backend ? py::object(py::str(std::string(name(*backend)))) : py::object(py::none());
    py::object sp = subject_path.empty() ? py::object(py::none()) : py::object(py::str(subject_path));
    py::dict res = impl_->runner.attr("run")(case_dict, tensors, subject, mode, be, sp);
    std::string status = str_or(res, "status", "error");
    r.status = status == "ok" ? SubjectStatus::OK : status == "unsupported" ? SubjectStatus::UNSUPPORTED : SubjectStatus::ERROR;
    r.reason = str_or(res, "reason");
    r.subject_version = str_or(res, "subject_version");
    if (res.contains("wall_ms")) r.wall_ms = res["wall_ms"].cast<double>();
    if (res.contains("paths") && !res["paths"].is_none())
      for (auto p : res["paths"]) r.paths.push_back(py::str(p).cast<std::string>());
    if (res.contains("outputs") && !res["outputs"].is_none())
      for (auto item : py::dict(res["outputs"])) {
        if (item.second.is_none()) continue;
        r.outputs[py::str(item.first).cast<std::string>()] = to_tensor64(unwrap(item.second));
      }
    if (res.contains("error") && !res["error"].is_none()) {
      py::dict err = res["error"];
      r.phase = str_or(err, "phase");
      if (err.contains("chain"))
        for (auto link : err["chain"]) {
          py::dict l = py::reinterpret_borrow<py::dict>(link);
          ErrorLink el{str_or(l, "type"), str_or(l, "message"), {}};
          if (l.contains("frames"))
            for (auto f : l["frames"]) el.frames.push_back(py::str(f).cast<std::string>());
          r.chain.push_back(std::move(el));
        }
    }
  } catch (const py::error_already_set& e) {
    // The runner never raises by contract; if it does, report it as a host-side error.
    r.status = SubjectStatus::ERROR;
    r.phase = "host";
    r.chain = {ErrorLink{"flce.RunnerError", e.what(), {}}};
  } catch (const std::exception& e) {
    r.status = SubjectStatus::ERROR;
    r.phase = "host";
    r.chain = {ErrorLink{"flce.HostError", e.what(), {}}};
  }
  if (r.wall_ms == 0)
    r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void PythonHost::reset() { impl_->runner.attr("reset")(); }

std::string PythonHost::torch_version() { return py::str(py::module_::import("torch").attr("__version__")).cast<std::string>(); }

bool PythonHost::cuda_available() { return at::hasCUDA() && at::globalContext().hasCUDA(); }

std::vector<std::string> PythonHost::builtin_subjects() {
  std::vector<std::string> v;
  for (auto s : impl_->runner.attr("builtin_subjects")()) v.push_back(py::str(s).cast<std::string>());
  return v;
}

Environment PythonHost::environment() {
  py::dict d = impl_->runner.attr("environment")();
  Environment e;
  e.python = str_or(d, "python");
  e.torch = str_or(d, "torch");
  e.triton = str_or(d, "triton");
  e.cuda = str_or(d, "cuda");
  e.gpu = str_or(d, "gpu");
  e.capability = str_or(d, "capability");
  e.platform = str_or(d, "platform");
  e.liger = str_or(d, "liger");
  return e;
}

PythonHost::ZeroCopyProbe PythonHost::zero_copy_probe(const std::string& device) {
  ZeroCopyProbe p;
  at::Tensor t = at::arange(1024, at::TensorOptions().dtype(at::kFloat).device(at::Device(device)));
  p.cxx_in = reinterpret_cast<uintptr_t>(t.data_ptr());
  py::object obj = wrap(t);
  p.py_in = obj.attr("data_ptr")().cast<uintptr_t>();
  py::object made = py::module_::import("torch").attr("ones")(2048, py::arg("device") = device);
  p.py_out = made.attr("data_ptr")().cast<uintptr_t>();
  p.cxx_out = reinterpret_cast<uintptr_t>(unwrap(made).data_ptr());
  return p;
}

}  // namespace flce
