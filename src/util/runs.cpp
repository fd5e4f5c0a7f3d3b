#include "toposweep/util/runs.hpp"

#include <algorithm>
#include <charconv>

#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep {

bool has_run_counts(std::string_view text) {
  return text.find('*') != std::string_view::npos;
}

std::vector<ServerRun> parse_runs(std::string_view text, const std::string& where) {
  const auto items = split_list(text);
  if (items.empty()) throw BadInput("empty server list", where);
  std::vector<ServerRun> runs;
  for (const auto& raw : items) {
    const std::string item(trim(raw));
    if (item.empty()) throw BadInput("empty item in '" + std::string(text) + "'", where);
    const auto star = item.rfind('*');
    if (star == std::string::npos) {
      if (items.size() > 1)
        throw BadInput("'" + item + "' needs a server count (VALUE*COUNT) in a list of several", where);
      runs.push_back({item, 0});
      continue;
    }
    const std::string value(trim(std::string_view(item).substr(0, star)));
    const std::string count(trim(std::string_view(item).substr(star + 1)));
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (value.empty() || count.empty() || ec != std::errc() || end != count.data() + count.size() || n < 1 ||
        n > (1u << 26))
      throw BadInput("'" + item + "': expected VALUE*COUNT with a whole count >= 1", where);
    runs.push_back({value, static_cast<std::uint32_t>(n)});
  }
  return runs;
}

std::vector<std::string> expand_runs(const std::vector<ServerRun>& runs, std::uint32_t servers,
                                     const std::string& where) {
  if (runs.size() == 1 && runs[0].count == 0) return std::vector<std::string>(servers, runs[0].value);
  std::uint64_t sum = 0;
  for (const ServerRun& r : runs) sum += r.count;
  if (sum != servers)
    throw BadInput("server counts sum to " + std::to_string(sum) + " but there are " +
                       std::to_string(servers) + " servers",
                   where);
  std::vector<std::string> out;
  out.reserve(servers);
  for (const ServerRun& r : runs) out.insert(out.end(), r.count, r.value);
  return out;
}

std::vector<std::string> distinct_run_values(const std::vector<ServerRun>& runs) {
  std::vector<std::string> out;
  for (const ServerRun& r : runs)
    if (std::find(out.begin(), out.end(), r.value) == out.end()) out.push_back(r.value);
  return out;
}

namespace checks {
KeyCheck runs(KeyCheck inner) {
  return [inner = std::move(inner)](const std::string& value, const std::string& where) {
    for (const ServerRun& r : parse_runs(value, where)) inner(r.value, where);
  };
}
}  // namespace checks

}  // namespace toposweep
