# A model library: models compiled into code by `mace convert` (model_graph_format / model_data_format: code;
# python/mace/codegen.py) built with the engine into lib<library_name>.a, plus the sample <library_name>_run.
# Included by CMakeLists.txt when MACE_MODEL_DIR names the generated folder (BUILD/<library_name>/code):
#
#   cmake -S . -B build/models -DMACE_MODEL_DIR=$PWD/build/mylib/code [-DMACE_OPS_FILE=$PWD/build/mylib/code/ops.txt]
#   cmake --build build/models --target mace_model_lib mace_model_run
#   build/models/model/mylib_run --input x.npy --output_dir out      # no model file is read
#
# lib<library_name>.a holds the engine's objects (the same as libmace.a's) and the models'; link it with
# the libraries mace needs (pkg-config --static --libs mace: libprotobuf-c, pthreads, libm, libcrypto when
# built with it). With MACE_OPS_FILE set to the folder's ops.txt, the engine holds only the models' ops.
set(_mace_model_list ${MACE_MODEL_DIR}/mace_model_library.cmake)
if(NOT EXISTS ${_mace_model_list})
  message(FATAL_ERROR "mace: MACE_MODEL_DIR '${MACE_MODEL_DIR}' holds no mace_model_library.cmake; "
                      "write it with `mace convert --config X.yml` and model_graph_format/model_data_format: code")
endif()
include(${_mace_model_list})
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_mace_model_list})
list(TRANSFORM MACE_MODEL_SOURCES PREPEND ${MACE_MODEL_DIR}/)

add_library(mace_model_objects OBJECT ${MACE_MODEL_SOURCES})
target_include_directories(mace_model_objects PRIVATE ${MACE_MODEL_DIR} ${CMAKE_SOURCE_DIR}/csrc/include)

set(_mace_model_out ${CMAKE_BINARY_DIR}/model)
add_library(mace_model_lib STATIC $<TARGET_OBJECTS:mace_objects> $<TARGET_OBJECTS:mace_model_objects>)
set_target_properties(mace_model_lib PROPERTIES OUTPUT_NAME ${MACE_MODEL_LIBRARY_NAME}
                      ARCHIVE_OUTPUT_DIRECTORY ${_mace_model_out})
target_include_directories(mace_model_lib PUBLIC ${MACE_MODEL_DIR} ${CMAKE_SOURCE_DIR}/csrc/include)
target_link_libraries(mace_model_lib PUBLIC ${MACE_LINK_LIBS})

add_executable(mace_model_run ${MACE_MODEL_DIR}/main.c)
set_target_properties(mace_model_run PROPERTIES OUTPUT_NAME ${MACE_MODEL_LIBRARY_NAME}_run
                      RUNTIME_OUTPUT_DIRECTORY ${_mace_model_out})
target_link_libraries(mace_model_run PRIVATE mace_model_lib mace_npy)
target_link_options(mace_model_run PRIVATE ${MACE_GC_LINK_OPTIONS})
message(STATUS "mace: model library ${MACE_MODEL_LIBRARY_NAME} from ${MACE_MODEL_DIR}")
