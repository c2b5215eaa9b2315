/* The OpenCL kernel sources of kernels/opencl/ (the .cl files), embedded at build time (cmake/opencl.cmake
 * writes the table into the build directory). */
#ifndef MACE_RUNTIME_OPENCL_CL_SOURCES_H_
#define MACE_RUNTIME_OPENCL_CL_SOURCES_H_

typedef struct mace_cl_source {
  const char *name;    /* file name without .cl: "conv2d" */
  const char *text;    /* NUL-terminated source */
} mace_cl_source;

/* mace_cl_sources[0..mace_cl_n_sources); "common" is prepended to every other program. */
extern const mace_cl_source mace_cl_sources[];
extern const int mace_cl_n_sources;

#endif /* MACE_RUNTIME_OPENCL_CL_SOURCES_H_ */
