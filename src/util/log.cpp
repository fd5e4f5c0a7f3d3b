#include "toposweep/util/log.hpp"

#include <iostream>

#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep {

LogLevel parse_log_level(std::string_view text) {
  const std::string t = to_lower(text);
  if (t == "debug") return LogLevel::Debug;
  if (t == "info") return LogLevel::Info;
  if (t == "warn" || t == "warning") return LogLevel::Warn;
  if (t == "error") return LogLevel::Error;
  if (t == "quiet") return LogLevel::Quiet;
  throw BadInput("unknown log level '" + std::string(text) + "' (debug, info, warn, error, quiet)",
                 "--log-level");
}

Logger::Logger(LogLevel level) : level_(level), out_(&std::cerr) {}
Logger::Logger(LogLevel level, std::ostream& out) : level_(level), out_(&out) {}

void Logger::write(LogLevel l, std::string_view msg) const {
  if (!enabled(l) || l == LogLevel::Quiet) return;
  static const char* names[] = {"debug", "info", "warn", "error"};
  *out_ << "toposweep: " << names[static_cast<int>(l)] << ": " << msg << '\n';
}

}  // namespace toposweep
