#pragma once
// Version and the git revision the binary was built from (baked in at build time).
namespace toposweep {
const char* version_string();
const char* git_revision();
}  // namespace toposweep
