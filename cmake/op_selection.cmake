# Op selection: a library that registers and links only the op types a list of models uses (seed 003,
# "Reduce Library Size"). Included by CMakeLists.txt after MACE_LIB_SOURCES is globbed.
#
#   mace ops --model a.pb --model b.pb > ops.txt           # or: mace ops --config deploy.yml
#   cmake -S . -B build-small -DMACE_OPS_FILE=ops.txt      # or: -DMACE_OPS=Conv2D,Eltwise,Pooling
#
# Reads csrc/ops/manifest.inc (the one list of op kinds), finds the csrc/ops file that defines each kind
# and the op type it registers (`.type = "..."`), and writes ${CMAKE_BINARY_DIR}/gen/ops_manifest.inc with
# the manifest lines of the selected types only; csrc/core/registry.c includes that file instead of the
# full manifest (gen/mace_ops_selection.h defines MACE_OPS_MANIFEST) and reports the selection in its
# "not compiled in" errors (MACE_OPS_SELECTION). Op files that define no selected kind are left out of the build; csrc/ops files
# that define no kind at all (dispatch tables, shared helpers) stay. Reorder is always kept: the net
# inserts it itself around blocked (NCHWc) chains.
#
# MACE_GC_SECTIONS=ON (any build) compiles with -ffunction-sections -fdata-sections and links the shared
# library and the tools with --gc-sections and the shared library exporting only the public API, so
# that what no registered op reaches is dropped from libmace.so and mace_run.
option(MACE_GC_SECTIONS "Drop unreferenced code from libmace.so and the tools (size builds)" OFF)
set(MACE_OPS "" CACHE STRING "Op types to build (comma separated); empty: all")
set(MACE_OPS_FILE "" CACHE FILEPATH "File of op types to build (one per line or comma separated)")

set(_mace_selected "")
set(_sel_header "")
if(MACE_OPS_FILE)
  if(NOT EXISTS "${MACE_OPS_FILE}")
    message(FATAL_ERROR "mace: MACE_OPS_FILE '${MACE_OPS_FILE}' does not exist")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${MACE_OPS_FILE}")
  file(STRINGS "${MACE_OPS_FILE}" _mace_ops_lines REGEX "^[^#]")
  string(REPLACE "," ";" _mace_ops_lines "${_mace_ops_lines}")
  list(APPEND _mace_selected ${_mace_ops_lines})
endif()
if(MACE_OPS)
  string(REPLACE "," ";" _mace_ops_given "${MACE_OPS}")
  list(APPEND _mace_selected ${_mace_ops_given})
endif()
list(TRANSFORM _mace_selected STRIP)
list(FILTER _mace_selected EXCLUDE REGEX "^$")
list(REMOVE_DUPLICATES _mace_selected)

# MACE_OPENCL=OFF (cmake/opencl.cmake): the manifest is cut to the CPU kinds, selected or all.
if(_mace_selected OR NOT MACE_OPENCL)
  if(_mace_selected)
    list(APPEND _mace_selected Reorder)
  endif()
  list(REMOVE_DUPLICATES _mace_selected)
  set(_mace_manifest ${CMAKE_SOURCE_DIR}/csrc/ops/manifest.inc)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_mace_manifest})
  file(STRINGS ${_mace_manifest} _mace_kinds REGEX "^MACE_OP\\(")
  file(GLOB_RECURSE _mace_op_files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/csrc/ops/*.c)  # and ops/opencl
  foreach(f ${_mace_op_files})
    file(READ ${f} _text)
    string(MD5 _key ${f})
    set(_mace_text_${_key} "${_text}")
  endforeach()

  set(_kept_lines "")
  set(_kept_files "")
  set(_defining_files "")
  set(_known_types "")
  foreach(line ${_mace_kinds})
    string(REGEX REPLACE "^MACE_OP\\(([A-Za-z0-9_]+)\\).*" "\\1" sym "${line}")
    set(file_of "")
    set(type_of "")
    foreach(f ${_mace_op_files})
      string(MD5 _key ${f})
      set(t "${_mace_text_${_key}}")
      # `const mace_op_kind sym = {...}` or a kind-defining macro called as `MACRO(sym, ...)`.
      if(t MATCHES "mace_op_kind[ \t\n]+${sym}[ \t\n]*=[ \t\n]*{[^;]*\\.type[ \t\n]*=[ \t\n]*\"([A-Za-z0-9_]+)\"")
        set(file_of ${f})
        set(type_of ${CMAKE_MATCH_1})
        break()
      elseif(t MATCHES "\\([ \t]*${sym}[ \t]*,")
        # the macro's body holds the type: the file must register exactly one type
        string(REGEX MATCHALL "\\.type[ \t\n]*=[ \t\n]*\"[A-Za-z0-9_]+\"" types "${t}")
        list(REMOVE_DUPLICATES types)
        list(LENGTH types ntypes)
        if(NOT ntypes EQUAL 1)
          message(FATAL_ERROR "mace: op selection cannot tell the op type of ${sym} in ${f} "
                              "(a macro-defined kind in a file registering ${ntypes} types)")
        endif()
        string(REGEX REPLACE ".*\"([A-Za-z0-9_]+)\"" "\\1" type_of "${types}")
        set(file_of ${f})
        break()
      endif()
    endforeach()
    if(NOT file_of)
      message(FATAL_ERROR "mace: op selection: no file under csrc/ops defines ${sym} (csrc/ops/manifest.inc)")
    endif()
    list(APPEND _defining_files ${file_of})
    list(APPEND _known_types ${type_of})
    if((NOT _mace_selected OR type_of IN_LIST _mace_selected)
       AND (MACE_OPENCL OR NOT file_of MATCHES "/csrc/ops/opencl/"))
      string(APPEND _kept_lines "${line}\n")
      list(APPEND _kept_files ${file_of})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _known_types)
  foreach(type ${_mace_selected})
    if(NOT type IN_LIST _known_types)
      list(SORT _known_types)
      string(REPLACE ";" ", " _known "${_known_types}")
      message(FATAL_ERROR "mace: op selection names op type '${type}', which csrc/ops does not "
                          "define (known: ${_known})")
    endif()
  endforeach()

  # Drop op files that define kinds, none of them selected.
  list(REMOVE_DUPLICATES _defining_files)
  foreach(f ${_defining_files})
    if(NOT f IN_LIST _kept_files)
      list(REMOVE_ITEM MACE_LIB_SOURCES ${f})
    endif()
  endforeach()

  # GPU op files of a CPU-only build (MACE_OPENCL=OFF), kinds or helpers, are left out too.
  if(NOT MACE_OPENCL)
    list(FILTER MACE_LIB_SOURCES EXCLUDE REGEX "/csrc/ops/opencl/")
  endif()
  set(_what "CPU kinds")
  if(_mace_selected)
    list(SORT _mace_selected)
    string(REPLACE ";" "," MACE_OPS_SELECTION "${_mace_selected}")
    set(_what "${MACE_OPS_SELECTION}")
    if(NOT MACE_OPENCL)
      set(_what "${_what}, CPU kinds")
    endif()
  endif()
  set(_gen ${CMAKE_BINARY_DIR}/gen/ops_manifest.inc)
  file(CONFIGURE OUTPUT ${_gen} CONTENT
"/* Generated by cmake/op_selection.cmake: csrc/ops/manifest.inc cut to ${_what}. */
${_kept_lines}" @ONLY)
  set(_sel_header "#define MACE_OPS_MANIFEST \"ops_manifest.inc\"\n")
  if(_mace_selected)
    string(APPEND _sel_header "#define MACE_OPS_SELECTION \"${MACE_OPS_SELECTION}\"\n")
  endif()
  list(LENGTH _kept_files _nfiles)
  message(STATUS "mace: op selection ${_what}: ${_nfiles} op files")
endif()

# Kernel fields left out. The SIMD tables of csrc/runtime/cpu/simd_dispatch.c (kernels/cpu/manifest.inc's
# MACE_UKERNEL lines) hold every kernel of every field, so whatever the ops, a table keeps all of them
# linked. Two ways to leave some out:
#  - derived from the op selection: a field that no kept source of csrc/ reads (`->field`, `.field` or
#    an accessor `mace_<field>_active()` in the .c file or in an ops/ or runtime/cpu/ header it includes;
#    csrc/runtime/cpu/simd_dispatch.c itself does not count) is
#    dropped with its reference entry: no kept op can call it, so the outputs cannot change.
#  - MACE_KERNELS_EXCLUDE=dwconv,directconv: whole units of the manifest, for kernels the selected ops
#    read but the models never run (which ones a model runs depends on its shapes; `perf` on a run
#    shows them, README "On a device"). Their fields are then NULL in the SIMD tables, which the ops
#    already handle (the reference table leaves them NULL): such layers run the reference or GEMM path,
#    correct but slower, and not necessarily bit for bit the same. The units whose field the reference
#    table fills (activation, pooling, qdwconv) cannot be left out this way.
# The manifest cut to the kept lines is gen/ksel_manifest.inc, which only simd_dispatch.c includes
# (gen/mace_kernel_selection.h names it), and a per-ISA kernel file all of whose lines are dropped is not
# compiled. Only simd_dispatch.c reads the cut; but where a dropped file had per-file ISA flags (x86-64),
# the Makefile generator rewrites flags.make and rebuilds every object (benchmarks/library_size.sh:
# REUSE_OBJECTS).
set(MACE_KERNELS_EXCLUDE "" CACHE STRING "Kernel units of kernels/cpu/manifest.inc to leave out (comma separated)")
set(_kmanifest ${CMAKE_SOURCE_DIR}/kernels/cpu/manifest.inc)
file(STRINGS ${_kmanifest} _klines REGEX "^MACE_UKERNEL\\(")
set(_kunits "")
set(_kfields "")
foreach(line ${_klines})
  if(NOT line MATCHES "^MACE_UKERNEL\\(([a-z0-9]+), *([A-Za-z0-9_./]+), *([a-z0-9_]+),")
    message(FATAL_ERROR "mace: kernels/cpu/manifest.inc: cannot read '${line}'")
  endif()
  list(APPEND _kunits ${CMAKE_MATCH_2})
  list(APPEND _kfields ${CMAKE_MATCH_3})
endforeach()
list(REMOVE_DUPLICATES _kunits)
list(REMOVE_DUPLICATES _kfields)

set(_kx "")
if(MACE_KERNELS_EXCLUDE)
  string(REPLACE "," ";" _kx "${MACE_KERNELS_EXCLUDE}")
  list(TRANSFORM _kx STRIP)
  foreach(unit ${_kx})
    if(unit MATCHES "^(activation|pooling|qdwconv)$" OR NOT unit IN_LIST _kunits)
      set(_k ${_kunits})
      list(REMOVE_ITEM _k activation pooling qdwconv)
      string(REPLACE ";" ", " _k "${_k}")
      message(FATAL_ERROR "mace: MACE_KERNELS_EXCLUDE: '${unit}' is not a unit that can be left out (${_k})")
    endif()
  endforeach()
endif()

set(_kdropped_fields "")
if(_mace_selected)
  # What the kept sources read: their text and that of the csrc/ops and csrc/runtime/cpu headers they include.
  set(_kread "")
  foreach(f ${MACE_LIB_SOURCES})
    if(NOT f MATCHES "^${CMAKE_SOURCE_DIR}/csrc/.*\\.c$" OR f MATCHES "/runtime/cpu/simd_dispatch\\.c$")
      continue()
    endif()
    file(READ ${f} _t)
    string(APPEND _kread "${_t}")
    string(REGEX MATCHALL "#include \"(ops|runtime/cpu)/[a-z0-9_]+\\.h\"" _incs "${_t}")
    foreach(inc ${_incs})
      string(REGEX REPLACE "#include \"((ops|runtime/cpu)/[a-z0-9_]+\\.h)\"" "\\1" h "${inc}")
      if(EXISTS ${CMAKE_SOURCE_DIR}/csrc/${h} AND NOT h STREQUAL "runtime/cpu/simd_dispatch.h")
        file(READ ${CMAKE_SOURCE_DIR}/csrc/${h} _t)
        string(APPEND _kread "${_t}")
      endif()
    endforeach()
  endforeach()
  foreach(field ${_kfields})
    # activation is also read through mace_f32_activation (simd_dispatch.c), which every op may call
    # or through an accessor of simd_dispatch.c named after it (mace_q8_dwconv_active())
    if(NOT field STREQUAL "activation" AND NOT _kread MATCHES "(->|\\.)${field}[^A-Za-z0-9_]"
       AND NOT _kread MATCHES "mace_${field}_active[ \t]*\\(")
      list(APPEND _kdropped_fields ${field})
    endif()
  endforeach()
endif()

set(_ksel_header "")
if(_kx OR _kdropped_fields)
  # The manifest without the dropped lines; each per-ISA file whose lines are all dropped is not compiled.
  file(STRINGS ${_kmanifest} _kall REGEX "^MACE_[A-Z_]+\\(")
  set(_kfiles_kept "")
  set(_kfiles_all "")
  file(READ ${_kmanifest} _ktext)
  foreach(line ${_kall})
    string(REGEX MATCH "^MACE_([A-Z_]+)\\(([a-z0-9]+), *([A-Za-z0-9_./]+)(, *([a-z0-9_]+))?" _m "${line}")
    set(kind ${CMAKE_MATCH_1})
    set(isa ${CMAKE_MATCH_2})
    set(unit ${CMAKE_MATCH_3})
    set(field ${CMAKE_MATCH_5})
    if(kind STREQUAL "GEMM_TILE")
      continue()
    endif()
    set(build_isa ${isa})
    if(isa MATCHES "^avx512vnni$")
      set(build_isa avx512)
    elseif(isa MATCHES "^neondot$")
      set(build_isa neon)
    endif()
    if(unit MATCHES "\\.c$")
      set(src ${CMAKE_SOURCE_DIR}/kernels/cpu/${unit})
    else()
      set(src ${CMAKE_BINARY_DIR}/gen/kernels/${unit}__${isa}.c)
    endif()
    list(APPEND _kfiles_all ${src})
    if(kind STREQUAL "UKERNEL" AND (unit IN_LIST _kx OR field IN_LIST _kdropped_fields))
      string(REPLACE "${line}\n" "" _ktext "${_ktext}")
      string(REGEX REPLACE ".*, *([a-z0-9_]+)\\)[^)]*$" "\\1__${isa}" _sym "${line}")
      string(MD5 _key ${src})
      list(APPEND _ksyms_${_key} ${_sym})
    else()
      list(APPEND _kfiles_kept ${src})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _kfiles_all)
  list(REMOVE_DUPLICATES _kfiles_kept)
  # A kept hand-written kernel file may call a dropped file's kernel by name (a fallback, as
  # x86/qdwconv_avx512vnni.c calls mace_q8_dwconv__avx512): such a file stays compiled, out of the table.
  set(_khand "")
  foreach(src ${_kfiles_kept})
    if(src MATCHES "^${CMAKE_SOURCE_DIR}/kernels/cpu/.*\\.c$")
      file(READ ${src} _t)
      string(APPEND _khand "${_t}")
    endif()
  endforeach()
  set(_kfiles_dropped "")
  foreach(src ${_kfiles_all})
    string(MD5 _key ${src})
    set(_called 0)
    foreach(sym ${_ksyms_${_key}})
      string(FIND "${_khand}" "${sym}" _at)
      if(_at GREATER -1)
        set(_called 1)
      endif()
    endforeach()
    if(NOT src IN_LIST _kfiles_kept AND NOT _called)
      list(REMOVE_ITEM MACE_LIB_SOURCES ${src})
      get_filename_component(_n ${src} NAME_WE)
      list(APPEND _kfiles_dropped ${_n})
    endif()
  endforeach()
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/gen/ksel_manifest.inc CONTENT "${_ktext}" @ONLY)
  set(_ksel_header "#define MACE_KERNEL_MANIFEST \"ksel_manifest.inc\"\n")
  foreach(field ${_kdropped_fields})
    string(APPEND _ksel_header "#define MACE_KERNEL_DROPPED_${field} 1\n")
  endforeach()
  string(REPLACE ";" ", " _kd "${_kdropped_fields}")
  string(REPLACE ";" ", " _kf "${_kfiles_dropped}")
  message(STATUS "mace: kernel fields no selected op reads: ${_kd}")
  if(_kx)
    message(STATUS "mace: kernel units left out (MACE_KERNELS_EXCLUDE): ${MACE_KERNELS_EXCLUDE}")
  endif()
  message(STATUS "mace: kernel files not compiled: ${_kf}")
endif()
# gen/mace_kernel_selection.h, which csrc/runtime/cpu/simd_dispatch.c includes (empty: every kernel).
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/gen/mace_kernel_selection.h CONTENT
"/* Generated by cmake/op_selection.cmake: the kernel fields this build leaves out (none: every one). */
${_ksel_header}" @ONLY)

set(MACE_GC_LINK_OPTIONS "")
# gen/mace_ops_selection.h, which csrc/core/registry.c includes: a header rather than compile definitions, so
# that changing the selection recompiles the registry only (flags are shared by every object of a target).
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/gen/mace_ops_selection.h CONTENT
"/* Generated by cmake/op_selection.cmake: the op selection of this build (none: every op). */
${_sel_header}" @ONLY)

if(MACE_GC_SECTIONS)
  add_compile_options(-ffunction-sections -fdata-sections)
  set(MACE_GC_LINK_OPTIONS -Wl,--gc-sections)
endif()

# libmace.so under MACE_GC_SECTIONS: --gc-sections, and only the functions of mace/mace.h exported
# (a version script generated from the header), so internal code no API function reaches is dropped.
function(mace_gc_sections_shared target)
  if(NOT MACE_GC_SECTIONS)
    return()
  endif()
  file(STRINGS ${CMAKE_SOURCE_DIR}/csrc/include/mace/mace.h _decls REGEX "mace_[a-z0-9_]+\\(")
  set(_names "")
  foreach(d ${_decls})
    string(REGEX MATCHALL "mace_[a-z0-9_]+\\(" _calls "${d}")
    list(GET _calls 0 _first)
    string(REPLACE "(" "" _first "${_first}")
    list(APPEND _names ${_first})
  endforeach()
  list(REMOVE_DUPLICATES _names)
  list(JOIN _names "; " _body)
  set(_map ${CMAKE_BINARY_DIR}/gen/mace.map)
  file(CONFIGURE OUTPUT ${_map} CONTENT "{ global: ${_body}; local: *; };\n" @ONLY)
  target_link_options(${target} PRIVATE ${MACE_GC_LINK_OPTIONS} -Wl,--version-script=${_map})
endfunction()
