# Toolchain for cross-compiling mace to 64-bit Arm Linux with Debian/Ubuntu's cross compiler:
#
#   apt-get install gcc-aarch64-linux-gnu protobuf-c-compiler
#   dpkg --add-architecture arm64 && apt-get update && apt-get install libprotobuf-c-dev:arm64
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#   cmake --build build-arm64 -j2
#
# protoc-c runs on the build machine (the host's package); libprotobuf-c is the arm64 one from
# /usr/lib/aarch64-linux-gnu (Debian multiarch) or from a sysroot given as -DMACE_SYSROOT=/path.
# ctest runs the tests through qemu-aarch64 when it is installed (apt-get install qemu-user).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(MACE_CROSS_PREFIX aarch64-linux-gnu- CACHE STRING "prefix of the cross tools")
set(CMAKE_C_COMPILER ${MACE_CROSS_PREFIX}gcc)
set(CMAKE_AR ${MACE_CROSS_PREFIX}ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${MACE_CROSS_PREFIX}ranlib CACHE FILEPATH "")
set(CMAKE_STRIP ${MACE_CROSS_PREFIX}strip CACHE FILEPATH "")

# Debian multiarch: target libraries in /usr/lib/aarch64-linux-gnu, headers shared in /usr/include.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
if(MACE_SYSROOT)
  set(CMAKE_SYSROOT ${MACE_SYSROOT})
  set(CMAKE_FIND_ROOT_PATH ${MACE_SYSROOT})
  set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
  set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
else()
  set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
  set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
  set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
  # Never pick the build machine's own libraries.
  list(APPEND CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/local/lib)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

find_program(MACE_QEMU_AARCH64 qemu-aarch64 qemu-aarch64-static)
# With Debian's multiarch libc6:arm64 installed (libprotobuf-c-dev:arm64 pulls it in) qemu finds the
# arm64 loader in /lib by itself; -L /usr/aarch64-linux-gnu then mixes two C libraries and threads hang.
if(MACE_QEMU_AARCH64)
  if(EXISTS /lib/ld-linux-aarch64.so.1 OR MACE_SYSROOT)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${MACE_QEMU_AARCH64})
    if(MACE_SYSROOT)
      list(APPEND CMAKE_CROSSCOMPILING_EMULATOR -L ${MACE_SYSROOT})
    endif()
  else()
    set(CMAKE_CROSSCOMPILING_EMULATOR ${MACE_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
  endif()
endif()
