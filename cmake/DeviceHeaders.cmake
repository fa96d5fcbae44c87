# EKB_DEVICE_ONLY's third-party packages (CMakeLists.txt, docs/DEVICES.md). What ekb-device and
# its layers use from outside is header-only: nlohmann/json, CLI11, fmt (FMT_HEADER_ONLY), xxhash
# (XXH_INLINE_ALL, runtime/compile_cache.cpp) and the OpenCL headers (runtime/opencl_driver.h; the
# ICD itself is dlopened). A cross compile must not see the host's /usr/include, where they are
# installed, since its C library headers would shadow the target's. So they are staged: a directory
# of links to each library's own headers, the only include directory these targets give.
#
# EKB_HEADERS_FROM: where the packages' headers are (default /usr/include, Debian's
# nlohmann-json3-dev, libcli11-dev, libfmt-dev, libxxhash-dev, opencl-c-headers).

set(EKB_HEADERS_FROM /usr/include CACHE PATH "EKB_DEVICE_ONLY: where the header-only packages' headers are staged from")
set(EKB_DEVICE_HEADERS ${CMAKE_BINARY_DIR}/device-include)

file(REMOVE_RECURSE ${EKB_DEVICE_HEADERS})
file(MAKE_DIRECTORY ${EKB_DEVICE_HEADERS})
# Each entry: a directory or header of EKB_HEADERS_FROM, and the package that installs it.
foreach(entry IN ITEMS "nlohmann:nlohmann-json3-dev" "CLI:libcli11-dev" "fmt:libfmt-dev"
                       "xxhash.h:libxxhash-dev" "xxh3.h:libxxhash-dev" "CL:opencl-c-headers")
  string(REPLACE ":" ";" entry "${entry}")
  list(GET entry 0 name)
  list(GET entry 1 package)
  if(NOT EXISTS ${EKB_HEADERS_FROM}/${name})
    message(FATAL_ERROR "EKB_DEVICE_ONLY: ${EKB_HEADERS_FROM}/${name} is missing (Debian: ${package}; "
                        "scripts/install-deps.sh)")
  endif()
  file(CREATE_LINK ${EKB_HEADERS_FROM}/${name} ${EKB_DEVICE_HEADERS}/${name} SYMBOLIC)
endforeach()

# The targets Layers.cmake's PACKAGES name, as find_package would define them.
add_library(ekb_device_headers INTERFACE)
target_include_directories(ekb_device_headers SYSTEM INTERFACE ${EKB_DEVICE_HEADERS})
add_library(nlohmann_json::nlohmann_json ALIAS ekb_device_headers)
add_library(CLI11::CLI11 ALIAS ekb_device_headers)
add_library(ekb_device_fmt INTERFACE)
target_link_libraries(ekb_device_fmt INTERFACE ekb_device_headers)
target_compile_definitions(ekb_device_fmt INTERFACE FMT_HEADER_ONLY)
add_library(fmt::fmt ALIAS ekb_device_fmt)
