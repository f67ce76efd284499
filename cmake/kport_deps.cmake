# Third-party dependencies, all from Debian bookworm packages (scripts/setup).
find_package(Threads REQUIRED)
find_package(FlatBuffers CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(tomlplusplus CONFIG REQUIRED)
find_package(SQLite3 REQUIRED)
find_program(FLATC flatc REQUIRED)

# Debian ships no CMake config for CAF, CLI11 or xxHash.
find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
find_library(CAF_IO_LIBRARY caf_io REQUIRED)
add_library(kport_caf INTERFACE)
target_include_directories(kport_caf SYSTEM INTERFACE ${CAF_INCLUDE_DIR})
target_link_libraries(kport_caf INTERFACE ${CAF_CORE_LIBRARY} Threads::Threads)

find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
add_library(kport_cli11 INTERFACE)
target_include_directories(kport_cli11 SYSTEM INTERFACE ${CLI11_INCLUDE_DIR})

find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY xxhash REQUIRED)
add_library(kport_xxhash INTERFACE)
target_include_directories(kport_xxhash SYSTEM INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(kport_xxhash INTERFACE ${XXHASH_LIBRARY})

# RE2 (libre2-dev): the static scan's patterns, linear time on any input.
find_path(RE2_INCLUDE_DIR re2/re2.h REQUIRED)
find_library(RE2_LIBRARY re2 REQUIRED)

# CUDA toolkit: NVTX3 headers (header-only) and CUPTI, used by trace/inject.
set(KPORT_CUDA_ROOT /usr/local/cuda CACHE PATH "CUDA toolkit root")

if(KPORT_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
  include(GoogleTest)
endif()
if(KPORT_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()

# The daemon's API: libzmq (libzmq3-dev) and its C++ binding (cppzmq-dev,
# header-only).
find_path(ZMQ_INCLUDE_DIR zmq.hpp REQUIRED)
find_library(ZMQ_LIBRARY zmq REQUIRED)
add_library(kport_zmq INTERFACE)
target_include_directories(kport_zmq SYSTEM INTERFACE ${ZMQ_INCLUDE_DIR})
target_link_libraries(kport_zmq INTERFACE ${ZMQ_LIBRARY})
