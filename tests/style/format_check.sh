#!/usr/bin/env bash
# Every C++ file under version control is formatted by .clang-format: prints the files that are
# not (with `clang-format --dry-run` diagnostics for the first), exits 1 if any. A missing
# clang-format is a failure, not a skip: the check must be able to fail on CI.
set -uo pipefail
cd "${1:-$(dirname "$0")/../..}"
format=${CLANG_FORMAT:-clang-format}
if ! command -v "$format" >/dev/null; then
  echo "format_check: $format not found (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' 2>/dev/null || find src include tests bench -name '*.[ch]pp')
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "format_check: ${#bad[@]} of ${#files[@]} files are not clang-formatted (fix: clang-format -i FILE):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  "$format" --dry-run "${bad[0]}" 2>&1 | head -20 >&2
  exit 1
fi
echo "format_check: ${#files[@]} files formatted"
