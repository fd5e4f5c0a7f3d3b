#pragma once
// Small string helpers shared by the parsers.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace toposweep {

std::string_view trim(std::string_view s);
// Split on `sep`, trimming each part; an empty input gives an empty vector.
std::vector<std::string> split_list(std::string_view s, char sep = ',');
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::size_t edit_distance(std::string_view a, std::string_view b);
std::string to_lower(std::string_view s);

}  // namespace toposweep
