# The OpenCL runtime's build: whether the Khronos headers (CL/cl.h, Debian opencl-headers) are there, and
# the kernel sources kernels/opencl/*.cl embedded into the library as ${CMAKE_BINARY_DIR}/gen/cl_sources.c
# (a table of NUL-terminated byte arrays, csrc/runtime/opencl/cl_sources.h). Nothing links OpenCL: the ICD
# loader is dlopen'ed at run time (csrc/runtime/opencl/cl_loader.c), so only -ldl is added. Without the
# headers the runtime is built as a stub whose create/list say so (MACE_UNSUPPORTED).
# MACE_OPENCL=OFF builds that stub whatever the headers, and cmake/op_selection.cmake then registers
# and compiles no GPU kind (csrc/ops/opencl/): a CPU-only library.
# Output: MACE_OPENCL_SOURCES (append to the library's sources), MACE_OPENCL_LIBS (link libraries).
option(MACE_OPENCL "Build the OpenCL GPU runtime and GPU op kinds (when CL/cl.h is found); OFF: CPU only" ON)
include(CheckIncludeFile)
check_include_file(CL/cl.h MACE_HAVE_OPENCL_HEADERS)

file(GLOB MACE_CL_KERNELS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/opencl/*.cl)
list(SORT MACE_CL_KERNELS)
set(MACE_CL_SOURCES_C ${CMAKE_BINARY_DIR}/gen/cl_sources.c)
add_custom_command(
  OUTPUT ${MACE_CL_SOURCES_C}
  COMMAND ${CMAKE_COMMAND} -DOUT=${MACE_CL_SOURCES_C} "-DKERNELS=${MACE_CL_KERNELS}"
          -P ${CMAKE_SOURCE_DIR}/cmake/embed_cl.cmake
  DEPENDS ${MACE_CL_KERNELS} ${CMAKE_SOURCE_DIR}/cmake/embed_cl.cmake
  COMMENT "embedding kernels/opencl/*.cl -> gen/cl_sources.c"
  VERBATIM)

if(NOT MACE_OPENCL)
  message(STATUS "mace: MACE_OPENCL=OFF: CPU only (the OpenCL runtime is a stub, no GPU op kinds)")
  set(MACE_OPENCL_SOURCES)
elseif(MACE_HAVE_OPENCL_HEADERS)
  message(STATUS "mace: OpenCL runtime built (libOpenCL.so.1 is loaded at run time)")
  set(MACE_OPENCL_SOURCES ${MACE_CL_SOURCES_C})
  file(GLOB MACE_CL_RUNTIME_C CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/csrc/runtime/opencl/*.c)
  set_source_files_properties(${MACE_CL_RUNTIME_C} PROPERTIES COMPILE_DEFINITIONS MACE_HAVE_OPENCL_HEADERS=1)
else()
  message(STATUS "mace: CL/cl.h not found (Debian: opencl-headers): the OpenCL runtime is a stub")
  set(MACE_OPENCL_SOURCES)
endif()
set(MACE_OPENCL_LIBS ${CMAKE_DL_LIBS})
