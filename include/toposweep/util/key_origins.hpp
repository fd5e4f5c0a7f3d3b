#pragma once
// Where each configuration key was set, captured when a Config is turned into typed specs, so
// that an error raised later on typed values ("key topology.degree": a builder knows the key, not
// the file) can still name the line the user wrote: "key topology.degree at q.ini:4".
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include "toposweep/util/config.hpp"

namespace toposweep {

class KeyOrigins {
 public:
  KeyOrigins() = default;
  static KeyOrigins of(const Config& config);
  // Only the origins of `keys`: what rethrow needs for an error naming one of them, without
  // copying every entry (a sweep's infeasible points each pay this).
  static KeyOrigins of(const Config& config, std::initializer_list<std::string_view> keys);

  // "key K at ORIGIN" ("at default" for a registry default) when K has an origin, else "key K".
  std::string where(const std::string& key) const;
  // Errors about `key` name `alias` instead (a deprecated alias the user wrote).
  void redirect(const std::string& key, const std::string& alias);

  // Rethrows `e` (keeping InvalidDesign an InvalidDesign) with its `where` re-pointed at the
  // key's origin when it names a bare key ("key K" or "K"); otherwise rethrows it unchanged.
  [[noreturn]] void rethrow(const class BadInput& e) const;
  // Where rethrow(e) would point `e`.
  std::string located(const class BadInput& e) const;

  // Runs f(); a BadInput it throws is rethrown re-pointed (see rethrow).
  template <class F>
  decltype(auto) run(F&& f) const;

 private:
  std::map<std::string, std::string> origin_;  // key -> origin text
  std::map<std::string, std::string> alias_;   // key -> the key errors about it name
};

}  // namespace toposweep

#include "toposweep/util/error.hpp"

template <class F>
decltype(auto) toposweep::KeyOrigins::run(F&& f) const {
  try {
    return f();
  } catch (const BadInput& e) {
    rethrow(e);
  }
}
