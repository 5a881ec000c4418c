// Compiled Python bytecode for the interpreters flce starts (campaign workers, subject
// processes, the embedded host). A host whose image sets PYTHONDONTWRITEBYTECODE and ships
// torch without __pycache__ recompiles torch's sources in every process: on the GPU box
// `import torch, torch._dynamo` takes 9 s that way (docs/benchmarks-history.md), each campaign worker
// pays it, and the time to first finding with it.
#pragma once
#include <string>

namespace flce {

// Where bytecode goes: FLCE_PYCACHE when it names a directory; otherwise, only where Python
// is told not to write bytecode (PYTHONDONTWRITEBYTECODE non-empty),
// ${XDG_CACHE_HOME:-$HOME/.cache}/flce/pycache. Empty: leave Python's own settings alone
// (FLCE_PYCACHE=off, a PYTHONPYCACHEPREFIX the user chose, bytecode already written next to
// the sources, or no usable directory).
std::string bytecode_cache_dir();

// ${XDG_CACHE_HOME:-$HOME/.cache}/flce/NAME: what flce keeps for every run on this box (the
// bytecode, Triton's box layer). Not created here; empty when neither variable is set.
std::string box_cache_dir(const std::string& name);

// Points this process's environment (so every interpreter it starts) at that directory:
// PYTHONPYCACHEPREFIX=DIR and an empty PYTHONDONTWRITEBYTECODE. Source trees are never
// written: with a prefix, Python keeps all its .pyc files under DIR. Returns DIR or "".
std::string use_bytecode_cache();

}  // namespace flce
