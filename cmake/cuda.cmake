# GPU targets: CUDA reference kernels with the device CESTAC type, cuBLAS GEMM modes, the GPU
# self-test and benchmark. Without CUDA, the same target ids are listed as unavailable.
target_sources(stabfuzz_core PRIVATE targets/gpu_target_ids.cc)
# Their host-only logic, plain C++ built with or without CUDA so that the CPU tests check it:
# launch plans and size limits, the cuBLAS modes' shape check and rounding emulation.
add_library(stabfuzz_gpu_host STATIC targets/cuda/launch_plan.cc targets/cublas/gemm_modes.cc)
target_include_directories(stabfuzz_gpu_host PUBLIC ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(stabfuzz_gpu_host PRIVATE stabfuzz_flags)
target_link_libraries(stabfuzz_core PUBLIC stabfuzz_gpu_host)
if(STABFUZZ_HAVE_CUDA)
  add_library(stabfuzz_cuda_kernels STATIC targets/cuda/kernels.cu targets/cublas/gemm_cublas.cc)
  target_link_libraries(stabfuzz_cuda_kernels PUBLIC stabfuzz_gpu_host)
  target_include_directories(stabfuzz_cuda_kernels PUBLIC
    ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/include)
  # nvcc's defaults (-fmad=true): the native kernels are compiled as a user's kernel would be,
  # contraction into fma included. DStoch does not depend on it: its arithmetic is intrinsics
  # (__dadd_ru, __fmul_rn, ...) that nvcc never contracts. Never --use_fast_math.
  target_compile_options(stabfuzz_cuda_kernels PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${STABFUZZ_WERROR}>>:-Werror>)
  target_link_libraries(stabfuzz_cuda_kernels PUBLIC CUDA::cudart CUDA::cublas)
  # ptxas's resource report (registers, spills per kernel) of kernels.cu as compiled, for
  # ptxas_registers_test: the compile runs through cmake/capture_ptxas.cmake, which writes the
  # report to STABFUZZ_PTXAS_REPORT (after any launcher already configured, e.g. ccache).
  set(STABFUZZ_PTXAS_REPORT ${CMAKE_BINARY_DIR}/cuda/kernels.ptxas.txt)
  set_source_files_properties(targets/cuda/kernels.cu PROPERTIES COMPILE_OPTIONS --resource-usage)
  set(_launcher ${CMAKE_COMMAND} -DREPORT=${STABFUZZ_PTXAS_REPORT} -P
      ${CMAKE_SOURCE_DIR}/cmake/capture_ptxas.cmake --)
  if(CMAKE_CUDA_COMPILER_LAUNCHER)
    list(APPEND _launcher ${CMAKE_CUDA_COMPILER_LAUNCHER})
  endif()
  set_target_properties(stabfuzz_cuda_kernels PROPERTIES CUDA_COMPILER_LAUNCHER "${_launcher}")
  set_target_properties(stabfuzz_cuda_kernels PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  target_sources(stabfuzz_core PRIVATE targets/cuda/cuda_targets.cc)
  target_link_libraries(stabfuzz_core PUBLIC stabfuzz_cuda_kernels)
  # Needs only CUDA (no MPFR, Boost, RapidCheck): ci/gpu-check builds it on bare GPU machines too.
  add_executable(stabfuzz_gpu_selftest targets/cuda/gpu_selftest.cc)
  target_link_libraries(stabfuzz_gpu_selftest PRIVATE stabfuzz_cuda_kernels)
  target_link_options(stabfuzz_gpu_selftest PRIVATE -no-pie)
else()
  target_sources(stabfuzz_core PRIVATE targets/cuda/cuda_targets_none.cc)
endif()
