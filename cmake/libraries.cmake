# Real kernel libraries as black-box targets (libs/): oneDNN, a CBLAS and libtorch, each optional.
# A library found here is compiled in (STABFUZZ_HAVE_ONEDNN / _BLAS / _TORCH); a missing one is
# listed by `stabfuzz --list` as unavailable with the package that provides it.
set(STABFUZZ_ONEDNN "AUTO" CACHE STRING "oneDNN targets: AUTO (when found), ON, OFF")
set(STABFUZZ_BLAS "AUTO" CACHE STRING "CBLAS targets: AUTO (when found), ON, OFF")
set(STABFUZZ_TORCH "AUTO" CACHE STRING "libtorch targets: AUTO (when found), ON, OFF")

target_sources(stabfuzz_core PRIVATE libs/libraries.cc libs/catalog.cc)

# ---- oneDNN: its CMake config needs the OpenCL headers (ocl-icd-opencl-dev, opencl-c-headers) ----
set(STABFUZZ_HAVE_ONEDNN OFF)
set(STABFUZZ_HAVE_ONEDNN3 OFF)
if(NOT STABFUZZ_ONEDNN STREQUAL "OFF")
  find_package(dnnl CONFIG QUIET)
  if(TARGET DNNL::dnnl)
    set(STABFUZZ_DNNL_LINK DNNL::dnnl)
  else()
    find_path(STABFUZZ_DNNL_INCLUDE oneapi/dnnl/dnnl.hpp)
    find_library(STABFUZZ_DNNL_LIBRARY dnnl)
    if(STABFUZZ_DNNL_INCLUDE AND STABFUZZ_DNNL_LIBRARY)
      add_library(stabfuzz_dnnl INTERFACE)
      target_include_directories(stabfuzz_dnnl SYSTEM INTERFACE ${STABFUZZ_DNNL_INCLUDE})
      target_link_libraries(stabfuzz_dnnl INTERFACE ${STABFUZZ_DNNL_LIBRARY} ${CMAKE_DL_LIBS})
      set(STABFUZZ_DNNL_LINK stabfuzz_dnnl)
    endif()
  endif()
  if(STABFUZZ_DNNL_LINK)
    set(STABFUZZ_HAVE_ONEDNN ON)
    target_sources(stabfuzz_core PRIVATE libs/onednn/onednn.cc libs/onednn/onednn_calls.cc)
    # oneDNN 3 beside it (ci/bootstrap --with-onednn3 unpacks PyPI's build into .deps/onednn3):
    # the same calls compiled against its headers into libstabfuzz_onednn3.so, next to the binary,
    # linked to its libdnnl.so.3 and loaded at start-up (`family/onednn3/...` targets). Only the
    # module's entry point is visible, so its inline oneDNN 3 code never meets oneDNN 2's.
    set(STABFUZZ_ONEDNN3_DIR "${CMAKE_SOURCE_DIR}/.deps/onednn3" CACHE PATH
        "oneDNN 3 (include/, lib/libdnnl.so.3) for the family/onednn3 targets")
    if(EXISTS "${STABFUZZ_ONEDNN3_DIR}/lib/libdnnl.so.3" AND
       EXISTS "${STABFUZZ_ONEDNN3_DIR}/include/oneapi/dnnl/dnnl.hpp")
      set(STABFUZZ_HAVE_ONEDNN3 ON)
      add_library(stabfuzz_onednn3 MODULE libs/onednn/onednn_calls.cc)
      target_include_directories(stabfuzz_onednn3 BEFORE PRIVATE "${STABFUZZ_ONEDNN3_DIR}/include")
      target_include_directories(stabfuzz_onednn3 PRIVATE
        ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/include)
      target_link_libraries(stabfuzz_onednn3 PRIVATE "${STABFUZZ_ONEDNN3_DIR}/lib/libdnnl.so.3"
                                                     ${CMAKE_DL_LIBS})
      target_compile_definitions(stabfuzz_onednn3 PRIVATE STABFUZZ_ONEDNN_MODULE=1)
      target_compile_options(stabfuzz_onednn3 PRIVATE -Wall -Wextra -ffp-contract=off
        -fvisibility=hidden -fvisibility-inlines-hidden $<$<BOOL:${STABFUZZ_WERROR}>:-Werror>)
      set_target_properties(stabfuzz_onednn3 PROPERTIES CXX_STANDARD 20
        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin PREFIX "lib"
        BUILD_RPATH "${STABFUZZ_ONEDNN3_DIR}/lib")
      set_property(SOURCE libs/onednn/onednn.cc APPEND PROPERTY COMPILE_DEFINITIONS
                   "STABFUZZ_ONEDNN3_DIR=\"${STABFUZZ_ONEDNN3_DIR}\"")
      add_dependencies(stabfuzz_core stabfuzz_onednn3)
    endif()
    target_link_libraries(stabfuzz_core PUBLIC ${STABFUZZ_DNNL_LINK})
    target_compile_definitions(stabfuzz_core PUBLIC STABFUZZ_HAVE_ONEDNN=1)
  elseif(STABFUZZ_ONEDNN STREQUAL "ON")
    message(FATAL_ERROR "STABFUZZ_ONEDNN=ON but oneDNN was not found (libdnnl-dev)")
  endif()
endif()

# ---- CBLAS: OpenBLAS's CMake config, else any cblas.h with libcblas or libblas ----------------
set(STABFUZZ_HAVE_BLAS OFF)
if(NOT STABFUZZ_BLAS STREQUAL "OFF")
  find_package(OpenBLAS CONFIG QUIET)
  if(OpenBLAS_FOUND AND EXISTS "${OpenBLAS_INCLUDE_DIRS}/cblas.h")
    add_library(stabfuzz_cblas INTERFACE)
    target_include_directories(stabfuzz_cblas SYSTEM INTERFACE ${OpenBLAS_INCLUDE_DIRS})
    target_link_libraries(stabfuzz_cblas INTERFACE ${OpenBLAS_LIBRARIES})
    target_compile_definitions(stabfuzz_cblas INTERFACE STABFUZZ_BLAS_OPENBLAS=1)
  else()
    find_path(STABFUZZ_CBLAS_INCLUDE cblas.h)
    find_library(STABFUZZ_CBLAS_LIBRARY NAMES cblas blas)
    if(STABFUZZ_CBLAS_INCLUDE AND STABFUZZ_CBLAS_LIBRARY)
      add_library(stabfuzz_cblas INTERFACE)
      target_include_directories(stabfuzz_cblas SYSTEM INTERFACE ${STABFUZZ_CBLAS_INCLUDE})
      target_link_libraries(stabfuzz_cblas INTERFACE ${STABFUZZ_CBLAS_LIBRARY})
    endif()
  endif()
  if(TARGET stabfuzz_cblas)
    set(STABFUZZ_HAVE_BLAS ON)
    target_sources(stabfuzz_core PRIVATE libs/blas/blas.cc)
    # Intel MKL's CBLAS is loaded at run time from here (ci/bootstrap --with-mkl unpacks the PyPI
    # wheel into it; STABFUZZ_MKL=/path/to/libmkl_rt.so.3 overrides it): `family/mkl/...` targets.
    set(STABFUZZ_MKL_DIR "${CMAKE_SOURCE_DIR}/.deps/mkl/lib" CACHE PATH
        "folder holding libmkl_rt.so.3 for the MKL targets")
    set_property(SOURCE libs/blas/blas.cc APPEND PROPERTY COMPILE_DEFINITIONS
                 "STABFUZZ_MKL_DIR=\"${STABFUZZ_MKL_DIR}\"")
    target_link_libraries(stabfuzz_core PUBLIC stabfuzz_cblas)
    target_compile_definitions(stabfuzz_core PUBLIC STABFUZZ_HAVE_BLAS=1)
  elseif(STABFUZZ_BLAS STREQUAL "ON")
    message(FATAL_ERROR "STABFUZZ_BLAS=ON but no CBLAS was found (libopenblas-dev)")
  endif()
endif()

# ---- libtorch: a module loaded on first use ----------------------------------------------------
# libtorch pulls in ~290 shared libraries and takes ~1-2 s to load: linked into stabfuzz it would
# slow every start (and every test). Its kernels live in libstabfuzz_torch.so, next to the binary,
# which the torch targets dlopen when one first runs; only that one file includes torch headers.
set(STABFUZZ_HAVE_TORCH OFF)
if(NOT STABFUZZ_TORCH STREQUAL "OFF")
  find_package(Torch CONFIG QUIET)
  if(TORCH_FOUND)
    set(STABFUZZ_HAVE_TORCH ON)
    add_library(stabfuzz_torch MODULE libs/torch/torch_module.cc)
    target_link_libraries(stabfuzz_torch PRIVATE torch)
    target_include_directories(stabfuzz_torch PRIVATE
      ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/include)
    target_compile_options(stabfuzz_torch PRIVATE -Wall -Wextra -ffp-contract=off
                                                  $<$<BOOL:${STABFUZZ_WERROR}>:-Werror>)
    # C++17: libtorch 1.13's headers do not compile as C++20 with clang 14 (IValue is incomplete
    # where C++20's constexpr std::vector needs it); the module shares only plain structs with
    # the rest (libs/torch/torch_api.h).
    set_target_properties(stabfuzz_torch PROPERTIES CXX_STANDARD 17
      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin PREFIX "lib")
    target_sources(stabfuzz_core PRIVATE libs/torch/torch.cc)
    set_property(SOURCE libs/torch/torch.cc APPEND PROPERTY COMPILE_DEFINITIONS
                 "STABFUZZ_TORCH_VERSION=\"${Torch_VERSION}\"")
    # Only the files that ask (and tests/libs/torch_test.cc): a PUBLIC definition would recompile
    # everything when libtorch comes (ci/test's --with-torch after a plain ci/bootstrap).
    set_property(SOURCE libs/libraries.cc harness/core/version.cc APPEND PROPERTY
                 COMPILE_DEFINITIONS STABFUZZ_HAVE_TORCH=1)
    add_dependencies(stabfuzz_core stabfuzz_torch)
  elseif(STABFUZZ_TORCH STREQUAL "ON")
    message(FATAL_ERROR "STABFUZZ_TORCH=ON but libtorch was not found (ci/bootstrap --with-torch)")
  endif()
endif()
# ---- ONNX (libonnx-dev): `stabfuzz monitor infer --model M.onnx` -------------------------------
# The graph reader (harness/onnx/model.cc) is the only file that sees protobuf; the interpreter and
# the monitor are plain C++ over the scalar types.
set(STABFUZZ_ONNX "AUTO" CACHE STRING "ONNX models in the monitor: AUTO (when found), ON, OFF")
set(STABFUZZ_HAVE_ONNX OFF)
if(NOT STABFUZZ_ONNX STREQUAL "OFF")
  find_package(Protobuf QUIET)
  if(Protobuf_FOUND)
    find_package(ONNX CONFIG QUIET)
  endif()
  if(TARGET onnx_proto)
    set(STABFUZZ_HAVE_ONNX ON)
    target_sources(stabfuzz_core PRIVATE harness/onnx/model.cc harness/onnx/infer.cc
                                         harness/onnx/testdata.cc harness/onnx/export.cc
                                         harness/onnx/fuzz.cc harness/onnx/npy.cc
                                         harness/onnx/train.cc harness/onnx/train_command.cc
                                         harness/onnx/cost.cc harness/onnx/sweep.cc)
    target_link_libraries(stabfuzz_core PRIVATE onnx_proto)
    # The example models `bench --suite monitor` times when ./examples/models is not there.
    set_source_files_properties(harness/onnx/cost.cc PROPERTIES
      COMPILE_DEFINITIONS "STABFUZZ_EXAMPLES_DIR=\"${CMAKE_SOURCE_DIR}/examples/models\"")
    # Only the files that ask (and tests/onnx/): a PUBLIC definition would recompile everything
    # when libonnx-dev comes.
    set_property(SOURCE harness/monitor/infer.cc harness/monitor/command.cc
                 harness/cli/monitor_command.cc harness/cli/commands.cc APPEND PROPERTY
                 COMPILE_DEFINITIONS STABFUZZ_HAVE_ONNX=1)
  elseif(STABFUZZ_ONNX STREQUAL "ON")
    message(FATAL_ERROR "STABFUZZ_ONNX=ON but ONNX was not found (libonnx-dev)")
  endif()
endif()
message(STATUS "stabfuzz: ONNX models ${STABFUZZ_HAVE_ONNX}")

message(STATUS "stabfuzz: libraries oneDNN ${STABFUZZ_HAVE_ONEDNN} (oneDNN 3 "
               "${STABFUZZ_HAVE_ONEDNN3}), CBLAS ${STABFUZZ_HAVE_BLAS}, "
               "libtorch ${STABFUZZ_HAVE_TORCH}")
