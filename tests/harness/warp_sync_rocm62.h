// Test harness, force-included (-include) when compiling migrated fixtures with HIP 5.2's hipcc.
//
// HIP 5.2 has no `_sync` warp functions. ROCm >= 6.2 declares them (clr
// hipamd/include/hip/amd_detail/amd_warp_sync_functions.h) as templates over the mask type with
// `static_assert(sizeof(MaskT) == 8)`: a 32-bit mask such as CUDA's 0xffffffff is a compile
// error. These stand-ins keep exactly that check and forward to the HIP 5.2 builtins, so that a
// test can prove that migrated code passes the 64-bit-mask check (and that unmigrated code does
// not). They are not the clr implementation.
#pragma once
#include <hip/hip_runtime.h>

#define C2H_CHECK_MASK(MaskT) \
  static_assert(sizeof(MaskT) == 8, "The mask must be a 64-bit integer (cuda2hip test harness mimicking clr)")

template <typename MaskT, typename T>
__device__ inline T __shfl_sync(MaskT mask, T var, int src, int width = warpSize) {
  C2H_CHECK_MASK(MaskT);
  return __shfl(var, src, width);
}
template <typename MaskT, typename T>
__device__ inline T __shfl_up_sync(MaskT mask, T var, unsigned int delta, int width = warpSize) {
  C2H_CHECK_MASK(MaskT);
  return __shfl_up(var, delta, width);
}
template <typename MaskT, typename T>
__device__ inline T __shfl_down_sync(MaskT mask, T var, unsigned int delta, int width = warpSize) {
  C2H_CHECK_MASK(MaskT);
  return __shfl_down(var, delta, width);
}
template <typename MaskT, typename T>
__device__ inline T __shfl_xor_sync(MaskT mask, T var, int lane_mask, int width = warpSize) {
  C2H_CHECK_MASK(MaskT);
  return __shfl_xor(var, lane_mask, width);
}
template <typename MaskT>
__device__ inline unsigned long long __ballot_sync(MaskT mask, int predicate) {
  C2H_CHECK_MASK(MaskT);
  return __ballot(predicate);
}
template <typename MaskT>
__device__ inline int __any_sync(MaskT mask, int predicate) {
  C2H_CHECK_MASK(MaskT);
  return __any(predicate);
}
template <typename MaskT>
__device__ inline int __all_sync(MaskT mask, int predicate) {
  C2H_CHECK_MASK(MaskT);
  return __all(predicate);
}
template <typename MaskT>
__device__ inline void __syncwarp(MaskT mask) {
  C2H_CHECK_MASK(MaskT);
  __threadfence_block();
}
__device__ inline unsigned long long __activemask() { return __ballot(1); }
