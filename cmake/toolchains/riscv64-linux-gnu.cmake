# 64-bit RISC-V Linux (RV64GC, LP64D): scripts/build-device.sh riscv64-linux-gnu.
set(EKB_CROSS_TRIPLE riscv64-linux-gnu)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-gnu-clang.cmake)
