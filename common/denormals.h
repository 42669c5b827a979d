// Denormal floats, flushed to zero in every ringside process.
//
// Before main (denormals.cc, linked into every binary and test through
// @system//:absl, like cpu_check.cc) the main thread sets flush-to-zero and
// denormals-are-zero (x86 MXCSR FTZ and DAZ; aarch64 FPCR.FZ), and every
// thread created afterwards inherits them (pthread_create copies the
// floating-point environment): the training thread, Eigen's, gRPC's and
// Gloo's threads, the parameter servers' handlers. TensorFlow does the same
// in its compute threads. Why: SGD momentum of a parameter whose gradient
// stays 0 (a dead ReLU unit's weights) decays by μ each step and is
// denormal after about 800 steps at μ = 0.9; from then on every operation
// touching it takes a microcode assist. On the 2-core VM the MLP's
// optimizer step went from 0.8 ms to 8.7 ms after 700 steps, and forward +
// backward from 4.0 to 5.4 ms.
//
// RINGSIDE_DENORMALS=keep in the environment leaves the CPU's default
// (gradual underflow) for numerical comparisons.
#ifndef RINGSIDE_COMMON_DENORMALS_H_
#define RINGSIDE_COMMON_DENORMALS_H_

namespace ringside {

// Sets flush-to-zero and denormals-are-zero on the calling thread; threads
// it creates afterwards inherit them. false where the CPU has no such mode
// (nothing changed).
bool FlushDenormalsToZero();

// Whether the calling thread flushes denormal results to zero.
bool DenormalsFlushedToZero();

}  // namespace ringside

#endif  // RINGSIDE_COMMON_DENORMALS_H_
