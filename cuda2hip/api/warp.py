"""CUDA's warp intrinsics that take a lane mask (the `_sync` functions of CUDA 9): the warp rules
check their masks and releases (checks/warp), the device-function rule leaves them to those."""

# `_sync` functions whose first argument is the lane mask
MASKED = frozenset({
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__any_sync",
    "__all_sync", "__uni_sync", "__match_any_sync", "__match_all_sync", "__reduce_add_sync", "__reduce_min_sync",
    "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync", "__syncwarp",
})
