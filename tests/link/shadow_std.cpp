// A library that exports its own copy of some of libstdc++'s functions, as pip's libtorch.so
// does (its wheel carries 64 std::filesystem symbols of the toolchain it was built with). Each
// copy here aborts with its name: a program whose calls bind to this library instead of
// libstdc++.so.6 dies at the first one. tests/link/shadow_std_test.sh links it the way
// LibTorch is linked and runs a sweep that commits a training unit.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace {

[[noreturn]] void die(const char* name) {
  static const char prefix[] = "shadow_std: called the shadow copy of ";
  (void)!write(STDERR_FILENO, prefix, sizeof prefix - 1);
  (void)!write(STDERR_FILENO, name, std::strlen(name));
  (void)!write(STDERR_FILENO, "\n", 1);
  std::abort();
}

}  // namespace

namespace std::filesystem {

uintmax_t remove_all(const path&) { die("std::filesystem::remove_all(path)"); }
uintmax_t remove_all(const path&, error_code&) { die("std::filesystem::remove_all(path, error_code)"); }
bool remove(const path&) { die("std::filesystem::remove(path)"); }
bool remove(const path&, error_code&) noexcept { die("std::filesystem::remove(path, error_code)"); }
void rename(const path&, const path&) { die("std::filesystem::rename(path, path)"); }
void rename(const path&, const path&, error_code&) noexcept { die("std::filesystem::rename(path, path, error_code)"); }
bool create_directories(const path&) { die("std::filesystem::create_directories(path)"); }
bool create_directories(const path&, error_code&) { die("std::filesystem::create_directories(path, error_code)"); }
file_status status(const path&) { die("std::filesystem::status(path)"); }
file_status status(const path&, error_code&) noexcept { die("std::filesystem::status(path, error_code)"); }

}  // namespace std::filesystem
