// The peak resident memory of this process over a stretch of work (a unit), not over its
// lifetime: reset_peak_resident() lowers the kernel's high-water mark (VmHWM) to the memory
// resident now, and peak_resident_mib() reads it. Linux; thread safe (each call is one read or
// write of a /proc file).
#pragma once

namespace linsweep {

// Resets the high-water mark through /proc/self/clear_refs (Linux 4.0 and later). Returns false
// when the kernel refuses (the mark then keeps counting from the process's start).
bool reset_peak_resident();

// The high-water mark in MiB: VmHWM of /proc/self/status, or getrusage's maximum where that
// cannot be read.
double peak_resident_mib();

}  // namespace linsweep
