# GPU targets: CUDA reference kernels with the device CESTAC type, cuBLAS GEMM modes, the GPU
# self-test and benchmark. Without CUDA, the same target ids are listed as unavailable.
target_sources(stabfuzz_core PRIVATE targets/gpu_target_ids.cc)
if(STABFUZZ_HAVE_CUDA)
  add_library(stabfuzz_cuda_kernels STATIC targets/cuda/kernels.cu targets/cublas/gemm_cublas.cc)
  target_include_directories(stabfuzz_cuda_kernels PUBLIC
    ${CMAKE_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/include)
  # nvcc's defaults (-fmad=true): the native kernels are compiled as a user's kernel would be,
  # contraction into fma included. DStoch does not depend on it: its arithmetic is intrinsics
  # (__dadd_ru, __fmul_rn, ...) that nvcc never contracts. Never --use_fast_math.
  target_compile_options(stabfuzz_cuda_kernels PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${STABFUZZ_WERROR}>>:-Werror>)
  target_link_libraries(stabfuzz_cuda_kernels PUBLIC CUDA::cudart CUDA::cublas)
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
