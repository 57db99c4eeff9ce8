# libtorch, always the one inside PyTorch's pip wheel. Imported by hand rather than through
# TorchConfig.cmake: the CUDA wheel's config insists on a CUDA toolkit at configure time, which CPU
# machines and CI do not need, and we use ATen alone (no torch::nn, no Python).
# Found on every configure, not only the first: the Python tests' commands name the interpreter.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
if(NOT VINCI_TORCH_ROOT)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import os, torch; print(os.path.dirname(torch.__file__))"
    OUTPUT_VARIABLE VINCI_TORCH_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _torch_rc)
  if(NOT _torch_rc EQUAL 0)
    message(FATAL_ERROR "vinci needs PyTorch's pip wheel for libtorch: `${Python3_EXECUTABLE} -c 'import torch'` "
                        "failed. Run `make deps`, or pass -DVINCI_TORCH_ROOT=<site-packages>/torch.")
  endif()
endif()
set(VINCI_TORCH_ROOT "${VINCI_TORCH_ROOT}" CACHE PATH "The torch package folder (holds include/ and lib/)")

find_library(VINCI_TORCH_CPU_LIB torch_cpu PATHS ${VINCI_TORCH_ROOT}/lib NO_DEFAULT_PATH REQUIRED)
find_library(VINCI_C10_LIB c10 PATHS ${VINCI_TORCH_ROOT}/lib NO_DEFAULT_PATH REQUIRED)
find_library(VINCI_TORCH_CUDA_LIB torch_cuda PATHS ${VINCI_TORCH_ROOT}/lib NO_DEFAULT_PATH)

add_library(vinci_torch INTERFACE)
# After the system's include directories, not before: the wheel also ships fmt, spdlog-incompatible
# with Debian's, under the same include root. ATen itself includes no fmt.
target_compile_options(vinci_torch INTERFACE "SHELL:-idirafter ${VINCI_TORCH_ROOT}/include")
target_link_libraries(vinci_torch INTERFACE ${VINCI_TORCH_CPU_LIB} ${VINCI_C10_LIB})
if(VINCI_TORCH_CUDA_LIB)
  # Nothing references libtorch_cuda by symbol; its static initialisers register the CUDA kernels,
  # so it must stay linked even though the linker sees no use for it.
  target_link_libraries(vinci_torch INTERFACE -Wl,--no-as-needed ${VINCI_TORCH_CUDA_LIB} -Wl,--as-needed)
  target_compile_definitions(vinci_torch INTERFACE VINCI_WITH_CUDA=1)
endif()
set(CMAKE_BUILD_RPATH "${CMAKE_BUILD_RPATH};${VINCI_TORCH_ROOT}/lib")
set(CMAKE_INSTALL_RPATH "${CMAKE_INSTALL_RPATH};${VINCI_TORCH_ROOT}/lib")

# Data parallelism (rl/data_parallel) uses c10d's process groups, whose headers include those of
# their transports, which the wheel does not ship: Gloo's come from Debian's libgloo-dev (we hold
# gloo objects only through pointers; libtorch_cpu carries gloo's code), NCCL's and CUDA's from the
# nvidia-* wheels PyTorch's CUDA wheel depends on. Without nccl.h, data parallelism runs on CPUs only.
find_path(VINCI_GLOO_INCLUDE_DIR gloo/algorithm.h)
if(NOT VINCI_GLOO_INCLUDE_DIR)
  message(FATAL_ERROR "gloo/algorithm.h not found: install Debian's libgloo-dev (`make deps` does)")
endif()
get_filename_component(_vinci_nvidia_root "${VINCI_TORCH_ROOT}/../nvidia" ABSOLUTE)
find_path(VINCI_NCCL_INCLUDE_DIR nccl.h PATHS ${_vinci_nvidia_root}/nccl/include NO_DEFAULT_PATH)
find_path(VINCI_NCCL_INCLUDE_DIR nccl.h)
# The CUDA runtime's headers: a toolkit's (which has crt/, the wheels do not), else the wheels'
# (cu13 wheels hold every CUDA header in one folder, cu12 wheels one folder per library).
file(GLOB VINCI_NVIDIA_INCLUDE_DIRS "${_vinci_nvidia_root}/*/include")
find_program(VINCI_NVCC nvcc PATHS /usr/local/cuda/bin $ENV{CUDA_HOME}/bin)
set(_vinci_toolkit_include "")
if(VINCI_NVCC)
  get_filename_component(_vinci_toolkit_include "${VINCI_NVCC}/../../include" ABSOLUTE)
endif()
find_path(VINCI_CUDA_RUNTIME_INCLUDE_DIR crt/host_config.h
          PATHS ${_vinci_toolkit_include} /usr/local/cuda/include ${VINCI_NVIDIA_INCLUDE_DIRS} NO_DEFAULT_PATH)
find_path(VINCI_CUDA_RUNTIME_INCLUDE_DIR crt/host_config.h)
find_library(VINCI_C10_CUDA_LIB c10_cuda PATHS ${VINCI_TORCH_ROOT}/lib NO_DEFAULT_PATH)
# CUDA graphs (llm/cuda_graph) need libtorch_cuda, c10_cuda and the CUDA runtime (headers and
# library: the wheels ship only its versioned name).
find_library(VINCI_CUDART_LIB NAMES cudart libcudart.so.13 libcudart.so.12
             PATHS ${_vinci_nvidia_root}/cu13/lib ${_vinci_nvidia_root}/cuda_runtime/lib NO_DEFAULT_PATH)
find_library(VINCI_CUDART_LIB NAMES cudart PATHS /usr/local/cuda/lib64)
if(VINCI_TORCH_CUDA_LIB AND VINCI_C10_CUDA_LIB AND VINCI_CUDA_RUNTIME_INCLUDE_DIR AND VINCI_CUDART_LIB)
  set(VINCI_WITH_CUDA_GRAPHS ON)
else()
  set(VINCI_WITH_CUDA_GRAPHS OFF)
endif()
# The fused decode kernels (llm/decode_kernels) compile at run time with NVRTC: its header and library
# from the same places as the runtime's.
find_path(VINCI_NVRTC_INCLUDE_DIR nvrtc.h
          PATHS ${_vinci_toolkit_include} /usr/local/cuda/include ${VINCI_NVIDIA_INCLUDE_DIRS} NO_DEFAULT_PATH)
find_library(VINCI_NVRTC_LIB NAMES nvrtc libnvrtc.so.13 libnvrtc.so.12
             PATHS ${_vinci_nvidia_root}/cu13/lib ${_vinci_nvidia_root}/cuda_nvrtc/lib NO_DEFAULT_PATH)
find_library(VINCI_NVRTC_LIB NAMES nvrtc PATHS /usr/local/cuda/lib64)
if(VINCI_WITH_CUDA_GRAPHS AND VINCI_NVRTC_INCLUDE_DIR AND VINCI_NVRTC_LIB)
  set(VINCI_WITH_DECODE_KERNELS ON)
  message(STATUS "vinci: fused decode kernels through NVRTC (${VINCI_NVRTC_LIB})")
else()
  set(VINCI_WITH_DECODE_KERNELS OFF)
endif()
if(VINCI_TORCH_CUDA_LIB AND VINCI_C10_CUDA_LIB AND VINCI_NCCL_INCLUDE_DIR AND VINCI_CUDA_RUNTIME_INCLUDE_DIR)
  set(VINCI_WITH_NCCL ON)
  message(STATUS "vinci: data parallelism over NCCL (${VINCI_NCCL_INCLUDE_DIR}) and Gloo")
else()
  set(VINCI_WITH_NCCL OFF)
  message(STATUS "vinci: data parallelism over Gloo only (no libtorch_cuda, nccl.h or CUDA runtime headers)")
endif()
