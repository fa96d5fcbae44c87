// A back edge for the layer check's own test (tests/CMakeLists.txt): the IR may not include eval.
#pragma once
#include "eval/result.h"
