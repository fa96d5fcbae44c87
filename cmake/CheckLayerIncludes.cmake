# Holds every #include "..." in SOURCE_DIR (src/) to cmake/Layers.cmake: a file of src/LAYER/ may
# include its own layer's headers and those of the layers its row USES, by their path from src/
# ("ir/ast.h"), nothing else; and every folder of src/ is a row of the table. Prints one line per
# violation, FILE: the include: what is wrong, and fails when there is any.
#
#   cmake -DSOURCE_DIR=src [-DLAYERS_FILE=cmake/Layers.cmake] -P cmake/CheckLayerIncludes.cmake
#
# The link of each layer's library alone (CMakeLists.txt, EKB_CHECK_LAYERS) catches a call that
# runs upward; this catches what a link cannot see: a header's inline code, types, macros.
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=DIR [-DLAYERS_FILE=FILE] -P CheckLayerIncludes.cmake")
endif()
if(NOT LAYERS_FILE)
  set(LAYERS_FILE ${CMAKE_CURRENT_LIST_DIR}/Layers.cmake)
endif()
include(${LAYERS_FILE})

set(violations 0)
file(GLOB folders RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*)
foreach(folder IN LISTS folders)
  if(IS_DIRECTORY ${SOURCE_DIR}/${folder} AND NOT folder IN_LIST EKB_LAYERS)
    message("${SOURCE_DIR}/${folder}: not a layer: give it a row in ${LAYERS_FILE}")
    math(EXPR violations "${violations} + 1")
  endif()
endforeach()

foreach(layer IN LISTS EKB_LAYERS)
  set(allowed ${layer} ${EKB_LAYER_${layer}_USES})
  list(JOIN EKB_LAYER_${layer}_USES ", " uses)
  if(uses STREQUAL "")
    set(uses "no other layer")
  endif()
  file(GLOB files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/${layer}/*.h ${SOURCE_DIR}/${layer}/*.cpp)
  foreach(file IN LISTS files)
    file(STRINGS ${SOURCE_DIR}/${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" path "${line}")
      if(path MATCHES "^([a-z_]+)/" AND CMAKE_MATCH_1 IN_LIST EKB_LAYERS)
        if(NOT CMAKE_MATCH_1 IN_LIST allowed)
          message("${file}: #include \"${path}\": ${layer} may not include ${CMAKE_MATCH_1} (it uses ${uses})")
          math(EXPR violations "${violations} + 1")
        endif()
      else()
        message("${file}: #include \"${path}\": not a path from src/ (LAYER/FILE.h), which the layer check reads")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "${violations} include(s) against the layers of ${LAYERS_FILE}")
endif()
