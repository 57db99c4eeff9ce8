# libtorch, always the one inside PyTorch's pip wheel. Imported by hand rather than through
# TorchConfig.cmake: the CUDA wheel's config insists on a CUDA toolkit at configure time, which CPU
# machines and CI do not need, and we use ATen alone (no torch::nn, no Python).
if(NOT VINCI_TORCH_ROOT)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
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
