# 64-bit Arm Linux (Raspberry Pi 4/5, Jetson, Graviton): scripts/build-device.sh aarch64-linux-gnu.
set(EKB_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-clang.cmake)
