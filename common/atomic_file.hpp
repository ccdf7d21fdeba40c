// Durable file writes: a temporary sibling written and fsynced, renamed over the target, and
// the directory fsynced, so that a crash leaves the old file or the new one, never a mix.
#pragma once

#include <functional>
#include <string>

namespace linsweep {

// Writes `path` atomically: `write(tmp_path)` creates the temporary file (a sibling named
// .tmp-<host>-<pid>-<random>-<name>: writers on several nodes may share a directory), then
// fsync, rename and directory fsync. The temporary file is removed on failure. Throws what
// `write` throws, DiskFullError (ENOSPC, EDQUOT) or StorageError.
void atomic_replace(const std::string& path, const std::function<void(const std::string&)>& write);
// atomic_replace with `text` as the content (O_NOFOLLOW: a planted link is not followed).
void atomic_write_text(const std::string& path, const std::string& text);

// fsyncs a regular file or a directory. Throws DiskFullError or StorageError naming it.
void sync_file(const std::string& path);
void sync_directory(const std::string& dir);

// Writes all of `text` to `fd`: a short write is retried, so that a full disk reports ENOSPC
// instead of leaving a silently shortened file. Returns 0 or the errno of the failing write.
int write_all(int fd, const std::string& text);

// `e`'s message with `path` in front, unless it starts with it already.
std::string message_at(const std::string& path, const std::string& message);

}  // namespace linsweep
