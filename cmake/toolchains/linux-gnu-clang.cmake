# The shared part of the cross toolchains (cmake/toolchains/TRIPLE.cmake set EKB_CROSS_TRIPLE and
# CMAKE_SYSTEM_PROCESSOR, then include this): clang for the triple against Debian's cross packages
# (libc6-dev-ARCH-cross, libstdc++-12-dev-ARCH-cross, binutils-TRIPLE; scripts/install-deps.sh),
# programs run by qemu-user. docs/DEVICES.md.
#
# --target alone: clang 14 then finds the gcc-cross installation (/usr/lib/gcc-cross/TRIPLE/12) and
# the target's libc under /usr/TRIPLE. No --sysroot=/usr/TRIPLE: the linker scripts there name
# absolute paths (/usr/TRIPLE/lib/libc.so.6) that a sysroot prefix breaks.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER clang)
set(CMAKE_CXX_COMPILER clang++)
set(CMAKE_C_COMPILER_TARGET ${EKB_CROSS_TRIPLE})
set(CMAKE_CXX_COMPILER_TARGET ${EKB_CROSS_TRIPLE})

# The target's archiver: the host's ar may not know the target's object format (no symbol index).
find_program(CMAKE_AR NAMES ${EKB_CROSS_TRIPLE}-ar llvm-ar-14 llvm-ar)
find_program(CMAKE_RANLIB NAMES ${EKB_CROSS_TRIPLE}-ranlib llvm-ranlib-14 llvm-ranlib)

# try_run, add_test and cmake -E: the target's programs under qemu-user with the target's loader
# and libraries (no binfmt_misc assumed).
find_program(EKB_CROSS_QEMU NAMES qemu-${CMAKE_SYSTEM_PROCESSOR}-static qemu-${CMAKE_SYSTEM_PROCESSOR})
if(EKB_CROSS_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${EKB_CROSS_QEMU} -L /usr/${EKB_CROSS_TRIPLE})
endif()

# Libraries and headers of the target only; programs (the emulator, generators) of the host.
set(CMAKE_FIND_ROOT_PATH /usr/${EKB_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
