/* The sample program's board layer on a host (Linux, macOS): stdout and exit(). */
#include <stdio.h>
#include <stdlib.h>

#include "port.h"

void mace_micro_port_puts(const char *s) { fputs(s, stdout); }

void mace_micro_port_exit(int code) {
  fflush(stdout);
  exit(code);
}
