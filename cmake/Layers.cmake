# The layers of src/ and what each may use (docs/ARCHITECTURE.md, "Layers"): the one table that
# both the build (CMakeLists.txt: one library per layer, linked only to the layers it USES) and the
# include check (cmake/CheckLayerIncludes.cmake: every #include in src/ against USES) read.
#
# One row per folder src/LAYER/, lowest first: a layer USES only layers above its row, so no
# cycle can be written. PACKAGES are the third-party targets it links; EXECUTABLE makes it a
# program instead of the library ekb_LAYER. Adding an arrow is editing a row here; an include or a
# call that runs against the table fails the build or the test LayersIncludeOnlyWhatTheyUse.

set(EKB_LAYERS "")

macro(ekb_layer name)
  cmake_parse_arguments(_layer "" "EXECUTABLE" "USES;PACKAGES" ${ARGN})
  foreach(_used IN LISTS _layer_USES)
    if(NOT _used IN_LIST EKB_LAYERS)
      message(FATAL_ERROR "cmake/Layers.cmake: layer '${name}' uses '${_used}', which is not a layer below it")
    endif()
  endforeach()
  list(APPEND EKB_LAYERS ${name})
  set(EKB_LAYER_${name}_USES ${_layer_USES})
  set(EKB_LAYER_${name}_PACKAGES ${_layer_PACKAGES})
  set(EKB_LAYER_${name}_EXECUTABLE ${_layer_EXECUTABLE})
endmacro()

# The language: parsing, checking, instantiating and interpreting a pattern.
ekb_layer(ir)
# The loop IR: its nodes, printing, traversal and substitution, integer intervals, the simplifier
# and the well-formedness check; what the lowering passes produce and the emitters print.
ekb_layer(lir       USES ir)
# The schedule and memory directives and the passes that lower a pattern to the loop IR.
ekb_layer(lower     USES ir lir)
# Printing loop IR as C, CUDA and OpenCL; kernel signatures.
ekb_layer(codegen   USES ir lir)
# Compiling sources into artifacts and running them in sandboxed workers. Of the IR it knows only
# the Target type (ir/target.h): which backend a source is for.
ekb_layer(runtime   USES ir
                    PACKAGES nlohmann_json::nlohmann_json Threads::Threads ${CMAKE_DL_LIBS})
# The `tvm` compiler interface: the default-lowered loop IR translated to TensorIR and built by
# Apache TVM through the Python bridge (python/ekb_tvm), as a source a backend compiles.
ekb_layer(tvm       USES ir lir lower codegen runtime
                    PACKAGES nlohmann_json::nlohmann_json)
# The benchmark's definition: workloads, selections, the task statement and the tolerance.
ekb_layer(suite     USES ir codegen
                    PACKAGES fmt::fmt)
# Evaluating candidates against the baseline: references, trials, timing, solution sets.
ekb_layer(eval      USES ir lir lower codegen runtime tvm suite
                    PACKAGES fmt::fmt nlohmann_json::nlohmann_json Threads::Threads)
# `ekb package`: verified solutions built into a C library for a target, with a header, a manifest
# and an example program (docs/DEVICES.md).
ekb_layer(package   USES ir codegen runtime suite eval
                    PACKAGES fmt::fmt nlohmann_json::nlohmann_json)
# The results database (a SQLite file, or a PostgreSQL server that shards share), results JSON and
# run reports.
ekb_layer(results   USES ir runtime suite eval
                    PACKAGES SQLiteCpp PostgreSQL::PostgreSQL fmt::fmt nlohmann_json::nlohmann_json Threads::Threads)
# Generating solutions with language models.
ekb_layer(llm       USES ir codegen runtime eval
                    PACKAGES CURL::libcurl tomlplusplus::tomlplusplus fmt::fmt nlohmann_json::nlohmann_json
                             Threads::Threads)
# Workspaces where coding agents write and check one solution.
ekb_layer(workspace USES ir codegen runtime suite eval
                    PACKAGES OpenSSL::Crypto fmt::fmt nlohmann_json::nlohmann_json)
# LEKA, the layered kernel agent: its loop, its policies (a search and a language model) and its
# trajectories (docs/AGENT.md).
ekb_layer(agent     USES ir lir lower codegen runtime tvm suite eval results llm
                    PACKAGES fmt::fmt nlohmann_json::nlohmann_json Threads::Threads)
# The `ekb` command line (toml++: the remote devices' file, cli/devices.h).
ekb_layer(cli       EXECUTABLE ekb
                    USES ir lir lower codegen runtime tvm suite eval package results llm workspace agent
                    PACKAGES CLI11::CLI11 fmt::fmt nlohmann_json::nlohmann_json tomlplusplus::tomlplusplus
                             Threads::Threads)
# `ekb-device`: the program a device runs (docs/DEVICES.md): the sandboxed kernel worker and what
# the device is. Only this and the layers it USES are built with EKB_DEVICE_ONLY (a cross build),
# so its USES name no layer that needs SQLite, curl, toml++ or OpenSSL.
ekb_layer(device    EXECUTABLE ekb-device
                    USES ir runtime
                    PACKAGES CLI11::CLI11 nlohmann_json::nlohmann_json Threads::Threads)
