#pragma once
// A tiny logger passed by reference (no global state): messages go to stderr with a level.
#include <iosfwd>
#include <string>
#include <string_view>

namespace toposweep {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3, Quiet = 4 };

LogLevel parse_log_level(std::string_view text);  // throws BadInput

class Logger {
 public:
  explicit Logger(LogLevel level = LogLevel::Info);
  Logger(LogLevel level, std::ostream& out);
  LogLevel level() const { return level_; }
  bool enabled(LogLevel l) const { return l >= level_; }
  void debug(std::string_view msg) const { write(LogLevel::Debug, msg); }
  void info(std::string_view msg) const { write(LogLevel::Info, msg); }
  void warn(std::string_view msg) const { write(LogLevel::Warn, msg); }
  void error(std::string_view msg) const { write(LogLevel::Error, msg); }
  void write(LogLevel l, std::string_view msg) const;

 private:
  LogLevel level_;
  std::ostream* out_;
};

}  // namespace toposweep
