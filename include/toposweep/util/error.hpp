#pragma once
// Typed errors. Each category maps to one exit status in one place (src/cli/run_main.cpp):
// BadInput -> 2, Interrupted -> 3, anything else -> 1.
#include <stdexcept>
#include <string>

namespace toposweep {

// The user gave something wrong: usage, key, value, file. `where` names the culprit:
// "file.ini:12", "key topology.degree", "model.json: layers[3].flops".
class BadInput : public std::runtime_error {
 public:
  BadInput(const std::string& what, std::string where) : std::runtime_error(what), where_(std::move(where)) {}
  const std::string& where() const noexcept { return where_; }

 private:
  std::string where_;
};

// Well-formed input describing a design that cannot exist: a degree at or above the server count,
// an odd degree for bidirectional rings, a disconnected ring set, strategy degrees that do not
// divide the GPUs, a batch the microbatches do not divide. A command given one exits 2 like any
// bad input; a sweep, whose cross product of axes produces such points, counts them infeasible
// (status 1, with this message) rather than failed.
class InvalidDesign : public BadInput {
 public:
  using BadInput::BadInput;
};

// A run stopped on SIGTERM/SIGINT after checkpointing; the same command with --resume continues.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Anything the user could not have prevented by changing the input (I/O failure, internal error).
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInterrupted = 3;

}  // namespace toposweep
