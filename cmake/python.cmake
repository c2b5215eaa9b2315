# The CPython extension mace._mace and the descriptor set of proto/mace.proto (included when MACE_BUILD_PYTHON=ON).
#
# Inputs (setup.py passes them; standalone, they are found from the Python 3 on PATH):
#   Python3_EXECUTABLE       the interpreter to build for (its headers, its EXT_SUFFIX)
#   MACE_NUMPY_INCLUDE_DIR   NumPy's C headers (default: `numpy.get_include()` of that interpreter)
#   MACE_PYTHON_EXT_SUFFIX   the module's file suffix (default: that interpreter's EXT_SUFFIX)
# Outputs, in ${CMAKE_BINARY_DIR}/python/mace/:
#   _mace<EXT_SUFFIX>        target mace_python
#   _generated/mace.desc     target mace_python_desc (a dependency of mace_python), from protoc
find_package(Python3 COMPONENTS Interpreter Development.Module)
if(NOT Python3_Development.Module_FOUND)
  message(FATAL_ERROR "mace: the headers of Python ${Python3_VERSION} (Python.h) were not found for "
                      "${Python3_EXECUTABLE}. Install them with: apt-get install python3-dev "
                      "(or the -dev package of the Python you build for).")
endif()

if(NOT MACE_NUMPY_INCLUDE_DIR)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import numpy; print(numpy.get_include())"
                  OUTPUT_VARIABLE MACE_NUMPY_INCLUDE_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE numpy_status ERROR_QUIET)
  if(NOT numpy_status EQUAL 0 OR NOT EXISTS "${MACE_NUMPY_INCLUDE_DIR}/numpy/arrayobject.h")
    message(FATAL_ERROR "mace: NumPy's C headers were not found for ${Python3_EXECUTABLE}. Install NumPy "
                        "(pip install numpy) or set -DMACE_NUMPY_INCLUDE_DIR=/path/to/numpy/core/include.")
  endif()
endif()

if(NOT MACE_PYTHON_EXT_SUFFIX)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c
                          "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"
                  OUTPUT_VARIABLE MACE_PYTHON_EXT_SUFFIX OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()

# protoc writes the descriptor set; it runs on the build machine.
find_program(MACE_PROTOC NAMES protoc NO_CMAKE_FIND_ROOT_PATH)
if(NOT MACE_PROTOC)
  message(FATAL_ERROR "mace: protoc not found. It writes the descriptor set of proto/mace.proto that the "
                      "Python package loads; install the Debian/Ubuntu package protobuf-compiler "
                      "(apt-get install protobuf-compiler) or set -DMACE_PROTOC=/path/to/protoc.")
endif()

set(MACE_PYTHON_DIR ${CMAKE_BINARY_DIR}/python/mace)
set(MACE_DESC ${MACE_PYTHON_DIR}/_generated/mace.desc)
file(MAKE_DIRECTORY ${MACE_PYTHON_DIR}/_generated)
add_custom_command(
  OUTPUT ${MACE_DESC}
  COMMAND ${MACE_PROTOC} --include_imports --descriptor_set_out=${MACE_DESC}
          --proto_path=${CMAKE_SOURCE_DIR}/proto ${MACE_PROTO}
  DEPENDS ${MACE_PROTO}
  COMMENT "protoc: proto/mace.proto -> python/mace/_generated/mace.desc"
  VERBATIM)
add_custom_target(mace_python_desc DEPENDS ${MACE_DESC})

file(GLOB MACE_PYTHON_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/csrc/python/*.c)
add_library(mace_python MODULE ${MACE_PYTHON_SOURCES} $<TARGET_OBJECTS:mace_objects>)
add_dependencies(mace_python mace_python_desc)
target_compile_options(mace_python PRIVATE ${MACE_WARNINGS})
target_compile_definitions(mace_python PRIVATE ${MACE_ISA_DEFINITIONS})
target_include_directories(mace_python PRIVATE
  ${CMAKE_SOURCE_DIR}/csrc/include ${CMAKE_SOURCE_DIR}/csrc ${Python3_INCLUDE_DIRS} ${MACE_NUMPY_INCLUDE_DIR})
# Python3::Module: the interpreter's headers, and libpython only where extensions must link it (not Linux).
target_link_libraries(mace_python PRIVATE Python3::Module ${MACE_LINK_LIBS})
set_target_properties(mace_python PROPERTIES
  OUTPUT_NAME _mace
  PREFIX ""
  SUFFIX "${MACE_PYTHON_EXT_SUFFIX}"
  LIBRARY_OUTPUT_DIRECTORY ${MACE_PYTHON_DIR})
